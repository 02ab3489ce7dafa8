//! gRPC-Web and Connect unary calls through mocklib's listener against a
//! bare tonic server behind tonic-web, in the same run:
//! `cargo bench -p mocklib-benches --features grpc --bench grpc_web`.
//!
//! The bare server is what a team runs for a browser app: tonic's
//! `tonic::server::Grpc` behind `tonic_web::GrpcWebLayer`, served by
//! hyper-util (HTTP/1.1 and HTTP/2) on a 2-worker runtime of its own, as
//! mocklib's listener runs. The same echo method, the same 32-byte
//! message. Clients over HTTP/1.1 keep-alive (hyper-util's client, connected
//! once): tonic over tonic-web's client layer for gRPC-Web (what a Rust
//! app in the browser sends), and a POST of `application/proto` for
//! Connect (what Connect-ES sends in protobuf). Round-trip latency, cases
//! in interleaved rounds; the goal compares each protocol through the
//! listener with gRPC-Web to the bare server.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use mocklib::node::setup_server;
use mocklib_counted::grpc::{Bare, Msg, UNARY, echo_handlers, payload, unary};
use prost::Message as _;
use tower::Layer as _;

const WARMUP: usize = 500;
const SAMPLES: usize = 5_000;
const ROUNDS: usize = 10;

fn main() {
    common::run_beside_own(bare_tonic_web(), run);
}

/// A bare tonic server behind tonic-web (HTTP/1.1 and HTTP/2), answering
/// the unary echo: its base URL.
async fn bare_tonic_web() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).unwrap();
            let echo = tower::service_fn(|request: http::Request<tonic::body::Body>| async move {
                let mut grpc =
                    tonic::server::Grpc::new(tonic_prost::ProstCodec::<Msg, Msg>::default());
                Ok::<_, std::convert::Infallible>(grpc.unary(Bare, request).await)
            });
            let web = tonic_web::GrpcWebLayer::new().layer(echo);
            tokio::spawn(
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(
                        hyper_util::rt::TokioIo::new(stream),
                        hyper_util::service::TowerToHyperService::new(web),
                    )
                    .into_owned(),
            );
        }
    });
    format!("http://{address}")
}

type Http<B> =
    hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, B>;

/// tonic over tonic-web's client layer (HTTP/1.1), to `origin`.
fn web_client(
    origin: &str,
) -> tonic::client::Grpc<
    tonic_web::GrpcWebClientService<Http<tonic_web::GrpcWebCall<tonic::body::Body>>>,
> {
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    tonic::client::Grpc::with_origin(
        tonic_web::GrpcWebClientLayer::new().layer(http),
        origin.parse().unwrap(),
    )
}

/// One Connect unary call in protobuf (`application/proto`): its round trip.
async fn connect(client: &Http<http_body_util::Full<Bytes>>, url: &str) -> Duration {
    let started = Instant::now();
    let request = http::Request::post(url)
        .header("content-type", "application/proto")
        .header("connect-protocol-version", "1")
        .body(http_body_util::Full::new(Bytes::from(
            payload().encode_to_vec(),
        )))
        .unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(Msg::decode(body).unwrap().payload.len(), 32);
    started.elapsed()
}

async fn run(bare: String) {
    let server = setup_server(echo_handlers());
    server.listen();
    let names = [
        "mocklib listener, gRPC-Web (tonic-web client, HTTP/1.1)",
        "mocklib listener, Connect unary (application/proto, HTTP/1.1)",
        "bare tonic server behind tonic-web, gRPC-Web (own runtime)",
    ];
    const WEB: usize = 0;
    const CONNECT: usize = 1;
    const BARE: usize = 2;
    let mut webs = [web_client(server.url().as_str()), web_client(&bare)];
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let connect_url = format!("{}{UNARY}", server.url().as_str().trim_end_matches('/'));
    for _ in 0..WARMUP {
        for web in &mut webs {
            unary(web).await;
        }
        connect(&http, &connect_url).await;
    }
    let mut samples = vec![Vec::new(); names.len()];
    for _ in 0..ROUNDS {
        for _ in 0..SAMPLES / ROUNDS {
            samples[WEB].push(unary(&mut webs[0]).await);
        }
        for _ in 0..SAMPLES / ROUNDS {
            samples[CONNECT].push(connect(&http, &connect_url).await);
        }
        for _ in 0..SAMPLES / ROUNDS {
            samples[BARE].push(unary(&mut webs[1]).await);
        }
    }
    for samples in &mut samples {
        samples.sort_unstable();
    }
    println!(
        "\ngRPC-Web and Connect unary round trip, 32-byte message, HTTP/1.1 keep-alive; {WARMUP} \
         warm-up then {SAMPLES} timed calls per case in {ROUNDS} interleaved rounds; the client on \
         a 2-worker tokio runtime, mocklib's listener and the bare server each on a 2-worker \
         runtime of their own\n"
    );
    common::print_percentiles(names, &samples);
    println!();
    let ratio = |a: usize, b: usize| {
        common::percentile(&samples[a], 0.5).as_secs_f64()
            / common::percentile(&samples[b], 0.5).as_secs_f64()
    };
    let verdict = |pass: bool| if pass { "PASS" } else { "FAIL" };
    let web = ratio(WEB, BARE);
    let connect = ratio(CONNECT, BARE);
    println!(
        "{}: gRPC-Web unary through the listener ≤ 1.1× a bare tonic server behind tonic-web ({web:.2}×)",
        verdict(web <= 1.1)
    );
    println!(
        "{}: Connect unary through the listener ≤ 1.1× a bare tonic server behind tonic-web ({connect:.2}×)",
        verdict(connect <= 1.1)
    );
    server.close();
}
