//! The matching rules of `mocklib::matching`: which requests reach a
//! handler, which do not, and what it captures.
//!
//! The rules are pure functions of the request, so most tests ask the engine
//! directly through `Server::handle` (`common::resolve`), the entry point of
//! every front door. One test per rule family sends real requests with a
//! real reqwest client through the mocklib middleware instead, so each
//! family is also seen end to end (and one through the loopback listener).
//!
//! Unmatched requests are made visible with `UnhandledRequest::Error`: they
//! fail with a network error of kind `Unhandled` instead of a response.

use crate::common;

use crate::common::{TestResponse, listening, resolve, serve};
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, ResolverArgs, http, matching::Predicate, request::ParamValue};
use regex::Regex;
use reqwest::Method;
use serde_json::{Value, json};
use url::Url;

/// A resolver answering with the captured params as JSON.
fn echo_params(args: ResolverArgs) -> HttpResponse {
    HttpResponse::json(&args.params)
}

/// The engine's answer to `GET url`; fails the test when no handler answers.
async fn matched(server: &Server, url: &str) -> TestResponse {
    let response = resolve(server, Method::GET, url).await;
    response.unwrap_or_else(|| panic!("{url} should match"))
}

/// The params the handler echoed for `GET url` (answered with a 200).
async fn params_of(server: &Server, url: &str) -> Value {
    let response = matched(server, url).await;
    assert_eq!(response.status(), 200, "{url}");
    response.json()
}

async fn assert_unmatched(server: &Server, url: &str) {
    if let Some(response) = resolve(server, Method::GET, url).await {
        panic!("{url} should not match, but a handler answered {response:?}");
    }
}

// ───────────────────────────── origins ─────────────────────────────

/// End to end: this family through a real reqwest client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_path_matches_any_origin_without_a_base_url() {
    let client = serve([http::get("/user", |_| HttpResponse::text("user"))]);

    assert_eq!(
        client.get("https://api.example.com/user").await,
        (200, "user")
    );
    assert_eq!(
        client.get("http://other.test:8080/user").await,
        (200, "user")
    );
    client
        .get("https://api.example.com/users")
        .expect_unhandled()
        .await;
}

#[tokio::test]
async fn relative_path_with_base_url_matches_only_that_origin() {
    let server = setup_server([http::get("/user", |_| HttpResponse::text("user"))]);
    server.listen_with(
        common::error_on_unhandled().base_url(Url::parse("https://api.example.com").unwrap()),
    );

    assert_eq!(
        matched(&server, "https://api.example.com/user").await,
        (200, "user")
    );
    assert_unmatched(&server, "https://other.example.com/user").await;
    // Same host, other scheme and other port are other origins too.
    assert_unmatched(&server, "http://api.example.com/user").await;
    assert_unmatched(&server, "https://api.example.com:8443/user").await;
}

#[tokio::test]
async fn absolute_url_matches_only_that_host_and_path() {
    let server = listening([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("user")
    })]);

    assert_eq!(
        matched(&server, "https://api.example.com/user").await,
        (200, "user")
    );
    assert_unmatched(&server, "https://other.example.com/user").await;
    assert_unmatched(&server, "https://api.example.com/users").await;
    assert_unmatched(&server, "https://api.example.com/user/1").await;
}

#[tokio::test]
async fn absolute_url_requires_the_same_scheme() {
    let server = listening([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("user")
    })]);

    assert_eq!(
        matched(&server, "https://api.example.com/user").await,
        (200, "user")
    );
    assert_unmatched(&server, "http://api.example.com/user").await;
}

#[tokio::test]
async fn absolute_url_requires_the_same_port() {
    let server = listening([http::get("http://localhost:3000/x", |_| {
        HttpResponse::text("x")
    })]);

    assert_eq!(
        matched(&server, "http://localhost:3000/x").await,
        (200, "x")
    );
    assert_unmatched(&server, "http://localhost:4000/x").await;
    // No port means port 80, which is not 3000.
    assert_unmatched(&server, "http://localhost/x").await;
}

