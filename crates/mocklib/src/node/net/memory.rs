//! The listener without a socket: connections over an in-memory pipe, for
//! clients that take a connector (tonic's `Endpoint::connect_with_connector`,
//! hyper-util's `Client::builder().build(connector)`, and the clients built
//! on them).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};

use super::Shared;
use crate::engine::list::Scope;

/// How many bytes each direction of a pipe holds before its writer waits
/// for the reader (the socket buffers of a loopback connection, roughly).
const PIPE_BYTES: usize = 256 * 1024;

/// A connector whose connections reach this server's listener through
/// memory, not a socket: the listener serves them as it serves its TCP
/// connections (HTTP/1.1 or HTTP/2 by the client's preface, base URL
/// requests, proxy requests, `CONNECT`), so every client that takes a
/// connector reaches the handlers with no port, no firewall and no
/// `HTTP_PROXY` — from [`Server::connector`](crate::node::Server::connector).
///
/// It is a `tower::Service<http::Uri>` that answers every URI with a new
/// [`MemoryStream`]: the URI's host and port only name the origin of the
/// requests (relative predicates match their paths). Tested with tonic's
/// `Endpoint::connect_with_connector` and hyper-util's legacy `Client`; any
/// client built on either (kube, the AWS SDK's hyper client) takes it the
/// same way.
///
/// Made inside a boundary, its connections resolve in that boundary, and
/// close as it ends (a request on one after that is answered `410`).
#[derive(Clone)]
pub struct MemoryConnector {
    shared: Arc<Shared>,
    scope: Option<Arc<Scope>>,
}

impl std::fmt::Debug for MemoryConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryConnector")
            .field("server", &self.shared.address)
            .finish_non_exhaustive()
    }
}

impl MemoryConnector {
    pub(super) fn new(shared: Arc<Shared>, scope: Option<Arc<Scope>>) -> Self {
        MemoryConnector { shared, scope }
    }

    /// A new connection to the listener.
    pub fn connect(&self) -> MemoryStream {
        let (client, server) = tokio::io::duplex(PIPE_BYTES);
        super::listener::serve_in_memory(Arc::clone(&self.shared), self.scope.clone(), server);
        MemoryStream {
            io: TokioIo::new(client),
        }
    }
}

impl tower_service::Service<http::Uri> for MemoryConnector {
    type Response = MemoryStream;
    type Error = io::Error;
    type Future = std::future::Ready<Result<MemoryStream, io::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _uri: http::Uri) -> Self::Future {
        std::future::ready(Ok(self.connect()))
    }
}

/// One in-memory connection to the listener ([`MemoryConnector`]): a
/// hyper connection (`hyper::rt::Read + Write`, hyper-util's `Connection`)
/// and a tokio one (`AsyncRead + AsyncWrite`).
#[derive(Debug)]
pub struct MemoryStream {
    io: TokioIo<DuplexStream>,
}

impl Connection for MemoryStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl hyper::rt::Read for MemoryStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for MemoryStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        hyper::rt::Write::poll_write(Pin::new(&mut self.io), cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        hyper::rt::Write::poll_flush(Pin::new(&mut self.io), cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        hyper::rt::Write::poll_shutdown(Pin::new(&mut self.io), cx)
    }
}

impl AsyncRead for MemoryStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(self.io.inner_mut()).poll_read(cx, buf)
    }
}

impl AsyncWrite for MemoryStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.io.inner_mut()).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.io.inner_mut()).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.io.inner_mut()).poll_shutdown(cx)
    }
}
