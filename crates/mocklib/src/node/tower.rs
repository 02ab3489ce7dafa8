//! The `tower` front door: a [`Layer`] that answers requests from the
//! server's handlers and passes the rest to the service it wraps.
//!
//! Any client built on `tower::Service<http::Request<_>>` — a hyper-util
//! client, an axum app under test, a tower stack of your own — gets the
//! handlers in front of it:
//!
//! ```
//! use bytes::Bytes;
//! use http_body_util::{BodyExt, Full};
//! use mocklib::{http, HttpResponse, node::setup_server};
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
//! server.listen();
//! // `service()` has no real network behind it; wrap a client with `layer()` for passthrough.
//! let client = server.service();
//! let request = ::http::Request::get("https://api.example.com/user").body(Full::new(Bytes::new()))?;
//! let response = client.oneshot(request).await?;
//! assert_eq!(response.into_body().collect().await?.to_bytes(), "John");
//! # Ok(())
//! # }
//! ```
//!
//! The request's scope is the boundary current when `call` is made.
//! A request to pass on that cannot become an `http::Request` for the inner
//! service (its URL is over the 65,534 bytes of a URI once percent-encoded)
//! is answered by the layer itself: `414 URI Too Long` with a text body
//! saying why (see [`UnsendableRequestError`](crate::request::UnsendableRequestError)).
//! A network error ([`HttpResponse::error`](crate::HttpResponse::error), a
//! [`HttpResponse::fault`](crate::HttpResponse::fault) that replaces the
//! answer, or the "error" unhandled strategy) is the service's `Err`, a boxed
//! [`NetworkError`](crate::front_door::NetworkError); a body fault is an error of the
//! response body (see [`Fault`](crate::Fault)). A gRPC call gets a gRPC
//! status instead where the layer answers itself: `UNIMPLEMENTED` when
//! [`Server::service`] has nothing behind it for a call no handler answers,
//! `RESOURCE_EXHAUSTED` for the `414` (see the [`grpc`](crate::grpc) module
//! docs).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use futures_util::StreamExt;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use tower_layer::Layer;
use tower_service::Service;

// Only mocklib's public surface: a front door outside the crate is written
// the same way (see `crate::front_door`).
use super::Server;
use crate::front_door::{FrontDoor, Outcome};
use crate::message::exchange::Tap;
use crate::message::request::Request;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
impl Server {
    /// A [`Layer`] that puts this server's handlers in front of a service
    /// taking `http::Request<Full<Bytes>>`; passthrough requests go to that
    /// service.
    pub fn layer(&self) -> MockLayer {
        MockLayer {
            door: self.front_door(),
        }
    }

    /// A service answering from the handlers alone. Requests to perform as
    /// they are fail with a [`NoUpstream`] error; use [`Server::layer`] to
    /// wrap a real client instead.
    pub fn service(&self) -> MockService<NoUpstream> {
        self.layer().layer(NoUpstream)
    }
}

/// Wraps a service in a [`MockService`]; made by [`Server::layer`].
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[derive(Clone, Debug)]
pub struct MockLayer {
    door: FrontDoor,
}

impl<S> Layer<S> for MockLayer {
    type Service = MockService<S>;

    fn layer(&self, inner: S) -> MockService<S> {
        MockService {
            door: self.door.clone(),
            inner,
        }
    }
}

/// A service answering from the server's handlers, passing requests through
/// to `S`.
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[derive(Clone, Debug)]
pub struct MockService<S> {
    door: FrontDoor,
    inner: S,
}

impl<S, B, ResBody> Service<http::Request<B>> for MockService<S>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    S: Service<http::Request<Full<Bytes>>, Response = http::Response<ResBody>>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    ResBody: Body<Data = Bytes>,
    ResBody::Error: Into<BoxError>,
{
    type Response = http::Response<MockBody<ResBody>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Readiness of the inner service is awaited only when a request is
        // actually passed through.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        // The scope is the caller's, taken now: `call` runs in the caller's task.
        let scope = self.door.scope();
        let inner = self.inner.clone();
        Box::pin(async move {
            let request = incoming(request).await?;
            match scope.resolve(request, None).await {
                Outcome::Mocked(response) => Ok(response.map(MockBody::mocked)),
                Outcome::NetworkError(error) => Err(error.into()),
                #[cfg(feature = "ws")]
                Outcome::WebSocket(upgrade) => Err(
                    crate::front_door::NetworkError::cannot_upgrade(&upgrade, "the tower service")
                        .into(),
                ),
                Outcome::Passthrough(passthrough) => {
                    let outgoing = match passthrough.request().to_http() {
                        Ok(outgoing) => outgoing,
                        Err(error) => return Ok(unsendable(passthrough.request(), &error)),
                    };
                    // The inner service takes a buffered body: a streamed
                    // one (a gRPC call's) is read in full first.
                    let outgoing = if passthrough.request().is_body_streamed() {
                        let body = read_all(passthrough.request()).await?;
                        outgoing.map(|_| Full::new(body))
                    } else {
                        outgoing.map(Full::new)
                    };
                    let response = match call_ready(inner, outgoing).await {
                        Ok(response) => response,
                        Err(error) => return nothing_behind(passthrough.request(), error),
                    };
                    let capture = passthrough.capture(
                        response.status(),
                        response.version(),
                        response.headers(),
                    );
                    passthrough.report_response(response.status(), response.headers());
                    Ok(response.map(|body| MockBody::passthrough(Tap::new(body, capture))))
                }
            }
        })
    }
}

