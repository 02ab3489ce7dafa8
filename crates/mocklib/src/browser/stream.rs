//! Streamed mocked bodies in the browser: the Rust [`Body`] is read chunk by
//! chunk as the page reads its `ReadableStream`, never buffered whole.
//!
//! - Fallback mode ([`readable_source`]): the `Response` the patched `fetch`
//!   resolves to has a `ReadableStream` body whose `pull` polls the `Body`
//!   for its next chunk and whose `cancel` drops it.
//! - Service Worker mode ([`Flows`], [`send`]): after the response head the
//!   page posts the worker each chunk, then the end or the error, over the
//!   request port; the worker's `ReadableStream` hands them on. The worker
//!   grants credit as its reader takes chunks, so the page is never more
//!   than [`WINDOW`] chunks ahead of the reader, and says when the reader
//!   cancelled.
//!
//! Either way the `Body` is dropped — which runs the resolver's `finalize` —
//! as soon as the stream ends, fails or is cancelled. A stream's error
//! makes the page's `reader.read()` reject with a `TypeError`, as a real
//! connection lost mid-body does.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::poll_fn;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker, ready};

use bytes::Bytes;
use http_body::Body as _;
use js_sys::{Function, Uint8Array};
use wasm_bindgen::prelude::*;

use super::{glue, task};
use crate::message::body::{Body, StreamError};

/// The body's next non-empty chunk (an empty one would reach a reader as a
/// zero-length read).
fn poll_chunk(body: &mut Body, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, StreamError>>> {
    loop {
        match ready!(Pin::new(&mut *body).poll_frame(cx)) {
            None => return Poll::Ready(None),
            Some(Err(error)) => return Poll::Ready(Some(Err(error))),
            Some(Ok(frame)) => {
                if let Some(chunk) = frame.into_data().ok().filter(|chunk| !chunk.is_empty()) {
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

/// How many chunks the page sends ahead of what the worker's reader took;
/// `WINDOW` in `mocklib-worker.js` is the same.
pub(super) const WINDOW: u32 = 16;

/// The streamed bodies one Service Worker connection is sending, by
/// request id.
#[derive(Default)]
pub(super) struct Flows(RefCell<HashMap<u32, Flow>>);

struct Flow {
    /// Chunks the worker is ready for.
    credit: u32,
    /// The worker's reader cancelled, or the connection closes.
    cancelled: bool,
    /// The sending task, waiting for credit or for the body.
    waker: Option<Waker>,
}

/// What the sending task does next.
enum Step {
    Chunk(Bytes),
    /// The body ended; with the error that ended it, if one did.
    End(Option<String>),
    Cancelled,
}

impl Flows {
    /// The worker granted `credit` more chunks of request `id`'s body, or
    /// its reader `cancelled` it.
    pub(super) fn on_message(&self, id: u32, credit: u32, cancelled: bool) {
        let waker = {
            let mut flows = self.0.borrow_mut();
            let Some(flow) = flows.get_mut(&id) else {
                return; // already over
            };
            flow.credit += credit;
            flow.cancelled |= cancelled;
            flow.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Ends every body being sent: the connection closes.
    pub(super) fn cancel_all(&self) {
        let wakers: Vec<Waker> = self
            .0
            .borrow_mut()
            .values_mut()
            .filter_map(|flow| {
                flow.cancelled = true;
                flow.waker.take()
            })
            .collect();
        wakers.into_iter().for_each(Waker::wake);
    }

    fn poll_step(&self, id: u32, body: &mut Body, cx: &mut Context<'_>) -> Poll<Step> {
        {
            let mut flows = self.0.borrow_mut();
            let Some(flow) = flows.get_mut(&id).filter(|flow| !flow.cancelled) else {
                return Poll::Ready(Step::Cancelled);
            };
            // Woken by credit and by a cancel, as well as by the body.
            flow.waker = Some(cx.waker().clone());
            if flow.credit == 0 {
                return Poll::Pending;
            }
        }
        // Out of the borrow: the stream is user code.
        Poll::Ready(match ready!(poll_chunk(body, cx)) {
            Some(Ok(chunk)) => {
                if let Some(flow) = self.0.borrow_mut().get_mut(&id) {
                    flow.credit -= 1;
                }
                Step::Chunk(chunk)
            }
            Some(Err(error)) => Step::End(Some(error.to_string())),
            None => Step::End(None),
        })
    }
}

/// Sends `body` to the worker over `port` as the body of request `id`,
/// whose head the worker has: each chunk, then the end or the error.
pub(super) fn send(flows: &Rc<Flows>, port: JsValue, id: u32, mut body: Body) {
    flows.0.borrow_mut().insert(
        id,
        Flow {
            credit: WINDOW,
            cancelled: false,
            waker: None,
        },
    );
    let on_panic = {
        let (flows, port) = (Rc::clone(flows), port.clone());
        move |message: String| {
            flows.0.borrow_mut().remove(&id);
            glue::post_body_end(&port, id, Some(panicked(&message)));
        }
    };
    let flows = Rc::clone(flows);
    task::spawn(
        async move {
            loop {
                match poll_fn(|cx| flows.poll_step(id, &mut body, cx)).await {
                    Step::Chunk(chunk) => glue::post_body_chunk(&port, id, &chunk),
                    Step::End(error) => {
                        glue::post_body_end(&port, id, error);
                        break;
                    }
                    Step::Cancelled => break,
                }
            }
            flows.0.borrow_mut().remove(&id);
            // Now, not when the task is freed: this runs `finalize`.
            drop(body);
        },
        on_panic,
    );
}
