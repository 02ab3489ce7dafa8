//! `mocklib serve` with arbitrary argument lists (issue 27, part 2): an
//! invalid list exits with code 2 and the usage, a failing start exits
//! with 1 and says why, a valid one serves; none panics.
//!
//! Each case runs the built command, so the case count is low; it is
//! seeded and reproducible. `MOCKLIB_PROPTEST_CASES` and
//! `MOCKLIB_PROPTEST_SEED` change both for longer runs
//! (docs/RELIABILITY.md). The command runs in a temporary folder, and no
//! generated argument has a `/`, so whatever it writes stays there.

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

/// Hang guard: how long a case may take to exit or to start serving.
const DEADLINE: Duration = Duration::from_secs(20);

const HAR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../mocklib-tests/tests/fixtures/har/api.har"
);

fn argument() -> impl Strategy<Value = String> {
    let flag = prop::sample::select(vec![
        "--handlers",
        "--har",
        "--openapi",
        "--record",
        "--record-mode",
        "--port",
        "--ca-out",
        "--env-out",
        "--unhandled",
        "--until-stdin-closes",
        "--journal-capacity",
        "--help",
        "-h",
        "--port=",
        "--unhandled=error",
        "--record-mode=all",
        "--",
        "-",
        "--HANDLERS",
        "--port=99999",
        "--port=-1",
        "--har=",
        "serve",
        "init",
        "--until-stdin-closes=yes",
        "--har=api.har",
        "--handlers=h.yaml",
        "--=",
        "-p",
    ]);
    let value = prop::sample::select(vec![
        "once",
        "new_episodes",
        "none",
        "all",
        "warn",
        "error",
        "bypass",
        "0",
        "65536",
        "abc",
        "",
        " ",
        "api.har",
        "h.yaml",
        "bad.yaml",
        "h.json",
        "missing.har",
        "out.har",
        "ca.pem",
        "env.sh",
        ".",
        "..",
        "\u{e9}",
        "=",
        "==",
    ]);
    prop_oneof![
        4 => flag.prop_map(String::from),
        3 => value.prop_map(String::from),
        1 => "[a-zA-Z0-9._= -]{0,12}",
        1 => "[^/\\x00]{0,12}",
    ]
}

/// How one run of `mocklib serve` ended.
#[derive(Debug)]
struct Run {
    /// The exit code, or `None` when it was serving and this test stopped it.
    code: Option<i32>,
    serving: bool,
    stderr: String,
}

fn run(dir: &std::path::Path, args: &[String]) -> Result<Run, TestCaseError> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .arg("serve")
        .args(args)
        .current_dir(dir)
        // Closed at once: `--until-stdin-closes` ends the server right away.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mocklib command runs");
    // It serves once it has printed its variables and an empty line.
    let (served, serving) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            match line {
                Ok(line) if line.is_empty() => {
                    let _ = served.send(());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let mut was_serving = false;
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        was_serving |= serving.try_recv().is_ok();
        if was_serving {
            // A valid invocation without `--until-stdin-closes`: it serves
            // until stopped.
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            return Err(TestCaseError::fail(format!(
                "neither exited nor served within {DEADLINE:?}; stderr: {}",
                errors.join().unwrap()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Its output read to the end first (the pipe closes when it ends): a
    // run that served and then exited at once must not race the reader.
    let _ = reader.join();
    was_serving |= serving.try_recv().is_ok();
    Ok(Run {
        code,
        serving: was_serving,
        stderr: errors.join().unwrap(),
    })
}

#[test]
fn any_arguments_to_serve_exit_with_a_usage_or_an_error_or_serve_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(HAR, dir.path().join("api.har")).unwrap();
    std::fs::write(dir.path().join("h.yaml"), "- path: /hello\n  body: hi\n").unwrap();
    std::fs::write(
        dir.path().join("h.json"),
        r#"[{"path": "/hello", "json": {"a": 1}}]"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "- path: [\n").unwrap();

    let config = test_support::proptest_config(128, 64);
    let (cases, seed) = (config.cases, config.rng_seed);
    // Most lists end with `--until-stdin-closes`, so a valid one stops by
    // itself; the rest are stopped once serving.
    let strategy = (
        proptest::collection::vec(argument(), 0..6),
        prop_oneof![3 => Just(true), 1 => Just(false)],
    );
    let (usage, failed, served) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let started = Instant::now();
    let result = TestRunner::new(config).run(&strategy, |(mut args, stop_with_stdin)| {
        if stop_with_stdin {
            args.push("--until-stdin-closes".to_owned());
        }
        let run = run(dir.path(), &args)?;
        prop_assert!(!run.stderr.contains("panicked at"), "{:?}", run);
        match run.code {
            Some(2) => {
                usage.set(usage.get() + 1);
                prop_assert!(run.stderr.contains("usage: mocklib serve"), "{:?}", run);
                // The line before the usage says what is wrong.
                prop_assert!(run.stderr.starts_with("mocklib serve: "), "{:?}", run);
            }
            Some(1) => {
                failed.set(failed.get() + 1);
                prop_assert!(run.stderr.starts_with("mocklib serve: "), "{:?}", run);
            }
            Some(0) => {
                served.set(served.get() + 1);
                // `--help`, or served until stdin closed.
                let help = args.iter().any(|arg| arg == "--help" || arg == "-h");
                prop_assert!(help || run.serving, "exited 0 without serving: {:?}", run);
            }
            None => {
                served.set(served.get() + 1);
                prop_assert!(run.serving);
            }
            Some(other) => prop_assert!(false, "exit code {}: {:?}", other, run),
        }
        Ok(())
    });
    let (usage, failed, served) = (usage.get(), failed.get(), served.get());
    println!(
        "property serve_arguments: {cases} cases, seed {seed}, {:.2?}: {usage} usage, {failed} failed to start, {served} served or helped",
        started.elapsed()
    );
    if let Err(error) = result {
        panic!("serve_arguments (seed {seed}, {cases} cases): {error}");
    }
    if cases >= 32 {
        assert!(
            usage > 0 && served > 0,
            "the run reached usage errors and served"
        );
    }
}
