//! Accepting connections and answering each request on them.
//!
//! Layering: this file is the transport (sockets, TLS, tunnels, HTTP
//! framing by hyper); what to answer is the engine's decision; performing a
//! request for real is the upstream client's job. Where a request is aimed
//! is `target`'s to say; the connection and its injected faults are
//! `connection`'s.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::uri::Authority;
use http::{Method, StatusCode, Version};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use url::Url;

use super::connection::{Connection, ConnectionFault, FaultIo, inject};
use super::held_error::{Hold, HoldError};
use super::scopes::EndsWith;
use super::signal::Signal;
use super::target::{Entry, came_through, is_own_address, request_url};
use super::{CredentialScope, Port, Shared};
use crate::engine::journal::MAX_BODY;
use crate::engine::list::Scope;
use crate::engine::{Outcome, Passthrough};
use crate::message::body::StreamError;
use crate::message::exchange::Tap;
use crate::message::fault::Fault;
use crate::message::incoming::LiveBody;
use crate::message::request::{Request, Target, own_values, own_values_and, url_under};
use crate::message::response::StatusText;
use crate::message::rpc::Code;
use http::header::PROXY_AUTHORIZATION;
use http::uri::PathAndQuery;
use std::sync::Weak;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the listener answers with: a buffered mocked body as it is (the
/// usual answer, without a box per request), or any other body boxed.
pub(super) enum ResponseBody {
    Mocked(crate::Body),
    /// A buffered body ending in trailers, over HTTP/2 (a gRPC reply): its
    /// size is not promised, so hyper adds no `content-length`, which gRPC
    /// servers do not send either and which cost an allocated header a call.
    Trailed(crate::Body),
    Boxed(BoxBody<Bytes, BoxError>),
}

impl ResponseBody {
    fn boxed<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + Sync + 'static,
        B::Error: Into<BoxError>,
    {
        ResponseBody::Boxed(body.map_err(Into::into).boxed())
    }
}

impl http_body::Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            ResponseBody::Mocked(body) | ResponseBody::Trailed(body) => Pin::new(body)
                .poll_frame(cx)
                .map(|frame| frame.map(|result| result.map_err(BoxError::from))),
            ResponseBody::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Mocked(body) | ResponseBody::Trailed(body) => body.is_end_stream(),
            ResponseBody::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match self {
            ResponseBody::Mocked(body) => body.size_hint(),
            ResponseBody::Trailed(body) => {
                let mut hint = http_body::SizeHint::new();
                hint.set_lower(body.size_hint().lower());
                hint
            }
            ResponseBody::Boxed(body) => body.size_hint(),
        }
    }
}

/// The TLS record type of a handshake: the first byte a TLS client sends.
const TLS_HANDSHAKE: u8 = 0x16;

/// Which server answers a connection's requests.
#[derive(Clone)]
pub(super) enum Holder {
    /// Whichever server holds the port when a request arrives: a pooled
    /// port outlives its servers, and so do keep-alive connections to it.
    Lent(Arc<Port>),
    /// One server, for the connection's whole life: a boundary's own port
    /// and a `CONNECT` tunnel (its TLS was set up with that server's CA).
    Fixed(Arc<Shared>),
}

impl Holder {
    fn current(&self) -> Option<Arc<Shared>> {
        match self {
            Holder::Lent(port) => port.holder(),
            Holder::Fixed(shared) => Some(Arc::clone(shared)),
        }
    }

    /// Resolves when the connections of this holding must end.
    async fn gone(&self) {
        match self {
            Holder::Lent(port) => port.retired().await,
            Holder::Fixed(shared) => shared.closed().await,
        }
    }
}

/// A listening socket and its accept loop's hold on it. A boundary's end
/// closes it at once, on the thread that ends the boundary: its port
/// refuses connections before that call returns (`mocklib serve` answers
/// the `DELETE` that ended a scope after it), not whenever the accept
/// loop's task next runs.
pub(super) struct Accepting(std::sync::Mutex<Option<tokio::net::TcpListener>>);

impl Accepting {
    pub(super) fn new(listener: tokio::net::TcpListener) -> Arc<Self> {
        Arc::new(Accepting(std::sync::Mutex::new(Some(listener))))
    }

