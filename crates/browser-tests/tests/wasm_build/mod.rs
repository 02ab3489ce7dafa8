//! Building an example app for wasm32 as the end-to-end tests need it: in
//! one target directory shared by both apps (their common dependencies
//! compile once), unoptimized, then through the wasm-bindgen CLI.
#![allow(dead_code)] // each test uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target directory of the example apps' wasm32 builds: beside the
/// workspace's (the outer `cargo test` holds that one's lock while the tests
/// run), shared by both apps.
pub fn target_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        workspace_root().join(target)
    };
    target.join("example-apps")
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `cargo build --release` of `package` for wasm32 in [`target_dir`],
/// unoptimized: what a release build means to these tests is its cfg (no
/// debug assertions), not its optimizer, and unoptimized the first build
/// costs a fresh machine about a third less CPU. `config`: more `--config`
/// values. Returns the folder of the `.wasm` it built.
pub fn cargo_build(package: &str, config: &[&str]) -> PathBuf {
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(workspace_root())
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .args(["-p", package, "--target-dir"])
        .arg(target_dir())
        .args(["--config", "profile.release.opt-level=0"]);
    for value in config {
        cargo.args(["--config", value]);
    }
    run(&mut cargo, &format!("building {package} for wasm32"));
    target_dir().join("wasm32-unknown-unknown/release")
}

/// `wasm-bindgen --target web` of `wasm` into `out_dir`.
pub fn bindgen(wasm: &Path, out_dir: &Path) {
    let mut bindgen = Command::new("wasm-bindgen");
    bindgen
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(out_dir)
        .arg(wasm);
    run(
        &mut bindgen,
        "wasm-bindgen (the CLI: ./scripts/test installs it)",
    );
}

/// Runs `command`, failing with its standard error.
pub fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
