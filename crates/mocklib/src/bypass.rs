//! `bypass()`: perform the intercepted request for real, skipping every
//! handler, and use (or alter) the real response.
//!
//! This is the spec's "perform it as a proxy and alter the original response":
//!
//! ```no_run
//! use mocklib::{bypass, http, HttpResponse};
//!
//! http::get("https://api.example.com/user", |args| async move {
//!     let real = bypass(&args.request).await?;
//!     let mut user: serde_json::Value = serde_json::from_slice(real.body())?;
//!     user["name"] = "Patched".into();
//!     Ok::<_, Box<dyn std::error::Error + Send + Sync>>(HttpResponse::json(&user).status(real.status_code().as_u16()))
//! });
//! ```
//!
//! The request goes out through the server's upstream client (certificate
//! verification on), never through the handlers again, so a handler may
//! bypass its own predicate without looping. The response is buffered so it
//! can be read and changed.

use crate::request::PerformError;
use crate::request::{Request, UnsendableRequest, abbreviate};
use crate::response::HttpResponse;

/// Why [`bypass`] could not get the real response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BypassError {
    /// This front door has no network to perform requests with (the
    /// server is not listening, or the `net` feature is off), or the request
    /// was built by hand rather than handed to a resolver: pass the
    /// resolver's `args.request`.
    #[error(
        "bypass() cannot perform {method} {url}: pass the request a resolver received, from a \
         listening mocklib server with the `net` feature or a started browser worker"
    )]
    Unavailable {
        /// The request method.
        method: String,
        /// The request URL.
        url: String,
    },
    /// The request cannot be sent on as it is, so nothing was sent: its URL
    /// is longer than a URI may be once percent-encoded, for example. A
    /// resolver that returns this error answers with a 500 saying so.
    #[error("bypass() cannot send {method} {} on: {reason}", abbreviate(.url))]
    Unsendable {
        /// The request method.
        method: String,
        /// The request URL.
        url: String,
        /// Why it cannot be sent.
        reason: UnsendableRequest,
    },
    /// The real request failed (connection, TLS, …).
    #[error("bypass() of {method} {url} failed: {message}")]
    Failed {
        /// The request method.
        method: String,
        /// The request URL.
        url: String,
        /// What went wrong.
        message: String,
    },
}

/// Performs `request` for real, skipping all handlers, and returns the real
/// response (buffered) for the resolver to use or alter.
pub async fn bypass(request: &Request) -> Result<HttpResponse, BypassError> {
    let method = request.method().to_string();
    let url = request.url().to_string();
    let Some(performer) = request.performer() else {
        return Err(BypassError::Unavailable { method, url });
    };
    performer
        .perform(request)
        .await
        .map_err(|error| match error {
            PerformError::Unsendable(reason) => BypassError::Unsendable {
                method,
                url,
                reason,
            },
            PerformError::Failed(message) => BypassError::Failed {
                method,
                url,
                message,
            },
        })
}
