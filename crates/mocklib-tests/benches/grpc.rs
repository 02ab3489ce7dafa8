//! gRPC through mocklib against a bare tonic server on loopback, in the
//! same run: `cargo bench -p mocklib-tests --features grpc --bench grpc`.
//!
//! The same tonic client code (`tonic::client::Grpc`, what generated clients
//! wrap) calls: mocklib in process (the tower front door, no socket),
//! mocklib's listener over h2c, and a bare tonic server (hyper-util's HTTP/2
//! server with `tonic::server::Grpc`, no mocklib) — each connected once.
//! Unary: round-trip latency of a 32-byte message, cases in interleaved
//! rounds. Server streaming: 10,000 replies of 32 bytes per call, messages
//! per second. Bidirectional echo: in one call per case and round, the
//! client sends a 32-byte message, waits for its echo, then sends the next
//! (ping-pong); each send-to-echo round trip is one sample, cases in
//! interleaved rounds.

mod common;

use common::{micros, percentile};

use std::convert::Infallible;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::Stream;
use http::uri::PathAndQuery;
use mocklib::grpc::{self, GrpcArgs};
use mocklib::node::setup_server;

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
    common::run(run());
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

async fn run() {
    let server = setup_server(echo_handlers());
    server.listen();
    // The same handlers with the listener on this runtime (no hop between
    // runtimes), as the bare tonic server runs.
    let here = setup_server(echo_handlers());
    here.listen_with(mocklib::ListenOptions::new().on_current_runtime());
    let bare = bare_server().await;
    let mut in_process = tonic::client::Grpc::with_origin(
        server.service(),
        "http://bench.internal".parse().unwrap(),
    );
    let mut over_h2c = channel(server.url().as_str()).await;
    let mut to_bare = channel(&bare).await;
    let mut over_h2c_here = channel(here.url().as_str()).await;

    for _ in 0..WARMUP {
        unary(&mut in_process).await;
        unary(&mut over_h2c).await;
        unary(&mut to_bare).await;
        unary(&mut over_h2c_here).await;
    }
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for _ in 0..SAMPLES / ROUNDS {
            samples[0].push(unary(&mut in_process).await);
        }
        for _ in 0..SAMPLES / ROUNDS {
            samples[1].push(unary(&mut over_h2c).await);
        }
        for _ in 0..SAMPLES / ROUNDS {
            samples[2].push(unary(&mut to_bare).await);
        }
        for _ in 0..SAMPLES / ROUNDS {
            samples[3].push(unary(&mut over_h2c_here).await);
        }
    }
    for samples in &mut samples {
        samples.sort_unstable();
    }
    println!(
        "\ngRPC unary round trip, 32-byte message, tonic 0.14 client; {WARMUP} warm-up then \
         {SAMPLES} timed calls per case in {ROUNDS} interleaved rounds; tokio multi-thread \
         runtime, 2 workers\n"
    );
    println!("| case | median | p10 | p90 | p99 |");
    println!("|---|---|---|---|---|");
    let names = [
        "mocklib, in process (tower front door)",
        "mocklib, listener over h2c",
        "bare tonic server over h2c",
        "mocklib, listener on the caller's runtime (`on_current_runtime`), h2c",
    ];
    for (name, samples) in names.iter().zip(&samples) {
        println!(
            "| {name} | {} | {} | {} | {} |",
            micros(percentile(samples, 0.5)),
            micros(percentile(samples, 0.1)),
            micros(percentile(samples, 0.9)),
            micros(percentile(samples, 0.99)),
        );
    }

    let mut rates = [Vec::new(), Vec::new()];
    stream_rate(&mut over_h2c).await;
    stream_rate(&mut to_bare).await;
    for _ in 0..STREAM_CALLS {
        rates[0].push(stream_rate(&mut over_h2c).await);
        rates[1].push(stream_rate(&mut to_bare).await);
    }
    for rates in &mut rates {
        rates.sort_by(f64::total_cmp);
    }
    let median = |rates: &[f64]| rates[rates.len() / 2];
    println!(
        "\nServer streaming, {STREAMED} replies of 32 bytes per call over h2c, median of \
         {STREAM_CALLS} calls: mocklib {:.0} messages/s, bare tonic {:.0} messages/s\n",
        median(&rates[0]),
        median(&rates[1])
    );

    bidi_echo(&mut in_process, BIDI_WARMUP).await;
    bidi_echo(&mut over_h2c, BIDI_WARMUP).await;
    bidi_echo(&mut to_bare, BIDI_WARMUP).await;
    bidi_echo(&mut over_h2c_here, BIDI_WARMUP).await;
    let mut round_trips = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..BIDI_ROUNDS {
        round_trips[0].extend(bidi_echo(&mut in_process, BIDI_PER_CALL).await);
        round_trips[1].extend(bidi_echo(&mut over_h2c, BIDI_PER_CALL).await);
        round_trips[2].extend(bidi_echo(&mut to_bare, BIDI_PER_CALL).await);
        round_trips[3].extend(bidi_echo(&mut over_h2c_here, BIDI_PER_CALL).await);
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
    println!("| case | median | p10 | p90 | p99 |");
    println!("|---|---|---|---|---|");
    for (name, round_trips) in names.iter().zip(&round_trips) {
        println!(
            "| {name} | {} | {} | {} | {} |",
            micros(percentile(round_trips, 0.5)),
            micros(percentile(round_trips, 0.1)),
            micros(percentile(round_trips, 0.9)),
            micros(percentile(round_trips, 0.99)),
        );
    }
    println!();

    let median_of = |i: usize| percentile(&samples[i], 0.5).as_secs_f64();
    let in_process = median_of(0) / median_of(2);
    let listener = median_of(1) / median_of(2);
    let streaming = median(&rates[0]) / median(&rates[1]);
    let bidi = percentile(&round_trips[1], 0.5).as_secs_f64()
        / percentile(&round_trips[2], 0.5).as_secs_f64();
    let listener_here = median_of(3) / median_of(2);
    let bidi_here = percentile(&round_trips[3], 0.5).as_secs_f64()
        / percentile(&round_trips[2], 0.5).as_secs_f64();
    let verdict = |pass: bool| if pass { "PASS" } else { "FAIL" };
    println!(
        "{}: unary in process ≤ 0.2× the bare tonic server's round trip ({in_process:.2}×)",
        verdict(in_process <= 0.2)
    );
    println!(
        "{}: unary through the listener (h2c) ≤ 1.1× the bare tonic server ({listener:.2}×)",
        verdict(listener <= 1.1)
    );
    println!(
        "{}: a 10,000-message server stream ≥ 0.9× the bare tonic server's messages/s ({streaming:.2}×)",
        verdict(streaming >= 0.9)
    );
    println!(
        "{}: bidirectional echo through the listener (h2c) ≤ 1.2× the bare tonic server ({bidi:.2}×)",
        verdict(bidi <= 1.2)
    );
    println!(
        "{}: unary through the listener on the caller's runtime (h2c) ≤ 1.1× the bare tonic server ({listener_here:.2}×)",
        verdict(listener_here <= 1.1)
    );
    println!(
        "{}: bidirectional echo through the listener on the caller's runtime (h2c) ≤ 1.2× the bare tonic server ({bidi_here:.2}×)",
        verdict(bidi_here <= 1.2)
    );
    server.close();
    here.close();
}
