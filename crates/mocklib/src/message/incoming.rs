//! A request body that is still arriving.
//!
//! Front doors buffer a request's body before resolving it, so every
//! handler reads the same bytes. A gRPC call cannot wait for that: in a
//! bidirectional call the client sends its next message only after it has
//! read a reply, so its body ends only when the call does. The listener and
//! the tower front door hand such a body over as it comes
//! ([`Request::with_body_stream`](crate::Request::with_body_stream)), and
//! each reader ([`Request::body_chunks`](crate::Request::body_chunks)) gets
//! every chunk from the first: what arrived already, then the rest as it
//! arrives. A handler that reads the body and falls through leaves the
//! whole body to the next one, as with a buffered body.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use futures_util::Stream;
use smallvec::SmallVec;

use crate::message::body::StreamError;

type Source = crate::message::body::ChunkStream;

/// The chunks received so far and the stream the rest comes from, shared
/// by every reader of one request.
pub(crate) struct LiveBody {
    state: Mutex<State>,
}

struct State {
    /// A unary call's one chunk stays inline: no allocation for it.
    received: SmallVec<[Bytes; 1]>,
    /// `None` once the body has ended or failed.
    source: Option<Arriving>,
    /// Why the body failed, for every reader that gets there.
    failure: Option<String>,
}

/// The stream the rest of a body comes from, and who waits for it.
struct Arriving {
    stream: Source,
    /// Woken when the stream has more: every reader waiting for it, not
    /// only the one that polled last.
    waiting: Arc<Waiting>,
    /// `waiting` as the waker the stream is polled with (made once).
    waker: Waker,
}

/// The usual reader is alone: its waker is kept inline.
#[derive(Default)]
struct Waiting(Mutex<SmallVec<[Waker; 1]>>);

impl Waiting {
    fn add(&self, waker: &Waker) {
        let mut wakers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !wakers.iter().any(|known| known.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }

    /// Wakes every waiting reader but `own`, the one that got the chunk
    /// (waking it too would cost it a poll per chunk for nothing).
    fn wake_others(&self, own: &Waker) {
        let mut others =
            std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        others.retain(|waker| !waker.will_wake(own));
        others.into_iter().for_each(Waker::wake);
    }
}

impl Wake for Waiting {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let wakers = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl LiveBody {
    /// A body that comes from `source`, after `received` (the chunks that
    /// arrived before it was handed over).
    pub(crate) fn new(received: SmallVec<[Bytes; 1]>, source: Source) -> Self {
        let waiting = Arc::<Waiting>::default();
        let waker = Waker::from(Arc::clone(&waiting));
        LiveBody {
            state: Mutex::new(State {
                received,
                source: Some(Arriving {
                    stream: source,
                    waiting,
                    waker,
                }),
                failure: None,
            }),
        }
    }

    /// A body that has arrived in full already (or failed: `failure` says
    /// why, after `received`): nothing left to wait for.
    #[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn arrived(received: SmallVec<[Bytes; 1]>, failure: Option<String>) -> Self {
        LiveBody {
            state: Mutex::new(State {
                received,
                source: None,
                failure,
            }),
        }
    }

    /// Chunk `index` of the body: received already, or the source's next.
    fn poll_chunk(
        &self,
        index: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, StreamError>>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(chunk) = state.received.get(index) {
                return Poll::Ready(Some(Ok(chunk.clone())));
            }
            let Some(source) = state.source.as_mut() else {
                return Poll::Ready(state.failure.clone().map(|why| Err(StreamError::new(why))));
            };
            source.waiting.add(cx.waker());
            let polled = source
                .stream
                .as_mut()
                .poll_next(&mut Context::from_waker(&source.waker));
            if polled.is_pending() {
                return Poll::Pending;
            }
            // Another reader may be waiting for this chunk (or the end) too.
            source.waiting.wake_others(cx.waker());
            match polled {
                Poll::Ready(Some(Ok(chunk))) => {
                    if !chunk.is_empty() {
                        state.received.push(chunk);
                    }
                }
                end => {
                    state.source = None;
                    state.failure = match end {
                        Poll::Ready(Some(Err(error))) => Some(error.to_string()),
                        _ => None,
                    };
                }
            }
        }
    }
}

