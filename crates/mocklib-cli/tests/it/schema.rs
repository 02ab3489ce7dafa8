//! handler-file.schema.json, the JSON Schema of `mocklib serve` handler
//! files that editors validate with, kept honest: the handler files of the
//! package's README, of examples/serve-*, of the module docs and of
//! tests/it/serve.rs validate against it; documents that the loader (the built
//! command) refuses, the schema refuses too, and documents covering every
//! entry kind and field pass both. Each document is checked as draft
//! 2020-12 (the schema's `$schema`) and as draft 7, which editors still on
//! draft 7 (VS Code's YAML extension) apply.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};

use crate::common::HELLOWORLD_PROTO;
use jsonschema::{Draft, Validator};
use serde_json::Value;

const SCHEMA: &str = include_str!("../../handler-file.schema.json");

fn schema() -> Value {
    serde_json::from_str(SCHEMA).expect("the schema is JSON")
}

/// The schema's validators: as its `$schema` says (2020-12), and as a
/// draft 7 reader takes it.
fn validators() -> [(&'static str, Validator); 2] {
    let schema = schema();
    let current = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut older = schema;
    older.as_object_mut().unwrap().remove("$schema");
    let draft7 = jsonschema::options()
        .with_draft(Draft::Draft7)
        .build(&older)
        .expect("the schema compiles as draft 7");
    [("draft 2020-12", current), ("draft 7", draft7)]
}

/// Why `document` does not validate, for each draft (empty: it does).
fn schema_errors(document: &Value) -> Vec<String> {
    validators()
        .iter()
        .flat_map(|(draft, validator)| {
            validator
                .iter_errors(document)
                .map(move |error| format!("{draft}: {} at {}", error, error.instance_path()))
        })
        .collect()
}

/// Whether both drafts refuse `document` (and not only one of them).
fn schema_refuses(document: &Value) -> bool {
    let [(_, current), (_, draft7)] = validators();
    let (a, b) = (current.is_valid(document), draft7.is_valid(document));
    assert_eq!(a, b, "the drafts disagree on {document}");
    !a
}

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|error| panic!("not YAML: {error}\n{text}"))
}

#[test]
fn the_schema_is_a_draft_2020_12_schema_with_a_description_on_every_field() {
    let schema = schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::draft202012::meta::validate(&schema)
        .unwrap_or_else(|error| panic!("not a valid draft 2020-12 schema: {error}"));
    // Every property, wherever it is declared, has a description (editors
    // show it on hover), itself or through the `$ref` it is.
    let described = |field: &Value| {
        let target = match field.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.strip_prefix("#/$defs/").expect("a local $ref");
                &schema["$defs"][name]
            }
            None => field,
        };
        target.get("description").and_then(Value::as_str).is_some()
    };
    let mut fields = 0;
    let mut stack = vec![("".to_owned(), &schema)];
    while let Some((at, value)) = stack.pop() {
        match value {
            Value::Object(object) => {
                if let Some(Value::Object(properties)) = object.get("properties") {
                    // A conditional's `properties` only narrows fields
                    // declared (and described) elsewhere.
                    let declares = object.contains_key("additionalProperties");
                    for (name, field) in properties {
                        if declares {
                            fields += 1;
                            assert!(
                                described(field),
                                "{at}/properties/{name} has no description"
                            );
                        }
                    }
                }
                stack.extend(
                    object
                        .iter()
                        .map(|(key, value)| (format!("{at}/{key}"), value)),
                );
            }
            Value::Array(items) => {
                stack.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (format!("{at}/{i}"), v)),
                );
            }
            _ => {}
        }
    }
    assert!(fields > 40, "{fields} fields");
    // The gRPC code names as an enum of their own, for completion.
    let names: Vec<&str> = schema["$defs"]["grpcStatus"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|choice| choice.get("const")?.as_str())
        .collect();
    assert_eq!(names.len(), 17, "{names:?}");
    assert_eq!(names[5], "NOT_FOUND");
}

/// The fields of `struct NAME` in `source` (Rust), as serde names them.
fn struct_fields(source: &str, name: &str) -> BTreeSet<String> {
    let start = source
        .find(&format!("struct {name} {{\n"))
        .unwrap_or_else(|| panic!("no struct {name}"));
    let mut fields = BTreeSet::new();
    let mut rename = None;
    for line in source[start..].lines().skip(1) {
        let line = line.trim();
        if line == "}" {
            break;
        }
        if let Some(renamed) = line.strip_prefix("#[serde(rename = \"") {
            rename = renamed.split('"').next().map(str::to_owned);
        } else if let Some((field, _)) = line.split_once(": ") {
            if !field.starts_with("//") && !field.contains(' ') {
                fields.insert(rename.take().unwrap_or_else(|| field.to_owned()));
            }
        }
    }
    fields
}

