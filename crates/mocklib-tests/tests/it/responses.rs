//! What a real reqwest client receives for each `HttpResponse` constructor and
//! builder method, through the mocklib middleware.

use crate::common;

use crate::common::{TestClient, TestResponse, serve};
use mocklib::{
    HttpResponse, front_door::NetworkError, front_door::NetworkErrorKind, http, request::FormData,
    request::FormValue,
};
use serde_json::{Value, json};

const URL: &str = "https://api.example.com/r";

/// A client of a server answering every `GET URL` with `response` (cloned
/// per request).
fn serve_response(response: HttpResponse) -> TestClient {
    serve([http::get(URL, move |_| response.clone())])
}

/// Serves `response` at `URL` and fetches it with a real client.
async fn fetch(response: HttpResponse) -> TestResponse {
    serve_response(response).get(URL).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_sends_the_body_without_a_content_type() {
    let response = fetch(HttpResponse::new("raw body")).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("content-type").is_none());
    assert_eq!(response.text(), "raw body");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_with_an_error_status_has_no_body() {
    for status in [401, 404] {
        let response = fetch(HttpResponse::empty().status(status)).await;
        assert_eq!(response.status(), status);
        assert!(response.headers().get("content-type").is_none());
        assert!(response.bytes().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_sets_content_type_and_length() {
    let response = fetch(HttpResponse::json(
        &json!({ "name": "John", "tags": [1, 2] }),
    ))
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.header_values("content-type"), ["application/json"]);
    let body = r#"{"name":"John","tags":[1,2]}"#;
    assert_eq!(
        response.header_values("content-length"),
        [body.len().to_string()]
    );
    assert_eq!(response.text(), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_with_a_status_keeps_the_status() {
    let response = fetch(HttpResponse::json(&json!({ "id": 1 })).status(201)).await;
    assert_eq!(response.status(), 201);
    assert_eq!(response.json::<Value>(), json!({ "id": 1 }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_html_xml_and_bytes_set_their_content_types() {
    let cases = [
        (HttpResponse::text("hello"), "text/plain", &b"hello"[..]),
        (HttpResponse::html("<p>hi</p>"), "text/html", b"<p>hi</p>"),
        (HttpResponse::xml("<a>1</a>"), "text/xml", b"<a>1</a>"),
        (
            HttpResponse::bytes(vec![0u8, 1, 255]),
            "application/octet-stream",
            &[0u8, 1, 255][..],
        ),
    ];
    for (mocked, content_type, body) in cases {
        let response = fetch(mocked).await;
        assert_eq!(response.header_values("content-type"), [content_type]);
        assert_eq!(
            response.header_values("content-length"),
            [body.len().to_string()]
        );
        assert_eq!(response.bytes(), body, "{content_type}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_data_sends_multipart_that_parses_back() {
    let form = FormData::new()
        .text("title", "Hello")
        .text("tag", "a")
        .text("tag", "b")
        .file("upload", "a.txt", "text/plain", &b"line1\r\nline2"[..]);
    let response = fetch(HttpResponse::form_data(&form)).await;
    assert_eq!(response.status(), 200);
    let content_type = response.header_values("content-type");
    assert_eq!(content_type.len(), 1);
    assert!(
        content_type[0].starts_with("multipart/form-data; boundary="),
        "{content_type:?}"
    );

    let body = response.bytes();
    let parsed = FormData::parse(content_type[0], body).expect("valid multipart");
    assert_eq!(parsed, form);
    assert_eq!(
        parsed
            .get_all("tag")
            .filter_map(FormValue::as_text)
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
}

/// Sends `form` with `HttpResponse::form_data` and parses the body back.
async fn form_round_trip(form: &FormData) -> FormData {
    let response = fetch(HttpResponse::form_data(form)).await;
    let content_type = response.header_values("content-type").remove(0);
    let body = response.bytes();
    FormData::parse(content_type, body).expect("valid multipart")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_data_field_name_with_a_semicolon_parses_back() {
    let form = FormData::new().text("a;b", "1");
    let parsed = form_round_trip(&form).await;
    assert_eq!(parsed.get("a;b"), Some("1"), "{parsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_data_filename_with_backslashes_parses_back() {
    let form = FormData::new().file("f", r"C:\dir\a.txt", "text/plain", &b"x"[..]);
    let parsed = form_round_trip(&form).await;
    assert_eq!(parsed, form);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_data_field_name_with_a_quote_parses_back() {
    let form = FormData::new().text("say \"hi\"", "1");
    let parsed = form_round_trip(&form).await;
    assert_eq!(parsed, form);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_content_type_wins_over_the_default() {
    let response =
        fetch(HttpResponse::json(&json!([1])).header("Content-Type", "application/vnd.api+json"))
            .await;
    assert_eq!(
        response.header_values("content-type"),
        ["application/vnd.api+json"]
    );
    assert_eq!(response.text(), "[1]");

    let response = fetch(HttpResponse::text("a,b").header("content-type", "text/csv")).await;
    assert_eq!(response.header_values("content-type"), ["text/csv"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_content_type_wins_over_the_form_data_default() {
    let form = FormData::new().text("a", "1");
    let response =
        fetch(HttpResponse::form_data(&form).header("content-type", "multipart/mixed; boundary=x"))
            .await;
    assert_eq!(
        response.header_values("content-type"),
        ["multipart/mixed; boundary=x"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_sets_the_status_code() {
    let response = fetch(HttpResponse::text("I'm a teapot").status(418)).await;
    assert_eq!(response.status(), 418);
    assert_eq!(response.text(), "I'm a teapot");

    let response = fetch(HttpResponse::empty().status(503)).await;
    assert_eq!(response.status(), 503);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_body_statuses_arrive_without_a_body() {
    for status in [204, 205, 304] {
        let response = fetch(HttpResponse::text("dropped").status(status)).await;
        assert_eq!(response.status(), status);
        assert!(
            response.headers().get("content-length").is_none(),
            "{status}"
        );
        assert!(response.bytes().is_empty(), "{status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_cookies_are_separate_set_cookie_headers() {
    let response = fetch(
        HttpResponse::text("welcome")
            .cookie("session", "abc")
            .cookie("theme", "dark")
            .cookie("note", "x y"),
    )
    .await;
    assert_eq!(
        response.header_values("set-cookie"),
        ["session=abc", "theme=dark", "note=x%20y"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_added_twice_keeps_both_values() {
    let response = fetch(
        HttpResponse::empty()
            .header("x-tag", "a")
            .header("X-Tag", "b")
            .header("x-single", "1"),
    )
    .await;
    assert_eq!(response.header_values("x-tag"), ["a", "b"]);
    assert_eq!(response.header_values("x-single"), ["1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_is_a_network_error_not_a_status() {
    let error = serve_response(HttpResponse::error())
        .get(URL)
        .expect_error()
        .await;
    assert!(common::is_network_error(&error), "{error:?}");
    let reqwest_middleware::Error::Middleware(inner) = &error else {
        unreachable!()
    };
    assert_eq!(
        inner.downcast_ref::<NetworkError>().unwrap().kind(),
        NetworkErrorKind::Mocked
    );
    assert!(error.status().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_status_becomes_a_500_naming_the_code() {
    let response = fetch(HttpResponse::text("never sent").status(1000)).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert_eq!(body["name"], "InvalidResponse");
    assert!(body["message"].as_str().unwrap().contains("1000"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_header_becomes_a_500_not_a_panic() {
    let response = fetch(HttpResponse::text("never sent").header("bad name", "x")).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json();
    assert!(
        body["message"].as_str().unwrap().contains("bad name"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_crate_response_keeps_its_status_and_headers() {
    let client = serve([http::get(URL, |_| {
        ::http::Response::builder()
            .status(201)
            .header("content-type", "application/problem+json")
            .header("x-custom", "1")
            .header("x-custom", "2")
            .body(r#"{"ok":true}"#)
            .unwrap()
    })]);
    let response = client.get(URL).await;
    assert_eq!(response.status(), 201);
    assert_eq!(
        response.header_values("content-type"),
        ["application/problem+json"]
    );
    assert_eq!(response.header_values("x-custom"), ["1", "2"]);
    assert_eq!(response.text(), r#"{"ok":true}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mocked_response_url_is_the_request_url() {
    let client = serve([http::get("/users/:id", |_| HttpResponse::text("user"))]);

    for url in [
        "https://api.example.com/users/1?expand=posts",
        "http://localhost:8080/users/2",
    ] {
        assert_eq!(client.get(url).await.url().as_str(), url);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_response_arrives_without_a_body() {
    let client = serve([http::all(URL, |_| HttpResponse::text("body"))]);
    let response = client.head(URL).await;
    assert_eq!(response.status(), 200);
    // Content-Length may describe the GET body (RFC 9110 §9.3.2); the body itself is empty.
    assert_eq!(response.text(), "");
}
