//! # mocklib
//!
//! API mocking for Rust in the style of [Mock Service Worker]: the code under
//! test makes real HTTP requests; mocklib intercepts them and answers from
//! *request handlers* — with a mock response, by performing the request as it
//! is, or by performing it and altering the response.
//!
//! ```
//! use mocklib::{http, HttpResponse, node::setup_server};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = setup_server([
//!     http::get("https://api.example.com/user", |args| {
//!         if args.cookies.get("session").is_none() {
//!             return HttpResponse::empty().status(401);
//!         }
//!         HttpResponse::json(&json!({ "name": "John" }))
//!     }),
//! ]);
//! server.listen();
//!
//! // Any reqwest client with the middleware in its stack is intercepted.
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let response = client.get("https://api.example.com/user").send().await?;
//! assert_eq!(response.status(), 401);
//!
//! let response = client
//!     .get("https://api.example.com/user")
//!     .header("cookie", "session=abc")
//!     .send()
//!     .await?;
//! assert_eq!(response.text().await?, r#"{"name":"John"}"#);
//! server.close();
//! # Ok(())
//! # }
//! ```
//!
//! ## Map of the crate
//!
//! The [`guide`] explains each area at length; its chapters are linked in
//! the last column.
//!
//! | Concept | Where | Guide |
//! |---|---|---|
//! | handlers for REST APIs | [`http`]: `get`, `post`, … `all` | [matching](guide::matching) |
//! | handlers for GraphQL APIs | [`graphql`]: `query`, `mutation`, `operation`, `link` | [graphql](guide::graphql) |
//! | gRPC methods (feature `grpc`) | `grpc`: `unary`, `server_streaming`, `client_streaming`, `bidi_streaming`, `service` | [grpc](guide::grpc) |
//! | server-sent event streams | [`sse`]: `get`, `post`, the [`sse::SseClient`] a resolver sends through | [streams](guide::streams) |
//! | streamed bodies, cleanup after them | [`HttpResponse::stream`], [`Body`], [`ResolverArgs::finalize`] | [streams](guide::streams) |
//! | answering in turn (retries) | [`sequence`], [`sequence_once`] | [matching](guide::matching) |
//! | broken connections | [`Fault`], [`HttpResponse::fault`] | [matching](guide::matching#faults) |
//! | stateful REST resources (CRUD from an in-memory collection) | [`rest`]: `resource`; state per scope in a [`ScopeLocal`] | [matching](guide::matching#stateful-resources) |
//! | WebSocket servers (feature `ws`) | `ws`: `link`, `on_connection`, `broadcast` | [streams](guide::streams#websockets) |
//! | which requests a handler matches | [`matching`], [`matchers`] | [matching](guide::matching) |
//! | what a resolver receives and returns | [`resolver`], [`Request`], [`HttpResponse`] | [matching](guide::matching) |
//! | the server, its handler list, front doors | [`node`] | [ways in](guide::ways_in) |
//! | mocking in the browser (wasm32) | [`browser`]: `setup_worker` | [browser](guide::browser) |
//! | scoping overrides to one test | [`boundary`] | [boundaries](guide::boundaries) |
//! | observing requests | [`events`] | [verifying](guide::verifying) |
//! | expectations, the request journal, strict mode | [`Handler::times`], [`journal`], [`ListenOptions::strict`] | [verifying](guide::verifying) |
//! | recording and replaying HAR files (feature `har`) | `har`: `Recording`, `handlers`, `check_drift` | [record and replay](guide::record_replay) |
//! | OpenAPI documents as handlers (feature `openapi`) | `openapi`: `OpenApi` | [openapi](guide::openapi) |
//! | checking answers against a description | [`contract`] | [openapi](guide::openapi#contracts-mocks-that-cannot-drift) |
//! | slow responses | [`delay()`] | [matching](guide::matching) |
//! | a handler kind of your own | [`handler`]: [`HandlerKind`](handler::HandlerKind), [`MatchContext`](handler::MatchContext), [`IndexHint`](handler::IndexHint) | [extending](guide::extending) |
//! | a front door of your own (another client) | [`front_door`]: [`FrontDoor`](front_door::FrontDoor), [`Outcome`] | [extending](guide::extending) |
//! | recording what is performed for real | [`exchange`]: [`ExchangeSink`](exchange::ExchangeSink), [`Tap`](exchange::Tap) | [extending](guide::extending) |
//! | how mocklib compares with wiremock-rs, httpmock, mockito, MSW | | [comparison](guide::comparison) |
//!
//! ## Features
//!
//! (The same table, in the guide: [`guide::features`].)
//!
//! | Feature | Default | Adds |
//! |---|:---:|---|
//! | `net` | ✔ | the loopback listener: [`Server::url`](node::Server::url) (base URL), [`proxy_url`](node::Server::proxy_url) and [`env`](node::Server::env) (HTTP proxy, HTTPS through `CONNECT`, child processes); the upstream client behind [`bypass`] and the listener's passthrough |
//! | `aws-lc-rs` | ✔ | the crypto provider of `net`'s TLS: aws-lc-rs, which reqwest 0.13 compiles by default |
//! | `ring` | | ring as `net`'s crypto provider instead (reqwest 0.12's default); `net` needs one of the two |
//! | `ws` | | the `ws` namespace: WebSocket handlers, served by the listener (tungstenite) and, in the browser, through the page's `WebSocket` class; implies `net` |
//! | `tower` | ✔ | [`Server::layer`](node::Server::layer) / [`service`](node::Server::service): [`node::MockLayer`], [`node::MockService`] |
//! | `reqwest` | ✔ | [`Server::middleware`](node::Server::middleware) ([`node::MockMiddleware`]) for reqwest 0.13 with reqwest-middleware 0.5; with `net`, `Server::reqwest_client` |
//! | `reqwest-0-12` | | the same middleware for reqwest 0.12 with reqwest-middleware 0.4; with `net`, `Server::reqwest_client_0_12` |
//! | `tokio` | ✔ | `delay` sleeps on tokio's timer when a runtime is running (otherwise on a helper thread) |
//! | `graphql` | ✔ | the [`graphql`] namespace and its document parser |
//! | `regex` | | a `regex::Regex` as a handler predicate (`http` and `graphql`); path patterns, `:id(\d+)` included, need none |
//! | `har` | | `har`: HAR files replayed as handlers, and `record` recording requests performed for real into them; with `net`, `check_drift` and `Drift`: a recording checked against the live API for drift |
//! | `grpc` | | the [`grpc`] namespace: gRPC methods (unary and streaming) answered with prost messages or a mounted tonic-generated server, in process through the tower layer or through the listener (h2c, HTTPS proxy) |
//! | `openapi` | | `openapi`: OpenAPI 3.0/3.1 documents answered as handlers (static or dynamic, seeded), security checked, requests optionally validated |
//!
//! The `mocklib` command (`mocklib serve`, `mocklib init`) is its own
//! package: `cargo install mocklib-cli`.
//!
//! On docs.rs each item that needs a feature says which. With
//! `--no-default-features` the core (handlers, matching, engine) builds for
//! `wasm32-unknown-unknown`.
//!
//! ## Minimum supported Rust version
//!
//! Rust 1.85 (edition 2024).
//!
//! [Mock Service Worker]: https://mswjs.io

