//! The `sse` namespace through real clients: an event-stream parser
//! (`eventsource-stream`) over reqwest, in process and over the listener,
//! curl for the raw framing, and a real upstream event source (axum) for
//! `server.connect()`.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use mocklib::node::{Server, setup_server};
use mocklib::sse::{self, Event};
use mocklib::{HttpResponse, delay, http};
use serde_json::json;

/// Long enough that only a hang (a bug) ever reaches it.
const HANG: Duration = Duration::from_secs(20);

/// What a client saw of one event: (type, id, data).
type Seen = (String, String, String);

/// Reads every event of `response` with a real event-stream parser, until
/// the stream ends (`Ok`) or breaks (`Err` with the events before).
async fn events_of(response: reqwest::Response) -> Result<Vec<Seen>, Vec<Seen>> {
    let mut stream = response.bytes_stream().eventsource();
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout(HANG, stream.next())
            .await
            .expect("no hang")
        {
            None => return Ok(seen),
            Some(Ok(event)) => seen.push((event.event, event.id, event.data)),
            Some(Err(_)) => return Err(seen),
        }
    }
}

fn seen(event: &str, id: &str, data: &str) -> Seen {
    (event.to_owned(), id.to_owned(), data.to_owned())
}

fn notifications() -> Server {
    setup_server([sse::get(
        "https://api.test/notifications",
        |args| async move {
            args.client
                .send(Event::data("welcome").event("greeting").id("1"));
            delay(Duration::from_millis(5)).await;
            args.client.send(Event::data("two\nlines").id("2"));
            args.client.comment("keep-alive");
            args.client
                .send(Event::json(&json!({ "unread": 3 })).event("count"));
        },
    )])
}

