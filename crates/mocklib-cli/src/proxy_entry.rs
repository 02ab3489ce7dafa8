//! The entries of handler files that perform the real request:
//! `passthrough: true` sends it on as it is (`mocklib::passthrough()` in
//! Rust).
//!
//! ```yaml
//! - method: GET
//!   path: https://api.example.com/health   # through the proxy
//!   passthrough: true                       # the real server answers
//!   match: { headers: { x-use-real-api: "1" } }   # optional, as once and times
//! ```
//!
//! The request must be one the real server can get: an absolute URL
//! reached through the proxy (`MOCKLIB_PROXY_URL`), not a path on the base
//! URL, which is `mocklib serve` itself.

use mocklib::Handler;

use crate::handler_file::{Conditions, Expected, http_handler, method_and_path};

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
        crate::handler_file::finish(handler, self.conditions, self.once)
    }
}
