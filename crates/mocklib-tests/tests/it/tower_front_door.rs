//! The tower front door around a real hyper client, against a real upstream.

use crate::common;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mocklib::node::setup_server;
use mocklib::{HttpResponse, UnhandledRequest, front_door::NetworkError, http};
use tower::{Layer, ServiceExt};

/// A bodiless `GET url` as an `http::Request`, for a tower service (named
/// apart from the harness's `TestClient::get`, which sends one).
fn get_request(url: &str) -> ::http::Request<Full<Bytes>> {
    ::http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

async fn body_text<B>(response: ::http::Response<B>) -> String
where
    B: http_body::Body,
    B::Error: std::fmt::Debug,
{
    String::from_utf8(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_mocks_and_passes_the_rest_to_the_wrapped_hyper_client() {
    let upstream = test_support::spawn_upstream(
        axum::Router::new()
            .route("/real", axum::routing::get(|| async { "from upstream" }))
            .route(
                "/echo",
                axum::routing::post(|body: String| async move { body }),
            ),
    )
    .await;
    let server = setup_server([http::get(format!("http://{upstream}/mocked"), |_| {
        HttpResponse::text("from mocklib")
    })]);
    server.listen_with(common::on_unhandled(UnhandledRequest::Bypass));
    let hyper_client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let client = server.layer().layer(hyper_client);

    let mocked = client
        .clone()
        .oneshot(get_request(&format!("http://{upstream}/mocked")))
        .await
        .unwrap();
    assert!(mocked.body().is_mocked());
    assert_eq!(mocked.headers()["content-type"], "text/plain");
    assert_eq!(body_text(mocked).await, "from mocklib");

    let real = client
        .clone()
        .oneshot(get_request(&format!("http://{upstream}/real")))
        .await
        .unwrap();
    assert!(!real.body().is_mocked());
    assert_eq!(body_text(real).await, "from upstream");

    // The buffered body is sent on unchanged.
    let echo = ::http::Request::post(format!("http://{upstream}/echo"))
        .body(Full::new(Bytes::from("payload")))
        .unwrap();
    let echoed = client.oneshot(echo).await.unwrap();
    assert_eq!(body_text(echoed).await, "payload");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_error_is_the_services_error() {
    let server = setup_server([http::get("https://api.example.com/offline", |_| {
        HttpResponse::error()
    })]);
    server.listen();
    let error = server
        .service()
        .oneshot(get_request("https://api.example.com/offline"))
        .await
        .unwrap_err();
    assert!(error.downcast_ref::<NetworkError>().is_some(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standalone_service_explains_that_it_cannot_pass_through() {
    let server = setup_server([]);
    server.listen_with(common::on_unhandled(UnhandledRequest::Bypass));
    let error = server
        .service()
        .oneshot(get_request("https://api.example.com/x"))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("GET https://api.example.com/x"),
        "{message}"
    );
    assert!(message.contains("server.layer()"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boundary_applies_to_requests_called_inside_it() {
    let server = setup_server([http::get("https://api.example.com/who", |_| {
        HttpResponse::text("root")
    })]);
    server.listen();
    let inside = server.boundary({
        let server = server.clone();
        move || async move {
            server.use_handlers([http::get("https://api.example.com/who", |_| {
                HttpResponse::text("boundary")
            })]);
            body_text(
                server
                    .service()
                    .oneshot(get_request("https://api.example.com/who"))
                    .await
                    .unwrap(),
            )
            .await
        }
    });
    assert_eq!(inside().await, "boundary");
    let outside = server
        .service()
        .oneshot(get_request("https://api.example.com/who"))
        .await
        .unwrap();
    assert_eq!(body_text(outside).await, "root");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_form_requests_take_their_origin_from_the_host_header() {
    let server = setup_server([http::get("http://localhost:3000/user", |_| {
        HttpResponse::text("John")
    })]);
    server.listen();
    let request = ::http::Request::get("/user")
        .header("host", "localhost:3000")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = server.service().oneshot(request).await.unwrap();
    assert_eq!(body_text(response).await, "John");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_too_long_to_pass_on_is_a_414_and_the_layer_keeps_serving() {
    // The upstream counts what reaches it: the unsendable requests must not.
    let reached = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let upstream = test_support::spawn_upstream(axum::Router::new().fallback({
        let reached = std::sync::Arc::clone(&reached);
        move || {
            reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { "from upstream" }
        }
    }))
    .await;
    // 30,000 `{` fit in an `http::Uri`; percent-encoded (`%7B`) they do not.
    let too_long = format!("http://{upstream}/{}", "{".repeat(30_000));
    let passes_on = mocklib::passthrough;
    for (case, strategy, handlers) in [
        ("warn", UnhandledRequest::Warn, vec![]),
        ("bypass", UnhandledRequest::Bypass, vec![]),
        (
            "passthrough()",
            UnhandledRequest::Error,
            vec![http::all("*", move |_| passes_on())],
        ),
    ] {
        let server = setup_server(handlers);
        server.listen_with(common::on_unhandled(strategy));
        let hyper_client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let client = server.layer().layer(hyper_client);

        let response = client
            .clone()
            .oneshot(get_request(&too_long))
            .await
            .unwrap();
        assert_eq!(response.status(), 414, "{case}");
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; charset=utf-8"
        );
        let body = body_text(response).await;
        assert!(
            body.contains("bytes once encoded, over the 65,534 bytes a URI may have"),
            "{case}: {body}"
        );
        assert!(body.len() < 500, "{case}: the URL is abbreviated: {body}");

        let next = client
            .oneshot(get_request(&format!("http://{upstream}/next")))
            .await
            .unwrap();
        assert_eq!(body_text(next).await, "from upstream", "{case}");
    }
    assert_eq!(reached.load(std::sync::atomic::Ordering::SeqCst), 3);
}
