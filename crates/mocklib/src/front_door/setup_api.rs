//! The handler-list API that the server and the worker share (MSW: the
//! `SetupApi` class behind both `setupServer` and `setupWorker`).
//!
//! [`Server`](crate::node::Server) and the browser's `Worker` each get the
//! same inherent methods from [`shared_api!`], written once here with their
//! docs, delegating to one [`SetupApi`] (no `Deref`: a method of either type
//! is found where its docs are).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::Engine;
use crate::engine::events::Events;
use crate::engine::journal::RecordedRequest;
use crate::engine::verify::VerificationError;
use crate::handling::handler::Handler;

/// Changes and reads the handler list of a server or worker, in the
/// caller's current scope (a boundary, or the whole instance outside one).
pub(crate) struct SetupApi {
    engine: Arc<Engine>,
    verify_on_drop: AtomicBool,
}

impl SetupApi {
    pub(crate) fn new(engine: Arc<Engine>) -> Self {
        SetupApi {
            engine,
            verify_on_drop: AtomicBool::new(false),
        }
    }

    pub(crate) fn front_door(&self) -> crate::front_door::FrontDoor {
        crate::front_door::FrontDoor::new(Arc::clone(&self.engine))
    }

    pub(crate) fn use_handlers(&self, handlers: Vec<Handler>) {
        self.engine.current_scope().prepend(handlers);
    }

    pub(crate) fn reset_handlers(&self) {
        self.engine.current_scope().reset();
    }

    pub(crate) fn reset_handlers_to(&self, next: Vec<Handler>) {
        self.engine.current_scope().reset_to(next);
    }

    pub(crate) fn restore_handlers(&self) {
        self.engine.current_scope().restore();
    }

    pub(crate) fn list_handlers(&self) -> Vec<Handler> {
        self.engine.list_handlers()
    }

    pub(crate) fn scope_local<T, R>(
        &self,
        local: &crate::handling::scope_local::ScopeLocal<T>,
        f: impl FnOnce(&mut T) -> R,
    ) -> R
    where
        T: Clone + Send + Sync + 'static,
    {
        self.engine.current_scope().values().with(local, f)
    }

    pub(crate) fn events(&self) -> &Events {
        self.engine.events()
    }

    pub(crate) fn verify(&self) -> Result<(), VerificationError> {
        crate::engine::verify::verify(&self.engine.current_scope())
    }

    pub(crate) fn verify_on_drop(&self) {
        self.verify_on_drop.store(true, Ordering::Relaxed);
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.engine.current_scope().requests()
    }

    pub(crate) fn requests_after(&self, sequence: u64) -> Vec<RecordedRequest> {
        self.engine.current_scope().requests_after(sequence)
    }

    pub(crate) fn requests_matching(&self, handler: &Handler) -> Vec<RecordedRequest> {
        let mut requests = self.requests();
        requests.retain(|entry| handler.matches(entry.request(), entry.base_url()));
        requests
    }

    pub(crate) fn clear_requests(&self) {
        self.engine.current_scope().clear_requests();
    }

