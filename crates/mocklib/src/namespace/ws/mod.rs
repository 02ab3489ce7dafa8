//! The `ws` namespace: mock WebSocket servers (MSW:
//! [`ws`](https://mswjs.io/docs/api/ws)).
//!
//! [`link`] names the WebSocket URLs to intercept (the same pattern rules as
//! `http`, with `ws://` and `wss://`); [`Link::on_connection`] makes the
//! handler. Each connection hands the handler its `client` (the code under
//! test) and its `server` (the real endpoint, connected on demand):
//!
//! ```
//! use mocklib::ws::{self, Message};
//!
//! let chat = ws::link("wss://chat.example.com/rooms/:room");
//! let handlers = [chat.on_connection({
//!     let chat = chat.clone(); // to broadcast from inside
//!     move |connection| async move {
//!         connection.client.send(format!("welcome to {}", &connection.params["room"]));
//!         while let Some(message) = connection.client.recv().await {
//!             if message.as_text() == Some("bye") {
//!                 connection.client.close();
//!                 break;
//!             }
//!             // Echo to everyone else in the room.
//!             chat.broadcast_except(&connection.client, message);
//!         }
//!     }
//! })];
//! # let _ = handlers;
//! ```
//!
//! The real server, with messages flowing both ways unchanged, or some
//! altered or dropped on the way:
//!
//! ```
//! use mocklib::ws::{self, Direction, Message};
//!
//! ws::link("wss://api.example.com/live").on_connection(|connection| async move {
//!     let server = connection.server.connect().await?;
//!     connection
//!         .forward_with(server, |direction, message| match direction {
//!             Direction::ServerToClient if message.as_text() == Some("debug") => None,
//!             _ => Some(message),
//!         })
//!         .await;
//!     Ok::<_, ws::Error>(())
//! });
//! ```
//!
//! WebSocket handlers live in the same list as the others: `use_handlers`,
//! `reset_handlers`, boundaries and `list_handlers` apply, and an upgrade no
//! handler matches follows the unhandled-request strategy. Connections
//! arrive through the listener (base URL, proxy, HTTPS through `CONNECT`);
//! the in-process front doors (reqwest, tower) cannot carry a WebSocket.
//!
//! In the browser, a started worker ([`browser`](crate::browser)'s
//! `setup_worker`) replaces the page's `WebSocket` class, in both of its modes (MSW does the same: a
//! Service Worker never sees a WebSocket). Each `new WebSocket(url,
//! protocols)` becomes an upgrade request for the handlers (a `GET` of the
//! URL as `http(s)://` with `Upgrade: websocket`, the offered
//! `Sec-WebSocket-Protocol`, the page's `Origin` and, for its own origin,
//! its cookies); a relative pattern (`ws::link("/chat")`) matches the page's
//! own origin. A matched socket opens with the handler's sub-protocol and
//! talks to the handler; `server.connect()` opens the real socket with the
//! browser's own class (the browser sends its handshake: the URL and the
//! sub-protocols are the intercepted ones). An unhandled socket under the
//! `warn` or `bypass` strategy is the real one, every event handed on; a
//! network error (the `error` strategy, a handler that answered the upgrade
//! with a plain response, or a link that accepts none of the offered
//! sub-protocols) fails it as the browser fails a connection that could not
//! open: `error`, then `close` with 1006.

mod connection;

use std::sync::{Arc, Mutex, PoisonError};

use http::Method;
use url::Url;

pub use crate::message::upgrade::{CloseFrame, Message, WebSocketUpgrade};
pub use connection::{Client, Direction, Error, Messages, ResolverArgs, Server, Upstream};

use crate::handling::handler::{Handler, HandlerKind, IndexHint, MatchContext, Matched};
use crate::handling::resolver::{Resolution, ResolverCall, SessionOutput};
use crate::matching::{IntoPredicate, PatternError, Predicate};

/// The WebSocket URLs a handler intercepts, and every client connected
/// through them (MSW: `ws.link(url)`). Cheap to clone; clones share the
/// clients.
#[derive(Clone)]
pub struct Link {
    predicate: Arc<Predicate>,
    /// The pattern as given (`wss://…`), for headers and messages.
    url: String,
    clients: Arc<Mutex<Vec<Client>>>,
    protocols: Option<Arc<[String]>>,
}

/// The URLs `pattern` names: a `ws://` or `wss://` URL pattern (or a
/// relative path), with `:params` and `*` as in [`http`](crate::http).
///
/// # Panics
/// When the pattern is invalid; the message names it and the position.
#[track_caller]
pub fn link(pattern: impl AsRef<str>) -> Link {
    try_link(pattern).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`link`], returning an invalid pattern as an error.
pub fn try_link(pattern: impl AsRef<str>) -> Result<Link, PatternError> {
    let url = pattern.as_ref().to_owned();
    let as_http = crate::matching::as_http_url(&url);
    Ok(Link {
        predicate: Arc::new(as_http.into_predicate()?),
        url,
        clients: Arc::default(),
        protocols: None,
    })
}

