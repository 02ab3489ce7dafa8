//! Declarative handler files of `mocklib serve`: a YAML (`.yaml`, `.yml`)
//! or JSON (any other name) list of canned answers.
//!
//! ```yaml
//! - method: GET                 # optional: any method when left out (or ALL)
//!   path: /users/:id            # a mocklib pattern; absolute URLs too
//!   status: 200                 # optional: 200
//!   match:                      # optional: conditions the request must meet too
//!     headers: { x-api-key: secret }
//!     query: { page: "2" }
//!     json: { role: admin }     # the body holds this JSON (a subset)
//!   headers: { x-total-count: "1" }
//!   json: { id: 1, name: Kate } # or body: text, or body_file: a path
//!   delay_ms: 150               # optional
//! - grpc: helloworld.Greeter/SayHello   # a gRPC method of the --proto files
//!   json: { message: "Hello!" }         # (see `grpc_entry`)
//! - resource: /users                    # a stateful REST collection
//!   seed: [ { id: 1, name: Kate } ]     # (see `resource_entry`)
//! - path: /users/:id/avatar             # answered by a function in the
//!   callback: avatar                    # test's language (see `callback_entry`)
//! - graphql: query GetUser              # a GraphQL operation
//!   data: { user: { name: Kate } }      # (see `graphql_entry`)
//! - path: /flaky                        # a transport failure
//!   fault: connection_reset             # (see `fault_entry`)
//! - path: https://api.example.com/health   # the real server answers
//!   passthrough: true                   # (see `proxy_entry`)
//! - path: https://api.example.com/users/:id   # the real answer, altered
//!   proxy: { json_patch: { plan: pro } }      # (see `proxy_entry`)
//! - sse: /notifications                 # a server-sent event stream
//!   events: [ { data: hello } ]         # (see `sse_entry`)
//! - ws: /chat                           # a WebSocket server
//!   on_open: [ welcome ]                # (see `ws_entry`)
//! ```
//!
//! `body_file` is relative to the handler file's folder. Errors name the
//! file and the entry (from 1), so a typo is found at once.
//!
//! The format's JSON Schema, for editors, is `handler-file.schema.json`
//! beside Cargo.toml: a field added to these structs goes there too
//! (tests/it/schema.rs compares the two and runs its documents through both).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use http::{Method, StatusCode};
use mocklib::{Handler, HttpResponse};
use prost_reflect::DescriptorPool;

use crate::behaviour;
use crate::callback_entry::{self, CallbackEntry, Callbacks};
use crate::entry_parts::{Conditions, Expected, check_headers, http_handler, method_and_path};
use crate::fault_entry::FaultEntry;
use crate::graphql_entry::GraphqlEntry;
use crate::grpc_entry::{self, GrpcEntry};
use crate::proxy_entry::{PassthroughEntry, ProxyEntry};
use crate::resource_entry::{self, ResourceEntry};
use crate::sse_entry::SseEntry;
use crate::stamp::{Watched, stamp};
use crate::ws_entry::WsEntry;

/// One entry, of the kind its key says: `grpc` (a gRPC method of the
/// --proto files), `resource` (a REST collection), `callback` (a function
/// in the test's language), `graphql` (GraphQL operations), `fault` (a
/// transport failure, a cut or paced body), `passthrough` (the real
/// request), `proxy` (the real request, its answer altered), `sse` (an event stream), `ws` (a WebSocket server),
/// `sequence` (an HTTP entry answering in turn), otherwise an HTTP entry
/// with one answer. Each kind is its own struct, so
/// serde refuses the fields of the others by itself (a misspelt `staus`
/// too), as the JSON Schema's five shapes do.
enum Entry {
    Http(HttpEntry),
    Sequence(SequenceEntry),
    Resource(ResourceFields),
    Grpc(GrpcFields),
    Callback(CallbackFields),
    Graphql(GraphqlEntry),
    Fault(FaultEntry),
    Passthrough(PassthroughEntry),
    Sse(SseEntry),
    Ws(WsEntry),
    Proxy(ProxyEntry),
}

/// An HTTP entry with one answer.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpEntry {
    method: Option<String>,
    path: Option<String>,
    /// An HTTP status number (or, with `template`, a template of one).
    status: Option<serde_json::Value>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    json: Option<serde_json::Value>,
    body_file: Option<PathBuf>,
    delay_ms: Option<u64>,
    /// Conditions beyond method and path (`mocklib::matchers`).
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    /// Whether `body`, `json`'s strings, the header values and `status` are
    /// templates rendered per request (see `template.rs`).
    #[serde(default)]
    template: bool,
    /// The entry answers once, then lets the next entry or the unhandled
    /// strategy take the requests.
    #[serde(default)]
    once: bool,
    /// How many requests the entry expects: `GET /__mocklib/verify`
    /// reports the entries whose count is off.
    times: Option<Expected>,
}