#![forbid(unsafe_code)]
// axum's lint set, less `clippy::match_on_vec_items` (removed from clippy)
// and `clippy::empty_enum` (renamed `empty_enums` recently: no one name is
// known to every supported toolchain), and without axum's
// `allow(elided_lifetimes_in_paths)`.
#![warn(
    clippy::all,
    clippy::todo,
    clippy::enum_glob_use,
    clippy::mem_forget,
    clippy::unused_self,
    clippy::filter_map_next,
    clippy::needless_continue,
    clippy::needless_borrow,
    clippy::match_wildcard_for_single_variants,
    clippy::if_let_mutex,
    clippy::await_holding_lock,
    clippy::imprecise_flops,
    clippy::suboptimal_flops,
    clippy::lossy_float_literal,
    clippy::rest_pat_in_fully_bound_structs,
    clippy::fn_params_excessive_bools,
    clippy::exit,
    clippy::inefficient_to_string,
    clippy::linkedlist,
    clippy::macro_use_imports,
    clippy::option_option,
    clippy::verbose_file_reads,
    clippy::unnested_or_patterns,
    clippy::str_to_string,
    rust_2018_idioms,
    future_incompatible,
    nonstandard_style,
    missing_debug_implementations,
    missing_docs,
    unreachable_pub
)]
// The native front doors (`node`) do not exist on wasm32, nor `graphql`
// without its feature, so docs built that way cannot resolve links to them;
// they render as plain text.
#![cfg_attr(
    any(target_arch = "wasm32", not(feature = "graphql")),
    allow(rustdoc::broken_intra_doc_links)
)]
// docs.rs (which sets `docsrs`) marks items that need a cargo feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod base64;
mod body;
pub mod boundary;
pub mod browser;
mod bypass;
pub mod contract;
mod cookies;
#[cfg(any(
    all(feature = "net", not(target_arch = "wasm32")),
    feature = "har",
    feature = "openapi"
))]
mod date;
mod delay;
mod engine;
pub mod events;
pub mod exchange;
mod fault;
mod finalize;
mod form_data;
pub mod front_door;
#[cfg(feature = "graphql")]
#[cfg_attr(docsrs, doc(cfg(feature = "graphql")))]
pub mod graphql;
#[cfg(feature = "grpc")]
#[cfg_attr(docsrs, doc(cfg(feature = "grpc")))]
pub mod grpc;
pub mod guide;
pub mod handler;
mod handlers;
#[cfg(feature = "har")]
#[cfg_attr(docsrs, doc(cfg(feature = "har")))]
pub mod har;
pub mod http;
mod incoming;
mod index;
pub mod journal;
mod log;
pub mod matching;
pub use matching::matchers;
mod maybe_send;
#[cfg(not(target_arch = "wasm32"))]
pub mod node;
#[cfg(feature = "openapi")]
#[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
pub mod openapi;
mod params;
mod request;
pub mod resolver;
mod response;
pub mod rest;
mod scope_local;
mod setup_api;
pub mod sse;
mod suggest;
mod times;
#[cfg(feature = "ws")]
mod upgrade;
mod verify;
#[cfg(feature = "ws")]
#[cfg_attr(docsrs, doc(cfg(feature = "ws")))]
pub mod ws;

