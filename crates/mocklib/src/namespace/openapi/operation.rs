//! One operation as a handler: its responses prepared once, the one to
//! send chosen per request (`Prefer`), static or generated for the
//! request (dynamic), its credentials checked, the request checked when
//! asked.

use std::sync::Arc;

use fastrand::Rng;
use http::Method;
use serde_json::Value as Json;
use serde_norway::Value;

use super::document::{Document, child, entries, scalar_text};
use super::external::Example;
use super::generate::{self, example_of, named_examples};
use super::security::{Refusal, Security};
use super::validate::{Compiler, Failure, Param, RequestCheck, failures_body, is_json};
use super::{Answering, OpenApiError, Validation};
use crate::handling::handler::Handler;
use crate::handling::resolver::ResolverArgs;
use crate::message::response::HttpResponse;

/// The methods an OpenAPI path item may hold operations for.
pub(crate) const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// A documented response, ready to send.
#[derive(Debug)]
struct Answer {
    /// As documented: `200`, `4XX` or `default`.
    key: String,
    media: Vec<Media>,
    headers: Vec<Header>,
}

/// One media type of a response.
#[derive(Debug)]
struct Media {
    content_type: String,
    /// What is sent unless an example is asked for.
    body: Option<Example>,
    examples: Vec<(String, Example)>,
    /// What a dynamic answer is generated from.
    schema: Option<Value>,
}

/// A documented response header.
#[derive(Debug)]
struct Header {
    name: String,
    /// Its example, or a value from its schema (a scalar).
    value: Option<String>,
    /// What a dynamic answer generates it from.
    schema: Option<Value>,
}

/// Everything a handler needs to answer for one operation.
struct Operation {
    /// `GET /pets`, for messages.
    name: String,
    /// Its `operationId`, else `GET /pets`: how contract findings name it.
    finding_name: String,
    /// The document's title: the contract reported findings come from.
    title: Arc<str>,
    answers: Vec<Answer>,
    check: Option<Arc<RequestCheck>>,
    security: Option<Security>,
    answering: Answering,
    /// What dynamic answers follow references in.
    doc: Arc<Document>,
}

/// The handlers for every operation of `doc`, their URLs under `server`;
/// `title` names the document in reported findings.
pub(crate) fn handlers(
    doc: &Arc<Document>,
    server: &super::Server,
    answering: Answering,
    title: &str,
) -> Result<Vec<Handler>, OpenApiError> {
    let compiler = if answering.validation == Validation::Off {
        None
    } else {
        Some(Compiler::new(doc)?)
    };
    let title: Arc<str> = title.into();
    let mut handlers = Vec::new();
    for (path, item) in entries(doc.root.get("paths")) {
        let item_pointer = child("/paths", &path);
        let (item, item_pointer) = doc.resolve(item, item_pointer)?;
        let (pattern, names) = pattern(&path);
        let at = PathItem {
            shared: parameters(doc, item, &item_pointer)?,
            path: &path,
            item,
            pointer: &item_pointer,
            pattern,
            names,
        };
        let made = Made {
            doc,
            server,
            compiler: compiler.as_ref(),
            answering,
            title: &title,
        };
        for (method_name, operation) in entries(Some(item)) {
            if METHODS.contains(&method_name.as_str()) {
                handlers.push(at.handler(&made, &method_name, operation)?);
            }
        }
    }
    Ok(handlers)
}

/// What every handler of one document is made with.
struct Made<'m> {
    doc: &'m Arc<Document>,
    server: &'m super::Server,
    compiler: Option<&'m Compiler>,
    answering: Answering,
    title: &'m Arc<str>,
}

/// A path of the document, with what its operations share.
struct PathItem<'a> {
    path: &'a str,
    item: &'a Value,
    pointer: &'a str,
    shared: Vec<Param<'a>>,
    /// The path as a mocklib pattern, and each parameter's documented name
    /// beside its name in the pattern.
    pattern: String,
    names: Vec<(String, String)>,
}

