//! `delay()` inside resolvers, through a real client.
//!
//! The requests go through the in-process middleware on a current-thread
//! runtime with paused time: `delay()` waits on the runtime's timer, so the
//! clock jumps ahead by exactly the delay and the assertions are exact
//! virtual durations, whatever the machine's speed.

use std::time::Duration;

use crate::common::serve;
use mocklib::{HttpResponse, delay, http, response::Delay};
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn an_exact_delay_holds_the_response_exactly_that_long() {
    let client = serve([http::get("/slow", |_| async {
        delay(Duration::from_millis(120)).await;
        HttpResponse::text("finally")
    })]);
    let started = Instant::now();
    assert_eq!(client.get("http://api.test/slow").await, (200, "finally"));
    assert_eq!(started.elapsed(), Duration::from_millis(120));
}

#[tokio::test(start_paused = true)]
async fn a_realistic_delay_is_five_milliseconds_natively() {
    let client = serve([http::get("/real", |_| async {
        delay(Delay::Real).await;
        HttpResponse::text("ok")
    })]);
    let started = Instant::now();
    assert_eq!(client.get("http://api.test/real").await, (200, "ok"));
    assert_eq!(started.elapsed(), Duration::from_millis(5));
}

#[tokio::test(start_paused = true)]
async fn an_infinite_delay_never_answers() {
    let client = serve([http::get("/never", |_| async {
        delay(Delay::Infinite).await;
        HttpResponse::text("unreachable")
    })]);
    let started = Instant::now();
    // The client gives up after a (virtual) day; the request is still pending then.
    let day = Duration::from_secs(24 * 60 * 60);
    let outcome = tokio::time::timeout(day, client.get("http://api.test/never")).await;
    assert!(outcome.is_err(), "the request completed: {outcome:?}");
    assert_eq!(started.elapsed(), day);
}

#[test]
fn delay_works_without_a_tokio_runtime() {
    // No runtime, so the thread timer and the wall clock.
    let started = std::time::Instant::now();
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
