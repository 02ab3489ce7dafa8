//! Request validation against an operation's parameters and request body.

use std::borrow::Cow;
use std::sync::Arc;

use jsonschema::{Draft, Registry, Validator};
use serde_json::{Value as Json, json};
use serde_norway::Value;
use smallvec::SmallVec;

use super::OpenApiError;
use super::document::{Document, child, entries};
use super::generate::type_of;
use crate::handling::contract::Finding;
use crate::handling::resolver::ResolverArgs;

/// The URI the document is registered under, so that each schema's
/// validator refers into it (`$ref`s inside resolve there too).
const DOCUMENT_URI: &str = "urn:mocklib:openapi";

/// One validation failure: where (`query.limit`, `body.name`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) location: String,
    pub(crate) message: String,
}

impl Failure {
    fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        Failure {
            location: location.into(),
            message: message.into(),
        }
    }

    /// The failure as a contract finding, at `/request/` and the
    /// location's parts (`query.limit`: `/request/query/limit`): how
    /// [`OpenApiContract`](super::OpenApiContract) and a document that
    /// reports invalid requests both name it.
    pub(crate) fn finding(&self) -> Finding {
        Finding::new(
            format!("/request/{}", self.location.replace('.', "/")),
            "what the operation documents",
            self.message.clone(),
        )
    }
}

/// The 400 answer listing every failure.
pub(crate) fn failures_body(failures: &[Failure]) -> Json {
    let errors: Vec<Json> = failures
        .iter()
        .map(|failure| json!({ "location": failure.location, "message": failure.message }))
        .collect();
    json!({ "errors": errors })
}

/// Compiles validators for the schemas of one document.
pub(crate) struct Compiler {
    registry: Registry<'static>,
    draft: Draft,
}

impl Compiler {
    pub(crate) fn new(doc: &Document) -> Result<Self, OpenApiError> {
        // OpenAPI 3.0 schemas are draft 4's dialect (boolean
        // `exclusiveMinimum`), 3.1 ones JSON Schema 2020-12.
        let draft = if doc.is_3_1 {
            Draft::Draft202012
        } else {
            Draft::Draft4
        };
        let registry = Registry::new()
            .draft(draft)
            .add(DOCUMENT_URI, doc.to_json())
            .and_then(|builder| builder.prepare())
            .map_err(|error| doc.invalid("", format!("the schemas cannot be compiled: {error}")))?;
        Ok(Compiler { registry, draft })
    }

    /// The validator of the schema at `pointer`.
    pub(crate) fn compile(&self, doc: &Document, pointer: &str) -> Result<Validator, OpenApiError> {
        let fragment: String = pointer
            .split('/')
            .map(|segment| percent_encoding::utf8_percent_encode(segment, FRAGMENT).to_string())
            .collect::<Vec<_>>()
            .join("/");
        jsonschema::options()
            .with_draft(self.draft)
            .with_registry(&self.registry)
            .offline()
            .build(&json!({ "$ref": format!("{DOCUMENT_URI}#{fragment}") }))
            .map_err(|error| doc.invalid(pointer, format!("invalid schema: {error}")))
    }
}

/// What a URI fragment must escape besides controls.
const FRAGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'%');

/// Where a parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum In {
    Path,
    Query,
    Header,
    Cookie,
}

impl In {
    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "path" => In::Path,
            "query" => In::Query,
            "header" => In::Header,
            "cookie" => In::Cookie,
            _ => return None,
        })
    }

    fn label(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
            In::Header => "header",
            In::Cookie => "cookie",
        }
    }
}

/// A declared parameter, checked on each request.
struct ParamCheck {
    place: In,
    /// As documented.
    name: String,
    /// The name in mocklib's path pattern (path parameters only).
    pattern_name: String,
    required: bool,
    /// The schema's type and, for arrays, its items' type, to read the
    /// parameter's text as a JSON value before validating it.
    kind: Option<String>,
    item_kind: Option<String>,
    /// Whether the schema is `type` alone (an id's `{type: integer}`):
    /// a value read as that type is valid without the validator.
    bare: bool,
    validator: Option<Validator>,
}

