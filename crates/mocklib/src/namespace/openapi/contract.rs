//! The document as a [`Contract`]: every answered request that maps to one
//! of its operations is checked against it — the request's parameters and
//! body as [`OpenApi::validate_requests`](super::OpenApi::validate_requests)
//! checks them, the answer's status against the documented responses, its
//! content type, its required headers and its JSON body against the
//! schema. A request under the document's server that maps to no operation
//! is a finding too.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http::Method;
use jsonschema::Validator;
use serde_json::Value as Json;
use serde_norway::Value;

use super::OpenApiError;
use super::document::{Document, child, entries, scalar_text};
use super::generate::type_of;
use super::operation::{METHODS, parameters, pattern};
use super::validate::{Compiler, Inputs, RequestCheck, essence, is_json, media_matches, typed};
use crate::handling::contract::{
    Answered, Contract, Coverage, Finding, Memo, OperationCoverage, ResponseCoverage, fingerprints,
    short,
};
use crate::matching::Predicate;
use crate::message::cookies::Cookies;
use crate::message::request::Request;

/// An OpenAPI document as a contract; made by
/// [`OpenApi::contract`](super::OpenApi::contract). Clones are the same
/// contract: keep one to read its [`coverage`](Self::coverage) after
/// attaching another.
#[derive(Clone)]
pub struct OpenApiContract(Arc<Inner>);

/// What [`OpenApiContract`] shares among its clones.
struct Inner {
    name: String,
    /// The server URL the paths are under, without a trailing `/`.
    server: String,
    /// The same, parsed when absolute (`None`: a path like `/v1`).
    server_url: Option<url::Url>,
    operations: Vec<OperationContract>,
    /// Operations by their path's first segment under the server
    /// (lowercased), so a request is matched against a few, not all.
    by_segment: HashMap<String, Vec<usize>, foldhash::fast::FixedState>,
    /// Operations whose path starts with a parameter: candidates for
    /// every request.
    parameter_led: Vec<usize>,
    /// The findings of exchanges seen before, by a fingerprint of all the
    /// check reads.
    seen: Memo<(Vec<Finding>, Option<Hit>)>,
    /// The same for answers alone (by operation, and the fingerprint of
    /// status, headers and body): a request that differs (another id)
    /// often gets the same answer from a mock, whose body need not be
    /// validated again.
    answers_seen: Memo<Vec<Finding>, (usize, u64)>,
}

impl OpenApiContract {
    /// Which operations, and which of their documented responses, the
    /// requests checked so far exercised: what the mocks never cover.
    ///
    /// ```
    /// use mocklib::openapi::OpenApi;
    ///
    /// let document = r#"
    /// openapi: 3.0.3
    /// info: { title: Users, version: "1" }
    /// paths:
    ///   /users/{id}:
    ///     get:
    ///       operationId: getUser
    ///       responses: { "200": { description: ok }, "404": { description: missing } }
    /// "#;
    /// let contract = OpenApi::from_yaml(document)?.contract()?;
    /// let coverage = contract.coverage();
    /// assert_eq!(coverage.operations[0].requests, 0);
    /// assert!(coverage.to_string().contains("0 of 1 operations"));
    /// # Ok::<(), mocklib::openapi::OpenApiError>(())
    /// ```
    pub fn coverage(&self) -> Coverage {
        let operations = self
            .0
            .operations
            .iter()
            .map(|operation| OperationCoverage {
                operation: operation.name.clone(),
                method: operation.method.to_string(),
                path: operation.path.clone(),
                requests: operation.requests.load(Ordering::Relaxed),
                responses: operation
                    .responses
                    .iter()
                    .map(|(key, response)| ResponseCoverage {
                        status: key.clone(),
                        answers: response.answers.load(Ordering::Relaxed),
                    })
                    .collect(),
                undocumented: operation.undocumented.load(Ordering::Relaxed),
            })
            .collect();
        Coverage {
            contract: self.0.name.clone(),
            operations,
        }
    }
}

/// Which operation an exchange maps to, and which documented response its
/// status is (`None`: none): what coverage counts.
#[derive(Clone, Copy)]
struct Hit {
    operation: usize,
    response: Option<usize>,
}

