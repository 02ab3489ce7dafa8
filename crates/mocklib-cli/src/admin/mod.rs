//! The admin API of `mocklib serve`: what a test in any language changes
//! and asks at runtime, on the server's own origin, under `/__mocklib/`.
//!
//! Per state — the server's own list, or a scope (below):
//!
//! - `GET handlers`: the handlers in lookup order (`handler`, `once`,
//!   `added_at_runtime`), less the admin API itself.
//! - `POST handlers`: entries in the handler-file format (YAML when the
//!   content type says `yaml`, JSON otherwise), put ahead of every other
//!   handler as `use_handlers` does; `201 {"added": n}`, or `400` naming
//!   the entry and the field (with a JSON pointer) as a bad file would.
//! - `PUT handlers`: the given entries become the whole list, in place of
//!   the files' and of what was added (`reset_handlers_to`); a reload of
//!   the files leaves it.
//! - `DELETE handlers`: back to the files' handlers (`reset_handlers`).
//! - `DELETE handlers/{index}`: removes one handler added at runtime, by
//!   its place in `GET`'s list.
//! - `GET requests` (filtered: `method`, `url`, `handler`, `unhandled`),
//!   `DELETE requests`: the journal.
//! - `GET verify`: `200 {"ok": true}`, or `422` with `verify()`'s report
//!   and the same as data (`unmet`: handler, expected, received;
//!   `unhandled`).
//! - `GET scenarios`, `PUT scenarios` (a list of `{scenario, key, state}`),
//!   `DELETE scenarios`: the states of the scope's scenarios (a reset of
//!   the handlers resets them too).
//! - `GET callbacks`, a WebSocket upgrade: the state's callback channel
//!   (`callbacks.rs`), which the client of a test in another language holds
//!   open; `callback` entries send it each request they match and answer
//!   with what comes back (the frames: the README, and `CallbackCall` and
//!   `CallbackAnswer` in the OpenAPI document). One client at a time
//!   (`409` before the upgrade); it closes (1001) when its scope ends.
//!
//! **Scopes** are boundaries for other processes: `POST scopes` opens one
//! with its own handlers over the files', its own journal, sequences,
//! resources and expectations, and its own ways in — a port (`url`) and a
//! proxy credential (`proxy_url`) — returned with the environment a child
//! process needs (`env`). The resources above act on a scope when asked on
//! its own origin (`{url}/__mocklib/handlers`), or on the server's origin
//! as `scopes/{id}/handlers`. `DELETE scopes/{id}` ends one; so does its
//! owner disappearing: a `GET {url}/__mocklib/hold` held open ends the
//! scope when it ends, and a scope nobody holds or asks about for the
//! idle timeout is ended (an open callback channel holds it). An ended scope ends whatever its clients keep
//! open: its port is closed and its credential refused (`407`) before the
//! `DELETE` is answered, the connections kept to its port or tunnelled
//! with its credential close (a request still arriving on one is
//! answered `410`), its streams end and its callback channel closes. A
//! scope never sees another's state, and the server's own list does not
//! see theirs.
//!
//! Server-wide: `GET scopes`, `POST record` (`{"path", "mode"}`: record
//! what passes through into a HAR file) and `DELETE record`,
//! `GET openapi.json` (this API as an OpenAPI 3.1 document).
//!
//! The live page (`GET /__mocklib/`) and its event stream
//! (`GET /__mocklib/events`) are `page.rs`'s, on the server's own origin.
//!
//! **Who may ask.** Only requests addressed to the server's own origin —
//! `127.0.0.1`, `localhost` or `[::1]` at its port or a scope's — reach the
//! API: a proxied request for another host's `/__mocklib/` is that host's
//! business, and a page that rebinds its own name to loopback cannot reach
//! it. With `--admin-token` every request needs `Authorization: Bearer
//! TOKEN` (`401` otherwise; the event stream, which a browser's
//! `EventSource` opens without headers, and the callback channel, whose
//! clients may not set headers on an upgrade, may carry it as `?token=`).
//! Payloads over 4 MiB are refused (`413`).

mod callbacks;
mod document;
mod journal;
mod origin;
mod page;
mod scopes;

