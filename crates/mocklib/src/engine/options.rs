//! The options the engine resolves with: what the front door's listen
//! options say about unhandled requests, the base URL and the journal.

use std::sync::Arc;

use url::Url;

use crate::message::request::Request;

/// What the engine needs of a front door's options while intercepting: the
/// front door's own options (the listener's port, say) stay with it.
#[derive(Clone, Default, Debug)]
pub(crate) struct InterceptOptions {
    pub(crate) on_unhandled_request: UnhandledRequest,
    pub(crate) base_url: Option<std::sync::Arc<Url>>,
    /// Requests each scope's journal keeps; `None`: the default.
    pub(crate) journal_capacity: Option<usize>,
    /// A request that handlers matched but none answered goes to the
    /// unhandled-request strategy instead of being performed as it is.
    pub(crate) fallthrough_is_unhandled: bool,
    /// The `tracing` subscriber in effect where `listen` was called, for
    /// the messages of requests resolved on threads that have none (the
    /// listener's): set by [`Engine::listen`](super::Engine::listen).
    pub(crate) log_dispatch: Option<tracing::Dispatch>,
}

/// What happens to a request that no handler matches.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum UnhandledRequest {
    /// Print a warning naming the request and the closest handlers, then
    /// perform the request as it is.
    #[default]
    Warn,
    /// Print an error and make the request fail at the requester.
    Error,
    /// As [`Error`](Self::Error), and also record the request as a failure
    /// that [`verify`](crate::node::Server::verify) reports, so a test fails
    /// even when the code under test swallows the client's error. See
    /// [`ListenOptions::strict`](crate::ListenOptions::strict).
    Strict,
    /// Perform the request as it is, silently.
    Bypass,
    /// Call this function with the request, then perform the request as it
    /// is. If the function panics, the request fails as with `Error`.
    Custom(Arc<dyn Fn(&Request) + Send + Sync>),
}

impl UnhandledRequest {
    /// A custom strategy from a closure.
    pub fn custom(callback: impl Fn(&Request) + Send + Sync + 'static) -> Self {
        UnhandledRequest::Custom(Arc::new(callback))
    }
}

impl std::fmt::Debug for UnhandledRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UnhandledRequest::Warn => "Warn",
            UnhandledRequest::Error => "Error",
            UnhandledRequest::Strict => "Strict",
            UnhandledRequest::Bypass => "Bypass",
            UnhandledRequest::Custom(_) => "Custom(..)",
        })
    }
}
