//! One intercepted WebSocket connection: the `client` and `server` its
//! handler talks to, and the loop that forwards between them.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

use url::Url;

use crate::handling::resolver::{RequestId, SessionDriver};
use crate::message::cookies::Cookies;
use crate::message::params::Params;
use crate::message::request::Request;
use crate::message::upgrade::{CloseFrame, Connector, Frame, Message, Peer};
use crate::support::maybe_send::BoxFuture;

/// The argument of a connection handler (MSW: `{ client, server, params }`).
#[derive(Debug)]
#[non_exhaustive]
pub struct ResolverArgs {
    /// The connected client: the code under test.
    pub client: Client,
    /// The real server, connected on demand.
    pub server: Server,
    /// The upgrade request (its headers and cookies as the client sent them).
    pub request: Request,
    /// Path parameters captured by the link's pattern.
    pub params: Params,
    /// The upgrade request's cookies.
    pub cookies: Cookies,
    /// An id unique to the upgrade request, the one life-cycle events carry.
    pub request_id: RequestId,
}

/// What a matched handler knows before the front door accepts the socket.
pub(super) struct Parts {
    pub(super) request: Request,
    pub(super) params: Params,
    pub(super) cookies: Cookies,
    pub(super) request_id: RequestId,
    pub(super) protocol: Option<String>,
}

impl Parts {
    pub(super) fn into_connection(
        self,
        peer: Peer,
        connector: Option<Arc<dyn Connector>>,
    ) -> ResolverArgs {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let client = Client(Arc::new(ClientInner {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            url: super::ws_url(self.request.url()),
            protocol: self.protocol.clone(),
            peer,
        }));
        ResolverArgs {
            server: Server {
                request: self.request.clone(),
                protocol: self.protocol,
                connector,
            },
            client,
            request: self.request,
            params: self.params,
            cookies: self.cookies,
            request_id: self.request_id,
        }
    }
}

/// Runs a connection's handler: its synchronous part now, the rest as the
/// returned future (which the front door drives and stops with the socket).
/// A failure or a panic closes the client with 1011 and is logged.
pub(super) fn run(connection: ResolverArgs, on_connection: &super::OnConnection) -> BoxFuture<()> {
    let client = connection.client.clone();
    let url = client.url().to_string();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| on_connection(connection)));
    let SessionDriver(future, ended) = match outcome {
        Ok(driver) => driver,
        Err(panic) => SessionDriver(None, Err(crate::support::log::panic_message(&*panic))),
    };
    Box::pin(async move {
        let ended = match (ended, future) {
            (Err(problem), _) => Err(problem),
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(future)) => crate::support::log::catch_unwind(future)
                .await
                .unwrap_or_else(|panic| Err(crate::support::log::panic_message(&*panic))),
        };
        if let Err(problem) = ended {
            crate::support::log::error(&format!(
                "the WebSocket handler for {url} failed: {problem}. The connection closes with 1011."
            ));
            client.close_with(1011, "mocklib: the handler failed");
        }
    })
}

/// The client side of a connection (MSW: `client`). Clones are the same
/// client.
#[derive(Clone)]
pub struct Client(Arc<ClientInner>);

struct ClientInner {
    id: u64,
    url: Url,
    protocol: Option<String>,
    peer: Peer,
}

impl Client {
    /// An id unique to this connection in the process.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// The URL the client connected to (`ws://` or `wss://`).
    pub fn url(&self) -> &Url {
        &self.0.url
    }

    /// The sub-protocol accepted for this connection.
    pub fn protocol(&self) -> Option<&str> {
        self.0.protocol.as_deref()
    }

    /// Sends `message` to the client; nothing once the connection is closed.
    pub fn send(&self, message: impl Into<Message>) {
        self.0.peer.outgoing.push(Frame::Message(message.into()));
    }

    /// Closes the connection normally (1000).
    pub fn close(&self) {
        self.close_with(1000, "");
    }

    /// Closes the connection with `code` and `reason` (MSW:
    /// `client.close(code, reason)`).
    pub fn close_with(&self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code,
            reason: reason.to_owned(),
        };
        self.0.peer.send_close(frame);
    }

    /// The next message the client sent; `None` once it closed (see
    /// [`closed`](Self::closed)). One reader at a time.
    pub async fn recv(&self) -> Option<Message> {
        self.0.peer.incoming.next().await
    }

    /// The client's messages as a `Stream` (the same queue as
    /// [`recv`](Self::recv)), ending when the client closes.
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use mocklib::ws;
    ///
    /// ws::link("/numbers").on_connection(|connection| async move {
    ///     let mut total = 0;
    ///     let mut numbers = connection.client.messages();
    ///     while let Some(message) = numbers.next().await {
    ///         total += message.as_text().and_then(|t| t.parse::<i64>().ok()).unwrap_or(0);
    ///         connection.client.send(total.to_string());
    ///     }
    /// });
    /// ```
    pub fn messages(&self) -> Messages {
        Messages(self.clone())
    }

    /// How the connection closed, once it did (1006 when the client vanished
    /// without a close frame).
    pub fn closed(&self) -> Option<CloseFrame> {
        self.0
            .peer
            .incoming
            .closed()
            .or_else(|| self.0.peer.outgoing.closed())
    }

    /// Whether the connection is still open both ways.
    pub fn is_open(&self) -> bool {
        self.closed().is_none()
    }
}

