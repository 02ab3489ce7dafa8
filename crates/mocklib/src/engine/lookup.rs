//! One request's resolution: the walk down the scope's handler list, the
//! resolver calls, and what an unhandled request prints.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};

use url::Url;

use crate::engine::events::{EventKind, Events, LifeCycleEvent, ObservedResponse};
use crate::engine::index::RequestKeys;
use crate::engine::journal::{AnswerSummary, DEFAULT_CAPACITY};
use crate::engine::list::HandlerChain;
use crate::engine::list::Scope;
use crate::handling::handler::{Found, Handler, MatchContext, Matched};
use crate::handling::resolver::{CallContext, CallState, RequestId, Resolution, ResolverError};
use crate::message::body::Body;
use crate::message::exchange::ExchangeSink;
use crate::message::finalize::{FinalizeGuard, Finalizers};
use crate::message::request::Request;
use crate::message::response::{HttpResponse, JournalValues, Kind};
use crate::message::rpc::{Code, Rpc};
use crate::support::maybe_send::BoxFuture;
use std::time::{Instant, SystemTime};

use super::options::{InterceptOptions, UnhandledRequest};
use super::outcome::{NetworkError, NetworkErrorKind, Outcome, Passthrough};
use crate::support::log::panic_message;

/// One resolution: the scope, the events and the options it runs with.
pub(super) struct Lookup {
    pub(super) scope: Arc<Scope>,
    pub(super) events: Events,
    pub(super) options: Arc<InterceptOptions>,
    /// The base URL the lookup matched with (the front door's, else the
    /// options'), kept with each journal entry for `requests_matching`.
    pub(super) base_url: Option<Arc<Url>>,
    /// The recorder and the contracts (usually none) to answer with.
    pub(super) hooks: Arc<super::hooks::Hooks>,
    /// The journal number of the entry last written, for findings about an
    /// answer that comes later (a request performed for real).
    pub(super) last_recorded: std::cell::Cell<Option<u64>>,
}

impl Lookup {
    /// Writes the request into the scope's journal.
    fn record(&self, request: &Request, handler: Option<&Handler>, answer: AnswerSummary) {
        self.record_with(request, handler, answer, JournalValues::default());
    }

    /// Writes the request into the scope's journal with the typed values a
    /// mocked response carries ([`HttpResponse::extension`](crate::HttpResponse::extension))
    /// and those it had for the journal alone (`journal`).
    fn record_mocked(
        &self,
        request: &Request,
        handler: &Handler,
        response: &http::Response<Body>,
        mut journal: JournalValues,
    ) {
        let answer = AnswerSummary::Mocked(response.status());
        if !response.extensions().is_empty() {
            journal.extensions.extend(response.extensions().clone());
        }
        self.record_with(request, Some(handler), answer, journal);
    }

    fn record_with(
        &self,
        request: &Request,
        handler: Option<&Handler>,
        answer: AnswerSummary,
        journal: JournalValues,
    ) {
        let capacity = if handler.is_some_and(|handler| !handler.is_journaled()) {
            // Counted for its expectation, kept out of the journal.
            0
        } else {
            self.options.journal_capacity.unwrap_or(DEFAULT_CAPACITY)
        };
        let sequence = self.scope.record(
            capacity,
            request,
            handler,
            answer,
            self.base_url.as_ref(),
            journal,
        );
        self.last_recorded.set(sequence);
    }