    #[cfg(feature = "har")]
    pub(crate) fn record(
        &self,
        recording: crate::namespace::har::Recording,
    ) -> Result<(), crate::namespace::har::HarError> {
        let (records, replays) = recording.plan();
        let mut kept = Vec::new();
        if replays {
            let replay = recording.replay()?;
            self.engine.current_scope().append(replay.handlers()?);
            kept = replay.into_entries();
        }
        let recorder: Option<Arc<dyn crate::message::exchange::ExchangeSink>> = match records {
            true => Some(Arc::new(recording.recorder(kept)?)),
            false => None,
        };
        self.engine.set_recorder(recorder);
        Ok(())
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn record_exchanges(&self, sink: Arc<dyn crate::message::exchange::ExchangeSink>) {
        self.engine.set_recorder(Some(sink));
    }

    pub(crate) fn stop_recording(&self) {
        self.engine.set_recorder(None);
    }

    pub(crate) fn attach_contract(
        &self,
        contract: Arc<dyn crate::handling::contract::Contract>,
        strict: bool,
    ) {
        self.engine
            .attach_contract(crate::handling::contract::Attached { contract, strict });
    }
}

/// The methods [`Server`](crate::node::Server) and the browser's `Worker`
/// share, with their docs: each type expands it in an `impl` block of its
/// own, with its `SetupApi` in a field named `api`.
macro_rules! shared_api {
    () => {
        /// The way in for a front door of your own: it resolves requests
        /// against this instance's handlers, in the caller's scope (see
        /// [`crate::front_door`]). mocklib's own front doors use it too.
        pub fn front_door(&self) -> $crate::front_door::FrontDoor {
            self.api.front_door()
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
        pub fn use_handlers(&self, handlers: impl IntoIterator<Item = $crate::Handler>) {
            // Collected here: the generic part a test crate compiles.
            self.api.use_handlers(handlers.into_iter().collect())
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
            self.api.reset_handlers()
        }

        /// Replaces every handler: `next` becomes the initial list (MSW:
        /// `resetHandlers(...next)`). Inside a boundary, only for that boundary.
        #[doc(alias = "resetHandlers")]
        pub fn reset_handlers_to(&self, next: impl IntoIterator<Item = $crate::Handler>) {
            // Collected here: the generic part a test crate compiles.
            self.api.reset_handlers_to(next.into_iter().collect())
        }

        /// Re-arms every used `.once()` handler of the current scope (MSW:
        /// `restoreHandlers()`), starts every sequence over, sets the counts
        /// that expectations check back to zero, and starts every per-scope
        /// value ([`ScopeLocal`](crate::boundary::ScopeLocal): the collections of
        /// [`rest`](crate::rest) resources) over from its seed.
        ///
        /// ```
        /// use mocklib::{http, HttpResponse, node::setup_server, front_door::Outcome, Request};
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
            self.api.restore_handlers()
        }

        /// Runs `f` on the current scope's copy of `local`, as a resolver's
        /// [`scope_local`](crate::ResolverArgs::scope_local) does: how a
        /// test reads or sets what handlers keep per scope (a
        /// [`scenario`](crate::scenario)'s states) from outside a request.
        /// `f` runs under the scope's lock: keep it short.
        pub fn scope_local<T, R>(
            &self,
            local: &$crate::boundary::ScopeLocal<T>,
            f: impl FnOnce(&mut T) -> R,
        ) -> R
        where
            T: Clone + Send + Sync + 'static,
        {
            self.api.scope_local(local, f)
        }

        /// The current scope's handlers, in lookup order (MSW: `listHandlers()`).
        /// Each prints as a header such as `GET https://api.example.com/user`.
        #[doc(alias = "listHandlers")]
        pub fn list_handlers(&self) -> Vec<$crate::Handler> {
            self.api.list_handlers()
        }

        /// Life-cycle events: subscribe with [`Events::on`](crate::events::Events::on).
        pub fn events(&self) -> &$crate::engine::events::Events {
            self.api.events()
        }

        /// Checks the expectations of the current scope's handlers
        /// ([`Handler::expect`], [`times`](Handler::times), ...) and, in strict
        /// mode, that no request went unhandled (wiremock-rs: `verify`).
        ///
        /// The error's `Display` is a report meant for a failed test's output:
        /// each unmet expectation with what was expected and received, and the
        /// recorded requests closest to it with what differs marked.
        ///
        /// ```
        /// use mocklib::{http, HttpResponse, ListenOptions, UnhandledRequest, node::setup_server};
        ///
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
        /// let server = setup_server([
        ///     http::get("https://api.example.com/users/:id", |_| HttpResponse::text("John")).times(1),
        /// ]);
        /// server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Error));
        /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        ///     .with(server.middleware())
        ///     .build();
        /// // A typo in the code under test: `user` for `users`.
        /// client.get("https://api.example.com/user/1").send().await.unwrap_err();
        ///
        /// let report = server.verify().unwrap_err().to_string();
        /// assert!(report.contains(
        ///     "GET https://api.example.com/users/:id: expected exactly 1, received 0"
        /// ));
        /// assert!(report.contains("GET https://api.example.com/user/1 (unhandled)"));
        /// # Ok(())
        /// # }
        /// ```
        pub fn verify(&self) -> Result<(), $crate::engine::verify::VerificationError> {
            self.api.verify()
        }

        /// Makes dropping the last clone of this server (or worker) verify the
        /// server's own scope and panic with the report when it fails, as
        /// wiremock-rs's `MockServer` does. Off by default. It never panics
        /// while the thread is already panicking (a failed assertion's unwind
        /// shows that failure, not a second one); a server in a `static` is
        /// never dropped, so call [`verify`](Self::verify) there instead.
        ///
        /// ```should_panic
        /// use mocklib::{http, HttpResponse, node::setup_server};
        ///
        /// let server = setup_server([http::get("/user", |_| HttpResponse::empty()).times(1)]);
        /// server.verify_on_drop();
        /// drop(server); // panics: expected exactly 1, received 0
        /// ```
        pub fn verify_on_drop(&self) {
            self.api.verify_on_drop()
        }

        /// The requests the current scope received, oldest first, each with the
        /// handler that answered and how (see [`crate::journal`] for what is
        /// kept and for how long).
        pub fn requests(&self) -> Vec<$crate::engine::journal::RecordedRequest> {
            self.api.requests()
        }

        /// The requests the current scope recorded after the one numbered
        /// `sequence` ([`RecordedRequest::sequence`](crate::journal::RecordedRequest::sequence)),
        /// oldest first: what a reader that remembers the last number it saw
        /// has not seen yet, without copying the rest of the journal (a live
        /// view of the journal reads it so).
        ///
        /// ```
        /// use mocklib::{http, HttpResponse, Request, node::setup_server};
        ///
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() {
        /// let server = setup_server([http::all("https://api.example.com/*", |_| HttpResponse::empty())]);
        /// server.listen();
        /// let get = |path: &str| {
        ///     Request::new(::http::Method::GET, format!("https://api.example.com{path}").parse().unwrap())
        /// };
        /// server.handle(get("/one"), None).await;
        /// let seen = server.requests().last().unwrap().sequence();
        /// server.handle(get("/two"), None).await;
        /// server.handle(get("/three"), None).await;
        ///
        /// let fresh: Vec<String> = server
        ///     .requests_after(seen)
        ///     .iter()
        ///     .map(|entry| entry.url().path().to_owned())
        ///     .collect();
        /// assert_eq!(fresh, ["/two", "/three"]);
        /// # }
        /// ```
        pub fn requests_after(
            &self,
            sequence: u64,
        ) -> Vec<$crate::engine::journal::RecordedRequest> {
            self.api.requests_after(sequence)
        }

        /// The recorded requests that `handler`'s predicate matches (its
        /// resolver is not run), whichever handler answered them.
        ///
        /// ```
        /// use mocklib::{http, HttpResponse, node::setup_server};
        ///
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
        /// let server = setup_server([http::all("https://api.example.com/*", |_| HttpResponse::empty())]);
        /// server.listen();
        /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        ///     .with(server.middleware())
        ///     .build();
        /// client.post("https://api.example.com/posts").body("first").send().await?;
        /// client.get("https://api.example.com/posts").send().await?;
        ///
        /// let posted = server.requests_matching(&http::post("https://api.example.com/posts", |_| {
        ///     HttpResponse::empty()
        /// }));
        /// assert_eq!(posted.len(), 1);
        /// assert_eq!(posted[0].body(), "first");
        /// # Ok(())
        /// # }
        /// ```
        pub fn requests_matching(
            &self,
            handler: &$crate::Handler,
        ) -> Vec<$crate::engine::journal::RecordedRequest> {
            self.api.requests_matching(handler)
        }

        /// Forgets the current scope's recorded requests and strict-mode
        /// failures.
        pub fn clear_requests(&self) {
            self.api.clear_requests()
        }

        /// Records requests performed for real into a HAR file, or replays
        /// it, as `recording`'s [`RecordMode`](crate::har::RecordMode) says
        /// (VCR: `use_cassette`).
        ///
        /// Replayed exchanges become handlers added *after* the current scope's
        /// list (handlers written by hand win), for the rest of the scope's life
        /// (`reset_handlers` keeps them). While recording, every request
        /// performed for real (unhandled ones, which then skip the
        /// unhandled-request strategy, and `passthrough()`) is written to the
        /// file once the client has read its whole response, through the
        /// in-process front doors and the listener alike (not in the browser,
        /// which has no files to write). See [`crate::har`].
        ///
        /// ```no_run
        /// use mocklib::{har::Recording, node::setup_server};
        ///
        /// # fn main() -> Result<(), mocklib::har::HarError> {
        /// let server = setup_server([]);
        /// server.listen();
        /// // The first run records tests/fixtures/github.har; later runs replay it.
        /// server.record(Recording::new("tests/fixtures/github.har").redact_header("x-api-key"))?;
        /// # Ok(())
        /// # }
        /// ```
        #[cfg(feature = "har")]
        pub fn record(
            &self,
            recording: $crate::namespace::har::Recording,
        ) -> Result<(), $crate::namespace::har::HarError> {
            self.api.record(recording)
        }

        /// Hands every request performed for real, with its whole response, to
        /// `sink` (see [`crate::exchange`]); replaces any recording. While a
        /// recorder is set, unhandled requests are performed for real without
        /// the unhandled-request strategy: they are what is being recorded.
        /// Not in the browser (whose front door performs requests in the page).
        #[cfg(not(target_arch = "wasm32"))]
        pub fn record_exchanges(
            &self,
            sink: ::std::sync::Arc<dyn $crate::message::exchange::ExchangeSink>,
        ) {
            self.api.record_exchanges(sink)
        }

        /// Stops recording (a HAR file keeps what was recorded).
        pub fn stop_recording(&self) {
            self.api.stop_recording()
        }

        /// Checks every answer a handler gives from now on against
        /// `contract` (an [OpenAPI document](crate::openapi::OpenApi::contract),
        /// or a [`Contract`](crate::contract::Contract) of your own): what
        /// differs is kept with the request's journal entry
        /// ([`RecordedRequest::contract_findings`](crate::journal::RecordedRequest::contract_findings)),
        /// logged, and reported by [`verify`](Self::verify). Contracts add up.
        /// See [`crate::contract`].
        pub fn attach_contract(&self, contract: impl $crate::handling::contract::Contract) {
            self.api
                .attach_contract(::std::sync::Arc::new(contract), false)
        }

        /// Like [`attach_contract`](Self::attach_contract), and an answer
        /// that breaks `contract` is replaced by a `500` whose JSON body
        /// lists the findings (`{"error", "findings": [{contract, operation,
        /// pointer, expected, received}]}`), so the test fails loudly where
        /// the answer is used.
        pub fn attach_contract_strict(&self, contract: impl $crate::handling::contract::Contract) {
            self.api
                .attach_contract(::std::sync::Arc::new(contract), true)
        }
    };
}
pub(crate) use shared_api;

impl Drop for SetupApi {
    fn drop(&mut self) {
        if !self.verify_on_drop.load(Ordering::Relaxed) || std::thread::panicking() {
            return;
        }
        if let Err(report) = crate::engine::verify::verify(self.engine.root_scope()) {
            panic!("{report}");
        }
    }
}

impl std::fmt::Debug for SetupApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupApi")
            .field("handlers", &self.list_handlers().len())
            .finish()
    }
}
