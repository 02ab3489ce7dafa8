//! What a test that starts its own mock server pays for it, beside the peers
//! in the same run: `cargo bench -p mocklib-benches --bench per_test`.
//!
//! One iteration is what a test does: create the server with one mock
//! (`GET /user` → the 4-byte text `John`), start it, make one request, stop
//! it. For mocklib: `setup_server` + `listen()` + one request + `close()`,
//! once through the in-process middleware and once in base URL mode
//! (`server.url()`); for wiremock-rs: `MockServer::start()` + mount + one
//! request + drop; httpmock and mockito likewise. Every case sends its
//! request with one shared `reqwest::Client` built up front (building one
//! loads the system roots: that would measure the client, not the server),
//! so each iteration pays for a new connection where the server has a new
//! port, as a test does.
//!
//! Peers that keep a pool of servers (wiremock-rs, httpmock, mockito) reuse
//! them across iterations, as they do across the tests of one binary;
//! mocklib's listeners share one runtime per process in the same spirit.
//! After `WARMUP` untimed iterations per case, the cases take turns in
//! `ROUNDS` slices of `SAMPLES / ROUNDS` iterations, so that load from
//! elsewhere on the machine falls on all of them alike.

mod common;

use common::{micros, percentile};

use std::time::{Duration, Instant};

use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};

const WARMUP: usize = 50;
const SAMPLES: usize = 1_000;
const ROUNDS: usize = 20;
const BODY: &str = "John";

const MIDDLEWARE: &str = "mocklib, in-process middleware";
const BASE_URL: &str = "mocklib, base URL";
const WIREMOCK: &str = "wiremock-rs";
const CASES: [&str; 5] = [MIDDLEWARE, BASE_URL, WIREMOCK, "httpmock", "mockito"];

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    common::run(run());
}

async fn run() {
    let client = reqwest::Client::new();
    for name in CASES {
        for _ in 0..WARMUP {
            iteration(name, &client).await;
        }
    }
    let mut samples: Vec<Vec<Duration>> = CASES.iter().map(|_| Vec::new()).collect();
    for _ in 0..ROUNDS {
        for (name, samples) in CASES.iter().zip(&mut samples) {
            for _ in 0..SAMPLES / ROUNDS {
                let started = Instant::now();
                iteration(name, &client).await;
                samples.push(started.elapsed());
            }
        }
    }
    for samples in &mut samples {
        samples.sort_unstable();
    }
    report(&samples);
}

fn report(samples: &[Vec<Duration>]) {
    let median = |name: &str| {
        let index = CASES.iter().position(|case| *case == name).unwrap();
        percentile(&samples[index], 0.5).as_secs_f64()
    };
    println!(
        "\nper iteration: create a server with one mock, start it, one reqwest GET, stop it; \
         {WARMUP} warm-up then {SAMPLES} timed iterations per case in {ROUNDS} interleaved rounds; \
         one shared reqwest::Client; tokio multi-thread runtime, 2 workers\n"
    );
    println!("| case | median | p10 | p90 | median vs wiremock-rs |");
    println!("|---|---|---|---|---|");
    for (name, samples) in CASES.iter().zip(samples) {
        println!(
            "| {name} | {} | {} | {} | {:.2}× |",
            micros(percentile(samples, 0.5)),
            micros(percentile(samples, 0.1)),
            micros(percentile(samples, 0.9)),
            percentile(samples, 0.5).as_secs_f64() / median(WIREMOCK)
        );
    }
    println!();
    let wiremock = median(WIREMOCK);
    for name in [MIDDLEWARE, BASE_URL] {
        let ours = median(name);
        println!(
            "{}: {name} per test ≤ 1.5× wiremock-rs ({} vs {}: {:.2}×)",
            if ours <= 1.5 * wiremock {
                "PASS"
            } else {
                "FAIL"
            },
            micros(Duration::from_secs_f64(ours)),
            micros(Duration::from_secs_f64(wiremock)),
            ours / wiremock
        );
    }
}

async fn iteration(name: &str, client: &reqwest::Client) {
    let body = match name {
        MIDDLEWARE => mocklib(client, true).await,
        BASE_URL => mocklib(client, false).await,
        WIREMOCK => wiremock(client).await,
        "httpmock" => httpmock(client).await,
        "mockito" => mockito(client).await,
        _ => unreachable!("a case without an iteration: {name}"),
    };
    assert_eq!(body, BODY, "{name}");
}

async fn text(response: reqwest::Response) -> String {
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

/// One test's life through mocklib: through the middleware, or in base URL
/// mode (a request to `server.url()`).
async fn mocklib(client: &reqwest::Client, through_middleware: bool) -> String {
    let predicate = if through_middleware {
        "https://api.example.com/user"
    } else {
        "/user"
    };
    let server = setup_server([http::get(predicate, |_| HttpResponse::text(BODY))]);
    server.listen();
    let response = if through_middleware {
        reqwest_middleware::ClientBuilder::new(client.clone())
            .with(server.middleware())
            .build()
            .get("https://api.example.com/user")
            .send()
            .await
            .unwrap()
    } else {
        client
            .get(format!("{}user", server.url()))
            .send()
            .await
            .unwrap()
    };
    let body = text(response).await;
    server.close();
    body
}

async fn wiremock(client: &reqwest::Client) -> String {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(200).set_body_string(BODY))
        .mount(&server)
        .await;
    let response = client
        .get(format!("{}/user", server.uri()))
        .send()
        .await
        .unwrap();
    text(response).await
}

async fn httpmock(client: &reqwest::Client) -> String {
    let server = httpmock::MockServer::start_async().await;
    server
        .mock_async(|when, then| {
            when.method(httpmock::Method::GET).path("/user");
            then.status(200).body(BODY);
        })
        .await;
    let response = client.get(server.url("/user")).send().await.unwrap();
    text(response).await
}

async fn mockito(client: &reqwest::Client) -> String {
    let mut server = mockito::Server::new_async().await;
    let _mock = server
        .mock("GET", "/user")
        .with_body(BODY)
        .create_async()
        .await;
    let response = client
        .get(format!("{}/user", server.url()))
        .send()
        .await
        .unwrap();
    text(response).await
}
