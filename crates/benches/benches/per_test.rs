//! What a test that starts its own mock server pays for it, beside the peers
//! in the same run: `cargo bench -p mocklib-benches --bench per_test`.
//!
//! One iteration is what a test does: create the server with one mock
//! (`GET /user` → the 4-byte text `John`), start it, make one request, stop
//! it. For mocklib: `setup_server` + `listen()` + one request + `close()`,
//! once through the in-process middleware and once in base URL mode
//! (`server.url()`); for wiremock-rs: `MockServer::start()` + mount + one
//! request + drop; httpmock and mockito likewise. The floor (issue 42, item
//! 2) is what a test pays without a mock library: a bare hyper server it
//! starts by hand on its own runtime (bind `127.0.0.1:0`, accept and serve,
//! one request, drop), and beside it, for reading, one request to a bare
//! server already running (no server started). Every case sends its
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
const BARE: &str = "floor: a bare hyper server started per test";
const KEPT: &str = "reference: one request to a bare hyper server already running";
const KEPT_OWN: &str =
    "reference: one request to a bare hyper server already running on a runtime of its own";
const MOCKLIB_KEPT: &str =
    "reference: one request to a mocklib server already listening (base URL)";
const MOCKLIB_LIFE: &str = "reference: a mocklib server created, listening and closed, no request";
const CASES: [&str; 10] = [
    MIDDLEWARE,
    BASE_URL,
    WIREMOCK,
    "httpmock",
    "mockito",
    BARE,
    KEPT,
    KEPT_OWN,
    MOCKLIB_KEPT,
    MOCKLIB_LIFE,
];

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    common::run(run());
}

async fn run() {
    let client = reqwest::Client::new();
    let running = bare_server().await;
    // As mocklib's listener runs: on two threads of its own.
    let own = mocklib_counted::user::Bare::start();
    let own_url = format!("{}/user", own.url());
    let listening = setup_server([http::get("/user", |_| HttpResponse::text(BODY))]);
    listening.listen();
    let listening_url = format!("{}user", listening.url());
    let iteration = |name, client| iteration(name, client, [&running.1, &own_url, &listening_url]);
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
    running.0.abort();
    listening.close();
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
    println!("| case | median | p10 | p90 | median vs wiremock-rs | median vs the floor |");
    println!("|---|---|---|---|---|---|");
    for (name, samples) in CASES.iter().zip(samples) {
        println!(
            "| {name} | {} | {} | {} | {:.2}× | {:.2}× |",
            micros(percentile(samples, 0.5)),
            micros(percentile(samples, 0.1)),
            micros(percentile(samples, 0.9)),
            percentile(samples, 0.5).as_secs_f64() / median(WIREMOCK),
            percentile(samples, 0.5).as_secs_f64() / median(BARE)
        );
    }
    println!();
    // `name`'s median ≤ `limit` × `floor`'s, which `label` names.
    let verdict = |name: &str, limit: f64, floor: &str, label: &str| {
        let (ours, theirs) = (median(name), median(floor));
        println!(
            "{}: {name} per test ≤ {limit}× {label} ({} vs {}: {:.2}×)",
            if ours <= limit * theirs {
                "PASS"
            } else {
                "FAIL"
            },
            micros(Duration::from_secs_f64(ours)),
            micros(Duration::from_secs_f64(theirs)),
            ours / theirs
        );
    };
    verdict(BASE_URL, 1.1, BARE, "the bare hyper floor");
    for name in [MIDDLEWARE, BASE_URL] {
        verdict(name, 1.5, WIREMOCK, "wiremock-rs");
    }
}

/// `running`: the URLs of `GET /user` on the servers that stay up for the
/// whole run: bare on the client's runtime, bare on its own, mocklib.
async fn iteration(name: &str, client: &reqwest::Client, running: [&str; 3]) {
    let body = match name {
        MIDDLEWARE => mocklib(client, true).await,
        BASE_URL => mocklib(client, false).await,
        WIREMOCK => wiremock(client).await,
        "httpmock" => httpmock(client).await,
        "mockito" => mockito(client).await,
        BARE => {
            let (server, url) = bare_server().await;
            let body = text(client.get(url).send().await.unwrap()).await;
            // Its connections end with it (the client's kept one too).
            server.abort();
            body
        }
        KEPT => text(client.get(running[0]).send().await.unwrap()).await,
        KEPT_OWN => text(client.get(running[1]).send().await.unwrap()).await,
        MOCKLIB_KEPT => text(client.get(running[2]).send().await.unwrap()).await,
        MOCKLIB_LIFE => {
            let server = setup_server([http::get("/user", |_| HttpResponse::text(BODY))]);
            server.listen();
            server.close();
            BODY.to_owned()
        }
        _ => unreachable!("a case without an iteration: {name}"),
    };
    assert_eq!(body, BODY, "{name}");
}

/// A bare hyper server as a test would start one by hand on its runtime:
/// a listener on `127.0.0.1:0` accepting connections, each served by
/// hyper (`server::conn::auto`, as mocklib's listener has it) with the
/// same answer as the mocks'. Aborting the task stops it and its
/// connections. The task and `GET /user`'s URL.
async fn bare_server() -> (tokio::task::JoinHandle<()>, String) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/user", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let service = hyper::service::service_fn(|_request| async {
                let answer = ::http::Response::builder()
                    .header(::http::header::CONTENT_TYPE, "text/plain")
                    .body(http_body_util::Full::new(bytes::Bytes::from_static(
                        BODY.as_bytes(),
                    )))
                    .unwrap();
                Ok::<_, std::convert::Infallible>(answer)
            });
            connections.spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (server, url)
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
