//! `webhook:` on handler-file entries (issue 40): templated from the
//! request and the answer, sent to a real receiver on loopback after the
//! answer, and in the journal of the request that caused it.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::common::*;
use test_support::receiver;

/// The journal's webhooks of the first request, once none is pending.
fn settled_webhooks(serve: &Serve) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let journal = get_json(&format!("{}/__mocklib/requests", serve.url()));
        let webhooks = journal[0]["webhooks"].clone();
        if webhooks[0]["outcome"] != "pending" {
            return webhooks;
        }
        assert!(Instant::now() < deadline, "never settled: {journal}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_webhook_entry_sends_a_templated_request_after_the_answer() {
    let (origin, received) = receiver();
    let dir = with_handler_file(&format!(
        r#"
- method: POST
  path: /shops/:shop/charges
  status: 201
  json: {{ id: ch_1 }}
  webhook:
    url: "{origin}/events/{{{{ request.params.shop }}}}"
    headers: {{ x-status: "{{{{ response.status }}}}" }}
    json: {{ charge: "{{{{ response.json.id }}}}", amount: "{{{{ request.json.amount }}}}" }}
    delay_ms: 20
"#
    ));
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    let (status, body) = call(
        None,
        &[
            "-d",
            r#"{"amount": 42}"#,
            &format!("{}/shops/s1/charges", serve.url()),
        ],
    );
    assert_eq!((status, body.as_str()), (201, r#"{"id":"ch_1"}"#));
    let hook = received.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(hook.line, "POST /events/s1 HTTP/1.1");
    let body = hook.body;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        serde_json::json!({"charge": "ch_1", "amount": "42"})
    );
    let webhooks = settled_webhooks(&serve);
    assert_eq!(webhooks[0]["outcome"], "answered", "{webhooks}");
    assert_eq!(webhooks[0]["status"], 202);
    assert_eq!(webhooks[0]["url"], format!("{origin}/events/s1"));
}

#[test]
fn a_receiver_that_is_down_is_journaled_as_failed_and_the_answer_stands() {
    let down = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = with_handler_file(&format!(
        "- path: /ping\n  body: pong\n  webhook: {{ url: \"http://{down}/hook\" }}\n"
    ));
    let serve = Serve::start(dir.path(), &["--handlers", "handlers.yaml"]);
    assert_eq!(
        get(&format!("{}/ping", serve.url())),
        (200, "pong".to_owned())
    );
    let webhooks = settled_webhooks(&serve);
    assert_eq!(webhooks[0]["outcome"], "failed", "{webhooks}");
    assert!(!webhooks[0]["error"].as_str().unwrap().is_empty());
    let (status, body) = get(&format!("{}/__mocklib/verify", serve.url()));
    assert_eq!(status, 422, "{body}");
    let verification: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        verification["failed_webhooks"].as_array().unwrap().len(),
        1,
        "{body}"
    );
}
