//! Cleanup a resolver registers with
//! [`ResolverArgs::finalize`](crate::ResolverArgs::finalize): it runs once
//! the answer is over — after a mocked body (streamed or not) was sent in
//! full or abandoned by its client, or, for any other answer, when the
//! resolver returns — in reverse order of registration.
//!
//! The engine holds a [`FinalizeGuard`] while the resolver runs and hands it
//! to the mocked response's [`Body`](crate::Body); whoever drops the guard
//! last (the front door once the body is sent, or the engine when there is
//! no body to send, or a dropped request future) runs the cleanup. That
//! needs no timer and no task, so it works the same on every front door.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

/// One registered cleanup (`Send` on every target, so resolver arguments
/// stay `Send` in the browser too).
pub(crate) type Cleanup = Box<dyn FnOnce() + Send>;

/// The cleanup list of one resolver call; clones share it.
#[derive(Clone)]
pub(crate) struct Finalizers(Arc<Mutex<State>>);

thread_local! {
    /// A list its last guard let go of, emptied, for the thread's next call:
    /// most calls register nothing, and each would allocate and free one.
    static SPARE: Cell<Option<Arc<Mutex<State>>>> = const { Cell::new(None) };
}

impl Default for Finalizers {
    fn default() -> Self {
        let spare = SPARE.try_with(Cell::take).ok().flatten();
        Finalizers(spare.unwrap_or_default())
    }
}

#[derive(Default)]
struct State {
    /// Set once the list ran: later registrations run at once.
    done: bool,
    list: Vec<Cleanup>,
}

impl Finalizers {
    /// Registers `cleanup`; runs it now when the answer is already over.
    pub(crate) fn push(&self, cleanup: Cleanup) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if state.done {
            drop(state);
            run_one(cleanup);
        } else {
            state.list.push(cleanup);
        }
    }

    /// A guard that runs the list when dropped.
    pub(crate) fn guard(&self) -> FinalizeGuard {
        FinalizeGuard(Some(self.clone()))
    }

    fn run(&self) {
        let list = {
            let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            state.done = true;
            std::mem::take(&mut state.list)
        };
        run_all(list);
    }
}

/// Runs `list` in reverse order, like `defer` and destructors: the last set
/// up is the first torn down.
fn run_all(list: Vec<Cleanup>) {
    if !list.is_empty() {
        list.into_iter().rev().for_each(run_one);
    }
}

/// A panicking cleanup is reported and does not stop the others (nor take
/// down the front door that happens to drop the body).
fn run_one(cleanup: Cleanup) {
    if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(cleanup)) {
        let message = crate::support::log::panic_message(&*panic);
        crate::support::log::error(&format!("a finalize cleanup panicked: {message}"));
    }
}

impl std::fmt::Debug for Finalizers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Finalizers")
            .field("pending", &state.list.len())
            .field("done", &state.done)
            .finish()
    }
}

/// Runs its [`Finalizers`] when dropped (always `Some` until then).
#[derive(Debug)]
pub(crate) struct FinalizeGuard(Option<Finalizers>);

impl Drop for FinalizeGuard {
    fn drop(&mut self) {
        let Some(Finalizers(mut shared)) = self.0.take() else {
            return;
        };
        // The last handle, as usual once the resolver's arguments are gone:
        // nothing can register any more, so no lock and no `done` to set,
        // and the emptied list is kept for the next call.
        if let Some(state) = Arc::get_mut(&mut shared) {
            let list =
                std::mem::take(&mut state.get_mut().unwrap_or_else(PoisonError::into_inner).list);
            run_all(list);
            if !shared.is_poisoned() && Arc::get_mut(&mut shared).is_some() {
                // A thread being torn down has no slot: the list is freed then.
                let _ = SPARE.try_with(|spare| spare.set(Some(shared)));
            }
            return;
        }
        Finalizers(shared).run();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> (
        Arc<Mutex<Vec<&'static str>>>,
        impl Fn(&'static str) -> Cleanup,
    ) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let make = {
            let log = Arc::clone(&log);
            move |name: &'static str| -> Cleanup {
                let log = Arc::clone(&log);
                Box::new(move || log.lock().unwrap().push(name))
            }
        };
        (log, make)
    }

    #[test]
    fn cleanups_run_in_reverse_order_when_the_guard_drops() {
        let (log, make) = recorder();
        let finalizers = Finalizers::default();
        let guard = finalizers.guard();
        finalizers.push(make("first"));
        finalizers.push(make("second"));
        assert!(log.lock().unwrap().is_empty());
        drop(guard);
        assert_eq!(*log.lock().unwrap(), ["second", "first"]);
    }

    #[test]
    fn a_guard_left_alone_still_runs_the_cleanups_in_reverse_order() {
        let (log, make) = recorder();
        let finalizers = Finalizers::default();
        let guard = finalizers.guard();
        finalizers.push(make("first"));
        finalizers.push(make("second"));
        drop(finalizers);
        drop(guard);
        assert_eq!(*log.lock().unwrap(), ["second", "first"]);
        // The next call's list (the one just let go of, on this thread)
        // starts empty and open.
        let next = Finalizers::default();
        let guard = next.guard();
        next.push(make("third"));
        drop(next);
        drop(guard);
        assert_eq!(*log.lock().unwrap(), ["second", "first", "third"]);
    }

    #[test]
    fn a_late_cleanup_runs_at_once_and_a_panic_spares_the_rest() {
        let (log, make) = recorder();
        let finalizers = Finalizers::default();
        finalizers.push(make("kept"));
        finalizers.push(Box::new(|| panic!("cleanup failed")));
        drop(finalizers.guard());
        assert_eq!(*log.lock().unwrap(), ["kept"]);
        finalizers.push(make("late"));
        assert_eq!(*log.lock().unwrap(), ["kept", "late"]);
    }
}
