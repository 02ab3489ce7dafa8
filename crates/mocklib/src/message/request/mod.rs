//! The intercepted request, as a resolver sees it.
//!
//! Every front door turns its native request into a [`Request`] with the body
//! buffered once, so every handler that falls through can read it again, and
//! reading it never consumes anything. Cloning is cheap (one reference count).
//!
//! ```
//! use mocklib::{http, HttpResponse};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct NewPost { id: u32, title: String }
//!
//! let handler = http::post("/posts", |args| {
//!     match args.request.json::<NewPost>() {
//!         Ok(post) => HttpResponse::text(format!("{}: {}", post.id, post.title)).status(201),
//!         // A bad body is an error value, never a panic.
//!         Err(error) => HttpResponse::text(error.to_string()).status(400),
//!     }
//! });
//! # let _ = handler;
//! ```

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Version};
use url::Url;

use crate::message::body::Body;
use crate::message::form_data::{FormData, FormError};
pub use crate::message::incoming::BodyChunks;
use crate::message::incoming::LiveBody;
use crate::message::response::HttpResponse;

mod target;
use target::RequestUrl;
pub(crate) use target::{Target, UrlParts};
#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
pub(crate) use target::{is_plain as is_plain_target, under as url_under};

/// An intercepted HTTP request with its body already buffered.
#[derive(Clone)]
pub struct Request {
    inner: Arc<RequestParts>,
    /// A body still arriving (a gRPC call's), read with `body_chunks()`;
    /// the parts' `body` is then empty. Beside the parts, not in them: a
    /// streamed request is made from a new one in place, and its journal
    /// copy, which leaves the stream out, shares the same parts.
    live: Option<Arc<LiveBody>>,
}

#[derive(Clone)]
struct RequestParts {
    method: Method,
    url: RequestUrl,
    version: Version,
    headers: HeaderMap,
    body: Bytes,
    /// How `bypass()` performs this request; set by the engine.
    performer: Option<Arc<dyn Performer>>,
    /// Whether the header values and body own their storage (see
    /// [`Request::detached`]).
    owns_bytes: bool,
}

/// Whether `headers` say the body is a gRPC call's: `application/grpc`,
/// `application/grpc+proto` and the like, not gRPC-Web (`application/grpc-web`,
/// which HTTP/1.1 carries too). Front doors stream such a body (see
/// [`Request::with_body_stream`]).
#[cfg_attr(
    not(all(not(target_arch = "wasm32"), any(feature = "tower", feature = "net"))),
    allow(dead_code) // read by the front doors that stream
)]
pub(crate) fn is_grpc_content(headers: &HeaderMap) -> bool {
    // Told by `rpc`, which also decides what mocklib's own answers to a
    // call look like.
    crate::message::rpc::Rpc::of_content_type(headers) == Some(crate::message::rpc::Rpc::Grpc)
}

/// Header values of up to this many bytes in all are copied inline.
const INLINE_VALUES: usize = 256;

/// Copies the values of `headers` into one new buffer, so that they no
/// longer share the storage they were parsed from (one allocation for all
/// the values, however many; names never share it).
pub(crate) fn own_values(headers: &mut HeaderMap) {
    own_values_and(headers, "", None);
}

