//! A streamed body that fails reaches every client as documented (issue 27):
//! the status, the headers and every chunk before the error, then an
//! error, never a clean end of body. The error comes at once (before any
//! chunk), right after one chunk, or after many (more than the socket
//! buffers and an HTTP/2 window hold, so some are still queued in the
//! listener when it comes), with nothing in between to let a front door
//! flush: the case that once erased the whole response on the listener.
//!
//! Each body is read by real clients through every front door: in process
//! (the middleware, the reference), and on the listener over HTTP/1.1 and
//! HTTP/2, by base URL, through the plain proxy and in `CONNECT` tunnels
//! with TLS (HTTP/2 there both by prior knowledge and by ALPN).

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use mocklib::node::{Server, setup_server};
use mocklib::sse::{self, Event};
use mocklib::{HttpResponse, http, passthrough};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Long enough that only a hang (a bug) ever reaches it.
const HANG: Duration = Duration::from_secs(20);

/// Chunks of 16 KiB: 4 MiB in all, far more than a loopback socket or an
/// HTTP/2 stream window takes before the client reads.
const MANY: usize = 256;

/// The `n`th of [`MANY`] chunks, numbered so that a lost or reordered one shows.
fn numbered(n: usize) -> String {
    let mut chunk = format!("<{n:05}>");
    chunk.push_str(&".".repeat(16 * 1024 - chunk.len()));
    chunk
}

fn many() -> Vec<String> {
    (0..MANY).map(numbered).collect()
}

/// `chunks`, then an error ready at once behind them.
fn failing(chunks: Vec<String>) -> HttpResponse {
    let items: Vec<Result<String, std::io::Error>> = chunks
        .into_iter()
        .map(Ok)
        .chain([Err(std::io::Error::other("disk gone"))])
        .collect();
    HttpResponse::try_stream(futures_util::stream::iter(items))
        .header("x-head", "sent")
        .header("content-type", "text/plain")
}

fn failing_server() -> Server {
    let server = setup_server([
        http::get("/at-once", |_| failing(Vec::new())),
        http::get("/after-one", |_| failing(vec!["intact;".to_owned()])),
        http::get("/after-many", |_| failing(many())),
        // A stream whose code panics after one chunk, as a bug in a
        // handler's stream would: a failure like an error, not a lost
        // connection or a server that stops answering.
        http::get("/panics-after-one", |_| {
            let mut sent = false;
            let chunks = futures_util::stream::poll_fn(move |_| {
                assert!(!sent, "the handler's stream has a bug");
                sent = true;
                std::task::Poll::Ready(Some(Ok::<_, std::io::Error>("intact;")))
            });
            HttpResponse::try_stream(chunks).header("content-type", "text/plain")
        }),
    ]);
    server.listen();
    server
}

/// What every client must receive: the head (status 200 and this content
/// type), then `body`, then an error.
struct Expected<'a> {
    content_type: &'a str,
    body: &'a [u8],
}

/// A client of the listener, and the URL it sends the request to.
struct FrontDoor {
    name: &'static str,
    client: reqwest::Client,
    url: String,
    version: reqwest::Version,
}

fn door(
    name: &'static str,
    client: reqwest::ClientBuilder,
    url: String,
    version: reqwest::Version,
) -> FrontDoor {
    let client = client.build().unwrap();
    FrontDoor {
        name,
        client,
        url,
        version,
    }
}

/// The plain proxy's front doors for `url` (an `http://` URL): HTTP/1.1,
/// and HTTP/2 by prior knowledge (the target in `:authority`).
fn proxy_doors(server: &Server, url: &str) -> Vec<FrontDoor> {
    use reqwest::Version;
    let proxy = || reqwest::Proxy::http(server.proxy_url().as_str()).unwrap();
    let through = || reqwest::Client::builder().proxy(proxy());
    vec![
        door(
            "HTTP/1.1 plain proxy",
            through().http1_only(),
            url.to_owned(),
            Version::HTTP_11,
        ),
        door(
            "h2c plain proxy",
            through().http2_prior_knowledge(),
            url.to_owned(),
            Version::HTTP_2,
        ),
    ]
}