/// An HTTP entry answering in turn: one answer per request, in order (the
/// last repeats, or with `once` the entry then stops matching).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SequenceEntry {
    method: Option<String>,
    path: Option<String>,
    sequence: Vec<Answer>,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
    /// Tolerated empty, as the schema does: each answer has its own.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Tolerated `false`: sequence answers are not templated.
    #[serde(default)]
    template: bool,
}

/// A `resource` entry: a stateful REST collection (see `resource_entry.rs`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceFields {
    resource: String,
    id_field: Option<String>,
    seed: Option<serde_json::Value>,
    seed_file: Option<PathBuf>,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    times: Option<Expected>,
    /// Tolerated empty or `false`, as the schema does (an HTTP entry's
    /// fields, written out with their defaults).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    once: bool,
    #[serde(default)]
    template: bool,
}

/// A `grpc` entry: a method of the --proto files (see `grpc_entry.rs`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GrpcFields {
    grpc: String,
    json: Option<serde_json::Value>,
    /// A gRPC code (name or number).
    status: Option<serde_json::Value>,
    message: Option<String>,
    delay_ms: Option<u64>,
    times: Option<Expected>,
    /// Tolerated empty or `false`, as the schema does (an HTTP entry's
    /// fields, written out with their defaults).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    once: bool,
    #[serde(default)]
    template: bool,
}

/// A `callback` entry: a resolver in the test's language, answered over
/// the scope's callback channel (see `callback_entry.rs`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CallbackFields {
    method: Option<String>,
    /// Left out: any URL.
    path: Option<String>,
    callback: String,
    timeout_ms: Option<u64>,
    #[serde(rename = "match")]
    conditions: Option<Conditions>,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
    /// Tolerated empty or `false`, as the schema does (an HTTP entry's
    /// fields, written out with their defaults).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    template: bool,
}

/// An entry's kind, chosen by its key.
#[derive(Clone, Copy)]
enum Kind {
    Http,
    Sequence,
    Resource,
    Grpc,
    Callback,
    Graphql,
    Fault,
    Passthrough,
    Sse,
    Ws,
    Proxy,
}

impl Kind {
    fn of(value: &serde_json::Value) -> Kind {
        let has = |key: &str| value.get(key).is_some();
        if has("graphql") {
            Kind::Graphql
        } else if has("fault") {
            Kind::Fault
        } else if has("passthrough") {
            Kind::Passthrough
        } else if has("proxy") {
            Kind::Proxy
        } else if has("sse") {
            Kind::Sse
        } else if has("ws") {
            Kind::Ws
        } else if has("resource") {
            Kind::Resource
        } else if has("grpc") {
            Kind::Grpc
        } else if has("callback") {
            Kind::Callback
        } else if has("sequence") {
            Kind::Sequence
        } else {
            Kind::Http
        }
    }

    /// What to say of `field`, which this kind of entry does not take: the
    /// kind it belongs to, when it belongs to one.
    fn misplaced(self, field: &str) -> Option<String> {
        let belongs = |fields: &[&str]| fields.contains(&field);
        let http = fields_of::<HttpEntry>();
        let resource = fields_of::<ResourceFields>();
        let grpc = fields_of::<GrpcFields>();
        // The newer kinds say what they take, from their structs.
        let takes = |kind: &str, fields: &[&str]| {
            format!(
                "`{field}` does not go on {kind} entry; it takes {}",
                fields.join(", ")
            )
        };
        Some(match self {
            Kind::Graphql => takes("a graphql", fields_of::<GraphqlEntry>()),
            Kind::Fault => takes("a fault", fields_of::<FaultEntry>()),
            Kind::Passthrough => takes("a passthrough", fields_of::<PassthroughEntry>()),
            Kind::Sse => takes("an sse", fields_of::<SseEntry>()),
            Kind::Ws => takes("a ws", fields_of::<WsEntry>()),
            Kind::Proxy => takes("a proxy", fields_of::<ProxyEntry>()),
            Kind::Resource if belongs(http) || belongs(grpc) || field == "sequence" => format!(
                "`{field}` does not go on a resource entry: a resource answers from its collection (list, get, create, replace, patch, delete); it takes id_field, seed or seed_file, and match"
            ),
            Kind::Sequence if belongs(fields_of::<Answer>()) || field == "template" => format!(
                "`{field}` beside `sequence`: give each answer's fields in its sequence item"
            ),
            Kind::Grpc if belongs(http) || field == "sequence" => format!(
                "`{field}` is a field of HTTP entries; a grpc entry takes json, status, message and delay_ms"
            ),
            Kind::Callback if belongs(http) || belongs(grpc) || field == "sequence" => format!(
                "`{field}` does not go on a callback entry: its function answers (status, headers, body, delay); it takes method, path, match, timeout_ms, once and times"
            ),
            Kind::Http | Kind::Sequence | Kind::Grpc | Kind::Callback if belongs(resource) => {
                format!(
                    "`{field}` is a field of resource entries (`resource: /users` in place of `path`)"
                )
            }
            Kind::Http | Kind::Sequence if belongs(grpc) => {
                format!("`{field}` is a field of grpc entries (the status message)")
            }
            _ if field == "timeout_ms" => format!(
                "`{field}` is a field of callback entries (how long their function may take to answer)"
            ),
            _ => return None,
        })
    }
}

