//! The loopback listener: one port on 127.0.0.1 through which any HTTP
//! client reaches the handlers with no code change.
//!
//! The port answers three kinds of requests:
//!
//! | request | mode | the URL handlers see |
//! |---|---|---|
//! | `GET /posts` (origin form) | base URL, like a mock server | `http://127.0.0.1:PORT/posts` (relative predicates match it) |
//! | `GET http://api.example.com/posts` (absolute form) | HTTP forward proxy | `http://api.example.com/posts` |
//! | `CONNECT api.example.com:443`, then TLS | HTTPS proxy | `https://api.example.com/posts` |
//!
//! For HTTPS the listener terminates TLS itself, with a certificate for the
//! requested host minted from a certificate authority generated in memory for
//! this server ([`Server::ca_certificate_pem`](super::Server::ca_certificate_pem)).
//! Inside a `CONNECT` tunnel the first byte tells TLS (`0x16`) from plain HTTP,
//! so `http://` URLs through a tunnelling client (ureq) work too.
//!
//! Requests to perform as they are go out through the [upstream](upstream)
//! client, with certificate verification always on, and stream back. One
//! that cannot be sent on (its URL is over the 65,534 bytes of a URI once
//! percent-encoded) is answered `414 URI Too Long` with a text body saying
//! why, and the connection goes on: see
//! [`UnsendableRequestError`](crate::request::UnsendableRequestError).
//!
//! **What decides a request's scope.** The listener cannot see which task
//! sent a request, so the scope travels in the address the client was given:
//!
//! - [`proxy_url`](super::Server::proxy_url), [`env`](super::Server::env) and
//!   [`reqwest_client`](super::Server::reqwest_client) obtained inside a
//!   boundary carry a proxy credential naming that boundary
//!   (`http://mocklib:scope-N@127.0.0.1:PORT`); every request through that
//!   proxy, and every request inside a `CONNECT` tunnel opened with it,
//!   resolves in that boundary;
//! - [`url`](super::Server::url) obtained inside a boundary is a port of its
//!   own for that boundary, closed as the boundary ends;
//! - anything else resolves at the server's root, whatever boundary the
//!   sending code runs in.
//!
//! A boundary ends when its last owner goes (its call's future, its last
//! [`Boundary`](crate::boundary::Boundary)) or at `Boundary::end`, not when the
//! last connection made to it closes: its port closes and its credential
//! is refused at once, the connections its clients keep to it (its port,
//! tunnels its credential opened, in-memory ones) close — a request still
//! arriving on one is answered `410 Gone` — and its streamed bodies and
//! WebSockets end. The state lives on the scope (`handlers::Scope`: its
//! owners and its end callbacks) and in `scopes.rs` (the signal each
//! boundary raises as it ends).
//!
//! A credential whose boundary has ended is refused with `407` and a message
//! saying so.
//!
//! **A gRPC call is answered in gRPC's form** wherever the listener answers
//! itself (no handler and nothing real behind it, a real server that
//! cannot be reached, a refusal above): HTTP 200 with a status in the
//! headers, which gRPC clients read; an HTTP status and a text would read
//! as a broken message. The codes are in the [`grpc`](crate::grpc) module
//! docs.
//!
//! The listeners of every server in the process run on one tokio runtime that
//! mocklib owns (its own two threads, started by the first `listen()`), so a
//! server kept in a `static` and shared by tests that each run their own
//! runtime keeps working after any of those runtimes ends.
//!
//! A server that listens on any port (the default) takes the port of a
//! closed one when there is one: ports are pooled per process, as wiremock-rs
//! pools its servers, so a test that starts its own server binds nothing and
//! its client's keep-alive connection stays good. Between two servers a
//! pooled port answers `503`. A port asked for by number
//! (`ListenOptions::port`) is closed with its server.
//!
//! **Nothing is done before it is needed**, so that a test that starts its
//! own server pays for a socket and little else: `listen()` binds the port
//! and starts accepting. The certificate authority is generated on the first
//! `CONNECT` (or the first call that hands it out), the system's root
//! certificates are loaded on the first request performed for real (once per
//! process), and the CA bundle for child processes is written on the first
//! [`env`](super::Server::env).

