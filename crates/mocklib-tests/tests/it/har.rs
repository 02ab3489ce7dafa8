//! Replaying HAR files: the recorded answers, in order, byte for byte,
//! through reqwest (in-process) and curl (through the listener).

use crate::common;

use crate::common::{TestClient, serve};
use mocklib::har::{self, HarError, Replay};
use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use test_support::curl;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/har/api.har");

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/har/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).unwrap()
}

#[tokio::test]
async fn recorded_exchanges_answer_with_status_headers_and_body() {
    let client = serve(har::handlers(FIXTURE).unwrap());
    // The query matches in any order.
    let users = client
        .get("https://api.example.com/users?sort=name&page=2")
        .await;
    assert_eq!(users, (200, r#"[{"name":"Kate"}]"#));
    assert_eq!(users.headers()["x-total-count"], "42");
    assert_eq!(users.headers()["content-type"], "application/json");
    // The length is the replayed body's, not the recorded header's.
    assert_eq!(users.headers()["content-length"], "17");
    assert!(users.headers().get("connection").is_none());

    // Another query is another request.
    client
        .get("https://api.example.com/users?page=3&sort=name")
        .expect_unhandled()
        .await;

    let created = client
        .post("https://api.example.com/posts")
        .body(r#"{"title":"hello"}"#)
        .await;
    assert_eq!(created, (201, r#"{"id":7}"#));
    assert_eq!(created.headers()["location"], "/posts/7");
}

#[tokio::test]
async fn repeated_requests_replay_in_recorded_order_and_the_last_repeats() {
    let client = serve(har::handlers(FIXTURE).unwrap());
    for expected in ["1", "2", "2"] {
        assert_eq!(
            client.get_text("https://api.example.com/counter").await,
            expected
        );
    }
    client.server().restore_handlers();
    assert_eq!(
        client.get_text("https://api.example.com/counter").await,
        "1"
    );
}

#[tokio::test]
async fn binary_and_compressed_bodies_come_back_byte_for_byte() {
    let client = serve(har::handlers(FIXTURE).unwrap());
    let pixel = client.get("https://cdn.example.com/pixel.png").await;
    assert_eq!(pixel.bytes(), fixture("pixel.png"));
    assert_eq!(pixel.headers()["content-type"], "image/png");

    // Recorded as sent: still gzip, with its header (this reqwest does not
    // decompress).
    let compressed = client.get("https://api.example.com/compressed").await;
    assert_eq!(compressed.headers()["content-encoding"], "gzip");
    assert_eq!(compressed.bytes(), fixture("compressed.json.gz"));

    // Saved by a browser: the body is decoded, so its encoding header goes.
    let decoded = client.get("https://api.example.com/from-browser").await;
    assert_eq!(decoded, (200, "decoded by the browser"));
    assert!(decoded.headers().get("content-encoding").is_none());
}

#[tokio::test]
async fn curl_decompresses_a_replayed_gzip_body_through_the_listener() {
    let server = setup_server(har::handlers(FIXTURE).unwrap());
    server.listen();
    let proxy = server.proxy_url().to_string();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), server.ca_certificate_pem()).unwrap();
    let body = curl(&[
        "-s",
        "--compressed",
        "--proxy",
        &proxy,
        "--cacert",
        ca.path().to_str().unwrap(),
        "https://api.example.com/compressed",
    ]);
    assert_eq!(body, r#"{"compressed":true}"#);
}

#[tokio::test]
async fn handlers_written_by_hand_go_first() {
    let mut handlers = vec![
        http::get("https://api.example.com/counter", |_| {
            HttpResponse::text("by hand")
        }),
        // Returns nothing for anything but `page=2`: falls through to the recording.
        http::get("https://api.example.com/users", |args| {
            let page = args.request.url().query_pairs().find(|(k, _)| k == "page");
            (page.as_ref().map(|(_, v)| v.as_ref()) != Some("2")).then(|| HttpResponse::text("[]"))
        }),
    ];
    handlers.extend(har::handlers(FIXTURE).unwrap());
    let client = serve(handlers);
    assert_eq!(
        client.get_text("https://api.example.com/counter").await,
        "by hand"
    );
    assert_eq!(
        client
            .get_text("https://api.example.com/users?page=1")
            .await,
        "[]"
    );
    assert_eq!(
        client
            .get_text("https://api.example.com/users?page=2&sort=name")
            .await,
        r#"[{"name":"Kate"}]"#
    );
}

#[tokio::test]
async fn matching_on_headers_and_body_and_ignoring_the_query() {
    let replay = Replay::from_path(FIXTURE).unwrap();
    let client = serve(replay.clone().match_body().handlers().unwrap());
    client
        .post("https://api.example.com/posts")
        .body(r#"{"title":"other"}"#)
        .expect_unhandled()
        .await;
    assert_eq!(
        client
            .post("https://api.example.com/posts")
            .body(r#"{"title":"hello"}"#)
            .await,
        (201, r#"{"id":7}"#)
    );

    let client = serve(replay.clone().match_headers(["Accept"]).handlers().unwrap());
    client
        .get("https://api.example.com/counter")
        .header("accept", "text/html")
        .expect_unhandled()
        .await;
    assert_eq!(
        client
            .get("https://api.example.com/counter")
            .header("accept", "*/*")
            .await,
        (200, "1")
    );

    let client = serve(replay.ignore_query().handlers().unwrap());
    assert_eq!(
        client.get("https://api.example.com/users").await.status(),
        200
    );
}

#[tokio::test]
async fn replayed_handlers_name_their_url_and_take_expectations() {
    let handlers = har::handlers(FIXTURE).unwrap();
    let headers: Vec<_> = handlers.iter().map(|h| h.to_string()).collect();
    assert_eq!(
        headers[0],
        "GET https://api.example.com/users?page=2&sort=name"
    );
    assert_eq!(headers[1], "GET https://api.example.com/counter (once)");

    let client = serve(handlers.into_iter().map(|h| h.at_most(1)));
    client.get("https://cdn.example.com/pixel.png").await;
    client.get("https://cdn.example.com/pixel.png").await;
    let report = client.server().verify().unwrap_err().to_string();
    assert!(
        report.contains("GET https://cdn.example.com/pixel.png: expected at most 1, received 2"),
        "{report}"
    );
    // Unhandled requests are told the recorded URL closest to theirs.
    let message = client
        .get("https://api.example.com/countr")
        .expect_unhandled()
        .await;
    assert!(
        message.contains("GET https://api.example.com/counter"),
        "{message}"
    );
}

#[test]
fn errors_say_which_file_and_entry() {
    match har::handlers("/nonexistent/api.har") {
        Err(error @ HarError::Read { .. }) => {
            assert!(
                error.to_string().contains("/nonexistent/api.har"),
                "{error}"
            )
        }
        other => panic!("{other:?}"),
    }
    let error = Replay::from_json("{\"log\": ").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("the HAR text is not a HAR document"),
        "{error}"
    );

    let bad_body = r#"{"log": {"entries": [
        {"request": {"method": "GET", "url": "https://a.example/"}, "response": {"status": 200}},
        {"request": {"method": "GET", "url": "https://a.example/b"},
         "response": {"status": 200, "content": {"text": "%%%", "encoding": "base64"}}}]}}"#;
    let error = Replay::from_json(bad_body).unwrap().handlers().unwrap_err();
    assert_eq!(
        error.to_string(),
        "entry 1 of the HAR text cannot be replayed: the response body is not valid base64"
    );
    let bad_url = r#"{"log": {"entries": [
        {"request": {"method": "GET", "url": "not a url"}, "response": {"status": 200}}]}}"#;
    let error = Replay::from_json(bad_url).unwrap().handlers().unwrap_err();
    assert!(
        error
            .to_string()
            .contains("entry 0 of the HAR text cannot be replayed: invalid URL")
    );
}

