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

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http::{HeaderMap, Method, Version};
use url::Url;

use crate::engine::Performer;
use crate::form_data::{FormData, FormError};

/// An intercepted HTTP request with its body already buffered.
#[derive(Clone)]
pub struct Request {
    inner: Arc<RequestParts>,
}

struct RequestParts {
    method: Method,
    url: Url,
    version: Version,
    headers: HeaderMap,
    body: Bytes,
    /// How `bypass()` performs this request; set by the engine.
    performer: OnceLock<Arc<dyn Performer>>,
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
pub struct InvalidRequest {
    uri: String,
    reason: String,
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
                url,
                version: Version::HTTP_11,
                headers,
                body,
                performer: OnceLock::new(),
            }),
        }
    }

    /// This request as sent with HTTP version `version` (front doors set the
    /// version the client used; [`Request::from_parts`] assumes HTTP/1.1).
    pub fn with_version(self, version: Version) -> Self {
        match Arc::try_unwrap(self.inner) {
            Ok(mut parts) => {
                parts.version = version;
                Request {
                    inner: Arc::new(parts),
                }
            }
            Err(shared) => Request {
                inner: Arc::new(RequestParts {
                    method: shared.method.clone(),
                    url: shared.url.clone(),
                    version,
                    headers: shared.headers.clone(),
                    body: shared.body.clone(),
                    performer: OnceLock::new(),
                }),
            },
        }
    }

    /// Converts an `http::Request` with a buffered body.
    ///
    /// The URI must be absolute; for an origin-form URI (`/path`) the scheme
    /// `default_scheme` and the `Host` header complete it.
    pub fn from_http(
        request: http::Request<Bytes>,
        default_scheme: &str,
    ) -> Result<Self, InvalidRequest> {
        let (parts, body) = request.into_parts();
        let url = absolute_url(&parts.uri, &parts.headers, default_scheme)?;
        Ok(Request {
            inner: Arc::new(RequestParts {
                method: parts.method,
                url,
                version: parts.version,
                headers: parts.headers,
                body,
                performer: OnceLock::new(),
            }),
        })
    }

    /// An `http::Request` equal to this one (for performing it for real).
    pub fn to_http(&self) -> http::Request<Bytes> {
        let mut request = http::Request::new(self.inner.body.clone());
        *request.method_mut() = self.inner.method.clone();
        *request.uri_mut() = self
            .inner
            .url
            .as_str()
            .parse()
            .expect("a url::Url is always a valid URI");
        *request.headers_mut() = self.inner.headers.clone();
        request
    }

    pub(crate) fn set_performer(&self, performer: Arc<dyn Performer>) {
        // The first engine to see the request decides; a request is resolved once.
        let _ = self.inner.performer.set(performer);
    }

    pub(crate) fn performer(&self) -> Option<&Arc<dyn Performer>> {
        self.inner.performer.get()
    }

    /// The request method.
    pub fn method(&self) -> &Method {
        &self.inner.method
    }

    /// The absolute request URL, query included.
    pub fn url(&self) -> &Url {
        &self.inner.url
    }

    /// The HTTP version the client used.
    pub fn version(&self) -> Version {
        self.inner.version
    }

    /// All request headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.inner.headers
    }

    /// The first value of header `name` as text; `None` when absent or not
    /// visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.inner.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body bytes (cheap to clone).
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
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, BodyError> {
        Ok(serde_json::from_slice(&self.inner.body)?)
    }

    /// The body parsed as a form, according to its `Content-Type`
    /// (`application/x-www-form-urlencoded` or `multipart/form-data`).
    pub fn form(&self) -> Result<FormData, BodyError> {
        let content_type = self.header("content-type").unwrap_or_default();
        Ok(FormData::parse(content_type, &self.inner.body)?)
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.inner.method)
            .field("url", &self.inner.url.as_str())
            .field("headers", &self.inner.headers)
            .field("body_len", &self.inner.body.len())
            .finish()
    }
}

fn absolute_url(
    uri: &http::Uri,
    headers: &HeaderMap,
    default_scheme: &str,
) -> Result<Url, InvalidRequest> {
    let invalid = |reason: &str| InvalidRequest {
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

#[cfg(test)]
mod tests {
    use super::*;

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
