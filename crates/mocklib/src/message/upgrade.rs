//! What a matched WebSocket handler hands its front door: the upgrade to
//! accept and the queues the two sides talk through.
//!
//! The core speaks no WebSocket protocol and runs no task: a connection is
//! two [`Mailbox`]es per peer (messages in, frames out), and the front door
//! that owns the socket pumps between them and the wire (tungstenite on the
//! listener). The `ws` namespace builds the user-facing `client` and `server`
//! on top.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use crate::message::request::Request;
use crate::support::maybe_send::BoxFuture;

/// A WebSocket data message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text message.
    Text(String),
    /// A binary message.
    Binary(Bytes),
}

impl Message {
    /// The text of a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(text) => Some(text),
            Message::Binary(_) => None,
        }
    }

    /// The payload's bytes, text or binary.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Message::Text(text) => text.as_bytes(),
            Message::Binary(bytes) => bytes,
        }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::Text(text.to_owned())
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::Text(text)
    }
}

impl From<Bytes> for Message {
    fn from(bytes: Bytes) -> Self {
        Message::Binary(bytes)
    }
}

impl From<Vec<u8>> for Message {
    fn from(bytes: Vec<u8>) -> Self {
        Message::Binary(bytes.into())
    }
}

/// How a WebSocket connection was closed: the close code and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseFrame {
    /// The close code (1000 normal, 1001 going away, 1006 abnormal: no close
    /// frame, 4000–4999 for applications…).
    pub code: u16,
    /// The reason, up to 123 bytes.
    pub reason: String,
}

impl CloseFrame {
    /// A normal closure (1000) without a reason.
    pub fn normal() -> Self {
        CloseFrame {
            code: 1000,
            reason: String::new(),
        }
    }

    /// What a peer that vanished without a close frame leaves (1006).
    pub(crate) fn abnormal() -> Self {
        CloseFrame {
            code: 1006,
            reason: String::new(),
        }
    }
}

/// What goes out to a peer: a message, or the close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    Message(Message),
    Close(CloseFrame),
}

/// A one-way queue with one reader: items in order, then an optional close.
#[derive(Debug)]
pub(crate) struct Mailbox<T>(Mutex<MailboxState<T>>);

#[derive(Debug)]
struct MailboxState<T> {
    items: VecDeque<T>,
    closed: Option<CloseFrame>,
    waker: Option<Waker>,
}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Mailbox(Mutex::new(MailboxState {
            items: VecDeque::new(),
            closed: None,
            waker: None,
        }))
    }
}

impl<T> Mailbox<T> {
    fn lock(&self) -> MutexGuard<'_, MailboxState<T>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item`; `false` (and nothing queued) once closed.
    pub(crate) fn push(&self, item: T) -> bool {
        let mut state = self.lock();
        if state.closed.is_some() {
            return false;
        }
        state.items.push_back(item);
        wake(state.waker.take(), state);
        true
    }

    /// Queues `item` for a reader that the caller polls itself right after,
    /// in the task whose waker is `polling`: that reader is not woken (its
    /// task is the one running), so the item reaches it without a trip
    /// through the scheduler. A reader in another task is woken as by
    /// [`push`](Self::push). `false` (and nothing queued) once closed.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn push_polled(&self, item: T, polling: &Waker) -> bool {
        let mut state = self.lock();
        if state.closed.is_some() {
            return false;
        }
        state.items.push_back(item);
        let waker = match &state.waker {
            // Left in place: the reader stays registered if it does not read now.
            Some(waker) if waker.will_wake(polling) => None,
            _ => state.waker.take(),
        };
        wake(waker, state);
        true
    }

    /// Forgets the reader's waker: for a reader that is running and reads
    /// again (registering with [`poll_next`](Self::poll_next)) before it
    /// waits, so that what its own task queues meanwhile does not wake it
    /// for nothing.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn forget_waker(&self) {
        self.lock().waker = None;
    }

    /// No more items after those queued; the reader sees `frame` after them.
    pub(crate) fn close(&self, frame: CloseFrame) {
        let mut state = self.lock();
        if state.closed.is_none() {
            state.closed = Some(frame);
        }
        wake(state.waker.take(), state);
    }

    /// How it was closed, once it is.
    pub(crate) fn closed(&self) -> Option<CloseFrame> {
        self.lock().closed.clone()
    }

    /// The next item; `None` once closed and drained.
    pub(crate) fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.lock();
        if let Some(item) = state.items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if state.closed.is_some() {
            return Poll::Ready(None);
        }
        match &state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The next item; `None` once closed and drained.
    pub(crate) async fn next(&self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }
}

