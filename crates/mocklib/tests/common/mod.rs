//! Shared pieces of the integration tests: a real reqwest client with the
//! mocklib middleware, and a real upstream HTTP server on loopback.
#![allow(dead_code)] // each test binary uses a different subset

use std::net::SocketAddr;

use mocklib::node::Server;
use reqwest_middleware::ClientWithMiddleware;

/// A plain reqwest client whose requests go through `server`'s handlers.
pub fn client(server: &Server) -> ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build()
}

/// Serves `app` on an ephemeral loopback port for the rest of the test's
/// runtime; returns its address.
pub async fn spawn_upstream(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("upstream server");
    });
    address
}

/// Listen options that make an unmatched request fail at once, so a test
/// never reaches the network by mistake.
pub fn error_on_unhandled() -> mocklib::ListenOptions {
    mocklib::ListenOptions {
        on_unhandled_request: mocklib::UnhandledRequest::Error,
        ..Default::default()
    }
}

/// Whether a request failed with a mocklib network error (not a status).
pub fn is_network_error(error: &reqwest_middleware::Error) -> bool {
    mocklib::NetworkError::from_middleware_error(error).is_some()
}

/// The spec's "Reference behavior of an example REST API described with
/// handlers": the posts API (in memory, empty at first) and the cookie example.
pub fn reference_api() -> Server {
    let posts: std::sync::Arc<
        std::sync::Mutex<std::collections::BTreeMap<String, serde_json::Value>>,
    > = std::sync::Arc::default();
    mocklib::node::setup_server([
        mocklib::http::get("/posts", {
            let posts = std::sync::Arc::clone(&posts);
            move |_| {
                mocklib::HttpResponse::json(
                    &posts.lock().unwrap().values().cloned().collect::<Vec<_>>(),
                )
            }
        }),
        mocklib::http::post("/posts", {
            let posts = std::sync::Arc::clone(&posts);
            move |args| {
                let posts = std::sync::Arc::clone(&posts);
                async move {
                    let post: serde_json::Value = args.request.json()?;
                    let id = post["id"].to_string();
                    posts.lock().unwrap().insert(id, post.clone());
                    Ok::<_, mocklib::BodyError>(mocklib::HttpResponse::json(&post).status(201))
                }
            }
        }),
        mocklib::http::delete("/posts/:id", {
            let posts = std::sync::Arc::clone(&posts);
            move |args| match posts.lock().unwrap().remove(&args.params["id"]) {
                None => mocklib::HttpResponse::empty().status(404),
                Some(post) => mocklib::HttpResponse::json(&post),
            }
        }),
        mocklib::http::get("/user", |args| {
            if args.cookies.get("session").is_none() {
                return mocklib::HttpResponse::empty().status(401);
            }
            mocklib::HttpResponse::json(&serde_json::json!({ "name": "John" }))
        }),
    ])
}
