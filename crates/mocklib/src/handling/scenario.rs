//! Scenarios: a named state that handlers answer by and change — an order
//! `started`, then `paid`, then `shipped` — kept per scope, and per key
//! when one state per order id is wanted (WireMock's scenarios, with
//! Mountebank's keyed state).
//!
//! ```
//! use mocklib::scenario::Scenario;
//! use mocklib::{http, HttpResponse, node::setup_server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // One state per order: the id is the key.
//! let order = Scenario::new("order").keyed_by(|request| {
//!     request.url().path_segments()?.nth(1).map(str::to_owned)
//! });
//! let server = setup_server([
//!     http::get("https://shop.example/orders/:id", |_| HttpResponse::json(&"unpaid"))
//!         .when_state(&order, Scenario::STARTED),
//!     http::get("https://shop.example/orders/:id", |_| HttpResponse::json(&"paid"))
//!         .when_state(&order, "paid"),
//!     http::post("https://shop.example/orders/:id/pay", |_| HttpResponse::empty().status(204))
//!         .when_state(&order, Scenario::STARTED)
//!         .set_state(&order, "paid"),
//! ]);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let state = |id: u32| {
//!     let client = client.clone();
//!     async move {
//!         let url = format!("https://shop.example/orders/{id}");
//!         client.get(url).send().await.unwrap().json::<String>().await.unwrap()
//!     }
//! };
//! client.post("https://shop.example/orders/1/pay").send().await?;
//! assert_eq!(state(1).await, "paid");
//! assert_eq!(state(2).await, "unpaid"); // order 2 has a state of its own
//! # Ok(())
//! # }
//! ```
//!
//! A scenario starts in [`Scenario::STARTED`]. [`Handler::when_state`]
//! makes a handler match only in a state (otherwise the lookup goes on as
//! if it had not matched: `times` does not count it);
//! [`Handler::set_state`] moves the scenario once the handler has answered
//! (not when its resolver fell through). States are kept like any
//! [`ScopeLocal`] value: a boundary starts from its enclosing scope's and
//! its changes stay inside it; `restore_handlers` starts them over. Read or
//! set them from a test with [`states`] and the server's `scope_local`.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::handling::handler::{Handler, Matched};
use crate::handling::resolver::Resolution;
use crate::handling::scope_local::ScopeLocal;
use crate::message::request::Request;

/// A named state machine that handlers answer by: see the
/// [module docs](self). Clones name the same scenario; two `Scenario`s
/// with one name are one scenario (and should have one key).
#[derive(Clone)]
pub struct Scenario {
    name: Arc<str>,
    key: Option<Arc<KeyFn>>,
}

type KeyFn = dyn Fn(&Request) -> Option<String> + Send + Sync;

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("keyed", &self.key.is_some())
            .finish()
    }
}

impl Scenario {
    /// The state every scenario (and every key of one) starts in.
    pub const STARTED: &'static str = "started";

    /// The scenario named `name`, one state for all requests.
    pub fn new(name: impl Into<String>) -> Self {
        Scenario {
            name: Arc::from(name.into()),
            key: None,
        }
    }

    /// This scenario with a state per key: `key` reads it from each request
    /// (an order id from the path, a header); a request it gives `None`
    /// shares the state of the empty key.
    pub fn keyed_by(
        self,
        key: impl Fn(&Request) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        Scenario {
            key: Some(Arc::new(key)),
            ..self
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key `request` reads as: empty for a scenario without keys.
    fn key_of(&self, request: &Request) -> String {
        self.key
            .as_ref()
            .and_then(|key| key(request))
            .unwrap_or_default()
    }
}

/// The states of every scenario in one scope: by scenario name, then key
/// (`""` for a scenario without keys). A scenario or key not in it is in
/// [`Scenario::STARTED`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScenarioStates(BTreeMap<String, BTreeMap<String, String>>);

impl ScenarioStates {
    /// The state of `scenario` for `key` (`""` without keys).
    pub fn get(&self, scenario: &str, key: &str) -> &str {
        self.0
            .get(scenario)
            .and_then(|keys| keys.get(key))
            .map_or(Scenario::STARTED, String::as_str)
    }

    /// Puts `scenario`'s `key` in `state`.
    pub fn set(&mut self, scenario: &str, key: &str, state: &str) {
        self.0
            .entry(scenario.to_owned())
            .or_default()
            .insert(key.to_owned(), state.to_owned());
    }

    /// Every state set so far: scenario, key, state.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.0.iter().flat_map(|(scenario, keys)| {
            keys.iter()
                .map(move |(key, state)| (scenario.as_str(), key.as_str(), state.as_str()))
        })
    }

    /// Every scenario back to [`Scenario::STARTED`].
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Where each scope keeps its [`ScenarioStates`]: read or change them from
/// a test with the server's `scope_local` (in the current scope, or a
/// boundary's with `in_scope`).
///
/// ```
/// use mocklib::{node::setup_server, scenario};
///
/// let server = setup_server([]);
/// server.scope_local(scenario::states(), |states| states.set("checkout", "", "paid"));
/// let state = server.scope_local(scenario::states(), |states| states.get("checkout", "").to_owned());
/// assert_eq!(state, "paid");
/// ```
pub fn states() -> &'static ScopeLocal<ScenarioStates> {
    static STATES: OnceLock<ScopeLocal<ScenarioStates>> = OnceLock::new();
    STATES.get_or_init(|| ScopeLocal::new(ScenarioStates::default))
}

impl Handler {
    /// This handler, matching only while `scenario` is in `state` (for the
    /// request's key); see [`scenario`](crate::scenario).
    pub fn when_state(self, scenario: &Scenario, state: &str) -> Handler {
        let (scenario, state) = (scenario.clone(), state.to_owned());
        self.around(move |context, matched| {
            let key = scenario.key_of(context.request());
            let now =
                context.scope_local(states(), |states| states.get(&scenario.name, &key) == state);
            now.then_some(matched)
        })
    }

    /// This handler, moving `scenario` to `state` (for the request's key)
    /// once it has answered; see [`scenario`](crate::scenario).
    pub fn set_state(self, scenario: &Scenario, state: &str) -> Handler {
        let (scenario, state) = (scenario.clone(), Arc::<str>::from(state));
        self.around(move |context, matched| {
            let key = scenario.key_of(context.request());
            let (name, state) = (Arc::clone(&scenario.name), Arc::clone(&state));
            Some(Matched::new(move |call| {
                // The scope's values, before the call takes the context.
                let values = call.values.clone();
                matched.call(call).map(move |resolution| {
                    let failed = matches!(
                        resolution,
                        Resolution::Fallthrough | Resolution::Exhausted | Resolution::Failed(_)
                    );
                    if let (false, Some(values)) = (failed, &values) {
                        values.with(states(), |states| states.set(&name, &key, &state));
                    }
                    resolution
                })
            }))
        })
    }
}