impl<'a> PathItem<'a> {
    /// The handler of one operation of this path.
    fn handler(
        &self,
        made: &Made<'a>,
        method_name: &str,
        operation: &'a Value,
    ) -> Result<Handler, OpenApiError> {
        let doc: &'a Document = made.doc;
        let pointer = child(self.pointer, method_name);
        let method: Method = method_name
            .to_ascii_uppercase()
            .parse()
            .expect("a listed method");
        let mut params = self.shared.clone();
        for param in parameters(doc, operation, &pointer)? {
            params.retain(|known| (known.place, &known.name) != (param.place, &param.name));
            params.push(param);
        }
        let check = match made.compiler {
            Some(compiler) => Some(RequestCheck::new(
                doc,
                compiler,
                &params,
                operation,
                &pointer,
                |name| {
                    self.names
                        .iter()
                        .find(|(documented, _)| documented == name)
                        .map_or_else(|| name.to_owned(), |(_, ours)| ours.clone())
                },
            )?),
            None => None,
        };
        let security = if made.answering.security {
            Security::new(doc, operation, &pointer, made.title)?
        } else {
            None
        };
        let url = format!(
            "{}{}",
            made.server.url_for(&[operation, self.item]),
            self.pattern
        );
        let name = format!("{method} {}", self.path);
        let operation = Arc::new(Operation {
            finding_name: operation
                .get("operationId")
                .and_then(scalar_text)
                .unwrap_or_else(|| name.clone()),
            name,
            title: Arc::clone(made.title),
            answers: answers(doc, operation, &pointer)?,
            check,
            security,
            answering: made.answering,
            doc: Arc::clone(made.doc),
        });
        crate::namespace::http::try_on(method, url.as_str(), move |args: ResolverArgs| {
            operation.answer(&args)
        })
        .map_err(|error| doc.invalid(self.pointer, format!("the path cannot be matched: {error}")))
    }
}

/// A path template (`/pets/{petId}`) as a mocklib pattern
/// (`/pets/:petId`), with each parameter's documented name and its name in
/// the pattern (only letters, digits and `_` there).
pub(crate) fn pattern(template: &str) -> (String, Vec<(String, String)>) {
    let mut pattern = String::new();
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        escape_into(&mut pattern, &rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        let ours: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        pattern.push(':');
        pattern.push_str(&ours);
        names.push((name.to_owned(), ours));
        rest = &rest[open + close + 1..];
    }
    escape_into(&mut pattern, rest);
    (pattern, names)
}

/// Literal path text, its pattern syntax escaped.
fn escape_into(pattern: &mut String, literal: &str) {
    for c in literal.chars() {
        if matches!(c, ':' | '*' | '?' | '(' | ')' | '+' | '\\' | '{' | '}') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
}

/// The parameters declared on a path item or an operation.
pub(crate) fn parameters<'a>(
    doc: &'a Document,
    holder: &'a Value,
    pointer: &str,
) -> Result<Vec<Param<'a>>, OpenApiError> {
    let mut params = Vec::new();
    let list_pointer = child(pointer, "parameters");
    for (index, param) in holder
        .get("parameters")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let (param, pointer) = doc.resolve(param, child(&list_pointer, &index.to_string()))?;
        let field = |name: &str| param.get(name).and_then(scalar_text);
        let (Some(name), Some(place)) = (field("name"), param.get("in").and_then(Value::as_str))
        else {
            return Err(doc.invalid(&pointer, "a parameter needs `name` and `in`".to_owned()));
        };
        params.push(Param {
            value: param,
            pointer,
            place,
            name,
        });
    }
    Ok(params)
}

/// Every documented response of an operation, bodies and headers ready.
fn answers(doc: &Document, operation: &Value, pointer: &str) -> Result<Vec<Answer>, OpenApiError> {
    let mut answers = Vec::new();
    for (key, response, at) in doc.entries_at(operation, pointer, "responses")? {
        let mut media = Vec::new();
        for (content_type, entry, at) in doc.entries_at(response, &at, "content")? {
            let json = is_json(&content_type);
            media.push(Media {
                body: example_of(doc, entry, &at, json)?,
                examples: named_examples(doc, entry, &at, json)?,
                schema: entry.get("schema").cloned(),
                content_type,
            });
        }
        let mut headers = Vec::new();
        for (name, header, at) in doc.entries_at(response, &at, "headers")? {
            // A response's own media type is set from the chosen content.
            if name.eq_ignore_ascii_case("content-type") {
                continue;
            }
            // A header's example file is text, not JSON.
            let value = match example_of(doc, header, &at, false)? {
                Some(Example::Json(value)) => scalar(value),
                Some(Example::Raw(bytes)) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                None => None,
            };
            headers.push(Header {
                name,
                value,
                schema: header.get("schema").cloned(),
            });
        }
        answers.push(Answer {
            key,
            media,
            headers,
        });
    }
    Ok(answers)
}

