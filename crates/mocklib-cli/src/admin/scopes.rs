//! Who the admin API acts for: the server's own handler list (the root) or
//! one scope — a [`Boundary`] opened for a test worker in another process,
//! with its own port, proxy credential, handlers, journal and expectations.
//!
//! Every state's list is laid out the same way, so the listener's own
//! endpoints always answer first, even when a test adds `ALL *`:
//!
//! ```text
//! endpoints, [added..., endpoints,] base..., recorded...
//! ```
//!
//! The base is the files' handlers (or, after `PUT`, the list given); what
//! a test adds goes ahead of it with `use_handlers`, so removing what was
//! added is `reset_handlers` and costs nothing whatever the files hold.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mocklib::node::Server;
use mocklib::{Handler, boundary::Boundary};
use url::Url;

use crate::callback_entry::Callbacks;

/// One handler list the admin API changes.
#[derive(Default)]
pub(crate) struct ScopeState {
    /// `None`: the server's own list, outside any boundary.
    pub(crate) boundary: Option<Boundary>,
    /// Handlers added at runtime, first first (their lookup order).
    pub(crate) added: Vec<Handler>,
    /// A list given by `PUT` in place of the files' (MSW's
    /// `resetHandlers(...handlers)`); a reload of the files leaves it.
    pub(crate) replaced: Option<Vec<Handler>>,
}

impl ScopeState {
    /// Runs `f` in this state's scope, whatever scope the caller runs in
    /// (a request through one scope's proxy may ask about another's).
    pub(crate) fn within<T>(&self, server: &Server, f: impl FnOnce() -> T) -> T {
        match &self.boundary {
            Some(boundary) => boundary.in_scope(f),
            None => server.at_root(f),
        }
    }
}

/// A scope opened through the admin API.
pub(crate) struct ScopeEntry {
    pub(crate) state: ScopeState,
    /// Its own origin, `http://127.0.0.1:PORT`.
    pub(crate) url: Url,
    pub(crate) proxy_url: Url,
    /// What a child process of this scope needs (`server.env()` in it).
    pub(crate) env: Vec<(String, String)>,
    /// The last admin request for it: a scope nobody asks about for the
    /// idle timeout, and nobody holds, is ended.
    pub(crate) last_seen: Instant,
    /// Requests holding it open (`/__mocklib/hold`).
    pub(crate) holds: usize,
}

/// Every state, and what their lists are made of.
pub(crate) struct Scopes {
    pub(crate) root: ScopeState,
    pub(crate) opened: BTreeMap<u64, ScopeEntry>,
    next_id: u64,
    /// The listener's own endpoints, at the head of every list.
    pub(crate) endpoints: Vec<Handler>,
    /// The files' handlers as last loaded (the base of a reset to files).
    pub(crate) files: Vec<Handler>,
    /// The callback channels, which end with their scopes.
    pub(crate) callbacks: Option<Callbacks>,
}

impl Default for Scopes {
    fn default() -> Self {
        Scopes {
            root: ScopeState::default(),
            opened: BTreeMap::new(),
            next_id: 1,
            endpoints: Vec::new(),
            files: Vec::new(),
            callbacks: None,
        }
    }
}

impl Scopes {
    /// The files were loaded again: every list on the files' base is
    /// rebased on them (what each added stays ahead; what `record`
    /// appended stays behind). Lists given by `PUT` stay as they are, and
    /// so do scopes opened on one given at the root.
    pub(crate) fn reload(&mut self, server: &Server, files: Vec<Handler>) {
        if self.root.replaced.is_none() {
            let base = self.base_of(server, &self.root);
            let recorded = base.get(self.files.len()..).unwrap_or_default();
            let base: Vec<Handler> = files.iter().chain(recorded).cloned().collect();
            self.rebase(server, &self.root, base.clone());
            for scope in self.opened.values() {
                if scope.state.replaced.is_none() {
                    self.rebase(server, &scope.state, base.clone());
                }
            }
        }
        self.files = files;
    }

    pub(crate) fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// How many handlers come before the base in `state`'s list.
    pub(crate) fn head_len(&self, state: &ScopeState) -> usize {
        let endpoints = self.endpoints.len();
        if state.added.is_empty() {
            endpoints
        } else {
            endpoints + state.added.len() + endpoints
        }
    }

