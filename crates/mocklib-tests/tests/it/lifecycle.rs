//! listen, close and life-cycle events, through a real reqwest client.

use crate::common;

use std::sync::{Arc, Mutex};

use crate::common::{TestClient, on_unhandled};
use mocklib::node::setup_server;
use mocklib::{
    HttpResponse, ListenOptions, UnhandledRequest, events::EventKind, events::LifeCycleEvent, http,
    passthrough,
};

const API: &str = "https://api.example.com";

/// Records every event as `"kind request_id"` strings, in order.
fn record_events(server: &mocklib::node::Server) -> Arc<Mutex<Vec<LifeCycleEvent>>> {
    let log: Arc<Mutex<Vec<LifeCycleEvent>>> = Arc::default();
    let sink = Arc::clone(&log);
    server
        .events()
        .on_any(move |event| sink.lock().unwrap().push(event.clone()));
    log
}

fn kinds(log: &Mutex<Vec<LifeCycleEvent>>) -> Vec<&'static str> {
    log.lock()
        .unwrap()
        .iter()
        .map(|e| e.kind.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_intercepted_before_listen_or_after_close() {
    let upstream = test_support::spawn_upstream(
        axum::Router::new().route("/x", axum::routing::get(|| async { "real" })),
    )
    .await;
    let url = format!("http://{upstream}/x");
    let server = setup_server([http::get(&url, |_| HttpResponse::text("mocked"))]);
    let log = record_events(&server);
    let client = TestClient::unstarted(&server);

    assert_eq!(client.get(&url).await, (200, "real"));
    server.listen();
    assert_eq!(client.get(&url).await, (200, "mocked"));
    server.close();
    server.close(); // idempotent
    assert_eq!(client.get(&url).await, (200, "real"));
    // Only the listening request produced events.
    assert_eq!(
        kinds(&log),
        [
            "request:start",
            "request:match",
            "request:end",
            "response:mocked"
        ]
    );

    server.listen(); // listen after close works again
    assert_eq!(client.get(&url).await, (200, "mocked"));
    assert!(server.is_listening());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mocked_request_emits_start_match_end_mocked_with_one_request_id() {
    let server = setup_server([http::get(format!("{API}/a"), |_| HttpResponse::text("a"))]);
    let client = TestClient::new(&server);
    let log = record_events(&server);
    client.get(format!("{API}/a")).await;
    assert_eq!(
        kinds(&log),
        [
            "request:start",
            "request:match",
            "request:end",
            "response:mocked"
        ]
    );
    let events = log.lock().unwrap();
    assert!(events.iter().all(|e| e.request_id == events[0].request_id));
    let response = events[3].response.as_ref().unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body.as_deref(), Some(&b"a"[..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_and_unhandled_requests_emit_bypass_events() {
    let upstream = test_support::spawn_upstream(
        axum::Router::new().fallback(|| async { (axum::http::StatusCode::ACCEPTED, "real") }),
    )
    .await;
    let server = setup_server([http::get(format!("http://{upstream}/through"), |_| {
        passthrough()
    })]);
    let client = TestClient::with_options(&server, on_unhandled(UnhandledRequest::Bypass));
    let log = record_events(&server);

    let response = client.get(format!("http://{upstream}/through")).await;
    assert_eq!(response.status(), 202);
    assert_eq!(
        kinds(&log),
        ["request:start", "request:end", "response:bypass"]
    );
    assert_eq!(
        log.lock().unwrap()[2].response.as_ref().unwrap().status,
        202
    );

    log.lock().unwrap().clear();
    client.get(format!("http://{upstream}/unhandled")).await;
    assert_eq!(
        kinds(&log),
        [
            "request:start",
            "request:unhandled",
            "request:end",
            "response:bypass"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_resolver_emits_unhandled_exception_then_the_500() {
    let server = setup_server([http::get(format!("{API}/boom"), |_| {
        Err::<HttpResponse, _>("database is down")
    })]);
    let client = TestClient::new(&server);
    let log = record_events(&server);
    let response = client.get(format!("{API}/boom")).await;
    assert_eq!(response.status(), 500);
    assert_eq!(
        kinds(&log),
        ["request:start", "unhandledException", "response:mocked"]
    );
    let error = log.lock().unwrap()[1].error.clone().unwrap();
    assert_eq!(error.message, "database is down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_can_be_removed_and_filtered_by_kind() {
    let server = setup_server([http::get(format!("{API}/a"), |_| HttpResponse::text("a"))]);
    let client = TestClient::new(&server);
    let starts = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&starts);
    let id = server.events().on(EventKind::RequestStart, move |_| {
        *counter.lock().unwrap() += 1
    });
    client.get(format!("{API}/a")).await;
    assert_eq!(*starts.lock().unwrap(), 1);

    assert!(server.events().remove_listener(id));
    assert!(!server.events().remove_listener(id));
    client.get(format!("{API}/a")).await;
    assert_eq!(*starts.lock().unwrap(), 1);

    let log = record_events(&server);
    server.events().remove_all_listeners();
    client.get(format!("{API}/a")).await;
    assert!(log.lock().unwrap().is_empty());

    // Subscribing again after everything was removed hears events again.
    let log = record_events(&server);
    client.get(format!("{API}/a")).await;
    assert_eq!(kinds(&log)[0], "request:start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_listener_does_not_break_the_request() {
    let server = setup_server([http::get(format!("{API}/a"), |_| HttpResponse::text("a"))]);
    let client = TestClient::new(&server);
    server
        .events()
        .on(EventKind::RequestStart, |_| panic!("listener bug"));
    assert_eq!(client.get(format!("{API}/a")).await, (200, "a"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_error_strategy_fails_unhandled_requests_with_a_clear_message() {
    let server = setup_server([http::get(format!("{API}/users"), |_| {
        HttpResponse::text("users")
    })]);
    let client = TestClient::new(&server);
    let log = record_events(&server);
    let message = client.get(format!("{API}/user")).expect_unhandled().await;
    assert!(
        message.contains("GET https://api.example.com/user"),
        "{message}"
    );
    assert!(message.contains("Did you mean"), "{message}");
    assert!(
        message.contains("GET https://api.example.com/users"),
        "{message}"
    );
    assert_eq!(
        kinds(&log),
        ["request:start", "request:unhandled", "request:end"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_warn_strategy_performs_the_request_as_it_is() {
    let upstream =
        test_support::spawn_upstream(axum::Router::new().fallback(|| async { "real" })).await;
    let server = setup_server([]);
    // Warn is the default.
    let client = TestClient::with_options(&server, ListenOptions::default());
    let response = client.get(format!("http://{upstream}/anything")).await;
    assert_eq!(response, (200, "real"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_strategy_receives_the_request() {
    let upstream =
        test_support::spawn_upstream(axum::Router::new().fallback(|| async { "real" })).await;
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let server = setup_server([]);
    let strategy = UnhandledRequest::custom(move |request| {
        sink.lock()
            .unwrap()
            .push(format!("{} {}", request.method(), request.url()));
    });
    let client = TestClient::with_options(&server, on_unhandled(strategy));
    let url = format!("http://{upstream}/custom");
    assert_eq!(client.post(&url).await, (200, "real"));
    assert_eq!(*seen.lock().unwrap(), [format!("POST {url}")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_custom_strategy_fails_the_request() {
    let server = setup_server([]);
    let strategy = UnhandledRequest::custom(|_| panic!("no unhandled requests allowed"));
    let client = TestClient::with_options(&server, on_unhandled(strategy));
    let error = client
        .get(format!("{API}/nope"))
        .expect_network_error()
        .await;
    assert!(error.to_string().contains("no unhandled requests allowed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bypass_strategy_is_silent_and_performs_the_request() {
    let upstream =
        test_support::spawn_upstream(axum::Router::new().fallback(|| async { "real" })).await;
    let server = setup_server([]);
    let client = TestClient::with_options(&server, on_unhandled(UnhandledRequest::Bypass));
    assert_eq!(
        client.get(format!("http://{upstream}/x")).await,
        (200, "real")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_url_makes_relative_predicates_match_one_origin_only() {
    let server = setup_server([http::get("/user", |_| HttpResponse::text("mocked"))]);
    let options = common::error_on_unhandled().base_url("https://api.example.com".parse().unwrap());
    let client = TestClient::with_options(&server, options);
    assert_eq!(client.get(format!("{API}/user")).await, (200, "mocked"));
    client
        .get("https://other.example.com/user")
        .expect_unhandled()
        .await;
}

/// Collects what `tracing` prints on this thread while the guard lives.
fn capture_logs() -> (Arc<Mutex<Vec<u8>>>, tracing::subscriber::DefaultGuard) {
    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer: Arc<Mutex<Vec<u8>>> = Arc::default();
    let sink = Sink(Arc::clone(&buffer));
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    (buffer, tracing::subscriber::set_default(subscriber))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_warning_names_the_request_its_body_and_the_closest_handlers() {
    let upstream =
        test_support::spawn_upstream(axum::Router::new().fallback(|| async { "real" })).await;
    let server = setup_server([
        http::post("/posts", |_| HttpResponse::empty()),
        http::get("/post", |_| HttpResponse::empty()),
        http::get("/completely/unrelated", |_| HttpResponse::empty()),
    ]);
    let client = TestClient::with_options(&server, on_unhandled(UnhandledRequest::Warn));
    let (logs, _guard) = capture_logs();
    // The middleware runs in this task, on this thread, so the capture sees it.
    let url = format!("http://{upstream}/posts");
    let response = client.put(&url).body(r#"{"title":"x"}"#).await;
    assert_eq!(response, (200, "real"));

    let printed = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    assert!(printed.contains("WARN"), "{printed}");
    assert!(printed.contains(&format!("PUT {url}")), "{printed}");
    assert!(printed.contains(r#"{"title":"x"}"#), "{printed}");
    assert!(printed.contains("POST /posts"), "{printed}");
    assert!(printed.contains("GET /post"), "{printed}");
    assert!(!printed.contains("unrelated"), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bypass_strategy_prints_nothing() {
    let upstream =
        test_support::spawn_upstream(axum::Router::new().fallback(|| async { "real" })).await;
    let server = setup_server([http::get("/elsewhere", |_| HttpResponse::empty())]);
    let client = TestClient::with_options(&server, on_unhandled(UnhandledRequest::Bypass));
    let (logs, _guard) = capture_logs();
    client.get(format!("http://{upstream}/x")).await;
    assert!(logs.lock().unwrap().is_empty());
}

#[test]
fn a_predicate_with_a_query_warns_once_at_creation() {
    let (logs, _guard) = capture_logs();
    let _handler = http::get("https://api.example.com/search?q=rust", |_| {
        HttpResponse::empty()
    });
    let printed = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    assert_eq!(printed.matches("WARN").count(), 1, "{printed}");
    assert!(
        printed.contains("https://api.example.com/search?q=rust"),
        "{printed}"
    );
    assert!(printed.contains("query_pairs"), "{printed}");

    logs.lock().unwrap().clear();
    let _handler = http::get("https://api.example.com/search", |_| HttpResponse::empty());
    assert!(logs.lock().unwrap().is_empty());
}
