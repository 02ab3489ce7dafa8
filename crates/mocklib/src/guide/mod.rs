//! The guide: mocklib's long-form documentation, chapter by chapter.
//!
//! The [crate root](crate) has a quick start and a map of the API, and each
//! module's docs are its reference. The guide explains how the pieces fit,
//! with examples that run as doctests. Read it in this order, or go to what
//! you need:
//!
//! | Chapter | What it covers |
//! |---|---|
//! | [`matching`] | Handlers, predicates, resolvers and responses; faults; stateful REST resources; sequences |
//! | [`streams`] | Streamed bodies, server-sent events (`sse`), WebSockets (`ws`) |
//! | [`graphql`] | GraphQL operations as handlers, and a schema as a contract |
//! | [`grpc`] | gRPC methods answered with prost messages, or a tonic server mounted as a handler |
//! | [`verifying`] | Life-cycle events, expectations and `verify()`, the request journal, strict mode |
//! | [`record_replay`] | Recording the real API into HAR files and replaying them offline; drift checks |
//! | [`openapi`] | An OpenAPI document as handlers, and as a contract every answer is checked against |
//! | [`boundaries`] | Per-test overrides on one shared server |
//! | [`ways_in`] | In-process front doors, base URL, proxy and child processes (HTTPS included), tested clients |
//! | [`browser`] | Mocking a Rust front-end app in the browser; trunk and Leptos |
//! | [`extending`] | A front door or a handler kind of your own |
//! | [`features`] | Every cargo feature |
//! | [`comparison`] | mocklib beside wiremock-rs, httpmock, mockito and MSW; coming from wiremock-rs |
//!
//! Test suites in other languages (Python, Node.js, Go, Java) use the
//! `mocklib` command, which serves handlers written as data:
//! [`crates/mocklib-cli/README.md`](https://github.com/mocklib/mocklib/blob/main/crates/mocklib-cli/README.md).
//!
//! **Why a module named `guide`.** clap keeps its tutorial in `_tutorial`,
//! compiled only with a feature for its docs, and the underscore sets it
//! apart from the API. This guide is always compiled instead (it is empty
//! modules: nothing to build), so a plain `cargo doc` and docs.rs, on both
//! of its targets, show it without a feature, and its plain name reads
//! well in links (`mocklib::guide::matching`). It holds no items and never
//! will: it is not API and carries no semver promise. The chapters are
//! Markdown files in `crates/mocklib/docs/guide/`, shipped in the published
//! crate, and their code blocks are doctests.

// Chapters link the items of every feature; docs built with fewer features
// than docs.rs uses (all of them) render those links as plain text.
#![cfg_attr(
    not(all(
        feature = "graphql",
        feature = "grpc",
        feature = "har",
        feature = "openapi",
        feature = "ws",
        feature = "net",
        feature = "tower",
        feature = "reqwest"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]

// Each chapter is a Markdown file. Its examples use the native front doors
// (`node`, absent on wasm32), so on wasm32 they are not collected as
// doctests, as the README's never are there; the pages show on both targets.

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/matching.md")
)]
pub mod matching {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/streams.md")
)]
pub mod streams {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/graphql.md")
)]
pub mod graphql {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/grpc.md")
)]
pub mod grpc {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/verifying.md")
)]
pub mod verifying {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/record_replay.md")
)]
pub mod record_replay {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/openapi.md")
)]
pub mod openapi {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/boundaries.md")
)]
pub mod boundaries {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/ways_in.md")
)]
pub mod ways_in {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/browser.md")
)]
pub mod browser {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/extending.md")
)]
pub mod extending {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/features.md")
)]
#[cfg_attr(feature = "document-features", doc = "## The features")]
#[cfg_attr(feature = "document-features", doc = document_features::document_features!())]
pub mod features {}

#[cfg_attr(
    not(all(doctest, target_arch = "wasm32")),
    doc = include_str!("../../docs/guide/comparison.md")
)]
pub mod comparison {}
