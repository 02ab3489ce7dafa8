//! Layers 3 and 4, what a handler is made of: resolvers and what they
//! return, chaos (faults and latency), contracts an answer is checked against, expected call counts,
//! per-scope values, and the type-erased [`Handler`](handler::Handler) every
//! namespace builds. The predicates a handler matches with are `matching`,
//! the layer below.

pub mod chaos;
pub mod contract;
pub mod handler;
pub mod resolver;
pub mod scenario;
pub(crate) mod scope_local;
pub(crate) mod times;
pub mod webhook;
