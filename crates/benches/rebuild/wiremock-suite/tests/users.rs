//! The users API: path parameters, JSON responses, status codes, header and
//! query matching, each test on a MockServer of its own (the twin of
//! mocklib-suite's users.rs, test for test).
//! scripts/rebuild-bench edits the `let name` line of `gets_a_user_by_id`.

use serde_json::{Value, json};
use wiremock::matchers::{bearer_token, header, method, path, path_regex, query_param};
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
async fn gets_a_user_by_id() {
    let name = "Kate";
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/users/[^/]+$"))
        .respond_with(move |request: &Request| {
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": segment(request, 1), "name": name }))
        })
        .mount(&server)
        .await;
    let user: Value = reqwest::get(format!("{}/users/42", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(user, json!({ "id": "42", "name": name }));
}

#[tokio::test]
async fn gets_a_post_of_a_user() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/users/[^/]+/posts/[^/]+$"))
        .respond_with(|request: &Request| {
            ResponseTemplate::new(200)
                .set_body_json(json!({ "user": segment(request, 1), "post": segment(request, 3) }))
        })
        .mount(&server)
        .await;
    let post: Value = reqwest::get(format!("{}/users/7/posts/3", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(post, json!({ "user": "7", "post": "3" }));
}

#[tokio::test]
async fn lists_users_as_json() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/users"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!([{ "id": 1, "name": "Kate" }, { "id": 2, "name": "Sarah" }])),
        )
        .mount(&server)
        .await;
    let users: Vec<Value> = reqwest::get(format!("{}/users", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(users.len(), 2);
    assert_eq!(users[1]["name"], "Sarah");
}

#[tokio::test]
async fn a_missing_user_is_404() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/users/[^/]+$"))
        .respond_with(|request: &Request| {
            let id = segment(request, 1);
            if id == "0" {
                return ResponseTemplate::new(404).set_body_json(json!({ "error": "not found" }));
            }
            ResponseTemplate::new(200).set_body_json(json!({ "id": id }))
        })
        .mount(&server)
        .await;
    let response = reqwest::get(format!("{}/users/0", server.uri()))
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"],
        "not found"
    );
    let response = reqwest::get(format!("{}/users/1", server.uri()))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_server_error_is_500() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/users/[^/]+$"))
        .respond_with(ResponseTemplate::new(500).set_body_string("database down"))
        .mount(&server)
        .await;
    let response = reqwest::get(format!("{}/users/1", server.uri()))
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.text().await.unwrap(), "database down");
}

#[tokio::test]
async fn deleting_a_user_is_204() {
    let server = MockServer::start().await;
    Mock::given(method("DELETE"))
        .and(path_regex(r"^/users/[^/]+$"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&server)
        .await;
    let response = reqwest::Client::new()
        .delete(format!("{}/users/5", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.text().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_api_key_header_is_required() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/me"))
        .and(header("x-api-key", "secret"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "name": "Kate" })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/me"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{}/me", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let response = client
        .get(format!("{}/me", server.uri()))
        .header("x-api-key", "secret")
        .send()
        .await
        .unwrap();
    assert_eq!(response.json::<Value>().await.unwrap()["name"], "Kate");
}

#[tokio::test]
async fn a_bearer_token_is_accepted() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/me"))
        .and(bearer_token("t0ken"))
        .respond_with(ResponseTemplate::new(200).set_body_string("Kate"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/me"))
        .respond_with(ResponseTemplate::new(403))
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{}/me", server.uri()))
        .bearer_auth("t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "Kate");
    let response = client
        .get(format!("{}/me", server.uri()))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn pages_by_query() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/users"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{ "id": 3 }])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/users"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{ "id": 1 }, { "id": 2 }])))
        .mount(&server)
        .await;
    let page: Vec<Value> = reqwest::get(format!("{}/users?page=2", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page, vec![json!({ "id": 3 })]);
    let first: Vec<Value> = reqwest::get(format!("{}/users", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
}

#[tokio::test]
async fn searches_by_two_query_parameters() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/users/search"))
        .and(query_param("name", "Kate"))
        .and(query_param("role", "admin"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!([{ "name": "Kate", "role": "admin" }])),
        )
        .mount(&server)
        .await;
    let found: Vec<Value> = reqwest::get(format!(
        "{}/users/search?role=admin&name=Kate",
        server.uri()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(found[0]["role"], "admin");
}

#[tokio::test]
async fn response_headers_reach_the_client() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/users/[^/]+$"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": 1 }))
                .insert_header("x-request-id", "abc-123")
                .insert_header("cache-control", "no-store"),
        )
        .mount(&server)
        .await;
    let response = reqwest::get(format!("{}/users/1", server.uri()))
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "abc-123");
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
}

#[tokio::test]
async fn an_avatar_is_plain_text() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/users/[^/]+/avatar$"))
        .respond_with(|request: &Request| {
            ResponseTemplate::new(200).set_body_string(format!("avatar of {}", segment(request, 1)))
        })
        .mount(&server)
        .await;
    let body = reqwest::get(format!("{}/users/9/avatar", server.uri()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "avatar of 9");
}