/// A scalar as header text; `None` for what a header cannot hold.
fn scalar(value: Json) -> Option<String> {
    match value {
        Json::String(text) => Some(text),
        value @ (Json::Number(_) | Json::Bool(_)) => Some(value.to_string()),
        _ => None,
    }
}

/// What a `Prefer` header asks for (Prism's `code=404, example=cat,
/// dynamic=true`, and mocklib's `seed=42`).
#[derive(Debug, Default, Clone)]
struct Prefer {
    code: Option<u16>,
    example: Option<String>,
    dynamic: Option<bool>,
    seed: Option<u64>,
}

impl Prefer {
    fn of(args: &ResolverArgs) -> Self {
        let mut prefer = Prefer::default();
        for value in args.request.headers().get_all("prefer") {
            let Ok(value) = value.to_str() else { continue };
            for part in value.split([',', ';']) {
                let Some((key, value)) = part.trim().split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                match key.trim() {
                    "code" => prefer.code = value.parse().ok(),
                    "example" => prefer.example = Some(value.to_owned()),
                    "dynamic" => prefer.dynamic = value.parse().ok(),
                    "seed" => prefer.seed = value.parse().ok(),
                    _ => {}
                }
            }
        }
        // A seed means something only to a dynamic answer: asking for
        // one asks for that too, unless `dynamic=false` says otherwise.
        if prefer.seed.is_some() && prefer.dynamic.is_none() {
            prefer.dynamic = Some(true);
        }
        prefer
    }
}

impl Operation {
    fn answer(&self, args: &ResolverArgs) -> HttpResponse {
        let prefer = Prefer::of(args);
        let report = self.answering.validation == Validation::Report;
        let mut failures = Vec::new();
        if let Some(security) = &self.security {
            if let Err(refusal) = security.check(args) {
                if !report {
                    return self.unauthorized(refusal, &prefer, args);
                }
                failures.extend(refusal.failures);
            }
        }
        if let Some(check) = &self.check {
            let found = check.check(args);
            if !found.is_empty() {
                if !report {
                    return HttpResponse::json(&failures_body(&found)).status(400);
                }
                failures.extend(found);
            }
        }
        let response = self.respond(&prefer, args);
        if failures.is_empty() {
            response
        } else {
            self.reported(response, &failures, args)
        }
    }

    /// The response `prefer` asks for, or a 500 saying why there is none.
    fn respond(&self, prefer: &Prefer, args: &ResolverArgs) -> HttpResponse {
        match self.choose(prefer, args) {
            Ok(response) => response,
            Err(message) => {
                crate::support::log::warn(&format!("openapi: {}: {message}", self.name));
                let failure = Failure {
                    location: "header.prefer".to_owned(),
                    message,
                };
                HttpResponse::json(&failures_body(&[failure])).status(500)
            }
        }
    }

    /// The 401 for a request without the credentials the operation asks
    /// for: the response `Prefer: code=401` would pick (the documented
    /// 401, `4XX` or `default`), else the failures as a validation error
    /// lists them; with the challenges in `WWW-Authenticate`.
    fn unauthorized(&self, refusal: Refusal, prefer: &Prefer, args: &ResolverArgs) -> HttpResponse {
        let asked = Prefer {
            code: Some(401),
            ..prefer.clone()
        };
        let response = self
            .choose(&asked, args)
            .unwrap_or_else(|_| HttpResponse::json(&failures_body(&refusal.failures)).status(401));
        if response
            .headers()
            .contains_key(http::header::WWW_AUTHENTICATE)
        {
            response
        } else {
            response.header("www-authenticate", &refusal.challenges)
        }
    }

