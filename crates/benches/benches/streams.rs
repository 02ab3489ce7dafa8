//! Streamed bodies against buffered ones, and server-sent events through the
//! HTTPS proxy: `cargo bench -p mocklib-benches --bench streams`.
//!
//! 1. **First byte.** Per front door (the in-process middleware, the listener
//!    in base URL mode, the listener as HTTPS proxy with TLS), the time from
//!    sending a `GET` to holding the first byte of the body: a 1 KiB body
//!    buffered (`HttpResponse::text`) against the same bytes streamed in
//!    four chunks (`HttpResponse::stream`). Cases take turns in rounds; one
//!    reqwest client per front door, built up front. Through the listener,
//!    each request starts 1 ms after the previous one ended, on a settled
//!    connection: the client puts a chunked response's connection back in
//!    its pool only after its connection task wakes up, and a request sent
//!    sooner waits for that wake-up (traced: no new connection is made),
//!    which made the streamed case 1.0× in some runs and 1.5× in others.
//! 2. **SSE throughput and memory.** One `sse` handler sends `EVENTS` events
//!    (yielding to the runtime every 64, so the queue stays short: how a
//!    resolver that produces faster than its client reads keeps memory
//!    flat), read to the end through `server.reqwest_client()` (HTTPS via
//!    the proxy) with `eventsource-stream`. Reported: events per second,
//!    and the process's resident memory after 10,000 and after 100,000
//!    events (flat memory: the second is not larger by more than 8 MiB).
//! 3. **SSE against the floor.** The same events from the listener in base
//!    URL mode and from a bare hyper server that writes the same bytes
//!    (yielding every 64 events too), read with the same client over plain
//!    HTTP, in interleaved rounds: the rate of either moves a lot with the
//!    machine's load, their ratio in one run does not.
//!
//! Both SSE servers are `mocklib_counted`'s (crates/counted): its binary
//! runs each alone (`mocklib-counted sse-mocklib|sse-bare`), and
//! `scripts/bench-counted` counts what an event costs each under valgrind.

mod common;

use common::{micros, percentile};

use std::time::{Duration, Instant};

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};
use mocklib_counted::events;

const WARMUP: usize = 50;
const SAMPLES: usize = 1_000;
const ROUNDS: usize = 20;
/// The pause between two first-byte requests (see the module docs).
const SETTLE: Duration = Duration::from_millis(1);

fn main() {
    common::run(async {
        first_byte().await;
        sse_throughput().await;
        sse_against_bare().await;
    });
}

fn body() -> String {
    "x".repeat(1024)
}

fn server() -> Server {
    let server = setup_server([
        http::get("/buffered", |_| HttpResponse::text(body())),
        http::get("/streamed", |_| {
            let text = body();
            let chunks: Vec<Bytes> = text
                .as_bytes()
                .chunks(256)
                .map(Bytes::copy_from_slice)
                .collect();
            HttpResponse::stream(futures_util::stream::iter(chunks))
                .header("content-type", "text/plain")
        }),
    ]);
    server.listen();
    server
}

/// How one front door is reached: its client and the URL base of a path.
struct Door {
    name: &'static str,
    client: Client,
    base: String,
}

enum Client {
    Middleware(reqwest_middleware::ClientWithMiddleware),
    Plain(reqwest::Client),
}

fn doors(server: &Server) -> Vec<Door> {
    let middleware = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();
    vec![
        Door {
            name: "in-process middleware",
            client: Client::Middleware(middleware),
            base: "https://api.test".to_owned(),
        },
        Door {
            name: "listener, base URL",
            client: Client::Plain(reqwest::Client::new()),
            base: server.url().as_str().trim_end_matches('/').to_owned(),
        },
        Door {
            name: "listener, HTTPS proxy",
            client: Client::Plain(server.reqwest_client()),
            base: "https://api.test".to_owned(),
        },
    ]
}

