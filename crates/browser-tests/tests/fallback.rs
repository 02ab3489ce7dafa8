//! The `fetch` patch (fallback mode) in headless Chromium, with the clients
//! Rust front-end apps use: web-sys, gloo-net, reqwest's wasm backend, and
//! plain JavaScript `fetch`.
#![cfg(target_arch = "wasm32")]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mocklib::browser::{Mode, setup_worker};
use mocklib::{HttpResponse, UnhandledRequest, delay, events::EventKind, http, response::Delay};
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const MODE: Mode = Mode::Fallback;

async fn web_sys_fetch(url: &str) -> Result<web_sys::Response, JsValue> {
    let window = web_sys::window().unwrap();
    let response = JsFuture::from(window.fetch_with_str(url)).await?;
    Ok(response.unchecked_into())
}

async fn text_of(response: &web_sys::Response) -> String {
    JsFuture::from(response.text().unwrap())
        .await
        .unwrap()
        .as_string()
        .unwrap()
}

#[wasm_bindgen_test]
async fn web_sys_fetch_gets_the_mocked_response_with_its_url() {
    let worker = started(MODE, [user_handler()]).await;
    let response = web_sys_fetch("/api/user").await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.url(), format!("{}/api/user", origin()));
    assert_eq!(
        response.headers().get("content-type").unwrap().as_deref(),
        Some("application/json")
    );
    assert_eq!(text_of(&response).await, r#"{"name":"John"}"#);
    worker.stop();
}

#[wasm_bindgen_test]
async fn gloo_net_gets_the_mocked_json() {
    let worker = started(MODE, [user_handler()]).await;
    let response = gloo_net::http::Request::get("/api/user")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, json!({ "name": "John" }));
    worker.stop();
}

