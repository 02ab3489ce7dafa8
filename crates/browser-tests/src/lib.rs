//! Nothing here: the tests live in `tests/` and run in headless Chromium
//! (`./scripts/test` runs them; see `tests/common/mod.rs`).