/// The request body's declaration.
struct BodyCheck {
    required: bool,
    /// Documented media types, each with the validator of its schema.
    media: Vec<(String, Option<Validator>)>,
}

/// What a request's check reads.
pub(crate) struct Inputs<'a> {
    pub(crate) request: &'a crate::message::request::Request,
    pub(crate) params: &'a crate::message::params::Params,
    pub(crate) cookies: &'a crate::message::cookies::Cookies,
}

/// Everything one operation checks on a request.
pub(crate) struct RequestCheck {
    params: Vec<ParamCheck>,
    body: Option<BodyCheck>,
}

/// A documented parameter (path-level ones overridden by the operation's).
#[derive(Clone)]
pub(crate) struct Param<'a> {
    pub(crate) value: &'a Value,
    pub(crate) pointer: String,
    pub(crate) place: &'a str,
    pub(crate) name: String,
}

impl RequestCheck {
    pub(crate) fn new(
        doc: &Document,
        compiler: &Compiler,
        params: &[Param<'_>],
        operation: &Value,
        operation_pointer: &str,
        pattern_name: impl Fn(&str) -> String,
    ) -> Result<Arc<Self>, OpenApiError> {
        let mut checks = Vec::new();
        for param in params {
            if let Some(check) = param_check(doc, compiler, param, &pattern_name)? {
                checks.push(check);
            }
        }
        let body = body_check(doc, compiler, operation, operation_pointer)?;
        Ok(Arc::new(RequestCheck {
            params: checks,
            body,
        }))
    }

    /// Every way the request differs from the declaration.
    pub(crate) fn check(&self, args: &ResolverArgs) -> Vec<Failure> {
        self.check_inputs(&Inputs {
            request: &args.request,
            params: &args.params,
            cookies: &args.cookies,
        })
    }

    /// Whether a check reads the request's cookies (a cookie parameter):
    /// callers without them parsed need not parse them otherwise.
    pub(crate) fn reads_cookies(&self) -> bool {
        self.params.iter().any(|param| param.place == In::Cookie)
    }

    /// [`check`](Self::check) of what a request's check reads, for callers
    /// with no resolver arguments (a contract).
    pub(crate) fn check_inputs(&self, args: &Inputs<'_>) -> Vec<Failure> {
        let mut failures = Vec::new();
        for param in &self.params {
            // Written only for a failure: most requests have none.
            let location = || format!("{}.{}", param.place.label(), param.name);
            let values = param_values(param, args);
            if values.is_empty() {
                if param.required {
                    failures.push(Failure::new(
                        location(),
                        format!("the required {} parameter is missing", param.place.label()),
                    ));
                }
                continue;
            }
            let Some(validator) = &param.validator else {
                continue;
            };
            // A bare type (an id's `{type: integer}`) valid without a
            // value built or the validator's code run: what `typed` would
            // read the text as is all it asks.
            if param.bare && reads_as(&values[0], param.kind.as_deref()) {
                continue;
            }
            let value = param_value(param, &values);
            // The common case, valid, without building errors.
            if validator.is_valid(&value) {
                continue;
            }
            for error in validator.iter_errors(&value) {
                failures.push(Failure::new(location(), error.to_string()));
            }
        }
        if let Some(body) = &self.body {
            check_body(body, args, &mut failures);
        }
        failures
    }
}

/// Whether [`typed`] reads `text` as a value of the JSON Schema type
/// `kind`; `false` for the types it does not read (`array`, `object`:
/// the validator decides).
fn reads_as(text: &str, kind: Option<&str>) -> bool {
    match kind {
        Some("integer") => text.parse::<i64>().is_ok(),
        // `typed` makes a NaN or an infinity `null`.
        Some("number") => text.parse::<f64>().is_ok_and(f64::is_finite),
        Some("boolean") => text.parse::<bool>().is_ok(),
        Some("null") => text.is_empty(),
        Some("string") => true,
        _ => false,
    }
}

/// The check of one declared parameter (`None`: one OpenAPI says to ignore).
fn param_check(
    doc: &Document,
    compiler: &Compiler,
    param: &Param<'_>,
    pattern_name: &impl Fn(&str) -> String,
) -> Result<Option<ParamCheck>, OpenApiError> {
    let Some(place) = In::parse(param.place) else {
        return Ok(None);
    };
    // OpenAPI: these three header parameters are ignored; the media types
    // and security say what they may hold.
    if place == In::Header
        && ["accept", "content-type", "authorization"]
            .contains(&param.name.to_ascii_lowercase().as_str())
    {
        return Ok(None);
    }
    let required =
        place == In::Path || param.value.get("required").and_then(Value::as_bool) == Some(true);
    let (kind, item_kind, bare, validator) = match param.value.get("schema") {
        Some(schema) => {
            let (resolved, _) = doc.resolve(schema, String::new())?;
            let bare = matches!(resolved.get("type"), Some(Value::String(_)))
                && resolved
                    .as_mapping()
                    .is_some_and(|schema| schema.len() == 1);
            let items = resolved
                .get("items")
                .map(|items| doc.resolve(items, String::new()));
            let item_kind = match items {
                Some(items) => type_of(items?.0).map(str::to_owned),
                None => None,
            };
            let pointer = child(&param.pointer, "schema");
            (
                type_of(resolved).map(str::to_owned),
                item_kind,
                bare,
                Some(compiler.compile(doc, &pointer)?),
            )
        }
        None => (None, None, false, None),
    };
    Ok(Some(ParamCheck {
        place,
        pattern_name: pattern_name(&param.name),
        name: param.name.clone(),
        required,
        kind,
        item_kind,
        bare,
        validator,
    }))
}

/// The check of the request body, if the operation declares one.
fn body_check(
    doc: &Document,
    compiler: &Compiler,
    operation: &Value,
    operation_pointer: &str,
) -> Result<Option<BodyCheck>, OpenApiError> {
    let Some(body) = operation.get("requestBody") else {
        return Ok(None);
    };
    let pointer = child(operation_pointer, "requestBody");
    let (body, pointer) = doc.resolve(body, pointer)?;
    let content_pointer = child(&pointer, "content");
    let mut media = Vec::new();
    for (media_type, entry) in entries(body.get("content")) {
        let validator = match entry.get("schema") {
            Some(_) if is_json(&media_type) => {
                let at = child(&child(&content_pointer, &media_type), "schema");
                Some(compiler.compile(doc, &at)?)
            }
            _ => None,
        };
        media.push((media_type, validator));
    }
    Ok(Some(BodyCheck {
        required: body.get("required").and_then(Value::as_bool) == Some(true),
        media,
    }))
}

/// The values a request gives a parameter, as text: borrowed where the
/// request holds them as they are, and none allocated for the usual one.
fn param_values<'a>(param: &ParamCheck, args: &Inputs<'a>) -> SmallVec<[Cow<'a, str>; 1]> {
    match param.place {
        In::Path => args
            .params
            .get(&param.pattern_name)
            .map(Cow::Borrowed)
            .into_iter()
            .collect(),
        In::Query => args
            .request
            .url()
            .query_pairs()
            .filter(|(name, _)| *name == param.name)
            .map(|(_, value)| value)
            .collect(),
        In::Header => args
            .request
            .headers()
            .get_all(param.name.as_str())
            .iter()
            .map(|value| String::from_utf8_lossy(value.as_bytes()))
            .collect(),
        In::Cookie => args
            .cookies
            .get(&param.name)
            .map(Cow::Borrowed)
            .into_iter()
            .collect(),
    }
}

