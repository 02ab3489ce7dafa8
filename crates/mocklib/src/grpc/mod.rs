//! Handlers for gRPC methods (feature `grpc`): the calls of a tonic client,
//! or of any gRPC client, answered with prost messages.
//!
//! gRPC is HTTP/2 with length-prefixed protobuf messages and a status in the
//! trailers. A `grpc` handler sits in the same list as `http` handlers, so
//! `use_handlers`, boundaries, `once`, `times`/`verify`, the journal and
//! life-cycle events apply to calls as to any request:
//!
//! ```
//! use mocklib::grpc::{self, Code, Status};
//!
//! #[derive(Clone, PartialEq, prost::Message)]
//! struct HelloRequest {
//!     #[prost(string, tag = "1")]
//!     name: String,
//! }
//!
//! #[derive(Clone, PartialEq, prost::Message)]
//! struct HelloReply {
//!     #[prost(string, tag = "1")]
//!     message: String,
//! }
//!
//! let handlers = [
//!     grpc::unary("helloworld.Greeter/SayHello", |args: grpc::GrpcArgs<HelloRequest>| {
//!         if args.message.name.is_empty() {
//!             return Err(Status::new(Code::InvalidArgument, "a name, please"));
//!         }
//!         Ok(HelloReply { message: format!("Hello {}!", args.message.name) })
//!     }),
//! ];
//! # let _ = handlers;
//! ```
//!
//! A resolver receives the decoded request message, the request metadata
//! and the client's deadline, and returns `Ok(reply)`, `Err(Status)`, or
//! `None` (wrapped in `Option`) to fall through to the next handler — or a
//! future of one of these. Calls reach the handlers in process through the
//! tower front door, with no socket — a generated client takes it:
//! `GreeterClient::with_origin(server.service(), origin)` — or through the
//! listener: h2c on the base URL ([`Server::url`](crate::node::Server::url)).
//!
//! A request that is not a valid call of the method is answered with the
//! status a gRPC server gives it: a malformed frame or a message that does
//! not decode with `INTERNAL`, a compressed message (mocklib reads
//! `identity` only) with `UNIMPLEMENTED`, more than one message on a unary
//! method with `UNIMPLEMENTED`, each with a message saying why.

mod frame;
mod status;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method};

pub use status::{Code, Status};

use crate::body::Body;
use crate::handler::{Handler, HandlerKind, IndexHint, MatchContext, Matched};
use crate::matching::{PatternError, Predicate};
use crate::maybe_send::MaybeSend;
use crate::request::Request;
use crate::resolver::{CallContext, Resolution, ResolverCall, marker};
use crate::response::HttpResponse;

/// What a gRPC resolver receives. Fields are public so it can be
/// destructured: `|GrpcArgs { message, metadata, .. }|`.
#[derive(Debug)]
#[non_exhaustive]
pub struct GrpcArgs<M> {
    /// The decoded request message.
    pub message: M,
    /// The request metadata (the HTTP/2 request headers).
    pub metadata: HeaderMap,
    /// The client's deadline (`grpc-timeout`), from when the call arrived.
    pub deadline: Option<Duration>,
    /// The HTTP request that carried the call.
    pub request: Request,
    call: CallContext,
}

impl<M> GrpcArgs<M> {
    /// How many times this handler's resolver ran before this call, in the
    /// current scope (see [`ResolverArgs::previous_calls`](crate::ResolverArgs::previous_calls)).
    pub fn previous_calls(&self) -> usize {
        self.call.previous_calls()
    }

    /// Registers `cleanup` to run once this call is answered (see
    /// [`ResolverArgs::finalize`](crate::ResolverArgs::finalize)).
    pub fn finalize(&self, cleanup: impl FnOnce() + Send + 'static) {
        self.call.finalize(cleanup);
    }
}

/// What a gRPC resolver may return for replies of type `R`: `Result<R,
/// Status>`, `Option` of it (`None` falls through), or a future of either.
/// `M` is a marker that is always inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a gRPC resolver's result",
    label = "the resolver returns this",
    note = "a gRPC resolver returns `Ok(reply)`, `Err(Status)`, `None` (wrapped in `Option`: fall through), or a future of one of these"
)]
pub trait GrpcOutput<R, M>: MaybeSend + 'static {
    #[doc(hidden)]
    fn into_answer(self) -> crate::maybe_send::BoxFuture<Option<Result<R, Status>>>;
}

/// A value a gRPC resolver may return directly (see [`GrpcOutput`]).
pub trait IntoGrpcAnswer<R> {
    /// The reply or status; `None` falls through.
    fn into_grpc_answer(self) -> Option<Result<R, Status>>;
}

impl<R> IntoGrpcAnswer<R> for Result<R, Status> {
    fn into_grpc_answer(self) -> Option<Result<R, Status>> {
        Some(self)
    }
}

impl<R> IntoGrpcAnswer<R> for Option<Result<R, Status>> {
    fn into_grpc_answer(self) -> Option<Result<R, Status>> {
        self
    }
}

