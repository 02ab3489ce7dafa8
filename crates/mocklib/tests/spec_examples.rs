//! The examples of the interface spec, end to end through a real reqwest
//! client: the reference posts API, the cookie example, and the two error rules.

mod common;

use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use serde_json::{Value, json};

const API: &str = "https://api.example.com";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_posts_api_starts_empty_stores_lists_and_deletes() {
    let server = common::reference_api();
    server.listen();
    let client = common::client(&server);

    let listed: Value = client
        .get(format!("{API}/posts"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed, json!([]));

    let created = client
        .post(format!("{API}/posts"))
        .json(&json!({ "id": 1, "title": "Hello" }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(
        created.json::<Value>().await.unwrap(),
        json!({ "id": 1, "title": "Hello" })
    );

    let listed: Value = client
        .get(format!("{API}/posts"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed, json!([{ "id": 1, "title": "Hello" }]));

    let deleted = client
        .delete(format!("{API}/posts/1"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(
        deleted.json::<Value>().await.unwrap(),
        json!({ "id": 1, "title": "Hello" })
    );

    let listed: Value = client
        .get(format!("{API}/posts"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_missing_post_is_404_with_a_null_body() {
    let server = common::reference_api();
    server.listen();
    let response = common::client(&server)
        .delete(format!("{API}/posts/42"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(response.bytes().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posting_invalid_json_is_a_500_naming_the_body_error_not_a_crash() {
    let server = common::reference_api();
    server.listen();
    let client = common::client(&server);
    let response = client
        .post(format!("{API}/posts"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["name"], "BodyError");
    assert!(
        error["message"].as_str().unwrap().contains("JSON"),
        "{error}"
    );
    // The server keeps serving.
    let listed = client.get(format!("{API}/posts")).send().await.unwrap();
    assert_eq!(listed.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_needs_a_session_cookie() {
    let server = common::reference_api();
    server.listen();
    let client = common::client(&server);

    let anonymous = client.get(format!("{API}/user")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.bytes().await.unwrap().is_empty());

    let signed_in = client
        .get(format!("{API}/user"))
        .header("cookie", "theme=dark; session=abc123")
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);
    assert_eq!(
        signed_in.json::<Value>().await.unwrap(),
        json!({ "name": "John" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_response_error_fails_the_request_without_a_response() {
    // Spec, Errors 1: the requester's call fails with a network error.
    let server = setup_server([http::get(format!("{API}/offline"), |_| {
        HttpResponse::error()
    })]);
    server.listen();
    let error = common::client(&server)
        .get(format!("{API}/offline"))
        .send()
        .await
        .unwrap_err();
    assert!(common::is_network_error(&error), "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_statuses_from_the_constructor_reach_the_requester() {
    // Spec, Errors 2: 500, 404 or 401 through the constructor is an HTTP response.
    let server = setup_server([http::get("/status/:code", |args| {
        let code: u16 = args.params["code"].parse().unwrap();
        HttpResponse::new("failed").status(code)
    })]);
    server.listen();
    let client = common::client(&server);
    for code in [500, 404, 401] {
        let response = client
            .get(format!("{API}/status/{code}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), code);
        assert_eq!(response.text().await.unwrap(), "failed");
    }
}
