//! Soak runs for docs/RELIABILITY.md (issue 27), run by `scripts/soak`:
//!
//! - `soak proxy N`: N requests to `https://api.example.com/user` through
//!   the listener as an HTTPS proxy (`CONNECT`, TLS with the server's CA),
//!   32 at a time from a reqwest client in the same process; the process's
//!   resident memory and open file descriptors after a warm-up, after the
//!   run, and after two idle seconds.
//! - `soak boundaries N`: N boundaries at once, each overriding `/who` with
//!   its own answer and asking its own port 20 times; any answer of
//!   another boundary is cross-talk.
//!
//! Prints one `KEY=VALUE` line per figure.

use std::time::{Duration, Instant};

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

fn figures(when: &str) {
    println!("{when}_rss_kib={}", resident_kib());
    println!("{when}_fds={}", open_fds());
}

async fn proxy(total: usize) {
    let server = setup_server([http::get("https://api.example.com/user", |_| {
        HttpResponse::json(&serde_json::json!({ "name": "John" }))
    })]);
    server.listen();
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(server.proxy_url().as_str()).unwrap())
        .add_root_certificate(
            reqwest::Certificate::from_pem(server.ca_certificate_pem().as_bytes()).unwrap(),
        )
        .build()
        .unwrap();
    let run = |count: usize| {
        let client = client.clone();
        async move {
            let per_worker = count / 32;
            let workers: Vec<_> = (0..32)
                .map(|_| {
                    let client = client.clone();
                    tokio::spawn(async move {
                        for _ in 0..per_worker {
                            let response = client
                                .get("https://api.example.com/user")
                                .send()
                                .await
                                .unwrap();
                            assert_eq!(response.status(), 200);
                            response.bytes().await.unwrap();
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.await.unwrap();
            }
            per_worker * 32
        }
    };
    run(10_000).await;
    figures("warm");
    let started = Instant::now();
    let done = run(total).await;
    let elapsed = started.elapsed();
    figures("after");
    println!("requests={done}");
    println!(
        "requests_per_second={:.0}",
        done as f64 / elapsed.as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    figures("idle");
    server.close();
}

async fn boundaries(count: usize) {
    let server = setup_server([http::get("/who", |_| HttpResponse::text("root"))]);
    server.listen();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let started = Instant::now();
    let tasks: Vec<_> = (0..count)
        .map(|id| {
            let (server, client) = (server.clone(), client.clone());
            let run = server.boundary(move |server: Server| async move {
                let me = format!("boundary {id}");
                server.use_handlers([http::get("/who", {
                    let me = me.clone();
                    move |_| HttpResponse::text(me.clone())
                })]);
                let url = server.url().join("/who").unwrap();
                let mut crosstalk = 0;
                for _ in 0..20 {
                    let answer = client
                        .get(url.clone())
                        .send()
                        .await
                        .unwrap()
                        .text()
                        .await
                        .unwrap();
                    if answer != me {
                        crosstalk += 1;
                    }
                }
                crosstalk
            });
            tokio::spawn(run(server))
        })
        .collect();
    let mut crosstalk = 0;
    for task in tasks {
        crosstalk += task.await.unwrap();
    }
    println!("boundaries={count}");
    println!("requests={}", count * 20);
    println!("crosstalk={crosstalk}");
    println!("seconds={:.1}", started.elapsed().as_secs_f64());
    server.close();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |default: usize| args.get(1).and_then(|n| n.parse().ok()).unwrap_or(default);
    match args.first().map(String::as_str) {
        Some("proxy") => proxy(count(1_000_000)).await,
        Some("boundaries") => boundaries(count(1_000)).await,
        _ => {
            eprintln!("usage: soak proxy [N] | soak boundaries [N]");
            std::process::exit(2);
        }
    }
}