    /// Checks a mocked answer against the attached contracts: the findings
    /// go with it into the journal (after any the handler kept itself) and
    /// are logged; a strict contract's findings replace it with a `500`
    /// that lists them.
    fn check_contracts(
        &self,
        request: &Request,
        handler: &Handler,
        mut response: http::Response<Body>,
    ) -> http::Response<Body> {
        let answered = crate::handling::contract::Answered {
            request,
            status: response.status(),
            headers: response.headers(),
            body: response.body().as_bytes().map(|bytes| &bytes[..]),
            base_url: self.base_url.as_deref(),
        };
        let (findings, strict) = crate::handling::contract::check(&self.hooks.contracts, &answered);
        if findings.is_empty() {
            return response;
        }
        for finding in &findings {
            crate::support::log::warn(&format!(
                "{} {} (answered by {}) breaks a contract: {finding}",
                request.method(),
                request.url(),
                handler.header()
            ));
        }
        // Findings the handler kept itself (an OpenAPI document reporting
        // invalid requests) come first, then the contracts'.
        let earlier = response
            .extensions_mut()
            .remove::<crate::handling::contract::Findings>();
        if strict {
            // A gRPC call's client reads a status, not the JSON of a 500.
            let internal = crate::message::rpc::call_error(
                request.method(),
                request.headers(),
                Code::Internal,
                || {
                    format!(
                        "mocklib: the mocked answer to {} breaks the contract: {}",
                        request.url_parts().path(),
                        findings
                            .first()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    )
                },
            );
            response =
                internal.unwrap_or_else(|| crate::handling::contract::strict_answer(&findings));
        }
        let all = match earlier {
            Some(earlier) => earlier.0.iter().cloned().chain(findings).collect(),
            None => findings,
        };
        response
            .extensions_mut()
            .insert(crate::handling::contract::Findings(Arc::new(all)));
        response
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
        // With contracts, the real answer is captured too and checked once
        // whole; the findings join the request's journal entry.
        let sink = match (self.hooks.contracts.is_empty(), self.last_recorded.get()) {
            (false, Some(sequence)) => Some(Arc::new(super::checked::CheckedSink {
                contracts: Arc::clone(&self.hooks.contracts),
                inner: self.hooks.recorder.clone(),
                scope: Arc::clone(&self.scope),
                sequence,
                base_url: self.base_url.clone(),
            }) as Arc<dyn ExchangeSink>),
            _ => self.hooks.recorder.clone(),
        };
        Outcome::Passthrough(Passthrough {
            request,
            request_id: Some(request_id),
            events: self.events,
            recording: sink.map(|sink| (sink, SystemTime::now(), Instant::now())),
        })
    }

    /// Starts resolving `request`: walks the handler list at once, as far as
    /// resolvers answer at once (most do). An async resolver's future is
    /// awaited in the [`Step::Wait`] future, which then walks on.
    pub(super) fn start(
        mut self,
        request: Request,
        door_base_url: Option<Arc<Url>>,
        cx: &mut Context<'_>,
    ) -> Step {
        let request_id = RequestId::next();
        self.emit(EventKind::RequestStart, &request, request_id);
        self.base_url = door_base_url.or_else(|| self.options.base_url.clone());
        let handlers = self.scope.snapshot();
        self.walk(request, request_id, handlers, None, Some(cx))
    }

