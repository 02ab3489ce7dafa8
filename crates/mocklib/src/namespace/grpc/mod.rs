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
//!     grpc::unary("helloworld.Greeter/SayHello", |args: grpc::ResolverArgs<HelloRequest>| {
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
//! future of one of these. The four kinds of method:
//!
//! | Function | The resolver gets | and returns (`Ok` of) |
//! |---|---|---|
//! | [`unary`] | `ResolverArgs<Req>` | `Reply` |
//! | [`server_streaming`] | `ResolverArgs<Req>` | a `Stream` of `Result<Reply, Status>` |
//! | [`client_streaming`] | `ResolverArgs<Messages<Req>>` | `Reply` |
//! | [`bidi_streaming`] | `ResolverArgs<Messages<Req>>` | a `Stream` of `Result<Reply, Status>` |
//!
//! A stream of replies ends the call with `OK` when it ends, or with the
//! first `Err(status)` it yields, after the replies before it. The client's
//! messages ([`Messages`]) reach the resolver as they arrive, so a
//! bidirectional call can answer each message before the client sends the
//! next, as chat-like protocols expect (mocklib buffers every other request
//! body before resolving it; a call's body ends only with the call, see
//! [`Request::with_body_stream`](crate::Request::with_body_stream)). Calls
//! reach the handlers in process through the
//! tower front door, with no socket — a generated client takes it:
//! `GreeterClient::with_origin(server.service(), origin)` — or through the
//! listener: h2c on the base URL ([`Server::url`](crate::node::Server::url)),
//! or `https://real.host` through its HTTPS proxy (a tonic `Endpoint` with
//! the server's CA, or a gRPC core client given
//! [`Server::env`](crate::node::Server::env)).
//!
//! Beyond one method at a time:
//!
//! - [`service`] mounts a whole tonic-generated server
//!   (`GreeterServer::new(fake)`) as one handler; single methods are
//!   overridden per test with the functions above, ahead of it.
//! - [`ResolverArgs::real_reply`] and [`ResolverArgs::real_replies`] perform the
//!   call for real and let the resolver alter what the real service
//!   answers (as [`bypass`](crate::bypass) does for HTTP). A call no
//!   handler answers goes to the real service under the `warn` and
//!   `bypass` strategies, and ends with `UNIMPLEMENTED` naming the closest
//!   handlers under `error` and `strict` (and under `warn` and `bypass`
//!   when it is addressed to the listener itself: see below).
//! - The journal entry of every call answered here holds a [`CallRecord`]:
//!   the messages both ways (the first [`MAX_RECORDED_MESSAGES`] each way,
//!   within [`MAX_RECORDED_BYTES`]; the rest are counted) and the status
//!   the call ended with.
//! - [`RawMessage`] is a message kept as its bytes, for types known only at
//!   run time.
//! - **gRPC-Web and Connect** calls (a browser app's: `tonic-web-wasm-client`,
//!   grpc-web, Connect-ES; or `curl` with Connect's JSON) are answered by
//!   the same handlers: a call of either is read as the gRPC call it
//!   carries, and the answer is written back in its protocol — gRPC-Web's
//!   status frame (binary or base64 text), Connect's bare reply or JSON
//!   error with the code's HTTP status, Connect's end-of-stream message.
//!   Connect's JSON form needs a [`JsonCodec`] ([`with_json`]); a browser's
//!   CORS preflight is answered as tonic-web answers it.
//!   [`CallRecord::protocol`] says which protocol a call came in on.
//!
//! A request that is not a valid call of the method is answered with the
//! status a gRPC server gives it (in its protocol's form), with a message
//! saying why: a malformed
//! frame or a message that does not decode with `INTERNAL`; a compressed
//! message (mocklib reads `identity` only) with `UNIMPLEMENTED` and
//! `grpc-accept-encoding: identity`; no message or more than one on a unary
//! or server-streaming method with `UNIMPLEMENTED`; a message over 4 MiB
//! with `RESOURCE_EXHAUSTED`, as soon as its length prefix arrives; a
//! gRPC-Web text body that is not base64 with `INTERNAL`; Connect's JSON
//! that does not convert with `INVALID_ARGUMENT`. A `POST` of another
//! content type to a method a handler serves gets HTTP 415 (it is answered
//! by that handler, so it counts as one of its calls).
//!
//! **Every answer to a call is a gRPC status.** Where mocklib answers a
//! call itself, not from a handler, the answer is gRPC's trailers-only
//! form (HTTP 200, `grpc-status` and a percent-encoded `grpc-message` in
//! the headers) wherever an HTTP request gets an HTTP status; its message
//! names the method (`/package.Service/Method`) and says why. A gRPC-Web
//! call gets the same in gRPC-Web's content type, a Connect call Connect's
//! error (a JSON body with the code's HTTP status, or an end-of-stream
//! message for a stream), with CORS headers for a browser. This holds
//! without the `grpc` feature too (a call the listener passes through):
//!
//! | What happened | An HTTP request gets | A gRPC call gets |
//! |---|---|---|
//! | No handler answered, under the `error` or `strict` strategy (or the `on_unhandled_request` callback panicked) | a network error | `UNIMPLEMENTED`, naming the closest handlers |
//! | No handler answered, under `warn` or `bypass`, and the call is addressed to the listener itself (its base URL: nothing real behind it) | `502` | `UNIMPLEMENTED` (the server it called does not serve the method) |
//! | The same through the tower front door's [`Server::service`](crate::node::Server::service), which has nothing behind it | the service's `Err` ([`NoUpstreamError`](crate::node::NoUpstreamError)) | `UNIMPLEMENTED` |
//! | Performed for real, and the real server could not be reached or failed before answering (DNS, refused, TLS, reset…) | `502` | `UNAVAILABLE`, with the upstream error |
//! | The request came back to the listener that sent it on (a loop, seen by its `Via`) | `508` | `UNAVAILABLE` |
//! | A pooled port between two servers | `503` | `UNAVAILABLE` |
//! | Its URL is too long to send on (over 65,534 bytes encoded) | `414` | `RESOURCE_EXHAUSTED` |
//! | Its proxy credential names a boundary (a `mocklib serve` scope) that has ended | `407` | `UNAUTHENTICATED` |
//! | Its request target cannot be read | `400` | `INTERNAL` |
//! | The resolver failed (panicked, or made an invalid response) | `500` | `INTERNAL`, naming the handler and the panic |
//! | A strict contract finds the mocked answer breaks it | `500` listing the findings | `INTERNAL`, with the first finding |
//!
//! `UNIMPLEMENTED` where no handler answers and nothing real is behind the
//! call, as a gRPC server answers a method it does not serve: a client
//! retries `UNAVAILABLE`, and retrying would not help. A `CONNECT` is not
//! a call: a tunnel refused (an ended scope's credential) is refused in
//! HTTP, and the client reports that its own way (`grpcio`: `UNAVAILABLE`
//! naming the proxy's `407`). A real server's own answer is passed on as
//! it is. A real inner service of the tower layer ([`Server::layer`](crate::node::Server::layer))
//! fails with its own errors.

