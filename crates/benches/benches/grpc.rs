//! gRPC through mocklib against a bare tonic server on loopback, in the
//! same run: `cargo bench -p mocklib-benches --features grpc --bench grpc`.
//!
//! The same tonic client code (`tonic::client::Grpc`, what generated clients
//! wrap) calls: mocklib in process (the tower front door, no socket),
//! mocklib's listener over h2c, and a bare tonic server (hyper-util's HTTP/2
//! server with `tonic::server::Grpc`, no mocklib) — each connected once.
//! The bare server runs on a 2-worker runtime of its own, as mocklib's
//! listener does (the goals' reference); the same server on the client's
//! runtime, and the listener there (`ListenOptions::on_current_runtime`),
//! are reference rows: sharing the client's runtime spares a server the
//! wake-up of another runtime's thread, which no server in another process
//! avoids.
//! Unary: round-trip latency of a 32-byte message, cases in interleaved
//! rounds. Server streaming: 10,000 replies of 32 bytes per call, messages
//! per second. Bidirectional echo: in one call per case and round, the
//! client sends a 32-byte message, waits for its echo, then sends the next
//! (ping-pong); each send-to-echo round trip is one sample, cases in
//! interleaved rounds.
//!
//! The servers and the client calls are `mocklib_counted::grpc`'s
//! (crates/counted): `scripts/bench-counted-grpc` counts the same servers,
//! run alone by the `mocklib-counted` binary (`grpc-mocklib`, `grpc-bare`).

mod common;

use common::percentile;
use std::time::Duration;

use mocklib::node::setup_server;
use mocklib_counted::grpc::{
    STREAMED, bare_server, bidi_echo, channel, echo_handlers, stream_rate, unary,
};

const WARMUP: usize = 500;
const SAMPLES: usize = 5_000;
const ROUNDS: usize = 10;
const STREAM_CALLS: usize = 10;
const BIDI_WARMUP: usize = 500;
const BIDI_PER_CALL: usize = 1_000;
const BIDI_ROUNDS: usize = 10;

fn main() {
    common::run_beside_own(bare_server(), run);
}

