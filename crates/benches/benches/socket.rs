//! Latency of a mocked request over a real socket, beside peer mock servers
//! measured in the same run.
//!
//! Latency: `cargo bench -p mocklib-benches --bench socket`. Every case is a reqwest
//! `GET /user` answered with the 4-byte text `John`, once with 1 and once with
//! 1,000 handlers (mocks) registered. The target is registered first, so it is
//! last in lookup order wherever order matters: mocklib's `use_handlers`
//! prepends, so the 999 decoys go in after it; the peers get the target
//! first and 999 decoys with distinct paths `/decoy/{i}` after it.
//! One more row, a bare hyper server that mocks nothing (`mocklib_counted`'s,
//! the one the speed guard counts) behind the same client, shows how much of
//! every number is the client, the loopback and the HTTP framing that no mock
//! server avoids.
//!
//! Each case makes `WARMUP` untimed requests, then times `SAMPLES` requests
//! one by one, on one pooled client; all servers run side by side and the
//! cases take turns in `ROUNDS` slices, so load from elsewhere on the machine
//! falls on every case alike. A case whose requests, once its connection is
//! open, take longer than `SLOW` each is cut to `SLOW_WARMUP` + `SLOW_SAMPLES`
//! requests (the table's `samples` column says so). The tables in docs/BENCHMARKS.md come
//! from this output.
//!
//! The servers `scripts/bench` loads with wrk, and `scripts/bench-counted`
//! counts, are the mocklib base URL and bare hyper servers of these cases,
//! run alone by the `mocklib-counted` binary (crates/counted).

use std::time::{Duration, Instant};

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};
use mocklib_counted::user::{self, BODY, Bare};

const WARMUP: usize = 500;
const SAMPLES: usize = 5_000;
/// A case whose probe requests average more than this is cut short.
const SLOW: Duration = Duration::from_millis(1);
const SLOW_WARMUP: usize = 20;
const SLOW_SAMPLES: usize = 200;
const PROBE: usize = 10;
const ROUNDS: usize = 50;
const DECOYS: usize = 999;

struct Measurement {
    name: &'static str,
    handlers: usize,
    version: ::http::Version,
    samples: Vec<Duration>,
}

impl Measurement {
    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.samples.len() - 1) as f64 * p).round() as usize;
        self.samples[index]
    }

    fn median(&self) -> Duration {
        self.percentile(0.5)
    }
}

/// One case: a pooled client, the URL it asks for, and whatever keeps the
/// server (and its mocks) alive until the end of the run.
struct Case {
    name: &'static str,
    handlers: usize,
    client: reqwest::Client,
    url: String,
    _keep: Box<dyn std::any::Any>,
}

/// Times every case's requests one by one. The cases take turns, `ROUNDS`
/// slices each, so that load from elsewhere on the machine that comes and
/// goes during the run falls on all of them alike.
async fn measure(cases: &[Case]) -> Vec<Measurement> {
    let mut plans = Vec::with_capacity(cases.len());
    for case in cases {
        // The first requests open the connection (and, through the proxy,
        // the tunnel, the TLS handshake and a leaf certificate): not timed.
        for _ in 0..PROBE {
            get(&case.client, &case.url).await;
        }
        let probe = Instant::now();
        for _ in 0..PROBE {
            get(&case.client, &case.url).await;
        }
        let slow = probe.elapsed() / PROBE as u32 > SLOW;
        let (warmup, samples) = if slow {
            (SLOW_WARMUP, SLOW_SAMPLES)
        } else {
            (WARMUP, SAMPLES)
        };
        for _ in 0..warmup {
            get(&case.client, &case.url).await;
        }
        plans.push(samples);
    }
    let mut results: Vec<Measurement> = cases
        .iter()
        .zip(&plans)
        .map(|(case, &samples)| Measurement {
            name: case.name,
            handlers: case.handlers,
            version: ::http::Version::HTTP_11,
            samples: Vec::with_capacity(samples),
        })
        .collect();
    for round in 0..ROUNDS {
        for ((case, &samples), result) in cases.iter().zip(&plans).zip(&mut results) {
            let slice = samples * (round + 1) / ROUNDS - samples * round / ROUNDS;
            for _ in 0..slice {
                let started = Instant::now();
                result.version = get(&case.client, &case.url).await;
                result.samples.push(started.elapsed());
            }
        }
    }
    for result in &mut results {
        result.samples.sort_unstable();
    }
    results
}

fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}

/// GET `url` with `client`, check the body, return the HTTP version.
async fn get(client: &reqwest::Client, url: &str) -> ::http::Version {
    let response = client.get(url).send().await.unwrap();
    let version = response.version();
    let body = response.text().await.unwrap();
    assert_eq!(body, BODY);
    version
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(latency());
}

