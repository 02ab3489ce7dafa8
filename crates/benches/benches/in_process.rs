//! In-process latency of a mocked request, beside peers measured in the same run.
//!
//! Run with `cargo bench --bench in_process`. Prints one row per case: the
//! median, the 10th and 90th percentiles, and the ratio to the reqwest →
//! wiremock-rs round trip (the peer a Rust developer would use today).
//!
//! Each case makes `WARMUP` untimed requests, then times `SAMPLES` requests one
//! by one; the tables in docs/BENCHMARKS.md come from this output.

use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use tower::ServiceExt;

const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;

struct Measurement {
    name: &'static str,
    samples: Vec<Duration>,
}

impl Measurement {
    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.samples.len() - 1) as f64 * p).round() as usize;
        self.samples[index]
    }
}

async fn measure<F, Fut>(name: &'static str, mut request: F) -> Measurement
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..WARMUP {
        request().await;
    }
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let started = Instant::now();
        request().await;
        samples.push(started.elapsed());
    }
    samples.sort_unstable();
    Measurement { name, samples }
}

fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}

fn main() {
    // First, while the heap is fresh: later cases free memory the allocator
    // would reuse, hiding what 10,000 handlers take.
    memory();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("John")
    })]);
    server.listen();
    let tower = measure_tower("mocklib tower service, 1 handler (in-process)", &server).await;

    // The same, with the request journal switched off: what recording each
    // request costs.
    let quiet = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::text("John")
    })]);
    quiet.listen_with(mocklib::ListenOptions::new().journal_capacity(0));
    let unjournaled = measure_tower("mocklib tower service, 1 handler, journal off", &quiet).await;

    // A path parameter: matched in one pass (no regex) and captured.
    let with_param = setup_server([http::get("https://api.example.com/users/:id", |args| {
        HttpResponse::text(args.params.get("id").unwrap_or_default().to_owned())
    })]);
    with_param.listen();
    let param = measure_tower_at(
        "mocklib tower service, 1 handler `/users/:id`",
        &with_param,
        "https://api.example.com/users/John",
    )
    .await;

    // A `*`-led pattern: a free parameter, its ends tried in steps.
    let wildcard_led = setup_server([http::get("*/user", |_| HttpResponse::text("John"))]);
    wildcard_led.listen();
    let wildcard = measure_tower("mocklib tower service, 1 handler `*/user`", &wildcard_led).await;

    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build();
    let middleware = measure("mocklib reqwest-middleware, 1 handler (in-process)", || {
        let client = client.clone();
        async move {
            let body = client
                .get("https://api.example.com/user")
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(body, "John");
        }
    })
    .await;

    let wiremock = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .and(wiremock::matchers::path("/user"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("John"))
        .mount(&wiremock)
        .await;
    let plain = reqwest::Client::new();
    let url = format!("{}/user", wiremock.uri());
    let peer = measure(
        "reqwest → wiremock-rs, 1 mock (HTTP over loopback)",
        || {
            let (plain, url) = (plain.clone(), url.clone());
            async move {
                let body = plain.get(&url).send().await.unwrap().text().await.unwrap();
                assert_eq!(body, "John");
            }
        },
    )
    .await;

    let baseline = peer.percentile(0.5).as_secs_f64();
    println!("\n{SAMPLES} timed requests per case after {WARMUP} warm-up requests\n");
    println!("| case | median | p10 | p90 | median vs wiremock-rs |");
    println!("|---|---|---|---|---|");
    for m in [&tower, &unjournaled, &param, &wildcard, &middleware, &peer] {
        println!(
            "| {} | {} | {} | {} | {:.3}× |",
            m.name,
            micros(m.percentile(0.5)),
            micros(m.percentile(0.1)),
            micros(m.percentile(0.9)),
            m.percentile(0.5).as_secs_f64() / baseline
        );
    }

    scaling().await;
    boundary_entry();
}

/// GETs `https://api.example.com/user` through `server`'s tower service,
/// expecting "John".
async fn measure_tower(name: &'static str, server: &mocklib::node::Server) -> Measurement {
    measure_tower_at(name, server, "https://api.example.com/user").await
}

/// Like [`measure_tower`], the request carrying `x-api-key: secret` (what
/// the matchers of [`server_with_matchers`] ask for).
async fn measure_tower_with_key(name: &'static str, server: &mocklib::node::Server) -> Measurement {
    let service = server.service();
    measure(name, || {
        let service = service.clone();
        async move {
            let request = ::http::Request::get("https://api.example.com/user")
                .header("x-api-key", "secret")
                .body(Full::new(Bytes::new()))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, "John");
        }
    })
    .await
}

/// GETs `url` through `server`'s tower service, expecting "John".
async fn measure_tower_at(
    name: &'static str,
    server: &mocklib::node::Server,
    url: &'static str,
) -> Measurement {
    let service = server.service();
    measure(name, || {
        let service = service.clone();
        async move {
            let request = ::http::Request::get(url)
                .body(Full::new(Bytes::new()))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, "John");
        }
    })
    .await
}

