//! The engine: resolves one request against the handler list of its scope.
//!
//! Every front door (tower, reqwest-middleware, the loopback listener, the
//! browser) hands the engine a canonical [`Request`] and turns the
//! [`Outcome`] back into what its client expects. The engine does no I/O.
//!
//! The lookup walks the scope's list in order:
//!
//! 1. a handler whose predicate does not match (or a used once-handler) is skipped;
//! 2. a matching handler runs its resolver; if it returns nothing, the lookup
//!    goes on (fall-through);
//! 3. the first response wins: a mocked response, a network error, or
//!    `passthrough()` (perform the request as it is, stop the lookup);
//! 4. if handlers matched but none responded, the request is performed as it
//!    is and counts as handled;
//! 5. if none matched, the unhandled-request strategy decides.

// Layer 6, the handler list: scopes, the index, the journal, verification.
pub mod boundary;
pub(crate) mod index;
pub mod journal;
pub(crate) mod list;
pub(crate) mod suggest;
pub mod verify;

// Layer 7, the lookup and what observes it.
mod checked;
pub mod events;
mod hooks;
mod lookup;
mod options;
mod outcome;

use hooks::Hooks;
use lookup::{Lookup, Step};
pub(crate) use options::InterceptOptions;
pub use options::UnhandledRequest;
pub use outcome::{NetworkError, NetworkErrorKind, Outcome, Passthrough};

use std::sync::{Arc, PoisonError, RwLock};

use crate::support::maybe_send::MaybeSend;
use url::Url;

use crate::engine::events::Events;
use crate::engine::list::Scope;
use crate::handling::contract;
use crate::handling::handler::Handler;
use crate::message::exchange::ExchangeSink;
use crate::message::request::Request;
use boundary::Scoped;

/// One server's (or worker's) state: handler lists, events, options.
pub(crate) struct Engine {
    id: u64,
    root: Arc<Scope>,
    events: Events,
    hooks: RwLock<Arc<Hooks>>,
}

impl Engine {
    pub(crate) fn new(handlers: Vec<Handler>) -> Arc<Self> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Arc::new(Engine {
            id,
            root: Arc::new(Scope::root(id, handlers)),
            events: Events::default(),
            hooks: RwLock::new(Arc::new(Hooks {
                listening: None,
                performer: None,
                recorder: None,
                contracts: Arc::new([]),
            })),
        })
    }

    fn hooks(&self) -> Arc<Hooks> {
        Arc::clone(&self.hooks.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the hooks with a changed copy.
    fn change_hooks(&self, change: impl FnOnce(&mut Hooks)) {
        let mut hooks = self.hooks.write().unwrap_or_else(PoisonError::into_inner);
        let mut changed = Hooks::clone(&hooks);
        change(&mut changed);
        *hooks = Arc::new(changed);
    }

    /// Sets how `bypass()` performs requests for this engine.
    #[cfg(any(feature = "net", target_arch = "wasm32"))]
    pub(crate) fn set_performer(&self, performer: Arc<dyn crate::message::request::Performer>) {
        self.change_hooks(|hooks| hooks.performer = Some(performer));
    }

    pub(crate) fn events(&self) -> &Events {
        &self.events
    }

    /// Records every request performed for real into `recorder` (`None`:
    /// stops recording); while one is set, unhandled requests are performed
    /// for real without the unhandled-request strategy.
    pub(crate) fn set_recorder(&self, recorder: Option<Arc<dyn ExchangeSink>>) {
        self.change_hooks(|hooks| hooks.recorder = recorder);
    }

    /// Checks every mocked answer against `attached` from now on, beside
    /// the contracts attached before.
    pub(crate) fn attach_contract(&self, attached: contract::Attached) {
        self.change_hooks(|hooks| {
            let mut all = hooks.contracts.to_vec();
            all.push(attached);
            hooks.contracts = all.into();
        });
    }

    pub(crate) fn listen(&self, mut options: InterceptOptions) {
        // The caller's subscriber (a test's scoped one, say), for messages
        // about requests resolved on threads without one: the listener's.
        options.log_dispatch = crate::support::log::current_dispatch();
        self.change_hooks(|hooks| hooks.listening = Some(Arc::new(options)));
        self.events.set_enabled(true);
    }

    pub(crate) fn close(&self) {
        self.change_hooks(|hooks| hooks.listening = None);
        self.events.set_enabled(false);
    }

    pub(crate) fn listen_options(&self) -> Option<Arc<InterceptOptions>> {
        self.hooks().listening.clone()
    }

    /// The scope the calling code runs in: its innermost boundary, or the root.
    pub(crate) fn current_scope(&self) -> Arc<Scope> {
        boundary::current(self.id).unwrap_or_else(|| Arc::clone(&self.root))
    }

    /// Names this engine's scopes among every server's.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The server's own scope, outside any boundary.
    pub(crate) fn root_scope(&self) -> &Arc<Scope> {
        &self.root
    }

    /// The current scope's handlers in lookup order (`list_handlers`).
    pub(crate) fn list_handlers(&self) -> Vec<Handler> {
        self.current_scope().snapshot().iter().cloned().collect()
    }

    /// Whether `scope` is this engine's root (no boundary).
    #[cfg(all(feature = "net", not(target_arch = "wasm32")))]
    pub(crate) fn is_root(&self, scope: &Arc<Scope>) -> bool {
        Arc::ptr_eq(scope, &self.root)
    }

    /// A function creating a fresh boundary scope from the caller's scope.
    #[cfg(not(target_arch = "wasm32"))] // no boundaries in the browser yet
    pub(crate) fn boundary_factory(self: &Arc<Self>) -> boundary::NewScope {
        let engine = Arc::clone(self);
        boundary::NewScope(Arc::new(move || Arc::new(engine.current_scope().child())))
    }

    /// Resolves `request` in the caller's current scope. `base_url` is the
    /// front door's own origin, if it has one.
    ///
    /// The scope is taken now, at the call, and the returned future runs its
    /// resolvers inside it wherever it is polled.
    pub(crate) fn handle(
        &self,
        request: Request,
        base_url: Option<Arc<Url>>,
    ) -> impl std::future::Future<Output = Outcome> + MaybeSend + 'static + use<> {
        self.handle_in(self.current_scope(), request, base_url)
    }

    /// As [`handle`](Self::handle), for a page's navigation or static asset:
    /// when no handler answers, it is performed as it is, without the
    /// unhandled-request strategy's warning or error (MSW ignores common
    /// assets so); a custom strategy still sees it, as MSW's does.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn handle_asset(
        &self,
        request: Request,
        base_url: Option<Arc<Url>>,
    ) -> impl std::future::Future<Output = Outcome> + MaybeSend + 'static + use<> {
        let options = self.listen_options().map(|options| {
            if matches!(options.on_unhandled_request, UnhandledRequest::Custom(_)) {
                return options;
            }
            let mut quiet = InterceptOptions::clone(&options);
            quiet.on_unhandled_request = UnhandledRequest::Bypass;
            Arc::new(quiet)
        });
        self.resolve_with(
            self.current_scope(),
            request,
            base_url,
            self.hooks(),
            options,
        )
    }

    /// Resolves `request` in `scope` (taken earlier, in the caller's task).
    pub(crate) fn handle_in(
        &self,
        scope: Arc<Scope>,
        request: Request,
        base_url: Option<Arc<Url>>,
    ) -> impl std::future::Future<Output = Outcome> + MaybeSend + 'static + use<> {
        let hooks = self.hooks();
        let options = hooks.listening.clone();
        self.resolve_with(scope, request, base_url, hooks, options)
    }

    /// Resolves `request` in `scope` under `options` (`None`: not listening).
    fn resolve_with(
        &self,
        scope: Arc<Scope>,
        mut request: Request,
        base_url: Option<Arc<Url>>,
        hooks: Arc<Hooks>,
        options: Option<Arc<InterceptOptions>>,
    ) -> impl std::future::Future<Output = Outcome> + MaybeSend + 'static + use<> {
        let events = self.events.clone();
        if let Some(performer) = &hooks.performer {
            request.set_performer(Arc::clone(performer));
        }
        let handling = match options {
            None => Handling::Done(Some(Outcome::Passthrough(Passthrough {
                request,
                request_id: None,
                events,
                recording: None,
            }))),
            Some(options) => Handling::Start(Some(Start {
                dispatch: options.log_dispatch.clone(),
                lookup: Lookup {
                    scope: Arc::clone(&scope),
                    events,
                    options,
                    base_url: None,
                    hooks,
                    last_recorded: std::cell::Cell::new(None),
                },
                request,
                base_url,
            })),
        };
        Scoped::new(scope, handling)
    }
}