fn wake<T>(waker: Option<Waker>, state: MutexGuard<'_, T>) {
    drop(state);
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// One side of a connection as the core sees it: what arrives from that
/// peer, and what to send it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Peer {
    /// Messages the peer sent; closed when the peer closed or vanished.
    pub(crate) incoming: Arc<Mailbox<Message>>,
    /// Frames to send the peer.
    pub(crate) outgoing: Arc<Mailbox<Frame>>,
}

impl Peer {
    /// Sends the peer `frame` as the last thing it gets.
    pub(crate) fn send_close(&self, frame: CloseFrame) {
        self.outgoing.push(Frame::Close(frame.clone()));
        self.outgoing.close(frame);
    }
}

/// Opens the real WebSocket behind an intercepted upgrade (`server.connect()`);
/// a front door with a network provides it.
pub(crate) trait Connector: Send + Sync {
    /// Connects to `request`'s URL (as `ws://`/`wss://`), offering
    /// `protocols` (a `Sec-WebSocket-Protocol` value); the returned peer is
    /// pumped by the front door, beside the sub-protocol the server chose.
    fn connect(&self, request: &Request, protocols: Option<String>) -> ConnectFuture;
}

/// What [`Connector::connect`] returns: `Send` on every target, the
/// browser's too, as a connection's handler (which awaits it in
/// `server.connect()`) is `Send` everywhere.
pub(crate) type ConnectFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Connected, String>> + Send>>;

/// A connection to a real WebSocket server.
#[derive(Debug)]
pub(crate) struct Connected {
    pub(crate) peer: Peer,
    /// The sub-protocol the server chose (the listener's passthrough hands
    /// it on; the browser's joins the page's socket to the real one itself).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(crate) protocol: Option<String>,
}

/// Resolves a request against the handlers of the connection's scope,
/// answering with the mocked response (`None` when no handler mocked it):
/// how a protocol spoken over a socket (GraphQL over WebSocket) reaches the
/// other handlers. The front door that owns the engine provides it (the
/// listener: GraphQL over WebSocket is native only).
#[cfg(all(feature = "graphql", not(target_arch = "wasm32")))]
pub(crate) trait Resolve: Send + Sync {
    fn resolve(&self, request: Request) -> BoxFuture<Resolved>;
}

/// How the handlers answered a request a connection resolved.
#[cfg(all(feature = "graphql", not(target_arch = "wasm32")))]
pub(crate) enum Resolved {
    /// A handler mocked it.
    Mocked(http::Response<crate::message::body::Body>),
    /// No handler answered it: perform it as it is.
    Passthrough,
    /// It failed (a mocked network error, or the unhandled strategy).
    Failed(String),
}

/// What a front door lends a connection's handler.
#[derive(Clone, Default)]
pub(crate) struct Services {
    /// Opens real WebSockets (`server.connect()`).
    pub(crate) connector: Option<Arc<dyn Connector>>,
    /// Resolves requests against the handlers.
    #[cfg(all(feature = "graphql", not(target_arch = "wasm32")))]
    pub(crate) resolve: Option<Arc<dyn Resolve>>,
}

/// Starts a connection's handler once the front door accepted the upgrade.
pub(crate) type Start = Box<dyn FnOnce(Peer, Services) -> BoxFuture<()> + Send>;

/// A WebSocket upgrade a handler accepted: the front door answers `101`
/// with [`protocol`](Self::protocol), then runs the handler on the socket.
pub struct WebSocketUpgrade {
    request: Request,
    protocol: Option<String>,
    start: Start,
}

