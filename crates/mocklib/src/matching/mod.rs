//! Request predicates: which requests a handler answers.
//!
//! A predicate is one of:
//!
//! | Predicate | Example | Matches |
//! |---|---|---|
//! | relative path | `"/posts/:id"` | that path on any origin, or on the base URL's origin when one is known |
//! | absolute URL | `"https://api.example.com/user"` | that scheme, host, port and path |
//! | host parameters | `"https://:tenant.example.com/users/:id"` | any one label there; `tenant` and `id` become params |
//! | wildcard | `"*"`, `"*/user"`, `"https://*.example.com/*"` | `*` matches anything, including `/` |
//! | [`regex::Regex`](https://docs.rs/regex/1/regex/struct.Regex.html) (feature `regex`) | `Regex::new(r"/posts/(?<id>\d+)$")` | the clean URL (`origin` + path); named groups become params |
//! | [`Predicate::custom`] | `Predicate::custom(\|req\| req.header("x-mock").is_some())` | whatever the closure says |
//!
//! Path rules follow Mock Service Worker 2.x (path-to-regexp v6): matching is
//! case-insensitive; a trailing slash on the request is tolerated, one on the
//! predicate is required; the request's query string and hash are ignored;
//! `:name?`, `:name*` and `:name+` make a parameter optional or repeating;
//! unnamed `*` captures are the params `"0"`, `"1"`, …; values are
//! percent-decoded. A predicate carrying a `?query` is accepted with a warning
//! (match on the path and read `request.url().query_pairs()` instead).
//!
//! **Parameters in the host.** As in MSW, an absolute URL may name parts of
//! its host. Each `:name` there matches one label — a whole one
//! (`https://:tenant.example.com`, `https://api.:region.example.com`) or the
//! rest of one (`https://cdn-:zone.example.com`) — and never a `.`, the port
//! or the path; `*` matches any run of labels and `:*` any port. After a `.`
//! a host parameter may be optional (`https://api.:region?.example.com` also
//! matches `api.example.com`) or repeated (`:labels+`, a list), and
//! `:name(regex)` gives it a pattern of its own (`:sub(.+)` spans labels).
//!
//! ```
//! use mocklib::{http, node::setup_server, HttpResponse, front_door::Outcome, Request};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = setup_server([http::get("https://:tenant.example.com/users/:id", |args| {
//!     HttpResponse::text(format!("user {} of {}", &args.params["id"], &args.params["tenant"]))
//! })]);
//! server.listen();
//! let url = "https://acme.example.com/users/7".parse().unwrap();
//! let outcome = server.handle(Request::new(::http::Method::GET, url), None).await;
//! let Outcome::Mocked(response) = outcome else { panic!("not mocked") };
//! assert_eq!(response.body(), "user 7 of acme");
//! # }
//! ```
//!
//! Where MSW differs: its single regex over the whole URL lets a parameter
//! that starts the host swallow dots and even the port (`https://:host/x`
//! matches `https://localhost:3000/x` with `host = "localhost:3000"`), while
//! one after a `.` cannot contain a dot. Here every host parameter is one
//! label and the port is always compared on its own. A name used in the host
//! may appear nowhere else in the pattern, and the port is digits or `*`:
//! `http://localhost::port` and `http://localhost:port` are errors.
//!
//! **Relative predicates and the base URL.** A relative predicate matches
//! against the base URL when one is known — the listener's own origin when a
//! request arrives at it directly, or [`ListenOptions::base_url`] — and
//! otherwise against the path of a request to any origin. (MSW in Node.js has no
//! base URL and never matches relative paths; this is the useful reading.)
//!
//! An invalid pattern is rejected when the handler is created, with the
//! position of the mistake: `http::get` panics like an invalid axum route, and
//! `http::try_get` returns the [`PatternError`].
//!
//! [`ListenOptions::base_url`]: crate::ListenOptions::base_url

pub mod matchers;
mod pattern;

use std::sync::Arc;

#[cfg(feature = "regex")]
use regex::Regex;
use url::Url;

use pattern::PathPattern;
pub use pattern::PatternError;

