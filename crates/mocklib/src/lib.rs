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
//! | server-sent event streams | [`sse`]: `get`, `post`, the [`sse::Client`] a resolver sends through | [streams](guide::streams) |
//! | streamed bodies, cleanup after them | [`HttpResponse::stream`], [`Body`], [`ResolverArgs::finalize`] | [streams](guide::streams) |
//! | answering in turn (retries) | [`sequence`], [`sequence_once`] | [matching](guide::matching) |
//! | broken connections | [`Fault`], [`HttpResponse::fault`] | [matching](guide::matching#faults) |
//! | faults on a share of requests, random latency, seeded (chaos) | [`chaos`]: [`Chaos`](chaos::Chaos), [`Handler::chaos`] | [matching](guide::matching#faults) |
//! | fake names, emails, addresses, seeded by the request (feature `fake`) | `fake`: `Faker` | [matching](guide::matching#fake-data) |
//! | requests the mock sends after answering (webhooks) | [`webhook`]: [`Webhook`](webhook::Webhook), [`Handler::webhook`] | [matching](guide::matching#webhooks) |
//! | answers that change with a state requests set (scenarios), per key | [`scenario`]: [`Scenario`](scenario::Scenario), [`Handler::when_state`], [`Handler::set_state`] | [matching](guide::matching#scenarios) |
//! | stateful REST resources (CRUD from an in-memory collection) | [`rest`]: `resource`; state per scope in a [`ScopeLocal`](boundary::ScopeLocal) | [matching](guide::matching#stateful-resources) |
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
//! | a front door of your own (another client) | [`front_door`]: [`FrontDoor`](front_door::FrontDoor), [`Outcome`](front_door::Outcome) | [extending](guide::extending) |
//! | recording what is performed for real | [`exchange`]: [`ExchangeSink`](exchange::ExchangeSink), [`Tap`](exchange::Tap) | [extending](guide::extending) |
//! | how mocklib compares with wiremock-rs, httpmock, mockito, MSW | | [comparison](guide::comparison) |
//!
//! ## Features
//!
//! Default features are marked; each item that needs a feature says which.
//!
#![cfg_attr(feature = "document-features", doc = document_features::document_features!())]
#![cfg_attr(
    not(feature = "document-features"),
    doc = "(The list is made from Cargo.toml's comments when the docs are built with `--all-features`, as docs.rs builds them.)"
)]
//!
//! The `mocklib` command (`mocklib serve`, `mocklib init`) is its own
//! package: `cargo install mocklib-cli`.
//!
//! With `--no-default-features` the core (handlers, matching, engine) builds for
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
// docs.rs (which sets `docsrs`) labels each item with the cargo features
// and targets it needs, read from its `#[cfg]`: no label is written by hand.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The folders are the layers (docs/ARCHITECTURE.md; scripts/check-layers
// refuses an import of a higher layer). Public modules keep their paths
// through the re-exports below.
pub mod browser;
mod engine;
pub mod front_door;
pub mod guide;
mod handling;
pub mod matching;
mod message;
mod namespace;
#[cfg(not(target_arch = "wasm32"))]
pub mod node;
mod support;

pub use engine::{boundary, events, journal, verify};
pub use handling::{chaos, contract, handler, resolver, scenario, webhook};
pub use matching::matchers;
pub use message::exchange;
#[cfg(all(feature = "fake", not(target_arch = "wasm32")))]
pub use message::fake;
#[cfg(feature = "graphql")]
pub use namespace::graphql;
#[cfg(feature = "grpc")]
pub use namespace::grpc;
#[cfg(feature = "har")]
pub use namespace::har;
#[cfg(feature = "openapi")]
pub use namespace::openapi;
#[cfg(feature = "ws")]
pub use namespace::ws;
pub use namespace::{http, rest, sse};

/// The README's code blocks compile as doctests, so the quick start a user
/// copies keeps working.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

#[cfg(not(target_arch = "wasm32"))]
pub use engine::boundary::Boundary;
// The names a test writes; everything else is in its module.
pub use engine::UnhandledRequest;
pub use engine::boundary::BoundaryExt;
pub use handling::handler::Handler;
pub use handling::resolver::{ResolverArgs, sequence, sequence_once};
pub use handling::times::Times;
pub use message::body::Body;
pub use message::bypass::bypass;
pub use message::delay::delay;
pub use message::fault::Fault;
pub use message::request::Request;
pub use message::response::{HttpResponse, passthrough};
#[cfg(not(target_arch = "wasm32"))]
pub use node::{ListenOptions, setup_server};

pub mod request {
    //! The intercepted request as a resolver sees it: a [`Request`] whose
    //! body was read once (so every handler it falls through can read it
    //! again), its [`Cookies`], its path [`Params`] and its form data.
    //!
    //! MSW: the Fetch API `Request` of a resolver's `{ request }`.
    pub use crate::message::cookies::Cookies;
    pub use crate::message::form_data::{FormData, FormError, FormValue};
    pub use crate::message::params::{ParamValue, Params};
    pub use crate::message::request::{
        BodyChunks, BodyError, InvalidRequestError, Request, UnsendableRequestError,
    };
}

pub mod response {
    //! What a resolver answers with: an [`HttpResponse`] (MSW:
    //! `HttpResponse`), its buffered or streamed [`Body`], a [`delay`], a
    //! transport [`Fault`], or the real answer through [`passthrough`] and
    //! [`bypass`].
    pub use crate::message::body::{Body, StreamError};
    pub use crate::message::bypass::{BypassError, bypass};
    pub use crate::message::delay::{Delay, delay};
    pub use crate::message::fault::Fault;
    pub use crate::message::response::{HttpResponse, ResponseBodyError, StatusText, passthrough};
}
