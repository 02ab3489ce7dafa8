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
//! The servers are mocklib-counted's (`ws` module), which
//! `scripts/bench-counted-ws` counts under valgrind: the timed code and the
//! counted code are one.

mod common;

use common::percentile;

use std::time::{Duration, Instant};

use mocklib_counted::ws::{Socket, bare_echo_server, mocked_echo_server, mocked_url};

const WARMUP: usize = 500;
const SAMPLES: usize = 10_000;
const ROUNDS: usize = 20;

fn main() {
    common::run_beside_own(bare_echo_server(), run);
}

/// One timed round trip.
async fn round_trip(socket: &mut Socket) -> Duration {
    let started = Instant::now();
    mocklib_counted::ws::round_trip(socket).await;
    started.elapsed()
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
