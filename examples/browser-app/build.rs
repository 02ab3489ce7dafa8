//! An app keeps the worker script in step with its mocklib version by
//! writing it from its build script into the folder it serves.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    mocklib::browser::write_worker_script(dir).expect("write mocklib-worker.js");
    println!("cargo::rerun-if-changed=build.rs");
}