/// Every front door of the listener for `path`: base URL, plain proxy and
/// `CONNECT` with TLS to `api.example.com`, each over HTTP/1.1 and HTTP/2.
fn every_door(server: &Server, path: &str) -> Vec<FrontDoor> {
    use reqwest::Version;
    let base = server.url().join(path).unwrap().to_string();
    let plain = || reqwest::Client::builder().no_proxy();
    let https = format!("https://api.example.com{path}");
    let mut doors = vec![
        door(
            "HTTP/1.1 base URL",
            plain().http1_only(),
            base.clone(),
            Version::HTTP_11,
        ),
        door(
            "h2c base URL",
            plain().http2_prior_knowledge(),
            base,
            Version::HTTP_2,
        ),
        door(
            "HTTP/1.1 in CONNECT+TLS",
            server.reqwest_client_builder(),
            https.clone(),
            Version::HTTP_11,
        ),
        door(
            "HTTP/2 in CONNECT+TLS (prior knowledge)",
            server.reqwest_client_builder().http2_prior_knowledge(),
            https,
            Version::HTTP_2,
        ),
    ];
    doors.extend(proxy_doors(
        server,
        &format!("http://api.example.com{path}"),
    ));
    doors
}

/// Reads `response` (reqwest 0.13's or 0.12's, as an `http::Response`) to
/// its end, which must be an error, and checks what came before it.
async fn assert_fails_after<B>(what: &str, response: ::http::Response<B>, expected: &Expected<'_>)
where
    B: http_body::Body<Data = bytes::Bytes> + Unpin,
{
    use http_body_util::BodyExt;
    assert_eq!(response.status(), 200, "{what}");
    assert_eq!(
        response.headers()["content-type"],
        expected.content_type,
        "{what}"
    );
    let mut response_body = response.into_body();
    let mut body = Vec::new();
    loop {
        let next = tokio::time::timeout(HANG, response_body.frame()).await;
        match next.unwrap_or_else(|_| panic!("{what}: the body hung")) {
            Some(Ok(frame)) => body.extend_from_slice(frame.data_ref().map_or(&[][..], |d| d)),
            None => panic!("{what}: a clean end of body after {} bytes", body.len()),
            Some(Err(_)) => return assert_received(what, &body, expected.body),
        }
    }
}

/// reqwest 0.12, whose rustls offers `h2` by ALPN: HTTP/2 negotiated in
/// the TLS handshake inside the `CONNECT` tunnel.
async fn assert_fails_after_over_alpn(server: &Server, url: &str, expected: &Expected<'_>) {
    let what = "HTTP/2 in CONNECT+TLS (ALPN)";
    let sent = tokio::time::timeout(HANG, server.reqwest_client_0_12().get(url).send()).await;
    let response = sent.expect("no hang").expect("a response");
    assert_eq!(response.version(), reqwest012::Version::HTTP_2, "{what}");
    assert_fails_after(what, ::http::Response::from(response), expected).await;
}

fn assert_received(what: &str, received: &[u8], expected: &[u8]) {
    // Not `assert_eq!`: 4 MiB of dots would hide the message.
    assert!(
        received == expected,
        "{what}: received {} bytes, {:?}..., expected {} bytes, {:?}...",
        received.len(),
        String::from_utf8_lossy(&received[..received.len().min(64)]),
        expected.len(),
        String::from_utf8_lossy(&expected[..expected.len().min(64)]),
    );
}

/// In process first (the reference), then through each of `doors`.
async fn assert_each_fails_after(
    server: &Server,
    reference_url: &str,
    doors: Vec<FrontDoor>,
    expected: &Expected<'_>,
) {
    let sent = common::client(server).get(reference_url).send().await;
    let response = ::http::Response::from(sent.expect("a response"));
    assert_fails_after("in process", response, expected).await;
    for door in doors {
        let sent = tokio::time::timeout(HANG, door.client.get(&door.url).send()).await;
        let response = sent
            .expect("no hang")
            .unwrap_or_else(|error| panic!("{}: no response: {error:?}", door.name));
        assert_eq!(response.version(), door.version, "{}", door.name);
        assert_fails_after(door.name, ::http::Response::from(response), expected).await;
    }
}

/// [`assert_each_fails_after`] on every front door, ALPN included.
async fn assert_every_door_fails_after(server: &Server, path: &str, expected: Expected<'_>) {
    let reference = format!("https://api.example.com{path}");
    assert_each_fails_after(server, &reference, every_door(server, path), &expected).await;
    assert_fails_after_over_alpn(server, &reference, &expected).await;
}

const TEXT: &str = "text/plain";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_before_any_chunk_still_sends_the_head() {
    let server = failing_server();
    let expected = Expected {
        content_type: TEXT,
        body: b"",
    };
    assert_every_door_fails_after(&server, "/at-once", expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_right_after_a_chunk_sends_the_chunk_first() {
    let server = failing_server();
    let expected = Expected {
        content_type: TEXT,
        body: b"intact;",
    };
    assert_every_door_fails_after(&server, "/after-one", expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_panics_fails_like_an_error_and_the_server_keeps_serving() {
    let server = failing_server();
    let expected = Expected {
        content_type: TEXT,
        body: b"intact;",
    };
    assert_every_door_fails_after(&server, "/panics-after-one", expected).await;
    // The listener still answers, on a connection of its own.
    let after = reqwest::Client::new()
        .get(format!("{}after-one", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_after_many_chunks_sends_every_one_of_them_first() {
    let server = failing_server();
    let body = many().concat();
    let expected = Expected {
        content_type: TEXT,
        body: body.as_bytes(),
    };
    assert_every_door_fails_after(&server, "/after-many", expected).await;
}

/// Many events of 16 KiB, as an event stream frames them.
fn many_events() -> Vec<String> {
    many()
        .iter()
        .map(|data| format!("data: {data}\n\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_stream_that_errors_sends_its_events_first() {
    let server = setup_server([sse::get("/events", |args| {
        for data in many() {
            args.client.send(Event::data(data));
        }
        args.client.error();
    })]);
    server.listen();
    let body = many_events().concat();
    let expected = Expected {
        content_type: "text/event-stream",
        body: body.as_bytes(),
    };
    assert_every_door_fails_after(&server, "/events", expected).await;
}

/// A real server on loopback whose responses fail mid-body: the head and
/// `chunks` (chunked), then the connection closed before the last chunk,
/// all in one write so that they reach the listener together. Written by
/// hand: a hyper server would have the very flaw under test.
async fn failing_upstream(content_type: &'static str, chunks: Vec<String>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let mut response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    for chunk in &chunks {
        response.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(answer_and_close(tcp, response.clone()));
        }
    });
    address
}

async fn answer_and_close(mut tcp: tokio::net::TcpStream, response: String) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        match tcp.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => head.extend_from_slice(&buffer[..read]),
        }
    }
    let _ = tcp.write_all(response.as_bytes()).await;
    let _ = tcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passed_through_body_that_fails_sends_its_chunks_first() {
    for chunks in [vec!["intact;".to_owned()], many()] {
        let body = chunks.concat();
        let upstream = failing_upstream(TEXT, chunks).await;
        let url = format!("http://{upstream}/real");
        let server = setup_server([http::get(url.as_str(), |_| passthrough())]);
        server.listen();
        let expected = Expected {
            content_type: TEXT,
            body: body.as_bytes(),
        };
        assert_each_fails_after(&server, &url, proxy_doors(&server, &url), &expected).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_event_stream_that_fails_is_forwarded_up_to_its_failure() {
    let events = many_events();
    let upstream = failing_upstream("text/event-stream", events.clone()).await;
    let url = format!("http://{upstream}/events");
    let server = setup_server([sse::get(url.as_str(), |args| async move {
        let real = args.server.connect().await?;
        real.forward_to(&args.client).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })]);
    server.listen();
    let body = events.concat();
    let expected = Expected {
        content_type: "text/event-stream",
        body: body.as_bytes(),
    };
    assert_each_fails_after(&server, &url, proxy_doors(&server, &url), &expected).await;
}
