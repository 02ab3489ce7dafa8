//! [`Fault`]: transport failures a resolver can inject, beside
//! [`HttpResponse::error`](crate::HttpResponse::error), and the paced or cut
//! bodies of [`HttpResponse::truncate_after`](crate::HttpResponse::truncate_after)
//! and [`HttpResponse::dribble`](crate::HttpResponse::dribble).
//!
//! The core stays I/O-free: a fault that replaces the whole answer travels as
//! a network error ([`NetworkError::fault`](crate::front_door::NetworkError::fault)) or,
//! for [`Fault::MalformedChunk`], as a mocked response whose body fails and
//! which carries the `Fault` in its extensions; each front door turns it into
//! what its client would see. Body faults are plain bodies: bytes that stop
//! early with an error, or pieces spread over time.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;

use crate::message::body::{Body, StreamError};

/// A failure of the connection itself, in place of a response (MSW has only
/// `HttpResponse.error()`; these are the failures real servers and networks
/// produce). Answer with [`HttpResponse::fault`](crate::HttpResponse::fault):
///
/// ```
/// use mocklib::{http, Fault, HttpResponse};
///
/// let flaky = http::get("https://api.example.com/user", |_| {
///     HttpResponse::fault(Fault::ConnectionReset)
/// });
/// # let _ = flaky;
/// ```
///
/// What each client sees, through the loopback listener over HTTP/1.1
/// (`server.url()`, the proxy, a `CONNECT` tunnel with or without TLS; the
/// tests in `tests/it/faults.rs` check every cell) and through the in-process
/// front doors:
///
/// | fault | reqwest 0.13 (listener) | curl exit code | ureq 3 | in-process (reqwest-middleware, tower) |
/// |---|---|---|---|---|
/// | [`ConnectionReset`](Fault::ConnectionReset) | `is_request()`; source "Connection reset by peer" | 56 "Recv failure: Connection reset by peer" | `Error::Io`, kind `ConnectionReset` | a [`NetworkError`](crate::front_door::NetworkError) whose [`fault()`](crate::front_door::NetworkError::fault) is `ConnectionReset` (`reqwest_middleware::Error::Middleware`; the tower service's `Err`) |
/// | [`EmptyResponse`](Fault::EmptyResponse) | `is_request()`; "connection closed before message completed" | 52 "Empty reply from server" | `Error::Io`, kind `UnexpectedEof` | a `NetworkError`, `fault()` = `EmptyResponse` |
/// | [`Garbage`](Fault::Garbage) | `is_request()`; "invalid HTTP version parsed" | 1 "Received HTTP/0.9 when not allowed" | `Error::Protocol` "http parse fail" | a `NetworkError`, `fault()` = `Garbage` |
/// | [`MalformedChunk`](Fault::MalformedChunk) | the response, then `is_decode()` reading the body: "Invalid chunk size line" | 56 "Illegal or missing hexadecimal sequence in chunked-encoding" | the response, then `Error::Protocol` "chunk length cannot be read as a number" | the response, then a body error ("malformed chunk"; reqwest: `is_decode()`) |
/// | [`truncate_after(n)`](crate::HttpResponse::truncate_after) | the response and `n` bytes, then `is_decode()`: "end of file before message length reached" (over TLS: closed without `close_notify`) | 18 "transfer closed with … bytes remaining to read" | the response, then `Error::Io`, kind `UnexpectedEof` | the response and `n` bytes, then a body error ("truncated after n of its … bytes"; reqwest: `is_decode()`) |
/// | [`dribble(d)`](crate::HttpResponse::dribble) | the whole body, in pieces over `d` | success | success | the whole body, in pieces over `d` |
///
/// In-process there is no socket to break, so a fault that replaces the
/// answer is the network error `HttpResponse::error()` also gives, tagged
/// with the fault; body faults are real body errors, as on the wire.
///
/// Inside a `CONNECT` tunnel, `ConnectionReset` resets the client's TCP
/// connection to the proxy (the tunnel itself); over TLS the other faults
/// are written inside the TLS session.
///
/// **HTTP/2** (TLS tunnels negotiate it with clients that offer it) shares
/// one connection among many requests, so no fault takes the connection
/// down: `ConnectionReset`, `EmptyResponse` and `Garbage` reset the
/// request's stream (`RST_STREAM` `INTERNAL_ERROR`, as
/// `HttpResponse::error()` does; curl exits with 92, reqwest reports a
/// request error "stream error received"), and so do `MalformedChunk` and
/// `truncate_after`, whose head and leading bytes may or may not reach the
/// client before the reset (HTTP/2's frame scheduling decides).
///
/// **In the browser** every fault that replaces the answer makes `fetch`
/// reject with `TypeError: Failed to fetch`, as `HttpResponse::error()`
/// does; `MalformedChunk` and `truncate_after` error the body's
/// `ReadableStream` after the bytes before the fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// The connection is reset (TCP RST) before any byte of the response.
    ConnectionReset,
    /// The connection closes cleanly without a single byte: no status line.
    /// Over plain TCP the listener does the same for
    /// [`HttpResponse::error`](crate::HttpResponse::error); over TLS
    /// `EmptyResponse` also closes the TLS session cleanly (`close_notify`),
    /// where `error()` just drops it.
    EmptyResponse,
    /// [`Fault::GARBAGE`] (bytes that are not HTTP) is sent, then the
    /// connection closes.
    Garbage,
    /// The response head (the status and headers you set, plus
    /// `Transfer-Encoding: chunked`), then a chunk whose size line is not
    /// hexadecimal ([`Fault::MALFORMED_CHUNK`]), then the connection closes.
    MalformedChunk,
}

