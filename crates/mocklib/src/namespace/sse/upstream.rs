//! `server.connect()`: the real event stream, read event by event.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;

use super::Client;
use super::event::Event;
use super::parse::Parser;
use crate::message::body::{Body, StreamError};
use crate::message::bypass::BypassError;
use crate::message::request::Request;

/// The real server behind an `sse` handler (MSW: `server`).
#[derive(Debug, Clone)]
pub struct Server {
    request: Request,
}

impl Server {
    pub(super) fn new(request: Request) -> Self {
        Server { request }
    }

    /// Performs the intercepted request for real (skipping every handler,
    /// like [`bypass`](crate::bypass)) and returns its event stream, read as
    /// it arrives. Forward all of it with [`Upstream::forward_to`], or
    /// read it as a `Stream` of events to alter or drop some.
    ///
    /// Fails like `bypass` does (no network on this front door, the request
    /// cannot be sent, the connection failed) and when the real server does
    /// not answer with a 2xx status.
    pub async fn connect(&self) -> Result<Upstream, BypassError> {
        let response = crate::message::bypass::bypass_streaming(&self.request).await?;
        let status = response.status_code();
        if !status.is_success() {
            return Err(BypassError::Failed {
                method: self.request.method().to_string(),
                url: self.request.url().to_string(),
                message: format!("the real event source answered {status}"),
            });
        }
        let body = match response.into_http() {
            Ok(response) => response.into_body(),
            Err(message) => {
                return Err(BypassError::Failed {
                    method: self.request.method().to_string(),
                    url: self.request.url().to_string(),
                    message,
                });
            }
        };
        Ok(Upstream::from_body(body))
    }
}

/// The real event stream: a `Stream` of its [`Event`]s as they arrive.
/// Dropping it closes the connection to the real server.
#[derive(Debug)]
pub struct Upstream {
    body: Body,
    parser: Parser,
    ready: VecDeque<Event>,
}

impl Upstream {
    /// The events of an event-stream `body` (a subscription's, say).
    pub(crate) fn from_body(body: Body) -> Self {
        Upstream {
            body,
            parser: Parser::default(),
            ready: VecDeque::new(),
        }
    }

    /// Sends every remaining event to `client` unchanged, until the real
    /// stream ends (`Ok`) or fails (`Err`).
    pub async fn forward_to(mut self, client: &Client) -> Result<(), StreamError> {
        use futures_util::StreamExt;
        while let Some(event) = self.next().await {
            if client.is_closed() {
                break;
            }
            client.send(event?);
        }
        Ok(())
    }
}

impl Stream for Upstream {
    type Item = Result<Event, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            let frame =
                std::task::ready!(http_body::Body::poll_frame(Pin::new(&mut this.body), cx));
            match frame {
                None => return Poll::Ready(None),
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        this.ready.extend(this.parser.feed(data));
                    }
                }
            }
        }
    }
}