mod frame;
mod handler;
mod protocol;
mod raw;
mod real;
mod record;
mod service;
mod status;
mod wire;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::Either;
use futures_util::{FutureExt, Stream};
use http::HeaderMap;

pub use status::{Code, Status};

use crate::handling::handler::Handler;
use crate::handling::resolver::{CallContext, Resolution, ResolverCall, marker};
use crate::matching::PatternError;
use crate::message::request::Request;
use crate::support::maybe_send::MaybeSend;
pub use protocol::{JsonCodec, Protocol, with_json};
pub use raw::RawMessage;
pub use real::RealReplies;
pub use record::{CallRecord, MAX_RECORDED_BYTES, MAX_RECORDED_MESSAGES, RecordedMessage};
pub use service::{service, try_service};

use handler::{reply_response, status_response, stream_response};

/// Whether `request` is a call of gRPC, gRPC-Web or Connect: a `POST`
/// whose content type is `application/grpc` (`+proto`, `;…`),
/// `application/grpc-web` (`-text`, `+proto`), `application/connect+proto`
/// (`+json`), or `application/proto` or `application/json` with Connect's
/// `connect-protocol-version` header. Its client reads every answer in its
/// protocol, so code that fails such a request itself answers with
/// [`end_call`], as mocklib's own refusals do.
///
/// ```
/// use mocklib::{grpc, http, HttpResponse};
///
/// let handler = http::post("/*", |args| {
///     if grpc::is_call(&args.request) {
///         return grpc::end_call(&args.request, grpc::Status::new(grpc::Code::Unimplemented, "not mocked here"));
///     }
///     HttpResponse::text("not mocked here").status(501)
/// });
/// # let _ = handler;
/// # use mocklib::Request;
/// # let call = |content_type: &str| {
/// #     let url = "http://localhost/helloworld.Greeter/SayHello".parse().unwrap();
/// #     let mut headers = ::http::HeaderMap::new();
/// #     headers.insert("content-type", content_type.parse().unwrap());
/// #     Request::from_parts(::http::Method::POST, url, headers, Default::default())
/// # };
/// # assert!(grpc::is_call(&call("application/grpc+proto")));
/// # assert!(grpc::is_call(&call("application/grpc-web-text")));
/// # assert!(grpc::is_call(&call("application/connect+json")));
/// # assert!(!grpc::is_call(&call("application/json")));
/// ```
pub fn is_call(request: &Request) -> bool {
    crate::message::rpc::Rpc::of_call(request.method(), request.headers()).is_some()
}

