//! GraphQL over WebSocket, the `graphql-transport-ws` protocol (the
//! `graphql-ws` library's): a subscription handler takes the connections to
//! its endpoint and runs the protocol, resolving every `subscribe` against
//! the handler list as an HTTP request would be — subscriptions with their
//! event stream, queries and mutations with their JSON answer.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::task::Poll;

use futures_util::StreamExt;
use futures_util::future::{AbortHandle, Abortable};
use futures_util::stream::FuturesUnordered;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::handling::handler::{MatchContext, Matched};
use crate::handling::resolver::{Resolution, ResolverCall};
use crate::matching::Predicate;
use crate::message::request::Request;
use crate::message::upgrade::{
    CloseFrame, Frame, Message, Peer, Resolve, Resolved, Services, WebSocketUpgrade,
};
use crate::support::maybe_send::BoxFuture;

/// The sub-protocol this module speaks.
const PROTOCOL: &str = "graphql-transport-ws";

/// Takes an upgrade to `endpoint` (any URL when `None`) whose client offers
/// `graphql-transport-ws`.
pub(super) fn try_upgrade(
    endpoint: Option<&Predicate>,
    context: &MatchContext<'_>,
) -> Option<Matched> {
    let request = context.request;
    let offered = request.header("sec-websocket-protocol").unwrap_or_default();
    if !offered
        .split(',')
        .any(|protocol| protocol.trim() == PROTOCOL)
    {
        return None;
    }
    if let Some(endpoint) = endpoint {
        endpoint.matches(request, context.base_url)?;
    }
    let request = request.clone();
    Some(Matched::new(move |_call| {
        let start = {
            let request = request.clone();
            Box::new(move |peer: Peer, services: Services| -> BoxFuture<()> {
                Box::pin(run(peer, services, request))
            })
        };
        let upgrade = WebSocketUpgrade::new(request, Some(PROTOCOL.to_owned()), start);
        ResolverCall::ready(Resolution::Upgrade(upgrade))
    }))
}

fn send(peer: &Peer, message: Value) {
    peer.outgoing
        .push(Frame::Message(Message::Text(message.to_string())));
}

fn close(peer: &Peer, code: u16, reason: &str) {
    let frame = CloseFrame {
        code,
        reason: reason.to_owned(),
    };
    peer.outgoing.push(Frame::Close(frame.clone()));
    peer.outgoing.close(frame);
}

/// How one operation's resolution ended.
enum Done {
    /// Its results were relayed (or its error sent).
    Finished(String),
    /// No handler answered it: forward it to the real server.
    PassThrough(String, Value),
}

/// What the protocol loop handles next.
enum Step {
    Client(Option<Message>),
    Operation(Done),
    Upstream(Option<Message>),
}

/// One connection's protocol state.
struct Session {
    client: Peer,
    services: Services,
    upgrade: Request,
    /// The client's `connection_init` payload, passed on to the real server.
    init_payload: Option<Value>,
    acknowledged: bool,
    running: HashMap<String, AbortHandle>,
    /// Operations passed through to the real server, by id.
    forwarded: HashSet<String>,
    /// The real server, connected on the first pass-through.
    upstream: Option<Peer>,
}

type Operations = FuturesUnordered<Abortable<BoxFuture<Done>>>;

/// Runs the protocol until the client or the protocol closes the socket.
async fn run(client: Peer, services: Services, upgrade: Request) {
    let mut session = Session {
        client,
        services,
        upgrade,
        init_payload: None,
        acknowledged: false,
        running: HashMap::new(),
        forwarded: HashSet::new(),
        upstream: None,
    };
    let mut operations = Operations::new();
    loop {
        let go_on = match session.next_step(&mut operations).await {
            Step::Client(None) => false,
            Step::Client(Some(message)) => session.on_client(&message, &mut operations),
            Step::Operation(Done::Finished(id)) => {
                session.running.remove(&id);
                true
            }
            Step::Operation(Done::PassThrough(id, message)) => {
                session.pass_through(id, message).await;
                true
            }
            Step::Upstream(message) => {
                session.on_upstream(message);
                true
            }
        };
        if !go_on {
            break;
        }
    }
    session.shut_down();
}

