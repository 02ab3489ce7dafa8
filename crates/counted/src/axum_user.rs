//! `GET /user` answered by axum with one route, the same status, headers
//! and body as [`crate::user`]'s servers: what a router costs over a bare
//! hyper server, the reference for what mocklib's listener adds (it routes
//! too). Feature `axum`.

use crate::user::BODY;

/// An axum server on a 2-worker runtime of its own (the shape of mocklib's
/// listener). It stops when dropped.
pub struct AxumUser {
    runtime: Option<tokio::runtime::Runtime>,
    url: String,
}

impl AxumUser {
    /// Starts it on a free loopback port.
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("axum")
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/user",
            axum::routing::get(|| async { ([(hyper::header::CONTENT_TYPE, "text/plain")], BODY) }),
        );
        runtime.spawn(async move { axum::serve(listener, app).await });
        AxumUser {
            runtime: Some(runtime),
            url,
        }
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for AxumUser {
    fn drop(&mut self) {
        // Not a plain drop: that blocks, and panics inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
