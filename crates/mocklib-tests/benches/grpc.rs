//! gRPC through mocklib against a bare tonic server on loopback, in the
//! same run: `cargo bench -p mocklib-tests --features grpc --bench grpc`.
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
//! For `scripts/bench-counted-grpc`, which counts what one call and one
//! echoed message cost each server under valgrind:
//! - `-- --serve mocklib|bare` starts that server alone (the listener, or
//!   the bare server on a 2-worker runtime), prints its URL on one line and
//!   serves until stdin closes;
//! - `-- --client URL N` connects to URL, makes N unary calls one by one on
//!   that connection and prints N;
//! - `-- --client-bidi URL N` connects to URL, echoes N messages one by one
//!   in one bidirectional call and prints N;
//! - `-- --client-stream URL N` connects to URL, makes N server-streaming
//!   calls of 10,000 replies one by one on that connection and prints N.

mod common;

use common::percentile;

use std::convert::Infallible;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::Stream;
use http::uri::PathAndQuery;
use mocklib::grpc::{self, GrpcArgs};
use mocklib::node::setup_server;
use mocklib_counted::announce::announce_and_wait;

#[derive(Clone, PartialEq, prost::Message)]
struct Msg {
    #[prost(bytes = "vec", tag = "1")]
    payload: Vec<u8>,
}

const WARMUP: usize = 500;
const SAMPLES: usize = 5_000;
const ROUNDS: usize = 10;
const STREAMED: usize = 10_000;
const STREAM_CALLS: usize = 10;
const BIDI_WARMUP: usize = 500;
const BIDI_PER_CALL: usize = 1_000;
const BIDI_ROUNDS: usize = 10;
const UNARY: &str = "/bench.Echo/Unary";
const STREAM: &str = "/bench.Echo/Stream";
const BIDI: &str = "/bench.Echo/Bidi";

fn payload() -> Msg {
    Msg {
        payload: vec![7; 32],
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: grpc --serve mocklib|bare, --client URL N, --client-bidi URL N or --client-stream URL N";
    // `cargo bench` passes `--bench`; anything but these modes is ignored.
    let target = |at: usize| -> (String, usize) {
        let url = args.get(at + 1).expect(usage).clone();
        let count = args.get(at + 2).and_then(|n| n.parse().ok());
        (url, count.expect(usage))
    };
    if let Some(at) = args.iter().position(|a| a == "--serve") {
        serve(args.get(at + 1).map(String::as_str));
    } else if let Some(at) = args.iter().position(|a| a == "--client") {
        let (url, count) = target(at);
        common::run(async {
            let mut grpc = channel(&url).await;
            for _ in 0..count {
                unary(&mut grpc).await;
            }
        });
        println!("{count}");
    } else if let Some(at) = args.iter().position(|a| a == "--client-bidi") {
        let (url, count) = target(at);
        // `bidi_echo` makes one round trip more than the times it returns.
        let echoed = common::run(async { bidi_echo(&mut channel(&url).await, count - 1).await });
        println!("{}", echoed.len() + 1);
    } else if let Some(at) = args.iter().position(|a| a == "--client-stream") {
        let (url, count) = target(at);
        let mut rates = common::run(async {
            let mut grpc = channel(&url).await;
            let mut rates = Vec::with_capacity(count);
            for _ in 0..count {
                rates.push(stream_rate(&mut grpc).await);
            }
            rates
        });
        rates.sort_by(f64::total_cmp);
        eprintln!("median {:.0} messages/s", rates[rates.len() / 2]);
        println!("{count}");
    } else {
        common::run_beside_own(bare_server(), run);
    }
}

/// The server `name` alone, until stdin closes.
fn serve(name: Option<&str>) {
    match name {
        Some("mocklib") => {
            let server = setup_server(echo_handlers());
            server.listen();
            announce_and_wait(server.url().as_str().trim_end_matches('/'));
            server.close();
        }
        Some("bare") => {
            let runtime = common::runtime();
            let url = runtime.block_on(bare_server());
            announce_and_wait(&url);
            runtime.shutdown_background();
        }
        other => {
            eprintln!("usage: grpc --serve mocklib|bare (got {other:?})");
            std::process::exit(2);
        }
    }
}

type ReplyStream = Pin<Box<dyn Stream<Item = Result<Msg, tonic::Status>> + Send>>;

#[derive(Clone)]
struct Bare;

impl tonic::server::UnaryService<Msg> for Bare {
    type Response = Msg;
    type Future = std::future::Ready<Result<tonic::Response<Msg>, tonic::Status>>;
    fn call(&mut self, request: tonic::Request<Msg>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new(request.into_inner())))
    }
}

impl tonic::server::ServerStreamingService<Msg> for Bare {
    type Response = Msg;
    type ResponseStream = ReplyStream;
    type Future = std::future::Ready<Result<tonic::Response<ReplyStream>, tonic::Status>>;
    fn call(&mut self, _request: tonic::Request<Msg>) -> Self::Future {
        let replies: ReplyStream = Box::pin(futures_util::stream::iter(
            (0..STREAMED).map(|_| Ok(payload())),
        ));
        std::future::ready(Ok(tonic::Response::new(replies)))
    }
}

