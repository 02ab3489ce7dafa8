//! Service Worker mode in headless Chromium: our worker script (written by
//! this crate's build script with `write_worker_script`, served by the test
//! runner as `/mocklib-worker.js`) intercepts fetch, XHR, `<img>`, the
//! page's Web Workers and navigations; unhandled navigations and static
//! assets go to the network quietly. Where Firefox differs from Chromium,
//! the tests say so.
#![cfg(target_arch = "wasm32")]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use mocklib::browser::{Mode, StartError, StartOptions, setup_worker};
use mocklib::{HttpResponse, UnhandledRequest, http};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const MODE: Mode = Mode::ServiceWorker;

#[wasm_bindgen_test]
async fn start_picks_the_service_worker_when_the_script_is_there() {
    let worker = setup_worker([user_handler()]);
    let quiet = StartOptions::new().quiet(true);
    assert_eq!(
        worker.start_with(quiet.clone()).await,
        Ok(Mode::ServiceWorker)
    );
    // Twice: warns and keeps the one activation.
    assert_eq!(worker.start_with(quiet).await, Ok(Mode::ServiceWorker));
    let response = js_fetch("/api/user", JsValue::UNDEFINED).await;
    assert_eq!(
        (response.status, response.body.as_str()),
        (200, r#"{"name":"John"}"#)
    );
    assert_eq!(response.url, format!("{}/api/user", origin()));
    worker.stop();
    worker.stop(); // warns, nothing else
    // Stopped: the worker lets the page's requests through to the runner.
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 404);
}

