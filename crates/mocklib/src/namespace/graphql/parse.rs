//! From an intercepted [`Request`] to the GraphQL operation(s) it carries.
//!
//! Done at most once per request: the lookup caches the result in its
//! `MatchContext`, and every GraphQL handler it tries reads that one result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http::Method;
use serde_json::{Map, Value};

use super::batch::BatchState;
use super::operation::GRAPHQL_RESPONSE_JSON;
use super::{OperationInfo, Upload};
use crate::message::form_data::{FormData, FormValue};
use crate::message::request::Request;

/// The GraphQL content of one request: one operation, or a batch.
pub(crate) struct ParsedGraphql {
    /// The operations in request order (exactly one unless a batch).
    pub operations: Vec<Arc<OperationInfo>>,
    /// `Some` for a batched request (a JSON array of operations).
    pub batch: Option<BatchState>,
    /// Whether the `Accept` header prefers `application/graphql-response+json`.
    pub prefers_graphql_response: bool,
    /// Whether the "anonymous operation" warning was printed for this request.
    anonymous_warned: AtomicBool,
    /// `METHOD url`, for messages.
    pub request_line: String,
}

impl ParsedGraphql {
    /// Prints the "named handlers skip anonymous operations" warning, at most
    /// once per request however many handlers skip it.
    pub(crate) fn warn_anonymous(&self, operation: &OperationInfo) {
        if self.anonymous_warned.swap(true, Ordering::Relaxed) {
            return;
        }
        crate::support::log::warn(&format!(
            "intercepted an anonymous GraphQL {} at {}. Handlers for named operations \
             (graphql::query, graphql::mutation) skip anonymous operations: name the \
             operation (`{} GetUser {{ … }}`) or answer it with graphql::operation().",
            operation.operation_type(),
            self.request_line,
            operation.operation_type(),
        ));
    }
}

/// One operation as the request sent it, before its document is parsed.
struct Payload {
    query: String,
    variables: Value,
    operation_name: Option<String>,
}

/// Why a request carries no usable GraphQL operation.
enum NotGraphql {
    /// Nothing about it looks like GraphQL: say nothing.
    Silent,
    /// It looks like GraphQL but breaks the rules: say why, once.
    Invalid(String),
}

impl From<String> for NotGraphql {
    fn from(reason: String) -> Self {
        NotGraphql::Invalid(reason)
    }
}

/// Reads and parses the GraphQL operation(s) of `request`; `None` when it is
/// not a GraphQL request. Prints why when it looks like one but is not valid
/// (a document that does not parse, `variables` that are not an object, …).
/// What a request is, GraphQL-wise. Parsing prints nothing: the warning for
/// an invalid document is printed by the first GraphQL handler that looks at
/// it ([`ParseOutcome::graphql`]), as if each handler parsed it itself, so the
/// handler index may parse early without changing what is printed.
pub(crate) enum ParseOutcome {
    /// A GraphQL request.
    Graphql(Arc<ParsedGraphql>),
    /// Not GraphQL at all (not JSON, no `query`, …): nothing to say.
    NotGraphql,
    /// Looks like GraphQL but is not valid; say so once.
    Invalid { warning: String, warned: AtomicBool },
}

impl ParseOutcome {
    /// The parsed request for a handler, printing the invalid-document
    /// warning the first time a handler asks.
    pub(super) fn graphql(&self) -> Option<&Arc<ParsedGraphql>> {
        match self {
            ParseOutcome::Graphql(parsed) => Some(parsed),
            ParseOutcome::NotGraphql => None,
            ParseOutcome::Invalid { warning, warned } => {
                if !warned.swap(true, Ordering::Relaxed) {
                    crate::support::log::warn(warning);
                }
                None
            }
        }
    }
}

pub(crate) fn parse_request(request: &Request) -> ParseOutcome {
    let request_line = format!("{} {}", request.method(), request.url());
    match read_request(request) {
        Ok((operations, is_batch)) => ParseOutcome::Graphql(Arc::new(ParsedGraphql {
            batch: is_batch.then(|| BatchState::new(&operations, request_line.clone())),
            operations,
            prefers_graphql_response: prefers_graphql_response(request.headers()),
            anonymous_warned: AtomicBool::new(false),
            request_line,
        })),
        Err(None) => ParseOutcome::NotGraphql,
        Err(Some(reason)) => ParseOutcome::Invalid {
            warning: format!(
                "{request_line} looks like a GraphQL request, but {reason}. It is not treated \
                 as GraphQL: http handlers may still answer it, or it is unhandled."
            ),
            warned: AtomicBool::new(false),
        },
    }
}

