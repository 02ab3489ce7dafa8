//! Path patterns: the strings a request predicate is written with.
//!
//! A handler such as `http.get("/posts/:id", ...)` names the requests it
//! serves with a *path pattern*. This module compiles such a string once, at
//! handler creation time, into a [`PathPattern`] that answers "does this
//! request URL match, and with which parameters?" on every request.
//!
//! The semantics follow Mock Service Worker 2.x, which runs the pattern
//! through its `coercePath` step and then through `path-to-regexp` v6 with
//! `end: true, strict: false, sensitive: false`.
//!
//! # The three forms of pattern
//!
//! | form | example | what it is matched against |
//! |---|---|---|
//! | relative path | `/posts/:id` | the request path; with a base URL the request origin must also equal the base origin |
//! | absolute URL | `https://api.example.com/user` | scheme, host and port of the request, then its path |
//! | wildcard-led | `*/user`, `*` | the whole "clean URL" `scheme://host[:port]/path` |
//!
//! Anything else (`posts`, the empty string, `ftp:x`) is a [`PatternError`].
//!
//! # Tokens in the path
//!
//! | pattern | matches | does not match | params |
//! |---|---|---|---|
//! | `/posts/:id` | `/posts/1`, `/POSTS/1/` | `/posts`, `/posts/1/x` | `id = "1"` |
//! | `/posts/:id?` | `/posts`, `/posts/1` | `/posts/1/2` | `id = "1"` (absent for `/posts`) |
//! | `/files/:path*` | `/files`, `/files/a/b/c` | `/filesx` | `path = ["a", "b", "c"]` |
//! | `/files/:path+` | `/files/a/b` | `/files` | `path = ["a", "b"]` |
//! | `/users/:id(\d+)` | `/users/42` | `/users/abc` | `id = "42"` |
//! | `/user/*` | `/user/`, `/user/a/b` | `/user` | `"0" = "a/b"` |
//! | `/a/*/b/*` | `/a/x/b/y/z` | `/a/b` | `"0" = "x"`, `"1" = "y/z"` |
//! | `/users/John Doe` | `/users/John%20Doe` | | |
//! | `https://*.example.com/x` | `https://api.example.com/x` | `https://example.com/x` | `"0" = "api"` |
//! | `http://localhost:*/x` | `http://localhost/x`, `http://localhost:3000/x` | `https://localhost/x` | `"0" = "3000"` (absent without a port) |
//! | `https://:tenant.example.com/x` | `https://acme.example.com/x` | `https://a.b.example.com/x` | `tenant = "acme"` |
//! | `https://api.:region?.example.com/x` | `https://api.example.com/x`, `https://api.eu.example.com/x` | `https://api.eu.west.example.com/x` | `region = "eu"` (absent without it) |
//! | `https://cdn-:zone.example.com/x` | `https://cdn-us1.example.com/x` | `https://cdn-.example.com/x` | `zone = "us1"` |
//!
//! The rules in words:
//!
//! * Literal text matches literally and **case-insensitively**. It is
//!   percent-encoded the way the `url` crate encodes paths (spaces, non-ASCII,
//!   `{`, `}`, ...), because request paths always arrive encoded.
//! * `:name` (letters, digits, `_`) matches one segment, `[^/#?]+?`.
//!   `:name(regex)` uses the given regex instead; it may not contain capturing
//!   groups (use `(?:...)`). It is read by `regex-lite` (the syntax of the
//!   `regex` crate, ASCII only: no `\p{..}` classes, `\d` and `(?i)` are
//!   ASCII), which is all a request URL holds once percent-encoded.
//! * A modifier may follow a parameter: `?` optional, `*` zero or more
//!   segments, `+` one or more. When the parameter directly follows a `/` (or
//!   a `.`), that character is the parameter's *prefix* and belongs to the
//!   optional or repeated group, which is why `/posts/:id?` matches `/posts`.
//!   Repeated parameters (`*`, `+`) yield a list of segments.
//! * A bare `*` (or a run such as `**`) is an unnamed wildcard matching `.*`;
//!   wildcards are numbered `"0"`, `"1"`, ... in the order they appear in the
//!   whole pattern (host and port wildcards included). `/user/*` does not
//!   match `/user`, as in MSW: its `/` is the wildcard's prefix and is required.
//! * A `?` right after a parameter, followed by the end of the pattern, `/`,
//!   `.`, `#` or `?`, is the optional modifier. Any other `?` starts a query
//!   string; it and a `#hash` are stripped from the pattern, and
//!   [`PathPattern::had_query_or_hash`] reports it so the caller can warn.
//! * `{`, `}`, a `(` not directly after a parameter name, a `+` not after a
//!   parameter, and a `:` without a name are errors. A backslash makes any
//!   character literal: `\+`, `\:`, `\(`, `\?`.
//! * A trailing `/` on the request is tolerated (`/posts` matches `/posts/`);
//!   a trailing `/` in the pattern is required (`/posts/` does not match
//!   `/posts`).
//! * Parameter values are percent-decoded (when the result is valid UTF-8;
//!   otherwise the raw text is kept). When a name repeats, the last value wins.
//! * In an absolute URL, a `*` in the host matches any run of characters
//!   *within the host* (dots included, never the port or path), and a `*`
//!   port matches any port, including none. Default ports are equivalent to
//!   no port (`https://x:443` is `https://x`).
//! * A `:name` in the host matches **one label**: a whole one
//!   (`https://:tenant.example.com`, `https://api.:region.example.com`) or
//!   the rest of one (`https://cdn-:zone.example.com`), never a `.`, the port
//!   or the path. After a `.` it may be optional or repeated
//!   (`api.:region?.example.com` also matches `api.example.com`;
//!   `:labels+` yields the labels as a list); `:name(regex)` gives it a
//!   pattern of its own, which may span labels (`:sub(.+)`). Host params
//!   come first in the params, then the port's `*`, then the path's. A name
//!   used in the host may appear nowhere else in the pattern. The same holds
//!   in the authority of a `*`-led pattern (`*://:tenant.example.com/x`).
//! * The port is digits or `*`, never a name: `http://localhost::port` and
//!   `http://localhost:port` are errors (the second would be a parameter glued
//!   to the host name); write `:*` and read the unnamed param.
//! * The request's query string and fragment never take part in matching.
//!
//! # Where host matching differs from MSW
//!
//! MSW runs one `path-to-regexp` regex over the whole URL, so what a host
//! parameter can match depends on the character before it: after the
//! scheme's `//` or inside a label it is the path default `[^/#?]+?`, which
//! swallows dots and even the port (`https://:tenant.example.com` takes
//! `tenant = "a.b"` from `a.b.example.com`; `https://:host/x` matches
//! `https://localhost:3000/x` with `host = "localhost:3000"`), while after a
//! `.` it cannot contain a dot. Here every host parameter is one label,
//! matched against the host alone, so the port is always compared on its own.
//! To span labels, use `*` or a custom pattern such as `:sub(.+)`.
//! Patterns MSW accepts but which cannot mean what they say are errors here:
//! `https://:sub?.example.com` (MSW makes the scheme's `/` optional, so it
//! never matches without the label), `http://localhost:port` (MSW glues the
//! parameter to "localhost" and captures `":3000"`) and a name shared by host
//! and path (MSW silently keeps the path's value).
//!
//! Known limits, on purpose: a host with a `*` or a parameter is compared as
//! ASCII text, so its literal labels must be written in their `xn--` form when
//! non-ASCII (anything else is refused);
//! `*`-led patterns see the URL as serialized, so `*://x:80/a` does not match
//! `http://x/a` (the default port is never serialized) — write an absolute
//! URL to get default-port equivalence. Base URLs only pin relative patterns.