pub(crate) use journal::journal_entry;
use origin::{PREFIX, is_loopback};
pub(crate) use page::{Page, redirect as page_redirect};

pub(crate) use scopes::Scopes;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::lock::lock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mocklib::har::{RecordMode, Recording};
use mocklib::node::Server;
use mocklib::{Handler, HttpResponse, Request};
use prost_reflect::DescriptorPool;
use url::Url;

use crate::callback_entry::Callbacks;
use crate::handler_file;
use scopes::{ScopeEntry, ScopeId, ScopeState};

/// The scopes, shared by the admin API and the reloads of the files.
pub(crate) type SharedScopes = Arc<Mutex<Scopes>>;

/// The descriptors of the `--proto` files (`None` without any).
pub(crate) type SharedPool = Arc<Mutex<Option<DescriptorPool>>>;

/// Every scenario of the current scope back to `started` (with a reset of
/// its handlers, as WireMock resets its scenarios with its stubs).
fn reset_scenarios(server: &Server) {
    server.scope_local(mocklib::scenario::states(), |states| states.clear());
}

/// Admin payloads over this many bytes are refused with `413`: a handler
/// file is small, and the body is held in memory.
const MAX_BODY: usize = 4 << 20;

/// How often a held-open request writes, so that it notices its client is
/// gone (a write to a closed connection fails).
const HOLD_BEAT: Duration = Duration::from_secs(1);

/// The admin API's state and configuration.
pub(crate) struct Admin {
    pub(crate) server: Server,
    pub(crate) base_url: Url,
    pub(crate) pool: SharedPool,
    /// What `body_file`, `seed_file` and recording paths are relative to
    /// (the command's folder).
    pub(crate) dir: PathBuf,
    pub(crate) scopes: SharedScopes,
    /// The callback channels `callback` entries call through.
    pub(crate) callbacks: Callbacks,
    /// `--chaos`: around the handlers added here too.
    pub(crate) chaos: Option<mocklib::chaos::Chaos>,
    /// `--admin-token`: the bearer token every request must carry.
    pub(crate) token: Option<String>,
    /// The live page, for every state.
    pub(crate) page: Page,
    /// The `--contract` documents, for `coverage`.
    pub(crate) contracts: Vec<Arc<dyn mocklib::contract::Contract>>,
}

impl Admin {
    /// The handler answering every admin resource, then the callback
    /// channel's WebSocket handlers, which take the upgrades it lets
    /// through. It lets other requests under `/__mocklib/` fall through
    /// (another host's, the live page's).
    pub(crate) fn into_handlers(self) -> Vec<Handler> {
        let channels = callbacks::handlers(
            &self.scopes,
            &self.callbacks,
            &self.server,
            self.base_url.port(),
        );
        let document = document::document(&self.base_url);
        let admin = Arc::new((self, document));
        // Any host and port (the root's origin and every scope's), but a
        // literal path: the index then asks this handler only about admin
        // paths, not about every request served (`*/__mocklib/*` has no
        // literal prefix).
        // The journal's `DELETE` alone goes into the journal: a live page's
        // stream tells a cleared journal by it (`page.rs`).
        let clearing = {
            let admin = Arc::clone(&admin);
            mocklib::http::delete("http://*:*/__mocklib/*", move |args| {
                let (admin, document) = &*admin;
                if !args.request.url().path().ends_with("/requests") {
                    return None;
                }
                admin.answer(&args.request, document)
            })
        };
        // Every other admin request stays out of it: a test or a page that
        // polls would otherwise push the requests under test out of the
        // journal's last thousand.
        let resources = mocklib::http::all("http://*:*/__mocklib/*", move |args| {
            let (admin, document) = &*admin;
            admin.answer(&args.request, document)
        })
        .skip_journal();
        [clearing, resources]
            .into_iter()
            .chain(channels.into_iter().map(Handler::skip_journal))
            .collect()
    }

