//! The account API: the same common mocks in every test, each test's
//! overrides on top (the twin of mocklib-suite's shared.rs, which shares one
//! server and keeps each test's overrides in a boundary: wiremock-rs has no
//! per-test scope on a shared server, so each test starts a MockServer and
//! mounts the common mocks, its overrides at a higher priority).

use serde_json::{Value, json};
use wiremock::matchers::{header, method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A MockServer with the mocks every test starts from.
async fn api() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/account"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": "acc_1", "plan": "free", "credits": 10 })),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn the_common_handlers_answer() {
    let server = api().await;
    let health = reqwest::get(format!("{}/health", server.uri()))
        .await
        .unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    let account: Value = reqwest::get(format!("{}/account", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(account["plan"], "free");
}

#[tokio::test]
async fn a_test_overrides_the_plan() {
    let server = api().await;
    Mock::given(method("GET"))
        .and(path("/account"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": "acc_1", "plan": "pro", "credits": 500 })),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    let account: Value = reqwest::get(format!("{}/account", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(account["plan"], "pro");
    assert_eq!(account["credits"], 500);
}

#[tokio::test]
async fn a_suspended_account_is_403() {
    let server = api().await;
    Mock::given(method("GET"))
        .and(path("/account"))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({ "error": "suspended" })))
        .with_priority(1)
        .mount(&server)
        .await;
    let response = reqwest::get(format!("{}/account", server.uri()))
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"],
        "suspended"
    );
}

#[tokio::test]
async fn an_outage_is_503_for_this_test_only() {
    let server = api().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(503).set_body_string("down"))
        .with_priority(1)
        .mount(&server)
        .await;
    let response = reqwest::get(format!("{}/health", server.uri()))
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
}

#[tokio::test]
async fn spends_credits() {
    let server = api().await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/account/credits/[^/]+$"))
        .respond_with(|request: &Request| {
            let amount: i64 = request
                .url
                .path_segments()
                .and_then(|mut s| s.nth(2))
                .unwrap_or("0")
                .parse()
                .unwrap_or(0);
            ResponseTemplate::new(200).set_body_json(json!({ "credits": 10 - amount }))
        })
        .expect(1)
        .mount(&server)
        .await;
    let balance: Value = reqwest::Client::new()
        .post(format!("{}/account/credits/3", server.uri()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(balance["credits"], 7);
    server.verify().await;
}

#[tokio::test]
async fn renames_the_account_with_a_tenant_header() {
    let server = api().await;
    Mock::given(method("PATCH"))
        .and(path("/account"))
        .and(header("x-tenant", "acme"))
        .respond_with(|request: &Request| {
            let patch: Value = request.body_json().unwrap_or_default();
            ResponseTemplate::new(200)
                .set_body_json(json!({ "id": "acc_1", "name": patch["name"] }))
        })
        .mount(&server)
        .await;
    let account: Value = reqwest::Client::new()
        .patch(format!("{}/account", server.uri()))
        .header("x-tenant", "acme")
        .json(&json!({ "name": "Acme Ltd" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(account["name"], "Acme Ltd");
}

#[tokio::test]
async fn lists_invoices_of_this_test() {
    let server = api().await;
    Mock::given(method("GET"))
        .and(path("/account/invoices"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!([{ "id": "in_1", "total": 1200 }, { "id": "in_2", "total": 900 }]),
        ))
        .mount(&server)
        .await;
    let invoices: Vec<Value> = reqwest::get(format!("{}/account/invoices", server.uri()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let total: i64 = invoices
        .iter()
        .map(|invoice| invoice["total"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 2100);
}

#[tokio::test]
async fn each_test_sees_only_its_own_requests() {
    let server = api().await;
    reqwest::get(format!("{}/health", server.uri()))
        .await
        .unwrap();
    reqwest::get(format!("{}/account", server.uri()))
        .await
        .unwrap();
    let paths: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|request| request.url.path().to_owned())
        .collect();
    assert_eq!(paths, ["/health", "/account"]);
}
