//! The posts API: JSON request bodies, sequences and one-shot answers, and
//! verification of how often each endpoint was called (wiremock-rs's
//! `.expect(n)`, checked by `verify()` or when the server is dropped), each
//! test on a MockServer of its own (the twin of mocklib-suite's posts.rs).

use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, header, method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// The `index`th segment of the request's path.
fn segment(request: &Request, index: usize) -> String {
    request
        .url
        .path_segments()
        .and_then(|mut segments| segments.nth(index))
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn creates_a_post_from_its_json() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/posts"))
        .and(body_partial_json(json!({ "title": "Hello", "userId": 1 })))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({ "id": 101 })))
        .mount(&server)
        .await;
    let response = reqwest::Client::new()
        .post(format!("{}/posts", server.uri()))
        .json(&json!({ "title": "Hello", "body": "first", "userId": 1 }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.json::<Value>().await.unwrap()["id"], 101);
}

#[tokio::test]
async fn a_post_without_a_title_is_not_matched() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/posts"))
        .and(body_partial_json(json!({ "title": "Hello" })))
        .respond_with(ResponseTemplate::new(201))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/posts"))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({ "error": "title" })))
        .mount(&server)
        .await;
    let response = reqwest::Client::new()
        .post(format!("{}/posts", server.uri()))
        .json(&json!({ "body": "no title" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
}

#[tokio::test]
async fn echoes_the_created_post() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/posts"))
        .respond_with(|request: &Request| match request.body_json::<Value>() {
            Ok(mut post) => {
                post["id"] = json!(7);
                ResponseTemplate::new(201).set_body_json(post)
            }
            Err(error) => ResponseTemplate::new(500).set_body_string(error.to_string()),
        })
        .mount(&server)
        .await;
    let created: Value = reqwest::Client::new()
        .post(format!("{}/posts", server.uri()))
        .json(&json!({ "title": "Echo" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(created, json!({ "title": "Echo", "id": 7 }));
}

#[tokio::test]
async fn updates_a_post_with_json_and_a_content_type() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .and(path_regex(r"^/posts/[^/]+$"))
        .and(header("content-type", "application/json"))
        .and(body_partial_json(json!({ "title": "New" })))
        .respond_with(|request: &Request| {
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": segment(request, 1), "updated": true }))
        })
        .mount(&server)
        .await;
    let updated: Value = reqwest::Client::new()
        .put(format!("{}/posts/3", server.uri()))
        .json(&json!({ "title": "New" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(updated, json!({ "id": "3", "updated": true }));
}

#[tokio::test]
async fn retries_through_a_sequence() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/posts"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/posts"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{ "id": 1 }])))
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(
            client
                .get(format!("{}/posts", server.uri()))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16(),
        );
    }
    assert_eq!(statuses, [503, 503, 200, 200]);
}

#[tokio::test]
async fn a_token_is_issued_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "token": "first" })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(429))
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    let first = client
        .post(format!("{}/token", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(first.json::<Value>().await.unwrap()["token"], "first");
    let second = client
        .post(format!("{}/token", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 429);
}

#[tokio::test]
async fn publishing_calls_the_api_twice() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/posts"))
        .respond_with(ResponseTemplate::new(201))
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path_regex(r"^/posts/[^/]+$"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    for title in ["a", "b"] {
        client
            .post(format!("{}/posts", server.uri()))
            .json(&json!({ "title": title }))
            .send()
            .await
            .unwrap();
    }
    server.verify().await;
}

#[tokio::test]
async fn the_draft_is_saved_once_verified_on_drop() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .and(path_regex(r"^/posts/[^/]+/draft$"))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&server)
        .await;
    let response = reqwest::Client::new()
        .put(format!("{}/posts/4/draft", server.uri()))
        .json(&json!({ "body": "draft" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
}

#[tokio::test]
async fn the_journal_has_the_bodies_sent() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/posts"))
        .respond_with(ResponseTemplate::new(201))
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    for title in ["first", "second"] {
        client
            .post(format!("{}/posts", server.uri()))
            .json(&json!({ "title": title }))
            .send()
            .await
            .unwrap();
    }
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    let second: Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert_eq!(second["title"], "second");
}

#[tokio::test]
async fn patches_a_post_by_json_field() {
    let server = MockServer::start().await;
    Mock::given(method("PATCH"))
        .and(path_regex(r"^/posts/[^/]+$"))
        .respond_with(|request: &Request| {
            let patch: Value = request.body_json().unwrap_or_default();
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": segment(request, 1), "title": patch["title"] }))
        })
        .expect(1)
        .mount(&server)
        .await;
    let patched: Value = reqwest::Client::new()
        .patch(format!("{}/posts/8", server.uri()))
        .json(&json!({ "title": "Patched" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(patched, json!({ "id": "8", "title": "Patched" }));
    server.verify().await;
}
