//! Drift of recordings: a HAR file recorded for real from an API on
//! loopback, the API changed, and the check reports exactly what changed
//! in shape, status and content type, and nothing of the values that
//! change from run to run.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::common::TestClient;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use mocklib::har::{self, Drift, DriftReport, HarError, Recording};
use mocklib::node::setup_server;
use serde_json::{Value, json};

/// The API as recorded, and once `changed` is set, as it is today.
fn api(changed: Arc<AtomicBool>) -> axum::Router {
    use axum::routing::{delete, get, post};
    axum::Router::new()
        .route(
            "/users/1",
            get(|State(changed): State<Arc<AtomicBool>>| async move {
                axum::Json(if changed.load(Ordering::SeqCst) {
                    // `name` renamed, `id` a string; other values, more tags.
                    json!({"id": "1", "full_name": "Kate", "tags": ["x", "y", "z"],
                           "created": "2025-06-30T12:00:00Z"})
                } else {
                    json!({"id": 1, "name": "Kate", "tags": ["a"], "created": "2024-01-01T00:00:00Z"})
                })
            }),
        )
        .route(
            "/items",
            get(
                |State(changed): State<Arc<AtomicBool>>,
                 axum::extract::RawQuery(query): axum::extract::RawQuery| async move {
                    if query.as_deref() != Some("page=1&sort=asc") {
                        return (StatusCode::BAD_REQUEST, "the query was lost").into_response();
                    }
                    axum::Json(if changed.load(Ordering::SeqCst) {
                        json!({"items": [{"id": 9, "price": "4.00"}], "total": 1})
                    } else {
                        json!({"items": [{"id": 1, "price": 1.5}, {"id": 2, "price": 3}], "total": 2})
                    })
                    .into_response()
                },
            ),
        )
        .route(
            "/health",
            get(|State(changed): State<Arc<AtomicBool>>| async move {
                if changed.load(Ordering::SeqCst) {
                    (StatusCode::SERVICE_UNAVAILABLE, "down")
                } else {
                    (StatusCode::OK, "up")
                }
            }),
        )
        .route(
            "/export",
            get(|State(changed): State<Arc<AtomicBool>>| async move {
                if changed.load(Ordering::SeqCst) {
                    ([("content-type", "text/csv")], "id\n1\n").into_response()
                } else {
                    axum::Json(json!({"rows": [{"id": 1}]})).into_response()
                }
            }),
        )
        .route(
            // Values that differ on every request, the shape never.
            "/clock",
            get(|| async {
                static CALLS: AtomicU64 = AtomicU64::new(0);
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap();
                axum::Json(json!({"now": now.as_nanos().to_string(),
                                  "calls": CALLS.fetch_add(1, Ordering::SeqCst)}))
            }),
        )
        .route("/orders", post(order))
        .route(
            "/session",
            delete(|State(changed): State<Arc<AtomicBool>>| async move {
                if changed.load(Ordering::SeqCst) {
                    (StatusCode::OK, "bye").into_response()
                } else {
                    StatusCode::NO_CONTENT.into_response()
                }
            }),
        )
        .with_state(changed)
}

/// Creates an order when the request has the key of the day, no
/// credential but the recording's, and the recorded body: so an unchanged
/// answer proves the check sent the body and the headers it was told to,
/// and not the redacted ones.
async fn order(
    State(changed): State<Arc<AtomicBool>>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let key = if changed.load(Ordering::SeqCst) {
        "key-of-today"
    } else {
        "key-at-recording"
    };
    if headers.get("x-api-key").and_then(|v| v.to_str().ok()) != Some(key) {
        return (StatusCode::UNAUTHORIZED, "wrong key").into_response();
    }
    let credential = headers.get("authorization").map(|v| v.as_bytes());
    if credential.is_some_and(|credential| credential != b"Bearer old-token") {
        return (StatusCode::BAD_REQUEST, "a redacted credential was sent").into_response();
    }
    (
        StatusCode::CREATED,
        axum::Json(json!({"id": 7, "qty": body["qty"]})),
    )
        .into_response()
}

