//! [`Handler`]: a predicate paired with a resolver.
//!
//! Handlers are created by the namespaces ([`http`](crate::http), later
//! `graphql`), are cheap to clone (one reference count) and immutable: the
//! same handler may sit in several handler lists and boundaries at once.
//! `once` state lives in the scope that uses the handler, not in the handler.

use std::sync::{Arc, OnceLock};

use url::Url;

use crate::cookies::Cookies;
use crate::request::Request;
use crate::resolver::{RequestId, ResolverCall};

/// A request handler: created by [`http::get`](crate::http::get) and friends,
/// passed to [`setup_server`](crate::node::setup_server) or
/// [`use_handlers`](crate::SetupApi::use_handlers).
#[derive(Clone)]
#[must_use = "a handler does nothing until it is passed to `setup_server` or `use_handlers`"]
pub struct Handler {
    id: HandlerId,
    once: bool,
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
            logic: self.logic,
        }
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
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("header", &self.header())
            .field("once", &self.once)
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
    /// Per-request GraphQL state: the operation(s), parsed by the first
    /// GraphQL handler that needs them, and endpoint matches.
    #[cfg(feature = "graphql")]
    graphql: crate::graphql::LookupCache,
}

impl<'a> LookupContext<'a> {
    pub fn new(request: &'a Request, request_id: RequestId, base_url: Option<&'a Url>) -> Self {
        LookupContext {
            request,
            request_id,
            base_url,
            cookies: OnceLock::new(),
            #[cfg(feature = "graphql")]
            graphql: crate::graphql::LookupCache::default(),
        }
    }

    pub fn cookies(&self) -> &Cookies {
        self.cookies
            .get_or_init(|| Cookies::from_headers(self.request.headers()))
    }

    /// Per-request GraphQL state (the document is parsed once per request).
    #[cfg(feature = "graphql")]
    pub fn graphql(&self) -> &crate::graphql::LookupCache {
        &self.graphql
    }
}

/// A matched handler, ready to run its resolver.
pub(crate) type Invocation = Box<dyn FnOnce() -> ResolverCall + Send>;

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
    fn index_hint(&self) -> crate::matching::IndexHint {
        crate::matching::IndexHint::Always
    }
}