/// The answer ending `request`'s call with `status`, in the protocol the
/// call came in on: gRPC's trailers-only answer (as
/// `HttpResponse::from(status)` makes), gRPC-Web's, or Connect's error
/// (JSON with the code's HTTP status, or an end-of-stream message); with
/// CORS headers for a browser's call. A request that is not a call (see
/// [`is_call`]) gets gRPC's form.
///
/// ```
/// use mocklib::{grpc, Request};
/// use mocklib::grpc::{Code, Status};
///
/// let url = "http://localhost/helloworld.Greeter/SayHello".parse().unwrap();
/// let mut headers = ::http::HeaderMap::new();
/// headers.insert("content-type", "application/json".parse().unwrap());
/// headers.insert("connect-protocol-version", "1".parse().unwrap());
/// let call = Request::from_parts(::http::Method::POST, url, headers, "{}".into());
///
/// let answer = grpc::end_call(&call, Status::new(Code::NotFound, "no such user"));
/// assert_eq!(answer.status_code(), 404);
/// assert_eq!(answer.text_body().unwrap(), r#"{"code":"not_found","message":"no such user"}"#);
/// ```
pub fn end_call(request: &Request, status: Status) -> crate::HttpResponse {
    match crate::message::rpc::Rpc::of_call(request.method(), request.headers()) {
        Some(rpc) if rpc != crate::message::rpc::Rpc::Grpc => crate::HttpResponse::from_body(
            rpc.answer(request.headers(), status.code(), status.message()),
        ),
        _ => status.into(),
    }
}

/// What a gRPC resolver receives. Fields are public so it can be
/// destructured: `|ResolverArgs { message, metadata, .. }|`.
#[derive(Debug)]
#[non_exhaustive]
pub struct ResolverArgs<M> {
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

impl<M> ResolverArgs<M> {
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
pub trait ResolverOutput<R, M>: MaybeSend + 'static {
    #[doc(hidden)]
    fn into_answer(self) -> Answer<R>;
}

/// A gRPC resolver's answer as the handler takes it: there already (a
/// resolver that returns a value; no future boxed for it), or to come.
#[doc(hidden)]
pub enum Answer<R> {
    /// The answer, returned directly.
    Ready(Option<Result<R, Status>>),
    /// The answer, once the resolver's future has it.
    Later(crate::support::maybe_send::BoxFuture<Option<Result<R, Status>>>),
}

impl<R> std::fmt::Debug for Answer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Answer::Ready(_) => "Answer::Ready",
            Answer::Later(_) => "Answer::Later",
        })
    }
}