impl WebSocketUpgrade {
    pub(crate) fn new(request: Request, protocol: Option<String>, start: Start) -> Self {
        WebSocketUpgrade {
            request,
            protocol,
            start,
        }
    }

    /// The upgrade request.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The sub-protocol chosen among those the client offered
    /// (`Sec-WebSocket-Protocol`), if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// Accepts the upgrade: the peer the front door pumps the client's
    /// socket through, and the handler's future to run meanwhile (the front
    /// door stops it when the socket ends).
    pub(crate) fn accept(self, services: Services) -> (Peer, BoxFuture<()>) {
        let peer = Peer::default();
        let handler = (self.start)(peer.clone(), services);
        (peer, handler)
    }
}

impl std::fmt::Debug for WebSocketUpgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("url", &self.request.url().as_str())
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn a_mailbox_yields_its_items_then_ends_once_closed() {
        let mailbox = Mailbox::default();
        assert!(mailbox.push(1));
        assert!(mailbox.push(2));
        mailbox.close(CloseFrame::normal());
        assert!(!mailbox.push(3), "nothing is queued after the close");
        assert_eq!(mailbox.next().now_or_never(), Some(Some(1)));
        assert_eq!(mailbox.next().now_or_never(), Some(Some(2)));
        assert_eq!(mailbox.next().now_or_never(), Some(None));
        assert_eq!(mailbox.closed(), Some(CloseFrame::normal()));
    }

    #[test]
    fn an_empty_open_mailbox_waits() {
        let mailbox = Mailbox::<u8>::default();
        assert_eq!(mailbox.next().now_or_never(), None);
    }

    /// What the listener's pump relies on to hand a message to a handler
    /// in its own task without waking it.
    #[cfg(not(target_arch = "wasm32"))]
    mod same_task {
        use super::*;

        /// A waker that counts its wake-ups.
        #[derive(Default)]
        struct Counting(std::sync::atomic::AtomicUsize);

        impl std::task::Wake for Counting {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }

        impl Counting {
            fn wakes(&self) -> usize {
                self.0.load(std::sync::atomic::Ordering::Relaxed)
            }
        }

        /// `mailbox`'s reader waits with a fresh counting waker, returned.
        fn waiting_reader(mailbox: &Mailbox<u8>) -> (Arc<Counting>, Waker) {
            let counting = Arc::new(Counting::default());
            let waker = Waker::from(Arc::clone(&counting));
            let pending = mailbox.poll_next(&mut Context::from_waker(&waker));
            assert_eq!(pending, Poll::Pending);
            (counting, waker)
        }

        #[test]
        fn a_push_polled_wakes_no_reader_of_the_polling_task_and_any_other() {
            let mailbox = Mailbox::default();
            let (counting, waker) = waiting_reader(&mailbox);
            assert!(mailbox.push_polled(1, &waker));
            assert_eq!(counting.wakes(), 0, "the caller polls its own reader");
            assert_eq!(mailbox.next().now_or_never(), Some(Some(1)));

            let (other, _) = waiting_reader(&mailbox);
            assert!(mailbox.push_polled(2, &waker));
            assert_eq!(other.wakes(), 1, "a reader in another task is woken");

            mailbox.close(CloseFrame::normal());
            assert!(
                !mailbox.push_polled(3, &waker),
                "nothing is queued after the close"
            );
        }

        #[test]
        fn a_forgotten_waker_is_not_woken_until_the_reader_polls_again() {
            let mailbox = Mailbox::default();
            let (counting, waker) = waiting_reader(&mailbox);
            mailbox.forget_waker();
            assert!(mailbox.push(1));
            assert_eq!(counting.wakes(), 0);
            let mut cx = Context::from_waker(&waker);
            assert_eq!(mailbox.poll_next(&mut cx), Poll::Ready(Some(1)));
            assert_eq!(mailbox.poll_next(&mut cx), Poll::Pending);
            assert!(mailbox.push(2));
            assert_eq!(counting.wakes(), 1);
        }
    }
}
