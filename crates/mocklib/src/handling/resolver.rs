//! Response resolvers: what runs when a handler's predicate matches.
//!
//! A resolver is a closure taking one [`ResolverArgs`] and returning anything
//! that is [`IntoResolution`] — directly (a sync resolver) or from a future (an
//! async resolver). The two are told apart by a marker type, the way axum tells
//! its handler arities apart, so both are written as plain closures:
//!
//! ```
//! use mocklib::{http, HttpResponse, ResolverArgs};
//!
//! let handlers = [
//!     // sync
//!     http::get("/a", |_| HttpResponse::text("a")),
//!     // async
//!     http::get("/b", |_| async { HttpResponse::text("b") }),
//!     // destructured, like MSW's `({ request, params, cookies })`
//!     http::get("/c/:id", |ResolverArgs { params, .. }| HttpResponse::text(params["id"].to_owned())),
//! ];
//! # let _ = handlers;
//! ```
//!
//! What a resolver may return:
//!
//! | Return value | Effect |
//! |---|---|
//! | [`HttpResponse`] or `http::Response<B>` | the mocked response |
//! | [`HttpResponse::error()`] | the requester sees a network error |
//! | [`passthrough()`](crate::passthrough) | the request is performed as it is; lookup stops |
//! | `()` or `None` | nothing: the next matching handler is tried |
//! | `Ok(x)` | as `x` |
//! | `Err(HttpResponse)` | that response (like a thrown `Response` in MSW) |
//! | `Err(e)` for any `e: Display` | 500 "Unhandled Exception", JSON `{"name", "message"}` |
//!
//! A resolver that panics also answers its request with a 500; the server
//! keeps serving every other request.

use std::fmt;
use std::future::Future;

use crate::handling::scope_local::{ScopeLocal, ScopeValues};
use crate::message::cookies::Cookies;
use crate::message::finalize::Finalizers;
use crate::message::params::Params;
use crate::message::request::Request;
use crate::message::response::HttpResponse;
#[cfg(feature = "ws")]
use crate::message::upgrade::WebSocketUpgrade;
use crate::support::maybe_send::MaybeSend;

/// An HTTP resolver as handlers keep it (`http`, `graphql`, `sse`).
pub(crate) type DynResolver = dyn Fn(ResolverArgs) -> ResolverCall + Send + Sync;

/// The one argument every HTTP resolver receives. Fields are public so it can
/// be destructured: `|ResolverArgs { request, params, cookies, .. }|`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResolverArgs {
    /// The intercepted request; its body can be read any number of times.
    pub request: Request,
    /// Path parameters captured by the predicate.
    pub params: Params,
    /// The request's cookies.
    pub cookies: Cookies,
    /// An id unique to this request, the same one life-cycle events carry.
    pub request_id: RequestId,
    pub(crate) call: CallContext,
}

impl ResolverArgs {
    /// The arguments of one call of an HTTP resolver. The `http` namespace
    /// makes them; a handler kind of your own that answers with HTTP
    /// resolvers makes them in its [`Matched`](crate::handler::Matched) call.
    pub fn new(
        request: Request,
        params: Params,
        cookies: Cookies,
        request_id: RequestId,
        call: CallContext,
    ) -> Self {
        ResolverArgs {
            request,
            params,
            cookies,
            request_id,
            call,
        }
    }

    /// Registers `cleanup` to run once this answer is over: after a mocked
    /// body (streamed or not) is sent in full or abandoned by its client,
    /// or, for any other answer, when the resolver returns. Cleanups run in
    /// reverse order of registration; one registered after that point runs
    /// at once. A panicking cleanup is logged and spares the others.
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
    /// use mocklib::{http, HttpResponse};
    ///
    /// let open_streams = Arc::new(AtomicUsize::new(0));
    /// http::get("/feed", move |args| {
    ///     open_streams.fetch_add(1, Ordering::SeqCst);
    ///     let open_streams = Arc::clone(&open_streams);
    ///     args.finalize(move || { open_streams.fetch_sub(1, Ordering::SeqCst); });
    ///     HttpResponse::stream(futures_util::stream::iter(["a", "b"]))
    /// });
    /// ```
    pub fn finalize(&self, cleanup: impl FnOnce() + Send + 'static) {
        self.call.finalize(cleanup);
    }

    /// How many times this handler's resolver ran before this call, in the
    /// current scope (0 on the first call). Counted per scope like `once`,
    /// and reset by [`restore_handlers`](crate::node::Server::restore_handlers);
    /// see [`sequence`] for the common use.
    pub fn previous_calls(&self) -> usize {
        self.call.previous_calls
    }

