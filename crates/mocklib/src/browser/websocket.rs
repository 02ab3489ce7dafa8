//! The page's `WebSocket` class, replaced while a worker is started, in
//! both modes (MSW: `setupWorker` applies the `WebSocketInterceptor` of
//! `@mswjs/interceptors` whichever way it intercepts HTTP; a Service Worker
//! never sees a WebSocket).
//!
//! `websocket.js` keeps the browser's API. Here each new socket becomes an
//! upgrade request for the engine, and then a mocked connection (its handler
//! talks to the page through a [`Peer`] pumped here), a real socket joined to
//! the page's (passthrough), or a failed connection (`error`, then `close`
//! 1006, as the browser reports any connection that could not open).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use js_sys::{Array, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::answer::page_url;
use super::convert::BrowserRequest;
use super::local;
use super::perform::js_message;
use super::{glue, task};
use crate::engine::{Engine, Outcome, Passthrough};
use crate::message::request::Request;
use crate::message::upgrade::{
    CloseFrame, ConnectFuture, Connected, Connector, Frame, Message, Peer, Services,
    WebSocketUpgrade,
};

/// How long a connection's handler may run on once its socket closed (as on
/// the listener): long enough to see the close, then it is stopped.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

#[wasm_bindgen(module = "/src/browser/websocket.js")]
extern "C" {
    #[wasm_bindgen(js_name = patchWebSocket)]
    fn patch_web_socket(connect: &JsValue, on_message: &JsValue, on_close: &JsValue) -> JsValue;

    #[wasm_bindgen(js_name = unpatchWebSocket)]
    fn unpatch_web_socket(patch: &JsValue);

    #[wasm_bindgen(js_name = passThrough)]
    fn pass_through_js(page: &Endpoint, url: &str, protocols: Vec<String>) -> Promise;

    #[wasm_bindgen(js_name = connectReal)]
    fn connect_real_js(
        url: &str,
        protocols: Vec<String>,
        id: u32,
        on_message: &JsValue,
        on_close: &JsValue,
    ) -> Promise;
}

#[wasm_bindgen]
extern "C" {
    /// One end Rust drives: a page's socket (its controller in
    /// `websocket.js`) or a real socket opened for `server.connect()`.
    #[derive(Clone)]
    type Endpoint;

    /// The page's socket opened with `protocol`.
    #[wasm_bindgen(method)]
    fn open(this: &Endpoint, protocol: &str, extensions: &str);

    #[wasm_bindgen(method, js_name = deliver)]
    fn deliver_text(this: &Endpoint, data: &str);

    /// `data` is a view of wasm memory, copied at once.
    #[wasm_bindgen(method, js_name = deliver)]
    fn deliver_binary(this: &Endpoint, data: &[u8]);

    /// The page's socket closed (its `close` event), or the real one is
    /// closed with `code` and `reason`.
    #[wasm_bindgen(method)]
    fn end(this: &Endpoint, code: u16, reason: &str, was_clean: bool);

    /// The page's socket could not open: `error`, then `close` 1006.
    #[wasm_bindgen(method)]
    fn fail(this: &Endpoint);
}

type Connect = dyn Fn(Endpoint, String, JsValue) -> u32;

struct Hooks {
    on_message: Closure<dyn Fn(u32, JsValue)>,
    on_close: Closure<dyn Fn(u32, u16, String)>,
}

thread_local! {
    /// The queues of every socket whose JavaScript side reports to Rust, by
    /// id: a page's socket (its sends and close arrive) and a real socket of
    /// `server.connect()` (its messages and close arrive).
    static PEERS: RefCell<HashMap<u32, Peer>> = RefCell::default();
    static NEXT_ID: Cell<u32> = const { Cell::new(0) };
    /// Alive as long as the page: a socket outlives the worker that made it.
    static HOOKS: Hooks = Hooks {
        on_message: Closure::new(received),
        on_close: Closure::new(closed),
    };
}

/// Ours is the page's `WebSocket` class until this is dropped.
pub(super) struct WebSocketPatch {
    patch: JsValue,
    _connect: Closure<Connect>,
}

impl WebSocketPatch {
    pub(super) fn install(engine: Arc<Engine>, quiet: bool) -> Self {
        let connect = Closure::<Connect>::new(move |page, url, protocols: JsValue| {
            let protocols: Vec<String> = Array::from(&protocols)
                .iter()
                .filter_map(|protocol| protocol.as_string())
                .collect();
            intercept(Arc::clone(&engine), quiet, page, url, protocols)
        });
        let patch = HOOKS.with(|hooks| {
            patch_web_socket(
                connect.as_ref(),
                hooks.on_message.as_ref(),
                hooks.on_close.as_ref(),
            )
        });
        WebSocketPatch {
            patch,
            _connect: connect,
        }
    }
}

