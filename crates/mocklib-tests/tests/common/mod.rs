//! Shared pieces of the integration tests: the harness (`serve` gives a
//! `TestClient`, a real reqwest client with the mocklib middleware, whose
//! requests are one-liners), the engine asked directly (`listening` and
//! `resolve`, for pure matching rules), and a real upstream HTTP server on
//! loopback.
#![allow(dead_code)] // each test binary uses a different subset

use std::net::SocketAddr;

use mocklib::node::Server;
use reqwest_middleware::ClientWithMiddleware;

/// A plain reqwest client whose requests go through `server`'s handlers.
/// It uses no system proxy: passthrough requests reach the loopback
/// upstreams of the tests directly, whatever the machine's settings.
pub fn client(server: &Server) -> ClientWithMiddleware {
    let plain = reqwest::Client::builder().no_proxy().build();
    reqwest_middleware::ClientBuilder::new(plain.expect("a reqwest client"))
        .with(server.middleware())
        .build()
}

/// Serves `app` on an ephemeral loopback port for the rest of the test's
/// runtime; returns its address.
pub async fn spawn_upstream(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("upstream server");
    });
    address
}

/// Listen options that make an unmatched request fail at once, so a test
/// never reaches the network by mistake.
pub fn error_on_unhandled() -> mocklib::ListenOptions {
    on_unhandled(mocklib::UnhandledRequest::Error)
}

/// Listen options with `strategy` for unhandled requests.
pub fn on_unhandled(strategy: mocklib::UnhandledRequest) -> mocklib::ListenOptions {
    mocklib::ListenOptions::new().on_unhandled_request(strategy)
}

/// Whether a request failed with a mocklib network error (not a status).
pub fn is_network_error(error: &reqwest_middleware::Error) -> bool {
    mocklib::front_door::NetworkError::from_middleware_error(error).is_some()
}

/// The spec's "Reference behavior of an example REST API described with
/// handlers": the posts API (in memory, empty at first) and the cookie example.
pub fn reference_api() -> Server {
    let posts: std::sync::Arc<
        std::sync::Mutex<std::collections::BTreeMap<String, serde_json::Value>>,
    > = std::sync::Arc::default();
    mocklib::node::setup_server([
        mocklib::http::get("/posts", {
            let posts = std::sync::Arc::clone(&posts);
            move |_| {
                mocklib::HttpResponse::json(
                    &posts.lock().unwrap().values().cloned().collect::<Vec<_>>(),
                )
            }
        }),
        mocklib::http::post("/posts", {
            let posts = std::sync::Arc::clone(&posts);
            move |args| {
                let posts = std::sync::Arc::clone(&posts);
                async move {
                    let post: serde_json::Value = args.request.json()?;
                    let id = post["id"].to_string();
                    posts.lock().unwrap().insert(id, post.clone());
                    Ok::<_, mocklib::request::BodyError>(
                        mocklib::HttpResponse::json(&post).status(201),
                    )
                }
            }
        }),
        mocklib::http::delete("/posts/:id", {
            let posts = std::sync::Arc::clone(&posts);
            move |args| match posts.lock().unwrap().remove(&args.params["id"]) {
                None => mocklib::HttpResponse::empty().status(404),
                Some(post) => mocklib::HttpResponse::json(&post),
            }
        }),
        mocklib::http::get("/user", |args| {
            if args.cookies.get("session").is_none() {
                return mocklib::HttpResponse::empty().status(401);
            }
            mocklib::HttpResponse::json(&serde_json::json!({ "name": "John" }))
        }),
    ])
}

/// A server with `handlers`, listening with the error strategy (an unmatched
/// request fails at once), and a client whose requests go through it: the
/// one-line setup of a test, in the spirit of axum's `TestClient`.
pub fn serve(handlers: impl IntoIterator<Item = mocklib::Handler>) -> TestClient {
    TestClient::new(&mocklib::node::setup_server(handlers))
}

/// A server with `handlers`, listening with the error strategy, for tests
/// that ask the engine directly ([`resolve`]) rather than through a client.
pub fn listening(handlers: impl IntoIterator<Item = mocklib::Handler>) -> Server {
    let server = mocklib::node::setup_server(handlers);
    server.listen_with(error_on_unhandled());
    server
}

