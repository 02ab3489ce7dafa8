//! One request's resolution: the walk down the scope's handler list, the
//! resolver calls, and what an unhandled request prints.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use url::Url;

use crate::body::Body;
use crate::events::{EventKind, Events, LifeCycleEvent, ObservedResponse};
use crate::exchange::ExchangeSink;
use crate::finalize::{FinalizeGuard, Finalizers};
use crate::handler::{Handler, MatchContext, Matched};
use crate::handlers::Scope;
use crate::index::RequestKeys;
use crate::journal::{Answer, DEFAULT_CAPACITY};
use crate::request::Request;
use crate::resolver::{CallContext, CallState, RequestId, Resolution, ResolverError};
use crate::response::{HttpResponse, Kind};
use std::time::{Instant, SystemTime};

use super::options::{InterceptOptions, UnhandledRequest};
use super::outcome::{NetworkError, NetworkErrorKind, Outcome, Passthrough};
use crate::log::panic_message;

/// One resolution: the scope, the events and the options it runs with.
pub(super) struct Lookup {
    pub(super) scope: Arc<Scope>,
    pub(super) events: Events,
    pub(super) options: Arc<InterceptOptions>,
    /// The base URL the lookup matched with (the front door's, else the
    /// options'), kept with each journal entry for `requests_matching`.
    pub(super) base_url: Option<Arc<Url>>,
    pub(super) recorder: Option<Arc<dyn ExchangeSink>>,
    /// The contracts attached to the server (usually none).
    pub(super) contracts: Arc<[crate::contract::Attached]>,
    /// The journal number of the entry last written, for findings about an
    /// answer that comes later (a request performed for real).
    pub(super) last_recorded: std::cell::Cell<Option<u64>>,
}

impl Lookup {
    /// Writes the request into the scope's journal.
    fn record(&self, request: &Request, handler: Option<&Handler>, answer: Answer) {
        self.record_with(request, handler, answer, None);
    }

    /// Writes the request into the scope's journal with the typed values a
    /// mocked response carries ([`HttpResponse::extension`](crate::HttpResponse::extension)).
    fn record_mocked(&self, request: &Request, handler: &Handler, response: &http::Response<Body>) {
        let answer = Answer::Mocked(response.status());
        self.record_with(request, Some(handler), answer, Some(response.extensions()));
    }

    fn record_with(
        &self,
        request: &Request,
        handler: Option<&Handler>,
        answer: Answer,
        extensions: Option<&http::Extensions>,
    ) {
        let capacity = self.options.journal_capacity.unwrap_or(DEFAULT_CAPACITY);
        let sequence = self.scope.record(
            capacity,
            request,
            handler,
            answer,
            self.base_url.as_ref(),
            extensions,
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
        let answered = crate::contract::Answered {
            request,
            status: response.status(),
            headers: response.headers(),
            body: response.body().as_bytes().map(|bytes| &bytes[..]),
            base_url: self.base_url.as_deref(),
        };
        let (findings, strict) = crate::contract::check(&self.contracts, &answered);
        if findings.is_empty() {
            return response;
        }
        for finding in &findings {
            crate::log::warn(&format!(
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
            .remove::<crate::contract::Findings>();
        if strict {
            response = crate::contract::strict_answer(&findings);
        }
        let all = match earlier {
            Some(earlier) => earlier.0.iter().cloned().chain(findings).collect(),
            None => findings,
        };
        response
            .extensions_mut()
            .insert(crate::contract::Findings(Arc::new(all)));
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
        let sink = match (self.contracts.is_empty(), self.last_recorded.get()) {
            (false, Some(sequence)) => Some(Arc::new(super::checked::CheckedSink {
                contracts: Arc::clone(&self.contracts),
                inner: self.recorder.clone(),
                scope: Arc::clone(&self.scope),
                sequence,
                base_url: self.base_url.clone(),
            }) as Arc<dyn ExchangeSink>),
            _ => self.recorder,
        };
        Outcome::Passthrough(Passthrough {
            request,
            request_id: Some(request_id),
            events: self.events,
            recording: sink.map(|sink| (sink, SystemTime::now(), Instant::now())),
        })
    }

    pub(super) async fn resolve(
        mut self,
        request: Request,
        door_base_url: Option<Arc<Url>>,
    ) -> Outcome {
        let request_id = RequestId::next();
        self.emit(EventKind::RequestStart, &request, request_id);

        let base_url = door_base_url.or_else(|| self.options.base_url.clone());
        self.base_url.clone_from(&base_url);
        let context = MatchContext::new(&request, request_id, base_url.as_deref());
        let handlers = self.scope.snapshot();
        let mut matched = false;
        let keys = RequestKeys::new(request.method(), request.url_parts());
        for handler in handlers.candidates(&keys, &context) {
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
            // takes it, also when this future is dropped mid-resolver.
            let finalize = call.finalizers.guard();
            let resolution = run_resolver(found, call).await;
            // Every other answer counts the use with its journal entry
            // (one lock, not two): each records with the handler.
            match resolution {
                Resolution::Exhausted => self.scope.exhaust(handler),
                Resolution::Fallthrough => {
                    self.scope.count_use(handler);
                    matched = true;
                }
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
                    if !self.contracts.is_empty() {
                        response = self.check_contracts(&request, handler, response);
                    }
                    response.body_mut().finalize_with(finalize);
                    self.record_mocked(&request, handler, &response);
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
            let base_url = self.options.base_url.as_deref();
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
        if self.recorder.is_some() {
            // Recording: what no handler answers is what is to be recorded.
            self.emit(EventKind::RequestUnhandled, &request, request_id);
            self.emit(EventKind::RequestEnd, &request, request_id);
            return self.passthrough(request, request_id);
        }
        let failure = match &self.options.on_unhandled_request {
            UnhandledRequest::Bypass => None,
            UnhandledRequest::Warn => {
                crate::log::warn(&unhandled_message(
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
                crate::log::error(&message);
                Some(message)
            }
            UnhandledRequest::Strict => {
                let message =
                    unhandled_message(&request, handlers, matched, self.base_url.as_deref());
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
            // A gRPC client expects what a gRPC server answers a method it
            // does not serve, not a broken connection.
            #[cfg(feature = "grpc")]
            Some(message) if crate::grpc::is_call(&request) => {
                Outcome::Mocked(crate::grpc::unimplemented(&message))
            }
            Some(message) => Outcome::NetworkError(NetworkError {
                kind: NetworkErrorKind::Unhandled,
                fault: None,
                message,
            }),
        }
    }
}

/// Runs a matched handler's resolver; a panic becomes a failure.
async fn run_resolver(matched: Matched, call: CallContext) -> Resolution {
    let call = match std::panic::catch_unwind(AssertUnwindSafe(|| (matched.0)(call))) {
        Ok(call) => call,
        Err(panic) => return panicked(&*panic),
    };
    match call.0 {
        CallState::Ready(resolution) => resolution,
        CallState::Pending(future) => match crate::log::catch_unwind(future).await {
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
    handlers: &crate::handlers::HandlerChain,
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
    let closest = crate::suggest::closest_handlers(request, handlers.iter());
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