// ---------------------------------------------------------------------------
// Latency

const WIREMOCK: &str = "wiremock-rs, HTTP";
const MOCKLIB_BASE: &str = "mocklib base URL, HTTP";
const MOCKLIB_HTTPS: &str = "mocklib HTTPS via proxy (CONNECT + TLS), reqwest_client()";
const MOCKLIB_HTTPS_H2: &str = "mocklib HTTPS via proxy, HTTP/2 in the tunnel";
const BARE: &str = "reference: bare hyper server, no mocking";
const BARE_H2C: &str = "reference: bare hyper server, HTTP/2 with prior knowledge";
const BARE_TLS: &str = "reference: bare hyper server over TLS (rustls), no mocking";

async fn latency() {
    let mut cases = Vec::new();
    for handlers in [1, 1 + DECOYS] {
        let decoys = handlers - 1;
        cases.push(wiremock_case(decoys).await);
        cases.push(mocklib_base_url_case(decoys));
        cases.push(mocklib_https_case(decoys));
        cases.push(mocklib_https_h2_case(decoys));
        cases.push(httpmock_case(decoys).await);
        cases.push(mockito_case(decoys).await);
    }
    cases.push(bare_case());
    cases.push(bare_tls_case());
    // What HTTP/2 itself costs (client and server): the same bare server.
    cases.push(Case {
        name: BARE_H2C,
        client: reqwest::Client::builder()
            .http2_prior_knowledge()
            .build()
            .unwrap(),
        ..bare_case()
    });
    let results = measure(&cases).await;

    let median_of = |name: &str, handlers: usize| {
        results
            .iter()
            .find(|m| m.handlers == handlers.max(1) && m.name == name)
            .map(|m| m.median().as_secs_f64())
            .unwrap()
    };
    println!(
        "\nreqwest GET /user → 4-byte text, one request at a time on a pooled client; \
         per case {WARMUP} warm-up, then {SAMPLES} timed requests in {ROUNDS} interleaved rounds \
         (a case slower than {} ms a request: {SLOW_WARMUP} + {SLOW_SAMPLES}, marked capped); \
         tokio multi-thread runtime, 2 workers\n",
        SLOW.as_millis()
    );
    println!("| case | handlers | samples | median | p10 | p90 | median vs wiremock-rs |");
    println!("|---|---|---|---|---|---|---|");
    for m in &results {
        let version = match m.version {
            ::http::Version::HTTP_2 => "HTTP/2",
            ::http::Version::HTTP_11 => "HTTP/1.1",
            _ => "other",
        };
        println!(
            "| {} ({version}) | {} | {}{} | {} | {} | {} | {:.3}× |",
            m.name,
            if m.handlers == 0 {
                "–".to_owned()
            } else {
                m.handlers.to_string()
            },
            m.samples.len(),
            if m.samples.len() < SAMPLES {
                " (capped)"
            } else {
                ""
            },
            micros(m.median()),
            micros(m.percentile(0.1)),
            micros(m.percentile(0.9)),
            m.median().as_secs_f64() / median_of(WIREMOCK, m.handlers)
        );
    }

    // The floor is a bare hyper server on the same protocol: no mock server
    // answers a request in less than it takes (bare hyper itself measures
    // 0.9–1.0× wiremock-rs, so "≤ 0.7× wiremock-rs" asked for less).
    println!();
    // The references mock nothing: one row each, found by name.
    let reference = |name: &str| {
        results
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.median().as_secs_f64())
            .unwrap()
    };
    let (bare, bare_tls) = (reference(BARE), reference(BARE_TLS));
    for handlers in [1, 1 + DECOYS] {
        let https = median_of(MOCKLIB_HTTPS, handlers);
        let base = median_of(MOCKLIB_BASE, handlers);
        println!(
            "{}: mocklib base URL ≤ 1.05× a bare hyper server, {handlers} handlers \
             ({:.2} µs vs {:.2} µs: {:.3}×)",
            verdict(base <= 1.05 * bare),
            base * 1e6,
            bare * 1e6,
            base / bare
        );
        println!(
            "{}: mocklib HTTPS via proxy ≤ 1.10× a bare hyper server over TLS, {handlers} handlers \
             ({:.2} µs vs {:.2} µs: {:.3}×)",
            verdict(https <= 1.10 * bare_tls),
            https * 1e6,
            bare_tls * 1e6,
            https / bare_tls
        );
    }
}

fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// Keeps a mocklib server listening; closes it at the end of the run.
struct Listening(Server);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.close();
    }
}

