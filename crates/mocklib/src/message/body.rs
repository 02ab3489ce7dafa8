//! [`Body`]: the body of a mocked response, buffered or streamed.
//!
//! Most mocked bodies are buffered: [`HttpResponse::text`](crate::HttpResponse::text)
//! and friends hold the whole body. A streamed body is a [`Stream`] of byte
//! chunks that the front door sends as they are produced, the way a real
//! server streams a download, a chat completion or server-sent events:
//!
//! ```
//! use std::time::Duration;
//! use mocklib::{http, HttpResponse};
//!
//! // Three chunks, 100 ms apart.
//! http::get("/download", |_| {
//!     HttpResponse::chunks(["first ", "second ", "third"], Duration::from_millis(100))
//! });
//! // Any stream of chunks.
//! http::get("/numbers", |_| {
//!     HttpResponse::stream(futures_util::stream::iter((1..=3).map(|n| format!("{n}\n"))))
//! });
//! ```
//!
//! A streamed body has no `Content-Length` unless you set one, so HTTP/1.1
//! sends it chunked and HTTP/2 in data frames. When the client stops reading
//! or goes away, the front door drops the stream: nothing keeps producing
//! chunks for nobody.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body::{Frame, SizeHint};

use crate::message::finalize::FinalizeGuard;

/// A boxed stream of chunks. `Send` on every target, even in the browser,
/// so that a response stays `Send + Sync` and can be captured by any handler.
pub(crate) type ChunkStream = Pin<Box<dyn Stream<Item = Result<Bytes, StreamError>> + Send>>;

/// `stream`'s chunks as bytes and its errors as [`StreamError`]s, boxed: a
/// response body's stream, or a request's (`LiveBody`).
pub(crate) fn chunk_stream<S, B, E>(stream: S) -> ChunkStream
where
    S: Stream<Item = Result<B, E>> + Send + 'static,
    B: Into<Bytes>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    Box::pin(stream.map(|chunk| chunk.map(Into::into).map_err(StreamError::new)))
}

/// The body of a mocked response: buffered bytes or a stream of chunks.
///
/// It implements [`http_body::Body`], so a front door sends it like any other
/// body, chunk by chunk. Cloning a response clones its body; the clones of a
/// streamed body share the one stream, which only the first clone to be sent
/// gets (the others fail with a [`StreamError`]).
#[derive(Default)]
pub struct Body {
    inner: Inner,
    /// Sent as a trailers frame after the last chunk (gRPC's status, say).
    trailers: Option<Box<Trailers>>,
    /// The resolver's `finalize` cleanup, run when the body is dropped: sent
    /// in full, or abandoned by its client.
    finalize: Option<FinalizeGuard>,
}

enum Inner {
    /// Emptied once sent.
    Full(Bytes),
    /// Not polled yet: shared with the clones of the response.
    Shared(Arc<Mutex<Option<ChunkStream>>>),
    /// Taken from the shared slot by the one body that sends it. The mutex
    /// only makes the body `Sync` (reqwest asks for it); `get_mut` never locks.
    Owned(Mutex<ChunkStream>),
    /// The stream ended or failed.
    Done,
}

/// A body's trailers: known when the response is made, or put into a slot
/// by the stream's producer before the stream ends.
#[derive(Clone)]
enum Trailers {
    Ready(http::HeaderMap),
    Later(Arc<Mutex<Option<http::HeaderMap>>>),
}

impl Trailers {
    fn take(self) -> Option<http::HeaderMap> {
        match self {
            Trailers::Ready(map) => Some(map),
            Trailers::Later(slot) => slot.lock().unwrap_or_else(PoisonError::into_inner).take(),
        }
    }
}

impl Default for Inner {
    fn default() -> Self {
        Inner::Full(Bytes::new())
    }
}

