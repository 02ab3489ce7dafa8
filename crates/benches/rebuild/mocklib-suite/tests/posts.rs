//! The posts API: JSON request bodies, sequences and one-shot answers, and
//! verification of how often each endpoint was called (mocklib's
//! `.times(n)` and `server.verify()`, wiremock-rs's `.expect(n)`), each test
//! on a server of its own reached at its base URL.

use mocklib::matchers::{header, json_body};
use mocklib::node::{Server, setup_server};
use mocklib::{Handler, HttpResponse, http, sequence};
use serde_json::{Value, json};

/// A listening server with `handlers`, for one test.
fn serve(handlers: impl IntoIterator<Item = Handler>) -> Server {
    let server = setup_server(handlers);
    server.listen();
    server
}

/// `path` on the server's base URL.
fn url(server: &Server, path: &str) -> String {
    format!("{}{}", server.url().as_str().trim_end_matches('/'), path)
}

#[tokio::test]
async fn creates_a_post_from_its_json() {
    let server = serve([http::post("/posts", |_| {
        HttpResponse::json(&json!({ "id": 101 })).status(201)
    })
    .when(json_body(json!({ "title": "Hello", "userId": 1 })))]);
    let response = reqwest::Client::new()
        .post(url(&server, "/posts"))
        .json(&json!({ "title": "Hello", "body": "first", "userId": 1 }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.json::<Value>().await.unwrap()["id"], 101);
}

#[tokio::test]
async fn a_post_without_a_title_is_not_matched() {
    let server = serve([
        http::post("/posts", |_| HttpResponse::empty().status(201))
            .when(json_body(json!({ "title": "Hello" }))),
        http::post("/posts", |_| {
            HttpResponse::json(&json!({ "error": "title" })).status(422)
        }),
    ]);
    let response = reqwest::Client::new()
        .post(url(&server, "/posts"))
        .json(&json!({ "body": "no title" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
}

#[tokio::test]
async fn echoes_the_created_post() {
    let server = serve([http::post("/posts", |args| {
        let mut post: Value = args.request.json()?;
        post["id"] = json!(7);
        Ok::<_, mocklib::request::BodyError>(HttpResponse::json(&post).status(201))
    })]);
    let created: Value = reqwest::Client::new()
        .post(url(&server, "/posts"))
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
    let server = serve([http::put("/posts/:id", |args| {
        HttpResponse::json(&json!({ "id": &args.params["id"], "updated": true }))
    })
    .when(header("content-type", "application/json"))
    .when(json_body(json!({ "title": "New" })))]);
    let updated: Value = reqwest::Client::new()
        .put(url(&server, "/posts/3"))
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
    let server = serve([http::get(
        "/posts",
        sequence([
            HttpResponse::empty().status(503),
            HttpResponse::empty().status(503),
            HttpResponse::json(&json!([{ "id": 1 }])),
        ]),
    )]);
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(
            client
                .get(url(&server, "/posts"))
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
    let server = serve([
        http::post("/token", |_| {
            HttpResponse::json(&json!({ "token": "first" }))
        })
        .once(),
        http::post("/token", |_| HttpResponse::empty().status(429)),
    ]);
    let client = reqwest::Client::new();
    let first = client.post(url(&server, "/token")).send().await.unwrap();
    assert_eq!(first.json::<Value>().await.unwrap()["token"], "first");
    let second = client.post(url(&server, "/token")).send().await.unwrap();
    assert_eq!(second.status(), 429);
}

#[tokio::test]
async fn publishing_calls_the_api_twice() {
    let server = serve([
        http::post("/posts", |_| HttpResponse::empty().status(201)).times(2),
        http::delete("/posts/:id", |_| HttpResponse::empty()).never(),
    ]);
    let client = reqwest::Client::new();
    for title in ["a", "b"] {
        client
            .post(url(&server, "/posts"))
            .json(&json!({ "title": title }))
            .send()
            .await
            .unwrap();
    }
    server.verify().unwrap();
}

#[tokio::test]
async fn the_draft_is_saved_once_verified_on_drop() {
    let server =
        serve([http::put("/posts/:id/draft", |_| HttpResponse::empty().status(204)).times(1)]);
    server.verify_on_drop();
    let response = reqwest::Client::new()
        .put(url(&server, "/posts/4/draft"))
        .json(&json!({ "body": "draft" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
}

#[tokio::test]
async fn the_journal_has_the_bodies_sent() {
    let server = serve([http::post("/posts", |_| HttpResponse::empty().status(201))]);
    let client = reqwest::Client::new();
    for title in ["first", "second"] {
        client
            .post(url(&server, "/posts"))
            .json(&json!({ "title": title }))
            .send()
            .await
            .unwrap();
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second: Value = serde_json::from_slice(requests[1].body()).unwrap();
    assert_eq!(second["title"], "second");
}

#[tokio::test]
async fn patches_a_post_by_json_field() {
    let server = serve([http::patch("/posts/:id", |args| {
        let patch: Value = args.request.json().unwrap_or_default();
        HttpResponse::json(&json!({ "id": &args.params["id"], "title": patch["title"] }))
    })
    .expect(1)]);
    let patched: Value = reqwest::Client::new()
        .patch(url(&server, "/posts/8"))
        .json(&json!({ "title": "Patched" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(patched, json!({ "id": "8", "title": "Patched" }));
    server.verify().unwrap();
}
