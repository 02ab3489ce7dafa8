//! What the command's benchmarks share: the release `mocklib` binary as a
//! child process, a plain keep-alive HTTP/1.1 client whose own cost stays
//! small and fixed, a load of [`CONNECTIONS`] such clients, and the
//! PASS/FAIL lines.

// Each benchmark uses part of this.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Load threads, each on its own keep-alive connection.
pub const CONNECTIONS: usize = 8;

pub fn verdict(pass: bool, what: &str) {
    println!("{}: {what}", if pass { "PASS" } else { "FAIL" });
}

pub fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}

/// A running `mocklib serve`.
pub struct Serve {
    child: Child,
    pub origin: String,
}

impl Serve {
    /// `mocklib serve --handlers handlers.yaml` in `dir`.
    pub fn start(dir: &std::path::Path) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mocklib"))
            .args([
                "serve",
                "--handlers",
                "handlers.yaml",
                "--until-stdin-closes",
            ])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the mocklib binary runs");
        let mut origin = None;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if line.is_empty() {
                break;
            }
            if let Some(url) = line.strip_prefix("MOCKLIB_URL=") {
                origin = Some(url.to_owned());
            }
        }
        Serve {
            child,
            origin: origin.expect("MOCKLIB_URL printed"),
        }
    }

    /// Resident memory, KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    pub fn stop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// What one phase measured.
pub struct Run {
    pub rate: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub changes: u64,
}

/// Loads `origin` + `path` from [`CONNECTIONS`] threads for `time`; with
/// `changes_at`, a client there also adds and removes a handler every
/// 10 ms.
pub fn load(origin: &str, path: &str, time: Duration, changes_at: Option<&str>) -> Run {
    let stop = Arc::new(AtomicBool::new(false));
    let changer = changes_at.map(|origin| {
        let (origin, stop) = (origin.to_owned(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut client = Client::connect(&origin);
            let mut changes = 0u64;
            let mut next = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let (status, body) = if changes % 2 == 0 {
                    client.send(
                        "POST",
                        "/__mocklib/handlers",
                        "[{\"path\": \"/other\", \"body\": \"x\"}]",
                    )
                } else {
                    client.send("DELETE", "/__mocklib/handlers/0", "")
                };
                assert!(status == 201 || status == 204, "{status} {body}");
                changes += 1;
                next += Duration::from_millis(10);
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
            changes
        })
    });
    let started = Instant::now();
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (origin, path, stop) = (origin.to_owned(), path.to_owned(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut client = Client::connect(&origin);
                let mut latencies = Vec::with_capacity(100_000);
                while !stop.load(Ordering::Relaxed) {
                    let sent = Instant::now();
                    let (status, _) = client.send("GET", &path, "");
                    latencies.push(sent.elapsed());
                    assert_eq!(status, 200);
                }
                latencies
            })
        })
        .collect();
    std::thread::sleep(time);
    stop.store(true, Ordering::Relaxed);
    let mut latencies: Vec<Duration> = workers
        .into_iter()
        .flat_map(|worker| worker.join().unwrap())
        .collect();
    let elapsed = started.elapsed();
    let changes = changer.map_or(0, |changer| changer.join().unwrap());
    latencies.sort_unstable();
    let at = |quantile: f64| latencies[((latencies.len() - 1) as f64 * quantile) as usize];
    Run {
        rate: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
        max: at(1.0),
        changes,
    }
}

/// A keep-alive HTTP/1.1 client: one request at a time, the body read by
/// its `content-length` (what `mocklib serve` sends for these answers).
pub struct Client {
    stream: BufReader<TcpStream>,
    host: String,
}

impl Client {
    pub fn connect(origin: &str) -> Client {
        let host = origin
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let stream = TcpStream::connect(&host).expect("the server accepts");
        stream.set_nodelay(true).unwrap();
        Client {
            stream: BufReader::new(stream),
            host,
        }
    }

    pub fn send(&mut self, method: &str, path: &str, body: &str) -> (u16, String) {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.stream.get_mut().write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        self.stream.read_line(&mut line).unwrap();
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut length = 0;
        loop {
            line.clear();
            self.stream.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}
