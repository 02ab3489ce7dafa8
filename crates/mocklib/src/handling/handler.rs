//! [`Handler`]: a predicate paired with a resolver — and the public surface
//! a new kind of handler is built on.
//!
//! Handlers are created by the namespaces ([`http`](crate::http),
//! [`graphql`](crate::graphql), [`sse`](crate::sse), `ws`), are cheap to
//! clone (one reference count) and immutable: the same handler may sit in
//! several handler lists and boundaries at once. `once` state lives in the
//! scope that uses the handler, not in the handler.
//!
//! # A handler kind of your own
//!
//! Every namespace is built on the same small trait, [`HandlerKind`], and a
//! crate outside mocklib can implement it too (as `tower-service` lets any
//! crate write a service). A kind says which requests it takes
//! ([`try_match`](HandlerKind::try_match)), gets a [`MatchContext`] with
//! what the lookup knows of the request, and answers with a [`Matched`]
//! call that runs its resolver. [`Handler::new`] makes it a handler like
//! any other: `use_handlers`, boundaries, `once`, `times`/`verify`, the
//! journal and life-cycle events all apply.
//!
//! ```
//! use mocklib::handler::{HandlerKind, IndexHint, MatchContext, Matched};
//! use mocklib::resolver::ResolverCall;
//! use mocklib::{Handler, HttpResponse, matching::Predicate, node::setup_server};
//!
//! /// Answers every request that carries `x-feature: <name>` under a path.
//! struct FeatureFlag {
//!     path: Predicate,
//!     name: &'static str,
//!     header: String,
//! }
//!
//! impl HandlerKind for FeatureFlag {
//!     fn header(&self) -> &str {
//!         &self.header
//!     }
//!
//!     fn index_hint(&self) -> IndexHint {
//!         // The index may skip this handler for URLs outside the path.
//!         IndexHint::of_predicate(&self.path)
//!     }
//!
//!     fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
//!         self.path.matches(context.request(), context.base_url())?;
//!         let flag = context.request().headers().get("x-feature")?;
//!         (flag == self.name).then(|| {
//!             Matched::new(|_call| ResolverCall::new(HttpResponse::text("flag on")))
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = setup_server([Handler::new(FeatureFlag {
//!     path: Predicate::path("https://api.example.com/*")?,
//!     name: "beta",
//!     header: "feature beta under https://api.example.com/*".to_owned(),
//! })]);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let response = client
//!     .get("https://api.example.com/home")
//!     .header("x-feature", "beta")
//!     .send()
//!     .await?;
//! assert_eq!(response.text().await?, "flag on");
//! # Ok(())
//! # }
//! ```
//!
//! A kind that needs per-request work shared by all its handlers (a parse
//! of the body, say) keeps it in [`MatchContext::state`]; a kind whose
//! handlers are told apart by a key other than the URL (GraphQL's operation
//! name) lets the index find them by that key with [`IndexHint::key`] and a
//! [`KeySource`], so lookup stays flat in the number of handlers.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use url::Url;

pub use crate::support::maybe_send::MaybeSend;

use crate::handling::resolver::{CallContext, DynResolver, RequestId, ResolverArgs, ResolverCall};
use crate::handling::scope_local::{ScopeLocal, ScopeValues};
use crate::handling::times::Times;
use crate::matching::Predicate;
use crate::matching::matchers::{self, Matcher, Mismatch};
use crate::message::cookies::Cookies;
use crate::message::params::Params;
use crate::message::request::Request;

/// A request handler: created by [`http::get`](crate::http::get) and friends,
/// passed to [`setup_server`](crate::node::setup_server) or
/// [`use_handlers`](crate::node::Server::use_handlers).
#[derive(Clone)]
#[must_use = "a handler does nothing until it is passed to `setup_server` or `use_handlers`"]
pub struct Handler {
    id: HandlerId,
    once: bool,
    expected: Option<Times>,
    /// Whether the requests it answers go into the journal (see
    /// [`skip_journal`](Self::skip_journal)).
    journaled: bool,
    logic: Arc<dyn HandlerKind>,
    /// [`when`](Self::when)'s conditions, all of which must hold.
    conditions: Option<Arc<Vec<Matcher>>>,
}

/// Identity of a handler (a `.once()` copy gets a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct HandlerId(u64);

impl HandlerId {
    fn next() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        HandlerId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl Handler {
    /// A handler of a kind of your own (see the [module docs](self)); the
    /// namespaces' functions (`http::get`, …) make theirs the same way.
    pub fn new(kind: impl HandlerKind) -> Self {
        Handler {
            id: HandlerId::next(),
            once: false,
            expected: None,
            journaled: true,
            logic: Arc::new(kind),
            conditions: None,
        }
    }

    /// This handler, answering only requests that also meet `matcher` (a
    /// header, the query, a cookie, credentials, the body: see
    /// [`matchers`]). Each call adds a condition; all must
    /// hold. A request that fails one is explained: the unhandled-request
    /// warning, strict mode and [`verify`](crate::node::Server::verify)
    /// name the condition, what it expected and what the request had.
    ///
    /// ```
    /// use mocklib::matchers::{header, json_body};
    /// use mocklib::{http, HttpResponse};
    /// use serde_json::json;
    ///
    /// let handler = http::post("/users", |_| HttpResponse::text("created").status(201))
    ///     .when(header("x-api-key", "secret"))
    ///     .when(json_body(json!({ "role": "admin" })));
    /// assert_eq!(handler.conditions().len(), 2);
    /// ```
    pub fn when(mut self, matcher: Matcher) -> Self {
        let mut conditions = self.conditions.as_deref().cloned().unwrap_or_default();
        conditions.push(matcher);
        self.conditions = Some(Arc::new(conditions));
        self
    }

    /// The conditions added with [`when`](Self::when).
    pub fn conditions(&self) -> &[Matcher] {
        self.conditions.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The kind's match, when every condition holds too.
    pub(crate) fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        // Kept in its `Option`: unwrapped and wrapped again, the match (a
        // resolver's arguments) would be copied twice more per request.
        let found = self.logic.try_match(context);
        if found.is_some() && self.first_mismatch(context).is_some() {
            return None;
        }
        found
    }

    /// The first condition `context`'s request fails, if any.
    fn first_mismatch(&self, context: &MatchContext<'_>) -> Option<Mismatch> {
        // Most handlers have none: no per-request state to make for them.
        self.conditions.as_ref()?;
        let inputs = context.state::<matchers::Inputs>();
        let cookies = || context.cookies();
        self.conditions().iter().find_map(|matcher| {
            matcher
                .check_with(context.request(), inputs, &cookies)
                .err()
        })
    }

    /// Why `request` is not answered by this handler although its kind
    /// matches it: the conditions it fails (empty when it meets them all);
    /// `None` when the kind itself does not match.
    pub(crate) fn mismatches(
        &self,
        request: &Request,
        base_url: Option<&Url>,
    ) -> Option<Vec<Mismatch>> {
        let context = MatchContext::new(request, RequestId::next(), base_url);
        self.logic.try_match(&context)?;
        let inputs = context.state::<matchers::Inputs>();
        let cookies = || context.cookies();
        Some(
            self.conditions()
                .iter()
                .filter_map(|matcher| matcher.check_with(request, inputs, &cookies).err())
                .collect(),
        )
    }

    /// This handler, answering only the first request that matches it (per
    /// scope; see [`restore_handlers`](crate::node::Server::restore_handlers)
    /// to re-arm it). Once used, it is skipped and the next matching handler
    /// answers.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = setup_server([
    ///     http::get("https://api.example.com/status", |_| HttpResponse::text("starting")).once(),
    ///     http::get("https://api.example.com/status", |_| HttpResponse::text("ready")),
    /// ]);
    /// server.listen();
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(server.middleware())
    ///     .build();
    /// for expected in ["starting", "ready", "ready"] {
    ///     let status = client.get("https://api.example.com/status").send().await?.text().await?;
    ///     assert_eq!(status, expected);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn once(self) -> Self {
        Handler {
            id: HandlerId::next(),
            once: true,
            ..self
        }
    }

    /// This handler, expected to match `times` requests (a count or a
    /// range, as wiremock-rs's `expect`): [`verify`](crate::node::Server::verify)
    /// fails when it did not. Counted per scope, like [`once`](Self::once):
    /// every request whose lookup ran this handler's resolver counts.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = setup_server([
    ///     http::get("https://api.example.com/user", |_| HttpResponse::text("John")).expect(1..),
    ///     http::delete("https://api.example.com/user", |_| HttpResponse::empty()).never(),
    /// ]);
    /// server.listen();
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(server.middleware())
    ///     .build();
    /// client.get("https://api.example.com/user").send().await?;
    /// server.verify()?;
    ///
    /// client.delete("https://api.example.com/user").send().await?;
    /// let failure = server.verify().unwrap_err();
    /// assert!(failure.to_string().contains(
    ///     "DELETE https://api.example.com/user: expected never, received 1"
    /// ));
    /// # Ok(())
    /// # }
    /// ```
    pub fn expect(self, times: impl Into<Times>) -> Self {
        Handler {
            expected: Some(times.into()),
            ..self
        }
    }

    /// Expects exactly `n` requests (see [`expect`](Self::expect)).
    pub fn times(self, n: usize) -> Self {
        self.expect(Times::exactly(n))
    }

    /// Expects `n` requests or more (see [`expect`](Self::expect)).
    pub fn at_least(self, n: usize) -> Self {
        self.expect(Times::at_least(n))
    }

    /// Expects `n` requests or fewer (see [`expect`](Self::expect)).
    pub fn at_most(self, n: usize) -> Self {
        self.expect(Times::at_most(n))
    }

    /// Expects no request at all (see [`expect`](Self::expect)).
    pub fn never(self) -> Self {
        self.expect(Times::exactly(0))
    }

    /// This handler, the requests it answers kept out of the request journal
    /// ([`requests`](crate::node::Server::requests), and the requests
    /// verification shows): for a handler a test polls, or one that serves
    /// the test's own tooling (a health check, an admin API), whose
    /// requests would otherwise push the requests under test out of the
    /// journal's last [`DEFAULT_CAPACITY`](crate::journal::DEFAULT_CAPACITY).
    /// Its expectations ([`expect`](Self::expect)) still count them.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, Request, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = setup_server([
    ///     http::get("https://api.example.com/health", |_| HttpResponse::text("ok"))
    ///         .skip_journal()
    ///         .times(3),
    ///     http::get("https://api.example.com/user", |_| HttpResponse::text("John")),
    /// ]);
    /// server.listen();
    /// let get = |url: &str| Request::new(::http::Method::GET, url.parse().unwrap());
    /// server.handle(get("https://api.example.com/user"), None).await;
    /// for _ in 0..3 {
    ///     server.handle(get("https://api.example.com/health"), None).await;
    /// }
    ///
    /// let journal = server.requests();
    /// let urls: Vec<&str> = journal.iter().map(|entry| entry.url().as_str()).collect();
    /// assert_eq!(urls, ["https://api.example.com/user"]);
    /// server.verify()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn skip_journal(self) -> Self {
        Handler {
            journaled: false,
            ..self
        }
    }

    /// Whether the requests this handler answers go into the journal
    /// (`false` after [`skip_journal`](Self::skip_journal)).
    pub fn is_journaled(&self) -> bool {
        self.journaled
    }

    /// This handler with its kind wrapped by `wrap` (a new identity, as
    /// `once` gives: the wrapped handler is another handler).
    pub(crate) fn map_kind<K: HandlerKind>(
        self,
        wrap: impl FnOnce(Arc<dyn HandlerKind>) -> K,
    ) -> Handler {
        Handler {
            id: HandlerId::next(),
            logic: Arc::new(wrap(self.logic)),
            ..self
        }
    }

    /// This handler with each matched call passed through `around`, which
    /// gets the match context and the inner kind's call and returns the
    /// call to run (or `None`: no match). Chaos, scenarios and webhooks
    /// are made so; everything else stays the handler's.
    pub(crate) fn around(
        self,
        around: impl Fn(&MatchContext<'_>, Matched) -> Option<Matched> + Send + Sync + 'static,
    ) -> Handler {
        self.map_kind(|inner| Around { inner, around })
    }

    /// What [`expect`](Self::expect) declared, if anything.
    pub fn expected(&self) -> Option<Times> {
        self.expected
    }

    /// Whether this is a `.once()` handler.
    pub fn is_once(&self) -> bool {
        self.once
    }

    /// A one-line description, such as `GET https://api.example.com/user`.
    pub fn header(&self) -> &str {
        self.logic.header()
    }

    pub(crate) fn id(&self) -> HandlerId {
        self.id
    }

    /// The kind behind this handler.
    pub fn kind(&self) -> &dyn HandlerKind {
        &*self.logic
    }

    /// Whether this handler's predicate matches `request` (its resolver is
    /// not run).
    pub(crate) fn matches(&self, request: &Request, base_url: Option<&Url>) -> bool {
        let context = MatchContext::new(request, RequestId::next(), base_url);
        self.try_match(&context).is_some()
    }
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("header", &self.header())
            .field("once", &self.once)
            .field("expected", &self.expected)
            .field("journaled", &self.journaled)
            .field("conditions", &self.conditions())
            .finish()
    }
}

impl std::fmt::Display for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.header())?;
        if self.once {
            f.write_str(" (once)")?;
        }
        Ok(())
    }
}

