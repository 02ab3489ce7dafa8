//! `GET /user` answered with the 4-byte text [`BODY`]: by the listener in
//! base URL mode with one handler, and by a bare hyper server that mocks
//! nothing and sends the same status, headers and body.

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mocklib::node::{ListenOptions, Server, setup_server};
use mocklib::{HttpResponse, http};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// The body of every answer to `GET /user`.
pub const BODY: &str = "John";

/// A listening mocklib server in base URL mode with the one handler
/// `GET /user`.
pub fn mocklib_server() -> Server {
    mocklib_server_with(ListenOptions::default())
}

/// [`mocklib_server`] with its journal off: what keeping the last requests
/// costs the listener's throughput.
pub fn mocklib_server_without_journal() -> Server {
    mocklib_server_with(ListenOptions::default().journal_capacity(0))
}

fn mocklib_server_with(options: ListenOptions) -> Server {
    let server = setup_server([http::get("/user", |_| HttpResponse::text(BODY))]);
    server.listen_with(options);
    server
}

/// A bare hyper 1 `server::conn::auto` server on a 2-worker runtime of its
/// own (the shape of mocklib's listener), answering every request 200 with
/// mocklib's headers and [`BODY`]. It stops when dropped.
pub struct Bare {
    runtime: Option<tokio::runtime::Runtime>,
    url: String,
}

impl Bare {
    /// Starts it on a free loopback port, over plain HTTP.
    pub fn start() -> Self {
        Self::start_with(|stream| std::future::ready(Some(stream)))
    }

    /// Starts it with each accepted connection first handed to `accept`
    /// (a TLS handshake, say); a connection it turns into `None` is
    /// dropped. The URL stays `http://`: the caller names the scheme and
    /// host its `accept` is for.
    pub fn start_with<A, F, S>(accept: A) -> Self
    where
        A: Fn(TcpStream) -> F + Send + 'static,
        F: Future<Output = Option<S>> + Send + 'static,
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bare-hyper")
            .enable_all()
            .build()
            .unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).unwrap()
        };
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let connection = accept(stream);
                tokio::spawn(async move {
                    let Some(stream) = connection.await else {
                        return;
                    };
                    // The request is dropped before the answer is built: one
                    // held on to keeps hyper's read buffer shared, and hyper
                    // then allocates a new 8 KiB buffer for every request.
                    let service = service_fn(|_request| async { Ok::<_, Infallible>(answer()) });
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Bare {
            runtime: Some(runtime),
            url,
        }
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// The same status, headers and body as mocklib's answer.
fn answer() -> hyper::Response<Full<Bytes>> {
    hyper::Response::builder()
        .status(200)
        .header(hyper::header::CONTENT_TYPE, "text/plain")
        .header(hyper::header::CONTENT_LENGTH, BODY.len())
        .body(Full::new(Bytes::from_static(BODY.as_bytes())))
        .unwrap()
}

impl Drop for Bare {
    fn drop(&mut self) {
        // Not a plain drop: that blocks, and panics inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
