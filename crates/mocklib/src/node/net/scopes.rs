//! Boundaries reachable through the listener: by the proxy credential
//! handed out in them (`mocklib:scope-N`), or by a port of their own; and
//! the signal each raises as it ends, which closes what its clients hold.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::signal::{Signal, Wait};
use crate::engine::list::Scope;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The user name of scope credentials: `mocklib:scope-N`.
pub(super) const CREDENTIAL_USER: &str = "mocklib";

/// Boundaries reachable through the listener: by the id in a proxy
/// credential, or by a port of their own. Weak, so a boundary that ends is
/// not kept alive by the addresses handed out in it.
#[derive(Default)]
pub(crate) struct ScopeRegistry {
    by_id: Mutex<HashMap<u64, Known>>,
    /// Each boundary's own port. Shared with the boundaries' end
    /// callbacks, which forget a port as its boundary ends.
    pub(super) ports: Arc<Mutex<HashMap<u64, SocketAddr>>>,
}

/// A boundary the listener knows of.
struct Known {
    scope: Weak<Scope>,
    /// Raised as it ends (by the boundary's end callback): its accept loop,
    /// connections, streamed bodies and WebSockets wait on it.
    ended: Arc<Signal>,
}

/// What a proxy credential names.
pub(crate) enum CredentialScope {
    /// No mocklib credential: the root scope.
    None,
    /// A live boundary.
    Live(Arc<Scope>),
    /// A mocklib credential whose boundary has ended (or never existed).
    Ended(String),
}

impl ScopeRegistry {
    /// Makes `scope` reachable by its credential; the signal raised as it
    /// ends (raised already if it has).
    pub(super) fn register(&self, scope: &Arc<Scope>) -> Arc<Signal> {
        let mut by_id = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = by_id.get(&scope.id()) {
            return Arc::clone(&known.ended);
        }
        // Forget ended boundaries now and then so the map stays small.
        if by_id.len() > 64 && by_id.len().is_power_of_two() {
            by_id.retain(|_, known| known.scope.strong_count() > 0 && !known.ended.is_raised());
        }
        let ended = Arc::new(Signal::default());
        by_id.insert(
            scope.id(),
            Known {
                scope: Arc::downgrade(scope),
                ended: Arc::clone(&ended),
            },
        );
        drop(by_id);
        // Outside the lock: an ended boundary runs it at once.
        let raise = Arc::clone(&ended);
        scope.on_end(Box::new(move || raise.raise()));
        ended
    }

    pub(super) fn forget_port(&self, address: SocketAddr) {
        self.ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, port| *port != address);
    }

    /// The live boundary whose own port is `port`; `None` for a port no
    /// boundary holds or one whose boundary has ended.
    pub(super) fn scope_on_port(&self, port: u16) -> Option<Arc<Scope>> {
        let id = self
            .ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(_, address)| address.port() == port)
            .map(|(id, _)| *id)?;
        self.by_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .and_then(|known| known.scope.upgrade())
            .filter(|scope| !scope.is_ended())
    }

    pub(super) fn is_scope_port(&self, port: u16) -> bool {
        self.ports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .any(|address| address.port() == port)
    }

    /// The scope named by a `Proxy-Authorization` header value.
    pub(super) fn scope_named_by(&self, header: Option<&http::HeaderValue>) -> CredentialScope {
        let Some(credentials) = header
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                value
                    .strip_prefix("Basic ")
                    .or_else(|| value.strip_prefix("basic "))
            })
            .and_then(|encoded| crate::support::base64::decode(encoded.trim()))
            .and_then(|decoded| String::from_utf8(decoded).ok())
        else {
            return CredentialScope::None;
        };
        let Some((user, password)) = credentials.split_once(':') else {
            return CredentialScope::None;
        };
        if user != CREDENTIAL_USER {
            return CredentialScope::None;
        }
        let scope = password
            .strip_prefix("scope-")
            .and_then(|id| id.parse::<u64>().ok())
            .and_then(|id| {
                self.by_id
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&id)
                    .and_then(|known| known.scope.upgrade())
            })
            // Ended, though a connection or a request in flight may still
            // hold it: refused from the moment it ends.
            .filter(|scope| !scope.is_ended());
        match scope {
            Some(scope) => CredentialScope::Live(scope),
            None => CredentialScope::Ended(password.to_owned()),
        }
    }
}

pin_project_lite::pin_project! {
    /// A streamed body a boundary's handler answered (server-sent events,
    /// a gRPC stream, `mocklib serve`'s hold): it fails as the boundary
    /// ends, wherever its connection came from (a plain proxy connection
    /// that named the boundary by its credential is not the boundary's,
    /// and stays open), so nothing of an ended boundary goes on streaming.
    pub(super) struct EndsWith<B> {
        #[pin]
        body: B,
        id: u64,
        ended: Wait<Arc<Signal>>,
    }
}

impl<B> EndsWith<B> {
    /// `body`, failing as the boundary `id` raises `ended`.
    pub(super) fn new(body: B, id: u64, ended: Arc<Signal>) -> Self {
        EndsWith {
            body,
            id,
            ended: ended.wait_owned(),
        }
    }
}

impl<B> Body for EndsWith<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.project();
        if Pin::new(this.ended).poll(cx).is_ready() {
            let error = format!(
                "mocklib: the boundary (scope-{}) this stream was answered in has ended",
                this.id
            );
            return Poll::Ready(Some(Err(error.into())));
        }
        this.body
            .poll_frame(cx)
            .map(|frame| frame.map(|result| result.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