#[tokio::test]
async fn replay_needs_no_network() {
    // The recorded hosts do not exist; every answer comes from the file.
    let server = setup_server(har::handlers(FIXTURE).unwrap());
    let client = TestClient::new(&server);
    assert_eq!(
        client.get_text("https://api.example.com/counter").await,
        "1"
    );
}

// ---------------------------------------------------------------------------
// Recording

mod recording {
    use super::*;
    use mocklib::UnhandledRequest;
    use mocklib::har::{RecordMode, Recording};

    /// A real HTTPS API: JSON with a secret, binary bytes, a gzip body, an echo.
    fn upstream_app() -> axum::Router {
        use axum::routing::{get, post};
        axum::Router::new()
            .route(
                "/json",
                get(|| async {
                    axum::Json(
                        serde_json::json!({"name": "Kate", "session": {"token": "secret-value"}}),
                    )
                }),
            )
            .route(
                "/binary",
                get(|| async { (0..=255u8).collect::<Vec<u8>>() }),
            )
            .route(
                "/gzip",
                get(|| async {
                    (
                        [
                            ("content-encoding", "gzip"),
                            ("content-type", "application/json"),
                        ],
                        fixture("compressed.json.gz"),
                    )
                }),
            )
            .route(
                "/echo",
                post(|body: String| async move { format!("echo: {body}") }),
            )
    }

