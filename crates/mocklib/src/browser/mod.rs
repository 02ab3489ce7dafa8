//! The browser entry point: [`setup_worker`] (MSW: [`setupWorker`][msw]), for
//! Rust apps compiled to `wasm32-unknown-unknown` (Leptos, Yew, Dioxus, plain
//! web-sys).
//!
//! [msw]: https://mswjs.io/docs/api/setup-worker
//!
//! The same handlers as in native tests answer the page's requests, whatever
//! makes them: web-sys `fetch`, gloo-net, reqwest's wasm backend, JavaScript.
//!
//! ```ignore
//! use mocklib::{http, HttpResponse, browser::setup_worker};
//!
//! let worker = setup_worker([
//!     http::get("/api/user", |_| HttpResponse::json(&serde_json::json!({ "name": "John" }))),
//! ]);
//! let mode = worker.start().await?; // Mode::ServiceWorker, or Mode::Fallback
//! ```
//!
//! # Two ways of intercepting
//!
//! - **Service Worker** (preferred): our worker script, served by your app at
//!   `/mocklib-worker.js`, sees every request of the page — `fetch`, XHR,
//!   `<img>`, requests of the page's Web Workers — and asks the page's wasm
//!   module what to answer. Navigations (page loads, frames) and static
//!   assets (what the browser loads for a document — scripts, styles,
//!   images, fonts — and URLs MSW counts as common assets, `.css`, `.js`,
//!   `.json`, `.txt` and the like) are asked about too, so a handler can
//!   answer them; one that no handler answers goes to the network quietly,
//!   with no unhandled-request warning or error (as MSW 3 does; a custom
//!   strategy still sees it). A mocked navigation's streamed body is read
//!   whole before the page it leaves is gone. Put the
//!   script into your public folder with `mocklib init <public-dir>`
//!   (`cargo install mocklib-cli`) or [`write_worker_script`] in a build script;
//!   a missing script is a [`StartError::WorkerScriptMissing`] saying so,
//!   and one left there by an older mocklib a
//!   [`StartError::WorkerScriptOutdated`]. A page loaded past an active
//!   worker (a hard reload, or Firefox's WebDriver refresh) is taken under
//!   its control again. Each request costs a hop to the
//!   worker and back (measured in `docs/BENCHMARKS.md`: about half of MSW's
//!   time); a streamed body's chunks follow its head, a message each.
//! - **Fallback**: `fetch` is patched in the page. Chosen when Service
//!   Workers are unavailable (a `file:` page, an insecure origin) or their
//!   registration fails, or when [`StartOptions::mode`] asks for it. Only
//!   `fetch` is seen, and answered in the page's own task.
//!
//! [`Worker::start`] reports which mode is active. In both, with the `ws`
//! feature, the page's `WebSocket` class is replaced while the worker runs:
//! a Service Worker never sees WebSockets, and MSW's `setupWorker` patches
//! the class in both of its modes too.
//!
//! # What a browser user can count on
//!
//! - Passthrough and unhandled requests reach the real server;
//!   [`HttpResponse::error()`](crate::HttpResponse::error) makes `fetch`
//!   reject with a `TypeError`; mocked redirects are followed as the browser
//!   follows real ones; a mocked response's `url` is the request's.
//! - Relative predicates (`/api/user`) match requests to the page's own origin.
//! - `delay(Delay::Real)` waits a random 100–400 ms.
//! - A panicking resolver answers 500 "Request Handler Error" with a JSON
//!   `{ "name": "Panic", "message" }` body and the page keeps working; each
//!   panic leaks what its call held (a few KiB), so fix the panic rather
//!   than rely on this (why: `docs/DESIGN.md`).
//! - Cookies: a request's cookies come from `document.cookie` when its
//!   credentials mode sends them; a mocked `Set-Cookie` is stored there.
//! - Streamed bodies ([`HttpResponse::stream`](crate::HttpResponse::stream),
//!   `try_stream`, `chunks`) reach the page as the `Response`'s
//!   `ReadableStream`, chunk by chunk as the stream yields them, never
//!   buffered whole. The fallback mode asks the stream for a chunk when the
//!   page reads one; in Service Worker mode the page runs at most 16 chunks
//!   ahead of the worker's reader (Chromium itself reads a worker's response
//!   some 56 MiB ahead of the page; Firefox reads it to its end, so there
//!   the stream is produced as fast as the page's resolver yields it). A
//!   reader that cancels drops the stream, which runs the resolver's
//!   `finalize` (in Service Worker mode in Firefox only when the stream
//!   yields its next chunk: Firefox tells a worker that the page's reader
//!   went away only when it passes on more bytes). Firefox hands `fetch`
//!   the response of a Service Worker only with its first bytes, so there
//!   a streamed body's head arrives with its first chunk. A stream's error makes
//!   `reader.read()` reject with a `TypeError`: in the fallback mode after
//!   every chunk before it, with the error's message; in Service Worker
//!   mode Chromium drops chunks the page has not read yet and says "network
//!   error". [`Worker::stop`] lets bodies still streaming finish in the
//!   fallback mode and fails them in Service Worker mode (its channel to
//!   the worker closes).
//! - Server-sent events ([`sse`](crate::sse) handlers) stream the same way.
//!   The page's `EventSource` is intercepted in Service Worker mode only:
//!   the browser opens its connection itself, not through `fetch`, so the
//!   fetch patch never sees it (it reaches the network). There, read event
//!   streams with `fetch` and `response.body.getReader()`, as LLM clients
//!   do, or with an `EventSource` library built on `fetch`. MSW is alike:
//!   its `sse` handlers see an `EventSource` through its Service Worker,
//!   and the `fetch` and XHR interceptors it falls back to do not.
//! - Chromium does not hand a Service Worker the `Last-Event-ID` an
//!   `EventSource` sends when it reconnects (the header is added on the way
//!   to the network), so [`ResolverArgs::last_event_id`](crate::sse::ResolverArgs::last_event_id)
//!   is `None` for that reconnection in Chromium; Firefox hands it on. A
//!   client that sets the header itself (with `fetch`) is seen in both.
//! - [`bypass`](crate::bypass) and `sse`'s `server.connect()` perform the
//!   real request with the page's own `fetch` (in Service Worker mode marked
//!   so that our worker lets it through), so the real server must allow the
//!   page's origin (CORS) as for any request of the page. `server.connect()`
//!   hands on the real body as it arrives, and the page closing its reader
//!   or `EventSource` closes the real connection.
//! - WebSockets ([`ws`](crate::ws) handlers, feature `ws`): a `new
//!   WebSocket(url, protocols)` of the page — web-sys, gloo-net, plain
//!   JavaScript — gets an object that behaves like the browser's
//!   (`readyState` and its constants, `binaryType`, `send` of text, buffers,
//!   views and `Blob`s, `close(code, reason)` with the browser's checks,
//!   `on*` attributes and `addEventListener`, `protocol`, `url`; no
//!   extensions, `bufferedAmount` 0). A matched socket opens with the
//!   link's sub-protocol and gets the handler's messages and close; the
//!   page's sends and close reach `client.recv()` and `client.closed()`
//!   (`close()` without a code is 1005 on both sides). `server.connect()`
//!   and unhandled sockets (`warn`, `bypass`) use the browser's own class,
//!   so cookies and the handshake are the browser's; an unhandled socket's
//!   `101` reaches `response:bypass`. A network error fails the socket
//!   (`error`, then `close` 1006). A handler that panics closes its socket
//!   with 1011. After [`Worker::stop`] new sockets are the browser's, and
//!   those opened before keep their handlers until they close. GraphQL
//!   subscriptions over WebSocket (`graphql-transport-ws`) are served by
//!   the native listener only; in the page they reach `graphql`
//!   subscription handlers over HTTP (server-sent events).

