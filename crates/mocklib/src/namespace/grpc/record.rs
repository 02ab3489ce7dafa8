//! What the journal keeps of a gRPC call: every message both ways, and the
//! status it ended with.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::{Bytes, BytesMut};

use super::wire::{put_header, whole_frames};
use super::{Protocol, Status};

/// How many messages of each direction a call's record keeps; the rest are
/// counted ([`CallRecord::requests_received`], [`CallRecord::replies_sent`]).
pub const MAX_RECORDED_MESSAGES: usize = 1000;

/// How many bytes of messages of each direction a call's record keeps
/// (1 MiB): a message that would go past it is counted, not kept, and so
/// is every message after it. A stream of large messages (a file sent in
/// chunks, say) would otherwise keep up to a thousand of them alive per
/// journal entry.
pub const MAX_RECORDED_BYTES: usize = 1024 * 1024;

/// How a recorded message is shown: its type decoding it, `Debug`-printed.
type Show = fn(&Bytes) -> String;

/// A gRPC call as the journal recorded it: the messages the client sent
/// and the handler answered, and the status the call ended with. A handler
/// of the `grpc` namespace puts it in the journal entry of each call it
/// answers ([`RecordedRequest::grpc_call`](crate::journal::RecordedRequest::grpc_call)). WireMock's gRPC extension journals only a
/// stream's first message; this keeps up to [`MAX_RECORDED_MESSAGES`] each
/// way (within [`MAX_RECORDED_BYTES`]) and counts the rest.
///
/// The record is shared with the call while it runs: a stream's messages
/// appear as they pass, and [`status`](Self::status) is `None` until the
/// call has ended.
///
/// ```
/// use mocklib::grpc::{self, CallRecord, Code, ResolverArgs, Status};
/// use mocklib::node::setup_server;
/// use prost::Message as _;
///
/// #[derive(Clone, PartialEq, prost::Message)]
/// struct HelloRequest {
///     #[prost(string, tag = "1")]
///     name: String,
/// }
/// # #[derive(Clone, PartialEq, prost::Message)]
/// # struct HelloReply {
/// #     #[prost(string, tag = "1")]
/// #     message: String,
/// # }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = setup_server([grpc::unary("helloworld.Greeter/SayHello", |_: ResolverArgs<HelloRequest>| {
///     Err::<HelloReply, _>(Status::new(Code::NotFound, "no such person"))
/// })]);
/// server.listen();
///
/// // A call, as a client's front door hands it over: one framed message.
/// let message = HelloRequest { name: "Kate".into() }.encode_to_vec();
/// let mut body = vec![0];
/// body.extend((message.len() as u32).to_be_bytes());
/// body.extend(message);
/// let mut headers = http::HeaderMap::new();
/// headers.insert("content-type", "application/grpc".parse()?);
/// let url = "http://greeter.test/helloworld.Greeter/SayHello".parse()?;
/// server.handle(mocklib::Request::from_parts(http::Method::POST, url, headers, body.into()), None).await;
///
/// let [request] = server.requests().try_into().unwrap();
/// let call = request.grpc_call().expect("a gRPC call");
/// assert_eq!(call.method(), "/helloworld.Greeter/SayHello");
/// assert_eq!(format!("{:?}", call.requests()), r#"[HelloRequest { name: "Kate" }]"#);
/// assert!(call.replies().is_empty());
/// assert_eq!(call.status().map(|status| status.code()), Some(Code::NotFound));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct CallRecord {
    shared: Arc<Shared>,
}

struct Shared {
    /// Shared with the handler's own path, which calls usually have.
    method: Arc<str>,
    protocol: Protocol,
    show_request: Show,
    show_reply: Show,
    log: Mutex<Log>,
}

#[derive(Default)]
struct Log {
    requests: Requests,
    replies: Replies,
    status: Option<Status>,
}

/// The request messages, copied (each is a slice of a chunk of the
/// connection's read buffer, which the journal would otherwise keep alive
/// whole) and framed one after the other into a buffer of the record's
/// own: no allocation per message (a bidirectional call's record made one
/// for each of its first 1,000).
#[derive(Default)]
struct Requests {
    /// Runs of whole frames, frozen when read; a unary call's one stays
    /// inline.
    frozen: smallvec::SmallVec<[Bytes; 1]>,
    /// The frames appended since the last read.
    growing: BytesMut,
    kept: Kept,
    total: usize,
}

