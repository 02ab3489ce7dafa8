//! The handler every gRPC method kind makes, and the responses it answers
//! with.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use http::{HeaderMap, HeaderValue, Method};

use super::protocol::{self, Incoming, Protocol};
use super::{CallRecord, Code, Status, frame};
use crate::handling::handler::{Handler, HandlerKind, IndexHint, MatchContext, Matched};
use crate::handling::resolver::{CallContext, Resolution, ResolverCall};
use crate::matching::{PatternError, Predicate};
use crate::message::body::{Body, StreamError};
use crate::message::request::Request;
use crate::message::response::HttpResponse;

type Respond = dyn Fn(Request, Protocol, CallContext) -> Result<ResolverCall, Status> + Send + Sync;

struct GrpcHandler {
    header: String,
    /// `/package.Service/Method`: what suggestions compare request paths with.
    path: String,
    predicate: Predicate,
    respond: Arc<Respond>,
}

/// A handler for `method` whose calls `respond` answers (a gRPC-Web or
/// Connect call made gRPC's, see `protocol`); a `Status` it returns (a
/// request it cannot read) is the answer.
pub(super) fn handler(
    method: &str,
    respond: impl Fn(Request, Protocol, CallContext) -> Result<ResolverCall, Status>
    + Send
    + Sync
    + 'static,
) -> Result<Handler, PatternError> {
    let path = method_path(method)?;
    Ok(Handler::new(GrpcHandler {
        header: format!("grpc {}", &path[1..]),
        predicate: Predicate::path(&format!("*{path}"))?,
        path,
        respond: Arc::new(respond),
    }))
}

/// `/package.Service/Method`, or why `method` is not one.
pub(super) fn method_path(method: &str) -> Result<String, PatternError> {
    let trimmed = method.trim_start_matches('/');
    let valid = trimmed.split_once('/').is_some_and(|(service, name)| {
        !service.is_empty()
            && !name.is_empty()
            && !name.contains('/')
            && trimmed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/'))
    });
    if !valid {
        return Err(PatternError {
            pattern: method.to_owned(),
            position: 0,
            reason: "a gRPC method is `package.Service/Method` (letters, digits, `_` and `.`)"
                .to_owned(),
        });
    }
    Ok(format!("/{trimmed}"))
}

impl HandlerKind for GrpcHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn method(&self) -> Option<&Method> {
        // POST, but also a Connect GET and a browser's CORS preflight.
        None
    }

    fn suggestion_text(&self) -> Option<&str> {
        // The path alone: a call's host is whatever the client dialled.
        Some(&self.path)
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::of_predicate(&self.predicate)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        let request = context.request();
        if !super::protocol::may_be_call(request.method()) {
            return None;
        }
        // A client sends the method's own path: that is matched as it is,
        // without the `*`-led pattern (which parses the URL to match its
        // clean form, capturing a param no one reads).
        if request.url_parts().path() != self.path {
            self.predicate.matches(request, context.base_url())?;
        }
        let respond = Arc::clone(&self.respond);
        let refuse =
            |status: Status| ResolverCall::ready(Resolution::Respond(status_only(&status)));
        match protocol::incoming(request, &self.path, context) {
            Incoming::Grpc => {
                let request = request.clone();
                Some(Matched::new(move |call| {
                    respond(request, Protocol::Grpc, call).unwrap_or_else(refuse)
                }))
            }
            Incoming::Translated(request, back) => Some(Matched::new(move |call| {
                let protocol = back.protocol();
                back.answer(respond(request, protocol, call).unwrap_or_else(refuse))
            })),
            Incoming::Answered(answer) => Some(Matched::new(move |_| {
                ResolverCall::ready(Resolution::Respond(answer))
            })),
            // gRPC over HTTP/2: a server answers a POST to its method of
            // another content type with 415 Unsupported Media Type. Left
            // unmatched, it would be unhandled (over the listener, a 502
            // "no handler answered", which hides the handler and the
            // reason). An `http` handler for the same path still answers
            // such a request when it comes before this one.
            Incoming::NotACall if request.method() == Method::POST => {
                let refusal = unsupported_media_type(request);
                Some(Matched::new(move |_| {
                    ResolverCall::ready(Resolution::Respond(refusal))
                }))
            }
            Incoming::NotACall => None,
        }
    }
}