impl std::fmt::Debug for OpenApiContract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApiContract")
            .field("name", &self.0.name)
            .field("operations", &self.0.operations.len())
            .finish_non_exhaustive()
    }
}

/// The statuses a documented response's key covers, in the order OpenAPI
/// prefers them: a status named exactly, then its range, then `default`.
#[derive(Clone, Copy)]
enum Covers {
    Exactly(u16),
    Range(u16),
    Default,
    /// A key that is none of these: no status.
    Nothing,
}

impl Covers {
    fn of(key: &str) -> Covers {
        let range = key.len() == 3 && key[1..].eq_ignore_ascii_case("XX");
        match (key.parse::<u16>(), key.as_bytes().first()) {
            _ if key == "default" => Covers::Default,
            (Ok(status), _) if key.len() == 3 => Covers::Exactly(status),
            (_, Some(digit @ b'1'..=b'9')) if range => Covers::Range(u16::from(digit - b'0')),
            _ => Covers::Nothing,
        }
    }

    /// How well it covers `status` (lower is better), if at all.
    fn rank(self, status: u16) -> Option<u8> {
        match self {
            Covers::Exactly(exact) if exact == status => Some(0),
            Covers::Range(hundreds) if hundreds == status / 100 => Some(1),
            Covers::Default => Some(2),
            _ => None,
        }
    }
}

/// What one operation promises.
struct OperationContract {
    /// Its place in [`OpenApiContract::operations`].
    index: usize,
    /// Its `operationId`, else `GET /pets/{petId}`.
    name: String,
    /// Its path in the document (`/pets/{petId}`).
    path: String,
    method: Method,
    /// Requests that mapped to it.
    requests: AtomicU64,
    /// Of those, answered with a status no response documents.
    undocumented: AtomicU64,
    predicate: Predicate,
    request: Arc<RequestCheck>,
    /// By status key (`200`, `2XX`, `default`), in document order.
    responses: Vec<(String, ResponseContract)>,
}

/// What one documented response promises.
struct ResponseContract {
    /// Which statuses its key covers.
    covers: Covers,
    /// Answers it documented.
    answers: AtomicU64,
    /// Documented media types, each with its schema's validator.
    media: Vec<(String, Option<Validator>)>,
    /// Documented headers: name (lowercase), required, the schema's type
    /// (how the text is read) and validator.
    headers: Vec<(String, bool, Option<String>, Option<Validator>)>,
}

impl OpenApiContract {
    pub(super) fn new(
        doc: &Document,
        server: &super::Server,
        name: String,
    ) -> Result<Self, OpenApiError> {
        let compiler = Compiler::new(doc)?;
        let base = server.url_for(&[]);
        let mut operations = Vec::new();
        let mut by_segment: HashMap<String, Vec<usize>, _> = HashMap::default();
        let mut parameter_led = Vec::new();
        for (path, item) in entries(doc.root.get("paths")) {
            let item_pointer = child("/paths", &path);
            let (item, item_pointer) = doc.resolve(item, item_pointer)?;
            let (mocklib_pattern, names) = pattern(&path);
            let shared = parameters(doc, item, &item_pointer)?;
            let segment = path
                .trim_start_matches('/')
                .split('/')
                .next()
                .filter(|segment| !segment.contains('{'))
                .map(str::to_ascii_lowercase);
            for (method_name, operation) in entries(Some(item)) {
                if !METHODS.contains(&method_name.as_str()) {
                    continue;
                }
                let pointer = child(&item_pointer, &method_name);
                let method: Method = method_name
                    .to_ascii_uppercase()
                    .parse()
                    .expect("a listed method");
                let mut params = shared.clone();
                for param in parameters(doc, operation, &pointer)? {
                    params.retain(|known| (known.place, &known.name) != (param.place, &param.name));
                    params.push(param);
                }
                let request =
                    RequestCheck::new(doc, &compiler, &params, operation, &pointer, |name| {
                        names
                            .iter()
                            .find(|(documented, _)| documented == name)
                            .map_or_else(|| name.to_owned(), |(_, ours)| ours.clone())
                    })?;
                let url = format!("{}{}", server.url_for(&[operation, item]), mocklib_pattern);
                let predicate = Predicate::path(&url).map_err(|error| {
                    doc.invalid(
                        &item_pointer,
                        format!("the path cannot be matched: {error}"),
                    )
                })?;
                let name = operation
                    .get("operationId")
                    .and_then(scalar_text)
                    .unwrap_or_else(|| format!("{} {path}", method.as_str()));
                match &segment {
                    Some(segment) => by_segment.entry(segment.clone()).or_default(),
                    None => &mut parameter_led,
                }
                .push(operations.len());
                operations.push(OperationContract {
                    index: operations.len(),
                    name,
                    path: path.clone(),
                    requests: AtomicU64::new(0),
                    undocumented: AtomicU64::new(0),
                    method,
                    predicate,
                    request,
                    responses: responses(doc, &compiler, operation, &pointer)?,
                });
            }
        }
        Ok(OpenApiContract(Arc::new(Inner {
            name,
            server_url: url::Url::parse(&base).ok(),
            server: base,
            operations,
            by_segment,
            parameter_led,
            seen: Memo::default(),
            answers_seen: Memo::default(),
        })))
    }
}

