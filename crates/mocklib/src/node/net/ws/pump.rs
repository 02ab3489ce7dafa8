//! Moving messages between a WebSocket and the core's queues, with the
//! connection's handler polled in the same task.
//!
//! A bare echo server reads a message and writes its echo in one task. The
//! pump does the same with a handler in between: a received message is
//! queued for the handler and the handler polled at once, and what the
//! handler queued is written before the task sleeps. Neither side wakes the
//! other through the scheduler ([`Mailbox::push_polled`],
//! [`Mailbox::forget_waker`]); a handler in another task (or a peer pumped
//! elsewhere) is woken as usual.
//!
//! [`Mailbox::push_polled`]: crate::message::upgrade::Mailbox::push_polled
//! [`Mailbox::forget_waker`]: crate::message::upgrade::Mailbox::forget_waker

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::{Context, Poll};

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as WireMessage;
use tokio_tungstenite::tungstenite::protocol::CloseFrame as WireClose;

use crate::message::upgrade::{CloseFrame, Frame, Message, Peer};
use crate::support::maybe_send::BoxFuture;

/// A connection's handler, polled by the task that pumps its socket until
/// it ends (or the task stops it).
pub(super) struct Handler(Option<BoxFuture<()>>);

impl Handler {
    /// `future`, run by the pump. A panic ends it alone, as it ended the
    /// handler's own task before the two shared one: the socket lives on.
    pub(super) fn new(future: BoxFuture<()>) -> Self {
        Handler(Some(Box::pin(async move {
            if let Err(panic) = crate::support::log::catch_unwind(future).await {
                let message = crate::support::log::panic_message(&*panic);
                crate::support::log::error(&format!(
                    "a WebSocket connection's handler panicked: {message}"
                ));
            }
        })))
    }

    /// No handler: a socket pumped for a peer that is read elsewhere.
    pub(super) fn none() -> Self {
        Handler(None)
    }

    fn poll(&mut self, cx: &mut Context<'_>) {
        if let Some(future) = &mut self.0 {
            if future.as_mut().poll(cx).is_ready() {
                self.0 = None;
            }
        }
    }

    /// `work`, with the handler polled beside it.
    pub(super) async fn beside<F: Future>(&mut self, work: F) -> F::Output {
        let mut work = pin!(work);
        poll_fn(|cx| {
            self.poll(cx);
            work.as_mut().poll(cx)
        })
        .await
    }

