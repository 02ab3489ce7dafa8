//! Recording requests performed for real, with their whole responses: the
//! hook behind [`har`](crate::har) recording, open to front doors and
//! recorders outside mocklib.
//!
//! While a recorder is set ([`Server::record_exchanges`](crate::node::Server::record_exchanges),
//! or `record` with a HAR file), the engine hands each front door a
//! [`Passthrough`](crate::front_door::Passthrough) whose [`capture`](crate::front_door::Passthrough::capture)
//! is `Some`. The front door that performs the request wraps the real
//! response's body in a [`Tap`] (or feeds the [`Capture`] itself), which
//! copies the bytes as the client reads them and hands the finished
//! [`Exchange`] to the recorder when the body ends. A body that fails or is
//! abandoned is not recorded: a recording never holds a response the client
//! did not get whole.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use mocklib::exchange::{Exchange, ExchangeSink};
//!
//! /// Keeps the status of every exchange performed for real.
//! #[derive(Debug, Default)]
//! struct Statuses(Mutex<Vec<u16>>);
//!
//! impl ExchangeSink for Statuses {
//!     fn record(&self, exchange: Exchange) {
//!         self.0.lock().unwrap().push(exchange.status().as_u16());
//!     }
//! }
//!
//! let server = mocklib::node::setup_server([]);
//! let statuses = Arc::new(Statuses::default());
//! server.record_exchanges(statuses.clone());
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};

use crate::message::request::Request;

/// A request performed for real and the response it got, complete.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub(crate) request: Request,
    pub(crate) started: SystemTime,
    pub(crate) elapsed: Duration,
    pub(crate) status: StatusCode,
    pub(crate) version: Version,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Exchange {
    /// The request as it was performed.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// When the request was handed to the front door to perform.
    pub fn started(&self) -> SystemTime {
        self.started
    }

    /// From `started` to the end of the response body.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The response's status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response's HTTP version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The response's headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The whole response body, as the client read it (still encoded when
    /// the response was compressed).
    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

/// Where finished exchanges go: a HAR recorder, or one of your own (see
/// the [module docs](self)). Called from the task that read the body's end;
/// keep it quick.
pub trait ExchangeSink: std::fmt::Debug + Send + Sync + 'static {
    /// Takes one finished exchange.
    fn record(&self, exchange: Exchange);
}

/// An exchange whose response body is being read: what
/// [`Passthrough::capture`](crate::front_door::Passthrough::capture) hands a front door.
pub struct Capture {
    sink: Arc<dyn ExchangeSink>,
    exchange: Exchange,
    started_at: Instant,
    body: Vec<u8>,
}

impl Capture {
    pub(crate) fn new(
        sink: Arc<dyn ExchangeSink>,
        request: Request,
        started: (SystemTime, Instant),
        status: StatusCode,
        version: Version,
        headers: HeaderMap,
    ) -> Self {
        Capture {
            sink,
            exchange: Exchange {
                request,
                started: started.0,
                elapsed: Duration::ZERO,
                status,
                version,
                headers,
                body: Bytes::new(),
            },
            started_at: started.1,
            body: Vec::new(),
        }
    }

    /// The client read these bytes of the body.
    pub fn data(&mut self, data: &[u8]) {
        self.body.extend_from_slice(data);
    }

    /// The body ended: the exchange goes to the recorder. (Dropping a
    /// capture unfinished records nothing.)
    pub fn finish(self) {
        let Capture {
            sink,
            mut exchange,
            started_at,
            body,
        } = self;
        exchange.elapsed = started_at.elapsed();
        exchange.body = Bytes::from(body);
        sink.record(exchange);
    }
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field(
                "request",
                &format_args!(
                    "{} {}",
                    self.exchange.request.method(),
                    self.exchange.request.url()
                ),
            )
            .field("status", &self.exchange.status)
            .field("read", &self.body.len())
            .finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// A response body that records itself once read to its end; an error
    /// or an early drop records nothing.
    pub struct Tap<B> {
        #[pin]
        inner: B,
        capture: Option<Capture>,
    }
}

impl<B> std::fmt::Debug for Tap<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap")
            .field("capture", &self.capture)
            .finish_non_exhaustive()
    }
}

impl<B: Body> Tap<B> {
    /// Wraps `inner`, feeding `capture` (when recording) as it is read.
    pub fn new(inner: B, capture: Option<Capture>) -> Self {
        let mut tap = Tap { inner, capture };
        // An empty body may never be polled at all.
        tap.finish_if_ended();
        tap
    }

    /// Records the exchange once the inner body has nothing more: a
    /// server that knows the length (hyper, with `Content-Length`) stops
    /// polling after the last byte, before the end is ever reported.
    fn finish_if_ended(&mut self) {
        if self.inner.is_end_stream() {
            if let Some(capture) = self.capture.take() {
                capture.finish();
            }
        }
    }
}

impl<B: Body<Data = Bytes>> Body for Tap<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.project();
        let mut inner = this.inner;
        let polled = inner.as_mut().poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(capture), Some(data)) = (this.capture.as_mut(), frame.data_ref()) {
                    capture.data(data);
                }
                if inner.is_end_stream() {
                    if let Some(capture) = this.capture.take() {
                        capture.finish();
                    }
                }
            }
            Poll::Ready(None) => {
                if let Some(capture) = this.capture.take() {
                    capture.finish();
                }
            }
            // Failed: never recorded (the client did not get it whole).
            Poll::Ready(Some(Err(_))) => *this.capture = None,
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
