//! The `mocklib` command.
//!
//! - `mocklib init <public-dir>` writes the browser Service Worker script
//!   (`mocklib-worker.js`) of this mocklib version into your app's public
//!   folder.
//! - `mocklib serve ...` (feature `cli`) starts the loopback listener
//!   answering from HAR files and handler files, for test suites in any
//!   language (see `serve.rs` and the README's "mocklib serve: for any
//!   language").
//!
//! ```text
//! cargo install mocklib                 # mocklib init
//! cargo install mocklib --features cli  # mocklib init and mocklib serve
//! mocklib init public
//! ```

use std::process::ExitCode;

#[cfg(feature = "cli")]
mod handler_file;
#[cfg(feature = "cli")]
mod serve;

const USAGE: &str = "usage: mocklib init <public-dir>
       mocklib serve [options]   (mocklib serve --help)

mocklib init writes mocklib-worker.js, the Service Worker of mocklib's
browser entry point (mocklib::browser::setup_worker), into <public-dir>: the
folder your app's web server serves at its root (Trunk: the folder of
index.html or its copy-dir; Leptos: public/; Dioxus: assets/).

mocklib serve starts a mock server and proxy answering from HAR files and
handler files, for test suites in any language (cargo feature `cli`).";

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
        ["serve", ..] => serve_command(&args[1..]),
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

#[cfg(feature = "cli")]
fn serve_command(args: &[String]) -> ExitCode {
    serve::main(args)
}

/// Without the feature the command still installs (for `init`), so say how
/// to get `serve` rather than printing the usage.
#[cfg(not(feature = "cli"))]
fn serve_command(_args: &[String]) -> ExitCode {
    eprintln!(
        "mocklib: this mocklib command was built without `serve`; install it with\n    cargo install mocklib --features cli"
    );
    ExitCode::from(2)
}
