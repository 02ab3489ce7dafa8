//! Nothing here: this package holds mocklib's integration tests (`tests/`),
//! its benchmarks against peer libraries (`benches/`) and their
//! dev-dependencies, so that the library package compiles only what its
//! examples and doctests use. See CONTRIBUTING.md for the commands.
