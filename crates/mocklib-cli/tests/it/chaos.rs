//! `mocklib serve --chaos FILE` (issue 40): faults on a share of the
//! requests, for the files' handlers and those the admin API adds, with a
//! seed printed on standard error that `--chaos-seed` takes back to replay
//! the run.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::common::{Serve, post_yaml};

/// Whether `GET path` on a connection of its own got no answer (the chaos
/// fault `empty_response`); an answer must be the handler's.
fn failed(serve: &Serve, path: &str) -> bool {
    let host = serve.url().trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    if answer.is_empty() {
        return true;
    }
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("John"),
        "{answer}"
    );
    false
}

/// A server with `--chaos` (and `extra` arguments) in a folder of its own,
/// its handler file answering `/user`.
fn serve_with_chaos(extra: &[&str]) -> (tempfile::TempDir, Serve) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("handlers.yaml"),
        "- path: /user\n  body: John\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("chaos.yaml"),
        "fault_rate: 0.3\nfault: empty_response\n",
    )
    .unwrap();
    let mut args = vec!["--handlers", "handlers.yaml", "--chaos", "chaos.yaml"];
    args.extend_from_slice(extra);
    let serve = Serve::start(dir.path(), &args);
    (dir, serve)
}

/// The seed the server printed.
fn printed_seed(serve: &Serve) -> String {
    let stderr = serve.stderr();
    stderr
        .split("chaos seed ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no seed printed: {stderr}"))
        .to_owned()
}

#[test]
fn a_printed_chaos_seed_replays_the_same_failures() {
    let (_dir, first) = serve_with_chaos(&[]);
    let seed = printed_seed(&first);
    assert!(
        first
            .stderr()
            .contains(&format!("replay this run with --chaos-seed {seed}"))
    );
    let pattern: Vec<bool> = (0..300).map(|_| failed(&first, "/user")).collect();
    let failures = pattern.iter().filter(|failed| **failed).count();
    // 90 expected; three standard deviations of a binomial count: ±24.
    assert!((66..=114).contains(&failures), "{failures} of 300 at 0.3");

    let (_dir, replay) = serve_with_chaos(&["--chaos-seed", &seed]);
    assert_eq!(printed_seed(&replay), seed);
    let replayed: Vec<bool> = (0..300).map(|_| failed(&replay, "/user")).collect();
    assert_eq!(
        pattern, replayed,
        "seed {seed} replays the same requests failing"
    );
}

#[test]
fn handlers_added_through_the_admin_api_get_the_chaos_too() {
    let (_dir, serve) = serve_with_chaos(&["--chaos-seed", "5"]);
    let (status, body) = post_yaml(
        &format!("{}/__mocklib/handlers", serve.url()),
        "- path: /added\n  body: John\n",
    );
    assert_eq!(status, 201, "{body}");
    let failures = (0..200).filter(|_| failed(&serve, "/added")).count();
    assert!((36..=84).contains(&failures), "{failures} of 200 at 0.3");
    // The admin API itself is not chaotic.
    for _ in 0..50 {
        let (status, _) = crate::common::get(&format!("{}/__mocklib/requests", serve.url()));
        assert_eq!(status, 200);
    }
}

#[test]
fn a_wrong_chaos_file_fails_the_start_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chaos.yaml"), "fault_rate: 2\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args(["serve", "--chaos", "chaos.yaml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("chaos.yaml: fault_rate: 2 is not a share from 0 to 1"),
        "{stderr}"
    );
}

#[test]
fn the_readme_chaos_file_starts_the_command() {
    let readme = include_str!("../../README.md");
    let block = readme
        .split("```yaml chaos\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README has a `yaml chaos` block");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chaos.yaml"), block).unwrap();
    let serve = Serve::start(dir.path(), &["--chaos", "chaos.yaml", "--chaos-seed", "1"]);
    assert!(
        serve.stderr().contains("chaos seed 1 "),
        "{}",
        serve.stderr()
    );
}
