//! HTTP behaviour through the loopback listener, with real clients on real
//! loopback sockets: connection reuse, request framing (chunked,
//! `Expect: 100-continue`), large bodies in both directions, HTTP/2 with
//! prior knowledge, the spec's posts API over HTTPS, and passthrough over TLS
//! to an upstream with its own certificate authority.
//!
//! Timeouts in this file are hang guards only (a broken listener must fail
//! the test rather than hang it), never assertions about speed.

use crate::common;

use std::collections::HashSet;
use std::future::Future as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, ListenOptions, UnhandledRequest, http};
use serde_json::{Value, json};

/// Hang guard for raw socket reads.
const READ_GUARD: Duration = Duration::from_secs(30);
/// Hang guard for whole async exchanges.
const EXCHANGE_GUARD: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// helpers

fn listener_address(server: &Server) -> SocketAddr {
    server.url().socket_addrs(|| None).unwrap()[0]
}

/// A raw HTTP/1.1 connection to the listener.
struct Raw {
    reader: BufReader<TcpStream>,
}

#[derive(Debug)]
struct RawResponse {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then_some(value.trim())
        })
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

impl Raw {
    fn connect(server: &Server) -> Self {
        let stream = TcpStream::connect(listener_address(server)).unwrap();
        // Hang guard, not an assertion: a read that never completes fails.
        stream.set_read_timeout(Some(READ_GUARD)).unwrap();
        Raw {
            reader: BufReader::new(stream),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).unwrap();
        self.reader.get_mut().flush().unwrap();
    }

    /// Reads a status line and header block (up to the empty line).
    fn read_head(&mut self) -> String {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line).unwrap();
            assert!(n > 0, "connection closed in the middle of a head: {head:?}");
            if line == "\r\n" {
                return head;
            }
            head.push_str(&line);
        }
    }

    /// Reads one full response, framed by Content-Length (or chunked).
    fn read_response(&mut self) -> RawResponse {
        let head = self.read_head();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not a status line: {head:?}"));
        let mut response = RawResponse {
            status,
            head,
            body: Vec::new(),
        };
        if let Some(length) = response.header("content-length") {
            let mut body = vec![0; length.parse().unwrap()];
            self.reader.read_exact(&mut body).unwrap();
            response.body = body;
        } else if response
            .header("transfer-encoding")
            .is_some_and(|te| te.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).unwrap();
                let size = usize::from_str_radix(size.trim(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                response.body.extend_from_slice(&chunk[..size]);
            }
        }
        response
    }
}