impl tonic::server::StreamingService<Msg> for Bare {
    type Response = Msg;
    type ResponseStream = tonic::Streaming<Msg>;
    type Future = std::future::Ready<Result<tonic::Response<Self::ResponseStream>, tonic::Status>>;
    fn call(&mut self, request: tonic::Request<tonic::Streaming<Msg>>) -> Self::Future {
        // Each message back as it arrives.
        std::future::ready(Ok(tonic::Response::new(request.into_inner())))
    }
}

/// A bare tonic server (h2c) serving the three methods.
async fn bare_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            // As tonic's `Server::builder()` does (and mocklib's listener):
            // without it, Nagle's algorithm holds a small write back until
            // the client's delayed ACK, stalling a call for ~40 ms.
            stream.set_nodelay(true).unwrap();
            let service = hyper::service::service_fn(
                |request: http::Request<hyper::body::Incoming>| async move {
                    let path = request.uri().path().to_owned();
                    let request = request.map(tonic::body::Body::new);
                    let mut grpc =
                        tonic::server::Grpc::new(tonic_prost::ProstCodec::<Msg, Msg>::default());
                    let response = match path.as_str() {
                        STREAM => grpc.server_streaming(Bare, request).await,
                        BIDI => grpc.streaming(Bare, request).await,
                        _ => grpc.unary(Bare, request).await,
                    };
                    Ok::<_, Infallible>(response)
                },
            );
            tokio::spawn(
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .http2_only()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .into_owned(),
            );
        }
    });
    format!("http://{address}")
}

async fn channel(url: &str) -> tonic::client::Grpc<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    tonic::client::Grpc::new(channel)
}

async fn unary<S>(grpc: &mut tonic::client::Grpc<S>) -> Duration
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let started = Instant::now();
    grpc.ready().await.map_err(Into::into).unwrap();
    let reply: tonic::Response<Msg> = grpc
        .unary(
            tonic::Request::new(payload()),
            PathAndQuery::from_static(UNARY),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.get_ref().payload.len(), 32);
    started.elapsed()
}

/// Messages per second of one 10,000-message server stream.
async fn stream_rate(grpc: &mut tonic::client::Grpc<tonic::transport::Channel>) -> f64 {
    let started = Instant::now();
    grpc.ready().await.unwrap();
    let mut replies = grpc
        .server_streaming::<_, Msg, _>(
            tonic::Request::new(payload()),
            PathAndQuery::from_static(STREAM),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap()
        .into_inner();
    let mut count = 0;
    while let Some(reply) = replies.message().await.unwrap() {
        assert_eq!(reply.payload.len(), 32);
        count += 1;
    }
    assert_eq!(count, STREAMED);
    STREAMED as f64 / started.elapsed().as_secs_f64()
}

/// One bidirectional call of ping-pong round trips (send a message, wait
/// for its echo, send the next): the time of each of `count` round trips
/// after the first, which also opens the call.
async fn bidi_echo<S>(grpc: &mut tonic::client::Grpc<S>, count: usize) -> Vec<Duration>
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (sender, receiver) = tokio::sync::mpsc::channel::<Msg>(1);
    let outgoing = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|message| (message, receiver))
    });
    let mut round_trips = Vec::with_capacity(count);
    // The first message is queued before the call opens; its round trip,
    // which includes opening the call, is left out below.
    let mut started = Instant::now();
    sender.send(payload()).await.unwrap();
    grpc.ready().await.map_err(Into::into).unwrap();
    let mut replies = grpc
        .streaming(
            tonic::Request::new(outgoing),
            PathAndQuery::from_static(BIDI),
            tonic_prost::ProstCodec::<Msg, Msg>::default(),
        )
        .await
        .unwrap()
        .into_inner();
    loop {
        let reply = replies.message().await.unwrap().expect("an echo");
        round_trips.push(started.elapsed());
        assert_eq!(reply.payload.len(), 32);
        if round_trips.len() == count + 1 {
            break;
        }
        started = Instant::now();
        sender.send(payload()).await.unwrap();
    }
    drop(sender);
    assert!(replies.message().await.unwrap().is_none());
    round_trips.remove(0);
    round_trips
}

fn echo_handlers() -> Vec<mocklib::Handler> {
    vec![
        grpc::unary("bench.Echo/Unary", |args: GrpcArgs<Msg>| Ok(args.message)),
        grpc::server_streaming("bench.Echo/Stream", |_: GrpcArgs<Msg>| {
            Ok(futures_util::stream::iter(
                (0..STREAMED).map(|_| Ok(payload())),
            ))
        }),
        grpc::bidi_streaming("bench.Echo/Bidi", |args: GrpcArgs<grpc::Messages<Msg>>| {
            Ok(args.message)
        }),
    ]
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