    fn listener(&self) -> std::sync::MutexGuard<'_, Option<tokio::net::TcpListener>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The next connection; `None` once closed.
    fn poll_accept(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<io::Result<(tokio::net::TcpStream, std::net::SocketAddr)>>> {
        match &*self.listener() {
            Some(listener) => listener.poll_accept(cx).map(Some),
            None => Poll::Ready(None),
        }
    }

    /// Closes the socket: connections to its port are refused from now on.
    pub(super) fn close(&self) {
        drop(self.listener().take());
    }
}

/// Accepts connections until the port is retired (a pooled port never is),
/// or, for a boundary's own port (`scope` set: the boundary and the signal
/// raised as it ends), until its server closes or the boundary ends.
pub(super) async fn accept_loop(
    listener: Arc<Accepting>,
    holder: Holder,
    scope: Option<(Weak<Scope>, Arc<Signal>)>,
) {
    let address = listener
        .listener()
        .as_ref()
        .and_then(|l| l.local_addr().ok());
    let mut ended = std::pin::pin!(wait(scope.as_ref().map(|(_, ended)| &**ended)));
    loop {
        let accepted = tokio::select! {
            // The end first: a connection waiting in the backlog is not
            // taken into an ended boundary.
            biased;
            () = &mut ended => break,
            () = holder.gone() => break,
            accepted = std::future::poll_fn(|cx| listener.poll_accept(cx)) => accepted,
        };
        match accepted {
            // Closed by the boundary's end.
            None => break,
            Some(Ok((stream, _peer))) => {
                let scope = match &scope {
                    None => None,
                    Some((weak, _)) => match weak.upgrade().filter(|scope| !scope.is_ended()) {
                        Some(scope) => Some(scope),
                        None => break,
                    },
                };
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve(
                    Box::new(stream),
                    holder.clone(),
                    Entry::Direct { scope },
                    None,
                ));
            }
            // Out of file descriptors and the like: keep serving the others.
            Some(Err(error)) => {
                tracing::warn!(target: "mocklib", %error, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
    listener.close();
    if let (Some(_), Some(shared), Some(address)) = (&scope, holder.current(), address) {
        shared.scopes.forget_port(address);
    }
}

/// Serves one in-memory connection (see [`super::memory`]) as the port's
/// own connections are served, resolving in `scope` when it is a boundary's.
pub(super) fn serve_in_memory(
    shared: Arc<Shared>,
    scope: Option<Arc<Scope>>,
    io: tokio::io::DuplexStream,
) {
    let runtime = shared.runtime.clone();
    drop(runtime.spawn(serve(
        Box::new(io),
        Holder::Fixed(shared),
        Entry::Direct { scope },
        None,
    )));
}

/// Serves HTTP/1.1 or HTTP/2 (told apart by the connection preface) on `io`.
/// `outer` is the connection a `CONNECT` tunnel runs in, which a
/// [`Fault::ConnectionReset`] inside the tunnel resets.
///
/// One type for every kind of connection, so hyper's HTTP/1 and HTTP/2
/// servers are compiled once rather than once per kind (the three copies
/// were an eighth of the LLVM IR of mocklib's own build); a virtual call per
/// read or write costs nothing measurable beside a socket's.
async fn serve(
    io: Box<dyn Connection>,
    holder: Holder,
    entry: Entry,
    outer: Option<Arc<ConnectionFault>>,
) {
    // A connection to a boundary (its port, a tunnel its credential
    // opened, a memory connection made in it) ends with the boundary.
    let ending = match (&entry, &holder) {
        (
            Entry::Direct { scope: Some(scope) }
            | Entry::Tunnel {
                scope: Some(scope), ..
            },
            Holder::Fixed(shared),
        ) => Some(shared.scopes.register(scope)),
        _ => None,
    };
    let fault = Arc::new(ConnectionFault::new(outer));
    let serving = holder.clone();
    let faulting = Arc::clone(&fault);
    let service = service_fn(move |request| answer_for(&serving, &entry, &faulting, request));
    let builder = auto::Builder::new(TokioExecutor::new());
    let io = FaultIo {
        io: Some(io),
        fault: Arc::clone(&fault),
    };
    // The connection (so hyper's hold on `io`) is dropped at the end of
    // this block, before a planned fault takes `io` back below.
    let result = {
        let mut connection =
            std::pin::pin!(builder.serve_connection_with_upgrades(TokioIo::new(io), service));
        tokio::select! {
            // In order: no random start to draw per request.
            biased;
            result = connection.as_mut() => result,
            // The runtime is shared by every server: connections end with
            // their holder, not with the runtime.
            () = holder.gone() => return,
            () = wait(ending.as_deref()), if ending.is_some() => {
                // The boundary ended. An idle connection closes now
                // (HTTP/1), or is told to go away (HTTP/2's GOAWAY); a
                // request already in flight gets the moment it needs to
                // finish (the `DELETE` that ended a scope, sent on that
                // scope's own port, gets its answer), then the connection
                // goes, whatever it still streams. A request that arrives
                // meanwhile is answered `410`.
                connection.as_mut().graceful_shutdown();
                tokio::select! {
                    biased;
                    result = connection.as_mut() => result,
                    () = holder.gone() => return,
                    () = tokio::time::sleep(ENDED_GRACE) => return,
                }
            }
        }
    };
    if let Err(error) = result {
        // Clients that vanish, garbage, resets by `HttpResponse::error()`:
        // one connection's trouble, nothing to escalate.
        tracing::debug!(target: "mocklib", %error, "connection ended with an error");
    }
    if let Some((mut io, bytes)) = fault.take_raw() {
        // What hyper would never write: garbage, a broken chunk. Then close.
        let _ = io.write_all(&bytes).await;
        let _ = io.flush().await;
        let _ = io.shutdown().await;
    }
}

/// How long a request in flight on a connection to a boundary may take to
/// finish once the boundary has ended.
const ENDED_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Resolves when `signal` is raised; never without one.
async fn wait(signal: Option<&Signal>) {
    match signal {
        Some(signal) => signal.wait().await,
        None => std::future::pending().await,
    }
}

/// The answer of the server that holds the connection's port now: takes in
/// one request, then answers it. Everything that reads the request
/// head happens here, before the future: hyper reads on (to notice a client
/// that goes away) while that future runs, and a head still alive then would
/// keep its read buffer from being reused, costing a new 8 KiB buffer per
/// request.
fn answer_for(
    holder: &Holder,
    entry: &Entry,
    fault: &Arc<ConnectionFault>,
    request: http::Request<Incoming>,
) -> Answering {
    let admitted = match holder.current() {
        Some(shared) => admit(shared, entry, fault, request),
        None => Admitted::Answered(Ok(no_server(&request))),
    };
    match admitted {
        Admitted::Answered(answer) => Answering::Ready(Some(answer)),
        Admitted::Resolve(resolve) => resolve.start(),
    }
}

type Answer = Result<http::Response<ResponseBody>, BoxError>;

/// A request's answer: there already (most mocked requests, resolved in
/// the service call: no future state to move about), or still to come.
enum Answering {
    Ready(Option<Answer>),
    Later(crate::support::maybe_send::BoxFuture<Answer>),
}

impl Future for Answering {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        match &mut *self {
            Answering::Ready(answer) => match answer.take() {
                Some(answer) => Poll::Ready(answer),
                // Polled after it finished: futures may not be.
                None => Poll::Pending,
            },
            Answering::Later(future) => future.as_mut().poll(cx),
        }
    }
}

/// The answer of a pooled port between two servers, to a client that kept
/// its connection from the server before.
fn no_server(request: &http::Request<Incoming>) -> http::Response<ResponseBody> {
    refusal(
        request,
        StatusCode::SERVICE_UNAVAILABLE,
        Code::Unavailable,
        "the server that listened on this port has closed, and no other holds it now",
    )
}

/// A request taken in: answered already, or to be resolved by the engine.
enum Admitted {
    Answered(Result<http::Response<ResponseBody>, BoxError>),
    Resolve(Resolve),
}

/// What resolving a request needs once its head has been read, packed
/// once (in [`admit`]) and handed on in these parts: the head becomes the
/// engine's request, the body is read (or streamed) into it, and the rest
/// goes with it to the engine and on to the answer. Nothing in it refers
/// to the connection's read buffer.
struct Resolve {
    head: Head,
    body: Incoming,
    asking: Asking,
}

/// Reads a request's head: a loop, an ended scope, a `CONNECT` or a target
/// that names no URL is answered at once; anything else is to be resolved.
#[inline(always)] // one call per request: inlined, the head is not copied between steps
fn admit(
    shared: Arc<Shared>,
    entry: &Entry,
    fault: &Arc<ConnectionFault>,
    request: http::Request<Incoming>,
) -> Admitted {
    // One pass over the (few) header names instead of a lookup for each
    // header the listener reads, which most requests do not have.
    let (mut via, mut credential, mut hosts, mut own_host) = (false, false, 0, false);
    for (name, value) in request.headers() {
        via |= name == http::header::VIA;
        credential |= name == PROXY_AUTHORIZATION;
        if name == http::header::HOST {
            hosts += 1;
            own_host = value.as_bytes() == shared.authority.as_bytes();
        }
    }
    // One Host header, naming the listener exactly as its own URL does.
    let own_host = own_host && hosts == 1;
    // A request that already went through this listener came back through a
    // name for it the address check could not know (a DNS alias, say).
    if via && came_through(&shared, request.headers()) {
        return Admitted::Answered(Ok(refusal(
            &request,
            StatusCode::LOOP_DETECTED,
            Code::Unavailable,
            "this request already passed through this listener (its Via header says so); \
             performing it again would loop",
        )));
    }
    let scope = match scope_of(&shared, entry, request.headers(), credential) {
        Ok(scope) => scope,
        Err(Refused::Credential(credential)) => {
            return Admitted::Answered(Ok(ended_scope(&request, &credential)));
        }
        Err(Refused::Ended(id)) => {
            return Admitted::Answered(Ok(ended_connection(&request, Some(id))));
        }
    };
    if request.method() == Method::CONNECT {
        return Admitted::Answered(Ok(connect(shared, entry, request, scope, fault)));
    }
    let (mut parts, body) = request.into_parts();
    // The credential is the listener's business, not the handlers' or the upstream's.
    if credential {
        parts.headers.remove(PROXY_AUTHORIZATION);
    }
    let (target, mut base_url) = match request_url(&shared, entry, &parts, own_host) {
        Ok(found) => found,
        Err(why) => {
            let refused = http::Request::from_parts(parts, ());
            return Admitted::Answered(Ok(refusal(
                &refused,
                StatusCode::BAD_REQUEST,
                Code::Internal,
                &why,
            )));
        }
    };
    let mut scope = scope;
    // Sent through the proxy to the listener's own port or a boundary's:
    // what it would be sent there directly (performing it would loop).
    if let (None, Entry::Direct { .. }, Target::Url(url)) = (&base_url, entry, &target) {
        if is_own_address(&shared, url) {
            let port = url.port_or_known_default();
            if port != Some(shared.address.port()) {
                match port.and_then(|port| shared.scopes.scope_on_port(port)) {
                    Some(own) => scope = Some(own),
                    // Its boundary ended since `is_own_address` saw its port.
                    None => {
                        return Admitted::Answered(Ok(ended_connection(
                            &http::Request::from_parts(parts, ()),
                            None,
                        )));
                    }
                }
            }
            let mut origin = url.clone();
            origin.set_path("/");
            origin.set_query(None);
            base_url = Some(Arc::new(origin));
        }
    }
    // Out of the read buffer: the header values, and a target kept as it is.
    let target = match target {
        Target::Under(origin, path) => {
            let host = own_host.then_some(&shared.host);
            let copy = own_values_and(&mut parts.headers, path.as_str(), host);
            match PathAndQuery::from_maybe_shared(copy) {
                Ok(copy) => Target::Under(origin, copy),
                Err(_) => Target::Url(url_under(&origin, path.as_str())),
            }
        }
        target @ Target::Url(_) => {
            own_values(&mut parts.headers);
            target
        }
    };
    Admitted::Resolve(Resolve {
        asking: Asking {
            shared,
            base_url,
            delivery: Delivery {
                version: parts.version,
                fault: Arc::clone(fault),
                boundary: scope,
                #[cfg(feature = "ws")]
                on_upgrade: parts.extensions.remove::<hyper::upgrade::OnUpgrade>(),
                #[cfg(all(feature = "ws", feature = "graphql"))]
                resolve_in: None,
            },
        },
        head: Head {
            method: parts.method,
            target,
            version: parts.version,
            headers: parts.headers,
        },
        body,
    })
}

impl Resolve {
    /// Resolves a request without a body at once, as far as its resolvers
    /// answer at once; anything else (a body to read, an async resolver, a
    /// request performed for real) goes on in a future.
    #[inline(always)] // one call per request: inlined, the head is not copied between steps
    fn start(self) -> Answering {
        let Resolve { head, body, asking } = self;
        if !http_body::Body::is_end_stream(&body) {
            // A future per kind of body, each boxed for its request: one
            // for both would be as large as both, beyond the allocator's
            // fast sizes.
            return Answering::Later(if crate::message::request::is_grpc_content(&head.headers) {
                Box::pin(streamed(head, body, asking))
            } else {
                Box::pin(read_in_full(head, body, asking))
            });
        }
        let (shared, mut handling, delivery) = asking.hand(head.request(Bytes::new()));
        // Polled here, in the service call (the connection's task): a waker
        // that does nothing is enough, as a pending lookup is polled again
        // with the task's own right after.
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match Pin::new(&mut handling).poll(&mut cx) {
            Poll::Ready(outcome) => match answer_now(&shared, outcome, delivery) {
                Now::Answer(answer) => Answering::Ready(Some(answer)),
                Now::PassOn(passthrough, delivery) => Answering::Later(Box::pin(async move {
                    pass_on(&shared, passthrough, delivery).await
                })),
            },
            Poll::Pending => Answering::Later(Box::pin(async move {
                let outcome = handling.await;
                respond(&shared, outcome, delivery).await
            })),
        }
    }
}

/// A request's head, out of the read buffer.
struct Head {
    method: Method,
    target: Target,
    version: Version,
    headers: http::HeaderMap,
}

impl Head {
    #[inline(always)] // one call per request: inlined, the head is not copied between steps
    fn request(self, body: Bytes) -> Request {
        Request::from_owned_parts(self.method, self.target, self.version, self.headers, body)
    }
}

/// Where a request is resolved, and what answering its outcome needs.
struct Asking {
    shared: Arc<Shared>,
    base_url: Option<Arc<Url>>,
    delivery: Delivery,
}

impl Asking {
    /// Hands `request` to the engine in its scope: the lookup, with what
    /// its outcome's answer needs.
    #[inline(always)] // one call per request: inlined, the head is not copied between steps
    fn hand(
        self,
        request: Request,
    ) -> (
        Arc<Shared>,
        impl Future<Output = Outcome> + Unpin + Send + use<>,
        Delivery,
    ) {
        let Asking {
            shared,
            base_url,
            delivery,
        } = self;
        let scope = match &delivery.boundary {
            Some(boundary) => Arc::clone(boundary),
            None => shared.engine.current_scope(),
        };
        #[cfg(all(feature = "ws", feature = "graphql"))]
        let delivery = Delivery {
            resolve_in: Some(super::ws::ResolveIn {
                scope: Arc::clone(&scope),
                base_url: base_url.clone(),
            }),
            ..delivery
        };
        let handling = shared.engine.handle_in(scope, request, base_url);
        (shared, handling, delivery)
    }
}

/// Resolves a request whose body is a call's: it ends with the call, and
/// its messages reach the handler (or the real server) as they come.
async fn streamed(head: Head, body: Incoming, asking: Asking) -> Answer {
    let request = head.request(Bytes::new());
    let request = request.with_live_body(arriving(body).await);
    resolve(asking, request).await
}

/// Resolves a request once its body has been read in full.
async fn read_in_full(head: Head, body: Incoming, asking: Asking) -> Answer {
    resolve(asking, buffered(head, body).await?).await
}

/// Resolves `request`, and answers.
async fn resolve(asking: Asking, request: Request) -> Answer {
    let (shared, handling, delivery) = asking.hand(request);
    match answer_now(&shared, handling.await, delivery) {
        Now::Answer(answer) => answer,
        Now::PassOn(passthrough, delivery) => passing_on(shared, passthrough, delivery).await,
    }
}

/// A call's body as it arrives. What is there already is taken at once:
/// usually a unary call's whole body, which then needs no stream behind it
/// (nor the allocations and wake-ups of one).
async fn arriving(mut body: Incoming) -> LiveBody {
    let mut received = smallvec::SmallVec::new();
    // A few frames at most (a unary call: its message, then its end):
    // the handler need not wait for a long upload to be read.
    for _ in 0..ARRIVED_FRAMES {
        let next = std::future::poll_fn(|cx| {
            Poll::Ready(http_body::Body::poll_frame(Pin::new(&mut body), cx))
        })
        .await;
        match next {
            Poll::Pending => break,
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) if data.is_empty() => {}
                Ok(data) => received.push(data),
                // Trailers come last.
                Err(_) => return LiveBody::arrived(received, None),
            },
            Poll::Ready(None) => return LiveBody::arrived(received, None),
            Poll::Ready(Some(Err(error))) => {
                return LiveBody::arrived(received, Some(StreamError::new(error).to_string()));
            }
        }
    }
    LiveBody::new(
        received,
        crate::message::body::chunk_stream(body.into_data_stream()),
    )
}

/// The most frames of a call's body [`arriving`] takes in before the call
/// is resolved.
const ARRIVED_FRAMES: usize = 4;

/// The request with its body read in full.
async fn buffered(head: Head, body: Incoming) -> Result<Request, BoxError> {
    let body = body.collect().await?.to_bytes();
    // A small body is a slice of the connection's read buffer: copied,
    // the request owns all its bytes and the journal may keep it as is.
    Ok(if body.len() <= MAX_BODY {
        head.request(Bytes::copy_from_slice(&body))
    } else {
        Request::from_parts(head.method, head.target.into_url(), head.headers, body)
            .with_version(head.version)
    })
}

/// A `CONNECT`: a tunnel, unless it comes inside one.
fn connect(
    shared: Arc<Shared>,
    entry: &Entry,
    request: http::Request<Incoming>,
    scope: Option<Arc<Scope>>,
    fault: &Arc<ConnectionFault>,
) -> http::Response<ResponseBody> {
    match entry {
        Entry::Direct { .. } => open_tunnel(shared, request, scope, Arc::clone(fault)),
        Entry::Tunnel { .. } => plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "mocklib: CONNECT inside a CONNECT tunnel is not supported\n",
        ),
    }
}