    fn listening_with(ca: &str, strategy: UnhandledRequest) -> mocklib::node::Server {
        let server = setup_server([]);
        server.listen_with(
            common::on_unhandled(strategy).upstream_root_certificates(vec![ca.to_owned()]),
        );
        server
    }

    /// The four requests of the scenario, through `client`; their bodies.
    async fn exercise(client: &reqwest::Client, port: u16) -> Vec<Vec<u8>> {
        let base = format!("https://localhost:{port}");
        let mut bodies = Vec::new();
        for request in [
            client
                .get(format!("{base}/json?api_key=abc&page=1"))
                .header("authorization", "Bearer xyz"),
            client.get(format!("{base}/binary")),
            client.get(format!("{base}/gzip")),
            client.post(format!("{base}/echo")).body("hello"),
        ] {
            let response = request.send().await.unwrap();
            assert!(response.status().is_success(), "{}", response.status());
            bodies.push(response.bytes().await.unwrap().to_vec());
        }
        bodies
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_https_through_the_proxy_then_replays_with_the_upstream_gone() {
        let (port, ca, upstream) = test_support::spawn_stoppable_tls_upstream(upstream_app()).await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cassettes").join("api.har");
        let recording = || {
            Recording::new(&path)
                .redact_query("api_key")
                .redact_json_field("token")
        };

        let recorder = listening_with(&ca, UnhandledRequest::Error);
        recorder.record(recording()).unwrap();
        let recorded = exercise(&recorder.reqwest_client(), port).await;
        assert_eq!(recorded[1], (0..=255u8).collect::<Vec<u8>>());
        assert_eq!(recorded[2], fixture("compressed.json.gz"));
        recorder.close();

        // Secrets never reach the file; nothing half-written is left beside it.
        let text = std::fs::read_to_string(&path).unwrap();
        for secret in ["xyz", "abc", "secret-value"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains(mocklib::har::REDACTED), "{text}");
        let har: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(har["log"]["version"], "1.2");
        assert_eq!(har["log"]["entries"].as_array().unwrap().len(), 4);
        let files: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(files.len(), 1);

        // The upstream is gone: every answer now comes from the file, byte
        // for byte (the redacted query parameter matches any value).
        upstream.abort();
        let _ = upstream.await;
        let replayer = listening_with(&ca, UnhandledRequest::Error);
        replayer.record(recording()).unwrap();
        let replayed = exercise(&replayer.reqwest_client(), port).await;
        assert_eq!(
            String::from_utf8_lossy(&replayed[0]),
            r#"{"name":"Kate","session":{"token":"[REDACTED]"}}"#
        );
        assert_eq!(replayed[1..], recorded[1..]);
        // Once mode with the file present records nothing more.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    /// A server recording into (or replaying) `path` in `mode`, with a
    /// client through its middleware; unhandled requests fail.
    fn recording_in(
        path: &std::path::Path,
        mode: RecordMode,
    ) -> (mocklib::node::Server, TestClient) {
        let server = setup_server([]);
        let client =
            TestClient::with_options(&server, common::on_unhandled(UnhandledRequest::Error));
        server.record(Recording::new(path).mode(mode)).unwrap();
        (server, client)
    }

    /// The request URLs of the HAR file at `path`, in order.
    fn recorded_urls(path: &std::path::Path) -> Vec<String> {
        let har: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        har["log"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["request"]["url"].as_str().unwrap().to_owned())
            .collect()
    }

    #[tokio::test]
    async fn the_in_process_middleware_records_and_new_episodes_adds_to_the_file() {
        let upstream = test_support::spawn_upstream(
            axum::Router::new()
                .route("/a", axum::routing::get(|| async { "first" }))
                .route("/b", axum::routing::get(|| async { "second" })),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.har");

        let (_, client) = recording_in(&path, RecordMode::All);
        assert_eq!(
            client.get_text(format!("http://{upstream}/a")).await,
            "first"
        );
        assert_eq!(recorded_urls(&path), [format!("http://{upstream}/a")]);

        // New episodes: /a is replayed (not recorded twice), /b is added.
        let (server, client) = recording_in(&path, RecordMode::NewEpisodes);
        assert_eq!(
            client.get_text(format!("http://{upstream}/a")).await,
            "first"
        );
        assert_eq!(
            client.get_text(format!("http://{upstream}/b")).await,
            "second"
        );
        assert_eq!(
            recorded_urls(&path),
            [
                format!("http://{upstream}/a"),
                format!("http://{upstream}/b")
            ]
        );
        let journal = server.requests();
        assert_eq!(
            journal[0].answer(),
            &mocklib::journal::AnswerSummary::Mocked(::http::StatusCode::OK)
        );
        assert_eq!(
            journal[1].answer(),
            &mocklib::journal::AnswerSummary::Unhandled
        );

        // None: replay only; what the file lacks is unhandled.
        let (_, client) = recording_in(&path, RecordMode::None);
        assert_eq!(
            client.get_text(format!("http://{upstream}/b")).await,
            "second"
        );
        client
            .get(format!("http://{upstream}/c"))
            .expect_unhandled()
            .await;

        // All: recorded afresh, the file replaced.
        let (_, client) = recording_in(&path, RecordMode::All);
        assert_eq!(
            client.get_text(format!("http://{upstream}/b")).await,
            "second"
        );
        assert_eq!(recorded_urls(&path), [format!("http://{upstream}/b")]);
    }

    #[tokio::test]
    async fn a_recording_replays_with_its_matching_options() {
        let upstream = test_support::spawn_upstream(
            axum::Router::new().route("/search", axum::routing::get(|| async { "results" })),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("search.har");
        let (_, client) = recording_in(&path, RecordMode::All);
        client
            .get_text(format!("http://{upstream}/search?q=first"))
            .await;

        let server = setup_server([]);
        let client = TestClient::new(&server);
        let replay_only = Recording::new(&path).mode(RecordMode::None);
        server.record(replay_only.clone()).unwrap();
        // By default the query must match...
        client
            .get(format!("http://{upstream}/search?q=other"))
            .expect_unhandled()
            .await;
        // ...unless the recording says otherwise.
        let server = setup_server([]);
        let client = TestClient::new(&server);
        server
            .record(replay_only.matching(|replay| replay.ignore_query()))
            .unwrap();
        assert_eq!(
            client
                .get_text(format!("http://{upstream}/search?q=other"))
                .await,
            "results"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_tower_layer_records_too() {
        use tower::{Layer, ServiceExt};
        let upstream = test_support::spawn_upstream(
            axum::Router::new().route("/real", axum::routing::get(|| async { "from upstream" })),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tower.har");
        let server = setup_server([]);
        server.listen_with(common::on_unhandled(UnhandledRequest::Error));
        server.record(Recording::new(&path)).unwrap();
        let hyper_client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<http_body_util::Full<bytes::Bytes>>();
        let request = ::http::Request::get(format!("http://{upstream}/real"))
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap();
        let response = server
            .layer()
            .layer(hyper_client)
            .oneshot(request)
            .await
            .unwrap();
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap();
        assert_eq!(body.to_bytes(), "from upstream");

        let replay = har::handlers(&path).unwrap();
        assert_eq!(replay.len(), 1);
        assert_eq!(replay[0].header(), format!("GET http://{upstream}/real"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_exchanges_are_all_recorded_in_a_valid_file() {
        let upstream =
            test_support::spawn_upstream(axum::Router::new().route(
                "/item/{n}",
                axum::routing::get(
                    |axum::extract::Path(n): axum::extract::Path<u32>| async move {
                        format!("item {n}")
                    },
                ),
            ))
            .await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("concurrent.har");
        let (_, client) = recording_in(&path, RecordMode::All);
        let requests = (0..40).map(|n| {
            let client = client.clone();
            let url = format!("http://{upstream}/item/{n}");
            tokio::spawn(async move { client.get_text(url).await })
        });
        for (n, request) in requests.enumerate() {
            assert_eq!(request.await.unwrap(), format!("item {n}"));
        }
        // Every exchange made it, whatever order they finished in, and the
        // file was never left half-written.
        let mut urls = recorded_urls(&path);
        urls.sort();
        let mut expected: Vec<_> = (0..40)
            .map(|n| format!("http://{upstream}/item/{n}"))
            .collect();
        expected.sort();
        assert_eq!(urls, expected);
    }

    #[tokio::test]
    async fn a_response_the_client_abandons_is_not_recorded() {
        let upstream = test_support::spawn_upstream(
            axum::Router::new().route("/big", axum::routing::get(|| async { vec![b'x'; 1 << 20] })),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.har");
        let server = setup_server([]);
        let client = common::client(&server);
        server.listen_with(common::on_unhandled(UnhandledRequest::Error));
        server.record(Recording::new(&path)).unwrap();
        let response = client
            .get(format!("http://{upstream}/big"))
            .send()
            .await
            .unwrap();
        drop(response); // headers read, body never
        let har: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(har["log"]["entries"].as_array().unwrap().len(), 0);
    }
}
