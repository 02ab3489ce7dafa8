//! The library's integration tests, one binary: each file of this folder is
//! a module (`cargo test -p mocklib-tests --all-features -- grpc::` runs one),
//! compiled when the package's features include what its tests need (the
//! `#[cfg]` on its `mod` line, as `required-features` had it when each was
//! a binary of its own). One binary links mocklib and the tests' clients
//! once instead of once per file (CONTRIBUTING.md has the times).
//!
//! Two tests keep a binary of their own, for state that is per process:
//! `tests/lazy_listen.rs` (a global tracing subscriber; the CA and the
//! system roots it watches being loaded) and `tests/port_pool.rs` (the pool
//! of released ports, which a test listening beside it could take).
//! What does not need mocklib (upstreams, curl, raw sockets, TLS) is in
//! crates/test-support, shared with the command's tests.

#[cfg(feature = "reqwest")]
mod common;
#[cfg(any(
    all(feature = "net", feature = "reqwest"),
    all(
        feature = "net",
        feature = "graphql",
        feature = "har",
        feature = "openapi",
        feature = "ws"
    )
))]
mod listener_panics;

#[cfg(feature = "reqwest")]
mod boundary;
#[cfg(all(feature = "net", feature = "reqwest", feature = "tower"))]
mod chaos;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod child_processes;
#[cfg(all(feature = "net", feature = "reqwest", feature = "reqwest-0-12"))]
mod clients;
#[cfg(all(
    feature = "openapi",
    feature = "har",
    feature = "net",
    feature = "reqwest"
))]
mod contract;
mod cookies;
#[cfg(feature = "reqwest")]
mod delay;
#[cfg(all(
    feature = "net",
    feature = "reqwest",
    feature = "reqwest-0-12",
    feature = "tower"
))]
mod faults;
#[cfg(all(
    feature = "graphql",
    feature = "net",
    feature = "reqwest",
    feature = "reqwest-0-12",
    feature = "regex"
))]
mod graphql;
#[cfg(all(feature = "graphql", feature = "net", feature = "reqwest"))]
mod graphql_contract;
#[cfg(all(
    feature = "graphql",
    feature = "ws",
    feature = "net",
    feature = "reqwest"
))]
mod graphql_subscriptions;
#[cfg(all(
    feature = "grpc",
    feature = "net",
    any(feature = "tower", feature = "reqwest")
))]
mod greeter;
#[cfg(all(feature = "grpc", feature = "net", feature = "tower"))]
mod grpc;
#[cfg(all(feature = "grpc", feature = "net", feature = "reqwest"))]
mod grpc_bad_input;
#[cfg(all(
    feature = "grpc",
    feature = "net",
    feature = "tower",
    feature = "reqwest"
))]
mod grpc_generated;
#[cfg(all(
    feature = "grpc",
    feature = "net",
    feature = "tower",
    feature = "reqwest"
))]
mod grpc_status;
#[cfg(all(
    feature = "grpc",
    feature = "net",
    feature = "tower",
    feature = "reqwest"
))]
mod grpc_web;
#[cfg(all(feature = "har", feature = "net", feature = "reqwest"))]
mod har;
#[cfg(all(feature = "har", feature = "net", feature = "reqwest"))]
mod har_drift;
#[cfg(all(
    feature = "net",
    feature = "graphql",
    feature = "har",
    feature = "openapi",
    feature = "ws"
))]
mod hostile_input;
#[cfg(feature = "reqwest")]
mod lifecycle;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod listener;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod listener_http;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod listener_robustness;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod logs;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod matchers;
#[cfg(all(feature = "net", feature = "reqwest", feature = "regex"))]
mod matching;
#[cfg(feature = "net")]
mod memory_connector;
#[cfg(all(feature = "openapi", feature = "net", feature = "reqwest"))]
mod openapi;
#[cfg(all(feature = "openapi", feature = "net", feature = "reqwest"))]
mod openapi_prism;
#[cfg(feature = "reqwest")]
mod resolvers;
#[cfg(feature = "reqwest")]
mod responses;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod rest;
#[cfg(feature = "reqwest")]
mod scenarios;
#[cfg(all(feature = "reqwest", feature = "graphql"))]
mod sequences;
#[cfg(feature = "reqwest")]
mod spec_examples;
#[cfg(all(feature = "reqwest", feature = "net"))]
mod sse;
#[cfg(all(feature = "net", feature = "reqwest", feature = "reqwest-0-12"))]
mod stream_failures;
#[cfg(all(feature = "reqwest", feature = "net", feature = "tower"))]
mod streams;
#[cfg(all(feature = "tower", feature = "reqwest"))]
mod tower_front_door;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod verification;
mod warnings_reach_stderr;
#[cfg(all(feature = "net", feature = "reqwest"))]
mod webhooks;
#[cfg(all(feature = "ws", feature = "net", feature = "reqwest"))]
mod ws;
