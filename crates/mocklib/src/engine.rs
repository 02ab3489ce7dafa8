//! The engine: resolves one request against the handler list of its scope.
//!
//! Every front door (tower, reqwest-middleware, the loopback listener, the
//! browser) hands the engine a canonical [`Request`] and turns the
//! [`Outcome`] back into what its client expects. The engine does no I/O.
//!
//! The lookup walks the scope's list in order:
//!
//! 1. a handler whose predicate does not match (or a used once-handler) is skipped;
//! 2. a matching handler runs its resolver; if it returns nothing, the lookup
//!    goes on (fall-through);
//! 3. the first response wins: a mocked response, a network error, or
//!    `passthrough()` (perform the request as it is, stop the lookup);
//! 4. if handlers matched but none responded, the request is performed as it
//!    is and counts as handled;
//! 5. if none matched, the unhandled-request strategy decides.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, PoisonError, RwLock};

use crate::maybe_send::MaybeSend;
use http::HeaderMap;
use url::Url;

use crate::body::Body;
use crate::boundary::{self, Scoped};
use crate::events::{EventKind, Events, LifeCycleEvent, ObservedResponse};
#[cfg(not(target_arch = "wasm32"))]
use crate::exchange::Capture;
#[cfg(feature = "har")]
use crate::exchange::ExchangeSink;
use crate::fault::Fault;
use crate::finalize::{FinalizeGuard, Finalizers};
use crate::handler::{Handler, Invocation, LookupContext};
use crate::handlers::Scope;
use crate::index::RequestKeys;
use crate::journal::{Answer, DEFAULT_CAPACITY};
use crate::request::{Performer, Request};
use crate::resolver::{CallContext, RequestId, Resolution, ResolverCall, ResolverError};
use crate::response::{HttpResponse, Kind};
#[cfg(feature = "ws")]
use crate::upgrade::WebSocketUpgrade;
#[cfg(feature = "har")]
use std::time::{Instant, SystemTime};

/// What the engine needs of a front door's options while intercepting: the
/// front door's own options (the listener's port, say) stay with it.
#[derive(Clone, Default, Debug)]
pub(crate) struct InterceptOptions {
    pub(crate) on_unhandled_request: UnhandledRequest,
    pub(crate) base_url: Option<Url>,
    /// Requests each scope's journal keeps; `None`: the default.
    pub(crate) journal_capacity: Option<usize>,
    /// A request that handlers matched but none answered goes to the
    /// unhandled-request strategy instead of being performed as it is.
    pub(crate) fallthrough_is_unhandled: bool,
}

/// What happens to a request that no handler matches.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum UnhandledRequest {
    /// Print a warning naming the request and the closest handlers, then
    /// perform the request as it is.
    #[default]
    Warn,
    /// Print an error and make the request fail at the requester.
    Error,
    /// As [`Error`](Self::Error), and also record the request as a failure
    /// that [`verify`](crate::SetupApi::verify) reports, so a test fails
    /// even when the code under test swallows the client's error. See
    /// [`ListenOptions::strict`](crate::ListenOptions::strict).
    Strict,
    /// Perform the request as it is, silently.
    Bypass,
    /// Call this function with the request, then perform the request as it
    /// is. If the function panics, the request fails as with `Error`.
    Custom(Arc<dyn Fn(&Request) + Send + Sync>),
}

impl UnhandledRequest {
    /// A custom strategy from a closure.
    pub fn custom(callback: impl Fn(&Request) + Send + Sync + 'static) -> Self {
        UnhandledRequest::Custom(Arc::new(callback))
    }
}

impl std::fmt::Debug for UnhandledRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UnhandledRequest::Warn => "Warn",
            UnhandledRequest::Error => "Error",
            UnhandledRequest::Strict => "Strict",
            UnhandledRequest::Bypass => "Bypass",
            UnhandledRequest::Custom(_) => "Custom(..)",
        })
    }
}

/// How the engine answered a request.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// Send this response (its status text: [`StatusText::of`](crate::StatusText::of)).
    Mocked(http::Response<Body>),
    /// Perform the request for real, then report the response head.
    Passthrough(Passthrough),
    /// Fail the request at the transport level.
    NetworkError(NetworkError),
    /// Accept this WebSocket upgrade and run its handler on the socket (a
    /// front door that cannot upgrade answers with a network error).
    #[cfg(feature = "ws")]
    WebSocket(WebSocketUpgrade),
}

