//! gRPC-Web and Connect calls from the page in the fallback mode (see
//! tests/grpc_calls/mod.rs).
#![cfg(target_arch = "wasm32")]

mod grpc_calls;

use mocklib::browser::Mode;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const MODE: Mode = Mode::Fallback;

#[wasm_bindgen_test]
async fn grpc_web_calls_from_the_page_are_answered_by_grpc_handlers() {
    grpc_calls::grpc_web_calls_are_answered(MODE).await;
}

#[wasm_bindgen_test]
async fn connect_calls_from_the_page_are_answered_by_grpc_handlers() {
    grpc_calls::connect_calls_are_answered(MODE).await;
}
