//! Accepting connections and answering each request on them.
//!
//! Layering: this file is the transport (sockets, TLS, tunnels, HTTP
//! framing by hyper); what to answer is the engine's decision; performing a
//! request for real is the upstream client's job.
//!
//! Injected [`Fault`]s are the one place the transport writes past hyper:
//! on HTTP/1 the service plans the fault on the connection and fails, hyper
//! drops the connection without a byte, and [`serve`] (or [`FaultIo`]'s
//! drop, for a reset) performs it on the socket hyper let go of.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::uri::Authority;
use http::{Method, StatusCode, Version};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use url::Url;

use super::{CredentialScope, Port, Shared};
use crate::engine::{Outcome, Passthrough};
use crate::exchange::Tap;
use crate::fault::Fault;
use crate::handlers::Scope;
use crate::journal::MAX_BODY;
use crate::request::{Request, own_values};
use crate::response::StatusText;
use http::header::PROXY_AUTHORIZATION;
use std::sync::Weak;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ResponseBody = BoxBody<Bytes, BoxError>;

/// The TLS record type of a handshake: the first byte a TLS client sends.
const TLS_HANDSHAKE: u8 = 0x16;

/// How a connection reached the listener, which decides the request URLs
/// and the scope.
#[derive(Clone)]
enum Entry {
    /// Straight to the listener: origin-form (base URL mode), absolute-form
    /// (forward proxy) or `CONNECT`. `scope` is set on a boundary's own port.
    Direct { scope: Option<Arc<Scope>> },
    /// Inside a `CONNECT host:port` tunnel: requests carry only a path, so
    /// the URL is rebuilt from the tunnel's authority; the scope is the one
    /// the `CONNECT` named.
    Tunnel {
        scheme: &'static str,
        authority: Authority,
        scope: Option<Arc<Scope>>,
    },
}

/// Which server answers a connection's requests.
#[derive(Clone)]
pub(super) enum Tenant {
    /// Whichever server holds the port when a request arrives: a pooled
    /// port outlives its servers, and so do keep-alive connections to it.
    Lent(Arc<Port>),
    /// One server, for the connection's whole life: a boundary's own port
    /// and a `CONNECT` tunnel (its TLS was set up with that server's CA).
    Fixed(Arc<Shared>),
}

impl Tenant {
    fn current(&self) -> Option<Arc<Shared>> {
        match self {
            Tenant::Lent(port) => port.tenant(),
            Tenant::Fixed(shared) => Some(Arc::clone(shared)),
        }
    }

    /// Resolves when the connections of this tenancy must end.
    async fn gone(&self) {
        match self {
            Tenant::Lent(port) => port.retired().await,
            Tenant::Fixed(shared) => shared.closed().await,
        }
    }
}

/// Accepts connections until the port is retired (a pooled port never is),
/// or, for a boundary's own port (`scope` set), until its server closes or
/// the boundary is gone.
pub(super) async fn accept_loop(
    listener: tokio::net::TcpListener,
    tenant: Tenant,
    scope: Option<Weak<Scope>>,
) {
    let mut liveness = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = tenant.gone() => break,
            _ = liveness.tick() => {
                if scope.as_ref().is_some_and(|scope| scope.strong_count() == 0) {
                    break;
                }
                continue;
            }
        };
        match accepted {
            Ok((stream, _peer)) => {
                let scope = match &scope {
                    None => None,
                    Some(weak) => match weak.upgrade() {
                        Some(scope) => Some(scope),
                        None => break,
                    },
                };
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve(
                    Box::new(stream),
                    tenant.clone(),
                    Entry::Direct { scope },
                    None,
                ));
            }
            // Out of file descriptors and the like: keep serving the others.
            Err(error) => {
                tracing::warn!(target: "mocklib", %error, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
    if let (Some(_), Some(shared), Ok(address)) = (scope, tenant.current(), listener.local_addr()) {
        shared.scopes.forget_port(address);
    }
}

/// A connection the listener serves: TCP, a plain tunnel or TLS in a tunnel.
trait Connection: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// The TCP stream itself, when this connection is one (not a tunnel).
    fn as_tcp(&self) -> Option<&tokio::net::TcpStream>;
}