impl Link {
    /// The pattern as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The sub-protocols this link speaks: the first one the client offers
    /// (in `Sec-WebSocket-Protocol`) that is in `protocols` is chosen. By
    /// default the first one offered is.
    pub fn protocols<I: IntoIterator<Item = S>, S: Into<String>>(mut self, protocols: I) -> Self {
        self.protocols = Some(protocols.into_iter().map(Into::into).collect());
        self
    }

    /// A handler that accepts each matching connection and runs `handler`
    /// with it (MSW: `link.addEventListener('connection', …)`). The handler
    /// may be sync or async; the connection stays open after it returns,
    /// until either side closes it. Like an axum handler, it is `FnOnce +
    /// Clone` (cloned for each connection), so an `async move` block may
    /// take what the closure captured: the link itself, to broadcast.
    pub fn on_connection<F, R, M>(&self, handler: F) -> Handler
    where
        F: FnOnce(ResolverArgs) -> R + Clone + Send + Sync + 'static,
        R: SessionOutput<M>,
    {
        Handler::new(WsHandler {
            link: self.clone(),
            header: format!("ws {}", self.url),
            on_connection: Arc::new(move |connection| handler.clone()(connection).into_driver()),
        })
    }

    /// Sends `message` to every open client of this link (MSW: `broadcast`).
    pub fn broadcast(&self, message: impl Into<Message>) {
        let message = message.into();
        for client in self.clients() {
            client.send(message.clone());
        }
    }

    /// Sends `message` to every open client of this link except `client`.
    pub fn broadcast_except(&self, client: &Client, message: impl Into<Message>) {
        let message = message.into();
        for other in self.clients().iter().filter(|other| *other != client) {
            other.send(message.clone());
        }
    }

    /// The open clients of this link, oldest first.
    pub fn clients(&self) -> Vec<Client> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        clients.retain(Client::is_open);
        clients.clone()
    }

    fn register(&self, client: &Client) {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        clients.retain(Client::is_open);
        clients.push(client.clone());
    }

    /// The sub-protocol to accept among those `offered`.
    fn choose_protocol(&self, offered: Option<&str>) -> Option<String> {
        let mut offered = offered?.split(',').map(str::trim).filter(|p| !p.is_empty());
        match &self.protocols {
            None => offered.next().map(str::to_owned),
            Some(known) => offered
                .find(|p| known.iter().any(|k| k == p))
                .map(str::to_owned),
        }
    }
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

type OnConnection = dyn Fn(ResolverArgs) -> crate::handling::resolver::SessionDriver + Send + Sync;

struct WsHandler {
    link: Link,
    header: String,
    on_connection: Arc<OnConnection>,
}

impl HandlerKind for WsHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn method(&self) -> Option<&Method> {
        Some(&Method::GET)
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.link.predicate.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::of_predicate(&self.link.predicate)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        let request = context.request;
        if !request.is_websocket_upgrade() {
            return None;
        }
        let params = self.link.predicate.matches(request, context.base_url)?;
        let protocol = self
            .link
            .choose_protocol(request.header("sec-websocket-protocol"));
        let connection = connection::Parts {
            request: request.clone(),
            params,
            cookies: context.cookies().clone(),
            request_id: context.request_id,
            protocol: protocol.clone(),
        };
        let (link, on_connection) = (self.link.clone(), Arc::clone(&self.on_connection));
        Some(Matched::new(move |_call| {
            let request = connection.request.clone();
            let start = Box::new(move |peer, services: crate::message::upgrade::Services| {
                let connection = connection.into_connection(peer, services.connector);
                link.register(&connection.client);
                connection::run(connection, &*on_connection)
            });
            ResolverCall::ready(Resolution::Upgrade(WebSocketUpgrade::new(
                request, protocol, start,
            )))
        }))
    }
}

/// The upgrade of a request no handler took (performed as it is): the
/// client gets the real server's sub-protocol, and every message flows
/// between the two unchanged. (In the browser the page's socket is joined
/// to the real one in JavaScript, event for event.)
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn passthrough_upgrade(
    request: crate::message::request::Request,
    upstream: crate::message::upgrade::Connected,
) -> WebSocketUpgrade {
    let crate::message::upgrade::Connected {
        peer: server,
        protocol,
    } = upstream;
    let start = Box::new(
        move |client: crate::message::upgrade::Peer,
              _|
              -> crate::support::maybe_send::BoxFuture<()> {
            Box::pin(async move {
                connection::forward_peers(&client, &server, |_, message| Some(message)).await;
            })
        },
    );
    WebSocketUpgrade::new(request, protocol, start)
}

/// The `ws://`/`wss://` form of an upgrade request's `http(s)` URL.
pub(crate) fn ws_url(url: &Url) -> Url {
    let mut ws = url.clone();
    let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
    // Both schemes are special with the same default ports, so this never fails.
    let _ = ws.set_scheme(scheme);
    ws
}
