//! Declarative request matchers: conditions on headers, the query, cookies,
//! credentials and the body that a handler adds to its predicate with
//! [`Handler::when`](crate::Handler::when).
//!
//! A matcher is data, not a closure, so a request that fails one is
//! explained: the unhandled-request warning, strict mode and `verify()` say
//! which condition of the closest handlers failed, with what was expected
//! and what was received (`header "x-api-key": expected "secret", received
//! none`; for JSON bodies, the path where they part ways). The handler
//! index still narrows by method and path first, so lookup stays flat in
//! the number of handlers.
//!
//! ```
//! use mocklib::matchers::{any_of, bearer, header, json_body, query};
//! use mocklib::{http, HttpResponse, node::setup_server};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = setup_server([
//!     http::post("https://api.example.com/users", |_| HttpResponse::text("admin created").status(201))
//!         .when(header("x-api-key", "secret"))
//!         .when(json_body(json!({ "role": "admin" }))),
//!     http::get("https://api.example.com/users", |_| HttpResponse::text("page 2"))
//!         .when(any_of([query("page", "2"), bearer("t0ken")])),
//! ]);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let created = client
//!     .post("https://api.example.com/users")
//!     .header("x-api-key", "secret")
//!     .json(&json!({ "name": "Kate", "role": "admin" }))
//!     .send()
//!     .await?;
//! assert_eq!(created.status(), 201);
//! let page = client.get("https://api.example.com/users?page=2").send().await?;
//! assert_eq!(page.text().await?, "page 2");
//! # Ok(())
//! # }
//! ```
//!
//! | Matcher | Holds when |
//! |---|---|
//! | [`header`]`(name, value)` | a value of the header equals `value` (names are case-insensitive) |
//! | [`header_matches`]`(name, pattern)` | a value of the header matches the regular expression (regex-lite syntax; anchor with `^…$`) |
//! | [`header_present`]`(name)`, [`header_absent`]`(name)` | the header is there, or not |
//! | [`query`]`(name, value)` | a value of the query parameter equals `value` |
//! | [`cookie`]`(name, value)` | the cookie has that value |
//! | [`bearer`]`(token)`, [`basic`]`(user, password)` | the `Authorization` header carries those credentials |
//! | [`json_body`]`(value)` | the body is JSON and holds `value`: every key of an expected object (others may be there too), arrays element by element, other values equal |
//! | [`json_path`]`(path, value)` | the body is JSON and the value at `path` (`$.user.roles[0]`) holds `value`, as above |
//! | [`body_contains`]`(text)`, [`body_equals`]`(bytes)` | the raw body contains `text`, or is exactly `bytes` |
//! | [`form_field`]`(name, value)` | the body is a form (URL-encoded or multipart) whose text field has that value |
//! | [`all_of`], [`any_of`], [`not`] | all, any or none of the given matchers hold |

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::message::cookies::Cookies;
use crate::message::request::Request;

/// A condition on a request, made by the functions of the
/// [module](self) and added to a handler with
/// [`Handler::when`](crate::Handler::when).
#[derive(Clone, Debug)]
pub struct Matcher(Arc<Kind>);

#[derive(Debug)]
enum Kind {
    Header(String, Expect),
    Query(String, String),
    Cookie(String, String),
    Authorization(String, &'static str),
    JsonBody(Value),
    JsonPath(String, Vec<Step>, Value),
    BodyContains(String),
    BodyEquals(bytes::Bytes),
    FormField(String, String),
    AllOf(Vec<Matcher>),
    AnyOf(Vec<Matcher>),
    Not(Matcher),
    /// An invalid argument (a bad regular expression or JSON path): fails
    /// every request, saying why.
    Invalid(String),
}

#[derive(Debug)]
enum Expect {
    Equals(String),
    Matches(regex_lite::Regex),
    Present,
    Absent,
}

/// One step of a JSON path.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Why a request failed a matcher: the condition, what it expected and
/// what the request had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// What was checked: `header "x-api-key"`, `JSON body at $.role`.
    pub what: String,
    /// What the matcher expected.
    pub expected: String,
    /// What the request had (`none` when it had nothing there).
    pub received: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, received {}",
            self.what, self.expected, self.received
        )
    }
}

