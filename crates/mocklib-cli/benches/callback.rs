//! A resolver in the test's language, measured from the server's side
//! (issue 39): the round trip of a request answered by a `callback` entry
//! over the callback channel, against the same request answered by a
//! static entry, with a client and a resolver whose own costs stay small
//! and fixed (a plain keep-alive HTTP/1.1 client; a WebSocket client in
//! Rust that answers each call at once). What a Python or JavaScript
//! resolver adds on top — its runtime's JSON, threads and sockets — is
//! measured by the packages' own benchmarks (packages/python/bench,
//! packages/node/bench).
//!
//! The release `mocklib` binary as a child process. Prints a table and a
//! PASS/FAIL line for the goal: p50 ≤ 150 µs.
//!
//! `cargo bench -p mocklib-cli --bench callback`

mod common;

use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{CONNECTIONS, Client, Serve, load, micros, verdict};
use tokio_tungstenite::tungstenite::{self, Message};

/// Requests one after the other, for the round trip's quantiles.
const SEQUENTIAL: usize = 20_000;
/// How long the concurrent load runs.
const PHASE: Duration = Duration::from_secs(5);

fn main() {
    let dir = std::env::temp_dir().join(format!("mocklib-callback-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("handlers.yaml"),
        "- method: GET\n  path: /static\n  body: John\n\
         - method: GET\n  path: /callback\n  callback: john\n",
    )
    .unwrap();
    let mut serve = Serve::start(&dir);
    let origin = serve.origin.clone();
    let resolver = Resolver::open(&origin);
    println!(
        "mocklib serve (release), a keep-alive HTTP/1.1 client, a Rust WebSocket client answering each call at once, on {} CPUs",
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!();

    let mut client = Client::connect(&origin);
    for path in ["/static", "/callback"] {
        for _ in 0..1000 {
            assert_eq!(client.send("GET", path, ""), (200, "John".to_owned()));
        }
    }
    // Interleaved, so that the machine's load weighs on both alike.
    let (mut fixed, mut called) = (Vec::new(), Vec::new());
    for _ in 0..SEQUENTIAL {
        for (path, latencies) in [("/static", &mut fixed), ("/callback", &mut called)] {
            let sent = Instant::now();
            let (status, body) = client.send("GET", path, "");
            latencies.push(sent.elapsed());
            assert_eq!((status, body.as_str()), (200, "John"));
        }
    }
    let fixed_load = load(&origin, "/static", PHASE, None);
    let called_load = load(&origin, "/callback", PHASE, None);

    println!("| entry | p50 | p99 | requests/s, {CONNECTIONS} callers |");
    println!("|---|---|---|---|");
    let (fixed_p50, _) = row("static entry", &mut fixed, fixed_load.rate);
    let (called_p50, _) = row(
        "callback entry, answered over the channel",
        &mut called,
        called_load.rate,
    );
    println!();
    println!(
        "the channel's hop: +{} at p50 ({} calls answered)",
        micros(called_p50.saturating_sub(fixed_p50)),
        resolver.answered()
    );
    println!();
    verdict(
        called_p50 <= Duration::from_micros(150),
        &format!(
            "a callback resolver's round trip over loopback: p50 {} (≤ 150 µs)",
            micros(called_p50)
        ),
    );
    serve.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Prints one row; returns p50 and p99.
fn row(name: &str, latencies: &mut [Duration], rate: f64) -> (Duration, Duration) {
    latencies.sort_unstable();
    let at = |quantile: f64| latencies[((latencies.len() - 1) as f64 * quantile) as usize];
    let (p50, p99) = (at(0.50), at(0.99));
    println!("| {name} | {} | {} | {rate:.0} |", micros(p50), micros(p99));
    (p50, p99)
}

/// The root scope's callback channel, held by a thread that answers every
/// call with `200 John` as soon as it reads it (until the server ends and
/// closes the channel).
struct Resolver {
    answered: Arc<AtomicU64>,
}

impl Resolver {
    fn open(origin: &str) -> Resolver {
        let host = origin.trim_start_matches("http://").trim_end_matches('/');
        let stream = TcpStream::connect(host).expect("the server accepts");
        stream.set_nodelay(true).unwrap();
        let (mut socket, _) =
            tungstenite::client(format!("ws://{host}/__mocklib/callbacks"), stream)
                .expect("the callback channel opens");
        let answered = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&answered);
        std::thread::spawn(move || {
            loop {
                let text = match socket.read() {
                    Ok(Message::Text(text)) => text,
                    Ok(Message::Close(_)) | Err(_) => return,
                    Ok(_) => continue,
                };
                let call: serde_json::Value = serde_json::from_str(&text).expect("a call is JSON");
                let answer = serde_json::json!({
                    "id": call["id"],
                    "response": {"status": 200, "body": "John"},
                });
                if socket.send(Message::text(answer.to_string())).is_err() {
                    return;
                }
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        Resolver { answered }
    }

    /// How many calls it has answered.
    fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }
}
