//! `mocklib check --har FILE --against URL`: a HAR file recorded by
//! `mocklib serve --record` from an API on loopback, the API changed, and
//! the report and exit status that CI sees.

use crate::common::*;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::json;

/// The API as recorded, and once `changed` is set, as it is today.
fn api(changed: Arc<AtomicBool>) -> axum::Router {
    use axum::routing::get;
    let now = |changed: &AtomicBool| changed.load(Ordering::SeqCst);
    axum::Router::new()
        .route(
            "/users/1",
            get(move |State(changed): State<Arc<AtomicBool>>| async move {
                axum::Json(if now(&changed) {
                    json!({"id": "1", "full_name": "Kate", "seen": "2025-06-30"})
                } else {
                    json!({"id": 1, "name": "Kate", "seen": "2024-01-01"})
                })
            }),
        )
        .route(
            "/health",
            get(move |State(changed): State<Arc<AtomicBool>>| async move {
                if now(&changed) {
                    (StatusCode::SERVICE_UNAVAILABLE, "down")
                } else {
                    (StatusCode::OK, "up")
                }
            }),
        )
        .route(
            "/export",
            get(move |State(changed): State<Arc<AtomicBool>>| async move {
                if now(&changed) {
                    ([("content-type", "text/csv")], "id\n1\n").into_response()
                } else {
                    axum::Json(json!([{"id": 1}])).into_response()
                }
            }),
        )
        .route(
            // A value that differs on every request, never its shape.
            "/clock",
            get(|| async {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                axum::Json(json!({"nanos": now.unwrap().as_nanos().to_string()}))
            }),
        )
        .with_state(changed)
}