impl Inner {
    /// The request's path under the server, if it is under it: absolute
    /// servers by their origin and path, relative ones by their path (on
    /// the front door's own origin).
    fn path_under<'u>(&self, answered: &'u Answered<'_>) -> Option<&'u str> {
        let url = answered.request.url();
        // Origins written alike (the usual case) need no comparing by parts.
        let written_alike = |other: &url::Url| {
            other[..url::Position::BeforePath] == url[..url::Position::BeforePath]
        };
        let server_path = match &self.server_url {
            Some(server) => {
                let same_host = || match (server.host_str(), url.host_str()) {
                    (Some(ours), Some(theirs)) => ours.eq_ignore_ascii_case(theirs),
                    (ours, theirs) => ours == theirs,
                };
                let same_origin = written_alike(server)
                    || server.scheme() == url.scheme()
                        && same_host()
                        && server.port_or_known_default() == url.port_or_known_default();
                if !same_origin {
                    return None;
                }
                server.path().trim_end_matches('/')
            }
            None => {
                let base = answered.base_url?;
                if !written_alike(base) && base.origin() != url.origin() {
                    return None;
                }
                self.server.trim_end_matches('/')
            }
        };
        let path = url.path();
        let rest = path.get(server_path.len()..)?;
        let prefix_ok = path[..server_path.len()].eq_ignore_ascii_case(server_path);
        (prefix_ok && (rest.is_empty() || rest.starts_with('/'))).then_some(rest)
    }
}

impl Contract for OpenApiContract {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn coverage(&self) -> Option<Coverage> {
        Some(OpenApiContract::coverage(self))
    }

    fn check(&self, answered: &Answered<'_>) -> Vec<Finding> {
        let inner = &self.0;
        let prints = fingerprints(answered);
        let (findings, hit) = inner.seen.get_or_check(prints.exchange, || {
            inner.check_anew(answered, prints.answer)
        });
        // Counted on every exchange, remembered or not.
        if let Some(hit) = hit {
            let operation = &inner.operations[hit.operation];
            operation.requests.fetch_add(1, Ordering::Relaxed);
            match hit.response {
                Some(index) => operation.responses[index]
                    .1
                    .answers
                    .fetch_add(1, Ordering::Relaxed),
                None => operation.undocumented.fetch_add(1, Ordering::Relaxed),
            };
        }
        findings
    }
}

