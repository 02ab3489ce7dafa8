//! What the engine answers a front door: a response to send, a request to
//! perform for real, a network error, or an accepted WebSocket.

#[cfg(feature = "har")]
use std::sync::Arc;

use http::HeaderMap;

use crate::body::Body;
use crate::events::{EventKind, Events, LifeCycleEvent, ObservedResponse};
#[cfg(not(target_arch = "wasm32"))]
use crate::exchange::Capture;
#[cfg(feature = "har")]
use crate::exchange::ExchangeSink;
use crate::fault::Fault;
use crate::request::Request;
use crate::resolver::RequestId;
#[cfg(feature = "ws")]
use crate::upgrade::WebSocketUpgrade;
#[cfg(feature = "har")]
use std::time::{Instant, SystemTime};

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
    pub(super) request: Request,
    pub(super) request_id: Option<RequestId>,
    pub(super) events: Events,
    /// Where the exchange goes when a recording is on, and when it started.
    #[cfg(feature = "har")]
    #[cfg_attr(
        any(
            target_arch = "wasm32",
            not(any(feature = "net", feature = "reqwest", feature = "reqwest-0-12", feature = "tower"))
        ),
        allow(dead_code) // read by the native front doors that perform requests
    )]
    pub(super) recording: Option<(Arc<dyn ExchangeSink>, SystemTime, Instant)>,
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
