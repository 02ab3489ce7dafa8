//! One event stream: the [`Client`] a resolver sends through, and the
//! body stream that carries what it sends to the front door.
//!
//! The body stream also drives the resolver's future: each time the front
//! door asks for the next chunk, the queued events go first, then the
//! resolver runs until it sends more or waits. No task is spawned, so the
//! core stays runtime-free, and a client that goes away drops the body and
//! with it the resolver: nothing keeps running for nobody.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_util::Stream;

use super::event::{Event, comment};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The resolver's side of one event stream (MSW: `client`): send events,
/// comments, an error, or close it. Clones send into the same stream; the
/// stream ends when the resolver has returned and every clone is dropped, or
/// at [`close`](Self::close) or [`error`](Self::error).
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    /// Counts the live clients: when the last clone drops, the stream can end.
    _sender: Arc<SenderToken>,
}

struct Shared(Mutex<State>);

#[derive(Default)]
struct State {
    queue: VecDeque<Result<Bytes, String>>,
    /// `close()`/`error()` was called: nothing more is sent.
    closed: bool,
    senders_gone: bool,
    /// The body was dropped: the client went away or the answer is over.
    receiver_gone: bool,
    waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item` unless the stream is over, and wakes the body.
    fn push(&self, item: Result<Bytes, String>, close: bool) {
        let mut state = self.lock();
        if state.closed || state.receiver_gone {
            return;
        }
        state.queue.push_back(item);
        state.closed = close;
        wake(state);
    }
}

fn wake(mut state: MutexGuard<'_, State>) {
    let waker = state.waker.take();
    drop(state);
    if let Some(waker) = waker {
        waker.wake();
    }
}

struct SenderToken(Arc<Shared>);

impl Drop for SenderToken {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders_gone = true;
        wake(state);
    }
}

impl Client {
    /// Sends `event`. An invalid event (see [`Event`]) is not sent: the
    /// stream ends with an error saying why, and the error is logged.
    /// Does nothing once the stream is closed.
    ///
    /// ```
    /// use mocklib::sse::{self, Event};
    ///
    /// sse::get("/ticks", |args| {
    ///     args.client.send(Event::data("tick").id("1"));
    ///     args.client.send(Event::json(&serde_json::json!({ "n": 2 })).event("count"));
    /// });
    /// ```
    pub fn send(&self, event: Event) {
        match event.problem() {
            None => self.shared.push(Ok(event.to_bytes()), false),
            Some(problem) => {
                let message = format!("an SSE resolver sent an invalid event: {problem}");
                crate::support::log::error(&message);
                self.shared.push(Err(message), true);
            }
        }
    }

    /// Sends a comment line (`: text`), which clients ignore: a keep-alive.
    pub fn comment(&self, text: &str) {
        self.shared.push(Ok(comment(text)), false);
    }

    /// Ends the stream abruptly, as a server that fails mid-stream does
    /// (MSW: `client.error()`): the client sees a network error, and an
    /// `EventSource` tries to reconnect.
    pub fn error(&self) {
        self.fail("the SSE resolver called client.error()".to_owned());
    }

    /// Ends the stream abruptly with `message`.
    pub(super) fn fail(&self, message: String) {
        self.shared.push(Err(message), true);
    }

    /// Ends the stream after the events sent so far (MSW: `client.close()`).
    pub fn close(&self) {
        let mut state = self.shared.lock();
        state.closed = true;
        wake(state);
    }

    /// Whether the stream is over: closed, failed, or its client went away.
    /// A resolver that sends from a task of its own can stop then.
    pub fn is_closed(&self) -> bool {
        let state = self.shared.lock();
        state.closed || state.receiver_gone
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// The resolver's remaining work, polled by the body.
pub(crate) type Driver = crate::handling::resolver::SessionFuture;

/// A new stream: the client to hand the resolver, and the body stream.
pub(crate) fn open() -> (Client, EventBody) {
    let shared = Arc::new(Shared(Mutex::new(State::default())));
    let client = Client {
        _sender: Arc::new(SenderToken(Arc::clone(&shared))),
        shared: Arc::clone(&shared),
    };
    let body = EventBody {
        shared,
        driver: None,
        flush_before_error: false,
    };
    (client, body)
}

/// The body of an event stream: the queued events, then the resolver's.
pub(crate) struct EventBody {
    shared: Arc<Shared>,
    driver: Option<Driver>,
    /// The last item handed out was data: an error right behind it waits
    /// one poll, so the front door flushes the events sent before the error.
    flush_before_error: bool,
}

impl EventBody {
    /// Hands the body the resolver's future to drive.
    pub(crate) fn driving(mut self, driver: Option<Driver>) -> Self {
        self.driver = driver;
        self
    }

    /// Polls the resolver once; queues an error if it failed or panicked.
    fn poll_driver(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(driver) = self.driver.as_mut() else {
            return Poll::Pending;
        };
        let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| driver.as_mut().poll(cx)))
        {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(outcome)) => outcome,
            Err(panic) => Err(format!(
                "panicked: {}",
                crate::support::log::panic_message(&*panic)
            )),
        };
        // Dropping the future drops its `client`: the stream can end.
        self.driver = None;
        if let Err(problem) = outcome {
            let message = format!("an SSE resolver failed: {problem}");
            crate::support::log::error(&format!("{message}. The event stream ends with an error."));
            self.shared.push(Err(message), true);
        }
        Poll::Ready(())
    }
}

impl Stream for EventBody {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            {
                let mut state = self.shared.lock();
                if state.queue.front().is_some_and(Result::is_err) && self.flush_before_error {
                    drop(state);
                    self.flush_before_error = false;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                if let Some(item) = state.queue.pop_front() {
                    drop(state);
                    self.flush_before_error = item.is_ok();
                    return Poll::Ready(Some(item.map_err(BoxError::from)));
                }
                if state.closed || (state.senders_gone && self.driver.is_none()) {
                    return Poll::Ready(None);
                }
                state.waker = Some(cx.waker().clone());
            }
            if self.poll_driver(cx).is_pending() && self.shared.lock().queue.is_empty() {
                // Woken by a send from elsewhere, by the last client's drop,
                // or by whatever the resolver awaits.
                return Poll::Pending;
            }
        }
    }
}

impl Drop for EventBody {
    fn drop(&mut self) {
        self.shared.lock().receiver_gone = true;
    }
}
