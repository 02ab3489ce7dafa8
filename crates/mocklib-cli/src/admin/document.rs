//! The admin API described as an OpenAPI 3.1 document, served at
//! `/__mocklib/openapi.json` (and loadable by mocklib's own OpenAPI support:
//! a test checks it).

use url::Url;

/// The admin API as an OpenAPI 3.1 document, its server the listener's
/// own origin.
pub(super) fn document(base_url: &Url) -> serde_json::Value {
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