    /// `response`, to a request that failed validation or security, as
    /// [`Validation::Report`] sends it: the failures kept with it as
    /// contract findings (the journal entry keeps them, `verify()`
    /// reports them with the request and this handler) and logged.
    ///
    /// Findings rather than strict mode's failures
    /// (`Scope::record_failure`): a resolver has no scope to write to,
    /// findings stay with their request in the journal (and in
    /// `mocklib serve`'s), and they read as `OpenApi::contract()`'s do —
    /// the same pointers for the same failures.
    fn reported(
        &self,
        response: HttpResponse,
        failures: &[Failure],
        args: &ResolverArgs,
    ) -> HttpResponse {
        let listed: Vec<String> = failures
            .iter()
            .map(|failure| format!("{}: {}", failure.location, failure.message))
            .collect();
        crate::support::log::warn(&format!(
            "openapi: {} {} does not match {} ({}), answered as a valid one; verify() reports it: {}",
            args.request.method(),
            args.request.url(),
            self.finding_name,
            self.title,
            listed.join("; ")
        ));
        let findings: Vec<crate::handling::contract::Finding> = failures
            .iter()
            .map(|failure| {
                let mut finding = failure.finding().operation(self.finding_name.clone());
                finding.contract = self.title.to_string();
                finding
            })
            .collect();
        response.extension(crate::handling::contract::Findings(Arc::new(findings)))
    }

    /// The response `prefer` picks, else the default one: static, or
    /// generated for this request when dynamic.
    fn choose(&self, prefer: &Prefer, args: &ResolverArgs) -> Result<HttpResponse, String> {
        let (answer, status) = self.select(prefer)?;
        // A named example is looked for in the media types that have it.
        let having: Vec<&Media> = match &prefer.example {
            Some(name) => answer
                .media
                .iter()
                .filter(|media| media.examples.iter().any(|(n, _)| n == name))
                .collect(),
            None => Vec::new(),
        };
        let candidates = if having.is_empty() {
            answer.media.iter().collect()
        } else {
            having
        };
        // A named example asked for is sent as it is, dynamic or not.
        let dynamic = prefer.example.is_none() && prefer.dynamic.unwrap_or(self.answering.dynamic);
        let seed = dynamic.then(|| self.seed(prefer, args));
        let mut rng = seed.map(Rng::with_seed);
        let mut response = match pick_media(&candidates, args) {
            Some(media) => self.body_of(answer, media, prefer, rng.as_mut())?,
            None => HttpResponse::empty(),
        };
        response = response.status(status);
        for header in &answer.headers {
            let value = match (rng.as_mut(), &header.schema) {
                (Some(rng), Some(schema)) => scalar(generate::dynamic(&self.doc, schema, rng))
                    .or_else(|| header.value.clone()),
                _ => header.value.clone(),
            };
            if let Some(value) = value {
                response = response.header(&header.name, value);
            }
        }
        if let Some(seed) = seed {
            // RFC 7240's answer to `Prefer`: what was applied, with the
            // seed that makes this answer again.
            response = response.header("preference-applied", format!("dynamic=true, seed={seed}"));
        }
        Ok(response)
    }

