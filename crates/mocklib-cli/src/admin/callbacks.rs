//! The callback channel of a state (`GET /__mocklib/callbacks`, a
//! WebSocket): the client of a test in another language holds it, and the
//! `callback` entries send their calls through it (`callback_entry.rs`).
//!
//! The admin API's own handler vets the upgrade first — the token, the
//! scope, one channel per scope (`409`) — and lets it through to the
//! `ws` handlers here, which keep the connection as the scope's channel
//! until it closes or its scope ends.

use std::sync::Arc;

use mocklib::node::Server;
use mocklib::{Handler, HttpResponse, Request, ws};

use super::scopes::{ScopeId, Scopes};
use super::{SharedScopes, addressed, not_allowed, refuse, target};
use crate::callback_entry::{Callbacks, Channel};
use crate::lock::lock;

/// Why the upgrade of `request` to `id`'s channel is refused, before it
/// is accepted; `None`: let it through to [`handlers`].
pub(super) fn refusal(
    callbacks: &Callbacks,
    server: &Server,
    scopes: &Scopes,
    id: ScopeId,
    request: &Request,
) -> Option<HttpResponse> {
    if request.method() != http::Method::GET {
        return Some(not_allowed("GET"));
    }
    let upgrade = request
        .header("upgrade")
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    if !upgrade {
        return Some(
            refuse(
                426,
                "the callback channel is a WebSocket: open it with `Upgrade: websocket`",
            )
            .header("upgrade", "websocket"),
        );
    }
    let key = key_of(server, scopes, id)?;
    callbacks.is_open(&key).then(|| {
        refuse(
            409,
            &format!(
                "{} has a callback channel open already: one client holds it at a time",
                name_of(id)
            ),
        )
    })
}

/// The handlers taking the upgrades [`refusal`] let through: on a state's
/// own origin, and as `scopes/{id}/callbacks` on the server's.
pub(super) fn handlers(
    scopes: &SharedScopes,
    callbacks: &Callbacks,
    server: &Server,
    own_port: Option<u16>,
) -> [Handler; 2] {
    let channel = {
        let (scopes, callbacks, server) = (scopes.clone(), callbacks.clone(), server.clone());
        move |connection: ws::ResolverArgs| {
            // Now, before the `101` is sent (the handler's synchronous
            // part): an upgrade that follows meets this channel (`409`).
            let fate = {
                let state = lock(&scopes);
                match addressed(&state, connection.request.url(), own_port) {
                    None => Fate::Real,
                    Some((caller, rest)) => match target(&state, caller, rest)
                        .ok()
                        .and_then(|(id, _)| Some((id, key_of(&server, &state, id)?, name_of(id))))
                    {
                        None => Fate::Ended,
                        Some((id, key, name)) => {
                            match callbacks.open(key.clone(), name, connection.client.clone()) {
                                Some(channel) => Fate::Channel(Held {
                                    scopes: scopes.clone(),
                                    callbacks: callbacks.clone(),
                                    id,
                                    key,
                                    channel,
                                }),
                                None => Fate::Taken,
                            }
                        }
                    },
                }
            };
            async move {
                let client = &connection.client;
                match fate {
                    Fate::Real => match connection.server.connect().await {
                        Ok(upstream) => connection.forward(upstream).await,
                        Err(error) => {
                            eprintln!("mocklib serve: {error}");
                            client.close_with(1011, "the real server is out of reach");
                        }
                    },
                    Fate::Ended => client.close_with(1001, "the scope ended"),
                    Fate::Taken => client
                        .close_with(1008, "another client holds this scope's callback channel"),
                    Fate::Channel(held) => {
                        while let Some(message) = client.recv().await {
                            held.channel.receive(&message);
                        }
                    }
                }
            }
        }
    };
    [
        ws::link("ws://*:*/__mocklib/callbacks").on_connection(channel.clone()),
        ws::link("ws://*:*/__mocklib/scopes/:id/callbacks").on_connection(channel),
    ]
}

/// What becomes of an upgrade the admin API let through.
enum Fate {
    /// Not the admin API's (another server's on loopback, reached through
    /// the proxy): the real WebSocket.
    Real,
    /// Its scope ended since the upgrade was let through.
    Ended,
    /// Another upgrade, let through at the same time, holds the channel.
    Taken,
    /// The scope's channel, until it closes.
    Channel(Held),
}

/// A scope's open channel, let go when its connection ends, however it
/// ends: also when the listener drops the connection's handler unpolled.
struct Held {
    scopes: SharedScopes,
    callbacks: Callbacks,
    id: ScopeId,
    /// The scope's name in [`Callbacks`].
    key: String,
    channel: Arc<Channel>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Its calls in flight get 502; the scope may open another.
        self.callbacks.closed(&self.key, &self.channel);
        // The scope's idle time counts from now: the open channel kept it
        // (`Scopes::expire`).
        if let ScopeId::Opened(id) = self.id {
            if let Some(scope) = lock(&self.scopes).opened.get_mut(&id) {
                scope.last_seen = std::time::Instant::now();
            }
        }
    }
}

/// The name [`Callbacks`] knows `id`'s channel by; `None` once it ended.
fn key_of(server: &Server, scopes: &Scopes, id: ScopeId) -> Option<String> {
    match id {
        ScopeId::Root => Some(server.at_root(|| server.proxy_url()).to_string()),
        ScopeId::Opened(id) => scopes
            .opened
            .get(&id)
            .map(|scope| scope.proxy_url.to_string()),
    }
}

/// `id` in messages.
fn name_of(id: ScopeId) -> String {
    match id {
        ScopeId::Root => "the server's own scope".to_owned(),
        ScopeId::Opened(id) => format!("scope {id}"),
    }
}