/// Why a streamed body could not be sent in full: the stream yielded an
/// error, or a clone of the response had sent it already. The client gets
/// the status, the headers and every chunk before the error, then a body
/// that ends abruptly: over HTTP/1.1 the connection closes before the body's
/// end (an error for any client, never a clean end), over HTTP/2 the stream
/// is reset (`RST_STREAM`, `INTERNAL_ERROR`), possibly after an empty DATA
/// frame. In process (tower, reqwest middleware) reading the body fails
/// with this error.
///
/// One protocol cannot say it: an HTTP/1.0 client has no chunked encoding,
/// so a streamed body without a `Content-Length` ends when the connection
/// closes, and a failure looks like the end. Give such a response a
/// `Content-Length` (the client then sees the body cut short) or let the
/// client speak HTTP/1.1.
#[derive(Debug, thiserror::Error)]
#[error("the streamed body of a mocked response failed: {source}")]
pub struct StreamError {
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl StreamError {
    /// An error for a stream to yield, ending the body abruptly.
    pub fn new(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        StreamError {
            source: source.into(),
        }
    }
}

impl Body {
    /// An empty body.
    pub fn empty() -> Self {
        Body::default()
    }

    /// A body that sends `stream`'s chunks as they come.
    pub fn from_stream<S, B>(stream: S) -> Self
    where
        S: Stream<Item = B> + Send + 'static,
        B: Into<Bytes>,
    {
        Self::boxed(Box::pin(stream.map(|chunk| Ok(chunk.into()))))
    }

    /// A body that sends `stream`'s chunks as they come and ends abruptly at
    /// its first error.
    pub fn from_try_stream<S, B, E>(stream: S) -> Self
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: Into<Bytes>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        Self::boxed(chunk_stream(stream))
    }