/// Time to the first byte of the body of `GET {base}{path}`.
async fn first_byte_once(door: &Door, path: &str) -> Duration {
    let url = format!("{}{path}", door.base);
    let started = Instant::now();
    let mut response = match &door.client {
        Client::Middleware(client) => client.get(url).send().await.unwrap(),
        Client::Plain(client) => client.get(url).send().await.unwrap(),
    };
    loop {
        let chunk = response.chunk().await.unwrap().expect("a body");
        if !chunk.is_empty() {
            break;
        }
    }
    let elapsed = started.elapsed();
    // Read the rest so the connection is reused as in the buffered case.
    while response.chunk().await.unwrap().is_some() {}
    // Settle a pooled connection (see the module docs); in process there is none.
    if matches!(door.client, Client::Plain(_)) {
        tokio::time::sleep(SETTLE).await;
    }
    elapsed
}

async fn first_byte() {
    let server = server();
    let doors = doors(&server);
    let paths = ["/buffered", "/streamed"];
    let mut samples = vec![vec![Vec::new(); paths.len()]; doors.len()];
    for door in &doors {
        for path in paths {
            for _ in 0..WARMUP {
                first_byte_once(door, path).await;
            }
        }
    }
    for _ in 0..ROUNDS {
        for (d, door) in doors.iter().enumerate() {
            for (p, path) in paths.iter().enumerate() {
                for _ in 0..SAMPLES / ROUNDS {
                    let sample = first_byte_once(door, path).await;
                    samples[d][p].push(sample);
                }
            }
        }
    }
    println!(
        "\nfirst byte of a 1 KiB body, buffered vs streamed in 4 chunks; {WARMUP} warm-up then \
         {SAMPLES} timed requests per case in {ROUNDS} interleaved rounds, through the listener \
         each {} ms after the last ended; tokio multi-thread runtime, 2 workers\n",
        SETTLE.as_millis()
    );
    println!(
        "| front door | buffered (median) | streamed (median) | p90 buffered | p90 streamed | streamed vs buffered |"
    );
    println!("|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for (door, samples) in doors.iter().zip(&mut samples) {
        for case in samples.iter_mut() {
            case.sort_unstable();
        }
        let (buffered, streamed) = (&samples[0], &samples[1]);
        let ratio =
            percentile(streamed, 0.5).as_secs_f64() / percentile(buffered, 0.5).as_secs_f64();
        println!(
            "| {} | {} | {} | {} | {} | {ratio:.2}× |",
            door.name,
            micros(percentile(buffered, 0.5)),
            micros(percentile(streamed, 0.5)),
            micros(percentile(buffered, 0.9)),
            micros(percentile(streamed, 0.9)),
        );
        verdicts.push(format!(
            "{}: {}: first byte streamed ≤ 1.2× buffered ({ratio:.2}×)",
            if ratio <= 1.2 { "PASS" } else { "FAIL" },
            door.name
        ));
    }
    println!();
    for verdict in verdicts {
        println!("{verdict}");
    }
    server.close();
}

/// Reads every event of `/events/{count}` through the HTTPS proxy; returns
/// the time it took.
async fn read_events(client: &reqwest::Client, count: usize) -> Duration {
    read_events_at(client, "https://prices.test", count).await
}

/// Reads every event of `{base}/events/{count}`; returns the time it took.
async fn read_events_at(client: &reqwest::Client, base: &str, count: usize) -> Duration {
    let started = Instant::now();
    let response = client
        .get(format!("{base}/events/{count}"))
        .send()
        .await
        .unwrap();
    let mut events = response.bytes_stream().eventsource();
    let mut seen = 0;
    while let Some(event) = events.next().await {
        event.unwrap();
        seen += 1;
    }
    assert_eq!(seen, count);
    started.elapsed()
}

