//! `delay()` inside resolvers, through a real client.

mod common;

use std::time::{Duration, Instant};

use mocklib::node::setup_server;
use mocklib::{Delay, HttpResponse, delay, http};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_delay_holds_the_response_at_least_that_long() {
    let server = setup_server([http::get("/slow", |_| async {
        delay(Duration::from_millis(120)).await;
        HttpResponse::text("finally")
    })]);
    server.listen();
    let started = Instant::now();
    let response = common::client(&server)
        .get("http://api.test/slow")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "finally");
    // A lower bound only: the delay happened. Speed is measured in benches/.
    assert!(started.elapsed() >= Duration::from_millis(120));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_realistic_delay_is_five_milliseconds_natively() {
    let server = setup_server([http::get("/real", |_| async {
        delay(Delay::Real).await;
        HttpResponse::text("ok")
    })]);
    server.listen();
    let started = Instant::now();
    let response = common::client(&server)
        .get("http://api.test/real")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "ok");
    assert!(started.elapsed() >= Duration::from_millis(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_delay_never_answers() {
    let server = setup_server([http::get("/never", |_| async {
        delay(Delay::Infinite).await;
        HttpResponse::text("unreachable")
    })]);
    server.listen();
    let request = common::client(&server).get("http://api.test/never").send();
    // The client gives up; the request is still pending then.
    let outcome = tokio::time::timeout(Duration::from_millis(200), request).await;
    assert!(outcome.is_err(), "the request completed: {outcome:?}");
}

#[test]
fn delay_works_without_a_tokio_runtime() {
    let started = Instant::now();
    futures_executor_block_on(delay(Duration::from_millis(30)));
    assert!(started.elapsed() >= Duration::from_millis(30));
}

/// A minimal executor: the thread-timer path must wake the task by itself.
fn futures_executor_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}
