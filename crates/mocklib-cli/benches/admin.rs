//! `mocklib serve` at runtime, measured (issue 24, goal 5): requests keep
//! their latency while a test changes handlers a hundred times a second,
//! and a thousand open scopes cost little memory and leave lookup flat.
//!
//! The release `mocklib` binary as a child process, loaded by 8 threads on
//! keep-alive connections (a plain HTTP/1.1 client, so the client's own
//! cost stays small and fixed). Prints a table and a PASS/FAIL line per
//! goal.
//!
//! `cargo bench -p mocklib-cli --bench admin`

mod common;

use std::time::{Duration, Instant};

use common::{CONNECTIONS, Client, Serve, load, micros, verdict};
/// How long each measured phase loads the server.
const PHASE: Duration = Duration::from_secs(5);
/// Scopes opened for the memory and lookup measure.
const SCOPES: usize = 1000;

fn main() {
    let dir = std::env::temp_dir().join(format!("mocklib-admin-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("handlers.yaml"),
        "- method: GET\n  path: /user\n  body: John\n",
    )
    .unwrap();
    let mut serve = Serve::start(&dir);
    let origin = serve.origin.clone();
    println!(
        "mocklib serve (release), {CONNECTIONS} keep-alive connections of a plain HTTP/1.1 client, {}s per phase, on {} CPUs",
        PHASE.as_secs(),
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!();

    // Warm up, then the unchanged run.
    let _ = load(&origin, "/user", Duration::from_secs(1), None);
    let quiet = load(&origin, "/user", PHASE, None);
    // The same load while another client adds a handler and removes it
    // again, a hundred changes a second, on the list every request reads.
    let changing = load(&origin, "/user", PHASE, Some(&origin));

    let rss_before = serve.rss_kib();
    let mut scopes = Vec::with_capacity(SCOPES);
    let opening = Instant::now();
    let mut admin = Client::connect(&origin);
    for _ in 0..SCOPES {
        let (status, body) = admin.send("POST", "/__mocklib/scopes", "");
        assert_eq!(status, 201, "{body}");
        let url = body
            .split("\"url\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the scope's url")
            .to_owned();
        scopes.push(url);
    }
    let opened_in = opening.elapsed();
    let rss_after = serve.rss_kib();
    let with_scopes = load(&origin, "/user", PHASE, None);
    let in_a_scope = load(&scopes[SCOPES / 2], "/user", PHASE, None);

    println!("| run | requests/s | p50 | p99 | max |");
    println!("|---|---|---|---|---|");
    for (name, run) in [
        ("unchanged", &quiet),
        ("100 handler changes/s at the root", &changing),
        (&*format!("{SCOPES} scopes open, at the root"), &with_scopes),
        (
            &*format!("{SCOPES} scopes open, in one of them"),
            &in_a_scope,
        ),
    ] {
        println!(
            "| {name} | {:.0} | {} | {} | {} |",
            run.rate,
            micros(run.p50),
            micros(run.p99),
            micros(run.max)
        );
    }
    println!();
    println!(
        "{} handler changes made during the changing run ({:.0}/s)",
        changing.changes,
        changing.changes as f64 / PHASE.as_secs_f64()
    );
    let grown_mib = (rss_after.saturating_sub(rss_before)) as f64 / 1024.0;
    println!(
        "resident memory: {:.1} MiB before, {:.1} MiB with {SCOPES} scopes open (+{grown_mib:.1} MiB, {:.1} KiB a scope); opened in {:.2} s",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / SCOPES as f64,
        opened_in.as_secs_f64()
    );
    println!();

    let stall = changing.p99.as_secs_f64() / quiet.p99.as_secs_f64();
    verdict(
        stall <= 2.0 && changing.changes as f64 >= 90.0 * PHASE.as_secs_f64(),
        &format!("100 handler changes/s keep p99 ≤ 2× the unchanged run ({stall:.2}×)"),
    );
    verdict(
        grown_mib <= 50.0,
        &format!("{SCOPES} open scopes cost ≤ 50 MiB resident ({grown_mib:.1} MiB)"),
    );
    let flat = with_scopes.p50.as_secs_f64() / quiet.p50.as_secs_f64();
    let flat_scope = in_a_scope.p50.as_secs_f64() / quiet.p50.as_secs_f64();
    verdict(
        flat <= 1.15 && flat_scope <= 1.15,
        &format!(
            "lookup stays flat with {SCOPES} scopes open: p50 {flat:.2}× at the root, {flat_scope:.2}× in a scope (≤ 1.15×)"
        ),
    );
    drop(admin);
    serve.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
