//! The admin API of `mocklib serve` (first part): handlers added, listed
//! and removed at runtime by a test in any language, on the server's own
//! origin.
//!
//! - `GET /__mocklib/handlers`: the handlers in lookup order, as JSON
//!   (`handler`, `once`, `added_at_runtime`).
//! - `POST /__mocklib/handlers`: entries in the handler-file format (YAML
//!   when the content type says `yaml`, JSON otherwise), put ahead of every
//!   other handler as `use_handlers` does; `201 {"added": n}`, or `400`
//!   naming the entry and the field as a bad file would.
//! - `DELETE /__mocklib/handlers`: removes the handlers added at runtime
//!   (`reset_handlers`); the files' handlers stay. `204`.
//! - `DELETE /__mocklib/handlers/{index}`: removes one handler added at
//!   runtime, by its place in `GET`'s list (from 0); `404` for an index
//!   that is not one of them.
//!
//! - `GET /__mocklib/verify`: whether every entry with `times` got its
//!   count of requests (and, in strict mode, no request went unhandled):
//!   `200 {"ok": true}`, or `422 {"ok": false, "report": ...}` with
//!   `verify()`'s report, closest requests included.
//!
//! - `GET /__mocklib/openapi.json`: this API, as an OpenAPI 3.1 document.
//!
//! The live page (`GET /__mocklib/`) and its event stream
//! (`GET /__mocklib/events`) are `page.rs`'s.
//!
//! Handlers added at runtime survive a reload of the files.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use mocklib::node::Server;
use mocklib::{Handler, HttpResponse};
use url::Url;

use crate::handler_file;

/// The path of the handlers resource on the listener's own origin.
pub(crate) const HANDLERS_PATH: &str = "/__mocklib/handlers";

/// The handler answering `DELETE` [`HANDLERS_PATH`]`/{index}`: removes one
/// handler added at runtime (the runtime ones come first in the list).
pub(crate) fn remove_endpoint(server: &Server, base_url: &Url, added: Added) -> Handler {
    let endpoint = own_url(base_url, &format!("{HANDLERS_PATH}/:index"));
    let server = server.clone();
    mocklib::http::delete(endpoint.as_str(), move |args| {
        let mut added = lock(&added);
        let index = args.params.parse::<usize>("index").and_then(Result::ok);
        match index.filter(|index| *index < added.len()) {
            Some(index) => {
                drop(added.remove(index));
                // The scope's runtime handlers are put back without it.
                server.reset_handlers();
                if !added.is_empty() {
                    server.use_handlers(added.clone());
                }
                HttpResponse::empty().status(204)
            }
            None => HttpResponse::text(format!(
                "no handler added at runtime has index {}: {} were added (GET {HANDLERS_PATH} lists them first)\n",
                args.params.get("index").unwrap_or_default(),
                added.len()
            ))
            .status(404),
        }
    })
}

/// The path of the verification on the listener's own origin.
pub(crate) const VERIFY_PATH: &str = "/__mocklib/verify";

/// The handler answering [`VERIFY_PATH`].
pub(crate) fn verify_endpoint(server: &Server, base_url: &Url) -> Handler {
    let endpoint = own_url(base_url, VERIFY_PATH);
    let server = server.clone();
    mocklib::http::get(endpoint.as_str(), move |_| match server.verify() {
        Ok(()) => HttpResponse::json(&serde_json::json!({ "ok": true })),
        Err(failure) => HttpResponse::json(&serde_json::json!({
            "ok": false,
            "report": failure.to_string(),
        }))
        .status(422),
    })
}

/// The handlers added at runtime, first first (their lookup order).
pub(crate) type Added = Arc<Mutex<Vec<Handler>>>;

/// The descriptors of the `--proto` files, for `grpc` entries.
type Pool = Arc<Mutex<Option<prost_reflect::DescriptorPool>>>;