    /// `state`'s list becomes the endpoints, its added handlers and `base`.
    pub(crate) fn rebase(&self, server: &Server, state: &ScopeState, base: Vec<Handler>) {
        state.within(server, || {
            server.reset_handlers_to(self.endpoints.iter().cloned().chain(base));
            self.put_added(server, state);
        });
    }

    /// `state`'s added handlers, in its scope, ahead of its base (after
    /// `reset_handlers` or a rebase).
    fn put_added(&self, server: &Server, state: &ScopeState) {
        if !state.added.is_empty() {
            let head = self.endpoints.iter().chain(&state.added).cloned();
            server.use_handlers(head.collect::<Vec<_>>());
        }
    }

    /// Puts `state`'s added handlers back over its base, after they
    /// changed.
    pub(crate) fn refresh_added(&self, server: &Server, state: &ScopeState) {
        state.within(server, || {
            server.reset_handlers();
            self.put_added(server, state);
        });
    }

    /// The base of `state`'s list as it is (its files' or given handlers,
    /// then what `record` appended).
    pub(crate) fn base_of(&self, server: &Server, state: &ScopeState) -> Vec<Handler> {
        let list = state.within(server, || server.list_handlers());
        list.get(self.head_len(state)..)
            .unwrap_or_default()
            .to_vec()
    }

    /// Ends scope `id`, whatever its clients still hold: before this
    /// returns, its callback channel is closed (1001, its calls in flight
    /// answered 502), its port is closed and its proxy credential refused;
    /// the connections kept to it close, a request still arriving on one
    /// answered `410`, and its streams end (`Boundary::end`). Whether it
    /// was open.
    ///
    /// Ended explicitly, not by dropping its `Boundary`: a clone of it may
    /// live on (the live page's event stream holds one).
    pub(crate) fn end(&mut self, id: u64) -> bool {
        match self.opened.remove(&id) {
            Some(scope) => {
                // First: a channel held on the server's origin
                // (`scopes/{id}/callbacks`) is no connection of the scope's.
                if let Some(callbacks) = &self.callbacks {
                    callbacks.end(scope.proxy_url.as_str());
                }
                if let Some(boundary) = &scope.state.boundary {
                    boundary.end();
                }
                true
            }
            None => false,
        }
    }

    /// Ends scopes that nobody held or asked about for `idle`, as
    /// [`end`](Self::end) does. A scope whose callback channel is open is
    /// held: its client is there.
    pub(crate) fn expire(&mut self, now: Instant, idle: Duration) -> Vec<u64> {
        let channel_open = |scope: &ScopeEntry| {
            self.callbacks
                .as_ref()
                .is_some_and(|callbacks| callbacks.is_open(scope.proxy_url.as_str()))
        };
        let ended: Vec<u64> = self
            .opened
            .iter()
            .filter(|(_, scope)| {
                scope.holds == 0
                    && now.duration_since(scope.last_seen) >= idle
                    && !channel_open(scope)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in &ended {
            self.end(*id);
        }
        ended
    }

    /// The state whose origin has `port`: the server's own, or a scope's.
    pub(crate) fn of_port(&self, port: Option<u16>, own: Option<u16>) -> Option<ScopeId> {
        if port == own {
            return Some(ScopeId::Root);
        }
        self.opened
            .iter()
            .find(|(_, scope)| scope.url.port() == port)
            .map(|(id, _)| ScopeId::Opened(*id))
    }

    pub(crate) fn get(&self, id: ScopeId) -> Option<&ScopeState> {
        match id {
            ScopeId::Root => Some(&self.root),
            ScopeId::Opened(id) => self.opened.get(&id).map(|scope| &scope.state),
        }
    }

    /// `id`'s state; the root when it has ended (callers checked it had
    /// not, under the same lock).
    pub(crate) fn root_or(&self, id: ScopeId) -> &ScopeState {
        self.get(id).unwrap_or(&self.root)
    }

    pub(crate) fn get_mut(&mut self, id: ScopeId) -> Option<&mut ScopeState> {
        match id {
            ScopeId::Root => Some(&mut self.root),
            ScopeId::Opened(id) => self.opened.get_mut(&id).map(|scope| &mut scope.state),
        }
    }
}

/// Names a scope: the root, or one opened through the admin API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScopeId {
    Root,
    Opened(u64),
}