/// A kind that is another kind with its matched calls changed (see
/// [`Handler::around`]).
struct Around<F> {
    inner: Arc<dyn HandlerKind>,
    around: F,
}

impl<F> HandlerKind for Around<F>
where
    F: Fn(&MatchContext<'_>, Matched) -> Option<Matched> + Send + Sync + 'static,
{
    fn header(&self) -> &str {
        self.inner.header()
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        let matched = self.inner.try_match(context)?;
        (self.around)(context, matched)
    }

    fn method(&self) -> Option<&http::Method> {
        self.inner.method()
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.inner.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        self.inner.index_hint()
    }
}

/// What the lookup knows about the request being resolved; shared by every
/// handler it tries, so per-request work (cookie parsing, a namespace's
/// parse of the body) happens once.
pub struct MatchContext<'a> {
    pub(crate) request: &'a Request,
    pub(crate) request_id: RequestId,
    pub(crate) base_url: Option<&'a Url>,
    cookies: OnceLock<Cookies>,
    /// Per-request state of the handler kinds, one value per type, made on
    /// first use.
    state: OnceLock<Box<StateSlot>>,
    /// The scope's [`ScopeLocal`] values, in a lookup (borrowed: no work
    /// per request for a handler that never asks).
    values: Option<&'a ScopeValues>,
}