    /// The rest of the handler.
    pub(super) async fn finish(&mut self) {
        poll_fn(|cx| {
            self.poll(cx);
            if self.0.is_none() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}

/// Moves messages between `socket` and `peer` until either side closes:
/// what arrives goes to `peer.incoming`, what `peer.outgoing` holds goes
/// out; `handler` is polled meanwhile.
pub(super) async fn pump<S>(mut socket: WebSocketStream<S>, peer: Peer, handler: &mut Handler)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut open = Open {
        socket: &mut socket,
        peer: &peer,
        handler,
        unflushed: false,
    };
    let ending = poll_fn(|cx| open.poll(cx)).await;
    match ending {
        Ending::Close(frame) => {
            handler
                .beside(async {
                    let _ = socket.close(Some(wire_close(&frame))).await;
                    // Wait for the peer's close frame, or for it to vanish.
                    while let Some(Ok(_)) = socket.next().await {}
                })
                .await;
        }
        Ending::QueueClosed => {
            let _ = handler.beside(socket.close(None)).await;
        }
        Ending::Received(frame) => {
            // tungstenite answers the close frame on the next flush.
            let _ = handler.beside(socket.flush()).await;
            peer.incoming.close(frame);
            peer.outgoing.close(CloseFrame::normal());
        }
        Ending::Gone => {}
    }
    peer.incoming.close(CloseFrame::abnormal());
    peer.outgoing.close(CloseFrame::abnormal());
}

/// Why an open connection stops being pumped.
enum Ending {
    /// A close frame to send (queued by the handler).
    Close(CloseFrame),
    /// The queue to the socket closed without a close frame.
    QueueClosed,
    /// The peer sent this close frame.
    Received(CloseFrame),
    /// The socket failed or ended without a close frame.
    Gone,
}

/// An open connection being pumped.
struct Open<'a, S> {
    socket: &'a mut WebSocketStream<S>,
    peer: &'a Peer,
    handler: &'a mut Handler,
    /// Frames handed to tungstenite since the last flush that completed (a
    /// flush left pending is tried again on the next wake-up).
    unflushed: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Open<'_, S> {
    /// One wake-up: the queued frames written, each message read handed to
    /// the handler, which is polled at once (and once per wake-up, for
    /// whatever else it waits on), until nothing moves.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Ending> {
        // The wake-up may be the handler's (a timer, another socket).
        let mut handler_due = true;
        loop {
            if let Some(ending) = self.send_queued(cx) {
                return Poll::Ready(ending);
            }
            // Written before the next read, so the peer has it sooner.
            // Pending leaves the socket's write waker registered.
            if self.unflushed {
                match self.socket.poll_flush_unpin(cx) {
                    Poll::Ready(Ok(())) => self.unflushed = false,
                    Poll::Ready(Err(_)) => return Poll::Ready(Ending::Gone),
                    Poll::Pending => {}
                }
            }
            let read = match self.socket.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(message))) => match self.received(message, cx) {
                    Ok(data) => {
                        handler_due |= data;
                        true
                    }
                    Err(ending) => return Poll::Ready(ending),
                },
                Poll::Ready(Some(Err(_)) | None) => return Poll::Ready(Ending::Gone),
                Poll::Pending => false,
            };
            if handler_due {
                // The queue is read again below (and the task registered
                // for it there) before the task waits: what the handler
                // sends now must not wake the task that is running it.
                self.peer.outgoing.forget_waker();
                self.handler.poll(cx);
                handler_due = false;
                continue;
            }
            if !read {
                return Poll::Pending;
            }
        }
    }

    /// Hands tungstenite what the queue holds while the socket takes it;
    /// registers for the queue once it is empty. An ending when the queue
    /// holds a close, or the socket failed.
    fn send_queued(&mut self, cx: &mut Context<'_>) -> Option<Ending> {
        while let Poll::Ready(ready) = self.socket.poll_ready_unpin(cx) {
            if ready.is_err() {
                return Some(Ending::Gone);
            }
            match self.peer.outgoing.poll_next(cx) {
                Poll::Ready(Some(Frame::Message(message))) => {
                    if self.socket.start_send_unpin(to_wire(message)).is_err() {
                        return Some(Ending::Gone);
                    }
                    self.unflushed = true;
                }
                Poll::Ready(Some(Frame::Close(frame))) => return Some(Ending::Close(frame)),
                Poll::Ready(None) => return Some(Ending::QueueClosed),
                Poll::Pending => break,
            }
        }
        None
    }

    /// Hands a data message to the handler (without waking the task that
    /// runs it: the caller polls it next); `Ok(true)` for data, `Ok(false)`
    /// for a control frame, an ending for a close.
    fn received(&mut self, message: WireMessage, cx: &Context<'_>) -> Result<bool, Ending> {
        let message = match message {
            WireMessage::Text(text) => Message::Text(text.as_str().to_owned()),
            WireMessage::Binary(bytes) => Message::Binary(bytes),
            WireMessage::Close(frame) => {
                return Err(Ending::Received(frame.map_or_else(
                    || CloseFrame {
                        code: 1005,
                        reason: String::new(),
                    },
                    |frame| CloseFrame {
                        code: frame.code.into(),
                        reason: frame.reason.as_str().to_owned(),
                    },
                )));
            }
            // Pings are answered by tungstenite itself.
            WireMessage::Ping(_) | WireMessage::Pong(_) | WireMessage::Frame(_) => {
                return Ok(false);
            }
        };
        self.peer.incoming.push_polled(message, cx.waker());
        Ok(true)
    }
}

fn to_wire(message: Message) -> WireMessage {
    match message {
        Message::Text(text) => WireMessage::Text(text.into()),
        Message::Binary(bytes) => WireMessage::Binary(bytes),
    }
}

/// `frame` as tungstenite sends it.
fn wire_close(frame: &CloseFrame) -> WireClose {
    WireClose {
        code: frame.code.into(),
        reason: frame.reason.as_str().into(),
    }
}
