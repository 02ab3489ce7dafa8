//! [`HttpResponse`]: what a resolver answers with.
//!
//! Constructors set the body and, unless you set it yourself, the
//! `Content-Type` and `Content-Length` headers (as Mock Service Worker does);
//! builder methods adjust status, status text, headers and cookies:
//!
//! ```
//! use mocklib::HttpResponse;
//!
//! let created = HttpResponse::json(&serde_json::json!({ "id": 1 })).status(201);
//! let missing = HttpResponse::empty().status(404);       // a null body
//! let offline = HttpResponse::error();                   // a network error, not a response
//! let reset = HttpResponse::fault(mocklib::Fault::ConnectionReset); // a TCP reset
//! let cut = HttpResponse::text("0123456789").truncate_after(4);     // 4 of 10 bytes, then the end
//! let login = HttpResponse::text("welcome")
//!     .header("x-request-source", "mock")
//!     .cookie("session", "abc")
//!     .cookie("theme", "dark");                          // two separate Set-Cookie headers
//! # let _ = (created, missing, offline, reset, cut, login);
//! ```

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};

use crate::message::body::Body;
use crate::message::fault::Fault;
use crate::message::form_data::FormData;

/// A mocked response, or one of the special answers: a network error
/// ([`HttpResponse::error`]), a broken connection
/// ([`HttpResponse::fault`]) or "perform the request as it is"
/// ([`passthrough`](crate::passthrough)).
#[derive(Debug, Clone)]
#[must_use = "a response does nothing until a resolver returns it"]
pub struct HttpResponse {
    // Boxed so the handle is one pointer: resolvers return it by value and in
    // `Result<_, HttpResponse>`, which should stay cheap to move.
    parts: Box<ResponseParts>,
}

#[derive(Debug, Clone)]
struct ResponseParts {
    kind: Kind,
    status: StatusCode,
    status_text: Option<String>,
    headers: HeaderMap,
    body: Body,
    /// The constructor's content type, used unless a header sets one.
    default_content_type: Option<HeaderValue>,
    /// Whether to add `Content-Length` (as MSW does for its typed constructors).
    sets_content_length: bool,
    /// A mistake made while building (a bad status or header); reported as a
    /// 500 "Unhandled Exception" when the response is used, never a panic.
    build_error: Option<String>,
    /// [`HttpResponse::fault`]'s fault.
    fault: Option<Fault>,
    /// [`HttpResponse::truncate_after`]'s byte count.
    truncate_after: Option<usize>,
    /// [`HttpResponse::dribble`]'s duration.
    dribble: Option<std::time::Duration>,
    /// [`HttpResponse::extension`]'s values.
    extensions: http::Extensions,
    /// Values for the journal entry alone (a gRPC call's record): not in the
    /// `http::Response`, so the journal takes them as they are instead of
    /// copying the response's.
    journal: JournalValues,
}

/// What a mocked answer hands its journal entry alone: typed values (a
/// webhook's log), and one shared record kept as it is (a gRPC call's: one
/// per call, so it skips the type map's two allocations). Type-erased
/// because this layer cannot name the record's type.
#[derive(Clone, Default)]
pub(crate) struct JournalValues {
    pub(crate) extensions: http::Extensions,
    pub(crate) shared: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for JournalValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalValues")
            .field("extensions", &self.extensions)
            .field("shared", &self.shared.is_some())
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Mock,
    NetworkError,
    Passthrough,
}