/// Why a request's scope refuses it.
enum Refused {
    /// A proxy credential whose boundary has ended.
    Credential(String),
    /// The boundary the connection was made to (its port, a tunnel its
    /// credential opened) has ended: the boundary's id.
    Ended(u64),
}

/// The scope a request resolves in: the boundary's own port, the tunnel's,
/// or the one a proxy credential names.
fn scope_of(
    shared: &Shared,
    entry: &Entry,
    headers: &http::HeaderMap,
    credential: bool,
) -> Result<Option<Arc<Scope>>, Refused> {
    match entry {
        Entry::Direct { scope: None } if !credential => Ok(None),
        Entry::Direct { scope: None } => {
            match shared
                .scopes
                .scope_named_by(headers.get(PROXY_AUTHORIZATION))
            {
                CredentialScope::None => Ok(None),
                CredentialScope::Live(scope) => Ok(Some(scope)),
                CredentialScope::Ended(credential) => Err(Refused::Credential(credential)),
            }
        }
        // The connection outlives its boundary while the client keeps it
        // (and until the listener closes it, just after the end).
        Entry::Direct { scope: Some(scope) }
        | Entry::Tunnel {
            scope: Some(scope), ..
        } if scope.is_ended() => Err(Refused::Ended(scope.id())),
        Entry::Direct { scope } | Entry::Tunnel { scope, .. } => Ok(scope.clone()),
    }
}