/// The handler answering [`HANDLERS_PATH`]. `dir` is what `body_file` and
/// `seed_file` of added entries are relative to (the command's folder).
pub(crate) fn handlers_endpoint(
    server: &Server,
    base_url: &Url,
    pool: Pool,
    added: Added,
    dir: PathBuf,
) -> Handler {
    let endpoint = own_url(base_url, HANDLERS_PATH);
    let server = server.clone();
    mocklib::http::all(endpoint.as_str(), move |args| {
        match args.request.method().as_str() {
            "GET" => {
                // The ones added at runtime come first, as they were put.
                let runtime = lock(&added).len();
                let listed: Vec<serde_json::Value> = server
                    .list_handlers()
                    .iter()
                    .enumerate()
                    .map(|(index, handler)| {
                        serde_json::json!({
                            "handler": handler.header(),
                            "once": handler.is_once(),
                            "added_at_runtime": index < runtime,
                        })
                    })
                    .collect();
                HttpResponse::json(&listed)
            }
            "POST" => {
                let Ok(text) = args.request.text() else {
                    return HttpResponse::text("the body is not UTF-8 text\n").status(400);
                };
                let yaml = args
                    .request
                    .header("content-type")
                    .is_some_and(|value| value.contains("yaml"));
                let pool = lock(&pool).clone();
                match handler_file::parse(text, yaml, "the request body", &dir, pool.as_ref()) {
                    Ok((handlers, _)) => {
                        let count = handlers.len();
                        let mut added = lock(&added);
                        // Ahead of the ones added before, as `use_handlers` puts them.
                        added.splice(0..0, handlers.iter().cloned());
                        server.use_handlers(handlers);
                        HttpResponse::json(&serde_json::json!({ "added": count })).status(201)
                    }
                    Err(error) => HttpResponse::text(format!("{error}\n")).status(400),
                }
            }
            "DELETE" => {
                lock(&added).clear();
                server.reset_handlers();
                HttpResponse::empty().status(204)
            }
            _ => HttpResponse::empty()
                .status(405)
                .header("allow", "GET, POST, DELETE"),
        }
    })
}

/// The path of the admin API's own OpenAPI document.
pub(crate) const OPENAPI_PATH: &str = "/__mocklib/openapi.json";

/// The handler answering [`OPENAPI_PATH`] with [`document`].
pub(crate) fn openapi_endpoint(base_url: &Url) -> Handler {
    let endpoint = own_url(base_url, OPENAPI_PATH);
    let document = document(base_url);
    mocklib::http::get(endpoint.as_str(), move |_| HttpResponse::json(&document))
}

