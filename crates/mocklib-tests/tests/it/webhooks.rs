//! Webhooks (issue 40): after answering, the mock sends a request of its
//! own, built from the request and the answer, to a real receiver on
//! loopback; each one and its outcome in the journal of the request that
//! caused it; a receiver that is down changes nothing of the answer.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use test_support::receiver;

use mocklib::journal::RecordedRequest;
use mocklib::node::{Server, setup_server};
use mocklib::webhook::{Webhook, WebhookOutcome};
use mocklib::{HttpResponse, http};

/// A server whose `POST /charges` answers a charge and sends a webhook to
/// `receiver` after `delay`.
fn payments(receiver: String, delay: Duration) -> Server {
    let server = setup_server([http::post("*/charges", |_| {
        HttpResponse::json(&serde_json::json!({"id": "ch_1"})).status(201)
    })
    .webhook(move |request, answer| {
        let charge: serde_json::Value = answer.json_body().ok()?;
        Some(
            Webhook::post(receiver.clone())
                .json(&serde_json::json!({"type": "charge.succeeded", "charge": charge["id"]}))
                .header("x-caused-by", request.url().path())
                .delay(delay),
        )
    })]);
    server.listen();
    server
}

/// The journal's first entry once its webhook has an outcome.
async fn settled(server: &Server) -> RecordedRequest {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let entry = server.requests().remove(0);
        if entry.webhooks()[0].outcome != WebhookOutcome::Pending {
            return entry;
        }
        assert!(Instant::now() < deadline, "the webhook never settled");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_reaches_a_real_receiver_after_the_answer_and_is_journaled() {
    let (origin, received) = receiver();
    let url = format!("{origin}/hooks");
    let server = payments(url.clone(), Duration::from_millis(200));
    let response = reqwest::Client::new()
        .post(server.url().join("charges").unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    // The answer did not wait for the webhook: still waiting its delay.
    let entry = server.requests().remove(0);
    assert_eq!(entry.webhooks()[0].outcome, WebhookOutcome::Pending);
    assert_eq!(entry.webhooks()[0].url, url);

    let hook = received.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(hook.line, "POST /hooks HTTP/1.1");
    assert!(
        hook.headers
            .contains(&("x-caused-by".into(), "/charges".into()))
    );
    assert!(
        hook.headers
            .contains(&("content-type".into(), "application/json".into()))
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&hook.body).unwrap(),
        serde_json::json!({"type": "charge.succeeded", "charge": "ch_1"})
    );
    let entry = settled(&server).await;
    assert_eq!(
        entry.webhooks()[0].outcome,
        WebhookOutcome::Answered {
            status: 202,
            body: "thanks".into()
        }
    );
    server.verify().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_that_is_down_is_journaled_and_the_answer_is_unaffected() {
    // A port nothing listens on any more.
    let down = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hooks", listener.local_addr().unwrap())
    };
    let server = payments(down, Duration::ZERO);
    let response = reqwest::Client::new()
        .post(server.url().join("charges").unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.text().await.unwrap(), r#"{"id":"ch_1"}"#);
    let entry = settled(&server).await;
    let WebhookOutcome::Failed(why) = &entry.webhooks()[0].outcome else {
        panic!("{:?}", entry.webhooks());
    };
    assert!(!why.is_empty());
    // verify() says so: the flow the test drives did not call back.
    let report = server.verify().unwrap_err();
    assert_eq!(report.failed_webhooks().len(), 1);
    assert!(
        report
            .to_string()
            .contains("webhook POST http://127.0.0.1:")
            && report.to_string().contains("(after POST "),
        "{report}"
    );
    // And a webhook the handler does not build: none, nothing journaled.
    let quiet = setup_server([http::get("*/x", |_| HttpResponse::text("x")).webhook(|_, _| None)]);
    quiet.listen();
    reqwest::get(quiet.url().join("x").unwrap()).await.unwrap();
    assert!(quiet.requests()[0].webhooks().is_empty());
}
