//! Chaos as `mocklib serve --chaos FILE` writes it (YAML or JSON): faults
//! on a share of the requests and latency before the others, for every
//! handler of the files and the admin API — the library's
//! [`Chaos`](mocklib::chaos::Chaos) (`Chaos::around(handlers)` in Rust).
//!
//! ```yaml
//! fault_rate: 0.05            # one request in twenty...
//! fault: connection_reset     # ...gets this (the default); or empty_response,
//!                             # garbage, malformed_chunk
//! latency:                    # before every other answer
//!   lognormal: { median_ms: 80, sigma: 0.6 }   # or uniform: { min_ms, max_ms }
//! seed: 1234                  # optional: the run to replay
//! ```
//!
//! Without a seed (in the file or `--chaos-seed N`) one is chosen and
//! printed on standard error; give it back to replay the same faults and
//! waits in the same order.

use std::path::Path;
use std::time::Duration;

use mocklib::Fault;

use crate::fault_entry::fault_named;
use mocklib::chaos::{Chaos, Latency};

/// The file's fields (an entry's `chaos:` has the same).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChaosSpec {
    fault_rate: Option<f64>,
    fault: Option<String>,
    latency: Option<LatencySpec>,
    seed: Option<u64>,
}

/// `latency:`, one of two shapes (a struct of two options: YAML writes an
/// enum as a tag, and a file writes `uniform:`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LatencySpec {
    uniform: Option<Uniform>,
    lognormal: Option<LogNormal>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Uniform {
    min_ms: u64,
    max_ms: u64,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LogNormal {
    median_ms: u64,
    sigma: f64,
}

impl ChaosSpec {
    /// The chaos this spec says, seeded by `seed` when given (it wins over
    /// the spec's own), else by the spec's, else at random.
    pub(crate) fn chaos(&self, seed: Option<u64>) -> Result<Chaos, String> {
        if self.fault_rate.is_none() && self.fault.is_some() {
            return Err("fault: needs fault_rate (the share of requests that get it)".to_owned());
        }
        let mut chaos = Chaos::new();
        if let Some(rate) = self.fault_rate {
            if !(0.0..=1.0).contains(&rate) {
                return Err(format!("fault_rate: {rate} is not a share from 0 to 1"));
            }
            let fault = match &self.fault {
                Some(name) => fault_named(name).map_err(|why| format!("fault: {why}"))?,
                None => Fault::ConnectionReset,
            };
            chaos = chaos.fault_rate(rate, fault);
        }
        let latency = self
            .latency
            .as_ref()
            .map(|latency| (latency.uniform.as_ref(), latency.lognormal.as_ref()));
        match latency {
            Some((Some(_), Some(_)) | (None, None)) => {
                return Err("latency: give uniform or lognormal, one of them".to_owned());
            }
            Some((Some(&Uniform { min_ms, max_ms }), None)) => {
                if min_ms > max_ms {
                    return Err(format!(
                        "latency.uniform: min_ms {min_ms} is above max_ms {max_ms}"
                    ));
                }
                chaos = chaos.latency(Latency::uniform(
                    Duration::from_millis(min_ms),
                    Duration::from_millis(max_ms),
                ));
            }
            Some((None, Some(&LogNormal { median_ms, sigma }))) => {
                if !(sigma.is_finite() && sigma >= 0.0) {
                    return Err(format!(
                        "latency.lognormal.sigma: {sigma} is not a number from 0 up"
                    ));
                }
                chaos = chaos.latency(Latency::log_normal(Duration::from_millis(median_ms), sigma));
            }
            None => {}
        }
        Ok(match seed.or(self.seed) {
            Some(seed) => chaos.with_seed(seed),
            None => chaos,
        })
    }
}

/// The chaos of the file at `path`, seeded by `seed` when given.
pub(crate) fn load(path: &Path, seed: Option<u64>) -> Result<Chaos, String> {
    let text =
        std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let spec: ChaosSpec =
        serde_norway::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
    spec.chaos(seed)
        .map_err(|why| format!("{}: {why}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> Result<Chaos, String> {
        let spec: ChaosSpec = serde_norway::from_str(yaml).map_err(|error| error.to_string())?;
        spec.chaos(None)
    }

    #[test]
    fn a_spec_becomes_its_chaos_and_a_given_seed_wins() {
        let chaos = spec("fault_rate: 0.5\nfault: garbage\nlatency: { uniform: { min_ms: 1, max_ms: 2 } }\nseed: 9\n").unwrap();
        assert_eq!(chaos.seed(), 9);
        let file: ChaosSpec = serde_norway::from_str("seed: 9\n").unwrap();
        assert_eq!(file.chaos(Some(10)).unwrap().seed(), 10);
    }

    #[test]
    fn a_wrong_field_says_which_and_why() {
        let cases = [
            (
                "fault_rate: 1.5\n",
                "fault_rate: 1.5 is not a share from 0 to 1",
            ),
            ("fault: garbage\n", "fault: needs fault_rate"),
            (
                "fault_rate: 0.1\nfault: boom\n",
                "fault: unknown fault \"boom\": connection_reset",
            ),
            (
                "latency: { uniform: { min_ms: 5, max_ms: 1 } }\n",
                "latency.uniform: min_ms 5 is above max_ms 1",
            ),
            (
                "latency: { lognormal: { median_ms: 5, sigma: -1 } }\n",
                "latency.lognormal.sigma: -1",
            ),
            ("fault_rat: 0.1\n", "unknown field `fault_rat`"),
            (
                "latency: {}\n",
                "latency: give uniform or lognormal, one of them",
            ),
        ];
        for (yaml, expected) in cases {
            let error = spec(yaml).unwrap_err();
            assert!(error.contains(expected), "{yaml}: {error}");
        }
    }
}