/// How `server` resolves `method url`, asked through `Server::handle` (the
/// entry point every front door calls) with no client in between: `Some`
/// response when a handler answered, `None` when the request is unhandled
/// (the error strategy's network error). Any other outcome fails the test.
pub async fn resolve(server: &Server, method: http::Method, url: &str) -> Option<TestResponse> {
    let what = format!("{method} {url}");
    let url: url::Url = url.parse().unwrap_or_else(|e| panic!("{what}: {e}"));
    let outcome = server.handle(mocklib::Request::new(method, url.clone()), None);
    match outcome.await {
        mocklib::front_door::Outcome::Mocked(response) => {
            let (head, body) = response.into_parts();
            Some(TestResponse {
                status: head.status.as_u16(),
                url,
                headers: head.headers,
                body: body.collect().await.expect("a readable body"),
            })
        }
        mocklib::front_door::Outcome::NetworkError(error)
            if error.kind() == mocklib::front_door::NetworkErrorKind::Unhandled =>
        {
            None
        }
        other => panic!("{what}: expected a mocked response or unhandled, got {other:?}"),
    }
}

/// A reqwest client (through the in-process middleware) bound to one
/// listening server; requests are one-liners: `client.get(url).await`.
#[derive(Clone)]
pub struct TestClient {
    server: Server,
    client: ClientWithMiddleware,
}

impl TestClient {
    /// Starts `server` with the error strategy and builds a client for it.
    pub fn new(server: &Server) -> Self {
        Self::with_options(server, error_on_unhandled())
    }

    /// Starts `server` with `options` and builds a client for it.
    pub fn with_options(server: &Server, options: mocklib::ListenOptions) -> Self {
        server.listen_with(options);
        Self::unstarted(server)
    }

    /// A client for `server` that leaves listening to the test (to see what
    /// happens before `listen()` and after `close()`).
    pub fn unstarted(server: &Server) -> Self {
        Self {
            server: server.clone(),
            client: client(server),
        }
    }

    /// The server the requests go through (to change its handlers mid-test).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// A `GET` of `url`.
    pub fn get(&self, url: impl AsRef<str>) -> TestRequest {
        self.request(reqwest::Method::GET, url)
    }

    /// A `HEAD` of `url`.
    pub fn head(&self, url: impl AsRef<str>) -> TestRequest {
        self.request(reqwest::Method::HEAD, url)
    }

    /// A `POST` to `url`.
    pub fn post(&self, url: impl AsRef<str>) -> TestRequest {
        self.request(reqwest::Method::POST, url)
    }

    /// A `PUT` to `url`.
    pub fn put(&self, url: impl AsRef<str>) -> TestRequest {
        self.request(reqwest::Method::PUT, url)
    }

    /// A `DELETE` of `url`.
    pub fn delete(&self, url: impl AsRef<str>) -> TestRequest {
        self.request(reqwest::Method::DELETE, url)
    }

    /// GETs `url`, expects a 200 and returns its body as text.
    pub async fn get_text(&self, url: impl AsRef<str>) -> String {
        let response = self.get(url.as_ref()).await;
        assert_eq!(response.status(), 200, "GET {}", url.as_ref());
        response.text()
    }

    /// A request with any `method`.
    pub fn request(&self, method: reqwest::Method, url: impl AsRef<str>) -> TestRequest {
        let url = url.as_ref();
        TestRequest {
            what: format!("{method} {url}"),
            builder: self.client.request(method, url),
        }
    }
}

/// A request being built; `.await` sends it and expects an HTTP response.
pub struct TestRequest {
    /// Method and URL, to name the request in failure messages.
    what: String,
    builder: reqwest_middleware::RequestBuilder,
}

impl TestRequest {
    /// Adds header `name: value`.
    pub fn header(self, name: &str, value: impl AsRef<str>) -> Self {
        Self {
            builder: self.builder.header(name, value.as_ref()),
            ..self
        }
    }

