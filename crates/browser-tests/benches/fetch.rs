//! Mocked `fetch` round trips in a headless browser (Chromium or Firefox:
//! `./scripts/bench-browser` runs it in each), both interception modes,
//! against references measured in the same page and run:
//!
//! - a real `fetch` of a small file from the runner's loopback server;
//! - the floor of Service Worker interception in this browser, with no
//!   mocklib code (`reference-worker.js`): a worker answering by itself, and one
//!   asking the page over a `MessagePort` as mocklib does, in plain JS (at
//!   the mocked request's URL and at one shaped as the Connect call's);
//! - mocklib's own worker script answered by plain JS in the page instead of
//!   the page's wasm: what the worker script costs beside the reference's,
//!   apart from the page's work;
//! - Mock Service Worker itself (2.x and 3.x, Service Worker mode), when
//!   `./scripts/bench` has downloaded it next to this crate's manifest.
//!
//! The rows compared with that floor are measured in rounds that take turns.
//!
//! Run with `./scripts/bench` (or, from this folder,
//! `cargo test --release --target wasm32-unknown-unknown --bench fetch -- --nocapture`:
//! run as a test, since the runner's `--bench` mode expects Criterion
//! benches); it prints medians and ratios for docs/BENCHMARKS.md.
#![cfg(target_arch = "wasm32")]

use mocklib::browser::{Mode, StartOptions, Worker, setup_worker};
use mocklib::{Handler, HttpResponse, grpc, http};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Fetches timed per mode.
const FETCHES: usize = 2_000;

/// How long each mode is warmed up before it is timed.
const WARM_UP_MS: u32 = 3_000;

/// Rounds of the rows compared with the Service Worker floor.
const ROUNDS: usize = 4;

/// The query of the bench's Connect call: `bytes payload = 1` of 32 bytes,
/// in unpadded URL-safe base64. The floor is measured at a URL of the same
/// shape too: in Firefox the hop costs more for a longer URL (~4 %).
const CONNECT_QUERY: &str = "?connect=v1&encoding=proto&base64=1\
                             &message=CiAHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw";

#[wasm_bindgen(inline_js = r#"
// Each sample is the mean of `batch` sequential fetches: the page clock
// ticks in 5 µs steps, too coarse for a single fallback-mode fetch.
export async function timeFetches(url, samples, batch) {
  const times = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    for (let j = 0; j < batch; j++) {
      const response = await fetch(url);
      await response.arrayBuffer();
    }
    times[i] = (performance.now() - start) / batch;
  }
  return times;
}

// Fetches for `milliseconds`: V8 compiles hot wasm and JS with its
// optimizing tiers only after a while (measured: the first 2,000 fallback
// fetches here ran at twice the later cost).
export async function warmUp(url, milliseconds) {
  const end = performance.now() + milliseconds;
  while (performance.now() < end) {
    const response = await fetch(url);
    await response.arrayBuffer();
  }
}