impl Fault {
    /// What [`Fault::Garbage`] sends: a NUL and a 0xFF byte (so no client
    /// mistakes it for a status line or text), then a note for whoever
    /// captures the traffic.
    ///
    /// ```
    /// assert!(!mocklib::Fault::GARBAGE.starts_with(b"HTTP/"));
    /// ```
    pub const GARBAGE: &'static [u8] = b"\x00\xffmocklib: injected garbage, not HTTP\r\n\r\n";

    /// The chunk [`Fault::MalformedChunk`] sends after the response head:
    /// its size line is not hexadecimal.
    ///
    /// ```
    /// let size_line = mocklib::Fault::MALFORMED_CHUNK.split(|&b| b == b'\r').next().unwrap();
    /// assert!(!size_line.iter().all(u8::is_ascii_hexdigit));
    /// ```
    pub const MALFORMED_CHUNK: &'static [u8] = b"zz\r\nnot a chunk\r\n";

    /// Whether the fault replaces the whole answer with a network error
    /// (all but [`MalformedChunk`](Fault::MalformedChunk), which sends a
    /// response head first).
    pub(crate) fn is_before_response(self) -> bool {
        !matches!(self, Fault::MalformedChunk)
    }

    /// The constructor call that produces this fault, for messages.
    pub(crate) fn constructor(self) -> &'static str {
        match self {
            Fault::ConnectionReset => "HttpResponse::fault(Fault::ConnectionReset)",
            Fault::EmptyResponse => "HttpResponse::fault(Fault::EmptyResponse)",
            Fault::Garbage => "HttpResponse::fault(Fault::Garbage)",
            Fault::MalformedChunk => "HttpResponse::fault(Fault::MalformedChunk)",
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fault::ConnectionReset => "connection reset",
            Fault::EmptyResponse => "empty response",
            Fault::Garbage => "garbage instead of a response",
            Fault::MalformedChunk => "malformed chunk",
        })
    }
}

/// How many pieces [`HttpResponse::dribble`](crate::HttpResponse::dribble)
/// cuts a body into (fewer for a body of fewer bytes).
pub(crate) const DRIBBLE_PIECES: usize = 10;

/// The body of a [`Fault::MalformedChunk`] answer for clients that get no
/// raw bytes (the in-process front doors, HTTP/2, the browser): it fails
/// before its first byte.
pub(crate) fn malformed_chunk_body() -> Body {
    Body::from_try_stream(futures_util::stream::iter([Err::<Bytes, _>(
        "malformed chunk (Fault::MalformedChunk): the chunk size line is not hexadecimal",
    )]))
}

