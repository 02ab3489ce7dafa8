//! Life-cycle events: observe every intercepted request.
//!
//! The events and their order follow Mock Service Worker:
//!
//! | Request outcome | Events, in order |
//! |---|---|
//! | mocked | `request:start`, `request:match`, `request:end`, `response:mocked` |
//! | performed as it is (passthrough, or no handler responded) | `request:start`, `request:end`, `response:bypass` |
//! | unhandled | `request:start`, `request:unhandled`, `request:end`, `response:bypass` |
//! | resolver error or panic | `request:start`, `unhandledException`, `response:mocked` (the 500) |
//!
//! `response:bypass` comes once the real response's head has arrived; it
//! carries no body (the body streams to the client). No event is emitted while
//! the server is not listening.
//!
//! ```
//! use mocklib::{events::EventKind, node::setup_server};
//!
//! let server = setup_server([]);
//! let id = server.events().on(EventKind::RequestStart, |event| {
//!     println!("{} {}", event.request().method(), event.request().url());
//! });
//! server.events().remove_listener(id);
//! ```

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use bytes::Bytes;
use http::{HeaderMap, StatusCode};

use crate::handling::resolver::{RequestId, ResolverError};
use crate::message::request::Request;

/// The kinds of life-cycle events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `request:start` — a request was intercepted.
    RequestStart,
    /// `request:match` — a handler answered it with a mocked response.
    RequestMatch,
    /// `request:unhandled` — no handler matched it.
    RequestUnhandled,
    /// `request:end` — its resolution finished.
    RequestEnd,
    /// `response:mocked` — a mocked response was sent.
    ResponseMocked,
    /// `response:bypass` — a real response arrived for it.
    ResponseBypass,
    /// `unhandledException` — a resolver returned an error or panicked.
    UnhandledException,
}

impl EventKind {
    /// The event's name as Mock Service Worker spells it (`request:start`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::RequestStart => "request:start",
            EventKind::RequestMatch => "request:match",
            EventKind::RequestUnhandled => "request:unhandled",
            EventKind::RequestEnd => "request:end",
            EventKind::ResponseMocked => "response:mocked",
            EventKind::ResponseBypass => "response:bypass",
            EventKind::UnhandledException => "unhandledException",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A response as life-cycle events show it.
#[derive(Debug, Clone)]
pub struct ObservedResponse {
    /// The status code.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body of a buffered mocked response; `None` for a real or streamed
    /// one (its chunks are read by the client only).
    pub body: Option<Bytes>,
}

/// One life-cycle event.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LifeCycleEvent {
    /// Which event this is.
    pub kind: EventKind,
    /// The request it concerns.
    pub request: Request,
    /// The request's id (the same one its resolvers saw).
    pub request_id: RequestId,
    /// For `response:mocked` and `response:bypass`: the response.
    pub response: Option<ObservedResponse>,
    /// For `unhandledException`: the error.
    pub error: Option<ResolverError>,
}

impl LifeCycleEvent {
    /// The request it concerns.
    pub fn request(&self) -> &Request {
        &self.request
    }
}

/// Identifies a listener, to remove it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenerId(u64);

type Listener = Arc<dyn Fn(&LifeCycleEvent) + Send + Sync>;

/// A subscription: its id, the kind it wants (`None`: every kind), the callback.
type Subscription = (ListenerId, Option<EventKind>, Listener);

/// Subscribe to and unsubscribe from life-cycle events
/// (MSW: [`server.events`](https://mswjs.io/docs/api/life-cycle-events)).
#[derive(Clone, Default)]
pub struct Events {
    inner: Arc<EventsInner>,
}

#[derive(Default)]
struct EventsInner {
    enabled: AtomicBool,
    /// How many listeners there are: an emit with none returns without
    /// touching the lock (two threads taking it for every request contend
    /// on its cache line).
    subscribed: AtomicUsize,
    next_id: AtomicU64,
    // Copy-on-write: emitting clones one `Arc` and calls listeners without a
    // lock held, so a listener may subscribe or unsubscribe.
    listeners: RwLock<Arc<[Subscription]>>,
}