pub use memory::{MemoryConnector, MemoryStream};

pub(crate) mod child_env;
mod connection;
mod crypto;
#[cfg(feature = "har")]
mod drift;
mod held_error;
mod listener;
mod memory;
mod private_dir;
mod scopes;
mod signal;
mod target;
mod tls;
mod upstream;
#[cfg(feature = "ws")]
mod ws;
mod x509;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use url::Url;

use crate::engine::Engine;
use crate::engine::list::Scope;
use crate::message::request::Request;
use crate::message::response::HttpResponse;

use scopes::{CREDENTIAL_USER, CredentialScope, ScopeRegistry};

pub(crate) use tls::CertificateAuthority;
pub(crate) use upstream::{Upstream, strip_hop_by_hop};

/// Why the listener could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListenError {
    /// The loopback port could not be bound.
    #[error("could not listen on 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for (0: any).
        port: u16,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The runtime for the listener could not start.
    #[error("could not start the listener's runtime: {0}")]
    Runtime(std::io::Error),
    /// The certificate authority could not be generated.
    #[error("could not generate the mocklib certificate authority: {0}")]
    Certificate(String),
    /// The upstream client could not be built (for example, an extra root
    /// certificate that does not parse).
    #[error("could not build the upstream client: {0}")]
    Upstream(String),
    /// The CA bundle for child processes could not be written.
    #[error("could not write the CA bundle for child processes: {0}")]
    Bundle(std::io::Error),
}

/// A running listener and what it owns. Dropping it stops its tunnels and
/// boundary ports, hands its main port back to the pool (or closes it, when
/// the port was asked for by number) and removes the CA bundle's private
/// directory.
pub(crate) struct Network {
    port: Arc<Port>,
    /// Whether `port` goes back to the pool on drop.
    pooled: bool,
    shared: Arc<Shared>,
    /// Written on the first [`bundle_path`](Self::bundle_path).
    bundle: Mutex<Option<Bundle>>,
}

/// The CA bundle file for child processes and its private directory.
struct Bundle {
    path: PathBuf,
    // Removed with the bundle.
    _dir: private_dir::PrivateDir,
}

/// What every connection task needs.
pub(crate) struct Shared {
    pub engine: Arc<Engine>,
    /// Where this listener's accept loops and connections run: the
    /// process's listener runtime, or the caller's
    /// (`ListenOptions::on_current_runtime`).
    pub runtime: tokio::runtime::Handle,
    /// Generated on first use: most tests never see a `CONNECT`.
    ca: OnceLock<Result<Arc<CertificateAuthority>, String>>,
    pub upstream: Arc<LazyUpstream>,
    pub address: SocketAddr,
    /// `http://<address>/`, parsed once: the URL of most requests in base
    /// URL mode is built from it rather than parsed from text.
    pub origin: Arc<url::Url>,
    /// The origin's `host:port`, as a `Host` header naming this listener
    /// exactly is written.
    pub authority: Arc<str>,
    /// The same as a header value: what such a `Host` header is given in
    /// place of a copy of its bytes.
    pub host: http::HeaderValue,
    pub scopes: ScopeRegistry,
    /// This listener's `Via` entry (`1.1 mocklib-<pid>-<port>`): unique on
    /// the machine while it runs.
    pub via: http::HeaderValue,
    /// Set when the server closes: accept loops and connections end.
    closed: signal::Signal,
}

