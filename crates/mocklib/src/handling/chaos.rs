//! Chaos: a [`Fault`] on a share of the requests a handler answers, and
//! random latency before the others — seeded, so that a run that failed
//! replays exactly (WireMock's random delays, Hoverfly's
//! `delaysLogNormal`).
//!
//! ```
//! use std::time::Duration;
//! use mocklib::chaos::{Chaos, Latency};
//! use mocklib::{http, Fault, HttpResponse};
//!
//! let chaos = Chaos::new()
//!     .fault_rate(0.1, Fault::ConnectionReset)
//!     .latency(Latency::log_normal(Duration::from_millis(40), 0.5))
//!     .with_seed(7);
//! // One handler:
//! let user = http::get("https://api.example.com/user", |_| HttpResponse::text("John")).chaos(&chaos);
//! // Every handler of a server (`mocklib serve --chaos FILE` does this):
//! let handlers = chaos.around([user, http::get("https://api.example.com/orders", |_| HttpResponse::json(&[1, 2]))]);
//! # let _ = handlers;
//! ```
//!
//! **Replaying.** Each request a chaotic handler matches draws the next
//! number of a sequence that the seed decides: the nth request gets the
//! same fault or latency in every run with that seed (requests made one
//! after the other arrive in the same order; concurrent ones may not). A
//! `Chaos` made without [`with_seed`](Chaos::with_seed) picks a random
//! seed and logs it (`tracing`, at `info`): give it back to replay. Clones
//! of a `Chaos`, and the handlers made with it, share one sequence.
//!
//! A fault replaces the handler's answer (its resolver does not run); the
//! latency comes before the resolver runs, so it adds to any `delay` of
//! the resolver's own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::handling::handler::{Handler, Matched};
use crate::handling::resolver::{Resolution, ResolverCall};
use crate::message::fault::Fault;
use crate::message::response::HttpResponse;

/// Faults on a share of requests and random latency, seeded: see the
/// [module docs](self). Clones share the sequence of draws.
#[derive(Clone, Debug)]
pub struct Chaos {
    seed: u64,
    fault: Option<(f64, Fault)>,
    latency: Option<Latency>,
    /// How many requests drew from the sequence so far.
    drawn: Arc<AtomicU64>,
}

/// How long a chaotic handler waits before it answers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Latency {
    /// Any time from `min` to `max`, all equally likely.
    Uniform {
        /// The shortest wait.
        min: Duration,
        /// The longest wait.
        max: Duration,
    },
    /// A log-normal wait: half the requests wait less than `median`; the
    /// larger `sigma`, the longer the tail (0.25: mostly close to the
    /// median; 1.0: a few wait five times as long). Real services'
    /// latencies look like this.
    LogNormal {
        /// The median wait.
        median: Duration,
        /// The standard deviation of the wait's logarithm.
        sigma: f64,
    },
}

impl Latency {
    /// [`Latency::Uniform`] from `min` to `max` (in either order).
    pub fn uniform(min: Duration, max: Duration) -> Self {
        Latency::Uniform {
            min: min.min(max),
            max: max.max(min),
        }
    }

    /// [`Latency::LogNormal`] around `median`; a `sigma` below zero or not
    /// a number counts as zero (every wait is the median).
    pub fn log_normal(median: Duration, sigma: f64) -> Self {
        Latency::LogNormal {
            median,
            sigma: if sigma.is_finite() && sigma > 0.0 {
                sigma
            } else {
                0.0
            },
        }
    }

    /// The wait for uniform draws `u` and `v` (each in `0..1`).
    fn sample(self, u: f64, v: f64) -> Duration {
        match self {
            Latency::Uniform { min, max } => min + (max - min).mul_f64(u),
            Latency::LogNormal { median, sigma } => {
                // Box–Muller: a standard normal from two uniforms (1 - u
                // is in (0, 1], so its logarithm is finite).
                let normal = (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                // Capped, so that a far tail cannot overflow a Duration.
                let factor = (sigma * normal).exp().min(1e6);
                median.mul_f64(factor)
            }
        }
    }
}

/// What one request drew.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Draw {
    pub(crate) fault: Option<Fault>,
    pub(crate) latency: Option<Duration>,
}

