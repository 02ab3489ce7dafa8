//! In-process latency of a mocked request, beside peers measured in the same run.
//!
//! Run with `cargo bench --bench in_process`. Prints one row per case: the
//! median, the 10th and 90th percentiles, and the ratio to the reqwest →
//! wiremock-rs round trip (the peer a Rust developer would use today).
//!
//! Each case makes `WARMUP` untimed requests, then times `SAMPLES` requests one
//! by one; the tables in docs/BENCHMARKS.md come from this output.

use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use tower::ServiceExt;

const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;

struct Measurement {
    name: &'static str,
    samples: Vec<Duration>,
}

impl Measurement {
    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.samples.len() - 1) as f64 * p).round() as usize;
        self.samples[index]
    }
}

async fn measure<F, Fut>(name: &'static str, mut request: F) -> Measurement
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..WARMUP {
        request().await;
    }
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let started = Instant::now();
        request().await;
        samples.push(started.elapsed());
    }
    samples.sort_unstable();
    Measurement { name, samples }
}

fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("John")
    })]);
    server.listen();
    let service = server.service();
    let tower = measure("mocklib tower service, 1 handler (in-process)", || {
        let service = service.clone();
        async move {
            let request = ::http::Request::get("https://api.example.com/user")
                .body(Full::new(Bytes::new()))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, "John");
        }
    })
    .await;

    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();
    let middleware = measure("mocklib reqwest-middleware, 1 handler (in-process)", || {
        let client = client.clone();
        async move {
            let body = client
                .get("https://api.example.com/user")
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(body, "John");
        }
    })
    .await;

    let wiremock = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .and(wiremock::matchers::path("/user"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("John"))
        .mount(&wiremock)
        .await;
    let plain = reqwest::Client::new();
    let url = format!("{}/user", wiremock.uri());
    let peer = measure(
        "reqwest → wiremock-rs, 1 mock (HTTP over loopback)",
        || {
            let (plain, url) = (plain.clone(), url.clone());
            async move {
                let body = plain.get(&url).send().await.unwrap().text().await.unwrap();
                assert_eq!(body, "John");
            }
        },
    )
    .await;

    let baseline = peer.percentile(0.5).as_secs_f64();
    println!("\n{SAMPLES} timed requests per case after {WARMUP} warm-up requests\n");
    println!("| case | median | p10 | p90 | median vs wiremock-rs |");
    println!("|---|---|---|---|---|");
    for m in [&tower, &middleware, &peer] {
        println!(
            "| {} | {} | {} | {} | {:.3}× |",
            m.name,
            micros(m.percentile(0.5)),
            micros(m.percentile(0.1)),
            micros(m.percentile(0.9)),
            m.percentile(0.5).as_secs_f64() / baseline
        );
    }
}