/// A request to perform as it is. Report the real response's head with
/// [`Passthrough::report_response`] so `response:bypass` listeners see it.
#[derive(Debug)]
pub struct Passthrough {
    request: Request,
    request_id: Option<RequestId>,
    events: Events,
    /// Where the exchange goes when a recording is on, and when it started.
    #[cfg(feature = "har")]
    #[cfg_attr(
        any(
            target_arch = "wasm32",
            not(any(feature = "net", feature = "reqwest", feature = "reqwest-0-12", feature = "tower"))
        ),
        allow(dead_code) // read by the native front doors that perform requests
    )]
    recording: Option<(Arc<dyn ExchangeSink>, SystemTime, Instant)>,
}

impl Passthrough {
    /// A capture of the real response when a recording is on: the front
    /// door feeds it the body (see [`crate::exchange::Tap`]).
    #[cfg(not(target_arch = "wasm32"))]
    #[cfg_attr(
        not(any(feature = "net", feature = "reqwest", feature = "reqwest-0-12", feature = "tower")),
        allow(dead_code) // called by the native front doors that perform requests
    )]
    pub(crate) fn capture(
        &self,
        status: http::StatusCode,
        version: http::Version,
        headers: &HeaderMap,
    ) -> Option<Capture> {
        #[cfg(not(feature = "har"))]
        return {
            let _ = (self, status, version, headers);
            None
        };
        #[cfg(feature = "har")]
        let (sink, started, at) = self.recording.as_ref()?;
        #[cfg(feature = "har")]
        Some(Capture::new(
            Arc::clone(sink),
            self.request.clone(),
            (*started, *at),
            status,
            version,
            headers.clone(),
        ))
    }

    /// The request to perform.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// Emits `response:bypass` for the real response.
    pub fn report_response(self, status: http::StatusCode, headers: &HeaderMap) {
        let Some(request_id) = self.request_id else {
            return;
        };
        self.events
            .emit(EventKind::ResponseBypass, || LifeCycleEvent {
                kind: EventKind::ResponseBypass,
                request: self.request.clone(),
                request_id,
                response: Some(ObservedResponse {
                    status,
                    headers: headers.clone(),
                    body: None,
                }),
                error: None,
            });
    }
}

/// Why a request failed at the transport level instead of getting a response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct NetworkError {
    kind: NetworkErrorKind,
    message: String,
    fault: Option<Fault>,
}

/// The reason behind a [`NetworkError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetworkErrorKind {
    /// A resolver returned [`HttpResponse::error()`] or a
    /// [`HttpResponse::fault`] ([`NetworkError::fault`] says which).
    Mocked,
    /// No handler matched and the strategy is [`UnhandledRequest::Error`]
    /// (or a custom strategy panicked).
    Unhandled,
    /// A WebSocket handler matched, but this front door cannot carry a
    /// WebSocket (the in-process ones): connect through the listener.
    CannotUpgrade,
}

impl NetworkError {
    /// Why the request failed.
    pub fn kind(&self) -> NetworkErrorKind {
        self.kind
    }

    /// The fault a resolver injected with
    /// [`HttpResponse::fault`](crate::HttpResponse::fault) (kind
    /// [`Mocked`](NetworkErrorKind::Mocked)); `None` for
    /// [`HttpResponse::error()`] and the other kinds.
    ///
    /// ```
    /// # fn check(error: &mocklib::NetworkError) {
    /// if error.fault() == Some(mocklib::Fault::ConnectionReset) {
    ///     println!("the mock reset the connection");
    /// }
    /// # }
    /// ```
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    /// A WebSocket `upgrade` reached `front_door`, which cannot accept it.
    #[cfg(all(
        feature = "ws",
        not(target_arch = "wasm32"),
        any(feature = "reqwest", feature = "reqwest-0-12", feature = "tower")
    ))]
    pub(crate) fn cannot_upgrade(upgrade: &WebSocketUpgrade, front_door: &str) -> Self {
        crate::log::error(&format!(
            "a WebSocket handler matched {}, but {front_door} cannot carry a WebSocket; \
             connect through the listener (server.url() or the proxy) instead",
            upgrade.request().url()
        ));
        NetworkError {
            kind: NetworkErrorKind::CannotUpgrade,
            fault: None,
            message: format!(
                "{front_door} cannot carry the WebSocket of {}: connect through the listener",
                upgrade.request().url()
            ),
        }
    }
}