impl std::error::Error for Mismatch {}

/// What matchers read of one request, each made once however many
/// matchers and handlers read it.
#[derive(Default)]
pub(crate) struct Inputs {
    json: OnceLock<Result<Value, String>>,
}

impl Inputs {
    fn json(&self, request: &Request) -> Result<&Value, Mismatch> {
        self.json
            .get_or_init(|| {
                serde_json::from_slice(request.body()).map_err(|error| match request.body().len() {
                    0 => "an empty body".to_owned(),
                    _ => format!("a body that is not JSON ({error})"),
                })
            })
            .as_ref()
            .map_err(|received| Mismatch {
                what: "JSON body".to_owned(),
                expected: "a JSON body".to_owned(),
                received: received.clone(),
            })
    }
}

fn matcher(kind: Kind) -> Matcher {
    Matcher(Arc::new(kind))
}

/// A value of header `name` equals `value`.
pub fn header(name: &str, value: impl Into<String>) -> Matcher {
    matcher(Kind::Header(
        name.to_ascii_lowercase(),
        Expect::Equals(value.into()),
    ))
}

/// A value of header `name` matches `pattern`, a regular expression
/// (regex-lite syntax; anchor it with `^…$` to match a whole value). An
/// invalid pattern makes a matcher that fails every request, saying why.
pub fn header_matches(name: &str, pattern: &str) -> Matcher {
    match regex_lite::Regex::new(pattern) {
        Ok(regex) => matcher(Kind::Header(
            name.to_ascii_lowercase(),
            Expect::Matches(regex),
        )),
        Err(error) => matcher(Kind::Invalid(format!(
            "header_matches({name:?}, {pattern:?}): not a regular expression: {error}"
        ))),
    }
}

/// Header `name` is there, whatever its value.
pub fn header_present(name: &str) -> Matcher {
    matcher(Kind::Header(name.to_ascii_lowercase(), Expect::Present))
}

/// Header `name` is not there.
pub fn header_absent(name: &str) -> Matcher {
    matcher(Kind::Header(name.to_ascii_lowercase(), Expect::Absent))
}

/// A value of query parameter `name` equals `value` (both percent-decoded).
pub fn query(name: impl Into<String>, value: impl Into<String>) -> Matcher {
    matcher(Kind::Query(name.into(), value.into()))
}

/// Cookie `name` has the value `value`.
pub fn cookie(name: impl Into<String>, value: impl Into<String>) -> Matcher {
    matcher(Kind::Cookie(name.into(), value.into()))
}

/// `Authorization: Bearer <token>`.
pub fn bearer(token: impl Into<String>) -> Matcher {
    matcher(Kind::Authorization(token.into(), "Bearer"))
}

/// `Authorization: Basic` with `user` and `password`.
pub fn basic(user: &str, password: &str) -> Matcher {
    matcher(Kind::Authorization(
        crate::support::base64::encode(format!("{user}:{password}").as_bytes()),
        "Basic",
    ))
}

/// The body is JSON holding `expected`: every key of an expected object
/// (the body's object may have more), arrays element by element (the same
/// length), any other value equal.
pub fn json_body(expected: impl serde::Serialize) -> Matcher {
    match serde_json::to_value(expected) {
        Ok(value) => matcher(Kind::JsonBody(value)),
        Err(error) => matcher(Kind::Invalid(format!("json_body: {error}"))),
    }
}

