//! Declarative matchers (`Handler::when` with `mocklib::matchers`): which
//! requests they let through, with reqwest in process and curl through the
//! listener, and how a request that fails one is explained.

use crate::common::serve;
use mocklib::matchers::{
    all_of, any_of, basic, bearer, body_contains, cookie, form_field, header, header_absent,
    header_matches, json_body, json_path, not, query,
};
use mocklib::{HttpResponse, http};
use serde_json::json;

const USERS: &str = "https://api.example.com/users";

#[tokio::test]
async fn a_handler_answers_only_requests_that_meet_its_conditions_and_others_fall_through() {
    let client = serve([
        http::post(USERS, |_| HttpResponse::text("admin").status(201))
            .when(header("x-api-key", "secret"))
            .when(json_body(json!({ "role": "admin" }))),
        http::post(USERS, |_| HttpResponse::text("someone").status(201)),
    ]);
    let admin = client
        .post(USERS)
        .header("x-api-key", "secret")
        .json(&json!({ "name": "Kate", "role": "admin" }))
        .await;
    assert_eq!(admin.text(), "admin");
    // One condition fails: the next handler answers.
    let wrong_key = client
        .post(USERS)
        .header("x-api-key", "other")
        .json(&json!({ "role": "admin" }))
        .await;
    assert_eq!(wrong_key.text(), "someone");
    let guest = client
        .post(USERS)
        .header("x-api-key", "secret")
        .json(&json!({ "role": "guest" }))
        .await;
    assert_eq!(guest.text(), "someone");
}

#[tokio::test]
async fn every_kind_of_matcher_through_a_real_client() {
    let ok = |label: &'static str| move |_| HttpResponse::text(label);
    let client = serve([
        http::get(USERS, ok("query")).when(query("page", "2")),
        http::get(USERS, ok("cookie")).when(cookie("session", "abc")),
        http::get(USERS, ok("bearer")).when(bearer("t0ken")),
        http::get(USERS, ok("basic")).when(basic("kate", "pw")),
        http::get(USERS, ok("pattern"))
            .when(header_matches("accept", "^application/(vnd\\.)?json")),
        http::post(USERS, ok("form")).when(form_field("name", "Kate")),
        http::post(USERS, ok("path")).when(json_path("$.tags[1]", "b")),
        http::post(USERS, ok("contains")).when(body_contains("needle")),
        http::get(USERS, ok("any")).when(any_of([header("x-a", "1"), header("x-b", "2")])),
        http::get(USERS, ok("all")).when(all_of([header("x-c", "1"), not(header_absent("x-d"))])),
        http::get(USERS, ok("fallback")),
    ]);
    assert_eq!(client.get(format!("{USERS}?page=2")).await.text(), "query");
    assert_eq!(
        client
            .get(USERS)
            .header("cookie", "session=abc")
            .await
            .text(),
        "cookie"
    );
    assert_eq!(
        client
            .get(USERS)
            .header("authorization", "Bearer t0ken")
            .await
            .text(),
        "bearer"
    );
    let basic_value = "Basic a2F0ZTpwdw=="; // kate:pw
    assert_eq!(
        client
            .get(USERS)
            .header("authorization", basic_value)
            .await
            .text(),
        "basic"
    );
    assert_eq!(
        client
            .get(USERS)
            .header("accept", "application/vnd.json")
            .await
            .text(),
        "pattern"
    );
    assert_eq!(
        client.post(USERS).form(&[("name", "Kate")]).await.text(),
        "form"
    );
    assert_eq!(
        client
            .post(USERS)
            .json(&json!({ "tags": ["a", "b"] }))
            .await
            .text(),
        "path"
    );
    assert_eq!(
        client.post(USERS).body("hay needle hay").await.text(),
        "contains"
    );
    assert_eq!(client.get(USERS).header("x-b", "2").await.text(), "any");
    assert_eq!(
        client
            .get(USERS)
            .header("x-c", "1")
            .header("x-d", "0")
            .await
            .text(),
        "all"
    );
    // Nothing met: the handler without conditions.
    assert_eq!(
        client.get(USERS).header("x-c", "1").await.text(),
        "fallback"
    );
}