    /// Asks the candidate handlers in turn, from the first, or after the one
    /// whose resolver `resume` brings the answer of. With `cx`, an async
    /// resolver's future is polled once here (see below).
    fn walk(
        self,
        request: Request,
        request_id: RequestId,
        handlers: HandlerChain,
        resume: Option<Resume>,
        mut cx: Option<&mut Context<'_>>,
    ) -> Step {
        let base_url = self.base_url.as_deref();
        let (context, from, mut matched, mut resumed) = match resume {
            None => (
                MatchContext::new(&request, request_id, base_url).in_scope(self.scope.values()),
                0,
                false,
                None,
            ),
            // With what the walk had found (a GraphQL batch's answers so far).
            Some(resume) => (
                MatchContext::resume(&request, request_id, base_url, resume.found)
                    .in_scope(self.scope.values()),
                resume.position,
                resume.matched,
                Some((resume.resolution, resume.finalize)),
            ),
        };
        let keys = RequestKeys::new(request.method(), request.url_parts());
        // The same every time for this request and snapshot: a resumed walk
        // finds its place again by position.
        let candidates = handlers.candidates(&keys, &context);
        for (position, &handler) in candidates.iter().enumerate().skip(from) {
            let (resolution, finalize) = match resumed.take() {
                Some(answered) => answered,
                None => {
                    if self.scope.is_used(handler) {
                        continue;
                    }
                    let Some(found) = handler.try_match(&context) else {
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
                        values: Some(self.scope.values().clone()),
                    };
                    // Runs the cleanup when dropped: at once unless a mocked body
                    // takes it, also when the lookup is dropped mid-resolver.
                    let finalize = call.finalizers.guard();
                    match start_resolver(found, call) {
                        CallState::Ready(resolution) => (resolution, finalize),
                        CallState::Pending(mut future) => {
                            // Polled once at once: a future that is ready
                            // then (a gRPC call whose message has arrived)
                            // needs no boxed rest of the lookup, nor a
                            // second walk.
                            let polled = match cx.as_deref_mut() {
                                Some(cx) => poll_resolver(&mut future, cx),
                                None => Poll::Pending,
                            };
                            match polled {
                                Poll::Ready(resolution) => (resolution, finalize),
                                Poll::Pending => {
                                    let wait = Wait {
                                        position,
                                        matched,
                                        future,
                                        finalize,
                                        found: context.into_found(),
                                    };
                                    return Step::Wait(Box::pin(self.wait(
                                        request,
                                        request_id,
                                        handlers.clone(),
                                        wait,
                                    )));
                                }
                            }
                        }
                    }
                }
            };
            // Every other answer counts the use with its journal entry
            // (one lock, not two): each records with the handler.
            match resolution {
                Resolution::Exhausted => self.scope.exhaust(handler),
                Resolution::Fallthrough => {
                    self.scope.count_use(handler);
                    matched = true;
                }
                Resolution::Failed(error) => {
                    return Step::Done(self.fail(request, request_id, handler, error));
                }
                Resolution::Respond(response) => {
                    return Step::Done(
                        self.respond(request, request_id, handler, response, finalize),
                    );
                }
                #[cfg(feature = "ws")]
                Resolution::Upgrade(upgrade) => {
                    self.record(&request, Some(handler), AnswerSummary::WebSocket);
                    self.emit(EventKind::RequestMatch, &request, request_id);
                    self.emit(EventKind::RequestEnd, &request, request_id);
                    return Step::Done(Outcome::WebSocket(upgrade));
                }
            }
        }
        if matched && !self.options.fallthrough_is_unhandled {
            // Matched, but nobody answered: performed as it is, still handled.
            self.record(&request, None, AnswerSummary::Passthrough);
            self.emit(EventKind::RequestEnd, &request, request_id);
            return Step::Done(self.passthrough(request, request_id));
        }
        Step::Done(self.unhandled(request, request_id, &handlers, matched))
    }