/// The body is JSON and the value at `path` holds `expected` (as in
/// [`json_body`]). A path is `$` followed by `.key` and `[index]` steps:
/// `$.user.roles[0]`. An invalid path makes a matcher that fails every
/// request, saying why.
pub fn json_path(path: &str, expected: impl serde::Serialize) -> Matcher {
    let value = match serde_json::to_value(expected) {
        Ok(value) => value,
        Err(error) => return matcher(Kind::Invalid(format!("json_path({path:?}): {error}"))),
    };
    match parse_path(path) {
        Ok(steps) => matcher(Kind::JsonPath(path.to_owned(), steps, value)),
        Err(error) => matcher(Kind::Invalid(format!("json_path({path:?}): {error}"))),
    }
}

/// The raw body contains `text`.
pub fn body_contains(text: impl Into<String>) -> Matcher {
    matcher(Kind::BodyContains(text.into()))
}

/// The raw body is exactly `bytes`.
pub fn body_equals(bytes: impl Into<bytes::Bytes>) -> Matcher {
    matcher(Kind::BodyEquals(bytes.into()))
}

/// The body is a form (URL-encoded or multipart) whose text field `name`
/// has the value `value`.
pub fn form_field(name: impl Into<String>, value: impl Into<String>) -> Matcher {
    matcher(Kind::FormField(name.into(), value.into()))
}

/// Every one of `matchers` holds.
pub fn all_of(matchers: impl IntoIterator<Item = Matcher>) -> Matcher {
    matcher(Kind::AllOf(matchers.into_iter().collect()))
}

/// At least one of `matchers` holds.
pub fn any_of(matchers: impl IntoIterator<Item = Matcher>) -> Matcher {
    matcher(Kind::AnyOf(matchers.into_iter().collect()))
}

/// `matcher` does not hold.
pub fn not(matcher: Matcher) -> Matcher {
    self::matcher(Kind::Not(matcher))
}

fn quoted(text: &str) -> String {
    format!("{text:?}")
}

fn none() -> String {
    "none".to_owned()
}

impl Matcher {
    /// Whether `request` meets this condition, or why not.
    ///
    /// ```
    /// use mocklib::matchers::header;
    ///
    /// let request = mocklib::Request::new(http::Method::GET, "https://api.example.com/".parse()?);
    /// let mismatch = header("x-api-key", "secret").check(&request).unwrap_err();
    /// assert_eq!(mismatch.to_string(), r#"header "x-api-key": expected "secret", received none"#);
    /// # Ok::<(), url::ParseError>(())
    /// ```
    pub fn check(&self, request: &Request) -> Result<(), Mismatch> {
        let cookies = OnceLock::new();
        let cookies = || cookies.get_or_init(|| Cookies::from_headers(request.headers()));
        self.check_with(request, &Inputs::default(), &cookies)
    }

    /// Why this matcher can never hold, when it was made with an invalid
    /// argument (a regular expression or JSON path that does not parse),
    /// so that a caller building matchers from a file can refuse it at
    /// once; `None` for a valid one, combinators included when all their
    /// parts are valid.
    ///
    /// ```
    /// use mocklib::matchers::{header_matches, json_path};
    ///
    /// assert!(header_matches("accept", "^application/").invalid().is_none());
    /// let matcher = json_path("user.name", "Kate");
    /// let why = matcher.invalid().unwrap();
    /// assert!(why.contains("starts with `$`"), "{why}");
    /// ```
    pub fn invalid(&self) -> Option<&str> {
        match &*self.0 {
            Kind::Invalid(why) => Some(why),
            Kind::AllOf(parts) | Kind::AnyOf(parts) => parts.iter().find_map(Matcher::invalid),
            Kind::Not(inner) => inner.invalid(),
            _ => None,
        }
    }