fn bare_case() -> Case {
    let bare = Bare::start();
    Case {
        name: BARE,
        handlers: 0,
        client: reqwest::Client::new(),
        url: format!("{}/user", bare.url()),
        _keep: Box::new(bare),
    }
}

/// The bare server behind TLS: a certificate for `localhost` from a CA of
/// its own, which the client trusts; HTTP/1.1 like the proxy case.
fn bare_tls_case() -> Case {
    let (config, ca) = test_support::localhost_tls_config();
    let tls = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let bare = Bare::start_with(move |stream| {
        let tls = tls.clone();
        async move { tls.accept(stream).await.ok() }
    });
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .http1_only()
        .build()
        .unwrap();
    let port = bare.url().rsplit(':').next().unwrap().to_owned();
    Case {
        name: BARE_TLS,
        handlers: 0,
        client,
        url: format!("https://localhost:{port}/user"),
        _keep: Box::new(bare),
    }
}

fn mocklib_base_url_case(decoys: usize) -> Case {
    let server = user::mocklib_server();
    server.use_handlers((0..decoys).map(|i| {
        http::get(format!("/decoy/{i}").as_str(), |_| {
            HttpResponse::text("decoy")
        })
    }));
    assert_eq!(server.list_handlers().len(), decoys + 1);
    Case {
        name: MOCKLIB_BASE,
        handlers: decoys + 1,
        client: reqwest::Client::new(),
        url: format!("{}user", server.url()),
        _keep: Box::new(Listening(server)),
    }
}

fn mocklib_https_case(decoys: usize) -> Case {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::text(BODY)
    })]);
    server.listen();
    server.use_handlers((0..decoys).map(|i| {
        http::get(
            format!("https://api.example.com/decoy/{i}").as_str(),
            |_| HttpResponse::text("decoy"),
        )
    }));
    assert_eq!(server.list_handlers().len(), decoys + 1);
    Case {
        name: MOCKLIB_HTTPS,
        handlers: decoys + 1,
        client: server.reqwest_client(),
        url: "https://api.example.com/user".to_owned(),
        _keep: Box::new(Listening(server)),
    }
}

/// The HTTPS case with a client that speaks HTTP/2 in the tunnel, to tell
/// the cost of HTTP/2 from that of TLS.
fn mocklib_https_h2_case(decoys: usize) -> Case {
    let case = mocklib_https_case(decoys);
    let server = &case
        ._keep
        .downcast_ref::<Listening>()
        .expect("the HTTPS case keeps its server")
        .0;
    let client = server
        .reqwest_client_builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    Case {
        name: MOCKLIB_HTTPS_H2,
        client,
        ..case
    }
}

async fn wiremock_case(decoys: usize) -> Case {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(200).set_body_string(BODY))
        .mount(&server)
        .await;
    for i in 0..decoys {
        Mock::given(method("GET"))
            .and(path(format!("/decoy/{i}")))
            .respond_with(ResponseTemplate::new(200).set_body_string("decoy"))
            .mount(&server)
            .await;
    }
    Case {
        name: WIREMOCK,
        handlers: decoys + 1,
        client: reqwest::Client::new(),
        url: format!("{}/user", server.uri()),
        _keep: Box::new(server),
    }
}

async fn httpmock_case(decoys: usize) -> Case {
    let server = httpmock::MockServer::start_async().await;
    // httpmock keeps a mock until it is deleted; dropping the handle is fine.
    server
        .mock_async(|when, then| {
            when.method(httpmock::Method::GET).path("/user");
            then.status(200).body(BODY);
        })
        .await;
    for i in 0..decoys {
        server
            .mock_async(|when, then| {
                when.method(httpmock::Method::GET)
                    .path(format!("/decoy/{i}"));
                then.status(200).body("decoy");
            })
            .await;
    }
    Case {
        name: "httpmock, HTTP",
        handlers: decoys + 1,
        client: reqwest::Client::new(),
        url: server.url("/user"),
        _keep: Box::new(server),
    }
}

async fn mockito_case(decoys: usize) -> Case {
    let mut server = mockito::Server::new_async().await;
    let mut mocks = Vec::with_capacity(decoys + 1);
    mocks.push(
        server
            .mock("GET", "/user")
            .with_body(BODY)
            .create_async()
            .await,
    );
    for i in 0..decoys {
        mocks.push(
            server
                .mock("GET", format!("/decoy/{i}").as_str())
                .with_body("decoy")
                .create_async()
                .await,
        );
    }
    let url = format!("{}/user", server.url());
    Case {
        name: "mockito, HTTP",
        handlers: decoys + 1,
        client: reqwest::Client::new(),
        url,
        _keep: Box::new((server, mocks)),
    }
}
