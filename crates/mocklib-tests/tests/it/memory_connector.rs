//! `server.connector()`: clients that take a connector reach the listener
//! through memory, no socket (tonic's generated clients are in
//! grpc_generated.rs).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mocklib::node::{Server, setup_server};
use mocklib::{HttpResponse, http};

const GUARD: Duration = Duration::from_secs(10);

/// The body of a GET of `url` through `client`.
async fn get<C>(client: &Client<C, Full<Bytes>>, url: &str) -> (u16, String)
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    tokio::time::timeout(GUARD, async {
        let response = client.get(url.parse().unwrap()).await.unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    })
    .await
    .expect("the request hung")
}

fn server() -> Server {
    let server = setup_server([
        http::get("/user", |_| HttpResponse::text("John")),
        http::get("https://api.example.com/user", |_| {
            HttpResponse::text("absolute")
        }),
    ]);
    server.listen();
    server
}

#[tokio::test]
async fn hyper_clients_reach_the_handlers_over_http1_and_http2_without_a_socket() {
    let server = server();
    let http1 = Client::builder(TokioExecutor::new()).build::<_, Full<Bytes>>(server.connector());
    assert_eq!(
        get(&http1, "http://api.internal/user").await,
        (200, "John".into())
    );
    let http2 = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build::<_, Full<Bytes>>(server.connector());
    assert_eq!(
        get(&http2, "http://api.internal/user").await,
        (200, "John".into())
    );
    // Several requests on one connection, and the journal as for a socket.
    assert_eq!(get(&http2, "http://api.internal/user").await.0, 200);
    let journal = server.requests();
    assert_eq!(journal.len(), 3);
    assert_eq!(journal[1].request().version(), ::http::Version::HTTP_2);
    // As for a socket: a request no handler answers goes to the host it
    // names (here one that does not exist), and the client is told why.
    let (status, body) = get(&http1, "http://api.internal/nothing").await;
    assert_eq!(status, 502);
    assert!(
        body.contains("GET http://api.internal/nothing failed"),
        "{body}"
    );
}

/// A connector made inside a boundary resolves in it, from whichever task
/// uses it (it carries the scope, not the task), until the boundary ends:
/// then its connections close, and a request that still reaches one is
/// answered `410`, by neither the boundary's handlers nor the root's.
#[tokio::test]
async fn a_connector_made_inside_a_boundary_resolves_in_it_until_it_ends() {
    let server = server();
    let boundary = server.open_boundary();
    let client = boundary.in_scope(|| {
        server.use_handlers([http::get("/user", |_| HttpResponse::text("Kate"))]);
        Client::builder(TokioExecutor::new()).build::<_, Full<Bytes>>(server.connector())
    });
    let elsewhere = tokio::spawn({
        let client = client.clone();
        async move { get(&client, "http://api.internal/user").await }
    });
    assert_eq!(elsewhere.await.unwrap().1, "Kate");
    let outside = Client::builder(TokioExecutor::new()).build::<_, Full<Bytes>>(server.connector());
    assert_eq!(get(&outside, "http://api.internal/user").await.1, "John");

    drop(boundary);
    let after = tokio::time::timeout(
        GUARD,
        client.get("http://api.internal/user".parse().unwrap()),
    )
    .await
    .expect("the request hung");
    if let Ok(response) = after {
        assert_eq!(response.status(), 410);
    }
    assert_eq!(get(&outside, "http://api.internal/user").await.1, "John");
}