#[tokio::test]
async fn default_port_is_the_same_as_no_port() {
    let server = listening([
        http::get("https://api.example.com:443/secure", |_| {
            HttpResponse::text("secure")
        }),
        http::get("http://api.example.com/plain", |_| {
            HttpResponse::text("plain")
        }),
    ]);

    // The pattern names the default port, the request does not ...
    assert_eq!(
        matched(&server, "https://api.example.com/secure").await,
        (200, "secure")
    );
    // ... and the other way round.
    assert_eq!(
        matched(&server, "http://api.example.com:80/plain").await,
        (200, "plain")
    );
    // A non-default port is still different.
    assert_unmatched(&server, "https://api.example.com:8443/secure").await;
}

// ───────────────────────────── paths ─────────────────────────────

#[tokio::test]
async fn path_matching_is_case_insensitive() {
    let server = listening([http::get("https://api.example.com/Users/Profile", |_| {
        HttpResponse::text("profile")
    })]);

    for url in [
        "https://api.example.com/users/profile",
        "https://api.example.com/USERS/PROFILE",
        "https://API.EXAMPLE.COM/Users/Profile",
    ] {
        assert_eq!(matched(&server, url).await, (200, "profile"), "{url}");
    }
}

#[tokio::test]
async fn trailing_slash_on_the_request_is_tolerated() {
    let server = listening([http::get("/posts", |_| HttpResponse::text("posts"))]);

    assert_eq!(
        matched(&server, "https://api.example.com/posts").await,
        (200, "posts")
    );
    assert_eq!(
        matched(&server, "https://api.example.com/posts/").await,
        (200, "posts")
    );
}

#[tokio::test]
async fn trailing_slash_on_the_predicate_is_required() {
    let server = listening([http::get("/posts/", |_| HttpResponse::text("posts"))]);

    assert_eq!(
        matched(&server, "https://api.example.com/posts/").await,
        (200, "posts")
    );
    assert_unmatched(&server, "https://api.example.com/posts").await;
}

/// End to end: this family through a real reqwest client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_and_hash_of_the_request_are_ignored() {
    let client = serve([http::get("https://api.example.com/search", |args| {
        // The query is still there for the resolver to read.
        HttpResponse::text(args.request.url().query().unwrap_or_default().to_owned())
    })]);

    assert_eq!(
        client
            .get("https://api.example.com/search?q=rust&page=2")
            .await,
        (200, "q=rust&page=2")
    );
    assert_eq!(
        client.get("https://api.example.com/search#top").await,
        (200, "")
    );
    assert_eq!(
        client.get("https://api.example.com/search?q=1#top").await,
        (200, "q=1")
    );
}

#[tokio::test]
async fn predicate_with_a_query_is_accepted_and_matches_on_the_path() {
    // Accepted (with a warning), not an error.
    let handler = http::try_get("https://api.example.com/search?q=rust", |_| {
        HttpResponse::text("search")
    })
    .expect("a predicate with a query is accepted");
    let server = listening([handler]);

    // The predicate's query takes no part in matching, as in MSW.
    for url in [
        "https://api.example.com/search?q=rust",
        "https://api.example.com/search?q=other",
        "https://api.example.com/search",
    ] {
        assert_eq!(matched(&server, url).await, (200, "search"), "{url}");
    }
    assert_unmatched(&server, "https://api.example.com/find?q=rust").await;
}

// ───────────────────────────── params ─────────────────────────────

/// End to end: this family through a real reqwest client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_params_are_percent_decoded() {
    let client = serve([http::get("/users/:name", echo_params)]);

    for (url, params) in [
        (
            "https://api.example.com/users/John%20Doe",
            json!({ "name": "John Doe" }),
        ),
        (
            "https://api.example.com/users/caf%C3%A9",
            json!({ "name": "café" }),
        ),
    ] {
        let response = client.get(url).await;
        let answer = (response.status(), response.json::<Value>());
        assert_eq!(answer, (200, params), "{url}");
    }
    // One segment only.
    for url in [
        "https://api.example.com/users/a/b",
        "https://api.example.com/users",
    ] {
        client.get(url).expect_unhandled().await;
    }
}