impl Inner {
    /// The findings about `answered`, whose answer's fingerprint is
    /// `answer`, and the operation it maps to.
    fn check_anew(&self, answered: &Answered<'_>, answer: u64) -> (Vec<Finding>, Option<Hit>) {
        let Some(rest) = self.path_under(answered) else {
            return (Vec::new(), None);
        };
        let rest = rest.trim_start_matches('/');
        let segment = match rest.bytes().position(|byte| byte == b'/') {
            Some(end) => &rest[..end],
            None => rest,
        };
        // Lowercased only when it has to be (the keys are).
        let segment = if segment.bytes().any(|byte| byte.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(segment.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(segment)
        };
        let candidates = self
            .by_segment
            .get(segment.as_ref())
            .into_iter()
            .flatten()
            .chain(&self.parameter_led)
            .map(|&index| &self.operations[index]);
        let request = answered.request;
        let mut other_methods = Vec::new();
        for operation in candidates {
            let Some(params) = operation.predicate.matches(request, answered.base_url) else {
                continue;
            };
            if operation.method != request.method() {
                other_methods.push(operation.method.as_str());
                continue;
            }
            let (findings, response) =
                operation.check(answered, params, (answer, &self.answers_seen));
            let hit = Hit {
                operation: operation.index,
                response,
            };
            return (findings, Some(hit));
        }
        (self.unmatched(request, other_methods), None)
    }

    /// The finding about a request under the server that no operation
    /// matched (`other_methods`: those of operations whose path did).
    #[cold]
    #[inline(never)]
    fn unmatched(&self, request: &Request, mut other_methods: Vec<&str>) -> Vec<Finding> {
        if other_methods.is_empty() {
            vec![Finding::new(
                "/request/path",
                format!(
                    "a path of the document (under {})",
                    if self.server.is_empty() {
                        "/"
                    } else {
                        &self.server
                    }
                ),
                request.url().path(),
            )]
        } else {
            other_methods.sort_unstable();
            other_methods.dedup();
            vec![Finding::new(
                "/request/method",
                format!("one of {}", other_methods.join(", ")),
                request.method().as_str(),
            )]
        }
    }
}

impl OperationContract {
    fn check(
        &self,
        answered: &Answered<'_>,
        params: crate::message::params::Params,
        (answer, answers_seen): (u64, &Memo<Vec<Finding>, (usize, u64)>),
    ) -> (Vec<Finding>, Option<usize>) {
        let request = answered.request;
        let cookies = if self.request.reads_cookies() {
            Cookies::from_headers(request.headers())
        } else {
            Cookies::NONE
        };
        let inputs = Inputs {
            request,
            params: &params,
            cookies: &cookies,
        };
        let failures = self.request.check_inputs(&inputs);
        let mut findings = Vec::new();
        if !failures.is_empty() {
            findings.extend(failures.iter().map(super::validate::Failure::finding));
        }
        let status = answered.status.as_u16();
        // The best ranked, the first of equals.
        let documented = (self.responses.iter().enumerate())
            .filter_map(|(index, (_, response))| Some((response.covers.rank(status)?, index)))
            .min()
            .map(|(_, index)| index);
        match documented.map(|index| &self.responses[index]) {
            None => findings.push(self.undocumented(status)),
            Some((_, response)) => {
                findings.extend(answers_seen.get_or_check((self.index, answer), || {
                    let mut found = Vec::new();
                    response.check(answered, &mut found);
                    found
                }));
            }
        }
        for finding in &mut findings {
            finding.operation = Some(self.name.clone());
        }
        (findings, documented)
    }