    /// A body that sends `body`'s data as it comes, then its trailers (a
    /// gRPC call's status, say): the answer of a tower service or a real
    /// server, forwarded as it is.
    pub fn from_http_body<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let trailers = Arc::new(Mutex::new(None));
        let data = DataFrames {
            body: Box::pin(body),
            trailers: Arc::clone(&trailers),
        };
        Self::from_try_stream(data).with_trailers_from(trailers)
    }

    fn boxed(stream: ChunkStream) -> Self {
        Body {
            inner: Inner::Shared(Arc::new(Mutex::new(Some(stream)))),
            trailers: None,
            finalize: None,
        }
    }

    /// This body, followed by `trailers` (HTTP/2 sends them as a last
    /// HEADERS frame; HTTP/1.1 only in a chunked body to a client that
    /// accepts them, and front doors without trailers drop them).
    ///
    /// ```
    /// let mut trailers = http::HeaderMap::new();
    /// trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    /// let body = mocklib::Body::from("payload").with_trailers(trailers);
    /// # let _ = body;
    /// ```
    pub fn with_trailers(mut self, trailers: http::HeaderMap) -> Self {
        self.trailers = Some(Box::new(Trailers::Ready(trailers)));
        self
    }

    /// This body, followed by the trailers in `slot` when its stream ends
    /// (none if the slot is still empty then): for a stream whose producer
    /// decides them last, as a gRPC stream its status.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn with_trailers_from(mut self, slot: Arc<Mutex<Option<http::HeaderMap>>>) -> Self {
        self.trailers = Some(Box::new(Trailers::Later(slot)));
        self
    }

    /// The whole body when it is buffered; `None` when it streams.
    pub fn as_bytes(&self) -> Option<&Bytes> {
        match &self.inner {
            Inner::Full(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// Whether trailers follow the body.
    #[cfg_attr(any(not(feature = "net"), target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn has_trailers(&self) -> bool {
        self.trailers.is_some()
    }

    /// Whether the body is a stream.
    pub fn is_stream(&self) -> bool {
        !matches!(self.inner, Inner::Full(_))
    }

    /// Reads the whole body: the buffered bytes, or every chunk of the stream.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let body = mocklib::Body::from_stream(futures_util::stream::iter(["a", "b"]));
    /// assert_eq!(body.collect().await.unwrap(), "ab");
    /// # }
    /// ```
    pub async fn collect(mut self) -> Result<Bytes, StreamError> {
        let mut collected = bytes::BytesMut::new();
        while let Some(frame) = std::future::poll_fn(|cx| self.poll_chunk(cx)).await {
            collected.extend_from_slice(&frame?);
        }
        Ok(collected.freeze())
    }

    /// This body with its trailers sent as its last chunk, which `end`
    /// makes of them (`None`: it had none, or `end` adds nothing): gRPC-Web
    /// and Connect carry a call's status in the body. A buffered body whose
    /// trailers are known stays buffered.
    #[cfg(feature = "grpc")]
    pub(crate) fn trailers_into_body(
        self,
        end: impl FnOnce(Option<http::HeaderMap>) -> Option<Bytes> + Send + Unpin + 'static,
    ) -> Body {
        let Body {
            inner,
            trailers,
            finalize,
        } = self;
        let known = matches!(trailers.as_deref(), None | Some(Trailers::Ready(_)));
        if let (Inner::Full(bytes), true) = (&inner, known) {
            let body = match end(trailers.and_then(|trailers| trailers.take())) {
                Some(last) if bytes.is_empty() => last,
                Some(last) => {
                    let mut joined = bytes::BytesMut::with_capacity(bytes.len() + last.len());
                    joined.extend_from_slice(bytes);
                    joined.extend_from_slice(&last);
                    joined.freeze()
                }
                None => bytes.clone(),
            };
            let mut body = Body::from(body);
            body.finalize = finalize;
            return body;
        }
        let source = Body {
            inner,
            trailers,
            finalize: None,
        };
        let mut body = Body::boxed(Box::pin(TrailersInBody {
            body: Some(source),
            end: Some(end),
        }));
        body.finalize = finalize;
        body
    }

    /// This body with each chunk passed through `map` (its trailers kept):
    /// gRPC-Web's text form encodes each in base64; an `Err` fails the body.
    #[cfg(feature = "grpc")]
    pub(crate) fn map_chunks(
        mut self,
        mut map: impl FnMut(Bytes) -> Result<Bytes, StreamError> + Send + 'static,
    ) -> Body {
        let finalize = self.finalize.take();
        let trailers = self.trailers.take();
        let full = match &mut self.inner {
            Inner::Full(bytes) => Some(std::mem::take(bytes)),
            _ => None,
        };
        let mut body = match full.map(&mut map) {
            Some(Ok(bytes)) => Body::from(bytes),
            Some(Err(error)) => Body::boxed(Box::pin(futures_util::stream::iter([Err(error)]))),
            None => Body::boxed(Box::pin(futures_util::stream::poll_fn(move |cx| {
                self.poll_chunk(cx)
                    .map(|chunk| chunk.map(|chunk| chunk.and_then(&mut map)))
            }))),
        };
        body.trailers = trailers;
        body.finalize = finalize;
        body
    }

    /// Reads the whole body and its trailers (a gRPC answer, to answer a
    /// Connect unary call with).
    #[cfg(feature = "grpc")]
    pub(crate) async fn collect_with_trailers(
        mut self,
    ) -> Result<(Bytes, Option<http::HeaderMap>), StreamError> {
        let known = matches!(self.trailers.as_deref(), None | Some(Trailers::Ready(_)));
        if let (Inner::Full(bytes), true) = (&mut self.inner, known) {
            let trailers = self.trailers.take().and_then(|trailers| trailers.take());
            return Ok((std::mem::take(bytes), trailers));
        }
        let mut collected = bytes::BytesMut::new();
        let mut trailers = None;
        while let Some(frame) =
            std::future::poll_fn(|cx| http_body::Body::poll_frame(Pin::new(&mut self), cx)).await
        {
            match frame?.into_data() {
                Ok(data) => collected.extend_from_slice(&data),
                Err(frame) => trailers = frame.into_trailers().ok(),
            }
        }
        Ok((collected.freeze(), trailers))
    }

    /// Hands the body the cleanup to run when it is dropped.
    pub(crate) fn finalize_with(&mut self, guard: FinalizeGuard) {
        self.finalize = Some(guard);
    }

    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, StreamError>>> {
        loop {
            match &mut self.inner {
                Inner::Full(bytes) if bytes.is_empty() => return Poll::Ready(None),
                Inner::Full(bytes) => return Poll::Ready(Some(Ok(std::mem::take(bytes)))),
                Inner::Shared(slot) => {
                    let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
                    let Some(stream) = taken else {
                        self.inner = Inner::Done;
                        return Poll::Ready(Some(Err(StreamError::new(
                            "a clone of this response sent the stream already",
                        ))));
                    };
                    self.inner = Inner::Owned(Mutex::new(stream));
                }
                Inner::Owned(stream) => {
                    let stream = stream.get_mut().unwrap_or_else(PoisonError::into_inner);
                    // A panic in the stream's code (a handler's bug) fails
                    // the body as an error would, whoever polls it: the
                    // listener's connection task, or a test's own task in
                    // process.
                    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        stream.as_mut().poll_next(cx)
                    }));
                    let next = match polled {
                        Ok(polled) => std::task::ready!(polled),
                        Err(panic) => {
                            let message = format!(
                                "the response body's stream panicked: {}",
                                crate::support::log::panic_message(&*panic)
                            );
                            crate::support::log::error(&message);
                            Some(Err(StreamError::new(message)))
                        }
                    };
                    if !matches!(next, Some(Ok(_))) {
                        // Ended or failed: drop the stream (and what it holds) now.
                        self.inner = Inner::Done;
                    }
                    return Poll::Ready(next);
                }
                Inner::Done => return Poll::Ready(None),
            }
        }
    }
}