/// The 415 a POST of another content type to a gRPC method gets, saying
/// what the method takes.
fn unsupported_media_type(request: &Request) -> HttpResponse {
    let received = request.header("content-type").unwrap_or("no content type");
    HttpResponse::text(format!(
        "mocklib: {} is a gRPC method: it takes content type application/grpc \
         (or application/grpc+proto), application/grpc-web (or -text), or Connect's \
         application/proto, application/json and application/connect+proto (or +json), \
         not {received}\n",
        request.url().path()
    ))
    .status(415)
}

const GRPC: HeaderValue = HeaderValue::from_static("application/grpc");

fn grpc_response(body: Body, headers: HeaderMap) -> HttpResponse {
    let mut response = http::Response::new(body);
    *response.headers_mut() = headers;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, GRPC);
    HttpResponse::from_body(response)
}

/// A reply: its message framed, then `grpc-status: 0` in the trailers.
pub(super) fn reply_response(reply: &impl prost::Message, record: CallRecord) -> HttpResponse {
    let ok = Status::new(Code::Ok, "");
    let framed = frame::encode(reply);
    record.replies_framed(&framed, 1);
    record.finish(&ok);
    grpc_response(
        Body::from(framed).with_trailers(ok.to_headers()),
        HeaderMap::new(),
    )
    .journal_shared(record.to_shared())
}

/// A call of a handler ended by `status` alone (see [`status_only`]).
pub(super) fn status_response(status: &Status, record: CallRecord) -> HttpResponse {
    record.finish(status);
    status_only(status).journal_shared(record.to_shared())
}

/// gRPC's trailers-only answer ending a call with this status: HTTP 200,
/// `content-type: application/grpc`, the status and its metadata in the
/// headers, no body. For code that answers a call outside a gRPC handler
/// (an `http` handler, a resolver of its own): a gRPC client reads any other
/// answer as a broken message. Pair it with [`is_call`](super::is_call).
///
/// ```
/// use mocklib::HttpResponse;
/// use mocklib::grpc::{Code, Status};
///
/// let answer = HttpResponse::from(Status::new(Code::Unavailable, "100% down"));
/// assert_eq!(answer.status_code(), 200);
/// assert_eq!(answer.headers()["grpc-status"], "14");
/// assert_eq!(answer.headers()["grpc-message"], "100%25 down");
/// ```
impl From<Status> for HttpResponse {
    fn from(status: Status) -> Self {
        status_only(&status)
    }
}

/// A call ended by `status` alone: gRPC's trailers-only answer, the status
/// in the response headers and no body.
pub(super) fn status_only(status: &Status) -> HttpResponse {
    grpc_response(Body::empty(), status.to_headers())
}

/// A stream of replies: each framed as it comes, then the status its end
/// or its first `Err` decides, in the trailers.
pub(super) fn stream_response<R, S>(replies: S, record: CallRecord) -> HttpResponse
where
    R: prost::Message,
    S: Stream<Item = Result<R, Status>> + Send + 'static,
{
    let trailers = Arc::new(Mutex::new(None));
    let frames = Replies {
        replies: Some(Box::pin(replies)),
        trailers: Arc::clone(&trailers),
        record: record.clone(),
        framed: 0,
        buffer: BytesMut::new(),
        allocation: FIRST_ALLOCATION,
    };
    grpc_response(
        Body::from_try_stream(frames).with_trailers_from(trailers),
        HeaderMap::new(),
    )
    .journal_shared(record.to_shared())
}

/// The frames of a stream of replies, leaving the final status in the
/// body's trailers slot.
struct Replies<S> {
    replies: Option<Pin<Box<S>>>,
    trailers: Arc<Mutex<Option<HeaderMap>>>,
    record: CallRecord,
    /// How many replies the batch being framed holds.
    framed: usize,
    /// Where replies are framed: a batch is split off it, and what is left
    /// of its allocation frames the next (no allocation per reply).
    buffer: BytesMut,
    /// The size of the buffer's next allocation: it doubles each time
    /// replies fill one, up to a batch's worth and its slack.
    allocation: usize,
}

impl<S> Replies<S> {
    /// The batch framed in `buffer`, its replies recorded (the batch
    /// itself: no copies).
    fn send(&mut self) -> Bytes {
        let batch = self.buffer.split().freeze();
        self.record
            .replies_framed(&batch, std::mem::take(&mut self.framed));
        batch
    }
}