/// What a [`MatchContext`] found out, without the request it borrows.
pub(crate) struct Found {
    cookies: OnceLock<Cookies>,
    state: OnceLock<Box<StateSlot>>,
}

/// One value of [`MatchContext::state`] and the link to the next: a list
/// that only grows, so a reference handed out stays valid without a lock.
struct StateSlot {
    value: Box<dyn Any + Send + Sync>,
    next: OnceLock<Box<StateSlot>>,
}

/// Up to this many headers, a name is looked for by a scan rather than a hash.
const FEW_HEADERS: usize = 8;

impl<'a> MatchContext<'a> {
    pub(crate) fn new(
        request: &'a Request,
        request_id: RequestId,
        base_url: Option<&'a Url>,
    ) -> Self {
        MatchContext {
            request,
            request_id,
            base_url,
            cookies: OnceLock::new(),
            state: OnceLock::new(),
            values: None,
        }
    }

    /// This context in the scope whose values are `values` (a lookup's).
    pub(crate) fn in_scope(mut self, values: &'a ScopeValues) -> Self {
        self.values = Some(values);
        self
    }

    /// What this context found out about its request (parsed cookies, the
    /// kinds' state), for the context of a lookup that goes on after an
    /// async resolver: a GraphQL batch keeps its answers there.
    pub(crate) fn into_found(self) -> Found {
        Found {
            cookies: self.cookies,
            state: self.state,
        }
    }