    /// Runs `f` on the current scope's copy of `local` and returns what it
    /// returns: state a resolver keeps per scope, which a boundary starts
    /// from its enclosing scope's and changes apart (see [`ScopeLocal`]).
    /// `f` runs under the scope's lock for these values: keep it short, and
    /// use no other `ScopeLocal` inside it (that would wait forever).
    pub fn scope_local<T, R>(&self, local: &ScopeLocal<T>, f: impl FnOnce(&mut T) -> R) -> R
    where
        T: Clone + Send + Sync + 'static,
    {
        self.call.scope_local(local, f)
    }
}

/// Resolver arguments that know how many times their handler ran before in
/// the current scope: [`ResolverArgs`] and the GraphQL namespace's. Lets
/// [`sequence`] and [`sequence_once`] serve both namespaces.
pub trait CallHistory {
    /// How many times the handler's resolver ran before this call, in the
    /// current scope.
    fn previous_calls(&self) -> usize;
}

impl CallHistory for ResolverArgs {
    fn previous_calls(&self) -> usize {
        self.call.previous_calls
    }
}

/// A resolver that answers the handler's first matching request with the
/// first response, the second with the second, and every later one with the
/// last (MSW: a generator resolver, whose final value repeats). Typical for
/// testing retries: 503, 503, then 200.
///
/// Counting is per scope, like `once`: each boundary starts from its
/// enclosing scope's count and does not advance it;
/// [`restore_handlers`](crate::node::Server::restore_handlers) starts the
/// sequence over. For a sequence that then stops matching, see
/// [`sequence_once`]. A streamed response answers once only (its stream is
/// consumed); write a resolver that builds each stream instead.
///
/// ```
/// use mocklib::{http, sequence, HttpResponse, node::setup_server};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = setup_server([http::get(
///     "https://api.example.com/flaky",
///     sequence([
///         HttpResponse::empty().status(503),
///         HttpResponse::empty().status(503),
///         HttpResponse::text("ok"),
///     ]),
/// )]);
/// server.listen();
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(server.middleware())
///     .build();
/// for expected in [503, 503, 200, 200] {
///     let response = client.get("https://api.example.com/flaky").send().await?;
///     assert_eq!(response.status(), expected);
/// }
/// # Ok(())
/// # }
/// ```
///
/// An async resolver with state of its own can do the same (the count is then
/// global, not per scope), and may return [`Resolution::Exhausted`] to stop
/// matching:
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
/// use mocklib::{http, HttpResponse};
///
/// let attempts = Arc::new(AtomicUsize::new(0));
/// http::get("/flaky", move |_| {
///     let attempt = attempts.fetch_add(1, Ordering::SeqCst);
///     async move {
///         if attempt < 2 { HttpResponse::empty().status(503) } else { HttpResponse::text("ok") }
///     }
/// });
/// ```
///
/// # Panics
/// When `responses` is empty.
#[track_caller]
pub fn sequence<A: CallHistory>(
    responses: impl IntoIterator<Item = HttpResponse>,
) -> impl Fn(A) -> Resolution + Clone + Send + Sync + 'static {
    let responses = sequence_of(responses);
    move |args: A| {
        let last = responses.len() - 1;
        Resolution::Respond(responses[args.previous_calls().min(last)].clone())
    }
}

/// Like [`sequence`], but each response answers once: after the last one,
/// the handler stops matching (as a used `.once()` handler does) and the
/// next matching handler, or the unhandled-request strategy, takes over.
///
/// ```
/// use mocklib::{http, sequence_once, HttpResponse};
///
/// let handlers = [
///     http::get("/token", sequence_once([HttpResponse::text("first"), HttpResponse::text("second")])),
///     http::get("/token", |_| HttpResponse::empty().status(410)), // from the third request on
/// ];
/// # let _ = handlers;
/// ```
///
/// # Panics
/// When `responses` is empty.
#[track_caller]
pub fn sequence_once<A: CallHistory>(
    responses: impl IntoIterator<Item = HttpResponse>,
) -> impl Fn(A) -> Resolution + Clone + Send + Sync + 'static {
    let responses = sequence_of(responses);
    move |args: A| match responses.get(args.previous_calls()) {
        Some(response) => Resolution::Respond(response.clone()),
        None => Resolution::Exhausted,
    }
}

