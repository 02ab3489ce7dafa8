//! The `reqwest-middleware` front door.
//!
//! Put [`Server::middleware`] into a `reqwest_middleware::ClientBuilder` and
//! every request of that client goes through the handlers first; requests to
//! perform as they are continue down the middleware stack to the network.
//!
//! ```
//! use mocklib::{http, HttpResponse, node::setup_server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let body = client.get("https://api.example.com/user").send().await?.text().await?;
//! assert_eq!(body, "John");
//! # Ok(())
//! # }
//! ```
//!
//! The request's scope is the boundary the request future is polled in. A
//! network error ([`HttpResponse::error`](crate::HttpResponse::error) or the
//! "error" unhandled strategy) is `reqwest_middleware::Error::Middleware`
//! wrapping a [`NetworkError`](crate::NetworkError) — a request error, not a
//! status.

use bytes::Bytes;
use http::Extensions;
use http_body_util::BodyExt;
use reqwest::ResponseBuilderExt;
use reqwest_middleware::{Middleware, Next};

use super::Server;
use crate::engine::Outcome;
use crate::request::Request;

impl Server {
    /// A `reqwest_middleware::Middleware` answering from this server's handlers.
    pub fn middleware(&self) -> MockMiddleware {
        MockMiddleware {
            server: self.clone(),
        }
    }
}

/// Answers a reqwest client's requests from the handlers; made by
/// [`Server::middleware`].
#[derive(Clone, Debug)]
pub struct MockMiddleware {
    server: Server,
}

#[async_trait::async_trait]
impl Middleware for MockMiddleware {
    async fn handle(
        &self,
        mut request: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        if !self.server.is_listening() {
            return next.run(request, extensions).await;
        }
        let body = buffer_body(&mut request).await?;
        let intercepted = Request::from_parts(
            request.method().clone(),
            request.url().clone(),
            request.headers().clone(),
            body,
        )
        .with_version(request.version());
        match self.server.handle(intercepted, None).await {
            Outcome::Mocked(response) => {
                let (mut parts, body) = response.into_parts();
                // reqwest reports this URL as `Response::url()`.
                let carrier = http::Response::builder()
                    .url(request.url().clone())
                    .body(())
                    .map_err(anyhow::Error::new)?;
                parts.extensions.extend(carrier.into_parts().0.extensions);
                Ok(reqwest::Response::from(http::Response::from_parts(
                    parts, body,
                )))
            }
            Outcome::NetworkError(error) => Err(reqwest_middleware::Error::Middleware(
                anyhow::Error::new(error),
            )),
            Outcome::Passthrough(passthrough) => {
                let response = next.run(request, extensions).await?;
                passthrough.report_response(response.status(), response.headers());
                Ok(response)
            }
        }
    }
}

impl crate::NetworkError {
    /// The mocklib network error behind a `reqwest-middleware` error, if that
    /// is what made the request fail.
    ///
    /// ```
    /// # fn check(error: &reqwest_middleware::Error) {
    /// if let Some(network_error) = mocklib::NetworkError::from_middleware_error(error) {
    ///     println!("mocked network failure: {network_error}");
    /// }
    /// # }
    /// ```
    pub fn from_middleware_error(error: &reqwest_middleware::Error) -> Option<&Self> {
        match error {
            reqwest_middleware::Error::Middleware(error) => error.downcast_ref(),
            reqwest_middleware::Error::Reqwest(_) => None,
        }
    }
}

/// Reads the request body into memory once, leaving an equal body in place
/// for passthrough.
async fn buffer_body(request: &mut reqwest::Request) -> reqwest_middleware::Result<Bytes> {
    let Some(body) = request.body_mut().take() else {
        return Ok(Bytes::new());
    };
    let bytes = match body.as_bytes() {
        Some(bytes) => Bytes::copy_from_slice(bytes),
        None => body
            .collect()
            .await
            .map_err(reqwest_middleware::Error::Reqwest)?
            .to_bytes(),
    };
    *request.body_mut() = Some(reqwest::Body::from(bytes.clone()));
    Ok(bytes)
}