    /// A context for `request` that starts from what an earlier one found.
    pub(crate) fn resume(
        request: &'a Request,
        request_id: RequestId,
        base_url: Option<&'a Url>,
        found: Found,
    ) -> Self {
        MatchContext {
            request,
            request_id,
            base_url,
            cookies: found.cookies,
            state: found.state,
            values: None,
        }
    }

    /// Runs `f` on the current scope's copy of `local` (see
    /// [`ScopeLocal`]): how a handler kind matches on state that boundaries
    /// keep apart (a [`scenario`](crate::scenario)'s). Outside a lookup
    /// (`Handler::matches`) `f` gets a fresh value. `f` runs under the
    /// scope's lock: keep it short, and use no other `ScopeLocal` in it.
    pub fn scope_local<T, R>(&self, local: &ScopeLocal<T>, f: impl FnOnce(&mut T) -> R) -> R
    where
        T: Clone + Send + Sync + 'static,
    {
        ScopeValues::with_or_fresh(self.values, local, f)
    }

    /// The request being resolved.
    pub fn request(&self) -> &'a Request {
        self.request
    }

    /// The request's id (the one life-cycle events and resolvers see).
    pub fn request_id(&self) -> RequestId {
        self.request_id
    }

    /// The base URL relative predicates resolve against: the front door's
    /// origin (the listener's), else [`ListenOptions`](crate::ListenOptions)'s.
    pub fn base_url(&self) -> Option<&'a Url> {
        self.base_url
    }

    /// The request's cookies, parsed on first use.
    pub fn cookies(&self) -> &Cookies {
        // Most requests send no cookie: no parse, and no first-use
        // initialisation to pay for (a few hundred instructions).
        static NONE: Cookies = Cookies::NONE;
        if let Some(cookies) = self.cookies.get() {
            return cookies;
        }
        // A look at each of the (few) names costs less than hashing one.
        let headers = self.request.headers();
        let sent = if headers.len() <= FEW_HEADERS {
            headers.keys().any(|name| name == http::header::COOKIE)
        } else {
            headers.contains_key(http::header::COOKIE)
        };
        if !sent {
            return &NONE;
        }
        self.cookies
            .get_or_init(|| Cookies::from_headers(self.request.headers()))
    }

    /// This request's value of type `T`, made with `T::default()` on first
    /// use: how a handler kind shares per-request work among its handlers
    /// (GraphQL parses a request's document once, however many GraphQL
    /// handlers look at it). Use a type private to your kind.
    pub fn state<T: Any + Default + Send + Sync>(&self) -> &T {
        let mut slot = &self.state;
        loop {
            let node = slot.get_or_init(|| {
                Box::new(StateSlot {
                    value: Box::new(T::default()),
                    next: OnceLock::new(),
                })
            });
            if let Some(value) = node.value.downcast_ref::<T>() {
                return value;
            }
            slot = &node.next;
        }
    }
}

