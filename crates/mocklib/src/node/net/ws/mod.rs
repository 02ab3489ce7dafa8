//! WebSockets on the listener: accepting an upgrade a `ws` handler matched
//! (in base URL mode, through the proxy, and inside CONNECT + TLS alike, as
//! they all reach the same service), pumping its socket, and connecting to
//! real WebSocket servers for `server.connect()`.
//!
//! The protocol is tungstenite's; this module only moves messages between a
//! socket and the core's queues ([`crate::message::upgrade`]), in one task per
//! socket that also runs the connection's handler ([`pump`]). Every task
//! here ends with its socket or with the server.

mod pump;

use std::sync::Arc;

use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{self, protocol::Role};

use super::Shared;
use super::signal::Signal;
use crate::message::request::Request;
use crate::message::upgrade::{CloseFrame, Connected, Connector, Peer, Services, WebSocketUpgrade};
#[cfg(feature = "graphql")]
use crate::message::upgrade::{Resolve, Resolved};
use pump::{Handler, pump};

/// How long a connection's handler may run on once its socket closed.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The `101 Switching Protocols` answer to `upgrade`, and the task that runs
/// the connection once hyper hands over the socket; a `400` for a request
/// that is not a valid WebSocket handshake. `ended`: raised as the boundary
/// the upgrade came in ends, which ends the connection too.
pub(super) fn accept(
    shared: &Arc<Shared>,
    upgrade: WebSocketUpgrade,
    on_upgrade: Option<OnUpgrade>,
    ended: Option<Arc<Signal>>,
    #[cfg(feature = "graphql")] scope: Option<ResolveIn>,
) -> Result<http::Response<()>, String> {
    let request = upgrade.request();
    if request.header("sec-websocket-version") != Some("13") {
        return Err("mocklib: a WebSocket upgrade needs Sec-WebSocket-Version: 13\n".to_owned());
    }
    let Some(key) = request.header("sec-websocket-key") else {
        return Err("mocklib: a WebSocket upgrade needs a Sec-WebSocket-Key\n".to_owned());
    };
    let Some(on_upgrade) = on_upgrade else {
        return Err("mocklib: this connection cannot be upgraded (HTTP/2)\n".to_owned());
    };
    let mut response = http::Response::builder()
        .status(http::StatusCode::SWITCHING_PROTOCOLS)
        .header(http::header::CONNECTION, "upgrade")
        .header(http::header::UPGRADE, "websocket")
        .header(
            "sec-websocket-accept",
            tungstenite::handshake::derive_accept_key(key.as_bytes()),
        );
    if let Some(protocol) = upgrade.protocol() {
        response = response.header("sec-websocket-protocol", protocol);
    }
    let response = response.body(()).map_err(|error| error.to_string())?;
    let services = Services {
        connector: Some(Arc::new(UpstreamConnector {
            shared: Arc::clone(shared),
        })),
        #[cfg(feature = "graphql")]
        resolve: scope.map(|scope| -> Arc<dyn Resolve> {
            Arc::new(EngineResolve {
                engine: Arc::clone(&shared.engine),
                scope,
            })
        }),
    };
    let (peer, handler) = upgrade.accept(services);
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        // One task for the socket and the handler: a message reaches a
        // handler waiting for it, and its answer the socket, without a
        // wake-up of another task.
        let mut handler = Handler::new(handler);
        let connection = async {
            serve_client(on_upgrade, peer, &mut handler).await;
            // The handler may still react to the close (its `recv()` is
            // over now); then it is stopped: nothing runs for nobody.
            let _ = tokio::time::timeout(CLOSE_GRACE, handler.finish()).await;
        };
        tokio::select! {
            // In order: no random draw on each wake-up.
            biased;
            () = connection => {}
            () = shared.closed() => {}
            // Its boundary ended: the socket and its handler go with it,
            // as with the server's close.
            () = async {
                match &ended {
                    Some(ended) => ended.wait().await,
                    None => std::future::pending().await,
                }
            } => {}
        }
    });
    Ok(response)
}

/// The scope (and base URL) a connection's requests resolve in.
#[cfg(feature = "graphql")]
pub(super) struct ResolveIn {
    pub(super) scope: Arc<crate::engine::list::Scope>,
    pub(super) base_url: Option<Arc<url::Url>>,
}

/// Resolves a connection's requests (GraphQL operations over the socket)
/// with the handlers of the scope the upgrade came in.
#[cfg(feature = "graphql")]
struct EngineResolve {
    engine: Arc<crate::engine::Engine>,
    scope: ResolveIn,
}

#[cfg(feature = "graphql")]
impl Resolve for EngineResolve {
    fn resolve(&self, request: Request) -> crate::support::maybe_send::BoxFuture<Resolved> {
        use crate::engine::Outcome;
        let scope = Arc::clone(&self.scope.scope);
        let base_url = self.scope.base_url.clone();
        let outcome = self.engine.handle_in(scope, request, base_url);
        Box::pin(async move {
            match outcome.await {
                Outcome::Mocked(response) => Resolved::Mocked(response),
                Outcome::Passthrough(_) => Resolved::Passthrough,
                Outcome::NetworkError(error) => Resolved::Failed(error.to_string()),
                Outcome::WebSocket(_) => Resolved::Failed("a WebSocket upgrade".to_owned()),
            }
        })
    }
}