/// What turning an outcome into the connection's answer needs besides it.
struct Delivery {
    version: Version,
    fault: Arc<ConnectionFault>,
    /// The boundary the request resolves in (`None` at the root): its
    /// streamed bodies and WebSockets end with it.
    boundary: Option<Arc<Scope>>,
    #[cfg(feature = "ws")]
    on_upgrade: Option<hyper::upgrade::OnUpgrade>,
    /// The scope and base URL a WebSocket's GraphQL operations resolve in:
    /// the request's, known once it is handed to the engine.
    #[cfg(all(feature = "ws", feature = "graphql"))]
    resolve_in: Option<super::ws::ResolveIn>,
}

/// The engine's outcome as the connection's answer: a response, a fault
/// performed on the connection, a passthrough, or an accepted WebSocket.
async fn respond(shared: &Arc<Shared>, outcome: Outcome, delivery: Delivery) -> Answer {
    match answer_now(shared, outcome, delivery) {
        Now::Answer(answer) => answer,
        Now::PassOn(passthrough, delivery) => pass_on(shared, passthrough, delivery).await,
    }
}

/// An outcome's answer, or the passthrough still to perform.
enum Now {
    Answer(Answer),
    PassOn(Passthrough, Delivery),
}

/// The answer to every outcome but a passthrough, which is handed back.
#[inline(always)] // one call per request: inlined, the head is not copied between steps
fn answer_now(shared: &Arc<Shared>, outcome: Outcome, delivery: Delivery) -> Now {
    let (version, fault) = (delivery.version, &delivery.fault);
    Now::Answer(match outcome {
        Outcome::Mocked(response) => match response.extensions().get::<Fault>() {
            Some(&injected) => {
                let (head, _) = response.into_parts();
                Err(inject(injected, Some(&head), version, fault))
            }
            None => Ok(mocked(
                response,
                version,
                || hold_for(version, fault),
                delivery.boundary.as_ref().map(|scope| (&**shared, scope)),
            )),
        },
        Outcome::NetworkError(error) => match error.fault() {
            Some(injected) => Err(inject(injected, None, version, fault)),
            // Failing the service makes hyper drop the connection without a
            // response: the client sees a transport error, as with a network error.
            None => Err(error.into()),
        },
        Outcome::Passthrough(passthrough) => return Now::PassOn(passthrough, delivery),
        #[cfg(feature = "ws")]
        Outcome::WebSocket(upgrade) => {
            let accepted = super::ws::accept(
                shared,
                upgrade,
                delivery.on_upgrade,
                delivery
                    .boundary
                    .as_ref()
                    .map(|scope| shared.scopes.register(scope)),
                #[cfg(feature = "graphql")]
                delivery.resolve_in,
            );
            Ok(match accepted {
                Ok(response) => response.map(|()| empty_body()),
                Err(message) => plain(StatusCode::BAD_REQUEST, &message),
            })
        }
    })
}

