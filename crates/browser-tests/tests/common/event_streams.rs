//! Server-sent events in the page: the `sse` handlers both modes' tests
//! use, the page's real `EventSource`, and the real event source `runner.py`
//! serves for `server.connect()`.

use std::time::Duration;

use futures_util::StreamExt;
use js_sys::Promise;
use mocklib::browser::Mode;
use mocklib::sse::{self, Event};
use mocklib::{Handler, delay, http, passthrough};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{BodyReader, is_firefox, js_fetch, started, within_hang_guard};

#[wasm_bindgen(inline_js = r#"
export function eventSourceEntries(url, types, count) {
  return new Promise((resolve) => {
    const source = new EventSource(url);
    const entries = [];
    const record = (entry) => {
      entries.push(entry);
      if (entries.length === count) {
        source.close();
        resolve(JSON.stringify(entries));
      }
    };
    for (const type of ['message', ...types]) {
      source.addEventListener(type, (event) => record({ type, data: event.data, lastEventId: event.lastEventId }));
    }
    source.addEventListener('error', () => record({ type: 'error', readyState: source.readyState }));
  });
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = eventSourceEntries)]
    fn event_source_entries_promise(url: &str, types: Vec<String>, count: u32) -> Promise;
}

/// The first `count` things a new `EventSource(url)` dispatched — events of
/// type `message` and `types` as `{ type, data, lastEventId }`, errors as
/// `{ type: "error", readyState }` — after which it is closed.
pub async fn event_source_entries(url: &str, types: &[&str], count: u32) -> Value {
    let types = types.iter().map(|&t| t.to_owned()).collect();
    let entries = JsFuture::from(event_source_entries_promise(url, types, count));
    let entries = within_hang_guard("the EventSource", entries).await.unwrap();
    serde_json::from_str(&entries.as_string().unwrap()).unwrap()
}

/// `GET /api/notifications`: a greeting with an event type and an id, data
/// of two lines, typed JSON; then `client.close()`.
pub fn notifications_handler() -> Handler {
    sse::get("/api/notifications", |args| {
        args.client
            .send(Event::data("welcome").event("greeting").id("1"));
        args.client.send(Event::data("line one\nline two").id("2"));
        args.client
            .send(Event::json(&json!({ "unread": 3 })).event("count"));
        args.client.close();
    })
}

/// The notifications as `text/event-stream` framing.
pub const NOTIFICATIONS: &str = "event: greeting\nid: 1\ndata: welcome\n\n\
    id: 2\ndata: line one\ndata: line two\n\n\
    event: count\ndata: {\"unread\":3}\n\n";

/// `GET /api/resumable`: an event with an id and a short `retry`, saying
/// which `Last-Event-ID` the request carried; then `client.close()`, after
/// which an `EventSource` reconnects.
pub fn resumable_handler() -> Handler {
    sse::get("/api/resumable", |args| {
        let seen = args.last_event_id().unwrap_or("none");
        args.client.send(
            Event::data(format!("last event id: {seen}"))
                .id("41")
                .retry(Duration::from_millis(10)),
        );
        args.client.close();
    })
}

