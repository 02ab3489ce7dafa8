//! One operation as a handler: its responses prepared once, the one to
//! send chosen per request (`Prefer`), the request checked when asked.

use std::sync::Arc;

use http::Method;
use serde_json::Value as Json;
use serde_norway::Value;

use super::OpenApiError;
use super::document::{Document, child, entries, scalar_text};
use super::generate::{example_of, named_examples};
use super::validate::{Compiler, Param, RequestCheck, failures_body, is_json};
use crate::handler::Handler;
use crate::resolver::ResolverArgs;
use crate::response::HttpResponse;

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
    headers: Vec<(String, String)>,
}

/// One media type of a response.
#[derive(Debug)]
struct Media {
    content_type: String,
    /// What is sent unless an example is asked for.
    body: Option<Json>,
    examples: Vec<(String, Json)>,
}

/// Everything a handler needs to answer for one operation.
struct Operation {
    /// `GET /pets`, for messages.
    name: String,
    answers: Vec<Answer>,
    check: Option<Arc<RequestCheck>>,
}

/// The handlers for every operation of `doc`, their URLs under `server`.
pub(crate) fn handlers(
    doc: &Document,
    server: &super::Server,
    validate: bool,
) -> Result<Vec<Handler>, OpenApiError> {
    let compiler = if validate {
        Some(Compiler::new(doc)?)
    } else {
        None
    };
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
        for (method_name, operation) in entries(Some(item)) {
            if METHODS.contains(&method_name.as_str()) {
                handlers.push(at.handler(
                    doc,
                    server,
                    compiler.as_ref(),
                    &method_name,
                    operation,
                )?);
            }
        }
    }
    Ok(handlers)
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
        doc: &'a Document,
        server: &super::Server,
        compiler: Option<&Compiler>,
        method_name: &str,
        operation: &'a Value,
    ) -> Result<Handler, OpenApiError> {
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
        let check = match compiler {
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
        let url = format!(
            "{}{}",
            server.url_for(&[operation, self.item]),
            self.pattern
        );
        let operation = Arc::new(Operation {
            name: format!("{method} {}", self.path),
            answers: answers(doc, operation, &pointer)?,
            check,
        });
        crate::http::try_on(method, url.as_str(), move |args: ResolverArgs| {
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
    let responses_pointer = child(pointer, "responses");
    let mut answers = Vec::new();
    for (key, response) in entries(operation.get("responses")) {
        let (response, _) = doc.resolve(response, child(&responses_pointer, &key))?;
        let media = entries(response.get("content"))
            .map(|(content_type, entry)| Media {
                body: example_of(doc, entry),
                examples: named_examples(doc, entry),
                content_type,
            })
            .collect();
        let mut headers = Vec::new();
        for (name, header) in entries(response.get("headers")) {
            let Ok((header, _)) = doc.resolve(header, String::new()) else {
                continue;
            };
            let value = match example_of(doc, header) {
                Some(Json::String(text)) => text,
                Some(value @ (Json::Number(_) | Json::Bool(_))) => value.to_string(),
                _ => continue,
            };
            // A response's own media type is set from the chosen content.
            if !name.eq_ignore_ascii_case("content-type") {
                headers.push((name, value));
            }
        }
        answers.push(Answer {
            key,
            media,
            headers,
        });
    }
    Ok(answers)
}

/// What a `Prefer` header asks for (Prism's `code=404, example=cat`).
#[derive(Debug, Default)]
struct Prefer {
    code: Option<u16>,
    example: Option<String>,
}

impl Prefer {
    fn of(args: &ResolverArgs) -> Self {
        let mut prefer = Prefer::default();
        for value in args.request.headers().get_all("prefer") {
            let Ok(value) = value.to_str() else { continue };
            for part in value.split([',', ';']) {
                match part.trim().split_once('=') {
                    Some(("code", code)) => {
                        prefer.code = code.trim().trim_matches('"').parse().ok()
                    }
                    Some(("example", name)) => {
                        prefer.example = Some(name.trim().trim_matches('"').to_owned())
                    }
                    _ => {}
                }
            }
        }
        prefer
    }
}

impl Operation {
    fn answer(&self, args: &ResolverArgs) -> HttpResponse {
        if let Some(check) = &self.check {
            let failures = check.check(args);
            if !failures.is_empty() {
                return HttpResponse::json(&failures_body(&failures)).status(400);
            }
        }
        let prefer = Prefer::of(args);
        match self.choose(&prefer, args) {
            Ok(response) => response,
            Err(message) => {
                crate::log::warn(&format!("openapi: {}: {message}", self.name));
                let failure = super::validate::Failure {
                    location: "header.prefer".to_owned(),
                    message,
                };
                HttpResponse::json(&failures_body(&[failure])).status(500)
            }
        }
    }

    /// The response `prefer` asks for, else the default one.
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
        let mut response = match pick_media(&candidates, args) {
            Some(media) => body_of(answer, media, prefer)?,
            None => HttpResponse::empty(),
        };
        response = response.status(status);
        for (name, value) in &answer.headers {
            response = response.header(name, value);
        }
        Ok(response)
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

/// `media`'s body for `answer`: the named example `prefer` asks for, else
/// the example or generated value; text media types get strings as they are.
fn body_of(answer: &Answer, media: &Media, prefer: &Prefer) -> Result<HttpResponse, String> {
    let body = match &prefer.example {
        Some(name) => Some(
            media
                .examples
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, value)| value)
                .ok_or_else(|| {
                    format!("the {} response has no example named {name:?}", answer.key)
                })?,
        ),
        None => media.body.as_ref(),
    };
    let bytes = match body {
        Some(Json::String(text)) if !is_json(&media.content_type) => text.clone().into_bytes(),
        Some(value) => serde_json::to_vec(value).unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(HttpResponse::new(bytes).header("content-type", &media.content_type))
}