/// The admin API as an OpenAPI 3.1 document, its server the listener's
/// own origin.
fn document(base_url: &Url) -> serde_json::Value {
    let text = |description: &str| serde_json::json!({ "description": description, "content": { "text/plain": { "schema": { "type": "string" } } } });
    let query = |name: &str, description: &str| serde_json::json!({ "name": name, "in": "query", "required": false, "description": description, "schema": { "type": "string" } });
    serde_json::json!({
        "openapi": "3.1.0",
        "info": {
            "title": "mocklib serve admin API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Runtime control of a running `mocklib serve`: the request journal, handlers added and removed at runtime, and verification of the handlers' expected counts."
        },
        "servers": [{ "url": base_url.as_str().trim_end_matches('/') }],
        "paths": {
            "/__mocklib/requests": {
                "get": {
                    "operationId": "listRequests",
                    "summary": "The requests received, oldest first",
                    "parameters": [
                        query("method", "Only requests of this method (any case)."),
                        query("url", "Only requests whose URL matches this mocklib pattern (`/users/:id`, `*/orders*`)."),
                        query("handler", "Only requests answered by a handler whose description contains this text."),
                        query("unhandled", "`true`: only requests no handler answered.")
                    ],
                    "responses": {
                        "200": { "description": "The journal: method, url, headers, body, body_encoding, body_len, handler, answer, status, grpc.", "content": { "application/json": { "schema": { "type": "array", "items": { "type": "object" } } } } },
                        "400": text("An unknown filter or a bad pattern, saying why.")
                    }
                },
                "delete": {
                    "operationId": "clearRequests",
                    "summary": "Clears the journal",
                    "responses": { "204": { "description": "Cleared." } }
                }
            },
            "/__mocklib/handlers": {
                "get": {
                    "operationId": "listHandlers",
                    "summary": "The handlers in lookup order",
                    "responses": { "200": { "description": "handler (its description), once, added_at_runtime.", "content": { "application/json": { "schema": { "type": "array", "items": { "type": "object", "properties": { "handler": { "type": "string" }, "once": { "type": "boolean" }, "added_at_runtime": { "type": "boolean" } } } } } } } }
                },
                "post": {
                    "operationId": "addHandlers",
                    "summary": "Adds handlers ahead of the files' (the handler-file format)",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/yaml": { "schema": { "type": "string" } },
                            "application/json": { "schema": { "type": "array", "items": { "type": "object" } } }
                        }
                    },
                    "responses": {
                        "201": { "description": "Added.", "content": { "application/json": { "schema": { "type": "object", "properties": { "added": { "type": "integer" } } } } } },
                        "400": text("An entry the loader refuses, naming it and the field.")
                    }
                },
                "delete": {
                    "operationId": "removeAddedHandlers",
                    "summary": "Removes the handlers added at runtime",
                    "responses": { "204": { "description": "Removed; the files' handlers stay." } }
                }
            },
            "/__mocklib/handlers/{index}": {
                "delete": {
                    "operationId": "removeAddedHandler",
                    "summary": "Removes one handler added at runtime, by its place in the list",
                    "parameters": [{ "name": "index", "in": "path", "required": true, "schema": { "type": "integer", "minimum": 0 } }],
                    "responses": {
                        "204": { "description": "Removed." },
                        "404": text("Not the index of a handler added at runtime.")
                    }
                }
            },
            "/__mocklib/verify": {
                "get": {
                    "operationId": "verify",
                    "summary": "Whether every entry's `times` is met",
                    "responses": {
                        "200": { "description": "Every count met.", "content": { "application/json": { "schema": { "type": "object", "properties": { "ok": { "const": true } } } } } },
                        "422": { "description": "A count is off: verify()'s report.", "content": { "application/json": { "schema": { "type": "object", "properties": { "ok": { "const": false }, "report": { "type": "string" } } } } } }
                    }
                }
            },
            "/__mocklib/": {
                "get": {
                    "operationId": "livePage",
                    "summary": "The live page: the handlers and the requests as they arrive, for a browser",
                    "responses": { "200": { "description": "The page (its script and style sheet are beside it).", "content": { "text/html": { "schema": { "type": "string" } } } } }
                }
            },
            "/__mocklib/events": {
                "get": {
                    "operationId": "streamRequests",
                    "summary": "The journal as server-sent events: the requests so far, then each as it arrives",
                    "parameters": [{ "name": "Last-Event-ID", "in": "header", "required": false, "description": "The id of the last event received: only what came after it is sent.", "schema": { "type": "string" } }],
                    "responses": { "200": { "description": "`entry` events (a journal entry, with `sequence` and, when unhandled, `closest`: the closest handlers and how the request differs from each) and `cleared` events (the journal was cleared).", "content": { "text/event-stream": { "schema": { "type": "string" } } } } }
                }
            },
            "/__mocklib/openapi.json": {
                "get": {
                    "operationId": "describe",
                    "summary": "This document",
                    "responses": { "200": { "description": "The admin API as OpenAPI 3.1.", "content": { "application/json": { "schema": { "type": "object" } } } } }
                }
            }
        }
    })
}

/// `path` on the listener's own origin.
pub(crate) fn own_url(base_url: &Url, path: &str) -> Url {
    base_url.join(path).expect("a path joins the base URL")
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
