//! [`Drift::check`]: a drift check's requests performed for real, through
//! the upstream client that performs passthrough and `bypass()` requests
//! (certificate verification on, redirects returned, no proxy variables).
//!
//! Here rather than in `har/`: the core layers do no I/O, a front door
//! does.

use std::sync::{Arc, OnceLock};

use super::{LazyUpstream, UpstreamPerformer};
use crate::message::request::{PerformError, Performer as _};
use crate::namespace::har::{Drift, DriftReport, HarError};

impl Drift {
    /// Sends each recorded request, one after the other in file order, and
    /// reports how each answer differs from the recorded one.
    ///
    /// A request that gets no answer (refused, timed out, broken off) is a
    /// finding of its entry; the other entries are still checked. An error
    /// is returned, before anything is sent, only when the file has an
    /// entry that cannot be replayed or an option is not usable.
    ///
    /// The requests are real, `POST` and `DELETE` included: check against
    /// an environment where they may run.
    pub async fn check(&self) -> Result<DriftReport, HarError> {
        let performer = UpstreamPerformer {
            upstream: Arc::new(LazyUpstream {
                extra_roots: Vec::new(),
                client: OnceLock::new(),
            }),
            via: None,
        };
        let timeout = self.request_timeout();
        self.run(|request| {
            let performed = performer.perform(request);
            async move {
                match tokio::time::timeout(timeout, performed).await {
                    Ok(Ok(response)) => Ok(response),
                    Ok(Err(PerformError::Failed(why))) => Err(why),
                    Ok(Err(PerformError::Unsendable(why))) => Err(why.to_string()),
                    Err(_) => Err(format!("no answer within {timeout:?}")),
                }
            }
        })
        .await
    }
}
