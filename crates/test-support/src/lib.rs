//! What the tests of mocklib (crates/mocklib-tests) and of the `mocklib`
//! command (crates/mocklib-cli) share, written once: child processes the
//! tests drive ([`curl`], [`eventually`]), upstream servers on loopback
//! ([`spawn_upstream`], and with the feature `tls` an HTTPS one), a
//! webhook [`receiver`], `CONNECT`
//! tunnels and TLS clients (feature `tls`), raw exchanges with a listener
//! ([`raw`]), and seeded property runs ([`proptest_config`]).
//!
//! Nothing here knows mocklib: the library's own harness (a reqwest client
//! through a server's middleware, the engine asked directly) stays in
//! crates/mocklib-tests/tests/it/common.rs, the command's (`mocklib serve`
//! as a child process) in crates/mocklib-cli/tests/it/common.rs.

pub mod raw;
#[cfg(feature = "tls")]
mod tls;

use std::net::SocketAddr;
use std::process::Command;

#[cfg(feature = "tls")]
pub use tls::{
    localhost_tls_config, spawn_stoppable_tls_upstream, spawn_tls_upstream, tls_client, tunnel,
    tunnel_connector,
};

/// What [`receiver`] got of one request: its request line, its headers
/// (lower-case names) and its body.
pub struct Received {
    pub line: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A receiver on loopback (a webhook's): answers every request `202
/// Accepted` with the body `thanks`, and hands over what it got. Its
/// origin (`http://127.0.0.1:PORT`) and where the requests arrive.
pub fn receiver() -> (String, std::sync::mpsc::Receiver<Received>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap();
                headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
            }
            let length = headers
                .iter()
                .find(|(name, _)| name == "content-length")
                .map_or(0, |(_, value)| value.parse().unwrap());
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            reader
                .into_inner()
                .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 6\r\nconnection: close\r\n\r\nthanks")
                .unwrap();
            let _ = sent.send(Received {
                line: line.trim_end().to_owned(),
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
        }
    });
    (origin, received)
}

/// Runs curl with `args` (plus `--silent --show-error --max-time 20`) as a
/// child process; returns what it printed, failing the test if it failed.
pub fn curl(args: &[&str]) -> String {
    let mut curl = Command::new("curl");
    curl.args(["--silent", "--show-error", "--max-time", "20"]);
    stdout_of(curl.args(args))
}

/// Runs `command` to its end and returns what it printed on standard
/// output. Fails the test when it cannot start (`scripts/test setup`
/// installs the programs the tests run) or exits unsuccessfully, with what
/// it printed on standard error.
pub fn stdout_of(command: &mut Command) -> String {
    let output = command.output();
    let program = command.get_program().to_string_lossy().into_owned();
    let output = output.unwrap_or_else(|error| panic!("{program} does not run: {error}"));
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap_or_else(|_| panic!("{program} printed no text"))
}

/// Calls `check` until it returns `Some`, up to 20 seconds: for what
/// happens after a file is polled (reloads, recordings).
pub fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(value) = check() {
            return value;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{what} did not happen within 20 seconds");
}

/// Serves `app` on an ephemeral loopback port for the rest of the test's
/// runtime; returns its address.
pub async fn spawn_upstream(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("upstream server");
    });
    address
}

/// The message of a caught panic (`panic!` with a literal or a format).
pub fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    match panic.downcast::<String>() {
        Ok(text) => *text,
        Err(panic) => match panic.downcast::<&'static str>() {
            Ok(text) => (*text).to_owned(),
            Err(_) => "<a panic without a message>".to_owned(),
        },
    }
}

/// Tells a test when it is dropped: put it in what a resolver or a stream
/// owns, and the receiver hears when that is dropped (the client went away).
pub struct DropSignal(Option<tokio::sync::oneshot::Sender<()>>);

impl DropSignal {
    /// A signal and the receiver that hears its drop.
    pub fn new() -> (Self, tokio::sync::oneshot::Receiver<()>) {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        (DropSignal(Some(sender)), receiver)
    }
}

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            let _ = sender.send(());
        }
    }
}

/// The seed of every property run unless `MOCKLIB_PROPTEST_SEED` says
/// otherwise (docs/RELIABILITY.md).
pub const PROPTEST_SEED: u64 = 27;

/// A property run of `cases` cases (or `MOCKLIB_PROPTEST_CASES`) from the
/// fixed seed (or `MOCKLIB_PROPTEST_SEED`), with no failure files and at
/// most `max_shrink_iters` shrinking steps: reproducible, and as long as a
/// longer run asks (docs/RELIABILITY.md).
pub fn proptest_config(cases: u32, max_shrink_iters: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
    Config {
        cases: env_number("MOCKLIB_PROPTEST_CASES").map_or(cases, |n| n as u32),
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(env_number("MOCKLIB_PROPTEST_SEED").unwrap_or(PROPTEST_SEED)),
        failure_persistence: None,
        max_shrink_iters,
        ..Config::default()
    }
}

/// The number in environment variable `name`, if it is set; a value that
/// is not a number fails the test rather than being ignored.
pub fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
    )
}
