//! The `ws` entries of handler files: a mock WebSocket server, the same
//! as `mocklib::ws::link(url).on_connection(..)` in Rust, whose handler
//! sends with `connection.client.send(..)`, reads with
//! `connection.client.recv()` and closes with `client.close_with(code,
//! reason)`.
//!
//! ```yaml
//! - ws: /chat/:room                     # a ws:// or wss:// URL, or a path
//!   on_open: [ welcome, { type: hello } ]   # sent to each client that connects
//!   on_message:                         # the first rule a message matches
//!     - match: { text: ping }           # the message is this text
//!       send: [ pong ]
//!     - match: { json: { type: join } } # JSON holding this
//!       send: [ { type: joined } ]
//!     - match: { regex: "^bye" }        # text a regular expression matches
//!       send: [ see you ]
//!       close: { code: 4000, reason: bye }
//!     - send: [ "?" ]                   # no match: any other message
//! - ws: /closed
//!   close: { code: 1008, reason: not today }   # after on_open: at once
//! ```
//!
//! A string is sent as a text message; any other JSON value as its JSON
//! text. A message no rule matches gets nothing.

use std::sync::Arc;

use mocklib::Handler;
use mocklib::ws::{self, Message};

use crate::entry_parts::{Conditions, Expected};
use crate::holds::Holds;

/// A `ws` entry, as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WsEntry {
    /// The socket's URL or path pattern.
    ws: String,
    /// Messages sent when a client connects.
    #[serde(default)]
    on_open: Vec<serde_json::Value>,
    /// What a message from the client gets: the first rule it matches.
    #[serde(default)]
    on_message: Vec<Rule>,
    /// Closes the socket after `on_open`.
    close: Option<Close>,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
}

/// One rule of `on_message:`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    /// Which messages; left out, every one.
    #[serde(rename = "match")]
    matches: Option<MessageMatch>,
    #[serde(default)]
    send: Vec<serde_json::Value>,
    /// Closes the socket after `send`.
    close: Option<Close>,
}

/// A rule's `match:`: one of its fields.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageMatch {
    /// The message is this text, exactly.
    text: Option<String>,
    /// The message is JSON holding this (a subset).
    json: Option<serde_json::Value>,
    /// The message is text this regular expression matches.
    regex: Option<String>,
}

/// A close frame: `client.close_with(code, reason)`.
#[derive(serde::Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Close {
    code: u16,
    #[serde(default)]
    reason: String,
}

/// A rule's condition, built at load.
enum Condition {
    Any,
    Text(String),
    Json(Holds),
    Regex(regex::Regex),
}

impl Condition {
    fn holds(&self, message: &Message) -> bool {
        match (self, message.as_text()) {
            (Condition::Any, _) => true,
            (Condition::Text(expected), Some(text)) => expected == text,
            (Condition::Json(holds), _) => holds.text(message.as_bytes().to_vec()),
            (Condition::Regex(pattern), Some(text)) => pattern.is_match(text),
            (_, None) => false,
        }
    }
}

/// What every connection of an entry plays.
struct Script {
    on_open: Vec<String>,
    rules: Vec<(Condition, Vec<String>, Option<Close>)>,
    close: Option<Close>,
}

/// A message to send: a string as it is, any other value as JSON text.
fn message_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    }
}

/// A close code a server may send (RFC 6455 §7.4: not 1004-1006 nor
/// 1015, which are never sent; 1000-2999 as defined, 3000-4999 for
/// applications).
fn check_close(at: &str, close: &Close) -> Result<(), String> {
    let code = close.code;
    let defined = matches!(code, 1000..=1003 | 1007..=1014);
    if !(defined || (3000..=4999).contains(&code)) {
        return Err(format!(
            "{at}.code: {code} is not a close code a server sends (1000-1003, 1007-1014, 3000-4999)"
        ));
    }
    if close.reason.len() > 123 {
        return Err(format!(
            "{at}.reason: at most 123 bytes (a close frame's payload), not {}",
            close.reason.len()
        ));
    }
    Ok(())
}

impl Rule {
    fn checked(self, at: &str) -> Result<(Condition, Vec<String>, Option<Close>), String> {
        let condition =
            match self.matches {
                None => Condition::Any,
                Some(MessageMatch {
                    text: Some(text),
                    json: None,
                    regex: None,
                }) => Condition::Text(text),
                Some(MessageMatch {
                    text: None,
                    json: Some(json),
                    regex: None,
                }) => Condition::Json(Holds::new(&json)),
                Some(MessageMatch {
                    text: None,
                    json: None,
                    regex: Some(pattern),
                }) => Condition::Regex(regex::Regex::new(&pattern).map_err(|error| {
                    format!("{at}.match.regex: not a regular expression: {error}")
                })?),
                Some(_) => {
                    return Err(format!("{at}.match: give one of text, json and regex"));
                }
            };
        if let Some(close) = &self.close {
            check_close(&format!("{at}.close"), close)?;
        }
        if self.send.is_empty() && self.close.is_none() {
            return Err(format!("{at}: give send, close or both"));
        }
        let send = self.send.into_iter().map(message_text).collect();
        Ok((condition, send, self.close))
    }
}

impl Script {
    /// Plays the script to one client.
    async fn play(&self, client: ws::Client) {
        for text in &self.on_open {
            client.send(text.clone());
        }
        if let Some(close) = &self.close {
            client.close_with(close.code, &close.reason);
            return;
        }
        while let Some(message) = client.recv().await {
            let rule = self
                .rules
                .iter()
                .find(|(condition, _, _)| condition.holds(&message));
            if let Some((_, send, close)) = rule {
                for text in send {
                    client.send(text.clone());
                }
                if let Some(close) = close {
                    client.close_with(close.code, &close.reason);
                    return;
                }
            }
        }
    }
}

impl WsEntry {
    /// The entry's expected count, taken out before the handler is built.
    pub(crate) fn times(&mut self) -> Option<Expected> {
        self.times.take()
    }

    /// The handler: `ws::link(url).on_connection(..)` playing the script.
    pub(crate) fn into_handler(self) -> Result<Handler, String> {
        if let Some(close) = &self.close {
            check_close("close", close)?;
            if !self.on_message.is_empty() {
                return Err(
                    "close: closes the socket after on_open, so on_message would get nothing; close in an on_message rule instead"
                        .to_owned(),
                );
            }
        }
        let rules = self
            .on_message
            .into_iter()
            .enumerate()
            .map(|(index, rule)| rule.checked(&format!("on_message[{index}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let script = Arc::new(Script {
            on_open: self.on_open.into_iter().map(message_text).collect(),
            rules,
            close: self.close,
        });
        let link = ws::try_link(&self.ws).map_err(|error| format!("ws: {error}"))?;
        let handler = link.on_connection(move |connection: ws::ResolverArgs| {
            let script = Arc::clone(&script);
            async move { script.play(connection.client).await }
        });
        crate::entry_parts::finish(handler, self.conditions, self.once)
    }
}
