//! Between the browser's requests and responses and the engine's.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use url::Url;
use wasm_bindgen::{JsCast, JsValue};

use super::glue;
use crate::message::body::Body;
use crate::message::request::Request;
use crate::message::response::StatusText;

/// The fields of a browser request the engine needs.
pub(super) struct BrowserRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// What the browser sends as `Cookie` (from `document.cookie`, by the
    /// credentials mode); empty when nothing. Scripts never see it among a
    /// request's headers.
    pub cookie: String,
    /// The page's URL, against which relative predicates match.
    pub page: String,
    /// What the browser loads for a document (a navigation or a static
    /// asset by its destination); with the URLs of [`is_common_asset`], an
    /// asset: unhandled, it goes to the network without the
    /// unhandled-request strategy's warning or error, as MSW's common
    /// assets do.
    pub loaded_by_document: bool,
}

impl BrowserRequest {
    /// A request as `describe` in `glue.js` packs it (one string crosses,
    /// not a string per field): lines method, URL, page URL, "1" when the
    /// document loads it, the number of headers, then each header's name
    /// and value, and all the rest is the cookie.
    pub(super) fn unpack(packed: &str, body: Bytes) -> Self {
        let mut rest = packed;
        let mut line = || {
            let (line, tail) = rest.split_once('\n').unwrap_or((rest, ""));
            rest = tail;
            line.to_owned()
        };
        let (method, url, page) = (line(), line(), line());
        let loaded_by_document = line() == "1";
        let count = line().parse().unwrap_or(0);
        let headers = (0..count).map(|_| (line(), line())).collect();
        BrowserRequest {
            method,
            url,
            headers,
            body,
            cookie: rest.to_owned(),
            page,
            loaded_by_document,
        }
    }

    /// Whether the method allows a body (`fetch` refuses one on GET and HEAD).
    pub(super) fn may_have_body(&self) -> bool {
        !matches!(self.method.as_str(), "GET" | "HEAD")
    }

    /// The engine's request, with the `Cookie` header the browser would send.
    pub(super) fn to_core(&self) -> Result<Request, String> {
        let method = Method::from_bytes(self.method.as_bytes())
            .map_err(|_| format!("invalid request method {:?}", self.method))?;
        let url = Url::parse(&self.url)
            .map_err(|error| format!("invalid URL {:?}: {error}", self.url))?;
        let mut headers = HeaderMap::with_capacity(self.headers.len() + 1);
        for (name, value) in &self.headers {
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) else {
                return Err(format!("invalid request header {name:?}"));
            };
            headers.append(name, value);
        }
        let cookie = (!self.cookie.is_empty())
            .then(|| HeaderValue::from_str(&self.cookie).ok())
            .flatten();
        if let Some(cookie) = cookie {
            headers.insert(header::COOKIE, cookie);
        }
        Ok(Request::from_parts(method, url, headers, self.body.clone()))
    }
}

/// `[name, value, name, value, ...]` as pairs.
pub(super) fn pairs(flat: Vec<String>) -> Vec<(String, String)> {
    let mut flat = flat.into_iter();
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    while let (Some(name), Some(value)) = (flat.next(), flat.next()) {
        pairs.push((name, value));
    }
    pairs
}

/// Whether `url` is one MSW counts as a common asset (its
/// `isCommonAssetRequest`): a file a page loads (a script, style, font,
/// image, media, document or archive, by its extension, which also covers
/// `fetch`es of such files) or a dev server's module.
pub(super) fn is_common_asset(url: &Url) -> bool {
    const EXTENSIONS: &[&str] = &[
        "css", "scss", "less", "js", "jsx", "mjs", "mjsx", "ts", "tsx", "mts", "mtsx", "html",
        "ttf", "otf", "woff", "woff2", "eot", "gif", "jpg", "jpeg", "png", "avif", "webp", "ico",
        "svg", "mp4", "webm", "ogg", "mov", "mp3", "wav", "flac", "aac", "pdf", "txt", "csv",
        "json", "xml", "md", "zip", "tar", "gz", "rar", "7z", "wasm",
    ];
    let path = url.path();
    url.scheme() == "file"
        || url
            .host_str()
            .is_some_and(|host| host.contains("fonts.googleapis.com"))
        || path.contains("node_modules")
        || path.contains("@vite")
        || path.rsplit_once('.').is_some_and(|(_, extension)| {
            EXTENSIONS
                .iter()
                .any(|known| extension.eq_ignore_ascii_case(known))
        })
}

/// A `Headers` object as name/value pairs.
pub(super) fn header_pairs(headers: &web_sys::Headers) -> Vec<(String, String)> {
    pairs(glue::flat_headers(headers))
}

/// Name/value pairs as a `HeaderMap`, skipping any the `http` crate refuses
/// (the browser already vetted them; the engine only reports these).
pub(super) fn header_map(pairs: &[(String, String)]) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(pairs.len());
    for (name, value) in pairs {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            map.append(name, value);
        }
    }
    map
}

fn document() -> Option<web_sys::HtmlDocument> {
    web_sys::window()?.document()?.dyn_into().ok()
}