    /// Sets the raw body.
    pub fn body(self, body: impl Into<reqwest::Body>) -> Self {
        Self {
            builder: self.builder.body(body),
            ..self
        }
    }

    /// Sets a JSON body (and its content type).
    pub fn json<T: serde::Serialize + ?Sized>(self, value: &T) -> Self {
        Self {
            builder: self.builder.json(value),
            ..self
        }
    }

    /// Sets an urlencoded form body (and its content type).
    pub fn form<T: serde::Serialize + ?Sized>(self, value: &T) -> Self {
        Self {
            builder: self.builder.form(value),
            ..self
        }
    }

    /// Sends the request, expecting it to fail (no HTTP response at all).
    pub async fn expect_error(self) -> reqwest_middleware::Error {
        match self.builder.send().await {
            Ok(response) => panic!(
                "{}: expected an error, got {}",
                self.what,
                response.status()
            ),
            Err(error) => error,
        }
    }

    /// Sends the request, expecting it to fail with a mocklib network error
    /// (not a status, not a transport error); returns that error.
    pub async fn expect_network_error(self) -> mocklib::front_door::NetworkError {
        let what = self.what.clone();
        network_error(&self.expect_error().await, &what)
    }

    /// Sends the request, expecting it to be unhandled (the error strategy's
    /// network error); returns that error's message.
    pub async fn expect_unhandled(self) -> String {
        let what = self.what.clone();
        unhandled_message(&self.expect_error().await, &what)
    }

    async fn send(self) -> TestResponse {
        let response = self.builder.send().await;
        let response = response.unwrap_or_else(|e| panic!("{}: no response: {e:?}", self.what));
        TestResponse {
            status: response.status().as_u16(),
            url: response.url().clone(),
            headers: response.headers().clone(),
            body: response.bytes().await.expect("a body"),
        }
    }
}

impl std::future::IntoFuture for TestRequest {
    type Output = TestResponse;
    type IntoFuture = std::pin::Pin<Box<dyn std::future::Future<Output = TestResponse> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// A received response, read in full.
pub struct TestResponse {
    status: u16,
    url: reqwest::Url,
    headers: reqwest::header::HeaderMap,
    body: bytes::Bytes,
}

impl TestResponse {
    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The value of header `name`; panics when it is absent or not text.
    pub fn header(&self, name: &str) -> &str {
        let value = self.headers.get(name);
        let value = value.unwrap_or_else(|| panic!("no {name} header"));
        value.to_str().expect("a text header")
    }

    /// Every value of header `name`, in order (none when it is absent).
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        let values = self.headers.get_all(name).iter();
        values.map(|v| v.to_str().expect("a text header")).collect()
    }

    /// All headers.
    pub fn headers(&self) -> &reqwest::header::HeaderMap {
        &self.headers
    }

    /// The URL the client reports for the response.
    pub fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// The raw body.
    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body as text; panics when it is not UTF-8.
    pub fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).expect("a UTF-8 body")
    }

    /// The body parsed as JSON into `T`; panics when it does not parse.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// `assert_eq!(client.get(url).await, (200, "body"))`: status and text in one line.
impl PartialEq<(u16, &str)> for TestResponse {
    fn eq(&self, (status, text): &(u16, &str)) -> bool {
        self.status == *status && self.body == text.as_bytes()
    }
}

/// Shows what an `assert_eq!` compares: status and body text.
impl std::fmt::Debug for TestResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = String::from_utf8_lossy(&self.body);
        f.debug_tuple("TestResponse")
            .field(&self.status)
            .field(&text)
            .finish()
    }
}

/// The mocklib network error inside `error` (`what` names the request);
/// panics on any other error.
pub fn network_error(
    error: &reqwest_middleware::Error,
    what: &str,
) -> mocklib::front_door::NetworkError {
    let network = mocklib::front_door::NetworkError::from_middleware_error(error);
    let network =
        network.unwrap_or_else(|| panic!("{what}: expected a network error, got {error:?}"));
    network.clone()
}

