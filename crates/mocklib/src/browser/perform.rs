//! Performing a request for real from the page, for [`bypass`](crate::bypass)
//! and `sse`'s `server.connect()` (whose body streams).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use js_sys::{Function, Promise, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::convert::{header_map, header_pairs};
use super::glue;
use super::local::{self, Local};
use crate::message::body::Body;
use crate::message::request::Request;
use crate::message::request::{PerformError, PerformFuture, Performer};
use crate::message::response::HttpResponse;

/// The header that tells our Service Worker to let a request through.
pub(super) const BYPASS_HEADER: &str = "x-mocklib-intention";

thread_local! {
    /// What `fetch` was before each fallback-mode patch, oldest first. A
    /// stack, not one slot: a worker that was never stopped (a test that
    /// failed before `stop()`) leaves its patch in place, and the next
    /// worker's "original" is that patch; calling it from a passthrough
    /// would go round in circles. The oldest entry is the browser's own.
    static ORIGINAL_FETCH: RefCell<Vec<Function>> = const { RefCell::new(Vec::new()) };
}

/// A patch replaced `fetch`, which was `original` before it.
pub(super) fn push_original_fetch(original: Function) {
    ORIGINAL_FETCH.with(|stack| stack.borrow_mut().push(original));
}

/// The patch that replaced `original` is gone (in whatever order patches go).
pub(super) fn forget_original_fetch(original: &Function) {
    ORIGINAL_FETCH.with(|stack| {
        let mut stack = stack.borrow_mut();
        if let Some(index) = stack.iter().rposition(|f| js_sys::Object::is(f, original)) {
            stack.remove(index);
        }
    });
}

/// The browser's `fetch` as it was before mocklib touched it.
pub(super) fn original_fetch() -> Result<Function, JsValue> {
    if let Some(fetch) = ORIGINAL_FETCH.with(|stack| stack.borrow().first().cloned()) {
        return Ok(fetch);
    }
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("fetch"))?.dyn_into()
}

/// Performs requests with the page's real `fetch`.
pub(super) struct FetchPerformer {
    /// In Service Worker mode our own worker would intercept the request
    /// again; the marker header makes it let the request through.
    pub(super) through_service_worker: bool,
}

impl Performer for FetchPerformer {
    fn perform(&self, request: &Request) -> PerformFuture {
        self.send(request, false)
    }

    fn perform_streaming(&self, request: &Request) -> PerformFuture {
        self.send(request, true)
    }
}

impl FetchPerformer {
    /// The real response; its body read in full unless `streaming`. The
    /// future is `Send` (see `local`), as an `sse` session that awaits it
    /// must be.
    fn send(&self, request: &Request, streaming: bool) -> PerformFuture {
        let request = request.clone();
        let marked = self.through_service_worker;
        let performed = local::sendable(async move {
            perform(&request, marked, streaming)
                .await
                .map_err(|error| PerformError::Failed(js_message(error)))
        });
        Box::pin(async move {
            performed.await.unwrap_or_else(|| {
                Err(PerformError::Failed(
                    "the request was performed from another thread than the page's".to_owned(),
                ))
            })
        })
    }
}

async fn perform(
    request: &Request,
    marked: bool,
    streaming: bool,
) -> Result<HttpResponse, JsValue> {
    let headers = web_sys::Headers::new()?;
    for (name, value) in request.headers() {
        // The browser sets these itself and refuses them from scripts.
        if matches!(
            name.as_str(),
            "host" | "cookie" | "content-length" | "connection"
        ) {
            continue;
        }
        if let Ok(value) = value.to_str() {
            headers.append(name.as_str(), value)?;
        }
    }
    if marked {
        headers.set(BYPASS_HEADER, "bypass")?;
    }
    let init = web_sys::RequestInit::new();
    init.set_method(request.method().as_str());
    init.set_headers(&headers);
    if !request.body().is_empty() {
        init.set_body(&Uint8Array::from(&request.body()[..]));
    }
    let outgoing = web_sys::Request::new_with_str_and_init(request.url().as_str(), &init)?;
    let pending: Promise = original_fetch()?
        .call1(&js_sys::global(), &outgoing)?
        .dyn_into()?;
    let response: web_sys::Response = JsFuture::from(pending).await?.dyn_into()?;
    let body = if streaming {
        RealBody::stream(&response)
    } else {
        let body = JsFuture::from(response.array_buffer()?).await?;
        Body::from(Uint8Array::new(&body).to_vec())
    };
    let mut real = http::Response::new(body);
    *real.status_mut() = http::StatusCode::from_u16(response.status())
        .map_err(|_| JsValue::from_str("the real response has an invalid status"))?;
    *real.headers_mut() = header_map(&header_pairs(&response.headers()));
    Ok(HttpResponse::from_body(real))
}

/// The body of a real `Response`, read from its `ReadableStream` a chunk
/// at a time as the [`Body`] is polled: an endless event stream arrives
/// event by event, and a slow reader slows the real connection down.
struct RealBody {
    /// The body's reader.
    reader: JsValue,
    /// The `reader.read()` in flight.
    read: Option<JsFuture>,
}

impl RealBody {
    fn stream(response: &web_sys::Response) -> Body {
        let reader = glue::body_reader(response);
        if reader.is_null() {
            return Body::empty();
        }
        let body = Local::new(RealBody { reader, read: None });
        Body::from_try_stream(futures_util::stream::poll_fn(move |cx| {
            body.with(|body| body.poll_chunk(cx)).unwrap_or_else(|| {
                Poll::Ready(Some(Err(
                    "the real body was read from another thread than the page's".to_owned(),
                )))
            })
        }))
    }

    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, String>>> {
        loop {
            let read = self
                .read
                .get_or_insert_with(|| JsFuture::from(glue::read_chunk(&self.reader)));
            let chunk = ready!(Pin::new(read).poll(cx));
            self.read = None;
            return Poll::Ready(match chunk {
                Err(error) => Some(Err(format!(
                    "reading the real body failed: {}",
                    js_message(error)
                ))),
                Ok(chunk) if chunk.is_undefined() => None,
                Ok(chunk) => {
                    let chunk = Uint8Array::new(&chunk);
                    if chunk.length() == 0 {
                        continue;
                    }
                    Some(Ok(Bytes::from(chunk.to_vec())))
                }
            });
        }
    }
}

impl Drop for RealBody {
    /// Cancelling the reader closes the real connection: a body dropped
    /// unread (a client that went away) stops the real stream too.
    fn drop(&mut self) {
        glue::cancel_reader(&self.reader);
    }
}

/// A thrown JavaScript value as a message.
pub(super) fn js_message(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|error| String::from(error.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