/// `mocklib check ARGS` run in `dir`.
fn check(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the mocklib command runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Records the API's four answers through `mocklib serve --record` and
/// curl into `dir`/recorded.har.
fn record(dir: &Path, upstream: std::net::SocketAddr) {
    let serve = Serve::start(dir, &["--record", "recorded.har"]);
    let proxy = serve.variables["MOCKLIB_PROXY_URL"].clone();
    for path in ["/users/1", "/health", "/export", "/clock"] {
        curl(&["--proxy", &proxy, &format!("http://{upstream}{path}")]);
    }
    eventually("the recording", || {
        let text = std::fs::read_to_string(dir.join("recorded.har")).ok()?;
        let har: serde_json::Value = serde_json::from_str(&text).ok()?;
        (har["log"]["entries"].as_array()?.len() == 4).then_some(())
    });
    assert!(serve.terminate().success());
}

#[test]
fn drift_is_reported_per_entry_with_exit_status_1_and_as_json() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let changed = Arc::new(AtomicBool::new(false));
    let upstream = runtime.block_on(spawn_upstream(api(Arc::clone(&changed))));
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), upstream);
    // The recorded origin is 127.0.0.1; the check goes to localhost.
    let live = format!("http://localhost:{}", upstream.port());
    let args = ["--har", "recorded.har", "--against", &live];

    let output = check(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        format!("recorded.har against {live}/: no drift in 4 entries\n")
    );

    changed.store(true, Ordering::SeqCst);
    let output = check(dir.path(), &args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        format!(
            "recorded.har against {live}/: 3 of 4 entries drifted (expected -> received)\n\
             entry 0 GET {live}/users/1\n  \
             type changed /id: number -> string\n  \
             field removed /name: string\n  \
             field added /full_name: string\n\
             entry 1 GET {live}/health\n  \
             status: 200 -> 503\n\
             entry 2 GET {live}/export\n  \
             content type: application/json -> text/csv\n"
        )
    );

    let output = check(dir.path(), &[&args[..], &["--json"]].concat());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["drift"], true);
    assert_eq!(report["expected_from"], "recorded.har");
    assert_eq!(report["received_from"], format!("{live}/"));
    assert_eq!(
        report["entries"][0],
        json!({
            "index": 0, "method": "GET", "url": format!("{live}/users/1"),
            "findings": [
                {"kind": "type_changed", "pointer": "/id", "expected": "number", "received": "string"},
                {"kind": "field_removed", "pointer": "/name", "expected": "string", "received": null},
                {"kind": "field_added", "pointer": "/full_name", "expected": null, "received": "string"},
            ]
        })
    );
    assert_eq!(
        report["entries"][1]["findings"],
        json!([{"kind": "status", "pointer": "", "expected": "200", "received": "503"}])
    );
    assert_eq!(
        report["entries"][2]["findings"],
        json!([{"kind": "content_type", "pointer": "", "expected": "application/json", "received": "text/csv"}])
    );
    assert_eq!(report["entries"][3]["findings"], json!([]));

    // What is ignored is not drift; the status is still.
    let output = check(
        dir.path(),
        &[&args[..], &["--ignore", "", "--json"]].concat(),
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["entries"][0]["findings"], json!([]));
    assert_eq!(report["entries"][1]["findings"][0]["kind"], "status");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn an_api_that_is_down_fails_every_entry_with_exit_status_1() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(spawn_upstream(api(Arc::default())));
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), upstream);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);

    let output = check(
        dir.path(),
        &["--har", "recorded.har", "--against", &down, "--json"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    for entry in entries {
        let findings = entry["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{entry}");
        assert_eq!(findings[0]["kind"], "request_failed");
        assert_eq!(findings[0]["expected"], "200");
        let why = findings[0]["received"].as_str().unwrap();
        assert!(why.contains("the connection was refused"), "{why}");
    }
    let output = check(dir.path(), &["--har", "recorded.har", "--against", &down]);
    assert!(
        stdout(&output).contains("\n  request failed (expected 200): upstream GET "),
        "{}",
        stdout(&output)
    );
}

#[test]
fn usage_errors_exit_2_and_an_unusable_har_file_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.har"), r#"{"log": {"entries": []}}"#).unwrap();
    std::fs::write(dir.path().join("broken.har"), "{\"log\": ").unwrap();

    let output = check(dir.path(), &["--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).starts_with("usage: mocklib check --har FILE --against URL"));

    for (args, says) in [
        (
            &["--har", "empty.har"][..],
            "--against URL (the live API) or --openapi FILE (its description) is missing",
        ),
        (
            &[
                "--har",
                "empty.har",
                "--against",
                "http://localhost:1",
                "--verbose",
            ][..],
            "unknown argument \"--verbose\"",
        ),
        (
            &["--har", "empty.har", "--against", "ftp://localhost"][..],
            "the base URL \"ftp://localhost\" cannot be used",
        ),
        (
            &[
                "--har",
                "empty.har",
                "--against",
                "http://localhost:1",
                "--ignore",
                "meta",
            ][..],
            "the ignored pointer \"meta\" cannot be used",
        ),
    ] {
        let output = check(dir.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
    }

    for (file, says) in [
        ("missing.har", "could not read the HAR file missing.har"),
        ("broken.har", "broken.har is not a HAR document"),
    ] {
        let output = check(
            dir.path(),
            &["--har", file, "--against", "http://localhost:1"],
        );
        assert_eq!(output.status.code(), Some(3), "{file}");
        assert!(stderr(&output).contains(says), "{}", stderr(&output));
    }

    // No entries: nothing drifted.
    let output = check(
        dir.path(),
        &["--har", "empty.har", "--against", "http://localhost:1"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "empty.har against http://localhost:1/: no drift in 0 entries\n"
    );
}

/// `--openapi`: the recorded exchanges checked against the API's
/// description, nothing sent (the upstream is gone by then): a recorded
/// field the schema lacks, a path it does not document; exit status 1;
/// a document that does not read is exit status 5.
#[test]
fn a_recording_is_checked_against_an_openapi_document_without_network() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(spawn_upstream(api(Arc::new(AtomicBool::new(false)))));
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), upstream);
    drop(runtime); // the API is down: the check must not need it
    std::fs::write(
        dir.path().join("api.yaml"),
        format!(
            r#"
openapi: 3.0.3
info: {{ title: Users API, version: "2" }}
servers: [{{ url: "http://{upstream}" }}]
paths:
  /users/{{id}}:
    get:
      operationId: getUser
      parameters: [{{ name: id, in: path, required: true, schema: {{ type: integer }} }}]
      responses:
        "200":
          description: a user
          content:
            application/json:
              schema:
                type: object
                additionalProperties: false
                required: [id, fullName]
                properties: {{ id: {{ type: integer }}, fullName: {{ type: string }}, seen: {{ type: string }} }}
  /health:
    get:
      responses: {{ "200": {{ description: up, content: {{ text/plain: {{ schema: {{ type: string }} }} }} }} }}
  /export:
    get:
      responses: {{ "200": {{ description: rows, content: {{ application/json: {{ schema: {{ type: array }} }} }} }} }}
"#
        ),
    )
    .unwrap();
    let output = check(
        dir.path(),
        &["--har", "recorded.har", "--openapi", "api.yaml", "--json"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["drift"], true);
    assert_eq!(report["expected_from"], "Users API");
    let findings: Vec<(String, String, String)> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|entry| {
            let url = entry["url"].as_str().unwrap().to_owned();
            entry["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |finding| {
                    assert_eq!(finding["kind"], "contract", "{finding}");
                    (
                        url.rsplit('/').next().unwrap().to_owned(),
                        finding["pointer"].as_str().unwrap().to_owned(),
                        finding["operation"].as_str().unwrap_or_default().to_owned(),
                    )
                })
        })
        .collect();
    assert_eq!(
        findings,
        [
            // `name` where `fullName` is required, and not allowed.
            (
                "1".to_owned(),
                "/response/body".to_owned(),
                "getUser".to_owned()
            ),
            (
                "1".to_owned(),
                "/response/body".to_owned(),
                "getUser".to_owned()
            ),
            (
                "clock".to_owned(),
                "/request/path".to_owned(),
                String::new()
            ),
        ],
        "{report}"
    );

    std::fs::write(dir.path().join("broken.yaml"), "openapi: [").unwrap();
    let output = check(
        dir.path(),
        &["--har", "recorded.har", "--openapi", "broken.yaml"],
    );
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    let output = check(
        dir.path(),
        &[
            "--har",
            "recorded.har",
            "--openapi",
            "api.yaml",
            "--against",
            "http://x",
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}
