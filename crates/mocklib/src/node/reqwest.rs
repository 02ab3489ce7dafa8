//! The `reqwest-middleware` front door.
//!
//! Feature `reqwest` serves reqwest 0.13 with reqwest-middleware 0.5;
//! feature `reqwest-0-12` serves reqwest 0.12 with reqwest-middleware 0.4.
//! With both on, [`MockMiddleware`] implements both middleware traits.
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
//! network error ([`HttpResponse::error`](crate::HttpResponse::error), a
//! [`HttpResponse::fault`](crate::HttpResponse::fault) that replaces the
//! answer, or the "error" unhandled strategy) is
//! `reqwest_middleware::Error::Middleware` wrapping a
//! [`NetworkError`](crate::front_door::NetworkError) — a request error, not a status. A
//! body fault fails reading the body, as through a socket
//! (`reqwest::Error::is_decode`; see [`Fault`](crate::Fault)).

use bytes::Bytes;
use http::Extensions;
use http_body_util::BodyExt;

// Only mocklib's public surface: a front door outside the crate is written
// the same way (see `crate::front_door`).
use super::Server;
use crate::front_door::{FrontDoor, Outcome};
use crate::message::request::Request;

impl Server {
    /// A `reqwest_middleware::Middleware` answering from this server's
    /// handlers (reqwest-middleware 0.5 with feature `reqwest`, 0.4 with
    /// feature `reqwest-0-12`).
    pub fn middleware(&self) -> MockMiddleware {
        MockMiddleware {
            door: self.front_door(),
        }
    }
}

/// Answers a reqwest client's requests from the handlers; made by
/// [`Server::middleware`].
#[derive(Clone, Debug)]
pub struct MockMiddleware {
    door: FrontDoor,
}

/// The middleware and its helpers for one major version of reqwest: the
/// two majors have the same API but distinct types, so the code is written
/// once over the crate paths.
macro_rules! reqwest_front_door {
    (
        $reqwest:ident,
        $middleware:ident,
        $from_error:ident,
        $version:literal,
        $crate_name:literal,
        $feature:literal
    ) => {
        #[async_trait::async_trait]
        impl $middleware::Middleware for MockMiddleware {
            async fn handle(
                &self,
                mut request: $reqwest::Request,
                extensions: &mut Extensions,
                next: $middleware::Next<'_>,
            ) -> $middleware::Result<$reqwest::Response> {
                if !self.door.is_listening() {
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
                match self.door.resolve(intercepted, None).await {
                    Outcome::Mocked(response) => mocked(response, request.url()),
                    Outcome::NetworkError(error) => Err($middleware::Error::Middleware(
                        anyhow::Error::new(error),
                    )),
                    #[cfg(feature = "ws")]
                    Outcome::WebSocket(upgrade) => {
                        let error = crate::front_door::NetworkError::cannot_upgrade(&upgrade, "the reqwest middleware");
                        Err($middleware::Error::Middleware(anyhow::Error::new(error)))
                    }
                    Outcome::Passthrough(passthrough) => {
                        let response = next.run(request, extensions).await?;
                        let (status, version) = (response.status(), response.version());
                        let response = match passthrough.capture(status, version, response.headers()) {
                            Some(capture) => tapped(response, capture)?,
                            None => response,
                        };
                        passthrough.report_response(response.status(), response.headers());
                        Ok(response)
                    }
                }
            }
        }

        impl crate::front_door::NetworkError {
            #[doc = concat!("The mocklib network error behind a `reqwest-middleware` ", $version, " error, if that")]
            /// is what made the request fail.
            ///
            /// ```
            #[doc = concat!("# fn check(error: &", $crate_name, "::Error) {")]
            #[doc = concat!("if let Some(network_error) = mocklib::front_door::NetworkError::", stringify!($from_error), "(error) {")]
            ///     println!("mocked network failure: {network_error}");
            /// }
            /// # }
            /// ```
            pub fn $from_error(error: &$middleware::Error) -> Option<&Self> {
                match error {
                    $middleware::Error::Middleware(error) => error.downcast_ref(),
                    $middleware::Error::Reqwest(_) => None,
                }
            }
        }

        /// A mocked response as reqwest's, reporting the request's URL as
        /// `Response::url()`.
        fn mocked(
            response: http::Response<crate::Body>,
            url: &url::Url,
        ) -> $middleware::Result<$reqwest::Response> {
            let (mut parts, body) = response.into_parts();
            with_url(&mut parts, url)?;
            // A buffered body is handed over whole (its finalize cleanup runs
            // now); a streamed one is pulled by the client as it reads, and
            // dropped with the response when the client stops.
            let body = match body.as_bytes() {
                Some(bytes) => $reqwest::Body::from(bytes.clone()),
                None => $reqwest::Body::wrap(body),
            };
            Ok($reqwest::Response::from(http::Response::from_parts(
                parts, body,
            )))
        }

        /// A real response whose body is recorded as the client reads it.
        fn tapped(
            response: $reqwest::Response,
            capture: crate::message::exchange::Capture,
        ) -> $middleware::Result<$reqwest::Response> {
            let url = response.url().clone();
            let (mut parts, body) = http::Response::<$reqwest::Body>::from(response).into_parts();
            with_url(&mut parts, &url)?;
            let body = $reqwest::Body::wrap(crate::message::exchange::Tap::new(body, Some(capture)));
            Ok($reqwest::Response::from(http::Response::from_parts(
                parts, body,
            )))
        }

        /// Makes a response built from `parts` report `url` as its
        /// `Response::url()` (reqwest keeps it in a private extension).
        fn with_url(
            parts: &mut http::response::Parts,
            url: &url::Url,
        ) -> $middleware::Result<()> {
            use $reqwest::ResponseBuilderExt;
            let carrier = http::Response::builder()
                .url(url.clone())
                .body(())
                .map_err(anyhow::Error::new)?;
            parts.extensions.extend(carrier.into_parts().0.extensions);
            Ok(())
        }

        /// Reads the request body into memory once, leaving an equal body in
        /// place for passthrough.
        async fn buffer_body(request: &mut $reqwest::Request) -> $middleware::Result<Bytes> {
            let Some(body) = request.body_mut().take() else {
                return Ok(Bytes::new());
            };
            let bytes = match body.as_bytes() {
                Some(bytes) => Bytes::copy_from_slice(bytes),
                None => body
                    .collect()
                    .await
                    .map_err($middleware::Error::Reqwest)?
                    .to_bytes(),
            };
            *request.body_mut() = Some($reqwest::Body::from(bytes.clone()));
            Ok(bytes)
        }
    };
}

#[cfg(feature = "reqwest")]
mod v0_13 {
    use super::*;
    reqwest_front_door!(
        reqwest,
        reqwest_middleware,
        from_middleware_error,
        "0.5",
        "reqwest_middleware",
        "reqwest"
    );
}

#[cfg(feature = "reqwest-0-12")]
mod v0_12 {
    use super::*;
    reqwest_front_door!(
        reqwest012,
        reqwest_middleware04,
        from_middleware_0_4_error,
        "0.4",
        "reqwest_middleware04",
        "reqwest-0-12"
    );
}
