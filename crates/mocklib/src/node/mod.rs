//! The native entry point: [`setup_server`] (MSW: [`setupServer`][msw] from
//! `msw/node`).
//!
//! [msw]: https://mswjs.io/docs/api/setup-server
//!
//! A [`Server`] holds the handler list and answers requests that reach it
//! through a front door:
//!
//! - in-process: [`Server::layer`] / [`Server::service`] (a `tower` service,
//!   feature `tower`) and [`Server::middleware`] (`reqwest-middleware`,
//!   feature `reqwest`). They run in the caller's task, so a boundary applies
//!   to exactly the requests made inside it;
//! - your own: [`Server::handle`] resolves a [`Request`] into an [`Outcome`].
//!
//! Before [`Server::listen`] and after [`Server::close`] nothing is
//! intercepted: every request is performed as it is, without events.

#[cfg(feature = "net")]
mod net;
#[cfg(any(feature = "reqwest", feature = "reqwest-0-12"))]
mod reqwest;
#[cfg(feature = "tower")]
mod tower;

use std::sync::Arc;

use url::Url;

use crate::engine::boundary::{BoundaryCallback, Scoped};
use crate::engine::{Engine, InterceptOptions, Outcome, UnhandledRequest};
use crate::front_door::setup_api::SetupApi;
use crate::handling::handler::Handler;
use crate::message::request::Request;

#[cfg(feature = "net")]
pub use self::net::{ListenError, MemoryConnector, MemoryStream};
#[cfg(any(feature = "reqwest", feature = "reqwest-0-12"))]
pub use self::reqwest::MockMiddleware;
#[cfg(feature = "tower")]
pub use self::tower::{MockBody, MockLayer, MockService, NoUpstream, NoUpstreamError};

/// Creates a server with `handlers` as its initial handlers
/// (MSW: [`setupServer(...handlers)`](https://mswjs.io/docs/api/setup-server)).
///
/// ```
/// use mocklib::{http, HttpResponse, node::setup_server};
///
/// let server = setup_server([
///     http::get("https://api.example.com/user", |_| HttpResponse::json(&serde_json::json!({ "name": "John" }))),
/// ]);
/// server.listen();
/// // ... run the code under test ...
/// server.close();
/// ```
#[doc(alias = "setupServer")]
pub fn setup_server(handlers: impl IntoIterator<Item = Handler>) -> Server {
    server_with(handlers.into_iter().collect())
}

/// [`setup_server`]'s work, compiled once in mocklib rather than in every
/// test crate for every type of handler list it passes.
fn server_with(handlers: Vec<Handler>) -> Server {
    let engine = Engine::new(handlers);
    Server {
        api: Arc::new(SetupApi::new(Arc::clone(&engine))),
        engine,
        #[cfg(feature = "net")]
        network: Arc::default(),
    }
}

/// Options for [`Server::listen_with`] (MSW: `server.listen(options)`),
/// set with builder methods; every one has a default.
///
/// ```
/// use mocklib::{ListenOptions, UnhandledRequest};
///
/// let options = ListenOptions::new()
///     .on_unhandled_request(UnhandledRequest::Error)
///     .journal_capacity(100);
/// # let _ = options;
/// ```
///
/// It is `#[non_exhaustive]` and built by methods, not a struct literal, so
/// an option that exists only with a feature (`port` needs `net`) can never
/// break a crate whose build turns that feature on from elsewhere.
#[derive(Clone, Default, Debug)]
#[non_exhaustive]
pub struct ListenOptions {
    pub(crate) on_unhandled_request: UnhandledRequest,
    pub(crate) base_url: Option<Url>,
    #[cfg(feature = "net")]
    pub(crate) port: Option<u16>,
    #[cfg(feature = "net")]
    pub(crate) upstream_root_certificates: Vec<String>,
    #[cfg(feature = "net")]
    pub(crate) on_current_runtime: bool,
    pub(crate) journal_capacity: Option<usize>,
    pub(crate) fallthrough_is_unhandled: bool,
}

impl ListenOptions {
    /// The defaults: warn about unhandled requests, no base URL, any free
    /// port, the system's root certificates, a journal of
    /// [`journal::DEFAULT_CAPACITY`](crate::journal::DEFAULT_CAPACITY) requests.
    pub fn new() -> Self {
        ListenOptions::default()
    }

    /// What to do with a request no handler matches. Default:
    /// [`UnhandledRequest::Warn`].
    #[doc(alias = "onUnhandledRequest")]
    pub fn on_unhandled_request(mut self, strategy: UnhandledRequest) -> Self {
        self.on_unhandled_request = strategy;
        self
    }