#[tokio::test]
async fn literal_space_in_the_predicate_matches_the_encoded_request_path() {
    let server = listening([http::get("/users/John Doe", |_| HttpResponse::text("john"))]);

    assert_eq!(
        matched(&server, "https://api.example.com/users/John%20Doe").await,
        (200, "john")
    );
}

#[tokio::test]
async fn optional_param_matches_with_and_without_the_segment() {
    let server = listening([http::get("/posts/:id?", echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/posts").await,
        json!({})
    );
    assert_eq!(
        params_of(&server, "https://api.example.com/posts/1").await,
        json!({ "id": "1" })
    );
    assert_unmatched(&server, "https://api.example.com/posts/1/2").await;
}

#[tokio::test]
async fn zero_or_more_param_captures_a_list_of_segments() {
    let server = listening([http::get("/files/:path*", |args| {
        let value = match args.params.value("path") {
            Some(ParamValue::Many(segments)) => json!({ "many": segments }),
            Some(ParamValue::One(one)) => json!({ "one": one }),
            None => json!(null),
        };
        HttpResponse::json(&value)
    })]);

    assert_eq!(
        params_of(&server, "https://api.example.com/files/a/b/c").await,
        json!({ "many": ["a", "b", "c"] })
    );
    assert_eq!(
        params_of(&server, "https://api.example.com/files/only").await,
        json!({ "many": ["only"] })
    );
    // Zero segments: matches, nothing captured.
    assert_eq!(
        params_of(&server, "https://api.example.com/files").await,
        json!(null)
    );
    assert_unmatched(&server, "https://api.example.com/filesx").await;
}

#[tokio::test]
async fn one_or_more_param_requires_a_segment() {
    let server = listening([http::get("/files/:path+", echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/files/a/b%20c").await,
        json!({ "path": ["a", "b c"] })
    );
    assert_unmatched(&server, "https://api.example.com/files").await;
}

#[tokio::test]
async fn custom_param_pattern_restricts_the_segment() {
    let server = listening([http::get(r"/users/:id(\d+)", echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/users/42").await,
        json!({ "id": "42" })
    );
    assert_unmatched(&server, "https://api.example.com/users/abc").await;
}

#[tokio::test]
async fn wildcards_in_the_path_are_numbered_params() {
    let server = listening([http::get("/a/*/b/*", echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/a/x/b/y/z").await,
        json!({ "0": "x", "1": "y/z" })
    );
    assert_unmatched(&server, "https://api.example.com/a/b").await;
}

#[tokio::test]
async fn lone_wildcard_matches_every_url() {
    let server = listening([http::get("*", |_| HttpResponse::text("any"))]);

    for url in [
        "https://api.example.com/",
        "https://api.example.com/a/b?c=d",
        "http://localhost:1234/x",
    ] {
        assert_eq!(matched(&server, url).await, (200, "any"), "{url}");
    }
}

#[tokio::test]
async fn wildcard_in_the_host_matches_subdomains() {
    let server = listening([http::get("https://*.example.com/x", echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/x").await,
        json!({ "0": "api" })
    );
    assert_eq!(
        params_of(&server, "https://a.b.example.com/x").await,
        json!({ "0": "a.b" })
    );
    assert_unmatched(&server, "https://example.com/x").await;
    assert_unmatched(&server, "https://api.example.org/x").await;
    // The host wildcard never reaches into the path.
    assert_unmatched(&server, "https://api.example.com/y").await;
}

#[tokio::test]
async fn host_param_captures_one_label_of_the_host() {
    let server = listening([http::get("https://:tenant.example.com/user", |args| {
        HttpResponse::text(format!("tenant {}", &args.params["tenant"]))
    })]);

    assert_eq!(
        matched(&server, "https://acme.example.com/user").await,
        (200, "tenant acme")
    );
    assert_eq!(
        matched(&server, "https://Globex.Example.com/user?x=1").await,
        (200, "tenant globex")
    );
    // One label only (MSW would take "a.b"; `*` spans labels).
    assert_unmatched(&server, "https://a.b.example.com/user").await;
    assert_unmatched(&server, "https://example.com/user").await;
    assert_unmatched(&server, "https://acme.example.org/user").await;
    assert_unmatched(&server, "https://acme.example.com:8443/user").await;
    assert_unmatched(&server, "http://acme.example.com/user").await;
    assert_unmatched(&server, "https://acme.example.com/users").await;
}

#[tokio::test]
async fn host_param_between_labels_and_inside_a_label() {
    let server = listening([
        http::get("https://api.:region.example.com/*", echo_params),
        http::get("https://cdn-:zone.example.com/x", echo_params),
        http::get("https://edge.:pop?.example.net/x", echo_params),
    ]);

    assert_eq!(
        params_of(&server, "https://api.eu.example.com/v1/items").await,
        json!({ "region": "eu", "0": "v1/items" })
    );
    assert_unmatched(&server, "https://api.eu.west.example.com/v1").await;
    assert_unmatched(&server, "https://api.example.com/v1").await;

    assert_eq!(
        params_of(&server, "https://cdn-us1.example.com/x").await,
        json!({ "zone": "us1" })
    );
    assert_unmatched(&server, "https://cdn-.example.com/x").await;
    assert_unmatched(&server, "https://cdn-us.east.example.com/x").await;

    // An optional label after a '.'.
    assert_eq!(
        params_of(&server, "https://edge.example.net/x").await,
        json!({})
    );
    assert_eq!(
        params_of(&server, "https://edge.fra.example.net/x").await,
        json!({ "pop": "fra" })
    );
}

#[tokio::test]
async fn host_and_path_params_together() {
    let server = listening([
        http::get("https://:tenant.example.com/users/:id", echo_params),
        http::get("http://:service.internal:*/v/:version/*", echo_params),
    ]);

    assert_eq!(
        params_of(&server, "https://acme.example.com/users/7").await,
        json!({ "tenant": "acme", "id": "7" })
    );
    assert_unmatched(&server, "https://acme.example.com/users").await;
    assert_eq!(
        params_of(&server, "http://billing.internal:9000/v/2/a/b").await,
        json!({ "service": "billing", "0": "9000", "version": "2", "1": "a/b" })
    );
    assert_eq!(
        params_of(&server, "http://billing.internal/v/2/a").await,
        json!({ "service": "billing", "version": "2", "1": "a" })
    );
}

/// Enough handlers for the lookup to use its index: a host-param handler
/// must be found by path, never filed under a literal origin.
#[tokio::test]
async fn host_params_are_found_among_many_indexed_handlers() {
    let mut handlers: Vec<_> = (0..40)
        .map(|i| {
            http::get(format!("https://api.example.com/items/{i}"), move |_| {
                HttpResponse::text(format!("literal {i}"))
            })
        })
        .collect();
    handlers.push(http::get("https://:tenant.example.com/items/:id", |args| {
        HttpResponse::text(format!("{} {}", &args.params["tenant"], &args.params["id"]))
    }));
    let server = listening(handlers);

    assert_eq!(
        matched(&server, "https://api.example.com/items/3").await,
        (200, "literal 3")
    );
    assert_eq!(
        matched(&server, "https://api.example.com/items/99").await,
        (200, "api 99")
    );
    assert_eq!(
        matched(&server, "https://acme.example.com/items/3").await,
        (200, "acme 3")
    );
    assert_unmatched(&server, "https://acme.example.com/things/3").await;
}

/// End to end for the host patterns, through the loopback listener: the
/// host arrives with CONNECT and TLS, the handler still sees it as the
/// request URL's host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_param_through_the_listener() {
    let server = listening([http::get("https://:tenant.example.com/user", echo_params)]);
    let client = server.reqwest_client();

    let response = client
        .get("https://acme.example.com/user")
        .send()
        .await
        .expect("a mocked response");
    assert_eq!(response.status(), 200);
    let params: Value = response.json().await.expect("params JSON");
    assert_eq!(params, json!({ "tenant": "acme" }));
}

#[tokio::test]
async fn wildcard_port_matches_any_port_or_none() {
    let server = listening([http::get("http://localhost:*/x", echo_params)]);

    assert_eq!(
        params_of(&server, "http://localhost:3000/x").await,
        json!({ "0": "3000" })
    );
    assert_eq!(params_of(&server, "http://localhost/x").await, json!({}));
    // The scheme still has to match.
    assert_unmatched(&server, "https://localhost/x").await;
    assert_unmatched(&server, "http://localhost:3000/y").await;
}

#[tokio::test]
async fn repeated_param_name_keeps_the_last_value() {
    let server = listening([http::get("/a/:id/b/:id", echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/a/1/b/2").await,
        json!({ "id": "2" })
    );
}

// ──────────────────────── other predicate kinds ────────────────────────

#[tokio::test]
async fn regex_predicate_matches_the_clean_url_and_names_params() {
    let regex = Regex::new(r"^https://api\.example\.com/posts/(?<id>\d+)$").unwrap();
    let server = listening([http::get(regex, echo_params)]);

    assert_eq!(
        params_of(&server, "https://api.example.com/posts/7").await,
        json!({ "id": "7" })
    );
    // The regex sees no query string, so `$` still holds.
    assert_eq!(
        params_of(&server, "https://api.example.com/posts/7?expand=1").await,
        json!({ "id": "7" })
    );
    assert_unmatched(&server, "https://api.example.com/posts/abc").await;
    assert_unmatched(&server, "https://other.example.com/posts/7").await;
}

/// End to end: this family through a real reqwest client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_predicate_decides_with_a_closure() {
    let client = serve([http::get(
        Predicate::custom(|request| request.header("x-mock") == Some("yes")),
        |_| HttpResponse::text("custom"),
    )]);

    let response = client
        .get("https://api.example.com/anything")
        .header("x-mock", "yes")
        .await;
    assert_eq!(response.text(), "custom");

    client
        .get("https://api.example.com/anything")
        .header("x-mock", "no")
        .expect_unhandled()
        .await;
    client
        .get("https://api.example.com/anything")
        .expect_unhandled()
        .await;
}

// ───────────────────────────── methods ─────────────────────────────

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"];

/// For each method, whether the engine answered a request with it (a 200).
async fn answered_methods(server: &Server, url: &str) -> Vec<&'static str> {
    let mut answered = Vec::new();
    for method in METHODS {
        let method_value = Method::from_bytes(method.as_bytes()).unwrap();
        if let Some(response) = resolve(server, method_value, url).await {
            assert_eq!(response.status(), 200, "{method} {url}");
            answered.push(method);
        }
    }
    answered
}

#[tokio::test]
async fn get_handler_does_not_match_head() {
    let server = listening([http::get("/resource", |_| HttpResponse::text("got"))]);

    let head = resolve(&server, Method::HEAD, "https://api.example.com/resource").await;
    assert!(head.is_none(), "{head:?}");
    assert_eq!(
        matched(&server, "https://api.example.com/resource").await,
        (200, "got")
    );
}

#[tokio::test]
async fn head_handler_matches_head() {
    let server = listening([http::head("/resource", |_| {
        HttpResponse::empty().header("x-handler", "head")
    })]);

    let response = resolve(&server, Method::HEAD, "https://api.example.com/resource").await;
    let response = response.expect("HEAD is answered");
    assert_eq!(response.status(), 200);
    assert_eq!(response.header("x-handler"), "head");
    assert_eq!(
        answered_methods(&server, "https://api.example.com/resource").await,
        ["HEAD"]
    );
}

/// End to end: this family through a real reqwest client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_handler_matches_every_method() {
    let client = serve([http::all("/resource", |args| {
        HttpResponse::empty().header("x-method", args.request.method().as_str())
    })]);

    for method in METHODS {
        let response = client
            .request(
                Method::from_bytes(method.as_bytes()).unwrap(),
                "https://api.example.com/resource",
            )
            .await;
        assert_eq!(response.header("x-method"), method);
    }
}

#[tokio::test]
async fn each_method_handler_matches_only_its_method() {
    type Make = fn(&'static str) -> mocklib::Handler;
    let cases: [(&str, Make); 6] = [
        ("GET", |p| http::get(p, |_| HttpResponse::empty())),
        ("POST", |p| http::post(p, |_| HttpResponse::empty())),
        ("PUT", |p| http::put(p, |_| HttpResponse::empty())),
        ("PATCH", |p| http::patch(p, |_| HttpResponse::empty())),
        ("DELETE", |p| http::delete(p, |_| HttpResponse::empty())),
        ("OPTIONS", |p| http::options(p, |_| HttpResponse::empty())),
    ];
    for (method, make) in cases {
        let server = listening([make("/resource")]);
        assert_eq!(
            answered_methods(&server, "https://api.example.com/resource").await,
            [method],
            "handler for {method}"
        );
    }
}

// ───────────────────────── invalid patterns ─────────────────────────

#[test]
#[should_panic(expected = "invalid path pattern \"/posts/:/x\" at position 7")]
fn invalid_pattern_panics_when_the_handler_is_created() {
    let _ = http::get("/posts/:/x", |_| HttpResponse::empty());
}

#[test]
#[should_panic(
    expected = "invalid path pattern \"https://api.example.com:abc/user\" at position 24"
)]
fn invalid_port_panics_naming_its_position() {
    let _ = http::post("https://api.example.com:abc/user", |_| {
        HttpResponse::empty()
    });
}

#[test]
#[should_panic(expected = "invalid path pattern \"https://:.example.com/user\" at position 8")]
fn empty_host_param_name_panics_naming_its_position() {
    let _ = http::get("https://:.example.com/user", |_| HttpResponse::empty());
}

#[test]
fn invalid_host_params_are_refused_with_their_position() {
    let cases = [
        // Host and path are different parts of the URL.
        ("https://:id.example.com/users/:id", 30, "used twice"),
        (
            "http://localhost::port/x",
            17,
            "cannot be a named parameter",
        ),
        ("http://localhost:port/x", 17, "is not a port"),
        ("https://:sub?.example.com/x", 12, "right after a '.'"),
    ];
    for (pattern, position, reason) in cases {
        let error = http::try_get(pattern, |_| HttpResponse::empty()).expect_err(pattern);
        assert_eq!(error.pattern, pattern);
        assert_eq!(error.position, position, "{error}");
        assert!(error.reason.contains(reason), "{error}");
    }
}

#[test]
fn try_get_returns_the_pattern_error_with_its_position() {
    let error =
        http::try_get("/users/{id}", |_| HttpResponse::empty()).expect_err("'{' is not allowed");
    assert_eq!(error.pattern, "/users/{id}");
    assert_eq!(error.position, 7);
    assert!(error.reason.contains('{'), "{error}");
    // The message points at the position with a caret.
    assert!(
        error.to_string().ends_with("\n  /users/{id}\n         ^"),
        "{error}"
    );

    let error = http::try_get("users/:id", |_| HttpResponse::empty()).expect_err("not a path");
    assert_eq!(error.position, 0);

    assert!(http::try_get("/users/:id", |_| HttpResponse::empty()).is_ok());
}

// ───────────────────────────── listing ─────────────────────────────

#[tokio::test]
async fn list_handlers_shows_method_and_predicate_headers() {
    let server = setup_server([
        http::get("https://api.example.com/user", |_| HttpResponse::empty()),
        http::post("/posts", |_| HttpResponse::empty()),
        http::put("https://:Tenant.Example.com/users/:id", |_| {
            HttpResponse::empty()
        }),
        http::delete("/posts/:id", |_| HttpResponse::empty()),
        http::all("*", |_| ()),
        http::get(Regex::new(r"/items/\d+$").unwrap(), |_| {
            HttpResponse::empty()
        }),
        http::patch(Predicate::custom(|_| true), |_| HttpResponse::empty()),
    ]);
    server.listen();
    server.use_handlers([http::head("/ping", |_| HttpResponse::empty()).once()]);

    let headers: Vec<String> = server
        .list_handlers()
        .iter()
        .map(|handler| handler.header().to_owned())
        .collect();
    assert_eq!(
        headers,
        [
            "HEAD /ping",
            "GET https://api.example.com/user",
            "POST /posts",
            // As written, not normalized.
            "PUT https://:Tenant.Example.com/users/:id",
            "DELETE /posts/:id",
            "ALL *",
            r"GET //items/\d+$/",
            "PATCH <custom predicate>",
        ]
    );
    // Display marks once-handlers.
    assert_eq!(server.list_handlers()[0].to_string(), "HEAD /ping (once)");
}
