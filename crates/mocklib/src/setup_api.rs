//! The handler-list API that the server and the worker share (MSW: the
//! `SetupApi` class behind both `setupServer` and `setupWorker`).
//!
//! [`Server`](crate::node::Server) and the browser's `Worker` dereference to
//! [`SetupApi`], so its methods are called on them directly:
//! `server.use_handlers(..)`, `worker.list_handlers()`.

use std::sync::Arc;

use crate::engine::Engine;
use crate::events::Events;
use crate::handler::Handler;

/// Changes and reads the handler list of a server or worker, in the
/// caller's current scope (a boundary, or the whole instance outside one).
///
/// Reached through [`Server`](crate::node::Server) (or the browser's
/// `Worker`), which dereference to it.
#[doc(alias = "SetupServerApi")]
pub struct SetupApi {
    engine: Arc<Engine>,
}

impl SetupApi {
    pub(crate) fn new(engine: Arc<Engine>) -> Self {
        SetupApi { engine }
    }

    /// Prepends runtime handlers, ahead of every existing handler and in the
    /// order given (MSW: `server.use(...handlers)`; `use` is a Rust keyword).
    /// Inside a boundary only that boundary's list changes.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// let server = setup_server([http::get("/user", |_| HttpResponse::text("John"))]);
    /// server.use_handlers([http::get("/user", |_| HttpResponse::empty().status(500))]);
    /// let list: Vec<String> = server.list_handlers().iter().map(|h| h.to_string()).collect();
    /// assert_eq!(list, ["GET /user", "GET /user"]); // the override is looked up first
    /// ```
    #[doc(alias = "use")]
    pub fn use_handlers(&self, handlers: impl IntoIterator<Item = Handler>) {
        self.engine
            .current_scope()
            .prepend(handlers.into_iter().collect());
    }

    /// Removes the runtime handlers; the initial handlers remain (MSW:
    /// `resetHandlers()`). Inside a boundary, removes only the handlers added
    /// in that boundary.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// let server = setup_server([http::get("/user", |_| HttpResponse::text("John"))]);
    /// server.use_handlers([http::post("/user", |_| HttpResponse::empty().status(201))]);
    /// server.reset_handlers();
    /// assert_eq!(server.list_handlers().len(), 1);
    /// ```
    #[doc(alias = "resetHandlers")]
    pub fn reset_handlers(&self) {
        self.engine.current_scope().reset();
    }

    /// Replaces every handler: `next` becomes the initial list (MSW:
    /// `resetHandlers(...next)`). Inside a boundary, only for that boundary.
    #[doc(alias = "resetHandlers")]
    pub fn reset_handlers_to(&self, next: impl IntoIterator<Item = Handler>) {
        self.engine
            .current_scope()
            .reset_to(next.into_iter().collect());
    }

    /// Re-arms every used `.once()` handler of the current scope (MSW:
    /// `restoreHandlers()`).
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server, Outcome, Request};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([
    ///     http::get("https://api.example.com/token", |_| HttpResponse::text("fresh")).once(),
    /// ]);
    /// server.listen();
    /// let token = || {
    ///     let url = "https://api.example.com/token".parse().unwrap();
    ///     server.handle(Request::new(::http::Method::GET, url), None)
    /// };
    /// assert!(matches!(token().await, Outcome::Mocked(_)));
    /// assert!(!matches!(token().await, Outcome::Mocked(_))); // used up
    /// server.restore_handlers();
    /// assert!(matches!(token().await, Outcome::Mocked(_)));
    /// # }
    /// ```
    #[doc(alias = "restoreHandlers")]
    pub fn restore_handlers(&self) {
        self.engine.current_scope().restore();
    }

    /// The current scope's handlers, in lookup order (MSW: `listHandlers()`).
    /// Each prints as a header such as `GET https://api.example.com/user`.
    #[doc(alias = "listHandlers")]
    pub fn list_handlers(&self) -> Vec<Handler> {
        self.engine.list_handlers()
    }

    /// Life-cycle events: subscribe with [`Events::on`].
    pub fn events(&self) -> &Events {
        self.engine.events()
    }
}

impl std::fmt::Debug for SetupApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupApi")
            .field("handlers", &self.list_handlers().len())
            .finish()
    }
}
