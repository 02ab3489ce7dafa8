//! gRPC through mocklib against a bare tonic server on loopback, in the
//! same run: `cargo bench -p mocklib-tests --features grpc --bench grpc`.
//!
//! The same tonic client code (`tonic::client::Grpc`, what generated clients
//! wrap) calls: mocklib in process (the tower front door, no socket),
//! mocklib's listener over h2c, and a bare tonic server (hyper-util's HTTP/2
//! server with `tonic::server::Grpc`, no mocklib) — each connected once.
//! Unary: round-trip latency of a 32-byte message, cases in interleaved
//! rounds. Server streaming: 10,000 replies of 32 bytes per call, messages
//! per second. Bidirectional echo is not measured: mocklib hands a
//! bidirectional resolver the client's messages once the client has sent
//! them all, so an interactive echo cannot run against it yet.

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
const UNARY: &str = "/bench.Echo/Unary";
const STREAM: &str = "/bench.Echo/Stream";

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

/// A bare tonic server (h2c) serving both methods.
async fn bare_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = hyper::service::service_fn(
                |request: http::Request<hyper::body::Incoming>| async move {
                    let stream = request.uri().path() == STREAM;
                    let request = request.map(tonic::body::Body::new);
                    let mut grpc =
                        tonic::server::Grpc::new(tonic_prost::ProstCodec::<Msg, Msg>::default());
                    let response = if stream {
                        grpc.server_streaming(Bare, request).await
                    } else {
                        grpc.unary(Bare, request).await
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

async fn run() {
    let server = setup_server([
        grpc::unary("bench.Echo/Unary", |args: GrpcArgs<Msg>| Ok(args.message)),
        grpc::server_streaming("bench.Echo/Stream", |_: GrpcArgs<Msg>| {
            Ok(futures_util::stream::iter(
                (0..STREAMED).map(|_| Ok(payload())),
            ))
        }),
    ]);
    server.listen();
    let bare = bare_server().await;
    let mut in_process = tonic::client::Grpc::with_origin(
        server.service(),
        "http://bench.internal".parse().unwrap(),
    );
    let mut over_h2c = channel(server.url().as_str()).await;
    let mut to_bare = channel(&bare).await;

    for _ in 0..WARMUP {
        unary(&mut in_process).await;
        unary(&mut over_h2c).await;
        unary(&mut to_bare).await;
    }
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
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

    let median_of = |i: usize| percentile(&samples[i], 0.5).as_secs_f64();
    let in_process = median_of(0) / median_of(2);
    let listener = median_of(1) / median_of(2);
    let streaming = median(&rates[0]) / median(&rates[1]);
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
    server.close();
}