/// The operation(s) of `request` and whether it is a batch; `Err(None)`
/// when it is not GraphQL at all, `Err(Some(reason))` when it looks like
/// GraphQL but breaks the rules (`its document does not parse: …`).
pub(crate) fn read_request(
    request: &Request,
) -> Result<(Vec<Arc<OperationInfo>>, bool), Option<String>> {
    let payloads = extract(request).map_err(|error| match error {
        NotGraphql::Silent => None,
        NotGraphql::Invalid(reason) => Some(reason),
    })?;
    let is_batch = payloads.is_batch;
    let operations = payloads
        .items
        .into_iter()
        .enumerate()
        .map(|(index, payload)| {
            select_operation(payload).map_err(|reason| {
                if is_batch {
                    format!("operation #{index} of the batch: {reason}")
                } else {
                    reason
                }
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(Some)?;
    Ok((operations, is_batch))
}

struct Payloads {
    items: Vec<Payload>,
    is_batch: bool,
}

fn extract(request: &Request) -> Result<Payloads, NotGraphql> {
    if request.method() == Method::GET {
        return from_query_string(request).map(|payload| Payloads {
            items: vec![payload],
            is_batch: false,
        });
    }
    if request.method() != Method::POST {
        return Err(NotGraphql::Silent);
    }
    let content_type = request.header("content-type").unwrap_or_default();
    let operations = if crate::message::form_data::media_type(content_type) == "multipart/form-data"
    {
        from_multipart(content_type, request.body())?
    } else {
        // Any other content type: a JSON body is read as GraphQL (clients
        // differ in what they declare). Cheap rejection of everything else.
        let body = request.body().trim_ascii_start();
        if !matches!(body.first(), Some(b'{' | b'[')) {
            return Err(NotGraphql::Silent);
        }
        serde_json::from_slice::<Value>(body).map_err(|_| NotGraphql::Silent)?
    };
    from_json(operations)
}

/// `{ query, variables, operationName }` or an array of them.
fn from_json(value: Value) -> Result<Payloads, NotGraphql> {
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(NotGraphql::Silent);
            }
            let mut payloads = Vec::with_capacity(items.len());
            let mut first_error = None;
            for (index, item) in items.into_iter().enumerate() {
                match payload_from_json(item) {
                    Ok(payload) => payloads.push(payload),
                    Err(NotGraphql::Silent) => {
                        first_error.get_or_insert_with(|| {
                            format!("element #{index} of the batch is not a GraphQL operation")
                        });
                    }
                    Err(NotGraphql::Invalid(reason)) => {
                        return Err(format!("in element #{index} of the batch, {reason}").into());
                    }
                }
            }
            if payloads.is_empty() {
                // An array of something else entirely.
                return Err(NotGraphql::Silent);
            }
            if let Some(error) = first_error {
                return Err(error.into());
            }
            Ok(Payloads {
                items: payloads,
                is_batch: true,
            })
        }
        other => payload_from_json(other).map(|payload| Payloads {
            items: vec![payload],
            is_batch: false,
        }),
    }
}

fn payload_from_json(value: Value) -> Result<Payload, NotGraphql> {
    let Value::Object(mut object) = value else {
        return Err(NotGraphql::Silent);
    };
    let query = match object.remove("query") {
        Some(Value::String(query)) => query,
        Some(other) => {
            return Err(format!("its \"query\" is {}, not a string", kind_of(&other)).into());
        }
        None if object.contains_key("operationName") => {
            return Err("it has an \"operationName\" but no \"query\" \
                        (persisted queries are not supported)"
                .to_owned()
                .into());
        }
        None => return Err(NotGraphql::Silent),
    };
    let variables = match object.remove("variables") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(variables)) => Value::Object(variables),
        Some(other) => {
            return Err(format!("its \"variables\" is {}, not an object", kind_of(&other)).into());
        }
    };
    let operation_name = match object.remove("operationName") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name),
        Some(other) => {
            return Err(
                format!("its \"operationName\" is {}, not a string", kind_of(&other)).into(),
            );
        }
    };
    Ok(Payload {
        query,
        variables,
        operation_name,
    })
}

