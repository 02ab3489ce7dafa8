//! What both interception modes' tests share: plain `fetch` helpers and the
//! JavaScript clients (XHR, `<img>`, a Web Worker, JS `fetch`).
#![allow(dead_code)] // each test file uses its own subset

mod event_streams;
mod websockets;

pub use event_streams::*;
pub use websockets::*;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_channel::mpsc::{UnboundedSender, unbounded};
use futures_util::StreamExt;
use futures_util::future::{Either, select};

use js_sys::Promise;
use mocklib::browser::{Mode, StartOptions, Worker, setup_worker};
use mocklib::{
    Handler, HttpResponse, UnhandledRequest, bypass, delay, events::EventKind, http, passthrough,
};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// A file the wasm-bindgen test runner serves for real (it serves this
/// crate's folder): the "real server" of passthrough tests.
pub const REAL_FILE: &str = "/tests/fixtures/real.json";
pub const REAL_BODY: &str = "{\"source\":\"the real server\"}\n";

#[wasm_bindgen(inline_js = r#"
export function jsFetchText(url, init) {
  return fetch(url, init).then(async (r) => [r.status, r.statusText, await r.text(), r.url, r.redirected]);
}
export function jsFetchError(url) {
  return fetch(url).then(() => 'resolved', (e) => e instanceof TypeError ? 'TypeError: ' + e.message : 'other: ' + e);
}
export function xhrText(url) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('GET', url);
    xhr.onload = () => resolve([xhr.status, xhr.responseText]);
    xhr.onerror = () => reject(new Error('XHR failed'));
    xhr.send();
  });
}
export function imageSize(url) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve([img.naturalWidth, img.naturalHeight]);
    img.onerror = () => reject(new Error('image failed to load: ' + url));
    img.src = url;
  });
}
export function fetchFromWebWorker(url) {
  const source = `fetch(${JSON.stringify(new URL(url, location.href).href)})
    .then((r) => r.text()).then((t) => postMessage(t), (e) => postMessage('error: ' + e));`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
  return new Promise((resolve) => {
    worker.onmessage = (event) => { worker.terminate(); resolve(event.data); };
  });
}
export function frameText(url) {
  return new Promise((resolve) => {
    const frame = document.createElement('iframe');
    frame.onload = () => { const text = frame.contentDocument.body.textContent; frame.remove(); resolve(text); };
    frame.src = url;
    document.body.appendChild(frame);
  });
}
export async function openBody(url, init) {
  const response = await fetch(url, init);
  return [response.status, response.headers.get('content-length'), response.body.getReader()];
}
export async function readChunk(reader) {
  const { done, value } = await reader.read();
  return done ? null : new TextDecoder().decode(value);
}
export function cancelReader(reader) { return reader.cancel(); }
export function setCookie(cookie) { document.cookie = cookie; }
export function getCookies() { return document.cookie; }
export function nowMs() { return performance.now(); }
export function isFirefox() { return navigator.userAgent.includes('Firefox/'); }
export function captureConsole() {
  const seen = [];
  const originals = { warn: console.warn, error: console.error };
  for (const level of ['warn', 'error']) {
    console[level] = (...args) => { seen.push(args.join(' ')); originals[level].apply(console, args); };
  }
  return () => { Object.assign(console, originals); return seen; };
}
export async function useReferenceWorker() {
  const container = navigator.serviceWorker;
  await container.register('/reference-worker.js', { scope: '/' });
  while (!container.controller || !container.controller.scriptURL.endsWith('/reference-worker.js')) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = jsFetchText)]
    fn js_fetch_text_promise(url: &str, init: JsValue) -> Promise;
    #[wasm_bindgen(js_name = jsFetchError)]
    fn js_fetch_error_promise(url: &str) -> Promise;
    #[wasm_bindgen(js_name = xhrText)]
    fn xhr_text_promise(url: &str) -> Promise;
    #[wasm_bindgen(js_name = imageSize)]
    fn image_size_promise(url: &str) -> Promise;
    #[wasm_bindgen(js_name = fetchFromWebWorker)]
    fn web_worker_promise(url: &str) -> Promise;
    #[wasm_bindgen(js_name = frameText)]
    fn frame_text_promise(url: &str) -> Promise;
    #[wasm_bindgen(js_name = openBody)]
    fn open_body_promise(url: &str, init: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = readChunk)]
    fn read_chunk_promise(reader: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = cancelReader)]
    fn cancel_reader_promise(reader: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = setCookie)]
    pub fn set_cookie(cookie: &str);
    #[wasm_bindgen(js_name = getCookies)]
    pub fn get_cookies() -> String;
    #[wasm_bindgen(js_name = nowMs)]
    pub fn now_ms() -> f64;
    /// Whether the tests run in Firefox (else Chromium): where the browsers
    /// differ, the tests say so.
    #[wasm_bindgen(js_name = isFirefox)]
    pub fn is_firefox() -> bool;
    #[wasm_bindgen(js_name = captureConsole)]
    fn capture_console() -> js_sys::Function;
    #[wasm_bindgen(js_name = useReferenceWorker)]
    fn use_reference_worker_promise() -> Promise;
}

