//! Layer 1, the messages: the intercepted request (its body, cookies,
//! form data, path parameters) and what a resolver answers with (a buffered
//! or streamed body, a delay, a fault, cleanup after it, a WebSocket
//! upgrade, the real request performed with `bypass`). Nothing here knows
//! of handlers or scopes.

pub(crate) mod body;
pub(crate) mod bypass;
pub(crate) mod cookies;
pub(crate) mod delay;
pub mod exchange;
#[cfg(all(feature = "fake", not(target_arch = "wasm32")))]
pub mod fake;
pub(crate) mod fault;
pub(crate) mod finalize;
pub(crate) mod form_data;
pub(crate) mod incoming;
pub(crate) mod params;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod rpc;
#[cfg(feature = "ws")]
pub(crate) mod upgrade;
