//! Fallback interception: `fetch` itself is replaced in the page.
//!
//! Used where a Service Worker cannot run (a `file:` page, an insecure
//! origin, a failed registration) or when asked for. It sees only what calls
//! `fetch` — web-sys, gloo-net, reqwest's wasm backend, plain JavaScript —
//! not XHR or `<img>`; it answers in the page's own task, with no message
//! hops, so it is also the fastest mode.

use std::sync::Arc;

use bytes::Bytes;
use js_sys::{Function, Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::answer::{Answer, answer, report_passthrough};
use super::convert::{BrowserRequest, MockedResponse, header_pairs};
use super::{glue, task};
use crate::engine::{Engine, Passthrough};

/// The browser's own redirect limit.
const MAX_REDIRECTS: u32 = 20;

/// `fetch` replaced on the global object until dropped.
pub(super) struct FetchPatch {
    target: Object,
    original: Function,
    _handler: Closure<dyn Fn(web_sys::Request, Function, Function)>,
}

impl FetchPatch {
    pub(super) fn install(engine: Arc<Engine>, quiet: bool) -> Self {
        let target: Object = js_sys::global();
        // Called by the replacement (`patchFetch` in glue.js) with the
        // request and the functions settling the promise it returned.
        let handler = Closure::<dyn Fn(web_sys::Request, Function, Function)>::new(
            move |request, resolve, reject| {
                intercept(Arc::clone(&engine), quiet, request, resolve, reject);
            },
        );
        let original = glue::patch_fetch(&target, handler.as_ref());
        super::perform::push_original_fetch(original.clone());
        FetchPatch {
            target,
            original,
            _handler: handler,
        }
    }
}

impl Drop for FetchPatch {
    fn drop(&mut self) {
        glue::restore_fetch(&self.target, &self.original);
        super::perform::forget_original_fetch(&self.original);
    }
}

/// One call of the patched `fetch`, settled through `resolve` or `reject`.
fn intercept(
    engine: Arc<Engine>,
    quiet: bool,
    request: web_sys::Request,
    resolve: Function,
    reject: Function,
) {
    // The original `fetch`, kept before any call could arrive.
    let original = match super::perform::original_fetch() {
        Ok(original) => original,
        Err(error) => return settle(&resolve, &reject, Err(error)),
    };
    // Described now: the answer to a panic needs the URL, which is then
    // already in Rust (no crossing of its own).
    let browser = describe(&request);
    let on_panic = {
        let (resolve, reject, url) = (resolve.clone(), reject.clone(), browser.url.clone());
        move |message: String| {
            let response = MockedResponse::handler_panicked(&message).into_js(&url, false);
            settle(&resolve, &reject, response.map(JsValue::from));
        }
    };
    task::spawn(
        async move {
            let response = respond(&engine, &original, quiet, request, browser).await;
            settle(&resolve, &reject, response);
        },
        on_panic,
    );
}

fn settle(resolve: &Function, reject: &Function, result: Result<JsValue, JsValue>) {
    let _ = match result {
        Ok(response) => resolve.call1(&JsValue::UNDEFINED, &response),
        Err(error) => reject.call1(&JsValue::UNDEFINED, &error),
    };
}

/// Answers one `fetch` (`browser` describes `request`), following mocked
/// redirects as the browser would.
async fn respond(
    engine: &Arc<Engine>,
    original: &Function,
    quiet: bool,
    mut request: web_sys::Request,
    mut browser: BrowserRequest,
) -> Result<JsValue, JsValue> {
    let mut redirects = 0;
    loop {
        let unread = read_body(&mut browser, &request).await?;
        let answer = answer(engine, &browser, quiet)
            .await
            .map_err(|message| glue::type_error(&message))?;
        match answer {
            Answer::Mocked(mocked) => {
                mocked.store_cookies();
                if let Some(next) = redirect(&browser, &request, &mocked, &mut redirects)? {
                    browser = describe(&next);
                    request = next;
                    continue;
                }
                return mocked
                    .into_js(&browser.url, redirects > 0)
                    .map(JsValue::from);
            }
            Answer::Passthrough(passthrough) => {
                return perform(original, &unread, passthrough, redirects > 0).await;
            }
            Answer::NetworkError => return Err(glue::type_error("Failed to fetch")),
        }
    }
}

/// The request as the engine sees it, all but its body.
fn describe(request: &web_sys::Request) -> BrowserRequest {
    BrowserRequest::unpack(&glue::describe_request(request), Bytes::new())
}

/// Reads `request`'s body into `browser`; returns an unread copy of the
/// request for a passthrough: reading the body consumes it
/// (`Request.clone()` of the Fetch API).
async fn read_body(
    browser: &mut BrowserRequest,
    request: &web_sys::Request,
) -> Result<web_sys::Request, JsValue> {
    if !browser.may_have_body() {
        return Ok(Clone::clone(request));
    }
    let unread = request.clone()?;
    let buffer = JsFuture::from(request.array_buffer()?).await?;
    browser.body = Bytes::from(Uint8Array::new(&buffer).to_vec());
    Ok(unread)
}

/// The request a mocked redirect leads to, by the request's redirect mode;
/// `None` when the mocked response itself is the answer (it is no redirect,
/// or the mode is "manual").
fn redirect(
    browser: &BrowserRequest,
    request: &web_sys::Request,
    mocked: &MockedResponse,
    redirects: &mut u32,
) -> Result<Option<web_sys::Request>, JsValue> {
    let Some(location) = mocked.redirect_location() else {
        return Ok(None);
    };
    match request.redirect() {
        web_sys::RequestRedirect::Follow => {
            *redirects += 1;
            if *redirects > MAX_REDIRECTS {
                return Err(glue::type_error("Failed to fetch: too many redirects"));
            }
            follow(browser, request, mocked.status, location).map(Some)
        }
        web_sys::RequestRedirect::Error => Err(glue::type_error(
            "Failed to fetch: a redirect with redirect mode \"error\"",
        )),
        // "manual": the redirect response itself.
        _ => Ok(None),
    }
}

/// Performs the unread request with the page's original `fetch` and reports
/// what came back.
async fn perform(
    original: &Function,
    unread: &web_sys::Request,
    passthrough: Passthrough,
    redirected: bool,
) -> Result<JsValue, JsValue> {
    let pending: Promise = original.call1(&js_sys::global(), unread)?.dyn_into()?;
    let response: web_sys::Response = JsFuture::from(pending).await?.dyn_into()?;
    report_passthrough(
        passthrough,
        response.status(),
        &header_pairs(&response.headers()),
    );
    if redirected {
        return Ok(glue::set_response_url(&response, &response.url(), true).into());
    }
    Ok(response.into())
}

/// The request a redirect leads to, by the Fetch standard's rules: 303 (and
/// 301/302 after a POST) become a GET without body; credentials of the
/// Authorization header stay on the origin they were meant for.
fn follow(
    previous: &BrowserRequest,
    request: &web_sys::Request,
    status: u16,
    location: &str,
) -> Result<web_sys::Request, JsValue> {
    let base =
        url::Url::parse(&previous.url).map_err(|error| glue::type_error(&error.to_string()))?;
    let target = base.join(location).map_err(|error| {
        glue::type_error(&format!(
            "Failed to fetch: bad redirect location {location:?}: {error}"
        ))
    })?;
    let to_get = (status == 303 && previous.method != "HEAD")
        || (matches!(status, 301 | 302) && previous.method == "POST");
    let cross_origin = target.origin() != base.origin();
    let headers = web_sys::Headers::new()?;
    for (name, value) in &previous.headers {
        let dropped =
            (to_get && name.starts_with("content-")) || (cross_origin && name == "authorization");
        if !dropped {
            headers.append(name, value)?;
        }
    }
    let init = web_sys::RequestInit::new();
    init.set_method(if to_get { "GET" } else { &previous.method });
    init.set_headers(&headers);
    if !to_get && !previous.body.is_empty() {
        init.set_body(&Uint8Array::from(&previous.body[..]));
    }
    init.set_credentials(request.credentials());
    init.set_mode(request.mode());
    init.set_redirect(web_sys::RequestRedirect::Follow);
    web_sys::Request::new_with_str_and_init(target.as_str(), &init)
}
