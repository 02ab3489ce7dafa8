//! Chaos (issue 40): faults on a share of requests and latency, seeded.
//! Through the listener with reqwest over real sockets (a run replays
//! exactly with its seed; the server keeps serving after each fault), and
//! through the tower service for the rate over 10,000 requests.
//!
//! No time is asserted but lower bounds of a latency (a behaviour: the
//! answer cannot come before it).

use crate::common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use mocklib::chaos::{Chaos, Latency};
use mocklib::node::setup_server;
use mocklib::{Fault, HttpResponse, http};
use tower::ServiceExt;

/// Which of `count` requests to the listener failed, in order, under a
/// server whose one handler has `chaos`.
async fn failures(chaos: &Chaos, count: usize) -> Vec<bool> {
    let server = setup_server([
        http::get("*/user", |_| HttpResponse::text("John")).chaos(chaos),
        http::get("*/health", |_| HttpResponse::text("ok")),
    ]);
    server.listen_with(common::error_on_unhandled());
    let url = server.url().join("user").unwrap();
    let client = reqwest::Client::new();
    let mut failed = Vec::with_capacity(count);
    for _ in 0..count {
        failed.push(match client.get(url.clone()).send().await {
            Ok(response) => {
                assert_eq!(response.text().await.unwrap(), "John");
                false
            }
            Err(_) => true,
        });
    }
    // Every fault left the server serving.
    let health = client
        .get(server.url().join("health").unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    failed
}

#[tokio::test]
async fn a_chaos_seed_replays_the_same_failures_over_real_sockets() {
    let chaos = |seed| {
        Chaos::new()
            .fault_rate(0.25, Fault::ConnectionReset)
            .with_seed(seed)
    };
    let first = failures(&chaos(11), 200).await;
    let replay = failures(&chaos(11), 200).await;
    assert_eq!(first, replay, "the same seed, the same requests failed");
    let failed = first.iter().filter(|failed| **failed).count();
    assert!(
        (25..=75).contains(&failed),
        "{failed} of 200 at a rate of 0.25"
    );
    assert_ne!(
        first,
        failures(&chaos(12), 200).await,
        "another seed, others"
    );
}

#[tokio::test]
async fn the_fault_rate_holds_over_ten_thousand_requests_of_a_whole_server() {
    // `around`: one chaos for every handler, one sequence.
    let chaos = Chaos::new()
        .fault_rate(0.1, Fault::EmptyResponse)
        .with_seed(2026);
    let server = setup_server(chaos.around([
        http::get("*/a", |_| HttpResponse::text("a")),
        http::get("*/b", |_| HttpResponse::text("b")),
    ]));
    server.listen_with(common::error_on_unhandled());
    let service = server.service();
    let mut faults = 0;
    for n in 0..10_000 {
        let path = if n % 2 == 0 { "a" } else { "b" };
        let request = ::http::Request::get(format!("https://api.example.com/{path}"))
            .body(Full::new(Bytes::new()))
            .unwrap();
        match service.clone().oneshot(request).await {
            Ok(response) => assert_eq!(response.status(), 200),
            Err(error) => {
                let network = error
                    .downcast_ref::<mocklib::front_door::NetworkError>()
                    .expect("a fault is a network error");
                assert_eq!(network.fault(), Some(Fault::EmptyResponse));
                faults += 1;
            }
        }
    }
    // Three standard deviations of a binomial count: 1,000 ± 90.
    assert!((910..=1090).contains(&faults), "{faults} faults in 10,000");
}

#[tokio::test]
async fn latency_comes_before_the_answer_and_leaves_the_handler_as_it_was() {
    let chaos = Chaos::new()
        .latency(Latency::uniform(
            Duration::from_millis(30),
            Duration::from_millis(40),
        ))
        .with_seed(3);
    let handler = http::get("*/slow", |_| HttpResponse::text("late")).times(3);
    let header = handler.header().to_owned();
    let server = setup_server([handler.chaos(&chaos)]);
    server.listen_with(common::error_on_unhandled());
    let url = server.url().join("slow").unwrap();
    let client = reqwest::Client::new();
    for _ in 0..3 {
        let sent = Instant::now();
        let response = client.get(url.clone()).send().await.unwrap();
        assert_eq!(response.text().await.unwrap(), "late");
        assert!(
            sent.elapsed() >= Duration::from_millis(30),
            "{:?}",
            sent.elapsed()
        );
    }
    // Its expected count and header are the handler's own.
    server.verify().unwrap();
    assert_eq!(server.list_handlers()[0].header(), header);
}