    /// The origin relative predicates (`/posts`) match against when a front
    /// door knows none of its own. Without one, relative predicates match the
    /// path of a request to any origin.
    #[doc(alias = "baseUrl")]
    pub fn base_url(mut self, url: Url) -> Self {
        self.base_url = Some(url);
        self
    }

    /// Serves the listener on the tokio runtime `listen` is called in (it
    /// must be a multi-thread one: `#[tokio::test(flavor = "multi_thread")]`)
    /// rather than on the process's own listener runtime, and on a port of
    /// its own (not pooled). Requests then cross no runtime: a heavy stream
    /// of calls, a gRPC bidirectional chat or a benchmark goes faster (see
    /// docs/BENCHMARKS.md, "gRPC"); a test that starts a server per test
    /// pays a port bind instead of reusing a pooled one. On a
    /// current-thread runtime `listen` fails ([`ListenError::Runtime`]):
    /// the listener would stand still whenever the test blocks.
    #[cfg(feature = "net")]
    pub fn on_current_runtime(mut self) -> Self {
        self.on_current_runtime = true;
        self
    }

    /// The loopback port of the listener. Default: a pooled port or a free
    /// one (see [`Server::url`]).
    #[cfg(feature = "net")]
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// Extra root certificates (PEM) the upstream client trusts besides the
    /// system's, for passthrough to a test server with its own CA.
    /// Certificate verification itself cannot be turned off.
    #[cfg(feature = "net")]
    pub fn upstream_root_certificates<I, S>(mut self, pems: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.upstream_root_certificates = pems.into_iter().map(Into::into).collect();
        self
    }

    /// How many requests each scope's journal keeps
    /// ([`requests`](crate::node::Server::requests)); `0` switches the journal
    /// off. Default: [`journal::DEFAULT_CAPACITY`](crate::journal::DEFAULT_CAPACITY).
    pub fn journal_capacity(mut self, requests: usize) -> Self {
        self.journal_capacity = Some(requests);
        self
    }

    /// When handlers match a request but none answers (every resolver
    /// returned nothing), treat the request as unhandled, so
    /// [`on_unhandled_request`](Self::on_unhandled_request) decides, instead
    /// of performing it as it is (MSW's issue #2482). Default: `false`, as
    /// MSW.
    pub fn fallthrough_is_unhandled(mut self, yes: bool) -> Self {
        self.fallthrough_is_unhandled = yes;
        self
    }

    /// Strict mode: a request no handler answers fails at the requester
    /// *and* is recorded as a failure that [`verify`](crate::node::Server::verify)
    /// reports ([`UnhandledRequest::Strict`]), so a test fails even when the
    /// code under test swallows the client's error; handlers that match but
    /// return nothing do not count as answering
    /// ([`fallthrough_is_unhandled`](Self::fallthrough_is_unhandled)).
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, ListenOptions, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::empty())]);
    /// server.listen_with(ListenOptions::strict());
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(server.middleware())
    ///     .build();
    /// // The code under test ignores the error...
    /// let _ = client.get("https://api.example.com/users").send().await;
    /// // ...verification does not.
    /// let report = server.verify().unwrap_err().to_string();
    /// assert!(report.contains("strict mode: intercepted a request without a matching request handler"));
    /// assert!(report.contains("GET https://api.example.com/users"));
    /// # }
    /// ```
    pub fn strict() -> Self {
        ListenOptions::new()
            .on_unhandled_request(UnhandledRequest::Strict)
            .fallthrough_is_unhandled(true)
    }

    /// The part the engine uses; the listener's own stay here.
    fn intercept(&self) -> InterceptOptions {
        InterceptOptions {
            on_unhandled_request: self.on_unhandled_request.clone(),
            base_url: self.base_url.clone().map(Arc::new),
            journal_capacity: self.journal_capacity,
            fallthrough_is_unhandled: self.fallthrough_is_unhandled,
            log_dispatch: None,
        }
    }
}

/// A set of request handlers and the switch that makes them intercept.
///
/// Its handler-list methods (`use_handlers`, `reset_handlers`,
/// `list_handlers`, `events`, `verify`, ...) are the browser `Worker`'s
/// too (MSW: the `SetupApi` both share). Cloning is cheap and every clone is
/// the same server.
#[derive(Clone)]
#[doc(alias = "SetupServerApi")]
pub struct Server {
    engine: Arc<Engine>,
    api: Arc<SetupApi>,
    /// The loopback listener, while listening.
    #[cfg(feature = "net")]
    network: Arc<std::sync::Mutex<Option<net::Network>>>,
}