// `setup_worker` and `Worker` exist only on wasm32; in the docs built for
// other targets, links to them render as plain text.
#![cfg_attr(not(target_arch = "wasm32"), allow(rustdoc::broken_intra_doc_links))]

#[cfg(target_arch = "wasm32")]
mod answer;
#[cfg(target_arch = "wasm32")]
mod convert;
#[cfg(target_arch = "wasm32")]
mod fallback;
#[cfg(target_arch = "wasm32")]
mod glue;
#[cfg(target_arch = "wasm32")]
mod local;
#[cfg(target_arch = "wasm32")]
mod perform;
mod script;
#[cfg(target_arch = "wasm32")]
mod service_worker;
#[cfg(target_arch = "wasm32")]
mod stream;
#[cfg(target_arch = "wasm32")]
mod task;
#[cfg(all(target_arch = "wasm32", feature = "ws"))]
mod websocket;
#[cfg(target_arch = "wasm32")]
mod worker;

pub use script::{WORKER_SCRIPT, WORKER_SCRIPT_NAME, write_worker_script};
#[cfg(target_arch = "wasm32")]
pub use worker::{Worker, setup_worker};

use crate::engine::UnhandledRequest;

/// How a started worker intercepts requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Our Service Worker intercepts every request of the page.
    ServiceWorker,
    /// `fetch` is patched in the page.
    Fallback,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::ServiceWorker => "Service Worker",
            Mode::Fallback => "fetch patch",
        })
    }
}