/// The cases, with `bare_own` the bare server on a runtime of its own.
async fn run(bare_own: String) {
    let server = setup_server(echo_handlers());
    server.listen();
    // The same handlers with the listener on this runtime (no hop between
    // runtimes), as the reference's bare server runs.
    let here = setup_server(echo_handlers());
    here.listen_with(mocklib::ListenOptions::new().on_current_runtime());
    let bare_shared = bare_server().await;
    let names = [
        "mocklib, in process (tower front door)",
        "mocklib, listener over h2c",
        "bare tonic server over h2c, own runtime",
        "reference: the bare server on the client's runtime",
        "reference: the listener on the client's runtime (`on_current_runtime`)",
    ];
    // Indices into `names` (and the samples).
    const IN_PROCESS: usize = 0;
    const LISTENER: usize = 1;
    const BARE: usize = 2;
    const BARE_SHARED: usize = 3;
    const LISTENER_HERE: usize = 4;
    let mut in_process = tonic::client::Grpc::with_origin(
        server.service(),
        "http://bench.internal".parse().unwrap(),
    );
    let mut channels = Vec::new();
    for url in [
        server.url().as_str(),
        &bare_own,
        &bare_shared,
        here.url().as_str(),
    ] {
        channels.push(channel(url).await);
    }

    for _ in 0..WARMUP {
        unary(&mut in_process).await;
        for grpc in &mut channels {
            unary(grpc).await;
        }
    }
    let mut samples = vec![Vec::new(); names.len()];
    for _ in 0..ROUNDS {
        for _ in 0..SAMPLES / ROUNDS {
            samples[IN_PROCESS].push(unary(&mut in_process).await);
        }
        for (grpc, samples) in channels.iter_mut().zip(&mut samples[1..]) {
            for _ in 0..SAMPLES / ROUNDS {
                samples.push(unary(grpc).await);
            }
        }
    }
    for samples in &mut samples {
        samples.sort_unstable();
    }
    println!(
        "\ngRPC unary round trip, 32-byte message, tonic 0.14 client; {WARMUP} warm-up then \
         {SAMPLES} timed calls per case in {ROUNDS} interleaved rounds; the client on a 2-worker \
         tokio multi-thread runtime, mocklib's listener and the bare server each on a 2-worker \
         runtime of their own (the references' servers share the client's)\n"
    );
    common::print_percentiles(names, &samples);

    // The listener's channel and the bare server's (own runtime).
    let mut rates = [Vec::new(), Vec::new()];
    stream_rate(&mut channels[0]).await;
    stream_rate(&mut channels[1]).await;
    for _ in 0..STREAM_CALLS {
        rates[0].push(stream_rate(&mut channels[0]).await);
        rates[1].push(stream_rate(&mut channels[1]).await);
    }
    for rates in &mut rates {
        rates.sort_by(f64::total_cmp);
    }
    let median = |rates: &[f64]| rates[rates.len() / 2];
    println!(
        "\nServer streaming, {STREAMED} replies of 32 bytes per call over h2c, median of \
         {STREAM_CALLS} calls: mocklib {:.0} messages/s, bare tonic (own runtime) {:.0} \
         messages/s\n",
        median(&rates[0]),
        median(&rates[1])
    );

    bidi_echo(&mut in_process, BIDI_WARMUP).await;
    for grpc in &mut channels {
        bidi_echo(grpc, BIDI_WARMUP).await;
    }
    let mut round_trips = vec![Vec::new(); names.len()];
    for _ in 0..BIDI_ROUNDS {
        round_trips[IN_PROCESS].extend(bidi_echo(&mut in_process, BIDI_PER_CALL).await);
        for (grpc, round_trips) in channels.iter_mut().zip(&mut round_trips[1..]) {
            round_trips.extend(bidi_echo(grpc, BIDI_PER_CALL).await);
        }
    }
    for round_trips in &mut round_trips {
        round_trips.sort_unstable();
    }
    println!(
        "gRPC bidirectional echo (ping-pong in one call), 32-byte messages, tonic 0.14 client: \
         each message sent once the echo of the one before has arrived; a {BIDI_WARMUP}-message \
         warm-up call per case, then {BIDI_ROUNDS} interleaved rounds of one call of \
         {BIDI_PER_CALL} timed round trips per case; percentiles of the per-message round trip \
         (send to echo; each call's first, which opens it, not counted)\n"
    );
    common::print_percentiles(names, &round_trips);
    println!();

    // Median of case `a` over median of case `b`.
    let ratio = |times: &[Vec<Duration>], a: usize, b: usize| {
        percentile(&times[a], 0.5).as_secs_f64() / percentile(&times[b], 0.5).as_secs_f64()
    };
    println!(
        "references: mocklib's listener / the bare server on the client's runtime: unary {:.2}×, \
         bidirectional echo {:.2}×; both on the client's runtime: unary {:.2}×, bidirectional \
         echo {:.2}×",
        ratio(&samples, LISTENER, BARE_SHARED),
        ratio(&round_trips, LISTENER, BARE_SHARED),
        ratio(&samples, LISTENER_HERE, BARE_SHARED),
        ratio(&round_trips, LISTENER_HERE, BARE_SHARED),
    );
    let in_process = ratio(&samples, IN_PROCESS, BARE);
    let listener = ratio(&samples, LISTENER, BARE);
    let streaming = median(&rates[0]) / median(&rates[1]);
    let bidi = ratio(&round_trips, LISTENER, BARE);
    let verdict = |pass: bool| if pass { "PASS" } else { "FAIL" };
    println!(
        "{}: unary in process ≤ 0.2× the bare tonic server's round trip ({in_process:.2}×)",
        verdict(in_process <= 0.2)
    );
    println!(
        "{}: unary through the listener (h2c) ≤ 1.1× the bare tonic server on its own runtime ({listener:.2}×)",
        verdict(listener <= 1.1)
    );
    println!(
        "{}: a 10,000-message server stream ≥ 0.9× the bare tonic server's messages/s ({streaming:.2}×)",
        verdict(streaming >= 0.9)
    );
    println!(
        "{}: bidirectional echo through the listener (h2c) ≤ 1.2× the bare tonic server on its own runtime ({bidi:.2}×)",
        verdict(bidi <= 1.2)
    );
    server.close();
    here.close();
}