/// How much of a direction is kept: the first messages, up to
/// [`MAX_RECORDED_MESSAGES`] and [`MAX_RECORDED_BYTES`].
#[derive(Default)]
struct Kept {
    messages: usize,
    bytes: usize,
    /// A message did not fit: none after it is kept either.
    full: bool,
}

impl Kept {
    /// Takes `count` messages of `bytes` in all if they all fit (and
    /// nothing otherwise).
    fn take_all(&mut self, count: usize, bytes: usize) -> bool {
        let fits = !self.full
            && self.messages + count <= MAX_RECORDED_MESSAGES
            && self.bytes + bytes <= MAX_RECORDED_BYTES;
        if fits {
            self.messages += count;
            self.bytes += bytes;
        }
        fits
    }

    /// Takes a message of `length` bytes if it fits.
    fn take(&mut self, length: usize) -> bool {
        self.full = self.full
            || self.messages == MAX_RECORDED_MESSAGES
            || self.bytes + length > MAX_RECORDED_BYTES;
        if !self.full {
            self.messages += 1;
            self.bytes += length;
        }
        !self.full
    }
}

impl Requests {
    /// Counts `message`, keeping a copy if it fits (see [`Kept`]).
    fn push(&mut self, message: &[u8]) {
        self.total += 1;
        if self.kept.take(message.len()) {
            self.growing.reserve(5 + message.len());
            put_header(message.len(), &mut self.growing);
            self.growing.extend_from_slice(message);
        }
    }

    /// The messages kept, without their frame headers.
    fn messages(&mut self) -> impl Iterator<Item = Bytes> + '_ {
        if !self.growing.is_empty() {
            self.frozen.push(self.growing.split().freeze());
        }
        messages_in(&self.frozen)
    }
}

/// The replies: kept as the batches of framed replies they were sent in
/// (a handle per batch, not per reply: a 10,000-reply stream's record
/// held 1,000 handles, 32 KB, in a vector grown five times, per call).
#[derive(Default)]
struct Replies {
    /// Whole frames each; a unary call's one batch stays inline.
    batches: smallvec::SmallVec<[Bytes; 1]>,
    kept: Kept,
    total: usize,
}

impl Replies {
    /// Counts the `count` replies framed in `batch`, keeping those that
    /// fit (see [`Kept`]).
    fn push(&mut self, batch: &Bytes, count: usize) {
        self.total += count;
        // Most batches fit whole: no need to read their frames.
        if self.kept.take_all(count, batch.len() - 5 * count) {
            self.batches.push(batch.clone());
            return;
        }
        let mut end = 0;
        for (start, stop) in whole_frames(batch) {
            if !self.kept.take(stop - start) {
                break;
            }
            end = stop;
        }
        if end > 0 {
            // A slice would keep the whole batch alive for a few replies.
            self.batches.push(if end * 2 < batch.len() {
                Bytes::copy_from_slice(&batch[..end])
            } else {
                batch.slice(..end)
            });
        }
    }

    /// The kept batches copied into one allocation of their size, made
    /// now: the batches they were cut from go, and an allocation made
    /// after them (at the end of a stream) leaves the memory they free
    /// for the next call's batches rather than for the allocator to give
    /// back, page by page, to be faulted in again.
    fn compact(&mut self) {
        if self.batches.len() > 1 {
            let mut all = Vec::with_capacity(self.batches.iter().map(Bytes::len).sum());
            for batch in &self.batches {
                all.extend_from_slice(batch);
            }
            self.batches = smallvec::smallvec![Bytes::from(all)];
        }
    }

    /// The messages kept, without their frame headers.
    fn messages(&self) -> impl Iterator<Item = Bytes> + '_ {
        messages_in(&self.batches)
    }
}

/// The messages framed in `runs` (whole frames each), without their headers.
fn messages_in(runs: &[Bytes]) -> impl Iterator<Item = Bytes> + '_ {
    runs.iter()
        .flat_map(|run| whole_frames(run).map(|(start, end)| run.slice(start..end)))
}

impl CallRecord {
    pub(super) fn new(
        method: Arc<str>,
        show_request: Show,
        show_reply: Show,
        protocol: Protocol,
    ) -> Self {
        CallRecord {
            shared: Arc::new(Shared {
                method,
                protocol,
                show_request,
                show_reply,
                log: Mutex::default(),
            }),
        }
    }