impl Server {
    crate::front_door::setup_api::shared_api!();
}

impl Server {
    /// Starts intercepting, warning about unhandled requests.
    ///
    /// With the `net` feature this also starts the loopback listener
    /// ([`url`](Self::url), [`proxy_url`](Self::proxy_url)).
    ///
    /// # Panics
    /// When the listener cannot start (see [`try_listen_with`](Self::try_listen_with)).
    pub fn listen(&self) {
        self.listen_with(ListenOptions::default());
    }

    /// Starts intercepting with `options`. Calling it again replaces the
    /// options; calling it after [`close`](Self::close) starts again.
    ///
    /// # Panics
    /// When the listener cannot start (see [`try_listen_with`](Self::try_listen_with)).
    #[track_caller]
    pub fn listen_with(&self, options: ListenOptions) {
        #[cfg(feature = "net")]
        if let Err(error) = self.try_listen_with(options.clone()) {
            panic!("mocklib could not start listening: {error}");
        }
        #[cfg(not(feature = "net"))]
        self.engine.listen(options.intercept());
    }

    /// Like [`listen_with`](Self::listen_with), returning why the listener
    /// could not start instead of panicking.
    #[cfg(feature = "net")]
    pub fn try_listen_with(&self, options: ListenOptions) -> Result<(), ListenError> {
        let mut network = self
            .network
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if network.is_none() {
            *network = Some(net::Network::start(
                Arc::clone(&self.engine),
                options.port.unwrap_or(0),
                &options.upstream_root_certificates,
                options.on_current_runtime,
            )?);
        }
        self.engine.listen(options.intercept());
        Ok(())
    }

    /// Stops intercepting: requests are performed as they are and no events
    /// are emitted. Idempotent. The handler list is kept. With the `net`
    /// feature the listener stops (its tunnels and boundary ports close, its
    /// main port goes back to the process's pool and answers `503` until the
    /// next server takes it) and the CA bundle's directory is removed.
    pub fn close(&self) {
        self.engine.close();
        #[cfg(feature = "net")]
        drop(
            self.network
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
    }

    /// Whether the server is intercepting.
    pub fn is_listening(&self) -> bool {
        self.engine.listen_options().is_some()
    }

    /// Wraps `callback` so that each call runs it in a new boundary (MSW:
    /// [`server.boundary(callback)`](https://mswjs.io/docs/api/setup-server/boundary)).
    ///
    /// The returned function takes the callback's arguments (annotate their
    /// types) and returns its result in a [`Scoped`]: `.await` it when the
    /// callback is async, take [`Scoped::into_inner`] when it is not. Each
    /// call starts from the caller's current handler list, all of it counted
    /// as initial; changes made inside are not seen outside.
    ///
    /// The callback may move what it captures: each call runs a fresh clone
    /// of it (see [`BoundaryCallback`]), so the returned function can be
    /// called any number of times.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([http::get("/user", |_| HttpResponse::text("John"))]);
    /// let test = server.boundary({
    ///     let server = server.clone();
    ///     move |name: &'static str| async move {
    ///         server.use_handlers([http::get("/user", move |_| HttpResponse::text(name))]);
    ///         server.list_handlers().len()
    ///     }
    /// });
    /// assert_eq!(test("Kate").await, 2);
    /// assert_eq!(test("Sarah").await, 2); // each call starts from the outer list
    /// assert_eq!(server.list_handlers().len(), 1); // the override stayed inside
    /// # }
    /// ```
    ///
    /// See [`boundary`](crate::boundary) for what decides a request's scope and
    /// how to carry it into `tokio::spawn`.
    pub fn boundary<Args, F: BoundaryCallback<Args>>(&self, callback: F) -> F::Bounded {
        callback.bind(self.engine.boundary_factory())
    }

    /// Opens a boundary held by the value returned, not by a call: it starts
    /// from the caller's current list, as a [`boundary`](Self::boundary)
    /// call does, and lasts until the value (and its clones) are dropped,
    /// or [`end`](crate::boundary::Boundary::end)ed, whatever connections its clients
    /// keep. See [`Boundary`](crate::boundary::Boundary).
    ///
    /// ```
    /// # use mocklib::{http, HttpResponse, node::setup_server};
    /// let server = setup_server([]);
    /// let worker = server.open_boundary();
    /// worker.in_scope(|| server.use_handlers([http::get("/x", |_| HttpResponse::empty())]));
    /// assert!(server.list_handlers().is_empty());
    /// drop(worker); // the boundary ends
    /// ```
    pub fn open_boundary(&self) -> crate::engine::boundary::Boundary {
        crate::engine::boundary::Boundary::new((self.engine.boundary_factory().0)())
    }

    /// Runs `f` outside every boundary of this server, whatever boundary
    /// the caller runs in: what it changes and reads is the server's own
    /// list and journal. For code that serves several boundaries and the
    /// root from one place, as a front door's control surface does.
    ///
    /// ```
    /// # use mocklib::{http, HttpResponse, node::setup_server};
    /// let server = setup_server([]);
    /// let worker = server.open_boundary();
    /// worker.in_scope(|| {
    ///     server.at_root(|| server.use_handlers([http::get("/x", |_| HttpResponse::empty())]));
    ///     assert!(server.list_handlers().is_empty()); // the boundary started before
    /// });
    /// assert_eq!(server.list_handlers().len(), 1);
    /// ```
    pub fn at_root<T>(&self, f: impl FnOnce() -> T) -> T {
        crate::engine::boundary::outside(self.engine.id(), f)
    }

    /// Runs `future` in a new boundary: a shorthand for a one-off boundary
    /// call, handy when the body moves values it owns.
    ///
    /// ```
    /// # use mocklib::{http, HttpResponse, node::setup_server};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([]);
    /// let inner = server.clone();
    /// server.in_boundary(async move {
    ///     inner.use_handlers([http::get("/x", |_| HttpResponse::empty())]);
    /// }).await;
    /// assert!(server.list_handlers().is_empty());
    /// # }
    /// ```
    pub fn in_boundary<F: std::future::Future>(&self, future: F) -> Scoped<F> {
        Scoped::owning(
            crate::engine::boundary::Owner::new((self.engine.boundary_factory().0)()),
            future,
        )
    }

    /// Resolves a request in the caller's current scope, taken now: a
    /// shorthand for `server.front_door().resolve(..)` (see
    /// [`crate::front_door`] for writing a front door of your own).
    /// `base_url` is your front door's own origin, if it has one (relative
    /// predicates match against it).
    pub fn handle(
        &self,
        request: Request,
        base_url: Option<Url>,
    ) -> impl std::future::Future<Output = Outcome> + Send + 'static + use<> {
        self.engine.handle(request, base_url.map(Arc::new))
    }
}