impl Drop for WebSocketPatch {
    fn drop(&mut self) {
        unpatch_web_socket(&self.patch);
    }
}

/// A new id, its queues registered.
fn register(peer: Peer) -> u32 {
    let id = NEXT_ID.with(|next| next.replace(next.get().wrapping_add(1)));
    PEERS.with(|peers| peers.borrow_mut().insert(id, peer));
    id
}

fn forget(id: u32) {
    PEERS.with(|peers| peers.borrow_mut().remove(&id));
}

fn peer(id: u32) -> Option<Peer> {
    PEERS.with(|peers| peers.borrow().get(&id).cloned())
}

/// Socket `id`'s other end sent a message: text, or a `Uint8Array`.
fn received(id: u32, data: JsValue) {
    let Some(peer) = peer(id) else { return };
    let message = match data.as_string() {
        Some(text) => Message::Text(text),
        None => Message::Binary(Bytes::from(Uint8Array::new(&data).to_vec())),
    };
    peer.incoming.push(message);
}

/// Socket `id`'s other end closed it: nothing more goes either way.
fn closed(id: u32, code: u16, reason: String) {
    let Some(peer) = peer(id) else { return };
    let frame = CloseFrame { code, reason };
    peer.incoming.close(frame.clone());
    peer.outgoing.close(frame);
}

/// A page's new socket: returns its id, and decides about it in a task
/// (after the constructor returned, so the page's listeners are in place).
fn intercept(
    engine: Arc<Engine>,
    quiet: bool,
    page: Endpoint,
    url: String,
    protocols: Vec<String>,
) -> u32 {
    // Until accepted, only a close while connecting can arrive here.
    let early = Peer::default();
    let id = register(early.clone());
    let on_panic = {
        let page = page.clone();
        move |message: String| {
            crate::support::log::error(&format!("the WebSocket upgrade panicked: {message}"));
            forget(id);
            page.fail();
        }
    };
    task::spawn(
        async move {
            let outcome = match upgrade_request(&url, &protocols) {
                Ok((request, base_url)) => engine.handle(request, base_url).await,
                Err(message) => {
                    crate::support::log::error(&format!(
                        "the WebSocket to {url} failed: {message}"
                    ));
                    forget(id);
                    return page.fail();
                }
            };
            if early.incoming.closed().is_some() {
                // The page closed it while connecting (and saw it fail).
                return forget(id);
            }
            if let Outcome::WebSocket(upgrade) = outcome {
                return serve(id, page, upgrade, &protocols, quiet);
            }
            // Not accepted: nothing the page does goes to a handler.
            forget(id);
            match outcome {
                Outcome::Passthrough(passthrough) => {
                    pass_through(&page, &url, protocols, passthrough).await;
                }
                Outcome::Mocked(response) => {
                    // As from a real server that answers the handshake
                    // without upgrading.
                    crate::support::log::error(&format!(
                        "a handler answered the WebSocket upgrade of {url} with {} instead of \
                         accepting it (ws.link(..).on_connection does); the connection fails",
                        response.status()
                    ));
                    page.fail();
                }
                // A network error (or the upgrade, taken above).
                _ => page.fail(),
            }
        },
        on_panic,
    );
    id
}

/// The upgrade request of a socket to `url` (a `ws(s)://` URL) offering
/// `protocols`, as the browser would send it (the engine sees its http(s)
/// URL), and the page's URL relative predicates match against.
fn upgrade_request(
    url: &str,
    protocols: &[String],
) -> Result<(Request, Option<std::sync::Arc<url::Url>>), String> {
    let mut http_url = url::Url::parse(url).map_err(|error| error.to_string())?;
    let scheme = if http_url.scheme() == "wss" {
        "https"
    } else {
        "http"
    };
    // Both are special schemes with the same default ports: this never fails.
    let _ = http_url.set_scheme(scheme);
    let mut headers: Vec<String> = [
        "upgrade",
        "websocket",
        "connection",
        "upgrade",
        "sec-websocket-version",
        "13",
    ]
    .map(str::to_owned)
    .into();
    if !protocols.is_empty() {
        headers.extend(["sec-websocket-protocol".to_owned(), protocols.join(", ")]);
    }
    let description = glue::describe_upgrade(http_url.as_str(), headers);
    let browser = BrowserRequest::unpack(&description, Bytes::new());
    Ok((browser.to_core()?, page_url(&browser.page)))
}

