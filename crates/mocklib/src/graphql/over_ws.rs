//! GraphQL over WebSocket, the `graphql-transport-ws` protocol (the
//! `graphql-ws` library's): a subscription handler takes the connections to
//! its endpoint and runs the protocol, resolving every `subscribe` against
//! the handler list as an HTTP request would be — subscriptions with their
//! event stream, queries and mutations with their JSON answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::task::Poll;

use futures_util::StreamExt;
use futures_util::future::{AbortHandle, Abortable};
use futures_util::stream::FuturesUnordered;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::handler::{Invocation, LookupContext};
use crate::matching::Predicate;
use crate::maybe_send::BoxFuture;
use crate::request::Request;
use crate::resolver::{Resolution, ResolverCall};
use crate::upgrade::{CloseFrame, Frame, Message, Peer, Resolve, Services, WebSocketUpgrade};

/// The sub-protocol this module speaks.
const PROTOCOL: &str = "graphql-transport-ws";

pub(super) fn is_upgrade(request: &Request) -> bool {
    request.method() == Method::GET
        && request
            .header("upgrade")
            .is_some_and(|upgrade| upgrade.eq_ignore_ascii_case("websocket"))
}

/// Takes an upgrade to `endpoint` (any URL when `None`) whose client offers
/// `graphql-transport-ws`.
pub(super) fn try_upgrade(
    endpoint: Option<&Predicate>,
    context: &LookupContext<'_>,
) -> Option<Invocation> {
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
    Some(Box::new(move |_call| {
        let start = {
            let request = request.clone();
            Box::new(move |peer: Peer, services: Services| -> BoxFuture<()> {
                Box::pin(run(peer, services.resolve, request))
            })
        };
        let upgrade = WebSocketUpgrade::new(request, Some(PROTOCOL.to_owned()), start);
        ResolverCall::Ready(Resolution::Upgrade(upgrade))
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

/// What the protocol loop waits for next.
enum Step {
    Message(Option<Message>),
    Finished(String),
}

/// Runs the protocol until the client or the protocol closes the socket.
async fn run(peer: Peer, resolve: Option<Arc<dyn Resolve>>, upgrade: Request) {
    let mut acknowledged = false;
    let mut running: HashMap<String, AbortHandle> = HashMap::new();
    let mut operations = FuturesUnordered::new();
    loop {
        let step = std::future::poll_fn(|cx| {
            if let Poll::Ready(message) = peer.incoming.poll_next(cx) {
                return Poll::Ready(Step::Message(message));
            }
            loop {
                match operations.poll_next_unpin(cx) {
                    Poll::Ready(Some(Ok(id))) => return Poll::Ready(Step::Finished(id)),
                    // An operation the client completed itself: already forgotten.
                    Poll::Ready(Some(Err(_aborted))) => {}
                    Poll::Ready(None) | Poll::Pending => return Poll::Pending,
                }
            }
        })
        .await;
        let message = match step {
            Step::Finished(id) => {
                running.remove(&id);
                continue;
            }
            Step::Message(None) => break,
            Step::Message(Some(message)) => message,
        };
        let Some(message) = parse(&message) else {
            close(&peer, 4400, "Invalid message received");
            break;
        };
        let kind = message["type"].as_str().unwrap_or_default();
        match kind {
            "connection_init" if acknowledged => {
                close(&peer, 4429, "Too many initialisation requests");
                break;
            }
            "connection_init" => {
                acknowledged = true;
                send(&peer, json!({ "type": "connection_ack" }));
            }
            "ping" => send(&peer, pong(&message)),
            "pong" => {}
            "subscribe" if !acknowledged => {
                close(&peer, 4401, "Unauthorized");
                break;
            }
            "subscribe" => {
                let Some(id) = message["id"].as_str().map(str::to_owned) else {
                    close(&peer, 4400, "Invalid message received");
                    break;
                };
                if running.contains_key(&id) {
                    close(&peer, 4409, &format!("Subscriber for {id} already exists"));
                    break;
                }
                let (abort, registration) = AbortHandle::new_pair();
                running.insert(id.clone(), abort);
                let operation = operate(
                    peer.clone(),
                    resolve.clone(),
                    id,
                    operation_request(&upgrade, &message["payload"]),
                );
                operations.push(Abortable::new(operation, registration));
            }
            "complete" => {
                if let Some(abort) = message["id"].as_str().and_then(|id| running.remove(id)) {
                    abort.abort();
                }
            }
            _ => {
                close(&peer, 4400, "Invalid message received");
                break;
            }
        }
    }
    for abort in running.values() {
        abort.abort();
    }
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

/// Resolves one operation and relays its results; returns its id when done.
async fn operate(
    peer: Peer,
    resolve: Option<Arc<dyn Resolve>>,
    id: String,
    request: Request,
) -> String {
    let what = format!("operation {id} over {}", request.url());
    let answer = match resolve {
        Some(resolve) => resolve.resolve(request).await,
        None => None,
    };
    let Some(answer) = answer else {
        let message = format!("no handler answered {what}");
        send(
            &peer,
            json!({ "id": id, "type": "error", "payload": [{ "message": message }] }),
        );
        return id;
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
    id
}

/// A subscription's event stream as `next`, `error` and `complete` messages.
async fn relay_events(peer: &Peer, id: &str, body: crate::Body) {
    let mut events = crate::sse::SseUpstream::from_body(body);
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
