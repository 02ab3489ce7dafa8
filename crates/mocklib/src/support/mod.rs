//! Layer 0, support: plumbing any layer may use and none depends on for
//! meaning — messages for the developer (through `tracing`), the `Send`
//! bound that the browser drops, base64 and HTTP dates without a library.
//! docs/ARCHITECTURE.md has the layer table `scripts/check-layers` enforces.

pub(crate) mod base64;
#[cfg(any(
    all(feature = "net", not(target_arch = "wasm32")),
    feature = "har",
    feature = "openapi",
    all(feature = "fake", not(target_arch = "wasm32"))
))]
pub(crate) mod date;
pub(crate) mod log;
pub(crate) mod maybe_send;