impl<R: MaybeSend + 'static, T: IntoGrpcAnswer<R> + MaybeSend + 'static> GrpcOutput<R, marker::Sync>
    for T
{
    fn into_answer(self) -> crate::maybe_send::BoxFuture<Option<Result<R, Status>>> {
        Box::pin(std::future::ready(self.into_grpc_answer()))
    }
}

impl<R, F> GrpcOutput<R, marker::Async> for F
where
    R: MaybeSend + 'static,
    F: Future + MaybeSend + 'static,
    F::Output: IntoGrpcAnswer<R>,
{
    fn into_answer(self) -> crate::maybe_send::BoxFuture<Option<Result<R, Status>>> {
        Box::pin(async move { self.await.into_grpc_answer() })
    }
}

/// A handler for the unary method `method` (`"helloworld.Greeter/SayHello"`,
/// the full service name and the method): the resolver gets the request
/// message and returns the reply or a [`Status`]. See the [module docs](self).
///
/// # Panics
/// When `method` is not `package.Service/Method`.
#[track_caller]
pub fn unary<Req, Reply, F, O, M>(method: &str, resolver: F) -> Handler
where
    Req: prost::Message + Default + 'static,
    Reply: prost::Message + MaybeSend + 'static,
    F: Fn(GrpcArgs<Req>) -> O + Send + Sync + 'static,
    O: GrpcOutput<Reply, M>,
{
    try_unary(method, resolver).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`unary`], returning an invalid method name as an error.
pub fn try_unary<Req, Reply, F, O, M>(method: &str, resolver: F) -> Result<Handler, PatternError>
where
    Req: prost::Message + Default + 'static,
    Reply: prost::Message + MaybeSend + 'static,
    F: Fn(GrpcArgs<Req>) -> O + Send + Sync + 'static,
    O: GrpcOutput<Reply, M>,
{
    let path = method_path(method)?;
    let resolver = Arc::new(resolver);
    let respond: Arc<Respond> = Arc::new(move |request: Request, call: CallContext| {
        let message = match frame::unary_message::<Req>(&request) {
            Ok(message) => message,
            Err(status) => return ResolverCall::ready(Resolution::Respond(status_only(&status))),
        };
        let args = GrpcArgs {
            message,
            metadata: request.headers().clone(),
            deadline: request
                .header("grpc-timeout")
                .and_then(frame::parse_timeout),
            request,
            call,
        };
        let answer = resolver(args).into_answer();
        ResolverCall::new(async move {
            match answer.await {
                None => Resolution::Fallthrough,
                Some(Ok(reply)) => Resolution::Respond(reply_response(&reply)),
                Some(Err(status)) => Resolution::Respond(status_only(&status)),
            }
        })
    });
    Ok(Handler::new(GrpcHandler {
        header: format!("grpc {method}"),
        predicate: Predicate::path(&format!("*{path}"))?,
        respond,
    }))
}

/// `/package.Service/Method`, or why `method` is not one.
fn method_path(method: &str) -> Result<String, PatternError> {
    let trimmed = method.trim_start_matches('/');
    let valid = trimmed.split_once('/').is_some_and(|(service, name)| {
        !service.is_empty()
            && !name.is_empty()
            && !name.contains('/')
            && trimmed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/'))
    });
    if !valid {
        return Err(PatternError {
            pattern: method.to_owned(),
            position: 0,
            reason: "a gRPC method is `package.Service/Method` (letters, digits, `_` and `.`)"
                .to_owned(),
        });
    }
    Ok(format!("/{trimmed}"))
}

type Respond = dyn Fn(Request, CallContext) -> ResolverCall + Send + Sync;

struct GrpcHandler {
    header: String,
    predicate: Predicate,
    respond: Arc<Respond>,
}

impl HandlerKind for GrpcHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn method(&self) -> Option<&Method> {
        Some(&Method::POST)
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.predicate.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::of_predicate(&self.predicate)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        let request = context.request();
        if request.method() != Method::POST || !is_grpc(request) {
            return None;
        }
        self.predicate.matches(request, context.base_url())?;
        let (request, respond) = (request.clone(), Arc::clone(&self.respond));
        Some(Matched::new(move |call| respond(request, call)))
    }
}

/// Whether the request's content type is gRPC's (`application/grpc`,
/// `application/grpc+proto`, ...).
fn is_grpc(request: &Request) -> bool {
    request.header("content-type").is_some_and(|value| {
        let value = value.trim().to_ascii_lowercase();
        value == "application/grpc"
            || value.starts_with("application/grpc+")
            || value.starts_with("application/grpc;")
    })
}

const GRPC: HeaderValue = HeaderValue::from_static("application/grpc");

/// A reply: its message framed, then `grpc-status: 0` in the trailers.
fn reply_response(reply: &impl prost::Message) -> HttpResponse {
    let body =
        Body::from(frame::encode(reply)).with_trailers(Status::new(Code::Ok, "").to_headers());
    let mut response = http::Response::new(body);
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, GRPC);
    HttpResponse::from_body(response)
}

/// A call ended by `status` alone: gRPC's trailers-only answer, the status
/// in the response headers and no body.
fn status_only(status: &Status) -> HttpResponse {
    let mut response = http::Response::new(Body::empty());
    *response.headers_mut() = status.to_headers();
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, GRPC);
    HttpResponse::from_body(response)
}
