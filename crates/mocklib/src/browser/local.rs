//! JavaScript values behind `Send` handles.
//!
//! A streamed [`Body`](crate::Body) must be `Send` on every target, and so
//! must the future of an `sse` session, which awaits `server.connect()`. What
//! they hold in the browser — a `fetch` in flight, the reader of a real
//! body — are JavaScript values, which are not. A [`Local`] keeps its value
//! in a table of the thread that made it and is itself only the key, so it
//! is `Send`. wasm32 runs on one thread, the page's; were a handle used on
//! another, its value would not be found there ([`Local::with`] says `None`).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::Poll;

thread_local! {
    static VALUES: RefCell<HashMap<u64, Box<dyn Any>>> = RefCell::default();
    static NEXT_KEY: Cell<u64> = const { Cell::new(0) };
}

/// A value of this thread, held by key. Dropping the handle drops the value.
pub(super) struct Local<T: 'static> {
    key: u64,
    /// `fn() -> T` is `Send` and `Sync` whatever `T` is: the value is never
    /// reached from another thread.
    _value: PhantomData<fn() -> T>,
}

impl<T: 'static> Local<T> {
    pub(super) fn new(value: T) -> Self {
        let key = NEXT_KEY.with(|next| next.replace(next.get() + 1));
        VALUES.with(|values| values.borrow_mut().insert(key, Box::new(value)));
        Local {
            key,
            _value: PhantomData,
        }
    }

    /// Runs `f` on the value; `None` on another thread than the one that
    /// made it. The value is out of the table while `f` runs, so `f` may
    /// make and use other `Local`s (polling a `fetch` that makes a body's).
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let mut value = VALUES.with(|values| values.borrow_mut().remove(&self.key))?;
        let result = f(value.downcast_mut().expect("a key holds one type"));
        VALUES.with(|values| values.borrow_mut().insert(self.key, value));
        Some(result)
    }
}

impl<T: 'static> Drop for Local<T> {
    fn drop(&mut self) {
        let value = VALUES
            .try_with(|values| values.borrow_mut().remove(&self.key))
            .ok()
            .flatten();
        // Dropped out of the borrow: a value's `Drop` may use other `Local`s.
        drop(value);
    }
}

/// `future`, awaitable from a `Send` future; `None` when polled on another
/// thread. Dropping the returned future drops `future`.
pub(super) fn sendable<T: 'static>(
    future: impl Future<Output = T> + 'static,
) -> impl Future<Output = Option<T>> + Send {
    let future: Local<Pin<Box<dyn Future<Output = T>>>> = Local::new(Box::pin(future));
    poll_fn(
        move |cx| match future.with(|future| future.as_mut().poll(cx)) {
            Some(Poll::Ready(output)) => Poll::Ready(Some(output)),
            Some(Poll::Pending) => Poll::Pending,
            None => Poll::Ready(None),
        },
    )
}
