//! The handler list and the scopes that hold it.
//!
//! A scope (the server itself, or one call of a boundary) holds two things:
//! its *initial* handlers and its *current* list, which is the runtime
//! handlers added with `use_handlers` in front of the initial ones. The list
//! is a persistent chain of immutable chunks, each with its own index
//! ([`crate::engine::index`]'s `ChunkIndex`), so:
//!
//! - entering a boundary copies one pointer (the boundary's initial list *is*
//!   the enclosing scope's current list), whatever the number of handlers;
//! - `use_handlers` prepends a chunk, merging it with following chunks no
//!   larger than itself, so the chain stays O(log n) chunks long;
//! - `reset_handlers()` inside a boundary restores exactly the list the
//!   boundary started with;
//! - a lookup takes a snapshot (one pointer) and iterates without holding a
//!   lock, asking each chunk's index for the handlers that may match.
//!
//! Memory per boundary: one scope (a lock, two chain pointers, and a copy of
//! the enclosing scope's set of used once-handlers) plus the chunks it
//! prepends itself.
//!
//! `once` state is per scope: a scope records which handlers it has used up
//! (once-handlers, and handlers whose resolver said
//! [`Resolution::Exhausted`](crate::resolver::Resolution::Exhausted)) and how many
//! times each resolver ran (for [`sequence`](crate::sequence)); a new boundary
//! starts from a copy of its enclosing scope's record. Expectations
//! ([`Handler::expect`]) count per scope the same way. The request journal
//! ([`crate::journal`]) and strict mode's failures are per scope too, but a
//! boundary starts them empty: it records what happened inside it.
//! Handlers' own per-scope values ([`ScopeLocal`](crate::boundary::ScopeLocal), the
//! collections of `rest` resources) start as the enclosing scope's, shared
//! until changed.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::engine::index::{ChunkIndex, MIN_INDEXED, RequestKeys};
use crate::engine::journal::{AnswerSummary, Journal, RecordedRequest};
use crate::handling::handler::{Handler, HandlerId, Hint, MatchContext};
use crate::handling::scope_local::ScopeValues;
use crate::message::request::Request;
use crate::message::response::JournalValues;

/// An immutable, shareable handler list.
#[derive(Clone, Default)]
pub(crate) struct HandlerChain(Option<Arc<Link>>);

struct Link {
    handlers: Box<[Handler]>,
    /// Built once, when the chunk is made (chunks never change).
    index: Option<ChunkIndex>,
    /// For a chunk too short for an index: each handler's literal path
    /// prefix (from its [`IndexHint`](crate::handler::IndexHint)), so a scan
    /// skips a handler whose prefix the request's path lacks with a
    /// comparison of a few bytes instead of its whole match (`mocklib
    /// serve`'s admin handler, `http://*:*/__mocklib/*`, on every request).
    prefixes: Box<[Option<Box<str>>]>,
    next: HandlerChain,
}

impl HandlerChain {
    pub(crate) fn from_handlers(handlers: Vec<Handler>) -> Self {
        HandlerChain::default().prepend(handlers)
    }

    /// `handlers` (kept in their order) in front of this list.
    ///
    /// The new chunk absorbs following chunks no larger than itself (copies;
    /// the old chunks stay valid for whoever holds them), so chunk sizes grow
    /// geometrically down the chain: thousands of single `use_handlers` calls
    /// leave O(log n) indexed chunks, each handler is copied O(log n) times,
    /// and prepending to a large list copies nothing.
    pub(crate) fn prepend(&self, handlers: Vec<Handler>) -> Self {
        if handlers.is_empty() {
            return self.clone();
        }
        let mut handlers = handlers;
        let mut rest = self.clone();
        while let Some(link) = rest.0.clone() {
            if link.handlers.len() > handlers.len() {
                break;
            }
            handlers.extend(link.handlers.iter().cloned());
            rest = link.next.clone();
        }
        let index = (handlers.len() >= MIN_INDEXED).then(|| ChunkIndex::build(&handlers));
        let prefixes = if index.is_some() {
            Box::default()
        } else {
            handlers.iter().map(path_prefix).collect()
        };
        HandlerChain(Some(Arc::new(Link {
            handlers: handlers.into_boxed_slice(),
            index,
            prefixes,
            next: rest,
        })))
    }