    /// The record, type-erased for the response that carries it to the
    /// journal (no copy: the same shared state).
    pub(crate) fn to_shared(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        Arc::clone(&self.shared) as Arc<dyn std::any::Any + Send + Sync>
    }

    /// The record [`Self::to_shared`] erased; `None` for anything else.
    pub(crate) fn from_shared(shared: Arc<dyn std::any::Any + Send + Sync>) -> Option<Self> {
        shared
            .downcast::<Shared>()
            .ok()
            .map(|shared| CallRecord { shared })
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The method called: `/package.Service/Method`.
    pub fn method(&self) -> &str {
        &self.shared.method
    }

    /// The protocol the call came in on: gRPC, gRPC-Web or Connect (the
    /// same handlers answer all three).
    pub fn protocol(&self) -> Protocol {
        self.shared.protocol
    }

    /// The messages the client sent that the handler read, in order (the
    /// first [`MAX_RECORDED_MESSAGES`], within [`MAX_RECORDED_BYTES`]).
    pub fn requests(&self) -> Vec<RecordedMessage> {
        let show = self.shared.show_request;
        let mut log = self.log();
        log.requests
            .messages()
            .map(|bytes| RecordedMessage { bytes, show })
            .collect()
    }

    /// The replies sent, in order (the first [`MAX_RECORDED_MESSAGES`],
    /// within [`MAX_RECORDED_BYTES`]).
    pub fn replies(&self) -> Vec<RecordedMessage> {
        let show = self.shared.show_reply;
        let log = self.log();
        log.replies
            .messages()
            .map(|bytes| RecordedMessage { bytes, show })
            .collect()
    }

    /// How many messages the handler read, kept or not.
    pub fn requests_received(&self) -> usize {
        self.log().requests.total
    }

    /// How many replies were sent, kept or not.
    pub fn replies_sent(&self) -> usize {
        self.log().replies.total
    }

    /// The status the call ended with; `None` while it runs (a stream
    /// still sending, say) or when its client went away first.
    pub fn status(&self) -> Option<Status> {
        self.log().status.clone()
    }

    /// A request message read (kept as a copy, see `Requests`).
    pub(super) fn request(&self, message: &Bytes) {
        self.log().requests.push(message);
    }

    /// Records the `count` replies framed in `batch` (whole frames).
    pub(super) fn replies_framed(&self, batch: &Bytes, count: usize) {
        self.log().replies.push(batch, count);
    }

    /// The call ended with `status`: its kept replies are compacted (see
    /// `Replies::compact`; at the end of a stream).
    pub(super) fn finish(&self, status: &Status) {
        let mut log = self.log();
        log.status.get_or_insert_with(|| status.clone());
        log.replies.compact();
    }
}

impl std::fmt::Debug for CallRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRecord")
            .field("method", &self.method())
            .field("protocol", &self.protocol())
            .field("requests", &self.requests())
            .field("replies", &self.replies())
            .field("status", &self.status())
            .finish()
    }
}

/// One message of a recorded call: its protobuf bytes, shown as its type
/// decodes it.
#[derive(Clone)]
pub struct RecordedMessage {
    bytes: Bytes,
    show: Show,
}

impl RecordedMessage {
    /// The message's protobuf encoding (without gRPC's 5-byte prefix).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The message decoded as the handler's message type and printed with
    /// its `Debug` (`HelloRequest { name: "Kate" }`).
    pub fn text(&self) -> String {
        (self.show)(&self.bytes)
    }
}

