//! What the benchmarks that compare cases by their latency percentiles share.
#![allow(dead_code)] // each bench uses a different subset

use std::time::Duration;

/// Runs `future` on a tokio multi-thread runtime with 2 workers, as the
/// listener's shared runtime has (the machine has 2 cores).
pub fn run<F: std::future::Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// Starts a bare server with `start` (its URL) on a runtime of its own, as
/// mocklib's listener has one, then runs `cases` with that URL on the
/// client's runtime ([`run`]).
pub fn run_beside_own<S, C, F>(start: S, cases: C) -> F::Output
where
    S: std::future::Future<Output = String>,
    C: FnOnce(String) -> F,
    F: std::future::Future,
{
    let own = runtime();
    let url = own.block_on(start);
    let output = run(cases(url));
    own.shutdown_background();
    output
}

/// A tokio multi-thread runtime with 2 workers, as mocklib's listener has:
/// the client's, or a bare server's own.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The `p` percentile (0.0–1.0) of `sorted`.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// `duration` in microseconds, one decimal.
pub fn micros(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}

/// A markdown table of each case's median, p10, p90 and p99: `times[i]`
/// (sorted) are the times of the case named `names[i]`.
pub fn print_percentiles<'a>(names: impl IntoIterator<Item = &'a str>, times: &[Vec<Duration>]) {
    println!("| case | median | p10 | p90 | p99 |");
    println!("|---|---|---|---|---|");
    for (name, times) in names.into_iter().zip(times) {
        println!(
            "| {name} | {} | {} | {} | {} |",
            micros(percentile(times, 0.5)),
            micros(percentile(times, 0.1)),
            micros(percentile(times, 0.9)),
            micros(percentile(times, 0.99)),
        );
    }
}

/// `request` run `warmup` times untimed, then timed `samples` times one by
/// one; the times, sorted.
pub async fn timed<F, Fut>(warmup: usize, samples: usize, mut request: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..warmup {
        request().await;
    }
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = std::time::Instant::now();
        request().await;
        times.push(started.elapsed());
    }
    times.sort_unstable();
    times
}