    fn links(&self) -> impl Iterator<Item = &Link> {
        std::iter::successors(self.0.as_deref(), |link| link.next.0.as_deref())
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Handler> {
        self.links().flat_map(|link| link.handlers.iter())
    }

    /// The handlers that may match a request with these keys, in list order;
    /// every handler left out cannot match it.
    pub(crate) fn candidates(
        &self,
        keys: &RequestKeys<'_>,
        context: &MatchContext<'_>,
    ) -> Candidates<'_> {
        let mut candidates = Candidates::new();
        let mut positions = crate::engine::index::Positions::new();
        for link in self.links() {
            match &link.index {
                None => {
                    let path = keys.raw_path().as_bytes();
                    // The prefix is lowercase already.
                    let may_match = |prefix: &Option<Box<str>>| {
                        prefix.as_deref().is_none_or(|prefix| {
                            path.len() >= prefix.len()
                                && path
                                    .iter()
                                    .zip(prefix.as_bytes())
                                    .all(|(byte, lower)| byte.to_ascii_lowercase() == *lower)
                        })
                    };
                    // A plain loop: SmallVec's `extend` of a filtered
                    // iterator measured ~150 instructions for one handler.
                    for (handler, prefix) in link.handlers.iter().zip(&link.prefixes) {
                        if may_match(prefix) {
                            candidates.push(handler);
                        }
                    }
                }
                Some(index) => {
                    index.candidates(keys, context, &mut positions);
                    candidates.extend(positions.iter().map(|&p| &link.handlers[p as usize]));
                }
            }
        }
        candidates
    }
}

/// The literal path prefix every URL `handler` matches starts with
/// (lowercased), when it has one worth comparing.
fn path_prefix(handler: &Handler) -> Option<Box<str>> {
    match handler.kind().index_hint().0 {
        Hint::Prefix { path, .. } if path.len() > 1 => Some(path.into_boxed_str()),
        _ => None,
    }
}

/// A request's candidate handlers: a few, usually, so kept inline.
pub(crate) type Candidates<'a> = smallvec::SmallVec<[&'a Handler; 8]>;

impl Drop for Link {
    // Unlink iteratively: a chain of many `use_handlers` calls would
    // otherwise be dropped by deep recursion.
    fn drop(&mut self) {
        let mut next = self.next.0.take();
        while let Some(link) = next {
            match Arc::try_unwrap(link) {
                Ok(mut link) => next = link.next.0.take(),
                Err(_) => break,
            }
        }
    }
}

/// The handler state of one scope.
pub(crate) struct Scope {
    /// Unique in the process; names the scope in proxy credentials.
    #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
    id: u64,
    engine_id: u64,
    /// Whether this is its engine's root scope (no boundary's).
    root: bool,
    state: Mutex<ScopeState>,
    /// Whether `used` may hold a handler that is not a once-handler: until
    /// then, the lookup checks only once-handlers under the lock.
    exhausted_any: AtomicBool,
    /// The handlers' [`ScopeLocal`](crate::boundary::ScopeLocal) values, behind a lock
    /// of their own: a resolver changes them while the lookup goes on.
    values: ScopeValues,
    /// Whether a boundary has ended, and what ends with it.
    ending: Ending,
}

/// A boundary's end. It ends when the last of its owners (the `Boundary`
/// values and the boundary calls' futures: see `boundary::Owner`) lets go,
/// or when told to: not when the last `Arc` goes, since the listener's
/// connections hold one for as long as their clients keep them open, and
/// an ended boundary must stop answering them at once (issue 39).
#[derive(Default)]
struct Ending {
    owners: std::sync::atomic::AtomicUsize,
    ended: AtomicBool,
    /// Run once, when it ends: the listener closes the boundary's port and
    /// wakes what waits on its end.
    on_end: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
}