impl Default for Chaos {
    fn default() -> Self {
        Chaos::new()
    }
}

impl Chaos {
    /// No faults, no latency (add them with [`fault_rate`](Self::fault_rate)
    /// and [`latency`](Self::latency)), and a random seed, logged.
    pub fn new() -> Self {
        let seed = random_seed();
        tracing::info!(
            seed,
            "mocklib chaos: seed {seed} (replay with Chaos::with_seed({seed}), or mocklib serve --chaos-seed {seed})"
        );
        Chaos {
            seed,
            fault: None,
            latency: None,
            drawn: Arc::default(),
        }
    }

    /// This chaos with `fault` on a share `rate` of the requests (`0.1`:
    /// one in ten), instead of the handler's answer. `rate` is clamped to
    /// `0..=1` (not a number: 0).
    pub fn fault_rate(self, rate: f64, fault: Fault) -> Self {
        let rate = if rate.is_nan() {
            0.0
        } else {
            rate.clamp(0.0, 1.0)
        };
        Chaos {
            fault: Some((rate, fault)),
            drawn: Arc::default(),
            ..self
        }
    }

    /// This chaos with `latency` before every answer.
    pub fn latency(self, latency: Latency) -> Self {
        Chaos {
            latency: Some(latency),
            drawn: Arc::default(),
            ..self
        }
    }

    /// This chaos with the sequence that `seed` decides: a run with the
    /// same seed draws the same faults and latencies.
    pub fn with_seed(self, seed: u64) -> Self {
        Chaos {
            seed,
            drawn: Arc::default(),
            ..self
        }
    }

    /// The seed: give it to [`with_seed`](Self::with_seed) to replay.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// `handlers`, each with this chaos (see [`Handler::chaos`]), sharing
    /// one sequence: chaos for a whole server.
    pub fn around(&self, handlers: impl IntoIterator<Item = Handler>) -> Vec<Handler> {
        handlers
            .into_iter()
            .map(|handler| handler.chaos(self))
            .collect()
    }

    /// The next request's draw.
    pub(crate) fn draw(&self) -> Draw {
        let n = self.drawn.fetch_add(1, Ordering::Relaxed);
        let unit = |k: u64| unit(mix(self.seed, n.wrapping_mul(3).wrapping_add(k)));
        let fault = self
            .fault
            .and_then(|(rate, fault)| (unit(0) < rate).then_some(fault));
        let latency = self.latency.map(|latency| latency.sample(unit(1), unit(2)));
        Draw { fault, latency }
    }

    /// The call of a matched handler under this chaos.
    fn call(
        &self,
        matched: Matched,
        context: crate::handling::resolver::CallContext,
    ) -> ResolverCall {
        let Draw { fault, latency } = self.draw();
        let Some(latency) = latency.filter(|latency| !latency.is_zero()) else {
            return match fault {
                Some(fault) => ResolverCall::ready(Resolution::Respond(HttpResponse::fault(fault))),
                None => matched.call(context),
            };
        };
        ResolverCall::pending(Box::pin(async move {
            crate::message::delay::delay(latency).await;
            match fault {
                Some(fault) => Resolution::Respond(HttpResponse::fault(fault)),
                None => matched.call(context).resolve().await,
            }
        }))
    }
}

impl Handler {
    /// This handler under `chaos`: a fault on a share of the requests it
    /// matches, latency before the others (see [`chaos`](crate::chaos)).
    /// Everything else — its match, `once`, `times`, its header in the
    /// journal and in `verify` — stays the handler's.
    pub fn chaos(self, chaos: &Chaos) -> Handler {
        let chaos = chaos.clone();
        self.around(move |_, matched| {
            let chaos = chaos.clone();
            Some(Matched::new(move |call| chaos.call(matched, call)))
        })
    }
}

