//! The `graphql` entries of handler files: GraphQL operations answered
//! with `data` and/or `errors`, built with the library's own handlers —
//! `graphql: query NAME` is `mocklib::graphql::query(NAME, ..)`,
//! `mutation NAME` is `graphql::mutation`, `operation` is
//! `graphql::operation`, and with `endpoint` they are
//! `graphql::link(endpoint).query(..)` and so on. So GET and POST
//! requests, batches, multipart uploads and `Accept:
//! application/graphql-response+json` work as they do in Rust.
//!
//! ```yaml
//! - graphql: query GetUser              # query | mutation | operation, then a name
//!   endpoint: /graphql                  # optional: only there (graphql::link)
//!   match: { variables: { id: "1" } }   # optional: the variables hold these
//!   data: { user: { id: "1", name: Kate } }
//! - graphql: query /^List/              # a /regular expression/ over the name
//!   template: true                      # strings over variables, operationName
//!   data: { users: [ { name: "{{ variables.name }}" } ] }
//! - graphql: mutation DeleteUser
//!   errors: [ { message: not allowed } ]
//!   status: 200                         # optional, as are headers and delay_ms
//! - graphql: operation                  # any operation, named or anonymous
//!   data: { ok: true }
//! ```
//!
//! An operation whose variables miss the `match:` falls through to the
//! next entry. With `template: true` the strings of `data` and `errors`
//! are templates (see `template.rs`) seeing `variables`, `operationName`,
//! `operationType`, `query` and `request`.

use std::collections::BTreeMap;
use std::sync::Arc;

use mocklib::graphql::{self, Predicate};
use mocklib::resolver::Resolution;
use mocklib::{Handler, HttpResponse};

use crate::entry_parts::{Expected, check_headers};
use crate::holds::Holds;
use crate::template::{Templates, add_json, render_json};

/// A `graphql` entry, as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GraphqlEntry {
    /// `query NAME`, `mutation NAME` or `operation` (a name optional),
    /// the name exact or a `/regular expression/`.
    graphql: String,
    /// Only operations sent to this URL or path (`graphql::link`).
    endpoint: Option<String>,
    /// `data: null` is given (not left out).
    #[serde(default, deserialize_with = "given")]
    data: Option<serde_json::Value>,
    errors: Option<serde_json::Value>,
    /// Conditions on the operation.
    #[serde(rename = "match")]
    conditions: Option<GraphqlMatch>,
    status: Option<u16>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    delay_ms: Option<u64>,
    /// Whether the strings of `data` and `errors` are templates.
    #[serde(default)]
    template: bool,
    #[serde(default)]
    once: bool,
    times: Option<Expected>,
}

/// A field that is there, `null` included.
fn given<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(deserializer).map(Some)
}

/// A `graphql` entry's `match:` block.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphqlMatch {
    /// JSON the variables hold (a subset).
    variables: Option<serde_json::Value>,
}

/// Which operations an entry answers.
enum Type {
    Query,
    Mutation,
    Operation,
}

/// How an entry picks operations by name.
enum Name {
    Any,
    Exact(String),
    Pattern(regex::Regex),
}

impl Name {
    fn matches(&self, name: Option<&str>) -> bool {
        match (self, name) {
            (Name::Any, _) => true,
            (Name::Exact(expected), Some(name)) => expected == name,
            (Name::Pattern(pattern), Some(name)) => pattern.is_match(name),
            (_, None) => false,
        }
    }

    fn predicate(self) -> Predicate {
        match self {
            Name::Any => Predicate::custom(|_| true),
            Name::Exact(name) => Predicate::name(name),
            Name::Pattern(pattern) => Predicate::regex(pattern),
        }
    }
}

/// `query GetUser`, `mutation /^Delete/`, `operation`: the type and the name.
fn operation_of(text: &str) -> Result<(Type, Name), String> {
    let text = text.trim();
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let kind = match word {
        "query" => Type::Query,
        "mutation" => Type::Mutation,
        "operation" => Type::Operation,
        _ => {
            return Err(format!(
                "graphql: expected `query NAME`, `mutation NAME` or `operation`, found {text:?}"
            ));
        }
    };
    let rest = rest.trim();
    let name = if rest.is_empty() {
        Name::Any
    } else if let Some(pattern) = rest.strip_prefix('/').and_then(|r| r.strip_suffix('/')) {
        Name::Pattern(regex::Regex::new(pattern).map_err(|error| {
            format!("graphql: /{pattern}/ is not a regular expression: {error}")
        })?)
    } else if is_graphql_name(rest) {
        Name::Exact(rest.to_owned())
    } else {
        return Err(format!(
            "graphql: {rest:?} is not an operation name (letters, digits and _, not first a digit) nor a /regular expression/"
        ));
    };
    Ok((kind, name))
}

/// A GraphQL name: `[_A-Za-z][_0-9A-Za-z]*`.
fn is_graphql_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// What every operation an entry answers gets.
struct Answer {
    /// For `operation NAME`: `graphql::operation` has no predicate.
    name: Option<Name>,
    variables: Option<Holds>,
    data: Option<serde_json::Value>,
    errors: Option<serde_json::Value>,
    templates: Option<Templates>,
    status: u16,
    headers: BTreeMap<String, String>,
    delay_ms: Option<u64>,
}

