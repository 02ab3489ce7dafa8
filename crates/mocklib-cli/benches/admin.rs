//! `mocklib serve` at runtime, measured (issue 24, goal 5): requests keep
//! their latency while a test changes handlers a hundred times a second,
//! and a thousand open scopes cost little memory and leave lookup flat.
//!
//! The release `mocklib` binary as a child process, loaded by 8 threads on
//! keep-alive connections (a plain HTTP/1.1 client, so the client's own
//! cost stays small and fixed). Prints a table and a PASS/FAIL line per
//! goal.
//!
//! `cargo bench -p mocklib-cli --bench admin`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Load threads, each on its own keep-alive connection.
const CONNECTIONS: usize = 8;
/// How long each measured phase loads the server.
const PHASE: Duration = Duration::from_secs(5);
/// Scopes opened for the memory and lookup measure.
const SCOPES: usize = 1000;

fn main() {
    let dir = std::env::temp_dir().join(format!("mocklib-admin-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("handlers.yaml"),
        "- method: GET\n  path: /user\n  body: John\n",
    )
    .unwrap();
    let mut serve = Serve::start(&dir);
    let origin = serve.origin.clone();
    println!(
        "mocklib serve (release), {CONNECTIONS} keep-alive connections of a plain HTTP/1.1 client, {}s per phase, on {} CPUs",
        PHASE.as_secs(),
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!();

    // Warm up, then the unchanged run.
    let _ = load(&origin, "/user", Duration::from_secs(1), None);
    let quiet = load(&origin, "/user", PHASE, None);
    // The same load while another client adds a handler and removes it
    // again, a hundred changes a second, on the list every request reads.
    let changing = load(&origin, "/user", PHASE, Some(&origin));

    let rss_before = serve.rss_kib();
    let mut scopes = Vec::with_capacity(SCOPES);
    let opening = Instant::now();
    let mut admin = Client::connect(&origin);
    for _ in 0..SCOPES {
        let (status, body) = admin.send("POST", "/__mocklib/scopes", "");
        assert_eq!(status, 201, "{body}");
        let url = body
            .split("\"url\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the scope's url")
            .to_owned();
        scopes.push(url);
    }
    let opened_in = opening.elapsed();
    let rss_after = serve.rss_kib();
    let with_scopes = load(&origin, "/user", PHASE, None);
    let in_a_scope = load(&scopes[SCOPES / 2], "/user", PHASE, None);

    println!("| run | requests/s | p50 | p99 | max |");
    println!("|---|---|---|---|---|");
    for (name, run) in [
        ("unchanged", &quiet),
        ("100 handler changes/s at the root", &changing),
        (&*format!("{SCOPES} scopes open, at the root"), &with_scopes),
        (
            &*format!("{SCOPES} scopes open, in one of them"),
            &in_a_scope,
        ),
    ] {
        println!(
            "| {name} | {:.0} | {} | {} | {} |",
            run.rate,
            micros(run.p50),
            micros(run.p99),
            micros(run.max)
        );
    }
    println!();
    println!(
        "{} handler changes made during the changing run ({:.0}/s)",
        changing.changes,
        changing.changes as f64 / PHASE.as_secs_f64()
    );
    let grown_mib = (rss_after.saturating_sub(rss_before)) as f64 / 1024.0;
    println!(
        "resident memory: {:.1} MiB before, {:.1} MiB with {SCOPES} scopes open (+{grown_mib:.1} MiB, {:.1} KiB a scope); opened in {:.2} s",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / SCOPES as f64,
        opened_in.as_secs_f64()
    );
    println!();

    let stall = changing.p99.as_secs_f64() / quiet.p99.as_secs_f64();
    verdict(
        stall <= 2.0 && changing.changes as f64 >= 90.0 * PHASE.as_secs_f64(),
        &format!("100 handler changes/s keep p99 ≤ 2× the unchanged run ({stall:.2}×)"),
    );
    verdict(
        grown_mib <= 50.0,
        &format!("{SCOPES} open scopes cost ≤ 50 MiB resident ({grown_mib:.1} MiB)"),
    );
    let flat = with_scopes.p50.as_secs_f64() / quiet.p50.as_secs_f64();
    let flat_scope = in_a_scope.p50.as_secs_f64() / quiet.p50.as_secs_f64();
    verdict(
        flat <= 1.15 && flat_scope <= 1.15,
        &format!(
            "lookup stays flat with {SCOPES} scopes open: p50 {flat:.2}× at the root, {flat_scope:.2}× in a scope (≤ 1.15×)"
        ),
    );
    drop(admin);
    serve.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

fn verdict(pass: bool, what: &str) {
    println!("{}: {what}", if pass { "PASS" } else { "FAIL" });
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}

/// A running `mocklib serve`.
struct Serve {
    child: Child,
    origin: String,
}

impl Serve {
    fn start(dir: &std::path::Path) -> Serve {
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
    fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    fn stop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// What one phase measured.
struct Run {
    rate: f64,
    p50: Duration,
    p99: Duration,
    max: Duration,
    changes: u64,
}

/// Loads `origin` + `path` from [`CONNECTIONS`] threads for `time`; with
/// `changes_at`, a client there also adds and removes a handler every
/// 10 ms.
fn load(origin: &str, path: &str, time: Duration, changes_at: Option<&str>) -> Run {
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
struct Client {
    stream: BufReader<TcpStream>,
    host: String,
}

impl Client {
    fn connect(origin: &str) -> Client {
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

    fn send(&mut self, method: &str, path: &str, body: &str) -> (u16, String) {
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