/// The message of an "unhandled request" network error (`what` names the
/// request); panics on any other error.
pub fn unhandled_message(error: &reqwest_middleware::Error, what: &str) -> String {
    let network = network_error(error, what);
    assert_eq!(
        network.kind(),
        mocklib::front_door::NetworkErrorKind::Unhandled,
        "{what}: {network}"
    );
    network.to_string()
}

/// Tells a test when it is dropped: put it in what a resolver or a stream
/// owns, and the receiver hears when that is dropped (the client went away).
pub struct DropSignal(Option<tokio::sync::oneshot::Sender<()>>);

impl DropSignal {
    /// A signal and the receiver that hears its drop.
    pub fn new() -> (Self, tokio::sync::oneshot::Receiver<()>) {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        (DropSignal(Some(sender)), receiver)
    }
}

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            let _ = sender.send(());
        }
    }
}

/// A `CONNECT` tunnel to `authority` through `server`'s proxy port.
pub async fn tunnel(server: &Server, authority: &str) -> tokio::net::TcpStream {
    tunnel_via(server.url().socket_addrs(|| None).unwrap()[0], authority).await
}

/// A connector that opens every connection as a `CONNECT` tunnel to
/// `authority` through the proxy at `proxy` (`server.proxy_url()`), as a
/// client configured with an HTTPS proxy does; the client then speaks TLS
/// inside it. For tonic's
/// `Endpoint::connect_with_connector` (which applies its `tls_config` to
/// the connector's streams) and hyper-util's client.
pub fn tunnel_connector(
    proxy: url::Url,
    authority: &'static str,
) -> impl tower::Service<
    http::Uri,
    Response = hyper_util::rt::TokioIo<tokio::net::TcpStream>,
    Error = std::io::Error,
    Future = impl Send,
> + Clone {
    let proxy = proxy.socket_addrs(|| None).unwrap()[0];
    tower::service_fn(move |_uri: http::Uri| async move {
        Ok(hyper_util::rt::TokioIo::new(
            tunnel_via(proxy, authority).await,
        ))
    })
}

/// A `CONNECT` tunnel to `authority` through the proxy at `address`.
async fn tunnel_via(address: SocketAddr, authority: &str) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let connect = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    tcp.write_all(connect.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            tcp.read_exact(&mut byte),
        );
        read.await.expect("no hang").unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    tcp
}

/// TLS to `host` over `tcp`, trusting `server`'s certificate authority.
pub async fn tls_client(
    server: &Server,
    host: &'static str,
    tcp: tokio::net::TcpStream,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let pem = server.ca_certificate_pem();
    let ca = rustls_pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
    roots.add(ca).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let name = rustls_pki_types::ServerName::try_from(host).unwrap();
    connector.connect(name, tcp).await.unwrap()
}

/// Runs curl with `args` (plus `--silent --show-error --max-time 20`) as a
/// child process; returns what it printed, failing the test if it failed.
pub fn curl(args: &[&str]) -> String {
    let output = std::process::Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(args)
        .output()
        .expect("curl runs");
    assert!(
        output.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("curl printed text")
}

/// The message of a caught panic (`panic!` with a literal or a format).
pub fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    match panic.downcast::<String>() {
        Ok(text) => *text,
        Err(panic) => match panic.downcast::<&'static str>() {
            Ok(text) => (*text).to_owned(),
            Err(_) => "<a panic without a message>".to_owned(),
        },
    }
}

/// A real HTTPS server for `app` on loopback (`localhost`), with a
/// certificate from a test CA of its own; returns its port and that CA's
/// PEM. It serves for the rest of the test's runtime.
pub async fn spawn_tls_upstream(app: axum::Router) -> (u16, String) {
    let (port, ca, _task) = spawn_stoppable_tls_upstream(app).await;
    (port, ca)
}

/// [`spawn_tls_upstream`], with the task to abort to take the server away.
pub async fn spawn_stoppable_tls_upstream(
    app: axum::Router,
) -> (u16, String, tokio::task::JoinHandle<()>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "upstream test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, app) = (acceptor.clone(), app.clone());
            // In the set: aborting the server ends its connections too.
            connections.spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    (port, ca.pem(), task)
}