/// Takes the upgraded socket from hyper and pumps it, `handler` beside.
async fn serve_client(on_upgrade: OnUpgrade, peer: Peer, handler: &mut Handler) {
    let upgraded = match handler.beside(on_upgrade).await {
        Ok(upgraded) => upgraded,
        Err(error) => {
            tracing::debug!(target: "mocklib", %error, "a WebSocket upgrade did not complete");
            peer.incoming.close(CloseFrame::abnormal());
            return;
        }
    };
    let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
    pump(socket, peer, handler).await;
}

/// Opens real WebSockets for `server.connect()`, verifying certificates
/// like every other request mocklib performs for real.
struct UpstreamConnector {
    shared: Arc<Shared>,
}

impl Connector for UpstreamConnector {
    fn connect(
        &self,
        request: &Request,
        protocol: Option<String>,
    ) -> crate::support::maybe_send::BoxFuture<Result<Connected, String>> {
        // The real server of a WebSocket addressed to this listener is this
        // listener again: refuse rather than loop.
        let own = super::target::is_own_address(
            &self.shared,
            &crate::namespace::ws::ws_url(request.url()),
        ) || super::target::is_own_address(&self.shared, request.url());
        let tls = self
            .shared
            .upstream
            .get()
            .map(|upstream| upstream.websocket_tls());
        let tls = tls.map_err(str::to_owned);
        let handshake = handshake_request(request, protocol);
        Box::pin(async move {
            if own {
                return Err("it is addressed to this mocklib listener itself".to_owned());
            }
            let (handshake, host, port, secure) = handshake?;
            let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
                .await
                .map_err(|error| format!("connecting to {host}:{port}: {error}"))?;
            let peer = Peer::default();
            if secure {
                let name = rustls_pki_types::ServerName::try_from(host.clone())
                    .map_err(|error| error.to_string())?;
                let stream = tokio_rustls::TlsConnector::from(tls?)
                    .connect(name, tcp)
                    .await
                    .map_err(|error| format!("TLS with {host}: {error}"))?;
                start_upstream(handshake, stream, peer).await
            } else {
                start_upstream(handshake, tcp, peer).await
            }
        })
    }
}

/// Completes the client handshake on `stream`, then pumps it in a task.
async fn start_upstream<S>(
    handshake: http::Request<()>,
    stream: S,
    peer: Peer,
) -> Result<Connected, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (socket, response) = tokio_tungstenite::client_async(handshake, stream)
        .await
        .map_err(|error| format!("the WebSocket handshake failed: {error}"))?;
    let protocol = response
        .headers()
        .get("sec-websocket-protocol")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let pumped = peer.clone();
    tokio::spawn(async move { pump(socket, pumped, &mut Handler::none()).await });
    Ok(Connected { peer, protocol })
}

/// Performs an upgrade no handler took as it is: connects to the real
/// server with the client's offered sub-protocols first (so the client
/// gets the one the server chose), then accepts the client's upgrade and
/// forwards between the two. A `502` says why when the real server cannot
/// be reached.
pub(super) async fn pass_through(
    shared: &Arc<Shared>,
    request: Request,
    on_upgrade: Option<OnUpgrade>,
) -> Result<http::Response<()>, String> {
    let connector = UpstreamConnector {
        shared: Arc::clone(shared),
    };
    let offered = request.header("sec-websocket-protocol").map(str::to_owned);
    let connected = connector
        .connect(&request, offered)
        .await
        .map_err(|message| {
            format!(
                "mocklib: the real WebSocket {} could not be reached: {message}\n",
                request.url()
            )
        })?;
    let upgrade = crate::namespace::ws::passthrough_upgrade(request, connected);
    // A relay to a real server: it ends with the server, not a boundary.
    accept(
        shared,
        upgrade,
        on_upgrade,
        None,
        #[cfg(feature = "graphql")]
        None,
    )
}

/// The handshake to send the real server: the intercepted request's URL as
/// `ws(s)://`, its end-to-end headers (cookies, authorization, origin…)
/// and the accepted sub-protocol; tungstenite adds its own key and version.
type Handshake = (http::Request<()>, String, u16, bool);

fn handshake_request(request: &Request, protocol: Option<String>) -> Result<Handshake, String> {
    use tungstenite::client::IntoClientRequest;
    let url = crate::namespace::ws::ws_url(request.url());
    let host = url
        .host_str()
        .ok_or("the WebSocket URL has no host")?
        .to_owned();
    let secure = url.scheme() == "wss";
    let port = url
        .port_or_known_default()
        .unwrap_or(if secure { 443 } else { 80 });
    let mut handshake = url
        .as_str()
        .into_client_request()
        .map_err(|error| error.to_string())?;
    for (name, value) in request.headers() {
        let name_text = name.as_str();
        let per_hop = matches!(
            name_text,
            "host"
                | "connection"
                | "upgrade"
                | "content-length"
                | "transfer-encoding"
                | "proxy-authorization"
                | "keep-alive"
                | "te"
                | "trailer"
        ) || name_text.starts_with("sec-websocket-");
        if !per_hop {
            handshake.headers_mut().append(name.clone(), value.clone());
        }
    }
    if let Some(protocol) = protocol.and_then(|p| http::HeaderValue::try_from(p).ok()) {
        handshake
            .headers_mut()
            .insert("sec-websocket-protocol", protocol);
    }
    Ok((handshake, host, port, secure))
}