/// Why [`HttpResponse::text_body`] or [`json_body`](HttpResponse::json_body)
/// could not read the body.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResponseBodyError {
    /// The body streams: only the client reads it (or [`Body::collect`]).
    #[error("the response body streams; it is not held in memory")]
    Streamed,
    /// The body is not valid UTF-8.
    #[error("response body is not valid UTF-8: {0}")]
    NotUtf8(#[from] std::str::Utf8Error),
    /// The body is not valid JSON, or not of the requested shape.
    #[error("response body is not the expected JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The status text of a mocked response, kept in the `http::Response`'s
/// extensions for front doors that can send a custom reason phrase — only
/// when it differs from the status's own reason phrase, so read it with
/// [`StatusText::of`]:
///
/// ```
/// use mocklib::{HttpResponse, response::StatusText};
///
/// let usual = HttpResponse::text("gone").status(404).into_http().unwrap();
/// assert_eq!(StatusText::of(&usual), "Not Found");
/// let custom = HttpResponse::text("tea").status(418).status_text("Brewing").into_http().unwrap();
/// assert_eq!(StatusText::of(&custom), "Brewing");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusText(pub String);

impl StatusText {
    /// The status text of a mocked response (its reason phrase if none was set).
    pub fn of<B>(response: &http::Response<B>) -> &str {
        response
            .extensions()
            .get::<StatusText>()
            .map(|text| text.0.as_str())
            .unwrap_or_else(|| response.status().canonical_reason().unwrap_or(""))
    }
}

impl HttpResponse {
    fn with_body(body: impl Into<Body>, content_type: Option<&'static str>) -> Self {
        HttpResponse {
            parts: Box::new(ResponseParts {
                kind: Kind::Mock,
                status: StatusCode::OK,
                status_text: None,
                headers: HeaderMap::new(),
                body: body.into(),
                default_content_type: content_type.map(HeaderValue::from_static),
                sets_content_length: content_type.is_some(),
                build_error: None,
                fault: None,
                truncate_after: None,
                dribble: None,
                extensions: http::Extensions::new(),
                journal: JournalValues::default(),
            }),
        }
    }

    /// A 200 response with `body` and no content type (MSW:
    /// [`new HttpResponse(body)`](https://mswjs.io/docs/api/http-response)).
    #[doc(alias = "constructor")]
    pub fn new(body: impl Into<Bytes>) -> Self {
        Self::with_body(body.into(), None)
    }

    /// A 200 response with no body (MSW:
    /// [`new HttpResponse(null)`](https://mswjs.io/docs/api/http-response)).
    pub fn empty() -> Self {
        Self::with_body(Bytes::new(), None)
    }

    /// A JSON response (`Content-Type: application/json`).
    ///
    /// If `data` cannot be serialized (say, a map with non-string keys), the
    /// request gets a 500 "Unhandled Exception" naming the serde error.
    pub fn json<T: serde::Serialize + ?Sized>(data: &T) -> Self {
        match serde_json::to_vec(data) {
            Ok(body) => Self::with_body(Bytes::from(body), Some("application/json")),
            Err(error) => {
                let mut response = Self::empty();
                response.fail(format!(
                    "HttpResponse::json could not serialize the data: {error}"
                ));
                response
            }
        }
    }

    /// A text response (`Content-Type: text/plain`).
    pub fn text(body: impl Into<String>) -> Self {
        Self::with_body(Bytes::from(body.into()), Some("text/plain"))
    }

    /// An HTML response (`Content-Type: text/html`).
    pub fn html(body: impl Into<String>) -> Self {
        Self::with_body(Bytes::from(body.into()), Some("text/html"))
    }

    /// An XML response (`Content-Type: text/xml`).
    pub fn xml(body: impl Into<String>) -> Self {
        Self::with_body(Bytes::from(body.into()), Some("text/xml"))
    }

    /// A binary response (`Content-Type: application/octet-stream`;
    /// MSW: [`HttpResponse.arrayBuffer`](https://mswjs.io/docs/api/http-response)).
    #[doc(alias = "arrayBuffer")]
    pub fn bytes(body: impl Into<Bytes>) -> Self {
        Self::with_body(body.into(), Some("application/octet-stream"))
    }

    /// A `multipart/form-data` response.
    #[doc(alias = "formData")]
    pub fn form_data(form: &FormData) -> Self {
        let boundary = multipart_boundary();
        let mut response = Self::with_body(form.to_multipart(&boundary), None);
        response.parts.default_content_type =
            HeaderValue::try_from(format!("multipart/form-data; boundary={boundary}")).ok();
        response
    }

    /// A 200 response that streams `stream`'s chunks as they come, with no
    /// content type and no `Content-Length` (MSW: a `ReadableStream` body).
    /// The front door sends each chunk when the stream yields it and drops
    /// the stream when the client goes away.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse};
    ///
    /// http::get("/logs", |_| {
    ///     let lines = futures_util::stream::iter(["boot\n", "ready\n"]);
    ///     HttpResponse::stream(lines).header("content-type", "text/plain")
    /// });
    /// ```
    #[doc(alias = "ReadableStream")]
    pub fn stream<S, B>(stream: S) -> Self
    where
        S: futures_util::Stream<Item = B> + Send + 'static,
        B: Into<Bytes>,
    {
        Self::with_body(Body::from_stream(stream), None)
    }

    /// Like [`stream`](Self::stream), for a stream of `Result`s: an `Err`
    /// ends the body abruptly, as a server that fails mid-response does. The
    /// client gets the status, the headers and every chunk before it, even
    /// when the `Err` comes first or right behind a chunk, then an error:
    /// the connection closing mid-body on HTTP/1.1, a stream reset on
    /// HTTP/2 (see [`StreamError`](crate::response::StreamError)).
    pub fn try_stream<S, B, E>(stream: S) -> Self
    where
        S: futures_util::Stream<Item = Result<B, E>> + Send + 'static,
        B: Into<Bytes>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        Self::with_body(Body::from_try_stream(stream), None)
    }

    /// A streamed response of `chunks`, waiting `pause` between two chunks
    /// (the first goes at once): a slow download, a token-by-token answer.
    /// The pause uses [`delay`](crate::delay)'s timer, so
    /// `tokio::time::pause()` applies.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mocklib::{http, HttpResponse};
    ///
    /// http::get("/tokens", |_| HttpResponse::chunks(["Hel", "lo"], Duration::from_millis(50)));
    /// ```
    pub fn chunks<I>(chunks: I, pause: impl Into<crate::message::delay::Delay>) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Bytes> + 'static,
        I::IntoIter: Send + 'static,
    {
        use futures_util::StreamExt;
        let pause = pause.into();
        let paced = futures_util::stream::iter(chunks.into_iter().map(Into::into))
            .enumerate()
            .then(move |(n, chunk): (usize, Bytes)| async move {
                if n > 0 {
                    crate::message::delay::delay(pause).await;
                }
                chunk
            });
        Self::stream(paced)
    }

    /// A network error: the requester sees its request fail (a transport
    /// error, or `fetch` rejecting with "Failed to fetch"), not an HTTP response.
    pub fn error() -> Self {
        let mut response = Self::empty();
        response.parts.kind = Kind::NetworkError;
        response
    }

    /// A transport failure instead of a response: a reset connection, a
    /// connection closed without a reply, garbage bytes, or a malformed
    /// chunk after the head. The [`Fault`] docs list what each client sees
    /// on each front door.
    ///
    /// ```
    /// use mocklib::{http, Fault, HttpResponse};
    ///
    /// http::get("https://api.example.com/feed", |_| HttpResponse::fault(Fault::Garbage));
    /// // Headers added to a malformed-chunk answer go out in its head.
    /// let broken = HttpResponse::fault(Fault::MalformedChunk).header("x-trace", "1");
    /// assert_eq!(broken.injected_fault(), Some(Fault::MalformedChunk));
    /// assert!(!broken.is_network_error());
    /// ```
    pub fn fault(fault: Fault) -> Self {
        let mut response = Self::empty();
        if fault.is_before_response() {
            response.parts.kind = Kind::NetworkError;
        }
        response.parts.fault = Some(fault);
        response
    }

    /// Sends only the first `n` bytes of the body while `Content-Length`
    /// promises all of them, then ends the connection: a download cut short.
    /// The client gets the response head, then an error reading the body
    /// (see the table in [`Fault`]). `n` at or past the body's length sends
    /// it whole. The body must be buffered (a stream has no length to
    /// promise; end it with an `Err` in [`try_stream`](Self::try_stream)
    /// instead), otherwise the request gets a 500 that says so.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse};
    ///
    /// http::get("/report.csv", |_| HttpResponse::text("a,b\n1,2\n").truncate_after(4));
    /// ```
    pub fn truncate_after(mut self, n: usize) -> Self {
        self.parts.truncate_after = Some(n);
        self
    }

    /// Sends the body in small pieces spread over `duration` (at most ten
    /// pieces, the first at once, the last after `duration`): a slow
    /// network, not an error. `Content-Length` stays as for the whole body.
    /// The pauses use [`delay`](crate::delay)'s timer, so
    /// `tokio::time::pause()` applies. The body must be buffered (a stream
    /// sets its own pace; see [`chunks`](Self::chunks)), otherwise the
    /// request gets a 500 that says so.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mocklib::{http, HttpResponse};
    ///
    /// http::get("/slow.json", |_| {
    ///     HttpResponse::json(&serde_json::json!({ "ok": true })).dribble(Duration::from_secs(2))
    /// });
    /// ```
    pub fn dribble(mut self, duration: std::time::Duration) -> Self {
        self.parts.dribble = Some(duration);
        self
    }

    pub(crate) fn passthrough() -> Self {
        let mut response = Self::empty();
        response.parts.kind = Kind::Passthrough;
        response
    }

    /// Sets the status code (default 200). An invalid code (outside
    /// 100..=999) makes the request fail with a 500 that says so.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse};
    ///
    /// let handler = http::get("/user", |_| HttpResponse::empty().status(401));
    /// # let _ = handler;
    /// let created = HttpResponse::json(&serde_json::json!({ "id": 1 })).status(201);
    /// assert_eq!(created.status_code(), 201);
    /// ```
    pub fn status(mut self, status: u16) -> Self {
        match StatusCode::from_u16(status) {
            Ok(code) => self.parts.status = code,
            Err(_) => self.fail(format!("{status} is not a valid HTTP status code")),
        }
        self
    }

    /// Sets the status text (default: the status code's reason phrase).
    #[doc(alias = "statusText")]
    pub fn status_text(mut self, text: impl Into<String>) -> Self {
        self.parts.status_text = Some(text.into());
        self
    }

    /// Adds a header. Headers you set win over the defaults of the
    /// constructor; adding the same name twice keeps both values.
    ///
    /// ```
    /// use mocklib::HttpResponse;
    ///
    /// let response = HttpResponse::text("[]")
    ///     .header("x-total-count", "0")
    ///     .header("link", "</posts?page=2>; rel=\"next\"")
    ///     .header("link", "</posts?page=9>; rel=\"last\"");
    /// assert_eq!(response.headers()["x-total-count"], "0");
    /// assert_eq!(response.headers().get_all("link").iter().count(), 2);
    /// ```
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(name), Ok(value)) => {
                self.parts.headers.append(name, value);
            }
            _ => self.fail(format!("invalid response header {name:?}: {value:?}")),
        }
        self
    }

    /// Adds a `Set-Cookie: name=value` header. Several cookies stay separate
    /// headers. For attributes (`Path`, `Max-Age`, …) use
    /// [`header`](Self::header) with the full `Set-Cookie` value.
    pub fn cookie(self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let value = crate::message::cookies::set_cookie_value(name.as_ref(), value.as_ref());
        self.header("set-cookie", value)
    }

    /// Attaches a typed value to the response: an in-process client finds
    /// it in the `http::Response`'s extensions, and the journal keeps a copy
    /// ([`RecordedRequest::extensions`](crate::journal::RecordedRequest::extensions)),
    /// beside what handler kinds tell it there (a gRPC call's messages and
    /// status). One value per type, the last wins.
    ///
    /// ```
    /// use mocklib::HttpResponse;
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Fixture(&'static str);
    ///
    /// let response = HttpResponse::text("John").extension(Fixture("users.json")).into_http()?;
    /// assert_eq!(response.extensions().get(), Some(&Fixture("users.json")));
    /// # Ok::<(), String>(())
    /// ```
    pub fn extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.parts.extensions.insert(value);
        self
    }

    /// Attaches a typed value for the journal entry alone
    /// ([`RecordedRequest::extensions`](crate::journal::RecordedRequest::extensions)),
    /// not the `http::Response`.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn journal_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.parts.journal.extensions.insert(value);
        self
    }

    /// Attaches the shared record the journal entry keeps as it is (see
    /// [`JournalValues`]).
    #[cfg(feature = "grpc")]
    pub(crate) fn journal_shared(
        mut self,
        record: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        self.parts.journal.shared = Some(record);
        self
    }

    /// This mocked response with its status, headers and body rewritten by
    /// `rewrite` (a gRPC answer made gRPC-Web's or Connect's); the rest,
    /// the journal's values among it, stays. A network error or a
    /// passthrough is left as it is.
    #[cfg(feature = "grpc")]
    pub(crate) fn rewrite(
        mut self,
        rewrite: impl FnOnce(&mut StatusCode, &mut HeaderMap, Body) -> Body,
    ) -> Self {
        if self.parts.kind == Kind::Mock {
            let body = std::mem::take(&mut self.parts.body);
            let parts = &mut *self.parts;
            parts.body = rewrite(&mut parts.status, &mut parts.headers, body);
        }
        self
    }

    /// Takes the values for the journal entry alone (see
    /// [`Self::journal_extension`]), before [`Self::into_http`].
    pub(crate) fn take_journal(&mut self) -> JournalValues {
        std::mem::take(&mut self.parts.journal)
    }

    fn fail(&mut self, message: String) {
        self.parts.build_error.get_or_insert(message);
    }

    /// The status code.
    pub fn status_code(&self) -> StatusCode {
        self.parts.status
    }

    /// The status text: as set, or the status code's reason phrase.
    pub fn status_text_or_default(&self) -> &str {
        self.parts
            .status_text
            .as_deref()
            .unwrap_or_else(|| self.parts.status.canonical_reason().unwrap_or(""))
    }

    /// The headers set so far (without the constructor's defaults).
    pub fn headers(&self) -> &HeaderMap {
        &self.parts.headers
    }

    /// The body: buffered ([`Body::as_bytes`]) or streamed.
    pub fn body(&self) -> &Body {
        &self.parts.body
    }

    /// The buffered body as text (a [`bypass`](crate::bypass) response is
    /// always buffered).
    pub fn text_body(&self) -> Result<&str, ResponseBodyError> {
        Ok(std::str::from_utf8(self.buffered_body()?)?)
    }

    /// The buffered body parsed as JSON into `T` (use `serde_json::Value`
    /// for any JSON), typically to alter a [`bypass`](crate::bypass) response.
    ///
    /// ```
    /// let response = mocklib::HttpResponse::json(&serde_json::json!({ "plan": "free" }));
    /// let body: serde_json::Value = response.json_body().unwrap();
    /// assert_eq!(body["plan"], "free");
    /// ```
    pub fn json_body<T: serde::de::DeserializeOwned>(&self) -> Result<T, ResponseBodyError> {
        Ok(serde_json::from_slice(self.buffered_body()?)?)
    }

    fn buffered_body(&self) -> Result<&Bytes, ResponseBodyError> {
        self.parts
            .body
            .as_bytes()
            .ok_or(ResponseBodyError::Streamed)
    }

    /// Whether this is [`HttpResponse::error`].
    pub fn is_network_error(&self) -> bool {
        self.parts.kind == Kind::NetworkError && self.parts.fault.is_none()
    }

    /// The fault of a [`HttpResponse::fault`] answer.
    ///
    /// ```
    /// use mocklib::{Fault, HttpResponse};
    ///
    /// assert_eq!(HttpResponse::fault(Fault::Garbage).injected_fault(), Some(Fault::Garbage));
    /// assert_eq!(HttpResponse::error().injected_fault(), None);
    /// ```
    pub fn injected_fault(&self) -> Option<Fault> {
        self.parts.fault
    }

    /// The call that made this network error, for messages.
    pub(crate) fn network_error_origin(&self) -> &'static str {
        self.parts
            .fault
            .map_or("HttpResponse::error()", Fault::constructor)
    }

    pub(crate) fn kind(&self) -> Kind {
        self.parts.kind
    }

    /// The finished `http::Response`: default headers filled in, no body on
    /// statuses that cannot have one, a status text other than the status's
    /// own reason phrase in [`StatusText`] (read either with
    /// [`StatusText::of`]); a [`Fault::MalformedChunk`] answer has the
    /// `Fault` in its extensions and a body that fails. `Err` carries a
    /// mistake made while building.
    pub fn into_http(self) -> Result<http::Response<Body>, String> {
        let ResponseParts {
            status,
            status_text,
            mut headers,
            mut body,
            default_content_type,
            sets_content_length,
            build_error,
            fault,
            truncate_after,
            dribble,
            extensions,
            ..
        } = *self.parts;
        if let Some(error) = build_error {
            return Err(error);
        }
        if matches!(status.as_u16(), 101 | 103 | 204 | 205 | 304) {
            body = Body::empty();
            headers.remove(header::CONTENT_LENGTH);
        } else {
            if let Some(content_type) = default_content_type {
                headers.entry(header::CONTENT_TYPE).or_insert(content_type);
            }
            // The length of the whole body, also when only part of it is sent.
            let promised = sets_content_length || truncate_after.is_some();
            if let Some(bytes) = body.as_bytes().filter(|_| promised) {
                headers
                    .entry(header::CONTENT_LENGTH)
                    .or_insert_with(|| content_length(bytes.len()));
            }
            if truncate_after.is_some() || dribble.is_some() {
                let Some(bytes) = body.as_bytes().cloned() else {
                    return Err(
                        "truncate_after and dribble need a buffered body, not a stream \
                                (end a stream early with an Err in HttpResponse::try_stream, \
                                pace it with HttpResponse::chunks)"
                            .to_owned(),
                    );
                };
                body = crate::message::fault::faulty_body(bytes, truncate_after, dribble);
            }
        }
        if fault == Some(Fault::MalformedChunk) {
            body = crate::message::fault::malformed_chunk_body();
            // The listener writes this head itself, chunked; elsewhere there
            // are no chunks, only a body that fails.
            headers.remove(header::CONTENT_LENGTH);
        }
        let mut response = assemble(status, status_text, headers, body, fault);
        if !extensions.is_empty() {
            response.extensions_mut().extend(extensions);
        }
        Ok(response)
    }
}