mod capture;
mod compiler;
mod origin;
#[cfg(test)]
mod tests;
mod tokenizer;

use std::borrow::Cow;

use crate::message::params::ParamValue;
use crate::message::request::UrlParts;
use regex_lite::Regex;
use url::Url;

use capture::{capture, clean_url, same_origin};
use compiler::{compile_path, literal_prefix};
use origin::{parse_absolute, parse_wildcard_led, scheme_colon};
use tokenizer::{PATH_SYNTAX, tokenize};

/// A compiled request path pattern. Cheap to clone, safe to share.
#[derive(Debug, Clone)]
pub(super) struct PathPattern {
    source: String,
    kind: Kind,
    had_query_or_hash: bool,
    /// For relative and absolute patterns: matched against `url.path()`.
    /// For `*`-led patterns: matched against the clean URL.
    path: Compiled,
    index_prefix: String,
    /// For `*`-led patterns: the longest literal text the URL must contain
    /// (lowercased), checked before the matcher runs. Most URLs lack it,
    /// and the check needs neither the clean URL's copy nor a regex.
    required: Option<Box<str>>,
}

/// One parameter captured from a request URL, before any typing.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawParam {
    pub name: String,
    /// One value, or for repeated parameters (`:name*`, `:name+`) each
    /// segment (`Many`, however many there are).
    pub value: ParamValue,
}

