//! Resolution cost of a GraphQL POST as the handler list grows.
//!
//! Run with `cargo bench --bench graphql`. Two groups, each resolving the
//! same `query GetUser` POST with 1 handler and with 1,000 GraphQL handlers
//! where the matching one is listed last:
//!
//! 1. the engine alone (`Server::handle`: parse, lookup, resolver, response);
//! 2. the whole in-process front door (a `tower` service: request and
//!    response conversion included).
//!
//! Each group is measured three times: the 999 other handlers on the same
//! endpoint (`graphql::link(url).query("Op{i}")`), on any endpoint
//! (`graphql::query("Op{i}")`), and for the same operation on another
//! endpoint (`graphql::link(other).query("GetUser")`). Prints the median, p10 and p90 of each case
//! and the ratio of the 1,000-handler median to the 1-handler one (goal ≤ 2×).

use std::future::Future;
use std::time::Duration;

mod common;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mocklib::node::{Server, setup_server};
use mocklib::{Handler, Request, front_door::Outcome, graphql};
use tower::ServiceExt;

const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;
const ENDPOINT: &str = "https://api.example.com/graphql";
const BODY: &str = r#"{"query":"query GetUser($id: ID!) { user(id: $id) { id name } }","variables":{"id":"1"},"operationName":"GetUser"}"#;

struct Measurement {
    name: String,
    samples: Vec<Duration>,
}

impl Measurement {
    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.samples.len() - 1) as f64 * p).round() as usize;
        self.samples[index]
    }
}

async fn measure<F, Fut>(name: String, request: F) -> Measurement
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let samples = common::timed(WARMUP, SAMPLES, request).await;
    Measurement { name, samples }
}

fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}

fn target() -> Handler {
    graphql::link(ENDPOINT).query("GetUser", |args| {
        graphql::data(serde_json::json!({ "user": { "id": args.variables["id"], "name": "John" } }))
    })
}

/// Where the 999 other handlers are.
#[derive(Clone, Copy)]
enum Others {
    /// `graphql::link(ENDPOINT).query("Op{i}")`
    SameLink,
    /// `graphql::query("Op{i}")`
    Global,
    /// `graphql::link("https://other.example.com/graphql").query("GetUser")`
    OtherLink,
}

impl Others {
    fn describe(self) -> &'static str {
        match self {
            Others::SameLink => "others: same endpoint, other names",
            Others::Global => "others: any endpoint, other names",
            Others::OtherLink => "others: another endpoint, same name",
        }
    }
}

/// `count` handlers, the target last.
fn server(count: usize, others: Others) -> Server {
    let link = graphql::link(ENDPOINT);
    let other = graphql::link("https://other.example.com/graphql");
    let mut handlers: Vec<Handler> = (0..count - 1)
        .map(|i| {
            let resolver = |_| graphql::data(serde_json::json!(null));
            match others {
                Others::SameLink => link.query(format!("Op{i}"), resolver),
                Others::Global => graphql::query(format!("Op{i}"), resolver),
                Others::OtherLink => other.query("GetUser", resolver),
            }
        })
        .collect();
    handlers.push(target());
    let server = setup_server(handlers);
    server.listen_with(
        mocklib::ListenOptions::new().on_unhandled_request(mocklib::UnhandledRequest::Error),
    );
    server
}

fn request() -> Request {
    let mut headers = ::http::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    Request::from_parts(
        ::http::Method::POST,
        ENDPOINT.parse().unwrap(),
        headers,
        Bytes::from_static(BODY.as_bytes()),
    )
}

async fn engine_case(count: usize, others: Others) -> Measurement {
    let server = server(count, others);
    let name = format!("engine, {count} handler(s), {}", others.describe());
    measure(name, || {
        let outcome = server.handle(request(), None);
        async move {
            match outcome.await {
                Outcome::Mocked(response) => assert_eq!(response.status(), 200),
                other => panic!("not mocked: {other:?}"),
            }
        }
    })
    .await
}

async fn tower_case(count: usize, others: Others) -> Measurement {
    let server = server(count, others);
    let service = server.service();
    let name = format!("tower service, {count} handler(s), {}", others.describe());
    measure(name, || {
        let service = service.clone();
        async move {
            let request = ::http::Request::post(ENDPOINT)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from_static(BODY.as_bytes())))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert!(body.starts_with(b"{\"data\""));
        }
    })
    .await
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        println!("\n{SAMPLES} timed requests per case after {WARMUP} warm-up requests\n");
        println!("| case | median | p10 | p90 | 1,000 vs 1 (median) |");
        println!("|---|---|---|---|---|");
        for group in ["engine", "tower"] {
            for others in [Others::SameLink, Others::Global, Others::OtherLink] {
                let (one, thousand) = if group == "engine" {
                    (
                        engine_case(1, others).await,
                        engine_case(1_000, others).await,
                    )
                } else {
                    (tower_case(1, others).await, tower_case(1_000, others).await)
                };
                let ratio =
                    thousand.percentile(0.5).as_secs_f64() / one.percentile(0.5).as_secs_f64();
                for (m, ratio) in [(&one, String::new()), (&thousand, format!("{ratio:.2}×"))] {
                    println!(
                        "| {} | {} | {} | {} | {ratio} |",
                        m.name,
                        micros(m.percentile(0.5)),
                        micros(m.percentile(0.1)),
                        micros(m.percentile(0.9)),
                    );
                }
            }
        }
    });
}