/// Accepts a mocked connection: the page's socket opens, its handler runs,
/// and what the handler sends reaches the page until either side closes.
fn serve(id: u32, page: Endpoint, upgrade: WebSocketUpgrade, offered: &[String], quiet: bool) {
    let url = crate::namespace::ws::ws_url(upgrade.request().url());
    let protocol = upgrade.protocol().map(str::to_owned);
    if protocol.is_none() && !offered.is_empty() {
        crate::support::log::error(&format!(
            "the WebSocket handler for {url} accepts none of the sub-protocols the page offered \
             ({}); the browser fails such a connection",
            offered.join(", ")
        ));
        forget(id);
        return page.fail();
    }
    let services = Services {
        connector: Some(Arc::new(PageConnector)),
    };
    let (peer, handler) = upgrade.accept(services);
    PEERS.with(|peers| peers.borrow_mut().insert(id, peer.clone()));
    if !quiet {
        crate::support::log::info(&format!("{url} connected (101 Switching Protocols)"));
    }
    page.open(protocol.as_deref().unwrap_or_default(), "");
    let (handler, stop) = futures_util::future::abortable(handler);
    let on_panic = {
        let peer = peer.clone();
        move |message: String| {
            crate::support::log::error(&format!(
                "the WebSocket handler for {url} panicked: {message}. The connection closes \
                 with 1011."
            ));
            peer.send_close(CloseFrame {
                code: 1011,
                reason: "mocklib: the handler failed".to_owned(),
            });
        }
    };
    task::spawn(
        async move {
            let _ = handler.await;
        },
        on_panic,
    );
    task::spawn(
        async move {
            pump(&peer, &page).await;
            forget(id);
            crate::message::delay::delay(CLOSE_GRACE).await;
            stop.abort();
        },
        |_| {},
    );
}

/// Hands what `peer` sends to `to` until either side closes, then closes
/// `to` the same way.
async fn pump(peer: &Peer, to: &Endpoint) {
    while let Some(frame) = peer.outgoing.next().await {
        match frame {
            Frame::Message(Message::Text(text)) => to.deliver_text(&text),
            Frame::Message(Message::Binary(bytes)) => to.deliver_binary(&bytes),
            Frame::Close(frame) => {
                // The other end answers a close and sends nothing after it.
                peer.incoming.close(frame.clone());
                peer.outgoing.close(frame.clone());
                return to.end(frame.code, &frame.reason, true);
            }
        }
    }
    // Closed by the other end itself (see `closed`).
    let frame = peer.outgoing.closed().unwrap_or_else(CloseFrame::abnormal);
    to.end(frame.code, &frame.reason, true);
}

/// Joins the page's socket to a real one (`websocket.js` forwards every
/// event) and reports the real `101` for `response:bypass` once it opens.
async fn pass_through(
    page: &Endpoint,
    url: &str,
    protocols: Vec<String>,
    passthrough: Passthrough,
) {
    // A failure reached the page as the real socket's own events.
    let Ok(protocol) = JsFuture::from(pass_through_js(page, url, protocols)).await else {
        return;
    };
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::UPGRADE,
        http::HeaderValue::from_static("websocket"),
    );
    headers.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("upgrade"),
    );
    let protocol = protocol.as_string().unwrap_or_default();
    if let (false, Ok(protocol)) = (protocol.is_empty(), http::HeaderValue::from_str(&protocol)) {
        headers.insert("sec-websocket-protocol", protocol);
    }
    passthrough.report_response(http::StatusCode::SWITCHING_PROTOCOLS, &headers);
}

/// Opens real WebSockets for `server.connect()` with the browser's own
/// class. The browser sends its own handshake: only the URL and the
/// sub-protocols are the intercepted request's (cookies go as the browser
/// sends them to that host).
struct PageConnector;

impl Connector for PageConnector {
    fn connect(&self, request: &Request, protocols: Option<String>) -> ConnectFuture {
        let url = crate::namespace::ws::ws_url(request.url()).to_string();
        let protocols = protocols
            .iter()
            .flat_map(|offered| offered.split(','))
            .map(str::trim)
            .filter(|protocol| !protocol.is_empty())
            .map(str::to_owned)
            .collect();
        // The handler's future is `Send`; the real socket lives in the page.
        let connecting = local::sendable(connect_real(url, protocols));
        Box::pin(async move {
            connecting.await.unwrap_or_else(|| {
                Err("server.connect() was called from another thread than the page's".to_owned())
            })
        })
    }
}

async fn connect_real(url: String, protocols: Vec<String>) -> Result<Connected, String> {
    let peer = Peer::default();
    let id = register(peer.clone());
    let opening = HOOKS.with(|hooks| {
        connect_real_js(
            &url,
            protocols,
            id,
            hooks.on_message.as_ref(),
            hooks.on_close.as_ref(),
        )
    });
    let opened = match JsFuture::from(opening).await {
        Ok(opened) => Array::from(&opened),
        Err(error) => {
            forget(id);
            return Err(js_message(error));
        }
    };
    let endpoint: Endpoint = opened.get(0).unchecked_into();
    let protocol = opened.get(1).as_string().filter(|p| !p.is_empty());
    let pumped = peer.clone();
    task::spawn(
        async move {
            pump(&pumped, &endpoint).await;
            forget(id);
        },
        |_| {},
    );
    Ok(Connected { peer, protocol })
}