/// Makes `reference-worker.js` (no mocklib code; it answers
/// `/reference/direct` itself) the Service Worker controlling this page, as
/// an app's own worker would be.
pub async fn use_reference_worker() {
    JsFuture::from(use_reference_worker_promise())
        .await
        .expect("register reference-worker.js");
}

/// What plain JavaScript `fetch` saw.
#[derive(Debug)]
pub struct JsResponse {
    pub status: u16,
    pub status_text: String,
    pub body: String,
    pub url: String,
    pub redirected: bool,
}

/// `fetch(url, init)` from JavaScript, read as text.
pub async fn js_fetch(url: &str, init: JsValue) -> JsResponse {
    let value = JsFuture::from(js_fetch_text_promise(url, init))
        .await
        .expect("JS fetch rejected");
    let parts = js_sys::Array::from(&value);
    JsResponse {
        status: parts.get(0).as_f64().unwrap() as u16,
        status_text: parts.get(1).as_string().unwrap(),
        body: parts.get(2).as_string().unwrap(),
        url: parts.get(3).as_string().unwrap(),
        redirected: parts.get(4).as_bool().unwrap(),
    }
}

/// `"TypeError: …"` when `fetch(url)` rejected with a TypeError,
/// `"resolved"` when it did not reject.
pub async fn js_fetch_error(url: &str) -> String {
    JsFuture::from(js_fetch_error_promise(url))
        .await
        .unwrap()
        .as_string()
        .unwrap()
}

pub async fn xhr(url: &str) -> (u16, String) {
    let value = JsFuture::from(xhr_text_promise(url))
        .await
        .expect("XHR failed");
    let parts = js_sys::Array::from(&value);
    (
        parts.get(0).as_f64().unwrap() as u16,
        parts.get(1).as_string().unwrap(),
    )
}

pub async fn image_size(url: &str) -> Result<(u32, u32), String> {
    let value = JsFuture::from(image_size_promise(url))
        .await
        .map_err(|e| format!("{e:?}"))?;
    let parts = js_sys::Array::from(&value);
    Ok((
        parts.get(0).as_f64().unwrap() as u32,
        parts.get(1).as_f64().unwrap() as u32,
    ))
}

/// Text a dedicated Web Worker of the page got from `fetch(url)`.
pub async fn fetch_from_web_worker(url: &str) -> String {
    JsFuture::from(web_worker_promise(url))
        .await
        .unwrap()
        .as_string()
        .unwrap()
}

/// The text of the page a frame navigated to `url` shows.
pub async fn frame_text(url: &str) -> String {
    within_hang_guard("the frame's load", JsFuture::from(frame_text_promise(url)))
        .await
        .unwrap()
        .as_string()
        .unwrap_or_default()
}

pub fn origin() -> String {
    web_sys::window().unwrap().location().origin().unwrap()
}