/// [`pass_on`] in a box of its own: a passthrough's state (made here, not
/// in [`resolve`]'s future) would be most of that future, which is
/// allocated and moved for every request with a body.
fn passing_on(
    shared: Arc<Shared>,
    passthrough: Passthrough,
    delivery: Delivery,
) -> crate::support::maybe_send::BoxFuture<Answer> {
    Box::pin(async move { pass_on(&shared, passthrough, delivery).await })
}

/// A passthrough performed: the real request, or the real WebSocket.
async fn pass_on(shared: &Arc<Shared>, passthrough: Passthrough, delivery: Delivery) -> Answer {
    #[cfg(feature = "ws")]
    if passthrough.request().is_websocket_upgrade() {
        return Ok(pass_websocket_through(shared, passthrough, delivery.on_upgrade).await);
    }
    Ok(perform_for_real(
        shared,
        passthrough,
        hold_for(delivery.version, &delivery.fault),
    )
    .await)
}

/// An upgrade no handler took, performed as it is: the client's socket
/// joined to the real server's.
#[cfg(feature = "ws")]
async fn pass_websocket_through(
    shared: &Arc<Shared>,
    passthrough: Passthrough,
    on_upgrade: Option<hyper::upgrade::OnUpgrade>,
) -> http::Response<ResponseBody> {
    let request = passthrough.request().clone();
    if is_own_address(shared, request.url()) {
        let message = format!(
            "mocklib: no handler took the WebSocket {} and it is addressed to this mocklib \
             listener itself, so there is no real server to pass it to\n",
            request.url()
        );
        return plain(StatusCode::BAD_GATEWAY, &message);
    }
    match super::ws::pass_through(shared, request, on_upgrade).await {
        Ok(response) => {
            passthrough.report_response(response.status(), response.headers());
            response.map(|()| empty_body())
        }
        Err(message) => plain(StatusCode::BAD_GATEWAY, &message),
    }
}

