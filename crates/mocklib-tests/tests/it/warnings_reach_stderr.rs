//! Warnings never vanish: when no `tracing` subscriber is in effect on the
//! thread that warns, mocklib writes the warning to standard error — also
//! after another thread set a scoped subscriber of its own, as a test using
//! `tracing::subscriber::with_default` does.
//!
//! Standard error can only be read from outside the process, so the test
//! runs this test binary again as a child process, with an environment
//! variable selecting the scenario the helper test `scenario` plays, and
//! reads the child's standard error. The child runs that test alone, so
//! what the binary's other modules do to the process (none sets a global
//! subscriber) cannot reach it.

use std::io::Write;
use std::process::Command;
use std::sync::{Arc, Mutex, mpsc};

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, Request, front_door::Outcome, http};

/// The environment variable that selects the scenario the child plays.
const SCENARIO: &str = "MOCKLIB_TEST_WARNING_SCENARIO";

/// The unhandled request sent on the thread with a scoped subscriber.
const TO_THE_SUBSCRIBER: &str = "https://api.example.com/seen-by-the-subscriber";
/// The unhandled request sent on a thread without one.
const TO_STDERR: &str = "https://api.example.com/seen-on-stderr";

/// Marks the subscriber's output in the child's standard output.
const CAPTURED: &str = "captured by the subscriber: ";

/// The helper the child process runs; without the variable (an ordinary
/// test run) it does nothing.
#[test]
fn scenario() {
    match std::env::var(SCENARIO).as_deref() {
        Err(_) => {}
        Ok("scoped-subscriber-on-another-thread") => scoped_subscriber_on_another_thread(),
        Ok(other) => panic!("unknown scenario {other:?}"),
    }
}

#[test]
fn an_unhandled_request_warns_on_stderr_while_another_thread_has_a_scoped_subscriber() {
    // The helper's name as the test harness lists it: its module path
    // without the crate's name (`warnings_reach_stderr::scenario`).
    let module = module_path!().split_once("::").map_or("", |(_, path)| path);
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .arg(format!("{module}::scenario"))
        .env(SCENARIO, "scoped-subscriber-on-another-thread")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");

    // The thread without a subscriber: on stderr.
    assert!(
        stderr.contains("[mocklib] Warning: intercepted a request without a matching"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("GET {TO_STDERR}")), "{stderr}");
    // The thread with a subscriber: there, and not on stderr.
    assert!(!stderr.contains(TO_THE_SUBSCRIBER), "{stderr}");
    let captured = stdout
        .lines()
        // libtest's "test scenario ... " may start the line.
        .find_map(|line| line.split_once(CAPTURED).map(|(_, captured)| captured))
        .unwrap_or_else(|| panic!("no subscriber output in {stdout}"));
    assert!(captured.contains(TO_THE_SUBSCRIBER), "{captured}");
    assert!(!captured.contains(TO_STDERR), "{captured}");
}

/// Thread A sets a scoped subscriber and warns; while that subscriber is
/// still in effect there, this thread warns too; then prints what the
/// subscriber captured, on one line of standard output.
fn scoped_subscriber_on_another_thread() {
    let server = setup_server([http::get("https://api.example.com/known", |_| {
        HttpResponse::text("known")
    })]);
    // The default unhandled-request strategy: warn.
    server.listen();
    let captured = Capture::default();
    let (subscriber_set, wait_for_subscriber) = mpsc::channel();
    let (warned, wait_for_warning) = mpsc::channel::<()>();
    let with_subscriber = std::thread::spawn({
        let server = server.clone();
        let captured = captured.clone();
        move || {
            let subscriber = tracing_subscriber::fmt()
                .with_writer(move || captured.clone())
                .with_ansi(false)
                .finish();
            tracing::subscriber::with_default(subscriber, || {
                send_unhandled(&server, TO_THE_SUBSCRIBER);
                subscriber_set.send(()).unwrap();
                wait_for_warning.recv().unwrap();
            });
        }
    });
    wait_for_subscriber.recv().unwrap();
    send_unhandled(&server, TO_STDERR);
    warned.send(()).unwrap();
    with_subscriber.join().unwrap();
    let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).replace('\n', " ");
    println!("{CAPTURED}{text}");
}

/// Sends `GET url`, which no handler matches, through the server's public
/// front-door API on the calling thread.
fn send_unhandled(server: &Server, url: &str) {
    let request = Request::new(::http::Method::GET, url.parse().unwrap());
    let outcome = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(server.handle(request, None));
    assert!(matches!(outcome, Outcome::Passthrough(_)), "{outcome:?}");
}

/// A subscriber's output, kept in memory.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