/// The `http::Response` of finished parts.
#[inline] // built where it is returned: a response is a memcpy-sized move
fn assemble(
    status: StatusCode,
    status_text: Option<String>,
    headers: HeaderMap,
    body: Body,
    fault: Option<Fault>,
) -> http::Response<Body> {
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    // Most responses keep their reason phrase: no extension to allocate.
    if let Some(text) = status_text.filter(|text| Some(text.as_str()) != status.canonical_reason())
    {
        response.extensions_mut().insert(StatusText(text));
    }
    if let Some(fault) = fault {
        response.extensions_mut().insert(fault);
    }
    response
}

/// A `Content-Length` value in one allocation (`HeaderValue::from(usize)`
/// takes two; this is once per mocked response).
fn content_length(length: usize) -> HeaderValue {
    if let Some(digits) = static_digits(length) {
        if let Ok(value) = HeaderValue::from_maybe_shared(Bytes::from_static(digits)) {
            return value;
        }
    }
    let mut digits = itoa::Buffer::new();
    HeaderValue::from_maybe_shared(Bytes::copy_from_slice(digits.format(length).as_bytes()))
        .unwrap_or_else(|_| HeaderValue::from(length))
}

/// Lengths below this are written from [`DIGITS`].
const STATIC_LENGTHS: usize = 10_000;

