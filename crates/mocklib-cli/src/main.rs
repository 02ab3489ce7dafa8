//! The `mocklib` command.
//!
//! - `mocklib init <public-dir>` writes the browser Service Worker script
//!   (`mocklib-worker.js`) of this mocklib version into your app's public
//!   folder.
//! - `mocklib serve ...` starts the loopback listener answering from HAR
//!   files, OpenAPI documents and handler files (gRPC methods too, with
//!   `.proto` files), for test suites in any language (see `serve.rs` and
//!   this package's README.md).
//! - `mocklib check --har FILE --against URL` sends a recording's requests
//!   to the live API and reports how the answers drifted (see `check.rs`).
//!
//! ```text
//! cargo install mocklib-cli
//! mocklib init public
//! ```
//!
//! It uses the library's public API only, like any other crate would.

use std::process::ExitCode;

mod admin;
mod args;
mod base64;
mod behaviour;
mod callback_entry;
mod chaos_spec;
mod check;
mod entry_parts;
mod fake_data;
mod fault_entry;
mod graphql_entry;
mod grpc_entry;
mod handler_file;
mod holds;
mod lock;
mod proto;
mod proxy_entry;
mod reflection;
mod resource_entry;
mod serve;
mod sse_entry;
mod stamp;
mod template;
mod webhook_spec;
mod ws_entry;

const USAGE: &str = "usage: mocklib init <public-dir>
       mocklib serve [options]   (mocklib serve --help)
       mocklib check --har FILE --against URL [options]   (mocklib check --help)

mocklib init writes mocklib-worker.js, the Service Worker of mocklib's
browser entry point (mocklib::browser::setup_worker), into <public-dir>: the
folder your app's web server serves at its root (Trunk: the folder of
index.html or its copy-dir; Leptos: public/; Dioxus: assets/).

mocklib serve starts a mock server and proxy answering from HAR files,
OpenAPI documents and handler files (HTTP, and gRPC with .proto files), for
test suites in any language.

mocklib check sends the requests of a HAR file again, to the live API, and
reports per entry how the answers differ from the recorded ones (status,
content type, the shape of JSON bodies); exit status 1 on drift.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["init", public_dir] => match mocklib::browser::write_worker_script(public_dir) {
            Ok(path) => {
                println!(
                    "wrote {} (mocklib {})",
                    path.display(),
                    env!("CARGO_PKG_VERSION")
                );
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("mocklib: could not write the worker script into {public_dir}: {error}");
                ExitCode::FAILURE
            }
        },
        ["serve", ..] => serve::main(&args[1..]),
        ["check", ..] => check::main(&args[1..]),
        ["--help" | "-h" | "help"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