/// A 1×1 transparent PNG.
pub const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0b, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x00, 0x02, 0x00,
    0x00, 0x05, 0x00, 0x01, 0x7a, 0x5e, 0xab, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
];

/// Start options for `mode`, without the per-request console lines.
pub fn quiet(mode: Mode) -> StartOptions {
    StartOptions::new().mode(mode).quiet(true)
}

/// A worker started in `mode` with `handlers`.
pub async fn started(mode: Mode, handlers: impl IntoIterator<Item = Handler>) -> Worker {
    let worker = setup_worker(handlers);
    assert_eq!(worker.start_with(quiet(mode)).await, Ok(mode));
    worker
}

pub fn user_handler() -> Handler {
    http::get("/api/user", |_| {
        HttpResponse::json(&json!({ "name": "John" }))
    })
}

/// What `response:bypass` reported of each real response: status, headers.
pub type Bypassed = Arc<Mutex<Vec<(u16, ::http::HeaderMap)>>>;

/// A worker started in `mode` with `handlers` and the bypass strategy, and
/// what `response:bypass` reports.
pub async fn bypassing(
    mode: Mode,
    handlers: impl IntoIterator<Item = Handler>,
) -> (Worker, Bypassed) {
    let worker = setup_worker(handlers);
    let options = quiet(mode).on_unhandled_request(UnhandledRequest::Bypass);
    worker.start_with(options).await.unwrap();
    let bypassed = Bypassed::default();
    let seen = Arc::clone(&bypassed);
    worker.events().on(EventKind::ResponseBypass, move |event| {
        let response = event.response.as_ref().unwrap();
        let head = (response.status.as_u16(), response.headers.clone());
        seen.lock().unwrap().push(head);
    });
    (worker, bypassed)
}

/// A passthrough handler and an unhandled request (bypass strategy) both
/// reach the runner's real files, and `response:bypass` sees both.
pub async fn check_passthrough_and_unhandled_reach_the_real_server(mode: Mode) {
    let (worker, bypassed) = bypassing(mode, [http::get(REAL_FILE, |_| passthrough())]).await;
    let passed = js_fetch(REAL_FILE, JsValue::UNDEFINED).await;
    assert_eq!((passed.status, passed.body.as_str()), (200, REAL_BODY));
    let unhandled = js_fetch("/Cargo.toml", JsValue::UNDEFINED).await;
    assert_eq!(unhandled.status, 200);
    assert!(
        unhandled.body.contains("mocklib-browser-tests"),
        "{}",
        unhandled.body
    );
    let statuses: Vec<u16> = bypassed.lock().unwrap().iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [200, 200]);
    worker.stop();
}

/// A handler that fetches the real file with `bypass()` and alters it.
pub async fn check_bypass_alters_the_real_response(mode: Mode) {
    let worker = started(
        mode,
        [http::get(REAL_FILE, |args| async move {
            let real = bypass(&args.request).await?;
            let mut body: Value = real.json_body()?;
            body["altered"] = json!(true);
            Ok::<_, Box<dyn std::error::Error>>(HttpResponse::json(&body))
        })],
    )
    .await;
    let response = js_fetch(REAL_FILE, JsValue::UNDEFINED).await;
    let body: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(
        body,
        json!({ "source": "the real server", "altered": true })
    );
    worker.stop();
}

/// Expectations and the journal in the page: `verify()` reports an unmet
/// expectation with the closest recorded request, `requests()` lists what
/// the page fetched with the handler that answered.
pub async fn check_verify_and_the_journal(mode: Mode) {
    let worker = started(
        mode,
        [
            user_handler().times(1),
            http::get("/api/posts/:id", |_| HttpResponse::text("post")).times(1),
        ],
    )
    .await;
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 200);
    // A typo in the page's code: `post` for `posts`.
    js_fetch("/api/post/1", JsValue::UNDEFINED).await;

    let report = worker.verify().unwrap_err().to_string();
    assert!(
        report.contains("GET /api/posts/:id: expected exactly 1, received 0"),
        "{report}"
    );
    assert!(report.contains("received /api/post/1"), "{report}");
    let journal: Vec<(String, Option<String>)> = worker
        .requests()
        .iter()
        .map(|r| {
            (
                r.url().path().to_owned(),
                r.handler().map(|h| h.header().to_owned()),
            )
        })
        .collect();
    assert_eq!(
        journal,
        [
            ("/api/user".to_owned(), Some("GET /api/user".to_owned())),
            ("/api/post/1".to_owned(), None),
        ]
    );
    worker.stop();
}

