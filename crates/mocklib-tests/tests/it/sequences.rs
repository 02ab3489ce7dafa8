//! Response sequences (MSW's generator resolvers): `sequence` repeats its
//! last response, `sequence_once` then stops matching; counts are per scope.

use crate::common::serve;
use mocklib::resolver::Resolution;
use mocklib::{HttpResponse, graphql, http, sequence, sequence_once};

fn retry_script() -> [HttpResponse; 3] {
    [
        HttpResponse::text("busy").status(503),
        HttpResponse::text("still busy").status(503),
        HttpResponse::text("ok"),
    ]
}

#[tokio::test]
async fn a_sequence_answers_in_order_then_repeats_its_last_response() {
    let client = serve([http::get(
        "https://api.test/flaky",
        sequence(retry_script()),
    )]);
    let url = "https://api.test/flaky";
    assert_eq!(client.get(url).await, (503, "busy"));
    assert_eq!(client.get(url).await, (503, "still busy"));
    assert_eq!(client.get(url).await, (200, "ok"));
    assert_eq!(client.get(url).await, (200, "ok"));
}

#[tokio::test]
async fn sequence_once_stops_matching_after_its_last_response() {
    let client = serve([
        http::get(
            "https://api.test/token",
            sequence_once([HttpResponse::text("first"), HttpResponse::text("second")]),
        ),
        http::get("https://api.test/token", |_| HttpResponse::text("fallback")),
    ]);
    let url = "https://api.test/token";
    assert_eq!(client.get(url).await, (200, "first"));
    assert_eq!(client.get(url).await, (200, "second"));
    assert_eq!(client.get(url).await, (200, "fallback"));
    assert_eq!(client.get(url).await, (200, "fallback"));
}

#[tokio::test]
async fn a_spent_sequence_alone_leaves_the_request_unhandled() {
    let client = serve([http::get(
        "https://api.test/once",
        sequence_once([HttpResponse::text("only")]),
    )]);
    assert_eq!(client.get("https://api.test/once").await, (200, "only"));
    // Not "matched but no answer" (which would be performed for real): the
    // handler no longer matches, so the error strategy applies.
    let message = client.get("https://api.test/once").expect_unhandled().await;
    assert!(message.contains("GET https://api.test/once"), "{message}");
}

#[tokio::test]
async fn restore_handlers_starts_sequences_over() {
    let client = serve([http::get(
        "https://api.test/step",
        sequence_once([HttpResponse::text("1"), HttpResponse::text("2")]),
    )]);
    let url = "https://api.test/step";
    assert_eq!(client.get(url).await, (200, "1"));
    assert_eq!(client.get(url).await, (200, "2"));
    client.get(url).expect_unhandled().await;
    client.server().restore_handlers();
    assert_eq!(client.get(url).await, (200, "1"));
}

#[tokio::test]
async fn each_boundary_counts_from_its_enclosing_scope_without_advancing_it() {
    let client = serve([http::get(
        "https://api.test/flaky",
        sequence(retry_script()),
    )]);
    let url = "https://api.test/flaky";
    assert_eq!(client.get(url).await, (503, "busy"));
    for _ in 0..2 {
        // Each boundary starts where the root scope is: at the second step.
        let inside = async {
            assert_eq!(client.get(url).await, (503, "still busy"));
            assert_eq!(client.get(url).await, (200, "ok"));
        };
        client.server().in_boundary(inside).await;
    }
    assert_eq!(client.get(url).await, (503, "still busy"));
}

#[tokio::test]
async fn a_resolver_reads_its_previous_calls_and_may_declare_itself_exhausted() {
    let client = serve([
        http::get("https://api.test/countdown", |args| {
            let left = 2 - args.previous_calls() as i64;
            if left < 0 {
                return Resolution::Exhausted;
            }
            Resolution::Respond(HttpResponse::text(left.to_string()))
        }),
        http::get("https://api.test/countdown", |_| {
            HttpResponse::text("liftoff")
        }),
    ]);
    let url = "https://api.test/countdown";
    for expected in ["2", "1", "0", "liftoff"] {
        assert_eq!(client.get(url).await, (200, expected));
    }
}

#[tokio::test]
async fn graphql_handlers_take_sequences_too() {
    let client = serve([graphql::query(
        "GetStatus",
        sequence([
            graphql::data(serde_json::json!({ "status": "starting" })),
            graphql::data(serde_json::json!({ "status": "ready" })),
        ]),
    )]);
    let query = serde_json::json!({ "query": "query GetStatus { status }" });
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = client.post("https://api.test/graphql").json(&query).await;
        let body: serde_json::Value = response.json();
        statuses.push(body["data"]["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["starting", "ready", "ready"]);
}