impl<R, S> Stream for Replies<S>
where
    R: prost::Message,
    S: Stream<Item = Result<R, Status>>,
{
    type Item = Result<Bytes, StreamError>;

    /// The replies ready now, framed into one chunk of up to [`BATCH`]
    /// bytes (as tonic's encoder does): one HTTP/2 DATA frame per reply
    /// would cost a write per message.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        // A panic in the stream's code (a handler's bug) ends the call with
        // INTERNAL after the replies framed before it, as an `Err` would.
        // Caught around a whole batch, not each reply: the replies framed
        // so far are whole, since a reply is framed only once polled.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| this.poll_batch(cx))) {
            Ok(polled) => polled,
            Err(panic) => Poll::Ready(this.end(panicked(&*panic)).map(Ok)),
        }
    }
}

impl<R, S> Replies<S>
where
    R: prost::Message,
    S: Stream<Item = Result<R, Status>>,
{
    /// [`Stream::poll_next`], but for a panic of the replies' stream.
    fn poll_batch(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, StreamError>>> {
        let status = loop {
            let Some(replies) = self.replies.as_mut() else {
                return Poll::Ready(None);
            };
            match replies.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(reply))) => {
                    let length = reply.encoded_len();
                    let size = 5 + length;
                    let mut sent = None;
                    if self.buffer.capacity() - self.buffer.len() < size {
                        // The allocation is full. Growing it would copy the
                        // batch framed so far: a batch of half a `BATCH` or
                        // more is sent as it is, and the reply starts the
                        // next in an allocation of its own; a smaller one (a
                        // stream's first, from `FIRST_ALLOCATION` up) moves
                        // to a larger, copying what little it holds, so that
                        // batches stay large (a write each).
                        let capacity = (self.buffer.len() + size).max(self.allocation);
                        self.allocation = (self.allocation * 2).min(BATCH + BATCH_SLACK);
                        if self.buffer.len() >= BATCH / 2 {
                            sent = Some(self.send());
                            self.buffer = BytesMut::with_capacity(size.max(self.allocation));
                        } else {
                            let mut larger = BytesMut::with_capacity(capacity);
                            larger.extend_from_slice(&self.buffer);
                            self.buffer = larger;
                        }
                    }
                    frame::encode_sized(&reply, length, &mut self.buffer);
                    self.framed += 1;
                    if let Some(batch) = sent {
                        return Poll::Ready(Some(Ok(batch)));
                    }
                    if self.buffer.len() >= BATCH {
                        let batch = self.send();
                        // The next batch starts in an allocation of its own,
                        // not in this one's slack (it would be copied out).
                        self.buffer = BytesMut::new();
                        return Poll::Ready(Some(Ok(batch)));
                    }
                }
                Poll::Ready(Some(Err(status))) => break status,
                Poll::Ready(None) => break Status::new(Code::Ok, ""),
                Poll::Pending if self.buffer.is_empty() => return Poll::Pending,
                Poll::Pending => return Poll::Ready(Some(Ok(self.send()))),
            }
        };
        Poll::Ready(self.end(status).map(Ok))
    }

    /// Ends the call with `status`: the stream (and what it holds) goes
    /// now; the status waits in the trailers slot for the replies framed
    /// before it, the last batch of which this returns.
    fn end(&mut self, status: Status) -> Option<Bytes> {
        self.replies = None;
        *self.trailers.lock().unwrap_or_else(PoisonError::into_inner) = Some(status.to_headers());
        let batch = (!self.buffer.is_empty()).then(|| self.send());
        self.buffer = BytesMut::new();
        self.record.finish(&status);
        batch
    }
}

/// The status a call ends with when its reply stream panicked (logged).
fn panicked(panic: &(dyn std::any::Any + Send)) -> Status {
    let message = format!(
        "the handler's reply stream panicked: {}",
        crate::support::log::panic_message(panic)
    );
    crate::support::log::error(&message);
    Status::new(Code::Internal, message)
}

/// The most bytes of framed replies sent as one chunk (but for the reply
/// that crosses it).
const BATCH: usize = 32 * 1024;

/// Room past [`BATCH`] in a full-size allocation, for the reply that
/// crosses it: replies that fit are framed with no copy.
const BATCH_SLACK: usize = 4 * 1024;

/// The first allocation of a call's replies: a stream of a few small
/// replies (whose batch the journal keeps) holds no more.
const FIRST_ALLOCATION: usize = 1024;

