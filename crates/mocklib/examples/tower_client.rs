//! The tower front door around a real hyper client: mocked requests are
//! answered in-process; everything else reaches the real server.
//!
//! Run it with `cargo run --example tower_client`.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use tower::{Layer, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // A real server on loopback, standing in for an API.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(|| async { "the real API" });
    tokio::spawn(async move { axum::serve(listener, app).await });

    let server = setup_server([http::get(format!("{api}/mocked"), |_| {
        HttpResponse::text("a mocked answer")
    })]);
    server.listen();

    // Any `Service<http::Request<Full<Bytes>>>` can be wrapped; here hyper's client.
    let client = server
        .layer()
        .layer(Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>());

    for path in ["/mocked", "/real"] {
        let request = ::http::Request::get(format!("{api}{path}")).body(Full::new(Bytes::new()))?;
        let response = client.clone().oneshot(request).await?;
        let body = response.into_body().collect().await?.to_bytes();
        println!("GET {path} → {}", String::from_utf8_lossy(&body));
    }
    Ok(())
}