/// [`own_values`], copying `also` into the same buffer: the copy is returned.
/// `host`: an owned value equal to the request's one `Host` header (the
/// listener's own authority), which takes its place instead of a copy (and
/// a check of every byte).
pub(crate) fn own_values_and(
    headers: &mut HeaderMap,
    also: &str,
    host: Option<&HeaderValue>,
) -> Bytes {
    let copied = |name: &HeaderName| host.is_none() || name != http::header::HOST;
    let total = copied_values(headers, &copied)
        .map(<[u8]>::len)
        .sum::<usize>()
        + also.len();
    // The usual few hundred bytes go inline into the buffer's one
    // allocation (a `Vec` would take a second one when first shared), in
    // the smallest of a few sizes: the buffer is moved into its box whole.
    let buffer = if total <= 32 {
        inline_copy::<32>(headers, also, &copied)
    } else if total <= 64 {
        inline_copy::<64>(headers, also, &copied)
    } else if total <= 128 {
        inline_copy::<128>(headers, also, &copied)
    } else if total <= INLINE_VALUES {
        inline_copy::<INLINE_VALUES>(headers, also, &copied)
    } else {
        let mut buffer = Vec::with_capacity(total);
        buffer.extend_from_slice(also.as_bytes());
        for value in copied_values(headers, &copied) {
            buffer.extend_from_slice(value);
        }
        Bytes::from(buffer)
    };
    let also = buffer.slice(..also.len());
    let mut start = also.len();
    for (name, value) in headers.iter_mut() {
        if !copied(name) {
            if let Some(host) = host {
                *value = host.clone();
            }
            continue;
        }
        let end = start + value.len();
        // A value built unchecked may hold bytes a checked one may not:
        // that one keeps its own storage.
        if let Ok(mut copy) = HeaderValue::from_maybe_shared(buffer.slice(start..end)) {
            copy.set_sensitive(value.is_sensitive());
            *value = copy;
        }
        start = end;
    }
    also
}

/// The values of `headers` under the names `copied` takes, in order.
fn copied_values<'a>(
    headers: &'a HeaderMap,
    copied: &'a impl Fn(&HeaderName) -> bool,
) -> impl Iterator<Item = &'a [u8]> {
    headers
        .iter()
        .filter(|(name, _)| copied(name))
        .map(|(_, value)| value.as_bytes())
}

/// `also` then the values of `headers` under the names `copied` takes, in
/// one allocation of about `N` bytes (they fit).
fn inline_copy<const N: usize>(
    headers: &HeaderMap,
    also: &str,
    copied: &impl Fn(&HeaderName) -> bool,
) -> Bytes {
    let mut inline = Inline {
        len: 0,
        bytes: [0; N],
    };
    for piece in std::iter::once(also.as_bytes()).chain(copied_values(headers, copied)) {
        let end = inline.len + piece.len();
        inline.bytes[inline.len..end].copy_from_slice(piece);
        inline.len = end;
    }
    Bytes::from_owner(inline)
}

/// Bytes held in place: the owner of an inline copy.
struct Inline<const N: usize> {
    len: usize,
    bytes: [u8; N],
}

impl<const N: usize> AsRef<[u8]> for Inline<N> {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Why the request body could not be read the way a resolver asked.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The body is not valid UTF-8.
    #[error("request body is not valid UTF-8: {0}")]
    NotUtf8(#[from] std::str::Utf8Error),
    /// The body is not valid JSON, or not of the requested shape.
    #[error("request body is not the expected JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The body is not a form of the declared content type.
    #[error("request body is not a form: {0}")]
    Form(#[from] FormError),
}

/// Why an `http::Request` could not become a [`Request`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot intercept a request to {uri:?}: {reason}")]
pub struct InvalidRequestError {
    uri: String,
    reason: String,
}

/// Why a [`Request`] cannot be sent on as an `http::Request`
/// ([`Request::to_http`]), which passthrough and [`bypass`](crate::bypass)
/// need.
///
/// The front doors answer such a request themselves, with
/// [`status_code`](Self::status_code) and a text body saying why, instead of
/// passing it on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsendableRequestError {
    /// The URL is longer than an `http::Uri` may be. URLs are
    /// percent-encoded, so a request target that fits can grow past the limit:
    /// each `{` in a path or non-ASCII byte in a query takes three bytes.
    #[error("the request URL is {length} bytes once encoded, over the 65,534 bytes a URI may have")]
    UrlTooLong {
        /// The length of the encoded URL, in bytes.
        length: usize,
    },
    /// The URL is not a valid `http::Uri` for another reason.
    #[error("the request URL is not a valid URI: {reason}")]
    InvalidUri {
        /// What `http::Uri` objected to.
        reason: String,
    },
}

impl UnsendableRequestError {
    /// The longest URI `http::Uri` accepts, in bytes.
    pub const MAX_URI_LENGTH: usize = u16::MAX as usize - 1;