impl Events {
    /// Calls `listener` for every event of `kind`, on the thread that
    /// handles the request, before the client gets its response. Keep the
    /// returned id to [`remove_listener`](Self::remove_listener) it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use mocklib::{http, events::EventKind, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
    /// // Spy on the mocked responses: which path got which status.
    /// let mocked = Arc::new(Mutex::new(Vec::new()));
    /// let seen = Arc::clone(&mocked);
    /// server.events().on(EventKind::ResponseMocked, move |event| {
    ///     let status = event.response.as_ref().map(|response| response.status.as_u16());
    ///     seen.lock().unwrap().push((event.request().url().path().to_owned(), status));
    /// });
    /// server.listen();
    ///
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(server.middleware())
    ///     .build();
    /// client.get("https://api.example.com/user").send().await?;
    /// assert_eq!(*mocked.lock().unwrap(), [("/user".to_owned(), Some(200))]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn on(
        &self,
        kind: EventKind,
        listener: impl Fn(&LifeCycleEvent) + Send + Sync + 'static,
    ) -> ListenerId {
        self.add(Some(kind), Arc::new(listener))
    }

    /// Calls `listener` for every event.
    pub fn on_any(&self, listener: impl Fn(&LifeCycleEvent) + Send + Sync + 'static) -> ListenerId {
        self.add(None, Arc::new(listener))
    }

    /// Removes one listener; `false` if it was not subscribed.
    #[doc(alias = "removeListener")]
    pub fn remove_listener(&self, id: ListenerId) -> bool {
        let mut listeners = self
            .inner
            .listeners
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let before = listeners.len();
        *listeners = listeners
            .iter()
            .filter(|(i, ..)| *i != id)
            .cloned()
            .collect();
        self.inner
            .subscribed
            .store(listeners.len(), Ordering::SeqCst);
        listeners.len() != before
    }

    /// Removes every listener.
    #[doc(alias = "removeAllListeners")]
    pub fn remove_all_listeners(&self) {
        let mut listeners = self
            .inner
            .listeners
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *listeners = Arc::new([]);
        self.inner.subscribed.store(0, Ordering::SeqCst);
    }

    fn add(&self, kind: Option<EventKind>, listener: Listener) -> ListenerId {
        let id = ListenerId(self.inner.next_id.fetch_add(1, Ordering::Relaxed));
        let mut listeners = self
            .inner
            .listeners
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *listeners = listeners
            .iter()
            .cloned()
            .chain([(id, kind, listener)])
            .collect();
        self.inner
            .subscribed
            .store(listeners.len(), Ordering::SeqCst);
        id
    }

    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.inner.enabled.store(enabled, Ordering::SeqCst);
    }

    /// Emits an event; `event` is built only if someone listens.
    #[inline] // a request emits four: with no listener, two loads each, not a call
    pub(crate) fn emit(&self, kind: EventKind, event: impl FnOnce() -> LifeCycleEvent) {
        if !self.inner.enabled.load(Ordering::SeqCst)
            || self.inner.subscribed.load(Ordering::SeqCst) == 0
        {
            return;
        }
        self.emit_to_listeners(kind, event);
    }

    #[inline(never)]
    fn emit_to_listeners(&self, kind: EventKind, event: impl FnOnce() -> LifeCycleEvent) {
        let listeners = Arc::clone(
            &self
                .inner
                .listeners
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut interested = listeners
            .iter()
            .filter(|(_, k, _)| k.is_none_or(|k| k == kind))
            .peekable();
        if interested.peek().is_none() {
            return;
        }
        let event = event();
        for (_, _, listener) in interested {
            // A panicking listener must not take the request down with it.
            if std::panic::catch_unwind(AssertUnwindSafe(|| listener(&event))).is_err() {
                crate::support::log::error(&format!(
                    "a listener of {kind} panicked; the request goes on"
                ));
            }
        }
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.inner.listeners.read().map_or(0, |l| l.len());
        f.debug_struct("Events").field("listeners", &count).finish()
    }
}