/// A GraphQL query sent with gloo-net (a POST with a JSON body) reaches a
/// `graphql::query` handler, variables and all.
pub async fn check_graphql_handlers(mode: Mode) {
    let worker = started(
        mode,
        [mocklib::graphql::query("GetUser", |args| {
            let id = args.variables["id"].clone();
            HttpResponse::json(&json!({ "data": { "user": { "id": id, "name": "John" } } }))
        })],
    )
    .await;
    let response = gloo_net::http::Request::post("/graphql")
        .json(&json!({ "query": "query GetUser($id: ID!) { user(id: $id) { name } }", "variables": { "id": "1" } }))
        .unwrap()
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({ "data": { "user": { "id": "1", "name": "John" } } })
    );
    worker.stop();
}

/// What the page prints with `console.warn` and `console.error` from
/// [`start`](Self::start) to [`stop`](Self::stop).
pub struct ConsoleCapture(js_sys::Function);

impl ConsoleCapture {
    pub fn start() -> Self {
        ConsoleCapture(capture_console())
    }

    /// The messages, one string each.
    pub fn stop(self) -> Vec<String> {
        let seen = self.0.call0(&JsValue::NULL).unwrap();
        js_sys::Array::from(&seen)
            .iter()
            .map(|message| message.as_string().unwrap_or_default())
            .collect()
    }
}

/// An unhandled request's warning names the handlers closest to it, as on
/// native ("Did you mean ...").
pub async fn check_an_unhandled_request_warning_names_the_closest_handlers(mode: Mode) {
    let worker = setup_worker([
        user_handler(),
        http::post("/api/users", |_| HttpResponse::empty().status(201)),
    ]);
    assert_eq!(worker.start_with(quiet(mode)).await, Ok(mode));
    let console = ConsoleCapture::start();
    // The runner has no such file: its 404 is performed as it is.
    assert_eq!(js_fetch("/api/users", JsValue::UNDEFINED).await.status, 404);
    let messages = console.stop();
    worker.stop();
    let url = format!("{}/api/users", origin());
    let warning = messages
        .iter()
        .find(|message| message.contains(&url))
        .unwrap_or_else(|| panic!("no warning names {url}: {messages:?}"));
    assert!(warning.starts_with("[mocklib] Warning: "), "{warning}");
    assert!(
        warning.contains("Did you mean to request one of the following resources instead?")
            && warning.contains("GET /api/user")
            && warning.contains("POST /api/users"),
        "{warning}"
    );
}

/// A `fetch` of a file MSW counts as a static asset (a `.json` here) that
/// no handler answers goes to the network even under the error strategy,
/// and quietly; other unhandled requests still fail.
pub async fn check_an_unhandled_asset_fetch_is_performed_quietly(mode: Mode) {
    let worker = setup_worker([user_handler()]);
    let options = quiet(mode).on_unhandled_request(UnhandledRequest::Error);
    assert_eq!(worker.start_with(options).await, Ok(mode));
    let console = ConsoleCapture::start();
    let real = js_fetch(REAL_FILE, JsValue::UNDEFINED).await;
    let failed = js_fetch_error("/api/users").await;
    let messages = console.stop();
    worker.stop();
    assert_eq!((real.status, real.body.as_str()), (200, REAL_BODY));
    assert!(failed.starts_with("TypeError"), "{failed}");
    assert!(
        !messages.iter().any(|message| message.contains(REAL_FILE)),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|message| message.contains("/api/users")),
        "{messages:?}"
    );
}