    /// The status a front door answers such a request with: `414 URI Too
    /// Long` for [`UrlTooLong`](Self::UrlTooLong) (RFC 9110 §15.5.15), `502
    /// Bad Gateway` otherwise (the request was fine to answer, mocklib just
    /// cannot pass it on).
    pub fn status_code(&self) -> http::StatusCode {
        match self {
            UnsendableRequestError::UrlTooLong { .. } => http::StatusCode::URI_TOO_LONG,
            UnsendableRequestError::InvalidUri { .. } => http::StatusCode::BAD_GATEWAY,
        }
    }
}

/// At most the first 100 characters of `text`, saying how long it was when cut.
pub(crate) fn abbreviate(text: &str) -> std::borrow::Cow<'_, str> {
    const KEEP: usize = 100;
    match text.char_indices().nth(KEEP) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => {
            std::borrow::Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len()))
        }
    }
}

impl Request {
    /// A request with no headers and an empty body. Front doors use
    /// [`Request::from_parts`]; this is handy in unit tests.
    pub fn new(method: Method, url: Url) -> Self {
        Self::from_parts(method, url, HeaderMap::new(), Bytes::new())
    }

    /// A request from its parts. The body is kept as given.
    pub fn from_parts(method: Method, url: Url, headers: HeaderMap, body: Bytes) -> Self {
        Request {
            inner: Arc::new(RequestParts {
                method,
                url: RequestUrl::new(Target::Url(url)),
                version: Version::HTTP_11,
                headers,
                body,
                performer: None,
                owns_bytes: false,
            }),
            live: None,
        }
    }

