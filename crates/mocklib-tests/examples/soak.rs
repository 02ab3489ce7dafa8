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
//! - `soak websockets N` (feature `ws`): N WebSocket connections to an echo
//!   handler, 500 at a time, each upgraded, sent half a frame and dropped;
//!   the runtime's alive tasks before and after (the listener runs on this
//!   runtime: `ListenOptions::on_current_runtime`).
//! - `soak upstream`: requests passed through to real servers that fail
//!   (refused, reset mid-body, garbage, a TLS certificate nobody trusts,
//!   slow), and the same through `bypass` in a resolver: what the client
//!   gets for each.
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

/// An upgrade request, then half a masked text frame announcing 100 bytes,
/// then the connection dropped: a client gone mid-message.
#[cfg(feature = "ws")]
async fn drop_mid_message(address: std::net::SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut tcp) = tokio::net::TcpStream::connect(address).await else {
        return false;
    };
    let upgrade = format!(
        "GET /echo HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    if tcp.write_all(upgrade.as_bytes()).await.is_err() {
        return false;
    }
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        if tcp.read(&mut byte).await.unwrap_or(0) == 0 {
            return false;
        }
        head.push(byte[0]);
    }
    let upgraded = head.starts_with(b"HTTP/1.1 101");
    // FIN + text, masked, 100 bytes announced; 10 sent.
    let mut frame = vec![0x81, 0x80 | 100, 1, 2, 3, 4];
    frame.extend_from_slice(&[b'x'; 10]);
    let _ = tcp.write_all(&frame).await;
    upgraded
}

#[cfg(feature = "ws")]
async fn websockets(count: usize) {
    use mocklib::ws;
    let metrics = tokio::runtime::Handle::current().metrics();
    let server = setup_server([ws::link("/echo").on_connection(|connection| async move {
        while let Some(message) = connection.client.recv().await {
            connection.client.send(message);
        }
    })]);
    server.listen_with(mocklib::ListenOptions::new().on_current_runtime());
    let address = server.url().socket_addrs(|| None).unwrap()[0];
    // One connection first: what a served listener keeps alive anyway.
    drop_mid_message(address).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = metrics.num_alive_tasks();
    println!("before_alive_tasks={before}");
    figures("before");
    let started = Instant::now();
    let mut upgraded = 0;
    for _ in 0..count.div_ceil(500) {
        let batch: Vec<_> = (0..500)
            .map(|_| tokio::spawn(drop_mid_message(address)))
            .collect();
        for connection in batch {
            upgraded += usize::from(connection.await.unwrap());
        }
    }
    println!("connections={upgraded}");
    println!("seconds={:.1}", started.elapsed().as_secs_f64());
    // The dropped connections' tasks end on their own: wait for them.
    let deadline = Instant::now() + Duration::from_secs(30);
    while metrics.num_alive_tasks() > before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!("after_alive_tasks={}", metrics.num_alive_tasks());
    figures("after");
    server.close();
}

/// A real server on loopback that fails as `how` says, for every
/// connection: its URL.
async fn failing_upstream(how: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    if how == "refused" {
        drop(listener);
        return format!("http://{address}/");
    }
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0; 4096];
                let _ = tcp.read(&mut request).await;
                match how {
                    "reset" => {
                        let _ = tcp
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nten bytes.")
                            .await;
                        // Linger 0: the close is a reset, mid-body (and a
                        // zero linger never blocks, which tokio warns of).
                        let _ = tcp.set_zero_linger();
                    }
                    "garbage" => {
                        let _ = tcp.write_all(b"NOT HTTP AT ALL\r\n\r\n").await;
                    }
                    "slow" => {
                        tokio::time::sleep(Duration::from_secs(2)).await;
                        let _ = tcp
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nslow")
                            .await;
                    }
                    // A TLS handshake to a server that answers plain text: as
                    // a certificate nobody trusts, it fails verification.
                    _ => {
                        let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
                    }
                }
            });
        }
    });
    match how {
        "tls" => format!("https://{address}/"),
        _ => format!("http://{address}/"),
    }
}

async fn upstream() {
    // Requests marked `x-bypass` are performed by the resolver with
    // `bypass`; the others fall through to the `bypass` strategy
    // (passthrough).
    let server = setup_server([http::all("*", |args| async move {
        args.request.header("x-bypass")?;
        Some(match mocklib::bypass(&args.request).await {
            Ok(response) => response,
            Err(error) => HttpResponse::text(format!("bypass error: {error}")).status(599),
        })
    })]);
    server.listen_with(
        mocklib::ListenOptions::new().on_unhandled_request(mocklib::UnhandledRequest::Bypass),
    );
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(server.proxy_url().as_str()).unwrap())
        .add_root_certificate(
            reqwest::Certificate::from_pem(server.ca_certificate_pem().as_bytes()).unwrap(),
        )
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    println!(
        "| upstream | passed through: the client gets | through `bypass`: the resolver gets |"
    );
    println!("|---|---|---|");
    for how in ["refused", "reset", "garbage", "tls", "slow"] {
        let url = failing_upstream(how).await;
        let describe = |result: Result<reqwest::Response, reqwest::Error>| async move {
            match result {
                Ok(response) => {
                    let status = response.status();
                    match response.text().await {
                        Ok(text) => format!("{status}: {}", text.trim().replace('\n', " ")),
                        Err(error) => format!("{status}, then the body fails: {error}"),
                    }
                }
                Err(error) => format!("error: {error}"),
            }
        };
        let passed = describe(client.get(&url).send().await).await;
        let bypassed = describe(client.get(&url).header("x-bypass", "1").send().await).await;
        let cut = |text: String| text.chars().take(160).collect::<String>();
        println!("| {how} | {} | {} |", cut(passed), cut(bypassed));
    }
    server.close();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |default: usize| args.get(1).and_then(|n| n.parse().ok()).unwrap_or(default);
    match args.first().map(String::as_str) {
        Some("proxy") => proxy(count(1_000_000)).await,
        Some("boundaries") => boundaries(count(1_000)).await,
        #[cfg(feature = "ws")]
        Some("websockets") => websockets(count(10_000)).await,
        Some("upstream") => upstream().await,
        _ => {
            eprintln!(
                "usage: soak proxy [N] | soak boundaries [N] | soak websockets [N] | soak upstream"
            );
            std::process::exit(2);
        }
    }
}