/// Every chunk of a request's body, from the first: the buffered body as
/// one chunk, or a streamed body's chunks as they arrive
/// ([`Request::body_chunks`](crate::Request::body_chunks)).
///
/// ```
/// use futures_util::StreamExt;
///
/// # futures_util::FutureExt::now_or_never(async {
/// let request = mocklib::Request::new(http::Method::POST, "http://api.example.com/".parse()?)
///     .with_body_stream(futures_util::stream::iter([
///         Ok::<_, std::io::Error>("first "),
///         Ok("second"),
///     ]));
/// let chunks: Vec<_> = request.body_chunks().map(Result::unwrap).collect().await;
/// assert_eq!(chunks, ["first ", "second"]);
/// // Each reader gets the whole body.
/// assert_eq!(request.body_chunks().count().await, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a stream does nothing unless polled"]
pub struct BodyChunks {
    from: From,
    next: usize,
}

enum From {
    Buffered(Option<Bytes>),
    Live(Arc<LiveBody>),
}

impl BodyChunks {
    pub(crate) fn buffered(body: &Bytes) -> Self {
        BodyChunks {
            from: From::Buffered((!body.is_empty()).then(|| body.clone())),
            next: 0,
        }
    }

    pub(crate) fn live(body: &Arc<LiveBody>) -> Self {
        BodyChunks {
            from: From::Live(Arc::clone(body)),
            next: 0,
        }
    }
}

impl Stream for BodyChunks {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match &mut this.from {
            From::Buffered(chunk) => Poll::Ready(chunk.take().map(Ok)),
            From::Live(body) => {
                let polled = body.poll_chunk(this.next, cx);
                match &polled {
                    Poll::Ready(Some(Ok(_))) => this.next += 1,
                    // The failure ends this reader's stream.
                    Poll::Ready(Some(Err(_))) => this.from = From::Buffered(None),
                    _ => {}
                }
                polled
            }
        }
    }
}

impl std::fmt::Debug for BodyChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyChunks")
            .field("streamed", &matches!(self.from, From::Live(_)))
            .field("next", &self.next)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use tokio::sync::mpsc;

    fn live(
        source: impl Stream<Item = Result<Bytes, StreamError>> + Send + 'static,
    ) -> Arc<LiveBody> {
        Arc::new(LiveBody::new(SmallVec::new(), Box::pin(source)))
    }

    #[tokio::test]
    async fn two_readers_each_get_every_chunk_as_it_arrives() {
        let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
        let body = live(futures_util::stream::unfold(
            receiver,
            |mut receiver| async move { receiver.recv().await.map(|chunk| (Ok(chunk), receiver)) },
        ));
        let (mut first, mut second) = (BodyChunks::live(&body), BodyChunks::live(&body));
        // Both wait for the same chunk: the one that did not poll the
        // source last must be woken too.
        let waiting = tokio::spawn(async move { second.next().await.map(Result::unwrap) });
        tokio::task::yield_now().await;
        let reading = tokio::spawn(async move { first.next().await.map(Result::unwrap) });
        tokio::task::yield_now().await;
        sender.send(Bytes::from("one")).unwrap();
        assert_eq!(reading.await.unwrap().as_deref(), Some(&b"one"[..]));
        assert_eq!(waiting.await.unwrap().as_deref(), Some(&b"one"[..]));
        drop(sender);
        let late: Vec<_> = BodyChunks::live(&body).map(Result::unwrap).collect().await;
        assert_eq!(late, [Bytes::from("one")]);
    }

    #[tokio::test]
    async fn a_failure_reaches_every_reader_after_the_chunks_before_it() {
        let body = live(futures_util::stream::iter([
            Ok(Bytes::from("kept")),
            Err(StreamError::new("the client reset the stream")),
        ]));
        for _ in 0..2 {
            let read: Vec<_> = BodyChunks::live(&body).collect().await;
            assert_eq!(read[0].as_ref().unwrap(), "kept");
            let error = read[1].as_ref().unwrap_err().to_string();
            assert!(error.contains("the client reset the stream"), "{error}");
            assert_eq!(read.len(), 2);
        }
    }

    #[tokio::test]
    async fn a_buffered_body_is_one_chunk_and_an_empty_one_none() {
        let chunks: Vec<_> = BodyChunks::buffered(&Bytes::from("all"))
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(chunks, [Bytes::from("all")]);
        assert_eq!(BodyChunks::buffered(&Bytes::new()).count().await, 0);
    }
}