impl<S> Unpin for Replies<S> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(content_type: &str) -> Request {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", content_type.parse().unwrap());
        let url = url::Url::parse("http://greeter.test/helloworld.Greeter/SayHello").unwrap();
        Request::from_parts(Method::POST, url, headers, Bytes::from_static(b"{}"))
    }

    #[test]
    fn only_grpc_content_types_are_calls_and_others_get_415() {
        for grpc in [
            "application/grpc",
            "application/grpc+proto",
            "Application/GRPC; charset=utf-8",
        ] {
            assert!(
                crate::message::request::is_grpc_content(post(grpc).headers()),
                "{grpc}"
            );
        }
        let say_hello = handler("helloworld.Greeter/SayHello", |_, _, _| {
            Err(Status::new(Code::Internal, "not a call"))
        })
        .unwrap();
        for other in ["text/plain", "application/xml", "application/x-protobuf"] {
            let request = post(other);
            assert!(
                !crate::message::request::is_grpc_content(request.headers()),
                "{other}"
            );
            // The method's handler takes the request, to refuse it.
            assert!(say_hello.matches(&request, None), "{other}");
            let refusal = unsupported_media_type(&request).into_http().unwrap();
            assert_eq!(refusal.status(), http::StatusCode::UNSUPPORTED_MEDIA_TYPE);
            assert!(
                refusal.headers()["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with("text/plain"),
                "{other}"
            );
        }
    }

    /// A stream of `replies` that is pending once, before reply `pause`.
    struct PausingOnce {
        replies: std::vec::IntoIter<Vec<u8>>,
        pause: Option<usize>,
        given: usize,
    }

    impl Stream for PausingOnce {
        type Item = Result<Vec<u8>, Status>;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            if self.pause == Some(self.given) {
                self.pause = None;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.given += 1;
            Poll::Ready(self.replies.next().map(Ok))
        }
    }

    #[test]
    fn replies_go_in_large_batches_of_whole_frames_and_the_record_keeps_them() {
        let mut sent: Vec<Vec<u8>> = (0..3000).map(|i| vec![i as u8; 32]).collect();
        // One reply larger than a batch, then a few small ones.
        sent.push(vec![7; 50_000]);
        sent.extend((0..10).map(|i| vec![i; 3]));
        let record = CallRecord::new(
            "/a.B/C".into(),
            |_| String::new(),
            |_| String::new(),
            Protocol::Grpc,
        );
        let mut frames = Replies {
            replies: Some(Box::pin(PausingOnce {
                replies: sent.clone().into_iter(),
                pause: Some(2000),
                given: 0,
            })),
            trailers: Arc::new(Mutex::new(None)),
            record: record.clone(),
            framed: 0,
            buffer: BytesMut::new(),
            allocation: FIRST_ALLOCATION,
        };
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut batches = Vec::new();
        loop {
            match Pin::new(&mut frames).poll_next(&mut cx) {
                Poll::Ready(Some(batch)) => batches.push(batch.unwrap()),
                Poll::Ready(None) => break,
                Poll::Pending => {}
            }
        }
        // Every reply, in order, each framed whole inside one batch.
        let mut received = Vec::new();
        for batch in &batches {
            let mut rest = &batch[..];
            while !rest.is_empty() {
                let length = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
                let message: Vec<u8> = prost::Message::decode(&rest[5..5 + length]).unwrap();
                received.push(message);
                rest = &rest[5 + length..];
            }
        }
        assert_eq!(received, sent);
        // Batches are large: the first from its small start up, one cut
        // short by the pause, the large reply's, and the last.
        let sizes: Vec<usize> = batches.iter().map(Bytes::len).collect();
        let small = sizes.iter().filter(|size| **size < BATCH / 2).count();
        assert!(small <= 2, "{sizes:?}");
        assert!(
            sizes.iter().all(|size| *size <= BATCH + 50_010),
            "{sizes:?}"
        );
        assert!(sizes.len() <= 8, "{sizes:?}");
        let status = frames.trailers.lock().unwrap().take().unwrap();
        assert_eq!(status["grpc-status"], "0");
        assert_eq!(record.replies_sent(), sent.len());
        let kept: Vec<Vec<u8>> = record
            .replies()
            .iter()
            .map(|message| prost::Message::decode(&message.bytes()[..]).unwrap())
            .collect();
        assert_eq!(kept, sent[..crate::namespace::grpc::MAX_RECORDED_MESSAGES]);
    }
}