/// The unhandled-request tests every mode runs, as `#[wasm_bindgen_test]`s
/// of the test file that expands this with its mode.
macro_rules! unhandled_request_tests {
    ($mode:expr) => {
        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn an_unhandled_asset_fetch_is_performed_quietly() {
            check_an_unhandled_asset_fetch_is_performed_quietly($mode).await;
        }

        #[wasm_bindgen_test::wasm_bindgen_test]
        async fn an_unhandled_request_warning_names_the_closest_handlers() {
            check_an_unhandled_request_warning_names_the_closest_handlers($mode).await;
        }
    };
}
pub(crate) use unhandled_request_tests;

/// Long enough that only a hang (a bug) reaches it.
const HANG: Duration = Duration::from_secs(5);

/// `future`'s output, or a failed test when it hangs.
async fn within_hang_guard<T>(what: &str, future: impl Future<Output = T>) -> T {
    let future = std::pin::pin!(future);
    match select(future, std::pin::pin!(delay(HANG))).await {
        Either::Left((output, _)) => output,
        Either::Right(_) => panic!("{what} hung for {HANG:?}"),
    }
}

/// A streamed body read from JavaScript: `fetch(url)`'s `response.body.getReader()`.
pub struct BodyReader(JsValue);

impl BodyReader {
    /// Fetches `url`, asserts a 200 without `Content-Length`, and opens its body.
    pub async fn open(url: &str) -> Self {
        Self::open_with(url, &JsValue::UNDEFINED).await
    }

    /// [`open`](Self::open) with `fetch`'s `init` (method, headers, body).
    pub async fn open_with(url: &str, init: &JsValue) -> Self {
        let opened = within_hang_guard("fetch", JsFuture::from(open_body_promise(url, init)))
            .await
            .expect("fetch rejected");
        let parts = js_sys::Array::from(&opened);
        assert_eq!(parts.get(0).as_f64(), Some(200.0));
        assert!(
            parts.get(1).is_null(),
            "a streamed body has no Content-Length"
        );
        BodyReader(parts.get(2))
    }

    /// One `reader.read()`: `Ok(None)` at the end, `Err` when it rejected.
    pub async fn read(&self) -> Result<Option<String>, JsValue> {
        let read = JsFuture::from(read_chunk_promise(&self.0));
        Ok(within_hang_guard("reader.read()", read).await?.as_string())
    }

    /// Reads until `expected` arrived whole (chunks may coalesce on the way).
    pub async fn read_text(&self, expected: &str) {
        let mut text = String::new();
        while text.len() < expected.len() {
            let chunk = self.read().await.unwrap().expect("more body");
            text.push_str(&chunk);
        }
        assert_eq!(text, expected);
    }

    /// Every chunk up to the end, as read.
    pub async fn read_to_end(&self) -> Vec<String> {
        let mut chunks = Vec::new();
        while let Some(chunk) = self.read().await.unwrap() {
            chunks.push(chunk);
        }
        chunks
    }

    /// `reader.cancel()`.
    pub async fn cancel(&self) {
        JsFuture::from(cancel_reader_promise(&self.0))
            .await
            .unwrap();
    }
}

/// What a streamed chunk is: text, or the error that ends the body.
pub type Released = Result<&'static str, std::io::Error>;

/// `GET /api/feed` streams what the test sends on `sender` (one request per
/// feed); the flags say when its `finalize` ran and when its stream was
/// dropped.
pub struct Feed {
    pub sender: UnboundedSender<Released>,
    pub finalized: Arc<AtomicBool>,
    pub dropped: Arc<AtomicBool>,
}