    /// This request with a body that is still arriving, in place of its
    /// buffered one, which is then empty: [`body_chunks`](Self::body_chunks)
    /// reads it as it comes. The listener and the tower front door hand a
    /// gRPC call's body over this way, so a bidirectional call can answer
    /// each message before the client sends the next (see
    /// [`BodyChunks`]); every other body is buffered before the handlers
    /// see it. A chunk the stream fails with ends the body for every reader
    /// with that error.
    pub fn with_body_stream<S, B, E>(self, stream: S) -> Self
    where
        S: futures_util::Stream<Item = Result<B, E>> + Send + 'static,
        B: Into<Bytes>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let source = crate::message::body::chunk_stream(stream);
        self.with_live_body(LiveBody::new(smallvec::SmallVec::new(), source))
    }

    /// This request with `live` as its body (see [`Self::with_body_stream`]).
    pub(crate) fn with_live_body(self, live: LiveBody) -> Self {
        let mut request = self;
        // Unshared (as a front door's new request is): emptied in place.
        match Arc::get_mut(&mut request.inner) {
            Some(parts) => {
                parts.body = Bytes::new();
                parts.performer = None;
            }
            None => {
                let shared = &request.inner;
                request.inner = Arc::new(RequestParts {
                    method: shared.method.clone(),
                    url: shared.url.clone(),
                    version: shared.version,
                    headers: shared.headers.clone(),
                    body: Bytes::new(),
                    performer: None,
                    owns_bytes: shared.owns_bytes,
                });
            }
        }
        request.live = Some(Arc::new(live));
        request
    }

    /// Every chunk of the body, from the first: the buffered body as one
    /// chunk, or a streamed body's chunks as they arrive (see
    /// [`with_body_stream`](Self::with_body_stream)). Each call reads the
    /// body from its start.
    pub fn body_chunks(&self) -> BodyChunks {
        match &self.live {
            Some(live) => BodyChunks::live(live),
            None => BodyChunks::buffered(&self.inner.body),
        }
    }

    /// Whether the body is still arriving as a stream (read it with
    /// [`body_chunks`](Self::body_chunks)); [`body`](Self::body) is then
    /// empty.
    pub fn is_body_streamed(&self) -> bool {
        self.live.is_some()
    }

    /// This request as sent with HTTP version `version` (front doors set the
    /// version the client used; [`Request::from_parts`] assumes HTTP/1.1).
    pub fn with_version(mut self, version: Version) -> Self {
        // Unshared (as a front door's new request is): set it in place.
        if let Some(parts) = Arc::get_mut(&mut self.inner) {
            parts.version = version;
            return self;
        }
        let shared = &self.inner;
        Request {
            inner: Arc::new(RequestParts {
                method: shared.method.clone(),
                url: shared.url.clone(),
                version,
                headers: shared.headers.clone(),
                body: shared.body.clone(),
                performer: None,
                owns_bytes: shared.owns_bytes,
            }),
            live: self.live.clone(),
        }
    }

    /// This request with other `headers` and `body`: the same method, URL,
    /// version and performer (a gRPC-Web or Connect call, made the gRPC
    /// call the handlers read).
    #[cfg(feature = "grpc")]
    pub(crate) fn rewritten(&self, method: Method, headers: HeaderMap, body: Bytes) -> Request {
        let shared = &self.inner;
        Request {
            inner: Arc::new(RequestParts {
                method,
                url: shared.url.clone(),
                version: shared.version,
                headers,
                body,
                performer: shared.performer.clone(),
                owns_bytes: false,
            }),
            live: None,
        }
    }

    /// A copy that owns its bytes: its own header values and body (cut to
    /// `max_body` bytes). A front door's header values and small body are
    /// slices of its connection's read buffer: a request kept for long (the
    /// journal keeps a thousand) would keep that whole buffer alive.
    /// A streamed body is left out: it would keep the call's stream open.
    pub(crate) fn detached(&self, max_body: usize) -> Request {
        if self.inner.owns_bytes && self.body().len() <= max_body {
            return Request {
                inner: Arc::clone(&self.inner),
                live: None,
            };
        }
        let mut headers = self.headers().clone();
        own_values(&mut headers);
        let body = Bytes::copy_from_slice(&self.body()[..self.body().len().min(max_body)]);
        let (method, url) = (self.method().clone(), self.inner.url.clone());
        Request::owning(method, url, self.version(), headers, body)
    }

    /// A request whose header values and body own their storage (share no
    /// larger buffer): [`Request::detached`] keeps it as it is.
    #[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn from_owned_parts(
        method: Method,
        target: Target,
        version: Version,
        headers: HeaderMap,
        body: Bytes,
    ) -> Self {
        Self::owning(method, RequestUrl::new(target), version, headers, body)
    }

    fn owning(
        method: Method,
        url: RequestUrl,
        version: Version,
        headers: HeaderMap,
        body: Bytes,
    ) -> Self {
        Request {
            inner: Arc::new(RequestParts {
                method,
                url,
                version,
                headers,
                body,
                performer: None,
                owns_bytes: true,
            }),
            live: None,
        }
    }

    /// Converts an `http::Request` with a buffered body.
    ///
    /// The URI must be absolute; for an origin-form URI (`/path`) the scheme
    /// `default_scheme` and the `Host` header complete it.
    pub fn from_http(
        request: http::Request<Bytes>,
        default_scheme: &str,
    ) -> Result<Self, InvalidRequestError> {
        let (parts, body) = request.into_parts();
        let url = absolute_url(&parts.uri, &parts.headers, default_scheme)?;
        Ok(Request {
            inner: Arc::new(RequestParts {
                method: parts.method,
                url: RequestUrl::new(Target::Url(url)),
                version: parts.version,
                headers: parts.headers,
                body,
                performer: None,
                owns_bytes: false,
            }),
            live: None,
        })
    }

    /// An `http::Request` equal to this one (for performing it for real).
    ///
    /// Fails when the URL cannot be an `http::Uri`: most often because it is
    /// longer than the 65,534 bytes a URI may have once percent-encoded (a
    /// client may send 30,000 `{` in a path, which the URL parser encodes
    /// as 90,000 bytes of `%7B`).
    ///
    /// ```
    /// use mocklib::{Request, request::UnsendableRequestError};
    ///
    /// let url = format!("https://api.example.com/{}", "{".repeat(30_000));
    /// let request = Request::new(::http::Method::GET, url.parse()?);
    /// let error = request.to_http().unwrap_err();
    /// assert!(matches!(error, UnsendableRequestError::UrlTooLong { .. }));
    /// assert_eq!(error.status_code(), 414);
    /// # Ok::<_, url::ParseError>(())
    /// ```
    pub fn to_http(&self) -> Result<http::Request<Bytes>, UnsendableRequestError> {
        let url = self.url().as_str();
        // Checked here because `http::Uri`'s own error does not say how long.
        if url.len() > UnsendableRequestError::MAX_URI_LENGTH {
            return Err(UnsendableRequestError::UrlTooLong { length: url.len() });
        }
        let uri = url
            .parse::<http::Uri>()
            .map_err(|error| UnsendableRequestError::InvalidUri {
                reason: error.to_string(),
            })?;
        let mut request = http::Request::new(self.inner.body.clone());
        *request.method_mut() = self.inner.method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = self.inner.headers.clone();
        Ok(request)
    }

    /// Like [`to_http`](Self::to_http), with a body that streams when this
    /// request's does (see [`with_body_stream`](Self::with_body_stream)):
    /// how a request is performed for real.
    #[cfg_attr(
        not(any(feature = "grpc", all(not(target_arch = "wasm32"), feature = "net"))),
        allow(dead_code) // how the listener and `grpc::service` send requests on
    )]
    pub(crate) fn to_http_body(&self) -> Result<http::Request<Body>, UnsendableRequestError> {
        let request = self.to_http()?;
        Ok(match &self.live {
            Some(live) => request.map(|_| Body::from_try_stream(BodyChunks::live(live))),
            None => request.map(Body::from),
        })
    }

    /// The URL cut to a length fit for a message: hostile requests can
    /// have URLs of tens of kilobytes.
    pub(crate) fn url_for_message(&self) -> std::borrow::Cow<'_, str> {
        abbreviate(self.url().as_str())
    }

    /// The body of what a front door answers, with
    /// [`UnsendableRequestError::status_code`], to this request when it should
    /// pass it on but cannot (see [`to_http`](Self::to_http)). The URL is
    /// cut short: hostile requests have URLs of tens of kilobytes.
    pub fn unsendable_message(&self, error: &UnsendableRequestError) -> String {
        format!(
            "mocklib: cannot perform {} {} as it is: {error}\n",
            self.inner.method,
            self.url_for_message()
        )
    }

    pub(crate) fn set_performer(&mut self, performer: Arc<dyn Performer>) {
        // The first engine to see the request decides; a request is resolved
        // once. It is not shared yet as a rule (the front door hands it to
        // the engine as made), so this sets it in place; a shared one is
        // copied, and its other handles keep no performer.
        if self.inner.performer.is_none() {
            Arc::make_mut(&mut self.inner).performer = Some(performer);
        }
    }

    pub(crate) fn performer(&self) -> Option<&Arc<dyn Performer>> {
        self.inner.performer.as_ref()
    }

    /// The request method.
    pub fn method(&self) -> &Method {
        &self.inner.method
    }

    /// The absolute request URL, query included.
    pub fn url(&self) -> &Url {
        self.inner.url.get()
    }

    /// The URL's origin and path for matching, without parsing the URL
    /// when the front door could tell them apart (see [`target`]).
    pub(crate) fn url_parts(&self) -> UrlParts<'_> {
        self.inner.url.parts()
    }

    /// The HTTP version the client used.
    pub fn version(&self) -> Version {
        self.inner.version
    }

    /// All request headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.inner.headers
    }

    /// Whether this is a WebSocket opening handshake (`GET` with
    /// `Upgrade: websocket`).
    #[cfg(feature = "ws")]
    pub(crate) fn is_websocket_upgrade(&self) -> bool {
        self.method() == Method::GET
            && self
                .header("upgrade")
                .is_some_and(|upgrade| upgrade.eq_ignore_ascii_case("websocket"))
    }

    /// The first value of header `name` as text; `None` when absent or not
    /// visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.inner.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body bytes (cheap to clone). Empty when the body is streamed
    /// (a gRPC call's, see [`body_chunks`](Self::body_chunks)).
    pub fn body(&self) -> &Bytes {
        &self.inner.body
    }

    /// The body bytes, owned (a reference-count increment, not a copy).
    pub fn bytes(&self) -> Bytes {
        self.inner.body.clone()
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> Result<&str, BodyError> {
        Ok(std::str::from_utf8(&self.inner.body)?)
    }

    /// The body parsed as JSON into `T` (use `serde_json::Value` for any JSON).
    ///
    /// In a resolver, `?` turns a body that is not the JSON expected into a
    /// 500 "Unhandled Exception" naming the serde error:
    ///
    /// ```
    /// use mocklib::{http, request::BodyError, HttpResponse, Request};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct NewPost {
    ///     title: String,
    /// }
    ///
    /// let handler = http::post("/posts", |args| {
    ///     let post: NewPost = args.request.json()?;
    ///     Ok::<_, BodyError>(HttpResponse::text(post.title).status(201))
    /// });
    /// # let _ = handler;
    ///
    /// let post = |body: &'static str| {
    ///     let url = "https://api.example.com/posts".parse().unwrap();
    ///     Request::from_parts(::http::Method::POST, url, Default::default(), body.into())
    /// };
    /// let new_post: NewPost = post(r#"{ "title": "Hello" }"#).json()?;
    /// assert_eq!(new_post.title, "Hello");
    /// assert!(post("title=Hello").json::<NewPost>().is_err());
    /// # Ok::<_, BodyError>(())
    /// ```
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, BodyError> {
        Ok(serde_json::from_slice(&self.inner.body)?)
    }

    /// The body parsed as a form, according to its `Content-Type`
    /// (`application/x-www-form-urlencoded` or `multipart/form-data`).
    pub fn form(&self) -> Result<FormData, BodyError> {
        // Not `header()`: it hides a value that is not visible ASCII (a
        // boundary with UTF-8 in it), and the error then named an empty
        // content type instead of the one sent (found by
        // tests/it/hostile_input.rs). Bytes that are not UTF-8 become U+FFFD,
        // so such a boundary fails as "no opening boundary".
        let content_type = self
            .inner
            .headers
            .get(http::header::CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()))
            .unwrap_or_default();
        Ok(FormData::parse(&content_type, &self.inner.body)?)
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.inner.method)
            .field("url", &self.url().as_str())
            .field("headers", &self.inner.headers)
            .field("body_len", &self.inner.body.len())
            .finish()
    }
}