/// A request being resolved: the lookup runs at the first poll (inside the
/// scope, which [`Scoped`] enters), at once as far as resolvers answer at
/// once; only an async resolver leaves a future to poll on.
enum Handling {
    Start(Option<Start>),
    Waiting(crate::support::maybe_send::BoxFuture<Outcome>),
    Done(Option<Outcome>),
}

/// What a lookup starts from.
struct Start {
    lookup: Lookup,
    request: Request,
    base_url: Option<Arc<Url>>,
    dispatch: Option<tracing::Dispatch>,
}

impl std::future::Future for Handling {
    type Output = Outcome;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Outcome> {
        loop {
            match &mut *self {
                Handling::Start(start) => {
                    let Some(start) = start.take() else {
                        return std::task::Poll::Pending;
                    };
                    let Start {
                        lookup,
                        request,
                        base_url,
                        dispatch,
                    } = start;
                    // A thread with no subscriber of its own (the listener's)
                    // logs to the one `listen` was called under, so its
                    // messages reach the test that caused them.
                    let dispatch = dispatch.filter(|_| !crate::support::log::has_subscriber());
                    let step = match &dispatch {
                        Some(dispatch) => tracing::dispatcher::with_default(dispatch, || {
                            lookup.start(request, base_url, cx)
                        }),
                        None => lookup.start(request, base_url, cx),
                    };
                    *self = match step {
                        // Straight out: through `Done(Some(..))` the outcome
                        // would be moved twice more.
                        Step::Done(outcome) => {
                            *self = Handling::Done(None);
                            return std::task::Poll::Ready(outcome);
                        }
                        Step::Wait(future) => Handling::Waiting(match dispatch {
                            Some(dispatch) => {
                                Box::pin(tracing::instrument::WithSubscriber::with_subscriber(
                                    future, dispatch,
                                ))
                            }
                            None => future,
                        }),
                    };
                }
                Handling::Waiting(future) => return future.as_mut().poll(cx),
                Handling::Done(outcome) => {
                    return match outcome.take() {
                        Some(outcome) => std::task::Poll::Ready(outcome),
                        // Polled after it finished: futures may not be.
                        None => std::task::Poll::Pending,
                    };
                }
            }
        }
    }
}
