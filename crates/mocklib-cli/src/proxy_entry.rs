//! The entries of handler files that perform the real request:
//! `passthrough: true` sends it on as it is (`mocklib::passthrough()` in
//! Rust), `proxy:` performs it and alters the real answer
//! (`mocklib::bypass(&args.request)` in a resolver that changes the
//! response, with `mocklib::rest::merge_patch` for a JSON merge patch).
//!
//! ```yaml
//! - method: GET
//!   path: https://api.example.com/health   # through the proxy
//!   passthrough: true                       # the real server answers
//!   match: { headers: { x-use-real-api: "1" } }   # optional, as once and times
//! - method: GET
//!   path: https://api.example.com/users/:id
//!   proxy:
//!     status: 299                           # optional: in place of the real one
//!     headers: { x-mocked: "yes", etag: null }   # set; null removes
//!     json_patch: { plan: pro, secret: null }    # RFC 7396 on a JSON body
//! - path: https://api.example.com/motd
//!   proxy:
//!     body: "{{ response.body | upper }}"  # a template over the real answer
//! ```
//!
//! The request must be one the real server can get: an absolute URL
//! reached through the proxy (`MOCKLIB_PROXY_URL`), not a path on the base
//! URL, which is `mocklib serve` itself. A real request that fails gets a
//! `502` saying why; a real body that is not JSON, under `json_patch`, too.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use mocklib::{Handler, HttpResponse};

use crate::entry_parts::{Conditions, Expected, http_handler, method_and_path};
use crate::template::Templates;

/// A `passthrough` entry, as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PassthroughEntry {
    method: Option<String>,
    path: Option<String>,
    /// `true`: the request is performed as it is.
    passthrough: bool,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
}

impl PassthroughEntry {
    /// The entry's expected count, taken out before the handler is built.
    pub(crate) fn times(&mut self) -> Option<Expected> {
        self.times.take()
    }

    /// The handler: an HTTP handler answering `passthrough()`.
    pub(crate) fn into_handler(self) -> Result<Handler, String> {
        if !self.passthrough {
            return Err(
                "passthrough: only `true` (the request is performed as it is); leave the entry out otherwise"
                    .to_owned(),
            );
        }
        let (method, path) = method_and_path(self.method.as_deref(), self.path)?;
        let handler = http_handler(method, path, |_: mocklib::ResolverArgs| {
            mocklib::passthrough()
        })?;
        crate::entry_parts::finish(handler, self.conditions, self.once)
    }
}

/// A `proxy` entry, as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProxyEntry {
    method: Option<String>,
    path: Option<String>,
    /// How the real answer is altered.
    proxy: ProxyFields,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
}

/// A `proxy:` block: what changes in the real answer.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProxyFields {
    /// In place of the real status.
    status: Option<u16>,
    /// Headers set (a string) or removed (`null`).
    #[serde(default)]
    headers: BTreeMap<String, Option<String>>,
    /// A JSON merge patch (RFC 7396) applied to the real JSON body.
    json_patch: Option<serde_json::Value>,
    /// A template over the real answer, in place of its body.
    body: Option<String>,
}

/// The alterations, checked at load.
struct Alter {
    status: Option<http::StatusCode>,
    set: Vec<(HeaderName, HeaderValue)>,
    remove: Vec<HeaderName>,
    json_patch: Option<serde_json::Value>,
    body: Option<Templates>,
}

/// A `502` saying why the entry could not answer.
fn bad_gateway(why: &str) -> HttpResponse {
    HttpResponse::text(format!("mocklib serve: {why}\n")).status(502)
}

