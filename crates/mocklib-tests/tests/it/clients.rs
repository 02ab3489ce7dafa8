//! More clients no one here wrote, through the listener: reqwest 0.13,
//! reqwest 0.12 over native-tls (OpenSSL), a Rust child process configured
//! only by `server.env()`, and passthrough to an HTTPS upstream with its own CA.

use crate::common;

use std::process::Command;

use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, UnhandledRequest, http};

fn server() -> Server {
    let server = setup_server([http::get("https://api.example.com/user", |args| {
        let name = args
            .request
            .header("x-client")
            .unwrap_or("anonymous")
            .to_owned();
        HttpResponse::text(format!("hello {name}"))
    })]);
    server.listen_with(common::error_on_unhandled());
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_013_as_users_configure_it_reaches_the_handlers_over_https_and_http2() {
    // Default features (rustls on aws-lc-rs) while mocklib brings ring: both
    // providers are in this binary, as in a user's.
    let server = server();
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(server.proxy_url().as_str()).unwrap())
        .tls_certs_only([
            reqwest::Certificate::from_pem(server.ca_certificate_pem().as_bytes()).unwrap(),
        ])
        .build()
        .unwrap();
    let response = client
        .get("https://api.example.com/user")
        .header("x-client", "reqwest 0.13")
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.text().await.unwrap(), "hello reqwest 0.13");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_012_over_native_tls_reaches_the_handlers() {
    let server = server();
    let client = reqwest012::Client::builder()
        .use_native_tls()
        .proxy(reqwest012::Proxy::all(server.proxy_url().as_str()).unwrap())
        .add_root_certificate(
            reqwest012::Certificate::from_pem(server.ca_certificate_pem().as_bytes()).unwrap(),
        )
        .build()
        .unwrap();
    let response = client
        .get("https://api.example.com/user")
        .header("x-client", "native-tls")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "hello native-tls");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_012_client_of_the_server_reaches_the_handlers() {
    let server = server();
    let response = server
        .reqwest_client_0_12()
        .get("https://api.example.com/user")
        .header("x-client", "reqwest 0.12")
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest012::Version::HTTP_2);
    assert_eq!(response.text().await.unwrap(), "hello reqwest 0.12");
}

#[tokio::test]
async fn reqwest_middleware_04_reaches_the_handlers_and_reports_network_errors() {
    let server = server();
    server.use_handlers([http::get("https://api.example.com/down", |_| {
        HttpResponse::error()
    })]);
    let client = reqwest_middleware04::ClientBuilder::new(reqwest012::Client::new())
        .with(server.middleware())
        .build();
    let response = client
        .get("https://api.example.com/user")
        .header("x-client", "middleware 0.4")
        .send()
        .await
        .unwrap();
    assert_eq!(response.url().as_str(), "https://api.example.com/user");
    assert_eq!(response.text().await.unwrap(), "hello middleware 0.4");
    let error = client
        .get("https://api.example.com/down")
        .send()
        .await
        .unwrap_err();
    assert!(mocklib::front_door::NetworkError::from_middleware_0_4_error(&error).is_some());
}

/// The `child_fetch` example, which `cargo test` builds next to the tests.
fn child_fetch() -> std::path::PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    deps.parent()
        .unwrap()
        .join("examples")
        .join(format!("child_fetch{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn a_rust_child_process_reaches_the_handlers_with_the_server_env() {
    let server = server();
    // The child_fetch example, which cargo test builds.
    let printed = test_support::stdout_of(
        Command::new(child_fetch())
            .arg("https://api.example.com/user")
            .env_clear()
            .envs(server.env()),
    );
    assert_eq!(printed, "200 hello anonymous");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_reaches_an_https_upstream_trusted_through_extra_roots() {
    let app =
        axum::Router::new().route("/secure", axum::routing::get(|| async { "secure answer" }));
    let (port, upstream_ca) = test_support::spawn_tls_upstream(app).await;
    let url = format!("https://localhost:{port}/secure");

    let trusting = setup_server([]);
    trusting.listen_with(
        common::on_unhandled(UnhandledRequest::Bypass)
            .upstream_root_certificates(vec![upstream_ca]),
    );
    let response = trusting.reqwest_client().get(&url).send().await.unwrap();
    assert_eq!(response.text().await.unwrap(), "secure answer");

    // Verification is always on: without the upstream's CA the passthrough fails.
    let strict = setup_server([]);
    strict.listen_with(common::on_unhandled(UnhandledRequest::Bypass));
    let response = strict.reqwest_client().get(&url).send().await.unwrap();
    assert_eq!(response.status(), 502);
    let message = response.text().await.unwrap();
    assert!(message.contains("certificate"), "{message}");
}
