//! Bindings to `glue.js`, the JavaScript half of the browser front door.

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = schedulePoll)]
    pub(super) fn schedule_poll(poll: &JsValue, failed: &JsValue, id: u32);

    #[wasm_bindgen(js_name = pollNow)]
    pub(super) fn poll_now(poll: &JsValue, failed: &JsValue, id: u32);

    #[wasm_bindgen(js_name = patchFetch)]
    pub(super) fn patch_fetch(target: &Object, handler: &JsValue) -> Function;

    #[wasm_bindgen(js_name = flatHeaders)]
    pub(super) fn flat_headers(headers: &JsValue) -> Vec<String>;

    /// The request packed as `BrowserRequest::unpack` reads it.
    #[wasm_bindgen(js_name = describeRequest)]
    pub(super) fn describe_request(request: &web_sys::Request) -> String;

    #[wasm_bindgen(js_name = describeUpgrade)]
    pub(super) fn describe_upgrade(url: &str, headers: Vec<String>) -> String;

    #[wasm_bindgen(js_name = mockedResponse)]
    pub(super) fn mocked_response(
        status: u16,
        status_text: &str,
        headers: &str,
        body: Option<&[u8]>,
        url: &str,
        redirected: bool,
    ) -> web_sys::Response;

    #[wasm_bindgen(js_name = streamedResponse)]
    pub(super) fn streamed_response(
        status: u16,
        status_text: &str,
        headers: &str,
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
        headers: &str,
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