fn absolute_url(
    uri: &http::Uri,
    headers: &HeaderMap,
    default_scheme: &str,
) -> Result<Url, InvalidRequestError> {
    let invalid = |reason: &str| InvalidRequestError {
        uri: uri.to_string(),
        reason: reason.to_owned(),
    };
    let text = if uri.scheme().is_some() {
        uri.to_string()
    } else {
        let host = uri
            .authority()
            .map(|a| a.as_str())
            .or_else(|| {
                headers
                    .get(http::header::HOST)
                    .and_then(|h| h.to_str().ok())
            })
            .ok_or_else(|| invalid("no absolute URI and no Host header"))?;
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        format!("{default_scheme}://{host}{path}")
    };
    Url::parse(&text).map_err(|e| invalid(&e.to_string()))
}

// Performing a request for real. The trait lives with the request (not in the
// engine) so that the data layer imports nothing above it: a front door with
// a network implements it, the engine hands it to each request.

/// The result of performing a request for real with [`Performer`]. `Send`
/// on every target, the browser's too: an `sse` session awaits it in
/// `server.connect()`, and a session's future is `Send` everywhere.
pub(crate) type PerformFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<HttpResponse, PerformError>> + Send>>;

/// Why a [`Performer`] got no real response.
#[derive(Debug)]
pub(crate) enum PerformError {
    /// The request cannot be sent on as it is; nothing was sent.
    // Variants stay (a `#[cfg]` would spread to every match on them and
    // its imports): only some front doors construct each.
    #[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))]
    Unsendable(UnsendableRequestError),
    /// Sending it failed (connection, TLS, reading the response…).
    #[cfg_attr(not(any(feature = "net", target_arch = "wasm32")), allow(dead_code))]
    Failed(String),
}

