//! Boundaries reachable through the listener: by the proxy credential
//! handed out in them (`mocklib:scope-N`), or by a port of their own.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::engine::list::Scope;

/// The user name of scope credentials: `mocklib:scope-N`.
pub(super) const CREDENTIAL_USER: &str = "mocklib";

/// Boundaries reachable through the listener: by the id in a proxy
/// credential, or by a port of their own. Weak, so a boundary that ends is
/// not kept alive by the addresses handed out in it.
#[derive(Default)]
pub(crate) struct ScopeRegistry {
    by_id: Mutex<HashMap<u64, Weak<Scope>>>,
    pub(super) ports: Mutex<HashMap<u64, SocketAddr>>,
}

/// What a proxy credential names.
pub(crate) enum CredentialScope {
    /// No mocklib credential: the root scope.
    None,
    /// A live boundary.
    Live(Arc<Scope>),
    /// A mocklib credential whose boundary has ended (or never existed).
    Ended(String),
}

impl ScopeRegistry {
    pub(super) fn register(&self, scope: &Arc<Scope>) {
        let mut by_id = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget ended boundaries now and then so the map stays small.
        if by_id.len() > 64 && by_id.len().is_power_of_two() {
            by_id.retain(|_, weak| weak.strong_count() > 0);
        }
        by_id.insert(scope.id(), Arc::downgrade(scope));
    }

    pub(super) fn forget_port(&self, address: SocketAddr) {
        self.ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, port| *port != address);
    }

    /// The live boundary whose own port is `port`.
    pub(super) fn scope_on_port(&self, port: u16) -> Option<Arc<Scope>> {
        let id = self
            .ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(_, address)| address.port() == port)
            .map(|(id, _)| *id)?;
        self.by_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .and_then(Weak::upgrade)
    }

    pub(super) fn is_scope_port(&self, port: u16) -> bool {
        self.ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .any(|address| address.port() == port)
    }

    /// The scope named by a `Proxy-Authorization` header value.
    pub(super) fn scope_named_by(&self, header: Option<&http::HeaderValue>) -> CredentialScope {
        let Some(credentials) = header
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                value
                    .strip_prefix("Basic ")
                    .or_else(|| value.strip_prefix("basic "))
            })
            .and_then(|encoded| crate::support::base64::decode(encoded.trim()))
            .and_then(|decoded| String::from_utf8(decoded).ok())
        else {
            return CredentialScope::None;
        };
        let Some((user, password)) = credentials.split_once(':') else {
            return CredentialScope::None;
        };
        if user != CREDENTIAL_USER {
            return CredentialScope::None;
        }
        let scope = password
            .strip_prefix("scope-")
            .and_then(|id| id.parse::<u64>().ok())
            .and_then(|id| {
                self.by_id
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&id)
                    .and_then(Weak::upgrade)
            });
        match scope {
            Some(scope) => CredentialScope::Live(scope),
            None => CredentialScope::Ended(password.to_owned()),
        }
    }
}
