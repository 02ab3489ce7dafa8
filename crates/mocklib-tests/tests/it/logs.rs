//! Every warning reaches the test that caused it, exactly once: also when
//! its request went through the listener (whose threads have no subscriber
//! of their own) and tests run in parallel, each with its own scoped
//! subscriber (issue 27, "logs never lost, never noisy").

use std::io::Write;
use std::sync::{Arc, Mutex};

use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};

/// What a scoped subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// One test's run: its own subscriber on its thread, its own server, one
/// unhandled request through the listener and one in process; each warning
/// in this test's log once, and nothing of the other tests.
async fn warnings_of(name: &str) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_ansi(false)
        .finish();
    let _scoped = tracing::subscriber::set_default(subscriber);

    let server = setup_server([http::get("/known", |_| HttpResponse::text("ok"))]);
    server.listen();
    let through_listener = format!("/missing-{name}-listener");
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(server.url().join(&through_listener).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    let in_process = format!("https://api.example.com/missing-{name}-in-process");
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();
    let _ = client.get(&in_process).send().await;
    server.close();

    let log = captured.text();
    for path in [&through_listener, &in_process] {
        assert_eq!(
            log.matches(path.as_str()).count(),
            1,
            "{name}: the warning for {path} is not in its log exactly once:\n{log}"
        );
    }
    assert_eq!(
        log.matches("intercepted a request without a matching request handler")
            .count(),
        2,
        "{name}: {log}"
    );
    for other in ["alpha", "beta", "gamma", "delta"] {
        if other != name {
            assert!(
                !log.contains(&format!("missing-{other}-")),
                "{name}'s log has {other}'s warning:\n{log}"
            );
        }
    }
}

#[tokio::test]
async fn alpha() {
    warnings_of("alpha").await;
}

#[tokio::test]
async fn beta() {
    warnings_of("beta").await;
}

#[tokio::test]
async fn gamma() {
    warnings_of("gamma").await;
}

#[tokio::test]
async fn delta() {
    warnings_of("delta").await;
}
