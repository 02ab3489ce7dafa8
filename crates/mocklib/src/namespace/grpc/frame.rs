//! gRPC's length-prefixed messages: one byte saying whether the message is
//! compressed, four bytes of length (big-endian), then the message.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use http::HeaderName;

use super::wire::put_header;
use super::{CallRecord, Code, Status};
use crate::message::request::{BodyChunks, Request};

/// Messages larger than this are refused (gRPC's usual default, 4 MiB).
pub(super) const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// The least a buffer framing messages grows by.
const MIN_GROWTH: usize = 1024;

/// `message`, framed.
pub(super) fn encode(message: &impl prost::Message) -> Bytes {
    let mut framed = BytesMut::with_capacity(5 + message.encoded_len());
    encode_into(message, &mut framed);
    framed.freeze()
}

/// Appends `message`, framed, to `out`.
pub(super) fn encode_into(message: &impl prost::Message, out: &mut BytesMut) {
    encode_sized(message, message.encoded_len(), out);
}

/// Appends `message`, framed, to `out`, given its `encoded_len()`.
pub(super) fn encode_sized(message: &impl prost::Message, length: usize, out: &mut BytesMut) {
    if out.capacity() - out.len() < 5 + length {
        // A buffer that frames message after message grows by a useful
        // step, not by each small message's size.
        out.reserve((5 + length).max(MIN_GROWTH));
    }
    put_header(length, out);
    message
        .encode(out)
        .expect("the buffer was reserved for encoded_len");
}

/// The one message of a unary call, or the status a gRPC server answers
/// a request it cannot read with.
pub(super) async fn unary_message<M: prost::Message + Default>(
    request: Request,
    record: CallRecord,
) -> Result<M, Status> {
    check_encoding(&request)?;
    let mut frames = Frames::of(&request, Some(record));
    // gRPC's status codes: a method that takes exactly one request and got
    // another number of them is a cardinality violation, UNIMPLEMENTED.
    let Some(message) = frames.next().await else {
        return Err(Status::new(
            Code::Unimplemented,
            "a unary call sent no message",
        ));
    };
    let message = message?;
    match frames.next().await {
        None => decode(message),
        // A malformed frame after the message: the body is broken, which
        // says more than that it holds more than one message.
        Some(Err(malformed)) => Err(malformed),
        Some(Ok(_)) => Err(Status::new(
            Code::Unimplemented,
            "a unary call sent more than one message",
        )),
    }
}

/// Refuses compressed messages: mocklib reads `identity` only. As gRPC's
/// compression spec asks, the answer names what it accepts
/// (`grpc-accept-encoding`).
pub(super) fn check_encoding(request: &Request) -> Result<(), Status> {
    match header(request, &GRPC_ENCODING) {
        Some(encoding) if !encoding.eq_ignore_ascii_case("identity") => Err(Status::new(
            Code::Unimplemented,
            format!("mocklib reads identity-encoded messages only, not grpc-encoding {encoding}"),
        )
        .with_metadata("grpc-accept-encoding", "identity")),
        _ => Ok(()),
    }
}

pub(super) const GRPC_ENCODING: HeaderName = HeaderName::from_static("grpc-encoding");
pub(super) const GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");

/// The value of the header `name` as text: looked up by a name made once,
/// not parsed from a string per call.
pub(super) fn header<'r>(request: &'r Request, name: &HeaderName) -> Option<&'r str> {
    request
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
}

/// One message, or the status a message that does not decode earns.
pub(super) fn decode<M: prost::Message + Default>(message: Bytes) -> Result<M, Status> {
    M::decode(message).map_err(|error| {
        Status::new(
            Code::Internal,
            format!(
                "the request message does not decode as {}: {error}",
                short_name::<M>()
            ),
        )
    })
}

/// The messages of a body, each or the status its framing earns.
#[cfg(test)]
fn split(body: &Bytes) -> impl Iterator<Item = Result<Bytes, Status>> {
    let mut framer = Framer::default();
    framer.push(body.clone());
    std::iter::from_fn(move || framer.next_message().or_else(|| framer.finish().map(Err)))
}

/// Splits a body into its messages as its bytes arrive.
///
/// A chunk that starts at a message's prefix (the usual case: a client
/// writes each message as a DATA frame of its own) is cut into its messages
/// without a copy; only a message split across chunks is gathered in a
/// buffer.
#[derive(Debug, Default)]
pub(super) struct Framer {
    /// What is left of the last chunk, while nothing waits in `buffer`.
    chunk: Bytes,
    /// The bytes of a message that came in more than one chunk.
    buffer: BytesMut,
    /// A bad prefix or the body's end was met: nothing more comes out.
    spent: bool,
}

