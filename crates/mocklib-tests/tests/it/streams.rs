//! Streamed mocked bodies on every native front door: chunks reach the
//! client as the stream yields them (never buffered whole), a client that
//! goes away ends the stream, and `finalize` runs once the body is over.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};
use tokio::sync::{mpsc, oneshot};

/// Long enough that only a hang (a bug) ever reaches it.
const HANG: Duration = Duration::from_secs(20);

/// A stream whose chunks the test releases one by one.
fn released_by(receiver: mpsc::UnboundedReceiver<&'static str>) -> impl Stream<Item = Bytes> {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        let chunk = receiver.recv().await?;
        Some((Bytes::from_static(chunk.as_bytes()), receiver))
    })
}

/// A server whose `GET /feed` streams what the test sends on the returned
/// channel (one stream at a time).
fn feed_server() -> (Server, mpsc::UnboundedSender<&'static str>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let receiver = Arc::new(Mutex::new(Some(receiver)));
    let server = setup_server([http::get("/feed", move |_| {
        let receiver = receiver
            .lock()
            .unwrap()
            .take()
            .expect("one stream per test");
        HttpResponse::stream(released_by(receiver)).header("content-type", "text/plain")
    })]);
    (server, sender)
}

/// Reads the next non-empty chunk, failing on a hang: the proof that a
/// chunk arrives before the stream produced the next one. (An HTTP/2 body
/// may end with an empty DATA frame.)
async fn next_chunk(response: &mut reqwest::Response) -> Option<Bytes> {
    loop {
        let chunk = tokio::time::timeout(HANG, response.chunk())
            .await
            .expect("the chunk arrived")
            .expect("a readable body");
        if chunk.as_ref().is_none_or(|chunk| !chunk.is_empty()) {
            return chunk;
        }
    }
}

