//! End to end: `examples/browser-app` built with wasm-bindgen, served from
//! loopback, loaded in headless Chromium and in headless Firefox (driven
//! over WebDriver by chromedriver and geckodriver); the page must show the
//! data mocklib's Service Worker answered with, and a file the real server
//! has.
//!
//! Needs the wasm32 target, `wasm-bindgen` (the CLI at the crate's version),
//! `chromium`, `chromedriver`, `firefox-esr` and `geckodriver`:
//! `./scripts/test` installs them.
#![cfg(not(target_arch = "wasm32"))]

mod static_site;
mod wasm_build;
mod webdriver;

use serde_json::json;
use static_site::serve;
use webdriver::{Browser, Driver};

#[test]
fn the_example_page_renders_mocked_data() {
    let site = build_example_app();
    let server = serve(site.path());
    for browser in Browser::ALL {
        let driver = Driver::start(browser);
        let session = driver.new_session();
        session.navigate(&format!("http://{server}/"));
        let expected = json!({
            "greeting": "Hello, John",
            "posts": ["Hello, mocklib", "Mocking in the browser"],
            "notes": "Release 1.0: first light.",
            "mode": "Service Worker",
        });
        assert_eq!(rendered(&session), expected, "in {browser:?}");
        // Reloaded, the page finds the worker active and must get it to
        // control the page again: Firefox's refresh loads it uncontrolled
        // (as a hard reload does), Chromium's keeps the control.
        session.refresh();
        assert_eq!(rendered(&session), expected, "reloaded, in {browser:?}");
    }
}

/// What the example page shows once rendered.
fn rendered(session: &webdriver::Session) -> serde_json::Value {
    session.wait_for(
        "the app to render (data-state=done)",
        "return document.getElementById('app').dataset.state === 'done'",
    );
    session.execute(
        "return {
            greeting: document.getElementById('greeting').textContent,
            posts: [...document.querySelectorAll('#posts li')].map((li) => li.textContent),
            notes: document.getElementById('notes').textContent,
            mode: document.getElementById('mode').textContent,
        }",
    )
}

/// index.html, notes.txt, the worker script and the wasm-bindgen output.
fn build_example_app() -> tempfile::TempDir {
    let built = wasm_build::cargo_build("mocklib-browser-app", &[]);
    let site = tempfile::tempdir().unwrap();
    wasm_build::bindgen(
        &built.join("mocklib_browser_app.wasm"),
        &site.path().join("pkg"),
    );
    let app = wasm_build::workspace_root().join("examples/browser-app");
    for file in ["index.html", "notes.txt"] {
        std::fs::copy(app.join(file), site.path().join(file)).unwrap();
    }
    mocklib::browser::write_worker_script(site.path()).unwrap();
    site
}