#[track_caller]
fn sequence_of(
    responses: impl IntoIterator<Item = HttpResponse>,
) -> std::sync::Arc<[HttpResponse]> {
    let responses: std::sync::Arc<[HttpResponse]> = responses.into_iter().collect();
    assert!(
        !responses.is_empty(),
        "a sequence needs at least one response"
    );
    responses
}

/// What a session's callback returns — an `sse` resolver's or a WebSocket
/// connection handler's, which talk through their arguments rather than
/// return a response: nothing, or a `Result` whose error ends the session
/// abruptly (and is logged); directly, or from a future that runs as long
/// as the session does.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what an sse resolver or a WebSocket handler returns",
    label = "the callback returns this",
    note = "it talks through its argument (`args.client`, `connection.client`) and returns `()` \
            or `Result<(), E>` (E: Display), directly or from an `async` block"
)]
pub trait SessionOutput<M>: Send + 'static {
    #[doc(hidden)]
    fn into_driver(self) -> SessionDriver;
}

/// The future that runs a session, if it has one left to run.
pub(crate) type SessionFuture = std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Opaque result of [`SessionOutput::into_driver`]: the future still to run
/// and how the synchronous part ended.
#[doc(hidden)]
pub struct SessionDriver(
    pub(crate) Option<SessionFuture>,
    pub(crate) Result<(), String>,
);

impl fmt::Debug for SessionDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionDriver").finish_non_exhaustive()
    }
}

/// A value that ends a session: `()` or `Result<(), E>`.
pub trait SessionEnd: Send + 'static {
    #[doc(hidden)]
    fn into_end(self) -> Result<(), String>;
}

impl SessionEnd for () {
    fn into_end(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: std::fmt::Display + Send + 'static> SessionEnd for Result<(), E> {
    fn into_end(self) -> Result<(), String> {
        self.map_err(|error| error.to_string())
    }
}

impl<T: SessionEnd> SessionOutput<marker::Sync> for T {
    fn into_driver(self) -> SessionDriver {
        SessionDriver(None, self.into_end())
    }
}

impl<F> SessionOutput<marker::Async> for F
where
    F: Future + Send + 'static,
    F::Output: SessionEnd,
{
    fn into_driver(self) -> SessionDriver {
        SessionDriver(Some(Box::pin(async move { self.await.into_end() })), Ok(()))
    }
}

/// What the engine tells one resolver call about itself: how many times the
/// handler ran before in the current scope, and where cleanups go. A handler
/// kind hands it to its resolver's arguments (see [`crate::handler`]), as
/// [`ResolverArgs`] does.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// How many times the handler's resolver ran before in this scope.
    pub(crate) previous_calls: usize,
    /// Where the resolver registers its `finalize` cleanup.
    pub(crate) finalizers: Finalizers,
    /// The scope's [`ScopeLocal`] values; `None` outside a lookup.
    pub(crate) values: Option<ScopeValues>,
}

impl CallContext {
    /// How many times this handler's resolver ran before this call, in the
    /// current scope (0 on the first call); see [`ResolverArgs::previous_calls`].
    pub fn previous_calls(&self) -> usize {
        self.previous_calls
    }

    /// Registers `cleanup` to run once this answer is over; see
    /// [`ResolverArgs::finalize`].
    pub fn finalize(&self, cleanup: impl FnOnce() + Send + 'static) {
        self.finalizers.push(Box::new(cleanup));
    }

    /// Runs `f` on the current scope's copy of `local`; see
    /// [`ResolverArgs::scope_local`]. A context made with `Default` (a
    /// resolver called outside a lookup) belongs to no scope: `f` gets a
    /// fresh value each time.
    pub fn scope_local<T, R>(&self, local: &ScopeLocal<T>, f: impl FnOnce(&mut T) -> R) -> R
    where
        T: Clone + Send + Sync + 'static,
    {
        ScopeValues::with_or_fresh(self.values.as_ref(), local, f)
    }
}

/// Identifies one intercepted request across resolvers and life-cycle events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(u64);

impl RequestId {
    pub(crate) fn next() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        RequestId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "req-{}", self.0)
    }
}

