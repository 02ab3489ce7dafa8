//! [`Contract`]: a schema at an endpoint, as a [`contract::Contract`](crate::contract::Contract).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http::Method;
use serde_json::Value as Json;

use super::{Schema, SchemaError, request, response};
use crate::handling::contract::{
    self, Answered, Coverage, Finding, Memo, OperationCoverage, fingerprint,
};
use crate::matching::{Predicate, as_http_url};
use crate::namespace::graphql::document::tree;
use crate::namespace::graphql::parse::read_request;
use crate::namespace::graphql::{OperationInfo, OperationType};

/// A [`Schema`] as the contract of one GraphQL endpoint; made by
/// [`Schema::contract`], attached with
/// [`attach_contract`](crate::node::Server::attach_contract). See the
/// [module docs](crate::graphql::schema) for what it checks. Clones are the same
/// contract.
#[derive(Clone)]
pub struct Contract(Arc<Inner>);

struct Inner {
    name: String,
    schema: Schema,
    endpoint: Arc<Predicate>,
    /// The findings of exchanges seen before, by fingerprint, with the
    /// root fields they asked for (indexes into `roots`).
    seen: Memo<(Vec<Finding>, Vec<usize>)>,
    /// Every root field (`Query.user`), with the operations that asked for
    /// it: coverage.
    roots: Vec<RootField>,
}

/// A field of a root operation type, and how many operations asked for it.
struct RootField {
    operation_type: OperationType,
    name: String,
    requests: AtomicU64,
}

/// The root fields of `schema`, counted from zero.
fn roots(schema: &Schema) -> Vec<RootField> {
    schema
        .0
        .root_fields()
        .into_iter()
        .map(|(operation_type, name)| RootField {
            operation_type,
            name,
            requests: AtomicU64::new(0),
        })
        .collect()
}

impl std::fmt::Debug for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contract")
            .field("name", &self.0.name)
            .field("schema", &self.0.schema)
            .finish_non_exhaustive()
    }
}

impl Schema {
    /// The schema as the contract of the GraphQL endpoint `endpoint`: a URL
    /// pattern as for [`graphql::link`](crate::graphql::link) (an absolute
    /// URL, a path relative to the base URL, `*` wildcards). Requests to
    /// other URLs are not checked. Its findings name it `GraphQL
    /// <endpoint>` unless [`named`](Contract::named) otherwise.
    pub fn contract(&self, endpoint: impl AsRef<str>) -> Result<Contract, SchemaError> {
        let endpoint = endpoint.as_ref();
        let predicate = Predicate::path(&as_http_url(endpoint))?;
        Ok(Contract(Arc::new(Inner {
            name: format!("GraphQL {endpoint}"),
            schema: self.clone(),
            endpoint: Arc::new(predicate),
            seen: Memo::default(),
            roots: roots(self),
        })))
    }
}

impl Contract {
    /// The same contract named `name` in its findings (an API's name).
    pub fn named(self, name: impl Into<String>) -> Self {
        Contract(Arc::new(Inner {
            name: name.into(),
            schema: self.0.schema.clone(),
            endpoint: Arc::clone(&self.0.endpoint),
            seen: Memo::default(),
            roots: roots(&self.0.schema),
        }))
    }

    /// The schema it checks against.
    pub fn schema(&self) -> &Schema {
        &self.0.schema
    }
}

impl contract::Contract for Contract {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn coverage(&self) -> Option<Coverage> {
        Some(Contract::coverage(self))
    }

    fn check(&self, answered: &Answered<'_>) -> Vec<Finding> {
        let inner = &self.0;
        let request = answered.request;
        // Cheap refusals first: no fingerprint of bodies for requests that
        // are none of this contract's business.
        if !matches!(*request.method(), Method::GET | Method::POST)
            || inner.endpoint.matches(request, answered.base_url).is_none()
        {
            return Vec::new();
        }
        let (findings, asked) = inner.seen.get_or_check(fingerprint(answered), || {
            let mut asked = Vec::new();
            (inner.check_anew(answered, &mut asked), asked)
        });
        // Counted on every exchange, remembered or not.
        for index in asked {
            inner.roots[index].requests.fetch_add(1, Ordering::Relaxed);
        }
        findings
    }
}

impl Inner {
    /// The findings about `answered`; pushes the root fields its operations
    /// asked for to `asked`.
    fn check_anew(&self, answered: &Answered<'_>, asked: &mut Vec<usize>) -> Vec<Finding> {
        let request = answered.request;
        let (operations, is_batch) = match read_request(request) {
            Ok(read) => read,
            // A GET without `query` (an IDE's page) is not GraphQL's.
            Err(None) if *request.method() == Method::GET => return Vec::new(),
            Err(None) => {
                let expected = "a GraphQL request (a JSON body with `query`, and `variables` \
                                and `operationName` if any)";
                return vec![Finding::new(
                    "/request/body",
                    expected,
                    "a body without a `query`",
                )];
            }
            Err(Some(reason)) => {
                return vec![Finding::new("/request", "a valid GraphQL request", reason)];
            }
        };
        let mut findings = Vec::new();
        let answer = answer_json(answered, &mut findings);
        let answers: Vec<Option<&Json>> = match (&answer, is_batch) {
            (None, _) => vec![None; operations.len()],
            (Some(body), false) => vec![Some(body)],
            (Some(Json::Array(items)), true) if items.len() == operations.len() => {
                items.iter().map(Some).collect()
            }
            (Some(other), true) => {
                let expected = format!(
                    "a list of {} responses, one per operation of the batch",
                    operations.len()
                );
                let received = match other {
                    Json::Array(items) => format!("a list of {}", items.len()),
                    _ => "not a list".to_owned(),
                };
                findings.push(Finding::new("/response/body", expected, received));
                vec![None; operations.len()]
            }
        };
        for (index, (operation, answer)) in operations.iter().zip(answers).enumerate() {
            let (request_prefix, answer_prefix) = if is_batch {
                (
                    format!("/request/{index}"),
                    format!("/response/body/{index}"),
                )
            } else {
                ("/request".to_owned(), "/response/body".to_owned())
            };
            let label = match operation.operation_name() {
                Some(name) => format!("{} {name}", operation.operation_type()),
                None => format!("{} (anonymous)", operation.operation_type()),
            };
            let mut found = Vec::new();
            self.check_operation(
                operation,
                answer,
                (&request_prefix, &answer_prefix),
                &mut found,
                asked,
            );
            findings.extend(
                found
                    .into_iter()
                    .map(|finding| finding.operation(label.clone())),
            );
        }
        findings
    }