/// SplitMix64 of `seed` and `n`: the nth number of the seed's sequence,
/// computed directly (no state to lock: concurrent requests each take an
/// `n` of their own).
fn mix(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A number in `0..1` from 53 bits of `bits`.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// A seed from the process's hasher keys, which std draws at random.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_sequence_and_another_seed_another() {
        let chaos = || {
            Chaos::new()
                .fault_rate(0.3, Fault::ConnectionReset)
                .latency(Latency::uniform(Duration::ZERO, Duration::from_millis(100)))
        };
        let draws = |chaos: Chaos| (0..100).map(|_| chaos.draw()).collect::<Vec<_>>();
        assert_eq!(draws(chaos().with_seed(42)), draws(chaos().with_seed(42)));
        assert_ne!(draws(chaos().with_seed(42)), draws(chaos().with_seed(43)));
        // Clones share the sequence: two handlers of one server draw in turn.
        let shared = chaos().with_seed(42);
        let clone = shared.clone();
        let one_sequence = draws(chaos().with_seed(42));
        assert_eq!(shared.draw(), one_sequence[0]);
        assert_eq!(clone.draw(), one_sequence[1]);
    }

    #[test]
    fn the_fault_rate_holds_over_ten_thousand_draws() {
        for (seed, rate) in [(1, 0.1), (2, 0.5), (3, 0.02)] {
            let chaos = Chaos::new()
                .fault_rate(rate, Fault::EmptyResponse)
                .with_seed(seed);
            let faults = (0..10_000).filter(|_| chaos.draw().fault.is_some()).count();
            // Three standard deviations of a binomial count.
            let expected = rate * 10_000.0;
            let tolerance = 3.0 * (expected * (1.0 - rate)).sqrt();
            assert!(
                (faults as f64 - expected).abs() <= tolerance,
                "seed {seed}, rate {rate}: {faults} faults"
            );
        }
        let never = Chaos::new().fault_rate(0.0, Fault::Garbage).with_seed(9);
        assert!((0..10_000).all(|_| never.draw().fault.is_none()));
        let always = Chaos::new().fault_rate(7.0, Fault::Garbage).with_seed(9);
        assert!((0..10_000).all(|_| always.draw().fault == Some(Fault::Garbage)));
    }

    #[test]
    fn latencies_follow_their_distribution() {
        let mut uniform: Vec<Duration> = {
            let chaos = Chaos::new()
                .latency(Latency::uniform(
                    Duration::from_millis(50),
                    Duration::from_millis(10),
                ))
                .with_seed(5);
            (0..10_000).map(|_| chaos.draw().latency.unwrap()).collect()
        };
        uniform.sort();
        assert!(
            uniform[0] >= Duration::from_millis(10) && uniform[9_999] <= Duration::from_millis(50)
        );
        let median = uniform[5_000].as_secs_f64() * 1e3;
        assert!((median - 30.0).abs() < 1.0, "uniform median {median} ms");

        let mut log_normal: Vec<f64> = {
            let chaos = Chaos::new()
                .latency(Latency::log_normal(Duration::from_millis(40), 0.5))
                .with_seed(6);
            (0..10_000)
                .map(|_| chaos.draw().latency.unwrap().as_secs_f64() * 1e3)
                .collect()
        };
        log_normal.sort_by(f64::total_cmp);
        let median = log_normal[5_000];
        assert!((median - 40.0).abs() < 2.0, "log-normal median {median} ms");
        // The 84th percentile of a log-normal is median * e^sigma.
        let p84 = log_normal[8_413];
        let expected = 40.0 * 0.5f64.exp();
        assert!(
            (p84 - expected).abs() < expected * 0.05,
            "p84 {p84} ms, expected {expected}"
        );
        let flat = Latency::log_normal(Duration::from_millis(40), f64::NAN);
        assert_eq!(flat.sample(0.9, 0.1), Duration::from_millis(40));
    }

    #[test]
    fn a_random_seed_differs_between_chaos_values() {
        assert_ne!(Chaos::new().seed(), Chaos::new().seed());
    }
}
