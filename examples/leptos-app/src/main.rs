//! A Leptos app whose API (`GET /api/todos`) does not exist yet: in a
//! development build (`trunk serve`) mocklib's Service Worker answers it
//! with the handlers in `mocks.rs`, in a release build (`trunk build
//! --release`) no worker is registered and the app calls the real API.
//! This is MSW's "enable mocking" pattern: start the worker, then render.
//!
//! `crates/browser-tests/tests/leptos_app.rs` builds both and checks them in
//! headless Chromium and Firefox.

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(all(target_arch = "wasm32", debug_assertions))]
mod mocks;

#[cfg(target_arch = "wasm32")]
fn main() {
    // Not leptos' spawn_local: its executor starts with the mount.
    wasm_bindgen_futures::spawn_local(async {
        // Before the first request: the app's calls must find the worker.
        #[cfg(debug_assertions)]
        mocks::enable().await;
        leptos::mount::mount_to_body(app::App);
    });
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("a browser app: `trunk serve` in examples/leptos-app (see the README)");
}