    fn check_operation(
        &self,
        operation: &OperationInfo,
        answer: Option<&Json>,
        (request_prefix, answer_prefix): (&str, &str),
        findings: &mut Vec<Finding>,
        asked: &mut Vec<usize>,
    ) {
        let document = match tree::executable(operation.query()) {
            Ok(document) => document,
            Err(error) => {
                let pointer = format!("{request_prefix}/query");
                findings.push(Finding::new(
                    pointer,
                    "a GraphQL document",
                    error.to_string(),
                ));
                return;
            }
        };
        // The request was read with this operation chosen, so it is there.
        let Some(chosen) = document
            .operations
            .iter()
            .find(|candidate| candidate.name == operation.operation_name())
        else {
            return;
        };
        self.count_roots(&document, chosen, asked);
        let types = &self.schema.0;
        let variables = operation.variables();
        request::check(
            types,
            &document,
            chosen,
            variables,
            request_prefix,
            findings,
        );
        if let Some(answer) = answer {
            response::check(
                types,
                &document,
                chosen,
                variables,
                answer,
                answer_prefix,
                findings,
            );
        }
    }
}

impl Inner {
    /// The root fields `chosen` selects (through fragments at the top too),
    /// as indexes into `roots`.
    fn count_roots(
        &self,
        document: &tree::Executable<'_>,
        chosen: &tree::OperationDef<'_>,
        asked: &mut Vec<usize>,
    ) {
        let mut names = Vec::new();
        let mut pending: Vec<&[tree::Selection<'_>]> = vec![&chosen.selection_set];
        // Fragments may spread each other: each is read once.
        let mut spread = Vec::new();
        while let Some(selections) = pending.pop() {
            for selection in selections {
                match selection {
                    tree::Selection::Field(field) => names.push(field.name),
                    tree::Selection::Inline { selection_set, .. } => pending.push(selection_set),
                    tree::Selection::Spread { name, .. } => {
                        if spread.contains(name) {
                            continue;
                        }
                        spread.push(*name);
                        if let Some(fragment) = document
                            .fragments
                            .iter()
                            .find(|fragment| fragment.name == *name)
                        {
                            pending.push(&fragment.selection_set);
                        }
                    }
                }
            }
        }
        names.sort_unstable();
        names.dedup();
        asked.extend(names.into_iter().filter_map(|name| {
            self.roots
                .iter()
                .position(|root| root.operation_type == chosen.operation_type && root.name == name)
        }));
    }
}

impl Contract {
    /// Which root fields (`Query.user`, `Mutation.createUser`) the checked
    /// requests asked for, and how often: what the mocks never cover.
    /// Keep a clone of the contract to read it after attaching one.
    ///
    /// ```
    /// use mocklib::graphql::Schema;
    ///
    /// let contract = Schema::from_sdl("type Query { user: String, users: [String] }")?.contract("/graphql")?;
    /// let coverage = contract.coverage();
    /// assert_eq!(coverage.operations.len(), 2);
    /// assert!(coverage.to_string().starts_with("GraphQL /graphql: 0 of 2 operations exercised"));
    /// # Ok::<(), mocklib::graphql::SchemaError>(())
    /// ```
    pub fn coverage(&self) -> Coverage {
        let operations = self
            .0
            .roots
            .iter()
            .map(|root| {
                let type_name = self
                    .0
                    .schema
                    .0
                    .root(root.operation_type)
                    .unwrap_or_default();
                OperationCoverage {
                    operation: format!("{type_name}.{}", root.name),
                    method: root.operation_type.as_str().to_owned(),
                    path: root.name.clone(),
                    requests: root.requests.load(Ordering::Relaxed),
                    responses: Vec::new(),
                    undocumented: 0,
                }
            })
            .collect();
        Coverage {
            contract: self.0.name.clone(),
            operations,
        }
    }
}

/// The answer's body as JSON, when it is to be checked: whole, not an
/// event stream, and a 2xx or `application/graphql-response+json` (other
/// errors, a gateway's 502, need not be GraphQL).
fn answer_json(answered: &Answered<'_>, findings: &mut Vec<Finding>) -> Option<Json> {
    let body = answered.body?;
    let media = answered
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|media| media.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if media == "text/event-stream" {
        return None;
    }
    if !answered.status.is_success() && media != "application/graphql-response+json" {
        return None;
    }
    match serde_json::from_slice(body) {
        Ok(json) => Some(json),
        Err(error) => {
            let received = format!("not JSON: {error}");
            findings.push(Finding::new(
                "/response/body",
                "a GraphQL response (JSON)",
                received,
            ));
            None
        }
    }
}