    /// [`check`](Self::check), with what the request's lookup made once
    /// already.
    pub(crate) fn check_with<'c>(
        &self,
        request: &Request,
        inputs: &Inputs,
        cookies: &dyn Fn() -> &'c Cookies,
    ) -> Result<(), Mismatch> {
        match &*self.0 {
            Kind::Header(name, expect) => check_header(request, name, expect),
            Kind::Query(name, value) => {
                let values: Vec<String> = request
                    .url()
                    .query_pairs()
                    .filter(|(key, _)| key == name)
                    .map(|(_, value)| value.into_owned())
                    .collect();
                check_values(&format!("query parameter {}", quoted(name)), value, &values)
            }
            Kind::Cookie(name, value) => {
                let values: Vec<String> =
                    cookies().get(name).map(str::to_owned).into_iter().collect();
                check_values(&format!("cookie {}", quoted(name)), value, &values)
            }
            Kind::Authorization(credential, scheme) => {
                let received = request.header("authorization");
                let expected = format!("{scheme} {credential}");
                match received {
                    Some(value)
                        if scheme_and_rest(value) == Some((scheme, credential.as_str())) =>
                    {
                        Ok(())
                    }
                    _ => Err(Mismatch {
                        what: "authorization".to_owned(),
                        expected: match *scheme {
                            "Basic" => "Basic credentials as given".to_owned(),
                            _ => quoted(&expected),
                        },
                        received: received.map_or_else(none, |value| match *scheme {
                            // Never print a password back.
                            "Basic" => "other credentials".to_owned(),
                            _ => quoted(value),
                        }),
                    }),
                }
            }
            Kind::JsonBody(expected) => {
                let body = inputs.json(request)?;
                json_subset(expected, body, &mut "$".to_owned())
            }
            Kind::JsonPath(path, steps, expected) => {
                let body = inputs.json(request)?;
                let mut at = "$".to_owned();
                let mut value = body;
                for step in steps {
                    let next = match step {
                        Step::Key(key) => {
                            at.push('.');
                            at.push_str(key);
                            value.get(key)
                        }
                        Step::Index(index) => {
                            at.push_str(&format!("[{index}]"));
                            value.get(index)
                        }
                    };
                    value = next.ok_or_else(|| Mismatch {
                        what: format!("JSON body at {path}"),
                        expected: format!("a value at {at}"),
                        received: none(),
                    })?;
                }
                json_subset(expected, value, &mut at)
            }
            Kind::BodyContains(text) => {
                let body = request.body();
                let found = body
                    .windows(text.len().max(1))
                    .any(|w| w == text.as_bytes())
                    || text.is_empty();
                found.then_some(()).ok_or_else(|| Mismatch {
                    what: "body".to_owned(),
                    expected: format!("to contain {}", quoted(text)),
                    received: describe_body(body),
                })
            }
            Kind::BodyEquals(bytes) => {
                (request.body() == bytes)
                    .then_some(())
                    .ok_or_else(|| Mismatch {
                        what: "body".to_owned(),
                        expected: describe_body(bytes),
                        received: describe_body(request.body()),
                    })
            }
            Kind::FormField(name, value) => {
                let what = format!("form field {}", quoted(name));
                match request.form() {
                    Ok(form) => {
                        let values: Vec<String> =
                            form.get(name).map(str::to_owned).into_iter().collect();
                        check_values(&what, value, &values)
                    }
                    Err(error) => Err(Mismatch {
                        what,
                        expected: quoted(value),
                        received: format!("no form ({error})"),
                    }),
                }
            }
            Kind::AllOf(all) => all
                .iter()
                .try_for_each(|matcher| matcher.check_with(request, inputs, cookies)),
            Kind::AnyOf(any) => {
                let mut failures = Vec::new();
                for matcher in any {
                    match matcher.check_with(request, inputs, cookies) {
                        Ok(()) => return Ok(()),
                        Err(mismatch) => failures.push(mismatch.to_string()),
                    }
                }
                Err(Mismatch {
                    what: "any of".to_owned(),
                    expected: format!("one of {} conditions", any.len()),
                    received: format!("none held: {}", failures.join("; ")),
                })
            }
            Kind::Not(inner) => match inner.check_with(request, inputs, cookies) {
                Err(_) => Ok(()),
                Ok(()) => Err(Mismatch {
                    what: "not".to_owned(),
                    expected: format!("not {inner}"),
                    received: "a request that meets it".to_owned(),
                }),
            },
            Kind::Invalid(why) => Err(Mismatch {
                what: "an invalid matcher".to_owned(),
                expected: why.clone(),
                received: "any request".to_owned(),
            }),
        }
    }
}

