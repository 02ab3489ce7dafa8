//! The `sse` entries of handler files: a server-sent event stream, the
//! same as `mocklib::sse::get(path, ..)` (or `sse::post`, `sse::on`) in
//! Rust, its resolver sending `sse::Event`s through `args.client` with
//! `mocklib::delay` between them.
//!
//! ```yaml
//! - sse: /notifications           # a path or URL, as `path` is
//!   method: GET                   # optional: GET (POST for LLM-style streams)
//!   events:
//!     - { event: greeting, data: hello, id: "1", retry: 3000 }
//!     - { pause_ms: 100 }         # a pause, an item of its own
//!     - { data: { unread: 3 } }   # JSON data: Event::json
//!   repeat: 2                     # optional: the list twice (true: until the client goes)
//!   template: true                # optional: data, event and id over request, round
//!   match: { bearer: t0ken }      # optional, as once and times
//! ```
//!
//! The stream ends after the last event (or when the client goes away).
//! A template that fails to render sends an event `mocklib-error` saying
//! which and why, and ends the stream.

use std::sync::Arc;
use std::time::Duration;

use mocklib::Handler;
use mocklib::sse::{self, Event};

use crate::entry_parts::{Conditions, Expected, method_and_path};
use crate::template::{Templates, add_json, render_json};

/// An `sse` entry, as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SseEntry {
    /// The stream's path or URL pattern.
    sse: String,
    method: Option<String>,
    events: Vec<SseItem>,
    /// How many times the events are sent (a count, or `true`: until the
    /// client goes away).
    repeat: Option<serde_json::Value>,
    #[serde(default)]
    template: bool,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
}

/// One item of `events:`: an event, or a pause.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SseItem {
    event: Option<String>,
    /// Text, or any other JSON value (sent as its JSON text).
    data: Option<serde_json::Value>,
    id: Option<String>,
    /// The reconnection delay the event asks of the client, milliseconds.
    retry: Option<u64>,
    /// A pause before the next item, milliseconds.
    pause_ms: Option<u64>,
}

/// An item checked at load.
enum Item {
    Event {
        event: Option<String>,
        data: Option<serde_json::Value>,
        id: Option<String>,
        retry: Option<u64>,
    },
    Pause(u64),
}

/// What every stream of an entry plays.
struct Plan {
    items: Vec<Item>,
    /// `None`: until the client goes away.
    rounds: Option<u64>,
    templates: Option<Templates>,
}

/// A field of an event is one line (`event`, `id`).
fn single_line(at: &str, text: &str) -> Result<(), String> {
    if text.contains(['\n', '\r', '\0']) {
        return Err(format!(
            "{at}: one line, without line breaks or NUL (the stream's framing)"
        ));
    }
    Ok(())
}

impl SseItem {
    fn checked(self, at: &str) -> Result<Item, String> {
        let SseItem {
            event,
            data,
            id,
            retry,
            pause_ms,
        } = self;
        let has_event = event.is_some() || data.is_some() || id.is_some() || retry.is_some();
        match pause_ms {
            Some(_) if has_event => Err(format!(
                "{at}: a pause is an item of its own ({{pause_ms: 100}}), beside the events"
            )),
            Some(milliseconds) => Ok(Item::Pause(milliseconds)),
            None if !has_event => Err(format!(
                "{at}: give data (and event, id, retry) or pause_ms"
            )),
            None => {
                if let Some(event) = &event {
                    single_line(&format!("{at}.event"), event)?;
                }
                if let Some(id) = &id {
                    single_line(&format!("{at}.id"), id)?;
                }
                Ok(Item::Event {
                    event,
                    data,
                    id,
                    retry,
                })
            }
        }
    }
}