/// One server's (or worker's) state: handler lists, events, options.
pub(crate) struct Engine {
    id: u64,
    root: Arc<Scope>,
    events: Events,
    /// `Some` while listening.
    listening: RwLock<Option<Arc<InterceptOptions>>>,
    performer: RwLock<Option<Arc<dyn Performer>>>,
    /// Where requests performed for real are recorded, if anywhere.
    #[cfg(feature = "har")]
    recorder: RwLock<Option<Arc<dyn ExchangeSink>>>,
}

impl Engine {
    pub(crate) fn new(handlers: Vec<Handler>) -> Arc<Self> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Arc::new(Engine {
            id,
            root: Arc::new(Scope::root(id, handlers)),
            events: Events::default(),
            listening: RwLock::new(None),
            performer: RwLock::new(None),
            #[cfg(feature = "har")]
            recorder: RwLock::new(None),
        })
    }

    /// Sets how `bypass()` performs requests for this engine.
    #[cfg(any(feature = "net", target_arch = "wasm32"))]
    pub(crate) fn set_performer(&self, performer: Arc<dyn Performer>) {
        *self
            .performer
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(performer);
    }

    pub(crate) fn events(&self) -> &Events {
        &self.events
    }

    /// Records every request performed for real into `recorder` (`None`:
    /// stops recording); while one is set, unhandled requests are performed
    /// for real without the unhandled-request strategy.
    #[cfg(feature = "har")]
    pub(crate) fn set_recorder(&self, recorder: Option<Arc<dyn ExchangeSink>>) {
        *self
            .recorder
            .write()
            .unwrap_or_else(PoisonError::into_inner) = recorder;
    }

    pub(crate) fn listen(&self, options: InterceptOptions) {
        *self
            .listening
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(options));
        self.events.set_enabled(true);
    }

    pub(crate) fn close(&self) {
        *self
            .listening
            .write()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.events.set_enabled(false);
    }

    pub(crate) fn listen_options(&self) -> Option<Arc<InterceptOptions>> {
        self.listening
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The scope the calling code runs in: its innermost boundary, or the root.
    pub(crate) fn current_scope(&self) -> Arc<Scope> {
        boundary::current(self.id).unwrap_or_else(|| Arc::clone(&self.root))
    }

    /// The server's own scope, outside any boundary.
    pub(crate) fn root_scope(&self) -> &Arc<Scope> {
        &self.root
    }

    /// The current scope's handlers in lookup order (`list_handlers`).
    pub(crate) fn list_handlers(&self) -> Vec<Handler> {
        self.current_scope().snapshot().iter().cloned().collect()
    }

    /// Whether `scope` is this engine's root (no boundary).
    #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
    pub(crate) fn is_root(&self, scope: &Arc<Scope>) -> bool {
        Arc::ptr_eq(scope, &self.root)
    }

    /// A function creating a fresh boundary scope from the caller's scope.
    #[cfg(not(target_arch = "wasm32"))] // no boundaries in the browser yet
    pub(crate) fn boundary_factory(self: &Arc<Self>) -> boundary::NewScope {
        let engine = Arc::clone(self);
        boundary::NewScope(Arc::new(move || Arc::new(engine.current_scope().child())))
    }

    /// Resolves `request` in the caller's current scope. `base_url` is the
    /// front door's own origin, if it has one.
    ///
    /// The scope is taken now, at the call, and the returned future runs its
    /// resolvers inside it wherever it is polled.
    pub(crate) fn handle(
        &self,
        request: Request,
        base_url: Option<Url>,
    ) -> impl std::future::Future<Output = Outcome> + MaybeSend + 'static + use<> {
        self.handle_in(self.current_scope(), request, base_url)
    }

    /// Resolves `request` in `scope` (taken earlier, in the caller's task).
    pub(crate) fn handle_in(
        &self,
        scope: Arc<Scope>,
        request: Request,
        base_url: Option<Url>,
    ) -> impl std::future::Future<Output = Outcome> + MaybeSend + 'static + use<> {
        let options = self.listen_options();
        let events = self.events.clone();
        #[cfg(feature = "har")]
        let recorder = self
            .recorder
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(performer) = &*self
            .performer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
        {
            request.set_performer(Arc::clone(performer));
        }
        Scoped::new(Arc::clone(&scope), async move {
            match options {
                None => Outcome::Passthrough(Passthrough {
                    request,
                    request_id: None,
                    events,
                    #[cfg(feature = "har")]
                    recording: None,
                }),
                Some(options) => {
                    Lookup {
                        scope,
                        events,
                        options,
                        base_url: None,
                        #[cfg(feature = "har")]
                        recorder,
                    }
                    .resolve(request, base_url)
                    .await
                }
            }
        })
    }
}