impl fmt::Display for Matcher {
    /// The condition, as a line of a "did you mean" message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |matchers: &[Matcher], separator: &str| {
            matchers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(separator)
        };
        match &*self.0 {
            Kind::Header(name, Expect::Equals(value)) => write!(f, "header {name:?} = {value:?}"),
            Kind::Header(name, Expect::Matches(regex)) => {
                write!(f, "header {name:?} ~ /{}/", regex.as_str())
            }
            Kind::Header(name, Expect::Present) => write!(f, "header {name:?} present"),
            Kind::Header(name, Expect::Absent) => write!(f, "header {name:?} absent"),
            Kind::Query(name, value) => write!(f, "query {name:?} = {value:?}"),
            Kind::Cookie(name, value) => write!(f, "cookie {name:?} = {value:?}"),
            Kind::Authorization(_, scheme) => write!(f, "{scheme} credentials"),
            Kind::JsonBody(value) => write!(f, "JSON body holding {value}"),
            Kind::JsonPath(path, _, value) => write!(f, "JSON at {path} holding {value}"),
            Kind::BodyContains(text) => write!(f, "body containing {text:?}"),
            Kind::BodyEquals(bytes) => write!(f, "body = {}", describe_body(bytes)),
            Kind::FormField(name, value) => write!(f, "form field {name:?} = {value:?}"),
            Kind::AllOf(all) => write!(f, "all of ({})", join(all, ", ")),
            Kind::AnyOf(any) => write!(f, "any of ({})", join(any, ", ")),
            Kind::Not(inner) => write!(f, "not ({inner})"),
            Kind::Invalid(why) => write!(f, "invalid: {why}"),
        }
    }
}

fn check_header(request: &Request, name: &str, expect: &Expect) -> Result<(), Mismatch> {
    let values: Vec<&str> = request
        .headers()
        .get_all(name)
        .iter()
        .map(|value| value.to_str().unwrap_or("<not visible ASCII>"))
        .collect();
    let what = format!("header {}", quoted(name));
    let received = || match values.as_slice() {
        [] => none(),
        [one] => quoted(one),
        several => format!("{several:?}"),
    };
    let holds = match expect {
        Expect::Equals(expected) => values.iter().any(|value| value == expected),
        Expect::Matches(regex) => values.iter().any(|value| regex.is_match(value)),
        Expect::Present => !values.is_empty(),
        Expect::Absent => values.is_empty(),
    };
    holds.then_some(()).ok_or_else(|| Mismatch {
        what,
        expected: match expect {
            Expect::Equals(expected) => quoted(expected),
            Expect::Matches(regex) => format!("a value matching /{}/", regex.as_str()),
            Expect::Present => "the header".to_owned(),
            Expect::Absent => none(),
        },
        received: received(),
    })
}

/// `expected` among `values`, or a mismatch of `what`.
fn check_values(what: &str, expected: &str, values: &[String]) -> Result<(), Mismatch> {
    if values.iter().any(|value| value == expected) {
        return Ok(());
    }
    Err(Mismatch {
        what: what.to_owned(),
        expected: quoted(expected),
        received: match values {
            [] => none(),
            [one] => quoted(one),
            several => format!("{several:?}"),
        },
    })
}

/// An `Authorization` value's scheme (case-insensitive, as RFC 9110 says)
/// and the rest.
fn scheme_and_rest(value: &str) -> Option<(&'static str, &str)> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    let scheme = ["Bearer", "Basic"]
        .into_iter()
        .find(|known| known.eq_ignore_ascii_case(scheme))?;
    Some((scheme, rest.trim()))
}