    /// Awaits an async resolver, then walks on from it.
    async fn wait(
        self,
        request: Request,
        request_id: RequestId,
        handlers: HandlerChain,
        wait: Wait,
    ) -> Outcome {
        let resolution = match crate::support::log::catch_unwind(wait.future).await {
            Ok(resolution) => resolution,
            Err(panic) => panicked(&*panic),
        };
        let resume = Resume {
            position: wait.position,
            matched: wait.matched,
            resolution,
            finalize: wait.finalize,
            found: wait.found,
        };
        match self.walk(request, request_id, handlers, Some(resume), None) {
            Step::Done(outcome) => outcome,
            Step::Wait(next) => next.await,
        }
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
                self.record(&request, Some(handler), AnswerSummary::Passthrough);
                self.emit(EventKind::RequestEnd, &request, request_id);
                self.passthrough(request, request_id)
            }
            Kind::NetworkError => {
                self.record(&request, Some(handler), AnswerSummary::NetworkError);
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
            Kind::Mock => {
                let mut response = response;
                let journal = response.take_journal();
                match response.into_http() {
                    Ok(mut response) => {
                        // A real HEAD response never has a body; its headers
                        // (Content-Length included) describe the GET response.
                        if request.method() == http::Method::HEAD {
                            *response.body_mut() = Body::empty();
                        }
                        if !self.hooks.contracts.is_empty() {
                            response = self.check_contracts(&request, handler, response);
                        }
                        response.body_mut().finalize_with(finalize);
                        self.record_mocked(&request, handler, &response, journal);
                        self.emit(EventKind::RequestMatch, &request, request_id);
                        self.emit(EventKind::RequestEnd, &request, request_id);
                        self.emit_response(
                            EventKind::ResponseMocked,
                            &request,
                            request_id,
                            &response,
                        );
                        Outcome::Mocked(response)
                    }
                    Err(message) => {
                        let error = ResolverError {
                            name: "InvalidResponse".to_owned(),
                            message,
                        };
                        self.fail(request, request_id, handler, error)
                    }
                }
            }
        }
    }

    /// A resolver failed: 500 "Unhandled Exception" with `{name, message}`
    /// (a gRPC call: `INTERNAL`, with the same words).
    fn fail(
        self,
        request: Request,
        request_id: RequestId,
        handler: &Handler,
        error: ResolverError,
    ) -> Outcome {
        let (response, answered) = failure_answer(&request, handler, &error);
        crate::support::log::error(&format!(
            "the resolver of {} failed for {} {}: {error}. The request gets {answered}.",
            handler.header(),
            request.method(),
            request.url(),
        ));
        self.events
            .emit(EventKind::UnhandledException, || LifeCycleEvent {
                kind: EventKind::UnhandledException,
                request: request.clone(),
                request_id,
                response: None,
                error: Some(error.clone()),
            });
        self.record(
            &request,
            Some(handler),
            AnswerSummary::Mocked(response.status()),
        );
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
        handlers: &crate::engine::list::HandlerChain,
        message: &str,
    ) {
        let closest = crate::engine::suggest::closest_handlers(request, handlers.iter());
        let mut failure = message.to_owned();
        if !closest.is_empty() {
            let base_url = self.options.base_url.as_deref();
            failure.push_str("\n\n");
            failure.push_str(&crate::engine::verify::closest_handler_differences(
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
        handlers: &crate::engine::list::HandlerChain,
        matched: bool,
    ) -> Outcome {
        self.record(&request, None, AnswerSummary::Unhandled);
        if self.hooks.recorder.is_some() {
            // Recording: what no handler answers is what is to be recorded.
            self.emit(EventKind::RequestUnhandled, &request, request_id);
            self.emit(EventKind::RequestEnd, &request, request_id);
            return self.passthrough(request, request_id);
        }
        let failure = match &self.options.on_unhandled_request {
            UnhandledRequest::Bypass => None,
            UnhandledRequest::Warn => {
                crate::support::log::warn(&unhandled_message(
                    &request,
                    handlers,
                    matched,
                    self.base_url.as_deref(),
                ));
                None
            }
            UnhandledRequest::Error => {
                let message =
                    unhandled_message(&request, handlers, matched, self.base_url.as_deref());
                crate::support::log::error(&message);
                Some(message)
            }
            UnhandledRequest::Strict => {
                let message =
                    unhandled_message(&request, handlers, matched, self.base_url.as_deref());
                crate::support::log::error(&message);
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
            // A gRPC client expects what a gRPC server answers a method it
            // does not serve, not a broken connection: `UNIMPLEMENTED`,
            // the message naming the call and the closest handlers.
            Some(message) => match Rpc::of_call(request.method(), request.headers()) {
                Some(rpc) => {
                    Outcome::Mocked(rpc.answer(request.headers(), Code::Unimplemented, &message))
                }
                None => Outcome::NetworkError(NetworkError {
                    kind: NetworkErrorKind::Unhandled,
                    fault: None,
                    message,
                }),
            },
        }
    }
}

/// Calls a matched handler's resolver: its answer, or the future of it. A
/// panic becomes a failure.
fn start_resolver(matched: Matched, call: CallContext) -> CallState {
    match std::panic::catch_unwind(AssertUnwindSafe(|| matched.call(call))) {
        Ok(call) => call.0,
        Err(panic) => CallState::Ready(panicked(&*panic)),
    }
}

/// Polls a resolver's future, a panic in it making a failure (as
/// [`Lookup::wait`] does).
fn poll_resolver(
    future: &mut crate::handling::resolver::BoxResolution,
    cx: &mut Context<'_>,
) -> Poll<Resolution> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
        Ok(polled) => polled,
        Err(panic) => Poll::Ready(panicked(&*panic)),
    }
}

/// How far a lookup has come.
pub(crate) enum Step {
    Done(Outcome),
    /// A resolver is still running: the rest of the lookup.
    Wait(BoxFuture<Outcome>),
}

/// An async resolver under way: where its handler is among the candidates.
struct Wait {
    position: usize,
    matched: bool,
    future: crate::handling::resolver::BoxResolution,
    finalize: FinalizeGuard,
    found: Found,
}

/// A walk picking up after the handler at `position`, with its answer.
struct Resume {
    position: usize,
    matched: bool,
    resolution: Resolution,
    finalize: FinalizeGuard,
    found: Found,
}

/// The answer to a request whose resolver failed, and what to call it in
/// the log: MSW's 500 "Unhandled Exception" with `{name, message}`, or for
/// a gRPC call (whose client would read that body as a garbled message)
/// `INTERNAL` with the same words.
fn failure_answer(
    request: &Request,
    handler: &Handler,
    error: &ResolverError,
) -> (http::Response<Body>, &'static str) {
    let internal = crate::message::rpc::call_error(
        request.method(),
        request.headers(),
        Code::Internal,
        || format!("the resolver of {} failed: {error}", handler.header()),
    );
    if let Some(internal) = internal {
        return (internal, "an INTERNAL status");
    }
    let response = HttpResponse::json(error)
        .status(500)
        .status_text("Unhandled Exception")
        .into_http()
        .expect("a ResolverError always serializes");
    (response, "a 500 response")
}

fn panicked(panic: &(dyn std::any::Any + Send)) -> Resolution {
    Resolution::Failed(ResolverError {
        name: "Panic".to_owned(),
        message: panic_message(panic),
    })
}

const MAX_BODY_IN_MESSAGE: usize = 1024;

/// The conditions ([`Handler::when`]) of `handler` that `request` fails,
/// as lines under it; nothing when its kind does not match the request.
fn push_conditions_failed(
    message: &mut String,
    handler: &Handler,
    request: &Request,
    base_url: Option<&Url>,
) {
    for mismatch in handler.mismatches(request, base_url).unwrap_or_default() {
        message.push_str(&format!("      ✗ {mismatch}\n"));
    }
}

fn unhandled_message(
    request: &Request,
    handlers: &crate::engine::list::HandlerChain,
    matched: bool,
    base_url: Option<&Url>,
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
    let body = request.body();
    let shown = &body[..body.len().min(MAX_BODY_IN_MESSAGE)];
    // Binary bodies (protobuf, images) would only print noise.
    if request.is_body_streamed() {
        message.push_str("\n  body: streamed as it arrives (a gRPC call's)\n");
    } else if shown.iter().any(|&b| b < 0x20 && !b"\t\r\n".contains(&b)) {
        message.push_str(&format!("\n  body: {} bytes, binary\n", body.len()));
    } else if !body.is_empty() {
        let ellipsis = if body.len() > MAX_BODY_IN_MESSAGE {
            "…"
        } else {
            ""
        };
        let text = String::from_utf8_lossy(shown);
        message.push_str(&format!("\n  body: {text}{ellipsis}\n"));
    }
    let closest = crate::engine::suggest::closest_handlers(request, handlers.iter());
    match closest.as_slice() {
        [] => {}
        [only] => {
            message.push_str(&format!(
                "\nDid you mean to request \"{}\" instead?\n",
                only.header()
            ));
            push_conditions_failed(&mut message, only, request, base_url);
        }
        several => {
            message
                .push_str("\nDid you mean to request one of the following resources instead?\n\n");
            for handler in several {
                message.push_str(&format!("  • {}\n", handler.header()));
                push_conditions_failed(&mut message, handler, request, base_url);
            }
        }
    }
    message.push_str(
        "\nIf you still wish to intercept this unhandled request, create a request handler for it.",
    );
    message
}
