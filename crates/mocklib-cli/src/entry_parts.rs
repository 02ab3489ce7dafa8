//! What every kind of handler-file entry shares: the `match:` block
//! (`Conditions`, the matchers of `Handler::when`), `times` (`Expected`),
//! the method and path of the entries that answer HTTP requests, the
//! header check, and the HTTP handler with its conditions and `once`.
//! `handler_file.rs` and each kind's file (`fault_entry.rs`, ...) use
//! them, so the kinds' files need nothing of `handler_file.rs`.

use std::collections::BTreeMap;

use http::{HeaderName, HeaderValue, Method};
use mocklib::Handler;

/// An entry's `match:` block: each field one kind of `mocklib::matchers`
/// condition; all must hold.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Conditions {
    /// Header values, exactly.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Header values, by regular expression.
    #[serde(default)]
    headers_matching: BTreeMap<String, String>,
    /// Headers that must not be there.
    #[serde(default)]
    headers_absent: Vec<String>,
    #[serde(default)]
    query: BTreeMap<String, String>,
    #[serde(default)]
    cookies: BTreeMap<String, String>,
    /// Text fields of a URL-encoded or multipart body.
    #[serde(default)]
    form: BTreeMap<String, String>,
    /// JSON the body holds (a subset).
    json: Option<serde_json::Value>,
    /// Values at JSON paths of the body (`$.user.role: admin`).
    #[serde(default)]
    json_path: BTreeMap<String, serde_json::Value>,
    body_contains: Option<String>,
    bearer: Option<String>,
    basic: Option<BasicCredentials>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BasicCredentials {
    user: String,
    password: String,
}

/// An entry's `times`: a count, or bounds.
#[derive(serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum Expected {
    Exactly(usize),
    Bounds(Bounds),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Bounds {
    at_least: Option<usize>,
    at_most: Option<usize>,
}

impl Expected {
    pub(crate) fn times(&self) -> Result<mocklib::Times, String> {
        Ok(match self {
            Expected::Exactly(count) => mocklib::Times::from(*count),
            Expected::Bounds(Bounds {
                at_least: Some(low),
                at_most: Some(high),
            }) if low <= high => mocklib::Times::from(*low..=*high),
            Expected::Bounds(Bounds {
                at_least: Some(low),
                at_most: Some(high),
            }) => return Err(format!("times: at_least {low} is above at_most {high}")),
            Expected::Bounds(Bounds {
                at_least: Some(low),
                at_most: None,
            }) => mocklib::Times::from(*low..),
            Expected::Bounds(Bounds {
                at_least: None,
                at_most: Some(high),
            }) => mocklib::Times::from(..=*high),
            Expected::Bounds(Bounds {
                at_least: None,
                at_most: None,
            }) => return Err("times: give a count, at_least or at_most".to_owned()),
        })
    }
}

/// Checked at load, so a bad header fails the load, not each request.
pub(crate) fn check_headers(headers: &BTreeMap<String, String>) -> Result<(), String> {
    for (name, value) in headers {
        if HeaderName::try_from(name).is_err() || HeaderValue::try_from(value).is_err() {
            return Err(format!("headers: invalid header {name:?}: {value:?}"));
        }
    }
    Ok(())
}

impl Conditions {
    /// The matchers, or the first that is invalid (field, why).
    pub(crate) fn matchers(self) -> Result<Vec<mocklib::matchers::Matcher>, String> {
        use mocklib::matchers;
        let mut all = Vec::new();
        let pairs = |map: BTreeMap<String, String>| map.into_iter();
        all.extend(pairs(self.headers).map(|(name, value)| matchers::header(&name, value)));
        all.extend(
            pairs(self.headers_matching)
                .map(|(name, pattern)| matchers::header_matches(&name, &pattern)),
        );
        all.extend(
            self.headers_absent
                .iter()
                .map(|name| matchers::header_absent(name)),
        );
        all.extend(pairs(self.query).map(|(name, value)| matchers::query(name, value)));
        all.extend(pairs(self.cookies).map(|(name, value)| matchers::cookie(name, value)));
        all.extend(pairs(self.form).map(|(name, value)| matchers::form_field(name, value)));
        all.extend(self.json.map(matchers::json_body));
        all.extend(
            self.json_path
                .into_iter()
                .map(|(path, value)| matchers::json_path(&path, value)),
        );
        all.extend(self.body_contains.map(matchers::body_contains));
        all.extend(self.bearer.map(matchers::bearer));
        all.extend(
            self.basic
                .map(|basic| matchers::basic(&basic.user, &basic.password)),
        );
        match all.iter().find_map(matchers::Matcher::invalid) {
            Some(why) => Err(format!("match: {why}")),
            None => Ok(all),
        }
    }
}

/// An HTTP handler for `method` (`None`: any) and the pattern `path`,
/// or why the pattern is invalid.
pub(crate) fn http_handler<F, R, M>(
    method: Option<Method>,
    path: String,
    respond: F,
) -> Result<Handler, String>
where
    F: Fn(mocklib::ResolverArgs) -> R + Send + Sync + 'static,
    R: mocklib::resolver::ResolverOutput<M>,
{
    match method {
        Some(method) => mocklib::http::try_on(method, path, respond),
        None => mocklib::http::try_all(path, respond),
    }
    .map_err(|error| error.to_string())
}

/// `handler` with an entry's `match:` conditions, and `.once()` if asked.
pub(crate) fn finish(
    handler: Handler,
    conditions: Option<Conditions>,
    once: bool,
) -> Result<Handler, String> {
    let conditions = conditions.unwrap_or_default().matchers()?;
    let handler = conditions.into_iter().fold(handler, Handler::when);
    Ok(if once { handler.once() } else { handler })
}

/// An HTTP entry's method (`None`: any) and path.
pub(crate) fn method_and_path(
    method: Option<&str>,
    path: Option<String>,
) -> Result<(Option<Method>, String), String> {
    let path = path.ok_or("missing field `path` (or `grpc`, for a gRPC method)")?;
    let method = match method {
        None | Some("ALL" | "all" | "*") => None,
        Some(method) => Some(
            Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                .map_err(|_| format!("method: invalid method {method:?}"))?,
        ),
    };
    Ok((method, path))
}
