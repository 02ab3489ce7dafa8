//! `fault:` and `passthrough:` entries of handler files: the transport
//! failures as curl and Python's `requests` see them, cut and paced
//! bodies, the real request performed through the proxy, and both through
//! the admin API.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;

const FAULTS_YAML: &str = r#"
- path: /reset
  fault: connection_reset
- path: /empty
  fault: EmptyResponse
- path: /garbage
  fault: garbage
- path: /chunk
  fault: malformed_chunk
  headers: { x-head: sent }
- method: GET
  path: /cut
  fault: { truncate_after: 4 }
  body: "0123456789"
- path: /slow
  fault: { dribble_ms: 600 }
  json: { rows: [ 1, 2, 3 ] }
"#;

/// curl's exit code and what it printed (headers included with `-i`).
fn curl_exit(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new("curl")
        .args(["--silent", "--max-time", "20"])
        .args(args)
        .output()
        .expect("curl runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn fault_entries_fail_the_connection_or_the_body_as_curl_and_python_see_them() {
    let dir = with_handler_file(FAULTS_YAML);
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let url = |path: &str| format!("{}{path}", serve.url());

    // curl's exit codes, as the table of `Fault`'s docs has them.
    assert_eq!(curl_exit(&[&url("/reset")]).0, Some(56));
    assert_eq!(curl_exit(&[&url("/empty")]).0, Some(52));
    assert_eq!(curl_exit(&[&url("/garbage")]).0, Some(1));
    let (code, printed) = curl_exit(&["-i", &url("/chunk")]);
    assert_eq!(code, Some(56), "{printed}");
    assert!(printed.contains("x-head: sent"), "{printed}");
    let (code, printed) = curl_exit(&[&url("/cut")]);
    assert_eq!((code, printed.as_str()), (Some(18), "0123"));
    let started = Instant::now();
    let (code, printed) = curl_exit(&[&url("/slow")]);
    assert_eq!((code, printed.as_str()), (Some(0), r#"{"rows":[1,2,3]}"#));
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );

    // Python's requests: the error each raises (through the proxy its
    // environment names, a broken connection is a `ProxyError`, which is a
    // `ConnectionError`).
    let printed = python(
        &serve,
        "import os, requests\n\
         for path in ['/reset', '/empty', '/cut']:\n    \
             try:\n        \
                 requests.get(os.environ['MOCKLIB_URL'] + path, timeout=30).content\n        \
                 print(path, 'answered')\n    \
             except requests.RequestException as error:\n        \
                 broken = isinstance(error, requests.ConnectionError)\n        \
                 print(path, 'ConnectionError' if broken else type(error).__name__)\n",
        &[],
    );
    assert_eq!(
        printed,
        "/reset ConnectionError\n/empty ConnectionError\n/cut ChunkedEncodingError\n",
        "{}",
        serve.stderr()
    );
}

#[test]
fn a_passthrough_entry_lets_the_real_server_answer_through_the_proxy() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(spawn_upstream(
        axum::Router::new().route("/user", axum::routing::get(|| async { "from upstream" })),
    ));
    let dir = with_handler_file(&format!(
        "- path: http://{upstream}/user\n  passthrough: true\n  match: {{ headers: {{ x-real: \"1\" }} }}\n\
         - path: http://{upstream}/user\n  body: mocked\n"
    ));
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();
    let target = format!("http://{upstream}/user");
    assert_eq!(
        curl(&["--proxy", &proxy, "-H", "x-real: 1", &target]),
        "from upstream"
    );
    assert_eq!(curl(&["--proxy", &proxy, &target]), "mocked");
    let journal = get_json(&format!("{}/__mocklib/requests", serve.url()));
    assert_eq!(journal[0]["answer"], "passthrough", "{journal}");
    assert_eq!(journal[1]["answer"], "mocked", "{journal}");
}

#[test]
fn fault_and_passthrough_entries_added_through_the_admin_api_answer_and_bad_ones_get_their_pointer()
{
    let dir = with_handler_file("[]");
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let admin = format!("{}/__mocklib/handlers", serve.url());
    let (status, body) = post_yaml(
        &admin,
        "- path: /gone\n  fault: empty_response\n  once: true\n- path: /gone\n  body: back\n",
    );
    assert_eq!((status, body.as_str()), (201, r#"{"added":2}"#));
    let gone = format!("{}/gone", serve.url());
    assert_eq!(curl_exit(&[&gone]).0, Some(52));
    assert_eq!(curl_exit(&[&gone]), (Some(0), "back".to_owned()));

    admin_refuses(
        &admin,
        &[
            (
                "- path: /a\n  fault: timeout\n",
                "/0/fault",
                "entry 1 (ALL /a): fault: unknown fault",
            ),
            (
                "- path: /a\n  fault: { truncate_after: -1 }\n  body: x\n",
                "/0/fault",
                "fault: invalid value",
            ),
            (
                "- path: /a\n  passthrough: false\n",
                "/0/passthrough",
                "passthrough: only `true`",
            ),
            (
                "- path: /a\n  passthrough: true\n  status: 200\n",
                "/0/status",
                "`status` does not go on a passthrough entry",
            ),
        ],
    );
}