impl Session {
    async fn next_step(&self, operations: &mut Operations) -> Step {
        std::future::poll_fn(|cx| {
            if let Poll::Ready(message) = self.client.incoming.poll_next(cx) {
                return Poll::Ready(Step::Client(message));
            }
            if let Some(upstream) = &self.upstream {
                if let Poll::Ready(message) = upstream.incoming.poll_next(cx) {
                    return Poll::Ready(Step::Upstream(message));
                }
            }
            loop {
                match operations.poll_next_unpin(cx) {
                    Poll::Ready(Some(Ok(done))) => return Poll::Ready(Step::Operation(done)),
                    // An operation the client completed itself: already forgotten.
                    Poll::Ready(Some(Err(_aborted))) => {}
                    Poll::Ready(None) | Poll::Pending => return Poll::Pending,
                }
            }
        })
        .await
    }

    /// Handles one client message; `false` once the socket is closed.
    fn on_client(&mut self, message: &Message, operations: &mut Operations) -> bool {
        let Some(message) = parse(message) else {
            return self.refuse(4400, "Invalid message received");
        };
        match message["type"].as_str().unwrap_or_default() {
            "connection_init" if self.acknowledged => {
                self.refuse(4429, "Too many initialisation requests")
            }
            "connection_init" => {
                self.acknowledged = true;
                self.init_payload = message.get("payload").cloned();
                send(&self.client, json!({ "type": "connection_ack" }));
                true
            }
            "ping" => {
                send(&self.client, pong(&message));
                true
            }
            "pong" => true,
            "subscribe" if !self.acknowledged => self.refuse(4401, "Unauthorized"),
            "subscribe" => self.subscribe(message, operations),
            "complete" => {
                self.complete(&message);
                true
            }
            _ => self.refuse(4400, "Invalid message received"),
        }
    }

    fn refuse(&self, code: u16, reason: &str) -> bool {
        close(&self.client, code, reason);
        false
    }

    fn subscribe(&mut self, message: Value, operations: &mut Operations) -> bool {
        let Some(id) = message["id"].as_str().map(str::to_owned) else {
            return self.refuse(4400, "Invalid message received");
        };
        if self.running.contains_key(&id) || self.forwarded.contains(&id) {
            return self.refuse(4409, &format!("Subscriber for {id} already exists"));
        }
        let request = operation_request(&self.upgrade, &message["payload"]);
        let operation = operate(
            self.client.clone(),
            self.services.resolve.clone(),
            id.clone(),
            request,
            message,
        );
        let (abort, registration) = AbortHandle::new_pair();
        self.running.insert(id, abort);
        operations.push(Abortable::new(Box::pin(operation), registration));
        true
    }

    /// The client is done with an operation: stop it here or at the real server.
    fn complete(&mut self, message: &Value) {
        let Some(id) = message["id"].as_str() else {
            return;
        };
        if let Some(abort) = self.running.remove(id) {
            abort.abort();
        }
        if self.forwarded.remove(id) {
            if let Some(upstream) = &self.upstream {
                send(upstream, json!({ "id": id, "type": "complete" }));
            }
        }
    }

    /// Forwards `message` (a `subscribe`) to the real server, connecting first.
    async fn pass_through(&mut self, id: String, message: Value) {
        self.running.remove(&id);
        if self.upstream.is_none() {
            match self.connect_upstream().await {
                Ok(upstream) => self.upstream = Some(upstream),
                Err(problem) => {
                    let message = format!(
                        "no handler answered operation {id} and the real server could not be \
                         reached: {problem}"
                    );
                    send(&self.client, operation_error(&id, &message));
                    return;
                }
            }
        }
        if let Some(upstream) = &self.upstream {
            send(upstream, message);
            self.forwarded.insert(id);
        }
    }

    /// Opens the real endpoint with this protocol and initialises it with
    /// the client's `connection_init` payload.
    async fn connect_upstream(&self) -> Result<Peer, String> {
        let connector = self.services.connector.as_ref().ok_or("no network here")?;
        let connected = connector
            .connect(&self.upgrade, Some(PROTOCOL.to_owned()))
            .await?;
        let upstream = connected.peer;
        let init = match &self.init_payload {
            Some(payload) => json!({ "type": "connection_init", "payload": payload }),
            None => json!({ "type": "connection_init" }),
        };
        send(&upstream, init);
        while let Some(message) = upstream.incoming.next().await {
            let message = parse(&message).ok_or("an invalid message")?;
            match message["type"].as_str() {
                Some("connection_ack") => return Ok(upstream),
                Some("ping") => send(&upstream, pong(&message)),
                _ => return Err(format!("it answered {message} instead of connection_ack")),
            }
        }
        Err("it closed the connection".to_owned())
    }

