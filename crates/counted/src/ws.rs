//! The WebSocket echo servers `scripts/bench-counted-ws` counts (feature
//! `ws`) and the websocket bench times: mocklib's listener with one `ws`
//! handler echoing every message, and a bare tokio-tungstenite echo server;
//! and the client of the counted runs.

use futures_util::{SinkExt, StreamExt};
use mocklib::node::{Server, setup_server};
use mocklib::ws;
use tokio_tungstenite::tungstenite::Message;

/// The message each round trip sends (32 bytes).
pub const TEXT: &str = "the quick brown fox jumps over!!";

/// A client's connection.
pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A listening server with one `ws` handler that echoes every message.
pub fn mocked_echo_server() -> Server {
    let server = setup_server([ws::link("/echo").on_connection(|connection| async move {
        while let Some(message) = connection.client.recv().await {
            connection.client.send(message);
        }
    })]);
    server.listen();
    server
}

/// The `ws://` URL of `server`'s echo handler.
pub fn mocked_url(server: &Server) -> String {
    server
        .url()
        .join("/echo")
        .expect("a path joins")
        .to_string()
        .replacen("http", "ws", 1)
}

/// A bare tokio-tungstenite echo server on the current runtime; its
/// `ws://` URL.
pub async fn bare_echo_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("a bound address");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut socket) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                while let Some(Ok(message)) = socket.next().await {
                    if message.is_text() && socket.send(message).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    format!("ws://{address}/echo")
}

/// One round trip of [`TEXT`] on `socket`.
pub async fn round_trip(socket: &mut Socket) {
    socket
        .send(Message::text(TEXT))
        .await
        .expect("the message is sent");
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) => {
                assert_eq!(text.as_str(), TEXT);
                return;
            }
            Some(Ok(_)) => {}
            other => panic!("no echo: {other:?}"),
        }
    }
}

/// `count` round trips on one connection to `url`, then a clean close.
pub async fn client(url: &str, count: usize) {
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("the echo server accepts");
    for _ in 0..count {
        round_trip(&mut socket).await;
    }
    socket.close(None).await.expect("a clean close");
    while let Some(Ok(_)) = socket.next().await {}
}

/// The echo server `name` (`ws-mocklib` or `ws-bare`) alone, on a 2-worker
/// runtime as the bench's, until stdin closes.
pub fn serve(name: &str) {
    let runtime = runtime();
    if name == "ws-mocklib" {
        let server = runtime.block_on(async { mocked_echo_server() });
        crate::announce::announce_and_wait(&mocked_url(&server));
        server.close();
    } else {
        let url = runtime.block_on(bare_echo_server());
        crate::announce::announce_and_wait(&url);
    }
    runtime.shutdown_background();
}

/// [`client`] on a runtime of its own (outside valgrind, in the counted runs).
pub fn run_client(url: &str, count: usize) {
    runtime().block_on(client(url, count));
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}