/// Performs a request over the real network, for [`bypass`](crate::bypass).
/// Provided by a front door that has a network (the native listener); the
/// core itself does no I/O.
pub(crate) trait Performer: Send + Sync {
    /// The real response, its body read in full.
    fn perform(&self, request: &Request) -> PerformFuture;

    /// The real response with its body streaming as it arrives (an event
    /// stream never ends). Buffered where a front door cannot stream.
    fn perform_streaming(&self, request: &Request) -> PerformFuture {
        self.perform(request)
    }

    /// Runs `task` in the background on this front door's executor (a
    /// webhook, sent after the answer); `Err` saying why not where there
    /// is none.
    fn spawn(
        &self,
        task: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ) -> Result<(), String> {
        drop(task);
        Err("this front door cannot send requests in the background".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by tests/it/hostile_input.rs: a multipart content type whose
    /// boundary is not ASCII was read as no content type at all, and the
    /// error named `""`.
    #[test]
    fn form_reads_a_content_type_that_is_not_ascii() {
        let boundary = "\u{fffc}";
        let mut headers = HeaderMap::new();
        headers.insert(
            "content-type",
            HeaderValue::from_str(&format!("multipart/form-data;;;=;boundary={boundary}")).unwrap(),
        );
        let body = format!(
            "--{boundary}\r\ncontent-disposition: form-data; name=\"a\"\r\n\r\nb\r\n--{boundary}--\r\n"
        );
        let request = Request::from_parts(
            Method::POST,
            "http://127.0.0.1/form".parse().unwrap(),
            headers,
            Bytes::from(body),
        );
        assert_eq!(request.form().unwrap(), FormData::new().text("a", "b"));
    }

    /// Whether `value`'s bytes lie inside `buffer`.
    fn inside(value: &HeaderValue, buffer: &Bytes) -> bool {
        let range = buffer.as_ptr_range();
        let bytes = value.as_bytes().as_ptr_range();
        range.start <= bytes.start && bytes.end <= range.end
    }

    /// Headers and a body as a front door parses them: slices of one read
    /// buffer.
    fn parsed(buffer: &Bytes) -> (HeaderMap, Bytes) {
        let mut headers = HeaderMap::new();
        headers.insert(
            "host",
            HeaderValue::from_maybe_shared(buffer.slice(0..9)).unwrap(),
        );
        let mut secret = HeaderValue::from_maybe_shared(buffer.slice(10..16)).unwrap();
        secret.set_sensitive(true);
        headers.append("x-token", secret);
        headers.append(
            "x-token",
            HeaderValue::from_maybe_shared(buffer.slice(17..20)).unwrap(),
        );
        (headers, buffer.slice(21..))
    }

    #[test]
    fn own_values_copies_every_value_out_of_the_read_buffer() {
        let buffer = Bytes::copy_from_slice(b"localhost secret two {\"a\":1}");
        let (mut headers, _) = parsed(&buffer);
        assert!(headers.values().all(|value| inside(value, &buffer)));
        let before = headers.clone();
        own_values(&mut headers);
        assert_eq!(headers, before);
        assert!(headers.values().all(|value| !inside(value, &buffer)));
        let sensitive: Vec<bool> = headers.values().map(HeaderValue::is_sensitive).collect();
        assert_eq!(sensitive, [false, true, false]);
    }

    #[test]
    fn a_detached_request_shares_nothing_with_the_read_buffer() {
        let buffer = Bytes::copy_from_slice(b"localhost secret two {\"a\":1}");
        let (headers, body) = parsed(&buffer);
        let url: Url = "http://localhost/x".parse().unwrap();
        let request = Request::from_parts(Method::POST, url.clone(), headers, body);
        let kept = request.detached(4);
        assert_eq!(kept.headers(), request.headers());
        assert_eq!(&kept.body()[..], b"{\"a\"");
        assert!(kept.headers().values().all(|value| !inside(value, &buffer)));
        // A request that owns its bytes (and fits) is kept as it is.
        let owned = Request::from_owned_parts(
            Method::GET,
            Target::Url(url),
            Version::HTTP_11,
            HeaderMap::new(),
            Bytes::from_static(b"{}"),
        );
        assert!(Arc::ptr_eq(&owned.detached(4).inner, &owned.inner));
        assert!(!Arc::ptr_eq(&owned.detached(1).inner, &owned.inner));
    }

    #[test]
    fn origin_form_uri_is_completed_from_the_host_header() {
        let request = http::Request::builder()
            .uri("/posts?x=1")
            .header("host", "localhost:8080")
            .body(Bytes::new())
            .unwrap();
        let request = Request::from_http(request, "http").unwrap();
        assert_eq!(request.url().as_str(), "http://localhost:8080/posts?x=1");
    }

    #[test]
    fn missing_host_is_an_error() {
        let request = http::Request::builder()
            .uri("/posts")
            .body(Bytes::new())
            .unwrap();
        let error = Request::from_http(request, "http").unwrap_err();
        assert!(error.to_string().contains("Host"), "{error}");
    }

    #[test]
    fn a_url_too_long_once_encoded_is_an_error_not_a_panic() {
        // 30,000 `{` fit in an `http::Uri` as they are, and not once encoded.
        let target = format!("http://api.example.com/{}", "{".repeat(30_000));
        assert!(target.parse::<http::Uri>().is_ok());
        let request = Request::new(Method::GET, Url::parse(&target).unwrap());
        let error = request.to_http().unwrap_err();
        assert_eq!(
            error,
            UnsendableRequestError::UrlTooLong {
                length: "http://api.example.com/".len() + 90_000
            }
        );
        assert_eq!(error.status_code(), http::StatusCode::URI_TOO_LONG);
        assert_eq!(
            error.to_string(),
            "the request URL is 90023 bytes once encoded, over the 65,534 bytes a URI may have"
        );
    }

    #[test]
    fn a_url_of_exactly_the_limit_is_sent() {
        let prefix = "http://api.example.com/";
        let fill = "a".repeat(UnsendableRequestError::MAX_URI_LENGTH - prefix.len());
        let request = Request::new(Method::GET, Url::parse(&format!("{prefix}{fill}")).unwrap());
        let sent = request.to_http().unwrap();
        assert_eq!(
            sent.uri().to_string().len(),
            UnsendableRequestError::MAX_URI_LENGTH
        );
        let longer = Request::new(
            Method::GET,
            Url::parse(&format!("{prefix}{fill}a")).unwrap(),
        );
        assert!(matches!(
            longer.to_http(),
            Err(UnsendableRequestError::UrlTooLong { length: 65_535 })
        ));
    }

    #[test]
    fn a_url_that_is_no_uri_is_an_error_not_a_panic() {
        // Fine URLs, but an `http::Uri` needs an authority after a scheme.
        for url in [
            "file:///etc/passwd",
            "data:text/plain,hi",
            "urn:isbn:0451450523",
        ] {
            let request = Request::new(Method::GET, Url::parse(url).unwrap());
            let error = request.to_http().unwrap_err();
            assert!(
                matches!(error, UnsendableRequestError::InvalidUri { .. }),
                "{url}: {error:?}"
            );
            assert_eq!(error.status_code(), http::StatusCode::BAD_GATEWAY);
        }
    }

    #[test]
    fn long_urls_are_abbreviated_in_messages() {
        let url = Url::parse(&format!("http://x/{}", "a".repeat(500))).unwrap();
        let shown = Request::new(Method::GET, url)
            .url_for_message()
            .into_owned();
        assert!(shown.starts_with("http://x/aaa"), "{shown}");
        assert!(shown.ends_with("… (509 bytes)"), "{shown}");
        assert_eq!(shown.chars().count(), 100 + "… (509 bytes)".chars().count());
        let short = Request::new(Method::GET, Url::parse("http://x/a").unwrap());
        assert_eq!(short.url_for_message(), "http://x/a");
    }

    #[test]
    fn bad_bodies_are_errors() {
        let url = Url::parse("http://x/").unwrap();
        let request = Request::from_parts(
            Method::POST,
            url,
            HeaderMap::new(),
            Bytes::from_static(b"{nope"),
        );
        assert!(matches!(
            request.json::<serde_json::Value>(),
            Err(BodyError::Json(_))
        ));
        let request = Request::from_parts(
            Method::POST,
            Url::parse("http://x/").unwrap(),
            HeaderMap::new(),
            Bytes::from_static(&[0xff, 0xfe]),
        );
        assert!(matches!(request.text(), Err(BodyError::NotUtf8(_))));
    }
}
