//! Bad input never takes the loopback listener down: malformed HTTP, garbage
//! inside `CONNECT` tunnels, failed TLS handshakes, clients that vanish, and
//! a seeded fuzz run. After each, a valid request on a new connection must
//! still be answered, and no thread of a listener runtime may have panicked.
//!
//! Every server here fails unhandled requests (`UnhandledRequest::Error`) and
//! has no passthrough handler, so nothing ever leaves the machine — except
//! in "requests that cannot be passed on", whose servers do pass requests
//! through but only ones mocklib must refuse before any connection is made.
//!
//! Timeouts in this file are hang guards (a listener that stops answering
//! must fail a test rather than hang it) or bound how long a fuzz client
//! waits; none of them asserts anything about speed.

use crate::common;
use crate::listener_panics::{count_listener_panics, listener_panics};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use test_support::raw::{Ended, read_until_closed, status_of};

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Hang guard for one exchange with the listener.
const GUARD: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// panic counter (see listener_panics.rs)

fn assert_no_listener_panics() {
    assert_eq!(
        listener_panics(),
        0,
        "a listener thread panicked (see the panic message in the output)"
    );
}

// ---------------------------------------------------------------------------
// helpers

fn server() -> Server {
    server_with([])
}

/// The test server, with `last` after its own handlers.
fn server_with(last: impl IntoIterator<Item = mocklib::Handler>) -> Server {
    server_on(mocklib::UnhandledRequest::Error, last)
}

/// The test server with the unhandled-request strategy `strategy`, and
/// `last` after its own handlers.
fn server_on(
    strategy: mocklib::UnhandledRequest,
    last: impl IntoIterator<Item = mocklib::Handler>,
) -> Server {
    count_listener_panics();
    let mut handlers = vec![
        http::get("/ok", |_| HttpResponse::text("ok")),
        http::get("http://api.example.com/ok", |_| HttpResponse::text("ok")),
        http::get("https://api.example.com/ok", |_| HttpResponse::text("ok")),
        http::post("/echo", |args| HttpResponse::bytes(args.request.bytes())),
    ];
    handlers.extend(last);
    let server = setup_server(handlers);
    server.listen_with(mocklib::ListenOptions::new().on_unhandled_request(strategy));
    server
}

fn address(server: &Server) -> std::net::SocketAddr {
    server.url().socket_addrs(|| None).unwrap()[0]
}