/// A mocked response, ready for the browser.
pub(super) struct MockedResponse {
    pub status: u16,
    pub status_text: String,
    /// Without `Set-Cookie`: the browser ignores it on a constructed response.
    pub headers: Vec<(String, String)>,
    pub set_cookies: Vec<String>,
    pub body: MockedBody,
}

/// A mocked response's body: sent in one piece, or chunk by chunk as its
/// stream yields them.
pub(super) enum MockedBody {
    Full(Bytes),
    Stream(Body),
}

impl MockedBody {
    /// The bytes of a buffered body.
    pub(super) fn bytes(&self) -> Option<&[u8]> {
        match self {
            MockedBody::Full(bytes) => Some(bytes),
            MockedBody::Stream(_) => None,
        }
    }
}

impl MockedResponse {
    pub(super) fn new(response: http::Response<Body>) -> Self {
        let (parts, body) = response.into_parts();
        let status_text = parts
            .extensions
            .get::<StatusText>()
            .map(|text| text.0.clone())
            .or_else(|| parts.status.canonical_reason().map(str::to_owned))
            .unwrap_or_default();
        let mut headers = Vec::with_capacity(parts.headers.len());
        let mut set_cookies = Vec::new();
        for (name, value) in &parts.headers {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            if name == header::SET_COOKIE {
                set_cookies.push(value);
            } else {
                headers.push((name.as_str().to_owned(), value));
            }
        }
        let body = match body.as_bytes() {
            Some(bytes) => MockedBody::Full(bytes.clone()),
            None => MockedBody::Stream(body),
        };
        MockedResponse {
            status: parts.status.as_u16(),
            status_text,
            headers,
            set_cookies,
            body,
        }
    }

    /// A 500 for a resolver that panicked (which traps the module on wasm32).
    pub(super) fn handler_panicked(message: &str) -> Self {
        let body = serde_json::json!({ "name": "Panic", "message": message });
        MockedResponse {
            status: 500,
            status_text: "Request Handler Error".to_owned(),
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            set_cookies: Vec::new(),
            body: MockedBody::Full(Bytes::from(body.to_string())),
        }
    }

    /// The `Location` of a redirect response.
    pub(super) fn redirect_location(&self) -> Option<&str> {
        matches!(self.status, 301 | 302 | 303 | 307 | 308)
            .then(|| {
                self.headers
                    .iter()
                    .find(|(name, _)| name == "location")
                    .map(|(_, value)| value.as_str())
            })
            .flatten()
    }

    /// Whether `new Response()` accepts this status.
    pub(super) fn has_browser_status(&self) -> bool {
        (200..=599).contains(&self.status)
    }

    /// Statuses whose response may not carry a body.
    pub(super) fn is_null_body(&self) -> bool {
        matches!(self.status, 101 | 103 | 204 | 205 | 304)
    }

    /// Mocked cookies land in `document.cookie`, as a real response's would.
    pub(super) fn store_cookies(&self) {
        if self.set_cookies.is_empty() {
            return;
        }
        if let Some(document) = document() {
            for cookie in &self.set_cookies {
                let _ = document.set_cookie(cookie);
            }
        }
    }

    /// The headers as one string, `name\nvalue\n...` (a header value holds
    /// no line break): one string crosses to JavaScript, not one per name
    /// and value.
    pub(super) fn joined_headers(&self) -> String {
        let mut joined = String::new();
        for (name, value) in &self.headers {
            if !joined.is_empty() {
                joined.push('\n');
            }
            joined.push_str(name);
            joined.push('\n');
            joined.push_str(value);
        }
        joined
    }

    /// The body as the browser gets it: `None` for the statuses that may
    /// not carry one (a streamed body is dropped then, which runs its
    /// `finalize`).
    pub(super) fn take_body(&mut self) -> Option<MockedBody> {
        let body = std::mem::replace(&mut self.body, MockedBody::Full(Bytes::new()));
        (!self.is_null_body()).then_some(body)
    }

    /// A `Response` whose `url` is `url` (reqwest's wasm backend needs it).
    /// A streamed body becomes a `ReadableStream` fed by the Rust stream.
    pub(super) fn into_js(
        mut self,
        url: &str,
        redirected: bool,
    ) -> Result<web_sys::Response, JsValue> {
        if !self.has_browser_status() {
            return Err(glue::type_error(&format!(
                "mocklib: a browser response cannot have status {} (allowed: 200-599)",
                self.status
            )));
        }
        let body = self.take_body();
        let (status, status_text) = (self.status, &self.status_text);
        let headers = &self.joined_headers();
        Ok(match body {
            Some(MockedBody::Stream(body)) => {
                let (pull, cancel) = super::stream::readable_source(body);
                glue::streamed_response(
                    status,
                    status_text,
                    headers,
                    &pull,
                    &cancel,
                    url,
                    redirected,
                )
            }
            body => glue::mocked_response(
                status,
                status_text,
                headers,
                body.as_ref().and_then(MockedBody::bytes),
                url,
                redirected,
            ),
        })
    }
}