/// A body's chunks, then the last chunk its trailers make
/// ([`Body::trailers_into_body`]).
#[cfg(feature = "grpc")]
struct TrailersInBody<F> {
    /// `None` once it has ended.
    body: Option<Body>,
    end: Option<F>,
}

#[cfg(feature = "grpc")]
impl<F> Stream for TrailersInBody<F>
where
    F: FnOnce(Option<http::HeaderMap>) -> Option<Bytes> + Unpin,
{
    type Item = Result<Bytes, StreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(None);
        };
        let trailers = match std::task::ready!(http_body::Body::poll_frame(Pin::new(body), cx)) {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => return Poll::Ready(Some(Ok(data))),
                Err(frame) => frame.into_trailers().ok(),
            },
            Some(Err(error)) => {
                // A failed body ends abruptly, without its status.
                this.body = None;
                return Poll::Ready(Some(Err(error)));
            }
            None => None,
        };
        this.body = None;
        Poll::Ready(this.end.take().and_then(|end| end(trailers)).map(Ok))
    }
}

/// The data frames of a body, its trailers put into a slot on the way.
struct DataFrames<B> {
    body: Pin<Box<B>>,
    trailers: Arc<Mutex<Option<http::HeaderMap>>>,
}

impl<B> Stream for DataFrames<B>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Item = Result<Bytes, Box<dyn std::error::Error + Send + Sync>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let Some(frame) = std::task::ready!(self.body.as_mut().poll_frame(cx)) else {
                return Poll::Ready(None);
            };
            match frame.map_err(Into::into)?.into_data() {
                Ok(data) => return Poll::Ready(Some(Ok(data))),
                Err(frame) => {
                    if let Ok(trailers) = frame.into_trailers() {
                        *self.trailers.lock().unwrap_or_else(PoisonError::into_inner) =
                            Some(trailers);
                    }
                }
            }
        }
    }
}

impl<B> Unpin for DataFrames<B> {}