impl<I: AsyncRead + AsyncWrite + Unpin + Send + 'static> Connection for I {
    fn as_tcp(&self) -> Option<&tokio::net::TcpStream> {
        (self as &dyn std::any::Any).downcast_ref()
    }
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
    tenant: Tenant,
    entry: Entry,
    outer: Option<Arc<ConnectionFault>>,
) {
    let fault = Arc::new(ConnectionFault::new(outer));
    let serving = tenant.clone();
    let faulting = Arc::clone(&fault);
    let service = service_fn(move |request| answer_for(&serving, &entry, &faulting, request));
    let builder = auto::Builder::new(TokioExecutor::new());
    let io = FaultIo {
        io: Some(io),
        fault: Arc::clone(&fault),
    };
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    // `select!` drops the connection (so hyper's hold on `io`) as it ends.
    let result = tokio::select! {
        result = connection => result,
        // The runtime is shared by every server: connections end with
        // their tenancy, not with the runtime.
        () = tenant.gone() => return,
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

/// What an injected fault asks of a connection once hyper lets go of it
/// (HTTP/1 only: an HTTP/2 connection carries other requests).
#[derive(Default)]
enum Planned {
    #[default]
    Nothing,
    /// Close with a TCP reset.
    Reset,
    /// Write these bytes, then close; `io` is the connection, handed back by
    /// [`FaultIo`] when hyper drops it.
    Raw {
        bytes: Bytes,
        io: Option<Box<dyn Connection>>,
    },
}

/// The fault planned for one connection. The service plans it, then fails
/// so that hyper ends the connection without writing anything; [`FaultIo`]
/// and [`serve`] carry it out.
struct ConnectionFault {
    planned: std::sync::Mutex<Planned>,
    /// The tunnel's own connection, for a reset inside a `CONNECT` tunnel.
    outer: Option<Arc<ConnectionFault>>,
}

impl ConnectionFault {
    fn new(outer: Option<Arc<ConnectionFault>>) -> Self {
        ConnectionFault {
            planned: std::sync::Mutex::default(),
            outer,
        }
    }

    fn plan(&self) -> std::sync::MutexGuard<'_, Planned> {
        self.planned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Resets this connection, or the TCP connection a tunnel runs in.
    fn reset(&self) {
        match &self.outer {
            Some(outer) => outer.reset(),
            None => *self.plan() = Planned::Reset,
        }
    }

    fn write_raw(&self, bytes: Bytes) {
        *self.plan() = Planned::Raw { bytes, io: None };
    }

    /// The connection and the bytes to write on it, once hyper dropped it.
    fn take_raw(&self) -> Option<(Box<dyn Connection>, Bytes)> {
        match std::mem::take(&mut *self.plan()) {
            Planned::Raw {
                bytes,
                io: Some(io),
            } => Some((io, bytes)),
            _ => None,
        }
    }
}

/// The connection as hyper sees it: the IO itself, which it hands back to
/// [`serve`] (or resets) on drop when a fault is planned.
struct FaultIo {
    /// Always `Some` until dropped.
    io: Option<Box<dyn Connection>>,
    fault: Arc<ConnectionFault>,
}

impl FaultIo {
    fn io(&mut self) -> io::Result<Pin<&mut dyn Connection>> {
        match self.io.as_deref_mut() {
            Some(io) => Ok(Pin::new(io)),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Drop for FaultIo {
    fn drop(&mut self) {
        let Some(io) = self.io.take() else { return };
        match &mut *self.fault.plan() {
            Planned::Nothing => {}
            // SO_LINGER 0: closing sends RST instead of FIN. (Tokio warns
            // that lingering blocks on drop; a zero linger never does.)
            Planned::Reset => {
                // Not `io.as_tcp()`: the box itself is a `Connection` too.
                if let Some(Err(error)) = (*io).as_tcp().map(|tcp| tcp.set_zero_linger()) {
                    tracing::debug!(target: "mocklib", %error, "cannot reset the connection");
                }
            }
            Planned::Raw { io: slot, .. } => *slot = Some(io),
        }
    }
}

impl AsyncRead for FaultIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.io()?.poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io()?.poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io()?.poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io()?.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io()?.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.as_ref().is_some_and(|io| io.is_write_vectored())
    }
}

/// Carries out an injected fault on an HTTP/1 connection: plans what
/// [`serve`] does once hyper lets go of it, and returns the error that makes
/// hyper let go without writing a byte. On HTTP/2 the error alone resets the
/// request's stream, and the connection goes on serving the others.
fn inject(
    fault: Fault,
    head: Option<&http::response::Parts>,
    version: Version,
    on: &ConnectionFault,
) -> BoxError {
    if version < Version::HTTP_2 {
        match fault {
            Fault::ConnectionReset => on.reset(),
            // No bytes, but a clean close (TLS close_notify, then FIN):
            // `HttpResponse::error()` just drops the connection.
            Fault::EmptyResponse => on.write_raw(Bytes::new()),
            Fault::Garbage => on.write_raw(Bytes::from_static(Fault::GARBAGE)),
            Fault::MalformedChunk => on.write_raw(malformed_chunk(head)),
        }
    }
    format!("injected fault: {fault}").into()
}

/// A response head in HTTP/1.1 (the status and headers of `head`, chunked),
/// then a chunk whose size line is not hexadecimal.
fn malformed_chunk(head: Option<&http::response::Parts>) -> Bytes {
    let mut raw = Vec::new();
    let status = head.map_or(StatusCode::OK, |head| head.status);
    let reason = head
        .and_then(|head| head.extensions.get::<StatusText>())
        .map_or_else(
            || status.canonical_reason().unwrap_or(""),
            |text| text.0.as_str(),
        );
    raw.extend_from_slice(format!("HTTP/1.1 {} {reason}\r\n", status.as_str()).as_bytes());
    for (name, value) in head.iter().flat_map(|head| head.headers.iter()) {
        if name != http::header::TRANSFER_ENCODING && name != http::header::CONTENT_LENGTH {
            raw.extend_from_slice(name.as_str().as_bytes());
            raw.extend_from_slice(b": ");
            raw.extend_from_slice(value.as_bytes());
            raw.extend_from_slice(b"\r\n");
        }
    }
    raw.extend_from_slice(b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    raw.extend_from_slice(Fault::MALFORMED_CHUNK);
    raw.into()
}

/// The answer of the server that holds the connection's port now.
/// Takes in one request, then answers it. Everything that reads the request
/// head happens here, before the future: hyper reads on (to notice a client
/// that goes away) while that future runs, and a head still alive then would
/// keep its read buffer from being reused, costing a new 8 KiB buffer per
/// request.
fn answer_for(
    tenant: &Tenant,
    entry: &Entry,
    fault: &Arc<ConnectionFault>,
    request: http::Request<Incoming>,
) -> impl Future<Output = Result<http::Response<ResponseBody>, BoxError>> + Send + 'static + use<> {
    let admitted = match tenant.current() {
        Some(shared) => admit(shared, entry, fault, request),
        None => Admitted::Answered(Ok(no_server())),
    };
    async move {
        match admitted {
            Admitted::Answered(answer) => answer,
            Admitted::Resolve(resolve) => resolve.run().await,
        }
    }
}

/// The answer of a pooled port between two servers, to a client that kept
/// its connection from the server before.
fn no_server() -> http::Response<ResponseBody> {
    plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "mocklib: the server that listened on this port has closed, and no other holds it now\n",
    )
}

/// A request taken in: answered already, or to be resolved by the engine.
#[expect(
    clippy::large_enum_variant,
    reason = "one per request, moved once into its future: a box would cost an allocation"
)]
enum Admitted {
    Answered(Result<http::Response<ResponseBody>, BoxError>),
    Resolve(Resolve),
}

