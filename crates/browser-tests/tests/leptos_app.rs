//! End to end: `examples/leptos-app` (Leptos; served by trunk in
//! development) built as a release build (mocking off) and as the
//! development build `trunk serve` makes (mocking on), each served from
//! loopback next to a real `/api/todos` and loaded in headless Chromium and
//! Firefox. The development build must show the todos mocklib's handlers
//! answer and the greeting its `grpc` handler answers to the app's gRPC-Web
//! call (tonic over `tonic-web-wasm-client`), with mocklib's worker
//! registered; the release build the real API's todos and no greeting (no
//! gRPC service behind the static site), with no Service Worker registered.
//!
//! The build is what trunk runs, without trunk: `cargo build --target
//! wasm32-unknown-unknown --release`, `wasm-bindgen --target web`, the files
//! index.html's `copy-file` links name, and a page that loads the module.
//! Installing trunk from source would cost the test command's first run
//! about 330 s of CPU (CONTRIBUTING.md); with `MOCKLIB_TEST_TRUNK` set (to
//! trunk's path) the test builds with `trunk build` instead. Both apps'
//! end-to-end tests build in one target directory (`wasm_build`). The development
//! variant is the release build with the app's own debug assertions on:
//! `cfg(debug_assertions)` is the switch the app's mocking hangs on, and the
//! dependencies are built once for both.
//!
//! Needs what `./scripts/test` installs: the wasm32 target, `wasm-bindgen`
//! (the CLI), both browsers and their drivers.
#![cfg(not(target_arch = "wasm32"))]

mod static_site;
mod wasm_build;
mod webdriver;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use static_site::serve;
use webdriver::{Browser, Driver};

/// What the real API answers; the mocks answer other todos.
const REAL_TODOS: &str = r#"[{ "title": "From the real API", "done": false }]"#;

#[test]
fn mocks_answer_in_development_and_the_release_build_calls_the_real_api() {
    let development = build(Profile::Development);
    let release = build(Profile::Release);
    let (development, release) = (serve(development.path()), serve(release.path()));
    for browser in Browser::ALL {
        let driver = Driver::start(browser);
        assert_eq!(
            rendered(&driver, &format!("http://{development}/")),
            json!({
                "todos": ["✓ Write the handlers", "Build the UI against them"],
                "greeting": "Hello Leptos, from a mocked gRPC service!",
                "workers": ["/mocklib-worker.js"],
            }),
            "the development build in {browser:?}"
        );
        let mut page = rendered(&driver, &format!("http://{release}/"));
        // No gRPC service behind the static site: the app says so (the
        // code is the client's reading of the site's HTTP answer).
        let greeting = page["greeting"].take();
        assert!(
            greeting
                .as_str()
                .is_some_and(|text| text.starts_with("no greeting: ")),
            "the release build's greeting in {browser:?}: {greeting}"
        );
        assert_eq!(
            page,
            json!({ "todos": ["From the real API"], "greeting": null, "workers": [] }),
            "the release build in {browser:?}"
        );
    }
}

#[test]
fn the_committed_worker_script_is_this_mocklibs() {
    let committed = std::fs::read_to_string(app_dir().join("public/mocklib-worker.js")).unwrap();
    assert!(
        committed == mocklib::browser::WORKER_SCRIPT,
        "examples/leptos-app/public/mocklib-worker.js is outdated: \
         `cargo run -p mocklib-cli -- init examples/leptos-app/public`"
    );
}

/// The todos the page at `url` shows once loaded, and the script paths of
/// the Service Workers registered for it; in a session of its own (a fresh
/// profile: no worker left from another page), closed before the next
/// (geckodriver runs one at a time).
fn rendered(driver: &Driver, url: &str) -> Value {
    let session = driver.new_session();
    session.navigate(url);
    session.wait_for(
        "the todos (or an error) and the greeting to render",
        "return document.querySelector('#todos li, #state') !== null \
            && document.getElementById('state')?.textContent !== 'Loading…' \
            && document.getElementById('greeting')?.textContent !== '…'",
    );
    session.execute_async(
        "const done = arguments[arguments.length - 1];
        navigator.serviceWorker.getRegistrations().then((registrations) => done({
            todos: [...document.querySelectorAll('#todos li')].map((li) => li.textContent)
                .concat([...document.querySelectorAll('#state')].map((p) => 'state: ' + p.textContent)),
            greeting: document.getElementById('greeting')?.textContent,
            workers: registrations.map((r) => new URL((r.active || r.installing || r.waiting).scriptURL).pathname),
        }));",
        &Value::Null,
    )
}

#[derive(Clone, Copy, Debug)]
enum Profile {
    /// As `trunk serve` builds the app: its debug assertions on.
    Development,
    /// `trunk build --release`.
    Release,
}

fn app_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/leptos-app")
}

/// The site for `profile`, with the real API's answer added.
fn build(profile: Profile) -> tempfile::TempDir {
    let site = tempfile::tempdir().unwrap();
    let target_dir = wasm_build::target_dir();
    match std::env::var_os("MOCKLIB_TEST_TRUNK") {
        Some(trunk) => trunk_build(&trunk, profile, &target_dir, site.path()),
        None => build_as_trunk_does(profile, site.path()),
    }
    std::fs::create_dir_all(site.path().join("api")).unwrap();
    std::fs::write(site.path().join("api/todos"), REAL_TODOS).unwrap();
    site
}

fn trunk_build(trunk: &std::ffi::OsStr, profile: Profile, target_dir: &Path, dist: &Path) {
    let mut command = Command::new(trunk);
    command
        .current_dir(app_dir())
        .env("CARGO_TARGET_DIR", target_dir)
        .args(["build", "--offline", "--dist"])
        .arg(dist);
    if let Profile::Release = profile {
        command.arg("--release");
    }
    wasm_build::run(&mut command, &format!("trunk build ({profile:?})"));
}

fn build_as_trunk_does(profile: Profile, site: &Path) {
    let built = match profile {
        Profile::Release => wasm_build::cargo_build("mocklib-leptos-app", &[]),
        // Only the app is built again; its dependencies are shared.
        Profile::Development => wasm_build::cargo_build(
            "mocklib-leptos-app",
            &["profile.release.package.mocklib-leptos-app.debug-assertions=true"],
        ),
    };
    wasm_build::bindgen(&built.join("mocklib-leptos-app.wasm"), &site.join("pkg"));
    // What index.html's `<link data-trunk rel="copy-file" href="...">` copy.
    let index = std::fs::read_to_string(app_dir().join("index.html")).unwrap();
    let copied: Vec<&str> = index
        .split(r#"rel="copy-file" href=""#)
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(
        copied,
        ["public/mocklib-worker.js"],
        "index.html's copy-file links"
    );
    for file in copied {
        let name = Path::new(file).file_name().unwrap();
        std::fs::copy(app_dir().join(file), site.join(name)).unwrap();
    }
    std::fs::write(
        site.join("index.html"),
        "<!doctype html>\n<meta charset=\"utf-8\">\n<body>\n<script type=\"module\">\n\
         import init from './pkg/mocklib-leptos-app.js';\ninit();\n</script>\n",
    )
    .unwrap();
}
