//! A front door for `ureq` 3: a middleware that answers requests from a
//! mocklib server's handlers and performs the rest for real.
//!
//! ```
//! use mocklib::{http, HttpResponse, node::setup_server};
//! use mocklib_extension_example::ureq_door::MockMiddleware;
//!
//! let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
//! server.listen();
//! let agent: ureq::Agent = ureq::Agent::config_builder()
//!     .middleware(MockMiddleware::new(&server))
//!     .build()
//!     .into();
//! let body = agent.get("https://api.example.com/user").call()?.body_mut().read_to_string()?;
//! assert_eq!(body, "John");
//! # Ok::<(), ureq::Error>(())
//! ```

use std::io::{self, Read};

use bytes::Bytes;
use mocklib::Request;
use mocklib::front_door::{FrontDoor, Outcome, Passthrough};
use mocklib::node::Server;
use ureq::middleware::{Middleware, MiddlewareNext};
use ureq::{Body, SendBody};

/// Puts a server's handlers in front of a `ureq` agent.
#[derive(Debug, Clone)]
pub struct MockMiddleware {
    door: FrontDoor,
}

impl MockMiddleware {
    /// The middleware for `server`.
    pub fn new(server: &Server) -> Self {
        MockMiddleware {
            door: server.front_door(),
        }
    }
}

impl Middleware for MockMiddleware {
    fn handle(
        &self,
        request: http::Request<SendBody>,
        next: MiddlewareNext,
    ) -> Result<http::Response<Body>, ureq::Error> {
        if !self.door.is_listening() {
            return next.handle(request);
        }
        // ureq is blocking: the caller's thread is the request's scope.
        let scope = self.door.scope();
        let (parts, body) = request.into_parts();
        let mut bytes = Vec::new();
        body.into_reader().read_to_end(&mut bytes)?;
        let bytes = Bytes::from(bytes);
        let intercepted = Request::from_http(
            http::Request::from_parts(parts.clone(), bytes.clone()),
            "http",
        )
        .map_err(|error| ureq::Error::Io(io::Error::new(io::ErrorKind::InvalidInput, error)))?;
        match futures_executor::block_on(scope.resolve(intercepted, None)) {
            Outcome::Mocked(response) => {
                let (parts, body) = response.into_parts();
                // A streamed body is read whole: ureq's bodies are readers.
                let bytes = futures_executor::block_on(body.collect()).map_err(io::Error::other)?;
                Ok(http::Response::from_parts(
                    parts,
                    Body::builder().data(bytes.to_vec()),
                ))
            }
            Outcome::Passthrough(passthrough) => {
                let outgoing = http::Request::from_parts(
                    parts,
                    SendBody::from_owned_reader(io::Cursor::new(bytes)),
                );
                perform(passthrough, next.handle(outgoing)?)
            }
            Outcome::NetworkError(error) => Err(ureq::Error::Io(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                error,
            ))),
            // A WebSocket a handler accepted: a ureq request cannot carry it.
            _ => Err(ureq::Error::Io(io::Error::new(
                io::ErrorKind::Unsupported,
                "a WebSocket handler matched: connect through mocklib's listener instead",
            ))),
        }
    }
}

/// A real response: reported to `response:bypass` listeners, and recorded
/// whole when a recorder is set.
fn perform(
    passthrough: Passthrough,
    response: http::Response<Body>,
) -> Result<http::Response<Body>, ureq::Error> {
    let capture = passthrough.capture(response.status(), response.version(), response.headers());
    passthrough.report_response(response.status(), response.headers());
    let Some(mut capture) = capture else {
        return Ok(response);
    };
    let (parts, mut body) = response.into_parts();
    let bytes = body.read_to_vec()?;
    capture.data(&bytes);
    capture.finish();
    Ok(http::Response::from_parts(
        parts,
        Body::builder().data(bytes),
    ))
}