fn expected_notifications() -> Vec<Seen> {
    vec![
        seen("greeting", "1", "welcome"),
        seen("message", "2", "two\nlines"),
        // The parser keeps the last id for events that carry none.
        seen("count", "2", r#"{"unread":3}"#),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_an_event_stream_client_in_process() {
    let server = notifications();
    server.listen();
    let response = common::client(&server)
        .get("https://api.test/notifications")
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    assert_eq!(events_of(response).await, Ok(expected_notifications()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_an_event_stream_client_through_the_proxy_and_tls() {
    let server = notifications();
    server.listen();
    let response = server
        .reqwest_client()
        .get("https://api.test/notifications")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(events_of(response).await, Ok(expected_notifications()));
}

#[test]
fn a_post_stream_has_the_exact_framing_llm_clients_parse() {
    let server = setup_server([sse::post("/v1/chat/completions", |args| async move {
        let prompt: serde_json::Value = args.request.json().unwrap();
        assert_eq!(prompt["stream"], true);
        for token in ["Hel", "lo"] {
            args.client.send(Event::json(&json!({ "delta": token })));
            delay(Duration::from_millis(2)).await;
        }
        args.client.comment("done soon");
        args.client.send(Event::data("[DONE]"));
    })]);
    server.listen();
    let url = server.url().join("/v1/chat/completions").unwrap();
    let printed = test_support::curl(&[
        "--no-buffer",
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "--data",
        r#"{"stream":true}"#,
        url.as_str(),
    ]);
    assert_eq!(
        printed,
        "data: {\"delta\":\"Hel\"}\n\ndata: {\"delta\":\"lo\"}\n\n: done soon\n\ndata: [DONE]\n\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolver_sees_last_event_id_params_and_its_previous_calls() {
    let server = setup_server([sse::get("https://api.test/feeds/:feed", |args| {
        let resumed = args.last_event_id().unwrap_or("none").to_owned();
        let text = format!("{} from {resumed}", &args.params["feed"]);
        args.client.send(
            Event::data(text).id(mocklib::resolver::CallHistory::previous_calls(&args).to_string()),
        );
    })]);
    server.listen();
    let client = common::client(&server);
    let first = client
        .get("https://api.test/feeds/news")
        .send()
        .await
        .unwrap();
    assert_eq!(
        events_of(first).await,
        Ok(vec![seen("message", "0", "news from none")])
    );
    let resumed = client
        .get("https://api.test/feeds/news")
        .header("last-event-id", "41")
        .send()
        .await
        .unwrap();
    assert_eq!(
        events_of(resumed).await,
        Ok(vec![seen("message", "1", "news from 41")])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_failures_and_panics_break_the_stream_and_the_server_keeps_serving() {
    let server = setup_server([
        sse::get("/error", |args| {
            args.client.send(Event::data("before"));
            args.client.error();
            args.client.send(Event::data("never sent"));
        }),
        sse::get("/fails", |args| async move {
            args.client.send(Event::data("before"));
            delay(Duration::from_millis(1)).await;
            Err::<(), _>("the feed is gone")
        }),
        sse::get("/panics", |args| async move {
            args.client.send(Event::data("before"));
            delay(Duration::from_millis(1)).await;
            if args.request.url().path() == "/panics" {
                panic!("resolver bug");
            }
        }),
        sse::get("/invalid", |args| {
            args.client.send(Event::data("before"));
            args.client.send(Event::data("x").event("two\nlines"));
        }),
        http::get("/ok", |_| HttpResponse::text("still serving")),
    ]);
    server.listen();
    let plain = reqwest::Client::new();
    for path in ["/error", "/fails", "/panics", "/invalid"] {
        let in_process = common::client(&server).get(format!("https://api.test{path}"));
        let over_the_listener = plain.get(server.url().join(path).unwrap());
        let responses = [
            in_process.send().await.unwrap(),
            over_the_listener.send().await.unwrap(),
        ];
        for response in responses {
            let url = response.url().clone();
            assert_eq!(response.status(), 200, "{url}");
            assert_eq!(
                events_of(response).await,
                Err(vec![seen("message", "", "before")]),
                "{url}"
            );
        }
    }
    let ok = common::client(&server)
        .get("https://api.test/ok")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.text().await.unwrap(), "still serving");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_stops_the_resolver() {
    let (signal, on_drop) = test_support::DropSignal::new();
    let signal = Arc::new(Mutex::new(Some(signal)));
    let server = setup_server([sse::get("/ticks", move |args| {
        let signal = signal.lock().unwrap().take();
        async move {
            let _signal = signal;
            for n in 0.. {
                args.client.send(Event::data(format!("tick {n}")));
                delay(Duration::from_millis(5)).await;
            }
        }
    })]);
    server.listen();
    let client = reqwest::Client::new();
    let response = client
        .get(server.url().join("/ticks").unwrap())
        .send()
        .await
        .unwrap();
    let mut events = response.bytes_stream().eventsource();
    let first = tokio::time::timeout(HANG, events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.data, "tick 0");
    drop((events, client));
    tokio::time::timeout(HANG, on_drop)
        .await
        .expect("the resolver was dropped with its stream")
        .unwrap();
}

/// A real event source on loopback: three events, one of type `debug`.
async fn real_event_source() -> std::net::SocketAddr {
    use axum::response::sse::{Event as AxumEvent, Sse};
    let app = axum::Router::new().route(
        "/prices",
        axum::routing::get(|| async {
            let events = [
                AxumEvent::default().data("100").id("a"),
                AxumEvent::default().event("debug").data("internal"),
                AxumEvent::default().data("101").id("b"),
            ];
            Sse::new(futures_util::stream::iter(
                events.map(Ok::<_, std::convert::Infallible>),
            ))
        }),
    );
    test_support::spawn_upstream(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_forwards_the_real_events_altered_or_dropped() {
    let upstream = real_event_source().await;
    let server = setup_server([sse::get(
        format!("http://{upstream}/prices"),
        |args| async move {
            let mut real = args.server.connect().await?;
            while let Some(event) = real.next().await {
                let event = event?;
                if event.event_type() == Some("debug") {
                    continue;
                }
                let price = event.data_text().unwrap_or_default();
                args.client.send(
                    Event::data(format!("{price} (mocked)")).id(event.event_id().unwrap_or("")),
                );
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        },
    )]);
    server.listen();
    let response = server
        .reqwest_client()
        .get(format!("http://{upstream}/prices"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        events_of(response).await,
        Ok(vec![
            seen("message", "a", "100 (mocked)"),
            seen("message", "b", "101 (mocked)")
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_to_passes_every_real_event_unchanged() {
    let upstream = real_event_source().await;
    let server = setup_server([sse::get(
        format!("http://{upstream}/prices"),
        |args| async move {
            args.client.send(Event::data("from the mock first"));
            args.server
                .connect()
                .await?
                .forward_to(&args.client)
                .await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        },
    )]);
    server.listen();
    let response = common::client(&server)
        .get(format!("http://{upstream}/prices"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        events_of(response).await,
        Ok(vec![
            seen("message", "", "from the mock first"),
            seen("message", "a", "100"),
            seen("debug", "a", "internal"),
            seen("message", "b", "101"),
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_handlers_list_with_their_namespace() {
    let server = setup_server([
        sse::get("/events", |_| ()),
        sse::post("/v1/chat", |_| ()),
        http::get("/plain", |_| HttpResponse::text("x")),
    ]);
    let headers: Vec<String> = server
        .list_handlers()
        .iter()
        .map(|h| h.header().to_owned())
        .collect();
    assert_eq!(
        headers,
        ["sse GET /events", "sse POST /v1/chat", "GET /plain"]
    );
}