/// A boundary nobody ended is ended as it goes (its end callbacks close
/// what the listener opened for it).
#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
impl Drop for Scope {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
fn next_scope_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone)]
struct ScopeState {
    initial: HandlerChain,
    current: HandlerChain,
    used: IdSet,
    calls: IdMap<usize>,
    /// Requests each handler matched (its resolver ran and did not say
    /// `Exhausted`): what expectations check.
    uses: IdMap<usize>,
    journal: Journal,
    /// Strict mode's unhandled requests, as their messages.
    failures: Vec<String>,
}

/// Handler ids are numbers handed out in sequence: a multiply spreads them
/// over the hash's bits at a fraction of SipHash's cost (a request touches
/// these maps a few times). Nobody outside chooses them, so nothing to flood.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, number: u64) {
        self.0 = (self.0.rotate_left(5) ^ number).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdBuildHasher = std::hash::BuildHasherDefault<IdHasher>;
pub(crate) type IdMap<V> = HashMap<HandlerId, V, IdBuildHasher>;
type IdSet = HashSet<HandlerId, IdBuildHasher>;

/// Strict-mode failures a scope keeps; more are counted, not kept.
const MAX_FAILURES: usize = 100;

/// A copy of what verification reads from a scope.
pub(crate) struct Record {
    pub(crate) handlers: HandlerChain,
    pub(crate) uses: IdMap<usize>,
    pub(crate) requests: Vec<RecordedRequest>,
    /// Requests the journal dropped to stay within its capacity.
    pub(crate) dropped: usize,
    pub(crate) failures: Vec<String>,
}

impl Scope {
    pub(crate) fn root(engine_id: u64, handlers: Vec<Handler>) -> Self {
        let initial = HandlerChain::from_handlers(handlers);
        Scope {
            #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
            id: next_scope_id(),
            engine_id,
            root: true,
            state: Mutex::new(ScopeState {
                current: initial.clone(),
                initial,
                used: IdSet::default(),
                calls: IdMap::default(),
                uses: IdMap::default(),
                journal: Journal::default(),
                failures: Vec::new(),
            }),
            exhausted_any: AtomicBool::new(false),
            values: ScopeValues::default(),
            ending: Ending::default(),
        }
    }

    /// A boundary scope starting from this scope's full current list, all of
    /// it counted as initial.
    #[cfg(not(target_arch = "wasm32"))] // no boundaries in the browser yet
    pub(crate) fn child(&self) -> Self {
        let state = self.lock();
        Scope {
            #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
            id: next_scope_id(),
            engine_id: self.engine_id,
            root: false,
            state: Mutex::new(ScopeState {
                initial: state.current.clone(),
                current: state.current.clone(),
                used: state.used.clone(),
                calls: state.calls.clone(),
                uses: state.uses.clone(),
                journal: Journal::default(),
                failures: Vec::new(),
            }),
            exhausted_any: AtomicBool::new(self.exhausted_any.load(Ordering::Relaxed)),
            values: self.values.fork(),
            ending: Ending::default(),
        }
    }

    #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// One more owner holds this boundary open.
    pub(crate) fn hold_open(&self) {
        self.ending.owners.fetch_add(1, Ordering::AcqRel);
    }