impl RawParam {
    /// Whether the parameter was declared repeating (`*` or `+`).
    #[cfg(test)]
    pub(super) fn repeating(&self) -> bool {
        matches!(self.value, ParamValue::Many(_))
    }
}

/// The parameters one match captured, in the pattern's order: on the stack
/// for the usual one or two.
pub(super) type RawParams = smallvec::SmallVec<[RawParam; 2]>;

/// What a future handler index can use to pre-filter patterns cheaply.
///
/// Invariant: whenever the pattern matches a URL, the URL's path, lowercased,
/// starts with `path_prefix`, and (when `origin` is `Some`) the URL's origin
/// equals it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexKey {
    /// Lowercased `scheme://host[:port]` (default port dropped) of an absolute
    /// pattern without wildcards in its origin.
    pub origin: Option<String>,
    /// Lowercased literal path text before the first parameter or wildcard.
    pub path_prefix: String,
}

/// Why a pattern could not be compiled, with the offending position
/// (0-based, in characters of the pattern as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid path pattern \"{pattern}\" at position {position}: {reason}\n  {pattern}\n  {caret}",
    caret = caret_line(*.position)
)]
pub struct PatternError {
    /// The pattern as the user wrote it.
    pub pattern: String,
    /// 0-based character position of the mistake in `pattern`.
    pub position: usize,
    /// What is wrong there.
    pub reason: String,
}

fn caret_line(position: usize) -> String {
    let mut line = " ".repeat(position);
    line.push('^');
    line
}

#[derive(Debug, Clone)]
enum Kind {
    Relative,
    Absolute(OriginMatcher),
    WildcardLed,
}

#[derive(Debug, Clone)]
struct OriginMatcher {
    /// Lowercased scheme.
    scheme: String,
    host: HostMatcher,
    port: PortMatcher,
    index_origin: Option<String>,
}

#[derive(Debug, Clone)]
enum HostMatcher {
    /// Normalized (lowercased, IDNA-encoded) host, compared exactly.
    Exact(String),
    /// A host with `*` in it, matched against `url.host_str()`.
    Pattern(Compiled),
}

#[derive(Debug, Clone)]
enum PortMatcher {
    /// The effective port (explicit or the scheme's default) must be equal.
    Exact(Option<u16>),
    /// `:*` — any port; the explicit port, if any, is reported as this
    /// unnamed parameter.
    Any { name: String },
}

/// A regex plus what each of its capture groups means.
#[derive(Debug, Clone)]
struct Compiled {
    matcher: Matcher,
    /// `groups[i]` describes capture group `i + 1`.
    groups: Vec<Group>,
}

/// How a compiled path matches.
#[derive(Debug, Clone)]
enum Matcher {
    /// Only literal text (the common case): an ASCII case-insensitive
    /// comparison, one trailing delimiter tolerated. No regex to build or
    /// keep: a compiled regex costs kilobytes, which adds up over thousands
    /// of handlers. (Literal text is percent-encoded, hence ASCII.)
    Literal(String),
    /// Literal text and built-in parameters, each once, at most one of
    /// them free (see `compiler::step_matcher`): run step by step, no regex.
    /// With a free parameter, haystacks over [`STEPS_LIMIT`] bytes take
    /// `fallback`, the same pattern's regex.
    Steps {
        pieces: Vec<Piece>,
        fallback: Option<Regex>,
    },
    /// Anything else with parameters or wildcards: an anchored,
    /// case-insensitive regex.
    Regex(Regex),
}

/// Longest haystack a free parameter searches step by step (each of its
/// possible ends runs the rest of the pattern); longer ones take the regex.
const STEPS_LIMIT: usize = 256;

/// One step of a [`Matcher::Steps`].
#[derive(Debug, Clone)]
enum Piece {
    /// Encoded ASCII text, compared case-insensitively.
    Literal(String),
    /// A forced parameter: the longest run of characters it may hold.
    Param(ParamClass),
    /// The free parameter: each possible end, in the regex's order, until
    /// the rest matches.
    Free(ParamClass),
}

