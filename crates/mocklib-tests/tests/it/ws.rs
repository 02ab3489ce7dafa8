//! The `ws` namespace through a real WebSocket client (tokio-tungstenite):
//! base URL, plain and TLS `CONNECT` tunnels, broadcasts, sub-protocols,
//! closes both ways, a real upstream for `server.connect()`, failures.

use crate::common;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mocklib::node::{Server, setup_server};
use mocklib::ws::{self, Direction, Message};
use mocklib::{HttpResponse, http};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{self, Message as Wire};

/// Long enough that only a hang (a bug) ever reaches it.
const HANG: Duration = Duration::from_secs(20);

type Socket<S> = WebSocketStream<S>;

/// A client connected to `path` in base URL mode.
async fn connect(
    server: &Server,
    path: &str,
) -> Socket<tokio_tungstenite::MaybeTlsStream<TcpStream>> {
    let url = server
        .url()
        .join(path)
        .unwrap()
        .to_string()
        .replacen("http", "ws", 1);
    let (socket, _) = tokio::time::timeout(HANG, tokio_tungstenite::connect_async(url))
        .await
        .expect("no hang")
        .expect("the handshake succeeds");
    socket
}

/// The next data or close message, failing on a hang.
async fn next<S: AsyncRead + AsyncWrite + Unpin>(socket: &mut Socket<S>) -> Option<Wire> {
    loop {
        match tokio::time::timeout(HANG, socket.next())
            .await
            .expect("no hang")
        {
            Some(Ok(Wire::Ping(_) | Wire::Pong(_))) => continue,
            Some(Ok(message)) => return Some(message),
            Some(Err(_)) | None => return None,
        }
    }
}