async function controlledBy(script) {
  const container = navigator.serviceWorker;
  while (!container.controller || !container.controller.scriptURL.endsWith(script)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// Answers mocklib's own worker script (left registered and in control by
// the Service Worker mode) from a few lines of JavaScript over its protocol,
// instead of the page's wasm.
export async function useMocklibScriptPageEcho() {
  await controlledBy('/mocklib-worker.js');
  const worker = navigator.serviceWorker.controller;
  const requests = new MessageChannel();
  const body = new TextEncoder().encode('{"name":"John"}');
  requests.port1.onmessage = ({ data }) => {
    const answer = body.slice().buffer;
    requests.port1.postMessage(
      { id: data.id, kind: 'mocked', status: 200, statusText: 'OK', headers: ['content-type', 'application/json'], body: answer, streamed: false },
      [answer],
    );
  };
  const reply = new MessageChannel();
  const { protocol } = await new Promise((resolve) => {
    reply.port1.onmessage = (event) => resolve(event.data);
    worker.postMessage({ type: 'mocklib:activate', protocol: 3 }, [requests.port2, reply.port2]);
  });
  if (protocol !== 3) throw new Error(`mocklib-worker.js speaks protocol ${protocol}, this echo 3`);
  globalThis.benchScriptEcho = worker;
}

export async function stopMocklibScriptPageEcho() {
  const ack = new MessageChannel();
  const acknowledged = new Promise((resolve) => (ack.port1.onmessage = resolve));
  globalThis.benchScriptEcho.postMessage({ type: 'mocklib:deactivate' }, [ack.port2]);
  await acknowledged;
}

// Replaces the Service Worker of this page with reference-worker.js and
// connects its echo port.
export async function useReferenceWorker() {
  await navigator.serviceWorker.register('/reference-worker.js', { scope: '/' });
  await controlledBy('/reference-worker.js');
  const requests = new MessageChannel();
  const body = new TextEncoder().encode('{"name":"John"}');
  requests.port1.onmessage = (event) => {
    const answer = body.slice().buffer;
    requests.port1.postMessage(
      { id: event.data.id, status: 200, headers: [['content-type', 'application/json']], body: answer },
      [answer],
    );
  };
  const ready = new MessageChannel();
  const connected = new Promise((resolve) => (ready.port1.onmessage = resolve));
  navigator.serviceWorker.controller.postMessage('connect', [requests.port2, ready.port2]);
  await connected;
}

// Starts MSW `major` (files written by ./scripts/bench) with the bench's
// one handler; resolves to its version, or null when it is not there.
export async function startMsw(major) {
  const workerUrl = `/msw-${major}-worker.js`;
  const script = await fetch(workerUrl);
  if (!script.ok) return null;
  const version = /PACKAGE_VERSION = '([^']+)'/.exec(await script.text())[1];
  await new Promise((resolve, reject) => {
    const element = document.createElement('script');
    element.src = `/msw-${major}.js`;
    element.onload = resolve;
    element.onerror = reject;
    document.head.append(element);
  });
  const { setupWorker, http, HttpResponse } = globalThis.MockServiceWorker;
  const worker = setupWorker(http.get('/api/user', () => HttpResponse.json({ name: 'John' })));
  await worker.start({ serviceWorker: { url: workerUrl }, quiet: true, onUnhandledRequest: 'bypass' });
  await controlledBy(workerUrl);
  globalThis.benchMsw = worker;
  return version;
}

export function stopMsw() {
  globalThis.benchMsw.stop();
}

// Times the page's share of each Service Worker question, from the
// question's arrival to the answer's post (both on the request port): the
// work the page-echo floor does in a few lines of JavaScript, and mocklib's
// page in wasm. Installed after the rows above, removed before MSW's.
const pageShares = [];
let unhookPageShare_;
export function unhookPageShare() { unhookPageShare_(); }
export function hookPageShare() {
  const started = new Map();
  const onmessage = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
  const post = MessagePort.prototype.postMessage;
  unhookPageShare_ = () => {
    Object.defineProperty(MessagePort.prototype, 'onmessage', onmessage);
    MessagePort.prototype.postMessage = post;
  };
  Object.defineProperty(MessagePort.prototype, 'onmessage', {
    configurable: true,
    get() { return onmessage.get.call(this); },
    set(handler) {
      onmessage.set.call(this, handler && function (event) {
        const data = event.data;
        if (data && data.type === 'mocklib:request') started.set(data.id, performance.now());
        return handler.call(this, event);
      });
    },
  });
  MessagePort.prototype.postMessage = function (message, transfer) {
    const start = message && message.kind === 'mocked' ? started.get(message.id) : undefined;
    if (start !== undefined) {
      pageShares.push(performance.now() - start);
      started.delete(message.id);
    }
    return post.call(this, message, transfer);
  };
}

// The mean page share since the last call, in microseconds.
export function takePageShare() {
  const mean = pageShares.reduce((sum, share) => sum + share, 0) / pageShares.length;
  pageShares.length = 0;
  return mean * 1000;
}