/// The built-in parameter patterns a step can stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParamClass {
    /// `[^/#?]+?`: a path segment (lazy).
    Segment,
    /// `[^./:#?]+?`: a host label (lazy).
    HostLabel,
    /// `.*`: anything (greedy).
    Wildcard,
}

impl ParamClass {
    fn of(pattern: &str) -> Option<ParamClass> {
        match pattern {
            tokenizer::SEGMENT_PATTERN => Some(ParamClass::Segment),
            tokenizer::HOST_LABEL_PATTERN => Some(ParamClass::HostLabel),
            tokenizer::WILDCARD_PATTERN => Some(ParamClass::Wildcard),
            _ => None,
        }
    }

    fn excludes(self, byte: u8) -> bool {
        match self {
            ParamClass::Segment => matches!(byte, b'/' | b'#' | b'?'),
            ParamClass::HostLabel => matches!(byte, b'.' | b'/' | b':' | b'#' | b'?'),
            ParamClass::Wildcard => false,
        }
    }

    /// The fewest bytes it matches.
    fn min(self) -> usize {
        match self {
            ParamClass::Wildcard => 0,
            ParamClass::Segment | ParamClass::HostLabel => 1,
        }
    }

    /// Whether it prefers the longest match (`.*`) or the shortest (`+?`).
    fn greedy(self) -> bool {
        self == ParamClass::Wildcard
    }

    /// The longest run at the start of `text` it may hold.
    fn run(self, text: &str) -> usize {
        text.bytes()
            .position(|b| self.excludes(b))
            .unwrap_or(text.len())
    }
}

#[derive(Debug, Clone)]
struct Group {
    name: String,
    repeating: bool,
    /// Repeated values are split on the prefix, as path-to-regexp does.
    separator: char,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    One,
    Optional,
    ZeroOrMore,
    OneOrMore,
}

impl Modifier {
    /// `*` and `+`: the parameter yields a list of segments.
    fn repeats(self) -> bool {
        matches!(self, Modifier::ZeroOrMore | Modifier::OneOrMore)
    }
}

#[derive(Debug, Clone)]
enum Token {
    Literal(String),
    Param {
        name: String,
        prefix: Option<char>,
        pattern: Cow<'static, str>,
        modifier: Modifier,
        /// Position of its ':' or '*' in the pattern, for errors.
        at: usize,
    },
}

/// How a `:` is read at a given position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColonRole {
    Param,
    /// `:name` in a host: one label by default.
    HostParam,
    Literal,
    /// `:*` in the authority of a `*`-led pattern: an optional port.
    OptionalPort,
}

/// State shared by the parsing steps of one pattern.
struct Ctx<'a> {
    source: &'a str,
    next_unnamed: usize,
    had_query_or_hash: bool,
}

impl Ctx<'_> {
    fn error(&self, position: usize, reason: impl Into<String>) -> PatternError {
        PatternError {
            pattern: self.source.to_owned(),
            position,
            reason: reason.into(),
        }
    }

    fn unnamed(&mut self) -> String {
        let name = self.next_unnamed.to_string();
        self.next_unnamed += 1;
        name
    }
}

/// Whether `haystack` contains `needle` (ASCII, lowercase), ignoring ASCII
/// case.
fn contains_ignore_ascii_case(haystack: &str, needle: &str) -> bool {
    let (haystack, needle) = (haystack.as_bytes(), needle.as_bytes());
    let Some((&first, _)) = needle.split_first() else {
        return true;
    };
    haystack.len() >= needle.len()
        && (0..=haystack.len() - needle.len()).any(|at| {
            haystack[at].to_ascii_lowercase() == first
                && haystack[at..at + needle.len()].eq_ignore_ascii_case(needle)
        })
}

/// Whether `needle` (lowercase) is in `first` followed by `second`,
/// ignoring ASCII case, without joining them.
fn contains_across(first: &str, second: &str, needle: &str) -> bool {
    let (head_text, tail_text) = (first.as_bytes(), second.as_bytes());
    contains_ignore_ascii_case(first, needle)
        || contains_ignore_ascii_case(second, needle)
        || (1..needle.len()).any(|split| {
            let (head, tail) = needle.as_bytes().split_at(split);
            head_text.len() >= head.len()
                && tail_text.len() >= tail.len()
                && head_text[head_text.len() - head.len()..].eq_ignore_ascii_case(head)
                && tail_text[..tail.len()].eq_ignore_ascii_case(tail)
        })
}

