//! The account API on one server shared by every test, with each test's
//! overrides kept to itself in a boundary (wiremock-suite's shared.rs starts
//! a MockServer per test with the same common mocks instead: wiremock-rs has
//! no per-test scope on a shared server).

use std::sync::LazyLock;

use mocklib::matchers::header;
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};
use serde_json::{Value, json};

/// The handlers every test starts from; the listener runs on a thread of
/// its own, so it serves each test's runtime.
static SERVER: LazyLock<Server> = LazyLock::new(|| {
    let server = setup_server([
        http::get("/health", |_| HttpResponse::text("ok")),
        http::get("/account", |_| {
            HttpResponse::json(&json!({ "id": "acc_1", "plan": "free", "credits": 10 }))
        }),
    ]);
    server.listen();
    server
});

/// `path` on the base URL of the caller's scope.
fn url(path: &str) -> String {
    format!("{}{}", SERVER.url().as_str().trim_end_matches('/'), path)
}

#[tokio::test]
async fn the_common_handlers_answer() {
    SERVER
        .in_boundary(async {
            let health = reqwest::get(url("/health")).await.unwrap();
            assert_eq!(health.text().await.unwrap(), "ok");
            let account: Value = reqwest::get(url("/account"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(account["plan"], "free");
        })
        .await;
}

#[tokio::test]
async fn a_test_overrides_the_plan() {
    SERVER
        .in_boundary(async {
            SERVER.use_handlers([http::get("/account", |_| {
                HttpResponse::json(&json!({ "id": "acc_1", "plan": "pro", "credits": 500 }))
            })]);
            let account: Value = reqwest::get(url("/account"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(account["plan"], "pro");
            assert_eq!(account["credits"], 500);
        })
        .await;
}

#[tokio::test]
async fn a_suspended_account_is_403() {
    SERVER
        .in_boundary(async {
            SERVER.use_handlers([http::get("/account", |_| {
                HttpResponse::json(&json!({ "error": "suspended" })).status(403)
            })]);
            let response = reqwest::get(url("/account")).await.unwrap();
            assert_eq!(response.status(), 403);
            assert_eq!(
                response.json::<Value>().await.unwrap()["error"],
                "suspended"
            );
        })
        .await;
}

#[tokio::test]
async fn an_outage_is_503_for_this_test_only() {
    SERVER
        .in_boundary(async {
            SERVER.use_handlers([http::get("/health", |_| {
                HttpResponse::text("down").status(503)
            })]);
            let response = reqwest::get(url("/health")).await.unwrap();
            assert_eq!(response.status(), 503);
        })
        .await;
}

#[tokio::test]
async fn spends_credits() {
    SERVER
        .in_boundary(async {
            SERVER.use_handlers([http::post("/account/credits/:amount", |args| {
                let amount: i64 = args.params["amount"].parse().unwrap_or(0);
                HttpResponse::json(&json!({ "credits": 10 - amount }))
            })
            .times(1)]);
            let balance: Value = reqwest::Client::new()
                .post(url("/account/credits/3"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(balance["credits"], 7);
            SERVER.verify().unwrap();
        })
        .await;
}

#[tokio::test]
async fn renames_the_account_with_a_tenant_header() {
    SERVER
        .in_boundary(async {
            SERVER.use_handlers([http::patch("/account", |args| {
                let patch: Value = args.request.json().unwrap_or_default();
                HttpResponse::json(&json!({ "id": "acc_1", "name": patch["name"] }))
            })
            .when(header("x-tenant", "acme"))]);
            let account: Value = reqwest::Client::new()
                .patch(url("/account"))
                .header("x-tenant", "acme")
                .json(&json!({ "name": "Acme Ltd" }))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(account["name"], "Acme Ltd");
        })
        .await;
}

#[tokio::test]
async fn lists_invoices_of_this_test() {
    SERVER
        .in_boundary(async {
            SERVER.use_handlers([http::get("/account/invoices", |_| {
                HttpResponse::json(
                    &json!([{ "id": "in_1", "total": 1200 }, { "id": "in_2", "total": 900 }]),
                )
            })]);
            let invoices: Vec<Value> = reqwest::get(url("/account/invoices"))
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
        })
        .await;
}

#[tokio::test]
async fn each_test_sees_only_its_own_requests() {
    SERVER
        .in_boundary(async {
            reqwest::get(url("/health")).await.unwrap();
            reqwest::get(url("/account")).await.unwrap();
            let paths: Vec<String> = SERVER
                .requests()
                .iter()
                .map(|request| request.url().path().to_owned())
                .collect();
            assert_eq!(paths, ["/health", "/account"]);
        })
        .await;
}