impl Alter {
    /// The real answer, altered; or a `502` saying why not.
    fn apply(&self, real: HttpResponse, args: &mocklib::ResolverArgs) -> HttpResponse {
        let status = real.status_code();
        let mut headers = real.headers().clone();
        let mut body = real.body().as_bytes().cloned().unwrap_or_default();
        if let Some(patch) = &self.json_patch {
            let mut json: serde_json::Value = match serde_json::from_slice(&body) {
                Ok(json) => json,
                Err(error) => {
                    return bad_gateway(&format!(
                        "proxy.json_patch: the real body is not JSON ({error})"
                    ));
                }
            };
            mocklib::rest::merge_patch(&mut json, patch);
            body = Bytes::from(serde_json::to_vec(&json).unwrap_or_default());
        }
        if let Some(templates) = &self.body {
            let params = args
                .params
                .iter()
                .map(|(k, v)| (k.to_owned(), v.as_str().into_owned()))
                .collect();
            let response_headers: BTreeMap<String, String> = headers
                .iter()
                .filter_map(|(name, value)| {
                    Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
                })
                .collect();
            let json: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
            let context = minijinja::context! {
                request => crate::template::request_value(&args.request, &args.cookies, params),
                response => minijinja::context! {
                    status => status.as_u16(),
                    headers => response_headers,
                    body => String::from_utf8_lossy(&body).into_owned(),
                    json => minijinja::Value::from(minijinja::value::Serde(&json)),
                },
            };
            match templates.render("proxy.body", &context) {
                Ok(text) => body = Bytes::from(text),
                Err(why) => return crate::template::failed(&why),
            }
        }
        // The body may have changed length: the server writes it anew.
        headers.remove(http::header::CONTENT_LENGTH);
        headers.remove(http::header::TRANSFER_ENCODING);
        for name in &self.remove {
            headers.remove(name);
        }
        for (name, value) in &self.set {
            headers.insert(name.clone(), value.clone());
        }
        let mut response = http::Response::new(body);
        *response.status_mut() = self.status.unwrap_or(status);
        *response.headers_mut() = headers;
        HttpResponse::from(response)
    }
}

impl ProxyFields {
    fn checked(self) -> Result<Alter, String> {
        let status = self
            .status
            .map(|status| {
                http::StatusCode::from_u16(status)
                    .map_err(|_| format!("proxy.status: invalid status {status}"))
            })
            .transpose()?;
        let (mut set, mut remove) = (Vec::new(), Vec::new());
        for (name, value) in self.headers {
            let header = HeaderName::try_from(name.as_str())
                .map_err(|_| format!("proxy.headers: invalid header name {name:?}"))?;
            match value {
                None => remove.push(header),
                Some(value) => {
                    let value = HeaderValue::try_from(value.as_str()).map_err(|_| {
                        format!("proxy.headers: invalid header {name:?}: {value:?}")
                    })?;
                    set.push((header, value));
                }
            }
        }
        if self.json_patch.is_some() && self.body.is_some() {
            return Err(
                "proxy: give json_patch or body, not both (body replaces what the patch would change)"
                    .to_owned(),
            );
        }
        let body = match self.body {
            None => None,
            Some(source) => {
                let mut templates = Templates::new();
                templates.add("proxy.body".to_owned(), source)?;
                Some(templates)
            }
        };
        Ok(Alter {
            status,
            set,
            remove,
            json_patch: self.json_patch,
            body,
        })
    }
}

impl ProxyEntry {
    /// The entry's expected count, taken out before the handler is built.
    pub(crate) fn times(&mut self) -> Option<Expected> {
        self.times.take()
    }

    /// The handler: an HTTP handler performing the request with
    /// `bypass()` and altering the real answer.
    pub(crate) fn into_handler(self) -> Result<Handler, String> {
        let alter = Arc::new(self.proxy.checked()?);
        let (method, path) = method_and_path(self.method.as_deref(), self.path)?;
        if path.starts_with('/') {
            return Err(format!(
                "path: a proxy entry performs the real request, so it needs an absolute URL (https://api.example.com{path}) reached through the proxy; {path} is on the base URL, mocklib serve itself"
            ));
        }
        let respond = move |args: mocklib::ResolverArgs| {
            let alter = Arc::clone(&alter);
            async move {
                match mocklib::bypass(&args.request).await {
                    Ok(real) => alter.apply(real, &args),
                    Err(error) => bad_gateway(&error.to_string()),
                }
            }
        };
        let handler = http_handler(method, path, respond)?;
        crate::entry_parts::finish(handler, self.conditions, self.once)
    }
}