#[wasm_bindgen_test]
async fn a_worker_already_controlling_the_page_is_replaced_by_ours() {
    use_reference_worker().await;
    assert_eq!(
        js_fetch("/reference/direct", JsValue::UNDEFINED).await.body,
        r#"{"name":"John"}"#,
        "the reference worker controls the page"
    );
    let worker = started(MODE, [user_handler()]).await;
    // The very first request after start() is ours, not the old worker's
    // (which would let it through to the runner: 404).
    let response = js_fetch("/api/user", JsValue::UNDEFINED).await;
    assert_eq!(
        (response.status, response.body.as_str()),
        (200, r#"{"name":"John"}"#)
    );
    assert_eq!(
        js_fetch("/reference/direct", JsValue::UNDEFINED)
            .await
            .status,
        404
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn xhr_is_intercepted() {
    let worker = started(MODE, [user_handler()]).await;
    assert_eq!(
        xhr("/api/user").await,
        (200, r#"{"name":"John"}"#.to_owned())
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn images_are_intercepted() {
    let worker = started(
        MODE,
        [http::get("/images/pixel.png", |_| {
            HttpResponse::bytes(PIXEL_PNG).header("content-type", "image/png")
        })],
    )
    .await;
    assert_eq!(image_size("/images/pixel.png").await, Ok((1, 1)));
    worker.stop();
    // Without mocking the runner has no such image.
    assert!(image_size("/images/pixel.png?after-stop").await.is_err());
}

#[wasm_bindgen_test]
async fn requests_of_the_pages_web_workers_are_intercepted() {
    let worker = started(
        MODE,
        [http::get("/api/from-worker", |_| {
            HttpResponse::text("mocked for a Web Worker")
        })],
    )
    .await;
    assert_eq!(
        fetch_from_web_worker("/api/from-worker").await,
        "mocked for a Web Worker"
    );
    worker.stop();
}

/// The test page is cross-origin isolated (the runner's headers): a
/// document framed in it must say it embeds nothing foreign, as the runner's
/// own files do.
const COEP: (&str, &str) = ("cross-origin-embedder-policy", "require-corp");

#[wasm_bindgen_test]
async fn a_navigation_a_handler_matches_is_answered_by_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let worker = started(
        MODE,
        [
            http::get("/api/page", move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                HttpResponse::html("<p>mocked page</p>").header(COEP.0, COEP.1)
            }),
            http::get("/api/streamed-page", |_| {
                HttpResponse::chunks(["<p>streamed ", "page</p>"], Duration::from_millis(20))
                    .header("content-type", "text/html")
                    .header(COEP.0, COEP.1)
            }),
        ],
    )
    .await;
    // A frame's load is a navigation, as a page's is.
    assert_eq!(frame_text("/api/page").await, "mocked page");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The worker reads a streamed page whole before the navigation commits.
    assert_eq!(frame_text("/api/streamed-page").await, "streamed page");
    worker.stop();
}

#[wasm_bindgen_test]
async fn unhandled_navigations_and_assets_reach_the_network_quietly() {
    // Under the error strategy an unhandled request fails: these do not,
    // and nothing is printed about them.
    let worker = setup_worker([user_handler()]);
    let options = quiet(MODE).on_unhandled_request(UnhandledRequest::Error);
    assert_eq!(worker.start_with(options).await, Ok(MODE));
    let console = ConsoleCapture::start();
    let page = frame_text("/tests/fixtures/page.html").await;
    let image = image_size("/tests/fixtures/pixel.svg").await;
    let messages = console.stop();
    worker.stop();
    assert_eq!(page.trim(), "the real page");
    assert_eq!(image, Ok((3, 2)));
    assert!(
        !messages
            .iter()
            .any(|message| message.contains("/tests/fixtures/")),
        "{messages:?}"
    );
}

// Unhandled requests: what is quiet, and what a warning says.
unhandled_request_tests!(MODE);

#[wasm_bindgen_test]
async fn clients_get_the_mocked_responses() {
    let worker = started(MODE, [user_handler()]).await;
    let gloo: Value = gloo_net::http::Request::get("/api/user")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(gloo, json!({ "name": "John" }));
    let response = reqwest::get(format!("{}/api/user", origin()))
        .await
        .unwrap();
    assert_eq!(response.url().path(), "/api/user");
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "name": "John" })
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn passthrough_and_unhandled_requests_reach_the_real_server() {
    check_passthrough_and_unhandled_reach_the_real_server(MODE).await;
}

#[wasm_bindgen_test]
async fn network_errors_reject_with_a_type_error() {
    let worker = started(MODE, [http::get("/api/down", |_| HttpResponse::error())]).await;
    assert!(js_fetch_error("/api/down").await.starts_with("TypeError"));
    worker.stop();
}

#[wasm_bindgen_test]
async fn mocked_redirects_are_followed_by_the_browser() {
    let worker = started(
        MODE,
        [
            http::get("/api/old", |_| {
                HttpResponse::empty()
                    .status(301)
                    .header("location", "/api/new")
            }),
            http::get("/api/new", |_| HttpResponse::text("new")),
        ],
    )
    .await;
    let followed = js_fetch("/api/old", JsValue::UNDEFINED).await;
    assert_eq!(followed.body, "new");
    assert!(followed.redirected);
    assert_eq!(followed.url, format!("{}/api/new", origin()));
    worker.stop();
}

#[wasm_bindgen_test]
async fn a_panicking_resolver_is_a_500() {
    let worker = started(
        MODE,
        [
            http::get("/api/panic", |_| -> HttpResponse {
                panic!("broken in the worker mode")
            }),
            user_handler(),
        ],
    )
    .await;
    let response = js_fetch("/api/panic", JsValue::UNDEFINED).await;
    assert_eq!(
        (response.status, response.status_text.as_str()),
        (500, "Request Handler Error")
    );
    assert!(response.body.contains("broken in the worker mode"));
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 200);
    worker.stop();
}

#[wasm_bindgen_test]
async fn bypass_goes_through_the_worker_to_the_real_server() {
    check_bypass_alters_the_real_response(MODE).await;
}

#[wasm_bindgen_test]
async fn graphql_handlers_work_through_the_worker() {
    check_graphql_handlers(MODE).await;
}

#[wasm_bindgen_test]
async fn a_missing_script_says_how_to_install_it() {
    let worker = setup_worker([]);
    let options = quiet(MODE).service_worker_url("/no-such-folder/mocklib-worker.js");
    let error = worker.start_with(options).await.unwrap_err();
    assert_eq!(
        error,
        StartError::WorkerScriptMissing {
            url: "/no-such-folder/mocklib-worker.js".to_owned()
        }
    );
    assert!(error.to_string().contains("mocklib init <public-dir>"));
    assert_eq!(worker.mode(), None);
}

#[wasm_bindgen_test]
async fn a_script_from_an_older_mocklib_says_to_write_it_again() {
    let worker = setup_worker([]);
    // Without insisting on a mode: falling back would hide the stale file.
    let options = StartOptions::new()
        .service_worker_url("/tests/fixtures/outdated-worker.js")
        .quiet(true);
    let error = worker.start_with(options).await.unwrap_err();
    assert_eq!(
        error,
        StartError::WorkerScriptOutdated {
            url: "/tests/fixtures/outdated-worker.js".to_owned(),
            version: "0.0.1".to_owned(),
        }
    );
    assert!(error.to_string().contains("mocklib init <public-dir>"));
    assert_eq!(worker.mode(), None);
}

#[wasm_bindgen_test]
async fn streamed_chunks_arrive_as_the_stream_yields_them() {
    check_chunks_arrive_as_released(MODE).await;
}

#[wasm_bindgen_test]
async fn cancelling_the_reader_drops_the_stream_and_runs_finalize() {
    check_cancelling_the_reader_drops_the_stream(MODE).await;
}

#[wasm_bindgen_test]
async fn a_failing_stream_rejects_the_read() {
    // Only after the reader has the chunks before the error: Chromium fails
    // the page's body as soon as the worker's stream errors, dropping chunks
    // it did not read yet (with no mocklib code involved, too), so
    // `check_an_error_does_not_overtake_the_chunks_before_it` holds in the
    // fallback mode only. (Nor does the reason cross from the worker: the
    // page sees Chromium's "network error".)
    check_a_failing_stream_rejects_the_read(MODE).await;
}

#[wasm_bindgen_test]
async fn paced_chunks_arrive_in_order() {
    check_paced_chunks_arrive_in_order(MODE).await;
}

#[wasm_bindgen_test]
async fn the_page_sends_only_a_window_of_chunks_ahead_of_the_reader() {
    if is_firefox() {
        // Firefox reads a worker's response to its end whatever the page's
        // reader takes (a worker of plain JavaScript too: 400 of 400 1 MiB
        // chunks), so the page produces it all. When this fails, Firefox
        // holds back: the bound below should hold and the docs change.
        assert_eq!(produced_for_an_idle_reader(MODE).await, UNREAD_CHUNKS);
        return;
    }
    // Chromium itself reads a worker's response ahead of the page's reader,
    // about 56 MiB (measured with a worker of plain JavaScript); the page
    // adds at most mocklib's window of 16 chunks to that.
    check_a_body_is_produced_as_it_is_read(MODE, 100).await;
}

#[wasm_bindgen_test]
async fn stopping_mid_stream_fails_the_body_and_runs_finalize() {
    // The channel to the worker closes: the page cannot send the rest.
    let (feed, reader) = Feed::stopped_mid_stream(MODE).await;
    feed.wait_until_over().await;
    assert!(reader.read().await.is_err());
}

#[wasm_bindgen_test]
async fn an_event_source_gets_event_types_ids_multi_line_data_and_json() {
    let worker = started(MODE, [notifications_handler()]).await;
    let entries = event_source_entries("/api/notifications", &["greeting", "count"], 4).await;
    assert_eq!(
        entries,
        json!([
            { "type": "greeting", "data": "welcome", "lastEventId": "1" },
            { "type": "message", "data": "line one\nline two", "lastEventId": "2" },
            // The last id stays until another one comes.
            { "type": "count", "data": "{\"unread\":3}", "lastEventId": "2" },
            // client.close() ended the stream: the EventSource reconnects.
            { "type": "error", "readyState": 0 },
        ])
    );
    worker.stop();
}

/// What an `EventSource` dispatches when `/api/resumable`-like streams
/// (an event with id 41 and a 10 ms `retry`, then the end) answer it twice,
/// the second time with `data`.
fn reconnected_entries(data: &str) -> Value {
    let event = |data| json!({ "type": "message", "data": data, "lastEventId": "41" });
    json!([
        event("last event id: none"),
        { "type": "error", "readyState": 0 },
        event(data),
    ])
}

/// What the resolver of a reconnecting `EventSource` sees of its
/// `Last-Event-ID`, by browser.
fn reconnection_seen() -> &'static str {
    if is_firefox() {
        "last event id: 41"
    } else {
        "last event id: none"
    }
}

#[wasm_bindgen_test]
async fn a_reconnecting_event_source_is_answered_again_with_its_last_event_id_in_firefox() {
    // Chromium sends an EventSource's `Last-Event-ID` to the network but not
    // to a Service Worker (the next test shows it with no mocklib code), so
    // there the resolver cannot see it; Firefox hands it to the worker. A
    // client that sets it itself is seen in both.
    let worker = started(MODE, [resumable_handler()]).await;
    let entries = event_source_entries("/api/resumable", &[], 3).await;
    assert_eq!(entries, reconnected_entries(reconnection_seen()));
    worker.stop();
    check_last_event_id_reaches_the_resolver(MODE).await;
}

#[wasm_bindgen_test]
async fn only_firefox_hands_an_event_source_last_event_id_to_service_workers() {
    // When this fails, a browser changed: the resolver sees the header or
    // no longer does, and the docs of `mocklib::browser` and `mocklib::sse`
    // should say so.
    use_reference_worker().await;
    let entries = event_source_entries("/reference/resumable", &[], 3).await;
    assert_eq!(entries, reconnected_entries(reconnection_seen()));
}

#[wasm_bindgen_test]
async fn sse_events_reach_a_fetch_reader_until_the_resolver_closes() {
    check_events_reach_a_fetch_reader(MODE).await;
}

#[wasm_bindgen_test]
async fn server_connect_forwards_a_real_endless_stream_to_an_event_source() {
    let origin = event_source_origin().await;
    let worker = forwarding_worker(MODE, &origin).await;
    let url = format!("{origin}/events?stream=event-source");
    let entries = event_source_entries(&url, &["price", "debug"], 2).await;
    assert_eq!(
        entries,
        json!([
            { "type": "price", "data": "{\"symbol\":\"ACME\",\"price\":100}", "lastEventId": "1" },
            { "type": "price", "data": "{\"symbol\":\"ACME\",\"price\":101}", "lastEventId": "2" },
        ])
    );
    // Closing the EventSource closed the real connection too.
    wait_until_real_stream_closed(&origin, "event-source").await;
    worker.stop();
}

#[wasm_bindgen_test]
async fn server_connect_forwards_a_real_endless_stream_as_it_arrives() {
    check_a_real_stream_is_forwarded_as_it_arrives(MODE).await;
}

#[wasm_bindgen_test]
async fn server_connect_forwards_a_real_post_stream_to_its_end() {
    check_a_real_post_stream_is_forwarded_to_its_end(MODE).await;
}

// WebSockets: the page's class is replaced in this mode too.
websocket_tests!(MODE);

#[wasm_bindgen_test]
async fn expectations_and_the_journal_work_through_the_worker() {
    check_verify_and_the_journal(MODE).await;
}