/// `text` as a JSON object; otherwise a reason naming `what` it is.
fn json_object(text: &str, what: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!("{what} is {}, not a JSON object", kind_of(&other))),
        Err(error) => Err(format!("{what} is not JSON: {error}")),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `GET …?query=…&variables=…&operationName=…` (GraphQL over HTTP).
fn from_query_string(request: &Request) -> Result<Payload, NotGraphql> {
    let (mut query, mut variables, mut operation_name) = (None, None, None);
    for (key, value) in request.url().query_pairs() {
        match &*key {
            "query" => query = Some(value.into_owned()),
            "variables" => variables = Some(value.into_owned()),
            "operationName" => operation_name = Some(value.into_owned()),
            _ => {}
        }
    }
    let Some(query) = query else {
        return Err(NotGraphql::Silent);
    };
    let variables = match variables.as_deref().map(str::trim) {
        None | Some("" | "null") => Value::Object(Map::new()),
        Some(text) => Value::Object(json_object(text, "its \"variables\" parameter")?),
    };
    Ok(Payload {
        query,
        variables,
        operation_name: operation_name.filter(|name| !name.is_empty()),
    })
}

/// The GraphQL multipart request spec: an `operations` field (the JSON
/// operation or batch with `null` where files go), a `map` field
/// (`{ "<file field>": ["variables.file", "0.variables.files.1"] }`), then
/// the files. Each file is substituted by its [`Upload`] description.
fn from_multipart(content_type: &str, body: &[u8]) -> Result<Value, NotGraphql> {
    // A multipart body that does not parse is nobody's GraphQL request.
    let form = FormData::parse(content_type, body).map_err(|_| NotGraphql::Silent)?;
    let Some(operations) = form.get_value("operations") else {
        return Err(NotGraphql::Silent);
    };
    let Some(operations) = form_text(operations) else {
        return Err("its multipart \"operations\" field is not text"
            .to_owned()
            .into());
    };
    let mut operations: Value = serde_json::from_str(&operations)
        .map_err(|error| format!("its multipart \"operations\" field is not JSON: {error}"))?;
    let map = match form.get_value("map") {
        None => Map::new(),
        Some(map) => {
            let text = form_text(map)
                .ok_or_else(|| "its multipart \"map\" field is not text".to_owned())?;
            json_object(&text, "its multipart \"map\" field")?
        }
    };
    for (field, paths) in map {
        let Value::Array(paths) = paths else {
            return Err(
                format!("its multipart \"map\" entry {field:?} is not an array of paths").into(),
            );
        };
        let file = form.get_value(&field).ok_or_else(|| {
            format!("its multipart \"map\" names the file field {field:?}, which the body lacks")
        })?;
        let description = serde_json::to_value(Upload::from_form_value(file))
            .expect("an upload description always serializes");
        for path in paths {
            let Value::String(path) = path else {
                return Err(format!(
                    "its multipart \"map\" entry {field:?} holds a path that is not a string"
                )
                .into());
            };
            let slot = object_path(&mut operations, &path).ok_or_else(|| {
                format!(
                    "its multipart \"map\" path {path:?} (for {field:?}) is not in \"operations\""
                )
            })?;
            *slot = description.clone();
        }
    }
    Ok(operations)
}

fn form_text(value: &FormValue) -> Option<String> {
    match value {
        FormValue::Text(text) => Some(text.clone()),
        // Some clients send the JSON fields with a content type, as "files".
        FormValue::File { data, .. } => String::from_utf8(data.to_vec()).ok(),
    }
}

