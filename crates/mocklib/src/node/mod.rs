//! The native entry point: [`setup_server`] (spec: `setupServer` from
//! `mocklib/node`).
//!
//! A [`Server`] holds the handler list and answers requests that reach it
//! through a front door:
//!
//! - in-process: [`Server::layer`] / [`Server::service`] (a `tower` service,
//!   feature `tower`) and [`Server::middleware`] (`reqwest-middleware`,
//!   feature `reqwest`). They run in the caller's task, so a boundary applies
//!   to exactly the requests made inside it;
//! - your own: [`Server::handle`] resolves a [`Request`] into an [`Outcome`].
//!
//! Before [`Server::listen`] and after [`Server::close`] nothing is
//! intercepted: every request is performed as it is, without events.

#[cfg(feature = "reqwest")]
mod reqwest;
#[cfg(feature = "tower")]
mod tower;

use std::sync::Arc;

use url::Url;

use crate::boundary::{BoundaryCallback, Scoped};
use crate::engine::{Engine, ListenOptions, Outcome};
use crate::events::Events;
use crate::handler::Handler;
use crate::request::Request;

#[cfg(feature = "reqwest")]
pub use self::reqwest::MockMiddleware;
#[cfg(feature = "tower")]
pub use self::tower::{MockBody, MockLayer, MockService, NoUpstream};

/// Creates a server with `handlers` as its initial handlers
/// (spec: `setupServer(...handlers)`).
///
/// ```
/// use mocklib::{http, HttpResponse, node::setup_server};
///
/// let server = setup_server([
///     http::get("https://api.example.com/user", |_| HttpResponse::json(&serde_json::json!({ "name": "John" }))),
/// ]);
/// server.listen();
/// // ... run the code under test ...
/// server.close();
/// ```
#[doc(alias = "setupServer")]
pub fn setup_server(handlers: impl IntoIterator<Item = Handler>) -> Server {
    Server {
        engine: Engine::new(handlers.into_iter().collect()),
    }
}

/// A set of request handlers and the switch that makes them intercept.
///
/// Cloning is cheap and every clone is the same server.
#[derive(Clone)]
pub struct Server {
    engine: Arc<Engine>,
}

impl Server {
    /// Starts intercepting, warning about unhandled requests.
    pub fn listen(&self) {
        self.listen_with(ListenOptions::default());
    }

    /// Starts intercepting with `options`. Calling it again replaces the
    /// options; calling it after [`close`](Self::close) starts again.
    pub fn listen_with(&self, options: ListenOptions) {
        self.engine.listen(options);
    }

    /// Stops intercepting: requests are performed as they are and no events
    /// are emitted. Idempotent. The handler list is kept.
    pub fn close(&self) {
        self.engine.close();
    }

    /// Whether the server is intercepting.
    pub fn is_listening(&self) -> bool {
        self.engine.listen_options().is_some()
    }

    /// Prepends runtime handlers, ahead of every existing handler and in the
    /// order given (spec: `server.use(...handlers)`; `use` is a Rust keyword).
    /// Inside a boundary only that boundary's list changes.
    #[doc(alias = "use")]
    pub fn use_handlers(&self, handlers: impl IntoIterator<Item = Handler>) {
        self.engine
            .current_scope()
            .prepend(handlers.into_iter().collect());
    }

    /// Removes the runtime handlers; the initial handlers remain (spec:
    /// `resetHandlers()`). Inside a boundary, removes only the handlers added
    /// in that boundary.
    #[doc(alias = "resetHandlers")]
    pub fn reset_handlers(&self) {
        self.engine.current_scope().reset();
    }

    /// Replaces every handler: `next` becomes the initial list (spec:
    /// `resetHandlers(...next)`). Inside a boundary, only for that boundary.
    #[doc(alias = "resetHandlers")]
    pub fn reset_handlers_to(&self, next: impl IntoIterator<Item = Handler>) {
        self.engine
            .current_scope()
            .reset_to(next.into_iter().collect());
    }

    /// Re-arms every used `.once()` handler of the current scope (spec:
    /// `restoreHandlers()`).
    #[doc(alias = "restoreHandlers")]
    pub fn restore_handlers(&self) {
        self.engine.current_scope().restore();
    }

    /// The current scope's handlers, in lookup order (spec: `listHandlers()`).
    /// Each prints as a header such as `GET https://api.example.com/user`.
    #[doc(alias = "listHandlers")]
    pub fn list_handlers(&self) -> Vec<Handler> {
        self.engine
            .current_scope()
            .snapshot()
            .iter()
            .cloned()
            .collect()
    }

    /// Wraps `callback` so that each call runs it in a new boundary (spec:
    /// `server.boundary(callback)`).
    ///
    /// The returned function takes the callback's arguments (annotate their
    /// types) and returns its result in a [`Scoped`]: `.await` it when the
    /// callback is async, take [`Scoped::into_inner`] when it is not. Each
    /// call starts from the caller's current handler list, all of it counted
    /// as initial; changes made inside are not seen outside.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([http::get("/user", |_| HttpResponse::text("John"))]);
    /// let test = server.boundary({
    ///     let server = server.clone();
    ///     move |name: &'static str| {
    ///         let server = server.clone();
    ///         async move {
    ///             server.use_handlers([http::get("/user", move |_| HttpResponse::text(name))]);
    ///             server.list_handlers().len()
    ///         }
    ///     }
    /// });
    /// assert_eq!(test("Kate").await, 2);
    /// assert_eq!(server.list_handlers().len(), 1); // the override stayed inside
    /// # }
    /// ```
    ///
    /// See [`boundary`](crate::boundary) for what decides a request's scope and
    /// how to carry it into `tokio::spawn`.
    pub fn boundary<Args, F: BoundaryCallback<Args>>(&self, callback: F) -> F::Bounded {
        callback.bind(self.engine.boundary_factory())
    }

    /// Runs `future` in a new boundary: a shorthand for a one-off boundary
    /// call, handy when the body moves values it owns.
    ///
    /// ```
    /// # use mocklib::{http, HttpResponse, node::setup_server};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([]);
    /// let inner = server.clone();
    /// server.in_boundary(async move {
    ///     inner.use_handlers([http::get("/x", |_| HttpResponse::empty())]);
    /// }).await;
    /// assert!(server.list_handlers().is_empty());
    /// # }
    /// ```
    pub fn in_boundary<F: std::future::Future>(&self, future: F) -> Scoped<F> {
        Scoped::new((self.engine.boundary_factory().0)(), future)
    }

    /// Life-cycle events: subscribe with [`Events::on`].
    pub fn events(&self) -> &Events {
        self.engine.events()
    }

    /// Resolves a request in the caller's current scope: the building block
    /// of a front door of your own. `base_url` is your front door's own
    /// origin, if it has one (relative predicates match against it).
    pub fn handle(
        &self,
        request: Request,
        base_url: Option<Url>,
    ) -> impl std::future::Future<Output = Outcome> + Send + 'static + use<> {
        self.engine.handle(request, base_url)
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listening", &self.is_listening())
            .field("handlers", &self.list_handlers().len())
            .finish()
    }
}