impl PathPattern {
    /// Compiles a pattern. See the module docs for the accepted syntax.
    pub(super) fn parse(pattern: &str) -> Result<PathPattern, PatternError> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut ctx = Ctx {
            source: pattern,
            next_unnamed: 0,
            had_query_or_hash: false,
        };
        let (kind, tokens) = match chars.first() {
            Some('/') => (Kind::Relative, tokenize(&chars, 0, &mut ctx, &PATH_SYNTAX)?),
            Some('*') => (Kind::WildcardLed, parse_wildcard_led(&chars, &mut ctx)?),
            _ => match scheme_colon(&chars) {
                Some(colon) => parse_absolute(&chars, colon, &mut ctx)?,
                None => {
                    return Err(ctx.error(
                        0,
                        "a request predicate must be an absolute URL \
                         (\"https://example.com/path\"), start with '/' (\"/path\"), \
                         or start with '*' (\"*/path\")",
                    ));
                }
            },
        };

        let index_prefix = match kind {
            Kind::WildcardLed => String::new(),
            _ => literal_prefix(&tokens),
        };
        let required = match kind {
            Kind::WildcardLed => tokens
                .iter()
                .filter_map(|token| match token {
                    Token::Literal(text) => Some(text),
                    Token::Param { .. } => None,
                })
                // Text a URL writes as it is (never percent-encoded), so
                // the pattern's and the URL's spelling agree.
                .filter(|text| {
                    text.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-._~/:@!$&'()+,;=".contains(&b))
                })
                .max_by_key(|text| text.len())
                .filter(|text| !text.is_empty())
                .map(|text| text.to_ascii_lowercase().into_boxed_str()),
            _ => None,
        };
        let path = compile_path(&tokens, &ctx)?;
        Ok(PathPattern {
            source: pattern.to_owned(),
            kind,
            had_query_or_hash: ctx.had_query_or_hash,
            path,
            index_prefix,
            required,
        })
    }

    /// The pattern text as given by the user.
    pub(super) fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern carried a `?query` or `#hash`, which was stripped
    /// (query parameters are matched elsewhere, so the caller should warn).
    pub(super) fn had_query_or_hash(&self) -> bool {
        self.had_query_or_hash
    }

    /// Matches a request URL. `base`, when known, pins relative patterns to
    /// its origin; absolute and `*`-led patterns ignore it.
    ///
    /// Returns the captured parameters in pattern order, or `None`.
    pub(super) fn matches<'u>(
        &self,
        url: impl Into<UrlParts<'u>>,
        base: Option<&Url>,
    ) -> Option<RawParams> {
        let parts = url.into();
        let mut params = RawParams::new();
        match &self.kind {
            // Origin and path only: a request's URL need not be parsed.
            Kind::Relative => {
                if base.is_some_and(|base| !same_origin(parts.origin(), base)) {
                    return None;
                }
                capture(&self.path, parts.path(), &mut params).then_some(params)
            }
            Kind::Absolute(origin) => {
                // Cheap component comparisons first: most handlers are
                // rejected here without touching a regex.
                if !origin.matches(parts.origin(), &mut params) {
                    return None;
                }
                capture(&self.path, parts.path(), &mut params).then_some(params)
            }
            Kind::WildcardLed => {
                if let Some(required) = &self.required {
                    let present = match parts.unparsed() {
                        // The clean URL is these two pieces, one after the
                        // other: no URL is parsed for a request without it.
                        Some((origin, path)) => contains_across(origin, path, required),
                        // The whole URL holds the clean URL: text missing
                        // from it is missing from the clean URL too.
                        None => contains_ignore_ascii_case(parts.url().as_str(), required),
                    };
                    if !present {
                        return None;
                    }
                }
                capture(&self.path, &clean_url(parts.url()), &mut params).then_some(params)
            }
        }
    }

    /// A key for pre-filtering; see [`IndexKey`] for its guarantee.
    pub(super) fn index_key(&self) -> IndexKey {
        let origin = match &self.kind {
            Kind::Absolute(origin) => origin.index_origin.clone(),
            _ => None,
        };
        IndexKey {
            origin,
            path_prefix: self.index_prefix.clone(),
        }
    }
}