/// What resolving a request needs once its head has been read; nothing in
/// it refers to the connection's read buffer.
struct Resolve {
    shared: Arc<Shared>,
    scope: Option<Arc<Scope>>,
    head: (Method, Url, Version, http::HeaderMap),
    base_url: Option<Url>,
    body: Incoming,
    fault: Arc<ConnectionFault>,
    #[cfg(feature = "ws")]
    on_upgrade: Option<hyper::upgrade::OnUpgrade>,
}

fn admit(
    shared: Arc<Shared>,
    entry: &Entry,
    fault: &Arc<ConnectionFault>,
    request: http::Request<Incoming>,
) -> Admitted {
    // A request that already went through this listener came back through a
    // name for it the address check could not know (a DNS alias, say).
    if came_through(&shared, request.headers()) {
        return Admitted::Answered(Ok(plain(
            StatusCode::LOOP_DETECTED,
            "mocklib: this request already passed through this listener (its Via header says so); \
             performing it again would loop\n",
        )));
    }
    let scope = match scope_of(&shared, entry, request.headers()) {
        Ok(scope) => scope,
        Err(credential) => return Admitted::Answered(Ok(ended_scope(&credential))),
    };
    if request.method() == Method::CONNECT {
        return Admitted::Answered(Ok(connect(shared, entry, request, scope, fault)));
    }
    let (mut parts, body) = request.into_parts();
    // The credential is the listener's business, not the handlers' or the upstream's.
    parts.headers.remove(PROXY_AUTHORIZATION);
    let (url, base_url) = match request_url(&shared, entry, &parts) {
        Ok(found) => found,
        Err(message) => return Admitted::Answered(Ok(plain(StatusCode::BAD_REQUEST, &message))),
    };
    own_values(&mut parts.headers);
    Admitted::Resolve(Resolve {
        shared,
        scope,
        head: (parts.method, url, parts.version, parts.headers),
        base_url,
        body,
        fault: Arc::clone(fault),
        #[cfg(feature = "ws")]
        on_upgrade: parts.extensions.remove::<hyper::upgrade::OnUpgrade>(),
    })
}