/// Options of [`Worker::start_with`](worker::Worker::start_with), set
/// with builder methods (as [`ListenOptions`](crate::ListenOptions)); every
/// one has a default.
///
/// ```
/// use mocklib::browser::{Mode, StartOptions};
///
/// let options = StartOptions::new().mode(Mode::Fallback).quiet(true);
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StartOptions {
    pub(crate) service_worker_url: String,
    pub(crate) scope: Option<String>,
    pub(crate) mode: Option<Mode>,
    pub(crate) quiet: bool,
    pub(crate) on_unhandled_request: UnhandledRequest,
    pub(crate) journal_capacity: Option<usize>,
    pub(crate) fallthrough_is_unhandled: bool,
}

impl StartOptions {
    /// The defaults: the Service Worker at `/mocklib-worker.js` when it can
    /// run (else the `fetch` patch), a line per mocked request, warnings for
    /// unhandled requests.
    pub fn new() -> Self {
        StartOptions::default()
    }

    /// Where the page finds the worker script. Default `/mocklib-worker.js`.
    #[doc(alias = "serviceWorker")]
    pub fn service_worker_url(mut self, url: impl Into<String>) -> Self {
        self.service_worker_url = url.into();
        self
    }

    /// The Service Worker's scope. Default: the script's folder.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Insists on one mode: a Service Worker that cannot start is then an
    /// error, not a fallback. Default: the Service Worker when it can run.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Don't print "Mocking enabled" and a line per mocked request.
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// What to do with requests no handler matches. Default: warn.
    #[doc(alias = "onUnhandledRequest")]
    pub fn on_unhandled_request(mut self, strategy: UnhandledRequest) -> Self {
        self.on_unhandled_request = strategy;
        self
    }

    /// How many requests each scope's journal keeps; `0`: none (as
    /// `ListenOptions::journal_capacity`). Default:
    /// [`journal::DEFAULT_CAPACITY`](crate::journal::DEFAULT_CAPACITY).
    pub fn journal_capacity(mut self, requests: usize) -> Self {
        self.journal_capacity = Some(requests);
        self
    }

    /// Handlers that match but return nothing leave the request unhandled
    /// (as `ListenOptions::fallthrough_is_unhandled`).
    pub fn fallthrough_is_unhandled(mut self, yes: bool) -> Self {
        self.fallthrough_is_unhandled = yes;
        self
    }
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            service_worker_url: format!("/{WORKER_SCRIPT_NAME}"),
            scope: None,
            mode: None,
            quiet: false,
            on_unhandled_request: UnhandledRequest::default(),
            journal_capacity: None,
            fallthrough_is_unhandled: false,
        }
    }
}

/// Why [`Worker::start`](worker::Worker::start) could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The worker script URL answered 404.
    #[error(
        "the mocklib Service Worker script was not found at {url} (404). Put it into your app's \
         public folder: run `mocklib init <public-dir>` (cargo install mocklib-cli), or call \
         mocklib::browser::write_worker_script(\"<public-dir>\") from your build script; or start \
         with StartOptions::new().mode(Mode::Fallback) to patch fetch instead"
    )]
    WorkerScriptMissing {
        /// The script URL that was tried.
        url: String,
    },
    /// The worker script is from another mocklib version whose protocol
    /// this page does not speak.
    #[error(
        "the mocklib Service Worker script at {url} is from mocklib {version}, which speaks \
         another protocol than this page; write it again: run `mocklib init <public-dir>`, or \
         call mocklib::browser::write_worker_script(\"<public-dir>\") from your build script"
    )]
    WorkerScriptOutdated {
        /// The script URL.
        url: String,
        /// The mocklib version the script says it is from.
        version: String,
    },
    /// Service Workers cannot run on this page and [`Mode::ServiceWorker`]
    /// was required.
    #[error("Service Workers are unavailable here and were required: {reason}")]
    ServiceWorkerUnavailable {
        /// What the browser said.
        reason: String,
    },
    /// Registering the worker failed and [`Mode::ServiceWorker`] was required.
    #[error("registering the mocklib Service Worker {url} failed: {reason}")]
    ServiceWorkerFailed {
        /// The script URL.
        url: String,
        /// What the browser said.
        reason: String,
    },
    /// `start()` was called while an earlier `start()` was still running.
    #[error("the worker is already starting; await the first start()")]
    AlreadyStarting,
}
