//! The `grpc` entries of handler files: a gRPC method of the `--proto`
//! files answered with canned replies (proto3 JSON) or a status.
//!
//! ```yaml
//! - grpc: helloworld.Greeter/SayHello    # package.Service/Method
//!   json: { message: "Hello!" }          # the reply (proto3 JSON)
//! - grpc: helloworld.Greeter/SpellHello  # server streaming or bidirectional:
//!   json: [ { message: "B" }, { message: "o" } ]   # one reply each
//! - grpc: helloworld.Greeter/SayHello
//!   status: NOT_FOUND                    # or a number; ends the call
//!   message: no such person              # optional
//!   delay_ms: 50                         # optional
//! ```
//!
//! Everything is checked and converted once, at load: the method must be
//! in the descriptors and the JSON must fit its output type, so a call
//! only copies bytes.

use std::sync::Arc;

use futures_util::StreamExt;
use mocklib::Handler;
use mocklib::grpc::{self, Code, Messages, RawMessage, ResolverArgs, Status};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

use crate::proto;

/// A `grpc` entry's fields, as written.
pub(crate) struct GrpcEntry {
    /// `package.Service/Method`.
    pub(crate) method: String,
    /// The reply, or the replies (a list) of a streaming method.
    pub(crate) json: Option<serde_json::Value>,
    /// The code the call ends with (a name or a number); `OK` when absent.
    pub(crate) status: Option<serde_json::Value>,
    /// The status message.
    pub(crate) message: Option<String>,
    /// How long to wait before answering.
    pub(crate) delay_ms: Option<u64>,
}

/// What every call of an entry gets: the replies encoded at load, then the
/// status when it is not `OK`.
struct Answer {
    replies: Vec<RawMessage>,
    status: Option<Status>,
    delay_ms: Option<u64>,
}

impl Answer {
    /// Waits the entry's delay.
    async fn delay(&self) {
        if let Some(milliseconds) = self.delay_ms {
            mocklib::delay(milliseconds).await;
        }
    }

    /// The answer of a method with one reply.
    fn one(&self) -> Result<RawMessage, Status> {
        match &self.status {
            Some(status) => Err(status.clone()),
            // Load gives a one-reply method exactly one reply.
            None => Ok(self.replies.first().cloned().unwrap_or_default()),
        }
    }

    /// The answer of a method that streams replies: each one, then the
    /// status (a stream that ends is `OK`).
    fn stream(&self) -> futures_util::stream::Iter<std::vec::IntoIter<Result<RawMessage, Status>>> {
        let items: Vec<_> = self
            .replies
            .iter()
            .cloned()
            .map(Ok)
            .chain(self.status.clone().map(Err))
            .collect();
        futures_util::stream::iter(items)
    }
}

