//! Extending mocklib from outside, on its public surface alone:
//!
//! - [`jsonrpc`]: a new kind of handler, JSON-RPC 2.0 methods matched by the
//!   `method` of a POST body. It keeps its per-request parse in the lookup's
//!   state and lets the handler index find its handlers by method name, so
//!   a thousand methods cost a lookup what one does.
//! - [`ureq_door`]: a new front door, a `ureq` 3 middleware that hands each
//!   request to mocklib and performs the rest for real (recording them when
//!   a recorder is set).
//!
//! Both are ordinary mocklib citizens: handlers in the same list as `http`
//! ones (boundaries, `once`, `times`/`verify`, the journal), and a front
//! door with the same semantics as the built-in ones.

pub mod jsonrpc;
pub mod ureq_door;