    fn answer(&self, request: &Request, document: &serde_json::Value) -> Option<HttpResponse> {
        let url = request.url();
        let mut scopes = lock(&self.scopes);
        let (caller, rest) = addressed(&scopes, url, self.base_url.port())?;
        // The live page's own files hold no data: a browser opens them
        // without a header (the page then sends the token it was given).
        let page_file = matches!(rest, "" | "page.js" | "page.css");
        if let (Some(token), false) = (&self.token, page_file) {
            let given = request
                .header("authorization")
                .and_then(|value| value.strip_prefix("Bearer "))
                .map(str::to_owned)
                // `EventSource` cannot send a header: the page's stream
                // carries it in the query.
                .or_else(|| {
                    url.query_pairs()
                        .find(|(name, _)| name == "token")
                        .map(|(_, value)| value.into_owned())
                });
            if !given.is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes())) {
                return Some(
                    refuse(401, "the admin API needs `Authorization: Bearer TOKEN` (mocklib serve --admin-token)")
                        .header("www-authenticate", "Bearer"),
                );
            }
        }
        if request.body().len() > MAX_BODY {
            return Some(refuse(
                413,
                &format!(
                    "admin payloads are limited to {MAX_BODY} bytes; this one has {}",
                    request.body().len()
                ),
            ));
        }
        let (target, resource) = match target(&scopes, caller, rest) {
            Ok(found) => found,
            Err(refused) => return Some(refused),
        };
        if scopes.get(target).is_none() {
            return Some(refuse(410, "this scope has ended"));
        }
        if let ScopeId::Opened(id) = target {
            if let Some(scope) = scopes.opened.get_mut(&id) {
                scope.last_seen = Instant::now();
            }
        }
        let method = request.method().as_str();
        let answer = match resource {
            "handlers" => self.handlers(&mut scopes, target, request),
            "requests" => {
                let pool = lock(&self.pool).clone();
                scopes.root_or(target).within(&self.server, || {
                    journal::answer(&self.server, request, pool.as_ref())
                })
            }
            "verify" if method == "GET" => scopes
                .root_or(target)
                .within(&self.server, || self.verify()),
            "verify" => not_allowed("GET"),
            "scenarios" => match scopes.get(target) {
                Some(state) => state.within(&self.server, || self.scenarios(request)),
                None => refuse(410, "this scope has ended"),
            },
            "hold" => self.hold(&mut scopes, target, method),
            // Let through, the upgrade is the WebSocket handlers'.
            "callbacks" => {
                callbacks::refusal(&self.callbacks, &self.server, &scopes, target, request)?
            }
            "scopes" if caller == ScopeId::Root => self.scopes(&mut scopes, method),
            "record" if caller == ScopeId::Root => self.record(request),
            "scopes" | "record" => refuse(
                403,
                "scopes and recording are the server's: ask on its own origin, not a scope's",
            ),
            "coverage" if method == "GET" => self.coverage(request),
            "coverage" => not_allowed("GET"),
            "openapi.json" if method == "GET" => HttpResponse::json(document),
            "openapi.json" => not_allowed("GET"),
            // The live page and its stream (`page.rs`).
            "" | "page.js" | "page.css" => return Page::file(resource),
            "events" if method == "GET" => self
                .page
                .events(request.header("last-event-id"), scopes.root_or(target)),
            "events" => not_allowed("GET"),
            _ => match resource.split_once('/') {
                Some(("handlers", index)) => self.remove_one(&mut scopes, target, index, method),
                Some(("scopes", id)) if caller == ScopeId::Root => {
                    self.scope(&mut scopes, id, method)
                }
                _ => refuse(
                    404,
                    &format!(
                        "{PREFIX}{resource} is not an admin resource: handlers, requests, verify, scenarios, coverage, hold, callbacks, scopes, record, openapi.json (GET {PREFIX}openapi.json describes them)"
                    ),
                ),
            },
        };
        Some(answer)
    }

    fn handlers(&self, scopes: &mut Scopes, id: ScopeId, request: &Request) -> HttpResponse {
        let server = &self.server;
        let Some(state) = scopes.get(id) else {
            return refuse(410, "this scope has ended");
        };
        match request.method().as_str() {
            "GET" => {
                let list = state.within(&self.server, || server.list_handlers());
                let (endpoints, added) = (scopes.endpoints.len(), state.added.len());
                let runtime = list.iter().skip(endpoints).take(added);
                let base = list.iter().skip(scopes.head_len(state));
                let describe = |handler: &Handler, runtime: bool| {
                    serde_json::json!({
                        "handler": handler.header(),
                        "once": handler.is_once(),
                        "added_at_runtime": runtime,
                    })
                };
                let listed: Vec<serde_json::Value> = runtime
                    .map(|handler| describe(handler, true))
                    .chain(base.map(|handler| describe(handler, false)))
                    .collect();
                HttpResponse::json(&listed)
            }
            "POST" => match self.parse(request) {
                Ok(handlers) => {
                    let count = handlers.len();
                    if let Some(state) = scopes.get_mut(id) {
                        // Ahead of the ones added before, as `use_handlers` puts them.
                        state.added.splice(0..0, handlers);
                    }
                    if let Some(state) = scopes.get(id) {
                        scopes.refresh_added(server, state);
                    }
                    HttpResponse::json(&serde_json::json!({ "added": count })).status(201)
                }
                Err(refused) => refused,
            },
            "PUT" => match self.parse(request) {
                Ok(handlers) => {
                    let count = handlers.len();
                    if let Some(state) = scopes.get_mut(id) {
                        state.added.clear();
                        state.replaced = Some(handlers.clone());
                    }
                    if let Some(state) = scopes.get(id) {
                        scopes.rebase(server, state, handlers);
                    }
                    if let Some(state) = scopes.get(id) {
                        state.within(server, || reset_scenarios(server));
                    }
                    HttpResponse::json(&serde_json::json!({ "handlers": count }))
                }
                Err(refused) => refused,
            },
            "DELETE" => {
                // What a reset goes back to: the files' handlers, or for a
                // scope the server's own base.
                let files = match id {
                    ScopeId::Root => scopes.files.clone(),
                    ScopeId::Opened(_) => scopes.base_of(server, &scopes.root),
                };
                let Some(state) = scopes.get_mut(id) else {
                    return refuse(410, "this scope has ended");
                };
                state.added.clear();
                let replaced = state.replaced.take().is_some();
                if let Some(state) = scopes.get(id) {
                    state.within(server, || reset_scenarios(server));
                    if replaced {
                        scopes.rebase(server, state, files);
                    } else {
                        scopes.refresh_added(server, state);
                    }
                }
                HttpResponse::empty().status(204)
            }
            _ => not_allowed("GET, POST, PUT, DELETE"),
        }
    }

    /// `scenarios` of the current scope: `GET` the states set so far (a
    /// scenario or key not listed is `started`), `PUT` a list of states to
    /// set, `DELETE` every scenario back to `started`.
    fn scenarios(&self, request: &Request) -> HttpResponse {
        use mocklib::scenario;
        let states = scenario::states();
        match request.method().as_str() {
            "GET" => {
                let listed: Vec<serde_json::Value> = self.server.scope_local(states, |states| {
                    states
                        .iter()
                        .map(|(name, key, state)| {
                            serde_json::json!({ "scenario": name, "key": key, "state": state })
                        })
                        .collect()
                });
                HttpResponse::json(&listed)
            }
            "PUT" => {
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Set {
                    scenario: String,
                    #[serde(default)]
                    key: String,
                    state: String,
                }
                let sets: Vec<Set> = match serde_json::from_slice(request.body()) {
                    Ok(sets) => sets,
                    Err(error) => {
                        return refuse(
                            400,
                            &format!(
                                "scenarios: give a JSON list of {{\"scenario\", \"key\" (optional), \"state\"}}: {error}"
                            ),
                        );
                    }
                };
                self.server.scope_local(states, |states| {
                    for set in &sets {
                        states.set(&set.scenario, &set.key, &set.state);
                    }
                });
                HttpResponse::empty().status(204)
            }
            "DELETE" => {
                reset_scenarios(&self.server);
                HttpResponse::empty().status(204)
            }
            _ => not_allowed("GET, PUT, DELETE"),
        }
    }

    /// The request's entries as handlers, or the `400` saying why not.
    fn parse(&self, request: &Request) -> Result<Vec<Handler>, HttpResponse> {
        let Ok(text) = request.text() else {
            return Err(refuse(400, "the body is not UTF-8 text"));
        };
        let yaml = request
            .header("content-type")
            .is_some_and(|value| value.contains("yaml"));
        let pool = lock(&self.pool).clone();
        handler_file::parse(
            text,
            yaml,
            "the request body",
            &self.dir,
            pool.as_ref(),
            &self.callbacks,
        )
        .map(|(handlers, _)| match &self.chaos {
            Some(chaos) => chaos.around(handlers),
            None => handlers,
        })
        .map_err(|error| {
            HttpResponse::json(&serde_json::json!({
                "error": error.message,
                "pointer": error.pointer,
            }))
            .status(400)
        })
    }

    /// `DELETE handlers/{index}`.
    fn remove_one(
        &self,
        scopes: &mut Scopes,
        id: ScopeId,
        index: &str,
        method: &str,
    ) -> HttpResponse {
        if method != "DELETE" {
            return not_allowed("DELETE");
        }
        let Some(state) = scopes.get_mut(id) else {
            return refuse(410, "this scope has ended");
        };
        match index
            .parse::<usize>()
            .ok()
            .filter(|index| *index < state.added.len())
        {
            Some(index) => {
                drop(state.added.remove(index));
                if let Some(state) = scopes.get(id) {
                    scopes.refresh_added(&self.server, state);
                }
                HttpResponse::empty().status(204)
            }
            None => refuse(
                404,
                &format!(
                    "no handler added at runtime has index {index}: {} were added (GET {PREFIX}handlers lists them first)",
                    state.added.len()
                ),
            ),
        }
    }

    /// `GET coverage`: what of the contracts (`--contract`,
    /// `--graphql-contract`) the requests exercised (server-wide);
    /// `?format=text` for the tables.
    fn coverage(&self, request: &Request) -> HttpResponse {
        let coverage: Vec<_> = self
            .contracts
            .iter()
            .filter_map(|contract| contract.coverage())
            .collect();
        let text = request
            .url()
            .query_pairs()
            .any(|(name, value)| name == "format" && value == "text");
        if text {
            let tables: Vec<String> = coverage.iter().map(ToString::to_string).collect();
            HttpResponse::text(tables.join("\n"))
        } else {
            HttpResponse::json(&serde_json::json!({ "contracts": coverage }))
        }
    }

    /// `GET verify`, in the state's scope.
    fn verify(&self) -> HttpResponse {
        match self.server.verify() {
            Ok(()) => HttpResponse::json(&serde_json::json!({ "ok": true })),
            Err(failure) => {
                let unmet: Vec<serde_json::Value> = failure
                    .unmet()
                    .iter()
                    .map(|unmet| {
                        let expected = unmet.expected();
                        serde_json::json!({
                            "handler": unmet.handler().header(),
                            "expected": expected.to_string(),
                            "at_least": expected.min(),
                            "at_most": expected.max(),
                            "received": unmet.received(),
                        })
                    })
                    .collect();
                HttpResponse::json(&serde_json::json!({
                    "ok": false,
                    "report": failure.to_string(),
                    "unmet": unmet,
                    "unhandled": failure.unhandled(),
                    "contract_findings": failure.contract_findings(),
                    "failed_webhooks": failure.failed_webhooks(),
                }))
                .status(422)
            }
        }
    }

    /// `GET hold` on a scope: a response that lasts until its client goes,
    /// then ends the scope.
    fn hold(&self, scopes: &mut Scopes, id: ScopeId, method: &str) -> HttpResponse {
        if method != "GET" {
            return not_allowed("GET");
        }
        let ScopeId::Opened(id) = id else {
            return refuse(
                400,
                "only a scope is held: ask on a scope's own origin, or for scopes/{id}/hold",
            );
        };
        let Some(scope) = scopes.opened.get_mut(&id) else {
            return refuse(410, "this scope has ended");
        };
        scope.holds += 1;
        let guard = Hold {
            scopes: Arc::clone(&self.scopes),
            id,
        };
        let beats = futures_util::stream::unfold((guard, true), |(guard, first)| async move {
            if !first {
                tokio::time::sleep(HOLD_BEAT).await;
            }
            Some((Bytes::from_static(b"held\n"), (guard, false)))
        });
        HttpResponse::stream(beats)
            .header("content-type", "text/plain; charset=utf-8")
            .header("cache-control", "no-store")
    }

    /// `GET scopes` (the open ones) and `POST scopes` (opens one).
    fn scopes(&self, scopes: &mut Scopes, method: &str) -> HttpResponse {
        match method {
            "GET" => {
                let now = Instant::now();
                let listed: Vec<serde_json::Value> = scopes
                    .opened
                    .iter()
                    .map(|(id, scope)| {
                        serde_json::json!({
                            "id": id,
                            "url": origin(&scope.url),
                            "proxy_url": origin(&scope.proxy_url),
                            "added": scope.state.added.len(),
                            "held": scope.holds > 0,
                            "idle_ms": u64::try_from(now.duration_since(scope.last_seen).as_millis()).unwrap_or(u64::MAX),
                        })
                    })
                    .collect();
                HttpResponse::json(&listed)
            }
            "POST" => self.open_scope(scopes),
            _ => not_allowed("GET, POST"),
        }
    }

    fn open_scope(&self, scopes: &mut Scopes) -> HttpResponse {
        let server = &self.server;
        // The base the server's own list has now, less what was added at
        // its root: a scope starts from the files' handlers.
        let base = (!scopes.root.added.is_empty()).then(|| scopes.base_of(server, &scopes.root));
        let state = ScopeState {
            boundary: Some(server.open_boundary()),
            ..ScopeState::default()
        };
        // A port that cannot be bound (out of file descriptors) panics in
        // `url()`: a 503 saying so, not a lost request.
        let opened = std::panic::catch_unwind(AssertUnwindSafe(|| {
            if let Some(base) = base {
                scopes.rebase(server, &state, base);
            }
            state.within(&self.server, || {
                // Its own sequences, once-handlers and resources.
                server.restore_handlers();
                (server.url(), server.proxy_url(), server.env())
            })
        }));
        let (url, proxy_url, env) = match opened {
            Ok(opened) => opened,
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
                    .unwrap_or_default();
                return refuse(503, &format!("could not open a scope: {why}"));
            }
        };
        let id = scopes.next_id();
        let scope = ScopeEntry {
            state,
            url,
            proxy_url,
            env,
            last_seen: Instant::now(),
            holds: 0,
        };
        let described = describe_scope(id, &scope);
        scopes.opened.insert(id, scope);
        HttpResponse::json(&described).status(201)
    }

    /// `GET scopes/{id}`, `DELETE scopes/{id}`.
    fn scope(&self, scopes: &mut Scopes, id: &str, method: &str) -> HttpResponse {
        let Some(id) = id
            .parse::<u64>()
            .ok()
            .filter(|id| scopes.opened.contains_key(id))
        else {
            return refuse(404, &format!("there is no scope {id:?}"));
        };
        match method {
            "GET" => HttpResponse::json(&describe_scope(id, &scopes.opened[&id])),
            "DELETE" => {
                // Answered once its port is closed and its credential
                // refused, whatever its clients keep open (issue 39).
                scopes.end(id);
                HttpResponse::empty().status(204)
            }
            _ => not_allowed("GET, DELETE"),
        }
    }

    /// `POST record` (`{"path": FILE, "mode": "once" | ...}`) and
    /// `DELETE record`.
    fn record(&self, request: &Request) -> HttpResponse {
        match request.method().as_str() {
            "POST" => {
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Start {
                    path: PathBuf,
                    #[serde(default)]
                    mode: Option<String>,
                }
                let start: Start = match serde_json::from_slice(request.body()) {
                    Ok(start) => start,
                    Err(error) => {
                        return refuse(
                            400,
                            &format!(
                                "the body: {error} (expected {{\"path\": FILE, \"mode\": \"once\"}})"
                            ),
                        );
                    }
                };
                let mode = match start.mode.as_deref().map(parse_record_mode).transpose() {
                    Ok(mode) => mode.unwrap_or(RecordMode::Once),
                    Err(why) => return refuse(400, &format!("/mode: {why}")),
                };
                let path = self.dir.join(&start.path);
                match self.server.record(Recording::new(&path).mode(mode)) {
                    Ok(()) => HttpResponse::json(
                        &serde_json::json!({ "recording": path.display().to_string() }),
                    )
                    .status(201),
                    Err(error) => refuse(400, &error.to_string()),
                }
            }
            "DELETE" => {
                self.server.stop_recording();
                HttpResponse::empty().status(204)
            }
            _ => not_allowed("POST, DELETE"),
        }
    }
}