/// The value at an object path such as `variables.files.0` or
/// `1.variables.file`; it must already exist (as the multipart spec's `null`).
fn object_path<'a>(root: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut current = root;
    for segment in path.split('.') {
        current = match current {
            Value::Object(object) => object.get_mut(segment)?,
            Value::Array(array) => array.get_mut(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

impl Upload {
    fn from_form_value(value: &FormValue) -> Self {
        match value {
            FormValue::Text(text) => Upload {
                name: String::new(),
                content_type: String::new(),
                size: text.len() as u64,
                text: Some(text.clone()),
            },
            FormValue::File {
                filename,
                content_type,
                data,
            } => Upload {
                name: filename.clone().unwrap_or_default(),
                content_type: content_type.clone().unwrap_or_default(),
                size: data.len() as u64,
                text: std::str::from_utf8(data).ok().map(str::to_owned),
            },
        }
    }
}

/// Parses the document and picks the operation to run.
fn select_operation(payload: Payload) -> Result<Arc<OperationInfo>, String> {
    let operations = super::document::operations(&payload.query)
        .map_err(|error| format!("its document does not parse: {error}"))?;
    let mut operations = operations.into_iter();
    let (operation_type, name) = match &payload.operation_name {
        Some(wanted) => operations
            .find(|(_, name)| *name == Some(wanted.as_str()))
            .ok_or_else(|| {
                format!("its document has no operation named {wanted:?} (its \"operationName\")")
            })?,
        None => {
            let first = operations
                .next()
                .ok_or_else(|| "its document has no operation".to_owned())?;
            if operations.next().is_some() {
                return Err(
                    "its document has several operations and no \"operationName\" \
                            to choose one"
                        .to_owned(),
                );
            }
            first
        }
    };
    let operation_name = name.map(str::to_owned);
    drop(operations);
    Ok(Arc::new(OperationInfo {
        operation_type,
        operation_name,
        query: payload.query,
        variables: payload.variables,
    }))
}

/// Whether `Accept` ranks `application/graphql-response+json` above
/// `application/json`: by quality, then by how specific the matching range
/// is, then by which is listed first. No `Accept` header: no.
pub(crate) fn prefers_graphql_response(headers: &http::HeaderMap) -> bool {
    // (quality in thousandths, specificity, position) of the best range.
    type Rank = (u16, u8, usize);
    fn rank_of(ranges: &[(String, u16)], mime: &str) -> Option<Rank> {
        let (kind, _) = mime.split_once('/')?;
        ranges
            .iter()
            .enumerate()
            .filter_map(|(position, (range, quality))| {
                let specificity = if range == mime {
                    2
                } else if range.strip_suffix("/*") == Some(kind) {
                    1
                } else if range == "*/*" {
                    0
                } else {
                    return None;
                };
                Some((*quality, specificity, position))
            })
            // The most specific range decides the quality.
            .max_by_key(|(_, specificity, position)| (*specificity, usize::MAX - position))
    }
    let mut ranges = Vec::new();
    for value in headers.get_all(http::header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let mime = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            if mime.is_empty() {
                continue;
            }
            let quality = parts
                .filter_map(|param| param.split_once('='))
                .find(|(key, _)| key.trim().eq_ignore_ascii_case("q"))
                .and_then(|(_, q)| q.trim().parse::<f32>().ok())
                .map_or(1000, |q| (q.clamp(0.0, 1.0) * 1000.0).round() as u16);
            ranges.push((mime, quality));
        }
    }
    let Some(graphql) = rank_of(&ranges, GRAPHQL_RESPONSE_JSON) else {
        return false;
    };
    if graphql.0 == 0 {
        return false;
    }
    let Some(json) = rank_of(&ranges, "application/json") else {
        return true;
    };
    (graphql.0, graphql.1, usize::MAX - graphql.2) > (json.0, json.1, usize::MAX - json.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::graphql::OperationType;

    /// The parse as the old `Option`: `Some` only for GraphQL (prints the
    /// invalid-document warning, as a handler looking at it would).
    fn parse_graphql(request: &Request) -> Option<Arc<ParsedGraphql>> {
        parse_request(request).graphql().cloned()
    }
    use bytes::Bytes;
    use http::HeaderMap;
    use serde_json::json;
    use url::Url;

    fn post(body: &str, content_type: &str) -> Request {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", content_type.parse().unwrap());
        Request::from_parts(
            Method::POST,
            Url::parse("https://api.example.com/graphql").unwrap(),
            headers,
            Bytes::from(body.to_owned()),
        )
    }

    fn accept(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert("accept", value.parse().unwrap());
        prefers_graphql_response(&headers)
    }

    #[test]
    fn accept_preferences() {
        assert!(!prefers_graphql_response(&HeaderMap::new()));
        assert!(accept("application/graphql-response+json"));
        assert!(accept(
            "application/graphql-response+json, application/json;q=0.9"
        ));
        assert!(accept(
            "application/graphql-response+json, application/json"
        ));
        assert!(!accept(
            "application/json, application/graphql-response+json"
        ));
        assert!(!accept(
            "application/json, application/graphql-response+json;q=0.5"
        ));
        assert!(!accept("*/*"));
        assert!(!accept("application/json"));
        assert!(accept("application/graphql-response+json, */*"));
        assert!(!accept("application/graphql-response+json;q=0, */*"));
    }

    #[test]
    fn a_json_post_with_one_named_operation() {
        let parsed = parse_graphql(&post(
            r#"{"query":"query GetUser($id: ID!) { user(id: $id) { id } }","variables":{"id":"1"}}"#,
            "application/json",
        ))
        .unwrap();
        let operation = &parsed.operations[0];
        assert_eq!(operation.operation_name(), Some("GetUser"));
        assert_eq!(operation.operation_type(), OperationType::Query);
        assert_eq!(operation.variables(), &json!({ "id": "1" }));
        assert!(parsed.batch.is_none());
    }

    #[test]
    fn operation_name_narrows_a_document() {
        let body = json!({
            "query": "query A { a } mutation B { b }",
            "operationName": "B",
        });
        let parsed = parse_graphql(&post(&body.to_string(), "application/json")).unwrap();
        assert_eq!(parsed.operations[0].operation_name(), Some("B"));
        assert_eq!(
            parsed.operations[0].operation_type(),
            OperationType::Mutation
        );
        // Several operations and no name: not GraphQL.
        let body = json!({ "query": "query A { a } mutation B { b }" });
        assert!(parse_graphql(&post(&body.to_string(), "application/json")).is_none());
        let body = json!({ "query": "query A { a }", "operationName": "Nope" });
        assert!(parse_graphql(&post(&body.to_string(), "application/json")).is_none());
    }

    #[test]
    fn bad_input_is_not_graphql() {
        for body in [
            "not json",
            "{broken",
            r#"{"variables":{}}"#,
            r#"{"query":"{ a }","variables":[1]}"#,
            r#"{"query":"{ a }","variables":"{}"}"#,
            r#"{"query":42}"#,
            r#"{"query":"{ a }","operationName":7}"#,
            r#"{"query":"query {"}"#,
            "[]",
            "[1, 2]",
            r#"[{"query":"{ a }"}, 1]"#,
            "",
        ] {
            assert!(
                parse_graphql(&post(body, "application/json")).is_none(),
                "{body}"
            );
        }
    }

    #[test]
    fn multipart_files_become_upload_descriptions() {
        let form = FormData::new()
            .text(
                "operations",
                r#"{"query":"mutation Upload($file: Upload!) { upload(file: $file) }","variables":{"file":null}}"#,
            )
            .text("map", r#"{"0":["variables.file"]}"#)
            .file("0", "a.txt", "text/plain", &b"hello"[..]);
        let body = form.to_multipart("b0undary");
        let request = Request::from_parts(
            Method::POST,
            Url::parse("https://api.example.com/graphql").unwrap(),
            {
                let mut headers = HeaderMap::new();
                headers.insert(
                    "content-type",
                    "multipart/form-data; boundary=b0undary".parse().unwrap(),
                );
                headers
            },
            body,
        );
        let parsed = parse_graphql(&request).unwrap();
        assert_eq!(
            parsed.operations[0].variables()["file"],
            json!({ "name": "a.txt", "type": "text/plain", "size": 5, "text": "hello" })
        );
    }

    #[test]
    fn object_paths() {
        let mut value = json!([{ "variables": { "files": [null, null] } }]);
        *object_path(&mut value, "0.variables.files.1").unwrap() = json!(1);
        assert_eq!(value[0]["variables"]["files"][1], json!(1));
        assert!(object_path(&mut value, "0.variables.nope").is_none());
        assert!(object_path(&mut value, "x").is_none());
    }
}
