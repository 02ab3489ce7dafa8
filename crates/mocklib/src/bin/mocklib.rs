//! The `mocklib` command: `mocklib init <public-dir>` writes the browser
//! Service Worker script (`mocklib-worker.js`) of this mocklib version into
//! your app's public folder.
//!
//! ```text
//! cargo install mocklib
//! mocklib init public
//! ```

use std::process::ExitCode;

const USAGE: &str = "usage: mocklib init <public-dir>

Writes mocklib-worker.js, the Service Worker of mocklib's browser entry point
(mocklib::browser::setup_worker), into <public-dir>: the folder your app's
web server serves at its root (Trunk: the folder of index.html or its
copy-dir; Leptos: public/; Dioxus: assets/).";

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