impl Framer {
    pub(super) fn push(&mut self, chunk: Bytes) {
        if self.spent {
            return;
        }
        if self.buffer.is_empty() && self.chunk.is_empty() {
            self.chunk = chunk;
            return;
        }
        // A message goes on in this chunk: gathered with what came before.
        let rest = std::mem::take(&mut self.chunk);
        self.buffer.extend_from_slice(&rest);
        self.buffer.extend_from_slice(&chunk);
    }

    /// The bytes not yet cut into messages.
    fn unread(&self) -> &[u8] {
        if self.chunk.is_empty() {
            &self.buffer
        } else {
            &self.chunk
        }
    }

    /// The next whole message, or the status a bad prefix earns (nothing
    /// comes after it); `None` until more bytes arrive. A prefix over the
    /// limit is refused as soon as it arrives, not once its bytes have.
    pub(super) fn next_message(&mut self) -> Option<Result<Bytes, Status>> {
        let unread = self.unread();
        if self.spent || unread.len() < 5 {
            return None;
        }
        let compressed = unread[0];
        let length = u32::from_be_bytes([unread[1], unread[2], unread[3], unread[4]]) as usize;
        let available = unread.len() - 5;
        let problem = match compressed {
            0 => None,
            1 => Some(Status::new(
                Code::Internal,
                "a compressed message without grpc-encoding",
            )),
            _ => Some(Status::new(
                Code::Internal,
                format!("a message frame with compressed flag {compressed} (0 or 1)"),
            )),
        }
        .or_else(|| {
            (length > MAX_MESSAGE).then(|| {
                Status::new(
                    Code::ResourceExhausted,
                    format!("a message of {length} bytes, over the limit of {MAX_MESSAGE}"),
                )
            })
        });
        if let Some(problem) = problem {
            self.spent = true;
            self.chunk = Bytes::new();
            self.buffer = BytesMut::new();
            return Some(Err(problem));
        }
        if available < length {
            return None;
        }
        if self.chunk.is_empty() {
            let mut framed = self.buffer.split_to(5 + length);
            return Some(Ok(framed.split_off(5).freeze()));
        }
        let message = self.chunk.slice(5..5 + length);
        self.chunk.advance(5 + length);
        Some(Ok(message))
    }

    /// The status a body that ends here earns: one whose last message is
    /// cut short.
    pub(super) fn finish(&mut self) -> Option<Status> {
        if std::mem::replace(&mut self.spent, true) || self.unread().is_empty() {
            return None;
        }
        let unread = self.unread();
        let message = match unread.get(..5) {
            None => "a message frame is cut short: fewer than 5 bytes of prefix".to_owned(),
            Some(prefix) => format!(
                "a message frame says {} bytes but {} follow",
                u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]),
                unread.len() - 5
            ),
        };
        self.chunk = Bytes::new();
        self.buffer = BytesMut::new();
        Some(Status::new(Code::Internal, message))
    }
}

/// A call's messages as they arrive, then at most one status: bad framing,
/// or a body that failed (the client reset the call).
#[derive(Debug)]
pub(super) struct Frames {
    /// `None` once the body has ended or failed.
    chunks: Option<BodyChunks>,
    framer: Framer,
    /// Where each message read goes (the journal's record of the call).
    record: Option<CallRecord>,
}

impl Frames {
    pub(super) fn of(request: &Request, record: Option<CallRecord>) -> Self {
        Frames {
            chunks: Some(request.body_chunks()),
            framer: Framer::default(),
            record,
        }
    }
}

impl Stream for Frames {
    type Item = Result<Bytes, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(message) = this.framer.next_message() {
                match (&message, &this.record) {
                    (Ok(bytes), Some(record)) => record.request(bytes),
                    (Err(_), _) => this.chunks = None,
                    (Ok(_), None) => {}
                }
                return Poll::Ready(Some(message));
            }
            let Some(chunks) = this.chunks.as_mut() else {
                return Poll::Ready(None);
            };
            match std::task::ready!(chunks.poll_next_unpin(cx)) {
                Some(Ok(chunk)) => this.framer.push(chunk),
                Some(Err(error)) => {
                    this.chunks = None;
                    return Poll::Ready(Some(Err(Status::new(
                        Code::Cancelled,
                        format!("the call's request stream failed: {error}"),
                    ))));
                }
                None => {
                    this.chunks = None;
                    return Poll::Ready(this.framer.finish().map(Err));
                }
            }
        }
    }
}