impl Resolve {
    async fn run(self) -> Result<http::Response<ResponseBody>, BoxError> {
        let (method, url, version, headers) = self.head;
        let body = self.body.collect().await?.to_bytes();
        // A small body is a slice of the connection's read buffer: copied,
        // the request owns all its bytes and the journal may keep it as is.
        let request = if body.len() <= MAX_BODY {
            let body = Bytes::copy_from_slice(&body);
            Request::from_owned_parts(method, url, version, headers, body)
        } else {
            Request::from_parts(method, url, headers, body).with_version(version)
        };
        let shared = self.shared;
        let scope = self.scope.unwrap_or_else(|| shared.engine.current_scope());
        #[cfg(all(feature = "ws", feature = "graphql"))]
        let resolve_in = super::ws::ResolveIn {
            scope: Arc::clone(&scope),
            base_url: self.base_url.clone(),
        };
        let outcome = shared.engine.handle_in(scope, request, self.base_url).await;
        let delivery = Delivery {
            version,
            fault: &self.fault,
            #[cfg(feature = "ws")]
            on_upgrade: self.on_upgrade,
            #[cfg(all(feature = "ws", feature = "graphql"))]
            resolve_in,
        };
        respond(&shared, outcome, delivery).await
    }
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

/// The scope a request resolves in: the boundary's own port, the tunnel's,
/// or the one a proxy credential names (`Err`: a credential whose boundary
/// has ended).
fn scope_of(
    shared: &Shared,
    entry: &Entry,
    headers: &http::HeaderMap,
) -> Result<Option<Arc<Scope>>, String> {
    match entry {
        Entry::Direct { scope: None } => {
            match shared
                .scopes
                .scope_named_by(headers.get(PROXY_AUTHORIZATION))
            {
                CredentialScope::None => Ok(None),
                CredentialScope::Live(scope) => Ok(Some(scope)),
                CredentialScope::Ended(credential) => Err(credential),
            }
        }
        Entry::Direct { scope } | Entry::Tunnel { scope, .. } => Ok(scope.clone()),
    }
}

/// What turning an outcome into the connection's answer needs besides it.
struct Delivery<'a> {
    version: Version,
    fault: &'a Arc<ConnectionFault>,
    #[cfg(feature = "ws")]
    on_upgrade: Option<hyper::upgrade::OnUpgrade>,
    #[cfg(all(feature = "ws", feature = "graphql"))]
    resolve_in: super::ws::ResolveIn,
}