    // Cold, apart from the usual path: its code would be read with it.
    #[cold]
    #[inline(never)]
    fn undocumented(&self, status: u16) -> Finding {
        let keys: Vec<&str> = self.responses.iter().map(|(key, _)| key.as_str()).collect();
        Finding::new(
            "/response/status",
            format!("a documented status ({})", keys.join(", ")),
            status.to_string(),
        )
    }
}

impl ResponseContract {
    fn check(&self, answered: &Answered<'_>, findings: &mut Vec<Finding>) {
        for (name, required, kind, validator) in &self.headers {
            match answered.headers.get(name.as_str()) {
                None if *required => findings.push(Finding::new(
                    format!("/response/headers/{name}"),
                    "the header (required)",
                    "none",
                )),
                None => {}
                Some(value) => {
                    let (Some(validator), Ok(text)) = (validator, value.to_str()) else {
                        continue;
                    };
                    let value = typed(text, kind.as_deref());
                    // The common case, valid, without building errors.
                    if validator.is_valid(&value) {
                        continue;
                    }
                    for error in validator.iter_errors(&value) {
                        findings.push(Finding::new(
                            format!("/response/headers/{name}"),
                            error.to_string(),
                            text,
                        ));
                    }
                }
            }
        }
        // The media type alone, as documented: `text/plain; charset=utf-8`
        // is `text/plain`.
        let content_type = answered
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(essence);
        let body = answered.body.unwrap_or_default();
        if self.media.is_empty() {
            if answered.body.is_some_and(|body| !body.is_empty()) {
                findings.push(Finding::new(
                    "/response/body",
                    "no body",
                    format!("{} bytes", body.len()),
                ));
            }
            return;
        }
        let Some(content_type) = content_type else {
            if !body.is_empty() {
                findings.push(Finding::new(
                    "/response/headers/content-type",
                    one_of(&self.media),
                    "none",
                ));
            }
            return;
        };
        let Some((media, validator)) = self
            .media
            .iter()
            .find(|(media, _)| media_matches(media, content_type))
        else {
            findings.push(Finding::new(
                "/response/headers/content-type",
                one_of(&self.media),
                content_type.to_ascii_lowercase(),
            ));
            return;
        };
        let (Some(validator), true, Some(body)) = (validator, is_json(media), answered.body) else {
            return;
        };
        let value: Json = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(error) => {
                findings.push(Finding::new(
                    "/response/body",
                    "JSON",
                    format!("not JSON: {error}"),
                ));
                return;
            }
        };
        // The common case, valid, without building errors.
        if validator.is_valid(&value) {
            return;
        }
        for error in validator.iter_errors(&value) {
            let at = error.instance_path().to_string();
            findings.push(Finding::new(
                format!("/response/body{at}"),
                schema_rule(&error),
                short(&error.instance().to_string()),
            ));
        }
    }
}

/// What the failed schema keyword asks for, in words.
fn schema_rule(error: &jsonschema::ValidationError<'_>) -> String {
    let message = error.to_string();
    let keyword = error.schema_path().to_string();
    let keyword = keyword.rsplit('/').next().unwrap_or_default();
    format!("{message} (schema: {keyword})")
}

fn one_of(media: &[(String, Option<Validator>)]) -> String {
    let names: Vec<&str> = media.iter().map(|(name, _)| name.as_str()).collect();
    format!("one of {}", names.join(", "))
}

/// Every documented response of an operation, ready to check answers.
fn responses(
    doc: &Document,
    compiler: &Compiler,
    operation: &Value,
    pointer: &str,
) -> Result<Vec<(String, ResponseContract)>, OpenApiError> {
    let responses_pointer = child(pointer, "responses");
    let mut responses = Vec::new();
    for (key, response) in entries(operation.get("responses")) {
        let (response, response_pointer) =
            doc.resolve(response, child(&responses_pointer, &key))?;
        let content_pointer = child(&response_pointer, "content");
        let mut media = Vec::new();
        for (name, media_value) in entries(response.get("content")) {
            let media_pointer = child(&content_pointer, &name);
            let validator = match media_value.get("schema") {
                Some(_) => Some(compiler.compile(doc, &child(&media_pointer, "schema"))?),
                None => None,
            };
            media.push((name, validator));
        }
        let headers_pointer = child(&response_pointer, "headers");
        let mut headers = Vec::new();
        for (name, header) in entries(response.get("headers")) {
            // `Content-Type` is described by `content`, as OpenAPI says.
            if name.eq_ignore_ascii_case("content-type") {
                continue;
            }
            let (header, header_pointer) = doc.resolve(header, child(&headers_pointer, &name))?;
            let required = header
                .get("required")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let (kind, validator) = match header.get("schema") {
                Some(schema) => {
                    let (schema, _) = doc.resolve(schema, child(&header_pointer, "schema"))?;
                    (
                        type_of(schema).map(str::to_owned),
                        Some(compiler.compile(doc, &child(&header_pointer, "schema"))?),
                    )
                }
                None => (None, None),
            };
            headers.push((name.to_ascii_lowercase(), required, kind, validator));
        }
        let covers = Covers::of(&key);
        responses.push((
            key,
            ResponseContract {
                covers,
                answers: AtomicU64::new(0),
                media,
                headers,
            },
        ));
    }
    Ok(responses)
}