    /// The seed of a dynamic answer: the request's `seed=`, else the
    /// document's (mixed with the request's method, path and query, so
    /// that `/users/1` and `/users/2` differ but each is the same every
    /// time), else a random one.
    fn seed(&self, prefer: &Prefer, args: &ResolverArgs) -> u64 {
        if let Some(seed) = prefer.seed {
            return seed;
        }
        let Some(seed) = self.answering.seed else {
            return fastrand::u64(..);
        };
        let url = args.request.url();
        // FNV-1a: stable across runs, platforms and Rust versions, which
        // std's hashers do not promise.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let parts = [
            &seed.to_le_bytes()[..],
            args.request.method().as_str().as_bytes(),
            url.path().as_bytes(),
            url.query().unwrap_or_default().as_bytes(),
        ];
        for byte in parts.into_iter().flat_map(|part| part.iter().chain(b"\0")) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash
    }

    /// `media`'s body for `answer`: the named example `prefer` asks for,
    /// else one generated from the schema (dynamic), else the example or
    /// static value; text media types get strings as they are.
    fn body_of(
        &self,
        answer: &Answer,
        media: &Media,
        prefer: &Prefer,
        rng: Option<&mut Rng>,
    ) -> Result<HttpResponse, String> {
        let generated;
        let body = match (&prefer.example, rng, &media.schema) {
            (Some(name), _, _) => Some(
                media
                    .examples
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, value)| value)
                    .ok_or_else(|| {
                        format!("the {} response has no example named {name:?}", answer.key)
                    })?,
            ),
            (None, Some(rng), Some(schema)) => {
                generated = Example::Json(generate::dynamic(&self.doc, schema, rng));
                Some(&generated)
            }
            // Dynamic without a schema: the example, if any.
            (None, _, _) => media.body.as_ref(),
        };
        let bytes = match body {
            Some(Example::Raw(bytes)) => bytes.clone(),
            Some(Example::Json(Json::String(text))) if !is_json(&media.content_type) => {
                text.clone().into()
            }
            Some(Example::Json(value)) => serde_json::to_vec(value).unwrap_or_default().into(),
            None => bytes::Bytes::new(),
        };
        Ok(HttpResponse::new(bytes).header("content-type", &media.content_type))
    }

    /// The documented response `prefer` picks (by code, its range, then
    /// `default`; or by example name), else the default one; and its status.
    fn select(&self, prefer: &Prefer) -> Result<(&Answer, u16), String> {
        if let Some(code) = prefer.code {
            let range = format!("{}XX", code / 100);
            let answer = self
                .find(&code.to_string())
                .or_else(|| {
                    self.answers
                        .iter()
                        .find(|a| a.key.eq_ignore_ascii_case(&range))
                })
                .or_else(|| self.find("default"))
                .ok_or_else(|| format!("no response documented for code {code}"))?;
            return Ok((answer, code));
        }
        let answer = match prefer.example.as_deref() {
            Some(name) => self
                .by_default()
                .into_iter()
                .chain(&self.answers)
                .find(|answer| {
                    answer
                        .media
                        .iter()
                        .any(|m| m.examples.iter().any(|(n, _)| n == name))
                })
                .ok_or_else(|| format!("no response has an example named {name:?}"))?,
            None => self
                .by_default()
                .ok_or("the operation documents no response")?,
        };
        Ok((answer, status_of(&answer.key)))
    }

    fn find(&self, key: &str) -> Option<&Answer> {
        self.answers.iter().find(|answer| answer.key == key)
    }

    /// Prism's default: the lowest 2xx response, else the first documented.
    fn by_default(&self) -> Option<&Answer> {
        self.answers
            .iter()
            .filter(|answer| {
                answer.key != "default" && (200..300).contains(&status_of(&answer.key))
            })
            .min_by_key(|answer| (status_of(&answer.key), answer.key.contains(['X', 'x'])))
            .or_else(|| self.answers.first())
    }
}

/// The status a response key stands for: `404`, `4XX` as 400, `default` as 200.
fn status_of(key: &str) -> u16 {
    if let Ok(code) = key.parse() {
        return code;
    }
    match key.as_bytes() {
        [digit @ b'1'..=b'5', b'X' | b'x', b'X' | b'x'] => u16::from(digit - b'0') * 100,
        _ => 200,
    }
}

/// The media type to answer with: one the request's `Accept` names, else
/// the first JSON one, else the first.
fn pick_media<'a>(media: &[&'a Media], args: &ResolverArgs) -> Option<&'a Media> {
    let accepted: Vec<String> = args
        .request
        .header("accept")
        .unwrap_or_default()
        .split(',')
        .filter_map(|part| part.split(';').next())
        .map(|part| part.trim().to_ascii_lowercase())
        .collect();
    let find = |wanted: &dyn Fn(&Media) -> bool| media.iter().copied().find(|m| wanted(m));
    find(&|m| {
        accepted
            .iter()
            .any(|a| m.content_type.eq_ignore_ascii_case(a))
    })
    .or_else(|| find(&|m| is_json(&m.content_type)))
    .or_else(|| media.first().copied())
}