#[cfg(feature = "regex")]
use crate::message::params::ParamValue;
use crate::message::params::Params;
use crate::message::request::Request;

/// A compiled request predicate. Usually built implicitly from a `&str`, a
/// `String` or a `Regex` by [`IntoPredicate`]; build one explicitly for a
/// closure, whose argument type is then inferred.
#[derive(Clone)]
pub struct Predicate {
    kind: PredicateKind,
}

#[derive(Clone)]
enum PredicateKind {
    // Boxed: a compiled pattern is much larger than the other kinds.
    Path(Box<PathPattern>),
    #[cfg(feature = "regex")]
    Regex(Regex),
    Custom(Arc<dyn Fn(&Request) -> bool + Send + Sync>),
    /// A closure with the URL it stands for, as text for headers and
    /// suggestions (what mocklib's own exact-URL handlers use).
    #[cfg(feature = "har")]
    Described(Arc<dyn Fn(&Request) -> bool + Send + Sync>, String),
}

impl Predicate {
    /// A path or URL pattern (see the [module docs](self)).
    pub fn path(pattern: &str) -> Result<Self, PatternError> {
        let compiled = PathPattern::parse(pattern)?;
        if compiled.had_query_or_hash() {
            crate::support::log::warn(&format!(
                "Found a redundant query or hash in the request predicate {pattern:?}. \
                 Match against the path only and read query parameters with \
                 `args.request.url().query_pairs()` instead."
            ));
        }
        Ok(Predicate {
            kind: PredicateKind::Path(Box::new(compiled)),
        })
    }

    /// A regular expression tested against the request's clean URL
    /// (`scheme://host[:port]/path`, no query). Named capture groups become
    /// params by name, unnamed ones `"0"`, `"1"`, ….
    #[cfg(feature = "regex")]
    pub fn regex(regex: Regex) -> Self {
        Predicate {
            kind: PredicateKind::Regex(regex),
        }
    }

    /// A closure deciding whether the request matches.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, matching::Predicate};
    ///
    /// http::post(
    ///     Predicate::custom(|request| request.header("x-mock").is_some()),
    ///     |_| HttpResponse::text("mocked"),
    /// );
    /// ```
    pub fn custom(matches: impl Fn(&Request) -> bool + Send + Sync + 'static) -> Self {
        Predicate {
            kind: PredicateKind::Custom(Arc::new(matches)),
        }
    }

    /// A closure matching what `url` names (for headers and suggestions,
    /// as a pattern's text would be).
    #[cfg(feature = "har")]
    pub(crate) fn described(
        url: String,
        matches: impl Fn(&Request) -> bool + Send + Sync + 'static,
    ) -> Self {
        Predicate {
            kind: PredicateKind::Described(Arc::new(matches), url),
        }
    }