/// A parameter's values as the JSON its schema validates.
fn param_value(param: &ParamCheck, values: &[Cow<'_, str>]) -> Json {
    if param.kind.as_deref() != Some("array") {
        return typed(&values[0], param.kind.as_deref());
    }
    // `form` style, exploded (`?tags=a&tags=b`) or not (`?tags=a,b`);
    // headers are comma-separated (`simple`).
    let items: Vec<&str> = if values.len() == 1 || param.place == In::Header {
        values
            .iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect()
    } else {
        values.iter().map(AsRef::as_ref).collect()
    };
    Json::Array(
        items
            .iter()
            .map(|item| typed(item, param.item_kind.as_deref()))
            .collect(),
    )
}

fn check_body(body: &BodyCheck, args: &Inputs<'_>, failures: &mut Vec<Failure>) {
    let bytes = args.request.body();
    if bytes.is_empty() {
        if body.required {
            failures.push(Failure::new("body", "the request body is required"));
        }
        return;
    }
    let content_type = args
        .request
        .header("content-type")
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let documented = body
        .media
        .iter()
        .find(|(media_type, _)| media_matches(media_type, &content_type));
    let Some((_, validator)) = documented else {
        let listed: Vec<&str> = body
            .media
            .iter()
            .map(|(media_type, _)| media_type.as_str())
            .collect();
        failures.push(Failure::new(
            "header.content-type",
            format!(
                "the content type {content_type:?} is not one of {}",
                listed.join(", ")
            ),
        ));
        return;
    };
    let Some(validator) = validator else {
        return;
    };
    let value: Json = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(error) => {
            failures.push(Failure::new(
                "body",
                format!("the body is not JSON: {error}"),
            ));
            return;
        }
    };
    if validator.is_valid(&value) {
        return;
    }
    for error in validator.iter_errors(&value) {
        let path: Vec<&str> = error.instance_path().as_str().split('/').skip(1).collect();
        let location = std::iter::once("body")
            .chain(path)
            .collect::<Vec<_>>()
            .join(".");
        failures.push(Failure::new(location, error.to_string()));
    }
}

