//! Injected faults (`HttpResponse::fault`, `truncate_after`, `dribble`) as
//! real clients see them: reqwest 0.13, ureq 3 and curl through the
//! listener (base URL, the proxy with `CONNECT` + TLS or a plain tunnel, and
//! HTTP/2), and the in-process front doors (reqwest-middleware 0.5 and 0.4,
//! tower). After every fault the server must answer the next request.
//!
//! Timeouts here are hang guards; the only time measured is tokio's paused
//! clock, which does not depend on the machine's speed.

use crate::common;

use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mocklib::node::{Server, setup_server};
use mocklib::{Fault, HttpResponse, http};
use tower::ServiceExt;

/// The body `/dribble` sends, in ten pieces of eight bytes.
const DRIBBLED: &str =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_0123456789abcdef";

/// Every fault at a path of its own, on any origin (`*/…`), so the same
/// server answers base URL, proxy and in-process requests.
fn server() -> Server {
    let server = setup_server([
        http::get("*/reset", |_| HttpResponse::fault(Fault::ConnectionReset)),
        http::get("*/empty", |_| HttpResponse::fault(Fault::EmptyResponse)),
        http::get("*/garbage", |_| HttpResponse::fault(Fault::Garbage)),
        http::get("*/chunk", |_| {
            HttpResponse::fault(Fault::MalformedChunk).header("x-trace", "chunk")
        }),
        http::get("*/truncated", |_| {
            HttpResponse::text("0123456789").truncate_after(4)
        }),
        http::get("*/dribble", |_| {
            HttpResponse::text(DRIBBLED).dribble(Duration::from_millis(450))
        }),
        http::get("*/ok", |_| HttpResponse::text("still serving")),
    ]);
    server.listen_with(common::error_on_unhandled());
    server
}

/// `error` and its sources, joined with ": ".
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(next) = source {
        text.push_str(": ");
        text.push_str(&next.to_string());
        source = next.source();
    }
    text
}

// ---------------------------------------------------------------------------
// curl

