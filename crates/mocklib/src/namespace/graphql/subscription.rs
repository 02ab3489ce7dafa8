//! GraphQL subscriptions: a resolver that publishes results over time.
//!
//! Over HTTP a subscription is answered as an event stream in the shape of
//! the GraphQL over SSE protocol (`event: next` with each result, then
//! `event: complete`); over a WebSocket speaking `graphql-transport-ws`
//! (see [`over_ws`](super::over_ws)) the same stream becomes `next`, `error`
//! and `complete` messages. One resolver serves both transports.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::ResolverArgs;
use crate::handling::resolver::{Resolution, SessionDriver, SessionOutput};
use crate::message::response::HttpResponse;
use crate::namespace::sse::{Client, Event};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The argument of a subscription resolver.
#[derive(Debug)]
#[non_exhaustive]
pub struct SubscriptionArgs {
    /// Publishes results to the subscriber.
    pub subscription: Subscription,
    /// The operation: its document, variables, name, the request.
    pub operation: ResolverArgs,
}

/// The subscriber's side of one subscription (MSW: `subscription`): publish
/// results, then complete it or fail it. It completes by itself when the
/// resolver has returned and no clone of it is left.
#[derive(Debug, Clone)]
pub struct Subscription {
    client: Client,
    /// Whether `complete()` or `error()` already ended it.
    ended: Arc<AtomicBool>,
}

impl Subscription {
    /// Publishes one execution result, such as `{"data": {...}}` or
    /// `{"errors": [...]}` (a `next` message).
    pub fn next(&self, result: impl serde::Serialize) {
        self.client.send(Event::json(&result).event("next"));
    }

    /// Publishes `{"data": data}`.
    pub fn next_data(&self, data: impl serde::Serialize) {
        self.next(json!({ "data": serde_json::to_value(data).unwrap_or(Value::Null) }));
    }

    /// Ends the subscription with GraphQL errors (an `error` message over a
    /// WebSocket): `errors` is a list of `{"message": ...}` objects.
    pub fn error(&self, errors: impl serde::Serialize) {
        if !self.ended.swap(true, Ordering::SeqCst) {
            self.client.send(Event::json(&errors).event("error"));
            self.client.close();
        }
    }

    /// Ends the subscription normally (a `complete` message).
    pub fn complete(&self) {
        if !self.ended.swap(true, Ordering::SeqCst) {
            self.client.send(complete_event());
            self.client.close();
        }
    }

    /// Whether the subscription is over, or its subscriber went away.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

fn complete_event() -> Event {
    Event::data("").event("complete")
}

/// The resolver of a subscription handler, as the `graphql` handlers run it:
/// an event-stream response whose body drives `resolver`.
pub(super) fn resolver<F, R, M>(
    resolver: F,
) -> impl Fn(ResolverArgs) -> Resolution + Send + Sync + 'static
where
    F: Fn(SubscriptionArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    move |operation| {
        let (client, body) = crate::namespace::sse::open_session();
        let ended = Arc::new(AtomicBool::new(false));
        let subscription = Subscription {
            client: client.clone(),
            ended: Arc::clone(&ended),
        };
        let SessionDriver(driver, sync_end) = resolver(SubscriptionArgs {
            subscription: subscription.clone(),
            operation,
        })
        .into_driver();
        if let Err(problem) = sync_end {
            subscription.error(json!([{ "message": problem }]));
        }
        // A failing resolver ends its subscription with an `error`, as a
        // GraphQL server does, rather than by breaking the stream.
        let driver = driver.map(|future| -> crate::handling::resolver::SessionFuture {
            let subscription = subscription.clone();
            Box::pin(async move {
                if let Err(problem) = future.await {
                    crate::support::log::error(&format!(
                        "a GraphQL subscription resolver failed: {problem}"
                    ));
                    subscription.error(json!([{ "message": problem }]));
                }
                Ok(())
            })
        });
        drop((client, subscription));
        // A subscription that ends without saying so completes.
        let completion = futures_util::stream::once(async move {
            (!ended.load(Ordering::SeqCst))
                .then(|| Ok::<Bytes, BoxError>(complete_event().to_bytes()))
        })
        .filter_map(std::future::ready);
        let events = body.driving(driver).chain(completion);
        let response = HttpResponse::try_stream(events)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache");
        Resolution::Respond(response)
    }
}
