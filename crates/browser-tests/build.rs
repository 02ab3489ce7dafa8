//! The wasm-bindgen test runner serves files from this crate's folder, so
//! the worker script written here is the page's `/mocklib-worker.js`, exactly
//! as an app's build script would install it.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    mocklib::browser::write_worker_script(dir).expect("write mocklib-worker.js");
    println!("cargo::rerun-if-changed=build.rs");
}