/// A `grpc-timeout` value (`100m`, `5S`, ...); `None` if invalid.
pub(super) fn parse_timeout(value: &str) -> Option<Duration> {
    // The unit is one ASCII letter: split before it only then (a
    // multi-byte last character has no boundary there).
    if !value.as_bytes().last()?.is_ascii() {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

fn short_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        // Whatever bytes a client sends, reading them ends: every message,
        // then at most one status, and the messages cover the body exactly
        // when there is no status.
        #[test]
        fn any_body_splits_into_messages_or_ends_with_a_status(body in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let body = Bytes::from(body);
            let parts: Vec<_> = split(&body).collect();
            let statuses = parts.iter().filter(|part| part.is_err()).count();
            proptest::prop_assert!(statuses <= 1);
            if statuses == 1 {
                proptest::prop_assert!(parts.last().unwrap().is_err(), "the status comes last");
            } else {
                let framed: usize = parts.iter().map(|part| 5 + part.as_ref().unwrap().len()).sum();
                proptest::prop_assert_eq!(framed, body.len());
            }
        }

        #[test]
        fn any_timeout_text_parses_or_is_refused(text in "\\PC{0,12}") {
            let _ = parse_timeout(&text);
        }
    }

    #[test]
    fn timeouts_parse_as_grpc_writes_them() {
        assert_eq!(parse_timeout("100m"), Some(Duration::from_millis(100)));
        assert_eq!(parse_timeout("5S"), Some(Duration::from_secs(5)));
        assert_eq!(parse_timeout("2H"), Some(Duration::from_secs(7200)));
        for invalid in ["", "m", "123456789S", "10x", "-1S", "1.5S", "1é"] {
            assert_eq!(parse_timeout(invalid), None, "{invalid:?}");
        }
    }

    /// SayHello's request, as a unary call of `String` (prost's
    /// `StringValue`: field 1) reads it.
    fn unary_call(body: &[u8], encoding: Option<&str>) -> Result<String, Status> {
        let mut headers = http::HeaderMap::new();
        if let Some(encoding) = encoding {
            headers.insert("grpc-encoding", encoding.parse().unwrap());
        }
        let url = url::Url::parse("http://greeter.test/helloworld.Greeter/SayHello").unwrap();
        let request = Request::from_parts(
            http::Method::POST,
            url,
            headers,
            Bytes::copy_from_slice(body),
        );
        // A buffered body: read at once.
        let record = CallRecord::new(
            "/helloworld.Greeter/SayHello".into(),
            |_| String::new(),
            |_| String::new(),
            crate::namespace::grpc::Protocol::Grpc,
        );
        futures_util::FutureExt::now_or_never(unary_message::<String>(request, record))
            .expect("a buffered body is read at once")
    }

    #[test]
    fn a_unary_call_takes_exactly_one_message_in_identity() {
        let one = b"\0\0\0\0\x04\x0a\x02hi";
        assert_eq!(unary_call(one, None).unwrap(), "hi");
        assert_eq!(unary_call(one, Some("identity")).unwrap(), "hi");

        // Zero or two: a cardinality violation, UNIMPLEMENTED.
        let none = unary_call(b"", None).unwrap_err();
        assert_eq!(none.code(), Code::Unimplemented, "{none}");
        let two = unary_call(&[&one[..], &one[..]].concat(), None).unwrap_err();
        assert_eq!(two.code(), Code::Unimplemented, "{two}");
        assert!(two.message().contains("more than one message"), "{two}");

        // One, then a broken frame: the broken frame is what is wrong.
        let cut = unary_call(&[&one[..], b"\0\0\0\0\x09abc"].concat(), None).unwrap_err();
        assert_eq!(cut.code(), Code::Internal, "{cut}");
        assert!(cut.message().contains("says 9 bytes but 3 follow"), "{cut}");

        // Compressed: UNIMPLEMENTED, naming the encoding and what is read.
        let gzip = unary_call(one, Some("gzip")).unwrap_err();
        assert_eq!(gzip.code(), Code::Unimplemented, "{gzip}");
        assert!(gzip.message().ends_with("not grpc-encoding gzip"), "{gzip}");
        assert_eq!(gzip.metadata()["grpc-accept-encoding"], "identity");
    }

    #[test]
    fn frames_split_and_every_bad_frame_has_its_status() {
        let body = Bytes::from_static(b"\0\0\0\0\x02hi\0\0\0\0\0");
        let messages: Vec<_> = split(&body).collect::<Result<_, _>>().unwrap();
        assert_eq!(messages, [Bytes::from_static(b"hi"), Bytes::new()]);
        let cases: [(&[u8], Code); 4] = [
            (b"\0\0\0", Code::Internal),
            (b"\x01\0\0\0\x01x", Code::Internal),
            (b"\0\0\0\0\x09short", Code::Internal),
            (b"\0\x7f\0\0\0", Code::ResourceExhausted),
        ];
        for (bytes, code) in cases {
            let body = Bytes::copy_from_slice(bytes);
            let error = split(&body).find_map(Result::err).unwrap();
            assert_eq!(error.code(), code, "{bytes:?}: {error}");
        }
    }
}