/// A [`Answer`] as a future of the answer.
type Answered<R> = Either<
    std::future::Ready<Option<Result<R, Status>>>,
    crate::support::maybe_send::BoxFuture<Option<Result<R, Status>>>,
>;

impl<R> Answer<R> {
    /// The answer as a future: there already, or awaited.
    fn into_future(self) -> Answered<R> {
        match self {
            Answer::Ready(answer) => Either::Left(std::future::ready(answer)),
            Answer::Later(future) => Either::Right(future),
        }
    }
}

/// A value a gRPC resolver may return directly (see [`ResolverOutput`]).
pub trait IntoAnswer<R> {
    /// The reply or status; `None` falls through.
    fn into_grpc_answer(self) -> Option<Result<R, Status>>;
}

impl<R> IntoAnswer<R> for Result<R, Status> {
    fn into_grpc_answer(self) -> Option<Result<R, Status>> {
        Some(self)
    }
}

impl<R> IntoAnswer<R> for Option<Result<R, Status>> {
    fn into_grpc_answer(self) -> Option<Result<R, Status>> {
        self
    }
}

impl<R: MaybeSend + 'static, T: IntoAnswer<R> + MaybeSend + 'static> ResolverOutput<R, marker::Sync>
    for T
{
    fn into_answer(self) -> Answer<R> {
        Answer::Ready(self.into_grpc_answer())
    }
}

impl<R, F> ResolverOutput<R, marker::Async> for F
where
    R: MaybeSend + 'static,
    F: Future + MaybeSend + 'static,
    F::Output: IntoAnswer<R>,
{
    fn into_answer(self) -> Answer<R> {
        // `map`: an `async` block would hold the future twice.
        Answer::Later(Box::pin(self.map(IntoAnswer::into_grpc_answer)))
    }
}

/// The messages a client streams (client and bidirectional streaming): a
/// `Stream` of each message decoded as it arrives, or the status a bad one
/// earns (after which the stream ends).
#[derive(Debug)]
pub struct Messages<M> {
    frames: frame::Frames,
    _message: std::marker::PhantomData<fn() -> M>,
}

impl<M: prost::Message + Default> Stream for Messages<M> {
    type Item = Result<M, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.frames)
            .poll_next(cx)
            .map(|frame| frame.map(|frame| frame.and_then(frame::decode::<M>)))
    }
}

impl<M> Unpin for Messages<M> {}

/// A handler for the unary method `method` (`"helloworld.Greeter/SayHello"`,
/// the full service name and the method): the resolver gets the request
/// message and returns the reply or a [`Status`]. See the [module docs](self).
///
/// # Panics
/// When `method` is not `package.Service/Method`.
#[track_caller]
pub fn unary<Req, Reply, F, O, M>(method: &str, resolver: F) -> Handler
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + MaybeSend + 'static,
    F: Fn(ResolverArgs<Req>) -> O + Send + Sync + 'static,
    O: ResolverOutput<Reply, M>,
{
    try_unary(method, resolver).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`unary`], returning an invalid method name as an error.
pub fn try_unary<Req, Reply, F, O, M>(method: &str, resolver: F) -> Result<Handler, PatternError>
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + MaybeSend + 'static,
    F: Fn(ResolverArgs<Req>) -> O + Send + Sync + 'static,
    O: ResolverOutput<Reply, M>,
{
    method_handler::<Req, Reply, _, _, _, _, _, _, _>(
        method,
        unary_message::<Req>,
        resolver,
        |reply: Reply, record| reply_response(&reply, record),
    )
}

/// A handler for the server-streaming method `method`: the resolver gets the
/// request message and returns a `Stream` of replies (see the [module docs](self)).
///
/// # Panics
/// When `method` is not `package.Service/Method`.
#[track_caller]
pub fn server_streaming<Req, Reply, S, F, O, M>(method: &str, resolver: F) -> Handler
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + 'static,
    S: Stream<Item = Result<Reply, Status>> + Send + 'static,
    F: Fn(ResolverArgs<Req>) -> O + Send + Sync + 'static,
    O: ResolverOutput<S, M>,
{
    try_server_streaming(method, resolver).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`server_streaming`], returning an invalid method name as an error.
