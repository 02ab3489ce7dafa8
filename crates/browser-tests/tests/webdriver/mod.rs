//! A small WebDriver client for the tests that drive headless Chromium
//! through chromedriver, and the HTTP/1.1 it speaks (std's `TcpStream`: no
//! HTTP crate to build for it). Shared by path between
//! `crates/browser-tests/tests/example_app.rs` and
//! `crates/mocklib-cli/tests/page.rs`.
#![allow(dead_code)] // each test uses its own subset

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One HTTP/1.1 exchange on a connection of its own, to an `http://` URL:
/// the status and the body (framed by `Content-Length`, as chromedriver's
/// and mocklib's buffered answers are, or by the connection closing).
pub fn http(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, target) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let stream = TcpStream::connect(authority).unwrap_or_else(|error| panic!("{url}: {error}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    (&stream)
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status = line.split(' ').nth(1).and_then(|s| s.parse().ok());
    let status = status.unwrap_or_else(|| panic!("{method} {url}: no status in {line:?}"));
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break; // the empty line after the head
        };
        assert!(!name.eq_ignore_ascii_case("transfer-encoding"), "{line}");
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader.read_exact(&mut body).unwrap();
        }
        None => {
            reader.read_to_end(&mut body).unwrap();
        }
    }
    (status, String::from_utf8(body).unwrap())
}

/// A WebDriver command: its answer's `value`, or a panic saying what failed.
fn command(method: &str, url: &str, body: &Value) -> Value {
    let (status, text) = http(
        method,
        url,
        &[("content-type", "application/json")],
        &body.to_string(),
    );
    assert_eq!(status, 200, "WebDriver {method} {url}: {text}");
    serde_json::from_str::<Value>(&text).unwrap()["value"].take()
}

/// A chromedriver on a free loopback port, killed when dropped.
pub struct Chromedriver {
    process: Child,
    url: String,
}

impl Chromedriver {
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is not installed: ./scripts/test installs it");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
        Chromedriver {
            process,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// A headless Chromium with a profile of its own.
    pub fn new_session(&self) -> Session {
        let profile = tempfile::tempdir().unwrap();
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        }}});
        let created = command("POST", &format!("{}/session", self.url), &capabilities);
        let id = created["sessionId"].as_str().expect("a session id");
        Session {
            url: format!("{}/session/{id}", self.url),
            _profile: profile,
        }
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

pub struct Session {
    url: String,
    _profile: tempfile::TempDir,
}

impl Session {
    pub fn navigate(&self, url: &str) {
        command("POST", &format!("{}/url", self.url), &json!({ "url": url }));
    }

    pub fn execute(&self, script: &str) -> Value {
        let body = json!({ "script": script, "args": [] });
        command("POST", &format!("{}/execute/sync", self.url), &body)
    }

    /// Runs `script` with `argument`; its last argument is the callback
    /// that takes the result.
    pub fn execute_async(&self, script: &str, argument: &Value) -> Value {
        let body = json!({ "script": script, "args": [argument] });
        command("POST", &format!("{}/execute/async", self.url), &body)
    }

    /// Clicks the element `selector` finds, as a person would (it must be
    /// shown).
    pub fn click(&self, selector: &str) {
        let found = command(
            "POST",
            &format!("{}/element", self.url),
            &json!({ "using": "css selector", "value": selector }),
        );
        // The W3C name of an element reference's key.
        let id = found["element-6066-11e4-a52e-4f735466cecf"]
            .as_str()
            .unwrap_or_else(|| panic!("no element {selector}: {found}"));
        command(
            "POST",
            &format!("{}/element/{id}/click", self.url),
            &json!({}),
        );
    }

    /// Polls `script` until it returns something other than `null` or
    /// `false`, up to 30 s; returns that.
    pub fn wait_for(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let value = self.execute(script);
            if !value.is_null() && value != false {
                return value;
            }
            assert!(Instant::now() < deadline, "waited 30 s for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn close(self) {
        let _ = http("DELETE", &self.url, &[], "");
    }
}