/// Records the seven requests of the scenario into `path`, for real,
/// through mocklib; the API key and the credential are redacted.
async fn record(upstream: std::net::SocketAddr, path: &std::path::Path) {
    let server = setup_server([]);
    let client = TestClient::with_options(
        &server,
        common::on_unhandled(mocklib::UnhandledRequest::Error),
    );
    server
        .record(Recording::new(path).redact_header("x-api-key"))
        .unwrap();
    let base = format!("http://{upstream}");
    assert_eq!(client.get(format!("{base}/users/1")).await.status(), 200);
    assert_eq!(
        client
            .get(format!("{base}/items?page=1&sort=asc"))
            .await
            .status(),
        200
    );
    assert_eq!(client.get(format!("{base}/health")).await, (200, "up"));
    assert_eq!(client.get(format!("{base}/export")).await.status(), 200);
    assert_eq!(client.get(format!("{base}/clock")).await.status(), 200);
    let order = client
        .post(format!("{base}/orders"))
        .header("x-api-key", "key-at-recording")
        .header("authorization", "Bearer old-token")
        .json(&json!({"qty": 2}))
        .await;
    assert_eq!(order.status(), 201, "{}", order.text());
    assert_eq!(client.delete(format!("{base}/session")).await.status(), 204);
    server.close();
}

/// Each finding as `entry kind pointer expected actual`.
fn findings(report: &DriftReport) -> Vec<String> {
    report
        .entries
        .iter()
        .flat_map(|entry| {
            entry.findings.iter().map(move |finding| {
                format!(
                    "{} {:?} {} {} {}",
                    entry.index,
                    finding.kind,
                    finding.pointer,
                    finding.expected.as_deref().unwrap_or("-"),
                    finding.received.as_deref().unwrap_or("-")
                )
            })
        })
        .collect()
}

#[tokio::test]
async fn a_changed_api_drifts_from_its_recording_in_shape_status_and_content_type() {
    let changed = Arc::new(AtomicBool::new(false));
    let upstream = test_support::spawn_upstream(api(Arc::clone(&changed))).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.har");
    record(upstream, &path).await;

    // Checked against another origin for the same server: the recorded one
    // names 127.0.0.1, this one localhost.
    let live = format!("http://localhost:{}", upstream.port());
    let drift = Drift::from_path(&path)
        .unwrap()
        .against(&live)
        .header("x-api-key", "key-at-recording");

    // The API as recorded: values changed (the clock, a new order), shapes
    // did not.
    let report = drift.check().await.unwrap();
    assert_eq!(findings(&report), Vec::<String>::new(), "{report}");
    assert!(!report.has_drift());
    assert_eq!(report.entries.len(), 7);
    assert_eq!(
        report.entries[1].url,
        format!("{live}/items?page=1&sort=asc")
    );
    assert_eq!(report.entries[5].method, "POST");
    assert_eq!(
        report.to_string(),
        format!(
            "{} against {live}/: no drift in 7 entries\n",
            path.display()
        )
    );

    changed.store(true, Ordering::SeqCst);
    let report = drift
        .clone()
        .header("x-api-key", "key-of-today")
        .check()
        .await
        .unwrap();
    let all = findings(&report);
    assert_eq!(
        all,
        [
            "0 TypeChanged /id number string",
            "0 FieldRemoved /name string -",
            "0 FieldAdded /full_name - string",
            "1 TypeChanged /items/0/price number string",
            "2 Status  200 503",
            "3 ContentType  application/json text/csv",
            "6 Status  204 200",
            "6 ContentType  (none) text/plain",
            "6 Body  empty not empty",
        ],
        "{report}"
    );
    assert!(report.has_drift());
    assert_eq!(
        report
            .drifted()
            .map(|entry| entry.index)
            .collect::<Vec<_>>(),
        [0, 1, 2, 3, 6]
    );
    let text = report.to_string();
    assert!(
        text.starts_with(&format!(
            "{} against {live}/: 5 of 7 entries drifted (expected -> received)\n\
             entry 0 GET {live}/users/1\n  \
             type changed /id: number -> string\n  \
             field removed /name: string\n  \
             field added /full_name: string\n\
             entry 1 GET {live}/items?page=1&sort=asc\n",
            path.display()
        )),
        "{text}"
    );
    assert!(text.contains("\n  status: 200 -> 503\n"), "{text}");
    assert!(!text.contains("/clock"), "{text}");

    // What is ignored is no drift, and only that: the type change of /id,
    // the status and the content types stay.
    let report = drift
        .header("x-api-key", "key-of-today")
        .ignore("/name")
        .ignore("/full_name")
        .ignore("/items/*/price")
        .check()
        .await
        .unwrap();
    let ignored = [&all[1], &all[2], &all[3]];
    let kept: Vec<&String> = all.iter().filter(|f| !ignored.contains(f)).collect();
    assert_eq!(kept.len(), 6);
    assert_eq!(findings(&report).iter().collect::<Vec<_>>(), kept);
}