/// The engine's outcome as the connection's answer: a response, a fault
/// performed on the connection, a passthrough, or an accepted WebSocket.
async fn respond(
    shared: &Arc<Shared>,
    outcome: Outcome,
    delivery: Delivery<'_>,
) -> Result<http::Response<ResponseBody>, BoxError> {
    let (version, fault) = (delivery.version, delivery.fault);
    match outcome {
        Outcome::Mocked(response) => match response.extensions().get::<Fault>() {
            Some(&injected) => {
                let (head, _) = response.into_parts();
                Err(inject(injected, Some(&head), version, fault))
            }
            None => Ok(mocked(response)),
        },
        Outcome::NetworkError(error) => match error.fault() {
            Some(injected) => Err(inject(injected, None, version, fault)),
            // Failing the service makes hyper drop the connection without a
            // response: the client sees a transport error, as with a network error.
            None => Err(error.into()),
        },
        #[cfg(feature = "ws")]
        Outcome::Passthrough(passthrough) if passthrough.request().is_websocket_upgrade() => {
            Ok(pass_websocket_through(shared, passthrough, delivery.on_upgrade).await)
        }
        Outcome::Passthrough(passthrough) => Ok(perform_for_real(shared, passthrough).await),
        #[cfg(feature = "ws")]
        Outcome::WebSocket(upgrade) => {
            let accepted = super::ws::accept(
                shared,
                upgrade,
                delivery.on_upgrade,
                #[cfg(feature = "graphql")]
                Some(delivery.resolve_in),
            );
            Ok(match accepted {
                Ok(response) => response.map(|()| empty_body()),
                Err(message) => plain(StatusCode::BAD_REQUEST, &message),
            })
        }
    }
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
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

/// Performs a passthrough request with the upstream client and streams the
/// real response back; failures become a 502 that says what went wrong.
async fn perform_for_real(
    shared: &Shared,
    passthrough: Passthrough,
) -> http::Response<ResponseBody> {
    let request = passthrough.request();
    if is_own_address(shared, request.url()) {
        return plain(
            StatusCode::BAD_GATEWAY,
            &format!(
                "mocklib: no handler answered {} {} and it is addressed to this mocklib \
                 listener itself, so there is no real server to pass it to\n",
                request.method(),
                request.url()
            ),
        );
    }
    let mut outgoing = match request.to_http() {
        Ok(outgoing) => outgoing.map(Full::new),
        // RFC 9110 §15.5.15: 414 for a URL too long to send on.
        Err(error) => return plain(error.status_code(), &request.unsendable_message(&error)),
    };
    super::strip_hop_by_hop(outgoing.headers_mut());
    // RFC 9110 §7.6.3: a proxy adds itself to Via, which is also how it
    // recognises its own requests coming back.
    outgoing
        .headers_mut()
        .append(http::header::VIA, shared.via.clone());
    let upstream = match shared.upstream.get() {
        Ok(upstream) => upstream,
        Err(error) => return plain(StatusCode::BAD_GATEWAY, &format!("mocklib: {error}\n")),
    };
    match upstream.perform(outgoing).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            super::strip_hop_by_hop(&mut parts.headers);
            let capture = passthrough.capture(parts.status, parts.version, &parts.headers);
            passthrough.report_response(parts.status, &parts.headers);
            let body = Tap::new(body, capture).map_err(BoxError::from).boxed();
            http::Response::from_parts(parts, body)
        }
        Err(error) => plain(StatusCode::BAD_GATEWAY, &format!("mocklib: {error}\n")),
    }
}