export function browserName() {
  return navigator.userAgent.includes('Firefox/') ? 'firefox' : 'chromium';
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = timeFetches)]
    fn time_fetches(url: &str, samples: usize, batch: usize) -> js_sys::Promise;
    #[wasm_bindgen(js_name = warmUp)]
    fn warm_up(url: &str, milliseconds: u32) -> js_sys::Promise;
    #[wasm_bindgen(js_name = useMocklibScriptPageEcho)]
    fn use_mocklib_script_page_echo() -> js_sys::Promise;
    #[wasm_bindgen(js_name = stopMocklibScriptPageEcho)]
    fn stop_mocklib_script_page_echo() -> js_sys::Promise;
    #[wasm_bindgen(js_name = useReferenceWorker)]
    fn use_reference_worker() -> js_sys::Promise;
    #[wasm_bindgen(js_name = startMsw)]
    fn start_msw(major: u32) -> js_sys::Promise;
    #[wasm_bindgen(js_name = stopMsw)]
    fn stop_msw();
    #[wasm_bindgen(js_name = hookPageShare)]
    fn hook_page_share();
    #[wasm_bindgen(js_name = unhookPageShare)]
    fn unhook_page_share();
    #[wasm_bindgen(js_name = takePageShare)]
    fn take_page_share() -> f64;
    #[wasm_bindgen(js_name = browserName)]
    fn browser_name() -> String;
}

/// Median and 90th percentile in microseconds.
#[derive(Clone, Copy)]
struct Timing {
    median: f64,
    p90: f64,
}

/// Times `FETCHES` sequential fetches of `url`, `batch` to a sample.
async fn measure(url: &str, batch: usize) -> Timing {
    timing(samples(url, batch, FETCHES, WARM_UP_MS).await)
}

/// `fetches` sequential fetches of `url` after `warm_up_ms`, `batch` to a
/// sample, in microseconds.
async fn samples(url: &str, batch: usize, fetches: usize, warm_up_ms: u32) -> Vec<f64> {
    JsFuture::from(warm_up(url, warm_up_ms)).await.unwrap();
    let times = JsFuture::from(time_fetches(url, fetches / batch, batch))
        .await
        .unwrap();
    let times = js_sys::Float64Array::new(&times).to_vec();
    times.into_iter().map(|time| time * 1000.0).collect()
}

/// Median and 90th percentile of `times`.
fn timing(mut times: Vec<f64>) -> Timing {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    Timing {
        median: at(0.5),
        p90: at(0.9),
    }
}

/// The reference worker's page echo, at its own URL and at one shaped as
/// the Connect call's, into `rows[3]` and `rows[4]`.
async fn reference_rounds(rows: &mut [Vec<f64>; 5], fetches: usize, warm_up_ms: u32) {
    JsFuture::from(use_reference_worker()).await.unwrap();
    rows[3].extend(samples("/reference/echo", 1, fetches, warm_up_ms).await);
    let connect_url = format!("/reference/echo{CONNECT_QUERY}");
    rows[4].extend(samples(&connect_url, 1, fetches, warm_up_ms).await);
}

/// Each line names the browser: each has its own floor.
fn report(name: &str, timing: Timing, real: Timing) {
    console_log!(
        "bench browser_fetch/{}/{name}: median {:.1} µs, p90 {:.1} µs, {:.3}x a real loopback fetch",
        browser_name(),
        timing.median,
        timing.p90,
        timing.median / real.median
    );
}