pub fn try_server_streaming<Req, Reply, S, F, O, M>(
    method: &str,
    resolver: F,
) -> Result<Handler, PatternError>
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + 'static,
    S: Stream<Item = Result<Reply, Status>> + Send + 'static,
    F: Fn(ResolverArgs<Req>) -> O + Send + Sync + 'static,
    O: ResolverOutput<S, M>,
{
    method_handler::<Req, Reply, _, _, _, _, _, _, _>(
        method,
        unary_message::<Req>,
        resolver,
        stream_response::<Reply, S>,
    )
}

/// A handler for the client-streaming method `method`: the resolver gets
/// the client's [`Messages`] and returns one reply (see the [module docs](self)).
///
/// # Panics
/// When `method` is not `package.Service/Method`.
#[track_caller]
pub fn client_streaming<Req, Reply, F, O, M>(method: &str, resolver: F) -> Handler
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + MaybeSend + 'static,
    F: Fn(ResolverArgs<Messages<Req>>) -> O + Send + Sync + 'static,
    O: ResolverOutput<Reply, M>,
{
    try_client_streaming(method, resolver).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`client_streaming`], returning an invalid method name as an error.
pub fn try_client_streaming<Req, Reply, F, O, M>(
    method: &str,
    resolver: F,
) -> Result<Handler, PatternError>
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + MaybeSend + 'static,
    F: Fn(ResolverArgs<Messages<Req>>) -> O + Send + Sync + 'static,
    O: ResolverOutput<Reply, M>,
{
    method_handler::<Req, Reply, _, _, _, _, _, _, _>(
        method,
        messages::<Req>,
        resolver,
        |reply: Reply, record| reply_response(&reply, record),
    )
}

/// A handler for the bidirectional-streaming method `method`: the resolver
/// gets the client's [`Messages`] and returns a `Stream` of replies (see
/// the [module docs](self) for when the client's messages arrive).
///
/// # Panics
/// When `method` is not `package.Service/Method`.
#[track_caller]
pub fn bidi_streaming<Req, Reply, S, F, O, M>(method: &str, resolver: F) -> Handler
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + 'static,
    S: Stream<Item = Result<Reply, Status>> + Send + 'static,
    F: Fn(ResolverArgs<Messages<Req>>) -> O + Send + Sync + 'static,
    O: ResolverOutput<S, M>,
{
    try_bidi_streaming(method, resolver).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`bidi_streaming`], returning an invalid method name as an error.
pub fn try_bidi_streaming<Req, Reply, S, F, O, M>(
    method: &str,
    resolver: F,
) -> Result<Handler, PatternError>
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + 'static,
    S: Stream<Item = Result<Reply, Status>> + Send + 'static,
    F: Fn(ResolverArgs<Messages<Req>>) -> O + Send + Sync + 'static,
    O: ResolverOutput<S, M>,
{
    method_handler::<Req, Reply, _, _, _, _, _, _, _>(
        method,
        messages::<Req>,
        resolver,
        stream_response::<Reply, S>,
    )
}

/// How a method kind makes the response of its resolver's `Ok` answer.
type Respond<R> = fn(R, CallRecord) -> crate::HttpResponse;