/// The messages of a [`Client`], as a `Stream` ([`Client::messages`]).
#[derive(Debug)]
pub struct Messages(Client);

impl futures_util::Stream for Messages {
    type Item = Message;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Message>> {
        self.0.0.peer.incoming.poll_next(cx)
    }
}

impl PartialEq for Client {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Client {}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.0.id)
            .field("url", &self.0.url.as_str())
            .field("open", &self.is_open())
            .finish()
    }
}

/// Why [`Server::connect`] could not reach the real server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// This front door has no network (the listener provides one).
    #[error("connecting to the real WebSocket {url} needs the listener (feature `net`)")]
    Unavailable {
        /// The WebSocket URL.
        url: String,
    },
    /// The connection or its handshake failed.
    #[error("connecting to the real WebSocket {url} failed: {message}")]
    Failed {
        /// The WebSocket URL.
        url: String,
        /// What went wrong.
        message: String,
    },
}

/// The real server behind an intercepted connection (MSW: `server`).
#[derive(Clone)]
pub struct Server {
    request: Request,
    protocol: Option<String>,
    connector: Option<Arc<dyn Connector>>,
}

impl Server {
    /// Opens the real WebSocket at the connection's URL, with the client's
    /// headers and the accepted sub-protocol. Then forward between the two
    /// with [`ResolverArgs::forward`], or talk to it yourself.
    pub async fn connect(&self) -> Result<Upstream, Error> {
        let url = super::ws_url(self.request.url()).to_string();
        let Some(connector) = &self.connector else {
            return Err(Error::Unavailable { url });
        };
        let connecting = connector.connect(&self.request, self.protocol.clone());
        match connecting.await {
            Ok(connected) => Ok(Upstream {
                peer: connected.peer,
            }),
            Err(message) => Err(Error::Failed { url, message }),
        }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("url", &self.request.url().as_str())
            .finish_non_exhaustive()
    }
}

/// A connection to the real WebSocket server.
#[derive(Debug)]
pub struct Upstream {
    peer: Peer,
}

impl Upstream {
    /// Sends `message` to the real server.
    pub fn send(&self, message: impl Into<Message>) {
        self.peer.outgoing.push(Frame::Message(message.into()));
    }

    /// The next message from the real server; `None` once it closed.
    pub async fn recv(&self) -> Option<Message> {
        self.peer.incoming.next().await
    }

    /// Closes the connection to the real server.
    pub fn close_with(&self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code,
            reason: reason.to_owned(),
        };
        self.peer.send_close(frame);
    }

    /// How the real server closed, once it did.
    pub fn closed(&self) -> Option<CloseFrame> {
        self.peer.incoming.closed()
    }
}

/// Which way a forwarded message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the client under test to the real server.
    ClientToServer,
    /// From the real server to the client under test.
    ServerToClient,
}

impl ResolverArgs {
    /// Forwards every message both ways unchanged until either side closes,
    /// then closes the other side the same way.
    pub async fn forward(&self, server: Upstream) {
        self.forward_with(server, |_, message| Some(message)).await;
    }

    /// Like [`forward`](Self::forward), passing each message through
    /// `filter` first: return it (altered or not) to forward it, `None` to
    /// drop it.
    pub async fn forward_with(
        &self,
        server: Upstream,
        filter: impl FnMut(Direction, Message) -> Option<Message>,
    ) {
        forward_peers(&self.client.0.peer, &server.peer, filter).await;
    }
}

/// Moves messages between `client` and `server` (through `filter`) until
/// either closes, then closes the other the same way.
pub(super) async fn forward_peers(
    client: &Peer,
    server: &Peer,
    mut filter: impl FnMut(Direction, Message) -> Option<Message>,
) {
    loop {
        let next = std::future::poll_fn(|cx| {
            if let Poll::Ready(message) = client.incoming.poll_next(cx) {
                return Poll::Ready((Direction::ClientToServer, message));
            }
            if let Poll::Ready(message) = server.incoming.poll_next(cx) {
                return Poll::Ready((Direction::ServerToClient, message));
            }
            Poll::Pending
        })
        .await;
        let (from, to) = match next.0 {
            Direction::ClientToServer => (client, server),
            Direction::ServerToClient => (server, client),
        };
        match next.1 {
            Some(message) => {
                if let Some(message) = filter(next.0, message) {
                    to.outgoing.push(Frame::Message(message));
                }
            }
            None => {
                let frame = from.incoming.closed().unwrap_or_else(CloseFrame::abnormal);
                let frame = CloseFrame {
                    code: closable(frame.code),
                    ..frame
                };
                to.send_close(frame);
                return;
            }
        }
    }
}

/// A code that may be sent in a close frame: 1005, 1006 and 1015 only
/// describe closes, so pass them on as a normal closure.
fn closable(code: u16) -> u16 {
    match code {
        1005 | 1006 | 1015 => 1000,
        code => code,
    }
}