/// A client that resumes a stream itself (`fetch` with `Last-Event-ID`, as
/// fetch-based EventSource libraries do) has the header reach the resolver.
pub async fn check_last_event_id_reaches_the_resolver(mode: Mode) {
    let worker = started(mode, [resumable_handler()]).await;
    let init = js_sys::JSON::parse(r#"{ "headers": { "last-event-id": "7" } }"#).unwrap();
    let reader = BodyReader::open_with("/api/resumable", &init).await;
    assert_eq!(
        reader.read_to_end().await.concat(),
        "id: 41\nretry: 10\ndata: last event id: 7\n\n"
    );
    worker.stop();
}

/// The origin of the real event source `runner.py` serves for this run.
pub async fn event_source_origin() -> String {
    let origin = js_fetch("/event-source.origin", JsValue::UNDEFINED).await;
    assert_eq!(
        origin.status, 200,
        "no real event source: run the browser tests from crates/browser-tests \
         (`cargo test --target wasm32-unknown-unknown`, as ./scripts/test does), \
         whose .cargo/config.toml runs them through runner.py"
    );
    origin.body
}

/// The real price events forwarded, the `debug` one dropped.
pub const FORWARDED_PRICES: &str = "event: price\nid: 1\ndata: {\"symbol\":\"ACME\",\"price\":100}\n\n\
    event: price\nid: 2\ndata: {\"symbol\":\"ACME\",\"price\":101}\n\n";

/// The real event source at `origin`, its `/events` forwarded by
/// `server.connect()` without the `debug` events, and its `/open` passed
/// through (for [`wait_until_real_stream_closed`]).
pub async fn forwarding_worker(mode: Mode, origin: &str) -> mocklib::browser::Worker {
    let forward = sse::get(format!("{origin}/events"), |args| async move {
        let mut real = args.server.connect().await?;
        while let Some(event) = real.next().await {
            let event = event?;
            if event.event_type() != Some("debug") {
                args.client.send(event);
            }
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    });
    let open = http::get(format!("{origin}/open"), |_| passthrough());
    started(mode, [forward, open]).await
}

/// Whether the real event source still has stream `name`'s client.
pub async fn real_stream_open(origin: &str, name: &str) -> bool {
    let open = js_fetch(&format!("{origin}/open?stream={name}"), JsValue::UNDEFINED).await;
    serde_json::from_str(&open.body).unwrap()
}

/// Waits until the real event source saw stream `name`'s client go away.
pub async fn wait_until_real_stream_closed(origin: &str, name: &str) {
    within_hang_guard("the real stream to close", async {
        while real_stream_open(origin, name).await {
            delay(20).await;
        }
    })
    .await;
}

/// The real stream reaches a `fetch` reader event by event, its `debug`
/// event dropped, while the real source stays open (it never ends); the
/// reader cancelling closes the real connection.
pub async fn check_a_real_stream_is_forwarded_as_it_arrives(mode: Mode) {
    let origin = event_source_origin().await;
    let worker = forwarding_worker(mode, &origin).await;
    let name = format!("{mode:?}-fetch");
    let reader = BodyReader::open(&format!("{origin}/events?stream={name}")).await;
    reader.read_text(FORWARDED_PRICES).await;
    assert!(real_stream_open(&origin, &name).await);
    reader.cancel().await;
    if mode == Mode::ServiceWorker && is_firefox() {
        // Firefox passes the cancel on with the body's next bytes (see
        // `check_cancelling_the_reader_drops_the_stream`), and the real
        // source sends only keep-alive comments now, which forwarding
        // leaves out: the connection stays until the worker stops.
        delay(300).await;
        assert!(real_stream_open(&origin, &name).await);
        worker.stop();
        wait_until_real_stream_closed(&origin, &name).await;
        return;
    }
    wait_until_real_stream_closed(&origin, &name).await;
    worker.stop();
}

/// A POST event stream (a chat completion): the request body reaches the
/// real source, whose events are forwarded as they are until it ends.
pub async fn check_a_real_post_stream_is_forwarded_to_its_end(mode: Mode) {
    let origin = event_source_origin().await;
    let worker = started(
        mode,
        [sse::post(
            format!("{origin}/completions"),
            |args| async move {
                args.server
                    .connect()
                    .await?
                    .forward_to(&args.client)
                    .await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            },
        )],
    )
    .await;
    let init = json!({
        "method": "POST",
        "headers": { "content-type": "application/json" },
        "body": json!({ "prompt": "Hello from the real model" }).to_string(),
    });
    let init = js_sys::JSON::parse(&init.to_string()).unwrap();
    let reader = BodyReader::open_with(&format!("{origin}/completions"), &init).await;
    let expected: String = ["Hello", "from", "the", "real", "model"]
        .iter()
        .map(|word| format!("data: {}\n\n", json!({ "delta": word })))
        .chain(["data: [DONE]\n\n".to_owned()])
        .collect();
    assert_eq!(reader.read_to_end().await.concat(), expected);
    worker.stop();
}

/// An `sse` stream read with `fetch` (as LLM clients read theirs): every
/// event framed as sent, and `client.close()` ends the body.
pub async fn check_events_reach_a_fetch_reader(mode: Mode) {
    let worker = started(mode, [notifications_handler()]).await;
    let reader = BodyReader::open("/api/notifications").await;
    assert_eq!(reader.read_to_end().await.concat(), NOTIFICATIONS);
    worker.stop();
}