#[cfg(feature = "ws")]
fn empty_body() -> ResponseBody {
    ResponseBody::Mocked(crate::Body::empty())
}

/// Performs a passthrough request with the upstream client and streams the
/// real response back; failures become a 502 that says what went wrong (a
/// gRPC call's, `UNAVAILABLE`; see [`answer_for_call`]).
async fn perform_for_real(
    shared: &Shared,
    passthrough: Passthrough,
    hold: Hold,
) -> http::Response<ResponseBody> {
    let request = passthrough.request();
    if is_own_address(shared, request.url()) {
        // Nothing real behind it: for a gRPC call this listener is the
        // server it called, and that server does not serve the method.
        return answer_for_call(request, Code::Unimplemented, || {
            format!(
                "mocklib: no handler answered the call {} and it is addressed to this mocklib \
                 listener itself ({}), so there is no real server to pass it to; add a handler \
                 for it (grpc::unary and the like, or a grpc entry of `mocklib serve`)",
                request.url_parts().path(),
                request.url_for_message(),
            )
        })
        .unwrap_or_else(|| {
            plain(
                StatusCode::BAD_GATEWAY,
                &format!(
                    "mocklib: no handler answered {} {} and it is addressed to this mocklib \
                     listener itself, so there is no real server to pass it to\n",
                    request.method(),
                    request.url()
                ),
            )
        });
    }
    let mut outgoing = match request.to_http_body() {
        Ok(outgoing) => outgoing,
        // RFC 9110 §15.5.15: 414 for a URL too long to send on.
        Err(error) => {
            let message = request.unsendable_message(&error);
            return answer_for_call(request, Code::ResourceExhausted, || {
                format!(
                    "mocklib could not perform the call for real: {}",
                    message.trim_end()
                )
            })
            .unwrap_or_else(|| plain(error.status_code(), &message));
        }
    };
    super::strip_hop_by_hop(outgoing.headers_mut());
    // RFC 9110 §7.6.3: a proxy adds itself to Via, which is also how it
    // recognises its own requests coming back.
    outgoing
        .headers_mut()
        .append(http::header::VIA, shared.via.clone());
    let upstream = match shared.upstream.get() {
        Ok(upstream) => upstream,
        Err(error) => return upstream_failed(request, error),
    };
    match upstream.perform(outgoing).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            super::strip_hop_by_hop(&mut parts.headers);
            let capture = passthrough.capture(parts.status, parts.version, &parts.headers);
            passthrough.report_response(parts.status, &parts.headers);
            // The real server may fail mid-body: its error too comes after
            // the chunks before it.
            let body = ResponseBody::boxed(HoldError::new(Tap::new(body, capture), hold));
            http::Response::from_parts(parts, body)
        }
        Err(error) => upstream_failed(request, &error.to_string()),
    }
}

