//! WebSocket echo round trip through a mocked connection against a bare
//! tokio-tungstenite echo server on loopback, in the same run:
//! `cargo bench -p mocklib-benches --features ws --bench websocket`.
//!
//! One tokio-tungstenite client per case, connected once; each sample sends
//! a 32-byte text message and waits for its echo. mocklib's case is a `ws`
//! handler that echoes what it receives, reached in base URL mode; the bare
//! case is `accept_async` plus a loop that sends every message back, on a
//! 2-worker runtime of its own as mocklib's listener has (the goal's
//! reference, as in the socket bench). The same bare server on the client's
//! runtime is a third row: there the client's write and the server's read
//! share one I/O driver, a wake-up across runtimes no server in another
//! process avoids. The cases take turns in rounds.
//!
//! For `scripts/bench-counted-ws`, which counts what one message costs each
//! server under valgrind:
//! - `-- --serve mocklib|bare` starts that echo server alone, prints its
//!   `ws://…/echo` URL on one line and serves until stdin closes;
//! - `-- --client URL N` connects to URL, makes N echo round trips of the
//!   same message one by one on that connection, closes it and prints N.

mod common;

use common::percentile;

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use mocklib::node::{Server, setup_server};
use mocklib::ws;
use mocklib_counted::announce::announce_and_wait;
use tokio_tungstenite::tungstenite::Message;

const WARMUP: usize = 500;
const SAMPLES: usize = 10_000;
const ROUNDS: usize = 20;
const TEXT: &str = "the quick brown fox jumps over!!";

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes `--bench`; anything but these modes is ignored.
    if let Some(at) = args.iter().position(|a| a == "--serve") {
        serve(args.get(at + 1).map(String::as_str));
    } else if let Some(at) = args.iter().position(|a| a == "--client") {
        let url = args.get(at + 1).expect("usage: websocket --client URL N");
        let count = args.get(at + 2).and_then(|n| n.parse().ok());
        let count = count.expect("usage: websocket --client URL N");
        common::run(client(url, count));
        println!("{count}");
    } else {
        common::run_beside_own(bare_echo_server(), run);
    }
}

/// The echo server `name` alone, until stdin closes.
fn serve(name: Option<&str>) {
    let runtime = common::runtime();
    match name {
        Some("mocklib") => {
            let server = runtime.block_on(async { mocked_echo_server() });
            announce_and_wait(&mocked_url(&server));
            server.close();
        }
        Some("bare") => {
            let url = runtime.block_on(bare_echo_server());
            announce_and_wait(&url);
        }
        other => {
            eprintln!("usage: websocket --serve mocklib|bare (got {other:?})");
            std::process::exit(2);
        }
    }
    runtime.shutdown_background();
}

/// `count` round trips on one connection to `url`, then a clean close.
async fn client(url: &str, count: usize) {
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    for _ in 0..count {
        round_trip(&mut socket).await;
    }
    socket.close(None).await.unwrap();
    while let Some(Ok(_)) = socket.next().await {}
}

/// A listening server with one `ws` handler that echoes every message.
fn mocked_echo_server() -> Server {
    let server = setup_server([ws::link("/echo").on_connection(|connection| async move {
        while let Some(message) = connection.client.recv().await {
            connection.client.send(message);
        }
    })]);
    server.listen();
    server
}

/// The `ws://` URL of `server`'s echo handler.
fn mocked_url(server: &Server) -> String {
    server
        .url()
        .join("/echo")
        .unwrap()
        .to_string()
        .replacen("http", "ws", 1)
}

async fn bare_echo_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut socket = tokio_tungstenite::accept_async(tcp).await.unwrap();
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

async fn round_trip(socket: &mut Socket) -> Duration {
    let started = Instant::now();
    socket.send(Message::text(TEXT)).await.unwrap();
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) => {
                assert_eq!(text.as_str(), TEXT);
                return started.elapsed();
            }
            Some(Ok(_)) => {}
            other => panic!("no echo: {other:?}"),
        }
    }
}

/// The cases, with `bare_own_url` the bare server on a runtime of its own.
async fn run(bare_own_url: String) {
    let server = mocked_echo_server();
    let mocked_url = mocked_url(&server);
    let bare_shared_url = bare_echo_server().await;
    let cases = [
        ("mocklib ws handler, base URL", mocked_url),
        (
            "bare tokio-tungstenite echo server, own runtime",
            bare_own_url,
        ),
        (
            "reference: the bare server on the client's runtime",
            bare_shared_url,
        ),
    ];
    let mut sockets = Vec::new();
    for (_, url) in &cases {
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        sockets.push(socket);
    }
    for socket in &mut sockets {
        for _ in 0..WARMUP {
            round_trip(socket).await;
        }
    }
    let mut samples = vec![Vec::new(); cases.len()];
    for _ in 0..ROUNDS {
        for (socket, samples) in sockets.iter_mut().zip(&mut samples) {
            for _ in 0..SAMPLES / ROUNDS {
                samples.push(round_trip(socket).await);
            }
        }
    }
    for samples in &mut samples {
        samples.sort_unstable();
    }
    println!(
        "\nWebSocket echo round trip of a 32-byte text message on loopback; one connection per \
         case; {WARMUP} warm-up then {SAMPLES} timed round trips per case in {ROUNDS} interleaved \
         rounds; the client on a 2-worker tokio multi-thread runtime, mocklib's listener and the \
         bare server each on a 2-worker runtime of their own (the reference's server shares the \
         client's)\n"
    );
    common::print_percentiles(cases.iter().map(|(name, _)| *name), &samples);
    let ratio =
        percentile(&samples[0], 0.5).as_secs_f64() / percentile(&samples[1], 0.5).as_secs_f64();
    let reference =
        percentile(&samples[0], 0.5).as_secs_f64() / percentile(&samples[2], 0.5).as_secs_f64();
    println!();
    println!("mocklib / the bare server on the client's runtime: {reference:.2}×");
    println!(
        "{}: echo round trip through a mocked connection ≤ 1.1× a bare tokio-tungstenite echo server on its own runtime ({ratio:.2}×)",
        if ratio <= 1.1 { "PASS" } else { "FAIL" }
    );
    server.close();
}
