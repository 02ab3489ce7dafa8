//! The handler list and the scopes that hold it.
//!
//! A scope (the server itself, or one call of a boundary) holds two things:
//! its *initial* handlers and its *current* list, which is the runtime
//! handlers added with `use_handlers` in front of the initial ones. The list
//! is a persistent chain of immutable chunks, each `use_handlers` call
//! prepending one chunk, so:
//!
//! - entering a boundary copies one pointer (the boundary's initial list *is*
//!   the enclosing scope's current list), whatever the number of handlers;
//! - `reset_handlers()` inside a boundary drops exactly the chunks added in it;
//! - a lookup takes a snapshot (one pointer) and iterates without holding a lock.
//!
//! `once` state is per scope: a scope records which once-handlers it has
//! used; a new boundary starts from a copy of its enclosing scope's record.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::handler::{Handler, HandlerId};

/// An immutable, shareable handler list.
#[derive(Clone, Default)]
pub(crate) struct HandlerChain(Option<Arc<Link>>);

struct Link {
    handlers: Box<[Handler]>,
    next: HandlerChain,
}

impl HandlerChain {
    pub fn from_handlers(handlers: Vec<Handler>) -> Self {
        HandlerChain::default().prepend(handlers)
    }

    /// `handlers` (kept in their order) in front of this list.
    pub fn prepend(&self, handlers: Vec<Handler>) -> Self {
        if handlers.is_empty() {
            return self.clone();
        }
        HandlerChain(Some(Arc::new(Link {
            handlers: handlers.into_boxed_slice(),
            next: self.clone(),
        })))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Handler> {
        std::iter::successors(self.0.as_deref(), |link| link.next.0.as_deref())
            .flat_map(|link| link.handlers.iter())
    }
}

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
    id: u64,
    engine_id: u64,
    state: Mutex<ScopeState>,
}

fn next_scope_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone)]
struct ScopeState {
    initial: HandlerChain,
    current: HandlerChain,
    used_once: HashSet<HandlerId>,
}

impl Scope {
    pub fn root(engine_id: u64, handlers: Vec<Handler>) -> Self {
        let initial = HandlerChain::from_handlers(handlers);
        Scope {
            id: next_scope_id(),
            engine_id,
            state: Mutex::new(ScopeState {
                current: initial.clone(),
                initial,
                used_once: HashSet::new(),
            }),
        }
    }

    /// A boundary scope starting from this scope's full current list, all of
    /// it counted as initial.
    pub fn child(&self) -> Self {
        let state = self.lock();
        Scope {
            id: next_scope_id(),
            engine_id: self.engine_id,
            state: Mutex::new(ScopeState {
                initial: state.current.clone(),
                current: state.current.clone(),
                used_once: state.used_once.clone(),
            }),
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn engine_id(&self) -> u64 {
        self.engine_id
    }

    fn lock(&self) -> MutexGuard<'_, ScopeState> {
        // Nothing panics while holding this lock; recover rather than cascade.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The list as it is now; iterate it without holding any lock.
    pub fn snapshot(&self) -> HandlerChain {
        self.lock().current.clone()
    }

    /// `use(...handlers)`: prepend runtime handlers, keeping their order.
    pub fn prepend(&self, handlers: Vec<Handler>) {
        let mut state = self.lock();
        state.current = state.current.prepend(handlers);
    }

    /// `resetHandlers()`: drop the runtime handlers added in this scope.
    pub fn reset(&self) {
        let mut state = self.lock();
        state.current = state.initial.clone();
    }

    /// `resetHandlers(...next)`: `next` becomes the initial list.
    pub fn reset_to(&self, handlers: Vec<Handler>) {
        let mut state = self.lock();
        state.initial = HandlerChain::from_handlers(handlers);
        state.current = state.initial.clone();
    }

    /// `restoreHandlers()`: re-arm every used once-handler.
    pub fn restore(&self) {
        self.lock().used_once.clear();
    }

    pub fn is_used(&self, handler: &Handler) -> bool {
        handler.is_once() && self.lock().used_once.contains(&handler.id())
    }

    /// Marks a once-handler used; `false` if another request got it first.
    pub fn claim_once(&self, handler: &Handler) -> bool {
        self.lock().used_once.insert(handler.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HttpResponse, http};

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
}