impl Entry {
    /// The entry `value` is, of `kind`; an error names the field at fault.
    fn of(
        kind: Kind,
        value: serde_json::Value,
    ) -> Result<Entry, serde_path_to_error::Error<serde_json::Error>> {
        Ok(match kind {
            Kind::Grpc => Entry::Grpc(serde_path_to_error::deserialize(value)?),
            Kind::Resource => Entry::Resource(serde_path_to_error::deserialize(value)?),
            Kind::Sequence => Entry::Sequence(serde_path_to_error::deserialize(value)?),
            Kind::Callback => Entry::Callback(serde_path_to_error::deserialize(value)?),
            Kind::Http => Entry::Http(serde_path_to_error::deserialize(value)?),
            Kind::Graphql => Entry::Graphql(serde_path_to_error::deserialize(value)?),
            Kind::Fault => Entry::Fault(serde_path_to_error::deserialize(value)?),
            Kind::Passthrough => Entry::Passthrough(serde_path_to_error::deserialize(value)?),
            Kind::Sse => Entry::Sse(serde_path_to_error::deserialize(value)?),
            Kind::Ws => Entry::Ws(serde_path_to_error::deserialize(value)?),
            Kind::Proxy => Entry::Proxy(serde_path_to_error::deserialize(value)?),
        })
    }

    fn times(&mut self) -> Option<Expected> {
        match self {
            Entry::Http(entry) => entry.times.take(),
            Entry::Sequence(entry) => entry.times.take(),
            Entry::Resource(entry) => entry.times.take(),
            Entry::Grpc(entry) => entry.times.take(),
            Entry::Callback(entry) => entry.times.take(),
            Entry::Graphql(entry) => entry.times(),
            Entry::Fault(entry) => entry.times(),
            Entry::Passthrough(entry) => entry.times(),
            Entry::Sse(entry) => entry.times(),
            Entry::Ws(entry) => entry.times(),
            Entry::Proxy(entry) => entry.times(),
        }
    }
}

