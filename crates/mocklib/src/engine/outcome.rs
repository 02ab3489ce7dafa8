//! What the engine answers a front door: a response to send, a request to
//! perform for real, a network error, or an accepted WebSocket.

use std::sync::Arc;

use http::HeaderMap;

use crate::engine::events::{EventKind, Events, LifeCycleEvent, ObservedResponse};
use crate::handling::resolver::RequestId;
use crate::message::body::Body;
use crate::message::exchange::{Capture, ExchangeSink};
use crate::message::fault::Fault;
use crate::message::request::Request;
#[cfg(feature = "ws")]
use crate::message::upgrade::WebSocketUpgrade;
use std::time::{Instant, SystemTime};

/// How the engine answered a request.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// Send this response (its status text: [`StatusText::of`](crate::response::StatusText::of)).
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
    pub(super) request: Request,
    pub(super) request_id: Option<RequestId>,
    pub(super) events: Events,
    /// Where the exchange goes when a recording is on, and when it started.
    pub(super) recording: Option<(Arc<dyn ExchangeSink>, SystemTime, Instant)>,
}

impl Passthrough {
    /// A capture of the real response when a recording is on (`None`
    /// otherwise): the front door that performed the request feeds it the
    /// response body as its client reads it, most simply by wrapping the
    /// body in a [`Tap`](crate::exchange::Tap), and the exchange is recorded
    /// once the body ended. Call it with the real response's head, before
    /// [`report_response`](Self::report_response).
    pub fn capture(
        &self,
        status: http::StatusCode,
        version: http::Version,
        headers: &HeaderMap,
    ) -> Option<Capture> {
        let (sink, started, at) = self.recording.as_ref()?;
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
    pub(super) kind: NetworkErrorKind,
    pub(super) message: String,
    pub(super) fault: Option<Fault>,
}

/// The reason behind a [`NetworkError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetworkErrorKind {
    /// A resolver returned [`HttpResponse::error()`](crate::HttpResponse::error) or a
    /// [`HttpResponse::fault`](crate::HttpResponse::fault) ([`NetworkError::fault`] says which).
    Mocked,
    /// No handler matched and the strategy is [`UnhandledRequest::Error`](crate::UnhandledRequest::Error)
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
    /// [`HttpResponse::error()`](crate::HttpResponse::error) and the other kinds.
    ///
    /// ```
    /// # fn check(error: &mocklib::front_door::NetworkError) {
    /// if error.fault() == Some(mocklib::Fault::ConnectionReset) {
    ///     println!("the mock reset the connection");
    /// }
    /// # }
    /// ```
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    /// The error of a front door (named `front_door` in the message, "the
    /// tower service") that cannot carry the WebSocket a handler accepted
    /// with `upgrade`: an in-process one. Logs why, once.
    #[cfg(feature = "ws")]
    pub fn cannot_upgrade(upgrade: &WebSocketUpgrade, front_door: &str) -> Self {
        crate::support::log::error(&format!(
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