#[tokio::test]
async fn an_api_that_is_down_is_a_finding_per_entry_not_an_error() {
    let upstream = test_support::spawn_upstream(api(Arc::default())).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.har");
    record(upstream, &path).await;

    // A port nothing listens on any more.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let report = har::check_drift(&path, format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    assert!(report.has_drift());
    assert_eq!(report.drifted().count(), 7);
    for entry in &report.entries {
        assert_eq!(entry.findings.len(), 1, "{report}");
        let finding = &entry.findings[0];
        assert_eq!(finding.kind, mocklib::har::DriftKind::RequestFailed);
        let why = finding.received.as_deref().unwrap();
        assert!(why.contains("the connection was refused"), "{why}");
    }
    assert_eq!(
        report.entries[6].findings[0].expected.as_deref(),
        Some("204")
    );
}

#[tokio::test]
async fn a_request_without_an_answer_in_time_fails_its_entry_only() {
    let upstream = test_support::spawn_upstream(
        axum::Router::new()
            .route(
                "/slow",
                axum::routing::get(|| async {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    "late"
                }),
            )
            .route("/fast", axum::routing::get(|| async { "now" })),
    )
    .await;
    let entry = |path: &str, text: &str| {
        json!({"request": {"method": "GET", "url": format!("http://{upstream}{path}")},
               "response": {"status": 200, "content": {"mimeType": "text/plain", "text": text}}})
    };
    let har = json!({"log": {"entries": [entry("/slow", "late"), entry("/fast", "now")]}});
    let drift = Drift::from_json(&har.to_string())
        .unwrap()
        .timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let check = drift.check();
    fn runs_on_any_thread<T: Send>(future: T) -> T {
        future
    }
    let report = runs_on_any_thread(check).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        findings(&report),
        ["0 RequestFailed  200 no answer within 300ms"]
    );
    assert_eq!(report.received_from, "the recorded origins");
}

#[tokio::test]
async fn a_malformed_or_missing_file_is_an_error_value() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.har");
    let error = har::check_drift(&missing, "http://127.0.0.1:1")
        .await
        .unwrap_err();
    assert!(matches!(error, HarError::Read { .. }), "{error}");

    let broken = dir.path().join("broken.har");
    std::fs::write(&broken, r#"{"log": {"entries": [{"request": 1}]}}"#).unwrap();
    let error = har::check_drift(&broken, "http://127.0.0.1:1")
        .await
        .unwrap_err();
    assert!(matches!(error, HarError::Parse { .. }), "{error}");

    let error = Drift::from_json(
        r#"{"log": {"entries": [{"request": {"method": "GET", "url": "no url"},
                                 "response": {"status": 200}}]}}"#,
    )
    .unwrap()
    .check()
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "entry 0 of the HAR text cannot be replayed: invalid URL \"no url\": \
         relative URL without a base"
    );
}