    /// Relays the real server's messages for the forwarded operations.
    fn on_upstream(&mut self, message: Option<Message>) {
        let Some(message) = message else {
            for id in std::mem::take(&mut self.forwarded) {
                let error = operation_error(&id, "the real server closed the connection");
                send(&self.client, error);
            }
            self.upstream = None;
            return;
        };
        let Some(parsed) = parse(&message) else {
            return;
        };
        let id = parsed["id"].as_str().unwrap_or_default();
        match parsed["type"].as_str().unwrap_or_default() {
            "ping" => {
                if let Some(upstream) = &self.upstream {
                    send(upstream, pong(&parsed));
                }
            }
            "next" if self.forwarded.contains(id) => send(&self.client, parsed),
            "error" | "complete" if self.forwarded.remove(id) => send(&self.client, parsed),
            _ => {}
        }
    }

    fn shut_down(&self) {
        for abort in self.running.values() {
            abort.abort();
        }
        if let Some(upstream) = &self.upstream {
            close(upstream, 1000, "");
        }
    }
}

fn operation_error(id: &str, message: &str) -> Value {
    json!({ "id": id, "type": "error", "payload": [{ "message": message }] })
}

/// A text message that is a JSON object with a `type`.
fn parse(message: &Message) -> Option<Value> {
    let value: Value = serde_json::from_str(message.as_text()?).ok()?;
    value.get("type")?.as_str()?;
    Some(value)
}

fn pong(ping: &Value) -> Value {
    match ping.get("payload") {
        Some(payload) => json!({ "type": "pong", "payload": payload }),
        None => json!({ "type": "pong" }),
    }
}

/// The HTTP request an operation sent over the socket would have been: a
/// `POST` of `{query, variables, operationName}` to the endpoint, with the
/// upgrade request's cookies and credentials.
fn operation_request(upgrade: &Request, payload: &Value) -> Request {
    let mut headers = HeaderMap::new();
    for name in ["cookie", "authorization"] {
        for value in upgrade.headers().get_all(name) {
            headers.append(name, value.clone());
        }
    }
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers.insert("accept", HeaderValue::from_static("application/json"));
    let body = json!({
        "query": payload["query"],
        "variables": payload.get("variables").cloned().unwrap_or(Value::Null),
        "operationName": payload.get("operationName").cloned().unwrap_or(Value::Null),
        "extensions": payload.get("extensions").cloned().unwrap_or(Value::Null),
    });
    Request::from_parts(
        Method::POST,
        upgrade.url().clone(),
        headers,
        body.to_string().into(),
    )
}

/// Resolves one operation and relays its results.
async fn operate(
    peer: Peer,
    resolve: Option<Arc<dyn Resolve>>,
    id: String,
    request: Request,
    subscribe: Value,
) -> Done {
    let answer = match resolve {
        Some(resolve) => resolve.resolve(request).await,
        None => Resolved::Passthrough,
    };
    let answer = match answer {
        Resolved::Mocked(answer) => answer,
        Resolved::Passthrough => return Done::PassThrough(id, subscribe),
        Resolved::Failed(problem) => {
            send(&peer, operation_error(&id, &problem));
            return Done::Finished(id);
        }
    };
    let streams = answer
        .headers()
        .get("content-type")
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if streams {
        relay_events(&peer, &id, answer.into_body()).await;
    } else {
        relay_result(&peer, &id, answer.into_body()).await;
    }
    Done::Finished(id)
}

/// A subscription's event stream as `next`, `error` and `complete` messages.
async fn relay_events(peer: &Peer, id: &str, body: crate::Body) {
    let mut events = crate::namespace::sse::Upstream::from_body(body);
    while let Some(event) = events.next().await {
        let Ok(event) = event else { break };
        let payload: Value = event.data_json().unwrap_or(Value::Null);
        match event.event_type() {
            Some("next") => send(
                peer,
                json!({ "id": id, "type": "next", "payload": payload }),
            ),
            Some("error") => {
                send(
                    peer,
                    json!({ "id": id, "type": "error", "payload": payload }),
                );
                return;
            }
            _ => break,
        }
    }
    send(peer, json!({ "id": id, "type": "complete" }));
}

/// A query's or mutation's JSON answer as one `next`, then `complete`.
async fn relay_result(peer: &Peer, id: &str, body: crate::Body) {
    let result = body
        .collect()
        .await
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    match result {
        Some(result) => {
            send(peer, json!({ "id": id, "type": "next", "payload": result }));
            send(peer, json!({ "id": id, "type": "complete" }));
        }
        None => {
            let message = "the handler's answer is not a JSON execution result";
            send(
                peer,
                json!({ "id": id, "type": "error", "payload": [{ "message": message }] }),
            );
        }
    }
}
