//! WebSockets in the page: the page's real `WebSocket` API driven from wasm
//! (web-sys), the `ws` handlers both modes' tests use, and the real
//! WebSocket server `runner.py` serves for passthrough and `server.connect()`.

use futures_channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures_util::StreamExt;
use mocklib::UnhandledRequest;
use mocklib::browser::{Mode, setup_worker};
use mocklib::ws::{self, CloseFrame, Direction, Message};
use wasm_bindgen::prelude::*;
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

use super::{bypassing, event_source_origin, quiet, real_stream_open, set_cookie, started};
use super::{wait_until_real_stream_closed, within_hang_guard};

/// What a page's `WebSocket` dispatched.
#[derive(Debug, Clone, PartialEq)]
pub enum SocketEvent {
    Open,
    Text(String),
    Binary(Vec<u8>),
    /// A `Blob` (the default `binaryType`) of this many bytes.
    Blob(f64),
    Error,
    Close {
        code: u16,
        reason: String,
        was_clean: bool,
    },
}

impl SocketEvent {
    pub fn text(text: &str) -> Self {
        SocketEvent::Text(text.to_owned())
    }

    pub fn close(code: u16, reason: &str) -> Self {
        SocketEvent::Close {
            code,
            reason: reason.to_owned(),
            was_clean: true,
        }
    }

    /// A connection that could not open, as the browser reports it.
    pub fn failed() -> Self {
        SocketEvent::Close {
            code: 1006,
            reason: String::new(),
            was_clean: false,
        }
    }
}

/// A `new WebSocket(url, protocols)` of the page and the events it
/// dispatched: `open` and `message` through the `on*` attributes, `error`
/// and `close` through `addEventListener`, as apps do either.
pub struct PageSocket {
    pub socket: WebSocket,
    events: UnboundedReceiver<SocketEvent>,
    _listeners: Vec<Closure<dyn Fn(JsValue)>>,
}

impl PageSocket {
    /// Opens a socket whose binary messages arrive as `ArrayBuffer`s.
    pub fn open(url: &str, protocols: &[&str]) -> Self {
        let socket = Self::open_blobs(url, protocols);
        socket.socket.set_binary_type(BinaryType::Arraybuffer);
        socket
    }

    /// Opens a socket with the default `binaryType`, "blob".
    pub fn open_blobs(url: &str, protocols: &[&str]) -> Self {
        let offered = protocols
            .iter()
            .map(|&protocol| JsValue::from_str(protocol))
            .collect::<js_sys::Array>();
        let socket = WebSocket::new_with_str_sequence(url, &offered).expect("new WebSocket");
        let (sender, events) = unbounded();
        let listener = |sender: &UnboundedSender<SocketEvent>, what: fn(JsValue) -> SocketEvent| {
            let sender = sender.clone();
            Closure::<dyn Fn(JsValue)>::new(move |event| {
                let _ = sender.unbounded_send(what(event));
            })
        };
        let on_open = listener(&sender, |_| SocketEvent::Open);
        let on_message = listener(&sender, |event| {
            let data = event.unchecked_into::<MessageEvent>().data();
            if let Some(text) = data.as_string() {
                SocketEvent::Text(text)
            } else if let Some(blob) = data.dyn_ref::<web_sys::Blob>() {
                SocketEvent::Blob(blob.size())
            } else {
                SocketEvent::Binary(js_sys::Uint8Array::new(&data).to_vec())
            }
        });
        let on_error = listener(&sender, |_| SocketEvent::Error);
        let on_close = listener(&sender, |event| {
            let event = event.unchecked_into::<CloseEvent>();
            SocketEvent::Close {
                code: event.code(),
                reason: event.reason(),
                was_clean: event.was_clean(),
            }
        });
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        for (kind, listener) in [("error", &on_error), ("close", &on_close)] {
            socket
                .add_event_listener_with_callback(kind, listener.as_ref().unchecked_ref())
                .unwrap();
        }
        PageSocket {
            socket,
            events,
            _listeners: vec![on_open, on_message, on_error, on_close],
        }
    }

    /// The next event it dispatched.
    pub async fn next(&mut self) -> SocketEvent {
        within_hang_guard("the WebSocket's next event", self.events.next())
            .await
            .expect("the listeners live as long as the socket")
    }

    /// Its next `count` events.
    pub async fn take(&mut self, count: usize) -> Vec<SocketEvent> {
        let mut events = Vec::with_capacity(count);
        for _ in 0..count {
            events.push(self.next().await);
        }
        events
    }

    pub fn send(&self, text: &str) {
        self.socket.send_with_str(text).unwrap();
    }

    pub fn send_bytes(&self, bytes: &[u8]) {
        self.socket.send_with_u8_array(bytes).unwrap();
    }
}

