//! `proxy:` entries of handler files: the real request performed against
//! an upstream on loopback, reached through `mocklib serve`'s proxy by
//! curl and Python's `requests`, its answer altered; and through the
//! admin API.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::*;

/// An upstream answering `/users/1` (JSON, with an etag) and `/motd`
/// (text); and how many requests it got.
fn upstream(runtime: &tokio::runtime::Runtime) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    let app = axum::Router::new()
        .route(
            "/users/1",
            axum::routing::get(|| async {
                (
                    [("etag", "\"abc\""), ("x-upstream", "yes")],
                    axum::Json(serde_json::json!({
                        "id": 1, "name": "Kate", "secret": "s3cret", "plan": { "tier": "free" }
                    })),
                )
            }),
        )
        .route("/motd", axum::routing::get(|| async { "hello world" }))
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let counted = Arc::clone(&counted);
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    next.run(request).await
                }
            },
        ));
    (runtime.block_on(spawn_upstream(app)), hits)
}

#[test]
fn a_proxy_entry_alters_the_real_answer_for_curl_and_python() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (upstream, hits) = upstream(&runtime);
    // (A format string, braces doubled: not one of the documents
    // tests/it/schema.rs collects.)
    let dir = with_handler_file(&format!(
        r#"
# the upstream's address is filled in
- method: GET
  path: http://{upstream}/users/:id
  proxy:
    status: 299
    headers: {{ x-mocked: "yes", etag: null }}
    json_patch: {{ secret: null, plan: {{ tier: pro }} }}
- path: http://{upstream}/motd
  proxy:
    body: "{{{{ response.body | upper }}}} ({{{{ response.status }}}}, {{{{ request.method }}}})"
"#
    ));
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();

    let answer = curl(&[
        "-sS",
        "-i",
        "--proxy",
        &proxy,
        &format!("http://{upstream}/users/1"),
    ]);
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 299"), "{answer}");
    assert!(
        head.contains("x-mocked: yes") && head.contains("x-upstream: yes"),
        "{answer}"
    );
    assert!(!head.contains("etag"), "{answer}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(body).unwrap(),
        serde_json::json!({ "id": 1, "name": "Kate", "plan": { "tier": "pro" } })
    );

    // Python's requests, through the proxy its environment names.
    let printed = python(
        &serve,
        "import requests, sys\n\
         response = requests.get(sys.argv[1], timeout=30)\n\
         print(response.status_code, response.text, end='')",
        &[&format!("http://{upstream}/motd")],
    );
    assert_eq!(printed, "200 HELLO WORLD (200, GET)", "{}", serve.stderr());
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[test]
fn a_proxy_entry_answers_502_when_the_real_request_or_its_json_fails() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (upstream, _) = upstream(&runtime);
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = with_handler_file(&format!(
        "- path: http://{closed}/gone\n  proxy: {{ status: 200 }}\n\
         - path: http://{upstream}/motd\n  proxy: {{ json_patch: {{ a: 1 }} }}\n\
         - path: http://127.0.0.1:*/loop\n  proxy: {{ headers: {{ x-looped: \"no\" }} }}\n"
    ));
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();
    let via_proxy = |url: &str| call(None, &["--proxy", &proxy, url]);

    let (status, body) = via_proxy(&format!("http://{closed}/gone"));
    assert_eq!(status, 502, "{body}");
    assert!(body.contains("bypass() of GET"), "{body}");
    let (status, body) = via_proxy(&format!("http://{upstream}/motd"));
    assert_eq!(status, 502, "{body}");
    assert!(
        body.contains("proxy.json_patch: the real body is not JSON"),
        "{body}"
    );
    // Addressed to `mocklib serve` itself: the real request comes back to
    // it and is refused as a loop (508), not performed again and again.
    let (status, body) = get(&format!("{}/loop", serve.url()));
    assert_eq!(status, 508, "{body}");
    assert!(body.contains("would loop"), "{body}");
}

#[test]
fn a_proxy_entry_added_through_the_admin_api_answers_and_a_bad_one_gets_its_pointer() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (upstream, _) = upstream(&runtime);
    let dir = with_handler_file("[]");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let admin = format!("{}/__mocklib/handlers", serve.url());
    let (status, body) = post_yaml(
        &admin,
        &format!("- path: http://{upstream}/motd\n  proxy: {{ status: 203 }}\n"),
    );
    assert_eq!((status, body.as_str()), (201, r#"{"added":1}"#));
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();
    assert_eq!(
        call(
            None,
            &["--proxy", &proxy, &format!("http://{upstream}/motd")]
        ),
        (203, "hello world".to_owned())
    );

    admin_refuses(
        &admin,
        &[
            (
                "- path: /users\n  proxy: { status: 200 }\n",
                "/0/path",
                "path: a proxy entry performs the real request, so it needs an absolute URL",
            ),
            (
                "- path: https://a.example/x\n  proxy: { body: \"{{ x\" }\n",
                "/0/proxy/body",
                "proxy.body: not a template",
            ),
            (
                "- path: https://a.example/x\n  proxy: { status: 99 }\n",
                "/0/proxy/status",
                "proxy.status: invalid status 99",
            ),
            (
                "- path: https://a.example/x\n  proxy: { json_patch: {}, body: x }\n",
                "/0/proxy",
                "proxy: give json_patch or body, not both",
            ),
            (
                "- path: https://a.example/x\n  proxy: { stauts: 200 }\n",
                "/0/proxy/stauts",
                "unknown field `stauts`",
            ),
            (
                "- path: https://a.example/x\n  proxy: {}\n  json: {}\n",
                "/0/json",
                "`json` does not go on a proxy entry; it takes method, path, proxy",
            ),
        ],
    );
}
