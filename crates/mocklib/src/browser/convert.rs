//! Between the browser's requests and responses and the engine's.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use js_sys::{Array, Uint8Array};
use url::Url;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::glue;
use crate::request::Request;
use crate::response::StatusText;

/// The fields of a browser request the engine needs.
pub(super) struct BrowserRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// The request's credentials mode: `omit`, `same-origin` or `include`.
    pub credentials: String,
}

impl BrowserRequest {
    /// Reads a `fetch` request, body included.
    pub(super) async fn read(request: &web_sys::Request) -> Result<Self, JsValue> {
        let method = request.method();
        let body = if method == "GET" || method == "HEAD" {
            Bytes::new()
        } else {
            let buffer = JsFuture::from(request.array_buffer()?).await?;
            Bytes::from(Uint8Array::new(&buffer).to_vec())
        };
        Ok(BrowserRequest {
            method,
            url: request.url(),
            headers: header_pairs(&request.headers()),
            body,
            credentials: credentials_name(request.credentials()).to_owned(),
        })
    }

    /// The engine's request. Cookies the browser would send (they never
    /// appear among a request's readable headers) are added from
    /// `document.cookie` when the credentials mode lets them go.
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
        let cookies = document_cookies(&url, &self.credentials)
            .and_then(|cookies| HeaderValue::from_str(&cookies).ok());
        if let Some(cookies) = cookies {
            headers.insert(header::COOKIE, cookies);
        }
        Ok(Request::from_parts(method, url, headers, self.body.clone()))
    }
}

fn credentials_name(credentials: web_sys::RequestCredentials) -> &'static str {
    match credentials {
        web_sys::RequestCredentials::Omit => "omit",
        web_sys::RequestCredentials::Include => "include",
        _ => "same-origin",
    }
}

/// A `Headers` object as name/value pairs.
pub(super) fn header_pairs(headers: &web_sys::Headers) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    if let Ok(Some(entries)) = js_sys::try_iter(headers) {
        for entry in entries.flatten() {
            let entry: Array = entry.unchecked_into();
            if let (Some(name), Some(value)) = (entry.get(0).as_string(), entry.get(1).as_string())
            {
                pairs.push((name, value));
            }
        }
    }
    pairs
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

fn document_cookies(url: &Url, credentials: &str) -> Option<String> {
    let location = web_sys::window()?.location().origin().ok()?;
    let same_origin = url.origin().ascii_serialization() == location;
    let sends = credentials == "include" || (credentials == "same-origin" && same_origin);
    if !sends {
        return None;
    }
    let cookies = document()?.cookie().ok()?;
    (!cookies.is_empty()).then_some(cookies)
}

/// A mocked response, ready for the browser.
pub(super) struct MockedResponse {
    pub status: u16,
    pub status_text: String,
    /// Without `Set-Cookie`: the browser ignores it on a constructed response.
    pub headers: Vec<(String, String)>,
    pub set_cookies: Vec<String>,
    pub body: Bytes,
}

impl MockedResponse {
    pub(super) fn new(response: http::Response<Bytes>) -> Self {
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
            body: Bytes::from(body.to_string()),
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

    pub(super) fn headers_object(&self) -> Result<web_sys::Headers, JsValue> {
        let headers = web_sys::Headers::new()?;
        for (name, value) in &self.headers {
            headers.append(name, value)?;
        }
        Ok(headers)
    }

    /// A `Response` whose `url` is `url` (reqwest's wasm backend needs it).
    pub(super) fn to_js(&self, url: &str, redirected: bool) -> Result<web_sys::Response, JsValue> {
        if !self.has_browser_status() {
            return Err(glue::type_error(&format!(
                "mocklib: a browser response cannot have status {} (allowed: 200-599)",
                self.status
            )));
        }
        let init = web_sys::ResponseInit::new();
        init.set_status(self.status);
        init.set_status_text(&self.status_text);
        init.set_headers(&self.headers_object()?.into());
        let response = if self.is_null_body() {
            web_sys::Response::new_with_opt_u8_array_and_init(None, &init)?
        } else {
            let body = Uint8Array::from(&self.body[..]);
            web_sys::Response::new_with_opt_buffer_source_and_init(Some(&body), &init)?
        };
        Ok(glue::set_response_url(&response, url, redirected))
    }
}
