//! Performing a request for real from the page, for [`bypass`](crate::bypass).

use std::cell::RefCell;

use bytes::Bytes;
use js_sys::{Function, Promise, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::convert::{header_map, header_pairs};
use crate::request::Request;
use crate::request::{PerformError, PerformFuture, Performer};
use crate::response::HttpResponse;

/// The header that tells our Service Worker to let a request through.
pub(super) const BYPASS_HEADER: &str = "x-mocklib-intention";

thread_local! {
    /// The unpatched `fetch` while the fallback mode has replaced it.
    static ORIGINAL_FETCH: RefCell<Option<Function>> = const { RefCell::new(None) };
}

pub(super) fn set_original_fetch(fetch: Option<Function>) {
    ORIGINAL_FETCH.with(|slot| *slot.borrow_mut() = fetch);
}

/// The browser's `fetch` as it was before mocklib touched it.
pub(super) fn original_fetch() -> Result<Function, JsValue> {
    if let Some(fetch) = ORIGINAL_FETCH.with(|slot| slot.borrow().clone()) {
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
        let request = request.clone();
        let marked = self.through_service_worker;
        Box::pin(async move {
            perform(&request, marked)
                .await
                .map_err(|error| PerformError::Failed(js_message(error)))
        })
    }
}

async fn perform(request: &Request, marked: bool) -> Result<HttpResponse, JsValue> {
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
    let body = JsFuture::from(response.array_buffer()?).await?;
    let mut real = http::Response::new(Bytes::from(Uint8Array::new(&body).to_vec()));
    *real.status_mut() = http::StatusCode::from_u16(response.status())
        .map_err(|_| JsValue::from_str("the real response has an invalid status"))?;
    *real.headers_mut() = header_map(&header_pairs(&response.headers()));
    Ok(HttpResponse::from(real))
}

/// A thrown JavaScript value as a message.
pub(super) fn js_message(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|error| String::from(error.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
