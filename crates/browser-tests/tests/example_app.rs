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

mod webdriver;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use webdriver::{Browser, Driver};

#[test]
fn the_example_page_renders_mocked_data() {
    let site = build_example_app();
    let server = serve(site.path());
    for browser in Browser::ALL {
        let driver = Driver::start(browser);
        let session = driver.new_session();
        session.navigate(&format!("http://{server}/"));
        session.wait_for(
            "the app to render (data-state=done)",
            "return document.getElementById('app').dataset.state === 'done'",
        );
        let page = session.execute(
            "return {
                greeting: document.getElementById('greeting').textContent,
                posts: [...document.querySelectorAll('#posts li')].map((li) => li.textContent),
                notes: document.getElementById('notes').textContent,
                mode: document.getElementById('mode').textContent,
            }",
        );
        assert_eq!(
            page,
            json!({
                "greeting": "Hello, John",
                "posts": ["Hello, mocklib", "Mocking in the browser"],
                "notes": "Release 1.0: first light.",
                "mode": "Service Worker",
            }),
            "in {browser:?}"
        );
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// index.html, notes.txt, the worker script and the wasm-bindgen output.
fn build_example_app() -> tempfile::TempDir {
    let root = workspace_root();
    // A target dir of its own: the outer `cargo test` holds the main one.
    let target_dir = root.join("target/example-app");
    let status = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .args(["-p", "mocklib-browser-app", "--target-dir"])
        .arg(&target_dir)
        .status()
        .expect("run cargo");
    assert!(
        status.success(),
        "building examples/browser-app for wasm32 failed"
    );
    let site = tempfile::tempdir().unwrap();
    let wasm = target_dir.join("wasm32-unknown-unknown/release/mocklib_browser_app.wasm");
    let output = Command::new("wasm-bindgen")
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(site.path().join("pkg"))
        .arg(&wasm)
        .output()
        .expect("wasm-bindgen (the CLI) is not installed: ./scripts/test installs it");
    assert!(output.status.success(), "wasm-bindgen failed: {output:?}");
    let app = root.join("examples/browser-app");
    for file in ["index.html", "notes.txt"] {
        std::fs::copy(app.join(file), site.path().join(file)).unwrap();
    }
    mocklib::browser::write_worker_script(site.path()).unwrap();
    site
}

/// A static file server on loopback; returns its address.
fn serve(dir: &Path) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let dir = dir.clone();
            std::thread::spawn(move || serve_one(stream, &dir));
        }
    });
    address
}

fn serve_one(mut stream: TcpStream, dir: &Path) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Skip the headers: GET requests only, no body.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or("/");
    let file = if path == "/" {
        "index.html"
    } else {
        path.trim_start_matches('/')
    };
    let (status, body, content_type) = match std::fs::read(dir.join(file)) {
        Ok(body) if !file.contains("..") => ("200 OK", body, content_type(file)),
        _ => ("404 Not Found", b"not found".to_vec(), "text/plain"),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(&body));
}

fn content_type(file: &str) -> &'static str {
    match file.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        _ => "text/plain; charset=utf-8",
    }
}