impl Answer {
    /// The answer to one operation, or a fallthrough when it misses.
    async fn resolve(&self, args: graphql::ResolverArgs) -> Resolution {
        if self
            .name
            .as_ref()
            .is_some_and(|name| !name.matches(args.operation_name.as_deref()))
            || self
                .variables
                .as_ref()
                .is_some_and(|holds| !holds.value(&args.variables))
        {
            return Resolution::Fallthrough;
        }
        let body = match &self.templates {
            None => self.body(self.data.clone(), self.errors.clone()),
            Some(templates) => match self.rendered(templates, &args) {
                Ok(body) => body,
                Err(why) => return Resolution::Respond(crate::template::failed(&why)),
            },
        };
        if let Some(milliseconds) = self.delay_ms {
            mocklib::delay(milliseconds).await;
        }
        let mut response = HttpResponse::json(&body).status(self.status);
        for (name, value) in &self.headers {
            response = response.header(name, value);
        }
        Resolution::Respond(response)
    }

    fn body(
        &self,
        data: Option<serde_json::Value>,
        errors: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let mut body = serde_json::Map::new();
        if let Some(data) = data {
            body.insert("data".to_owned(), data);
        }
        if let Some(errors) = errors {
            body.insert("errors".to_owned(), errors);
        }
        serde_json::Value::Object(body)
    }

    /// The body with its templates rendered for this operation.
    fn rendered(
        &self,
        templates: &Templates,
        args: &graphql::ResolverArgs,
    ) -> Result<serde_json::Value, String> {
        let context = minijinja::context! {
            variables => minijinja::Value::from(minijinja::value::Serde(&args.variables)),
            operationName => args.operation_name.clone(),
            operationType => args.operation_type.as_str(),
            query => args.query.clone(),
            request => crate::template::request_value(&args.request, &args.cookies, BTreeMap::new()),
        };
        let render = |value: &Option<serde_json::Value>, at: &str| {
            value
                .as_ref()
                .map(|value| render_json(templates, value, at, &context))
                .transpose()
        };
        Ok(self.body(render(&self.data, "data")?, render(&self.errors, "errors")?))
    }
}

impl GraphqlEntry {
    /// The entry's expected count, taken out before the handler is built.
    pub(crate) fn times(&mut self) -> Option<Expected> {
        self.times.take()
    }

    /// The handler: `graphql::query`, `mutation` or `operation` (through
    /// `graphql::link` with an `endpoint`).
    pub(crate) fn into_handler(self) -> Result<Handler, String> {
        let (kind, name) = operation_of(&self.graphql)?;
        if self.data.is_none() && self.errors.is_none() {
            return Err("give data, errors or both: a GraphQL response has one of them".to_owned());
        }
        if let Some(errors) = self.errors.as_ref().filter(|errors| !errors.is_array()) {
            return Err(format!(
                "errors: expected a list of GraphQL errors ([{{message: ...}}]), found {errors}"
            ));
        }
        let status = self.status.unwrap_or(200);
        http::StatusCode::from_u16(status)
            .map_err(|_| format!("status: invalid status {status}"))?;
        check_headers(&self.headers)?;
        let templates = if self.template {
            let mut templates = Templates::new();
            for (value, at) in [(&self.data, "data"), (&self.errors, "errors")] {
                if let Some(value) = value {
                    add_json(&mut templates, value, at)?;
                }
            }
            Some(templates)
        } else {
            None
        };
        let variables = match self.conditions.and_then(|conditions| conditions.variables) {
            None => None,
            Some(variables @ serde_json::Value::Object(_)) => Some(Holds::new(&variables)),
            Some(other) => {
                return Err(format!(
                    "match.variables: expected an object (the variables are one), found {other}"
                ));
            }
        };
        let link = self
            .endpoint
            .map(|endpoint| {
                graphql::try_link(endpoint).map_err(|error| format!("endpoint: {error}"))
            })
            .transpose()?;
        let (name, predicate) = match kind {
            Type::Operation => (Some(name), None),
            Type::Query | Type::Mutation => (None, Some(name.predicate())),
        };
        let answer = Arc::new(Answer {
            name,
            variables,
            data: self.data,
            errors: self.errors,
            templates,
            status,
            headers: self.headers,
            delay_ms: self.delay_ms,
        });
        let resolver = move |args: graphql::ResolverArgs| {
            let answer = Arc::clone(&answer);
            async move { answer.resolve(args).await }
        };
        let handler = match (kind, predicate, link) {
            (Type::Query, Some(predicate), None) => graphql::query(predicate, resolver),
            (Type::Query, Some(predicate), Some(link)) => link.query(predicate, resolver),
            (Type::Mutation, Some(predicate), None) => graphql::mutation(predicate, resolver),
            (Type::Mutation, Some(predicate), Some(link)) => link.mutation(predicate, resolver),
            (_, _, None) => graphql::operation(resolver),
            (_, _, Some(link)) => link.operation(resolver),
        };
        Ok(if self.once { handler.once() } else { handler })
    }
}