    /// An owner let go; the last one ends the boundary.
    pub(crate) fn let_go(&self) {
        if self.ending.owners.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.end();
        }
    }

    /// Ends the boundary (once; later owners do not open it again): its
    /// end callbacks run now, on this thread.
    pub(crate) fn end(&self) {
        if self.ending.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        // Taken under the lock `on_end` checks the flag under, after the
        // flag is set: each callback runs exactly once, here or there.
        // Run after the lock is let go: a callback takes locks of its own
        // (the listener's ports), which their holders may hold while they
        // add a callback.
        let callbacks = std::mem::take(
            &mut *self
                .ending
                .on_end
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for callback in callbacks {
            callback();
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn is_ended(&self) -> bool {
        self.ending.ended.load(Ordering::SeqCst)
    }

    /// Runs `callback` when the boundary ends (now, if it has).
    #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
    pub(crate) fn on_end(&self, callback: Box<dyn FnOnce() + Send>) {
        let mut on_end = self
            .ending
            .on_end
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self.is_ended() {
            drop(on_end);
            callback();
        } else {
            on_end.push(callback);
        }
    }

    pub(crate) fn engine_id(&self) -> u64 {
        self.engine_id
    }

    /// Whether this is its engine's root scope.
    pub(crate) fn is_root(&self) -> bool {
        self.root
    }

    /// The handlers' per-scope values, for a resolver call.
    pub(crate) fn values(&self) -> &ScopeValues {
        &self.values
    }

    fn lock(&self) -> MutexGuard<'_, ScopeState> {
        // Nothing panics while holding this lock; recover rather than cascade.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The list as it is now; iterate it without holding any lock.
    pub(crate) fn snapshot(&self) -> HandlerChain {
        self.lock().current.clone()
    }

    /// `use(...handlers)`: prepend runtime handlers, keeping their order.
    pub(crate) fn prepend(&self, handlers: Vec<Handler>) {
        let mut state = self.lock();
        state.current = state.current.prepend(handlers);
    }

    /// Adds `handlers` after every other, in the initial list too (so
    /// `reset_handlers` keeps them): where recorded exchanges go.
    #[cfg(feature = "har")]
    pub(crate) fn append(&self, handlers: Vec<Handler>) {
        let mut state = self.lock();
        let with = |chain: &HandlerChain| {
            let all = chain.iter().cloned().chain(handlers.iter().cloned());
            HandlerChain::from_handlers(all.collect())
        };
        state.initial = with(&state.initial);
        state.current = with(&state.current);
    }

    /// `resetHandlers()`: drop the runtime handlers added in this scope.
    pub(crate) fn reset(&self) {
        let mut state = self.lock();
        state.current = state.initial.clone();
    }

    /// `resetHandlers(...next)`: `next` becomes the initial list.
    pub(crate) fn reset_to(&self, handlers: Vec<Handler>) {
        let mut state = self.lock();
        state.initial = HandlerChain::from_handlers(handlers);
        state.current = state.initial.clone();
    }

    /// `restoreHandlers()`: re-arm every used handler and start every
    /// sequence and every per-scope value over.
    pub(crate) fn restore(&self) {
        let mut state = self.lock();
        state.used.clear();
        state.calls.clear();
        state.uses.clear();
        self.exhausted_any.store(false, Ordering::Relaxed);
        drop(state);
        self.values.clear();
    }

    pub(crate) fn is_used(&self, handler: &Handler) -> bool {
        (handler.is_once() || self.exhausted_any.load(Ordering::Relaxed))
            && self.lock().used.contains(&handler.id())
    }

    /// Marks a once-handler used; `false` if another request got it first.
    pub(crate) fn claim_once(&self, handler: &Handler) -> bool {
        self.lock().used.insert(handler.id())
    }

    /// Marks a handler used up: it stops matching in this scope.
    pub(crate) fn exhaust(&self, handler: &Handler) {
        self.lock().used.insert(handler.id());
        self.exhausted_any.store(true, Ordering::Relaxed);
    }

    /// Counts one more call of `handler`'s resolver; returns the calls before it.
    pub(crate) fn count_call(&self, handler: &Handler) -> usize {
        let mut state = self.lock();
        let count = state.calls.entry(handler.id()).or_insert(0);
        *count += 1;
        *count - 1
    }

    /// Counts one more request matched by `handler`, for its expectation.
    pub(crate) fn count_use(&self, handler: &Handler) {
        *self.lock().uses.entry(handler.id()).or_insert(0) += 1;
    }

    /// Appends a request to the journal (kept within `capacity`) and counts
    /// the use of the `handler` that answered it, for its expectation.
    pub(crate) fn record(
        &self,
        capacity: usize,
        request: &Request,
        handler: Option<&Handler>,
        answer: AnswerSummary,
        base_url: Option<&Arc<url::Url>>,
        journal: JournalValues,
    ) -> Option<u64> {
        if capacity == 0 {
            if let Some(handler) = handler {
                self.count_use(handler);
            }
            return None;
        }
        let mut entry = RecordedRequest::new(request, handler, answer, base_url);
        entry.set_journal_values(journal);
        let mut state = self.lock();
        if let Some(handler) = handler {
            *state.uses.entry(handler.id()).or_insert(0) += 1;
        }
        let evicted = state.journal.push(capacity, entry);
        let sequence = state.journal.last_sequence();
        drop(state);
        // Freed after the lock: the journal may hold an old request's last reference.
        drop(evicted);
        sequence
    }

    /// Adds a contract's `findings` to the journal entry numbered
    /// `sequence` (see [`Journal::add_findings`](crate::journal::Journal)).
    pub(crate) fn add_findings(
        &self,
        sequence: u64,
        findings: Vec<crate::handling::contract::Finding>,
    ) {
        self.lock().journal.add_findings(sequence, findings);
    }

    /// Records a strict-mode failure for `verify` to report.
    pub(crate) fn record_failure(&self, message: String) {
        let mut state = self.lock();
        if state.failures.len() < MAX_FAILURES {
            state.failures.push(message);
        }
    }

    /// The journal, oldest first.
    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().journal.entries().cloned().collect()
    }

    /// The journal's entries numbered after `sequence`, oldest first.
    pub(crate) fn requests_after(&self, sequence: u64) -> Vec<RecordedRequest> {
        self.lock()
            .journal
            .entries_after(sequence)
            .cloned()
            .collect()
    }

    /// Forgets the journal and the strict-mode failures.
    pub(crate) fn clear_requests(&self) {
        let mut state = self.lock();
        state.journal.clear();
        state.failures.clear();
    }

    /// What verification needs, copied under one lock.
    pub(crate) fn record_for_verification(&self) -> Record {
        let state = self.lock();
        Record {
            handlers: state.current.clone(),
            uses: state.uses.clone(),
            requests: state.journal.entries().cloned().collect(),
            dropped: state.journal.dropped(),
            failures: state.failures.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HttpResponse, namespace::http};

    fn headers(chain: &HandlerChain) -> Vec<String> {
        chain.iter().map(|h| h.header().to_owned()).collect()
    }

    #[test]
    fn prepend_keeps_argument_order_ahead_of_existing() {
        let scope = Scope::root(1, vec![http::get("/a", |_| HttpResponse::empty())]);
        scope.prepend(vec![
            http::get("/b", |_| HttpResponse::empty()),
            http::get("/c", |_| HttpResponse::empty()),
        ]);
        scope.prepend(vec![http::get("/d", |_| HttpResponse::empty())]);
        assert_eq!(
            headers(&scope.snapshot()),
            ["GET /d", "GET /b", "GET /c", "GET /a"]
        );
        scope.reset();
        assert_eq!(headers(&scope.snapshot()), ["GET /a"]);
    }

    #[test]
    fn long_chains_drop_without_recursion() {
        let scope = Scope::root(1, vec![]);
        let handler = http::get("/x", |_| HttpResponse::empty());
        for _ in 0..200_000 {
            scope.prepend(vec![handler.clone()]);
        }
        drop(scope);
    }

    // Its handler mix includes GraphQL operation handlers.
    #[cfg(feature = "graphql")]
    mod index_against_a_linear_scan {
        use proptest::prelude::*;
        use url::Url;

        use super::super::HandlerChain;
        use crate::engine::index::RequestKeys;
        use crate::handling::handler::MatchContext;
        use crate::handling::resolver::RequestId;
        use crate::matching::Predicate;
        use crate::{HttpResponse, Request};

        const PATTERNS: &[&str] = &[
            "/posts",
            "/posts/",
            "/posts/:id",
            "/posts/:id?",
            "/posts/:id/comments",
            "/Posts/:id+",
            "/files/:path*",
            "/files/*",
            "/users/John%20Doe",
            "/users/:name",
            "/caf\u{e9}",
            "/api/v1/items",
            "/api/*",
            "/:anything",
            "/",
            "*",
            "*/posts",
            "*/posts/:id",
            "https://api.example.com/posts",
            "https://api.example.com/posts/:id",
            "https://API.example.com/Posts/1",
            "http://api.example.com/posts",
            "https://api.example.com:443/users/:name",
            "http://localhost:3000/posts",
            "http://localhost:*/posts",
            "https://*.example.com/posts",
            "https://*/files/*",
            "https://:sub.example.com/posts/:id",
            "https://api.:region?.example.com/posts",
            "http://:host:3000/posts/:id?",
            "http://:host:*/files/*",
            "https://:tenant.example.com/users/:name",
            "*://:sub.example.com/posts",
            "http://127.0.0.1:8080/api/:version/items",
            "https://other.test/",
        ];
        const ORIGINS: &[&str] = &[
            "https://api.example.com",
            "https://API.Example.com",
            "http://api.example.com",
            "https://www.example.com",
            "http://localhost:3000",
            "http://localhost:4000",
            "http://127.0.0.1:8080",
            "https://other.test",
            "https://api.eu.example.com",
            "https://a.b.example.com",
            "http://localhost",
        ];
        const PATHS: &[&str] = &[
            "/",
            "/posts",
            "/posts/",
            "/POSTS",
            "/posts/1",
            "/Posts/1",
            "/posts/1/comments",
            "/posts/1/2",
            "/files",
            "/files/a",
            "/files/a/b/c",
            "/users/John%20Doe",
            "/users/john%20doe",
            "/caf%C3%A9",
            "/caf%c3%a9",
            "/api/v1/items",
            "/api/v2/items",
            "/api",
            "/x",
            "/postsx",
        ];
        const METHODS: &[::http::Method] = &[
            ::http::Method::GET,
            ::http::Method::POST,
            ::http::Method::DELETE,
        ];

        const OPERATIONS: &[&str] = &["GetUser", "GetPosts", "UpdatePost"];
        const ENDPOINTS: &[&str] = &[
            "https://api.example.com/graphql",
            "/graphql",
            "http://localhost:3000/*",
        ];
        /// Request bodies: named, anonymous, batched, invalid, not JSON.
        const BODIES: &[&str] = &[
            r#"{"query":"query GetUser { user { id } }"}"#,
            r#"{"query":"mutation UpdatePost { update }"}"#,
            r#"{"query":"{ user { id } }"}"#,
            r#"[{"query":"query GetPosts { posts }"},{"query":"query GetUser { user }"}]"#,
            r#"{"query":"query GetUser {"}"#,
            r#"{"title":"not graphql"}"#,
            "plain text",
        ];

        #[derive(Debug, Clone)]
        enum Spec {
            Pattern(usize, Option<usize>),
            Regex,
            Custom,
            /// `graphql::query` / `mutation` by exact name, optionally through a link.
            Operation {
                name: usize,
                mutation: bool,
                link: Option<usize>,
            },
            /// `graphql::operation()` (any operation).
            AnyOperation,
        }

        fn handler(spec: &Spec, links: &[crate::namespace::graphql::Link]) -> crate::Handler {
            match spec {
                Spec::Operation {
                    name,
                    mutation,
                    link,
                } => {
                    let name = OPERATIONS[*name];
                    match (link, mutation) {
                        (None, false) => {
                            crate::namespace::graphql::query(name, |_| HttpResponse::empty())
                        }
                        (None, true) => {
                            crate::namespace::graphql::mutation(name, |_| HttpResponse::empty())
                        }
                        (Some(l), false) => links[*l].query(name, |_| HttpResponse::empty()),
                        (Some(l), true) => links[*l].mutation(name, |_| HttpResponse::empty()),
                    }
                }
                Spec::AnyOperation => {
                    crate::namespace::graphql::operation(|_| HttpResponse::empty())
                }
                Spec::Pattern(pattern, Some(method)) => {
                    crate::namespace::http::on(METHODS[*method].clone(), PATTERNS[*pattern], |_| {
                        HttpResponse::empty()
                    })
                }
                Spec::Pattern(pattern, None) => {
                    crate::namespace::http::all(PATTERNS[*pattern], |_| HttpResponse::empty())
                }
                Spec::Regex => regex_handler(),
                Spec::Custom => crate::namespace::http::all(
                    Predicate::custom(|request: &Request| request.url().path().len() % 2 == 0),
                    |_| HttpResponse::empty(),
                ),
            }
        }

        /// A handler the index must always ask: a regex, or without the
        /// `regex` feature a closure doing the same.
        #[cfg(feature = "regex")]
        fn regex_handler() -> crate::Handler {
            crate::namespace::http::all(regex::Regex::new(r"/posts/\d+$").unwrap(), |_| {
                HttpResponse::empty()
            })
        }

        #[cfg(not(feature = "regex"))]
        fn regex_handler() -> crate::Handler {
            crate::namespace::http::all(
                Predicate::custom(|request: &Request| {
                    let path = request.url().path();
                    path.rsplit_once("/posts/").is_some_and(|(_, id)| {
                        !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
                    })
                }),
                |_| HttpResponse::empty(),
            )
        }

        fn spec() -> impl Strategy<Value = Spec> {
            prop_oneof![
                8 => (0..PATTERNS.len(), proptest::option::of(0..METHODS.len())).prop_map(|(p, m)| Spec::Pattern(p, m)),
                6 => (0..OPERATIONS.len(), proptest::bool::ANY, proptest::option::of(0..ENDPOINTS.len()))
                    .prop_map(|(name, mutation, link)| Spec::Operation { name, mutation, link }),
                1 => Just(Spec::AnyOperation),
                1 => Just(Spec::Regex),
                1 => Just(Spec::Custom),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn the_index_finds_exactly_the_handlers_a_scan_finds(
                // Several prepends of random sizes: small chunks are scanned,
                // large ones indexed, some merged.
                chunks in proptest::collection::vec(proptest::collection::vec(spec(), 0..40), 1..6),
                requests in proptest::collection::vec(
                    (0..ORIGINS.len(), 0..PATHS.len() + 1, 0..METHODS.len(), proptest::bool::ANY, proptest::option::of(0..BODIES.len())),
                    1..12,
                ),
            ) {
                // Handlers of one link share its endpoint (the index groups them).
                let links: Vec<_> = ENDPOINTS.iter().map(|e| crate::namespace::graphql::link(e)).collect();
                let mut chain = HandlerChain::default();
                for chunk in &chunks {
                    chain = chain.prepend(chunk.iter().map(|spec| handler(spec, &links)).collect());
                }
                for (origin, path, method, with_base, body) in requests {
                    // One extra path: the GraphQL endpoint.
                    let path = PATHS.get(path).copied().unwrap_or("/graphql");
                    let url = Url::parse(&format!("{}{}", ORIGINS[origin], path)).unwrap();
                    let base = with_base.then(|| Url::parse(ORIGINS[(origin + 1) % ORIGINS.len()]).unwrap());
                    let request = match body {
                        None => Request::new(METHODS[method].clone(), url.clone()),
                        Some(body) => {
                            let mut headers = ::http::HeaderMap::new();
                            headers.insert("content-type", ::http::HeaderValue::from_static("application/json"));
                            Request::from_parts(::http::Method::POST, url.clone(), headers, BODIES[body].into())
                        }
                    };
                    let context = MatchContext::new(&request, RequestId::next(), base.as_ref());
                    let scanned: Vec<_> = chain
                        .iter()
                        .filter(|h| h.try_match(&context).is_some())
                        .map(|h| h.header().to_owned())
                        .collect();
                    let keys = RequestKeys::new(request.method(), &url);
                    let candidates = chain.candidates(&keys, &context);
                    let indexed: Vec<_> = candidates
                        .iter()
                        .filter(|h| h.try_match(&context).is_some())
                        .map(|h| h.header().to_owned())
                        .collect();
                    prop_assert_eq!(&indexed, &scanned, "{} {}", METHODS[method], url);
                    // Candidates come in list order: a subsequence of the chain.
                    let mut all = chain.iter();
                    for candidate in &candidates {
                        prop_assert!(all.any(|h| std::ptr::eq(h, *candidate)), "candidates out of order");
                    }
                }
            }
        }
    }
}