/// The answer to a request the upstream client could not perform: a 502
/// saying why, or for a call (whose client reads a status, not a 502
/// page) `UNAVAILABLE`.
fn upstream_failed(request: &Request, error: &str) -> http::Response<ResponseBody> {
    answer_for_call(request, Code::Unavailable, || {
        format!(
            "mocklib could not perform the call {} for real: {error}",
            request.url_parts().path()
        )
    })
    .unwrap_or_else(|| plain(StatusCode::BAD_GATEWAY, &format!("mocklib: {error}\n")))
}

/// mocklib's own answer to `request` when it is a call of an RPC protocol
/// (gRPC): the protocol's error with `code` and the message `message`
/// makes (see `crate::message::rpc`); `None` for any other request.
fn answer_for_call(
    request: &Request,
    code: Code,
    message: impl FnOnce() -> String,
) -> Option<http::Response<ResponseBody>> {
    crate::message::rpc::call_error(request.method(), request.headers(), code, message)
        // A call is HTTP/2.
        .map(|answer| mocked(answer, Version::HTTP_2, || Hold::Marker, None))
}

/// mocklib's answer to a request it refuses before resolving it: `status`
/// with `why` as text, or for a call of an RPC protocol (gRPC) the
/// protocol's error with `code`, naming the method (see `crate::message::rpc`).
#[cold] // kept out of `admit`, which is inlined into every request's service call
fn refusal<B>(
    request: &http::Request<B>,
    status: StatusCode,
    code: Code,
    why: &str,
) -> http::Response<ResponseBody> {
    let why = why.trim_end();
    let why = why.strip_prefix("mocklib: ").unwrap_or(why);
    let call = crate::message::rpc::call_error(request.method(), request.headers(), code, || {
        format!("mocklib refused the call {}: {why}", request.uri().path())
    });
    match call {
        Some(answer) => mocked(answer, Version::HTTP_2, || Hold::Marker, None),
        None => plain(status, &format!("mocklib: {why}\n")),
    }
}

/// What a failing body of this connection waits for before failing it.
fn hold_for(version: Version, fault: &ConnectionFault) -> Hold {
    if version >= Version::HTTP_2 {
        Hold::Marker
    } else {
        Hold::Flush(Arc::clone(&fault.flushed))
    }
}

/// A mocked response as hyper sends it on a connection of `version`.
/// `hold`: what a failing stream waits for (asked only for a stream).
/// `boundary`: the boundary it answers in, whose end ends a streamed body.
fn mocked(
    response: http::Response<crate::Body>,
    version: Version,
    hold: impl FnOnce() -> Hold,
    boundary: Option<(&Shared, &Arc<Scope>)>,
) -> http::Response<ResponseBody> {
    let (mut parts, body) = response.into_parts();
    // HTTP/1.1 sends the status text as the reason phrase; `into_http` sets
    // one only when it is not the status's own, which hyper writes itself.
    if let Some(phrase) = parts
        .extensions
        .remove::<StatusText>()
        .and_then(|text| hyper::ext::ReasonPhrase::try_from(text.0.into_bytes()).ok())
    {
        parts.extensions.insert(phrase);
    }
    // Streamed or not, hyper pulls the body frame by frame and drops it
    // (ending the stream) when the client goes away. Only a stream can fail.
    let body = if body.is_stream() {
        match boundary {
            Some((shared, scope)) => ResponseBody::boxed(HoldError::new(
                EndsWith::new(body, scope.id(), shared.scopes.register(scope)),
                hold(),
            )),
            None => ResponseBody::boxed(HoldError::new(body, hold())),
        }
    } else if body.has_trailers() && version >= Version::HTTP_2 {
        ResponseBody::Trailed(body)
    } else {
        ResponseBody::Mocked(body)
    };
    http::Response::from_parts(parts, body)
}

/// A proxy credential for a boundary that has ended: say so instead of
/// silently answering from the root (a gRPC call: `UNAUTHENTICATED`, the
/// credential being no longer good).
fn ended_scope<B>(request: &http::Request<B>, credential: &str) -> http::Response<ResponseBody> {
    let mut response = refusal(
        request,
        StatusCode::PROXY_AUTHENTICATION_REQUIRED,
        Code::Unauthenticated,
        &format!(
            "the proxy credential {credential:?} names a boundary that has ended; \
             get proxy_url(), env() or reqwest_client() again inside the current boundary"
        ),
    );
    // HTTP's 407 asks for another credential; a call's status says why.
    if response.status() == StatusCode::PROXY_AUTHENTICATION_REQUIRED {
        response.headers_mut().insert(
            http::header::PROXY_AUTHENTICATE,
            http::HeaderValue::from_static("Basic realm=\"mocklib\""),
        );
    }
    response
}