impl std::fmt::Debug for MatchContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatchContext")
            .field(
                "request",
                &format_args!("{} {}", self.request.method(), self.request.url()),
            )
            .field("request_id", &self.request_id)
            .field("base_url", &self.base_url.map(Url::as_str))
            .finish_non_exhaustive()
    }
}

/// A matched handler's call, ready to run its resolver: what
/// [`HandlerKind::try_match`] returns for a request it takes. The engine
/// calls it with the [`CallContext`] of this call (how many calls came
/// before in the scope, where cleanups go), catching a panic as a 500.
pub struct Matched(pub(crate) Call);

/// What a [`Matched`] runs.
pub(crate) enum Call {
    /// Any handler kind's call.
    Boxed(Box<dyn FnOnce(CallContext) -> ResolverCall + Send>),
    /// An HTTP resolver with its arguments but the call's context: what most
    /// requests run, without a box allocated and freed for each.
    Resolver(Arc<DynResolver>, ResolverParts),
}

/// [`ResolverArgs`](crate::ResolverArgs) but the [`CallContext`].
pub(crate) struct ResolverParts {
    pub(crate) request: Request,
    pub(crate) params: Params,
    pub(crate) cookies: Cookies,
    pub(crate) request_id: RequestId,
}

impl Matched {
    /// The call that runs `resolve`: build the resolver's arguments from
    /// what `try_match` found and the [`CallContext`], and return its
    /// [`ResolverCall`].
    pub fn new(resolve: impl FnOnce(CallContext) -> ResolverCall + Send + 'static) -> Self {
        Matched(Call::Boxed(Box::new(resolve)))
    }

    /// The call of an HTTP `resolver` with these arguments.
    pub(crate) fn resolver(resolver: Arc<DynResolver>, parts: ResolverParts) -> Self {
        Matched(Call::Resolver(resolver, parts))
    }

    /// Runs the call.
    pub(crate) fn call(self, call: CallContext) -> ResolverCall {
        match self.0 {
            Call::Boxed(resolve) => resolve(call),
            Call::Resolver(resolver, parts) => resolver(ResolverArgs::new(
                parts.request,
                parts.params,
                parts.cookies,
                parts.request_id,
                call,
            )),
        }
    }
}

impl std::fmt::Debug for Matched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matched").finish_non_exhaustive()
    }
}