/// Whom a request under `/__mocklib/` addresses: the state whose origin it
/// came to, and the path after the prefix; `None` when it is not the admin
/// API's (see the module's "Who may ask": another host's, or a port that is
/// no scope's).
fn addressed<'a>(
    scopes: &Scopes,
    url: &'a Url,
    own_port: Option<u16>,
) -> Option<(ScopeId, &'a str)> {
    let rest = url.path().strip_prefix(PREFIX)?;
    if !is_loopback(url) {
        return None;
    }
    let caller = scopes.of_port(url.port_or_known_default(), own_port)?;
    Some((caller, rest))
}

/// The state `rest` acts on, asked by `caller`, and the resource: on the
/// server's origin `scopes/ID/...` is a resource of that scope
/// (`scopes/ID/` its page). Or the refusal.
fn target<'a>(
    scopes: &Scopes,
    caller: ScopeId,
    rest: &'a str,
) -> Result<(ScopeId, &'a str), HttpResponse> {
    let Some((id, tail)) = rest
        .strip_prefix("scopes/")
        .and_then(|after| after.split_once('/'))
    else {
        return Ok((caller, rest));
    };
    if caller != ScopeId::Root {
        return Err(refuse(
            403,
            "a scope reaches only its own state: ask for another scope on the server's own origin",
        ));
    }
    match id
        .parse::<u64>()
        .ok()
        .filter(|id| scopes.opened.contains_key(id))
    {
        Some(id) => Ok((ScopeId::Opened(id), tail)),
        None => Err(refuse(404, &format!("there is no scope {id:?}"))),
    }
}