impl Clone for Body {
    /// The clone shares a streamed body's stream; the finalize cleanup stays
    /// with the original.
    fn clone(&self) -> Self {
        let inner = match &self.inner {
            Inner::Full(bytes) => Inner::Full(bytes.clone()),
            Inner::Shared(slot) => Inner::Shared(Arc::clone(slot)),
            Inner::Owned(_) | Inner::Done => Inner::Done,
        };
        Body {
            inner,
            trailers: self.trailers.clone(),
            finalize: None,
        }
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Full(bytes) => f.debug_tuple("Body").field(bytes).finish(),
            _ => f.write_str("Body(<stream>)"),
        }
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = StreamError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamError>>> {
        let this = self.get_mut();
        Poll::Ready(match std::task::ready!(this.poll_chunk(cx)) {
            Some(chunk) => Some(chunk.map(Frame::data)),
            // A failed stream never gets to its trailers.
            None => this
                .trailers
                .take()
                .and_then(|t| t.take())
                .map(|t| Ok(Frame::trailers(t))),
        })
    }

    fn is_end_stream(&self) -> bool {
        if self.trailers.is_some() {
            return false;
        }
        match &self.inner {
            Inner::Full(bytes) => bytes.is_empty(),
            Inner::Done => true,
            Inner::Shared(_) | Inner::Owned(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Full(bytes) => SizeHint::with_exact(bytes.len() as u64),
            Inner::Done => SizeHint::with_exact(0),
            Inner::Shared(_) | Inner::Owned(_) => SizeHint::default(),
        }
    }
}

/// A buffered body equals the same bytes (handy in tests:
/// `assert_eq!(response.body(), "hello")`); a streamed body equals nothing.
impl PartialEq<[u8]> for Body {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_bytes().is_some_and(|bytes| bytes == other)
    }
}

/// See [`PartialEq<[u8]>`](#impl-PartialEq%3C%5Bu8%5D%3E-for-Body).
impl PartialEq<str> for Body {
    fn eq(&self, other: &str) -> bool {
        self == other.as_bytes()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Body {
            inner: Inner::Full(bytes),
            trailers: None,
            finalize: None,
        }
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Bytes::from(text).into()
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Self {
        Bytes::from_static(text.as_bytes()).into()
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Bytes::from(bytes).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use http_body_util::BodyExt;

    #[test]
    fn a_buffered_body_is_one_frame_of_known_size() {
        let body = Body::from("hello");
        assert_eq!(http_body::Body::size_hint(&body).exact(), Some(5));
        let collected = body.collect().now_or_never().unwrap().unwrap();
        assert_eq!(collected, "hello");
    }

    #[test]
    fn a_stream_yields_its_chunks_then_ends() {
        let mut body = Body::from_stream(futures_util::stream::iter(["a", "b"]));
        assert!(body.is_stream() && body.as_bytes().is_none());
        let frames = async {
            let mut frames = Vec::new();
            while let Some(frame) = body.frame().await {
                frames.push(frame.unwrap().into_data().unwrap());
            }
            frames
        }
        .now_or_never()
        .unwrap();
        assert_eq!(frames, ["a", "b"]);
        assert!(http_body::Body::is_end_stream(&body));
    }

    #[test]
    fn only_one_clone_sends_a_stream() {
        let body = Body::from_stream(futures_util::stream::iter(["x"]));
        let clone = body.clone();
        assert_eq!(body.collect().now_or_never().unwrap().unwrap(), "x");
        let error = clone.collect().now_or_never().unwrap().unwrap_err();
        assert!(
            error.to_string().contains("sent the stream already"),
            "{error}"
        );
    }

    #[test]
    fn a_failing_stream_ends_with_its_error() {
        let chunks: Vec<Result<&str, std::io::Error>> =
            vec![Ok("partial"), Err(std::io::Error::other("upstream gone"))];
        let body = Body::from_try_stream(futures_util::stream::iter(chunks));
        let error = body.collect().now_or_never().unwrap().unwrap_err();
        assert!(error.to_string().contains("upstream gone"), "{error}");
    }
}
