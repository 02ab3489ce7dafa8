//! Values a handler keeps per scope: [`ScopeLocal`], and the store each
//! scope holds them in.
//!
//! A scope (the server, or one call of a boundary) owns a [`ScopeValues`];
//! a boundary's store starts as a copy of its enclosing scope's, the way its
//! `once` record does. The copy is cheap whatever the values hold: each
//! value sits behind an `Arc` and is cloned only when one of the scopes
//! sharing it changes it (`Arc::make_mut`).

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// A value of type `T` that each scope has its own copy of, as a
/// `thread_local!` has one per thread: what a resolver or a handler kind
/// uses to keep state that boundaries isolate (the collections of
/// [`rest::resource`](crate::rest::resource) are kept in one).
///
/// A scope's copy is made on first use: from the enclosing scope's copy as
/// it was when the boundary was entered, or with `init` when no enclosing
/// scope had one. Changes made inside a boundary are not seen outside it;
/// [`restore_handlers`](crate::node::Server::restore_handlers) starts every
/// value of the scope over from `init`. Read and change it through
/// [`ResolverArgs::scope_local`](crate::ResolverArgs::scope_local) (or
/// [`CallContext::scope_local`](crate::resolver::CallContext::scope_local)
/// in a handler kind of your own). Clones of a `ScopeLocal` name the same
/// value.
///
/// ```
/// use mocklib::{http, HttpResponse, boundary::ScopeLocal, node::setup_server};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let visits = ScopeLocal::new(|| 0_u32);
/// let server = setup_server([http::get("https://api.example.com/visits", move |args| {
///     let count = args.scope_local(&visits, |n| {
///         *n += 1;
///         *n
///     });
///     HttpResponse::text(count.to_string())
/// })]);
/// server.listen();
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(server.middleware())
///     .build();
/// async fn visit(client: &reqwest_middleware::ClientWithMiddleware) -> String {
///     let response = client.get("https://api.example.com/visits").send().await.unwrap();
///     response.text().await.unwrap()
/// }
/// assert_eq!(visit(&client).await, "1");
///
/// // A boundary counts on from the server's 1; the server does not see its visits.
/// let inside = server.boundary({
///     let client = client.clone();
///     move || {
///         let client = client.clone();
///         async move { [visit(&client).await, visit(&client).await] }
///     }
/// });
/// assert_eq!(inside().await, ["2", "3"]);
/// assert_eq!(visit(&client).await, "2");
/// # Ok(())
/// # }
/// ```
pub struct ScopeLocal<T> {
    key: Arc<Key<T>>,
}

struct Key<T> {
    /// Unique in the process: names the value in every scope's store.
    id: u64,
    init: Box<dyn Fn() -> T + Send + Sync>,
}

impl<T: Clone + Send + Sync + 'static> ScopeLocal<T> {
    /// A value made with `init` in each scope that uses it first (when no
    /// enclosing scope had one to copy).
    pub fn new(init: impl Fn() -> T + Send + Sync + 'static) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ScopeLocal {
            key: Arc::new(Key {
                id: NEXT.fetch_add(1, Ordering::Relaxed),
                init: Box::new(init),
            }),
        }
    }

    pub(crate) fn init(&self) -> T {
        (self.key.init)()
    }
}

impl<T> Clone for ScopeLocal<T> {
    fn clone(&self) -> Self {
        ScopeLocal {
            key: Arc::clone(&self.key),
        }
    }
}

impl<T> std::fmt::Debug for ScopeLocal<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeLocal")
            .field("id", &self.key.id)
            .finish_non_exhaustive()
    }
}

/// The per-scope values of one scope; clones share them.
#[derive(Clone, Default)]
pub(crate) struct ScopeValues(Arc<Mutex<HashMap<u64, Slot>>>);

struct Slot {
    /// The `ScopeLocal`'s key: once no handler holds it, the value can never
    /// be asked for again and is dropped at the next insertion.
    owner: Weak<dyn Any + Send + Sync>,
    value: Box<dyn Value>,
}

