//! What a contract costs a mocked request (issue 25, goal 6): the same
//! in-process request (the tower service) with and without an OpenAPI
//! document of 200 operations attached as a contract, the request's
//! operation one of the last. Goal: the contract adds ≤ 25 %.
//!
//! `cargo bench -p mocklib-benches --features openapi --bench contract`

use std::time::Duration;

mod common;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mocklib::node::{Server, setup_server};
use mocklib::openapi::OpenApi;
use mocklib::{HttpResponse, http};
use tower::ServiceExt;

const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;
const OPERATIONS: usize = 200;
const URL: &str = "https://api.example.com/v1/resource90/items/7";

/// 100 paths, each with a `get` and a `put`: 200 operations, each
/// answering an object of four typed properties.
fn document() -> String {
    let mut text = String::from(
        "openapi: 3.0.3\ninfo: { title: Big API, version: \"1\" }\nservers: [{ url: \"https://api.example.com/v1\" }]\npaths:\n",
    );
    for index in 0..OPERATIONS / 2 {
        let schema = "{ type: object, required: [id, name], additionalProperties: false, properties: { id: { type: integer }, name: { type: string }, tags: { type: array, items: { type: string } }, price: { type: number, minimum: 0 } } }";
        let operation = |method: &str| {
            format!(
                "    {method}:\n      operationId: {method}Resource{index}\n      parameters: [{{ name: id, in: path, required: true, schema: {{ type: integer }} }}]\n      responses:\n        \"200\":\n          description: ok\n          content:\n            application/json:\n              schema: {schema}\n"
            )
        };
        text.push_str(&format!(
            "  /resource{index}/items/{{id}}:\n{}{}",
            operation("get"),
            operation("put")
        ));
    }
    text
}

fn server(contract: bool) -> Server {
    let server = setup_server([http::get(
        "https://api.example.com/v1/resource90/items/:id",
        |_| {
            HttpResponse::json(
                &serde_json::json!({ "id": 7, "name": "Kate", "tags": ["a", "b"], "price": 9.5 }),
            )
        },
    )]);
    if contract {
        let document = OpenApi::from_yaml(&document()).expect("the document reads");
        server.attach_contract(document.contract().expect("the contract compiles"));
    }
    server.listen();
    server
}

/// `fresh`: every request a different id, so no answer repeats (the
/// contract's memory of exchanges seen before never helps).
async fn measure(server: &Server, fresh: bool) -> Vec<Duration> {
    let service = server.service();
    let counter = std::cell::Cell::new(0u64);
    let request = || {
        let service = service.clone();
        counter.set(counter.get() + 1);
        let url = if fresh {
            URL.replace("/7", &format!("/{}", counter.get()))
        } else {
            URL.to_owned()
        };
        async move {
            let request = ::http::Request::get(url)
                .body(Full::new(Bytes::new()))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            assert_eq!(response.status(), 200);
            response.into_body().collect().await.unwrap();
        }
    };
    common::timed(WARMUP, SAMPLES, request).await
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (plain, checked) = (server(false), server(true));
        // Interleaved rounds: machine noise falls on both alike.
        let (mut without, mut with, mut fresh_without, mut fresh_with) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            without.push(common::percentile(&measure(&plain, false).await, 0.5));
            with.push(common::percentile(&measure(&checked, false).await, 0.5));
            fresh_without.push(common::percentile(&measure(&plain, true).await, 0.5));
            fresh_with.push(common::percentile(&measure(&checked, true).await, 0.5));
        }
        let journal = checked.requests();
        assert!(
            journal.iter().all(|entry| entry.contract_findings().is_empty()),
            "the mocked answer keeps the contract: {:?}",
            journal.first().map(|entry| entry.contract_findings())
        );
        for rounds in [&mut without, &mut with, &mut fresh_without, &mut fresh_with] {
            rounds.sort_unstable();
        }
        let (without, with) = (without[1], with[1]);
        let (fresh_without, fresh_with) = (fresh_without[1], fresh_with[1]);
        let ratio = with.as_secs_f64() / without.as_secs_f64();
        let fresh_ratio = fresh_with.as_secs_f64() / fresh_without.as_secs_f64();
        println!("contract cost: an in-process mocked request (tower service), {SAMPLES} timed after {WARMUP} warm-up, median of 3 interleaved rounds\n");
        println!("| case | median | vs no contract |");
        println!("|---|---|---|");
        println!("| no contract | {:.2} µs | 1.00× |", without.as_secs_f64() * 1e6);
        println!(
            "| an OpenAPI contract of {OPERATIONS} operations | {:.2} µs | {ratio:.2}× |",
            with.as_secs_f64() * 1e6
        );
        println!(
            "| every request a new id: no contract | {:.2} µs | 1.00× |",
            fresh_without.as_secs_f64() * 1e6
        );
        println!(
            "| every request a new id (the same answer): the contract | {:.2} µs | {fresh_ratio:.2}× |",
            fresh_with.as_secs_f64() * 1e6
        );
        let verdict = |ratio: f64| if ratio <= 1.25 { "PASS" } else { "FAIL" };
        println!(
            "\n{}: a {OPERATIONS}-operation contract adds ≤ 25 % to a mocked request repeated ({ratio:.2}×)",
            verdict(ratio)
        );
        println!(
            "{}: ... and to one whose request is new each time ({fresh_ratio:.2}×)",
            verdict(fresh_ratio)
        );
    });
}
