//! The admin API described as an OpenAPI 3.1 document, served at
//! `/__mocklib/openapi.json` (and loadable by mocklib's own OpenAPI support:
//! a test checks it).

use url::Url;

/// The admin API as an OpenAPI 3.1 document, its server the listener's
/// own origin.
pub(super) fn document(base_url: &Url) -> serde_json::Value {
    let text = |description: &str| serde_json::json!({ "description": description, "content": { "text/plain": { "schema": { "type": "string" } } } });
    let query = |name: &str, description: &str| serde_json::json!({ "name": name, "in": "query", "required": false, "description": description, "schema": { "type": "string" } });
    // Handler-file entries, as POST and PUT take them.
    let entries = serde_json::json!({
        "required": true,
        "content": {
            "application/yaml": { "schema": { "type": "string" } },
            "application/json": { "schema": { "type": "array", "items": { "type": "object" } } }
        }
    });
    let scope = serde_json::json!({ "type": "object", "properties": { "id": { "type": "integer" }, "url": { "type": "string" }, "proxy_url": { "type": "string" }, "admin_url": { "type": "string" }, "env": { "type": "object", "additionalProperties": { "type": "string" } } } });
    serde_json::json!({
        "openapi": "3.1.0",
        "info": {
            "title": "mocklib serve admin API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Runtime control of a running `mocklib serve`: the request journal, handlers added and removed at runtime, verification of the handlers' expected counts, scopes (isolated handler lists, journals and expectations for parallel test workers, each with a port and a proxy credential of its own), and recording. The resources of a scope are the same paths on its own origin (its `url`), or under `/__mocklib/scopes/{id}/` on this one. Only requests to the server's own loopback origin reach the API; with `--admin-token` each needs `Authorization: Bearer TOKEN` (401 otherwise); payloads over 4 MiB get 413."
        },
        "components": {
            "securitySchemes": { "token": { "type": "http", "scheme": "bearer", "description": "Required when the server runs with --admin-token." } }
        },
        "security": [{}, { "token": [] }],
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
                    "requestBody": entries,
                    "responses": {
                        "201": { "description": "Added.", "content": { "application/json": { "schema": { "type": "object", "properties": { "added": { "type": "integer" } } } } } },
                        "400": text("An entry the loader refuses, naming it and the field.")
                    }
                },
                "put": {
                    "operationId": "replaceHandlers",
                    "summary": "Makes the given entries the whole list, in place of the files' (MSW's resetHandlers(...handlers))",
                    "requestBody": entries,
                    "responses": {
                        "200": { "description": "Replaced.", "content": { "application/json": { "schema": { "type": "object", "properties": { "handlers": { "type": "integer" } } } } } },
                        "400": text("An entry the loader refuses, naming it and the field.")
                    }
                },
                "delete": {
                    "operationId": "resetHandlers",
                    "summary": "Back to the files' handlers: removes what was added or given",
                    "responses": { "204": { "description": "Reset." } }
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
                        "422": { "description": "A count is off: verify()'s report, and the counts as data.", "content": { "application/json": { "schema": { "type": "object", "properties": {
                            "ok": { "const": false },
                            "report": { "type": "string" },
                            "unmet": { "type": "array", "items": { "type": "object", "properties": { "handler": { "type": "string" }, "expected": { "type": "string" }, "at_least": { "type": "integer" }, "at_most": { "type": ["integer", "null"] }, "received": { "type": "integer" } } } },
                            "unhandled": { "type": "array", "items": { "type": "string" } }
                        } } } } }
                    }
                }
            },
            "/__mocklib/scopes": {
                "get": {
                    "operationId": "listScopes",
                    "summary": "The open scopes",
                    "responses": { "200": { "description": "id, url, proxy_url, added, held, idle_ms.", "content": { "application/json": { "schema": { "type": "array", "items": { "type": "object" } } } } } }
                },
                "post": {
                    "operationId": "openScope",
                    "summary": "Opens a scope: its own handlers over the files', journal and expectations, and its own ways in",
                    "responses": {
                        "201": { "description": "The scope's ways in and the environment its processes need.", "content": { "application/json": { "schema": scope } } },
                        "403": text("Asked on a scope's origin: scopes are the server's."),
                        "503": text("No port could be opened for it.")
                    }
                }
            },
            "/__mocklib/scopes/{id}": {
                "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } }],
                "get": {
                    "operationId": "getScope",
                    "summary": "One scope",
                    "responses": { "200": { "description": "The scope.", "content": { "application/json": { "schema": scope } } }, "404": text("No such scope.") }
                },
                "delete": {
                    "operationId": "endScope",
                    "summary": "Ends a scope: its port closes, its credential is refused",
                    "description": "Whatever its clients keep open: before the answer its port refuses connections and its credential is refused (407); connections kept to its port or tunnelled with its credential close (a request still arriving on one gets 410), and its streams end.",
                    "responses": { "204": { "description": "Ended." }, "404": text("No such scope.") }
                }
            },
            "/__mocklib/hold": {
                "get": {
                    "operationId": "holdScope",
                    "summary": "On a scope's origin: a response that stays open and ends the scope when it ends",
                    "responses": { "200": { "description": "A line a second while held.", "content": { "text/plain": { "schema": { "type": "string" } } } }, "400": text("Not a scope.") }
                }
            },
            "/__mocklib/record": {
                "post": {
                    "operationId": "startRecording",
                    "summary": "Records what is performed for real into a HAR file",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": { "type": "object", "required": ["path"], "properties": { "path": { "type": "string" }, "mode": { "enum": ["once", "new_episodes", "none", "all"] } }, "additionalProperties": false } } } },
                    "responses": { "201": { "description": "Recording.", "content": { "application/json": { "schema": { "type": "object" } } } }, "400": text("A bad body or a file that cannot be used.") }
                },
                "delete": {
                    "operationId": "stopRecording",
                    "summary": "Stops recording",
                    "responses": { "204": { "description": "Stopped." } }
                }
            },
            "/__mocklib/": {
                "get": {
                    "operationId": "livePage",
                    "summary": "The live page: the handlers and the requests as they arrive, for a browser",
                    "security": [],
                    "responses": { "200": { "description": "The page (its script and style sheet are beside it). With --admin-token, open it as /__mocklib/#token=TOKEN.", "content": { "text/html": { "schema": { "type": "string" } } } } }
                }
            },
            "/__mocklib/events": {
                "get": {
                    "operationId": "streamRequests",
                    "summary": "The journal as server-sent events: the requests so far, then each as it arrives",
                    "parameters": [
                        { "name": "Last-Event-ID", "in": "header", "required": false, "description": "The id of the last event received: only what came after it is sent.", "schema": { "type": "string" } },
                        { "name": "token", "in": "query", "required": false, "description": "The admin token, for a client that cannot send a header (a browser's EventSource).", "schema": { "type": "string" } }
                    ],
                    "responses": { "200": { "description": "`entry` events (a journal entry, with `sequence` and, when unhandled, `closest`: the closest handlers and how the request differs from each) and `cleared` events (the journal was cleared).", "content": { "text/event-stream": { "schema": { "type": "string" } } } } }
                }
            },
            "/__mocklib/coverage": {
                "get": {
                    "operationId": "coverage",
                    "summary": "Which operations and documented responses of the --contract documents the requests exercised",
                    "parameters": [query("format", "`text`: the tables, for people; JSON otherwise.")],
                    "responses": { "200": { "description": "`{contracts: [{contract, operations: [{operation, method, path, requests, responses: [{status, answers}], undocumented}]}]}`.", "content": { "application/json": { "schema": { "type": "object" } }, "text/plain": { "schema": { "type": "string" } } } } }
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