/// A value behind its `Arc`, type-erased: copied into a boundary by
/// reference, cloned on its first change there.
trait Value: Send + Sync {
    #[cfg(not(target_arch = "wasm32"))] // boundaries only
    fn share(&self) -> Box<dyn Value>;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Clone + Send + Sync + 'static> Value for Arc<T> {
    #[cfg(not(target_arch = "wasm32"))]
    fn share(&self) -> Box<dyn Value> {
        Box::new(Arc::clone(self))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl ScopeValues {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Slot>> {
        // A panicking `f` leaves its value as it left it; the others are fine.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new store starting with this one's values (shared until changed).
    #[cfg(not(target_arch = "wasm32"))] // boundaries only
    pub(crate) fn fork(&self) -> Self {
        let values = self
            .lock()
            .iter()
            .filter(|(_, slot)| slot.owner.strong_count() > 0)
            .map(|(id, slot)| {
                let slot = Slot {
                    owner: slot.owner.clone(),
                    value: slot.value.share(),
                };
                (*id, slot)
            })
            .collect();
        ScopeValues(Arc::new(Mutex::new(values)))
    }

    /// Forgets every value: each starts over from its `init`.
    pub(crate) fn clear(&self) {
        let old = std::mem::take(&mut *self.lock());
        // Dropped after the lock: a value's drop may be arbitrary code.
        drop(old);
    }

    /// Runs `f` on `values`' copy of `local`; without a store (outside a
    /// lookup), on a fresh value.
    pub(crate) fn with_or_fresh<T, R>(
        values: Option<&ScopeValues>,
        local: &ScopeLocal<T>,
        f: impl FnOnce(&mut T) -> R,
    ) -> R
    where
        T: Clone + Send + Sync + 'static,
    {
        match values {
            Some(values) => values.with(local, f),
            None => f(&mut local.init()),
        }
    }

    /// Runs `f` on this store's copy of `local`, made first if missing.
    pub(crate) fn with<T, R>(&self, local: &ScopeLocal<T>, f: impl FnOnce(&mut T) -> R) -> R
    where
        T: Clone + Send + Sync + 'static,
    {
        let id = local.key.id;
        if !self.lock().contains_key(&id) {
            // Made outside the lock: `init` is the user's code.
            let value = Arc::new(local.init());
            let mut values = self.lock();
            if !values.contains_key(&id) {
                values.retain(|_, slot| slot.owner.strong_count() > 0);
                let owner: Arc<dyn Any + Send + Sync> = local.key.clone();
                values.insert(
                    id,
                    Slot {
                        owner: Arc::downgrade(&owner),
                        value: Box::new(value),
                    },
                );
            }
        }
        let mut values = self.lock();
        let slot = values.get_mut(&id).expect("inserted above");
        let value = slot
            .value
            .as_any_mut()
            .downcast_mut::<Arc<T>>()
            .expect("a ScopeLocal's id names values of its type only");
        f(Arc::make_mut(value))
    }
}

impl std::fmt::Debug for ScopeValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeValues")
            .field("len", &self.lock().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_starts_from_the_parent_and_changes_apart() {
        let local = ScopeLocal::new(Vec::<u32>::new);
        let root = ScopeValues::default();
        root.with(&local, |v| v.push(1));
        let child = root.fork();
        child.with(&local, |v| v.push(2));
        root.with(&local, |v| v.push(3));
        assert_eq!(root.with(&local, |v| v.clone()), [1, 3]);
        assert_eq!(child.with(&local, |v| v.clone()), [1, 2]);
        // A value the parent never made starts from `init` in the child.
        let other = ScopeLocal::new(|| 7_u8);
        assert_eq!(child.with(&other, |v| *v), 7);
        root.clear();
        assert!(root.with(&local, |v| v.is_empty()));
    }

    #[test]
    fn values_of_dropped_locals_are_dropped() {
        let root = ScopeValues::default();
        let gone = ScopeLocal::new(|| 1_u8);
        root.with(&gone, |_| ());
        drop(gone);
        let kept = ScopeLocal::new(|| 2_u8);
        root.with(&kept, |_| ());
        assert_eq!(root.lock().len(), 1);
    }
}