/// The handler of `entry`, built with mocklib's own `grpc` functions (the
/// kind the method's descriptor says) and `RawMessage` both ways; or why
/// the entry does not fit the descriptors.
pub(crate) fn handler(pool: Option<&DescriptorPool>, entry: GrpcEntry) -> Result<Handler, String> {
    let method = proto::find_method(pool, &entry.method)?;
    let route = format!("{}/{}", method.parent_service().full_name(), method.name());
    let code = match &entry.status {
        None => Code::Ok,
        Some(value) => proto::parse_code(value)?,
    };
    if code == Code::Ok && entry.message.is_some() {
        return Err("`message` is the status message of a status other than OK".to_owned());
    }
    let status = (code != Code::Ok).then(|| Status::new(code, entry.message.unwrap_or_default()));
    let output = method.output();
    let replies = if method.is_server_streaming() {
        match entry.json {
            None => Vec::new(),
            Some(serde_json::Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(index, item)| {
                    encode(&output, item)
                        .map_err(|error| format!("json, reply {}: {error}", index + 1))
                })
                .collect::<Result<_, _>>()?,
            // One reply needs no list.
            Some(item) => vec![encode(&output, item).map_err(|error| format!("json: {error}"))?],
        }
    } else {
        match (entry.json, &status) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "give json or a status other than OK, not both: a call of {route} ends with one reply or an error"
                ));
            }
            (Some(serde_json::Value::Array(_)), None) if !json_is_a_list(&output) => {
                return Err(format!(
                    "json is a list, but {route} answers one {} (a list of replies needs a server-streaming or bidirectional method)",
                    output.full_name()
                ));
            }
            (Some(json), None) => {
                vec![encode(&output, json).map_err(|error| format!("json: {error}"))?]
            }
            // The default message: every field unset.
            (None, None) => vec![RawMessage::default()],
            (None, Some(_)) => Vec::new(),
        }
    };
    let answer = Arc::new(Answer {
        replies,
        status,
        delay_ms: entry.delay_ms,
    });
    let handler = match (method.is_client_streaming(), method.is_server_streaming()) {
        (false, false) => grpc::try_unary(&route, move |_: ResolverArgs<RawMessage>| {
            let answer = Arc::clone(&answer);
            async move {
                answer.delay().await;
                answer.one()
            }
        }),
        (false, true) => grpc::try_server_streaming(&route, move |_: ResolverArgs<RawMessage>| {
            let answer = Arc::clone(&answer);
            async move {
                answer.delay().await;
                Ok::<_, Status>(answer.stream())
            }
        }),
        (true, false) => {
            grpc::try_client_streaming(&route, move |args: ResolverArgs<Messages<RawMessage>>| {
                let answer = Arc::clone(&answer);
                async move {
                    // The reply comes after the client's last message, as
                    // from a real server (and the journal records them all).
                    drain(args.message).await?;
                    answer.delay().await;
                    answer.one()
                }
            })
        }
        // The listed replies at once, then the end: a client that waits
        // for a reply before it sends (or before it closes its side)
        // still gets them.
        (true, true) => {
            grpc::try_bidi_streaming(&route, move |_: ResolverArgs<Messages<RawMessage>>| {
                let answer = Arc::clone(&answer);
                async move {
                    answer.delay().await;
                    Ok::<_, Status>(answer.stream())
                }
            })
        }
    };
    // Connect's JSON form too, converted with the descriptors (which
    // `find_method` found the method in).
    handler
        .map(|handler| match pool {
            Some(pool) => grpc::with_json(proto::ConnectJson(pool.clone()), handler),
            None => handler,
        })
        .map_err(|error| error.to_string())
}

/// Reads the client's messages to their end, or the status a bad one earns.
async fn drain(mut messages: Messages<RawMessage>) -> Result<(), Status> {
    while let Some(message) = messages.next().await {
        message?;
    }
    Ok(())
}

/// `json` as a message of type `output`, encoded; or prost-reflect's
/// error, after the name of the field it is about.
fn encode(output: &MessageDescriptor, json: serde_json::Value) -> Result<RawMessage, String> {
    match DynamicMessage::deserialize(output.clone(), &json) {
        Ok(message) => Ok(RawMessage::new(prost::Message::encode_to_vec(&message))),
        Err(error) => Err(match failing_field(output, &json) {
            Some(field) => format!("not a {}: field `{field}`: {error}", output.full_name()),
            None => format!("not a {}: {error}", output.full_name()),
        }),
    }
}

/// The first field of the object `json` that does not convert on its own:
/// prost-reflect's errors say what was wrong (`invalid type: integer `5`,
/// expected a string`) but not where, and a handler file's author needs
/// the where.
fn failing_field<'a>(output: &MessageDescriptor, json: &'a serde_json::Value) -> Option<&'a str> {
    let serde_json::Value::Object(fields) = json else {
        return None;
    };
    fields.iter().find_map(|(name, value)| {
        let alone =
            serde_json::Value::Object([(name.clone(), value.clone())].into_iter().collect());
        DynamicMessage::deserialize(output.clone(), &alone)
            .is_err()
            .then_some(name.as_str())
    })
}

/// Whether a message of type `output` is written as a JSON list: the
/// well-known `ListValue` and `Value` (which can hold one).
fn json_is_a_list(output: &MessageDescriptor) -> bool {
    matches!(
        output.full_name(),
        "google.protobuf.ListValue" | "google.protobuf.Value"
    )
}