/// The loopback listener: ways in for clients that cannot take a middleware.
#[cfg(feature = "net")]
impl Server {
    fn with_network<T>(&self, what: &str, f: impl FnOnce(&net::Network) -> T) -> T {
        let network = self
            .network
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*network {
            Some(network) => f(network),
            None => panic!("server.{what}() needs a listening server: call server.listen() first"),
        }
    }

    /// The listener's own origin, `http://127.0.0.1:PORT`: send requests
    /// straight to it as to a mock server (relative predicates match them).
    ///
    /// Inside a boundary this is a port of that boundary's own, so requests
    /// sent to it resolve in the boundary (see [`boundary`](crate::boundary)).
    ///
    /// # Panics
    /// When the server is not listening, or a boundary's port cannot be bound.
    pub fn url(&self) -> Url {
        let scope = self.engine.current_scope();
        self.with_network("url", |network| network.url(&scope))
            .unwrap_or_else(|error| {
                panic!("server.url() could not open a port for this boundary: {error}")
            })
    }

    /// A connector to the listener through memory, not a socket: for
    /// clients that take a connector — tonic's
    /// `Endpoint::connect_with_connector(server.connector())`, hyper-util's
    /// `Client::builder(..).build(server.connector())` and the clients
    /// built on them. Every connection is served as a connection to
    /// [`url`](Self::url) is (see [`MemoryConnector`]); inside a boundary
    /// its requests resolve in that boundary.
    ///
    /// ```
    /// use http_body_util::{BodyExt, Full};
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let server = setup_server([http::get("/user", |_| HttpResponse::text("John"))]);
    /// server.listen();
    /// let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
    ///     .build::<_, Full<bytes::Bytes>>(server.connector());
    /// let response = client.get("http://api.internal/user".parse()?).await?;
    /// assert_eq!(response.into_body().collect().await?.to_bytes(), "John");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Panics
    /// When the server is not listening.
    pub fn connector(&self) -> MemoryConnector {
        let scope = self.engine.current_scope();
        self.with_network("connector", |network| network.connector(&scope))
    }

