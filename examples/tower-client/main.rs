//! The tower front door around a real hyper client: mocked requests are
//! answered in-process; everything else reaches the real server.
//!
//! Run it with `cargo run -p example-tower-client`.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mocklib::node::setup_server;
use mocklib::{HttpResponse, http};
use tower::{Layer, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // A real server on loopback, standing in for an API.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = service_fn(|_| async {
                Ok::<_, Infallible>(::http::Response::new(Full::new(Bytes::from(
                    "the real API",
                ))))
            });
            let connection = hyper::server::conn::http1::Builder::new();
            tokio::spawn(async move {
                connection
                    .serve_connection(TokioIo::new(stream), answer)
                    .await
            });
        }
    });

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
