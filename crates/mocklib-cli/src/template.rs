//! Response templates of handler-file entries (`template: true`): the
//! body, each string of a `json` body, the header values and the status
//! are rendered per request by minijinja (Jinja2 syntax), from what the
//! request carried.
//!
//! ```yaml
//! - method: GET
//!   path: /users/:id
//!   template: true
//!   json: { id: "{{ request.params.id }}", page: "{{ request.query.page }}", at: "{{ now() }}" }
//! ```
//!
//! The context is `request`: `method`, `url`, `path`, `params` (the path's
//! `:name`s), `query`, `headers` (lower-case names), `cookies`, `body`
//! (text) and `json` (the body parsed, when it is JSON). Functions:
//! `now()` (UTC, RFC 3339), `uuid()` (a random version 4 UUID),
//! `random(min, max)` (an integer in that range, both included) and
//! `fake(kind)` (names, emails, addresses, dates and more, the same for
//! the same request: see `fake_data.rs`). A
//! template that does not compile fails the load, naming the entry and the
//! field; one that fails to render answers a 500 whose body says which and
//! why.

use std::collections::BTreeMap;

use minijinja::{Environment, Value};
use mocklib::request::Cookies;
use mocklib::{HttpResponse, Request, ResolverArgs};

use crate::fake_data;

/// The compiled templates of one entry, by the field they render.
pub(crate) struct Templates {
    env: Environment<'static>,
}

impl Templates {
    pub(crate) fn new() -> Self {
        let mut env = Environment::new();
        env.add_function("now", now);
        env.add_function("uuid", uuid);
        env.add_function("random", random);
        env.add_function("fake", fake_data::fake);
        Templates { env }
    }

    /// Compiles `source` as the template named `field`, or says why not.
    pub(crate) fn add(&mut self, field: String, source: String) -> Result<(), String> {
        fake_data::check_kinds(&source).map_err(|why| format!("{field}: {why}"))?;
        self.env
            .add_template_owned(field.clone(), source)
            .map_err(|error| format!("{field}: not a template: {error}"))
    }

    /// Whether a template named `field` was added.
    pub(crate) fn has(&self, field: &str) -> bool {
        self.env.get_template(field).is_ok()
    }

    /// The template `field` rendered for `context`.
    pub(crate) fn render(&self, field: &str, context: &Value) -> Result<String, String> {
        self.env
            .get_template(field)
            .and_then(|template| template.render(context))
            .map_err(|error| format!("the template of {field} failed: {error:#}"))
    }
}

/// What a template sees of the request.
pub(crate) fn context(args: &ResolverArgs) -> Value {
    let params = args
        .params
        .iter()
        .map(|(k, v)| (k.to_owned(), v.as_str().into_owned()))
        .collect();
    minijinja::context! { request => request_value(&args.request, &args.cookies, params) }
}

/// The `request` a template sees: `method`, `url`, `path`, `params`,
/// `query`, `headers` (lower-case names), `cookies`, `body` and `json`.
/// The other kinds' templates (`graphql`, `sse`, `proxy`) see it too.
pub(crate) fn request_value(
    request: &Request,
    cookies: &Cookies,
    params: BTreeMap<String, String>,
) -> Value {
    let map = |pairs: &mut dyn Iterator<Item = (String, String)>| -> BTreeMap<String, String> {
        pairs.collect()
    };
    let query = map(&mut request
        .url()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned())));
    let headers = map(&mut request.headers().iter().filter_map(|(name, value)| {
        Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
    }));
    let cookies = map(&mut cookies.iter().map(|(k, v)| (k.to_owned(), v.to_owned())));
    let body = String::from_utf8_lossy(request.body()).into_owned();
    let json: Option<serde_json::Value> = serde_json::from_slice(request.body()).ok();
    minijinja::context! {
        method => request.method().as_str(),
        url => request.url().as_str(),
        path => request.url().path(),
        params => params,
        query => query,
        headers => headers,
        cookies => cookies,
        body => body,
        json => Value::from(minijinja::value::Serde(&json)),
    }
}

/// The predicate of an entry's `path`, for [`path_params`].
pub(crate) fn path_predicate(
    path: Option<&str>,
) -> Result<Option<mocklib::matching::Predicate>, String> {
    path.map(|path| mocklib::matching::Predicate::path(path).map_err(|error| error.to_string()))
        .transpose()
}

/// The `:params` `predicate` finds in `request` (none without one). A
/// relative pattern is matched against the request's own origin: only its
/// path matters here.
pub(crate) fn path_params(
    predicate: Option<&mocklib::matching::Predicate>,
    request: &mocklib::Request,
) -> std::collections::BTreeMap<String, String> {
    let origin = request.url().join("/").ok();
    predicate
        .and_then(|predicate| predicate.matches(request, origin.as_ref()))
        .map(|params| {
            params
                .iter()
                .map(|(name, value)| (name.to_owned(), value.as_str().into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// A response saying which template failed and why (a 500, as a resolver
/// that fails gets).
pub(crate) fn failed(why: &str) -> HttpResponse {
    HttpResponse::text(format!("mocklib serve: {why}\n")).status(500)
}

/// Every string of `value` as a template of its own (`json.user.name`,
/// `json.tags[0]`), so the rendered body stays the JSON it was written as.
pub(crate) fn add_json(
    templates: &mut Templates,
    value: &serde_json::Value,
    at: &str,
) -> Result<(), String> {
    match value {
        serde_json::Value::String(text) if text.contains("{{") || text.contains("{%") => {
            templates.add(at.to_owned(), text.clone())
        }
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(index, item)| add_json(templates, item, &format!("{at}[{index}]"))),
        serde_json::Value::Object(fields) => fields
            .iter()
            .try_for_each(|(key, item)| add_json(templates, item, &format!("{at}.{key}"))),
        _ => Ok(()),
    }
}

/// `value` with its templated strings rendered (see [`add_json`]).
pub(crate) fn render_json(
    templates: &Templates,
    value: &serde_json::Value,
    at: &str,
    context: &Value,
) -> Result<serde_json::Value, String> {
    Ok(match value {
        serde_json::Value::String(text) if text.contains("{{") || text.contains("{%") => {
            serde_json::Value::String(templates.render(at, context)?)
        }
        serde_json::Value::Array(items) => serde_json::Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    render_json(templates, item, &format!("{at}[{index}]"), context)
                })
                .collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(fields) => serde_json::Value::Object(
            fields
                .iter()
                .map(|(key, item)| {
                    Ok((
                        key.clone(),
                        render_json(templates, item, &format!("{at}.{key}"), context)?,
                    ))
                })
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// The current time, UTC, RFC 3339 (`2026-11-26T19:30:00Z`).
fn now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The calendar date of a day count since 1970-01-01 (Howard Hinnant's
/// algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A random version 4 UUID.
fn uuid() -> String {
    // "uuid" is one of the kinds: never an error.
    mocklib::fake::Faker::random()
        .value("uuid")
        .unwrap_or_default()
}

/// A random integer from `min` to `max`, both included.
fn random(min: i64, max: i64) -> Result<i64, minijinja::Error> {
    if min > max {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("random({min}, {max}): min is above max"),
        ));
    }
    Ok(fastrand::i64(min..=max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_418), (2025, 11, 26));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn uuids_are_version_4_and_random_stays_in_range() {
        let id = uuid();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_ne!(uuid(), id);
        assert!(
            (0..100)
                .map(|_| random(3, 5).unwrap())
                .all(|n| (3..=5).contains(&n))
        );
        assert!(random(5, 3).is_err());
    }
}