    /// The same listener as an HTTP(S) proxy URL, for clients configured
    /// with a proxy. HTTPS goes through `CONNECT`, terminated with a
    /// certificate from [`ca_certificate_pem`](Self::ca_certificate_pem).
    ///
    /// Inside a boundary the URL carries a proxy credential naming the
    /// boundary (`http://mocklib:scope-N@127.0.0.1:PORT`), so requests
    /// through it resolve in the boundary.
    ///
    /// # Panics
    /// When the server is not listening.
    pub fn proxy_url(&self) -> Url {
        let scope = self.engine.current_scope();
        self.with_network("proxy_url", |network| network.proxy_url(&scope))
    }

    /// The certificate (PEM) of the authority this server generated in
    /// memory to terminate HTTPS. Its private key never leaves memory.
    ///
    /// # Panics
    /// When the server is not listening.
    pub fn ca_certificate_pem(&self) -> String {
        self.with_network("ca_certificate_pem", |network| {
            match network.ca_certificate_pem() {
                Ok(pem) => pem.to_owned(),
                Err(error) => {
                    panic!("mocklib could not generate its certificate authority: {error}")
                }
            }
        })
    }

    /// The environment for a child process whose requests should reach the
    /// handlers, HTTPS included. Inside a boundary the proxy address names the
    /// boundary, so the child's requests resolve in it. The files it points
    /// at live in a private directory that [`close`](Self::close) removes.
    ///
    /// | Variables | For |
    /// |---|---|
    /// | `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (both cases) | the listener as a proxy ([`proxy_url`](Self::proxy_url)), with a credential naming the boundary inside one: curl, git, Python, Go, wget, Rust clients |
    /// | `NO_PROXY`, `no_proxy` (empty) | no host skips the proxy |
    /// | `SSL_CERT_FILE`, `CURL_CA_BUNDLE`, `REQUESTS_CA_BUNDLE`, `NODE_EXTRA_CA_CERTS`, `GIT_SSL_CAINFO`, `GRPC_DEFAULT_SSL_ROOTS_FILE_PATH` | a PEM bundle of the system roots plus this server's CA: OpenSSL, curl, Python `requests`, Node, git, Go, gRPC core clients (Python `grpcio`, which also honour the proxy variables) |
    /// | `NODE_USE_ENV_PROXY=1` | Node.js 22.21+/24.5+ reads the proxy variables for `http`, `https` and `fetch` |
    /// | `NODE_OPTIONS` (appended to this process's) | `--require` of a preload (written next to the bundle) that routes `http`, `https` and `fetch` through the proxy on older versions (Debian's 18, 20) and does nothing on newer ones |
    /// | `WGETRC` | an rc file naming the bundle: Debian's wget (GnuTLS) ignores `SSL_CERT_FILE`; `~/.wgetrc` is not read |
    /// | `JAVA_TOOL_OPTIONS` (appended to this process's) | `-Dhttp(s).proxyHost/Port`, `-Dhttp.nonProxyHosts=` and a JKS trust store with the same certificates, for `java.net.http.HttpClient` and `HttpURLConnection`. The JDK sends a proxy credential only to an `Authenticator`, so inside a boundary the port is the boundary's own ([`url`](Self::url)). The JVM prints "Picked up JAVA_TOOL_OPTIONS" on standard error |
    ///
    /// Each client's use is tested with the real client (the guide's
    /// [tested clients](crate::guide::ways_in#tested-clients)).
    ///
    /// ```no_run
    /// # let server = mocklib::node::setup_server([]);
    /// server.listen();
    /// let status = std::process::Command::new("curl")
    ///     .arg("https://api.example.com/user")
    ///     .envs(server.env())
    ///     .status();
    /// ```
    ///
    /// The bundle is written on the first call (loading the system's root
    /// certificates), not by `listen()`.
    ///
    /// # Panics
    /// When the server is not listening, when the files for child processes
    /// cannot be written, or when a boundary's own port cannot be bound.
    pub fn env(&self) -> Vec<(String, String)> {
        let scope = self.engine.current_scope();
        self.with_network("env", |network| {
            let proxy = network.proxy_url(&scope).to_string();
            let bundle_path = network
                .bundle_path()
                .unwrap_or_else(|error| panic!("server.env(): {error}"));
            let bundle = bundle_path.display().to_string();
            let mut env = Vec::new();
            for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
                env.push((name.to_owned(), proxy.clone()));
                env.push((name.to_ascii_lowercase(), proxy.clone()));
            }
            env.push(("NO_PROXY".to_owned(), String::new()));
            env.push(("no_proxy".to_owned(), String::new()));
            for name in [
                "SSL_CERT_FILE",
                "CURL_CA_BUNDLE",
                "REQUESTS_CA_BUNDLE",
                "NODE_EXTRA_CA_CERTS",
                "GIT_SSL_CAINFO",
                "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
            ] {
                env.push((name.to_owned(), bundle.clone()));
            }
            let own_origin = network.url(&scope).unwrap_or_else(|error| {
                panic!("server.env() could not open a port for this boundary: {error}")
            });
            let dir = bundle_path
                .parent()
                .expect("the bundle lives in a directory");
            env.extend(
                net::child_env::write(dir, &bundle_path, &own_origin).unwrap_or_else(|error| {
                    panic!(
                        "server.env() could not write its files in {}: {error}",
                        dir.display()
                    )
                }),
            );
            env
        })
    }

    /// A plain `reqwest::Client` (reqwest 0.13) routed through this server's
    /// listener and trusting its CA (only its CA: every TLS connection it
    /// makes ends at the listener). Requests made with it reach the handlers;
    /// the rest are performed for real by the listener. Made inside a
    /// boundary, its requests resolve in that boundary.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), reqwest::Error> {
    /// let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
    /// server.listen();
    /// let client = server.reqwest_client();
    /// let body = client.get("https://api.example.com/user").send().await?.text().await?;
    /// assert_eq!(body, "John");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Panics
    /// When the server is not listening.
    #[cfg(feature = "reqwest")]
    pub fn reqwest_client(&self) -> ::reqwest::Client {
        self.reqwest_client_builder()
            .build()
            .expect("a reqwest client with a proxy and a ready TLS configuration builds")
    }

    /// The builder behind [`reqwest_client`](Self::reqwest_client), for a
    /// client with more settings of your own (timeouts, `http1_only`, ...).
    /// Keep the proxy and the TLS configuration it sets: it is a rustls
    /// configuration of mocklib's own (the crypto provider its `aws-lc-rs` or
    /// `ring` feature picks, named explicitly; this server's CA as the only
    /// root), so it works whichever rustls provider your reqwest has, and
    /// root certificates added to the builder are not used.
    ///
    /// Inside the tunnels the client speaks HTTP/1.1; call
    /// `.http2_prior_knowledge()` for HTTP/2.
    ///
    /// # Panics
    /// When the server is not listening.
    #[cfg(feature = "reqwest")]
    pub fn reqwest_client_builder(&self) -> ::reqwest::ClientBuilder {
        let proxy = ::reqwest::Proxy::all(self.proxy_url().as_str())
            .expect("the listener URL is a valid proxy URL");
        ::reqwest::Client::builder()
            .proxy(proxy)
            .tls_backend_preconfigured(net::client_tls_config(&self.ca_certificate_pem()))
    }

    /// [`reqwest_client`](Self::reqwest_client) for reqwest 0.12 (feature
    /// `reqwest-0-12`).
    ///
    /// # Panics
    /// When the server is not listening.
    #[cfg(feature = "reqwest-0-12")]
    pub fn reqwest_client_0_12(&self) -> ::reqwest012::Client {
        self.reqwest_client_builder_0_12()
            .build()
            .expect("a reqwest client with a proxy and one root certificate builds")
    }

    /// [`reqwest_client_builder`](Self::reqwest_client_builder) for reqwest
    /// 0.12 (feature `reqwest-0-12`). Keep the proxy and the root certificate
    /// it sets.
    ///
    /// # Panics
    /// When the server is not listening.
    #[cfg(feature = "reqwest-0-12")]
    pub fn reqwest_client_builder_0_12(&self) -> ::reqwest012::ClientBuilder {
        let certificate = ::reqwest012::Certificate::from_pem(self.ca_certificate_pem().as_bytes())
            .expect("the mocklib CA certificate is valid PEM");
        let proxy = ::reqwest012::Proxy::all(self.proxy_url().as_str())
            .expect("the listener URL is a valid proxy URL");
        ::reqwest012::Client::builder()
            // Explicit: another crate may enable reqwest's native-tls too.
            .use_rustls_tls()
            .proxy(proxy)
            .tls_built_in_root_certs(false)
            .add_root_certificate(certificate)
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listening", &self.is_listening())
            .field("handlers", &self.list_handlers().len())
            .finish()
    }
}
