//! `mocklib-counted SERVER`: starts one server of this package, prints its
//! URL (no trailing slash) on a line of its own and serves until stdin
//! closes. `scripts/bench-counted` counts them under valgrind;
//! `scripts/bench` loads `mocklib` and `bare` with wrk.
//!
//! SERVER is `mocklib` or `bare` (`GET /user`, the `user` module;
//! `mocklib-nojournal` is the listener with its journal off) or
//! `sse-mocklib` or `sse-bare` (`GET /events/{count}`, the `events` module);
//! with the feature `axum`, also `axum` (one route, the `axum_user` module);
//! with the feature `grpc`, also `grpc-mocklib` or `grpc-bare` (the `grpc`
//! module; `grpc-mocklib-nojournal` is the listener with its journal off,
//! to measure what the journal costs a call), and that module's clients, which print how many calls (or
//! messages) they made: `grpc-client URL N` (unary calls),
//! `grpc-client-bidi URL N` (messages echoed in one call) and
//! `grpc-client-stream URL N` (10,000-reply server streams); with the
//! feature `ws`, also `ws-mocklib` or `ws-bare` (WebSocket echo servers, the
//! `ws` module) and their client `ws-client URL N` (round trips on one
//! connection).

use mocklib_counted::announce::announce_and_wait;
use mocklib_counted::{events, user};

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some(name @ ("mocklib" | "mocklib-nojournal")) => {
            let server = if name == "mocklib" {
                user::mocklib_server()
            } else {
                user::mocklib_server_without_journal()
            };
            announce_and_wait(server.url().as_str().trim_end_matches('/'));
            server.close();
        }
        Some("bare") => {
            let bare = user::Bare::start();
            announce_and_wait(bare.url());
        }
        #[cfg(feature = "axum")]
        Some("axum") => {
            let axum = mocklib_counted::axum_user::AxumUser::start();
            announce_and_wait(axum.url());
        }
        Some(name @ ("sse-mocklib" | "sse-bare")) => serve_events(name),
        #[cfg(feature = "grpc")]
        Some(name @ ("grpc-mocklib" | "grpc-mocklib-nojournal" | "grpc-bare")) => {
            mocklib_counted::grpc::serve(name)
        }
        #[cfg(feature = "grpc")]
        Some(mode @ ("grpc-client" | "grpc-client-bidi" | "grpc-client-stream")) => {
            let usage = "usage: mocklib-counted grpc-client[-bidi|-stream] URL N";
            let url = std::env::args().nth(2).expect(usage);
            let count = std::env::args()
                .nth(3)
                .and_then(|n| n.parse().ok())
                .expect(usage);
            println!("{}", mocklib_counted::grpc::client(mode, &url, count));
        }
        #[cfg(feature = "ws")]
        Some(name @ ("ws-mocklib" | "ws-bare")) => mocklib_counted::ws::serve(name),
        #[cfg(feature = "ws")]
        Some("ws-client") => {
            let usage = "usage: mocklib-counted ws-client URL N";
            let url = std::env::args().nth(2).expect(usage);
            let count = std::env::args()
                .nth(3)
                .and_then(|n| n.parse().ok())
                .expect(usage);
            mocklib_counted::ws::run_client(&url, count);
            println!("{count}");
        }
        other => {
            eprintln!("usage: mocklib-counted mocklib|bare|sse-mocklib|sse-bare (got {other:?})");
            std::process::exit(2);
        }
    }
}

/// The SSE servers run on a 2-worker runtime built here, as in the
/// streams bench (the bare one is spawned on it, the resolver yields on it).
fn serve_events(name: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if name == "sse-mocklib" {
        let server = runtime.block_on(async { events::mocklib_server() });
        announce_and_wait(server.url().as_str().trim_end_matches('/'));
        server.close();
    } else {
        announce_and_wait(&runtime.block_on(events::bare_server()));
    }
    runtime.shutdown_background();
}