/// Released chunk by chunk, read chunk by chunk with reqwest's
/// `bytes_stream()`: nothing waits for the end.
async fn assert_streams(response: reqwest::Response, sender: mpsc::UnboundedSender<&str>) {
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("content-length").is_none());
    let mut body = response.bytes_stream();
    let mut received = Vec::new();
    for chunk in ["one ", "two ", "three"] {
        sender.send(chunk).unwrap();
        // Chunks may coalesce on the way; read until this one is complete.
        let mut text = String::new();
        while text.len() < chunk.len() {
            let bytes = tokio::time::timeout(HANG, body.next())
                .await
                .expect("the chunk arrived");
            text.push_str(std::str::from_utf8(&bytes.expect("more body").unwrap()).unwrap());
        }
        received.push(text);
    }
    drop(sender); // ends the stream
    let rest = tokio::time::timeout(HANG, body.collect::<Vec<_>>())
        .await
        .unwrap();
    assert!(
        rest.iter().all(|chunk| chunk.as_ref().unwrap().is_empty()),
        "{rest:?}"
    );
    assert_eq!(received, ["one ", "two ", "three"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_middleware_hands_chunks_over_as_they_come() {
    let (server, sender) = feed_server();
    server.listen();
    let response = common::client(&server)
        .get("https://api.test/feed")
        .send()
        .await
        .unwrap();
    assert_streams(response, sender).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_sends_http1_chunked_in_base_url_mode() {
    let (server, sender) = feed_server();
    server.listen();
    let response = reqwest::Client::new()
        .get(server.url().join("/feed").unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    assert_eq!(response.headers()["transfer-encoding"], "chunked");
    assert_streams(response, sender).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_streams_http2_data_frames_inside_connect_and_tls() {
    let (server, sender) = feed_server();
    server.listen();
    let client = server
        .reqwest_client_builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let response = client
        .get("https://api.example.com/feed")
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_streams(response, sender).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_service_yields_one_frame_per_chunk() {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let (server, sender) = feed_server();
    server.listen();
    let request = ::http::Request::get("https://api.test/feed")
        .body(http_body_util::Full::new(Bytes::new()))
        .unwrap();
    let response = server.service().oneshot(request).await.unwrap();
    assert!(response.headers().get("content-length").is_none());
    let mut body = response.into_body();
    for chunk in ["one", "two"] {
        sender.send(chunk).unwrap();
        let frame = tokio::time::timeout(HANG, body.frame())
            .await
            .expect("a frame");
        let data = frame.expect("more body").unwrap().into_data().unwrap();
        assert_eq!(data, chunk);
    }
    drop(sender);
    assert!(body.frame().await.is_none());
}

#[test]
fn curl_reads_a_chunked_body_and_a_length_the_user_set() {
    let server = setup_server([
        http::get("/chunked", |_| {
            HttpResponse::chunks(["a", "b", "c"], Duration::from_millis(1))
        }),
        http::get("/sized", |_| {
            HttpResponse::stream(futures_util::stream::iter(["ab", "cd"]))
                .header("content-length", "4")
        }),
    ]);
    server.listen();
    let curl = |path: &str| {
        let url = server.url().join(path).unwrap();
        test_support::curl(&["--include", url.as_str()]).to_ascii_lowercase()
    };
    let chunked = curl("/chunked");
    assert!(chunked.contains("transfer-encoding: chunked"), "{chunked}");
    assert!(!chunked.contains("content-length"), "{chunked}");
    assert!(chunked.ends_with("\r\n\r\nabc"), "{chunked}");
    let sized = curl("/sized");
    assert!(sized.contains("content-length: 4"), "{sized}");
    assert!(!sized.contains("transfer-encoding"), "{sized}");
    assert!(sized.ends_with("\r\n\r\nabcd"), "{sized}");
}

/// A server whose `GET /endless` streams a line every few milliseconds,
/// forever; the receiver hears when that stream is dropped.
fn endless_server() -> (Server, oneshot::Receiver<()>) {
    let (signal, on_drop) = test_support::DropSignal::new();
    let signal = Arc::new(Mutex::new(Some(signal)));
    let server = setup_server([http::all("/endless", move |_| {
        let signal = signal.lock().unwrap().take().expect("one stream per test");
        HttpResponse::stream(futures_util::stream::unfold(
            (0u64, signal),
            |(n, signal)| async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                Some((Bytes::from(format!("line {n}\n")), (n + 1, signal)))
            },
        ))
    })]);
    (server, on_drop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_ends_the_stream_in_process() {
    let (server, on_drop) = endless_server();
    server.listen();
    let mut response = common::client(&server)
        .get("https://api.test/endless")
        .send()
        .await
        .unwrap();
    assert!(next_chunk(&mut response).await.is_some());
    drop(response);
    tokio::time::timeout(HANG, on_drop)
        .await
        .expect("the stream was dropped")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_ends_the_stream_on_the_listener() {
    let (server, on_drop) = endless_server();
    server.listen();
    let client = reqwest::Client::new();
    let mut response = client
        .get(server.url().join("/endless").unwrap())
        .send()
        .await
        .unwrap();
    assert!(next_chunk(&mut response).await.is_some());
    drop((response, client)); // an unread body closes its connection
    tokio::time::timeout(HANG, on_drop)
        .await
        .expect("the listener dropped the stream")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_stream_breaks_the_body_after_its_good_chunks() {
    let server = setup_server([http::get("/broken", |_| {
        let chunks: Vec<Result<&str, std::io::Error>> =
            vec![Ok("partial"), Err(std::io::Error::other("disk gone"))];
        HttpResponse::try_stream(futures_util::stream::iter(chunks))
    })]);
    server.listen();
    for url in [
        "https://api.test/broken".to_owned(),
        server.url().join("/broken").unwrap().to_string(),
    ] {
        let mut response = common::client(&server).get(&url).send().await.unwrap();
        assert_eq!(next_chunk(&mut response).await.unwrap(), "partial", "{url}");
        let end = tokio::time::timeout(HANG, response.chunk()).await.unwrap();
        assert!(end.is_err(), "{url}: the body should fail, got {end:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_request_gets_the_headers_and_no_stream() {
    let (server, on_drop) = endless_server();
    server.listen();
    let response = common::client(&server)
        .head("https://api.test/endless")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.unwrap(), "");
    // The unsent stream is dropped, not left running.
    tokio::time::timeout(HANG, on_drop).await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn chunks_are_paced_by_the_delay_timer() {
    let server = setup_server([http::get("/paced", |_| {
        HttpResponse::chunks(["a", "b", "c"], Duration::from_secs(2))
    })]);
    server.listen();
    let started = tokio::time::Instant::now();
    let mut response = common::client(&server)
        .get("https://api.test/paced")
        .send()
        .await
        .unwrap();
    let mut arrivals = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        arrivals.push((chunk, started.elapsed().as_secs()));
    }
    // Virtual time: the first chunk at once, then one every two seconds.
    assert_eq!(
        arrivals,
        [("a".into(), 0), ("b".into(), 2), ("c".into(), 4)]
    );
}

/// Records the order in which things happen.
#[derive(Clone, Default)]
struct Journal(Arc<Mutex<Vec<String>>>);

impl Journal {
    fn note(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }
    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A server whose `/feed` streams what the test releases and registers two
/// cleanups, and whose `/plain` registers one and answers at once.
fn finalizing_server(journal: &Journal) -> (Server, mpsc::UnboundedSender<&'static str>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let receiver = Arc::new(Mutex::new(Some(receiver)));
    let (feed, plain) = (journal.clone(), journal.clone());
    let server = setup_server([
        http::get("/feed", move |args| {
            let (first, second) = (feed.clone(), feed.clone());
            args.finalize(move || first.note("close the file"));
            args.finalize(move || second.note("release the lock"));
            let receiver = receiver
                .lock()
                .unwrap()
                .take()
                .expect("one stream per test");
            HttpResponse::stream(released_by(receiver))
        }),
        http::get("/fallthrough", move |args| {
            let plain = plain.clone();
            args.finalize(move || plain.note("fell through"));
        }),
    ]);
    (server, sender)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalize_runs_after_the_last_chunk_in_reverse_order() {
    let journal = Journal::default();
    let (server, sender) = finalizing_server(&journal);
    server.listen();
    let mut response = reqwest::Client::new()
        .get(server.url().join("/feed").unwrap())
        .send()
        .await
        .unwrap();
    sender.send("chunk").unwrap();
    assert_eq!(next_chunk(&mut response).await.unwrap(), "chunk");
    assert!(journal.entries().is_empty(), "the body is still being sent");
    drop(sender);
    assert_eq!(next_chunk(&mut response).await, None);
    // hyper drops the body right after its last frame; give it that moment.
    for _ in 0..2000 {
        if journal.entries().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(journal.entries(), ["release the lock", "close the file"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalize_runs_when_the_client_abandons_the_body() {
    let journal = Journal::default();
    let (server, sender) = finalizing_server(&journal);
    server.listen();
    let mut response = common::client(&server)
        .get("https://api.test/feed")
        .send()
        .await
        .unwrap();
    sender.send("chunk").unwrap();
    assert_eq!(next_chunk(&mut response).await.unwrap(), "chunk");
    assert!(journal.entries().is_empty());
    drop(response);
    assert_eq!(journal.entries(), ["release the lock", "close the file"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalize_runs_when_a_resolver_answers_nothing() {
    let journal = Journal::default();
    let (server, _sender) = finalizing_server(&journal);
    let client = common::TestClient::with_options(&server, mocklib::ListenOptions::default());
    // Matched, no answer: performed as it is, and the network fails.
    let _ = client
        .get("http://127.0.0.1:9/fallthrough")
        .expect_error()
        .await;
    assert_eq!(journal.entries(), ["fell through"]);
}
