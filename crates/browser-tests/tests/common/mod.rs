//! What both interception modes' tests share: plain `fetch` helpers and the
//! JavaScript clients (XHR, `<img>`, a Web Worker, JS `fetch`).
#![allow(dead_code)] // each test file uses its own subset

use std::sync::{Arc, Mutex};

use js_sys::Promise;
use mocklib::browser::{Mode, StartOptions, Worker, setup_worker};
use mocklib::{EventKind, Handler, HttpResponse, UnhandledRequest, bypass, http, passthrough};
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
export function setCookie(cookie) { document.cookie = cookie; }
export function getCookies() { return document.cookie; }
export function nowMs() { return performance.now(); }
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
    #[wasm_bindgen(js_name = setCookie)]
    pub fn set_cookie(cookie: &str);
    #[wasm_bindgen(js_name = getCookies)]
    pub fn get_cookies() -> String;
    #[wasm_bindgen(js_name = nowMs)]
    pub fn now_ms() -> f64;
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
    JsFuture::from(frame_text_promise(url))
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
    StartOptions {
        mode: Some(mode),
        quiet: true,
        ..StartOptions::default()
    }
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

/// A passthrough handler and an unhandled request (bypass strategy) both
/// reach the runner's real files, and `response:bypass` sees both.
pub async fn check_passthrough_and_unhandled_reach_the_real_server(mode: Mode) {
    let worker = setup_worker([http::get(REAL_FILE, |_| passthrough())]);
    let options = StartOptions {
        on_unhandled_request: UnhandledRequest::Bypass,
        ..quiet(mode)
    };
    worker.start_with(options).await.unwrap();
    let bypassed = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bypassed);
    worker.events().on(EventKind::ResponseBypass, move |event| {
        seen.lock()
            .unwrap()
            .push(event.response.as_ref().unwrap().status.as_u16());
    });
    let passed = js_fetch(REAL_FILE, JsValue::UNDEFINED).await;
    assert_eq!((passed.status, passed.body.as_str()), (200, REAL_BODY));
    let unhandled = js_fetch("/Cargo.toml", JsValue::UNDEFINED).await;
    assert_eq!(unhandled.status, 200);
    assert!(
        unhandled.body.contains("mocklib-browser-tests"),
        "{}",
        unhandled.body
    );
    assert_eq!(*bypassed.lock().unwrap(), [200, 200]);
    worker.stop();
}

/// A handler that fetches the real file with `bypass()` and alters it.
pub async fn check_bypass_alters_the_real_response(mode: Mode) {
    let worker = started(
        mode,
        [http::get(REAL_FILE, |args| async move {
            let real = bypass(&args.request).await?;
            let mut body: Value =
                serde_json::from_slice(real.body().as_bytes().ok_or("a buffered real body")?)?;
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
