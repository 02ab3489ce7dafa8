//! What the journal keeps of a gRPC call: every message both ways, and the
//! status it ended with.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::Status;
use crate::journal::RecordedRequest;

/// How many messages of each direction a call's record keeps; the rest are
/// counted ([`CallRecord::requests_received`], [`CallRecord::replies_sent`]).
pub const MAX_RECORDED_MESSAGES: usize = 1000;

/// How a recorded message is shown: its type decoding it, `Debug`-printed.
type Show = fn(&Bytes) -> String;

/// A gRPC call as the journal recorded it: the messages the client sent
/// and the handler answered, and the status the call ended with. A handler
/// of the `grpc` namespace puts it in the journal entry of each call it
/// answers ([`CallRecord::of`]). WireMock's gRPC extension journals only a
/// stream's first message; this keeps up to [`MAX_RECORDED_MESSAGES`] each
/// way and counts the rest.
///
/// The record is shared with the call while it runs: a stream's messages
/// appear as they pass, and [`status`](Self::status) is `None` until the
/// call has ended.
///
/// ```
/// use mocklib::grpc::{self, CallRecord, Code, GrpcArgs, Status};
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
/// let server = setup_server([grpc::unary("helloworld.Greeter/SayHello", |_: GrpcArgs<HelloRequest>| {
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
/// let call = CallRecord::of(&request).expect("a gRPC call");
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
    show_request: Show,
    show_reply: Show,
    log: Mutex<Log>,
}

#[derive(Default)]
struct Log {
    requests: Direction,
    replies: Direction,
    status: Option<Status>,
}

#[derive(Default)]
struct Direction {
    /// A unary call's one message stays inline: no allocation for it.
    kept: smallvec::SmallVec<[Bytes; 1]>,
    total: usize,
}

impl Direction {
    /// Counts a message, keeping the one `message` makes while fewer than
    /// [`MAX_RECORDED_MESSAGES`] are kept.
    fn push_with(&mut self, message: impl FnOnce() -> Bytes) {
        self.total += 1;
        if self.kept.len() < MAX_RECORDED_MESSAGES {
            self.kept.push(message());
        }
    }
}

impl CallRecord {
    /// The record of the gRPC call a journal entry is about; `None` for
    /// any other request (and for a call no `grpc` handler answered).
    pub fn of(recorded: &RecordedRequest) -> Option<&CallRecord> {
        recorded.extensions().get()
    }

    pub(super) fn new(method: Arc<str>, show_request: Show, show_reply: Show) -> Self {
        CallRecord {
            shared: Arc::new(Shared {
                method,
                show_request,
                show_reply,
                log: Mutex::default(),
            }),
        }
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

    /// The messages the client sent that the handler read, in order (the
    /// first [`MAX_RECORDED_MESSAGES`]).
    pub fn requests(&self) -> Vec<RecordedMessage> {
        let show = self.shared.show_request;
        let log = self.log();
        log.requests
            .kept
            .iter()
            .map(|bytes| RecordedMessage::new(bytes, show))
            .collect()
    }

    /// The replies sent, in order (the first [`MAX_RECORDED_MESSAGES`]).
    pub fn replies(&self) -> Vec<RecordedMessage> {
        let show = self.shared.show_reply;
        let log = self.log();
        log.replies
            .kept
            .iter()
            .map(|bytes| RecordedMessage::new(bytes, show))
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

    /// A request message read, kept as a copy: the message is a slice of
    /// a chunk of the connection's read buffer, which the journal would
    /// otherwise keep alive whole.
    pub(super) fn request(&self, message: &Bytes) {
        self.log()
            .requests
            .push_with(|| Bytes::copy_from_slice(message));
    }

    /// Records the replies framed in `batch` at `ranges` (each a message
    /// without its 5-byte frame header). A reply past those kept is only
    /// counted, never sliced: a slice of a shared batch is an atomic
    /// increment now and a decrement when the journal drops the call, which
    /// a 10,000-reply stream measured (the bench's server stream).
    pub(super) fn replies_framed(
        &self,
        batch: &Bytes,
        ranges: impl IntoIterator<Item = std::ops::Range<usize>>,
    ) {
        let mut log = self.log();
        for range in ranges {
            log.replies.push_with(|| batch.slice(range));
        }
    }

    pub(super) fn finish(&self, status: &Status) {
        self.log().status.get_or_insert_with(|| status.clone());
    }
}

impl std::fmt::Debug for CallRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRecord")
            .field("method", &self.method())
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
    fn new(bytes: &Bytes, show: Show) -> Self {
        RecordedMessage {
            bytes: bytes.clone(),
            show,
        }
    }

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
