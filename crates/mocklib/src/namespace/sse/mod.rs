//! The `sse` namespace: mock server-sent event streams (MSW:
//! [`sse`](https://mswjs.io/docs/api/sse)).
//!
//! `sse::get` (MSW: `sse(...)`) and `sse::post` handlers answer a matching request with a `text/event-stream`
//! response that stays open while its resolver sends events through
//! `args.client`. The resolver may be sync or async; the stream ends when it
//! has returned and no clone of `client` is left, or when it calls
//! `client.close()` (gracefully) or `client.error()` (abruptly):
//!
//! ```
//! use std::time::Duration;
//! use mocklib::{delay, sse::{self, Event}};
//!
//! let handlers = [
//!     // The way EventSource clients connect: GET.
//!     sse::get("https://api.example.com/notifications", |args| async move {
//!         args.client.send(Event::data("welcome").event("greeting").id("1"));
//!         delay(Duration::from_millis(100)).await;
//!         args.client.send(Event::json(&serde_json::json!({ "unread": 3 })));
//!     }),
//!     // The way LLM APIs stream: POST, one event per token, then [DONE].
//!     sse::post("https://api.example.com/v1/chat/completions", |args| async move {
//!         for token in ["Hel", "lo"] {
//!             args.client.send(Event::json(&serde_json::json!({ "delta": token })));
//!             delay(Duration::from_millis(20)).await;
//!         }
//!         args.client.send(Event::data("[DONE]"));
//!     }),
//! ];
//! # let _ = handlers;
//! ```
//!
//! `args.server.connect()` opens the real event stream instead; its events
//! can be forwarded as they are, or altered and dropped on the way:
//!
//! ```
//! use futures_util::StreamExt;
//! use mocklib::sse::{self, Event};
//!
//! sse::get("https://api.example.com/prices", |args| async move {
//!     let mut real = args.server.connect().await?;
//!     while let Some(event) = real.next().await {
//!         let event = event?;
//!         if event.event_type() == Some("debug") {
//!             continue; // dropped
//!         }
//!         args.client.send(event);
//!     }
//!     Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
//! });
//! ```
//!
//! The request's `Last-Event-ID` (sent by a reconnecting `EventSource`) is
//! [`ResolverArgs::last_event_id`]. Unlike MSW, which also requires an
//! `Accept: text/event-stream` header, a handler here matches on method and
//! URL alone, so any client (curl included) gets the stream. The resolver's
//! future must be `Send` on every target, as the stream body is.
//!
//! # In the browser
//!
//! In [Service Worker mode](crate::browser) the page's `EventSource` gets
//! these streams, as in MSW. The `fetch` patch of the fallback mode sees
//! `fetch` alone, not an `EventSource` (which the browser connects by
//! itself): there, read the stream with `fetch` and
//! `response.body.getReader()`. Chromium keeps the `Last-Event-ID` of an
//! `EventSource`'s reconnection from Service Workers, so there the resolver
//! sees it only from clients that send it themselves; Firefox hands it on. `server.connect()`
//! performs the real request with the page's `fetch`: the real event
//! source must allow the page's origin (CORS).

mod event;
mod parse;
mod session;
mod upstream;

use std::sync::Arc;

use http::Method;

pub use event::Event;
pub use session::Client;
#[cfg(feature = "graphql")]
pub(crate) use session::open as open_session;
pub use upstream::{Server, Upstream};

use crate::handling::handler::Handler;
use crate::handling::resolver::{
    CallHistory, RequestId, Resolution, ResolverCall, SessionDriver, SessionOutput,
};
use crate::matching::{IntoPredicate, PatternError};
use crate::message::cookies::Cookies;
use crate::message::params::Params;
use crate::message::request::Request;
use crate::message::response::HttpResponse;

