//! `GET /events/{count}` answered with `count` server-sent events, each
//! server yielding to the runtime every 64 events (how a producer faster
//! than its client keeps the queue short): mocklib's `sse::get` handler in
//! base URL mode, and a bare hyper server writing the same bytes.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::StreamBody;
use hyper::body::Frame;
use mocklib::node::{Server, setup_server};
use mocklib::sse::{self, Event};

/// A listening mocklib server whose `/events/:count` sends `count` events.
/// Call it inside a tokio runtime (the resolver yields on it).
pub fn mocklib_server() -> Server {
    let server = setup_server([sse::get("/events/:count", |args| async move {
        let count: usize = args.params["count"].parse().unwrap();
        for n in 0..count {
            args.client
                .send(Event::data(format!("event {n} of the price feed")).id(n.to_string()));
            if n % 64 == 63 {
                tokio::task::yield_now().await;
            }
        }
    })]);
    server.listen();
    server
}

/// The bytes [`mocklib_server`] writes for event `n`.
pub fn event_bytes(n: usize) -> Bytes {
    Bytes::from(format!("id: {n}\ndata: event {n} of the price feed\n\n"))
}

/// Starts a bare hyper server on the current runtime answering
/// `/events/{count}` with `count` events as a streamed body; its URL
/// (`http://127.0.0.1:PORT`, no trailing slash).
pub async fn bare_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|request: hyper::Request<_>| async move {
                    Ok::<_, Infallible>(events(requested(request.uri().path())))
                });
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
            });
        }
    });
    url
}

/// The count at the end of `/events/{count}` (0 when there is none).
fn requested(path: &str) -> usize {
    path.rsplit('/')
        .next()
        .and_then(|count| count.parse().ok())
        .unwrap_or(0)
}

/// An event-stream response of `count` events, yielding every 64.
fn events(
    count: usize,
) -> hyper::Response<
    StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send>,
> {
    let events = futures_util::stream::unfold(0, move |n| async move {
        if n == count {
            return None;
        }
        if n % 64 == 63 {
            tokio::task::yield_now().await;
        }
        Some((Ok(Frame::data(event_bytes(n))), n + 1))
    });
    hyper::Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(StreamBody::new(events))
        .unwrap()
}