/// Connects, writes `bytes` (the listener may hang up before taking all of
/// them: write errors are part of the game), optionally half-closes, and
/// reads until the connection ends.
async fn exchange(server: &Server, bytes: &[u8], half_close: bool, wait: Duration) -> Ended {
    let mut stream = TcpStream::connect(address(server)).await.unwrap();
    let written = tokio::time::timeout(wait, async {
        stream.write_all(bytes).await?;
        if half_close {
            stream.shutdown().await?;
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
    match written {
        Ok(Ok(())) | Ok(Err(_)) => read_until_closed(&mut stream, wait).await,
        Err(_) => Ended::StillOpen(Vec::new()),
    }
}

/// A valid request on a new connection is answered.
async fn assert_healthy(server: &Server, after: &str) {
    let ended = exchange(
        server,
        b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        false,
        GUARD,
    )
    .await;
    let Ended::Closed(reply) = &ended else {
        panic!("after {after}: a valid request was not answered: {ended:?}");
    };
    assert_eq!(status_of(reply), Some(200), "after {after}: {ended:?}");
    assert!(reply.ends_with(b"\r\n\r\nok"), "after {after}: {ended:?}");
    assert_no_listener_panics();
}

/// The request was refused with a 4xx/5xx, or the connection was closed
/// without a response; in every case it ended.
fn assert_refused_or_closed(case: &str, ended: &Ended) {
    let received = ended.received();
    assert!(
        !matches!(ended, Ended::StillOpen(_)),
        "{case}: the listener neither answered nor closed: {ended:?}"
    );
    if !received.is_empty() {
        let status = status_of(received);
        assert!(
            status.is_some_and(|status| (400..600).contains(&status)),
            "{case}: expected a 4xx/5xx or nothing, got {:?}",
            String::from_utf8_lossy(&received[..received.len().min(200)])
        );
    }
}

/// Deterministic pseudo-random numbers (xorshift64*), seeded by the test.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // splitmix64 so that nearby seeds give unrelated streams (and 0 works).
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// The first TLS record (the ClientHello) a real client (reqwest/rustls)
/// sends, captured on a throwaway local socket.
async fn capture_client_hello() -> Vec<u8> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // Fails once the capturing side hangs up, which is the point. The name
    // is resolved to the capturing socket: nothing leaves the machine.
    let client = tokio::spawn(async move {
        let _ = reqwest::Client::builder()
            .resolve(
                "api.example.com",
                std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            )
            .build()
            .unwrap()
            .get(format!("https://api.example.com:{port}/"))
            .send()
            .await;
    });
    let (mut socket, _) = tokio::time::timeout(GUARD, listener.accept())
        .await
        .expect("hang guard")
        .unwrap();
    let mut header = [0u8; 5];
    socket.read_exact(&mut header).await.unwrap();
    assert_eq!(header[0], 0x16, "a TLS handshake record");
    let length = usize::from(u16::from_be_bytes([header[3], header[4]]));
    let mut record = header.to_vec();
    record.resize(5 + length, 0);
    socket.read_exact(&mut record[5..]).await.unwrap();
    drop(socket);
    let _ = client.await;
    record
}

const CONNECT: &[u8] = b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n";

/// Opens a `CONNECT` tunnel and reads the listener's 200.
async fn open_tunnel(server: &Server) -> TcpStream {
    let mut stream = TcpStream::connect(address(server)).await.unwrap();
    stream.write_all(CONNECT).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(GUARD, stream.read(&mut byte))
            .await
            .expect("hang guard")
            .unwrap();
        assert_eq!(n, 1, "closed during the CONNECT response: {head:?}");
        head.push(byte[0]);
    }
    assert_eq!(
        status_of(&head),
        Some(200),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

// ---------------------------------------------------------------------------
// 1. malformed requests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_are_refused_or_closed_and_the_listener_keeps_serving() {
    let server = server();
    let mut rng = Rng::new(1);
    let long_line = format!(
        "GET /nowhere/{} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "a".repeat(100 * 1024)
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage request line", b"GARBAGE\r\n\r\n".to_vec()),
        ("method only", b"GET\r\n\r\n".to_vec()),
        ("method and target, no version", b"GET /ok\r\n\r\n".to_vec()),
        ("binary noise", rng.bytes(4096)),
        ("NUL bytes", vec![0; 512]),
        ("unknown HTTP version", b"GET /ok HTTP/9.9\r\nHost: x\r\n\r\n".to_vec()),
        ("request line of 100 KiB", long_line.into_bytes()),
        (
            "space in a header name",
            b"GET /ok HTTP/1.1\r\nHost: x\r\nBad Header: v\r\n\r\n".to_vec(),
        ),
        (
            "NUL in a header name",
            b"GET /ok HTTP/1.1\r\nHost: x\r\nBa\0d: v\r\n\r\n".to_vec(),
        ),
        (
            "empty header name",
            b"GET /ok HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n".to_vec(),
        ),
        (
            "header line without a colon",
            b"GET /ok HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n".to_vec(),
        ),
        (
            "obsolete line folding",
            b"GET /ok HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n".to_vec(),
        ),
        (
            "Content-Length: -1",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\nabc".to_vec(),
        ),
        (
            "Content-Length not a number",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\nabc".to_vec(),
        ),
        (
            "two different Content-Lengths",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"
                .to_vec(),
        ),
        (
            "unknown transfer coding",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc".to_vec(),
        ),
        (
            "truncated chunked body",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly half"
                .to_vec(),
        ),
        (
            "chunked body without its last chunk",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
                .to_vec(),
        ),
        (
            "invalid chunk size",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
                .to_vec(),
        ),
        (
            "chunk size overflowing 64 bits",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nabc\r\n"
                .to_vec(),
        ),
        (
            "truncated Content-Length body",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nten bytes!".to_vec(),
        ),
        (
            "Host that is not a host",
            b"GET /ok HTTP/1.1\r\nHost: exa mple\r\n\r\n".to_vec(),
        ),
        (
            "Host with an unclosed IPv6 bracket",
            b"GET /ok HTTP/1.1\r\nHost: [::1\r\n\r\n".to_vec(),
        ),
        (
            "CONNECT to a path",
            b"CONNECT /path HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        ),
        (
            "CONNECT to nothing",
            b"CONNECT  HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        ),
        (
            "bare LF line endings with garbage",
            b"GET /ok HTTP/1.1\nHost: x\n\x01\x02\n\n".to_vec(),
        ),
        ("HTTP/2 preface and then garbage", {
            let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
            bytes.extend(rng.bytes(256));
            bytes
        }),
    ];
    for (case, bytes) in &cases {
        let ended = exchange(&server, bytes, true, GUARD).await;
        println!(
            "{case}: {:?}",
            String::from_utf8_lossy(&ended.received()[..ended.received().len().min(40)])
        );
        // h2 answers garbage with a GOAWAY frame, not an HTTP/1.1 status.
        if case.starts_with("HTTP/2") {
            assert!(!matches!(ended, Ended::StillOpen(_)), "{case}: {ended:?}");
        } else {
            assert_refused_or_closed(case, &ended);
        }
        assert_healthy(&server, case).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_length_with_chunked_is_refused_or_read_as_chunked_then_closed() {
    // RFC 9112 §6.1 and §6.3: Transfer-Encoding overrides Content-Length;
    // a server may reject such a request, or read it as chunked and then
    // close the connection. Either way the bytes after it must never be
    // read as a second request (request smuggling).
    let server = server();
    let smuggled = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\
        Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n\
        GET /ok HTTP/1.1\r\nHost: x\r\n\r\n";
    let ended = exchange(&server, smuggled, false, GUARD).await;
    let received = String::from_utf8_lossy(ended.received()).into_owned();
    assert!(
        matches!(ended, Ended::Closed(_) | Ended::Reset(_)),
        "the connection must be closed: {ended:?}"
    );
    match status_of(ended.received()) {
        Some(400..=599) | None => {}
        Some(200) => {
            assert!(received.ends_with("\r\n\r\nhello"), "{received}");
            assert!(
                received.to_ascii_lowercase().contains("connection: close"),
                "{received}"
            );
        }
        Some(other) => panic!("unexpected status {other}: {received}"),
    }
    assert_eq!(
        received.matches("HTTP/1.1 ").count(),
        usize::from(!received.is_empty()),
        "a second request was read from the same bytes: {received}"
    );
    assert_healthy(&server, "Content-Length with chunked").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_block_of_1_mib_is_refused_and_the_listener_keeps_serving() {
    let server = server();
    let mut request = b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_vec();
    // Many ordinary headers…
    let mut n = 0;
    while request.len() < 512 * 1024 {
        request.extend(format!("X-Pad-{n}: {}\r\n", "p".repeat(1000)).as_bytes());
        n += 1;
    }
    // …then one huge one, 1 MiB in all.
    request.extend(b"X-Huge: ");
    request.resize(1024 * 1024 - 4, b'h');
    request.extend(b"\r\n\r\n");
    let ended = exchange(&server, &request, true, GUARD).await;
    assert_refused_or_closed("header block of 1 MiB", &ended);
    assert_healthy(&server, "a header block of 1 MiB").await;
}

// ---------------------------------------------------------------------------
// 2. garbage inside CONNECT tunnels

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_inside_a_connect_tunnel_closes_the_tunnel_only() {
    let server = server();
    let mut rng = Rng::new(2);

    // Random bytes that are neither TLS (0x16) nor an HTTP method.
    let mut noise = rng.bytes(2048);
    noise[0] = 0x00;
    let mut tunnel = open_tunnel(&server).await;
    tunnel.write_all(&noise).await.unwrap();
    let _ = tunnel.shutdown().await;
    let ended = read_until_closed(&mut tunnel, GUARD).await;
    assert_refused_or_closed("random bytes in a tunnel", &ended);
    assert_healthy(&server, "random bytes in a tunnel").await;

    // The same, written together with the CONNECT (the listener must hand
    // bytes it already buffered over to the tunnel).
    let mut bytes = CONNECT.to_vec();
    bytes.extend(&noise);
    let ended = exchange(&server, &bytes, true, GUARD).await;
    assert!(!matches!(ended, Ended::StillOpen(_)), "{ended:?}");
    let received = ended.received();
    assert_eq!(status_of(received), Some(200), "{ended:?}");
    assert_healthy(&server, "CONNECT and random bytes in one write").await;

    // CONNECT inside a plain tunnel is refused, and that tunnel goes on.
    let nested = b"CONNECT api.example.com:80 HTTP/1.1\r\nHost: api.example.com:80\r\n\r\n\
        CONNECT other.example.com:443 HTTP/1.1\r\nHost: other.example.com:443\r\n\r\n\
        GET /ok HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n";
    let ended = exchange(&server, nested, false, GUARD).await;
    let received = String::from_utf8_lossy(ended.received()).into_owned();
    assert!(matches!(ended, Ended::Closed(_)), "{ended:?}");
    let statuses: Vec<&str> = received
        .match_indices("HTTP/1.1 ")
        .map(|(i, _)| &received[i + 9..i + 12])
        .collect();
    assert_eq!(statuses, ["200", "405", "200"], "{received}");
    assert!(received.ends_with("\r\n\r\nok"), "{received}");

    // Something that starts like TLS (0x16) and then is not.
    let mut fake_tls = vec![0x16];
    fake_tls.extend(rng.bytes(1024));
    let mut tunnel = open_tunnel(&server).await;
    tunnel.write_all(&fake_tls).await.unwrap();
    let _ = tunnel.shutdown().await;
    let ended = read_until_closed(&mut tunnel, GUARD).await;
    assert!(!matches!(ended, Ended::StillOpen(_)), "{ended:?}");
    assert_healthy(&server, "a fake TLS record in a tunnel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_hello_cut_in_half_ends_the_tunnel_only() {
    let server = server();
    let hello = capture_client_hello().await;
    let half = &hello[..hello.len() / 2];

    // Half a ClientHello, then the client says it is done sending.
    let mut tunnel = open_tunnel(&server).await;
    tunnel.write_all(half).await.unwrap();
    tunnel.shutdown().await.unwrap();
    let ended = read_until_closed(&mut tunnel, GUARD).await;
    assert!(
        !matches!(ended, Ended::StillOpen(_)),
        "the tunnel should end when the handshake cannot complete: {ended:?}"
    );
    assert_healthy(&server, "half a ClientHello, half-closed").await;

    // Half a ClientHello, then the client is gone.
    let mut tunnel = open_tunnel(&server).await;
    tunnel.write_all(half).await.unwrap();
    drop(tunnel);
    assert_healthy(&server, "half a ClientHello, then closed").await;

    // The whole ClientHello is answered (sanity check of the capture).
    let mut tunnel = open_tunnel(&server).await;
    tunnel.write_all(&hello).await.unwrap();
    let mut first = [0u8; 1];
    tokio::time::timeout(GUARD, tunnel.read_exact(&mut first))
        .await
        .expect("hang guard")
        .unwrap();
    assert_eq!(first[0], 0x16, "a ServerHello (TLS handshake record)");
}

// ---------------------------------------------------------------------------
// 3. failed TLS handshakes

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_do_not_trust_the_ca_fail_and_the_listener_keeps_serving() {
    let server = server();
    let other = setup_server([]);
    other.listen();

    let proxy = || reqwest::Proxy::all(server.proxy_url().as_str()).unwrap();
    let untrusting = [
        // Default roots only (whatever the TLS backend trusts by default).
        reqwest::Client::builder().proxy(proxy()).build().unwrap(),
        // Another mocklib server's CA.
        reqwest::Client::builder()
            .proxy(proxy())
            .tls_certs_only([
                reqwest::Certificate::from_pem(other.ca_certificate_pem().as_bytes()).unwrap(),
            ])
            .build()
            .unwrap(),
    ];
    for round in 0..3 {
        for (i, client) in untrusting.iter().enumerate() {
            let error =
                tokio::time::timeout(GUARD, client.get("https://api.example.com/ok").send())
                    .await
                    .expect("hang guard")
                    .unwrap_err();
            assert!(error.is_connect(), "round {round}, client {i}: {error:?}");
            let chain = format!("{error:?}").to_ascii_lowercase();
            assert!(chain.contains("certificate"), "{chain}");
        }
    }
    let trusting = server.reqwest_client();
    let response = tokio::time::timeout(GUARD, trusting.get("https://api.example.com/ok").send())
        .await
        .expect("hang guard")
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "ok");
    assert_healthy(&server, "failed TLS handshakes").await;
}

// ---------------------------------------------------------------------------
// 4. clients that vanish

/// Writes `bytes` and closes: with a FIN, or (`reset`) with an RST.
async fn write_and_vanish(server: &Server, bytes: &[u8], reset: bool) {
    let mut stream = TcpStream::connect(address(server)).await.unwrap();
    let _ = stream.write_all(bytes).await;
    if reset {
        // SO_LINGER 0: close() sends an RST and does not block.
        #[allow(deprecated)]
        stream.set_linger(Some(Duration::ZERO)).unwrap();
    }
    drop(stream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_vanish_mid_request_do_not_hurt_the_listener() {
    let server = server();
    server.use_handlers([http::get("/slow", |_| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        HttpResponse::text("too late")
    })]);
    let body_of_1000 = "b".repeat(500);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("half a request line", b"GET /o".to_vec()),
        (
            "half the headers",
            b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nAcc".to_vec(),
        ),
        (
            "half a Content-Length body",
            format!("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{body_of_1000}")
                .into_bytes(),
        ),
        (
            "half a chunked body",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\nabcd"
                .to_vec(),
        ),
        (
            "a request whose response is not awaited",
            b"GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
        ),
        ("half a CONNECT", b"CONNECT api.example.com:4".to_vec()),
        ("a CONNECT and nothing after", CONNECT.to_vec()),
        (
            "half an HTTP/2 preface",
            b"PRI * HTTP/2.0\r\n\r\nS".to_vec(),
        ),
    ];
    for (case, bytes) in &cases {
        for reset in [false, true] {
            write_and_vanish(&server, bytes, reset).await;
            assert_healthy(&server, &format!("{case} (reset: {reset})")).await;
        }
    }
    // Vanishing in the middle of an HTTPS request, after the handshake.
    let inside = tokio::time::timeout(
        Duration::from_millis(10),
        server
            .reqwest_client()
            .get("https://api.example.com/slow")
            .send(),
    )
    .await;
    assert!(inside.is_err(), "the client gave up before the answer");
    assert_healthy(&server, "an HTTPS client that gave up").await;
}

async fn next(seen: &mut tokio::sync::mpsc::UnboundedReceiver<&'static str>) -> &'static str {
    tokio::time::timeout(GUARD, seen.recv())
        .await
        .expect("hang guard")
        .unwrap()
}

/// Sends `"dropped"` when dropped.
struct DropSignal(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolver_still_running_when_its_client_vanishes_is_cancelled() {
    let (events, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let server = server_with([http::get("/never", move |_| {
        let events = events.clone();
        async move {
            let _ = events.send("started");
            let _signal = DropSignal(events);
            std::future::pending::<HttpResponse>().await
        }
    })]);

    // HTTP/1.1, straight to the listener: the client hangs up mid-answer.
    let mut stream = TcpStream::connect(address(&server)).await.unwrap();
    stream
        .write_all(b"GET /never HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(next(&mut seen).await, "started");
    drop(stream);
    assert_eq!(next(&mut seen).await, "dropped", "HTTP/1.1");
    assert_healthy(&server, "a vanished HTTP/1.1 client").await;

    // HTTP/2 over TLS through CONNECT: the client drops the request.
    let client = server.reqwest_client();
    let request = tokio::spawn(async move {
        let _ = client.get("https://api.example.com/never").send().await;
    });
    assert_eq!(next(&mut seen).await, "started");
    request.abort();
    let _ = request.await;
    assert_eq!(next(&mut seen).await, "dropped", "HTTP/2");
    assert_healthy(&server, "a vanished HTTP/2 client").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_while_a_large_mocked_response_streams() {
    let server = server();
    let big = bytes::Bytes::from(vec![b'x'; 32 * 1024 * 1024]);
    server.use_handlers([http::get("/big", move |_| HttpResponse::bytes(big.clone()))]);
    for reset in [false, true] {
        let mut stream = TcpStream::connect(address(&server)).await.unwrap();
        stream
            .write_all(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let mut some = [0u8; 4096];
        let n = tokio::time::timeout(GUARD, stream.read(&mut some))
            .await
            .expect("hang guard")
            .unwrap();
        assert_eq!(status_of(&some[..n]), Some(200));
        if reset {
            #[allow(deprecated)]
            stream.set_linger(Some(Duration::ZERO)).unwrap();
        }
        drop(stream);
        assert_healthy(&server, &format!("a vanished download (reset: {reset})")).await;
    }
}

// ---------------------------------------------------------------------------
// 5 and 6. fuzzing, and no panic on a listener thread

/// A few valid requests of every kind the listener reads, to mutate.
fn corpus(client_hello: &[u8]) -> Vec<Vec<u8>> {
    let mut h2c = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    h2c.extend([0, 0, 0, 4, 0, 0, 0, 0, 0]); // empty SETTINGS
    // HEADERS, END_STREAM | END_HEADERS, stream 1: GET http 127.0.0.1 /ok
    // (HPACK: indexed :method GET, :scheme http, literal :path, :authority).
    let mut block = vec![0x82, 0x86, 0x44, 3, b'/', b'o', b'k', 0x41, 9];
    block.extend(b"127.0.0.1");
    h2c.extend([0, 0, block.len() as u8, 1, 0x05, 0, 0, 0, 1]);
    h2c.extend(block);
    let mut connect_tls = CONNECT.to_vec();
    connect_tls.extend(client_hello);
    vec![
        b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n".to_vec(),
        b"GET http://api.example.com/ok?x=1 HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: fuzz\r\n\r\n".to_vec(),
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world".to_vec(),
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n".to_vec(),
        b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".to_vec(),
        CONNECT.to_vec(),
        b"CONNECT api.example.com:80 HTTP/1.1\r\nHost: api.example.com:80\r\n\r\nGET /ok HTTP/1.1\r\nHost: api.example.com\r\n\r\n".to_vec(),
        connect_tls,
        h2c,
    ]
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    // One case in ten is pure noise.
    if rng.below(10) == 0 {
        let len = rng.below(2048);
        return rng.bytes(len);
    }
    let mut bytes = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let len = bytes.len();
        match rng.below(8) {
            // Flip one bit.
            0 if len > 0 => {
                let i = rng.below(len);
                bytes[i] ^= 1 << rng.below(8);
            }
            // Overwrite a byte, often with something HTTP cares about.
            1 if len > 0 => {
                let i = rng.below(len);
                const SPECIAL: &[u8] = b"\r\n :/?#[]%\0\x7f\xff0-9aZ";
                bytes[i] = if rng.below(2) == 0 {
                    SPECIAL[rng.below(SPECIAL.len())]
                } else {
                    rng.next() as u8
                };
            }
            // Insert random bytes.
            2 => {
                let i = rng.below(len + 1);
                let n = 1 + rng.below(16);
                let noise = rng.bytes(n);
                bytes.splice(i..i, noise);
            }
            // Delete a range.
            3 if len > 0 => {
                let i = rng.below(len);
                let end = (i + 1 + rng.below(32)).min(len);
                bytes.drain(i..end);
            }
            // Duplicate a range (sometimes many times).
            4 if len > 0 => {
                let i = rng.below(len);
                let end = (i + 1 + rng.below(64)).min(len);
                let range = bytes[i..end].to_vec();
                let times = if rng.below(8) == 0 {
                    1 + rng.below(200)
                } else {
                    1
                };
                for _ in 0..times {
                    bytes.splice(end..end, range.iter().copied());
                }
            }
            // Truncate.
            5 if len > 0 => bytes.truncate(rng.below(len)),
            // Splice in the tail of another seed.
            6 => {
                let other = &seeds[rng.below(seeds.len())];
                let i = rng.below(len + 1);
                let j = rng.below(other.len());
                bytes.truncate(i);
                bytes.extend_from_slice(&other[j..]);
            }
            // Change a digit (lengths, chunk sizes, ports).
            _ => {
                if let Some(i) = (0..len)
                    .map(|k| (k + rng.below(len.max(1))) % len.max(1))
                    .take(16)
                    .find(|&k| bytes.get(k).is_some_and(u8::is_ascii_digit))
                {
                    bytes[i] = b'0' + rng.below(10) as u8;
                }
            }
        }
    }
    bytes
}

#[derive(Default, Debug)]
struct FuzzStats {
    answered_2xx: usize,
    answered_4xx_5xx: usize,
    other_bytes: usize,
    closed_silently: usize,
    reset: usize,
    still_open: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzed_requests_never_take_the_listener_down_nor_panic_it() {
    const CASES: usize = 10_000;
    const CONCURRENCY: usize = 32;
    // Per connection: how long a fuzz client waits for the listener.
    const PER_CONNECTION: Duration = Duration::from_millis(200);

    let seed = std::env::var("LISTENER_FUZZ_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    // Shown on failure (libtest prints a failing test's output).
    println!("fuzz seed: {seed} (rerun with LISTENER_FUZZ_SEED={seed})");

    // A catch-all last, so that mutated requests get answers too (and none
    // is ever unhandled).
    let server = server_with([http::all("*", |args| {
        HttpResponse::text(format!("caught {} bytes", args.request.body().len())).status(404)
    })]);
    let handlers_before: Vec<String> = server
        .list_handlers()
        .iter()
        .map(ToString::to_string)
        .collect();
    let seeds = corpus(&capture_client_hello().await);

    let run = async {
        let mut stats = FuzzStats::default();
        let mut tasks = tokio::task::JoinSet::new();
        for case in 0..CASES {
            if tasks.len() >= CONCURRENCY
                && let Some(done) = tasks.join_next().await
            {
                tally(&mut stats, done.unwrap());
            }
            // Each case has its own stream, so one case can be replayed.
            let mut rng = Rng::new(seed ^ (case as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let bytes = mutate(&mut rng, &seeds);
            let half_close = rng.below(2) == 0;
            let server = server.clone();
            tasks.spawn(async move { exchange(&server, &bytes, half_close, PER_CONNECTION).await });
        }
        while let Some(done) = tasks.join_next().await {
            tally(&mut stats, done.unwrap());
        }
        stats
    };
    fn tally(stats: &mut FuzzStats, ended: Ended) {
        match (&ended, status_of(ended.received())) {
            (_, Some(200..=299)) => stats.answered_2xx += 1,
            (_, Some(400..=599)) => stats.answered_4xx_5xx += 1,
            (Ended::StillOpen(_), _) => stats.still_open += 1,
            (Ended::Reset(_), _) => stats.reset += 1,
            (_, _) if !ended.received().is_empty() => stats.other_bytes += 1,
            _ => stats.closed_silently += 1,
        }
    }
    // Hang guard for the whole run (it normally takes a fraction of this).
    let stats = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .unwrap_or_else(|_| panic!("fuzz run hung (seed {seed})"));
    println!("{stats:?}");

    // The run reached the engine and the error paths both.
    assert!(stats.answered_2xx > 0, "seed {seed}: {stats:?}");
    assert!(stats.answered_4xx_5xx > 0, "seed {seed}: {stats:?}");

    assert_healthy(&server, &format!("{CASES} fuzzed requests (seed {seed})")).await;
    let response = tokio::time::timeout(
        GUARD,
        server
            .reqwest_client()
            .get("https://api.example.com/ok")
            .send(),
    )
    .await
    .expect("hang guard")
    .unwrap();
    assert_eq!(response.text().await.unwrap(), "ok", "seed {seed}");
    // The engine is healthy: its handler list is intact and readable.
    let handlers_after: Vec<String> = server
        .list_handlers()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(handlers_after, handlers_before, "seed {seed}");
    assert_eq!(
        listener_panics(),
        0,
        "seed {seed}: a listener thread panicked during the fuzz run"
    );
}

// ---------------------------------------------------------------------------
// request targets the listener must not misread

/// A server whose catch-all answers 299 with the URL the resolver saw.
fn url_echo_server() -> Server {
    count_listener_panics();
    let server = setup_server([http::all("*", |args| {
        HttpResponse::text(args.request.url().to_string()).status(299)
    })]);
    server.listen_with(common::error_on_unhandled());
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn an_invalid_host_header_is_a_400_not_another_url() {
    // RFC 9112 §3.2: a server MUST answer 400 to a request with more than
    // one Host field line or a Host field with an invalid value; RFC 9110
    // §4.2.1: an "http" URI with an empty host is invalid.
    let server = url_echo_server();
    let mut misread = Vec::new();
    for (case, host_lines) in [
        ("a path in Host", "Host: api.example.com/admin?\r\n"),
        ("a fragment in Host", "Host: api.example.com#\r\n"),
        ("userinfo in Host", "Host: evil@api.example.com\r\n"),
        ("an empty Host", "Host: \r\n"),
        ("two Hosts", "Host: a.example\r\nHost: b.example\r\n"),
    ] {
        let request = format!("GET /ok HTTP/1.1\r\n{host_lines}Connection: close\r\n\r\n");
        let ended = exchange(&server, request.as_bytes(), false, GUARD).await;
        let received = String::from_utf8_lossy(ended.received()).into_owned();
        if status_of(ended.received()) != Some(400) {
            let answer = received
                .rsplit("\r\n")
                .next()
                .unwrap_or_default()
                .to_owned();
            misread.push(format!(
                "{case}: {:?}, resolver saw {answer:?}",
                received.lines().next()
            ));
        }
    }
    assert!(misread.is_empty(), "{misread:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn an_asterisk_form_request_keeps_its_host() {
    // RFC 9112 §3.2.4: `OPTIONS * HTTP/1.1` asks about the server as a
    // whole. Refusing it is fine; resolving it with a made-up host is not.
    let server = url_echo_server();
    let ended = exchange(
        &server,
        b"OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n",
        false,
        GUARD,
    )
    .await;
    let received = String::from_utf8_lossy(ended.received()).into_owned();
    match status_of(ended.received()) {
        Some(400..=599) => {}
        Some(299) => {
            let seen = received.rsplit("\r\n").next().unwrap();
            assert!(
                seen.starts_with("http://api.example.com/"),
                "resolver saw {seen:?}"
            );
        }
        other => panic!("unexpected answer {other:?}: {received}"),
    }
}

/// Counts the requests the listener starts (every pass through it is one)
/// and wakes the `Notify` at the `looping`th: a request handed back to the
/// listener again and again shows as that many starts.
fn count_starts(
    server: &Server,
    looping: usize,
) -> (
    std::sync::Arc<AtomicUsize>,
    std::sync::Arc<tokio::sync::Notify>,
) {
    let starts = std::sync::Arc::new(AtomicUsize::new(0));
    let notify = std::sync::Arc::new(tokio::sync::Notify::new());
    server
        .events()
        .on(mocklib::events::EventKind::RequestStart, {
            let starts = std::sync::Arc::clone(&starts);
            let notify = std::sync::Arc::clone(&notify);
            move |_| {
                if starts.fetch_add(1, Ordering::SeqCst) + 1 == looping {
                    notify.notify_one();
                }
            }
        });
    (starts, notify)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn a_passthrough_to_the_listener_by_an_ipv4_mapped_address_is_not_looped_back() {
    count_listener_panics();
    let server = setup_server([]);
    server.listen_with(
        mocklib::ListenOptions::new().on_unhandled_request(mocklib::UnhandledRequest::Bypass),
    );
    // Every pass through the listener is one request start.
    const LOOPING: usize = 10;
    let (starts, looping) = count_starts(&server, LOOPING);
    let port = address(&server).port();
    let request =
        format!("GET http://[::ffff:127.0.0.1]:{port}/x HTTP/1.1\r\nConnection: close\r\n\r\n");
    let outcome = tokio::select! {
        ended = exchange(&server, request.as_bytes(), false, GUARD) => Some(ended),
        () = looping.notified() => None,
    };
    // Stops the runaway loop (it ends with the listener's runtime).
    server.close();
    let ended = outcome.unwrap_or_else(|| {
        panic!("the request looped through the listener at least {LOOPING} times")
    });
    assert_eq!(status_of(ended.received()), Some(502), "{ended:?}");
    assert!(
        String::from_utf8_lossy(ended.received()).contains("addressed to this mocklib listener"),
        "{ended:?}"
    );
    assert_eq!(starts.load(Ordering::SeqCst), 1);
}

/// `bypass()` from a handler whose pattern also matches the listener's own
/// address: the real request comes back carrying the listener's `Via`
/// entry and is refused (508), where it used to be resolved, and bypassed,
/// again without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bypass_of_a_request_addressed_to_the_listener_itself_is_a_508_not_a_loop() {
    count_listener_panics();
    let server = setup_server([http::get("/x", |args| async move {
        match mocklib::bypass(&args.request).await {
            Ok(real) => real.header("x-bypassed", "yes"),
            Err(error) => HttpResponse::text(error.to_string()).status(599),
        }
    })]);
    server.listen();
    const LOOPING: usize = 10;
    let (_, looping) = count_starts(&server, LOOPING);
    let request = format!(
        "GET /x HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        address(&server)
    );
    let outcome = tokio::select! {
        ended = exchange(&server, request.as_bytes(), false, GUARD) => Some(ended),
        () = looping.notified() => None,
    };
    server.close();
    let ended = outcome.unwrap_or_else(|| {
        panic!("the bypass looped through the listener at least {LOOPING} times")
    });
    let received = String::from_utf8_lossy(ended.received());
    assert_eq!(status_of(ended.received()), Some(508), "{received}");
    assert!(
        received.contains("x-bypassed: yes") && received.contains("would loop"),
        "{received}"
    );
    assert_no_listener_panics();
}

// ---------------------------------------------------------------------------
// requests that cannot be passed on

/// Request targets the HTTP parser accepts as they are (under the 65,534
/// bytes an `http::Uri` may have) but that the URL parser percent-encodes to
/// three times their size, too long to send on: `{` in a path (`%7B`), and
/// non-ASCII text in a query (`é` is `%C3%A9`).
fn unsendable_targets() -> [(&'static str, String); 2] {
    [
        ("30,000 `{` in the path", format!("/{}", "{".repeat(30_000))),
        (
            "20,000 `é` in the query",
            format!("/q?{}", "é".repeat(20_000)),
        ),
    ]
}

/// The ways a request for `target` on `api.example.com` reaches the
/// listener's passthrough path.
#[derive(Debug, Clone, Copy)]
enum Door {
    /// `GET /target` with `Host: api.example.com` (base URL mode).
    OriginForm,
    /// `GET http://api.example.com/target` (forward proxy).
    AbsoluteForm,
    /// Plain HTTP inside a `CONNECT` tunnel.
    PlainTunnel,
    /// HTTPS inside a `CONNECT` tunnel, TLS terminated by the listener.
    TlsTunnel,
}

const DOORS: [Door; 4] = [
    Door::OriginForm,
    Door::AbsoluteForm,
    Door::PlainTunnel,
    Door::TlsTunnel,
];

/// Sends `GET target` for `api.example.com` through `door` and reads the
/// answer until the listener closes the connection.
async fn send_through(server: &Server, door: Door, target: &str) -> Ended {
    let origin_form =
        format!("GET {target} HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n");
    match door {
        Door::OriginForm => exchange(server, origin_form.as_bytes(), false, GUARD).await,
        Door::AbsoluteForm => {
            let request = format!(
                "GET http://api.example.com{target} HTTP/1.1\r\nHost: api.example.com\r\n\
                 Connection: close\r\n\r\n"
            );
            exchange(server, request.as_bytes(), false, GUARD).await
        }
        Door::PlainTunnel => {
            let mut tunnel = open_tunnel(server).await;
            tunnel.write_all(origin_form.as_bytes()).await.unwrap();
            read_until_closed(&mut tunnel, GUARD).await
        }
        Door::TlsTunnel => {
            let mut tls = tls_in_tunnel(server).await;
            tls.write_all(origin_form.as_bytes()).await.unwrap();
            read_until_closed(&mut tls, GUARD).await
        }
    }
}

/// A TLS connection to `api.example.com` inside a `CONNECT` tunnel, trusting
/// the server's CA.
async fn tls_in_tunnel(server: &Server) -> tokio_rustls::client::TlsStream<TcpStream> {
    let tunnel = open_tunnel(server).await;
    let tls = common::tls_client(server, "api.example.com", tunnel);
    tokio::time::timeout(GUARD, tls).await.expect("hang guard")
}

/// Sends every unsendable target through every door; each must get
/// `status` with a body saying why, and the listener must keep serving.
async fn assert_unsendable_targets_are_explained(server: &Server, status: u16) {
    let mut wrong = Vec::new();
    for (case, target) in unsendable_targets() {
        for door in DOORS {
            let ended = send_through(server, door, &target).await;
            let received = String::from_utf8_lossy(ended.received()).into_owned();
            let body = received.split_once("\r\n\r\n").map_or("", |(_, body)| body);
            if status_of(ended.received()) != Some(status)
                || !body.contains("bytes once encoded, over the 65,534 bytes a URI may have")
            {
                wrong.push(format!("{case} via {door:?}: {ended:?}"));
            }
            assert_healthy(server, &format!("{case} via {door:?}")).await;
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsendable_unhandled_request_is_a_414_under_the_warn_strategy() {
    let server = server_on(mocklib::UnhandledRequest::Warn, []);
    assert_unsendable_targets_are_explained(&server, 414).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsendable_unhandled_request_is_a_414_under_the_bypass_strategy() {
    let server = server_on(mocklib::UnhandledRequest::Bypass, []);
    assert_unsendable_targets_are_explained(&server, 414).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bypass_of_an_unsendable_request_is_an_error_the_resolver_sees() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let catch_all = http::all("*", {
        let seen = std::sync::Arc::clone(&seen);
        move |args| {
            let seen = std::sync::Arc::clone(&seen);
            async move {
                let result = mocklib::bypass(&args.request).await;
                if let Err(error) = &result {
                    seen.lock().unwrap().push(error.clone());
                }
                // Propagated: the request gets a 500 saying why.
                result
            }
        }
    });
    let server = server_on(mocklib::UnhandledRequest::Error, [catch_all]);
    assert_unsendable_targets_are_explained(&server, 500).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), unsendable_targets().len() * DOORS.len());
    for error in seen.iter() {
        assert!(
            matches!(error, mocklib::response::BypassError::Unsendable { .. }),
            "{error:?}"
        );
    }
}