/// A scope as the admin API shows it: its ways in and its environment.
fn describe_scope(id: u64, scope: &ScopeEntry) -> serde_json::Value {
    let url = origin(&scope.url);
    let proxy_url = origin(&scope.proxy_url);
    let mut env = serde_json::Map::new();
    env.insert("MOCKLIB_URL".to_owned(), url.clone().into());
    env.insert("MOCKLIB_PROXY_URL".to_owned(), proxy_url.clone().into());
    for (name, value) in &scope.env {
        env.insert(name.clone(), value.clone().into());
    }
    serde_json::json!({
        "id": id,
        "url": url,
        "proxy_url": proxy_url,
        "admin_url": format!("{url}/__mocklib"),
        "env": env,
    })
}

/// `--record-mode`'s and `POST record`'s modes.
pub(crate) fn parse_record_mode(mode: &str) -> Result<RecordMode, String> {
    match mode {
        "once" => Ok(RecordMode::Once),
        "new_episodes" => Ok(RecordMode::NewEpisodes),
        "none" => Ok(RecordMode::None),
        "all" => Ok(RecordMode::All),
        other => Err(format!(
            "{other:?} is not a record mode: once, new_episodes, none, all"
        )),
    }
}

/// Ends its scope when the held-open response is dropped: its client went
/// away (or the server is closing).
struct Hold {
    scopes: SharedScopes,
    id: u64,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut scopes = lock(&self.scopes);
        let ended = scopes.opened.get_mut(&self.id).is_some_and(|scope| {
            scope.holds -= 1;
            scope.holds == 0
        });
        if ended {
            scopes.end(self.id);
        }
    }
}

/// `url` without the root's slash, so `$MOCKLIB_URL/users` reads right.
pub(crate) fn origin(url: &Url) -> String {
    url.as_str().trim_end_matches('/').to_owned()
}

/// A text answer with `status`.
fn refuse(status: u16, why: &str) -> HttpResponse {
    HttpResponse::text(format!("{why}\n")).status(status)
}

fn not_allowed(allow: &str) -> HttpResponse {
    HttpResponse::empty().status(405).header("allow", allow)
}

/// Compares in time that does not depend on where the two differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}
