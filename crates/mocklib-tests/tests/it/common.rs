//! The library's test harness: `serve` gives a `TestClient`, a real reqwest
//! client with the mocklib middleware, whose requests are one-liners; the
//! engine asked directly (`listening` and `resolve`, for pure matching
//! rules); tunnels and TLS through a server's proxy. What does not need
//! mocklib (upstreams, curl, raw sockets) is in crates/test-support.
#![allow(dead_code)] // each feature set compiles a different subset of the modules

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

/// A `CONNECT` tunnel to `authority` through `server`'s proxy port.
pub async fn tunnel(server: &Server, authority: &str) -> tokio::net::TcpStream {
    test_support::tunnel(server.url().socket_addrs(|| None).unwrap()[0], authority).await
}

/// TLS to `host` over `tcp`, trusting `server`'s certificate authority.
pub async fn tls_client(
    server: &Server,
    host: &'static str,
    tcp: tokio::net::TcpStream,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    test_support::tls_client(&server.ca_certificate_pem(), host, tcp).await
}

/// tonic's own channel to `host` (a host that need not exist), through
/// `server`'s HTTPS proxy: a custom connector opens the `CONNECT` tunnel to
/// port 443 and tonic's `tls_config` (feature `tls-ring`) does TLS over it,
/// trusting the server's CA, with ALPN h2 (`Endpoint::connect_with_connector`
/// applies the endpoint's TLS to a custom connector's streams).
pub async fn tonic_through_proxy(
    server: &Server,
    host: &'static str,
) -> Result<tonic::transport::Channel, tonic::transport::Error> {
    use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(server.ca_certificate_pem()))
        .domain_name(host);
    let authority = format!("{host}:443");
    Endpoint::from_shared(format!("https://{authority}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_with_connector(test_support::tunnel_connector(
            server.proxy_url(),
            authority,
        ))
        .await
}