/// Whether `actual` holds `expected` (see [`json_body`]); `at` is the path
/// so far, named in the mismatch.
fn json_subset(expected: &Value, actual: &Value, at: &mut String) -> Result<(), Mismatch> {
    let differ = |at: &str| Mismatch {
        what: format!("JSON body at {at}"),
        expected: expected.to_string(),
        received: actual.to_string(),
    };
    match (expected, actual) {
        (Value::Object(expected), Value::Object(actual)) => {
            for (key, value) in expected {
                let length = at.len();
                at.push('.');
                at.push_str(key);
                match actual.get(key) {
                    Some(found) => json_subset(value, found, at)?,
                    None => {
                        return Err(Mismatch {
                            what: format!("JSON body at {at}"),
                            expected: value.to_string(),
                            received: none(),
                        });
                    }
                }
                at.truncate(length);
            }
            Ok(())
        }
        (Value::Array(expected_items), Value::Array(actual_items)) => {
            if expected_items.len() != actual_items.len() {
                return Err(Mismatch {
                    what: format!("JSON body at {at}"),
                    expected: format!("{} items", expected_items.len()),
                    received: format!("{} items", actual_items.len()),
                });
            }
            for (index, (value, found)) in expected_items.iter().zip(actual_items).enumerate() {
                let length = at.len();
                at.push_str(&format!("[{index}]"));
                json_subset(value, found, at)?;
                at.truncate(length);
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        _ => Err(differ(at)),
    }
}

/// `$`, then `.key` and `[index]` steps.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let rest = path
        .strip_prefix('$')
        .ok_or("a JSON path starts with `$`")?;
    let mut steps = Vec::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((position, c)) = chars.next() {
        match c {
            '.' => {
                let mut key = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    key.push(c);
                    chars.next();
                }
                if key.is_empty() {
                    return Err(format!("an empty key at position {}", position + 1));
                }
                steps.push(Step::Key(key));
            }
            '[' => {
                let mut digits = String::new();
                loop {
                    match chars.next() {
                        Some((_, ']')) => break,
                        Some((_, c)) if c.is_ascii_digit() => digits.push(c),
                        _ => {
                            return Err(format!(
                                "`[` at position {} is not followed by an index and `]`",
                                position + 1
                            ));
                        }
                    }
                }
                let index = digits
                    .parse()
                    .map_err(|_| format!("no index at position {}", position + 2))?;
                steps.push(Step::Index(index));
            }
            _ => {
                return Err(format!(
                    "{c:?} at position {} (steps are `.key` and `[index]`)",
                    position + 1
                ));
            }
        }
    }
    Ok(steps)
}

