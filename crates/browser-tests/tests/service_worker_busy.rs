//! Starting the Service Worker mode while another worker at the scope holds
//! an event open (a page of its own: the held event outlives the test).
//! A browser activates a new worker only once the active one has finished
//! its events, so start() gives up with an explanation instead of hanging.
#![cfg(target_arch = "wasm32")]

// One test of its own: most of the shared helpers go unused here.
#[allow(unused)]
mod common;

use std::time::Duration;

use common::*;
use futures_util::future::{Either, select};
use mocklib::browser::{Mode, StartError, StartOptions, setup_worker};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = r#"
export async function useBusyWorker() {
  const container = navigator.serviceWorker;
  await container.register('/busy-worker.js', { scope: '/' });
  while (!container.controller || !container.controller.scriptURL.endsWith('/busy-worker.js')) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  fetch('/busy/hold'); // never settles
  await new Promise((resolve) => setTimeout(resolve, 200));
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = useBusyWorker)]
    fn use_busy_worker() -> js_sys::Promise;
}

#[wasm_bindgen_test]
async fn a_worker_that_cannot_activate_fails_start_with_the_reason() {
    JsFuture::from(use_busy_worker()).await.unwrap();
    let worker = setup_worker([user_handler()]);
    let options = StartOptions::new().mode(Mode::ServiceWorker).quiet(true);
    // Settles: at most the 10 s the glue waits for activation, and more.
    let started = match select(
        std::pin::pin!(worker.start_with(options)),
        std::pin::pin!(mocklib::delay(Duration::from_secs(20))),
    )
    .await
    {
        Either::Left((started, _)) => started,
        Either::Right(_) => panic!("start() hung for 20 s beside a busy worker"),
    };
    // Both browsers wait for the held event (Chromium too, for one that
    // never settles).
    let Err(StartError::ServiceWorkerFailed { url, reason }) = started else {
        panic!("the worker activated beside a busy one: {started:?}");
    };
    assert_eq!(url, "/mocklib-worker.js");
    assert!(
        reason.contains("did not activate within 10 s") && reason.contains("/busy-worker.js"),
        "{reason}"
    );
    assert_eq!(worker.mode(), None);
}