/// "0", "1", … "9999" one after another (38,890 bytes): the length of a
/// typical mocked body is a slice of it, not an allocation per response.
static DIGITS: [u8; 38_890] = write_digits();

const fn write_digits() -> [u8; 38_890] {
    let mut out = [0u8; 38_890];
    let (mut number, mut at) = (0, 0);
    while number < STATIC_LENGTHS {
        let width = digits_in(number);
        let (mut rest, mut place) = (number, width);
        while place > 0 {
            place -= 1;
            out[at + place] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        at += width;
        number += 1;
    }
    out
}

const fn digits_in(number: usize) -> usize {
    match number {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        _ => 4,
    }
}

/// `length` written in decimal, from [`DIGITS`].
fn static_digits(length: usize) -> Option<&'static [u8]> {
    let start = match length {
        0..=9 => length,
        10..=99 => 10 + (length - 10) * 2,
        100..=999 => 190 + (length - 100) * 3,
        1000..STATIC_LENGTHS => 2890 + (length - 1000) * 4,
        _ => return None,
    };
    DIGITS.get(start..start + digits_in(length))
}

impl<B: Into<Bytes>> From<http::Response<B>> for HttpResponse {
    fn from(response: http::Response<B>) -> Self {
        Self::from_body(response.map(|body| Body::from(body.into())))
    }
}