impl Shared {
    /// This server's certificate authority, generated on the first call.
    pub(super) fn ca(&self) -> Result<&Arc<CertificateAuthority>, &str> {
        self.ca
            .get_or_init(|| {
                CertificateAuthority::generate()
                    .map(Arc::new)
                    .map_err(|error| error.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Resolves once the server has closed.
    pub(super) fn closed(&self) -> impl std::future::Future<Output = ()> + '_ {
        self.closed.wait()
    }
}

/// The upstream client, built on the first request performed for real:
/// building it loads the system's root certificates.
pub(crate) struct LazyUpstream {
    extra_roots: Vec<rustls_pki_types::CertificateDer<'static>>,
    client: OnceLock<Result<Upstream, String>>,
}

impl LazyUpstream {
    pub(super) fn get(&self) -> Result<&Upstream, &str> {
        self.client
            .get_or_init(|| Upstream::new(&self.extra_roots).map_err(|error| error.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// The runtime all listeners of the process run on, started by the first
/// `listen()`. Never shut down: each listener stops its own tasks on close.
fn runtime() -> Result<&'static tokio::runtime::Runtime, ListenError> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("mocklib-listener")
                .enable_all()
                .build()
                .map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(|error| ListenError::Runtime(std::io::Error::other(error.clone())))
}

/// The caller's runtime, for a listener that runs on it: a multi-thread
/// one, since on a current-thread runtime the listener would stand still
/// whenever the test blocks (a blocking client waiting for it, say).
fn current_multi_thread_runtime() -> Result<tokio::runtime::Handle, ListenError> {
    let refuse = |why: &str| {
        ListenError::Runtime(std::io::Error::other(format!(
            "ListenOptions::on_current_runtime: {why}"
        )))
    };
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| refuse("listen() was not called inside a tokio runtime"))?;
    match handle.runtime_flavor() {
        tokio::runtime::RuntimeFlavor::MultiThread => Ok(handle),
        _ => Err(refuse(
            "the current runtime is not multi-threaded: use #[tokio::test(flavor = \"multi_thread\")] \
             (on a current-thread runtime the listener stands still whenever the test blocks)",
        )),
    }
}

/// A loopback port with its accept loop, lent to one server at a time.
///
/// A port asked for as "any" (the default) is not closed with its server: it
/// goes back to a pool of the process and the next `listen()` takes it. A test
/// that starts its own server then binds nothing, and its client's pooled
/// keep-alive connection to the port stays good, the way wiremock-rs pools
/// its servers. Between two servers the port answers `503`.
pub(crate) struct Port {
    address: SocketAddr,
    /// What every server that holds the port says of it, made once with
    /// the port rather than by each `listen()` (formatting and parsing
    /// them was most of its cost): its origin `http://<address>/`, the
    /// origin's authority and the `Via` entry.
    origin: Arc<url::Url>,
    authority: Arc<str>,
    host: http::HeaderValue,
    via: http::HeaderValue,
    holder: RwLock<Option<Arc<Shared>>>,
    /// Set when a port asked for by number closes: its accept loop and its
    /// connections end, and the number is free again.
    retired: signal::Signal,
}

impl Port {
    fn new(address: SocketAddr) -> Arc<Self> {
        Arc::new(Port {
            address,
            origin: Arc::new(
                url::Url::parse(&format!("http://{address}/"))
                    .expect("a socket address makes a valid URL"),
            ),
            authority: address.to_string().into(),
            host: http::HeaderValue::try_from(address.to_string())
                .expect("a socket address is a valid header value"),
            via: http::HeaderValue::try_from(format!(
                "1.1 mocklib-{}-{}",
                std::process::id(),
                address.port()
            ))
            .expect("digits and letters make a valid header value"),
            holder: RwLock::new(None),
            retired: signal::Signal::default(),
        })
    }

    pub(super) fn holder(&self) -> Option<Arc<Shared>> {
        self.holder
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lend(&self, holder: Option<Arc<Shared>>) {
        *self.holder.write().unwrap_or_else(PoisonError::into_inner) = holder;
    }

    pub(super) fn retired(&self) -> impl std::future::Future<Output = ()> + '_ {
        self.retired.wait()
    }
}

/// Ports of closed servers, ready for the next `listen()`.
static IDLE_PORTS: Mutex<Vec<Arc<Port>>> = Mutex::new(Vec::new());

/// A port for a new server: an idle one from the pool when any port will do,
/// otherwise a new one with its accept loop. Returns whether it is pooled.
fn take_port(
    runtime: &tokio::runtime::Runtime,
    number: u16,
) -> Result<(Arc<Port>, bool), ListenError> {
    if number == 0 {
        if let Some(port) = IDLE_PORTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
        {
            return Ok((port, true));
        }
    }
    let (listener, address) = bind(runtime.handle(), number)?;
    let port = Port::new(address);
    runtime.spawn(listener::accept_loop(
        listener::Accepting::new(listener),
        listener::Holder::Lent(Arc::clone(&port)),
        None,
    ));
    Ok((port, number == 0))
}

impl Network {
    pub(super) fn start(
        engine: Arc<Engine>,
        port: u16,
        extra_roots_pem: &[String],
        on_current_runtime: bool,
    ) -> Result<Self, ListenError> {
        let extra_roots = parse_pem_certificates(extra_roots_pem)?;
        upstream::check_roots(&extra_roots).map_err(|e| ListenError::Upstream(e.to_string()))?;
        let (runtime, port, pooled) = if on_current_runtime {
            let runtime = current_multi_thread_runtime()?;
            let (listener, address) = bind(&runtime, port)?;
            let port = Port::new(address);
            runtime.spawn(listener::accept_loop(
                listener::Accepting::new(listener),
                listener::Holder::Lent(Arc::clone(&port)),
                None,
            ));
            // Never pooled: the next server may run on another runtime.
            (runtime, port, false)
        } else {
            let runtime = runtime()?;
            let (port, pooled) = take_port(runtime, port)?;
            (runtime.handle().clone(), port, pooled)
        };
        let address = port.address;
        let upstream = Arc::new(LazyUpstream {
            extra_roots,
            client: OnceLock::new(),
        });
        let via = port.via.clone();
        engine.set_performer(Arc::new(UpstreamPerformer {
            upstream: Arc::clone(&upstream),
            via: Some(via.clone()),
        }));
        let shared = Arc::new(Shared {
            engine,
            runtime,
            ca: OnceLock::new(),
            upstream,
            address,
            origin: Arc::clone(&port.origin),
            authority: Arc::clone(&port.authority),
            host: port.host.clone(),
            scopes: ScopeRegistry::default(),
            via,
            closed: signal::Signal::default(),
        });
        port.lend(Some(Arc::clone(&shared)));
        tracing::debug!(target: "mocklib", %address, pooled, "listening");
        Ok(Network {
            port,
            pooled,
            shared,
            bundle: Mutex::new(None),
        })
    }

    /// The origin to send requests to for `scope`: the main port at the
    /// root, a port of the boundary's own inside one.
    pub(super) fn url(&self, scope: &Arc<Scope>) -> Result<Url, ListenError> {
        if self.shared.engine.is_root(scope) {
            // The same URL as parsing `http://<address>` gives.
            return Ok((*self.port.origin).clone());
        }
        let address = self.scope_port(scope)?;
        Ok(Url::parse(&format!("http://{address}")).expect("a socket address makes a valid URL"))
    }

    /// An in-memory connector to the listener, resolving in `scope`.
    pub(super) fn connector(&self, scope: &Arc<Scope>) -> MemoryConnector {
        let scope = (!self.shared.engine.is_root(scope)).then(|| Arc::clone(scope));
        MemoryConnector::new(Arc::clone(&self.shared), scope)
    }

    /// The proxy URL for `scope`: plain at the root, with a credential naming
    /// the boundary inside one.
    pub(super) fn proxy_url(&self, scope: &Arc<Scope>) -> Url {
        let mut url = (*self.port.origin).clone();
        if !self.shared.engine.is_root(scope) {
            self.shared.scopes.register(scope);
            let _ = url.set_username(CREDENTIAL_USER);
            let _ = url.set_password(Some(&format!("scope-{}", scope.id())));
        }
        url
    }

    fn scope_port(&self, scope: &Arc<Scope>) -> Result<SocketAddr, ListenError> {
        let mut ports = self
            .shared
            .scopes
            .ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(address) = ports.get(&scope.id()) {
            return Ok(*address);
        }
        let runtime = &self.shared.runtime;
        let (listener, address) = bind(runtime, 0)?;
        let accepting = listener::Accepting::new(listener);
        // Found by its port too: a request sent to it through the proxy.
        let ended = self.shared.scopes.register(scope);
        runtime.spawn(listener::accept_loop(
            Arc::clone(&accepting),
            listener::Holder::Fixed(Arc::clone(&self.shared)),
            Some((Arc::downgrade(scope), ended)),
        ));
        ports.insert(scope.id(), address);
        drop(ports);
        // As the boundary ends (at once, if it has): the port refuses
        // connections before the call that ended it returns, and is no
        // longer the listener's own.
        let (ports, id) = (Arc::downgrade(&self.shared.scopes.ports), scope.id());
        scope.on_end(Box::new(move || {
            accepting.close();
            if let Some(ports) = ports.upgrade() {
                ports
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
            }
        }));
        Ok(address)
    }

    pub(super) fn ca_certificate_pem(&self) -> Result<&str, &str> {
        self.shared.ca().map(|ca| ca.certificate_pem())
    }

    /// The CA bundle for child processes, written on the first call.
    pub(super) fn bundle_path(&self) -> Result<PathBuf, ListenError> {
        let mut bundle = self.bundle.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bundle) = &*bundle {
            return Ok(bundle.path.clone());
        }
        let ca_pem = self
            .ca_certificate_pem()
            .map_err(|error| ListenError::Certificate(error.to_owned()))?;
        let dir = private_dir::PrivateDir::new().map_err(ListenError::Bundle)?;
        let path = dir.path().join("ca-bundle.pem");
        write_bundle(&path, ca_pem).map_err(ListenError::Bundle)?;
        tracing::debug!(target: "mocklib", path = %path.display(), "wrote the CA bundle for child processes");
        *bundle = Some(Bundle {
            path: path.clone(),
            _dir: dir,
        });
        Ok(path)
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        // Not a blocking wait: `close()` may run inside another runtime (a
        // `#[tokio::test]`); the tasks see the flags and end on their own.
        self.shared.closed.raise();
        self.port.lend(None);
        if self.pooled {
            IDLE_PORTS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Arc::clone(&self.port));
        } else {
            self.port.retired.raise();
        }
    }
}

/// Binds a loopback port synchronously, so that `listen()` returns with the
/// port ready, and registers it with `runtime`.
fn bind(
    runtime: &tokio::runtime::Handle,
    port: u16,
) -> Result<(tokio::net::TcpListener, SocketAddr), ListenError> {
    let bind_error = |source| ListenError::Bind { port, source };
    let std_listener = std::net::TcpListener::bind(("127.0.0.1", port)).map_err(bind_error)?;
    std_listener.set_nonblocking(true).map_err(bind_error)?;
    let address = std_listener.local_addr().map_err(bind_error)?;
    let _entered = runtime.enter();
    let listener = tokio::net::TcpListener::from_std(std_listener).map_err(bind_error)?;
    Ok((listener, address))
}

fn parse_pem_certificates(
    pems: &[String],
) -> Result<Vec<rustls_pki_types::CertificateDer<'static>>, ListenError> {
    use rustls_pki_types::pem::PemObject;
    let mut certificates = Vec::new();
    for pem in pems {
        for certificate in rustls_pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()) {
            certificates.push(certificate.map_err(|e| {
                ListenError::Upstream(format!("an extra root certificate does not parse: {e}"))
            })?);
        }
    }
    Ok(certificates)
}

/// The system's root certificates plus the mocklib CA, as one PEM file that
/// curl, OpenSSL, Python and Node can be pointed at.
fn write_bundle(path: &Path, ca_pem: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut bundle = String::new();
    for certificate in upstream::system_roots().certificates() {
        bundle.push_str(&pem_encode(certificate.as_ref()));
    }
    bundle.push_str(ca_pem);
    let mut file = std::fs::File::create(path)?;
    file.write_all(bundle.as_bytes())
}

/// A certificate in PEM (LF line endings, 64 characters a line, as rcgen writes it).
fn pem_encode(der: &[u8]) -> String {
    let encoded = crate::support::base64::encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in encoded.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem
}

/// A rustls client configuration trusting only `ca_pem`, with the crypto
/// provider of mocklib's feature named explicitly (a process may have
/// several compiled in).
///
/// ALPN offers HTTP/1.1 alone: reqwest leaves a ready configuration's ALPN
/// as it is, so offering `h2` here would override the client's own
/// `http1_only()`. HTTP/2 stays one `http2_prior_knowledge()` away (the
/// listener tells the protocols apart by the connection preface), and one
/// request at a time is faster over HTTP/1.1 (docs/BENCHMARKS.md).
#[cfg(feature = "reqwest")]
pub(crate) fn client_tls_config(ca_pem: &str) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in parse_pem_certificates(&[ca_pem.to_owned()])
        .expect("the mocklib CA certificate is valid PEM")
    {
        roots
            .add(certificate)
            .expect("the mocklib CA certificate is a valid root");
    }
    let mut config = rustls::ClientConfig::builder_with_provider(crypto::provider())
        .with_safe_default_protocol_versions()
        .expect("the crypto provider supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// Performs `bypass()` requests through the upstream client.
struct UpstreamPerformer {
    upstream: Arc<LazyUpstream>,
    /// The listener's `Via` entry, added as a passthrough adds it: a
    /// `bypass()` of a request addressed to the listener itself comes back
    /// as `508 Loop Detected` instead of resolving (and bypassing) again.
    /// `None` with no listener (a drift check).
    via: Option<http::HeaderValue>,
}

impl crate::message::request::Performer for UpstreamPerformer {
    fn perform(&self, request: &Request) -> crate::message::request::PerformFuture {
        self.send(request, false)
    }

    fn perform_streaming(&self, request: &Request) -> crate::message::request::PerformFuture {
        self.send(request, true)
    }

    fn spawn(
        &self,
        task: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ) -> Result<(), String> {
        // The runtime the request is resolved on: the listener's, or the
        // test's for an in-process front door.
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| "no tokio runtime to send it from".to_owned())?;
        handle.spawn(task);
        Ok(())
    }
}

impl UpstreamPerformer {
    /// The real response; its body read in full unless `streaming`.
    fn send(&self, request: &Request, streaming: bool) -> crate::message::request::PerformFuture {
        use crate::message::request::PerformError;
        let upstream = self
            .upstream
            .get()
            .cloned()
            .map_err(|error| PerformError::Failed(error.to_owned()));
        let outgoing = request.to_http_body().map(|mut outgoing| {
            if let Some(via) = &self.via {
                outgoing
                    .headers_mut()
                    .append(http::header::VIA, via.clone());
            }
            outgoing
        });
        Box::pin(async move {
            use http_body_util::BodyExt;
            let outgoing = outgoing.map_err(PerformError::Unsendable)?;
            let response = upstream?
                .perform(outgoing)
                .await
                .map_err(|e| PerformError::Failed(e.to_string()))?;
            let (parts, body) = response.into_parts();
            if streaming {
                // Trailers included: a gRPC call's status is in them.
                let body = crate::Body::from_http_body(body);
                return Ok(HttpResponse::from_body(http::Response::from_parts(
                    parts, body,
                )));
            }
            let body = body
                .collect()
                .await
                .map_err(|e| {
                    PerformError::Failed(format!("reading the response body failed: {e}"))
                })?
                .to_bytes();
            Ok(HttpResponse::from(http::Response::from_parts(parts, body)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_encoding_matches_base64() {
        let pem = pem_encode(b"Man");
        assert!(pem.contains("\nTWFu\n"), "{pem}");
        assert!(pem_encode(b"Ma").contains("\nTWE=\n"));
        assert!(pem_encode(b"M").contains("\nTQ==\n"));
    }
}
