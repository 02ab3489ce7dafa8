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
    // The callback channel, on a state's own origin or as a scope's
    // (`extra`: the scope's path parameter and its 404).
    let callbacks = |summary: &str, extra: serde_json::Value| {
        let mut operation = serde_json::json!({
            "operationId": if extra.is_null() { "openCallbackChannel" } else { "openScopeCallbackChannel" },
            "summary": summary,
            "description": "A WebSocket (RFC 6455; text frames of JSON) that the client of a test in another language holds open for its scope: the server sends a `CallbackCall` for each request a `callback` entry matches, and the client answers each with one `CallbackAnswer` (same `id`; many calls may be in flight, answered in any order). One channel per scope at a time; while it is open its scope does not end idle, and it closes (1001) when its scope ends. A call with no channel open is answered 502, one whose channel closes first 502, one not answered within the entry's `timeout_ms` 504. With --admin-token, send `Authorization: Bearer TOKEN` or `?token=TOKEN`.",
            "parameters": [
                { "name": "Upgrade", "in": "header", "required": true, "schema": { "const": "websocket" } },
                { "name": "token", "in": "query", "required": false, "description": "The admin token, for a client that cannot set a header on its upgrade.", "schema": { "type": "string" } }
            ],
            "x-frames": {
                "server": { "$ref": "#/components/schemas/CallbackCall" },
                "client": { "$ref": "#/components/schemas/CallbackAnswer" }
            },
            "responses": {
                "101": { "description": "The channel is open: CallbackCall frames come, CallbackAnswer frames go." },
                "409": text("The scope's channel is open already: a client holds it."),
                "426": text("Not a WebSocket upgrade.")
            }
        });
        if let Some(extra) = extra.as_object() {
            let parameters = operation["parameters"].as_array_mut().expect("a list");
            parameters.push(extra["parameter"].clone());
            operation["responses"]["404"] = extra["404"].clone();
        }
        serde_json::json!({ "get": operation })
    };
    serde_json::json!({
        "openapi": "3.1.0",
        "info": {
            "title": "mocklib serve admin API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Runtime control of a running `mocklib serve`: the request journal, handlers added and removed at runtime, verification of the handlers' expected counts, scopes (isolated handler lists, journals and expectations for parallel test workers, each with a port and a proxy credential of its own), each scope's callback channel (a WebSocket over which functions in a test's own language answer the `callback` entries), and recording. The resources of a scope are the same paths on its own origin (its `url`), or under `/__mocklib/scopes/{id}/` on this one. Only requests to the server's own loopback origin reach the API; with `--admin-token` each needs `Authorization: Bearer TOKEN` (401 otherwise); payloads over 4 MiB get 413."
        },
        "components": {
            "securitySchemes": { "token": { "type": "http", "scheme": "bearer", "description": "Required when the server runs with --admin-token." } },
            "schemas": {
                "ScenarioState": {
                    "type": "object",
                    "required": ["scenario", "state"],
                    "additionalProperties": false,
                    "properties": {
                        "scenario": { "type": "string" },
                        "key": { "type": "string", "description": "The key of a keyed scenario (`key:` in its entries); empty or left out: the state without keys." },
                        "state": { "type": "string" }
                    }
                },
                "CallbackCall": {
                    "description": "Server to client, on the callback channel: a request for the function `callback` to answer.",
                    "type": "object",
                    "required": ["type", "id", "callback", "handler", "request", "params", "cookies"],
                    "properties": {
                        "type": { "const": "call" },
                        "id": { "type": "integer", "minimum": 1, "description": "Unique on the channel: the answer carries it back." },
                        "callback": { "type": "string", "description": "The entry's `callback`: the function's name." },
                        "handler": { "type": "string", "description": "The entry as a handler: `GET https://api.example.com/users/:id`." },
                        "request": {
                            "type": "object",
                            "required": ["method", "url", "headers", "body", "body_base64"],
                            "properties": {
                                "method": { "type": "string" },
                                "url": { "type": "string", "description": "The absolute URL." },
                                "headers": { "type": "array", "description": "Name (lower case) and value pairs, in order, repeats kept.", "items": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "string" }], "minItems": 2, "maxItems": 2 } },
                                "body": { "type": ["string", "null"], "description": "The body as text when it is UTF-8 (\"\" when empty); null otherwise." },
                                "body_base64": { "type": ["string", "null"], "description": "The body in standard base64 when it is not UTF-8; null otherwise." }
                            }
                        },
                        "params": { "type": "object", "additionalProperties": { "type": "string" }, "description": "The path's parameters (`:id`; a wildcard's capture under \"0\", \"1\"…), as text." },
                        "cookies": { "type": "object", "additionalProperties": { "type": "string" } }
                    }
                },
                "CallbackAnswer": {
                    "description": "Client to server, on the callback channel: one answer per call, with exactly one of `response`, `passthrough`, `fallthrough`, `network_error` and `error`. A frame the server cannot read (not JSON, an unknown or already answered id) is logged and ignored; an answer it cannot use (two kinds, a bad status or header) is a 500 saying why.",
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": { "type": "integer", "description": "The call's." },
                        "response": {
                            "type": "object",
                            "description": "The response; a body as `body` (text) or `body_base64`, not both.",
                            "properties": {
                                "status": { "type": "integer", "minimum": 100, "maximum": 999, "default": 200 },
                                "headers": { "type": "array", "description": "Name and value pairs; repeats are kept.", "items": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "string" }], "minItems": 2, "maxItems": 2 } },
                                "body": { "type": "string" },
                                "body_base64": { "type": "string" },
                                "delay_ms": { "type": "integer", "minimum": 0, "description": "How long the server waits before it answers." }
                            }
                        },
                        "passthrough": { "const": true, "description": "Perform the request for real (MSW: `passthrough()`)." },
                        "fallthrough": { "const": true, "description": "The function returned nothing: the next handler decides (MSW: a resolver returning undefined)." },
                        "network_error": { "const": true, "description": "The requester sees a network error (MSW: `HttpResponse.error()`)." },
                        "error": { "type": "string", "description": "What the function raised: a 500 whose body names the handler, the callback and this." }
                    },
                    "oneOf": [
                        { "required": ["response"] },
                        { "required": ["passthrough"] },
                        { "required": ["fallthrough"] },
                        { "required": ["network_error"] },
                        { "required": ["error"] }
                    ]
                }
            }
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
                            "unhandled": { "type": "array", "items": { "type": "string" } },
                            "failed_webhooks": { "type": "array", "items": { "type": "string" }, "description": "Webhooks whose receiver could not be reached or that could not be sent: `METHOD URL (after METHOD URL): why`." }
                        } } } } }
                    }
                }
            },
            "/__mocklib/scenarios": {
                "get": {
                    "operationId": "listScenarioStates",
                    "summary": "The states of the scope's scenarios (`scenario`, `when_state`, `set_state` entries); a scenario or key not listed is `started`",
                    "responses": { "200": { "description": "Every state set so far.", "content": { "application/json": { "schema": { "type": "array", "items": { "$ref": "#/components/schemas/ScenarioState" } } } } } }
                },
                "put": {
                    "operationId": "setScenarioStates",
                    "summary": "Sets states (`key` optional: the scenario's state without keys)",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": { "type": "array", "items": { "$ref": "#/components/schemas/ScenarioState" } } } } },
                    "responses": { "204": { "description": "Set." }, "400": { "description": "Not such a list: why." } }
                },
                "delete": {
                    "operationId": "resetScenarios",
                    "summary": "Every scenario back to `started` (a reset of the handlers does it too)",
                    "responses": { "204": { "description": "Reset." } }
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
            "/__mocklib/callbacks": callbacks("The callback channel of the state whose origin this is (the server's own, or a scope's)", serde_json::Value::Null),
            "/__mocklib/scopes/{id}/callbacks": callbacks("A scope's callback channel, on the server's origin", serde_json::json!({
                "parameter": { "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } },
                "404": text("No such scope.")
            })),
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