/// The handler of one method kind: `read` makes the resolver's message(s)
/// of the request (recording each in the call's record), `respond` the
/// response of its `Ok` answer; each call's messages are recorded as `Req`
/// and `Reply` show them. Generic over how it reads, so that a call's
/// reading, resolving and answering are one future (one allocation).
fn method_handler<Req, Reply, T, R, F, O, M, Read, Reading>(
    method: &str,
    read: Read,
    resolver: F,
    respond: Respond<R>,
) -> Result<Handler, PatternError>
where
    Req: prost::Message + Default + Debug + 'static,
    Reply: prost::Message + Default + Debug + 'static,
    T: MaybeSend + 'static,
    R: MaybeSend + 'static,
    F: Fn(ResolverArgs<T>) -> O + Send + Sync + 'static,
    O: ResolverOutput<R, M>,
    Read: Fn(Request, CallRecord) -> Reading + Send + Sync + 'static,
    Reading: Future<Output = Result<T, Status>> + MaybeSend + 'static,
{
    let resolver = std::sync::Arc::new(resolver);
    // Shared by the record of each call made to it (most are).
    let own_path: std::sync::Arc<str> = handler::method_path(method)?.into();
    handler::handler(method, move |request, protocol, call| {
        let deadline = frame::header(&request, &frame::GRPC_TIMEOUT).and_then(frame::parse_timeout);
        // The path as the URL parser writes it, without parsing a URL.
        let path = request.url_parts().path();
        let record = CallRecord::new(
            if path == &*own_path {
                std::sync::Arc::clone(&own_path)
            } else {
                path.into()
            },
            record::show::<Req>,
            record::show::<Reply>,
            protocol,
        );
        let resolver = std::sync::Arc::clone(&resolver);
        let reading = read(request.clone(), record.clone());
        // Combinators, not an `async` block: one holds the future it awaits
        // twice (as captured, and as awaited), and this one is boxed per call.
        let answered = reading.then(move |message| match message {
            Ok(message) => {
                let args = ResolverArgs {
                    message,
                    metadata: request.headers().clone(),
                    deadline,
                    request,
                    call,
                };
                resolver(args).into_answer().into_future()
            }
            Err(status) => Either::Left(std::future::ready(Some(Err(status)))),
        });
        Ok(answer(deadline, answered, record, respond))
    })
}

/// The one message of a unary or server-streaming call.
fn unary_message<M>(
    request: Request,
    record: CallRecord,
) -> impl Future<Output = Result<M, Status>> + MaybeSend + 'static
where
    M: prost::Message + Default + 'static,
{
    frame::unary_message::<M>(request, record)
}

/// The client's messages, each decoded as it arrives.
fn messages<M: 'static>(
    request: Request,
    record: CallRecord,
) -> std::future::Ready<Result<Messages<M>, Status>> {
    std::future::ready(frame::check_encoding(&request).map(|()| Messages {
        frames: frame::Frames::of(&request, Some(record)),
        _message: std::marker::PhantomData,
    }))
}

/// The call that awaits the resolver's answer and makes it a response; a
/// resolver still busy at the client's deadline is dropped and the call
/// ends with `DEADLINE_EXCEEDED`, as a real server ends it.
fn answer<R: 'static>(
    deadline: Option<Duration>,
    answer: impl Future<Output = Option<Result<R, Status>>> + MaybeSend + 'static,
    record: CallRecord,
    respond: Respond<R>,
) -> ResolverCall {
    let resolution = move |answered| match answered {
        None => Resolution::Fallthrough,
        Some(Ok(reply)) => Resolution::Respond(respond(reply, record)),
        Some(Err(status)) => Resolution::Respond(status_response(&status, record)),
    };
    // `map`, not an `async` block, which would hold `answer` twice.
    match deadline {
        None => ResolverCall::new(answer.map(resolution)),
        Some(deadline) => ResolverCall::new(within(deadline, answer).map(resolution)),
    }
}

/// `answer`, or `DEADLINE_EXCEEDED` once `deadline` has passed.
async fn within<R>(
    deadline: Duration,
    answer: impl Future<Output = Option<Result<R, Status>>>,
) -> Option<Result<R, Status>> {
    let answer = std::pin::pin!(answer);
    let expired = Box::pin(crate::message::delay::delay(deadline));
    match futures_util::future::select(answer, expired).await {
        Either::Left((answered, _)) => answered,
        Either::Right(((), _)) => Some(Err(Status::new(
            Code::DeadlineExceeded,
            format!("the resolver did not answer within the client's deadline of {deadline:?}"),
        ))),
    }
}
