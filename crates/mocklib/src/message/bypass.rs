//! `bypass()`: perform the intercepted request for real, skipping every
//! handler, and hand the real response to the resolver.

use crate::message::request::PerformError;
use crate::message::request::{Request, UnsendableRequestError, abbreviate};
use crate::message::response::HttpResponse;

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
        reason: UnsendableRequestError,
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
/// response (buffered) for the resolver to use or alter (MSW:
/// [`bypass()`](https://mswjs.io/docs/api/bypass)): the request is performed
/// as a proxy would, and the original response altered.
///
/// The request goes out through the server's upstream client (certificate
/// verification on), never through the handlers again, so a handler may
/// bypass its own predicate without looping. It needs a listening server
/// with the `net` feature (or a started browser worker) and the request the
/// resolver received.
///
/// ```
/// use mocklib::{bypass, http, HttpResponse, node::setup_server};
/// use serde_json::{json, Value};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // The real API, here another mocklib server on loopback.
/// let real_api = setup_server([http::get("/user", |_| HttpResponse::json(&json!({ "name": "John" })))]);
/// real_api.listen();
///
/// let server = setup_server([http::get("/user", |args| async move {
///     let real = bypass(&args.request).await?;
///     let mut user: Value = real.json_body()?;
///     user["name"] = "Patched".into();
///     Ok::<_, Box<dyn std::error::Error + Send + Sync>>(HttpResponse::json(&user))
/// })]);
/// server.listen();
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(server.middleware())
///     .build();
/// let user: Value = client.get(real_api.url().join("/user")?).send().await?.json().await?;
/// assert_eq!(user, json!({ "name": "Patched" }));
/// # Ok(())
/// # }
/// ```
pub async fn bypass(request: &Request) -> Result<HttpResponse, BypassError> {
    perform(request, false).await
}

/// [`bypass`] with the real body streaming as it arrives (`sse`'s
/// `server.connect()`).
pub(crate) async fn bypass_streaming(request: &Request) -> Result<HttpResponse, BypassError> {
    perform(request, true).await
}

async fn perform(request: &Request, streaming: bool) -> Result<HttpResponse, BypassError> {
    let method = request.method().to_string();
    let url = request.url().to_string();
    let Some(performer) = request.performer() else {
        return Err(BypassError::Unavailable { method, url });
    };
    let performed = if streaming {
        performer.perform_streaming(request)
    } else {
        performer.perform(request)
    };
    performed.await.map_err(|error| match error {
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