/// What a resolver decided.
#[derive(Debug)]
#[non_exhaustive]
pub enum Resolution {
    /// Answer with this response (it may be a network error or a passthrough).
    Respond(HttpResponse),
    /// Nothing: try the next matching handler.
    Fallthrough,
    /// The resolver failed; answer with a 500 and report the error.
    Failed(ResolverError),
    /// This handler is used up in the current scope: it stops matching from
    /// now on, like a used `.once()` handler, and the lookup goes on as if it
    /// had not matched (until [`restore_handlers`](crate::node::Server::restore_handlers)).
    /// What [`sequence_once`] returns after its last response; a resolver
    /// keeping its own state may return it too.
    Exhausted,
    /// Accept this WebSocket upgrade (what a [`ws`](crate::ws) handler
    /// answers with).
    #[cfg(feature = "ws")]
    Upgrade(WebSocketUpgrade),
}

/// An error a resolver returned or a panic it raised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("{name}: {message}")]
pub struct ResolverError {
    /// The error's type name (`"Panic"` for a panic).
    pub name: String,
    /// The error's message.
    pub message: String,
}

/// Values a resolver can return. See the [module docs](self) for the table.
#[diagnostic::on_unimplemented(
    message = "a resolver cannot return `{Self}`",
    label = "not a resolver's result",
    note = "a resolver returns an `HttpResponse`, an `http::Response`, `passthrough()`, \
            `()` or `None` (fall through), `Option`/`Result` of these, or a future of one"
)]
pub trait IntoResolution {
    /// Converts the value.
    fn into_resolution(self) -> Resolution;
}

impl IntoResolution for Resolution {
    fn into_resolution(self) -> Resolution {
        self
    }
}

impl IntoResolution for HttpResponse {
    fn into_resolution(self) -> Resolution {
        Resolution::Respond(self)
    }
}

impl<B: Into<bytes::Bytes>> IntoResolution for http::Response<B> {
    fn into_resolution(self) -> Resolution {
        Resolution::Respond(self.into())
    }
}

impl IntoResolution for () {
    fn into_resolution(self) -> Resolution {
        Resolution::Fallthrough
    }
}

impl<T: IntoResolution> IntoResolution for Option<T> {
    fn into_resolution(self) -> Resolution {
        self.map_or(Resolution::Fallthrough, IntoResolution::into_resolution)
    }
}

impl<T: IntoResolution, E: IntoResolverError> IntoResolution for Result<T, E> {
    fn into_resolution(self) -> Resolution {
        match self {
            Ok(value) => value.into_resolution(),
            Err(error) => error.into_resolver_error(),
        }
    }
}

/// Error types a resolver may return in `Err`: an [`HttpResponse`] (used as
/// the response) or anything that is `Display` (a 500).
#[diagnostic::on_unimplemented(
    message = "a resolver cannot return `Err({Self})`",
    label = "not a resolver's error",
    note = "a resolver's `Err` holds an `HttpResponse` (used as the response) \
            or a type that implements `Display` (a 500 naming the error)"
)]
pub trait IntoResolverError {
    /// Converts the error.
    fn into_resolver_error(self) -> Resolution;
}

impl IntoResolverError for HttpResponse {
    fn into_resolver_error(self) -> Resolution {
        Resolution::Respond(self)
    }
}

impl<E: std::fmt::Display> IntoResolverError for E {
    fn into_resolver_error(self) -> Resolution {
        Resolution::Failed(ResolverError {
            name: short_type_name::<E>().to_owned(),
            message: self.to_string(),
        })
    }
}

/// `std::io::Error` → `Error`, `my_crate::NotFound<T>` → `NotFound`.
fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// A boxed resolver future.
pub(crate) type BoxResolution = crate::support::maybe_send::BoxFuture<Resolution>;

/// One call of a resolver: its [`Resolution`] at once (sync resolvers, no
/// allocation) or a future of one. Made from anything a resolver may return
/// with [`ResolverCall::new`], or from a resolution with [`ResolverCall::ready`].
pub struct ResolverCall(pub(crate) CallState);

pub(crate) enum CallState {
    Ready(Resolution),
    Pending(BoxResolution),
}

impl ResolverCall {
    /// The call of a resolver that returned `output`: a value, or a future
    /// of one (see [`ResolverOutput`]).
    pub fn new<R: ResolverOutput<M>, M>(output: R) -> Self {
        output.into_call()
    }

    /// A call that decided at once.
    pub fn ready(resolution: Resolution) -> Self {
        ResolverCall(CallState::Ready(resolution))
    }

    pub(crate) fn pending(future: BoxResolution) -> Self {
        ResolverCall(CallState::Pending(future))
    }

    /// The resolution, awaited if the resolver returned a future.
    pub async fn resolve(self) -> Resolution {
        match self.0 {
            CallState::Ready(resolution) => resolution,
            CallState::Pending(future) => future.await,
        }
    }