fn properties(schema: &Value) -> BTreeSet<String> {
    schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect()
}

/// A field added to the loader's structs without the schema (or the
/// other way round) fails here.
#[test]
fn the_schema_has_every_field_of_the_loader_and_no_other() {
    let source = include_str!("../../src/handler_file.rs");
    let behaviour = include_str!("../../src/behaviour.rs");
    let schema = schema();
    let defs = &schema["$defs"];
    // One struct per entry kind, as the schema has one shape per kind (the
    // newer kinds' structs are in their own files).
    for (kind, name, source) in [
        ("httpEntry", "HttpEntry", source),
        ("sequenceEntry", "SequenceEntry", source),
        ("resourceEntry", "ResourceFields", source),
        ("grpcEntry", "GrpcFields", source),
        ("callbackEntry", "CallbackFields", source),
        (
            "graphqlEntry",
            "GraphqlEntry",
            include_str!("../../src/graphql_entry.rs"),
        ),
        (
            "faultEntry",
            "FaultEntry",
            include_str!("../../src/fault_entry.rs"),
        ),
        (
            "passthroughEntry",
            "PassthroughEntry",
            include_str!("../../src/proxy_entry.rs"),
        ),
        (
            "proxyEntry",
            "ProxyEntry",
            include_str!("../../src/proxy_entry.rs"),
        ),
        (
            "sseEntry",
            "SseEntry",
            include_str!("../../src/sse_entry.rs"),
        ),
        ("wsEntry", "WsEntry", include_str!("../../src/ws_entry.rs")),
    ] {
        // Every kind also takes the fields of `behaviour.rs` (chaos,
        // scenario), which the loader takes off before the kind reads.
        let mut fields = struct_fields(source, name);
        fields.extend(struct_fields(behaviour, "Behaviour"));
        assert_eq!(properties(&defs[kind]), fields, "{kind}");
    }
    assert_eq!(
        properties(&defs["chaos"]),
        struct_fields(include_str!("../../src/chaos_spec.rs"), "ChaosSpec")
    );
    assert_eq!(
        properties(&defs["webhook"]),
        struct_fields(include_str!("../../src/webhook_spec.rs"), "WebhookSpec")
    );
    assert_eq!(
        properties(&defs["graphqlEntry"]["properties"]["match"]),
        struct_fields(include_str!("../../src/graphql_entry.rs"), "GraphqlMatch")
    );
    assert_eq!(
        properties(&defs["faultEntry"]["properties"]["fault"]["anyOf"][1]),
        struct_fields(include_str!("../../src/fault_entry.rs"), "BodyFault")
    );
    assert_eq!(
        properties(&defs["sseEntry"]["properties"]["events"]["items"]),
        struct_fields(include_str!("../../src/sse_entry.rs"), "SseItem")
    );
    let ws = include_str!("../../src/ws_entry.rs");
    let rule = &defs["wsEntry"]["properties"]["on_message"]["items"];
    assert_eq!(properties(rule), struct_fields(ws, "Rule"));
    assert_eq!(
        properties(&rule["properties"]["match"]),
        struct_fields(ws, "MessageMatch")
    );
    assert_eq!(properties(&defs["wsClose"]), struct_fields(ws, "Close"));
    assert_eq!(
        properties(&defs["proxyEntry"]["properties"]["proxy"]),
        struct_fields(include_str!("../../src/proxy_entry.rs"), "ProxyFields")
    );
    // The `match:` block every kind shares.
    let parts = include_str!("../../src/entry_parts.rs");
    assert_eq!(
        properties(&defs["match"]),
        struct_fields(parts, "Conditions")
    );
    assert_eq!(
        properties(&defs["match"]["properties"]["basic"]),
        struct_fields(parts, "BasicCredentials")
    );
    assert_eq!(properties(&defs["answer"]), struct_fields(source, "Answer"));
    assert_eq!(
        defs["entry"]["oneOf"].as_array().map(Vec::len),
        Some(11),
        "an entry is one of eleven kinds"
    );
}