/// The absolute URL of a request, and the base URL relative predicates
/// match against (only in base URL mode: the listener's own origin).
fn request_url(
    shared: &Shared,
    entry: &Entry,
    parts: &http::request::Parts,
) -> Result<(Url, Option<Url>), String> {
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    if path == "*" {
        return Err("mocklib: asterisk-form requests (`OPTIONS *`) are not supported\n".to_owned());
    }
    let parse = |text: String| {
        Url::parse(&text)
            .map_err(|e| format!("mocklib: cannot read the request target {text:?}: {e}\n"))
    };
    match entry {
        Entry::Tunnel {
            scheme, authority, ..
        } => Ok((parse(format!("{scheme}://{authority}{path}"))?, None)),
        // Absolute form over HTTP/1: a forward-proxy request. (HTTP/2 always
        // carries scheme and authority, so it cannot mean "proxy" here.)
        Entry::Direct { .. } if parts.uri.scheme().is_some() && parts.version < Version::HTTP_2 => {
            Ok((parse(parts.uri.to_string())?, None))
        }
        // Addressed to the listener itself, whatever name the client used for
        // it, so that name's origin is the base URL.
        // The usual case, read without parsing: the Host header is exactly
        // the listener's own `127.0.0.1:<port>`.
        Entry::Direct { .. } if parts.uri.authority().is_none() && host_is_own(shared, parts) => {
            Ok((under(&shared.origin, path), Some(shared.origin.clone())))
        }
        Entry::Direct { .. } => {
            let authority = match parts.uri.authority() {
                Some(authority) => authority.clone(),
                None => host_authority(shared, parts)?,
            };
            if is_own_origin(&shared.origin, &authority) {
                return Ok((under(&shared.origin, path), Some(shared.origin.clone())));
            }
            let url = parse(format!("http://{authority}{path}"))?;
            // The origin, without parsing a second URL (this is per request).
            let mut base = url.clone();
            base.set_path("/");
            base.set_query(None);
            Ok((url, Some(base)))
        }
    }
}

/// Whether `authority` is written exactly as the listener's own origin
/// (`127.0.0.1:<port>`, what `server.url()` gives).
fn is_own_origin(origin: &Url, authority: &Authority) -> bool {
    Some(authority.host()) == origin.host_str() && authority.port_u16() == origin.port()
}

/// `origin` with the request target's path and query: what parsing
/// `http://<origin><path_and_query>` gives (the same parser steps for the
/// path and the query), without parsing the host again.
fn under(origin: &Url, path_and_query: &str) -> Url {
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path_and_query, None),
    };
    let mut url = origin.clone();
    url.set_path(path);
    url.set_query(query);
    url
}

/// The authority named by the `Host` header, which must be a single valid
/// `host[:port]` (RFC 9112 §3.2); HTTP/1.0 may omit it.
/// Whether the request has one Host header, written exactly as the
/// listener's own authority.
fn host_is_own(shared: &Shared, parts: &http::request::Parts) -> bool {
    let mut hosts = parts.headers.get_all(http::header::HOST).iter();
    matches!(
        (hosts.next(), hosts.next()),
        (Some(host), None) if host.as_bytes() == shared.origin.authority().as_bytes()
    )
}

fn host_authority(shared: &Shared, parts: &http::request::Parts) -> Result<Authority, String> {
    let mut hosts = parts.headers.get_all(http::header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (None, _) if parts.version < Version::HTTP_11 => return Ok(own_authority(shared)),
        (None, _) => return Err("mocklib: the request has no Host header\n".to_owned()),
        (Some(_), Some(_)) => {
            return Err("mocklib: the request has more than one Host header\n".to_owned());
        }
        (Some(host), None) => host,
    };
    let invalid = || format!("mocklib: the Host header {host:?} is not a valid host[:port]\n");
    let authority: Authority = host
        .to_str()
        .ok()
        .and_then(|h| h.parse().ok())
        .ok_or_else(invalid)?;
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return Err(invalid());
    }
    Ok(authority)
}

fn own_authority(shared: &Shared) -> Authority {
    shared
        .address
        .to_string()
        .parse()
        .expect("a socket address is a valid authority")
}

/// Whether this listener's own `Via` entry is among the request's.
fn came_through(shared: &Shared, headers: &http::HeaderMap) -> bool {
    let own = shared.via.as_bytes();
    // Whole entries only: `mocklib-1-80` must not match `mocklib-1-8080`.
    headers
        .get_all(http::header::VIA)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&byte| byte == b','))
        .any(|entry| entry.trim_ascii() == own)
}

