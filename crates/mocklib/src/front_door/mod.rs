//! The public surface a front door is built on: hand the engine a request in
//! the right scope, and turn its [`Outcome`] into what your client expects.
//!
//! mocklib's own front doors (the tower layer, the reqwest middleware, the
//! loopback listener, the browser) are written on it, and a crate outside
//! mocklib can write one the same way — for a client mocklib does not know
//! (a `ureq` agent's middleware, a hyper-util connector, an SDK's HTTP
//! trait). A front door:
//!
//! 1. holds a [`FrontDoor`] ([`Server::front_door`](crate::node::Server::front_door));
//! 2. takes the caller's scope with [`FrontDoor::scope`] *in the caller's
//!    task*, before any `await` (a boundary is task-local: a spawned task
//!    or a connection task does not see it);
//! 3. turns its native request into a [`Request`] (the body buffered once)
//!    and calls [`CallerScope::resolve`];
//! 4. answers from the [`Outcome`]: send [`Outcome::Mocked`]'s response,
//!    perform [`Outcome::Passthrough`]'s request for real (then
//!    [`Passthrough::report_response`], and when recording feed
//!    [`Passthrough::capture`] through a [`Tap`](crate::exchange::Tap)), or
//!    fail with [`Outcome::NetworkError`]. A front door that cannot carry a
//!    WebSocket answers an upgrade with [`NetworkError::cannot_upgrade`].
//!
//! ```
//! use mocklib::front_door::{FrontDoor, Outcome};
//! use mocklib::{http, HttpResponse, Request, node::setup_server};
//!
//! /// A front door for a client whose requests are (method, url) pairs.
//! async fn send(door: &FrontDoor, method: &str, url: &str) -> Result<String, String> {
//!     let scope = door.scope(); // in the caller's task, before awaiting
//!     let request = Request::new(method.parse().unwrap(), url.parse().unwrap());
//!     match scope.resolve(request, None).await {
//!         Outcome::Mocked(response) => {
//!             let body = response.into_body().collect().await.map_err(|e| e.to_string())?;
//!             Ok(String::from_utf8_lossy(&body).into_owned())
//!         }
//!         Outcome::Passthrough(passthrough) => {
//!             Err(format!("would perform {} for real", passthrough.request().url()))
//!         }
//!         Outcome::NetworkError(error) => Err(error.to_string()),
//!         _ => Err("this front door cannot carry a WebSocket".to_owned()),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
//! server.listen();
//! let door = server.front_door();
//! assert_eq!(send(&door, "GET", "https://api.example.com/user").await.as_deref(), Ok("John"));
//! # }
//! ```

pub(crate) mod setup_api;

use std::future::Future;
use std::sync::Arc;

use url::Url;

use crate::engine::Engine;
use crate::engine::list::Scope;
use crate::message::request::Request;
use crate::support::maybe_send::MaybeSend;

pub use crate::engine::{NetworkError, NetworkErrorKind, Outcome, Passthrough};

/// A server's (or worker's) way in for requests: what a front door holds.
/// Cheap to clone; made by [`Server::front_door`](crate::node::Server::front_door).
#[derive(Clone)]
pub struct FrontDoor {
    engine: Arc<Engine>,
}

/// The scope of the code that made a request (its innermost boundary, or
/// the server itself), taken by [`FrontDoor::scope`] where the request was
/// made; requests resolved with it see that scope's handlers wherever the
/// resolution runs.
#[derive(Clone)]
pub struct CallerScope {
    engine: Arc<Engine>,
    scope: Arc<Scope>,
}

impl FrontDoor {
    pub(crate) fn new(engine: Arc<Engine>) -> Self {
        FrontDoor { engine }
    }

    /// Whether the server is listening (between `listen` and `close`):
    /// when it is not, every request resolves to a passthrough, so a front
    /// door may pass requests on without buffering them.
    pub fn is_listening(&self) -> bool {
        self.engine.listen_options().is_some()
    }

    /// The calling code's scope, taken now. Call it in the task that made
    /// the request, before anything is awaited or spawned.
    pub fn scope(&self) -> CallerScope {
        CallerScope {
            engine: Arc::clone(&self.engine),
            scope: self.engine.current_scope(),
        }
    }

    /// Resolves `request` in the caller's scope, taken now (as
    /// `self.scope().resolve(..)`). `base_url` is the front door's own
    /// origin if it has one (relative predicates resolve against it), else
    /// [`ListenOptions`](crate::ListenOptions)'s.
    pub fn resolve(
        &self,
        request: Request,
        base_url: Option<Url>,
    ) -> impl Future<Output = Outcome> + MaybeSend + 'static + use<> {
        self.engine.handle(request, base_url.map(Arc::new))
    }
}

impl CallerScope {
    /// Resolves `request` in this scope: the handlers run inside it
    /// (their `use_handlers`, `once` state and journal are this scope's).
    pub fn resolve(
        &self,
        request: Request,
        base_url: Option<Url>,
    ) -> impl Future<Output = Outcome> + MaybeSend + 'static + use<> {
        self.engine
            .handle_in(Arc::clone(&self.scope), request, base_url.map(Arc::new))
    }
}

impl std::fmt::Debug for FrontDoor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontDoor").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for CallerScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerScope").finish_non_exhaustive()
    }
}