/// Sets its flag when dropped, with the stream that holds it.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Feed {
    pub fn new() -> (Feed, Handler) {
        let (sender, receiver) = unbounded::<Released>();
        let feed = Feed {
            sender,
            finalized: Arc::default(),
            dropped: Arc::default(),
        };
        let receiver = Arc::new(Mutex::new(Some(receiver)));
        let (finalized, dropped) = (Arc::clone(&feed.finalized), Arc::clone(&feed.dropped));
        let handler = http::get("/api/feed", move |args| {
            let finalized = Arc::clone(&finalized);
            args.finalize(move || finalized.store(true, Ordering::SeqCst));
            let receiver = receiver
                .lock()
                .unwrap()
                .take()
                .expect("one request per feed");
            let guard = DropGuard(Arc::clone(&dropped));
            let stream = futures_util::stream::unfold(
                (receiver, guard),
                |(mut receiver, guard)| async move {
                    let chunk = receiver.next().await?;
                    Some((chunk, (receiver, guard)))
                },
            );
            HttpResponse::try_stream(stream)
        });
        (feed, handler)
    }

    /// A worker in `mode` serving a new feed, and the page's reader of it,
    /// which has read `first`, the feed's first chunk.
    pub async fn open(mode: Mode, first: &'static str) -> (Feed, Worker, BodyReader) {
        let (feed, handler) = Feed::new();
        let worker = started(mode, [handler]).await;
        let reader = if mode == Mode::ServiceWorker && is_firefox() {
            // Firefox hands the page a Service Worker's streamed response
            // only with its first bytes (a worker of plain JavaScript too):
            // `fetch` resolves once the first chunk exists.
            feed.release(Ok(first));
            BodyReader::open("/api/feed").await
        } else {
            // The head arrives before any chunk exists.
            let reader = BodyReader::open("/api/feed").await;
            feed.release(Ok(first));
            reader
        };
        reader.read_text(first).await;
        (feed, worker, reader)
    }

    /// A feed whose first chunk, "before ", the page read when the worker
    /// stopped.
    pub async fn stopped_mid_stream(mode: Mode) -> (Feed, BodyReader) {
        let (feed, worker, reader) = Feed::open(mode, "before ").await;
        worker.stop();
        (feed, reader)
    }

    pub fn release(&self, chunk: Released) {
        self.sender
            .unbounded_send(chunk)
            .expect("the stream is still read");
    }

    /// Waits until both the stream was dropped and `finalize` ran.
    pub async fn wait_until_over(&self) {
        within_hang_guard("dropping the stream", async {
            while !(self.dropped.load(Ordering::SeqCst) && self.finalized.load(Ordering::SeqCst)) {
                delay(5).await;
            }
        })
        .await;
    }
}

/// Each chunk reaches the page's reader before the next one exists; the
/// end of the stream ends the body, and `finalize` runs.
pub async fn check_chunks_arrive_as_released(mode: Mode) {
    let (feed, worker, reader) = Feed::open(mode, "one ").await;
    for chunk in ["two ", "three"] {
        feed.release(Ok(chunk));
        reader.read_text(chunk).await;
    }
    assert!(
        !feed.finalized.load(Ordering::SeqCst),
        "finalize ran mid-body"
    );
    feed.sender.close_channel();
    assert_eq!(reader.read().await.unwrap(), None);
    feed.wait_until_over().await;
    worker.stop();
}

/// A reader that cancels drops the Rust stream, which runs `finalize`.
pub async fn check_cancelling_the_reader_drops_the_stream(mode: Mode) {
    let (feed, worker, reader) = Feed::open(mode, "first").await;
    assert!(!feed.dropped.load(Ordering::SeqCst));
    reader.cancel().await;
    if mode == Mode::ServiceWorker && is_firefox() {
        // Firefox tells a worker's stream that the page's reader cancelled
        // only when it passes on the stream's next bytes (a worker of plain
        // JavaScript too): until then the resolver's stream lives.
        delay(300).await;
        assert!(
            !feed.dropped.load(Ordering::SeqCst),
            "Firefox passes the cancel on at once now: say so in mocklib::browser's docs"
        );
        feed.release(Ok("next"));
    }
    feed.wait_until_over().await;
    assert!(
        feed.sender.is_closed(),
        "the receiving end is gone with the stream"
    );
    worker.stop();
}