#[wasm_bindgen_test]
async fn mocked_fetch_round_trip() {
    // Reference: the runner's own server, for real, in this browser.
    let real = measure("/Cargo.toml", 1).await;
    report("real_loopback_fetch", real, real);

    let handlers = || {
        [http::get("/api/user", |_| {
            HttpResponse::json(&serde_json::json!({ "name": "John" }))
        })]
    };
    let worker = setup_worker(handlers());
    let options = StartOptions::new().mode(Mode::Fallback).quiet(true);
    assert_eq!(worker.start_with(options).await, Ok(Mode::Fallback));
    report("fallback_mode", measure("/api/user", 10).await, real);
    worker.stop();

    // The rows compared with the Service Worker floor, in rounds that take
    // turns (each round replaces one worker with the other): measured in
    // one block each, Firefox's drift over a minute was as large as the
    // differences between them.
    let mut rows: [Vec<f64>; 5] = Default::default();
    let (fetches, warm_up_ms) = (FETCHES / ROUNDS, WARM_UP_MS / 2);
    for round in 0..ROUNDS {
        let reference_first = round % 2 == 1;
        if reference_first {
            reference_rounds(&mut rows, fetches, warm_up_ms).await;
        }
        let worker = in_service_worker_mode(handlers()).await;
        rows[0].extend(samples("/api/user", 1, fetches, warm_up_ms).await);
        worker.stop();

        // A Connect unary call (its GET form, the message in the query) of
        // a `grpc` handler, in Service Worker mode: a browser app's mocked gRPC.
        let worker = in_service_worker_mode([grpc::unary(
            "bench.Echo/Unary",
            |args: grpc::ResolverArgs<grpc::RawMessage>| Ok(args.message),
        )])
        .await;
        let connect = format!("/bench.Echo/Unary{CONNECT_QUERY}");
        rows[1].extend(samples(&connect, 1, fetches, warm_up_ms).await);
        worker.stop();

        JsFuture::from(use_mocklib_script_page_echo())
            .await
            .unwrap();
        rows[2].extend(samples("/api/user", 1, fetches, warm_up_ms).await);
        JsFuture::from(stop_mocklib_script_page_echo())
            .await
            .unwrap();
        if !reference_first {
            reference_rounds(&mut rows, fetches, warm_up_ms).await;
        }
    }
    let names = [
        "service_worker_mode",
        "service_worker_mode_connect_unary",
        "mocklib_script_page_echo",
        "floor_worker_page_echo",
        "floor_worker_page_echo_connect_url",
    ];
    for (name, row) in names.into_iter().zip(rows) {
        report(name, timing(row), real);
    }
    JsFuture::from(use_reference_worker()).await.unwrap();
    report(
        "floor_worker_direct",
        measure("/reference/direct", 1).await,
        real,
    );

    // Where the time of the page's side goes: its share of each question
    // (before MSW's rows: MSW's worker holds an event open, and ours would
    // not activate beside it; see tests/service_worker_busy.rs).
    hook_page_share();
    let worker = in_service_worker_mode(handlers()).await;
    let mocklib = page_share("/api/user").await;
    worker.stop();
    JsFuture::from(use_mocklib_script_page_echo())
        .await
        .unwrap();
    let echo = page_share("/api/user").await;
    JsFuture::from(stop_mocklib_script_page_echo())
        .await
        .unwrap();
    console_log!(
        "bench browser_fetch/{}/page_share: mocklib's page {mocklib:.0} µs a question, the page echo's {echo:.0} µs (from the question's arrival to the answer's post)",
        browser_name()
    );
    unhook_page_share();

    for major in [2, 3] {
        let version = JsFuture::from(start_msw(major)).await.unwrap();
        let Some(version) = version.as_string() else {
            console_log!(
                "bench browser_fetch/{}/msw_{major}: not downloaded (./scripts/bench does it)",
                browser_name()
            );
            continue;
        };
        let timing = measure("/api/user", 1).await;
        report(&format!("msw_{version}_service_worker"), timing, real);
        stop_msw();
    }
}

/// A worker with `handlers`, started in Service Worker mode.
async fn in_service_worker_mode(handlers: impl IntoIterator<Item = Handler>) -> Worker {
    let worker = setup_worker(handlers);
    let options = StartOptions::new().mode(Mode::ServiceWorker).quiet(true);
    assert_eq!(worker.start_with(options).await, Ok(Mode::ServiceWorker));
    worker
}

/// The mean page share of a Service Worker question for `url`, in µs.
async fn page_share(url: &str) -> f64 {
    samples(url, 1, 100, WARM_UP_MS / 2).await;
    take_page_share();
    samples(url, 1, 1_000, 0).await;
    take_page_share()
}
