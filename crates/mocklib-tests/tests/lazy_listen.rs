//! `listen()` does nothing before it is needed: with only the in-process
//! middleware in use, no certificate authority is generated, no system roots
//! are loaded and no file is written. Observed through what a user can see:
//! mocklib's log events and the temporary directory.
//!
//! Its own test binary (not a module of tests/it), with one test: it sets
//! the global tracing subscriber, and the CA, the system roots and the
//! listener's runtime it watches being made are per process; any other test
//! in the process would make them first.

#[path = "it/common.rs"]
mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::TestClient;
use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use tracing_subscriber::layer::SubscriberExt;

/// Records the message of every event.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Message<'a>(&'a mut String);
        impl tracing::field::Visit for Message<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0.push_str(&format!("{value:?}"));
                }
            }
        }
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        self.0.lock().unwrap().push(message);
    }
}

/// The CA bundle directories in the temporary directory.
fn bundle_dirs() -> BTreeSet<String> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("mocklib-ca-"))
        .collect()
}

/// The bundle directories there now that were not there `before`. (Not a
/// count: the first bundle a process writes also removes stale ones that
/// ended processes left, an hour old, which earlier test runs may have.)
fn new_bundle_dirs(before: &BTreeSet<String>) -> Vec<String> {
    bundle_dirs().difference(before).cloned().collect()
}

fn mentions(events: &[String], what: &str) -> bool {
    events.iter().any(|event| event.contains(what))
}

const CA: &str = "certificate authority";
const ROOTS: &str = "system root certificates";
const BUNDLE: &str = "CA bundle";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_generates_no_ca_loads_no_roots_and_writes_no_file_until_needed() {
    let recorder = Recorder::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(recorder.clone()))
        .unwrap();
    let before = bundle_dirs();

    let server = setup_server([
        http::get("https://api.example.com/user", |_| {
            HttpResponse::text("John")
        }),
        http::get("/user", |_| HttpResponse::text("Kate")),
    ]);
    let client = TestClient::new(&server);
    assert_eq!(
        client.get("https://api.example.com/user").await,
        (200, "John")
    );
    // Base URL mode needs no TLS either.
    let body = reqwest::get(server.url().join("/user").unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "Kate");
    server.close();

    let events = recorder.take();
    assert!(
        mentions(&events, "listening"),
        "the recorder sees mocklib's events: {events:?}"
    );
    for what in [CA, ROOTS, BUNDLE] {
        assert!(
            !mentions(&events, what),
            "`{what}` before it was needed: {events:?}"
        );
    }
    assert_eq!(
        new_bundle_dirs(&before),
        [] as [String; 0],
        "listen() wrote a file"
    );

    // The control: asking for the environment of a child process does all three.
    server.listen();
    let env = server.env();
    let events = recorder.take();
    for what in [CA, ROOTS, BUNDLE] {
        assert!(
            mentions(&events, what),
            "no `{what}` after env(): {events:?}"
        );
    }
    let written = new_bundle_dirs(&before);
    assert_eq!(written.len(), 1, "env() writes one bundle: {written:?}");
    assert!(
        written[0].starts_with(&format!("mocklib-ca-{}-", std::process::id())),
        "{written:?}"
    );
    assert!(env.iter().any(|(name, _)| name == "SSL_CERT_FILE"));
    server.close();
    assert_eq!(
        new_bundle_dirs(&before),
        [] as [String; 0],
        "close() removes the bundle"
    );
}