/// The README's code blocks compile as doctests, so the quick start a user
/// copies keeps working.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

pub use body::{Body, StreamError};
#[cfg(not(target_arch = "wasm32"))]
pub use boundary::Boundary;
pub use boundary::{BoundaryExt, Scoped};
pub use bypass::{BypassError, bypass};
pub use cookies::Cookies;
pub use delay::{Delay, delay};
pub use engine::{NetworkError, NetworkErrorKind, Outcome, Passthrough, UnhandledRequest};
pub use events::{EventKind, Events, LifeCycleEvent};
pub use fault::Fault;
pub use form_data::{FormData, FormError, FormValue};
pub use handler::Handler;
pub use journal::{Answer, RecordedRequest};
pub use matching::{IntoPredicate, PatternError, Predicate};
pub use maybe_send::MaybeSend;
#[cfg(not(target_arch = "wasm32"))]
pub use node::ListenOptions;
pub use params::{ParamValue, Params};
pub use request::{BodyChunks, BodyError, InvalidRequestError, Request, UnsendableRequestError};

/// The old name of [`InvalidRequestError`] (every error type's name ends in
/// `Error`).
#[deprecated(since = "0.1.0", note = "renamed `InvalidRequestError`")]
pub type InvalidRequest = InvalidRequestError;

/// The old name of [`UnsendableRequestError`] (every error type's name ends
/// in `Error`).
#[deprecated(since = "0.1.0", note = "renamed `UnsendableRequestError`")]
pub type UnsendableRequest = UnsendableRequestError;
pub use resolver::{
    CallHistory, IntoResolution, RequestId, Resolution, ResolverArgs, ResolverError, sequence,
    sequence_once,
};
pub use response::{HttpResponse, ResponseBodyError, StatusText, passthrough};
pub use scope_local::ScopeLocal;
pub use times::Times;
pub use verify::{ContractBreach, UnmetExpectation, VerificationError};