/// The page's `WebSocket` class right now.
pub fn websocket_class() -> JsValue {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("WebSocket")).unwrap()
}

/// The page's origin as a `ws://` URL base.
pub fn ws_origin() -> String {
    super::origin().replacen("http", "ws", 1)
}

/// `/ws/echo`: greets, then echoes text (prefixed) and binary; closes with
/// 4000 when the page says "bye".
pub fn echo_handler() -> mocklib::Handler {
    ws::link("/ws/echo").on_connection(|connection| async move {
        connection.client.send("welcome");
        while let Some(message) = connection.client.recv().await {
            match message {
                Message::Text(text) if text == "bye" => {
                    connection.client.close_with(4000, "see you");
                }
                Message::Text(text) => connection.client.send(format!("echo: {text}")),
                binary => connection.client.send(binary),
            }
        }
    })
}

/// A mocked socket (a relative URL, as the page's own origin) opens, gets
/// the handler's welcome, and has text and binary echoed; a mocked absolute
/// `wss://` URL needs no network (its host does not exist).
pub async fn check_a_mocked_socket_echoes(mode: Mode) {
    let rooms = ws::link("wss://chat.mocklib.invalid/rooms/:room").on_connection(|connection| {
        connection
            .client
            .send(format!("welcome to {}", &connection.params["room"]));
    });
    let worker = started(mode, [echo_handler(), rooms]).await;
    let mut page = PageSocket::open("/ws/echo", &[]);
    assert_eq!(page.socket.ready_state(), WebSocket::CONNECTING);
    assert_eq!(page.socket.url(), format!("{}/ws/echo", ws_origin()));
    assert_eq!(
        page.take(2).await,
        [SocketEvent::Open, SocketEvent::text("welcome")]
    );
    assert_eq!(page.socket.ready_state(), WebSocket::OPEN);
    assert_eq!(
        (page.socket.protocol(), page.socket.extensions()),
        (String::new(), String::new())
    );
    page.send("hello");
    page.send_bytes(&[1, 2, 3]);
    assert_eq!(page.socket.buffered_amount(), 0);
    assert_eq!(
        page.take(2).await,
        [
            SocketEvent::text("echo: hello"),
            SocketEvent::Binary(vec![1, 2, 3])
        ]
    );
    let mut room = PageSocket::open("wss://chat.mocklib.invalid/rooms/lobby", &[]);
    assert_eq!(
        room.take(2).await,
        [SocketEvent::Open, SocketEvent::text("welcome to lobby")]
    );
    // The default binaryType: a Blob.
    let mut blobs = PageSocket::open_blobs("/ws/echo", &[]);
    assert_eq!(blobs.take(2).await[0], SocketEvent::Open);
    blobs.send_bytes(&[7; 5]);
    assert_eq!(blobs.next().await, SocketEvent::Blob(5.0));
    worker.stop();
}

/// The handler's `close_with(code, reason)` reaches `onclose` as a clean
/// close; the socket is closed after it.
pub async fn check_a_handler_close_reaches_the_page(mode: Mode) {
    let worker = started(mode, [echo_handler()]).await;
    let mut page = PageSocket::open("/ws/echo", &[]);
    assert_eq!(page.take(2).await[1], SocketEvent::text("welcome"));
    page.send("bye");
    assert_eq!(page.next().await, SocketEvent::close(4000, "see you"));
    assert_eq!(page.socket.ready_state(), WebSocket::CLOSED);
    worker.stop();
}

/// The page's `close(code, reason)` ends the handler's `recv()`, and
/// `closed()` says how; the page gets its clean `close` event.
pub async fn check_a_page_close_reaches_the_handler(mode: Mode) {
    let (sender, mut closes) = unbounded::<(Vec<Message>, Option<CloseFrame>)>();
    let handler = ws::link("/ws/closing").on_connection(move |connection| async move {
        let mut received = Vec::new();
        while let Some(message) = connection.client.recv().await {
            received.push(message);
        }
        let _ = sender.unbounded_send((received, connection.client.closed()));
    });
    let worker = started(mode, [handler]).await;
    let mut page = PageSocket::open("/ws/closing", &[]);
    assert_eq!(page.next().await, SocketEvent::Open);
    page.send("last words");
    page.socket
        .close_with_code_and_reason(3001, "page leaving")
        .unwrap();
    assert_eq!(page.socket.ready_state(), WebSocket::CLOSING);
    let (received, closed) = within_hang_guard("the handler", closes.next())
        .await
        .unwrap();
    assert_eq!(received, [Message::from("last words")]);
    assert_eq!(
        closed,
        Some(CloseFrame {
            code: 3001,
            reason: "page leaving".to_owned()
        })
    );
    assert_eq!(page.next().await, SocketEvent::close(3001, "page leaving"));
    worker.stop();
}