async fn next_text<S: AsyncRead + AsyncWrite + Unpin>(socket: &mut Socket<S>) -> String {
    match next(socket).await {
        Some(Wire::Text(text)) => text.as_str().to_owned(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

fn echo_server() -> Server {
    let echo = ws::link("/rooms/:room");
    setup_server([echo.on_connection(|connection| async move {
        connection
            .client
            .send(format!("welcome to {}", &connection.params["room"]));
        while let Some(message) = connection.client.recv().await {
            match message.as_text() {
                Some("bye") => connection.client.close_with(4000, "see you"),
                _ => connection.client.send(message),
            }
        }
    })])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_talks_with_a_client_in_base_url_mode() {
    let server = echo_server();
    server.listen();
    let mut socket = connect(&server, "/rooms/lobby").await;
    assert_eq!(next_text(&mut socket).await, "welcome to lobby");
    socket.send(Wire::text("hello")).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "hello");
    socket
        .send(Wire::binary(vec![0u8, 159, 255]))
        .await
        .unwrap();
    assert_eq!(
        next(&mut socket).await,
        Some(Wire::binary(vec![0u8, 159, 255]))
    );
    socket.send(Wire::text("bye")).await.unwrap();
    match next(&mut socket).await {
        Some(Wire::Close(Some(frame))) => {
            assert_eq!(u16::from(frame.code), 4000);
            assert_eq!(frame.reason.as_str(), "see you");
        }
        other => panic!("expected the handler's close, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wss_url_is_intercepted_inside_connect_and_tls() {
    let server =
        setup_server([
            ws::link("wss://chat.example.com/live").on_connection(|connection| {
                connection
                    .client
                    .send(format!("secure: {}", connection.client.url()));
            }),
        ]);
    server.listen();
    let tcp = common::tunnel(&server, "chat.example.com:443").await;
    let tls = common::tls_client(&server, "chat.example.com", tcp).await;
    let (mut socket, _) = tokio_tungstenite::client_async("wss://chat.example.com/live", tls)
        .await
        .unwrap();
    assert_eq!(
        next_text(&mut socket).await,
        "secure: wss://chat.example.com/live"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ws_url_is_intercepted_inside_a_plain_tunnel() {
    let server =
        setup_server([
            ws::link("ws://chat.example.com/live").on_connection(|connection| {
                connection.client.send("plain");
            }),
        ]);
    server.listen();
    let tcp = common::tunnel(&server, "chat.example.com:80").await;
    let (mut socket, _) = tokio_tungstenite::client_async("ws://chat.example.com/live", tcp)
        .await
        .unwrap();
    assert_eq!(next_text(&mut socket).await, "plain");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broadcasts_reach_every_client_of_the_link_or_all_but_one() {
    let chat = ws::link("/chat");
    let server = setup_server([chat.on_connection({
        let chat = chat.clone();
        move |connection| {
            let chat = chat.clone();
            async move {
                while let Some(message) = connection.client.recv().await {
                    chat.broadcast_except(&connection.client, message);
                }
            }
        }
    })]);
    server.listen();
    let mut alice = connect(&server, "/chat").await;
    let mut bob = connect(&server, "/chat").await;
    // Both connections are registered once their handshakes are done.
    for _ in 0..200 {
        if chat.clients().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(chat.clients().len(), 2);
    chat.broadcast("server notice");
    assert_eq!(next_text(&mut alice).await, "server notice");
    assert_eq!(next_text(&mut bob).await, "server notice");
    alice.send(Wire::text("hi bob")).await.unwrap();
    assert_eq!(next_text(&mut bob).await, "hi bob");
    // Alice does not hear her own message: the next thing she gets is Bob's.
    bob.send(Wire::text("hi alice")).await.unwrap();
    assert_eq!(next_text(&mut alice).await, "hi alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_chooses_a_sub_protocol_the_client_offered() {
    let server = setup_server([ws::link("/graphql")
        .protocols(["graphql-transport-ws"])
        .on_connection(|connection| {
            let offered = connection
                .request
                .header("sec-websocket-protocol")
                .unwrap_or("");
            let chosen = connection.client.protocol().unwrap_or("none");
            connection.client.send(format!("{offered} -> {chosen}"));
        })]);
    server.listen();
    let url = server
        .url()
        .join("/graphql")
        .unwrap()
        .to_string()
        .replacen("http", "ws", 1);
    let mut request = tungstenite::client::IntoClientRequest::into_client_request(url).unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-ws, graphql-transport-ws".parse().unwrap(),
    );
    let (mut socket, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        response.headers()["sec-websocket-protocol"],
        "graphql-transport-ws"
    );
    assert_eq!(
        next_text(&mut socket).await,
        "graphql-ws, graphql-transport-ws -> graphql-transport-ws"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handler_sees_the_clients_close() {
    let (closed, on_close) = tokio::sync::oneshot::channel();
    let closed = std::sync::Arc::new(std::sync::Mutex::new(Some(closed)));
    let server = setup_server([ws::link("/leave").on_connection(move |connection| {
        let closed = closed.lock().unwrap().take();
        async move {
            while connection.client.recv().await.is_some() {}
            let _ = closed.unwrap().send(connection.client.closed());
        }
    })]);
    server.listen();
    let mut socket = connect(&server, "/leave").await;
    socket
        .close(Some(tungstenite::protocol::CloseFrame {
            code: 4001.into(),
            reason: "done here".into(),
        }))
        .await
        .unwrap();
    let seen = tokio::time::timeout(HANG, on_close).await.unwrap().unwrap();
    assert_eq!(
        seen,
        Some(ws::CloseFrame {
            code: 4001,
            reason: "done here".into()
        })
    );
}

/// A real WebSocket server on loopback that answers every text in upper case.
async fn real_upper_case_server() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut socket = tokio_tungstenite::accept_async(tcp).await.unwrap();
                socket.send(Wire::text("real hello")).await.unwrap();
                while let Some(Ok(Wire::Text(text))) = socket.next().await {
                    socket
                        .send(Wire::text(text.as_str().to_uppercase()))
                        .await
                        .unwrap();
                }
            });
        }
    });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_forwards_both_ways_altering_and_dropping_on_the_way() {
    let upstream = real_upper_case_server().await;
    let server = setup_server([ws::link(format!("ws://{upstream}/live")).on_connection(
        |connection| async move {
            let server = connection.server.connect().await?;
            connection
                .forward_with(server, |direction, message| {
                    match (direction, message.as_text()) {
                        (Direction::ClientToServer, Some("secret")) => None,
                        (Direction::ClientToServer, Some(text)) => {
                            Some(Message::from(format!("{text} loudly")))
                        }
                        (Direction::ServerToClient, Some(text)) => {
                            Some(Message::from(format!("{text}!")))
                        }
                        _ => Some(message),
                    }
                })
                .await;
            Ok::<_, ws::Error>(())
        },
    )]);
    server.listen();
    // Through the proxy, as a client of the real address would come.
    let tcp = common::tunnel(&server, &upstream.to_string()).await;
    let (mut socket, _) = tokio_tungstenite::client_async(format!("ws://{upstream}/live"), tcp)
        .await
        .unwrap();
    assert_eq!(next_text(&mut socket).await, "real hello!");
    socket.send(Wire::text("secret")).await.unwrap();
    socket.send(Wire::text("shout")).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "SHOUT LOUDLY!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_handler_closes_with_1011_and_the_server_keeps_serving() {
    let server = setup_server([
        ws::link("/broken").on_connection(|connection| async move {
            connection.client.send("before");
            if connection.request.url().path() == "/broken" {
                panic!("handler bug");
            }
        }),
        ws::link("/fails").on_connection(|_| Err::<(), _>("no such room")),
        http::get("/ok", |_| HttpResponse::text("still serving")),
    ]);
    server.listen();
    let mut broken = connect(&server, "/broken").await;
    assert_eq!(next_text(&mut broken).await, "before");
    for mut socket in [broken, connect(&server, "/fails").await] {
        match next(&mut socket).await {
            Some(Wire::Close(Some(frame))) => assert_eq!(u16::from(frame.code), 1011),
            other => panic!("expected a 1011 close, got {other:?}"),
        }
    }
    let ok = reqwest::get(server.url().join("/ok").unwrap())
        .await
        .unwrap();
    assert_eq!(ok.text().await.unwrap(), "still serving");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_handlers_live_in_the_handler_list() {
    let server = setup_server([ws::link("/v").on_connection(|c| c.client.send("initial"))]);
    let client = common::TestClient::new(&server);
    assert_eq!(
        server
            .list_handlers()
            .iter()
            .map(|h| h.header().to_owned())
            .collect::<Vec<_>>(),
        ["ws /v"]
    );
    server.use_handlers([ws::link("/v").on_connection(|c| c.client.send("override"))]);
    let mut socket = connect(&server, "/v").await;
    assert_eq!(next_text(&mut socket).await, "override");
    server.reset_handlers();
    let mut socket = connect(&server, "/v").await;
    assert_eq!(next_text(&mut socket).await, "initial");
    // An upgrade nothing matches follows the strategy (here: error).
    let url = server
        .url()
        .join("/nothing")
        .unwrap()
        .to_string()
        .replacen("http", "ws", 1);
    assert!(tokio_tungstenite::connect_async(url).await.is_err());
    // The in-process middleware cannot carry a WebSocket, and says so.
    let error = client
        .get("http://api.test/v")
        .header("upgrade", "websocket")
        .header("connection", "upgrade")
        .expect_error()
        .await;
    let network = mocklib::front_door::NetworkError::from_middleware_error(&error).unwrap();
    assert_eq!(
        network.kind(),
        mocklib::front_door::NetworkErrorKind::CannotUpgrade
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_stops_its_handler() {
    let (signal, on_drop) = test_support::DropSignal::new();
    let signal = std::sync::Arc::new(std::sync::Mutex::new(Some(signal)));
    let server = setup_server([ws::link("/ticks").on_connection(move |connection| {
        let signal = signal.lock().unwrap().take();
        async move {
            let _signal = signal;
            // Never looks at the connection's state: only the front door can stop it.
            for _ in 0.. {
                connection.client.send("tick");
                mocklib::delay(Duration::from_millis(5)).await;
            }
        }
    })]);
    server.listen();
    let mut socket = connect(&server, "/ticks").await;
    assert_eq!(next_text(&mut socket).await, "tick");
    drop(socket); // no close frame: the TCP connection just goes
    tokio::time::timeout(HANG, on_drop)
        .await
        .expect("the handler was stopped")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_no_handler_takes_is_joined_to_the_real_server() {
    let upstream = real_upper_case_server().await;
    let server = setup_server([ws::link("/elsewhere").on_connection(|c| c.client.close())]);
    server.listen_with(common::on_unhandled(mocklib::UnhandledRequest::Bypass));
    let tcp = common::tunnel(&server, &upstream.to_string()).await;
    let (mut socket, _) = tokio_tungstenite::client_async(format!("ws://{upstream}/live"), tcp)
        .await
        .unwrap();
    assert_eq!(next_text(&mut socket).await, "real hello");
    socket.send(Wire::text("quiet")).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "QUIET");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_messages_are_a_stream() {
    let server = setup_server([ws::link("/sum").on_connection(|connection| async move {
        let mut total = 0;
        let mut numbers = connection.client.messages();
        while let Some(message) = numbers.next().await {
            total += message
                .as_text()
                .and_then(|t| t.parse::<i64>().ok())
                .unwrap_or(0);
            connection.client.send(total.to_string());
        }
    })]);
    server.listen();
    let mut socket = connect(&server, "/sum").await;
    for (number, total) in [("2", "2"), ("40", "42")] {
        socket.send(Wire::text(number)).await.unwrap();
        assert_eq!(next_text(&mut socket).await, total);
    }
}

/// The socket's task hands a message straight to a handler waiting in it,
/// and wakes one that reads in a task of its own: both see every message of
/// a burst, in order, and their answers all reach the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_reaches_a_handler_reading_in_its_own_task_or_another() {
    let server = setup_server([
        ws::link("/here").on_connection(|connection| async move {
            while let Some(message) = connection.client.recv().await {
                connection.client.send(message);
            }
        }),
        ws::link("/elsewhere").on_connection(|connection| {
            let client = connection.client;
            tokio::spawn(async move {
                while let Some(message) = client.recv().await {
                    client.send(message);
                }
            });
        }),
    ]);
    server.listen();
    for path in ["/here", "/elsewhere"] {
        let mut socket = connect(&server, path).await;
        for n in 0..200 {
            socket.feed(Wire::text(n.to_string())).await.unwrap();
        }
        socket.flush().await.unwrap();
        for n in 0..200 {
            assert_eq!(next_text(&mut socket).await, n.to_string(), "{path}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boundary_sees_its_own_websocket_handlers() {
    let server = setup_server([ws::link("/who").on_connection(|c| c.client.send("root"))]);
    server.listen();
    let inside = server
        .in_boundary(async {
            server.use_handlers([ws::link("/who").on_connection(|c| c.client.send("boundary"))]);
            // Inside a boundary, server.url() is the boundary's own port.
            let mut socket = connect(&server, "/who").await;
            next_text(&mut socket).await
        })
        .await;
    assert_eq!(inside, "boundary");
    let mut socket = connect(&server, "/who").await;
    assert_eq!(next_text(&mut socket).await, "root");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_websocket_reaches_a_wss_handler_through_the_proxy() {
    use reqwest_websocket::{Message as Reqwest, Upgrade};
    let server = setup_server([ws::link("wss://stream.example.com/echo").on_connection(
        |connection| async move {
            while let Some(message) = connection.client.recv().await {
                connection
                    .client
                    .send(format!("echo: {}", message.as_text().unwrap_or("?")));
            }
        },
    )]);
    server.listen();
    let response = server
        .reqwest_client()
        .get("wss://stream.example.com/echo")
        .upgrade()
        .send()
        .await
        .unwrap();
    let mut socket = response.into_websocket().await.unwrap();
    socket.send(Reqwest::Text("ping".into())).await.unwrap();
    let echoed = tokio::time::timeout(HANG, socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match echoed {
        Reqwest::Text(text) => assert_eq!(text, "echo: ping"),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_connections_each_see_their_own_boundary() {
    let server = setup_server([ws::link("/whoami").on_connection(|c| c.client.send("root"))]);
    server.listen();
    let connections = (0..200).map(|n| {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .in_boundary(async {
                    let name = format!("boundary {n}");
                    server.use_handlers([ws::link("/whoami").on_connection(move |c| {
                        c.client.send(name.clone());
                    })]);
                    let mut socket = connect(&server, "/whoami").await;
                    next_text(&mut socket).await
                })
                .await
        })
    });
    let seen = futures_util::future::join_all(connections).await;
    for (n, seen) in seen.into_iter().enumerate() {
        assert_eq!(seen.unwrap(), format!("boundary {n}"));
    }
    let mut socket = connect(&server, "/whoami").await;
    assert_eq!(next_text(&mut socket).await, "root");
}

/// Issue 39: a WebSocket a boundary's handler holds ends with the boundary
/// (its handler stops and the socket closes), though the client keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boundary_s_websocket_ends_with_the_boundary() {
    let server = setup_server([]);
    server.listen();
    let boundary = server.open_boundary();
    let url = boundary.in_scope(|| {
        server.use_handlers([ws::link("/ticks").on_connection(|connection| async move {
            for n in 0.. {
                connection.client.send(format!("tick {n}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })]);
        server.url()
    });
    let url = url
        .join("/ticks")
        .unwrap()
        .to_string()
        .replacen("http", "ws", 1);
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "tick 0");
    boundary.end();
    let ended = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(Ok(_)) = socket.next().await {}
    });
    ended.await.expect("the ended boundary's WebSocket closes");
}