/// A request on a connection made to a boundary that has ended (to its
/// port, or in a tunnel its credential opened), which arrived before the
/// listener closed the connection: neither the boundary's handlers nor the
/// root's answer it.
///
/// `410 Gone` rather than `503`: the boundary will not come back, and
/// clients and retry middleware take a 5xx for a passing fault and send it
/// again (urllib3's `Retry`, reqwest-retry), where a 4xx tells the test it
/// used an address it should not have kept. The body names the boundary
/// by its credential (`scope-N`). On HTTP/1 the connection closes after it.
fn ended_connection<B>(
    request: &http::Request<B>,
    id: Option<u64>,
) -> http::Response<ResponseBody> {
    let which = id.map_or_else(String::new, |id| format!(" (scope-{id})"));
    let mut response = refusal(
        request,
        StatusCode::GONE,
        Code::Unavailable,
        &format!(
            "this connection was made to a boundary{which} that has ended (a scope \
             `mocklib serve` deleted or expired, or a boundary dropped or ended); its handlers \
             no longer answer. Use the addresses of a live one."
        ),
    );
    if request.version() < Version::HTTP_2 {
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    response
}

fn plain(status: StatusCode, message: &str) -> http::Response<ResponseBody> {
    let mut response = http::Response::new(ResponseBody::Mocked(crate::Body::from(Bytes::from(
        message.to_owned(),
    ))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Accepts `CONNECT host:port` and serves the tunnel once hyper hands it over.
fn open_tunnel(
    shared: Arc<Shared>,
    request: http::Request<Incoming>,
    scope: Option<Arc<Scope>>,
    outer: Arc<ConnectionFault>,
) -> http::Response<ResponseBody> {
    let Some(authority) = request.uri().authority().cloned() else {
        return plain(
            StatusCode::BAD_REQUEST,
            "mocklib: CONNECT needs a host:port target\n",
        );
    };
    tokio::spawn(async move {
        let closing = Arc::clone(&shared);
        let serving = async move {
            match hyper::upgrade::on(request).await {
                Ok(upgraded) => {
                    tunnel(shared, TokioIo::new(upgraded), authority, scope, outer).await
                }
                Err(error) => tracing::debug!(target: "mocklib", %error, "CONNECT upgrade failed"),
            }
        };
        // Also before the tunnel's first byte: a tunnel ends with its server.
        tokio::select! {
            () = serving => {}
            () = closing.closed() => {}
        }
    });
    plain(StatusCode::OK, "")
}

/// Serves a tunnel: TLS if the client starts a handshake, plain HTTP otherwise.
async fn tunnel<I>(
    shared: Arc<Shared>,
    mut io: I,
    authority: Authority,
    scope: Option<Arc<Scope>>,
    outer: Arc<ConnectionFault>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // If the boundary whose credential opened it ends before the client
    // speaks in it, `serve` answers the first request `410` (and closes a
    // connection that sends none).
    let mut first = [0u8; 1];
    match io.read(&mut first).await {
        Ok(1) => {}
        _ => return, // closed before sending anything
    }
    let io = Rewind {
        prefix: Some(first[0]),
        inner: io,
    };
    if first[0] == TLS_HANDSHAKE {
        let acceptor = match shared.ca() {
            Ok(ca) => ca.acceptor(authority.host()),
            Err(error) => {
                // The client sees its handshake fail; this says why.
                crate::support::log::error(&format!(
                    "cannot terminate TLS for {authority}: {error}"
                ));
                return;
            }
        };
        match acceptor.accept(io).await {
            Ok(tls) => {
                serve(
                    Box::new(tls),
                    Holder::Fixed(shared),
                    Entry::tunnel("https", authority, scope),
                    Some(outer),
                )
                .await
            }
            Err(error) => {
                tracing::debug!(target: "mocklib", %error, host = authority.host(), "TLS handshake failed")
            }
        }
    } else {
        // A plain tunnel to the listener's own port or a boundary's is a
        // connection to it (performing its requests would loop).
        let entry = if is_own_authority(&shared, &authority) {
            let port = authority.port_u16();
            let scope = if port == Some(shared.address.port()) {
                scope
            } else {
                match port.and_then(|port| shared.scopes.scope_on_port(port)) {
                    Some(own) => Some(own),
                    // Its boundary ended since `is_own_authority` saw its port.
                    None => return,
                }
            };
            Entry::Direct { scope }
        } else {
            Entry::tunnel("http", authority, scope)
        };
        serve(Box::new(io), Holder::Fixed(shared), entry, Some(outer)).await;
    }
}

/// Whether `authority` is the listener's own address (its port or a
/// boundary's).
fn is_own_authority(shared: &Shared, authority: &Authority) -> bool {
    Url::parse(&format!("http://{authority}/")).is_ok_and(|url| is_own_address(shared, &url))
}

/// A stream with one already-read byte put back in front.
struct Rewind<I> {
    prefix: Option<u8>,
    inner: I,
}

impl<I: AsyncRead + Unpin> AsyncRead for Rewind<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(byte) = self.prefix.take() {
            if buf.remaining() > 0 {
                buf.put_slice(&[byte]);
                return Poll::Ready(Ok(()));
            }
            self.prefix = Some(byte);
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Rewind<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