/// Whether `url` points at this listener (performing it would loop).
pub(super) fn is_own_address(shared: &Shared, url: &Url) -> bool {
    let Some(port) = url.port_or_known_default() else {
        return false;
    };
    if port != shared.address.port() && !shared.scopes.is_scope_port(port) {
        return false;
    }
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Some(url::Host::Ipv6(ip)) => match ip.to_ipv4_mapped() {
            Some(ip) => ip.is_loopback() || ip.is_unspecified(),
            None => ip.is_loopback() || ip.is_unspecified(),
        },
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

fn mocked(response: http::Response<crate::Body>) -> http::Response<ResponseBody> {
    let (mut parts, body) = response.into_parts();
    // HTTP/1.1 sends the status text as the reason phrase (hyper writes the
    // status's own when the response names none).
    let reason = parts
        .extensions
        .remove::<StatusText>()
        .filter(|text| Some(text.0.as_str()) != parts.status.canonical_reason());
    if let Some(phrase) =
        reason.and_then(|text| hyper::ext::ReasonPhrase::try_from(text.0.into_bytes()).ok())
    {
        parts.extensions.insert(phrase);
    }
    // Streamed or not, hyper pulls the body frame by frame and drops it
    // (ending the stream) when the client goes away.
    http::Response::from_parts(parts, body.map_err(BoxError::from).boxed())
}

/// A proxy credential for a boundary that has ended: say so instead of
/// silently answering from the root.
fn ended_scope(credential: &str) -> http::Response<ResponseBody> {
    let mut response = plain(
        StatusCode::PROXY_AUTHENTICATION_REQUIRED,
        &format!(
            "mocklib: the proxy credential {credential:?} names a boundary that has ended; \
             get proxy_url(), env() or reqwest_client() again inside the current boundary\n"
        ),
    );
    response.headers_mut().insert(
        http::header::PROXY_AUTHENTICATE,
        http::HeaderValue::from_static("Basic realm=\"mocklib\""),
    );
    response
}

fn plain(status: StatusCode, message: &str) -> http::Response<ResponseBody> {
    let mut response = http::Response::new(
        Full::new(Bytes::from(message.to_owned()))
            .map_err(|never| match never {})
            .boxed(),
    );
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
                crate::log::error(&format!("cannot terminate TLS for {authority}: {error}"));
                return;
            }
        };
        match acceptor.accept(io).await {
            Ok(tls) => {
                serve(
                    Box::new(tls),
                    Tenant::Fixed(shared),
                    Entry::Tunnel {
                        scheme: "https",
                        authority,
                        scope,
                    },
                    Some(outer),
                )
                .await
            }
            Err(error) => {
                tracing::debug!(target: "mocklib", %error, host = authority.host(), "TLS handshake failed")
            }
        }
    } else {
        serve(
            Box::new(io),
            Tenant::Fixed(shared),
            Entry::Tunnel {
                scheme: "http",
                authority,
                scope,
            },
            Some(outer),
        )
        .await;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Building a request's URL from the listener's parsed origin gives what
    /// parsing its text does, for the request targets hyper lets through.
    #[test]
    fn urls_built_under_the_origin_equal_parsed_ones() {
        let origin = Url::parse("http://127.0.0.1:4321/").unwrap();
        for target in [
            "/",
            "/user",
            "/a/../b",
            "/a/./b/",
            "/a/%2e%2E/b",
            "//x//y",
            "/a%2Fb",
            "/%7E/%F0%9F%A6%80",
            "/a?b=c&d",
            "/a?",
            "/a??b",
            "/a?b='c'&d=\"e\"",
            "/a/b;c=d/e",
            "/a b",
            "/a|b{c}`d",
            "/a?b c",
        ] {
            let parsed = Url::parse(&format!("http://127.0.0.1:4321{target}")).unwrap();
            assert_eq!(under(&origin, target), parsed, "{target}");
        }
        let authority: Authority = "127.0.0.1:4321".parse().unwrap();
        assert!(is_own_origin(&origin, &authority));
        for other in [
            "localhost:4321",
            "127.0.0.1:4322",
            "127.0.0.1",
            "127.000.0.1:4321",
        ] {
            let authority: Authority = other.parse().unwrap();
            assert!(!is_own_origin(&origin, &authority), "{other}");
        }
    }
}
