//! A small WebDriver client for the tests that drive headless Chromium
//! (through chromedriver) or headless Firefox (through geckodriver), and the
//! HTTP/1.1 it speaks (std's `TcpStream`: no
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
    exchange(method, url, headers, body).unwrap_or_else(|error| panic!("{method} {url}: {error}"))
}

/// [`http`], failing with an error instead of a panic.
fn exchange(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, String)> {
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| invalid("not an http:// URL".into()))?;
    let (authority, target) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    (&stream).write_all(format!("{head}\r\n{body}").as_bytes())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line.split(' ').nth(1).and_then(|s| s.parse().ok());
    let status = status.ok_or_else(|| invalid(format!("no status in {line:?}")))?;
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break; // the empty line after the head
        };
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(invalid(format!(
                "chunked answers are not read here: {line}"
            )));
        }
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader.read_exact(&mut body)?;
        }
        None => {
            reader.read_to_end(&mut body)?;
        }
    }
    let body = String::from_utf8(body).map_err(|error| invalid(error.to_string()))?;
    Ok((status, body))
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

/// A browser the end-to-end tests drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Browser {
    Chromium,
    Firefox,
}

impl Browser {
    /// Both, Chromium first: the end-to-end tests run in each.
    pub const ALL: [Browser; 2] = [Browser::Chromium, Browser::Firefox];

    /// Its WebDriver server's command (`./scripts/test` installs both).
    fn driver(self) -> &'static str {
        match self {
            Browser::Chromium => "chromedriver",
            Browser::Firefox => "geckodriver",
        }
    }
}

/// A WebDriver server (chromedriver or geckodriver) on a free loopback
/// port, killed when dropped.
pub struct Driver {
    process: Child,
    url: String,
    browser: Browser,
}

impl Driver {
    pub fn start(browser: Browser) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Command::new(browser.driver())
            // Both take `--port=N`.
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|_| {
                panic!(
                    "{} is not installed: ./scripts/test installs it",
                    browser.driver()
                )
            });
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "{} did not come up",
                browser.driver()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Driver {
            process,
            url: format!("http://127.0.0.1:{port}"),
            browser,
        }
    }

    /// A headless browser with a profile of its own (geckodriver makes a
    /// fresh one for each session itself).
    pub fn new_session(&self) -> Session {
        let profile = tempfile::tempdir().unwrap();
        let capabilities = match self.browser {
            Browser::Chromium => json!({
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
            }),
            Browser::Firefox => json!({
                "browserName": "firefox",
                "moz:firefoxOptions": {
                    "binary": "/usr/bin/firefox-esr",
                    "args": ["-headless"],
                },
            }),
        };
        let body = json!({ "capabilities": { "alwaysMatch": capabilities } });
        let created = command("POST", &format!("{}/session", self.url), &body);
        let id = created["sessionId"].as_str().expect("a session id");
        Session {
            url: format!("{}/session/{id}", self.url),
            _profile: profile,
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// A browser session; closed (the browser quits) when dropped, also when a
/// test fails: killing geckodriver would leave Firefox running.
pub struct Session {
    url: String,
    _profile: tempfile::TempDir,
}

impl Drop for Session {
    fn drop(&mut self) {
        // Not `http`: a panic while a failed test unwinds would abort.
        let _ = exchange("DELETE", &self.url, &[], "");
    }
}

impl Session {
    pub fn navigate(&self, url: &str) {
        command("POST", &format!("{}/url", self.url), &json!({ "url": url }));
    }

    /// Reloads the page, as the browser's reload button does.
    pub fn refresh(&self) {
        command("POST", &format!("{}/refresh", self.url), &json!({}));
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

    /// Closes the session (as dropping it does).
    pub fn close(self) {}
}
