//! What a contract costs a mocked request (issue 25, goal 6; issue 42,
//! item 3): the same in-process request (the tower service) with and
//! without an OpenAPI document of 200 operations attached as a contract,
//! the request's operation one of the last. Goals: the contract adds
//! ≤ 25 % to a request repeated, and to one never seen before (a new id
//! each time, the answer the same). A third case, every answer naming its
//! request's id, shows what an answer never seen costs (no goal).
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
/// Interleaved rounds, the median taken: many short rounds put a burst of
/// load from elsewhere (the machine's other core builds) on one round of
/// one case, not on a third of the figures.
const ROUNDS: usize = 7;
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
    let server = setup_server([
        http::get("https://api.example.com/v1/resource90/items/:id", |_| {
            HttpResponse::json(
                &serde_json::json!({ "id": 7, "name": "Kate", "tags": ["a", "b"], "price": 9.5 }),
            )
        }),
        // The answer names the request's id: never seen either.
        http::get("https://api.example.com/v1/resource91/items/:id", |args| {
            let id: u64 = args.params.parse("id").and_then(Result::ok).unwrap_or(0);
            HttpResponse::json(
                &serde_json::json!({ "id": id, "name": "Kate", "tags": ["a", "b"], "price": 9.5 }),
            )
        }),
    ]);
    if contract {
        let document = OpenApi::from_yaml(&document()).expect("the document reads");
        server.attach_contract(document.contract().expect("the contract compiles"));
    }
    server.listen();
    server
}

/// What changes from one request to the next.
#[derive(Clone, Copy)]
enum Requests {
    /// The same request, the same answer (the contract's memory of
    /// exchanges seen before answers).
    Repeated,
    /// Every request a different id, the same answer: never seen as an
    /// exchange, its answer seen before.
    NewId,
    /// Every request a different id, named in the answer: nothing seen
    /// before (the answer's body is read and validated each time).
    NewIdInAnswer,
}

async fn measure(server: &Server, requests: Requests) -> Vec<Duration> {
    let service = server.service();
    let counter = std::cell::Cell::new(0u64);
    let request = || {
        let service = service.clone();
        counter.set(counter.get() + 1);
        let url = match requests {
            Requests::Repeated => URL.to_owned(),
            Requests::NewId => URL.replace("/7", &format!("/{}", counter.get())),
            Requests::NewIdInAnswer => URL
                .replace("resource90", "resource91")
                .replace("/7", &format!("/{}", counter.get())),
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
        let cases = [Requests::Repeated, Requests::NewId, Requests::NewIdInAnswer];
        // Interleaved rounds: machine noise falls on every case alike.
        // Each round's median, per case: [without, with].
        let mut medians = vec![[Vec::new(), Vec::new()]; cases.len()];
        for _ in 0..ROUNDS {
            for (case, requests) in cases.iter().enumerate() {
                for (with, server) in [&plain, &checked].into_iter().enumerate() {
                    let times = measure(server, *requests).await;
                    medians[case][with].push(common::percentile(&times, 0.5));
                }
            }
        }
        let journal = checked.requests();
        assert!(
            journal.iter().all(|entry| entry.contract_findings().is_empty()),
            "the mocked answer keeps the contract: {:?}",
            journal.first().map(|entry| entry.contract_findings())
        );
        // Each case's median round without and with, and the median of the
        // rounds' ratios: a round measures the two back to back, so a burst
        // of load that falls on one of them makes one odd ratio, not a
        // shifted median.
        let median = |values: &mut Vec<f64>| {
            values.sort_unstable_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let figures: Vec<(f64, f64, f64)> = medians
            .iter()
            .map(|[without, with]| {
                let micros = |times: &Vec<Duration>| -> Vec<f64> {
                    times.iter().map(|time| time.as_secs_f64() * 1e6).collect()
                };
                let (mut without, mut with) = (micros(without), micros(with));
                let mut ratios: Vec<f64> = with.iter().zip(&without).map(|(w, o)| w / o).collect();
                (median(&mut without), median(&mut with), median(&mut ratios))
            })
            .collect();
        println!("contract cost: an in-process mocked request (tower service), {SAMPLES} timed after {WARMUP} warm-up, {ROUNDS} interleaved rounds (each case without and with back to back): the median round's times, the median of the rounds' ratios\n");
        println!("| requests | no contract | an OpenAPI contract of {OPERATIONS} operations | contract vs none |");
        println!("|---|---|---|---|");
        let labels = [
            "the same request again and again",
            "every request a new id, the same answer",
            "every request a new id, named in the answer",
        ];
        for (label, (without, with, ratio)) in labels.iter().zip(&figures) {
            println!("| {label} | {without:.2} µs | {with:.2} µs | {ratio:.2}× |");
        }
        let verdict = |ratio: f64| if ratio <= 1.25 { "PASS" } else { "FAIL" };
        let (repeated, new_id) = (figures[0].2, figures[1].2);
        println!(
            "\n{}: a {OPERATIONS}-operation contract adds ≤ 25 % to a mocked request repeated ({repeated:.2}×)",
            verdict(repeated)
        );
        println!(
            "{}: contract check of a never-seen request ≤ 1.25× an unchecked answer ({new_id:.2}×; a new id, the answer seen before)",
            verdict(new_id)
        );
    });
}