/// `broadcast` reaches every open socket of the link, `broadcast_except`
/// all but the sender.
pub async fn check_broadcast_reaches_every_socket(mode: Mode) {
    let chat = ws::link("/ws/chat");
    let handler = chat.on_connection({
        let chat = chat.clone();
        move |connection| async move {
            while let Some(message) = connection.client.recv().await {
                match message.as_text() {
                    Some(text) if text.starts_with("others: ") => {
                        chat.broadcast_except(&connection.client, message);
                        connection.client.send("sent to the others");
                    }
                    _ => chat.broadcast(message),
                }
            }
        }
    });
    let worker = started(mode, [handler]).await;
    let mut first = PageSocket::open("/ws/chat", &[]);
    let mut second = PageSocket::open("/ws/chat", &[]);
    assert_eq!(first.next().await, SocketEvent::Open);
    assert_eq!(second.next().await, SocketEvent::Open);
    assert_eq!(chat.clients().len(), 2);
    first.send("hello all");
    assert_eq!(first.next().await, SocketEvent::text("hello all"));
    assert_eq!(second.next().await, SocketEvent::text("hello all"));
    second.send("others: hi");
    assert_eq!(first.next().await, SocketEvent::text("others: hi"));
    assert_eq!(second.next().await, SocketEvent::text("sent to the others"));
    first.socket.close().unwrap();
    assert_eq!(first.next().await, SocketEvent::close(1005, ""));
    assert_eq!(chat.clients().len(), 1);
    worker.stop();
}

/// The upgrade request the handler sees: the offered sub-protocols (the
/// link's choice becomes the socket's `protocol`), the page's origin and
/// cookies. A link that accepts none of the offered ones fails the socket.
pub async fn check_the_upgrade_request_and_sub_protocol(mode: Mode) {
    let handler = ws::link("/ws/protocols")
        .protocols(["graphql-transport-ws", "chat.v2"])
        .on_connection(|connection| {
            let request = &connection.request;
            for seen in [
                connection.client.protocol().unwrap_or("none").to_owned(),
                request
                    .header("sec-websocket-protocol")
                    .unwrap_or("none")
                    .to_owned(),
                request.header("origin").unwrap_or("none").to_owned(),
                connection
                    .cookies
                    .get("ws-session")
                    .unwrap_or("none")
                    .to_owned(),
            ] {
                connection.client.send(seen);
            }
        });
    let worker = started(mode, [handler]).await;
    set_cookie("ws-session=abc; path=/");
    let mut page = PageSocket::open("/ws/protocols", &["chat.v1", "chat.v2"]);
    assert_eq!(
        page.take(5).await,
        [
            SocketEvent::Open,
            SocketEvent::text("chat.v2"),
            SocketEvent::text("chat.v1, chat.v2"),
            SocketEvent::Text(super::origin()),
            SocketEvent::text("abc"),
        ]
    );
    assert_eq!(page.socket.protocol(), "chat.v2");
    set_cookie("ws-session=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/");
    let mut refused = PageSocket::open("/ws/protocols", &["chat.v1"]);
    assert_eq!(
        refused.take(2).await,
        [SocketEvent::Error, SocketEvent::failed()]
    );
    worker.stop();
}

/// The origin of `runner.py`'s real WebSocket server and its `ws://` URL.
pub async fn real_websocket() -> (String, String) {
    let origin = event_source_origin().await;
    let url = format!("{}/ws", origin.replacen("http", "ws", 1));
    (origin, url)
}

/// `server.connect()` reaches the real server (with the offered
/// sub-protocol); `forward_with` alters messages both ways; the real
/// server's close reaches the page.
pub async fn check_server_connect_forwards_to_the_real_server(mode: Mode) {
    let (_, url) = real_websocket().await;
    let handler = ws::link(&url).on_connection(|connection| async move {
        let server = connection.server.connect().await?;
        connection
            .forward_with(server, |direction, message| match (direction, message) {
                (Direction::ClientToServer, Message::Text(text)) => {
                    Some(Message::Text(format!("{text} (via mocklib)")))
                }
                (Direction::ServerToClient, Message::Text(text)) => {
                    Some(Message::Text(format!("real: {text}")))
                }
                (_, binary) => Some(binary),
            })
            .await;
        Ok::<_, ws::Error>(())
    });
    let worker = started(mode, [handler]).await;
    let mut page = PageSocket::open(&format!("{url}?stream={mode:?}-forwarded"), &["chat"]);
    assert_eq!(
        page.take(2).await,
        [
            SocketEvent::Open,
            SocketEvent::text("real: hello from the real server")
        ]
    );
    assert_eq!(page.socket.protocol(), "chat", "the link's choice");
    page.send("ping");
    assert_eq!(
        page.next().await,
        SocketEvent::text("real: PING (VIA MOCKLIB)")
    );
    page.send_bytes(&[1, 2, 3]);
    assert_eq!(page.next().await, SocketEvent::Binary(vec![3, 2, 1]));
    page.send("close yourself");
    assert_eq!(page.next().await, SocketEvent::close(4001, "real bye"));
    worker.stop();
}

