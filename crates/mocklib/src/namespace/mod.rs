//! Layer 5, the namespaces: each builds handlers of one kind from the
//! layers below — REST (`http`, `rest`), GraphQL, server-sent events,
//! WebSockets, gRPC, and documents answered as handlers (HAR, OpenAPI).
//! No namespace imports another's internals except through its public
//! surface (`graphql` over `sse` and `ws`, `har`/`openapi` over `http`).

#[cfg(feature = "graphql")]
pub mod graphql;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "har")]
pub mod har;
pub mod http;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod rest;
pub mod sse;
#[cfg(feature = "ws")]
pub mod ws;