/// The fields of a struct deserialized with serde's derive, as its derive
/// lists them: the kinds' fields are written once, in their structs.
fn fields_of<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    #[derive(Debug)]
    struct Found(&'static [&'static str]);
    impl std::fmt::Display for Found {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }
    impl std::error::Error for Found {}
    impl serde::de::Error for Found {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Found(&[])
        }
    }
    struct Probe;
    impl<'de> serde::Deserializer<'de> for Probe {
        type Error = Found;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Found> {
            Err(Found(&[]))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Found> {
            Err(Found(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    match T::deserialize(Probe) {
        Err(Found(fields)) => fields,
        Ok(_) => &[],
    }
}

/// One answer of a `sequence:`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    status: Option<u16>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    json: Option<serde_json::Value>,
    body_file: Option<PathBuf>,
    delay_ms: Option<u64>,
}

/// An answer ready to send, built once at load.
struct Canned {
    status: u16,
    body: Bytes,
    content_type: Option<&'static str>,
    headers: BTreeMap<String, String>,
    delay_ms: Option<u64>,
    /// The answer's head, built once at load: per request it is cloned
    /// (shared values), not parsed from the file's strings again.
    head: http::Response<()>,
}

impl Canned {
    fn new(
        status: u16,
        body: Bytes,
        content_type: Option<&'static str>,
        headers: BTreeMap<String, String>,
        delay_ms: Option<u64>,
    ) -> Result<Self, String> {
        let mut canned = Canned {
            status,
            body,
            content_type,
            headers,
            delay_ms,
            head: http::Response::new(()),
        };
        let mut head = HttpResponse::new(Bytes::new()).status(status);
        for (name, value) in &canned.headers {
            head = head.header(name, value);
        }
        let built = canned.typed(head).into_http()?;
        let (parts, _) = built.into_parts();
        canned.head = http::Response::from_parts(parts, ());
        Ok(canned)
    }

    fn response(&self) -> HttpResponse {
        let mut response = http::Response::new(self.body.clone());
        *response.status_mut() = self.head.status();
        *response.headers_mut() = self.head.headers().clone();
        HttpResponse::from(response)
    }

    /// `response` with the body's default content type, unless the
    /// headers written in the file give one (they win).
    fn typed(&self, response: HttpResponse) -> HttpResponse {
        let typed = self
            .headers
            .keys()
            .any(|name| name.eq_ignore_ascii_case("content-type"));
        match self.content_type.filter(|_| !typed) {
            Some(content_type) => response.header("content-type", content_type),
            None => response,
        }
    }
}

impl Answer {
    fn canned(self, dir: &Path, files: &mut Vec<Watched>) -> Result<Canned, String> {
        let status = self.status.unwrap_or(200);
        StatusCode::from_u16(status).map_err(|_| format!("status: invalid status {status}"))?;
        let (body, content_type) = body_of(self.body, self.json, self.body_file, dir, files)?;
        check_headers(&self.headers)?;
        Canned::new(status, body, content_type, self.headers, self.delay_ms)
    }
}

/// The body an entry or answer gives, with its default content type.
fn body_of(
    body: Option<String>,
    json: Option<serde_json::Value>,
    body_file: Option<PathBuf>,
    dir: &Path,
    files: &mut Vec<Watched>,
) -> Result<(Bytes, Option<&'static str>), String> {
    Ok(match (body, json, body_file) {
        (None, None, None) => (Bytes::new(), None),
        (Some(text), None, None) => (Bytes::from(text), Some("text/plain")),
        (None, Some(json), None) => (
            Bytes::from(serde_json::to_vec(&json).expect("a JSON value serializes")),
            Some("application/json"),
        ),
        (None, None, Some(file)) => {
            let file = dir.join(file);
            let stamp = stamp(&file);
            let bytes = std::fs::read(&file).map_err(|error| {
                format!("body_file: could not read {}: {error}", file.display())
            })?;
            let content_type = content_type_of(&file);
            files.push((file, stamp));
            (Bytes::from(bytes), content_type)
        }
        _ => return Err("give one of body, json and body_file, not several".to_owned()),
    })
}

/// The handler of an entry with a `sequence:`.
fn sequence_handler(
    method: Option<Method>,
    path: String,
    answers: Vec<Canned>,
    once: bool,
) -> Result<Handler, String> {
    let answers = std::sync::Arc::new(answers);
    let respond = move |args: mocklib::ResolverArgs| {
        let calls = args.previous_calls();
        let last = answers.len() - 1;
        let answer = match answers.get(calls) {
            Some(answer) => Some(answer),
            None if once => None,
            None => answers.get(last),
        };
        let (response, delay) = match answer {
            Some(answer) => (Some(answer.response()), answer.delay_ms),
            None => (None, None),
        };
        async move {
            if let Some(milliseconds) = delay {
                mocklib::delay(milliseconds).await;
            }
            match response {
                Some(response) => mocklib::resolver::Resolution::Respond(response),
                // Every answer given: as a used `.once()` handler.
                None => mocklib::resolver::Resolution::Exhausted,
            }
        }
    };
    http_handler(method, path, respond)
}

/// A document that does not load: the message names the document, the
/// entry (from 1) and the field; `pointer` is the JSON pointer of the
/// entry or field at fault (`/0/status`).
#[derive(Debug)]
pub(crate) struct LoadError {
    pub(crate) message: String,
    pub(crate) pointer: String,
}

impl LoadError {
    fn at(pointer: &str, message: String) -> Self {
        LoadError {
            message,
            pointer: pointer.to_owned(),
        }
    }
}

impl From<String> for LoadError {
    fn from(message: String) -> Self {
        LoadError::at("", message)
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The JSON pointer (under the entry) of the field an entry's error message
/// starts with: `sequence[0]: status: invalid status 99` is
/// `/sequence/0/status`, `match.headers: ...` is `/match/headers`; empty
/// when it names none.
fn field_pointer(message: &str) -> String {
    let mut pointer = String::new();
    let mut rest = message;
    while let Some((head, tail)) = rest.split_once(": ") {
        let is_path = !head.is_empty()
            && head.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '-' | '$')
            });
        if !is_path {
            break;
        }
        for part in head.split(['.', '[']) {
            let part = part.trim_end_matches(']');
            if !part.is_empty() {
                pointer.push('/');
                pointer.push_str(&pointer_escape(part));
            }
        }
        rest = tail;
    }
    pointer
}

/// `segment` as a JSON pointer writes it (RFC 6901).
fn pointer_escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The handlers of the file at `path`, and every file they were read from
/// (the handler file and its body files) with its stamp from before it was
/// read, for reloading. `pool` holds the descriptors of the `--proto`
/// files, which `grpc` entries need; `callbacks` the callback channels
/// `callback` entries call through.
pub(crate) fn load(
    path: &Path,
    pool: Option<&DescriptorPool>,
    callbacks: &Callbacks,
) -> Result<(Vec<Handler>, Vec<Watched>), String> {
    let name = path.display();
    let stamped = (path.to_owned(), stamp(path));
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("could not read the handler file {name}: {error}"))?;
    let yaml = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    let dir = path.parent().unwrap_or(Path::new("."));
    let (handlers, mut files) = parse(&text, yaml, &name.to_string(), dir, pool, callbacks)
        .map_err(|error| error.message)?;
    files.insert(0, stamped);
    Ok((handlers, files))
}

/// The handlers of a handler-file document (`yaml`, or JSON), named `name`
/// in errors; `body_file` and `seed_file` are relative to `dir`. Returns the
/// files the entries read, with their stamps. The files and the admin API
/// (`POST /__mocklib/handlers`) both load through here.
pub(crate) fn parse(
    text: &str,
    yaml: bool,
    name: &str,
    dir: &Path,
    pool: Option<&DescriptorPool>,
    callbacks: &Callbacks,
) -> Result<(Vec<Handler>, Vec<Watched>), LoadError> {
    let mut files = Vec::new();
    let document: serde_json::Value = if yaml {
        serde_norway::from_str(text).map_err(|error| format!("{name} is not YAML: {error}"))?
    } else {
        serde_json::from_str(text).map_err(|error| format!("{name} is not JSON: {error}"))?
    };
    let serde_json::Value::Array(entries) = document else {
        return Err(LoadError::at(
            "",
            format!(
                "{name}: expected a list of handlers (method, path, status, headers, body | json | body_file, delay_ms; or grpc, json | status, message, delay_ms; or resource, id_field, seed | seed_file; or method, path, callback, timeout_ms; or a graphql, fault, passthrough, proxy, sse or ws entry)"
            ),
        ));
    };
    let mut handlers = Vec::with_capacity(entries.len());
    for (index, value) in entries.into_iter().enumerate() {
        // Named by position and, when it has them, by method and path (or
        // by its gRPC method).
        let keyed = ["graphql", "sse", "ws"].into_iter().find_map(|key| {
            let text = value.get(key)?.as_str()?;
            Some(format!(" ({key} {text})"))
        });
        let label = match (value.get("method"), value.get("path"), value.get("grpc")) {
            _ if keyed.is_some() => keyed.unwrap_or_default(),
            _ if value
                .get("resource")
                .is_some_and(serde_json::Value::is_string) =>
            {
                format!(
                    " (resource {})",
                    value["resource"].as_str().unwrap_or_default()
                )
            }
            (_, _, Some(serde_json::Value::String(grpc))) => format!(" (grpc {grpc})"),
            (method, Some(serde_json::Value::String(p)), _) => format!(
                " ({} {p})",
                method.and_then(|m| m.as_str()).unwrap_or("ALL")
            ),
            _ => match value.get("callback") {
                Some(serde_json::Value::String(callback)) => format!(" (callback {callback})"),
                _ => String::new(),
            },
        };
        // Where in the document, for the admin API's answer; the message
        // names the entry from 1 and the field, as a person reads a file.
        let fail = |error: String| {
            let pointer = format!("/{index}{}", field_pointer(&error));
            LoadError::at(
                &pointer,
                format!("{name}, entry {}{label}: {error}", index + 1),
            )
        };
        let mut value = value;
        // The fields any kind takes (chaos, scenario), off before the kind
        // reads the rest.
        let behaviour = behaviour::take(&mut value).map_err(|error| fail(error.to_string()))?;
        let path = value
            .get("path")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let kind = Kind::of(&value);
        let mut entry = Entry::of(kind, value).map_err(|error| {
            let mut path: Vec<String> = error.path().iter().map(ToString::to_string).collect();
            let error = error.into_inner().to_string();
            let pointer: String = path
                .iter()
                .map(|segment| format!("/{}", pointer_escape(segment)))
                .collect();
            // The message names an unknown field itself; one of the entry's
            // own is said as the field of which kind it is.
            let mut message = error.clone();
            if error.starts_with("unknown field") {
                let field = path.pop().unwrap_or_default();
                if let Some(said) = kind.misplaced(&field).filter(|_| path.is_empty()) {
                    message = said;
                }
            }
            let message = if path.is_empty() {
                message
            } else {
                format!("{}: {message}", path.join("."))
            };
            LoadError::at(
                &format!("/{index}{pointer}"),
                format!("{name}, entry {}{label}: {message}", index + 1),
            )
        })?;
        let expected = entry.times().map(|times| times.times()).transpose();
        let expected = expected.map_err(fail)?;
        let handler = match entry {
            Entry::Http(entry) => entry.into_handler(dir, &mut files),
            Entry::Sequence(entry) => entry.into_handler(dir, &mut files),
            Entry::Resource(entry) => entry.into_handler(dir, &mut files),
            Entry::Grpc(entry) => entry.into_handler(pool),
            Entry::Callback(entry) => entry.into_handler(callbacks),
            Entry::Graphql(entry) => entry.into_handler(),
            Entry::Fault(entry) => entry.into_handler(),
            Entry::Passthrough(entry) => entry.into_handler(),
            Entry::Sse(entry) => entry.into_handler(),
            Entry::Ws(entry) => entry.into_handler(),
            Entry::Proxy(entry) => entry.into_handler(),
        };
        let handler = handler.map_err(fail)?;
        let handler = match expected {
            Some(times) => handler.expect(times),
            None => handler,
        };
        handlers.push(behaviour.apply(handler, path.as_deref()).map_err(fail)?);
    }
    Ok((handlers, files))
}

impl ResourceFields {
    /// The handler of a `resource` entry: a collection answering by itself.
    fn into_handler(self, dir: &Path, files: &mut Vec<Watched>) -> Result<Handler, String> {
        tolerated(Kind::Resource, &self.headers, self.once, self.template)?;
        let handler = resource_entry::handler(
            ResourceEntry {
                path: self.resource,
                id_field: self.id_field,
                seed: self.seed,
                seed_file: self.seed_file,
            },
            dir,
            files,
        )?;
        let conditions = self.conditions.unwrap_or_default().matchers()?;
        Ok(conditions.into_iter().fold(handler, Handler::when))
    }
}

impl GrpcFields {
    /// The handler of a `grpc` entry (its replies are not templated).
    fn into_handler(self, pool: Option<&DescriptorPool>) -> Result<Handler, String> {
        tolerated(Kind::Grpc, &self.headers, self.once, self.template)?;
        grpc_entry::handler(
            pool,
            GrpcEntry {
                method: self.grpc,
                json: self.json,
                status: self.status,
                message: self.message,
                delay_ms: self.delay_ms,
            },
        )
    }
}

impl CallbackFields {
    /// The handler of a `callback` entry: its function answers, over the
    /// channel of the scope each request is resolved in.
    fn into_handler(self, callbacks: &Callbacks) -> Result<Handler, String> {
        tolerated(Kind::Callback, &self.headers, false, self.template)?;
        let (method, _) = method_and_path(self.method.as_deref(), Some(String::new()))?;
        let handler = callback_entry::handler(
            CallbackEntry {
                method,
                path: self.path.unwrap_or_else(|| "*".to_owned()),
                callback: self.callback,
                timeout_ms: self.timeout_ms,
            },
            callbacks,
        )?;
        let conditions = self.conditions.unwrap_or_default().matchers()?;
        let handler = conditions.into_iter().fold(handler, Handler::when);
        Ok(if self.once { handler.once() } else { handler })
    }
}

/// Fields of HTTP entries that another kind tolerates only empty or
/// `false` (as the schema does): given otherwise, what to say of them.
fn tolerated(
    kind: Kind,
    headers: &BTreeMap<String, String>,
    once: bool,
    template: bool,
) -> Result<(), String> {
    let given = [
        ("headers", !headers.is_empty()),
        ("once", once),
        ("template", template),
    ];
    match given.iter().find(|(_, given)| *given) {
        Some((field, _)) => Err(kind
            .misplaced(field)
            .unwrap_or_else(|| format!("`{field}` does not go on this entry"))),
        None => Ok(()),
    }
}

impl SequenceEntry {
    /// The handler of an entry answering in turn.
    fn into_handler(self, dir: &Path, files: &mut Vec<Watched>) -> Result<Handler, String> {
        let (method, path) = method_and_path(self.method.as_deref(), self.path)?;
        tolerated(Kind::Sequence, &self.headers, false, self.template)?;
        if self.sequence.is_empty() {
            return Err("sequence: give at least one answer".to_owned());
        }
        let answers = self
            .sequence
            .into_iter()
            .enumerate()
            .map(|(index, answer)| {
                answer
                    .canned(dir, files)
                    .map_err(|error| format!("sequence[{index}]: {error}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let conditions = self.conditions.unwrap_or_default().matchers()?;
        let handler = sequence_handler(method, path, answers, self.once)?;
        Ok(conditions.into_iter().fold(handler, Handler::when))
    }
}

impl HttpEntry {
    /// The handler of an HTTP entry with one answer.
    fn into_handler(self, dir: &Path, files: &mut Vec<Watched>) -> Result<Handler, String> {
        let (method, path) = method_and_path(self.method.as_deref(), self.path)?;
        let mut templates = self.template.then(crate::template::Templates::new);
        let status = match self.status {
            None => 200,
            // A templated status, rendered and parsed per request.
            Some(serde_json::Value::String(source)) if templates.is_some() => {
                let templates = templates.as_mut().expect("checked above");
                templates.add("status".to_owned(), source)?;
                200
            }
            Some(value) => {
                serde_json::from_value::<u16>(value).map_err(|error| format!("status: {error}"))?
            }
        };
        if let Some(templates) = templates.as_mut() {
            if let Some(text) = &self.body {
                templates.add("body".to_owned(), text.clone())?;
            }
            if let Some(json) = &self.json {
                crate::template::add_json(templates, json, "json")?;
            }
            if self.body_file.is_some() {
                return Err(
                    "template: a body_file is sent as it is; template a body or json".to_owned(),
                );
            }
            for (name, value) in &self.headers {
                templates.add(format!("headers.{name}"), value.clone())?;
            }
        }
        let json_source = self.json.clone();
        StatusCode::from_u16(status).map_err(|_| format!("status: invalid status {status}"))?;
        let (body, content_type) = body_of(self.body, self.json, self.body_file, dir, files)?;
        check_headers(&self.headers)?;
        let canned = Canned::new(status, body, content_type, self.headers, self.delay_ms)?;
        let templates = templates.map(std::sync::Arc::new);
        let respond = move |args: mocklib::ResolverArgs| {
            let response = match &templates {
                None => canned.response(),
                Some(templates) => canned.typed(
                    templated(templates, &args, &canned, json_source.as_ref())
                        .unwrap_or_else(|why| crate::template::failed(&why)),
                ),
            };
            // Without a delay the answer is there at once: no future.
            match canned.delay_ms {
                None => mocklib::resolver::ResolverCall::new(response),
                Some(milliseconds) => mocklib::resolver::ResolverCall::new(async move {
                    mocklib::delay(milliseconds).await;
                    response
                }),
            }
        };
        let conditions = self.conditions.unwrap_or_default().matchers()?;
        let handler = http_handler(method, path, respond)?;
        let handler = conditions.into_iter().fold(handler, Handler::when);
        Ok(if self.once { handler.once() } else { handler })
    }
}

/// A templated entry's response for one request: each template rendered
/// (`body`, `json`'s strings, header values, `status`), or which failed and
/// why.
fn templated(
    templates: &crate::template::Templates,
    args: &mocklib::ResolverArgs,
    canned: &Canned,
    json: Option<&serde_json::Value>,
) -> Result<HttpResponse, String> {
    let (status, body, headers) = (canned.status, &canned.body, &canned.headers);
    let context = crate::template::context(args);
    let body = match json {
        Some(json) => {
            let rendered = crate::template::render_json(templates, json, "json", &context)?;
            Bytes::from(serde_json::to_vec(&rendered).expect("a JSON value serializes"))
        }
        None if body.is_empty() => Bytes::new(),
        None => Bytes::from(templates.render("body", &context)?),
    };
    let status = match templates.render("status", &context) {
        Ok(text) => text.trim().parse::<u16>().map_err(|_| {
            format!("the template of status rendered {text:?}, not a status number")
        })?,
        Err(why) if templates.has("status") => return Err(why),
        // No status template: the entry's own status.
        Err(_) => status,
    };
    let mut response = HttpResponse::new(body).status(status);
    for name in headers.keys() {
        let value = templates.render(&format!("headers.{name}"), &context)?;
        response = response.header(name, value);
    }
    Ok(response)
}

/// The content type of a body file by its extension: the common ones, and
/// bytes otherwise (a `content-type` header in the entry overrides it).
fn content_type_of(file: &Path) -> Option<&'static str> {
    let extension = file.extension()?.to_str()?.to_ascii_lowercase();
    Some(match extension.as_str() {
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "txt" => "text/plain",
        "xml" => "text/xml",
        "csv" => "text/csv",
        "js" => "text/javascript",
        "css" => "text/css",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    })
}

#[cfg(test)]
mod tests {
    //! Hostile handler files (issue 27, part 2): any document loads or is
    //! an error naming the file, never a panic; seeded and bounded, longer
    //! with `MOCKLIB_PROPTEST_CASES` (docs/RELIABILITY.md).
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};

    fn env_number(name: &str) -> Option<u64> {
        std::env::var(name).ok()?.parse().ok()
    }

    /// Any JSON value, shallow.
    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            (-1e9..1e9f64).prop_map(serde_json::Value::from),
            "\\PC{0,12}".prop_map(serde_json::Value::from),
            prop::sample::select(vec![
                "/users/:id",
                "GET",
                "{{ request.params.id }}",
                "{{ unclosed",
                "$.a[0]",
                "$.a[x",
                "(",
                "^ok$",
                "NOT_FOUND",
                "999",
                "a.b/C",
                "seed.json",
                "query GetUser",
                "mutation /^Delete/",
                "operation",
                "connection_reset",
                "malformed_chunk",
                "https://api.example.com/x",
                "{{ response.body }}",
            ])
            .prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map(key(), inner, 0..4)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    /// The format's own keys mostly, and a few others.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            9 => prop::sample::select(vec![
                "method", "path", "grpc", "status", "message", "headers", "body", "json",
                "body_file", "delay_ms", "match", "template", "sequence", "once", "resource",
                "id_field", "seed", "seed_file", "query", "cookies", "form", "json_path",
                "headers_matching", "headers_absent", "body_contains", "bearer", "basic",
                "user", "password", "id", "callback", "timeout_ms",
                // The newer kinds and their fields.
                "graphql", "endpoint", "data", "errors", "variables", "fault",
                "truncate_after", "dribble_ms", "passthrough", "proxy", "json_patch", "sse",
                "events", "event", "retry", "pause_ms", "repeat", "ws", "on_open",
                "on_message", "send", "close", "code", "reason", "text", "regex",
            ])
            .prop_map(str::to_owned),
            1 => "[a-z_]{1,8}",
        ]
    }

    fn entry() -> impl Strategy<Value = serde_json::Value> {
        prop::collection::btree_map(key(), value(), 0..6)
            .prop_map(|map| serde_json::Value::Object(map.into_iter().collect()))
    }

    #[test]
    fn an_error_message_s_leading_fields_make_its_pointer() {
        assert_eq!(
            field_pointer("sequence[0]: status: invalid status 99"),
            "/sequence/0/status"
        );
        assert_eq!(
            field_pointer("headers.x-api: invalid value"),
            "/headers/x-api"
        );
        assert_eq!(
            field_pointer("give one of body, json and body_file, not several"),
            ""
        );
        assert_eq!(
            field_pointer("times: at_least 3 is above at_most 1"),
            "/times"
        );
    }

    #[test]
    fn any_handler_file_loads_or_fails_naming_the_file() {
        let config = Config {
            cases: env_number("MOCKLIB_PROPTEST_CASES").map_or(2_048, |n| n as u32),
            rng_algorithm: RngAlgorithm::ChaCha,
            rng_seed: RngSeed::Fixed(env_number("MOCKLIB_PROPTEST_SEED").unwrap_or(27)),
            failure_persistence: None,
            max_shrink_iters: 64,
            ..Config::default()
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("seed.json"), r#"[{"id": 1}]"#).unwrap();
        let callbacks = Callbacks::new(mocklib::setup_server([]));
        let (loaded, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        let document = prop_oneof![
            4 => prop::collection::vec(entry(), 0..4).prop_map(|entries| (true, serde_json::Value::from(entries).to_string())),
            1 => value().prop_map(|value| (true, value.to_string())),
            1 => "\\PC{0,64}".prop_map(|text| (false, text)),
        ];
        TestRunner::new(config)
            .run(&document, |(json, text)| {
                let name = if json {
                    "handlers.json"
                } else {
                    "handlers.yaml"
                };
                let path = dir.path().join(name);
                std::fs::write(&path, &text).unwrap();
                match load(&path, None, &callbacks) {
                    Ok(_) => loaded.set(loaded.get() + 1),
                    Err(error) => {
                        refused.set(refused.get() + 1);
                        prop_assert!(
                            error.contains(name),
                            "the error does not name the file: {error}"
                        );
                    }
                }
                Ok(())
            })
            .unwrap();
        // The cases reached both outcomes.
        let (loaded, refused) = (loaded.get(), refused.get());
        assert!(
            loaded > 0 && refused > 0,
            "loaded {loaded}, refused {refused}"
        );
    }
}
