//! The `mocklib` command installs the browser worker script.

use std::process::Command;

#[test]
fn init_writes_the_worker_script_into_the_public_folder() {
    let dir = tempfile::tempdir().unwrap();
    let public = dir.path().join("public");
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args(["init", public.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let written = std::fs::read_to_string(public.join("mocklib-worker.js")).unwrap();
    assert_eq!(written, mocklib::browser::WORKER_SCRIPT);
    assert!(String::from_utf8_lossy(&output.stdout).contains("mocklib-worker.js"));
}

#[test]
fn a_wrong_invocation_prints_the_usage_and_fails() {
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .arg("inti")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("usage: mocklib init <public-dir>"));
}