/// The one argument of an `sse` resolver (MSW: `{ client, server, request,
/// params, cookies }`).
#[derive(Debug)]
#[non_exhaustive]
pub struct ResolverArgs {
    /// Sends events to the requester.
    pub client: Client,
    /// Opens the real event stream ([`Server::connect`]).
    pub server: Server,
    /// The intercepted request.
    pub request: Request,
    /// Path parameters captured by the predicate.
    pub params: Params,
    /// The request's cookies.
    pub cookies: Cookies,
    /// An id unique to this request, the same one life-cycle events carry.
    pub request_id: RequestId,
    http: crate::handling::resolver::ResolverArgs,
}

impl ResolverArgs {
    /// The `Last-Event-ID` header: the id of the last event a reconnecting
    /// client received.
    pub fn last_event_id(&self) -> Option<&str> {
        self.request.header("last-event-id")
    }

    /// Registers cleanup to run once the stream is over (sent in full or
    /// abandoned by its client); see [`ResolverArgs::finalize`].
    pub fn finalize(&self, cleanup: impl FnOnce() + Send + 'static) {
        self.http.finalize(cleanup);
    }
}

impl CallHistory for ResolverArgs {
    fn previous_calls(&self) -> usize {
        self.http.previous_calls()
    }
}

/// An `sse` handler for `GET` requests (how `EventSource` connects).
///
/// # Panics
/// When the predicate is an invalid pattern; the message names the pattern
/// and the position.
#[doc(alias = "sse")]
#[doc(alias = "EventSource")]
#[track_caller]
pub fn get<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    on(Method::GET, predicate, resolver)
}

/// Like [`get`], returning an invalid pattern as an error instead of panicking.
pub fn try_get<P, F, R, M>(predicate: P, resolver: F) -> Result<Handler, PatternError>
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    try_on(Method::GET, predicate, resolver)
}

/// An `sse` handler for `POST` requests: the event streams of LLM and chat
/// APIs, which post the prompt and stream the answer.
///
/// # Panics
/// When the predicate is an invalid pattern.
#[track_caller]
pub fn post<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    on(Method::POST, predicate, resolver)
}

/// Like [`post`], returning an invalid pattern as an error instead of panicking.
pub fn try_post<P, F, R, M>(predicate: P, resolver: F) -> Result<Handler, PatternError>
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    try_on(Method::POST, predicate, resolver)
}

/// An `sse` handler for requests with `method`.
///
/// # Panics
/// When the predicate is an invalid pattern.
#[track_caller]
pub fn on<P, F, R, M>(method: Method, predicate: P, resolver: F) -> Handler
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    try_on(method, predicate, resolver).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`on`], returning an invalid pattern as an error instead of panicking.
pub fn try_on<P, F, R, M>(
    method: Method,
    predicate: P,
    resolver: F,
) -> Result<Handler, PatternError>
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    let predicate = predicate.into_predicate()?;
    let resolver =
        Arc::new(move |args| ResolverCall::ready(Resolution::Respond(respond(&resolver, args))));
    Ok(crate::namespace::http::labeled_handler(
        "sse",
        Some(method),
        predicate,
        resolver,
    ))
}

/// Opens the stream, runs the resolver's synchronous part (its sends are
/// queued), and answers with a body that drives the rest.
fn respond<F, R, M>(resolver: &F, args: crate::handling::resolver::ResolverArgs) -> HttpResponse
where
    F: Fn(ResolverArgs) -> R,
    R: SessionOutput<M>,
{
    let (client, body) = session::open();
    let sse_args = ResolverArgs {
        client: client.clone(),
        server: Server::new(args.request.clone()),
        request: args.request.clone(),
        params: args.params.clone(),
        cookies: args.cookies.clone(),
        request_id: args.request_id,
        http: args,
    };
    let SessionDriver(driver, ended) = resolver(sse_args).into_driver();
    if let Err(problem) = ended {
        let message = format!("an SSE resolver failed: {problem}");
        crate::support::log::error(&format!("{message}. The event stream ends with an error."));
        client.fail(message);
    }
    drop(client);
    HttpResponse::try_stream(body.driving(driver))
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
}
