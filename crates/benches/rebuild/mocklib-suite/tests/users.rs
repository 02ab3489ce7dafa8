//! The users API: path parameters, JSON responses, status codes, header and
//! query matching, each test on a server of its own reached at its base URL
//! (wiremock-suite's users.rs starts a MockServer per test the same way).
//! scripts/rebuild-bench edits the `let name` line of `gets_a_user_by_id`.

use mocklib::matchers::{bearer, header, query};
use mocklib::node::{Server, setup_server};
use mocklib::{Handler, HttpResponse, http};
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
async fn gets_a_user_by_id() {
    let name = "Kate";
    let server = serve([http::get("/users/:id", move |args| {
        HttpResponse::json(&json!({ "id": &args.params["id"], "name": name }))
    })]);
    let user: Value = reqwest::get(url(&server, "/users/42"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(user, json!({ "id": "42", "name": name }));
}

#[tokio::test]
async fn gets_a_post_of_a_user() {
    let server = serve([http::get("/users/:user/posts/:post", |args| {
        HttpResponse::json(&json!({ "user": &args.params["user"], "post": &args.params["post"] }))
    })]);
    let post: Value = reqwest::get(url(&server, "/users/7/posts/3"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(post, json!({ "user": "7", "post": "3" }));
}

#[tokio::test]
async fn lists_users_as_json() {
    let server = serve([http::get("/users", |_| {
        HttpResponse::json(&json!([{ "id": 1, "name": "Kate" }, { "id": 2, "name": "Sarah" }]))
    })]);
    let users: Vec<Value> = reqwest::get(url(&server, "/users"))
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
    let server = serve([http::get("/users/:id", |args| {
        if &args.params["id"] == "0" {
            return HttpResponse::json(&json!({ "error": "not found" })).status(404);
        }
        HttpResponse::json(&json!({ "id": &args.params["id"] }))
    })]);
    let response = reqwest::get(url(&server, "/users/0")).await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"],
        "not found"
    );
    let response = reqwest::get(url(&server, "/users/1")).await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_server_error_is_500() {
    let server = serve([http::get("/users/:id", |_| {
        HttpResponse::text("database down").status(500)
    })]);
    let response = reqwest::get(url(&server, "/users/1")).await.unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.text().await.unwrap(), "database down");
}

#[tokio::test]
async fn deleting_a_user_is_204() {
    let server = serve([http::delete("/users/:id", |_| {
        HttpResponse::empty().status(204)
    })]);
    let response = reqwest::Client::new()
        .delete(url(&server, "/users/5"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.text().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_api_key_header_is_required() {
    let server = serve([
        http::get("/me", |_| HttpResponse::json(&json!({ "name": "Kate" })))
            .when(header("x-api-key", "secret")),
        http::get("/me", |_| HttpResponse::empty().status(401)),
    ]);
    let client = reqwest::Client::new();
    let response = client.get(url(&server, "/me")).send().await.unwrap();
    assert_eq!(response.status(), 401);
    let response = client
        .get(url(&server, "/me"))
        .header("x-api-key", "secret")
        .send()
        .await
        .unwrap();
    assert_eq!(response.json::<Value>().await.unwrap()["name"], "Kate");
}

#[tokio::test]
async fn a_bearer_token_is_accepted() {
    let server = serve([
        http::get("/me", |_| HttpResponse::text("Kate")).when(bearer("t0ken")),
        http::get("/me", |_| HttpResponse::empty().status(403)),
    ]);
    let client = reqwest::Client::new();
    let response = client
        .get(url(&server, "/me"))
        .bearer_auth("t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "Kate");
    let response = client
        .get(url(&server, "/me"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn pages_by_query() {
    let server = serve([
        http::get("/users", |_| HttpResponse::json(&json!([{ "id": 3 }]))).when(query("page", "2")),
        http::get("/users", |_| {
            HttpResponse::json(&json!([{ "id": 1 }, { "id": 2 }]))
        }),
    ]);
    let page: Vec<Value> = reqwest::get(url(&server, "/users?page=2"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page, vec![json!({ "id": 3 })]);
    let first: Vec<Value> = reqwest::get(url(&server, "/users"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
}

#[tokio::test]
async fn searches_by_two_query_parameters() {
    let server = serve([http::get("/users/search", |_| {
        HttpResponse::json(&json!([{ "name": "Kate", "role": "admin" }]))
    })
    .when(query("name", "Kate"))
    .when(query("role", "admin"))]);
    let found: Vec<Value> = reqwest::get(url(&server, "/users/search?role=admin&name=Kate"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found[0]["role"], "admin");
}

#[tokio::test]
async fn response_headers_reach_the_client() {
    let server = serve([http::get("/users/:id", |_| {
        HttpResponse::json(&json!({ "id": 1 }))
            .header("x-request-id", "abc-123")
            .header("cache-control", "no-store")
    })]);
    let response = reqwest::get(url(&server, "/users/1")).await.unwrap();
    assert_eq!(response.headers()["x-request-id"], "abc-123");
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
}

#[tokio::test]
async fn an_avatar_is_plain_text() {
    let server = serve([http::get("/users/:id/avatar", |args| {
        HttpResponse::text(format!("avatar of {}", &args.params["id"]))
    })]);
    let body = reqwest::get(url(&server, "/users/9/avatar"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "avatar of 9");
}