async fn sse_against_bare() {
    const EVENTS: usize = 10_000;
    const RUNS: usize = 15;
    let server = events::mocklib_server();
    let mocklib_url = server.url().to_string().trim_end_matches('/').to_owned();
    let bare_url = events::bare_server().await;
    let client = reqwest::Client::new();
    for base in [&mocklib_url, &bare_url] {
        read_events_at(&client, base, 1_000).await; // warm-up
    }
    let (mut mocklib, mut bare) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        // The order alternates, so load that comes and goes falls on both.
        let order = if run % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for is_mocklib in order {
            let base = if is_mocklib { &mocklib_url } else { &bare_url };
            let rate = EVENTS as f64 / read_events_at(&client, base, EVENTS).await.as_secs_f64();
            if is_mocklib {
                mocklib.push(rate)
            } else {
                bare.push(rate)
            }
        }
    }
    let ratios: Vec<f64> = {
        let mut ratios: Vec<f64> = mocklib.iter().zip(&bare).map(|(m, b)| m / b).collect();
        ratios.sort_by(f64::total_cmp);
        ratios
    };
    mocklib.sort_by(f64::total_cmp);
    bare.sort_by(f64::total_cmp);
    let ratio = ratios[RUNS / 2];
    println!(
        "\nserver-sent events over plain HTTP, {EVENTS} events per run, {RUNS} runs each in \
         alternating order, read with eventsource-stream; both servers yield every 64 events\n"
    );
    println!("| server | events per second (median) | slowest run | fastest run |");
    println!("|---|---|---|---|");
    for (name, rates) in [
        ("mocklib base URL (`sse::get`)", &mocklib),
        ("bare hyper, the same bytes", &bare),
    ] {
        println!(
            "| {name} | {:.0} | {:.0} | {:.0} |",
            rates[RUNS / 2],
            rates[0],
            rates[RUNS - 1]
        );
    }
    println!(
        "\nmocklib / bare hyper per run: median {ratio:.3}× (runs {:.3}–{:.3}×)\n",
        ratios[0],
        ratios[RUNS - 1]
    );
    println!(
        "{}: SSE through the listener ≥ 0.9× a bare hyper server's events per second, \
         median of the per-run ratios ({ratio:.3}×)",
        if ratio >= 0.9 { "PASS" } else { "FAIL" }
    );
    server.close();
}

/// Resident memory of this process, from /proc (Linux).
fn resident_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|pages| pages.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

async fn sse_throughput() {
    let server = events::mocklib_server();
    let client = server.reqwest_client();
    read_events(&client, 1_000).await; // warm-up: TLS, the CA, the pools
    let mut rates = Vec::new();
    for _ in 0..5 {
        let took = read_events(&client, 10_000).await;
        rates.push(10_000.0 / took.as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    let after_10k = resident_mib();
    let took = read_events(&client, 100_000).await;
    let after_100k = resident_mib();
    let rate = rates[rates.len() / 2];
    println!(
        "\nserver-sent events through the HTTPS proxy (server.reqwest_client(), TLS), read with \
         eventsource-stream; the resolver yields every 64 events\n"
    );
    println!("| measure | value |");
    println!("|---|---|");
    println!("| events per second, 10,000 events (median of 5 runs) | {rate:.0} |");
    println!(
        "| events per second, 100,000 events | {:.0} |",
        100_000.0 / took.as_secs_f64()
    );
    println!("| resident memory after 10,000 events | {after_10k:.1} MiB |");
    println!("| resident memory after 100,000 more | {after_100k:.1} MiB |");
    println!();
    println!(
        "{}: ≥ 10,000 SSE events per second through the HTTPS proxy ({rate:.0}/s)",
        if rate >= 10_000.0 { "PASS" } else { "FAIL" }
    );
    let growth = after_100k - after_10k;
    println!(
        "{}: flat memory: 100,000 more events grow resident memory by ≤ 8 MiB ({growth:+.1} MiB)",
        if growth <= 8.0 { "PASS" } else { "FAIL" }
    );
    server.close();
}