/// The ```yaml blocks of `markdown` (lines already stripped of any
/// comment prefix).
// A block fenced `yaml chaos` is a `--chaos` file, not a handler file:
// tests/it/chaos.rs starts the command with it.
fn yaml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim_start() == "```yaml" {
            let body: Vec<&str> = lines
                .by_ref()
                .take_while(|l| l.trim_start() != "```")
                .collect();
            blocks.push(body.join("\n") + "\n");
        }
    }
    blocks
}

/// The handler files of tests/it/serve.rs and of the entry kinds' tests:
/// their raw strings that open on a list (`r#"` then a line starting with
/// `- `).
fn serve_test_files() -> Vec<String> {
    [
        include_str!("serve.rs"),
        include_str!("graphql_entries.rs"),
        include_str!("fault_entries.rs"),
        include_str!("sse_entries.rs"),
        include_str!("ws_entries.rs"),
        include_str!("proxy_entries.rs"),
    ]
    .into_iter()
    .flat_map(|source| {
        source
            .split("r#\"\n- ")
            .skip(1)
            .map(|rest| format!("- {}", rest.split("\"#").next().unwrap()))
    })
    .collect()
}

/// The handler files of the examples' suites (examples/serve-*/tests/*.yaml).
fn example_files() -> Vec<(String, String)> {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    for example in std::fs::read_dir(&examples).unwrap() {
        let tests = example.unwrap().path().join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|extension| extension == "yaml")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.strip_prefix(&examples).unwrap().display();
                files.push((format!("examples/{name}"), text));
            }
        }
    }
    files
}

#[test]
fn the_handler_files_of_the_readme_the_examples_the_docs_and_the_serve_tests_validate() {
    let mut documents: Vec<(String, String)> = Vec::new();
    let readme = yaml_blocks(include_str!("../../README.md"));
    assert!(readme.len() >= 2, "{readme:?}");
    documents.extend(readme.into_iter().map(|d| ("README.md".to_owned(), d)));
    let examples = example_files();
    // serve-python, serve-node, serve-go and serve-grpc.
    assert!(examples.len() >= 4, "{examples:?}");
    documents.extend(examples);
    for (file, source) in [
        (
            "src/handler_file.rs",
            include_str!("../../src/handler_file.rs"),
        ),
        ("src/grpc_entry.rs", include_str!("../../src/grpc_entry.rs")),
        (
            "src/callback_entry.rs",
            include_str!("../../src/callback_entry.rs"),
        ),
        (
            "src/resource_entry.rs",
            include_str!("../../src/resource_entry.rs"),
        ),
        ("src/template.rs", include_str!("../../src/template.rs")),
        (
            "src/graphql_entry.rs",
            include_str!("../../src/graphql_entry.rs"),
        ),
        (
            "src/fault_entry.rs",
            include_str!("../../src/fault_entry.rs"),
        ),
        (
            "src/proxy_entry.rs",
            include_str!("../../src/proxy_entry.rs"),
        ),
        ("src/sse_entry.rs", include_str!("../../src/sse_entry.rs")),
        ("src/behaviour.rs", include_str!("../../src/behaviour.rs")),
        (
            "src/webhook_spec.rs",
            include_str!("../../src/webhook_spec.rs"),
        ),
        ("src/ws_entry.rs", include_str!("../../src/ws_entry.rs")),
    ] {
        let docs: String = source
            .lines()
            .filter_map(|line| line.strip_prefix("//!"))
            .map(|line| line.strip_prefix(' ').unwrap_or(line).to_owned() + "\n")
            .collect();
        let blocks = yaml_blocks(&docs);
        assert_eq!(blocks.len(), 1, "{file}: one yaml block in its docs");
        documents.extend(blocks.into_iter().map(|d| (file.to_owned(), d)));
    }
    let tests = serve_test_files();
    assert!(tests.len() >= 5, "{tests:?}");
    documents.extend(
        tests
            .into_iter()
            .map(|d| ("tests/it/serve.rs".to_owned(), d)),
    );
    for (origin, text) in &documents {
        let document = yaml(text);
        assert!(document.is_array(), "{origin}: not a list\n{text}");
        let errors = schema_errors(&document);
        assert!(errors.is_empty(), "{origin}:\n{text}\n{errors:#?}");
    }
}