/// A body as a mismatch shows it: its text when short and printable.
fn describe_body(body: &[u8]) -> String {
    match std::str::from_utf8(body) {
        Ok("") => "an empty body".to_owned(),
        Ok(text) if text.len() <= 200 && !text.chars().any(char::is_control) => quoted(text),
        _ => format!("{} bytes", body.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(headers: &[(&str, &str)], body: &str) -> Request {
        let mut map = http::HeaderMap::new();
        for (name, value) in headers {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        Request::from_parts(
            http::Method::POST,
            "https://api.example.com/users?page=2&tag=a&tag=b"
                .parse()
                .unwrap(),
            map,
            bytes::Bytes::copy_from_slice(body.as_bytes()),
        )
    }

    fn says(matcher: &Matcher, request: &Request) -> String {
        matcher.check(request).unwrap_err().to_string()
    }

    #[test]
    fn headers_query_and_cookies() {
        let r = request(
            &[
                ("X-Api-Key", "secret"),
                ("cookie", "session=abc; theme=dark"),
            ],
            "",
        );
        assert!(header("x-api-key", "secret").check(&r).is_ok());
        assert_eq!(
            says(&header("x-api-key", "other"), &r),
            r#"header "x-api-key": expected "other", received "secret""#
        );
        assert!(header_matches("x-api-key", "^sec").check(&r).is_ok());
        assert!(header_present("X-API-KEY").check(&r).is_ok());
        assert_eq!(
            says(&header_absent("x-api-key"), &r),
            r#"header "x-api-key": expected none, received "secret""#
        );
        assert!(query("tag", "b").check(&r).is_ok());
        assert_eq!(
            says(&query("page", "3"), &r),
            r#"query parameter "page": expected "3", received "2""#
        );
        assert!(cookie("theme", "dark").check(&r).is_ok());
        assert_eq!(
            says(&cookie("lang", "en"), &r),
            r#"cookie "lang": expected "en", received none"#
        );
        assert!(says(&header_matches("x", "(unclosed"), &r).contains("not a regular expression"));
    }

    #[test]
    fn credentials_never_print_a_password() {
        let basic_ok = format!("Basic {}", crate::support::base64::encode(b"kate:pw"));
        let r = request(&[("authorization", &basic_ok)], "");
        assert!(basic("kate", "pw").check(&r).is_ok());
        let wrong = says(&basic("kate", "nope"), &r);
        assert_eq!(
            wrong,
            "authorization: expected Basic credentials as given, received other credentials"
        );
        let r = request(&[("authorization", "bearer t0ken")], "");
        assert!(bearer("t0ken").check(&r).is_ok());
        assert_eq!(
            says(&bearer("x"), &r),
            r#"authorization: expected "Bearer x", received "bearer t0ken""#
        );
    }

    #[test]
    fn json_bodies_are_matched_as_subsets_and_mismatches_name_the_path() {
        let r = request(
            &[],
            r#"{"user":{"name":"Kate","roles":["admin","dev"]},"n":1}"#,
        );
        assert!(
            json_body(json!({"user": {"name": "Kate"}}))
                .check(&r)
                .is_ok()
        );
        assert_eq!(
            says(&json_body(json!({"user": {"roles": ["admin", "ops"]}})), &r),
            r#"JSON body at $.user.roles[1]: expected "ops", received "dev""#
        );
        assert_eq!(
            says(&json_body(json!({"user": {"age": 3}})), &r),
            "JSON body at $.user.age: expected 3, received none"
        );
        assert!(json_path("$.user.roles[0]", "admin").check(&r).is_ok());
        assert_eq!(
            says(&json_path("$.user.roles[5]", "admin"), &r),
            "JSON body at $.user.roles[5]: expected a value at $.user.roles[5], received none"
        );
        assert!(says(&json_path("user", 1), &r).contains("starts with `$`"));
        assert!(says(&json_path("$.a[x]", 1), &r).contains("position 3"));
        let not_json = request(&[], "hello");
        assert!(
            says(&json_body(json!({})), &not_json)
                .starts_with("JSON body: expected a JSON body, received a body that is not JSON")
        );
    }

    #[test]
    fn bodies_forms_and_combinators() {
        let r = request(
            &[("content-type", "application/x-www-form-urlencoded")],
            "name=Kate&role=admin",
        );
        assert!(body_contains("role=admin").check(&r).is_ok());
        assert!(body_equals("name=Kate&role=admin").check(&r).is_ok());
        assert!(form_field("name", "Kate").check(&r).is_ok());
        assert_eq!(
            says(&form_field("name", "Ann"), &r),
            r#"form field "name": expected "Ann", received "Kate""#
        );
        assert!(
            all_of([body_contains("Kate"), form_field("role", "admin")])
                .check(&r)
                .is_ok()
        );
        assert!(
            any_of([body_contains("nope"), form_field("role", "admin")])
                .check(&r)
                .is_ok()
        );
        let none_held = says(&any_of([body_contains("x1"), body_contains("x2")]), &r);
        assert!(
            none_held.contains("none held") && none_held.contains("x2"),
            "{none_held}"
        );
        assert!(not(body_contains("nope")).check(&r).is_ok());
        assert_eq!(
            says(&not(body_contains("Kate")), &r),
            r#"not: expected not body containing "Kate", received a request that meets it"#
        );
    }
}
