//! Mocked `fetch` round trips in headless Chromium, both interception modes,
//! against a real `fetch` of a small file from the runner's loopback server
//! in the same run. Run with `./scripts/bench` (or, from this folder,
//! `cargo test --release --target wasm32-unknown-unknown --bench fetch`:
//! run as a test, since the runner's `--bench` mode expects Criterion
//! benches); it prints medians and ratios for docs/BENCHMARKS.md.
#![cfg(target_arch = "wasm32")]

use mocklib::browser::{Mode, StartOptions, setup_worker};
use mocklib::{HttpResponse, http};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const ROUNDS: usize = 2_000;
const WARM_UP: usize = 200;

#[wasm_bindgen(inline_js = r#"
export async function timeFetches(url, rounds) {
  const samples = new Float64Array(rounds);
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    samples[i] = performance.now() - start;
  }
  return samples;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = timeFetches)]
    fn time_fetches(url: &str, rounds: usize) -> js_sys::Promise;
}

/// Median and 90th percentile in microseconds of `rounds` sequential fetches.
async fn measure(url: &str) -> (f64, f64) {
    JsFuture::from(time_fetches(url, WARM_UP)).await.unwrap();
    let samples = JsFuture::from(time_fetches(url, ROUNDS)).await.unwrap();
    let mut samples = js_sys::Float64Array::new(&samples).to_vec();
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize] * 1000.0;
    (at(0.5), at(0.9))
}

fn report(name: &str, (median, p90): (f64, f64), real: f64) {
    console_log!(
        "bench browser_fetch/{name}: median {median:.1} µs, p90 {p90:.1} µs, {:.3}x a real loopback fetch",
        median / real
    );
}

#[wasm_bindgen_test]
async fn mocked_fetch_round_trip() {
    // Reference: the runner's own server, for real, in this browser.
    let real = measure("/Cargo.toml").await;
    console_log!(
        "bench browser_fetch/real_loopback_fetch: median {:.1} µs, p90 {:.1} µs",
        real.0,
        real.1
    );
    let handlers = || {
        [http::get("/api/user", |_| {
            HttpResponse::json(&serde_json::json!({ "name": "John" }))
        })]
    };
    for mode in [Mode::Fallback, Mode::ServiceWorker] {
        let worker = setup_worker(handlers());
        let options = StartOptions {
            mode: Some(mode),
            quiet: true,
            ..StartOptions::default()
        };
        assert_eq!(worker.start_with(options).await, Ok(mode));
        let name = match mode {
            Mode::Fallback => "fallback_mode",
            Mode::ServiceWorker => "service_worker_mode",
        };
        report(name, measure("/api/user").await, real.0);
        worker.stop();
    }
}