#[wasm_bindgen_test]
async fn reqwest_wasm_gets_and_posts() {
    let worker = started(
        MODE,
        [
            user_handler(),
            http::post("/api/echo", |args| async move {
                let body: Value = args.request.json()?;
                Ok::<_, mocklib::request::BodyError>(
                    HttpResponse::json(&json!({ "echo": body })).status(201),
                )
            }),
        ],
    )
    .await;
    let client = reqwest::Client::new();
    let user: Value = client
        .get(format!("{}/api/user", origin()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(user, json!({ "name": "John" }));
    let response = client
        .post(format!("{}/api/echo", origin()))
        .json(&json!({ "n": 1 }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.url().path(), "/api/echo");
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "echo": { "n": 1 } })
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn plain_javascript_fetch_is_mocked() {
    let worker = started(MODE, [user_handler()]).await;
    let response = js_fetch("/api/user", JsValue::UNDEFINED).await;
    assert_eq!(
        (response.status, response.body.as_str()),
        (200, r#"{"name":"John"}"#)
    );
    assert_eq!(response.status_text, "OK");
    worker.stop();
}

#[wasm_bindgen_test]
async fn passthrough_and_unhandled_requests_reach_the_real_server() {
    check_passthrough_and_unhandled_reach_the_real_server(MODE).await;
}

#[wasm_bindgen_test]
async fn network_errors_reject_with_a_type_error() {
    let worker = setup_worker([http::get("/api/down", |_| HttpResponse::error())]);
    let options = quiet(MODE).on_unhandled_request(UnhandledRequest::Error);
    worker.start_with(options).await.unwrap();
    assert!(js_fetch_error("/api/down").await.starts_with("TypeError"));
    // The "error" strategy fails unhandled requests the same way.
    assert!(
        js_fetch_error("/api/nothing-here")
            .await
            .starts_with("TypeError")
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn mocked_redirects_are_followed_as_the_browser_would() {
    let worker = started(
        MODE,
        [
            http::get("/api/old", |_| {
                HttpResponse::empty()
                    .status(302)
                    .header("location", "/api/new")
            }),
            http::post("/api/form", |_| {
                HttpResponse::empty()
                    .status(303)
                    .header("location", "/api/new")
            }),
            http::get("/api/new", |args| {
                HttpResponse::text(format!("new via {}", args.request.method()))
            }),
            http::get("/api/loop", |_| {
                HttpResponse::empty()
                    .status(307)
                    .header("location", "/api/loop")
            }),
        ],
    )
    .await;
    let followed = js_fetch("/api/old", JsValue::UNDEFINED).await;
    assert_eq!(followed.body, "new via GET");
    assert!(followed.redirected);
    assert_eq!(followed.url, format!("{}/api/new", origin()));
    // 303 turns a POST into a GET.
    let init = js_sys::Object::new();
    js_sys::Reflect::set(&init, &"method".into(), &"POST".into()).unwrap();
    js_sys::Reflect::set(&init, &"body".into(), &"a=1".into()).unwrap();
    assert_eq!(js_fetch("/api/form", init.into()).await.body, "new via GET");
    // Endless redirects fail like the browser's own (20 at most).
    assert!(js_fetch_error("/api/loop").await.starts_with("TypeError"));
    worker.stop();
}

#[wasm_bindgen_test]
async fn redirect_modes_manual_and_error_are_honoured() {
    let worker = started(
        MODE,
        [
            http::get("/api/moved", |_| {
                HttpResponse::text("moved")
                    .status(302)
                    .header("location", "/api/new")
            }),
            http::get("/api/new", |_| HttpResponse::text("new")),
        ],
    )
    .await;
    let with_mode = |mode: &str| {
        let init = js_sys::Object::new();
        js_sys::Reflect::set(&init, &"redirect".into(), &mode.into()).unwrap();
        JsValue::from(init)
    };
    // "manual": the redirect response itself, not followed.
    let manual = js_fetch("/api/moved", with_mode("manual")).await;
    assert_eq!((manual.status, manual.body.as_str()), (302, "moved"));
    assert!(!manual.redirected);
    // "error": fetch rejects with a TypeError.
    let error = JsFuture::from(
        web_sys::window()
            .unwrap()
            .fetch_with_str_and_init("/api/moved", with_mode("error").unchecked_ref()),
    )
    .await
    .unwrap_err();
    assert!(error.is_instance_of::<js_sys::TypeError>(), "{error:?}");
    worker.stop();
}

#[wasm_bindgen_test]
async fn a_panicking_resolver_is_a_500_and_the_page_keeps_working() {
    let worker = started(
        MODE,
        [
            http::get("/api/panic", |_| -> HttpResponse {
                panic!("the resolver broke")
            }),
            http::get("/api/panic-later", |_| async {
                delay(1).await;
                panic!("broke after awaiting");
                #[allow(unreachable_code)]
                HttpResponse::empty()
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
    let body: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(
        body,
        json!({ "name": "Panic", "message": "the resolver broke" })
    );
    let later = js_fetch("/api/panic-later", JsValue::UNDEFINED).await;
    assert_eq!(later.status, 500);
    assert!(later.body.contains("broke after awaiting"));
    // Many panics in a row neither exhaust the wasm stack nor stop serving.
    // Many panics in a row: each is answered and the page keeps serving.
    // (A trap leaks the wasm shadow stack its frames held; see the
    // `browser` module docs for the budget.)
    for _ in 0..60 {
        assert_eq!(js_fetch("/api/panic", JsValue::UNDEFINED).await.status, 500);
    }
    assert_eq!(
        js_fetch("/api/user", JsValue::UNDEFINED).await.body,
        r#"{"name":"John"}"#
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn realistic_delay_waits_100_to_400_ms() {
    let worker = started(
        MODE,
        [http::get("/api/slow", |_| async {
            delay(Delay::Real).await;
            HttpResponse::text("slow")
        })],
    )
    .await;
    for _ in 0..3 {
        let start = now_ms();
        assert_eq!(js_fetch("/api/slow", JsValue::UNDEFINED).await.body, "slow");
        let elapsed = now_ms() - start;
        assert!((99.0..1000.0).contains(&elapsed), "took {elapsed} ms");
    }
    worker.stop();
}

#[wasm_bindgen_test]
async fn start_and_stop_twice_keep_one_activation() {
    let worker = started(MODE, [user_handler()]).await;
    // A second start keeps the first activation (and warns).
    assert_eq!(worker.start_with(quiet(MODE)).await, Ok(Mode::Fallback));
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 200);
    worker.stop();
    assert_eq!(worker.mode(), None);
    // After stop, fetch is the browser's own again: the runner has no /api/user.
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 404);
    worker.stop(); // warns, nothing else
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 404);
    // And it starts again with the same handlers.
    assert_eq!(worker.start_with(quiet(MODE)).await, Ok(Mode::Fallback));
    assert_eq!(js_fetch("/api/user", JsValue::UNDEFINED).await.status, 200);
    worker.stop();
}

#[wasm_bindgen_test]
async fn runtime_handlers_reset_restore_and_list() {
    let worker = started(MODE, [user_handler()]).await;
    worker.use_handlers([http::get("/api/user", |_| HttpResponse::text("override")).once()]);
    let headers: Vec<String> = worker
        .list_handlers()
        .iter()
        .map(|h| h.to_string())
        .collect();
    assert_eq!(headers.len(), 2);
    assert_eq!(
        js_fetch("/api/user", JsValue::UNDEFINED).await.body,
        "override"
    );
    assert_eq!(
        js_fetch("/api/user", JsValue::UNDEFINED).await.body,
        r#"{"name":"John"}"#
    );
    worker.restore_handlers();
    assert_eq!(
        js_fetch("/api/user", JsValue::UNDEFINED).await.body,
        "override"
    );
    worker.reset_handlers();
    assert_eq!(worker.list_handlers().len(), 1);
    worker.reset_handlers_to([http::get("/api/user", |_| HttpResponse::text("replaced"))]);
    assert_eq!(
        js_fetch("/api/user", JsValue::UNDEFINED).await.body,
        "replaced"
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn life_cycle_events_are_emitted() {
    let worker = started(MODE, [user_handler()]).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    worker
        .events()
        .on_any(move |event| log.lock().unwrap().push(event.kind));
    js_fetch("/api/user", JsValue::UNDEFINED).await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            EventKind::RequestStart,
            EventKind::RequestMatch,
            EventKind::RequestEnd,
            EventKind::ResponseMocked
        ]
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn bypass_performs_the_real_request_and_alters_it() {
    check_bypass_alters_the_real_response(MODE).await;
}

#[wasm_bindgen_test]
async fn cookies_come_from_and_go_to_document_cookie() {
    set_cookie("session=abc123");
    let worker = started(
        MODE,
        [
            http::get("/api/me", |args| match args.cookies.get("session") {
                Some(session) => HttpResponse::text(format!("session {session}")),
                None => HttpResponse::empty().status(401),
            }),
            http::post("/api/login", |_| {
                HttpResponse::empty().cookie("token", "t-1")
            }),
        ],
    )
    .await;
    assert_eq!(
        js_fetch("/api/me", JsValue::UNDEFINED).await.body,
        "session abc123"
    );
    let init = js_sys::Object::new();
    js_sys::Reflect::set(&init, &"method".into(), &"POST".into()).unwrap();
    js_fetch("/api/login", init.into()).await;
    assert!(get_cookies().contains("token=t-1"), "{}", get_cookies());
    worker.stop();
}

#[wasm_bindgen_test]
async fn graphql_handlers_work_in_the_browser() {
    check_graphql_handlers(MODE).await;
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
async fn a_failing_stream_rejects_the_read_with_its_error() {
    let error = check_a_failing_stream_rejects_the_read(MODE).await;
    // The page's own task reads the stream: the reason reaches the reader.
    let message = String::from(error.unchecked_into::<js_sys::Error>().message());
    assert!(message.contains("upstream gone"), "{message}");
    check_an_error_does_not_overtake_the_chunks_before_it(MODE).await;
}

#[wasm_bindgen_test]
async fn paced_chunks_arrive_one_by_one_in_order() {
    let chunks = check_paced_chunks_arrive_in_order(MODE).await;
    // Nothing between the stream and the reader merges chunks here.
    assert_eq!(chunks, ["first ", "second ", "third"]);
}

#[wasm_bindgen_test]
async fn the_stream_is_polled_only_as_the_reader_reads() {
    // The chunk read, and none ahead: a chunk is pulled when read.
    check_a_body_is_produced_as_it_is_read(MODE, 1).await;
}

#[wasm_bindgen_test]
async fn a_body_streaming_when_the_worker_stops_streams_to_its_end() {
    // Only new requests are no longer mocked; this response is the page's.
    let (feed, reader) = Feed::stopped_mid_stream(MODE).await;
    feed.release(Ok("after"));
    reader.read_text("after").await;
    feed.sender.close_channel();
    assert_eq!(reader.read().await.unwrap(), None);
    feed.wait_until_over().await;
}

#[wasm_bindgen_test]
async fn sse_events_reach_a_fetch_reader_until_the_resolver_closes() {
    check_events_reach_a_fetch_reader(MODE).await;
}

#[wasm_bindgen_test]
async fn a_last_event_id_sent_with_fetch_reaches_the_resolver() {
    check_last_event_id_reaches_the_resolver(MODE).await;
}

#[wasm_bindgen_test]
async fn an_event_source_is_not_intercepted_by_the_fetch_patch() {
    // The browser opens an EventSource's connection itself, not through
    // `fetch`: it reaches the runner, which has no such file (a 404 fails
    // the EventSource for good). EventSource needs Service Worker mode.
    let worker = started(MODE, [notifications_handler()]).await;
    let entries = event_source_entries("/api/notifications", &["greeting", "count"], 1).await;
    assert_eq!(entries, json!([{ "type": "error", "readyState": 2 }]));
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
async fn a_panicking_websocket_handler_closes_the_socket_with_1011() {
    let panics = mocklib::ws::link("/ws/panics").on_connection(|connection| async move {
        if connection.client.recv().await.is_some() {
            panic!("the handler broke");
        }
    });
    let worker = started(MODE, [panics]).await;
    let mut page = PageSocket::open("/ws/panics", &[]);
    assert_eq!(page.next().await, SocketEvent::Open);
    page.send("anything");
    assert_eq!(
        page.next().await,
        SocketEvent::close(1011, "mocklib: the handler failed")
    );
    worker.stop();
}

#[wasm_bindgen_test]
async fn two_workers_at_once_pass_through_to_the_real_fetch() {
    // The first worker's patch is still in place when the second starts (a
    // test that failed before `stop()` leaves one): the second's "original"
    // `fetch` is that patch, and a passthrough must not loop through it.
    let first = started(MODE, [http::get("/first", |_| HttpResponse::text("first"))]).await;
    check_passthrough_and_unhandled_reach_the_real_server(MODE).await;
    let passed = js_fetch(REAL_FILE, JsValue::UNDEFINED).await;
    assert_eq!((passed.status, passed.body.as_str()), (200, REAL_BODY));
    let mocked = js_fetch("/first", JsValue::UNDEFINED).await;
    assert_eq!(mocked.body, "first");
    first.stop();
}

#[wasm_bindgen_test]
async fn the_page_verifies_expectations_and_keeps_a_journal() {
    check_verify_and_the_journal(MODE).await;
}

// Unhandled requests: what is quiet, and what a warning says.
unhandled_request_tests!(MODE);