/// Runs curl on `url` with `args`; returns its exit code, stdout and stderr.
fn curl(server: &Server, args: &[&str], url: &str) -> (i32, String, String) {
    let output = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(args)
        .arg(url)
        .env_clear()
        .envs(server.env())
        .output()
        .expect("curl runs");
    (
        output.status.code().expect("curl exited"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// curl's exit code and a piece of its message for each fault over HTTP/1.1.
const CURL_HTTP1: [(&str, i32, &str); 5] = [
    ("reset", 56, "reset"),
    ("empty", 52, "Empty reply from server"),
    ("garbage", 1, "HTTP/0.9"),
    ("chunk", 56, "chunked-encoding"),
    ("truncated", 18, "transfer closed with 6 bytes remaining"),
];

fn assert_curl_sees_each_fault(server: &Server, base: &str, args: &[&str]) {
    for (path, code, message) in CURL_HTTP1 {
        let (exit, stdout, stderr) = curl(server, args, &format!("{base}/{path}"));
        assert_eq!(exit, code, "curl {base}/{path}: {stderr}");
        assert!(stderr.contains(message), "curl {base}/{path}: {stderr}");
        if path == "truncated" {
            assert_eq!(stdout, "0123", "the bytes before the cut arrive");
        }
        let (exit, stdout, stderr) = curl(server, args, &format!("{base}/ok"));
        assert_eq!((exit, stdout.as_str()), (0, "still serving"), "{stderr}");
    }
    let (exit, stdout, stderr) = curl(server, args, &format!("{base}/dribble"));
    assert_eq!((exit, stdout.as_str()), (0, DRIBBLED), "{stderr}");
}

#[test]
fn curl_sees_each_fault_through_the_base_url() {
    let server = server();
    let base = server.url().as_str().trim_end_matches('/').to_owned();
    assert_curl_sees_each_fault(&server, &base, &[]);
}

#[test]
fn curl_sees_each_fault_through_the_proxy_over_tls_on_http1() {
    let server = server();
    assert_curl_sees_each_fault(&server, "https://api.example.com", &["--http1.1"]);
}

#[test]
fn curl_sees_each_fault_through_the_proxy_in_a_plain_tunnel() {
    let server = server();
    let args = ["--proxytunnel"];
    assert_curl_sees_each_fault(&server, "http://plain.example.com", &args);
}

#[test]
fn over_http2_curl_sees_each_fault_as_a_stream_reset() {
    let server = server();
    for path in ["reset", "empty", "garbage"] {
        let (exit, _, stderr) = curl(
            &server,
            &["--http2"],
            &format!("https://api.example.com/{path}"),
        );
        // CURLE_HTTP2_STREAM: the stream was reset (RST_STREAM).
        assert_eq!(exit, 92, "{path}: {stderr}");
        assert!(stderr.contains("INTERNAL_ERROR"), "{path}: {stderr}");
    }
    // The stream is reset too; whether the head (and the bytes before the
    // cut) went out first is up to HTTP/2's frame scheduling.
    for path in ["chunk", "truncated"] {
        let (exit, _, stderr) = curl(
            &server,
            &["--http2"],
            &format!("https://api.example.com/{path}"),
        );
        assert_eq!(exit, 92, "{path}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_reqwest_sees_a_stream_reset_and_the_next_request_is_answered() {
    let server = server();
    let client = server
        .reqwest_client_builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    for path in ["reset", "empty", "garbage"] {
        let error = client
            .get(format!("https://api.example.com/{path}"))
            .send()
            .await
            .unwrap_err();
        assert!(error.is_request(), "{path}: {error:?}");
        // The stream's reset (INTERNAL_ERROR), not the connection's.
        assert!(
            chain(&error).contains("stream error received"),
            "{path}: {}",
            chain(&error)
        );
        let response = client
            .get("https://api.example.com/ok")
            .send()
            .await
            .unwrap();
        assert_eq!(response.version(), reqwest::Version::HTTP_2);
        assert_eq!(response.text().await.unwrap(), "still serving");
    }
}

// ---------------------------------------------------------------------------
// reqwest through the listener

/// A reqwest client for the base URL that opens a fresh connection for
/// every request (a fault closes its connection anyway).
fn base_url_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

async fn assert_reqwest_sees_each_fault(client: &reqwest::Client, base: &str) {
    for (path, message) in [
        ("reset", "reset"),
        ("empty", "connection closed before message completed"),
        ("garbage", "invalid HTTP version"),
    ] {
        let error = client
            .get(format!("{base}/{path}"))
            .send()
            .await
            .unwrap_err();
        assert!(error.is_request(), "{path}: {error:?}");
        assert!(chain(&error).contains(message), "{path}: {}", chain(&error));
        assert_serves_on(client, base).await;
    }

    let response = client.get(format!("{base}/chunk")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-trace"], "chunk");
    let error = response.bytes().await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
    assert!(chain(&error).contains("chunk size"), "{}", chain(&error));
    assert_serves_on(client, base).await;

    let mut response = client
        .get(format!("{base}/truncated"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.content_length(), Some(10));
    assert_eq!(response.chunk().await.unwrap().unwrap(), "0123");
    let error = response.chunk().await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
    // "end of file before message length reached", or over TLS the close
    // without close_notify that says the same.
    assert!(
        chain(&error).contains("reading a body"),
        "{}",
        chain(&error)
    );
    assert_serves_on(client, base).await;

    let mut response = client.get(format!("{base}/dribble")).send().await.unwrap();
    assert_eq!(response.content_length(), Some(DRIBBLED.len() as u64));
    let mut pieces = Vec::new();
    while let Some(piece) = response.chunk().await.unwrap() {
        pieces.push(piece);
    }
    // Pieces 50 ms apart: however slow the machine, not all in one read.
    assert!(pieces.len() > 1, "{pieces:?}");
    assert_eq!(pieces.concat(), DRIBBLED.as_bytes());
}

async fn assert_serves_on(client: &reqwest::Client, base: &str) {
    let response = client.get(format!("{base}/ok")).send().await.unwrap();
    assert_eq!(response.text().await.unwrap(), "still serving");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_sees_each_fault_through_the_base_url() {
    let server = server();
    let base = server.url().as_str().trim_end_matches('/').to_owned();
    assert_reqwest_sees_each_fault(&base_url_client(), &base).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_sees_each_fault_through_the_proxy_over_tls_on_http1() {
    let server = server();
    let client = server
        .reqwest_client_builder()
        .http1_only()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    assert_reqwest_sees_each_fault(&client, "https://api.example.com").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_inside_a_tunnel_resets_the_clients_connection_to_the_proxy() {
    let server = server();
    let mut tcp = common::tunnel(&server, "plain.example.com:80").await;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tcp.write_all(b"GET /reset HTTP/1.1\r\nHost: plain.example.com\r\n\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), tcp.read_to_end(&mut rest));
    let error = read.await.expect("no hang").unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
    assert!(rest.is_empty());
}

// ---------------------------------------------------------------------------
// ureq through the listener

#[test]
fn ureq_sees_each_fault_through_the_base_url() {
    let server = server();
    let base = server.url().as_str().trim_end_matches('/').to_owned();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .proxy(None)
        .max_idle_connections_per_host(0)
        .build()
        .into();
    let serves_on = || {
        let mut response = agent.get(format!("{base}/ok")).call().unwrap();
        assert_eq!(
            response.body_mut().read_to_string().unwrap(),
            "still serving"
        );
    };

    match agent.get(format!("{base}/reset")).call().unwrap_err() {
        ureq::Error::Io(error) => {
            assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
        }
        other => panic!("reset: {other:?}"),
    }
    serves_on();
    let error = agent.get(format!("{base}/empty")).call().unwrap_err();
    assert!(
        matches!(&error, ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof),
        "{error:?}"
    );
    serves_on();
    let error = agent.get(format!("{base}/garbage")).call().unwrap_err();
    assert!(matches!(error, ureq::Error::Protocol(_)), "{error:?}");
    assert!(error.to_string().contains("http parse fail"), "{error}");
    serves_on();
    let mut response = agent.get(format!("{base}/chunk")).call().unwrap();
    assert_eq!(response.headers()["x-trace"], "chunk");
    let error = response.body_mut().read_to_string().unwrap_err();
    assert!(matches!(error, ureq::Error::Protocol(_)), "{error:?}");
    assert!(error.to_string().contains("chunk length"), "{error}");
    serves_on();
    let mut response = agent.get(format!("{base}/truncated")).call().unwrap();
    assert_eq!(response.headers()["content-length"], "10");
    let error = response.body_mut().read_to_string().unwrap_err();
    assert!(
        matches!(&error, ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof),
        "{error:?}"
    );
    serves_on();
    let mut response = agent.get(format!("{base}/dribble")).call().unwrap();
    assert_eq!(response.body_mut().read_to_string().unwrap(), DRIBBLED);
}

// ---------------------------------------------------------------------------
// in-process front doors

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_middleware_maps_each_fault_to_the_nearest_client_error() {
    let server = server();
    let client = common::client(&server);
    let url = |path: &str| format!("https://api.example.com/{path}");
    for (path, fault) in [
        ("reset", Fault::ConnectionReset),
        ("empty", Fault::EmptyResponse),
        ("garbage", Fault::Garbage),
    ] {
        let error = client.get(url(path)).send().await.unwrap_err();
        let network = mocklib::front_door::NetworkError::from_middleware_error(&error).expect(path);
        assert_eq!(network.fault(), Some(fault), "{path}");
        assert_eq!(
            network.kind(),
            mocklib::front_door::NetworkErrorKind::Mocked
        );
        assert!(
            network.to_string().contains("HttpResponse::fault"),
            "{network}"
        );
    }

    let response = client.get(url("chunk")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-trace"], "chunk");
    let error = response.bytes().await.unwrap_err();
    // The kind reqwest reports for the same fault through the listener.
    assert!(error.is_decode(), "{error:?}");
    assert!(
        chain(&error).contains("malformed chunk"),
        "{}",
        chain(&error)
    );

    let mut response = client.get(url("truncated")).send().await.unwrap();
    assert_eq!(response.headers()["content-length"], "10");
    assert_eq!(response.chunk().await.unwrap().unwrap(), "0123");
    let error = response.chunk().await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
    assert!(
        chain(&error).contains("after 4 of its 10 bytes"),
        "{}",
        chain(&error)
    );

    // Paused time: the ten pieces arrive one by one, 50 ms apart.
    let mut response = client.get(url("dribble")).send().await.unwrap();
    let started = tokio::time::Instant::now();
    let mut pieces = Vec::new();
    while let Some(piece) = response.chunk().await.unwrap() {
        pieces.push(piece);
    }
    assert_eq!(pieces.len(), 10);
    assert_eq!(pieces.concat(), DRIBBLED.as_bytes());
    assert_eq!(started.elapsed(), Duration::from_millis(450));

    assert_eq!(client.get(url("ok")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn the_reqwest_0_12_middleware_maps_faults_alike() {
    let server = server();
    let client = reqwest_middleware04::ClientBuilder::new(reqwest012::Client::new())
        .with(server.middleware())
        .build();
    let error = client
        .get("https://api.example.com/empty")
        .send()
        .await
        .unwrap_err();
    let network = mocklib::front_door::NetworkError::from_middleware_0_4_error(&error).unwrap();
    assert_eq!(network.fault(), Some(Fault::EmptyResponse));
    let mut response = client
        .get("https://api.example.com/truncated")
        .send()
        .await
        .unwrap();
    assert_eq!(response.chunk().await.unwrap().unwrap(), "0123");
    let error = response.chunk().await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
}

fn get(path: &str) -> ::http::Request<Full<Bytes>> {
    ::http::Request::get(format!("https://api.example.com/{path}"))
        .body(Full::new(Bytes::new()))
        .unwrap()
}

#[tokio::test]
async fn the_tower_service_maps_each_fault_to_the_nearest_client_error() {
    let server = server();
    let service = server.service();
    let error = service.clone().oneshot(get("reset")).await.unwrap_err();
    let network = error
        .downcast_ref::<mocklib::front_door::NetworkError>()
        .unwrap();
    assert_eq!(network.fault(), Some(Fault::ConnectionReset));

    let response = service.clone().oneshot(get("chunk")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.into_body().collect().await.is_err());

    let response = service.clone().oneshot(get("truncated")).await.unwrap();
    assert_eq!(response.headers()["content-length"], "10");
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(first, "0123");
    let error = body.frame().await.unwrap().unwrap_err();
    assert!(chain(&*error).contains("truncated"), "{}", chain(&*error));

    let response = service.clone().oneshot(get("ok")).await.unwrap();
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "still serving"
    );
}

#[tokio::test]
async fn error_keeps_its_meaning_and_faults_on_streams_are_explained() {
    let server = server();
    server.use_handlers([
        http::get("*/error", |_| HttpResponse::error()),
        http::get("*/stream", |_| {
            HttpResponse::stream(futures_util::stream::iter(["a"])).truncate_after(1)
        }),
    ]);
    let client = common::client(&server);
    let error = client
        .get("https://api.example.com/error")
        .send()
        .await
        .unwrap_err();
    let network = mocklib::front_door::NetworkError::from_middleware_error(&error).unwrap();
    assert_eq!(network.fault(), None);
    assert!(
        network.to_string().contains("HttpResponse::error()"),
        "{network}"
    );
    let response = client
        .get("https://api.example.com/stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert!(response.text().await.unwrap().contains("buffered body"));
    assert!(HttpResponse::error().is_network_error());
    assert!(!HttpResponse::fault(Fault::ConnectionReset).is_network_error());
}
