//! Bindings to `glue.js`, the JavaScript half of the browser front door.

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = schedulePoll)]
    pub(super) fn schedule_poll(poll: &JsValue, failed: &JsValue, id: u32);

    #[wasm_bindgen(js_name = patchFetch)]
    pub(super) fn patch_fetch(target: &Object, handler: &JsValue) -> Function;

    #[wasm_bindgen(js_name = flatHeaders)]
    pub(super) fn flat_headers(headers: &JsValue) -> Vec<String>;

    #[wasm_bindgen(js_name = describeRequest)]
    pub(super) fn describe_request(request: &web_sys::Request) -> RequestDescription;

    #[wasm_bindgen(js_name = describeUpgrade)]
    pub(super) fn describe_upgrade(url: &str, headers: Vec<String>) -> RequestDescription;

    #[wasm_bindgen(js_name = mockedResponse)]
    pub(super) fn mocked_response(
        status: u16,
        status_text: &str,
        headers: Vec<String>,
        body: Option<&[u8]>,
        url: &str,
        redirected: bool,
    ) -> web_sys::Response;

    #[wasm_bindgen(js_name = streamedResponse)]
    pub(super) fn streamed_response(
        status: u16,
        status_text: &str,
        headers: Vec<String>,
        pull: &JsValue,
        cancel: &JsValue,
        url: &str,
        redirected: bool,
    ) -> web_sys::Response;

    #[wasm_bindgen(js_name = restoreFetch)]
    pub(super) fn restore_fetch(target: &Object, original: &Function);

    #[wasm_bindgen(js_name = setResponseUrl)]
    pub(super) fn set_response_url(
        response: &web_sys::Response,
        url: &str,
        redirected: bool,
    ) -> web_sys::Response;

    #[wasm_bindgen(js_name = typeError)]
    pub(super) fn type_error(message: &str) -> JsValue;

    #[wasm_bindgen(js_name = registerServiceWorker)]
    pub(super) fn register_service_worker(
        url: &str,
        scope: Option<String>,
        original_fetch: &Function,
    ) -> Promise;

    #[wasm_bindgen(js_name = connectServiceWorker)]
    pub(super) fn connect_service_worker(
        worker: &JsValue,
        on_request: &JsValue,
        on_response: &JsValue,
        on_flow: &JsValue,
    ) -> Promise;

    #[wasm_bindgen(js_name = disconnectServiceWorker)]
    pub(super) fn disconnect_service_worker(
        worker: &JsValue,
        connection: &JsValue,
        callbacks: JsValue,
    );

    #[wasm_bindgen(js_name = postMocked)]
    pub(super) fn post_mocked(
        port: &JsValue,
        id: u32,
        status: u16,
        status_text: &str,
        headers: Vec<String>,
        body: Option<&[u8]>,
        streamed: bool,
    );

    #[wasm_bindgen(js_name = postBodyChunk)]
    pub(super) fn post_body_chunk(port: &JsValue, id: u32, chunk: &[u8]);

    #[wasm_bindgen(js_name = postBodyEnd)]
    pub(super) fn post_body_end(port: &JsValue, id: u32, error: Option<String>);

    #[wasm_bindgen(js_name = bodyReader)]
    pub(super) fn body_reader(response: &web_sys::Response) -> JsValue;

    #[wasm_bindgen(js_name = readChunk)]
    pub(super) fn read_chunk(reader: &JsValue) -> Promise;

    #[wasm_bindgen(js_name = cancelReader)]
    pub(super) fn cancel_reader(reader: &JsValue);

    #[wasm_bindgen(js_name = postOutcome)]
    pub(super) fn post_outcome(port: &JsValue, id: u32, kind: &str);
}

#[wasm_bindgen]
extern "C" {
    /// A request as `glue.js` describes it (`describe` there), read field
    /// by field without looking names up at run time.
    pub(super) type RequestDescription;

    #[wasm_bindgen(method, getter)]
    pub(super) fn method(this: &RequestDescription) -> String;

    #[wasm_bindgen(method, getter)]
    pub(super) fn url(this: &RequestDescription) -> String;

    /// `[name, value, name, value, ...]`.
    #[wasm_bindgen(method, getter)]
    pub(super) fn headers(this: &RequestDescription) -> Vec<String>;

    /// The body, when the description carries one (Service Worker mode).
    #[wasm_bindgen(method, getter)]
    pub(super) fn body(this: &RequestDescription) -> Option<Vec<u8>>;

    /// What the browser sends as `Cookie`; empty when nothing.
    #[wasm_bindgen(method, getter)]
    pub(super) fn cookie(this: &RequestDescription) -> String;

    /// The page's URL.
    #[wasm_bindgen(method, getter)]
    pub(super) fn page(this: &RequestDescription) -> String;

    /// A navigation or a static asset (`isAsset` in glue.js).
    #[wasm_bindgen(method, getter)]
    pub(super) fn asset(this: &RequestDescription) -> bool;
}
