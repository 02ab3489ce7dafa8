//! What any handler-file entry may add to how it answers, whatever its
//! kind: chaos (faults on a share of its requests, latency) and a scenario
//! (answer only in a state, move the state after answering) — the
//! library's `Handler::chaos`, `when_state` and `set_state`.
//!
//! ```yaml
//! - path: /orders/:id
//!   json: { state: unpaid }
//!   scenario: order
//!   key: "{{ request.params.id }}"   # a state per order id
//!   when_state: started
//! - method: POST
//!   path: /orders/:id/pay
//!   status: 204
//!   scenario: order
//!   key: "{{ request.params.id }}"
//!   set_state: paid
//!   chaos: { fault_rate: 0.1, fault: connection_reset }
//! ```
//!
//! These fields are taken off an entry before its kind reads the rest, so
//! every kind has them without repeating them (the JSON Schema lists them
//! on each).

use mocklib::Handler;
use mocklib::scenario::Scenario;

use crate::chaos_spec::ChaosSpec;
use crate::template::{Templates, path_params, path_predicate, request_value};
use crate::webhook_spec::WebhookSpec;

/// The fields, as [`take`] takes them off an entry.
pub(crate) const FIELDS: &[&str] = &[
    "chaos",
    "scenario",
    "when_state",
    "set_state",
    "key",
    "webhook",
];

/// An entry's chaos and scenario fields.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Behaviour {
    /// Faults and latency for this entry alone (the `--chaos` file's
    /// fields).
    chaos: Option<ChaosSpec>,
    /// The scenario `when_state` and `set_state` are about.
    scenario: Option<String>,
    /// Answers only while the scenario is in this state (`started` at
    /// first).
    when_state: Option<String>,
    /// Moves the scenario to this state once the entry has answered.
    set_state: Option<String>,
    /// A template of the request whose text is the scenario's key: a state
    /// per key (`{{ request.params.id }}`).
    key: Option<String>,
    /// A request sent after the entry answers (see `webhook_spec.rs`).
    webhook: Option<WebhookSpec>,
}

/// Takes the [`FIELDS`] off `entry` (an object) and reads them.
pub(crate) fn take(entry: &mut serde_json::Value) -> Result<Behaviour, serde_json::Error> {
    let Some(object) = entry.as_object_mut() else {
        return Ok(Behaviour::default());
    };
    let taken: serde_json::Map<String, serde_json::Value> = FIELDS
        .iter()
        .filter_map(|field| Some(((*field).to_owned(), object.remove(*field)?)))
        .collect();
    if taken.is_empty() {
        return Ok(Behaviour::default());
    }
    serde_json::from_value(serde_json::Value::Object(taken))
}

impl Behaviour {
    /// `handler` with this behaviour. `path`: the entry's path pattern, if
    /// it has one (its `:params` are what a `key` template reads).
    pub(crate) fn apply(self, handler: Handler, path: Option<&str>) -> Result<Handler, String> {
        let mut handler = handler;
        let states = self.when_state.is_some() || self.set_state.is_some();
        match (&self.scenario, states, &self.key) {
            (None, true, _) => {
                return Err(
                    "when_state and set_state need `scenario`: the scenario's name".to_owned(),
                );
            }
            (None, false, Some(_)) => return Err("key: needs `scenario`".to_owned()),
            (Some(_), false, _) => {
                return Err("scenario: give when_state, set_state or both".to_owned());
            }
            _ => {}
        }
        if let Some(name) = &self.scenario {
            let mut scenario = Scenario::new(name.clone());
            if let Some(key) = &self.key {
                scenario = keyed(scenario, key, path)?;
            }
            if let Some(state) = &self.when_state {
                handler = handler.when_state(&scenario, state);
            }
            if let Some(state) = &self.set_state {
                handler = handler.set_state(&scenario, state);
            }
        }
        if let Some(webhook) = self.webhook {
            handler = webhook.apply(handler, path)?;
        }
        if let Some(chaos) = &self.chaos {
            let chaos = chaos.chaos(None).map_err(|why| format!("chaos.{why}"))?;
            eprintln!(
                "mocklib serve: chaos seed {} for {} (seed: {} in its chaos replays it)",
                chaos.seed(),
                handler.header(),
                chaos.seed()
            );
            handler = handler.chaos(&chaos);
        }
        Ok(handler)
    }
}

/// `scenario` keyed by the template `key`, rendered per request with the
/// `request` of the other templates (its `params` from `path`).
fn keyed(scenario: Scenario, key: &str, path: Option<&str>) -> Result<Scenario, String> {
    let mut templates = Templates::new();
    templates.add("key".to_owned(), key.to_owned())?;
    let predicate = path_predicate(path)?;
    Ok(scenario.keyed_by(move |request| {
        let params = path_params(predicate.as_ref(), request);
        let context = minijinja::context! {
            request => request_value(request, &mocklib::request::Cookies::from_headers(request.headers()), params)
        };
        // A key that fails to render shares the state of the empty key,
        // and says so.
        match templates.render("key", &context) {
            Ok(key) => Some(key),
            Err(why) => {
                eprintln!("mocklib serve: {why}");
                None
            }
        }
    }))
}
