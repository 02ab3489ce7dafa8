//! Bindings to `glue.js`, the JavaScript half of the browser front door.

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = schedulePoll)]
    pub(super) fn schedule_poll(poll: &JsValue, failed: &JsValue, id: u32);

    #[wasm_bindgen(js_name = patchFetch)]
    pub(super) fn patch_fetch(target: &Object, handler: &JsValue) -> Function;

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
    pub(super) fn connect_service_worker(worker: &JsValue, on_request: &JsValue) -> Promise;

    #[wasm_bindgen(js_name = disconnectServiceWorker)]
    pub(super) fn disconnect_service_worker(
        worker: &JsValue,
        connection: &JsValue,
        on_request: JsValue,
    );

    #[wasm_bindgen(js_name = postAnswer)]
    pub(super) fn post_answer(port: &JsValue, answer: &JsValue);
}
