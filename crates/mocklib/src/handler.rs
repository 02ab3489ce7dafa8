//! [`Handler`]: a predicate paired with a resolver.
//!
//! Handlers are created by the namespaces ([`http`](crate::http), later
//! `graphql`), are cheap to clone (one reference count) and immutable: the
//! same handler may sit in several handler lists and boundaries at once.
//! `once` state lives in the scope that uses the handler, not in the handler.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use url::Url;

use crate::cookies::Cookies;
use crate::request::Request;
use crate::resolver::{CallContext, RequestId, ResolverCall};
use crate::times::Times;

/// A request handler: created by [`http::get`](crate::http::get) and friends,
/// passed to [`setup_server`](crate::node::setup_server) or
/// [`use_handlers`](crate::SetupApi::use_handlers).
#[derive(Clone)]
#[must_use = "a handler does nothing until it is passed to `setup_server` or `use_handlers`"]
pub struct Handler {
    id: HandlerId,
    once: bool,
    expected: Option<Times>,
    logic: Arc<dyn HandlerLogic>,
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
    pub(crate) fn new(logic: Arc<dyn HandlerLogic>) -> Self {
        Handler {
            id: HandlerId::next(),
            once: false,
            expected: None,
            logic,
        }
    }

    /// This handler, answering only the first request that matches it (per
    /// scope; see [`restore_handlers`](crate::SetupApi::restore_handlers)
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
    /// range, as wiremock-rs's `expect`): [`verify`](crate::SetupApi::verify)
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

    pub(crate) fn logic(&self) -> &dyn HandlerLogic {
        &*self.logic
    }

    /// Whether this handler's predicate matches `request` (its resolver is
    /// not run).
    pub(crate) fn matches(&self, request: &Request, base_url: Option<&Url>) -> bool {
        let context = LookupContext::new(request, RequestId::next(), base_url);
        self.logic.try_match(&context).is_some()
    }
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("header", &self.header())
            .field("once", &self.once)
            .field("expected", &self.expected)
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

/// What the lookup knows about the request being resolved; shared by every
/// handler it tries, so per-request work (cookie parsing) happens once.
pub(crate) struct LookupContext<'a> {
    pub request: &'a Request,
    pub request_id: RequestId,
    pub base_url: Option<&'a Url>,
    cookies: OnceLock<Cookies>,
    /// Per-request state of a namespace, made on first use (GraphQL keeps
    /// its once-per-request parse here). Typed by the namespace, so this
    /// layer knows none of them.
    namespace_state: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl<'a> LookupContext<'a> {
    pub(crate) fn new(
        request: &'a Request,
        request_id: RequestId,
        base_url: Option<&'a Url>,
    ) -> Self {
        LookupContext {
            request,
            request_id,
            base_url,
            cookies: OnceLock::new(),
            namespace_state: OnceLock::new(),
        }
    }

    pub(crate) fn cookies(&self) -> &Cookies {
        self.cookies
            .get_or_init(|| Cookies::from_headers(self.request.headers()))
    }

    /// The per-request state of type `T`, created on first use. One
    /// namespace keeps state per request today (GraphQL); a second one
    /// would need a map here instead of one slot.
    #[cfg_attr(not(feature = "graphql"), allow(dead_code))]
    pub(crate) fn namespace_state<T: Any + Default + Send + Sync>(&self) -> &T {
        self.namespace_state
            .get_or_init(|| Box::new(T::default()))
            .downcast_ref()
            .expect("one namespace keeps per-request state")
    }
}

/// A matched handler, ready to run its resolver.
pub(crate) type Invocation = Box<dyn FnOnce(CallContext) -> ResolverCall + Send>;

/// The behaviour behind a [`Handler`]; one implementation per namespace.
pub(crate) trait HandlerLogic: Send + Sync + 'static {
    /// The one-line description shown by `list_handlers`.
    fn header(&self) -> &str;

    /// The request method this handler is limited to, if any (for suggestions).
    fn method(&self) -> Option<&http::Method>;

    /// The predicate as text to compare with request URLs (for suggestions).
    fn suggestion_text(&self) -> Option<&str>;

    /// Whether the request matches; if so, the call that runs the resolver.
    fn try_match(&self, context: &LookupContext<'_>) -> Option<Invocation>;

    /// What the handler index may assume about the URLs this handler
    /// matches. The default, "always ask", is always correct.
    fn index_hint(&self) -> IndexHint {
        IndexHint::Always
    }
}

// What the handler index may know of a handler and of a request, in terms
// no namespace owns (the index itself sits above the namespaces).

/// What a handler tells the index about the URLs it can match.
#[derive(Debug, Clone)]
pub(crate) enum IndexHint {
    /// No literal prefix is known: always a candidate.
    Always,
    /// Every matching URL starts with this text (lowercased).
    Prefix {
        /// `scheme://host[:port]`, when the pattern's origin is literal.
        origin: Option<String>,
        /// The literal path prefix.
        path: String,
    },
    /// A GraphQL handler for the operation with exactly this name, at this
    /// endpoint (`None`: any URL).
    #[cfg(feature = "graphql")]
    Operation {
        name: String,
        endpoint: Option<std::sync::Arc<crate::matching::Predicate>>,
    },
}

/// What the index may learn about a request's GraphQL operations; provided
/// by the lookup, which parses the request at most once.
#[cfg(feature = "graphql")]
pub(crate) trait OperationSource {
    /// Whether a GraphQL endpoint predicate matches the request.
    fn endpoint_applies(&self, endpoint: &std::sync::Arc<crate::matching::Predicate>) -> bool;
    /// The request's operations (parsing it if needed; prints nothing).
    fn operations(&self) -> Operations<'_>;
}

/// The request's GraphQL operations as far as the index cares.
#[cfg(feature = "graphql")]
pub(crate) enum Operations<'a> {
    /// Not GraphQL: no operation handler can match.
    NotGraphql,
    /// Every operation handler must look (an invalid document or an
    /// anonymous operation: the first to look prints one warning).
    AskEveryone,
    /// These operation names.
    Named(Vec<&'a str>),
}