/// The behaviour behind a [`Handler`]: one implementation per kind of
/// handler (`http`, `graphql`, `sse`, `ws` each have theirs). Made a handler
/// with [`Handler::new`]; see the [module docs](self) for an example.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handler kind",
    note = "implement `mocklib::handler::HandlerKind` (`header` and `try_match`) to make a handler with `Handler::new`"
)]
pub trait HandlerKind: Send + Sync + 'static {
    /// The one-line description shown by `list_handlers`, in unhandled
    /// warnings and in verification reports (`GET https://api.example.com/user`).
    fn header(&self) -> &str;

    /// Whether the request matches; if so, the call that runs the
    /// resolver. Called for every request the index cannot rule out: keep
    /// it cheap, and leave the resolver's work to the [`Matched`] call.
    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched>;

    /// The request method this handler is limited to, if any: the index
    /// skips it for other methods, and suggestions compare it.
    fn method(&self) -> Option<&http::Method> {
        None
    }

    /// The predicate as URL text, for "did you mean" suggestions and
    /// verification reports (see [`Predicate::describe`]); `None`: none.
    fn suggestion_text(&self) -> Option<&str> {
        None
    }

    /// What the handler index may assume about the requests this handler
    /// matches. The default, [`IndexHint::always`], is always correct.
    fn index_hint(&self) -> IndexHint {
        IndexHint::always()
    }
}

/// What a handler tells the index about the requests it can match, so a
/// lookup skips it for the others without asking (see [`HandlerKind::index_hint`]).
/// A hint must never rule out a request the handler would take.
#[derive(Clone)]
pub struct IndexHint(pub(crate) Hint);

#[derive(Clone)]
pub(crate) enum Hint {
    /// No literal prefix is known: always a candidate.
    Always,
    /// Every matching URL starts with this text (lowercased).
    Prefix {
        /// `scheme://host[:port]`, when the pattern's origin is literal.
        origin: Option<String>,
        /// The literal path prefix.
        path: String,
    },
    /// A candidate only for requests whose keys under `source` include `key`.
    Key {
        source: Arc<dyn KeySource>,
        key: String,
    },
}

impl IndexHint {
    /// No hint: the handler is asked about every request.
    pub fn always() -> Self {
        IndexHint(Hint::Always)
    }

    /// Every URL the handler matches starts with `origin` (`scheme://host[:port]`,
    /// when it is fixed) followed by the path prefix `path`. Compared
    /// without regard to case.
    pub fn url_prefix(origin: Option<&str>, path: &str) -> Self {
        IndexHint(Hint::Prefix {
            origin: origin.map(str::to_ascii_lowercase),
            path: path.to_ascii_lowercase(),
        })
    }

    /// The hint for a handler that matches only URLs `predicate` matches:
    /// its literal prefix, or none for a regex or a closure.
    pub fn of_predicate(predicate: &Predicate) -> Self {
        match predicate.url_prefix() {
            Some(key) => IndexHint(Hint::Prefix {
                origin: key.origin,
                path: key.path_prefix,
            }),
            None => IndexHint::always(),
        }
    }

    /// The handler matches only requests whose keys under `source` include
    /// `key` (GraphQL: operations named `key` sent to one endpoint). The
    /// handlers of one source must share its `Arc`: the index groups them
    /// by it and asks the source once per request for all of them.
    pub fn key(source: Arc<dyn KeySource>, key: impl Into<String>) -> Self {
        IndexHint(Hint::Key {
            source,
            key: key.into(),
        })
    }
}

impl std::fmt::Debug for IndexHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Hint::Always => f.write_str("IndexHint::Always"),
            Hint::Prefix { origin, path } => f
                .debug_struct("IndexHint::Prefix")
                .field("origin", origin)
                .field("path", path)
                .finish(),
            Hint::Key { key, .. } => f.debug_struct("IndexHint::Key").field("key", key).finish(),
        }
    }
}

/// Where the index learns a request's keys for the handlers that declared
/// [`IndexHint::key`] with this source: a namespace-defined lane beside the
/// URL tries (GraphQL's operation names). Asked at most once per request and
/// index chunk; keep what it computes in [`MatchContext::state`] so the
/// handlers' own `try_match` reuses it.
pub trait KeySource: Send + Sync + 'static {
    /// The request's keys under this source.
    fn keys<'a>(&self, context: &'a MatchContext<'_>) -> Keys<'a>;
}

/// A request's keys, as a [`KeySource`] sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keys<'a> {
    /// No handler of this source can match the request.
    NotApplicable,
    /// The keys cannot be known cheaply (or at all): every handler of this
    /// source is asked.
    Unknown,
    /// These keys: only the handlers declaring one of them are asked.
    Named(Vec<&'a str>),
}
