//! One poison-tolerant lock for the command's shared state (the admin
//! API's, the callback channels'), in a module of its own below both.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// The value behind `mutex`, even if a holder panicked: nothing here
/// leaves shared state half-changed.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