/// A media type without its parameters: `text/plain` of
/// `text/plain; charset=utf-8`.
pub(crate) fn essence(media_type: &str) -> &str {
    media_type.split(';').next().unwrap_or_default().trim()
}

/// Whether a documented media type (`application/json`, `image/*`,
/// `*/*`) covers `actual` (an essence), in any case. Allocates nothing:
/// it runs on every checked request and answer.
pub(crate) fn media_matches(documented: &str, actual: &str) -> bool {
    let documented = essence(documented);
    match documented.split_once('/') {
        Some(("*", "*")) => true,
        Some((kind, "*")) => actual
            .split_once('/')
            .is_some_and(|(actual_kind, _)| actual_kind.eq_ignore_ascii_case(kind)),
        _ => documented.eq_ignore_ascii_case(actual),
    }
}

/// Whether a media type holds JSON (`application/json`, `…+json`).
pub(crate) fn is_json(media_type: &str) -> bool {
    let essence = essence(media_type).as_bytes();
    essence.eq_ignore_ascii_case(b"application/json")
        || essence.len() >= 5 && essence[essence.len() - 5..].eq_ignore_ascii_case(b"+json")
}

/// A parameter's text as the JSON value its schema's type reads it as;
/// text that does not parse stays text, for the validator to reject.
pub(crate) fn typed(text: &str, kind: Option<&str>) -> Json {
    let parsed = match kind {
        Some("integer") => text.parse::<i64>().ok().map(Json::from),
        Some("number") => text.parse::<f64>().ok().map(Json::from),
        Some("boolean") => text.parse::<bool>().ok().map(Json::from),
        Some("null") if text.is_empty() => Some(Json::Null),
        _ => None,
    };
    parsed.unwrap_or_else(|| Json::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut for bare types claims nothing the validator would
    /// refuse: whatever text `reads_as` passes, `{type: kind}` accepts as
    /// `typed` reads it, in both dialects.
    #[test]
    fn a_bare_type_passed_without_the_validator_is_one_it_accepts() {
        let texts = [
            "7",
            "-3",
            "007",
            "7.5",
            "1e3",
            "NaN",
            "inf",
            "-inf",
            "true",
            "false",
            "",
            "abc",
            "99999999999999999999",
        ];
        for draft in [Draft::Draft4, Draft::Draft202012] {
            for kind in ["integer", "number", "boolean", "null", "string"] {
                let validator = jsonschema::options()
                    .with_draft(draft)
                    .build(&json!({ "type": kind }))
                    .unwrap();
                for text in texts {
                    if reads_as(text, Some(kind)) {
                        let value = typed(text, Some(kind));
                        assert!(
                            validator.is_valid(&value),
                            "{text:?} as {kind} ({draft:?}): {value}"
                        );
                    }
                }
            }
        }
    }
}
