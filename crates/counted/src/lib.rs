//! The servers mocklib's speed guard counts: `scripts/bench-counted` runs
//! this package's binary under valgrind and counts the instructions and
//! allocations of a request (and of a server-sent event) in each, the
//! listener beside a bare hyper server that answers the same bytes.
//!
//! The socket and streams benches of `mocklib-benches` measure the same
//! servers (as a library, this package), so the counted code and the timed
//! code are one (and the grpc bench the `grpc` module's, feature `grpc`; the
//! websocket bench the `ws` module's, feature `ws`).
//! The binary: `mocklib-counted SERVER` (see `main.rs`).

pub mod announce;
#[cfg(feature = "axum")]
pub mod axum_user;
pub mod events;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod user;
#[cfg(feature = "ws")]
pub mod ws;
