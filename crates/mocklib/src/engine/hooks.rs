//! What the engine resolves requests with besides their scope: one
//! snapshot, swapped whole when it changes.

use std::sync::Arc;

use super::options::InterceptOptions;
use crate::handling::contract;
use crate::message::exchange::ExchangeSink;
use crate::message::request::Performer;

/// What requests are resolved with besides their scope. Changed rarely
/// (listen, close, record, attach a contract) and read once per request:
/// one snapshot behind one lock rather than a lock for each.
#[derive(Clone)]
pub(super) struct Hooks {
    /// `Some` while listening.
    pub(super) listening: Option<Arc<InterceptOptions>>,
    pub(super) performer: Option<Arc<dyn Performer>>,
    /// Where requests performed for real are recorded, if anywhere.
    pub(super) recorder: Option<Arc<dyn ExchangeSink>>,
    /// The contracts mocked answers are checked against.
    pub(super) contracts: Arc<[contract::Attached]>,
}
