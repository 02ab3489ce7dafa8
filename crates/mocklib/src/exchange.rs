//! Capturing requests performed for real, with their whole responses, for
//! recording (see [`crate::har`]).
//!
//! The engine hands each front door a [`Passthrough`](crate::Passthrough);
//! when a recording is on, the front door wraps the real response's body in
//! a [`Tap`] (or feeds a [`Capture`] itself), which copies the bytes as the
//! client reads them and hands the finished exchange to the recorder when
//! the body ends. A body that fails or is abandoned is not recorded: a
//! recording never holds a response the client did not get whole.

// Without the `har` feature nothing records: the front doors' taps never
// capture, and the recorder's side of this module goes unused; without a
// native front door that performs requests (or in the browser), the taps
// go unused.
#![cfg_attr(
    any(
        not(feature = "har"),
        target_arch = "wasm32",
        not(any(
            feature = "net",
            feature = "reqwest",
            feature = "reqwest-0-12",
            feature = "tower"
        ))
    ),
    allow(dead_code)
)]

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};

use crate::request::Request;

/// A request performed for real and the response it got, complete.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    pub(crate) request: Request,
    pub(crate) started: SystemTime,
    pub(crate) elapsed: Duration,
    pub(crate) status: StatusCode,
    pub(crate) version: Version,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// Where finished exchanges go (a HAR recorder).
pub(crate) trait ExchangeSink: std::fmt::Debug + Send + Sync + 'static {
    fn record(&self, exchange: Exchange);
}

/// An exchange whose response body is being read.
pub(crate) struct Capture {
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

    pub(crate) fn data(&mut self, data: &[u8]) {
        self.body.extend_from_slice(data);
    }

    /// The body ended: the exchange goes to the recorder.
    pub(crate) fn finish(self) {
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

pin_project_lite::pin_project! {
    /// A response body that records itself once read to its end.
    pub(crate) struct Tap<B> {
        #[pin]
        inner: B,
        capture: Option<Capture>,
    }
}

impl<B: Body> Tap<B> {
    pub(crate) fn new(inner: B, capture: Option<Capture>) -> Self {
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