#[tokio::test]
async fn an_unhandled_request_is_told_which_condition_failed_and_what_it_had() {
    let client = serve([http::post(USERS, |_| HttpResponse::text("admin"))
        .when(header("x-api-key", "secret"))
        .when(json_body(json!({ "user": { "role": "admin" } })))]);
    let message = client
        .post(USERS)
        .json(&json!({ "user": { "role": "guest" } }))
        .expect_unhandled()
        .await;
    assert!(
        message
            .contains(r#"Did you mean to request "POST https://api.example.com/users" instead?"#),
        "{message}"
    );
    assert!(
        message.contains(r#"✗ header "x-api-key": expected "secret", received none"#),
        "{message}"
    );
    assert!(
        message.contains(r#"✗ JSON body at $.user.role: expected "admin", received "guest""#),
        "{message}"
    );
}

#[tokio::test]
async fn verify_and_strict_mode_name_the_failed_condition() {
    let client = serve([http::get(USERS, |_| HttpResponse::text("page 2"))
        .when(query("page", "2"))
        .times(1)]);
    let _ = client
        .get(format!("{USERS}?page=3"))
        .expect_unhandled()
        .await;
    let failure = client.server().verify().unwrap_err().to_string();
    assert!(
        failure.contains(r#"✗ query parameter "page": expected "2", received "3""#),
        "{failure}"
    );
}

#[tokio::test]
async fn curl_through_the_listener_meets_the_conditions_too() {
    let server = mocklib::node::setup_server([
        http::get("/report", |_| HttpResponse::text("ok")).when(bearer("t0ken"))
    ]);
    server.listen();
    let url = server.url().join("/report").unwrap().to_string();
    let answered = test_support::curl(&["-s", "-H", "Authorization: Bearer t0ken", &url]);
    assert_eq!(answered, "ok");
    let refused = test_support::curl(&["-s", "-o", "/dev/null", "-w", "%{http_code}", &url]);
    assert_ne!(
        refused, "200",
        "a request without the token is not answered"
    );
}

/// `when` is the handler's, whatever its kind: a GraphQL operation (here
/// told apart by a variable, through `json_path` on the request body) and
/// a server-sent event stream (by a header).
#[tokio::test]
async fn conditions_apply_to_graphql_operations_and_event_streams_too() {
    use mocklib::graphql;
    use mocklib::sse::{self, Event};
    const GRAPHQL: &str = "https://api.example.com/graphql";
    let client = serve([
        graphql::query("GetUser", |_| {
            graphql::data(json!({ "user": { "name": "Admin" } }))
        })
        .when(json_path("$.variables.id", "1")),
        graphql::query("GetUser", |_| {
            graphql::data(json!({ "user": { "name": "Someone" } }))
        }),
        sse::get("https://api.example.com/feed", |args| async move {
            args.client.send(Event::data("for subscribers"));
        })
        .when(header("x-plan", "pro")),
    ]);
    let ask = |id: &'static str| {
        client
            .post(GRAPHQL)
            .json(&json!({ "query": "query GetUser($id: ID!) { user(id: $id) { name } }", "variables": { "id": id } }))
    };
    assert_eq!(
        ask("1").await.json::<serde_json::Value>()["data"]["user"]["name"],
        "Admin"
    );
    assert_eq!(
        ask("2").await.json::<serde_json::Value>()["data"]["user"]["name"],
        "Someone"
    );
    let feed = client
        .get("https://api.example.com/feed")
        .header("x-plan", "pro")
        .await;
    assert!(
        feed.text().contains("data: for subscribers"),
        "{}",
        feed.text()
    );
    let message = client
        .get("https://api.example.com/feed")
        .expect_unhandled()
        .await;
    assert!(
        message.contains(r#"✗ header "x-plan": expected "pro", received none"#),
        "{message}"
    );
}