impl Plan {
    /// The event of an item, its templates rendered for `context`.
    fn event(
        &self,
        at: &str,
        (event, data, id, retry): (
            &Option<String>,
            &Option<serde_json::Value>,
            &Option<String>,
            Option<u64>,
        ),
        context: &minijinja::Value,
    ) -> Result<Event, String> {
        let text = |field: &str, value: &String| match &self.templates {
            Some(templates) if templates.has(&format!("{at}.{field}")) => {
                templates.render(&format!("{at}.{field}"), context)
            }
            _ => Ok(value.clone()),
        };
        let data = match (&self.templates, data) {
            (Some(templates), Some(data)) => Some(render_json(
                templates,
                data,
                &format!("{at}.data"),
                context,
            )?),
            (None, data) => data.clone(),
            (_, None) => None,
        };
        let mut built = match data {
            None => Event::new(),
            Some(serde_json::Value::String(text)) => Event::data(text),
            Some(json) => Event::json(&json),
        };
        if let Some(event) = event {
            built = built.event(text("event", event)?);
        }
        if let Some(id) = id {
            built = built.id(text("id", id)?);
        }
        if let Some(milliseconds) = retry {
            built = built.retry(Duration::from_millis(milliseconds));
        }
        Ok(built)
    }

    /// Plays the events to one client.
    async fn play(&self, args: sse::ResolverArgs) {
        let params = args
            .params
            .iter()
            .map(|(k, v)| (k.to_owned(), v.as_str().into_owned()))
            .collect();
        let request = crate::template::request_value(&args.request, &args.cookies, params);
        let mut round = 0;
        while self.rounds.is_none_or(|rounds| round < rounds) {
            let context = minijinja::context! { request => request.clone(), round => round };
            for (index, item) in self.items.iter().enumerate() {
                if args.client.is_closed() {
                    return;
                }
                match item {
                    Item::Pause(milliseconds) => mocklib::delay(*milliseconds).await,
                    Item::Event {
                        event,
                        data,
                        id,
                        retry,
                    } => {
                        let at = format!("events[{index}]");
                        match self.event(&at, (event, data, id, *retry), &context) {
                            Ok(event) => args.client.send(event),
                            Err(why) => {
                                args.client.send(
                                    Event::data(format!("mocklib serve: {why}"))
                                        .event("mocklib-error"),
                                );
                                args.client.close();
                                return;
                            }
                        }
                    }
                }
            }
            round += 1;
        }
    }
}

impl SseEntry {
    /// The entry's expected count, taken out before the handler is built.
    pub(crate) fn times(&mut self) -> Option<Expected> {
        self.times.take()
    }

    /// The handler: `sse::on(method, path, ..)` playing the events.
    pub(crate) fn into_handler(self) -> Result<Handler, String> {
        let method = self.method.as_deref().or(Some("GET"));
        let (method, path) = method_and_path(method, Some(self.sse))?;
        let method = method.ok_or("method: an event stream answers one method (GET, POST, ...)")?;
        if self.events.is_empty() {
            return Err("events: give at least one event".to_owned());
        }
        let items = self
            .events
            .into_iter()
            .enumerate()
            .map(|(index, item)| item.checked(&format!("events[{index}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let rounds = match self.repeat {
            None => Some(1),
            Some(serde_json::Value::Bool(true)) => None,
            Some(serde_json::Value::Number(count)) if count.as_u64().is_some_and(|n| n >= 1) => {
                count.as_u64()
            }
            Some(other) => {
                return Err(format!(
                    "repeat: a count from 1, or true (until the client goes away), not {other}"
                ));
            }
        };
        let pauses = items
            .iter()
            .any(|item| matches!(item, Item::Pause(n) if *n > 0));
        if rounds.is_none() && !pauses {
            return Err(
                "repeat: true sends the events until the client goes away: give a pause_ms among them"
                    .to_owned(),
            );
        }
        let templates = if self.template {
            let mut templates = Templates::new();
            for (index, item) in items.iter().enumerate() {
                if let Item::Event {
                    event, data, id, ..
                } = item
                {
                    let at = format!("events[{index}]");
                    for (field, value) in [("event", event), ("id", id)] {
                        if let Some(value) = value {
                            templates.add(format!("{at}.{field}"), value.clone())?;
                        }
                    }
                    if let Some(data) = data {
                        add_json(&mut templates, data, &format!("{at}.data"))?;
                    }
                }
            }
            Some(templates)
        } else {
            None
        };
        let plan = Arc::new(Plan {
            items,
            rounds,
            templates,
        });
        let handler = sse::try_on(method, path, move |args: sse::ResolverArgs| {
            let plan = Arc::clone(&plan);
            async move { plan.play(args).await }
        })
        .map_err(|error| format!("sse: {error}"))?;
        crate::entry_parts::finish(handler, self.conditions, self.once)
    }
}