impl std::fmt::Debug for RecordedMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// How a message of type `M` is shown in a record.
pub(super) fn show<M: prost::Message + Default + std::fmt::Debug>(bytes: &Bytes) -> String {
    match M::decode(bytes.clone()) {
        Ok(message) => format!("{message:?}"),
        Err(error) => format!("<{} bytes that do not decode: {error}>", bytes.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` one-byte messages (their index), framed into one batch.
    fn batch(first: usize, count: usize) -> Bytes {
        let mut framed = Vec::new();
        for index in first..first + count {
            framed.extend([0, 0, 0, 0, 1, index as u8]);
        }
        Bytes::from(framed)
    }

    #[test]
    fn replies_are_kept_by_batch_up_to_the_limit_and_counted_past_it() {
        let mut replies = Replies::default();
        let full = batch(0, 600);
        replies.push(&full, 600);
        // The first batch is kept as it is: a handle, no copy.
        assert_eq!(replies.batches[0].as_ptr(), full.as_ptr());
        // 400 of these fit, most of the batch: a slice of it.
        let most = batch(600, 500);
        replies.push(&most, 500);
        assert_eq!(replies.batches[1].as_ptr(), most.as_ptr());
        assert_eq!(replies.batches[1].len(), 400 * 6);
        replies.push(&batch(1100, 10), 10);
        assert_eq!(
            (replies.kept.messages, replies.total),
            (MAX_RECORDED_MESSAGES, 1110)
        );
        assert_eq!(replies.batches.len(), 2);
        let messages: Vec<Bytes> = replies.messages().collect();
        assert_eq!(messages.len(), MAX_RECORDED_MESSAGES);
        assert!(messages.iter().enumerate().all(|(i, m)| m[..] == [i as u8]));
        // Compacted at the call's end: one allocation, the same messages.
        replies.compact();
        assert_eq!(replies.batches.len(), 1);
        assert_eq!(replies.messages().collect::<Vec<_>>(), messages);
    }

    #[test]
    fn a_few_kept_replies_of_a_large_batch_are_copied_out_of_it() {
        let mut replies = Replies::default();
        replies.push(&batch(0, 998), 998);
        let large = batch(998, 100);
        replies.push(&large, 100);
        // Two replies of a hundred: a slice would keep the whole batch alive.
        assert_ne!(replies.batches[1].as_ptr(), large.as_ptr());
        assert_eq!(&replies.batches[1][..], &large[..12]);
        assert_eq!((replies.kept.messages, replies.total), (1000, 1098));
    }

    #[test]
    fn requests_are_copied_into_one_buffer_up_to_the_limit_and_read_back_between_pushes() {
        let mut requests = Requests::default();
        let read_buffer = Bytes::from(vec![1u8, 2, 3, 4]);
        requests.push(&read_buffer.slice(1..3));
        // A read freezes what was kept so far; pushes go on after it.
        assert_eq!(requests.messages().collect::<Vec<_>>(), [&[2u8, 3][..]]);
        for index in 1..1100 {
            requests.push(&[index as u8]);
        }
        assert_eq!(
            (requests.kept.messages, requests.total),
            (MAX_RECORDED_MESSAGES, 1100)
        );
        let messages: Vec<Bytes> = requests.messages().collect();
        assert_eq!(messages.len(), MAX_RECORDED_MESSAGES);
        assert!(
            messages[1..]
                .iter()
                .enumerate()
                .all(|(i, m)| m[..] == [(i + 1) as u8])
        );
        // Copies: nothing keeps the connection's read buffer alive.
        assert!(read_buffer.is_unique());
    }

    #[test]
    fn large_messages_are_kept_up_to_the_byte_limit_then_only_counted() {
        let quarter = MAX_RECORDED_BYTES / 4;
        let mut requests = Requests::default();
        for size in [quarter, quarter, quarter, quarter + 1, 10, 10] {
            requests.push(&vec![1; size]);
        }
        // The fourth would pass the limit: it and every one after it are
        // counted, not kept (the kept messages stay the first ones).
        let sizes: Vec<usize> = requests.messages().map(|m| m.len()).collect();
        assert_eq!((sizes, requests.total), (vec![quarter; 3], 6));

        let mut replies = Replies::default();
        let framed = |sizes: &[usize]| {
            let mut batch = Vec::new();
            for size in sizes {
                batch.push(0);
                batch.extend((*size as u32).to_be_bytes());
                batch.extend(vec![2; *size]);
            }
            Bytes::from(batch)
        };
        replies.push(&framed(&[quarter, quarter]), 2);
        replies.push(&framed(&[quarter, quarter + 1, 10]), 3);
        replies.push(&framed(&[10]), 1);
        let sizes: Vec<usize> = replies.messages().map(|m| m.len()).collect();
        assert_eq!((sizes, replies.total), (vec![quarter; 3], 6));
        assert!(replies.kept.bytes <= MAX_RECORDED_BYTES);
    }

    #[test]
    fn frames_are_read_by_their_headers_and_a_cut_one_ends_at_the_data() {
        let framed = [0, 0, 0, 0, 2, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 1];
        assert_eq!(
            whole_frames(&framed).collect::<Vec<_>>(),
            [(5, 7), (12, 12), (17, 18)]
        );
    }
}