/// `bytes` as a body that sends its first `truncate_after` bytes (all when
/// `None`), in `dribble`'s pieces and pace if set, then fails if it was cut.
pub(crate) fn faulty_body(
    bytes: Bytes,
    truncate_after: Option<usize>,
    dribble: Option<Duration>,
) -> Body {
    let total = bytes.len();
    let sent = truncate_after.map_or(total, |n| n.min(total));
    let failure = (sent < total).then(|| {
        StreamError::new(format!(
            "the body was truncated after {sent} of its {total} bytes \
             (HttpResponse::truncate_after)"
        ))
    });
    let kept = bytes.slice(..sent);
    let (pieces, pause) = match dribble {
        Some(duration) => pieces(kept, duration),
        None => (vec![kept], Duration::ZERO),
    };
    let paced = futures_util::stream::iter(pieces.into_iter().filter(|piece| !piece.is_empty()))
        .enumerate()
        .then(move |(n, piece)| async move {
            if n > 0 && !pause.is_zero() {
                crate::message::delay::delay(pause).await;
            }
            Ok::<_, StreamError>(piece)
        });
    let failure = futures_util::stream::iter(failure).then(|failure| async move {
        // Let the front door flush what came before: hyper drops its write
        // buffer, unsent, when the body fails in the same poll.
        yield_once().await;
        Err(failure)
    });
    Body::from_try_stream(paced.chain(failure))
}

/// Returns `Pending` once (waking itself at once), then `Ready`.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            std::task::Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}

/// `bytes` cut into at most [`DRIBBLE_PIECES`] pieces, and the pause between
/// two of them so that the last one goes `duration` after the first.
fn pieces(bytes: Bytes, duration: Duration) -> (Vec<Bytes>, Duration) {
    let size = bytes.len().div_ceil(DRIBBLE_PIECES).max(1);
    let pieces: Vec<Bytes> = (0..bytes.len())
        .step_by(size)
        .map(|start| bytes.slice(start..(start + size).min(bytes.len())))
        .collect();
    let gaps = u32::try_from(pieces.len().saturating_sub(1)).unwrap_or(u32::MAX);
    let pause = if gaps == 0 {
        Duration::ZERO
    } else {
        duration / gaps
    };
    (pieces, pause)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// Runs `future` to its end; it must need no timer.
    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
        }
    }

    fn frames(body: Body) -> (Vec<Bytes>, Option<String>) {
        block_on(async move {
            let mut body = body;
            let mut frames = Vec::new();
            while let Some(frame) = body.frame().await {
                match frame {
                    Ok(frame) => frames.push(frame.into_data().unwrap()),
                    Err(error) => return (frames, Some(error.to_string())),
                }
            }
            (frames, None)
        })
    }

    #[test]
    fn truncation_sends_the_first_bytes_then_fails() {
        let (sent, error) = frames(faulty_body(
            Bytes::from_static(b"0123456789"),
            Some(4),
            None,
        ));
        assert_eq!(sent, ["0123"]);
        assert!(error.unwrap().contains("after 4 of its 10 bytes"));
        let (sent, error) = frames(faulty_body(Bytes::from_static(b"abc"), Some(0), None));
        assert!(sent.is_empty());
        assert!(error.is_some());
        // At or past the end there is nothing to cut.
        let (sent, error) = frames(faulty_body(Bytes::from_static(b"abc"), Some(3), None));
        assert_eq!((sent, error), (vec![Bytes::from_static(b"abc")], None));
    }

    #[test]
    fn dribbling_cuts_into_at_most_ten_pieces_over_the_duration() {
        let (pieces, pause) = pieces(Bytes::from(vec![7u8; 95]), Duration::from_secs(9));
        assert_eq!(pieces.len(), 10);
        assert!(pieces[..9].iter().all(|piece| piece.len() == 10));
        assert_eq!(pieces[9].len(), 5);
        assert_eq!(pause, Duration::from_secs(1));
        let (pieces, pause) = pieces_of(b"ab", Duration::from_secs(1));
        assert_eq!((pieces.len(), pause), (2, Duration::from_secs(1)));
        let (pieces, pause) = pieces_of(b"", Duration::from_secs(1));
        assert_eq!((pieces.len(), pause), (0, Duration::ZERO));
    }

    fn pieces_of(bytes: &'static [u8], duration: Duration) -> (Vec<Bytes>, Duration) {
        pieces(Bytes::from_static(bytes), duration)
    }

    #[test]
    fn a_malformed_chunk_body_fails_at_once() {
        let (sent, error) = frames(malformed_chunk_body());
        assert!(sent.is_empty());
        assert!(error.unwrap().contains("malformed chunk"));
    }
}
