//! The loopback listener with real clients that no one here wrote: reqwest
//! (base URL, proxy, HTTPS through CONNECT), ureq, curl and Python as child
//! processes, and raw sockets.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, ListenOptions, UnhandledRequest, bypass, http, passthrough};
use serde_json::{Value, json};

fn user_api() -> Server {
    setup_server([
        http::get("https://api.example.com/user", |args| {
            if args.cookies.get("session").is_none() {
                return HttpResponse::empty().status(401);
            }
            HttpResponse::json(&json!({ "name": "John" }))
        }),
        http::get("/posts", |_| HttpResponse::json(&json!([{ "id": 1 }]))),
        http::get("http://plain.example.com/hello", |_| {
            HttpResponse::text("plain hello")
        }),
        http::get("https://api.example.com/offline", |_| HttpResponse::error()),
        http::get("/teapot", |_| {
            HttpResponse::text("short and stout")
                .status(418)
                .status_text("I'm a teapot!")
        }),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_url_mode_answers_relative_predicates_at_the_listener_origin() {
    let server = user_api();
    server.listen();
    let url = server.url().join("/posts").unwrap();
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!([{ "id": 1 }])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_from_the_reqwest_builder_keeps_its_own_settings() {
    let server = user_api();
    server.listen();
    let client = server
        .reqwest_client_builder()
        .http1_only()
        .build()
        .unwrap();
    let response = client
        .get("https://api.example.com/user")
        .header("cookie", "session=abc")
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "name": "John" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reqwest_client_reaches_https_handlers_over_http1_and_on_request_http2() {
    let server = user_api();
    server.listen();
    let default = server
        .reqwest_client()
        .get("https://api.example.com/user")
        .send()
        .await
        .unwrap();
    assert_eq!(default.version(), reqwest::Version::HTTP_11);
    let client = server
        .reqwest_client_builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let anonymous = client
        .get("https://api.example.com/user")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(anonymous.version(), reqwest::Version::HTTP_2);
    let signed_in = client
        .get("https://api.example.com/user")
        .header("cookie", "session=abc")
        .send()
        .await
        .unwrap();
    assert_eq!(
        signed_in.json::<Value>().await.unwrap(),
        json!({ "name": "John" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_request_goes_through_the_forward_proxy() {
    let server = user_api();
    server.listen();
    let response = server
        .reqwest_client()
        .get("http://plain.example.com/hello")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "plain hello");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_error_is_a_transport_error_at_the_client() {
    let server = user_api();
    server.listen();
    let error = server
        .reqwest_client()
        .get("https://api.example.com/offline")
        .send()
        .await
        .unwrap_err();
    assert!(error.status().is_none(), "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_error_strategy_fails_the_request_at_the_client() {
    let server = user_api();
    server.listen_with(common::error_on_unhandled());
    let error = server
        .reqwest_client()
        .get("https://api.example.com/unknown")
        .send()
        .await
        .unwrap_err();
    assert!(error.status().is_none(), "{error:?}");
    // The listener keeps serving.
    let ok = server
        .reqwest_client()
        .get("http://plain.example.com/hello")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_resolver_is_a_500_and_the_listener_keeps_serving() {
    let server = setup_server([
        http::get("https://api.example.com/boom", |_| -> HttpResponse {
            panic!("resolver bug")
        }),
        http::get("https://api.example.com/fine", |_| {
            HttpResponse::text("fine")
        }),
    ]);
    server.listen();
    let client = server.reqwest_client();
    let response = client
        .get("https://api.example.com/boom")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.json::<Value>().await.unwrap()["name"], "Panic");
    let response = client
        .get("https://api.example.com/fine")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "fine");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_and_unhandled_requests_reach_a_real_upstream() {
    let upstream = test_support::spawn_upstream(
        axum::Router::new()
            .route("/real", axum::routing::get(|| async { "real answer" }))
            .route(
                "/echo",
                axum::routing::post(|body: String| async move { format!("echo {body}") }),
            ),
    )
    .await;
    let server = setup_server([http::get(format!("http://{upstream}/real"), |_| {
        passthrough()
    })]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let client = server.reqwest_client();
    let real = client
        .get(format!("http://{upstream}/real"))
        .send()
        .await
        .unwrap();
    assert_eq!(real.text().await.unwrap(), "real answer");
    let echoed = client
        .post(format!("http://{upstream}/echo"))
        .body("payload")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.text().await.unwrap(), "echo payload");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bypass_fetches_the_real_response_for_the_resolver_to_patch() {
    let upstream = test_support::spawn_upstream(axum::Router::new().route(
        "/user",
        axum::routing::get(|| async { axum::Json(json!({ "name": "Real", "plan": "free" })) }),
    ))
    .await;
    let server = setup_server([http::get(
        format!("http://{upstream}/user"),
        |args| async move {
            let real = bypass(&args.request).await?;
            let mut user: Value = real.json_body()?;
            user["plan"] = "pro".into();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(HttpResponse::json(&user))
        },
    )]);
    server.listen();
    let user: Value = server
        .reqwest_client()
        .get(format!("http://{upstream}/user"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(user, json!({ "name": "Real", "plan": "pro" }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_to_the_listener_itself_is_never_looped_back() {
    let server = setup_server([]);
    server.listen_with(ListenOptions::new().on_unhandled_request(UnhandledRequest::Bypass));
    let response = reqwest::get(server.url().join("/nothing-here").unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("addressed to this mocklib listener")
    );
}

#[test]
fn a_custom_status_text_is_the_reason_phrase_on_the_wire() {
    let server = user_api();
    server.listen();
    let address = server.url().socket_addrs(|| None).unwrap()[0];
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /teapot HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    assert!(
        reply.starts_with("HTTP/1.1 418 I'm a teapot!\r\n"),
        "{reply}"
    );
    assert!(reply.ends_with("short and stout"), "{reply}");
}

#[test]
fn a_server_in_a_static_outlives_the_runtimes_that_used_it() {
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER.get_or_init(|| {
        let server = user_api();
        server.listen();
        server
    });
    for _ in 0..3 {
        // Each "test" runs on its own runtime, which ends after it.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let body = runtime.block_on(async {
            server
                .reqwest_client()
                .get("http://plain.example.com/hello")
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        });
        assert_eq!(body, "plain hello");
        drop(runtime);
    }
}

#[test]
fn ureq_reaches_the_handlers_through_the_proxy_over_https_and_http() {
    let server = user_api();
    server.listen();
    let certificate = ureq::tls::Certificate::from_pem(server.ca_certificate_pem().as_bytes())
        .unwrap()
        .to_owned();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .proxy(Some(ureq::Proxy::new(server.proxy_url().as_str()).unwrap()))
        .tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::new_with_certs(&[certificate]))
                .build(),
        )
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .get("https://api.example.com/user")
        .header("cookie", "session=1")
        .call()
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.body_mut().read_to_string().unwrap(),
        r#"{"name":"John"}"#
    );
    // ureq tunnels plain http through CONNECT too: the listener sniffs it.
    let mut response = agent.get("http://plain.example.com/hello").call().unwrap();
    assert_eq!(response.body_mut().read_to_string().unwrap(), "plain hello");
}

#[test]
fn curl_as_a_child_process_reaches_the_handlers_with_the_server_env() {
    let server = user_api();
    server.listen();
    let output = Command::new("curl")
        .args([
            "--silent",
            "--show-error",
            "--http2",
            "--write-out",
            "\n%{http_code} %{http_version}",
        ])
        .args(["--cookie", "session=abc", "https://api.example.com/user"])
        .env_clear()
        .envs(server.env())
        .output()
        .expect("curl runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "curl failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout, "{\"name\":\"John\"}\n200 2");
}

#[test]
fn python_urllib_as_a_child_process_reaches_the_handlers() {
    let server = user_api();
    server.listen();
    let script = r#"
import urllib.request
request = urllib.request.Request("https://api.example.com/user", headers={"Cookie": "session=1"})
with urllib.request.urlopen(request) as response:
    print(response.status, response.read().decode())
"#;
    let printed = test_support::stdout_of(
        Command::new("python3")
            .args(["-c", script])
            .envs(server.env()),
    );
    assert_eq!(printed.trim(), r#"200 {"name":"John"}"#);
}

#[test]
fn close_removes_the_ca_bundle_and_it_never_holds_a_private_key() {
    let server = user_api();
    server.listen();
    let env = server.env();
    let bundle =
        std::path::PathBuf::from(&env.iter().find(|(k, _)| k == "SSL_CERT_FILE").unwrap().1);
    let contents = std::fs::read_to_string(&bundle).unwrap();
    assert!(contents.contains(server.ca_certificate_pem().trim()));
    assert!(!contents.contains("PRIVATE KEY"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(bundle.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the bundle directory is private");
    }
    server.close();
    assert!(!bundle.exists());
    assert!(!bundle.parent().unwrap().exists());
}

#[test]
fn the_listener_binds_loopback_only() {
    let server = user_api();
    server.listen();
    let address = server.url().socket_addrs(|| None).unwrap()[0];
    assert!(address.ip().is_loopback(), "{address}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_see_requests_that_came_through_the_listener() {
    let server = user_api();
    server.listen();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&seen);
    server
        .events()
        .on(mocklib::events::EventKind::RequestStart, move |event| {
            sink.lock().unwrap().push(event.request.url().to_string());
        });
    server
        .reqwest_client()
        .get("https://api.example.com/user")
        .send()
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), ["https://api.example.com/user"]);
}

/// A boundary-wrapped test body: adds its own override, then calls `make`
/// to get the client and the URL to request, inside the boundary.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_boundaries_through_the_proxy_each_see_their_own_override() {
    const BOUNDARIES: usize = 128;
    let server = setup_server([http::get("https://api.example.com/whoami", |_| {
        HttpResponse::text("root")
    })]);
    server.listen_with(common::error_on_unhandled());
    let barrier = Arc::new(tokio::sync::Barrier::new(BOUNDARIES));
    let run = server.boundary({
        let server = server.clone();
        move |index: usize, barrier: Arc<tokio::sync::Barrier>| async move {
            server.use_handlers([http::get("https://api.example.com/whoami", move |_| {
                HttpResponse::text(index.to_string())
            })]);
            // Obtained inside the boundary: its proxy credential names it.
            let client = server.reqwest_client();
            // Every boundary holds its override at the same time.
            barrier.wait().await;
            let mut answers = Vec::new();
            for _ in 0..3 {
                let text = client
                    .get("https://api.example.com/whoami")
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                answers.push(text);
                tokio::task::yield_now().await;
            }
            (index, answers)
        }
    });
    let tasks: Vec<_> = (0..BOUNDARIES)
        .map(|i| tokio::spawn(run(i, Arc::clone(&barrier))))
        .collect();
    for task in tasks {
        let (index, answers) = task.await.unwrap();
        assert!(
            answers.iter().all(|a| *a == index.to_string()),
            "boundary {index} saw {answers:?}"
        );
    }
    let root = server
        .reqwest_client()
        .get("https://api.example.com/whoami")
        .send()
        .await
        .unwrap();
    assert_eq!(root.text().await.unwrap(), "root");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_obtained_inside_a_boundary_is_a_port_of_that_boundary() {
    let server = setup_server([http::get("/who", |_| HttpResponse::text("root"))]);
    server.listen();
    let root_url = server.url();
    let (boundary_url, inside) = server
        .in_boundary({
            let server = server.clone();
            async move {
                server.use_handlers([http::get("/who", |_| HttpResponse::text("boundary"))]);
                let url = server.url();
                assert_eq!(url, server.url(), "one port per boundary");
                let inside = reqwest::get(url.join("/who").unwrap())
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                (url, inside)
            }
        })
        .await;
    assert_eq!(inside, "boundary");
    assert_ne!(boundary_url, root_url);
    let outside = reqwest::get(root_url.join("/who").unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(outside, "root");
}

#[test]
fn env_obtained_inside_a_boundary_routes_a_child_process_to_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = user_api();
    server.listen();
    let output = runtime.block_on(server.in_boundary({
        let server = server.clone();
        async move {
            server.use_handlers([http::get("https://api.example.com/user", |_| {
                HttpResponse::text("from the boundary")
            })]);
            Command::new("curl")
                .args(["--silent", "--show-error", "https://api.example.com/user"])
                .env_clear()
                .envs(server.env())
                .output()
                .expect("curl runs")
        }
    }));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "from the boundary");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_of_an_ended_boundary_is_refused_with_an_explanation() {
    let server = user_api();
    server.listen();
    let stale_proxy = server.in_boundary({
        let server = server.clone();
        async move { server.proxy_url() }
    });
    let stale_proxy = stale_proxy.await;
    assert_eq!(stale_proxy.username(), "mocklib");
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::http(stale_proxy.as_str()).unwrap())
        .build()
        .unwrap();
    let response = client
        .get("http://plain.example.com/hello")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 407);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("boundary that has ended")
    );
}

/// A boundary held by a value (`open_boundary`), as a server for other
/// processes holds one per client: its port and proxy credential lead
/// requests into it for as long as it is held, `at_root` reaches the
/// server's own list from inside it, and dropping it ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_boundary_lasts_until_dropped_and_at_root_reaches_the_server_list() {
    let server = user_api();
    server.listen();
    let worker = server.open_boundary();
    let (own, proxy) = worker.in_scope(|| {
        server.use_handlers([http::get("http://plain.example.com/hello", |_| {
            HttpResponse::text("from the worker")
        })]);
        server.at_root(|| {
            server.use_handlers([http::get("http://plain.example.com/root", |_| {
                HttpResponse::text("from the root")
            })]);
        });
        (server.url(), server.proxy_url())
    });
    let through = |proxy: &url::Url| {
        reqwest::Client::builder()
            .proxy(reqwest::Proxy::http(proxy.as_str()).unwrap())
            .build()
            .unwrap()
    };
    let text = |response: reqwest::Response| async move {
        (response.status().as_u16(), response.text().await.unwrap())
    };
    let client = through(&proxy);
    // Sent through the server's plain proxy to the boundary's own port,
    // as a client with the proxy variables set sends everything: resolved
    // in the boundary, as if sent there directly, in absolute form and
    // through a `CONNECT` tunnel alike.
    worker.in_scope(|| server.use_handlers([http::get("/mine", |_| HttpResponse::text("mine"))]));
    let mine = own.join("mine").unwrap();
    let direct = through(&server.proxy_url())
        .get(mine.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(text(direct).await, (200, "mine".to_owned()));
    let tunnelled = std::process::Command::new("curl")
        .args([
            "--silent",
            "--proxytunnel",
            "--proxy",
            server.proxy_url().as_str(),
            mine.as_str(),
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&tunnelled.stdout), "mine");
    let hello = client
        .get("http://plain.example.com/hello")
        .send()
        .await
        .unwrap();
    assert_eq!(text(hello).await, (200, "from the worker".to_owned()));
    // The root's addition was made after the boundary opened: not in it,
    // but at the root.
    let root = client
        .get("http://plain.example.com/root")
        .send()
        .await
        .unwrap();
    assert_ne!(root.status(), 200);
    let root = through(&server.proxy_url())
        .get("http://plain.example.com/root")
        .send()
        .await
        .unwrap();
    assert_eq!(text(root).await, (200, "from the root".to_owned()));
    assert_eq!(worker.in_scope(|| server.requests().len()), 4);
    assert_eq!(server.requests().len(), 1);

    // Dropped while `client` keeps its connection to the proxy: the
    // credential is refused on it and on a new one, and the port is closed,
    // at once.
    drop(worker);
    for client in [&client, &through(&proxy)] {
        let refused = client
            .get("http://plain.example.com/hello")
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 407);
    }
    assert!(
        std::net::TcpStream::connect(own.socket_addrs(|| None).unwrap()[0]).is_err(),
        "the ended boundary's port {own} still accepts connections"
    );
}

/// What a client got from an ended boundary: never its handlers' answer,
/// nor the root's. A connection kept from before is closed by the listener
/// (the client sees an error, or retries on a new connection, refused) or,
/// for a request that got there first, answered `410` naming the boundary.
async fn assert_refused(what: &str, sent: Result<reqwest::Response, reqwest::Error>) {
    let Ok(response) = sent else { return };
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    assert!(
        status == 410 && body.contains("has ended"),
        "{what}: {status} {body}"
    );
}

/// Issue 39: a boundary ends when its last handle goes, whatever its
/// clients keep open — a kept-alive HTTP/1.1 connection and an HTTP/2 one
/// (prior knowledge) to its port, a `CONNECT` tunnel with TLS made with its
/// credential, a proxy connection to the server's port whose requests
/// carry the credential, a stream it is still sending. Its port refuses
/// connections and its credential is refused at once; no kept connection
/// reaches its handlers (or the root's) again; the stream ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boundary_ends_whatever_connections_its_clients_keep() {
    let who = |body: &'static str| {
        [
            http::get("/who", move |_| HttpResponse::text(body)),
            http::get("https://api.example.com/who", move |_| {
                HttpResponse::text(body)
            }),
            http::get("http://plain.example.com/who", move |_| {
                HttpResponse::text(body)
            }),
        ]
    };
    let server = setup_server(who("root"));
    server.listen();
    let worker = server.open_boundary();
    let (own, proxy, tunnelling) = worker.in_scope(|| {
        server.use_handlers(who("boundary"));
        // A stream that never ends by itself.
        server.use_handlers([http::get("/events", |_| {
            let ticks = futures_util::stream::unfold(0u64, |n| async move {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                Some((bytes::Bytes::from(format!("tick {n}\n")), n + 1))
            });
            HttpResponse::stream(ticks)
        })]);
        (server.url(), server.proxy_url(), server.reqwest_client())
    });
    let direct = |builder: reqwest::ClientBuilder| builder.no_proxy().build().unwrap();
    let http1 = direct(reqwest::Client::builder().http1_only());
    let http2 = direct(reqwest::Client::builder().http2_prior_knowledge());
    let proxied = || {
        reqwest::Client::builder()
            .proxy(reqwest::Proxy::http(proxy.as_str()).unwrap())
            .build()
            .unwrap()
    };
    let plain_proxy = proxied();
    let who_url = own.join("who").unwrap();
    let sends = |client: &reqwest::Client, url: &str| client.get(url).send();
    for (client, url, version) in [
        (&http1, who_url.as_str(), reqwest::Version::HTTP_11),
        (&http2, who_url.as_str(), reqwest::Version::HTTP_2),
        (
            &tunnelling,
            "https://api.example.com/who",
            reqwest::Version::HTTP_11,
        ),
        (
            &plain_proxy,
            "http://plain.example.com/who",
            reqwest::Version::HTTP_11,
        ),
    ] {
        let response = sends(client, url).await.unwrap();
        assert_eq!(response.version(), version, "{url}");
        assert_eq!(response.text().await.unwrap(), "boundary", "{url}");
    }
    let mut events = http2.get(own.join("events").unwrap()).send().await.unwrap();
    assert!(events.chunk().await.unwrap().is_some());

    drop(worker);

    assert!(
        std::net::TcpStream::connect(own.socket_addrs(|| None).unwrap()[0]).is_err(),
        "the ended boundary's port {own} still accepts connections"
    );
    let refused = sends(&proxied(), "http://plain.example.com/who")
        .await
        .unwrap();
    assert_eq!(refused.status(), 407);
    let refused = sends(&plain_proxy, "http://plain.example.com/who")
        .await
        .unwrap();
    assert_eq!(refused.status(), 407);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(3), async {
        while let Ok(Some(_)) = events.chunk().await {}
    });
    ended.await.expect("the ended boundary's stream ends");
    assert_refused("kept HTTP/1.1", sends(&http1, who_url.as_str()).await).await;
    assert_refused("kept HTTP/2", sends(&http2, who_url.as_str()).await).await;
    assert_refused(
        "kept tunnel",
        sends(&tunnelling, "https://api.example.com/who").await,
    )
    .await;
    // Outside the boundary, nothing changed.
    let root = sends(&http1, server.url().join("who").unwrap().as_str()).await;
    assert_eq!(root.unwrap().text().await.unwrap(), "root");
}

/// A boundary call's addresses end with the call, though a client made in
/// it lives on; `Boundary::end` ends one whose clones are still held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boundary_call_or_end_ends_what_its_clients_keep() {
    let server = setup_server([http::get("/who", |_| HttpResponse::text("root"))]);
    server.listen();
    let (own, client) = server
        .in_boundary({
            let server = server.clone();
            async move {
                server.use_handlers([http::get("/who", |_| HttpResponse::text("call"))]);
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                let own = server.url().join("who").unwrap();
                let answer = client.get(own.clone()).send().await.unwrap();
                assert_eq!(answer.text().await.unwrap(), "call");
                (own, client)
            }
        })
        .await;
    assert_refused("after the call", client.get(own.clone()).send().await).await;

    let boundary = server.open_boundary();
    let kept = boundary.clone();
    let (own, proxy) = boundary.in_scope(|| {
        server.use_handlers([http::get("http://plain.example.com/who", |_| {
            HttpResponse::text("held")
        })]);
        (server.url(), server.proxy_url())
    });
    let proxied = reqwest::Client::builder()
        .proxy(reqwest::Proxy::http(proxy.as_str()).unwrap())
        .build()
        .unwrap();
    let held = proxied
        .get("http://plain.example.com/who")
        .send()
        .await
        .unwrap();
    assert_eq!(held.text().await.unwrap(), "held");
    boundary.end();
    assert!(kept.is_ended());
    let refused = proxied
        .get("http://plain.example.com/who")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 407);
    assert!(std::net::TcpStream::connect(own.socket_addrs(|| None).unwrap()[0]).is_err());
    // Its list and journal are still there for whoever holds it.
    assert_eq!(kept.in_scope(|| server.requests().len()), 1);
}

/// A request that reaches an ended boundary on a connection made to it
/// (here, the first in a tunnel its credential opened just before it
/// ended) is answered `410 Gone` naming the boundary, not by its handlers
/// nor the root's, and the connection closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_in_a_tunnel_of_an_ended_boundary_is_answered_410() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = setup_server([http::get("http://plain.example.com/who", |_| {
        HttpResponse::text("root")
    })]);
    server.listen();
    let boundary = server.open_boundary();
    let proxy = boundary.in_scope(|| {
        server.use_handlers([http::get("http://plain.example.com/who", |_| {
            HttpResponse::text("boundary")
        })]);
        server.proxy_url()
    });
    let credential = proxy.password().unwrap().to_owned();
    let mut tcp = tokio::net::TcpStream::connect(proxy.socket_addrs(|| None).unwrap()[0])
        .await
        .unwrap();
    let authorization = base64_basic(&format!("mocklib:{credential}"));
    tcp.write_all(
        format!(
            "CONNECT plain.example.com:80 HTTP/1.1\r\nHost: plain.example.com:80\r\n\
             Proxy-Authorization: Basic {authorization}\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        tcp.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{head:?}");

    boundary.end();
    tcp.write_all(b"GET /who HTTP/1.1\r\nHost: plain.example.com\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        tcp.read_to_string(&mut answer),
    );
    read.await.expect("the connection closes").unwrap();
    assert!(answer.starts_with("HTTP/1.1 410 Gone\r\n"), "{answer}");
    assert!(
        answer.contains(&format!("({credential}) that has ended")),
        "{answer}"
    );
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
}

/// `user:password` in base64, as a `Basic` credential carries it.
fn base64_basic(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut encoded = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let bytes = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let bits = u32::from(bytes[0]) << 16 | u32::from(bytes[1]) << 8 | u32::from(bytes[2]);
        for (index, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if index <= chunk.len() {
                encoded.push(char::from(ALPHABET[(bits >> shift & 63) as usize]));
            } else {
                encoded.push('=');
            }
        }
    }
    encoded
}
