//! The tests of the `mocklib` command, one binary: each file of this folder
//! is a module (`cargo test -p mocklib-cli -- serve::` runs one). They run
//! the built command as a child process, so nothing of theirs needs a
//! process of its own; one binary links the test kit once instead of seven
//! times.

mod callbacks;
mod chaos;
mod check;
mod cli;
mod common;
mod fault_entries;
mod graphql_entries;
mod hostile_args;
mod page;
mod proxy_entries;
mod scenarios;
mod schema;
mod scopes;
mod serve;
mod sse_entries;
mod webhooks;
mod ws_entries;