/// Deterministic pseudo-random bytes (xorshift64).
fn pseudo_random_bytes(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.extend_from_slice(&seed.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// FNV-1a: order-sensitive, so a reordered or altered body changes it.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// An upstream like `test_support::spawn_upstream`, whose handlers can see the
/// client's socket address (one per TCP connection).
async fn spawn_upstream_with_peers(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    address
}

fn bypass_unhandled() -> ListenOptions {
    ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass)
}

// ---------------------------------------------------------------------------
// 1. keep-alive

#[test]
fn sequential_requests_on_one_raw_connection_are_all_answered() {
    let counter = Arc::new(AtomicUsize::new(0));
    let server = setup_server([
        http::get("/count", {
            let counter = Arc::clone(&counter);
            move |_| {
                let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                HttpResponse::text(format!("request {n}"))
            }
        }),
        http::post("/echo", |args| {
            HttpResponse::text(args.request.text().unwrap().to_owned())
        }),
    ]);
    server.listen_with(common::error_on_unhandled());
    let mut raw = Raw::connect(&server);
    for n in 1..=5 {
        raw.send(b"GET /count HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        let response = raw.read_response();
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(response.text(), format!("request {n}"));
        // A mocked request with a body on the same connection in between.
        let body = format!("body {n}");
        raw.send(
            format!(
                "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        let response = raw.read_response();
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(response.text(), body);
    }
    assert_eq!(counter.load(Ordering::SeqCst), 5);
}

/// The values of the request's `x-v` headers, each as hex, joined by `|`.
fn hex_values(headers: &::http::HeaderMap) -> String {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let values: Vec<String> = headers
        .get_all("x-v")
        .iter()
        .map(|v| hex(v.as_bytes()))
        .collect();
    values.join("|")
}

#[test]
fn header_values_reach_the_resolver_and_the_journal_byte_for_byte() {
    // The listener copies header values out of its read buffer, which the
    // next request on the connection reuses: each request must keep its own,
    // obs-text bytes, repeated names and dozens of headers included.
    let server = setup_server([http::get("/h", |args| {
        HttpResponse::text(hex_values(args.request.headers()))
    })]);
    server.listen_with(common::error_on_unhandled());
    let mut raw = Raw::connect(&server);
    let mut sent = Vec::new();
    for n in 0..20 {
        let first = [format!("value {n} ").as_bytes(), b"\xe9\xff\x80"].concat();
        let second = format!("second\t{n}").into_bytes();
        let mut request = b"GET /h HTTP/1.1\r\nHost: 127.0.0.1\r\nx-v: ".to_vec();
        request.extend_from_slice(&first);
        request.extend_from_slice(
            format!("\r\nx-v: {}\r\n", String::from_utf8_lossy(&second)).as_bytes(),
        );
        for filler in 0..40 {
            request.extend_from_slice(format!("x-f{filler}: {n}-{filler}\r\n").as_bytes());
        }
        request.extend_from_slice(b"\r\n");
        raw.send(&request);
        let response = raw.read_response();
        assert_eq!(response.status, 200, "{response:?}");
        let mut expected = ::http::HeaderMap::new();
        expected.append("x-v", ::http::HeaderValue::from_bytes(&first).unwrap());
        expected.append("x-v", ::http::HeaderValue::from_bytes(&second).unwrap());
        assert_eq!(response.text(), hex_values(&expected), "request {n}");
        sent.push(expected);
    }
    let recorded = server.requests();
    assert_eq!(recorded.len(), sent.len());
    for (n, (entry, expected)) in recorded.iter().zip(&sent).enumerate() {
        assert_eq!(
            hex_values(entry.headers()),
            hex_values(expected),
            "journal entry {n}"
        );
        assert_eq!(
            entry.headers()["x-f39"],
            format!("{n}-39").as_str(),
            "journal entry {n}"
        );
        assert_eq!(entry.headers().len(), 43, "journal entry {n}");
    }
}

#[test]
fn pipelined_requests_on_one_raw_connection_are_answered_in_order() {
    let server = setup_server([http::get("/item/:n", |args| {
        HttpResponse::text(format!("item {}", &args.params["n"]))
    })]);
    server.listen_with(common::error_on_unhandled());
    let mut raw = Raw::connect(&server);
    // All three written before reading any response.
    raw.send(
        b"GET /item/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n\
          GET /item/2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n\
          GET /item/3 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    for n in 1..=3 {
        let response = raw.read_response();
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(response.text(), format!("item {n}"));
    }
    // `Connection: close` on the last one: the listener closes afterwards.
    let mut rest = Vec::new();
    raw.reader.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{:?}", String::from_utf8_lossy(&rest));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_through_the_proxy_reuses_upstream_connections() {
    let upstream = spawn_upstream_with_peers(axum::Router::new().route(
        "/peer",
        axum::routing::get(
            |ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() },
        ),
    ))
    .await;
    let server = setup_server([]);
    server.listen_with(bypass_unhandled());
    let client = server.reqwest_client();
    let mut peers = HashSet::new();
    const REQUESTS: usize = 10;
    for _ in 0..REQUESTS {
        let response = client
            .get(format!("http://{upstream}/peer"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        peers.insert(response.text().await.unwrap());
    }
    // Without pooling every request would open its own upstream connection.
    // A returned connection may, rarely, not be back in the pool yet when
    // the next request checks out, so allow one spare.
    assert!(
        peers.len() <= 2,
        "{} upstream connections for {REQUESTS} sequential requests: {peers:?}",
        peers.len()
    );
}

// ---------------------------------------------------------------------------
// 2. chunked request bodies

fn echo_server() -> Server {
    let server = setup_server([http::post("/echo", |args| {
        HttpResponse::text(args.request.text().unwrap().to_owned())
            .header("x-seen-length", args.request.body().len().to_string())
    })]);
    server.listen_with(common::error_on_unhandled());
    server
}

#[test]
fn a_chunked_request_body_is_reassembled_for_the_resolver() {
    let server = echo_server();
    let mut raw = Raw::connect(&server);
    raw.send(
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n\
          5\r\nhello\r\n\
          1\r\n \r\n\
          A\r\nchunked wo\r\n\
          3\r\nrld\r\n\
          0\r\n\r\n",
    );
    let response = raw.read_response();
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(response.text(), "hello chunked world");
    assert_eq!(response.header("x-seen-length"), Some("19"));

    // The connection is still in sync: the next request is framed correctly.
    raw.send(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\nnext");
    assert_eq!(raw.read_response().text(), "next");
}

#[test]
fn chunk_extensions_and_trailers_do_not_leak_into_the_body() {
    let server = echo_server();
    let mut raw = Raw::connect(&server);
    raw.send(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    // Written in pieces, a chunk size split from its data.
    raw.send(b"4;name=value\r\n");
    raw.send(b"abcd\r\n");
    raw.send(b"2\r\nef\r\n0\r\nX-Trailer: t\r\n\r\n");
    let response = raw.read_response();
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(response.text(), "abcdef");
}

// ---------------------------------------------------------------------------
// 3. Expect: 100-continue

#[test]
fn expect_100_continue_gets_an_interim_response_before_the_body_is_sent() {
    let server = echo_server();
    let mut raw = Raw::connect(&server);
    let body = "sent only after 100 Continue";
    raw.send(
        format!(
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    // Nothing of the body has been written: the listener must ask for it.
    let interim = raw.read_head();
    assert!(
        interim.starts_with("HTTP/1.1 100 Continue\r\n"),
        "{interim:?}"
    );
    raw.send(body.as_bytes());
    let response = raw.read_response();
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(response.text(), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expect_100_continue_in_proxy_mode_reaches_a_real_upstream() {
    let upstream = test_support::spawn_upstream(axum::Router::new().route(
        "/length",
        axum::routing::post(|body: Bytes| async move { format!("{} bytes", body.len()) }),
    ))
    .await;
    let server = setup_server([]);
    server.listen_with(bypass_unhandled());
    let address = listener_address(&server);
    let exchange = tokio::task::spawn_blocking(move || {
        let stream = TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(READ_GUARD)).unwrap();
        let mut raw = Raw {
            reader: BufReader::new(stream),
        };
        raw.send(
            format!(
                "POST http://{upstream}/length HTTP/1.1\r\nHost: {upstream}\r\n\
                 Expect: 100-continue\r\nContent-Length: 3000\r\n\r\n"
            )
            .as_bytes(),
        );
        let interim = raw.read_head();
        raw.send(&[b'z'; 3000]);
        (interim, raw.read_response())
    });
    let (interim, response) = tokio::time::timeout(EXCHANGE_GUARD, exchange)
        .await
        .expect("hang guard")
        .unwrap();
    assert!(
        interim.starts_with("HTTP/1.1 100 Continue\r\n"),
        "{interim:?}"
    );
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(response.text(), "3000 bytes");
}

#[test]
fn curl_posting_a_large_body_with_expect_100_continue_is_answered() {
    let server = setup_server([http::post("/upload", |args| {
        let body = args.request.body();
        HttpResponse::text(format!(
            "expect={} length={} fnv={:x}",
            args.request.header("expect").unwrap_or("-"),
            body.len(),
            fnv1a(body)
        ))
    })]);
    server.listen_with(common::error_on_unhandled());
    // Over 1 MiB so that every curl version sends `Expect: 100-continue` by
    // itself (older ones from 1 KiB, newer ones from 1 MiB).
    let body = pseudo_random_bytes(2 * 1024 * 1024 + 7, 0x5eed);
    let mut child = Command::new("curl")
        .args([
            "--silent",
            "--show-error",
            "--http1.1",
            "--data-binary",
            "@-",
            "--header",
            "content-type: application/octet-stream",
            "--max-time",
            "60", // hang guard
            "--write-out",
            "\n%{http_code}",
        ])
        .arg(server.url().join("/upload").unwrap().as_str())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("curl runs");
    child.stdin.take().unwrap().write_all(&body).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "curl failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!(
            "expect=100-continue length={} fnv={:x}\n200",
            body.len(),
            fnv1a(&body)
        )
    );
}

// ---------------------------------------------------------------------------
// 4. large bodies

const MIB: usize = 1024 * 1024;
const CHUNK: usize = 64 * 1024;
const BIG: usize = 100 * MIB;

/// A response body of `BIG` bytes produced one 64 KiB chunk at a time (chunk
/// `i` is filled with byte `i % 251`), never held whole in memory. After
/// half of it, it waits for `gate` to open: the client opens it once it has
/// received some bytes, which it can only do if the listener streams the
/// response instead of collecting it first.
struct GatedBody {
    produced: usize,
    gate: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl http_body::Body for GatedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        if self.produced >= BIG {
            return Poll::Ready(None);
        }
        if self.produced >= BIG / 2
            && let Some(gate) = self.gate.as_mut()
        {
            match Pin::new(gate).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(_) => self.gate = None,
            }
        }
        let index = self.produced / CHUNK;
        self.produced += CHUNK;
        Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from(vec![
            (index % 251)
                as u8;
            CHUNK
        ])))))
    }
}

fn expected_sum_of_big_body() -> u64 {
    (0..BIG / CHUNK)
        .map(|index| (index % 251) as u64 * CHUNK as u64)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mib_passthrough_response_streams_through_the_proxy() {
    let (open_gate, gate) = tokio::sync::oneshot::channel::<()>();
    let gate = Arc::new(Mutex::new(Some(gate)));
    let upstream = test_support::spawn_upstream(axum::Router::new().route(
        "/big",
        axum::routing::get(move || {
            let gate = gate.lock().unwrap().take();
            async move { axum::body::Body::new(GatedBody { produced: 0, gate }) }
        }),
    ))
    .await;
    let server = setup_server([]);
    server.listen_with(bypass_unhandled());
    let client = server.reqwest_client();

    let download = async move {
        let mut response = client
            .get(format!("http://{upstream}/big"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let mut open_gate = Some(open_gate);
        let (mut total, mut sum, mut chunks) = (0usize, 0u64, 0usize);
        while let Some(chunk) = response.chunk().await.unwrap() {
            total += chunk.len();
            chunks += 1;
            sum += chunk.iter().map(|&byte| u64::from(byte)).sum::<u64>();
            if total >= MIB
                && let Some(open) = open_gate.take()
            {
                let _ = open.send(());
            }
        }
        (total, sum, chunks)
    };
    // Hang guard: a listener that collected the whole body before answering
    // would never let the gate open and so would never finish.
    let (total, sum, chunks) = tokio::time::timeout(EXCHANGE_GUARD, download)
        .await
        .expect("the response did not stream (hang guard)");
    assert_eq!(total, BIG);
    assert_eq!(sum, expected_sum_of_big_body());
    assert!(chunks > 1, "{chunks}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_8_mib_request_body_reaches_the_resolver_intact() {
    let server = setup_server([http::post("/upload", |args| {
        let body = args.request.body();
        HttpResponse::json(&json!({ "length": body.len(), "fnv": fnv1a(body).to_string() }))
    })]);
    server.listen_with(common::error_on_unhandled());
    let body = pseudo_random_bytes(8 * MIB + 3, 42);
    let expected = json!({ "length": body.len(), "fnv": fnv1a(&body).to_string() });

    // Base URL mode, HTTP/1.1.
    let direct: Value = tokio::time::timeout(EXCHANGE_GUARD, async {
        reqwest::Client::new()
            .post(server.url().join("/upload").unwrap())
            .body(body.clone())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    })
    .await
    .expect("hang guard");
    assert_eq!(direct, expected);

    // HTTPS through CONNECT, HTTP/2 (flow control windows far below 8 MiB).
    let response = tokio::time::timeout(EXCHANGE_GUARD, async {
        h2_client(&server)
            .post("https://api.example.com/upload")
            .body(body.clone())
            .send()
            .await
            .unwrap()
    })
    .await
    .expect("hang guard");
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.json::<Value>().await.unwrap(), expected);
}

// ---------------------------------------------------------------------------
// 5. HTTP/2 with prior knowledge (h2c)

fn h2c_client() -> hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
> {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

async fn h2c_get(
    client: &hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        Full<Bytes>,
    >,
    url: String,
) -> (hyper::Version, u16, String) {
    let request = hyper::Request::get(url)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = tokio::time::timeout(EXCHANGE_GUARD, client.request(request))
        .await
        .expect("hang guard")
        .unwrap();
    let version = response.version();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (version, status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_prior_knowledge_in_base_url_mode_is_answered() {
    let server = setup_server([http::get("/item/:n", |args| {
        HttpResponse::text(format!("item {}", &args.params["n"]))
    })]);
    server.listen_with(common::error_on_unhandled());
    let client = h2c_client();
    let (version, status, body) = h2c_get(&client, format!("{}item/1", server.url())).await;
    assert_eq!(version, hyper::Version::HTTP_2);
    assert_eq!(status, 200);
    assert_eq!(body, "item 1");

    // Concurrent streams multiplexed on the client's one connection.
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..20 {
        let client = client.clone();
        let url = format!("{}item/{n}", server.url());
        tasks.spawn(async move { (n, h2c_get(&client, url).await) });
    }
    while let Some(joined) = tasks.join_next().await {
        let (n, (version, status, body)) = joined.unwrap();
        assert_eq!(version, hyper::Version::HTTP_2);
        assert_eq!(status, 200);
        assert_eq!(body, format!("item {n}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn h2c_in_base_url_mode_pins_relative_predicates_to_the_listener_origin() {
    // Over HTTP/1.1 a request sent straight to the listener uses the
    // listener's origin as the base URL, ahead of `ListenOptions::base_url`.
    // HTTP/2 carries the same request with `:scheme` and `:authority`, so
    // the listener should treat it the same way.
    let server = setup_server([http::get("/where", |_| HttpResponse::text("here"))]);
    server.listen_with(
        common::error_on_unhandled().base_url("https://elsewhere.example/".parse().unwrap()),
    );
    let url = format!("{}where", server.url());

    let http1 = reqwest::get(&url).await.unwrap();
    assert_eq!(http1.status(), 200);
    assert_eq!(http1.text().await.unwrap(), "here");

    let (version, status, body) = h2c_get(&h2c_client(), url).await;
    assert_eq!(version, hyper::Version::HTTP_2);
    assert_eq!((status, body.as_str()), (200, "here"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn the_resolver_sees_the_http_version_the_client_used() {
    let server = setup_server([http::get("/version", |args| {
        HttpResponse::text(format!("{:?}", args.request.version()))
    })]);
    server.listen_with(common::error_on_unhandled());
    let url = format!("{}version", server.url());
    let (_, status, body) = h2c_get(&h2c_client(), url.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(body, "HTTP/2.0", "h2c in base URL mode");

    let over_tls = h2_client(&server)
        .get("https://api.example.com/version")
        .send()
        .await
        .unwrap();
    assert_eq!(over_tls.version(), reqwest::Version::HTTP_2);
    assert_eq!(
        over_tls.text().await.unwrap(),
        "HTTP/2.0",
        "h2 over CONNECT"
    );

    let mut raw = Raw::connect(&server);
    raw.send(b"GET /version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(raw.read_response().text(), "HTTP/1.0", "HTTP/1.0 client");
}

// ---------------------------------------------------------------------------
// 6. the spec's posts API over HTTPS through the listener

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_posts_api_over_https_through_the_listener() {
    const API: &str = "https://api.example.com";
    let server = common::reference_api();
    server.listen_with(common::error_on_unhandled());
    let client = h2_client(&server);

    let listed = client.get(format!("{API}/posts")).send().await.unwrap();
    assert_eq!(listed.status(), 200);
    assert_eq!(listed.version(), reqwest::Version::HTTP_2);
    assert_eq!(listed.json::<Value>().await.unwrap(), json!([]));

    let post = json!({ "id": 1, "title": "Hello" });
    let created = client
        .post(format!("{API}/posts"))
        .json(&post)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(created.json::<Value>().await.unwrap(), post);

    let listed = client.get(format!("{API}/posts")).send().await.unwrap();
    assert_eq!(listed.json::<Value>().await.unwrap(), json!([post]));

    let deleted = client
        .delete(format!("{API}/posts/1"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(deleted.json::<Value>().await.unwrap(), post);

    let missing = client
        .delete(format!("{API}/posts/1"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing.bytes().await.unwrap().is_empty());

    let listed = client.get(format!("{API}/posts")).send().await.unwrap();
    assert_eq!(listed.json::<Value>().await.unwrap(), json!([]));
}

// ---------------------------------------------------------------------------
// 7. passthrough over TLS to an upstream with its own CA
//
// rcgen is not a dev-dependency, so the test PKI comes from the `openssl`
// command line and the HTTPS upstream is Python's `http.server` behind
// `ssl` (child processes, like curl and Python in listener.rs).

/// A child process killed when the test ends, however it ends.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private scratch directory removed when the test ends.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn openssl(dir: &std::path::Path, args: &[&str]) {
    test_support::stdout_of(Command::new("openssl").args(args).current_dir(dir));
}

/// A test CA and a leaf for 127.0.0.1 / localhost signed by it; returns the
/// CA certificate (PEM).
fn make_test_pki(dir: &std::path::Path) -> String {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=listener_http test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n\
         basicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature\n\
         extendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ],
    );
    std::fs::read_to_string(dir.join("ca.pem")).unwrap()
}

/// Python's HTTPS server on an ephemeral loopback port; returns the port.
fn spawn_python_https(dir: &std::path::Path) -> (KillOnDrop, u16) {
    let script = r#"
import http.server, ssl, sys
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = ("secure hello " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Upstream", "python")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain("leaf.pem", "leaf.key")
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;
    let mut child = KillOnDrop(
        Command::new("python3")
            .args(["-c", script])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs"),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("python printed {line:?}"));
    (child, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_over_tls_trusts_extra_upstream_roots_and_only_those() {
    let dir = std::env::temp_dir().join(format!(
        "mocklib-listener-http-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir(&dir).unwrap();
    let _scratch = Scratch(dir.clone());
    let ca_pem = make_test_pki(&dir);
    let (_python, port) = spawn_python_https(&dir);

    for host in ["127.0.0.1", "localhost"] {
        let url = format!("https://{host}:{port}/secure");
        let trusting = setup_server([]);
        trusting.listen_with(bypass_unhandled().upstream_root_certificates(vec![ca_pem.clone()]));
        let response =
            tokio::time::timeout(EXCHANGE_GUARD, trusting.reqwest_client().get(&url).send())
                .await
                .expect("hang guard")
                .unwrap();
        assert_eq!(response.status(), 200, "{url}");
        assert_eq!(response.headers()["x-upstream"], "python");
        assert_eq!(response.text().await.unwrap(), "secure hello /secure");

        // Verification is always on: without the test CA it is a 502.
        let untrusting = setup_server([]);
        untrusting.listen_with(bypass_unhandled());
        let response =
            tokio::time::timeout(EXCHANGE_GUARD, untrusting.reqwest_client().get(&url).send())
                .await
                .expect("hang guard")
                .unwrap();
        assert_eq!(response.status(), 502, "{url}");
        let text = response.text().await.unwrap();
        assert!(text.to_ascii_lowercase().contains("certificate"), "{text}");
    }
}

/// The server's reqwest client speaking HTTP/2 inside its tunnels.
fn h2_client(server: &mocklib::node::Server) -> reqwest::Client {
    server
        .reqwest_client_builder()
        .http2_prior_knowledge()
        .build()
        .unwrap()
}