/// One resolution: the scope, the events and the options it runs with.
struct Lookup {
    scope: Arc<Scope>,
    events: Events,
    options: Arc<InterceptOptions>,
    /// The base URL the lookup matched with (the front door's, else the
    /// options'), kept with each journal entry for `requests_matching`.
    base_url: Option<Url>,
    #[cfg(feature = "har")]
    recorder: Option<Arc<dyn ExchangeSink>>,
}

impl Lookup {
    /// Writes the request into the scope's journal.
    fn record(&self, request: &Request, handler: Option<&Handler>, answer: Answer) {
        let capacity = self.options.journal_capacity.unwrap_or(DEFAULT_CAPACITY);
        self.scope
            .record(capacity, request, handler, answer, self.base_url.as_ref());
    }

    fn emit(&self, kind: EventKind, request: &Request, request_id: RequestId) {
        self.events.emit(kind, || LifeCycleEvent {
            kind,
            request: request.clone(),
            request_id,
            response: None,
            error: None,
        });
    }

    fn passthrough(self, request: Request, request_id: RequestId) -> Outcome {
        Outcome::Passthrough(Passthrough {
            request,
            request_id: Some(request_id),
            events: self.events,
            #[cfg(feature = "har")]
            recording: self
                .recorder
                .map(|sink| (sink, SystemTime::now(), Instant::now())),
        })
    }

    async fn resolve(mut self, request: Request, door_base_url: Option<Url>) -> Outcome {
        let request_id = RequestId::next();
        self.emit(EventKind::RequestStart, &request, request_id);

        let base_url = door_base_url.or_else(|| self.options.base_url.clone());
        self.base_url.clone_from(&base_url);
        let context = LookupContext::new(&request, request_id, base_url.as_ref());
        let handlers = self.scope.snapshot();
        let mut matched = false;
        let keys = RequestKeys::new(request.method(), request.url());
        for handler in handlers.candidates(
            &keys,
            #[cfg(feature = "graphql")]
            &context,
        ) {
            if self.scope.is_used(handler) {
                continue;
            }
            let Some(invocation) = handler.logic().try_match(&context) else {
                continue;
            };
            // Two concurrent requests may both match a once-handler: the one
            // that claims it first runs it, the other looks further.
            if handler.is_once() && !self.scope.claim_once(handler) {
                continue;
            }
            let call = CallContext {
                previous_calls: self.scope.count_call(handler),
                finalizers: Finalizers::default(),
            };
            // Runs the cleanup when dropped: at once unless a mocked body
            // takes it, also when this future is dropped mid-resolver.
            let finalize = call.finalizers.guard();
            let resolution = run_resolver(invocation, call).await;
            if !matches!(resolution, Resolution::Exhausted) {
                self.scope.count_use(handler);
            }
            match resolution {
                Resolution::Exhausted => self.scope.exhaust(handler),
                Resolution::Fallthrough => matched = true,
                Resolution::Failed(error) => return self.fail(request, request_id, handler, error),
                Resolution::Respond(response) => {
                    return self.respond(request, request_id, handler, response, finalize);
                }
                #[cfg(feature = "ws")]
                Resolution::Upgrade(upgrade) => {
                    self.record(&request, Some(handler), Answer::WebSocket);
                    self.emit(EventKind::RequestMatch, &request, request_id);
                    self.emit(EventKind::RequestEnd, &request, request_id);
                    return Outcome::WebSocket(upgrade);
                }
            }
        }
        if matched && !self.options.fallthrough_is_unhandled {
            // Matched, but nobody answered: performed as it is, still handled.
            self.record(&request, None, Answer::Passthrough);
            self.emit(EventKind::RequestEnd, &request, request_id);
            return self.passthrough(request, request_id);
        }
        self.unhandled(request, request_id, &handlers, matched)
    }

