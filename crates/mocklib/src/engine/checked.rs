//! Contracts' checks of requests performed for real: their answers come
//! after the lookup, through the front door's capture.

use std::fmt;
use std::sync::Arc;

use crate::handling::contract::{Answered, Attached, check};

/// Checks a request performed for real once its answer is whole, adding
/// the findings to its journal entry, then hands the exchange on (to a
/// HAR recording, if one is on).
pub(crate) struct CheckedSink {
    pub(crate) contracts: Arc<[Attached]>,
    pub(crate) inner: Option<Arc<dyn crate::message::exchange::ExchangeSink>>,
    pub(crate) scope: Arc<crate::engine::list::Scope>,
    /// The request's journal entry.
    pub(crate) sequence: u64,
    pub(crate) base_url: Option<std::sync::Arc<url::Url>>,
}

impl fmt::Debug for CheckedSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedSink")
            .field("sequence", &self.sequence)
            .finish_non_exhaustive()
    }
}

impl crate::message::exchange::ExchangeSink for CheckedSink {
    fn record(&self, exchange: crate::message::exchange::Exchange) {
        let answered = Answered {
            request: exchange.request(),
            status: exchange.status(),
            headers: exchange.headers(),
            body: Some(exchange.body()),
            base_url: self.base_url.as_deref(),
        };
        // Too late to fail the request: strict or not, the findings are
        // kept for `verify` and logged.
        let (findings, _) = check(&self.contracts, &answered);
        if !findings.is_empty() {
            for finding in &findings {
                crate::support::log::warn(&format!(
                    "{} {} (performed for real) breaks a contract: {finding}",
                    exchange.request().method(),
                    exchange.request().url()
                ));
            }
            self.scope.add_findings(self.sequence, findings);
        }
        if let Some(inner) = &self.inner {
            inner.record(exchange);
        }
    }
}