/// A server whose target handler (`GET /user`) is the last of `count`
/// handlers; the others are decoys on distinct paths.
fn server_with(count: usize) -> mocklib::node::Server {
    let mut handlers: Vec<_> = (1..count)
        .map(|i| {
            http::get(format!("https://api.example.com/decoy/{i}"), |_| {
                HttpResponse::text("decoy")
            })
        })
        .collect();
    handlers.push(http::get("https://api.example.com/user", |_| {
        HttpResponse::text("John")
    }));
    setup_server(handlers)
}

/// [`server_with`], every handler also asking for a header
/// (`Handler::when`): the target for `x-api-key: secret`, each decoy for a
/// key of its own.
fn server_with_matchers(count: usize) -> mocklib::node::Server {
    use mocklib::matchers::header;
    let mut handlers: Vec<_> = (1..count)
        .map(|i| {
            http::get(format!("https://api.example.com/decoy/{i}"), |_| {
                HttpResponse::text("decoy")
            })
            .when(header("x-api-key", format!("key-{i}")))
        })
        .collect();
    handlers.push(
        http::get("https://api.example.com/user", |_| {
            HttpResponse::text("John")
        })
        .when(header("x-api-key", "secret")),
    );
    setup_server(handlers)
}

/// In-process latency as the number of handlers grows (target last).
async fn scaling() {
    let mut rows = Vec::new();
    for count in [1, 100, 1_000, 10_000] {
        let server = server_with(count);
        server.listen();
        let name = match count {
            1 => "1 handler",
            100 => "100 handlers",
            1_000 => "1,000 handlers",
            _ => "10,000 handlers",
        };
        let measurement = measure_tower(name, &server).await;
        server.close();
        rows.push(measurement);
    }
    let one = rows[0].percentile(0.5).as_secs_f64();
    println!("\nIn-process (tower) latency by number of handlers, the target registered last\n");
    println!("| handlers | median | p10 | p90 | median vs 1 handler |");
    println!("|---|---|---|---|---|");
    for m in &rows {
        println!(
            "| {} | {} | {} | {} | {:.2}× |",
            m.name,
            micros(m.percentile(0.5)),
            micros(m.percentile(0.1)),
            micros(m.percentile(0.9)),
            m.percentile(0.5).as_secs_f64() / one
        );
    }
    let ratio = rows[3].percentile(0.5).as_secs_f64() / one;
    let verdict = if ratio <= 1.5 { "PASS" } else { "FAIL" };
    println!("\n{verdict}: 10,000 handlers cost {ratio:.2}× one handler (goal ≤ 1.5×)");

    // Declarative matchers are data checked after the index has narrowed
    // by method and path: they should not make lookup grow.
    let mut matched = Vec::new();
    for (count, name) in [
        (1, "1 handler with a header matcher"),
        (10_000, "10,000 handlers with header matchers"),
    ] {
        let server = server_with_matchers(count);
        server.listen();
        matched.push(measure_tower_with_key(name, &server).await);
        server.close();
    }
    println!("\n| handlers | median | p10 | p90 |\n|---|---|---|---|");
    for m in &matched {
        println!(
            "| {} | {} | {} | {} |",
            m.name,
            micros(m.percentile(0.5)),
            micros(m.percentile(0.1)),
            micros(m.percentile(0.9))
        );
    }
    let ratio = matched[1].percentile(0.5).as_secs_f64() / matched[0].percentile(0.5).as_secs_f64();
    let verdict = if ratio <= 1.5 { "PASS" } else { "FAIL" };
    println!(
        "\n{verdict}: 10,000 handlers with header matchers cost {ratio:.2}× one handler with one (goal ≤ 1.5×)"
    );
}

/// Entering a boundary (creating its scope and running a trivial callback)
/// with 10,000 handlers in the list.
fn boundary_entry() {
    let server = server_with(10_000);
    let enter = server.boundary(|| ());
    for _ in 0..WARMUP {
        enter().into_inner();
    }
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let started = Instant::now();
        enter().into_inner();
        samples.push(started.elapsed());
    }
    samples.sort_unstable();
    let m = Measurement {
        name: "boundary entry, 10,000 handlers",
        samples,
    };
    let median = m.percentile(0.5);
    println!("\n| case | median | p10 | p90 |\n|---|---|---|---|");
    println!(
        "| {} | {} | {} | {} |",
        m.name,
        micros(median),
        micros(m.percentile(0.1)),
        micros(m.percentile(0.9))
    );
    let verdict = if median <= Duration::from_micros(2) {
        "PASS"
    } else {
        "FAIL"
    };
    println!(
        "\n{verdict}: boundary entry {} (goal ≤ 2 µs)",
        micros(median)
    );
}

/// Resident memory added by a server with 10,000 handlers (Linux).
fn memory() {
    fn resident_bytes() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
    let Some(before) = resident_bytes() else {
        println!("\nresident memory: not measurable on this platform");
        return;
    };
    let server = server_with(10_000);
    // Build the index the way a lookup would see it.
    server.use_handlers([http::get("/warm", |_| HttpResponse::empty())]);
    let after = resident_bytes().unwrap_or(before);
    let added = after.saturating_sub(before);
    println!(
        "\nresident memory added by 10,000 handlers: {:.1} MiB ({} bytes per handler)",
        added as f64 / (1024.0 * 1024.0),
        added / 10_000
    );
    drop(server);
}