/// The canonical request: a gRPC call's body streamed as it arrives (its
/// client may wait for replies before it sends more), any other read in full.
async fn incoming<B>(request: http::Request<B>) -> Result<Request, BoxError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();
    if crate::message::request::is_grpc_content(&parts.headers) {
        let head = Request::from_http(http::Request::from_parts(parts, Bytes::new()), "http")?;
        let chunks = body.into_data_stream().map(|data| {
            data.map(|mut data| data.copy_to_bytes(data.remaining()))
                .map_err(Into::<BoxError>::into)
        });
        return Ok(head.with_body_stream(chunks));
    }
    let body = body.collect().await.map_err(Into::into)?.to_bytes();
    Ok(Request::from_http(
        http::Request::from_parts(parts, body),
        "http",
    )?)
}

/// A streamed body, read in full.
async fn read_all(request: &Request) -> Result<Bytes, BoxError> {
    let mut chunks = request.body_chunks();
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(&chunk?);
    }
    Ok(body.freeze())
}

/// The answer to a request to pass on that cannot become an
/// `http::Request` (its URL is too long once encoded, say): the status of
/// [`UnsendableRequestError::status_code`](crate::request::UnsendableRequestError::status_code)
/// with a text body saying why (a gRPC call: `RESOURCE_EXHAUSTED`, see
/// `crate::message::rpc`). The inner service never sees it.
fn unsendable<B>(
    request: &Request,
    error: &crate::message::request::UnsendableRequestError,
) -> http::Response<MockBody<B>> {
    let call = crate::message::rpc::call_error(
        request.method(),
        request.headers(),
        crate::message::rpc::Code::ResourceExhausted,
        || {
            format!(
                "mocklib could not pass the call on: {}",
                request.unsendable_message(error).trim_end()
            )
        },
    );
    if let Some(call) = call {
        return call.map(MockBody::mocked);
    }
    let mut response =
        http::Response::new(MockBody::mocked(request.unsendable_message(error).into()));
    *response.status_mut() = error.status_code();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The inner service's error for a request it was to perform; but a call
/// (gRPC) that [`NoUpstream`] cannot pass on is answered `UNIMPLEMENTED`
/// (see `crate::message::rpc`): no handler answered it and nothing is behind this
/// service, so to its client the method is one the server does not serve.
/// A real inner service's errors are its own, passed on as they are.
fn nothing_behind<B>(
    request: &Request,
    error: BoxError,
) -> Result<http::Response<MockBody<B>>, BoxError> {
    if !error.is::<NoUpstreamError>() {
        return Err(error);
    }
    let call = crate::message::rpc::call_error(
        request.method(),
        request.headers(),
        crate::message::rpc::Code::Unimplemented,
        || {
            format!(
                "mocklib: no handler answered the call {}, and nothing is behind this service: {error}",
                request.url_parts().path()
            )
        },
    );
    match call {
        Some(call) => Ok(call.map(MockBody::mocked)),
        None => Err(error),
    }
}

async fn call_ready<S, R>(mut service: S, request: R) -> Result<S::Response, BoxError>
where
    S: Service<R>,
    S::Error: Into<BoxError>,
{
    std::future::poll_fn(|cx| service.poll_ready(cx))
        .await
        .map_err(Into::into)?;
    service.call(request).await.map_err(Into::into)
}

pin_project_lite::pin_project! {
    /// The response body of a [`MockService`]: a mocked body, or the wrapped
    /// service's own body streamed through.
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub struct MockBody<B> {
        #[pin]
        source: Source<B>,
    }
}

pin_project_lite::pin_project! {
    #[project = SourceProjection]
    enum Source<B> {
        Mocked { #[pin] body: crate::Body },
        Passthrough { #[pin] body: Tap<B> },
    }
}

impl<B> std::fmt::Debug for MockBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_mocked() {
            "MockBody::Mocked"
        } else {
            "MockBody::Passthrough"
        })
    }
}

impl<B> MockBody<B> {
    fn mocked(body: crate::Body) -> Self {
        MockBody {
            source: Source::Mocked { body },
        }
    }

    fn passthrough(body: Tap<B>) -> Self {
        MockBody {
            source: Source::Passthrough { body },
        }
    }

    /// Whether this body is a mocked response's.
    pub fn is_mocked(&self) -> bool {
        matches!(self.source, Source::Mocked { .. })
    }
}

impl<B> Body for MockBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.project().source.project() {
            SourceProjection::Mocked { body } => body.poll_frame(cx).map_err(Into::into),
            SourceProjection::Passthrough { body } => body.poll_frame(cx).map_err(Into::into),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.source {
            Source::Mocked { body } => body.is_end_stream(),
            Source::Passthrough { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.source {
            Source::Mocked { body } => body.size_hint(),
            Source::Passthrough { body } => body.size_hint(),
        }
    }
}

/// The inner service of [`Server::service`]: there is no real network
/// behind it, so a request to perform as it is fails, saying so.
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[derive(Clone, Copy, Debug, Default)]
pub struct NoUpstream;

/// The error [`NoUpstream`] fails with.
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot perform {method} {uri} as it is: this mocklib service has no inner service \
     (wrap a real client with `server.layer()`), or add a handler for it"
)]
pub struct NoUpstreamError {
    method: http::Method,
    uri: http::Uri,
}

impl Service<http::Request<Full<Bytes>>> for NoUpstream {
    type Response = http::Response<Full<Bytes>>;
    type Error = NoUpstreamError;
    type Future = std::future::Ready<Result<Self::Response, NoUpstreamError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), NoUpstreamError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Full<Bytes>>) -> Self::Future {
        std::future::ready(Err(NoUpstreamError {
            method: request.method().clone(),
            uri: request.uri().clone(),
        }))
    }
}
