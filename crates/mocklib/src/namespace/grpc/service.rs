//! A whole gRPC service as one handler: a tonic-generated server (or any
//! tower service that speaks gRPC) answering every method of its service.

use std::future::poll_fn;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use http::Method;

use super::handler::status_only;
use super::protocol::Incoming;
use super::{Code, Status};
use crate::handling::handler::{Handler, HandlerKind, IndexHint, MatchContext, Matched};
use crate::handling::resolver::{Resolution, ResolverCall};
use crate::matching::{PatternError, Predicate};
use crate::message::body::Body;
use crate::message::response::HttpResponse;
use crate::support::maybe_send::MaybeSend;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A handler answering every method of the gRPC service `name`
/// (`"helloworld.Greeter"`) with `service`: a tonic-generated server
/// (`GreeterServer::new(MyGreeter)`), so a team reuses the fake it already
/// has, and still overrides single methods per test with `grpc::unary` and
/// friends ahead of it (`server.use_handlers`, boundaries).
///
/// The service gets each call as an `http::Request<mocklib::Body>` whose
/// body streams as the client sends it, and answers as tonic's generated
/// servers do (a method the service does not know ends with its
/// `UNIMPLEMENTED`). `name` must be the service's full name, as in the
/// `.proto` file's package and service (tonic's `NamedService::NAME`).
///
/// ```ignore
/// let server = setup_server([grpc::service("helloworld.Greeter", GreeterServer::new(FakeGreeter))]);
/// // One test answers SayHello its own way; every other method stays the fake's.
/// server.use_handlers([grpc::unary("helloworld.Greeter/SayHello", |_: ResolverArgs<HelloRequest>| {
///     Err::<HelloReply, _>(Status::new(Code::Unavailable, "down for this test"))
/// })]);
/// ```
///
/// # Panics
/// When `name` is not `package.Service`.
#[track_caller]
pub fn service<S, B>(name: &str, service: S) -> Handler
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: MaybeSend + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    try_service(name, service).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`service`], returning an invalid service name as an error.
pub fn try_service<S, B>(name: &str, service: S) -> Result<Handler, PatternError>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: MaybeSend + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let valid = !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_'));
    if !valid {
        return Err(PatternError {
            pattern: name.to_owned(),
            position: 0,
            reason: "a gRPC service is `package.Service` (letters, digits, `_` and `.`)".to_owned(),
        });
    }
    let prefix = format!("/{name}/");
    Ok(Handler::new(ServiceHandler {
        header: format!("grpc service {name}"),
        predicate: Predicate::path(&format!("*{prefix}*"))?,
        prefix,
        service: Mutex::new(service),
    }))
}

struct ServiceHandler<S> {
    header: String,
    /// `/package.Service/`: what suggestions compare request paths with.
    prefix: String,
    predicate: Predicate,
    /// Cloned for each call, as tower services are: the lock only makes
    /// a service that is `Send` but not `Sync` shareable.
    service: Mutex<S>,
}

impl<S, B> HandlerKind for ServiceHandler<S>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: MaybeSend + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn header(&self) -> &str {
        &self.header
    }

    fn method(&self) -> Option<&Method> {
        // POST, but also a Connect GET and a browser's CORS preflight.
        None
    }

    fn suggestion_text(&self) -> Option<&str> {
        Some(&self.prefix)
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::of_predicate(&self.predicate)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        let request = context.request();
        if !super::protocol::may_be_call(request.method()) {
            return None;
        }
        if !request.url_parts().path().starts_with(&self.prefix) {
            self.predicate.matches(request, context.base_url())?;
        }
        // gRPC-Web and Connect calls reach the service as gRPC calls, as
        // tonic-web hands them to a tonic server.
        let path = request.url_parts().path().to_owned();
        let (request, back) = match super::protocol::incoming(request, &path, context) {
            Incoming::Grpc => (request.clone(), None),
            Incoming::Translated(request, back) => (request, Some(back)),
            Incoming::Answered(answer) => {
                return Some(Matched::new(move |_| {
                    ResolverCall::ready(Resolution::Respond(answer))
                }));
            }
            Incoming::NotACall => return None,
        };
        let outgoing = request.to_http_body();
        let service = self
            .service
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Some(Matched::new(move |_call| {
            let call = ResolverCall::new(async move {
                Resolution::Respond(match outgoing {
                    Ok(outgoing) => call(service, outgoing).await,
                    Err(error) => status_only(&Status::new(Code::Internal, error.to_string())),
                })
            });
            match back {
                Some(back) => back.answer(call),
                None => call,
            }
        }))
    }
}

async fn call<S, B>(mut service: S, request: http::Request<Body>) -> HttpResponse
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let failed = |error: S::Error| {
        let error: BoxError = error.into();
        status_only(&Status::new(
            Code::Internal,
            format!("the mounted service failed: {error}"),
        ))
    };
    if let Err(error) = poll_fn(|cx| service.poll_ready(cx)).await {
        return failed(error);
    }
    match service.call(request).await {
        Ok(response) => HttpResponse::from_body(response.map(Body::from_http_body)),
        Err(error) => failed(error),
    }
}
