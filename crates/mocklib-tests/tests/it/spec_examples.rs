//! The examples of the interface spec, end to end through a real reqwest
//! client: the reference posts API, the cookie example, and the two error rules.

use crate::common;

use crate::common::{TestClient, serve};
use mocklib::{HttpResponse, front_door::NetworkErrorKind, http};
use serde_json::{Value, json};

const API: &str = "https://api.example.com";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_posts_api_starts_empty_stores_lists_and_deletes() {
    let client = TestClient::new(&common::reference_api());
    let post = json!({ "id": 1, "title": "Hello" });

    let listed = client.get(format!("{API}/posts")).await;
    assert_eq!(listed, (200, "[]"));

    let created = client.post(format!("{API}/posts")).json(&post).await;
    assert_eq!(created.status(), 201);
    assert_eq!(created.json::<Value>(), post);

    let listed = client.get(format!("{API}/posts")).await;
    assert_eq!(listed.json::<Value>(), json!([post]));

    let deleted = client.delete(format!("{API}/posts/1")).await;
    assert_eq!(deleted.status(), 200);
    assert_eq!(deleted.json::<Value>(), post);

    let listed = client.get(format!("{API}/posts")).await;
    assert_eq!(listed.json::<Value>(), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_missing_post_is_404_with_a_null_body() {
    let client = TestClient::new(&common::reference_api());
    assert_eq!(client.delete(format!("{API}/posts/42")).await, (404, ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posting_invalid_json_is_a_500_naming_the_body_error_not_a_crash() {
    let client = TestClient::new(&common::reference_api());
    let response = client.post(format!("{API}/posts")).body("{not json").await;
    assert_eq!(response.status(), 500);
    let error: Value = response.json();
    assert_eq!(error["name"], "BodyError");
    assert!(
        error["message"].as_str().unwrap().contains("JSON"),
        "{error}"
    );
    // The server keeps serving.
    let listed = client.get(format!("{API}/posts")).await;
    assert_eq!(listed.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_needs_a_session_cookie() {
    let client = TestClient::new(&common::reference_api());

    assert_eq!(client.get(format!("{API}/user")).await, (401, ""));

    let signed_in = client
        .get(format!("{API}/user"))
        .header("cookie", "theme=dark; session=abc123")
        .await;
    assert_eq!(signed_in.status(), 200);
    assert_eq!(signed_in.json::<Value>(), json!({ "name": "John" }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_response_error_fails_the_request_without_a_response() {
    // Spec, Errors 1: the requester's call fails with a network error.
    let client = serve([http::get(format!("{API}/offline"), |_| {
        HttpResponse::error()
    })]);
    let error = client
        .get(format!("{API}/offline"))
        .expect_network_error()
        .await;
    assert_eq!(error.kind(), NetworkErrorKind::Mocked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_statuses_from_the_constructor_reach_the_requester() {
    // Spec, Errors 2: 500, 404 or 401 through the constructor is an HTTP response.
    let client = serve([http::get("/status/:code", |args| {
        let code: u16 = args.params["code"].parse().unwrap();
        HttpResponse::new("failed").status(code)
    })]);
    for code in [500, 404, 401] {
        let response = client.get(format!("{API}/status/{code}")).await;
        assert_eq!(response, (code, "failed"));
    }
}