    /// The predicate as text, for handler headers and messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            PredicateKind::Path(pattern) => pattern.as_str().to_owned(),
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => format!("/{}/", regex.as_str()),
            PredicateKind::Custom(_) => "<custom predicate>".to_owned(),
            #[cfg(feature = "har")]
            PredicateKind::Described(_, url) => url.clone(),
        }
    }

    /// The text to compare with a request URL when suggesting close
    /// handlers ("did you mean"); `None` for a closure.
    pub fn suggestion_text(&self) -> Option<&str> {
        match &self.kind {
            PredicateKind::Path(pattern) => Some(pattern.as_str()),
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => Some(regex.as_str()),
            PredicateKind::Custom(_) => None,
            #[cfg(feature = "har")]
            PredicateKind::Described(_, url) => Some(url),
        }
    }

    /// The literal text every URL this predicate matches starts with, if
    /// it is a path pattern: what a handler index may assume.
    pub(crate) fn url_prefix(&self) -> Option<pattern::IndexKey> {
        match &self.kind {
            PredicateKind::Path(pattern) => Some(pattern.index_key()),
            PredicateKind::Custom(_) => None,
            #[cfg(feature = "regex")]
            PredicateKind::Regex(_) => None,
            #[cfg(feature = "har")]
            PredicateKind::Described(..) => None,
        }
    }

    /// Whether `request` matches, with relative patterns resolved against
    /// `base_url`; the captured path parameters if so. What a handler kind
    /// of your own calls to match URLs as `http` handlers do (see
    /// [`crate::handler`]).
    ///
    /// ```
    /// use mocklib::{matching::Predicate, Request};
    ///
    /// let predicate = Predicate::path("https://api.example.com/users/:id")?;
    /// let request = Request::new(http::Method::GET, "https://api.example.com/users/7".parse()?);
    /// let params = predicate.matches(&request, None).expect("it matches");
    /// assert_eq!(params.get("id"), Some("7"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matches(&self, request: &Request, base_url: Option<&Url>) -> Option<Params> {
        match &self.kind {
            PredicateKind::Path(pattern) => {
                let raw = pattern.matches(request.url_parts(), base_url)?;
                let mut params = Params::default();
                for param in raw {
                    params.insert(param.name, param.value);
                }
                Some(params)
            }
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => {
                let url = request.url();
                let clean = format!("{}{}", url.origin().ascii_serialization(), url.path());
                let captures = regex.captures(&clean)?;
                let mut params = Params::default();
                let mut unnamed = 0;
                for (index, name) in regex.capture_names().enumerate().skip(1) {
                    let key = match name {
                        Some(name) => name.to_owned(),
                        None => {
                            unnamed += 1;
                            (unnamed - 1).to_string()
                        }
                    };
                    if let Some(value) = captures.get(index) {
                        params.insert(key, ParamValue::One(percent_decode(value.as_str())));
                    }
                }
                Some(params)
            }
            PredicateKind::Custom(matches) => matches(request).then(Params::default),
            #[cfg(feature = "har")]
            PredicateKind::Described(matches, _) => matches(request).then(Params::default),
        }
    }
}

#[cfg(feature = "regex")]
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map_or_else(|_| text.to_owned(), |decoded| decoded.into_owned())
}

impl std::fmt::Debug for Predicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Predicate").field(&self.describe()).finish()
    }
}

/// Anything that can be a handler's predicate: `&str`, `String`, `Regex`,
/// [`Predicate`].
///
/// ```compile_fail,E0277
/// // A closure needs `Predicate::custom`, which gives its argument a type.
/// let handler = mocklib::http::get(|request: &mocklib::Request| request.url().path() == "/", |_| ());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handler predicate",
    label = "not a predicate",
    note = "a predicate is a path or URL pattern (`&str`, `String`), a `regex::Regex` \
            (with mocklib's `regex` feature), \
            or a `Predicate`: wrap a closure over the request in `Predicate::custom(|request| ..)`"
)]
pub trait IntoPredicate {
    /// Compiles the predicate, or says why it is invalid.
    fn into_predicate(self) -> Result<Predicate, PatternError>;
}

impl IntoPredicate for Predicate {
    fn into_predicate(self) -> Result<Predicate, PatternError> {
        Ok(self)
    }
}

impl IntoPredicate for &str {
    fn into_predicate(self) -> Result<Predicate, PatternError> {
        Predicate::path(self)
    }
}

impl IntoPredicate for String {
    fn into_predicate(self) -> Result<Predicate, PatternError> {
        Predicate::path(&self)
    }
}

impl IntoPredicate for &String {
    fn into_predicate(self) -> Result<Predicate, PatternError> {
        Predicate::path(self)
    }
}

#[cfg(feature = "regex")]
impl IntoPredicate for Regex {
    fn into_predicate(self) -> Result<Predicate, PatternError> {
        Ok(Predicate::regex(self))
    }
}
/// A `ws://` or `wss://` URL (pattern) as the `http://` or `https://` one
/// front doors see an upgrade request at; any other text as it is.
#[cfg(any(feature = "ws", feature = "graphql"))]
pub(crate) fn as_http_url(url: &str) -> String {
    match (url.strip_prefix("ws://"), url.strip_prefix("wss://")) {
        (Some(rest), _) => format!("http://{rest}"),
        (_, Some(rest)) => format!("https://{rest}"),
        _ => url.to_owned(),
    }
}