impl HttpResponse {
    /// A response with `response`'s status, headers, status text and body.
    pub(crate) fn from_body(response: http::Response<Body>) -> Self {
        let (parts, body) = response.into_parts();
        let mut converted = Self::with_body(body, None);
        converted.parts.status = parts.status;
        converted.parts.headers = parts.headers;
        converted.parts.status_text = parts.extensions.get::<StatusText>().map(|t| t.0.clone());
        converted
    }
}

/// Performs the request as it is, skipping the remaining handlers
/// (MSW: [`passthrough()`](https://mswjs.io/docs/api/passthrough)).
///
/// ```
/// use mocklib::{http, passthrough, HttpResponse};
///
/// let handler = http::get("/resource", |args| {
///     if args.request.header("x-use-real-api").is_some() {
///         return passthrough();
///     }
///     HttpResponse::text("mocked")
/// });
/// # let _ = handler;
/// ```
pub fn passthrough() -> HttpResponse {
    HttpResponse::passthrough()
}

fn multipart_boundary() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("mocklib-boundary-{n:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_lengths_are_written_in_decimal() {
        for length in (0..12_000).chain([99_999, 1 << 40]) {
            assert_eq!(
                content_length(length),
                length.to_string().as_str(),
                "{length}"
            );
        }
    }

    #[test]
    fn json_sets_type_and_length_unless_given() {
        let response = HttpResponse::json(&[1, 2]).into_http().unwrap();
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["content-length"], "5");
        let response = HttpResponse::json(&[1])
            .header("Content-Type", "application/vnd.api+json")
            .into_http()
            .unwrap();
        assert_eq!(response.headers().get_all("content-type").iter().count(), 1);
        assert_eq!(
            response.headers()["content-type"],
            "application/vnd.api+json"
        );
    }

    #[test]
    fn an_explicit_content_type_replaces_the_form_data_default() {
        let form = FormData::new().text("a", "1");
        let response = HttpResponse::form_data(&form)
            .header("content-type", "multipart/mixed; boundary=x")
            .into_http()
            .unwrap();
        let types: Vec<_> = response.headers().get_all("content-type").iter().collect();
        assert_eq!(types, ["multipart/mixed; boundary=x"]);
    }

    #[test]
    fn the_handle_is_one_pointer() {
        assert_eq!(
            std::mem::size_of::<HttpResponse>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn status_text_defaults_to_reason_phrase() {
        let response = HttpResponse::empty().status(404).into_http().unwrap();
        assert_eq!(StatusText::of(&response), "Not Found");
        assert_eq!(response.extensions().get::<StatusText>(), None);
        let response = HttpResponse::empty()
            .status(418)
            .status_text("Teapot!")
            .into_http()
            .unwrap();
        assert_eq!(
            response.extensions().get::<StatusText>().unwrap().0,
            "Teapot!"
        );
    }

    #[test]
    fn null_body_statuses_drop_the_body() {
        for status in [204, 205, 304] {
            let response = HttpResponse::text("x").status(status).into_http().unwrap();
            assert!(response.body().as_bytes().unwrap().is_empty());
            assert!(response.headers().get("content-length").is_none());
        }
    }

    #[test]
    fn cookies_stay_separate() {
        let response = HttpResponse::empty()
            .cookie("a", "1")
            .cookie("b", "x y")
            .into_http()
            .unwrap();
        let cookies: Vec<_> = response.headers().get_all("set-cookie").iter().collect();
        assert_eq!(cookies, ["a=1", "b=x%20y"]);
    }

    #[test]
    fn mistakes_are_errors_not_panics() {
        assert!(
            HttpResponse::empty()
                .status(1000)
                .into_http()
                .unwrap_err()
                .contains("1000")
        );
        assert!(
            HttpResponse::empty()
                .header("bad name", "x")
                .into_http()
                .is_err()
        );
        let mut map = std::collections::HashMap::new();
        map.insert(vec![1], 1);
        assert!(
            HttpResponse::json(&map)
                .into_http()
                .unwrap_err()
                .contains("serialize")
        );
    }
}