/// What the loader says of `text` written as `name` (beside a body file,
/// two seed files and helloworld.proto): `Ok` when `mocklib serve`
/// loaded it and listened, else its error.
fn load(name: &str, text: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, content: &str| {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write(name, text);
    write("greeting.html", "<p>hello</p>");
    write(
        "data/books.json",
        r#"[{"isbn": "978-0441013593", "title": "Dune"}]"#,
    );
    write("data/users.yaml", "- { id: 1, name: Kate }\n");
    write("protos/helloworld.proto", HELLOWORLD_PROTO);
    let output = Command::new(env!("CARGO_BIN_EXE_mocklib"))
        .args([
            "serve",
            "--proto",
            "protos/helloworld.proto",
            "--handlers",
            name,
        ])
        // Listening, it stops at once: its standard input is closed.
        .arg("--until-stdin-closes")
        .stdin(Stdio::null())
        .current_dir(dir.path())
        .output()
        .expect("the mocklib command runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && stdout.contains("MOCKLIB_URL=") {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Documents covering every entry kind and field, and the values the
/// loader tolerates where a field does not belong (`headers: {}`,
/// `template: false`).
const VALID: &[&str] = &[
    "[]",
    // Every field of a single answer, and every condition.
    r#"
- method: GET
  path: /users/:id
  status: 203
  headers: { x-total-count: "1", Content-Type: text/plain; charset=utf-8 }
  body: Kate
  delay_ms: 0
  once: false
  template: false
  match:
    headers: { x-api-key: secret }
    headers_matching: { accept: ^application/ }
    headers_absent: [ x-debug ]
    query: { page: "2" }
    cookies: { session: abc }
    form: { name: Kate }
    json: { role: admin, tags: [ a ] }
    json_path: { $.user.id: 7, "$.roles[0]": admin, $: {} }
    body_contains: Kate
    bearer: t0ken
    basic: { user: kate, password: s3cret }
- method: post
  path: https://api.example.com/users
  status: 201
  json: { id: 8 }
  once: true
- method: ALL
  path: /greeting
  body_file: greeting.html
- method: "*"
  path: /anything
- method: PURGE
  path: /cache
  json: null
"#,
    // Templates: the status a template, and a number.
    r#"
- method: GET
  path: /users/:id
  template: true
  status: "{{ 200 if request.params.id else 404 }}"
  headers: { x-request-id: "{{ uuid() }}" }
  json: { id: "{{ request.params.id }}", at: "{{ now() }}" }
- path: /greetings
  template: true
  status: 201
  body: "Hello {{ request.json.name }}"
"#,
    // Sequences, with and without `once`.
    r#"
- method: GET
  path: /job
  match: { query: { id: "1" } }
  headers: {}
  template: false
  sequence:
    - { status: 202, json: { state: pending }, delay_ms: 5 }
    - { headers: { x-step: "2" }, body: done }
    - { body_file: greeting.html }
    - {}
- path: /token
  once: true
  sequence: [ { body: first } ]
"#,
    // Resources.
    r#"
- resource: /users
  seed:
    - { id: 1, name: Kate }
    - { id: abc, name: Sarah }
  match: { bearer: t0ken }
- resource: https://api.example.com/books
  id_field: isbn
  seed_file: data/books.json
- resource: /people
  seed_file: data/users.yaml
- resource: /empty
  headers: {}
  template: false
  once: false
- resource: /isbns
  id_field: isbn
  seed: [ { isbn: 9780441013593 } ]
"#,
    // gRPC.
    r#"
- grpc: helloworld.Greeter/SayHello
  json: { message: Hi }
  delay_ms: 10
- grpc: /helloworld.Greeter/SpellHello
  json: [ { message: B }, { message: o } ]
  status: NOT_FOUND
  message: no more letters
- grpc: helloworld.Greeter/GreetAll
  status: 5
- grpc: helloworld.Greeter/Chat
  status: ResourceExhausted
  message: slow down
  headers: {}
  template: false
  once: false
- grpc: helloworld.Greeter/SayHello
  status: OK
"#,
    // Callbacks: a function in the test's language (no client needed to
    // load them).
    r#"
- method: GET
  path: /users/:id
  callback: user_by_id
  timeout_ms: 2000
  once: true
  times: { at_least: 1 }
  match: { bearer: t0ken }
  headers: {}
  template: false
- callback: anything
"#,
    // GraphQL operations.
    r#"
- graphql: query GetUser
  endpoint: /graphql
  match: { variables: { id: "1" } }
  data: { user: { id: "1" } }
  status: 200
  headers: { x-served-by: mocklib }
  delay_ms: 0
  once: false
  times: { at_most: 3 }
- graphql: mutation /^Delete/
  errors: [ { message: no } ]
- graphql: query
  template: true
  data: { name: "{{ variables.name }}", op: "{{ operationName }}" }
- graphql: operation
  data: null
  errors: []
- graphql: operation Anything
  once: true
  data: { ok: true }
"#,
    // Faults, and the real request.
    r#"
- path: /reset
  fault: connection_reset
  delay_ms: 5
  match: { bearer: t0ken }
  once: true
  times: 1
- method: GET
  path: /empty
  fault: EmptyResponse
- path: /garbage
  fault: garbage
- path: /chunk
  fault: malformed_chunk
  status: 203
  headers: { x-head: sent }
- path: /cut
  fault: { truncate_after: 3 }
  body: abcdef
- path: /slow
  fault: { dribble_ms: 10, truncate_after: 0 }
  status: 200
  headers: { x-slow: "1" }
  json: { a: 1 }
- method: GET
  path: https://api.example.com/health
  passthrough: true
  match: { headers: { x-real: "1" } }
  once: false
  times: { at_least: 0 }
"#,
    // Event streams.
    r#"
- sse: /events/:room
  method: POST
  events:
    - { event: greeting, data: hello, id: "1", retry: 3000 }
    - { pause_ms: 5 }
    - { data: { unread: 3 } }
    - { id: "2" }
  repeat: 2
  template: true
  match: { bearer: t0ken }
  once: true
  times: 1
- sse: https://api.example.com/ticks
  events: [ { data: tick }, { pause_ms: 1000 } ]
  repeat: true
"#,
    // WebSocket servers.
    r#"
- ws: wss://chat.example.com/rooms/:room
  on_open: [ welcome, { type: hello }, 7 ]
  on_message:
    - { match: { text: ping }, send: [ pong ] }
    - { match: { json: { type: join } }, send: [ { type: joined } ] }
    - { match: { regex: "^bye" }, send: [ see you ], close: { code: 4000, reason: bye } }
    - { close: { code: 1000 } }
  match: { headers: { origin: "https://app.example.com" } }
  once: true
  times: { at_most: 2 }
- ws: /closed
  close: { code: 1008, reason: not today }
"#,
    // The real answer, altered.
    r#"
- method: GET
  path: https://api.example.com/users/:id
  proxy:
    status: 299
    headers: { x-mocked: "yes", etag: null }
    json_patch: { secret: null }
  match: { bearer: t0ken }
  once: true
  times: 2
- path: https://api.example.com/motd
  proxy: { body: "{{ response.body | upper }}" }
- path: http://*/anything
  proxy: {}
"#,
];

/// A JSON handler file (any name but .yaml and .yml).
const VALID_JSON: &str = r#"[
  {"method": "GET", "path": "/users/:id", "json": {"id": 7}, "match": {"headers": {"x-api-key": "secret"}}},
  {"path": "/job", "sequence": [{"status": 202}, {"json": {"state": "done"}}]},
  {"resource": "/todos", "seed": [{"id": 1, "title": "Write tests"}]},
  {"grpc": "helloworld.Greeter/SayHello", "json": {"message": "Hi"}},
  {"method": "POST", "path": "/hooks", "callback": "hook", "timeout_ms": 100}
]"#;

#[test]
fn documents_with_every_kind_and_field_load_and_validate() {
    for text in VALID {
        let errors = schema_errors(&yaml(text));
        assert!(errors.is_empty(), "{text}\n{errors:#?}");
        load("handlers.yaml", text).unwrap_or_else(|error| panic!("{text}\n{error}"));
    }
    let errors = schema_errors(&serde_json::from_str(VALID_JSON).unwrap());
    assert!(errors.is_empty(), "{errors:#?}");
    load("handlers.json", VALID_JSON).unwrap();
}

/// Entries the loader refuses, with what it says: the schema refuses each
/// too.
const INVALID: &[(&str, &str)] = &[
    (
        "path: /users\nbody: not a list\n",
        "expected a list of handlers",
    ),
    // HTTP entries.
    ("- path: /a\n  staus: 200\n", "unknown field `staus`"),
    ("- method: GET\n  body: x\n", "missing field `path`"),
    (
        "- path: /a\n  body: x\n  json: 1\n",
        "give one of body, json and body_file",
    ),
    (
        "- path: /a\n  json: 1\n  body_file: greeting.html\n",
        "give one of body, json and body_file",
    ),
    ("- path: /a\n  status: 99\n", "invalid status 99"),
    ("- path: /a\n  status: 1000\n", "invalid status 1000"),
    ("- path: /a\n  status: \"201\"\n", "status: invalid type"),
    (
        "- path: /a\n  headers: { x-total-count: 1 }\n",
        "expected a string",
    ),
    (
        "- path: /a\n  headers: { \"bad name\": x }\n",
        "invalid header",
    ),
    (
        "- path: /a\n  headers: { x-a: \"line\\nbreak\" }\n",
        "invalid header",
    ),
    ("- path: /a\n  delay_ms: -1\n", "invalid value"),
    ("- path: /a\n  method: \"GE T\"\n", "invalid method"),
    ("- path: /a\n  once: yes\n", "invalid type"),
    (
        "- path: /a\n  message: hi\n",
        "`message` is a field of grpc entries",
    ),
    (
        "- path: /a\n  seed: []\n",
        "`seed` is a field of resource entries",
    ),
    (
        "- path: /a\n  id_field: uuid\n",
        "`id_field` is a field of resource entries",
    ),
    (
        "- path: /a\n  template: true\n  body_file: greeting.html\n",
        "a body_file is sent as it is",
    ),
    // Conditions.
    (
        "- path: /a\n  match: { header: { a: b } }\n",
        "unknown field `header`",
    ),
    (
        "- path: /a\n  match: { json_path: { user.name: Kate } }\n",
        "starts with `$`",
    ),
    (
        "- path: /a\n  match: { json_path: { \"$.a[x]\": 1 } }\n",
        "is not followed by an index",
    ),
    (
        "- path: /a\n  match: { basic: { user: kate } }\n",
        "missing field `password`",
    ),
    (
        "- path: /a\n  match: { headers_absent: x-debug }\n",
        "invalid type",
    ),
    (
        "- path: /a\n  match: { query: { page: 2 } }\n",
        "expected a string",
    ),
    // Sequences.
    (
        "- path: /job\n  status: 200\n  sequence: [ { body: a } ]\n",
        "`status` beside `sequence`",
    ),
    (
        "- path: /job\n  json: 1\n  sequence: [ { body: a } ]\n",
        "`json` beside `sequence`",
    ),
    (
        "- path: /job\n  headers: { a: b }\n  sequence: [ { body: a } ]\n",
        "`headers` beside `sequence`",
    ),
    (
        "- path: /job\n  delay_ms: 5\n  sequence: [ { body: a } ]\n",
        "`delay_ms` beside `sequence`",
    ),
    (
        "- path: /job\n  template: true\n  sequence: [ { body: a } ]\n",
        "`template` beside `sequence`",
    ),
    ("- path: /job\n  sequence: []\n", "at least one answer"),
    (
        "- path: /job\n  sequence: [ { staus: 200 } ]\n",
        "unknown field `staus`",
    ),
    (
        "- path: /job\n  sequence: [ { status: 99 } ]\n",
        "sequence[0]: status: invalid status 99",
    ),
    (
        "- path: /job\n  sequence: [ { body: a, json: 1 } ]\n",
        "give one of body, json and body_file",
    ),
    // Resources.
    (
        "- resource: /users\n  json: []\n",
        "`json` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  status: 201\n",
        "`status` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  path: /users\n",
        "`path` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  method: GET\n",
        "`method` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  headers: { a: b }\n",
        "`headers` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  delay_ms: 5\n",
        "`delay_ms` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  template: true\n",
        "`template` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  once: true\n",
        "`once` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  sequence: [ {} ]\n",
        "`sequence` does not go on a resource entry",
    ),
    (
        "- resource: /users\n  grpc: helloworld.Greeter/SayHello\n",
        "`grpc` does not go on a resource entry",
    ),
    ("- resource: /users\n  seeds: []\n", "unknown field `seeds`"),
    (
        "- resource: /users\n  seed: { id: 1 }\n",
        "expected a list of JSON objects",
    ),
    (
        "- resource: /users\n  seed: [ [1] ]\n",
        "seed[0]: expected a JSON object",
    ),
    (
        "- resource: /users\n  seed: [ { id: 1 }, { name: Kate } ]\n",
        "seed[1]: no `id` field",
    ),
    (
        "- resource: /users\n  seed: [ { id: \"\" } ]\n",
        "an id is a string or a number",
    ),
    (
        "- resource: /users\n  seed: [ { id: null } ]\n",
        "an id is a string or a number",
    ),
    (
        "- resource: /users\n  seed: []\n  seed_file: data/books.json\n",
        "give seed or seed_file, not both",
    ),
    // gRPC.
    (
        "- grpc: helloworld.Greeter/SayHello\n  path: /greeting\n",
        "`path` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  method: POST\n",
        "`method` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  body: hi\n",
        "`body` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  headers: { a: b }\n",
        "`headers` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  match: { bearer: t }\n",
        "`match` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  template: true\n",
        "`template` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  once: true\n",
        "`once` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  sequence: [ {} ]\n",
        "`sequence` is a field of HTTP entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  seed: []\n",
        "`seed` is a field of resource entries",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  status: NOT_FOND\n",
        "unknown gRPC status \"NOT_FOND\"",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  status: 17\n",
        "unknown gRPC status 17",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  status: true\n",
        "unknown gRPC status true",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  message: why\n",
        "`message` is the status message of a status other than OK",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  status: ok\n  message: why\n",
        "`message` is the status message of a status other than OK",
    ),
    (
        "- grpc: helloworld.Greeter/SayHello\n  status: 0\n  message: why\n",
        "`message` is the status message of a status other than OK",
    ),
    ("- grpc: SayHello\n", "is not a gRPC method"),
    // Callbacks.
    (
        "- path: /a\n  callback: x\n  status: 200\n",
        "`status` does not go on a callback entry",
    ),
    (
        "- callback: x\n  json: {}\n",
        "`json` does not go on a callback entry",
    ),
    (
        "- callback: x\n  sequence: [ {} ]\n",
        "`sequence` does not go on a callback entry",
    ),
    (
        "- callback: x\n  delay_ms: 5\n",
        "`delay_ms` does not go on a callback entry",
    ),
    (
        "- callback: x\n  headers: { a: b }\n",
        "`headers` does not go on a callback entry",
    ),
    (
        "- callback: x\n  template: true\n",
        "`template` does not go on a callback entry",
    ),
    (
        "- callback: x\n  message: hi\n",
        "`message` does not go on a callback entry",
    ),
    (
        "- callback: x\n  seed: []\n",
        "`seed` is a field of resource entries",
    ),
    ("- callback: \"\"\n", "give the function's name"),
    ("- callback: x\n  timeout_ms: 0\n", "give at least 1"),
    ("- callback: x\n  timeout_ms: -5\n", "invalid value"),
    ("- callback: 7\n", "invalid type"),
    ("- callback: x\n  method: \"GE T\"\n", "invalid method"),
    (
        "- path: /a\n  timeout_ms: 100\n",
        "`timeout_ms` is a field of callback entries",
    ),
    // GraphQL.
    (
        "- graphql: subscription OnPrice\n  data: {}\n",
        "expected `query NAME`, `mutation NAME` or `operation`",
    ),
    (
        "- graphql: query Get-User\n  data: {}\n",
        "is not an operation name",
    ),
    ("- graphql: query GetUser\n", "give data, errors or both"),
    (
        "- graphql: query GetUser\n  data: {}\n  path: /graphql\n",
        "`path` does not go on a graphql entry",
    ),
    (
        "- graphql: query GetUser\n  data: {}\n  match: { json: {} }\n",
        "unknown field `json`",
    ),
    (
        "- graphql: query GetUser\n  errors: { message: no }\n",
        "errors: expected a list",
    ),
    (
        "- graphql: query GetUser\n  data: {}\n  status: 99\n",
        "invalid status 99",
    ),
    // Faults.
    (
        "- path: /a\n  fault: timeout\n",
        "fault: unknown fault \"timeout\"",
    ),
    (
        "- path: /a\n  fault: connection_reset\n  status: 500\n",
        "`status` does not go with fault connection_reset",
    ),
    (
        "- path: /a\n  fault: malformed_chunk\n  body: x\n",
        "`body` does not go with fault malformed_chunk",
    ),
    (
        "- path: /a\n  fault: { truncate_after: 3 }\n",
        "a body fault cuts or paces a body",
    ),
    (
        "- path: /a\n  fault: { truncate: 3 }\n  body: abc\n",
        "unknown field `truncate`",
    ),
    (
        "- path: /a\n  fault: {}\n  body: abc\n",
        "give truncate_after, dribble_ms or both",
    ),
    (
        "- path: /a\n  fault: { truncate_after: 1 }\n  body: x\n  json: 1\n",
        "give one of body and json",
    ),
    ("- path: /a\n  fault: 7\n", "expected a fault's name"),
    (
        "- path: /a\n  fault: garbage\n  sequence: [ {} ]\n",
        "`sequence` does not go on a fault entry",
    ),
    ("- fault: garbage\n", "missing field `path`"),
    // Passthrough.
    (
        "- path: /a\n  passthrough: false\n",
        "passthrough: only `true`",
    ),
    (
        "- path: /a\n  passthrough: true\n  body: x\n",
        "`body` does not go on a passthrough entry",
    ),
    ("- passthrough: true\n", "missing field `path`"),
    // Event streams.
    ("- sse: /e\n  events: []\n", "give at least one event"),
    ("- sse: /e\n", "missing field `events`"),
    (
        "- sse: /e\n  events: [ { data: a, pause_ms: 5 } ]\n",
        "a pause is an item of its own",
    ),
    ("- sse: /e\n  events: [ {} ]\n", "give data"),
    (
        "- sse: /e\n  events: [ { dta: a } ]\n",
        "unknown field `dta`",
    ),
    (
        "- sse: /e\n  events: [ { data: a, id: \"1\\n2\" } ]\n",
        "events[0].id: one line",
    ),
    (
        "- sse: /e\n  events: [ { data: a } ]\n  repeat: 0\n",
        "repeat: a count from 1",
    ),
    (
        "- sse: /e\n  events: [ { data: a } ]\n  repeat: true\n",
        "give a pause_ms among them",
    ),
    (
        "- sse: /e\n  events: [ { data: a } ]\n  method: ALL\n",
        "one method",
    ),
    (
        "- sse: /e\n  events: [ { data: a } ]\n  status: 200\n",
        "`status` does not go on an sse entry",
    ),
    // WebSocket servers.
    (
        "- ws: /e\n  on_message: [ { match: { text: a, regex: b }, send: [ x ] } ]\n",
        "give one of text, json and regex",
    ),
    (
        "- ws: /e\n  on_message: [ { match: { txt: a }, send: [ x ] } ]\n",
        "unknown field `txt`",
    ),
    (
        "- ws: /e\n  on_message: [ { match: { text: a } } ]\n",
        "give send, close or both",
    ),
    (
        "- ws: /e\n  close: { code: 1006 }\n",
        "not a close code a server sends",
    ),
    (
        "- ws: /e\n  close: { code: 999 }\n",
        "not a close code a server sends",
    ),
    ("- ws: /e\n  close: { reason: x }\n", "missing field `code`"),
    (
        "- ws: /e\n  close: { code: 1000 }\n  on_message: [ { send: [ x ] } ]\n",
        "on_message would get nothing",
    ),
    ("- ws: /e\n  on_open: hello\n", "invalid type"),
    ("- ws: /e\n  path: /e\n", "`path` does not go on a ws entry"),
    // The real answer, altered.
    ("- path: /users\n  proxy: {}\n", "needs an absolute URL"),
    (
        "- path: https://a.example/x\n  proxy: { status: 99 }\n",
        "invalid status 99",
    ),
    (
        "- path: https://a.example/x\n  proxy: { json_patch: {}, body: x }\n",
        "give json_patch or body, not both",
    ),
    (
        "- path: https://a.example/x\n  proxy: { headers: { \"bad name\": x } }\n",
        "invalid header name",
    ),
    (
        "- path: https://a.example/x\n  proxy: { headers: { a: 1 } }\n",
        "invalid type",
    ),
    (
        "- path: https://a.example/x\n  proxy: { stauts: 1 }\n",
        "unknown field `stauts`",
    ),
    ("- path: https://a.example/x\n  proxy: 1\n", "invalid type"),
    (
        "- path: https://a.example/x\n  proxy: {}\n  status: 200\n",
        "`status` does not go on a proxy entry",
    ),
    ("- proxy: {}\n", "missing field `path`"),
];

#[test]
fn documents_the_loader_refuses_the_schema_refuses() {
    let mut accepted = Vec::new();
    for (text, says) in INVALID {
        let error = match load("handlers.yaml", text) {
            Ok(()) => panic!("the loader took\n{text}"),
            Err(error) => error,
        };
        assert!(
            error.contains(says),
            "{text}\nexpected {says:?}, got: {error}"
        );
        if !schema_refuses(&yaml(text)) {
            accepted.push(*text);
        }
    }
    assert!(
        accepted.is_empty(),
        "the schema accepts:\n{}",
        accepted.join("\n")
    );
}
