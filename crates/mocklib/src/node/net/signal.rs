//! A one-way signal many tasks wait on: a server closed, a port retired,
//! a boundary ended.
//!
//! Every connection races its requests against its server's end, so the
//! wait is polled again each time the connection's task wakes: once per
//! request. A `tokio::sync::watch` receiver re-registers under a lock on
//! each of those polls (about 250 instructions a request, counted); this
//! wait registers its task's waker once and, while the task's waker stays
//! the same, a poll is an atomic load and a pointer compare.

use std::collections::HashMap;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// Raised once, never lowered.
#[derive(Default)]
pub(super) struct Signal {
    raised: AtomicBool,
    waiters: Mutex<Waiters>,
}

#[derive(Default)]
struct Waiters {
    next: u64,
    wakers: HashMap<u64, Waker>,
}

impl Signal {
    /// Raises the signal and wakes every wait.
    pub(super) fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        // Taken under the lock a wait registers under, after the flag is
        // set: a wait either sees the flag or is in this map.
        let wakers = std::mem::take(
            &mut self
                .waiters
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .wakers,
        );
        for waker in wakers.into_values() {
            waker.wake();
        }
    }

    pub(super) fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// Resolves once the signal is raised.
    pub(super) fn wait(&self) -> Wait<&Self> {
        Wait {
            signal: self,
            registered: None,
        }
    }

    /// [`wait`](Self::wait) holding the signal: for a body or a task that
    /// outlives whoever handed it the signal.
    pub(super) fn wait_owned(self: Arc<Self>) -> Wait<Arc<Self>> {
        Wait {
            signal: self,
            registered: None,
        }
    }
}

/// [`Signal::wait`]'s future.
pub(super) struct Wait<S: Deref<Target = Signal>> {
    signal: S,
    /// The key and waker this wait is registered under.
    registered: Option<(u64, Waker)>,
}

impl<S: Deref<Target = Signal> + Unpin> Future for Wait<S> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_raised() {
            return Poll::Ready(());
        }
        if let Some((_, waker)) = &self.registered {
            if waker.will_wake(cx.waker()) {
                return Poll::Pending;
            }
        }
        let this = &mut *self;
        let signal = &*this.signal;
        let mut waiters = signal
            .waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Checked again under the lock `raise` takes after setting it.
        if signal.is_raised() {
            return Poll::Ready(());
        }
        let key = match &this.registered {
            Some((key, _)) => *key,
            None => {
                waiters.next += 1;
                waiters.next
            }
        };
        waiters.wakers.insert(key, cx.waker().clone());
        drop(waiters);
        this.registered = Some((key, cx.waker().clone()));
        Poll::Pending
    }
}

impl<S: Deref<Target = Signal>> Drop for Wait<S> {
    fn drop(&mut self) {
        if let Some((key, _)) = self.registered.take() {
            self.signal
                .waiters
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .wakers
                .remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn every_wait_ends_when_raised_and_a_late_one_at_once() {
        let signal = Arc::new(Signal::default());
        let waits: Vec<_> = (0..3)
            .map(|_| {
                let signal = Arc::clone(&signal);
                tokio::spawn(async move { signal.wait().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(waits.iter().all(|wait| !wait.is_finished()));
        signal.raise();
        for wait in waits {
            tokio::time::timeout(std::time::Duration::from_secs(5), wait)
                .await
                .expect("a wait ended")
                .unwrap();
        }
        signal.wait().await;
        assert!(signal.waiters.lock().unwrap().wakers.is_empty());
    }

    #[tokio::test]
    async fn a_dropped_wait_leaves_no_waker() {
        let signal = Signal::default();
        {
            let wait = signal.wait();
            tokio::pin!(wait);
            let polled = std::future::poll_fn(|cx| Poll::Ready(wait.as_mut().poll(cx))).await;
            assert!(polled.is_pending());
            assert_eq!(signal.waiters.lock().unwrap().wakers.len(), 1);
        }
        assert!(signal.waiters.lock().unwrap().wakers.is_empty());
    }
}