    fn respond(
        self,
        request: Request,
        request_id: RequestId,
        handler: &Handler,
        response: HttpResponse,
        finalize: FinalizeGuard,
    ) -> Outcome {
        match response.kind() {
            Kind::Passthrough => {
                self.record(&request, Some(handler), Answer::Passthrough);
                self.emit(EventKind::RequestEnd, &request, request_id);
                self.passthrough(request, request_id)
            }
            Kind::NetworkError => {
                self.record(&request, Some(handler), Answer::NetworkError);
                self.emit(EventKind::RequestMatch, &request, request_id);
                self.emit(EventKind::RequestEnd, &request, request_id);
                Outcome::NetworkError(NetworkError {
                    kind: NetworkErrorKind::Mocked,
                    fault: response.injected_fault(),
                    message: format!(
                        "network error for {} {} ({} from handler {})",
                        request.method(),
                        request.url(),
                        response.network_error_origin(),
                        handler.header()
                    ),
                })
            }
            Kind::Mock => match response.into_http() {
                Ok(mut response) => {
                    // A real HEAD response never has a body; its headers
                    // (Content-Length included) describe the GET response.
                    if request.method() == http::Method::HEAD {
                        *response.body_mut() = Body::empty();
                    }
                    response.body_mut().finalize_with(finalize);
                    self.record(&request, Some(handler), Answer::Mocked(response.status()));
                    self.emit(EventKind::RequestMatch, &request, request_id);
                    self.emit(EventKind::RequestEnd, &request, request_id);
                    self.emit_response(EventKind::ResponseMocked, &request, request_id, &response);
                    Outcome::Mocked(response)
                }
                Err(message) => {
                    let error = ResolverError {
                        name: "InvalidResponse".to_owned(),
                        message,
                    };
                    self.fail(request, request_id, handler, error)
                }
            },
        }
    }

    /// A resolver failed: 500 "Unhandled Exception" with `{name, message}`.
    fn fail(
        self,
        request: Request,
        request_id: RequestId,
        handler: &Handler,
        error: ResolverError,
    ) -> Outcome {
        crate::log::error(&format!(
            "the resolver of {} failed for {} {}: {error}. The request gets a 500 response.",
            handler.header(),
            request.method(),
            request.url()
        ));
        self.events
            .emit(EventKind::UnhandledException, || LifeCycleEvent {
                kind: EventKind::UnhandledException,
                request: request.clone(),
                request_id,
                response: None,
                error: Some(error.clone()),
            });
        let response = HttpResponse::json(&error)
            .status(500)
            .status_text("Unhandled Exception")
            .into_http()
            .expect("a ResolverError always serializes");
        self.record(&request, Some(handler), Answer::Mocked(response.status()));
        self.emit_response(EventKind::ResponseMocked, &request, request_id, &response);
        Outcome::Mocked(response)
    }

    fn emit_response(
        &self,
        kind: EventKind,
        request: &Request,
        request_id: RequestId,
        response: &http::Response<Body>,
    ) {
        self.events.emit(kind, || LifeCycleEvent {
            kind,
            request: request.clone(),
            request_id,
            response: Some(ObservedResponse {
                status: response.status(),
                headers: response.headers().clone(),
                body: response.body().as_bytes().cloned(),
            }),
            error: None,
        });
    }

    /// Strict mode: `message` is kept for `verify()`, with how the request
    /// differs from the handlers closest to it.
    fn record_strict_failure(
        &self,
        request: &Request,
        handlers: &crate::handlers::HandlerChain,
        message: &str,
    ) {
        let closest = crate::suggest::closest_handlers(request, handlers.iter());
        let mut failure = message.to_owned();
        if !closest.is_empty() {
            let base_url = self.options.base_url.as_ref();
            failure.push_str("\n\n");
            failure.push_str(&crate::verify::closest_handler_differences(
                request, &closest, base_url,
            ));
        }
        self.scope.record_failure(failure);
    }