    /// This call with `f` applied to its resolution when it is there.
    pub fn map(self, f: impl FnOnce(Resolution) -> Resolution + MaybeSend + 'static) -> Self {
        match self.0 {
            CallState::Ready(resolution) => ResolverCall::ready(f(resolution)),
            CallState::Pending(future) => {
                ResolverCall::pending(Box::pin(async move { f(future.await) }))
            }
        }
    }
}

impl fmt::Debug for ResolverCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            CallState::Ready(_) => "ResolverCall::Ready",
            CallState::Pending(_) => "ResolverCall::Pending",
        })
    }
}

/// Marker types that let [`ResolverOutput`] accept both plain values and
/// futures. They appear only in trait bounds.
pub mod marker {
    /// A resolver that returns its value directly.
    #[derive(Debug)]
    pub enum Sync {}
    /// A resolver that returns a future.
    #[derive(Debug)]
    pub enum Async {}
    /// A resolver that returns a [`ResolverCall`](super::ResolverCall).
    #[derive(Debug)]
    pub enum Call {}
}

/// What a resolver closure may return: an [`IntoResolution`] value, or a
/// future of one. `M` is a marker ([`marker::Sync`] / [`marker::Async`]) that
/// is always inferred.
///
/// ```compile_fail,E0277
/// // A number is not a response.
/// let handler = mocklib::http::get("/count", |_| 42);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resolver's result",
    label = "the resolver returns this",
    note = "a resolver returns an `HttpResponse`, an `http::Response`, `passthrough()`, \
            `()` or `None` (fall through), `Option`/`Result` of these, or a future of one",
    note = "a `Result`'s error is an `HttpResponse` (used as the response) or a `Display` type (a 500)",
    note = "for a status code or a text, build a response: \
            `HttpResponse::empty().status(404)`, `HttpResponse::text(\"..\")`"
)]
pub trait ResolverOutput<M>: MaybeSend + 'static {
    /// The call this output makes (see [`ResolverCall::new`]).
    fn into_call(self) -> ResolverCall;
}

impl<T: IntoResolution + MaybeSend + 'static> ResolverOutput<marker::Sync> for T {
    fn into_call(self) -> ResolverCall {
        ResolverCall::ready(self.into_resolution())
    }
}

impl<F> ResolverOutput<marker::Async> for F
where
    F: Future + MaybeSend + 'static,
    F::Output: IntoResolution,
{
    fn into_call(self) -> ResolverCall {
        // `map`, not an `async` block, which would hold the resolver's
        // future twice (as captured, and as awaited) in the box.
        let resolution = futures_util::FutureExt::map(self, IntoResolution::into_resolution);
        ResolverCall::pending(Box::pin(resolution))
    }
}

/// A resolver that decides per call whether it answers at once or later
/// returns a [`ResolverCall`]: an answer at once costs no future (the
/// lookup goes on without boxing or polling one).
///
/// ```
/// use mocklib::{http, HttpResponse, resolver::ResolverCall};
///
/// let slow = std::sync::atomic::AtomicBool::new(false);
/// let handler = http::get("/user", move |_| {
///     let response = HttpResponse::text("John");
///     if slow.load(std::sync::atomic::Ordering::Relaxed) {
///         ResolverCall::new(async move {
///             mocklib::delay(100).await;
///             response
///         })
///     } else {
///         ResolverCall::new(response)
///     }
/// });
/// # let _ = handler;
/// ```
impl ResolverOutput<marker::Call> for ResolverCall {
    fn into_call(self) -> ResolverCall {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct NotFound;
    impl std::fmt::Display for NotFound {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("no such post")
        }
    }

    #[test]
    fn errors_carry_their_type_name() {
        let resolution = Result::<HttpResponse, _>::Err(NotFound).into_resolution();
        let Resolution::Failed(error) = resolution else {
            panic!("expected a failure")
        };
        assert_eq!(error.name, "NotFound");
        assert_eq!(error.message, "no such post");
    }

    #[test]
    fn err_response_is_used_as_the_response() {
        let resolution = Result::<(), _>::Err(HttpResponse::empty().status(401)).into_resolution();
        assert!(matches!(resolution, Resolution::Respond(r) if r.status_code() == 401));
    }

    #[test]
    fn nothing_falls_through() {
        assert!(matches!(().into_resolution(), Resolution::Fallthrough));
        assert!(matches!(
            None::<HttpResponse>.into_resolution(),
            Resolution::Fallthrough
        ));
    }
}
