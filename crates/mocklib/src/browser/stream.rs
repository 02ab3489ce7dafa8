//! Streamed mocked bodies in the browser: the Rust [`Body`] is read chunk by
//! chunk as the page reads its `ReadableStream`, never buffered whole.
//!
//! In the fallback mode ([`readable_source`]) the `Response` the patched
//! `fetch` resolves to has a `ReadableStream` body whose `pull` polls the
//! `Body` for its next chunk and whose `cancel` drops it. (Service Worker
//! mode still sends the body whole; issue 13.)
//!
//! The `Body` is dropped — which runs the resolver's `finalize` —
//! as soon as the stream ends, fails or is cancelled. A stream's error
//! makes the page's `reader.read()` reject with a `TypeError`, as a real
//! connection lost mid-body does.

use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker, ready};

use bytes::Bytes;
use http_body::Body as _;
use js_sys::{Function, Uint8Array};
use wasm_bindgen::prelude::*;

use super::{glue, task};
use crate::{Body, StreamError};

/// The body's next non-empty chunk (an empty one would reach a reader as a
/// zero-length read).
fn poll_chunk(body: &mut Body, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, StreamError>>> {
    loop {
        match ready!(Pin::new(&mut *body).poll_frame(cx)) {
            None => return Poll::Ready(None),
            Some(Err(error)) => return Poll::Ready(Some(Err(error))),
            Some(Ok(frame)) => {
                if let Ok(chunk) = frame.into_data()
                    && !chunk.is_empty()
                {
                    return Poll::Ready(Some(Ok(chunk)));
                }
            }
        }
    }
}

/// What a panicking stream leaves the reader with.
fn panicked(message: &str) -> String {
    format!("the stream of a mocked body panicked: {message}")
}

/// What the fallback's `ReadableStream` reads from.
struct Source {
    /// `None` once ended, failed or cancelled.
    body: Option<Body>,
    /// The pull waiting for the body's next chunk.
    waiting: Option<Waker>,
}

impl Source {
    fn wake(&mut self) {
        if let Some(waker) = self.waiting.take() {
            waker.wake();
        }
    }
}

impl Drop for Source {
    /// A pending pull finishes (reading nothing) instead of staying in the
    /// task table for ever.
    fn drop(&mut self) {
        self.wake();
    }
}

/// The `pull(resolve, reject)` and `cancel()` functions of the underlying
/// source `glue.js` builds a `ReadableStream` from: `pull` resolves to the
/// body's next chunk (a `Uint8Array`) or to `undefined` at its end, and
/// rejects with a `TypeError` when the stream failed.
///
/// Only the two functions hold the body, and the JavaScript GC frees them
/// with the stream: a `Response` dropped unread drops the body too, only
/// later. A pending pull holds it weakly, so the stream's waker (inside the
/// body) and the pull form no cycle.
pub(super) fn readable_source(body: Body) -> (JsValue, JsValue) {
    let source = Rc::new(RefCell::new(Source {
        body: Some(body),
        waiting: None,
    }));
    let pulled = Rc::downgrade(&source);
    let pull = Closure::<dyn Fn(Function, Function)>::new(move |resolve, reject| {
        pull(pulled.clone(), resolve, reject);
    });
    let cancel = Closure::<dyn Fn()>::new(move || {
        let body = {
            let mut source = source.borrow_mut();
            source.wake();
            source.body.take()
        };
        // Dropped outside the borrow: `finalize` is user code.
        drop(body);
    });
    (pull.into_js_value(), cancel.into_js_value())
}

/// Reads the next chunk of `source` in a task of its own, so that a
/// panicking stream fails this one body only.
fn pull(source: Weak<RefCell<Source>>, resolve: Function, reject: Function) {
    let fail = |reject: &Function, message: &str| {
        let _ = reject.call1(&JsValue::UNDEFINED, &glue::type_error(message));
    };
    let on_panic = {
        let reject = reject.clone();
        move |message: String| fail(&reject, &panicked(&message))
    };
    task::spawn(
        async move {
            match poll_fn(|cx| poll_source(&source, cx)).await {
                Some(Ok(chunk)) => {
                    let _ = resolve.call1(&JsValue::UNDEFINED, &Uint8Array::from(&chunk[..]));
                }
                None => {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
                Some(Err(error)) => fail(&reject, &error.to_string()),
            }
        },
        on_panic,
    );
}

fn poll_source(
    source: &Weak<RefCell<Source>>,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Bytes, StreamError>>> {
    let Some(source) = source.upgrade() else {
        return Poll::Ready(None);
    };
    // Polled out of the cell: the stream is user code, and a panic in it
    // must not leave the cell borrowed.
    let Some(mut body) = source.borrow_mut().body.take() else {
        return Poll::Ready(None);
    };
    let next = poll_chunk(&mut body, cx);
    if matches!(next, Poll::Pending | Poll::Ready(Some(Ok(_)))) {
        let mut source = source.borrow_mut();
        source.body = Some(body);
        source.waiting = next.is_pending().then(|| cx.waker().clone());
    }
    // An ended or failed body is dropped here, which runs its `finalize`.
    next
}