/// A stream that yields an error fails the page's read after the chunks
/// before it; returns the error `read()` rejected with.
pub async fn check_a_failing_stream_rejects_the_read(mode: Mode) -> JsValue {
    let (feed, worker, reader) = Feed::open(mode, "good ").await;
    feed.release(Err(std::io::Error::other("upstream gone")));
    let error = reader.read().await.expect_err("the read rejects");
    assert!(error.is_instance_of::<js_sys::TypeError>(), "{error:?}");
    feed.wait_until_over().await;
    worker.stop();
    error
}

/// A body that is good, then fails at once: the good chunk is read before
/// the error.
pub async fn check_an_error_does_not_overtake_the_chunks_before_it(mode: Mode) {
    let chunks: Vec<Released> = vec![Ok("good "), Err(std::io::Error::other("upstream gone"))];
    let chunks = Arc::new(Mutex::new(Some(chunks)));
    let worker = started(
        mode,
        [http::get("/api/broken", move |_| {
            let chunks = chunks.lock().unwrap().take().expect("one request");
            HttpResponse::try_stream(futures_util::stream::iter(chunks))
        })],
    )
    .await;
    let reader = BodyReader::open("/api/broken").await;
    assert_eq!(reader.read().await.unwrap().as_deref(), Some("good "));
    assert!(reader.read().await.is_err());
    worker.stop();
}

/// `HttpResponse::chunks` with a pause: every chunk, in order; returns the
/// chunks as read.
pub async fn check_paced_chunks_arrive_in_order(mode: Mode) -> Vec<String> {
    let worker = started(
        mode,
        [http::get("/api/paced", |_| {
            HttpResponse::chunks(["first ", "second ", "third"], Duration::from_millis(20))
        })],
    )
    .await;
    let reader = BodyReader::open("/api/paced").await;
    let chunks = reader.read_to_end().await;
    assert_eq!(chunks.concat(), "first second third");
    worker.stop();
    chunks
}

/// How many 1 MiB chunks the stream of `produced_for_an_idle_reader`
/// has: more than any bound the checks accept.
pub const UNREAD_CHUNKS: usize = 150;

/// A body of 1 MiB chunks whose reader reads one and stops: the stream is
/// asked for at most `bound` chunks (checked once production stopped, so a
/// page that ignored the reader would produce them all). Cancelling then
/// drops it.
pub async fn check_a_body_is_produced_as_it_is_read(mode: Mode, bound: usize) {
    assert!(bound < UNREAD_CHUNKS);
    let settled = produced_for_an_idle_reader(mode).await;
    assert!(
        settled <= bound,
        "{settled} chunks produced for an idle reader, at most {bound} expected"
    );
}

/// How many chunks of an `UNREAD_CHUNKS`-chunk body are produced, once
/// production stopped, for a reader that read one and waits.
pub async fn produced_for_an_idle_reader(mode: Mode) -> usize {
    let produced = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&produced);
    let worker = started(
        mode,
        [http::get("/api/big", move |_| {
            let counted = Arc::clone(&counted);
            let chunks = futures_util::stream::repeat_with(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                vec![b'x'; 1 << 20]
            });
            HttpResponse::stream(chunks.take(UNREAD_CHUNKS))
        })],
    )
    .await;
    let reader = BodyReader::open("/api/big").await;
    assert!(!reader.read().await.unwrap().unwrap().is_empty());
    // Until nothing more is produced for three looks in a row: one quiet
    // look can be a browser starved of CPU (seen in Firefox with builds
    // running beside it: 72 of 150 chunks).
    let settled = within_hang_guard("production to stop", async {
        let (mut before, mut quiet) = (usize::MAX, 0);
        loop {
            delay(200).await;
            let now = produced.load(Ordering::SeqCst);
            quiet = if now == before { quiet + 1 } else { 0 };
            if quiet == 3 {
                return now;
            }
            before = now;
        }
    })
    .await;
    reader.cancel().await;
    worker.stop();
    settled
}