/// A WebSocket no handler takes, under the bypass strategy, is the real
/// one (the real server's sub-protocol, every message both ways); its
/// `101` reaches `response:bypass`, and the page's close the real server.
pub async fn check_an_unhandled_socket_reaches_the_real_server(mode: Mode) {
    let name = format!("{mode:?}-unhandled");
    let (origin, url) = real_websocket().await;
    let (worker, bypassed) = bypassing(mode, []).await;
    let mut page = PageSocket::open(&format!("{url}?stream={name}"), &["chat", "other"]);
    assert_eq!(
        page.take(2).await,
        [
            SocketEvent::Open,
            SocketEvent::text("hello from the real server")
        ]
    );
    assert_eq!(page.socket.protocol(), "chat");
    let (status, headers) = bypassed.lock().unwrap().pop().unwrap();
    assert_eq!(status, 101);
    assert_eq!(headers["sec-websocket-protocol"], "chat");
    page.send("shout");
    assert_eq!(page.next().await, SocketEvent::text("SHOUT"));
    assert!(real_stream_open(&origin, &name).await);
    page.socket.close_with_code(1000).unwrap();
    assert_eq!(page.next().await, SocketEvent::close(1000, ""));
    wait_until_real_stream_closed(&origin, &name).await;
    worker.stop();
}

/// Under the error strategy, an unhandled socket fails as a connection
/// that could not open does.
pub async fn check_an_unhandled_socket_fails_under_the_error_strategy(mode: Mode) {
    let worker = setup_worker([]);
    let options = quiet(mode).on_unhandled_request(UnhandledRequest::Error);
    worker.start_with(options).await.unwrap();
    let mut page = PageSocket::open("/ws/nobody", &[]);
    assert_eq!(
        page.take(2).await,
        [SocketEvent::Error, SocketEvent::failed()]
    );
    assert_eq!(page.socket.ready_state(), WebSocket::CLOSED);
    worker.stop();
}

/// `start()` puts our class in place of the page's, `stop()` puts the
/// browser's back (and a socket opened then is a real one).
pub async fn check_stop_restores_the_websocket_class(mode: Mode) {
    let original = websocket_class();
    let worker = started(mode, [echo_handler()]).await;
    let ours = websocket_class();
    assert!(!ours.loose_eq(&original), "start() replaces WebSocket");
    assert_eq!(
        js_sys::Reflect::get(&ours, &JsValue::from_str("name")).unwrap(),
        "WebSocket"
    );
    worker.stop();
    assert!(websocket_class().loose_eq(&original), "stop() restores it");
    // Nothing intercepts now: the runner serves no WebSockets.
    let mut page = PageSocket::open("/ws/echo", &[]);
    assert_eq!(
        page.take(2).await,
        [SocketEvent::Error, SocketEvent::failed()]
    );
}

/// The WebSocket tests every mode runs, as `#[wasm_bindgen_test]`s of the
/// test file that expands this with its mode.
macro_rules! websocket_tests {
    ($mode:expr) => {
        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn a_mocked_websocket_gets_the_welcome_and_echoes_text_and_binary() {
            check_a_mocked_socket_echoes($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn a_handler_close_reaches_onclose_with_its_code_and_reason() {
            check_a_handler_close_reaches_the_page($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn a_page_close_ends_the_handlers_recv_with_its_code() {
            check_a_page_close_reaches_the_handler($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn broadcast_reaches_every_socket_of_the_link() {
            check_broadcast_reaches_every_socket($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn the_handler_sees_the_upgrade_request_and_chooses_the_sub_protocol() {
            check_the_upgrade_request_and_sub_protocol($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn server_connect_forwards_to_a_real_websocket_with_messages_altered() {
            check_server_connect_forwards_to_the_real_server($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn an_unhandled_websocket_reaches_the_real_server_under_bypass() {
            check_an_unhandled_socket_reaches_the_real_server($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn an_unhandled_websocket_fails_under_the_error_strategy() {
            check_an_unhandled_socket_fails_under_the_error_strategy($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn stop_restores_the_browsers_websocket_class() {
            check_stop_restores_the_websocket_class($mode).await;
        }
    };
}
pub(crate) use websocket_tests;
