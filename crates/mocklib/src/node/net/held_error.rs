//! A response body that fails mid-stream, its error held back until what
//! came before it is on its way to the client.
//!
//! hyper discards what it has not sent yet when a body fails: on HTTP/1 the
//! head and chunks still in its write buffer (it writes the head with the
//! first body data and flushes only once the body is pending) go with the
//! connection; on HTTP/2 the reset makes h2 clear the stream's queued
//! HEADERS and DATA frames. An error ready right behind a chunk would erase
//! the response, so [`HoldError`] hands it over only once:
//!
//! - HTTP/1: the connection completed a flush after the error arrived.
//!   hyper flushes its io only once its write buffer is empty, so every
//!   byte of the head and chunks is on the socket by then.
//! - HTTP/2: an empty DATA frame sent after the chunks has been dropped by
//!   h2. A stream's frames leave its queue in order, and a DATA frame is
//!   dropped only once encoded into the connection's write buffer, so the
//!   HEADERS and every chunk are there ahead of the `RST_STREAM`.
//!
//! Neither waits on a timer: only on the client reading (flow control) and
//! the socket taking the bytes.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Released once, after being armed: by a completed flush of the connection
/// (HTTP/1) or by h2 dropping a frame (HTTP/2).
#[derive(Default)]
pub(super) struct Latch {
    state: Mutex<LatchState>,
    /// Whether it was ever armed: read without the lock by every flush of
    /// every connection, nearly all of which have nothing to release.
    armed: AtomicBool,
}

#[derive(Default)]
struct LatchState {
    armed: bool,
    released: bool,
    waker: Option<Waker>,
}

impl Latch {
    fn state(&self) -> std::sync::MutexGuard<'_, LatchState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on, the next [`release`](Self::release) counts.
    fn arm(&self) {
        let mut state = self.state();
        state.armed = true;
        state.released = false;
        self.armed.store(true, Ordering::Release);
    }

    /// Releases the latch if it is armed (a flush before the error means
    /// nothing), waking the body that waits on it.
    pub(super) fn release(&self) {
        if !self.armed.load(Ordering::Acquire) {
            return;
        }
        let mut state = self.state();
        if !state.armed || state.released {
            return;
        }
        state.released = true;
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn poll_released(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state();
        if state.released {
            return Poll::Ready(());
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// The owner of the empty DATA frame sent ahead of an HTTP/2 reset: h2
/// dropping it releases the latch.
struct Marker(Arc<Latch>);

impl AsRef<[u8]> for Marker {
    fn as_ref(&self) -> &[u8] {
        &[]
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// What a failing body waits for before handing its error to hyper.
pub(super) enum Hold {
    /// HTTP/1: the connection's next completed flush (the connection
    /// releases this latch from its `poll_flush`).
    Flush(Arc<Latch>),
    /// HTTP/2: h2 dropping an empty DATA frame sent after the chunks.
    Marker,
}

enum State {
    Streaming,
    Holding(BoxError, Arc<Latch>),
    Failed,
}

pin_project_lite::pin_project! {
    /// `body`, its error held back as [`Hold`] says.
    pub(super) struct HoldError<B> {
        #[pin]
        body: B,
        hold: Hold,
        state: State,
    }
}

impl<B> HoldError<B> {
    pub(super) fn new(body: B, hold: Hold) -> Self {
        HoldError {
            body,
            hold,
            state: State::Streaming,
        }
    }
}

impl<B> Body for HoldError<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.project();
        if let State::Streaming = this.state {
            let error = match std::task::ready!(this.body.poll_frame(cx)) {
                Some(Err(error)) => error.into(),
                other => return Poll::Ready(other.map(|result| result.map_err(Into::into))),
            };
            let latch = match this.hold {
                Hold::Flush(latch) => Arc::clone(latch),
                Hold::Marker => Arc::new(Latch::default()),
            };
            latch.arm();
            let marker = matches!(this.hold, Hold::Marker).then(|| Marker(Arc::clone(&latch)));
            *this.state = State::Holding(error, latch);
            if let Some(marker) = marker {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_owner(marker)))));
            }
        }
        let State::Holding(_, latch) = &*this.state else {
            return Poll::Ready(None);
        };
        std::task::ready!(latch.poll_released(cx));
        match std::mem::replace(this.state, State::Failed) {
            State::Holding(error, _) => Poll::Ready(Some(Err(error))),
            _ => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        // A held error is still to come: the body must not look finished
        // (hyper would end the stream cleanly with the marker frame).
        match self.state {
            State::Streaming => self.body.is_end_stream(),
            State::Holding(..) => false,
            State::Failed => true,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self.state {
            State::Streaming => self.body.size_hint(),
            _ => SizeHint::default(),
        }
    }
}