    /// No handler answered: `matched` when some matched but returned nothing
    /// (and the options make that count as unhandled).
    fn unhandled(
        self,
        request: Request,
        request_id: RequestId,
        handlers: &crate::handlers::HandlerChain,
        matched: bool,
    ) -> Outcome {
        self.record(&request, None, Answer::Unhandled);
        #[cfg(feature = "har")]
        if self.recorder.is_some() {
            // Recording: what no handler answers is what is to be recorded.
            self.emit(EventKind::RequestUnhandled, &request, request_id);
            self.emit(EventKind::RequestEnd, &request, request_id);
            return self.passthrough(request, request_id);
        }
        let failure = match &self.options.on_unhandled_request {
            UnhandledRequest::Bypass => None,
            UnhandledRequest::Warn => {
                crate::log::warn(&unhandled_message(&request, handlers, matched));
                None
            }
            UnhandledRequest::Error => {
                let message = unhandled_message(&request, handlers, matched);
                crate::log::error(&message);
                Some(message)
            }
            UnhandledRequest::Strict => {
                let message = unhandled_message(&request, handlers, matched);
                crate::log::error(&message);
                self.record_strict_failure(&request, handlers, &message);
                Some(message)
            }
            UnhandledRequest::Custom(callback) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| callback(&request))) {
                    Ok(()) => None,
                    Err(panic) => Some(format!(
                        "the on_unhandled_request callback panicked for {} {}: {}",
                        request.method(),
                        request.url(),
                        panic_message(&*panic)
                    )),
                }
            }
        };
        self.emit(EventKind::RequestUnhandled, &request, request_id);
        self.emit(EventKind::RequestEnd, &request, request_id);
        match failure {
            None => self.passthrough(request, request_id),
            Some(message) => Outcome::NetworkError(NetworkError {
                kind: NetworkErrorKind::Unhandled,
                fault: None,
                message,
            }),
        }
    }
}

/// Runs a matched handler's resolver; a panic becomes a failure.
async fn run_resolver(invocation: Invocation, call: CallContext) -> Resolution {
    let call = match std::panic::catch_unwind(AssertUnwindSafe(|| invocation(call))) {
        Ok(call) => call,
        Err(panic) => return panicked(&*panic),
    };
    match call {
        ResolverCall::Ready(resolution) => resolution,
        ResolverCall::Pending(future) => match crate::log::catch_unwind(future).await {
            Ok(resolution) => resolution,
            Err(panic) => panicked(&*panic),
        },
    }
}

fn panicked(panic: &(dyn std::any::Any + Send)) -> Resolution {
    Resolution::Failed(ResolverError {
        name: "Panic".to_owned(),
        message: panic_message(panic),
    })
}

pub(crate) use crate::log::panic_message;

const MAX_BODY_IN_MESSAGE: usize = 1024;

fn unhandled_message(
    request: &Request,
    handlers: &crate::handlers::HandlerChain,
    matched: bool,
) -> String {
    let what = if matched {
        "that request handlers matched but none answered (their resolvers returned nothing)"
    } else {
        "without a matching request handler"
    };
    let mut message = format!(
        "intercepted a request {what}:\n\n  • {} {}\n",
        request.method(),
        request.url()
    );
    if !request.body().is_empty() {
        let body = String::from_utf8_lossy(
            &request.body()[..request.body().len().min(MAX_BODY_IN_MESSAGE)],
        );
        let ellipsis = if request.body().len() > MAX_BODY_IN_MESSAGE {
            "…"
        } else {
            ""
        };
        message.push_str(&format!("\n  body: {body}{ellipsis}\n"));
    }
    let closest = crate::suggest::closest_handlers(request, handlers.iter());
    match closest.as_slice() {
        [] => {}
        [only] => message.push_str(&format!(
            "\nDid you mean to request \"{}\" instead?\n",
            only.header()
        )),
        several => {
            message
                .push_str("\nDid you mean to request one of the following resources instead?\n\n");
            for handler in several {
                message.push_str(&format!("  • {}\n", handler.header()));
            }
        }
    }
    message.push_str(
        "\nIf you still wish to intercept this unhandled request, create a request handler for it.",
    );
    message
}
