//! The connection hyper serves (TCP, a plain tunnel or TLS in a tunnel),
//! and the faults a handler injects into it.
//!
//! Injected [`Fault`]s are the one place the transport writes past hyper:
//! on HTTP/1 the service plans the fault on the connection and fails, hyper
//! drops the connection without a byte, and the listener's `serve` (or
//! [`FaultIo`]'s drop, for a reset) performs it on the socket hyper let go
//! of.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{StatusCode, Version};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::held_error::Latch;
use crate::message::fault::Fault;
use crate::message::response::StatusText;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A connection the listener serves: TCP, a plain tunnel or TLS in a tunnel.
pub(super) trait Connection: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// The TCP stream itself, when this connection is one (not a tunnel).
    fn as_tcp(&self) -> Option<&tokio::net::TcpStream>;
}

impl<I: AsyncRead + AsyncWrite + Unpin + Send + 'static> Connection for I {
    fn as_tcp(&self) -> Option<&tokio::net::TcpStream> {
        (self as &dyn std::any::Any).downcast_ref()
    }
}

/// What an injected fault asks of a connection once hyper lets go of it
/// (HTTP/1 only: an HTTP/2 connection carries other requests).
#[derive(Default)]
enum Planned {
    #[default]
    Nothing,
    /// Close with a TCP reset.
    Reset,
    /// Write these bytes, then close; `io` is the connection, handed back by
    /// [`FaultIo`] when hyper drops it.
    Raw {
        bytes: Bytes,
        io: Option<Box<dyn Connection>>,
    },
}

/// The fault planned for one connection. The service plans it, then fails
/// so that hyper ends the connection without writing anything; [`FaultIo`]
/// and the listener's `serve` carry it out.
pub(super) struct ConnectionFault {
    planned: std::sync::Mutex<Planned>,
    /// The tunnel's own connection, for a reset inside a `CONNECT` tunnel.
    outer: Option<Arc<ConnectionFault>>,
    /// Released by each completed flush: an HTTP/1 body that failed waits
    /// for one before failing the connection (see `held_error`).
    pub(super) flushed: Arc<Latch>,
}

impl ConnectionFault {
    pub(super) fn new(outer: Option<Arc<ConnectionFault>>) -> Self {
        ConnectionFault {
            planned: std::sync::Mutex::default(),
            outer,
            flushed: Arc::default(),
        }
    }

    fn plan(&self) -> std::sync::MutexGuard<'_, Planned> {
        self.planned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Resets this connection, or the TCP connection a tunnel runs in.
    fn reset(&self) {
        match &self.outer {
            Some(outer) => outer.reset(),
            None => *self.plan() = Planned::Reset,
        }
    }

    fn write_raw(&self, bytes: Bytes) {
        *self.plan() = Planned::Raw { bytes, io: None };
    }

    /// The connection and the bytes to write on it, once hyper dropped it.
    pub(super) fn take_raw(&self) -> Option<(Box<dyn Connection>, Bytes)> {
        match std::mem::take(&mut *self.plan()) {
            Planned::Raw {
                bytes,
                io: Some(io),
            } => Some((io, bytes)),
            _ => None,
        }
    }
}

/// The connection as hyper sees it: the IO itself, which it hands back to
/// the listener's `serve` (or resets) on drop when a fault is planned.
pub(super) struct FaultIo {
    /// Always `Some` until dropped.
    pub(super) io: Option<Box<dyn Connection>>,
    pub(super) fault: Arc<ConnectionFault>,
}

impl FaultIo {
    fn io(&mut self) -> io::Result<Pin<&mut dyn Connection>> {
        match self.io.as_deref_mut() {
            Some(io) => Ok(Pin::new(io)),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Drop for FaultIo {
    fn drop(&mut self) {
        let Some(io) = self.io.take() else { return };
        match &mut *self.fault.plan() {
            Planned::Nothing => {}
            // SO_LINGER 0: closing sends RST instead of FIN. (Tokio warns
            // that lingering blocks on drop; a zero linger never does.)
            Planned::Reset => {
                // Not `io.as_tcp()`: the box itself is a `Connection` too.
                if let Some(Err(error)) = (*io).as_tcp().map(|tcp| tcp.set_zero_linger()) {
                    tracing::debug!(target: "mocklib", %error, "cannot reset the connection");
                }
            }
            Planned::Raw { io: slot, .. } => *slot = Some(io),
        }
    }
}

impl AsyncRead for FaultIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.io()?.poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io()?.poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = std::task::ready!(self.io()?.poll_flush(cx));
        if flushed.is_ok() {
            // hyper flushes its io only once its write buffer is empty:
            // everything it wrote so far is on the socket now.
            self.fault.flushed.release();
        }
        Poll::Ready(flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io()?.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io()?.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.as_ref().is_some_and(|io| io.is_write_vectored())
    }
}

/// Carries out an injected fault on an HTTP/1 connection: plans what
/// the listener's `serve` does once hyper lets go of it, and returns the error that makes
/// hyper let go without writing a byte. On HTTP/2 the error alone resets the
/// request's stream, and the connection goes on serving the others.
pub(super) fn inject(
    fault: Fault,
    head: Option<&http::response::Parts>,
    version: Version,
    on: &ConnectionFault,
) -> BoxError {
    if version < Version::HTTP_2 {
        match fault {
            Fault::ConnectionReset => on.reset(),
            // No bytes, but a clean close (TLS close_notify, then FIN):
            // `HttpResponse::error()` just drops the connection.
            Fault::EmptyResponse => on.write_raw(Bytes::new()),
            Fault::Garbage => on.write_raw(Bytes::from_static(Fault::GARBAGE)),
            Fault::MalformedChunk => on.write_raw(malformed_chunk(head)),
        }
    }
    format!("injected fault: {fault}").into()
}

/// A response head in HTTP/1.1 (the status and headers of `head`, chunked),
/// then a chunk whose size line is not hexadecimal.
fn malformed_chunk(head: Option<&http::response::Parts>) -> Bytes {
    let mut raw = Vec::new();
    let status = head.map_or(StatusCode::OK, |head| head.status);
    let reason = head
        .and_then(|head| head.extensions.get::<StatusText>())
        .map_or_else(
            || status.canonical_reason().unwrap_or(""),
            |text| text.0.as_str(),
        );
    raw.extend_from_slice(format!("HTTP/1.1 {} {reason}\r\n", status.as_str()).as_bytes());
    for (name, value) in head.iter().flat_map(|head| head.headers.iter()) {
        if name != http::header::TRANSFER_ENCODING && name != http::header::CONTENT_LENGTH {
            raw.extend_from_slice(name.as_str().as_bytes());
            raw.extend_from_slice(b": ");
            raw.extend_from_slice(value.as_bytes());
            raw.extend_from_slice(b"\r\n");
        }
    }
    raw.extend_from_slice(b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    raw.extend_from_slice(Fault::MALFORMED_CHUNK);
    raw.into()
}
