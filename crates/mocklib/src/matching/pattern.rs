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
//!   groups (use `(?:...)`).
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

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use regex::Regex;
use url::Url;

/// The characters the `url` crate percent-encodes in a path. Literal pattern
/// text is encoded with the same set so that `/users/John Doe` compares equal
/// to the request path `/users/John%20Doe`.
const PATH_ENCODE_SET: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'#')
    .add(b'?')
    .add(b'{')
    .add(b'}');

/// path-to-regexp v6's default parameter pattern: one segment, lazily.
const SEGMENT_PATTERN: &str = "[^/#?]+?";
/// MSW's `coercePath` turns each `*` into the unnamed group `(.*)`.
const WILDCARD_PATTERN: &str = ".*";
/// A `:*` port wildcard inside a `*`-led pattern.
const PORT_PATTERN: &str = r"\d+";
/// A host parameter: one label. Unlike MSW (see the module docs), never a
/// `.`; `/`, `:`, `#` and `?` keep it out of the port and path of a `*`-led
/// pattern's URL.
const HOST_LABEL_PATTERN: &str = "[^./:#?]+?";

/// A compiled request path pattern. Cheap to clone, safe to share.
#[derive(Debug, Clone)]
pub struct PathPattern {
    source: String,
    kind: Kind,
    had_query_or_hash: bool,
    /// For relative and absolute patterns: matched against `url.path()`.
    /// For `*`-led patterns: matched against the clean URL.
    path: Compiled,
    index_prefix: String,
}

/// One parameter captured from a request URL, before any typing.
#[derive(Debug, Clone, PartialEq)]
pub struct RawParam {
    pub name: String,
    /// One value, or for repeated parameters (`:name*`, `:name+`) each segment.
    pub values: Vec<String>,
    /// Whether the parameter was declared repeating (`*` or `+`).
    pub repeating: bool,
}

/// What a future handler index can use to pre-filter patterns cheaply.
///
/// Invariant: whenever the pattern matches a URL, the URL's path, lowercased,
/// starts with `path_prefix`, and (when `origin` is `Some`) the URL's origin
/// equals it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexKey {
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
    /// Parameters or wildcards: an anchored, case-insensitive regex.
    Regex(Regex),
}

impl Matcher {
    fn is_match(&self, haystack: &str) -> bool {
        match self {
            Matcher::Literal(text) => {
                let rest = match haystack.get(..text.len()) {
                    Some(head) if head.eq_ignore_ascii_case(text) => &haystack[text.len()..],
                    _ => return false,
                };
                // `strict: false`: one trailing delimiter may follow.
                rest.is_empty() || matches!(rest, "/" | "#" | "?")
            }
            Matcher::Regex(regex) => regex.is_match(haystack),
        }
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
            pattern: self.source.to_string(),
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

impl PathPattern {
    /// Compiles a pattern. See the module docs for the accepted syntax.
    pub fn parse(pattern: &str) -> Result<PathPattern, PatternError> {
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
        let path = compile_path(&tokens, &ctx)?;
        Ok(PathPattern {
            source: pattern.to_string(),
            kind,
            had_query_or_hash: ctx.had_query_or_hash,
            path,
            index_prefix,
        })
    }

    /// The pattern text as given by the user.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether this is a relative path pattern (starts with `/`).
    // Part of the surface for callers not wired in yet; keep -D warnings quiet.
    #[allow(dead_code)]
    pub fn is_relative(&self) -> bool {
        matches!(self.kind, Kind::Relative)
    }

    /// Whether the pattern carried a `?query` or `#hash`, which was stripped
    /// (query parameters are matched elsewhere, so the caller should warn).
    pub fn had_query_or_hash(&self) -> bool {
        self.had_query_or_hash
    }

    /// Matches a request URL. `base`, when known, pins relative patterns to
    /// its origin; absolute and `*`-led patterns ignore it.
    ///
    /// Returns the captured parameters in pattern order, or `None`.
    pub fn matches(&self, url: &Url, base: Option<&Url>) -> Option<Vec<RawParam>> {
        let mut params = Vec::new();
        match &self.kind {
            Kind::Relative => {
                if let Some(base) = base
                    && !same_origin(url, base)
                {
                    return None;
                }
                capture(&self.path, url.path(), &mut params).then_some(params)
            }
            Kind::Absolute(origin) => {
                // Cheap component comparisons first: most handlers are
                // rejected here without touching a regex.
                if !origin.matches(url, &mut params) {
                    return None;
                }
                capture(&self.path, url.path(), &mut params).then_some(params)
            }
            Kind::WildcardLed => {
                capture(&self.path, &clean_url(url), &mut params).then_some(params)
            }
        }
    }

    /// A key for pre-filtering; see [`IndexKey`] for its guarantee.
    pub fn index_key(&self) -> IndexKey {
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

impl OriginMatcher {
    fn matches(&self, url: &Url, params: &mut Vec<RawParam>) -> bool {
        if !url.scheme().eq_ignore_ascii_case(&self.scheme) {
            return false;
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        let host_ok = match &self.host {
            HostMatcher::Exact(expected) => host.eq_ignore_ascii_case(expected),
            HostMatcher::Pattern(compiled) => capture(compiled, host, params),
        };
        if !host_ok {
            return false;
        }
        match &self.port {
            // `port_or_known_default` makes `https://x` and `https://x:443`
            // the same; the pattern side was normalized the same way.
            PortMatcher::Exact(port) => url.port_or_known_default() == *port,
            PortMatcher::Any { name } => {
                if let Some(port) = url.port() {
                    push_param(params, name, vec![port.to_string()], false);
                }
                true
            }
        }
    }
}

/// Same scheme, host and effective port.
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme().eq_ignore_ascii_case(b.scheme())
        && match (a.host_str(), b.host_str()) {
            (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
            (None, None) => true,
            _ => false,
        }
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `scheme://host[:port]/path`, without credentials, query or fragment.
/// Borrowed straight from the serialization in the common case.
fn clean_url(url: &Url) -> Cow<'_, str> {
    if url.username().is_empty() && url.password().is_none() {
        Cow::Borrowed(&url[..url::Position::AfterPath])
    } else {
        let mut clean = String::new();
        clean.push_str(url.scheme());
        clean.push_str("://");
        clean.push_str(url.host_str().unwrap_or_default());
        if let Some(port) = url.port() {
            let _ = write!(clean, ":{port}");
        }
        clean.push_str(url.path());
        Cow::Owned(clean)
    }
}

/// Runs `compiled` on `haystack`, appending captured params. Allocation-free
/// when the pattern has no parameters.
fn capture(compiled: &Compiled, haystack: &str, params: &mut Vec<RawParam>) -> bool {
    let regex = match &compiled.matcher {
        Matcher::Regex(regex) if !compiled.groups.is_empty() => regex,
        matcher => return matcher.is_match(haystack),
    };
    let Some(caps) = regex.captures(haystack) else {
        return false;
    };
    for (i, group) in compiled.groups.iter().enumerate() {
        // A group that did not take part (optional absent, `*` with zero
        // segments) is left out, as path-to-regexp does.
        let Some(m) = caps.get(i + 1) else { continue };
        let values = if group.repeating {
            m.as_str().split(group.separator).map(decode).collect()
        } else {
            vec![decode(m.as_str())]
        };
        push_param(params, &group.name, values, group.repeating);
    }
    true
}

/// Adds a param; a repeated name keeps the last value, at the first position.
fn push_param(params: &mut Vec<RawParam>, name: &str, values: Vec<String>, repeating: bool) {
    if let Some(existing) = params.iter_mut().find(|p| p.name == name) {
        existing.values = values;
        existing.repeating = repeating;
    } else {
        params.push(RawParam {
            name: name.to_string(),
            values,
            repeating,
        });
    }
}

/// `decodeURIComponent`, except that undecodable input is kept as is
/// instead of failing the match.
fn decode(raw: &str) -> String {
    match percent_decode_str(raw).decode_utf8() {
        Ok(decoded) => decoded.into_owned(),
        Err(_) => raw.to_string(),
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The index of the `:` in a leading `scheme://`, if the pattern starts so.
fn scheme_colon(chars: &[char]) -> Option<usize> {
    if !chars.first()?.is_ascii_alphabetic() {
        return None;
    }
    let colon = chars
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))?;
    (chars.get(colon..colon + 3)? == [':', '/', '/']).then_some(colon)
}

/// `scheme://authority/path`: the origin matcher and the path's tokens.
fn parse_absolute(
    chars: &[char],
    colon: usize,
    ctx: &mut Ctx,
) -> Result<(Kind, Vec<Token>), PatternError> {
    let origin = parse_origin(chars, colon, ctx)?;
    let tokens = match origin.path_start {
        Some(start) => tokenize(chars, start, ctx, &PATH_SYNTAX)?,
        // No path after the authority means the root path.
        None => vec![Token::Literal("/".to_string())],
    };
    check_host_names(origin.host_tokens.iter().chain(&tokens), origin.host, ctx)?;
    Ok((Kind::Absolute(origin.matcher), tokens))
}

/// A pattern starting with `*`, matched against the whole clean URL.
fn parse_wildcard_led(chars: &[char], ctx: &mut Ctx) -> Result<Vec<Token>, PatternError> {
    let (scheme_colon, authority) = wildcard_led_authority(chars);
    let roles = wildcard_led_colon_roles(chars, scheme_colon, authority.clone());
    let syntax = Syntax {
        colon_role: &roles,
        host: false,
    };
    let tokens = tokenize(chars, 0, ctx, &syntax)?;
    check_host_names(tokens.iter(), authority, ctx)?;
    Ok(tokens)
}

/// A name used in the host may appear nowhere else in the pattern: host and
/// path are different parts of the URL, so sharing a name is a mistake (MSW
/// silently keeps the last value). Path names may repeat, as in MSW.
fn check_host_names<'t>(
    tokens: impl Iterator<Item = &'t Token>,
    host: Range<usize>,
    ctx: &Ctx,
) -> Result<(), PatternError> {
    let mut seen: Vec<(&str, bool)> = Vec::new();
    for token in tokens {
        let Token::Param { name, at, .. } = token else {
            continue;
        };
        let in_host = host.contains(at);
        if let Some(&(_, first_in_host)) = seen.iter().find(|(seen, _)| seen == name)
            && (in_host || first_in_host)
        {
            return Err(ctx.error(
                *at,
                format!(
                    "parameter \"{name}\" is used twice: a name in the host must be unique \
                     in the whole pattern"
                ),
            ));
        }
        seen.push((name, in_host));
    }
    Ok(())
}

/// The parsed `scheme://host[:port]` of an absolute pattern.
struct ParsedOrigin {
    matcher: OriginMatcher,
    /// Where the path starts (`None`: no path, or only a query/hash).
    path_start: Option<usize>,
    /// Where the host is in the pattern, and its tokens.
    host: Range<usize>,
    host_tokens: Vec<Token>,
}

/// Parses `scheme://host[:port]` of an absolute pattern.
fn parse_origin(chars: &[char], colon: usize, ctx: &mut Ctx) -> Result<ParsedOrigin, PatternError> {
    let scheme: String = chars[..colon]
        .iter()
        .collect::<String>()
        .to_ascii_lowercase();
    let start = colon + 3;
    let authority = scan_authority(chars, start);
    let end = authority.end;
    let path_start = match chars.get(end) {
        Some('/') => Some(end),
        Some(_) => {
            ctx.had_query_or_hash = true;
            None
        }
        None => None,
    };
    if let Some(at) = (start..end).find(|&i| chars[i] == '@') {
        return Err(ctx.error(
            at,
            "credentials (\"user:password@\") are not supported in a pattern",
        ));
    }
    let (host_end, port_start) = split_host_port(chars, start, &authority, ctx)?;
    if host_end == start {
        return Err(ctx.error(start, "missing host after \"://\""));
    }
    let port = parse_port(chars, port_start, end, ctx)?;
    let host_tokens = host_tokens(chars, start..host_end, ctx)?;
    let parsed = probe_origin(&scheme, &host_tokens, port, start, ctx)?;
    let host = host_matcher(chars, start..host_end, &host_tokens, &parsed, ctx)?;
    // After the host: its wildcards are numbered first.
    let port = match port {
        PortSpec::Any => PortMatcher::Any {
            name: ctx.unnamed(),
        },
        _ => PortMatcher::Exact(parsed.port_or_known_default()),
    };
    let index_origin = index_origin(&scheme, &host, &port, &parsed);
    Ok(ParsedOrigin {
        matcher: OriginMatcher {
            scheme,
            host,
            port,
            index_origin,
        },
        path_start,
        host: start..host_end,
        host_tokens,
    })
}

/// Where an authority ends, and the `:` before its port.
struct Authority {
    end: usize,
    port_colon: Option<usize>,
}

/// Scans `host[:port]` from `start`. A `/`, `?` or `#` ends it, except a
/// `?` modifying a host parameter and anything inside a `(pattern)`. The
/// port's `:` is the first one followed by a digit, a `*` or the end.
fn scan_authority(chars: &[char], start: usize) -> Authority {
    let mut port_colon = None;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '(' => i = group_end(chars, i),
            ':' => {
                let next = chars.get(i + 1);
                if port_colon.is_none()
                    && matches!(next, None | Some('0'..='9' | '*' | '/' | '?' | '#'))
                {
                    port_colon = Some(i);
                }
                i = skip_host_param(chars, i);
            }
            '/' | '?' | '#' => break,
            _ => i += 1,
        }
    }
    Authority {
        end: i.min(chars.len()),
        port_colon,
    }
}

/// The index after the `:name`, its `(pattern)` and `?` modifier at `colon`
/// (just after the `:` when no parameter name follows).
fn skip_host_param(chars: &[char], colon: usize) -> usize {
    let mut j = colon + 1;
    while j < chars.len() && is_name_char(chars[j]) {
        j += 1;
    }
    // Digits alone (or nothing) are a port, never a name.
    if chars[colon + 1..j].iter().all(char::is_ascii_digit) {
        return j;
    }
    if chars.get(j) == Some(&'(') {
        j = group_end(chars, j);
    }
    // The same rule as `parse_modifier`'s, plus a port after it.
    if chars.get(j) == Some(&'?')
        && matches!(chars.get(j + 1), None | Some('/' | '.' | '#' | '?' | ':'))
    {
        j += 1;
    }
    j
}

/// The index after the `)` closing the `(` at `open`; the end when unclosed
/// (the tokenizer then reports it).
fn group_end(chars: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    let mut k = open;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 1,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
        k += 1;
    }
    chars.len()
}

/// Where the host ends and the port starts, if there is one. An IPv6 host
/// is bracketed and contains colons.
fn split_host_port(
    chars: &[char],
    start: usize,
    authority: &Authority,
    ctx: &Ctx,
) -> Result<(usize, Option<usize>), PatternError> {
    let end = authority.end;
    if chars.get(start) != Some(&'[') {
        return Ok(match authority.port_colon {
            Some(c) => (c, Some(c + 1)),
            None => (end, None),
        });
    }
    let Some(close) = (start..end).find(|&i| chars[i] == ']') else {
        return Err(ctx.error(start, "unclosed '[' in an IPv6 host"));
    };
    match chars.get(close + 1) {
        Some(':') if close + 1 < end => Ok((close + 1, Some(close + 2))),
        _ if close + 1 == end => Ok((end, None)),
        _ => Err(ctx.error(close + 1, "expected ':' or '/' after an IPv6 host")),
    }
}

/// The port of an absolute pattern as written.
#[derive(Debug, Clone, Copy)]
enum PortSpec {
    /// None, or empty (as `http://x:/`): the scheme's default.
    Default,
    /// `:*`.
    Any,
    Number(u16),
}

fn parse_port(
    chars: &[char],
    port_start: Option<usize>,
    end: usize,
    ctx: &Ctx,
) -> Result<PortSpec, PatternError> {
    let Some(ps) = port_start else {
        return Ok(PortSpec::Default);
    };
    let text = &chars[ps..end];
    if !text.is_empty() && text.iter().all(|&c| c == '*') {
        return Ok(PortSpec::Any);
    }
    if let Some(offset) = text.iter().position(|c| !c.is_ascii_digit()) {
        return Err(ctx.error(
            ps + offset,
            "invalid port: expected digits or '*' after the host's ':'",
        ));
    }
    if text.is_empty() {
        return Ok(PortSpec::Default);
    }
    text.iter()
        .collect::<String>()
        .parse()
        .map(PortSpec::Number)
        .map_err(|_| ctx.error(ps, "port out of range (0-65535)"))
}

/// The host's tokens; a bracketed IPv6 host is one literal.
fn host_tokens(
    chars: &[char],
    host: Range<usize>,
    ctx: &mut Ctx,
) -> Result<Vec<Token>, PatternError> {
    if chars[host.start] == '[' {
        return Ok(vec![Token::Literal(chars[host].iter().collect())]);
    }
    let tokens = tokenize(&chars[..host.end], host.start, ctx, &HOST_SYNTAX)?;
    reject_port_lookalike(&tokens, ctx)?;
    Ok(tokens)
}

/// `http://localhost:port/x` looks like a named port but is a parameter
/// glued to the end of the host name, which would never match
/// `localhost:3000` (MSW matches it only because its regex runs over the
/// whole URL, capturing ":3000"). Refuse it rather than never match.
fn reject_port_lookalike(tokens: &[Token], ctx: &Ctx) -> Result<(), PatternError> {
    let [
        ..,
        Token::Literal(before),
        Token::Param {
            name,
            prefix: None,
            pattern,
            at,
            ..
        },
    ] = tokens
    else {
        return Ok(());
    };
    if pattern != HOST_LABEL_PATTERN || !before.ends_with(|c: char| c.is_ascii_alphanumeric()) {
        return Ok(());
    }
    Err(ctx.error(
        at + 1,
        format!(
            "\":{name}\" after \"{before}\" is not a port: a port is digits or '*' (MSW has \
             no named ports); to capture the end of the host name, give the parameter a \
             pattern, as in \":{name}([^.]+)\""
        ),
    ))
}

/// Lets the url crate validate and normalize the host and port (lowercase,
/// IDNA, IPv4 forms, default ports), with a placeholder label for each
/// wildcard or parameter.
fn probe_origin(
    scheme: &str,
    host_tokens: &[Token],
    port: PortSpec,
    start: usize,
    ctx: &Ctx,
) -> Result<Url, PatternError> {
    let mut probe = format!("{scheme}://");
    for token in host_tokens {
        match token {
            Token::Literal(text) => probe.push_str(text),
            Token::Param { prefix, .. } => {
                probe.extend(*prefix);
                probe.push('x');
            }
        }
    }
    if let PortSpec::Number(port) = port {
        let _ = write!(probe, ":{port}");
    }
    probe.push('/');
    match Url::parse(&probe) {
        Ok(parsed) if parsed.host_str().is_some() => Ok(parsed),
        Ok(_) => Err(ctx.error(start, "the URL has no host")),
        Err(e) => Err(ctx.error(start, format!("invalid host: {e}"))),
    }
}

/// A literal host compares with the normalized form; one with wildcards or
/// parameters is a case-insensitive regex over `url.host_str()`.
fn host_matcher(
    chars: &[char],
    host: Range<usize>,
    tokens: &[Token],
    parsed: &Url,
    ctx: &Ctx,
) -> Result<HostMatcher, PatternError> {
    if let [Token::Literal(_)] = tokens {
        let normalized = parsed.host_str().unwrap_or_default();
        return Ok(HostMatcher::Exact(normalized.to_ascii_lowercase()));
    }
    // Request hosts arrive IDNA-encoded; a regex cannot encode its labels.
    if let Some(at) = host.clone().find(|&i| !chars[i].is_ascii()) {
        return Err(ctx.error(
            at,
            "in a host with wildcards or parameters, write non-ASCII labels in their \
             IDNA form (\"xn--...\"), as requests carry them",
        ));
    }
    Ok(HostMatcher::Pattern(compile_path(tokens, ctx)?))
}

/// `scheme://host[:port]` when host and port are literal: the index's key.
fn index_origin(
    scheme: &str,
    host: &HostMatcher,
    port: &PortMatcher,
    parsed: &Url,
) -> Option<String> {
    let (HostMatcher::Exact(host), PortMatcher::Exact(_)) = (host, port) else {
        return None;
    };
    let mut origin = format!("{scheme}://{host}");
    // `parsed.port()` is None for the scheme's default port.
    if let Some(port) = parsed.port() {
        let _ = write!(origin, ":{port}");
    }
    Some(origin)
}

/// Where the authority of a `*`-led pattern is: the index of the scheme's
/// `:` (if the pattern has `scheme://`) and the range of `host[:port]`, up
/// to the first path `/`.
fn wildcard_led_authority(chars: &[char]) -> (Option<usize>, Range<usize>) {
    let mut scheme_colon = None;
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '/' | '?' | '#') {
            break;
        }
        if c == ':' && chars.get(i + 1) == Some(&'/') && chars.get(i + 2) == Some(&'/') {
            scheme_colon = Some(i);
            break;
        }
    }
    let start = scheme_colon.map_or(0, |c| c + 3);
    let end = (start..chars.len())
        .find(|&i| matches!(chars[i], '/' | '?' | '#'))
        .unwrap_or(chars.len());
    (scheme_colon, start..end)
}

/// How each `:` of a `*`-led pattern is read. Such a pattern is matched
/// against `scheme://host[:port]/path`, so a `:` before `//` is the scheme's
/// and, in the authority, `:` plus digits is a port (as MSW's `coercePath`
/// escapes it), `:*` an optional port and `:name` a host parameter.
fn wildcard_led_colon_roles(
    chars: &[char],
    scheme_colon: Option<usize>,
    authority: Range<usize>,
) -> impl Fn(usize) -> ColonRole + '_ {
    move |i| {
        if Some(i) == scheme_colon {
            ColonRole::Literal
        } else if authority.contains(&i) {
            match chars.get(i + 1) {
                Some(d) if d.is_ascii_digit() => ColonRole::Literal,
                Some('*') => ColonRole::OptionalPort,
                _ => ColonRole::HostParam,
            }
        } else {
            ColonRole::Param
        }
    }
}

/// How [`tokenize`] reads the text it is given.
struct Syntax<'a> {
    colon_role: &'a dyn Fn(usize) -> ColonRole,
    /// Literal text is limited to the characters of a host name.
    host: bool,
}

/// A path, or the path part of a pattern.
const PATH_SYNTAX: Syntax<'static> = Syntax {
    colon_role: &|_| ColonRole::Param,
    host: false,
};

/// The host of an absolute pattern, its port already cut off.
const HOST_SYNTAX: Syntax<'static> = Syntax {
    colon_role: &|_| ColonRole::HostParam,
    host: true,
};

impl Syntax<'_> {
    fn check_literal(&self, c: char, at: usize, ctx: &Ctx) -> Result<(), PatternError> {
        if !self.host || c.is_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '%') {
            return Ok(());
        }
        Err(ctx.error(
            at,
            format!(
                "unexpected character '{c}' in host (a host is letters, digits, '-', '.', \
                 '_', '~' and '%', plus '*' wildcards and ':name' parameters)"
            ),
        ))
    }
}

/// The tokens read so far and the literal text not yet ended.
#[derive(Default)]
struct TokenSink {
    tokens: Vec<Token>,
    literal: String,
    /// Whether the last character of `literal` is an unescaped '/' or '.',
    /// which a following parameter takes as its prefix.
    prefixable: bool,
}

impl TokenSink {
    fn push(&mut self, c: char, prefixable: bool) {
        self.literal.push(c);
        self.prefixable = prefixable;
    }

    /// Ends the pending literal before a parameter. When `take_prefix` is
    /// set and the literal ends with an unescaped '/' or '.', that character
    /// is removed and returned: it becomes the parameter's prefix.
    fn flush(&mut self, take_prefix: bool) -> Option<char> {
        let prefix = if take_prefix && self.prefixable {
            self.literal.pop()
        } else {
            None
        };
        self.prefixable = false;
        if !self.literal.is_empty() {
            self.tokens
                .push(Token::Literal(std::mem::take(&mut self.literal)));
        }
        prefix
    }

    fn finish(mut self) -> Vec<Token> {
        self.flush(false);
        self.tokens
    }
}

/// Splits `chars[start..]` into literals and parameters, path-to-regexp v6
/// style. Stops at a query or hash, recording it in `ctx`.
fn tokenize(
    chars: &[char],
    start: usize,
    ctx: &mut Ctx,
    syntax: &Syntax,
) -> Result<Vec<Token>, PatternError> {
    let mut out = TokenSink::default();
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        i = match c {
            '\\' => {
                let Some(&escaped) = chars.get(i + 1) else {
                    return Err(ctx.error(i, "a trailing '\\' escapes nothing"));
                };
                syntax.check_literal(escaped, i + 1, ctx)?;
                out.push(escaped, false);
                i + 2
            }
            // A '?' that is a modifier was consumed with its parameter, so
            // any '?' seen here starts a query string.
            '?' | '#' => {
                ctx.had_query_or_hash = true;
                break;
            }
            '+' | '{' | '}' | '(' => {
                syntax.check_literal(c, i, ctx)?;
                return Err(misplaced(c, i, ctx));
            }
            ':' => read_colon(chars, i, ctx, syntax, &mut out)?,
            '*' => read_wildcard(chars, i, ctx, &mut out)?,
            _ => {
                syntax.check_literal(c, i, ctx)?;
                out.push(c, matches!(c, '/' | '.'));
                i + 1
            }
        };
    }
    Ok(out.finish())
}

/// The error for a special character out of place.
fn misplaced(c: char, at: usize, ctx: &Ctx) -> PatternError {
    let reason = match c {
        '+' => "unexpected '+': a modifier must follow a parameter \
                (write \\+ to match a literal '+')"
            .to_string(),
        '(' => "unexpected '(': a custom pattern must directly follow a parameter \
                name, as in \":id(\\d+)\" (write \\( to match it literally)"
            .to_string(),
        _ => format!(
            "unexpected '{c}': groups are not supported \
             (write \\{c} to match it literally)"
        ),
    };
    ctx.error(at, reason)
}

/// Reads what starts with the `:` at `i`; returns the index after it.
fn read_colon(
    chars: &[char],
    i: usize,
    ctx: &mut Ctx,
    syntax: &Syntax,
    out: &mut TokenSink,
) -> Result<usize, PatternError> {
    match (syntax.colon_role)(i) {
        ColonRole::Literal => {
            out.push(':', false);
            Ok(i + 1)
        }
        ColonRole::OptionalPort => {
            // The ':' is the prefix: `(?::(\d+))?`.
            out.flush(false);
            let mut j = i + 1;
            while chars.get(j) == Some(&'*') {
                j += 1;
            }
            out.tokens.push(Token::Param {
                name: ctx.unnamed(),
                prefix: Some(':'),
                pattern: Cow::Borrowed(PORT_PATTERN),
                modifier: Modifier::Optional,
                at: i,
            });
            Ok(j)
        }
        ColonRole::Param => read_named_param(chars, i, ctx, false, out),
        ColonRole::HostParam => read_named_param(chars, i, ctx, true, out),
    }
}

/// Reads `:name`, its optional `(pattern)` and modifier, the ':' at `i`.
fn read_named_param(
    chars: &[char],
    i: usize,
    ctx: &Ctx,
    in_host: bool,
    out: &mut TokenSink,
) -> Result<usize, PatternError> {
    let name_start = i + 1;
    let mut j = name_start;
    while j < chars.len() && is_name_char(chars[j]) {
        j += 1;
    }
    if j == name_start {
        return Err(missing_name(chars, i, in_host, ctx));
    }
    let name: String = chars[name_start..j].iter().collect();
    let pattern = if chars.get(j) == Some(&'(') {
        let (pattern, after) = parse_custom_pattern(chars, j, ctx)?;
        j = after;
        Cow::Owned(pattern)
    } else if in_host {
        Cow::Borrowed(HOST_LABEL_PATTERN)
    } else {
        Cow::Borrowed(SEGMENT_PATTERN)
    };
    let prefix = out.flush(true);
    let modifier_at = j;
    let modifier = parse_modifier(chars, &mut j, &name, prefix, ctx)?;
    // After `//` the prefix would be the scheme's '/': `https://:sub?.x.com`
    // could then never match without its label (it can't in MSW either).
    if in_host && modifier != Modifier::One && prefix != Some('.') {
        return Err(ctx.error(
            modifier_at,
            format!(
                "host parameter \"{name}\" can only be optional or repeated right after \
                 a '.', as in \"https://api.:region?.example.com\""
            ),
        ));
    }
    out.tokens.push(Token::Param {
        name,
        prefix,
        pattern,
        modifier,
        at: i,
    });
    Ok(j)
}

fn missing_name(chars: &[char], at: usize, in_host: bool, ctx: &Ctx) -> PatternError {
    if in_host && chars.get(at + 1) == Some(&':') {
        return ctx.error(
            at + 1,
            "a port cannot be a named parameter (MSW has no named ports): write ':*' \
             to match any port (its value is an unnamed parameter) or the port's digits",
        );
    }
    ctx.error(
        at,
        "missing parameter name after ':' (a name is letters, digits \
         and '_'; write \\: to match a literal ':')",
    )
}

/// Reads the run of `*` at `i`: one unnamed `(.*)` wildcard.
fn read_wildcard(
    chars: &[char],
    i: usize,
    ctx: &mut Ctx,
    out: &mut TokenSink,
) -> Result<usize, PatternError> {
    let mut j = i;
    while chars.get(j) == Some(&'*') {
        j += 1;
    }
    let name = ctx.unnamed();
    let prefix = out.flush(true);
    let modifier = parse_modifier(chars, &mut j, &name, prefix, ctx)?;
    out.tokens.push(Token::Param {
        name,
        prefix,
        pattern: Cow::Borrowed(WILDCARD_PATTERN),
        modifier,
        at: i,
    });
    Ok(j)
}

/// Reads an optional modifier at `*j`, advancing past it.
fn parse_modifier(
    chars: &[char],
    j: &mut usize,
    name: &str,
    prefix: Option<char>,
    ctx: &Ctx,
) -> Result<Modifier, PatternError> {
    let at = *j;
    let modifier = match chars.get(at) {
        // `?` is a modifier only where a query string could not sensibly
        // start, so that `/posts/:id?page=1` still reads as a query.
        Some('?') if matches!(chars.get(at + 1), None | Some('/' | '.' | '#' | '?')) => {
            Modifier::Optional
        }
        Some('*') => Modifier::ZeroOrMore,
        Some('+') => Modifier::OneOrMore,
        _ => return Ok(Modifier::One),
    };
    *j += 1;
    if matches!(modifier, Modifier::ZeroOrMore | Modifier::OneOrMore) && prefix.is_none() {
        return Err(ctx.error(
            at,
            format!(
                "cannot repeat parameter \"{name}\" with '{}': it must directly follow \
                 a '/' or '.'",
                chars[at]
            ),
        ));
    }
    if chars.get(*j) == Some(&'*') {
        return Err(ctx.error(
            *j,
            "a parameter takes at most one modifier ('?', '*' or '+')",
        ));
    }
    Ok(modifier)
}

/// Reads `( ... )` at `open`: balanced parentheses, backslash escapes.
/// Returns the regex text and the index after the closing `)`.
fn parse_custom_pattern(
    chars: &[char],
    open: usize,
    ctx: &Ctx,
) -> Result<(String, usize), PatternError> {
    let mut depth = 1usize;
    let mut pattern = String::new();
    let mut k = open + 1;
    let mut closed = false;
    while k < chars.len() {
        let c = chars[k];
        if c == '\\' {
            pattern.push(c);
            if let Some(&escaped) = chars.get(k + 1) {
                pattern.push(escaped);
            }
            k += 2;
            continue;
        }
        if c == ')' {
            depth -= 1;
            if depth == 0 {
                closed = true;
                break;
            }
        } else if c == '(' {
            depth += 1;
        }
        pattern.push(c);
        k += 1;
    }
    if !closed {
        return Err(ctx.error(open, "unbalanced '(': the custom pattern is never closed"));
    }
    if pattern.is_empty() {
        return Err(ctx.error(open, "empty custom pattern \"()\""));
    }
    // Validate on its own so a bad regex is reported here, at its '(',
    // rather than as an opaque failure of the whole pattern.
    match Regex::new(&format!("(?:{pattern})")) {
        Err(e) => {
            let detail = e.to_string();
            let detail = detail
                .lines()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(detail.lines().next().unwrap_or("invalid regex"))
                .to_string();
            Err(ctx.error(
                open,
                format!("invalid custom pattern \"{pattern}\": {detail}"),
            ))
        }
        // Extra capture groups would shift the group numbering.
        Ok(re) if re.captures_len() > 1 => Err(ctx.error(
            open,
            "capturing groups are not allowed in a custom pattern; \
             use a non-capturing group (?:...)",
        )),
        Ok(_) => Ok((pattern, k + 1)),
    }
}

/// Literal text as it appears in a request path.
fn encode_literal(text: &str) -> Cow<'_, str> {
    utf8_percent_encode(text, PATH_ENCODE_SET).into()
}

/// The lowercased encoded literal text before the first parameter.
fn literal_prefix(tokens: &[Token]) -> String {
    let mut prefix = String::new();
    for token in tokens {
        match token {
            Token::Literal(text) => prefix.push_str(&encode_literal(text)),
            Token::Param { .. } => break,
        }
    }
    prefix.to_ascii_lowercase()
}

/// path-to-regexp v6 `tokensToRegexp` with `end: true, strict: false,
/// sensitive: false`.
fn compile_path(tokens: &[Token], ctx: &Ctx) -> Result<Compiled, PatternError> {
    if tokens
        .iter()
        .all(|token| matches!(token, Token::Literal(_)))
    {
        let mut literal = String::new();
        for token in tokens {
            if let Token::Literal(text) = token {
                literal.push_str(&encode_literal(text));
            }
        }
        if literal.is_ascii() {
            return Ok(Compiled {
                matcher: Matcher::Literal(literal),
                groups: Vec::new(),
            });
        }
    }
    let mut re = String::from("(?i)^");
    let mut groups = Vec::new();
    for token in tokens {
        match token {
            Token::Literal(text) => re.push_str(&regex::escape(&encode_literal(text))),
            Token::Param {
                name,
                prefix,
                pattern,
                modifier,
                ..
            } => {
                let repeating = matches!(modifier, Modifier::ZeroOrMore | Modifier::OneOrMore);
                groups.push(Group {
                    name: name.clone(),
                    repeating,
                    separator: prefix.unwrap_or('/'),
                });
                match prefix {
                    Some(p) => {
                        let mut buf = [0u8; 4];
                        let p = regex::escape(p.encode_utf8(&mut buf));
                        match modifier {
                            Modifier::ZeroOrMore | Modifier::OneOrMore => {
                                let optional = if *modifier == Modifier::ZeroOrMore {
                                    "?"
                                } else {
                                    ""
                                };
                                let _ = write!(
                                    re,
                                    "(?:{p}((?:{pattern})(?:{p}(?:{pattern}))*)){optional}"
                                );
                            }
                            Modifier::Optional => {
                                let _ = write!(re, "(?:{p}({pattern}))?");
                            }
                            Modifier::One => {
                                let _ = write!(re, "(?:{p}({pattern}))");
                            }
                        }
                    }
                    None => {
                        // Repetition without a prefix was rejected earlier.
                        let optional = if *modifier == Modifier::Optional {
                            "?"
                        } else {
                            ""
                        };
                        let _ = write!(re, "({pattern}){optional}");
                    }
                }
            }
        }
    }
    // strict: false tolerates one trailing delimiter on the request.
    re.push_str("[/#?]?$");
    let regex = Regex::new(&re).map_err(|e| {
        ctx.error(
            0,
            format!(
                "the pattern is too complex to compile: {}",
                e.to_string().lines().last().unwrap_or("")
            ),
        )
    })?;
    Ok(Compiled {
        matcher: Matcher::Regex(regex),
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("bad test url {s}: {e}"))
    }

    fn pat(s: &str) -> PathPattern {
        PathPattern::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn m(pattern: &str, request: &str) -> Option<Vec<RawParam>> {
        pat(pattern).matches(&url(request), None)
    }

    fn mb(pattern: &str, request: &str, base: &str) -> Option<Vec<RawParam>> {
        pat(pattern).matches(&url(request), Some(&url(base)))
    }

    fn is(pattern: &str, request: &str) -> bool {
        m(pattern, request).is_some()
    }

    /// Params as (name, values) pairs for compact assertions.
    fn params(pattern: &str, request: &str) -> Vec<(String, Vec<String>)> {
        m(pattern, request)
            .unwrap_or_else(|| panic!("{pattern} should match {request}"))
            .into_iter()
            .map(|p| (p.name, p.values))
            .collect()
    }

    fn p(name: &str, values: &[&str]) -> (String, Vec<String>) {
        (
            name.to_string(),
            values.iter().map(|v| v.to_string()).collect(),
        )
    }

    fn err(pattern: &str) -> PatternError {
        match PathPattern::parse(pattern) {
            Ok(_) => panic!("{pattern:?} should not parse"),
            Err(e) => e,
        }
    }

    #[test]
    fn types_are_shareable() {
        fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
        check::<PathPattern>();
        check::<RawParam>();
        check::<IndexKey>();
        check::<PatternError>();
    }

    #[test]
    fn relative_pattern_without_base_ignores_origin() {
        assert!(is("/user", "https://api.example.com/user"));
        assert!(is("/user", "http://localhost:3000/user"));
        assert!(!is("/user", "http://localhost:3000/users"));
        assert!(!is("/user", "http://localhost:3000/api/user"));
        assert!(pat("/user").is_relative());
        assert_eq!(pat("/user").as_str(), "/user");
    }

    #[test]
    fn relative_pattern_with_base_requires_same_origin() {
        let base = "http://localhost:3000/some/page";
        assert!(mb("/user", "http://localhost:3000/user", base).is_some());
        assert!(mb("/user", "http://localhost:3001/user", base).is_none());
        assert!(mb("/user", "https://localhost:3000/user", base).is_none());
        assert!(mb("/user", "http://example.com:3000/user", base).is_none());
        // Default ports are the same origin; host case does not matter.
        assert!(
            mb(
                "/user",
                "https://EXAMPLE.com:443/user",
                "https://example.com"
            )
            .is_some()
        );
        assert!(mb("/user", "http://example.com/user", "http://example.com:80/").is_some());
        // The base only pins the origin, its path does not matter.
        assert!(
            mb(
                "/user",
                "http://localhost:3000/user",
                "http://localhost:3000/a/b/"
            )
            .is_some()
        );
    }

    #[test]
    fn absolute_pattern_matches_scheme_host_port_and_path() {
        let pattern = "https://api.example.com/user";
        assert!(is(pattern, "https://api.example.com/user"));
        assert!(!is(pattern, "http://api.example.com/user"), "scheme");
        assert!(!is(pattern, "https://example.com/user"), "host");
        assert!(!is(pattern, "https://api.example.com:8443/user"), "port");
        assert!(!is(pattern, "https://api.example.com/users"), "path");
        assert!(!pat(pattern).is_relative());
        // A base never changes an absolute pattern.
        assert!(mb(pattern, "https://api.example.com/user", "http://other.test").is_some());

        assert!(is(
            "http://localhost:3000/posts/:id",
            "http://localhost:3000/posts/1"
        ));
        assert!(!is(
            "http://localhost:3000/posts/:id",
            "http://localhost:3001/posts/1"
        ));
        assert!(!is(
            "http://localhost:3000/posts/:id",
            "http://localhost/posts/1"
        ));
    }

    #[test]
    fn default_ports_are_equivalent() {
        assert!(is("https://x.test:443/a", "https://x.test/a"));
        assert!(is("https://x.test/a", "https://x.test:443/a"));
        assert!(is("http://x.test:80/a", "http://x.test/a"));
        assert!(is("http://x.test/a", "http://x.test:80/a"));
        assert!(!is("http://x.test:443/a", "http://x.test/a"));
        assert!(!is("https://x.test:80/a", "https://x.test/a"));
        assert!(is("ws://x.test:80/socket", "ws://x.test/socket"));
    }

    #[test]
    fn absolute_pattern_without_path_means_root() {
        assert!(is("https://api.example.com", "https://api.example.com"));
        assert!(is("https://api.example.com", "https://api.example.com/"));
        assert!(!is(
            "https://api.example.com",
            "https://api.example.com/user"
        ));
        assert!(is("http://localhost:3000", "http://localhost:3000/?q=1"));
    }

    #[test]
    fn host_is_case_insensitive_and_normalized() {
        assert!(is(
            "https://API.Example.COM/user",
            "https://api.example.com/user"
        ));
        assert!(is(
            "https://api.example.com/user",
            "https://API.EXAMPLE.com/user"
        ));
        assert!(is("http://[::1]:8080/x", "http://[0:0::1]:8080/x"));
        assert!(is("http://127.0.0.1/x", "http://127.0.0.1:80/x"));
        assert!(is(
            "https://bücher.example/x",
            "https://xn--bcher-kva.example/x"
        ));
    }

    #[test]
    fn host_wildcard_matches_within_the_host() {
        let pattern = "https://*.example.com/x";
        assert_eq!(
            params(pattern, "https://api.example.com/x"),
            vec![p("0", &["api"])]
        );
        assert_eq!(
            params(pattern, "https://a.b.example.com/x"),
            vec![p("0", &["a.b"])]
        );
        assert!(!is(pattern, "https://example.com/x"));
        assert!(!is(pattern, "https://api.example.org/x"));
        assert!(!is(pattern, "http://api.example.com/x"));
        assert!(!is(pattern, "https://api.example.com:444/x"));

        assert!(is("https://*/x", "https://anything.at.all/x"));
        assert!(is("https://*/x", "https://[::1]/x"));
        // The host wildcard never reaches into the path.
        assert!(!is("https://*/x", "https://a.test/y/x"));
        // Wildcards are numbered across the whole pattern.
        assert_eq!(
            params("https://*.test/a/*", "https://api.test/a/b/c"),
            vec![p("0", &["api"]), p("1", &["b/c"])]
        );
    }

    #[test]
    fn host_param_matches_one_whole_label() {
        let pattern = "https://:tenant.example.com/user";
        assert_eq!(
            params(pattern, "https://acme.example.com/user"),
            vec![p("tenant", &["acme"])]
        );
        // Hosts arrive lowercased.
        assert_eq!(
            params(pattern, "https://ACME.Example.com/user"),
            vec![p("tenant", &["acme"])]
        );
        // Unlike MSW, a host param never spans a '.' (`*` does).
        assert!(!is(pattern, "https://a.b.example.com/user"));
        assert!(!is(pattern, "https://example.com/user"));
        assert!(!is(pattern, "https://acme.example.com:8443/user"), "port");
        assert!(!is(pattern, "http://acme.example.com/user"), "scheme");
        assert!(!is(pattern, "https://acme.example.com/users"), "path");
        assert!(!is(pattern, "https://acme.example.org/user"));

        let pattern = "https://api.:region.example.com/*";
        assert_eq!(
            params(pattern, "https://api.eu.example.com/a/b"),
            vec![p("region", &["eu"]), p("0", &["a/b"])]
        );
        assert!(!is(pattern, "https://api.eu.west.example.com/a"));
        assert!(!is(pattern, "https://api.example.com/a"));
        assert!(!is(pattern, "https://www.eu.example.com/a"));
        // A lone param is a one-label host.
        assert_eq!(
            params("http://:host/x", "http://localhost/x"),
            vec![p("host", &["localhost"])]
        );
        assert!(!is("http://:host/x", "http://api.example.com/x"));
        assert!(!is("http://:host/x", "http://[::1]/x"));
    }

    #[test]
    fn host_param_inside_a_label() {
        let pattern = "https://api-:region.example.com/x";
        assert_eq!(
            params(pattern, "https://api-eu.example.com/x"),
            vec![p("region", &["eu"])]
        );
        assert!(!is(pattern, "https://api-.example.com/x"));
        assert!(!is(pattern, "https://api-eu.west.example.com/x"));
        assert!(!is(pattern, "https://xapi-eu.example.com/x"));
        assert_eq!(
            params(
                "https://:app-:env.example.com/",
                "https://shop-prod.example.com/"
            ),
            vec![p("app", &["shop"]), p("env", &["prod"])]
        );
        assert_eq!(
            params("https://v:major.api.test/", "https://v2.api.test/"),
            vec![p("major", &["2"])]
        );
        // A numeric last label: an IPv4 range, with a port after the param.
        assert_eq!(
            params("http://10.0.0.:n:8080/x", "http://10.0.0.7:8080/x"),
            vec![p("n", &["7"])]
        );
        assert!(!is("http://10.0.0.:n:8080/x", "http://10.0.0.7/x"));
    }

    #[test]
    fn host_and_path_params_together() {
        assert_eq!(
            params(
                "https://:tenant.example.com/users/:id",
                "https://acme.example.com/users/7"
            ),
            vec![p("tenant", &["acme"]), p("id", &["7"])]
        );
        let pattern = "https://:tenant.example.com:8443/x";
        assert!(is(pattern, "https://a.example.com:8443/x"));
        assert!(!is(pattern, "https://a.example.com/x"));
        // Numbering of wildcards runs through host, port and path.
        assert_eq!(
            params(
                "http://*.:svc.local:*/v/*",
                "http://a.b.auth.local:81/v/c/d"
            ),
            vec![
                p("0", &["a.b"]),
                p("svc", &["auth"]),
                p("1", &["81"]),
                p("2", &["c/d"])
            ]
        );
    }

    #[test]
    fn host_param_modifiers_and_patterns() {
        let pattern = "https://api.:region?.example.com/x";
        assert_eq!(params(pattern, "https://api.example.com/x"), vec![]);
        assert_eq!(
            params(pattern, "https://api.eu.example.com/x"),
            vec![p("region", &["eu"])]
        );
        assert!(!pat(pattern).had_query_or_hash());
        let pattern = "https://api.:labels+.example.com/x";
        assert_eq!(
            params(pattern, "https://api.a.b.example.com/x"),
            vec![p("labels", &["a", "b"])]
        );
        assert!(!is(pattern, "https://api.example.com/x"));
        assert_eq!(
            params(
                "https://api.:labels*.example.com/x",
                "https://api.example.com/x"
            ),
            vec![]
        );
        let found = m(
            "https://api.:labels*.example.com/x",
            "https://api.a.example.com/x",
        );
        assert!(found.expect("one label")[0].repeating);

        let pattern = r"https://:n(\d+).example.com/";
        assert_eq!(
            params(pattern, "https://42.example.com/"),
            vec![p("n", &["42"])]
        );
        assert!(!is(pattern, "https://a.example.com/"));
        // A custom pattern may span labels, never the port or path.
        let pattern = "https://:sub(.+).example.com/x";
        assert_eq!(
            params(pattern, "https://a.b.example.com/x"),
            vec![p("sub", &["a.b"])]
        );
        assert!(!is(pattern, "https://a.example.com:444/x"));
        // ':' and '/' inside a custom pattern are the pattern's, not the
        // port's or the path's.
        assert!(is(r"https://:h(a|b(?:c)).test/", "https://bc.test/"));
        assert!(is(r"https://:h([^/]+).test:81/", "https://ab.test:81/"));
        // The explicit way to glue a param to the end of the host name.
        assert_eq!(
            params("http://localhost:suffix([^.]+)/x", "http://localhostabc/x"),
            vec![p("suffix", &["abc"])]
        );
        // A query after a host param is still a query.
        let compiled = pat("https://:t.example.com?x=1");
        assert!(compiled.had_query_or_hash());
        assert!(
            compiled
                .matches(&url("https://a.example.com/"), None)
                .is_some()
        );
    }

    #[test]
    fn wildcard_led_host_params_match_one_label() {
        let pattern = "*://:tenant.example.com/x";
        assert_eq!(
            params(pattern, "https://acme.example.com/x"),
            vec![p("0", &["https"]), p("tenant", &["acme"])]
        );
        assert!(!is(pattern, "https://a.b.example.com/x"));
        assert!(!is(pattern, "https://acme.example.com:81/x"));
        assert_eq!(
            params("*://:t.example.com:*/x", "http://a.example.com:81/x"),
            vec![p("0", &["http"]), p("t", &["a"]), p("1", &["81"])]
        );
    }

    #[test]
    fn port_wildcard_matches_any_port_including_none() {
        let pattern = "http://localhost:*/x";
        assert_eq!(
            params(pattern, "http://localhost:3000/x"),
            vec![p("0", &["3000"])]
        );
        assert_eq!(params(pattern, "http://localhost/x"), vec![]);
        assert_eq!(params(pattern, "http://localhost:80/x"), vec![]);
        assert!(!is(pattern, "https://localhost:3000/x"));
        assert!(!is(pattern, "http://127.0.0.1:3000/x"));
        assert!(!is(pattern, "http://localhost:3000/y"));
        assert_eq!(
            params("http://localhost:*/u/:id", "http://localhost:1/u/7"),
            vec![p("0", &["1"]), p("id", &["7"])]
        );
    }

    #[test]
    fn wildcard_led_patterns_match_the_clean_url() {
        assert!(is("*", "https://anything.test/a/b?c=d#e"));
        assert!(is("*", "http://localhost:3000"));
        assert_eq!(
            params("*", "http://x.test/a"),
            vec![p("0", &["http://x.test/a"])]
        );

        assert!(is("*/user", "https://api.example.com/user"));
        assert!(is("*/user", "http://localhost:3000/user/"));
        assert!(!is("*/user", "http://localhost:3000/users"));
        assert_eq!(
            params("*/api/*", "https://x.test/api/a/b"),
            vec![p("0", &["https://x.test"]), p("1", &["a/b"])]
        );
        assert!(!pat("*/user").is_relative());
        // Base is irrelevant for `*`-led patterns.
        assert!(mb("*/user", "https://a.test/user", "http://b.test").is_some());
        // The credentials of the request are not part of the clean URL.
        assert_eq!(
            params("*/user", "https://me:pw@x.test:8443/user"),
            vec![p("0", &["https://x.test:8443"])]
        );
        // Scheme and port colons are literal; `:*` is an optional port.
        assert!(is("*://localhost:3000/x", "http://localhost:3000/x"));
        assert!(!is("*://localhost:3000/x", "http://localhost:3001/x"));
        assert!(is("*://localhost:*/x", "http://localhost/x"));
        assert_eq!(
            params("*://localhost:*/x", "http://localhost:9/x"),
            vec![p("0", &["http"]), p("1", &["9"])]
        );
        // Elsewhere a `:name` is a parameter as usual.
        assert_eq!(
            params("*/users/:id", "http://a.test/users/5"),
            vec![p("0", &["http://a.test"]), p("id", &["5"])]
        );
    }

    #[test]
    fn path_matching_is_case_insensitive() {
        assert!(is("/Posts/:id", "http://x.test/posts/1"));
        assert!(is("/posts", "http://x.test/POSTS"));
        assert_eq!(
            params("/posts/:id", "http://x.test/POSTS/AbC"),
            vec![p("id", &["AbC"])]
        );
    }

    #[test]
    fn trailing_slash_is_tolerated_on_the_request_only() {
        assert!(is("/posts", "http://x.test/posts/"));
        assert!(is("/posts/", "http://x.test/posts/"));
        assert!(!is("/posts/", "http://x.test/posts"));
        assert!(is("/posts/:id", "http://x.test/posts/1/"));
        assert!(!is("/posts", "http://x.test/posts//"));
    }

    #[test]
    fn request_query_and_hash_are_ignored() {
        assert!(is("/posts", "http://x.test/posts?page=2"));
        assert!(is("/posts", "http://x.test/posts#top"));
        assert_eq!(
            params("/posts/:id", "http://x.test/posts/1?x=2#y"),
            vec![p("id", &["1"])]
        );
    }

    #[test]
    fn pattern_query_and_hash_are_stripped_and_flagged() {
        for (pattern, request) in [
            ("/posts?page=1", "http://x.test/posts"),
            ("/posts#top", "http://x.test/posts"),
            ("/posts/:id?page=1", "http://x.test/posts/3"),
            ("https://api.test?x=1", "https://api.test/"),
            ("https://api.test#frag", "https://api.test/"),
            ("https://api.test/a?x", "https://api.test/a"),
            ("*/a?x", "https://api.test/a"),
        ] {
            let compiled = pat(pattern);
            assert!(compiled.had_query_or_hash(), "{pattern}");
            assert!(compiled.matches(&url(request), None).is_some(), "{pattern}");
            assert_eq!(compiled.as_str(), pattern);
        }
        assert!(!is("/posts?page=1", "http://x.test/posts/1"));
        // An optional modifier is not a query.
        assert!(!pat("/posts/:id?").had_query_or_hash());
        assert!(!pat("/a/:b?/c").had_query_or_hash());
        assert!(!pat("/posts").had_query_or_hash());
        // An escaped '?' or '#' is literal text, encoded as in a path.
        assert!(!pat(r"/what\?").had_query_or_hash());
        assert!(is(r"/what\?", "http://x.test/what%3F"));
        assert!(is(r"/c\#", "http://x.test/c%23"));
    }

    #[test]
    fn named_params() {
        assert_eq!(
            params("/posts/:id", "http://x.test/posts/1"),
            vec![p("id", &["1"])]
        );
        assert_eq!(
            params(
                "/users/:userId/books/:book_id",
                "http://x.test/users/u1/books/b2"
            ),
            vec![p("userId", &["u1"]), p("book_id", &["b2"])]
        );
        assert!(!is("/posts/:id", "http://x.test/posts"));
        assert!(!is("/posts/:id", "http://x.test/posts/"));
        assert!(!is("/posts/:id", "http://x.test/posts/1/2"));
        // Two params in one segment: the first is lazy.
        assert_eq!(
            params("/range/:from-:to", "http://x.test/range/1-2-3"),
            vec![p("from", &["1"]), p("to", &["2-3"])]
        );
        assert!(!m("/posts/:id", "http://x.test/posts/1").unwrap()[0].repeating);
    }

    #[test]
    fn optional_params() {
        assert_eq!(params("/posts/:id?", "http://x.test/posts"), vec![]);
        assert_eq!(params("/posts/:id?", "http://x.test/posts/"), vec![]);
        assert_eq!(
            params("/posts/:id?", "http://x.test/posts/1"),
            vec![p("id", &["1"])]
        );
        assert!(!is("/posts/:id?", "http://x.test/posts/1/2"));
        assert!(!is("/posts/:id?", "http://x.test/postsx"));
        assert_eq!(params("/a/:b?/c", "http://x.test/a/c"), vec![]);
        assert_eq!(
            params("/a/:b?/c", "http://x.test/a/b/c"),
            vec![p("b", &["b"])]
        );
        // '.' is a prefix too, as in path-to-regexp.
        assert_eq!(params("/file.:ext?", "http://x.test/file"), vec![]);
        assert_eq!(
            params("/file.:ext?", "http://x.test/file.json"),
            vec![p("ext", &["json"])]
        );
        let found = m("/posts/:id?", "http://x.test/posts/1").unwrap();
        assert!(!found[0].repeating);
    }

    #[test]
    fn zero_or_more_params() {
        assert_eq!(params("/files/:path*", "http://x.test/files"), vec![]);
        assert_eq!(params("/files/:path*", "http://x.test/files/"), vec![]);
        assert_eq!(
            params("/files/:path*", "http://x.test/files/a"),
            vec![p("path", &["a"])]
        );
        assert_eq!(
            params("/files/:path*", "http://x.test/files/a/b/c"),
            vec![p("path", &["a", "b", "c"])]
        );
        assert!(!is("/files/:path*", "http://x.test/filesa"));
        let found = m("/files/:path*", "http://x.test/files/a/b").unwrap();
        assert!(found[0].repeating);
        assert_eq!(
            params("/files/:path*/meta", "http://x.test/files/a/b/meta"),
            vec![p("path", &["a", "b"])]
        );
        assert_eq!(
            params("/files/:path*/meta", "http://x.test/files/meta"),
            vec![]
        );
    }

    #[test]
    fn one_or_more_params() {
        assert!(!is("/files/:path+", "http://x.test/files"));
        assert!(!is("/files/:path+", "http://x.test/files/"));
        assert_eq!(
            params("/files/:path+", "http://x.test/files/a"),
            vec![p("path", &["a"])]
        );
        assert_eq!(
            params("/files/:path+", "http://x.test/files/a/b"),
            vec![p("path", &["a", "b"])]
        );
        assert!(m("/files/:path+", "http://x.test/files/a").unwrap()[0].repeating);
        // Repeated segments are decoded one by one: an encoded '/' stays inside.
        assert_eq!(
            params("/files/:path+", "http://x.test/files/a%2Fb/c%20d"),
            vec![p("path", &["a/b", "c d"])]
        );
    }

    #[test]
    fn unnamed_wildcards() {
        assert_eq!(
            params("/user/*", "http://x.test/user/a/b"),
            vec![p("0", &["a/b"])]
        );
        assert_eq!(
            params("/user/*", "http://x.test/user/"),
            vec![p("0", &[""])]
        );
        // Like MSW: the wildcard's '/' prefix is required.
        assert!(!is("/user/*", "http://x.test/user"));
        assert!(!is("/user/*", "http://x.test/users"));
        assert_eq!(
            params("/a/*/b/*", "http://x.test/a/x/b/y/z"),
            vec![p("0", &["x"]), p("1", &["y/z"])]
        );
        assert_eq!(
            params("/a/**", "http://x.test/a/b/c"),
            vec![p("0", &["b/c"])]
        );
        assert!(!m("/a/*", "http://x.test/a/b/c").unwrap()[0].repeating);
        // Name-like text before '*' stays literal.
        assert_eq!(
            params("/files/abc*", "http://x.test/files/abcdef"),
            vec![p("0", &["def"])]
        );
        assert!(!is("/files/abc*", "http://x.test/files/ab"));
        assert_eq!(
            params("/*.json", "http://x.test/a/b.json"),
            vec![p("0", &["a/b"])]
        );
        // A modifier may follow a wildcard, as on `(.*)` in path-to-regexp.
        assert_eq!(params("/user/*?", "http://x.test/user"), vec![]);
        // Wildcards and names mix; unnamed indices count wildcards only.
        assert_eq!(
            params("/:lang/*/:id", "http://x.test/en/a/b/7"),
            vec![p("lang", &["en"]), p("0", &["a/b"]), p("id", &["7"])]
        );
    }

    #[test]
    fn params_are_percent_decoded() {
        assert_eq!(
            params("/users/:name", "http://x.test/users/John%20Doe"),
            vec![p("name", &["John Doe"])]
        );
        assert_eq!(
            params("/q/:v", "http://x.test/q/a+b%2Bc"),
            vec![p("v", &["a+b+c"])]
        );
        assert_eq!(
            params("/q/:v", "http://x.test/q/caf%C3%A9"),
            vec![p("v", &["café"])]
        );
        // Invalid UTF-8 after decoding: the raw text is kept.
        assert_eq!(
            params("/q/:v", "http://x.test/q/%FF%FE"),
            vec![p("v", &["%FF%FE"])]
        );
        assert_eq!(
            params("/q/*", "http://x.test/q/a%20b/c"),
            vec![p("0", &["a b/c"])]
        );
    }

    #[test]
    fn literals_are_encoded_like_request_paths() {
        assert!(is("/users/John Doe", "http://x.test/users/John%20Doe"));
        assert!(is("/café", "http://x.test/caf%C3%A9"));
        assert!(is("/café", "http://x.test/café"));
        assert!(is("/caf%C3%A9", "http://x.test/caf%c3%a9"));
        assert!(is(r"/a\{b\}", "http://x.test/a%7Bb%7D"));
        // Regex metacharacters in literals are escaped.
        assert!(is("/a.b", "http://x.test/a.b"));
        assert!(!is("/a.b", "http://x.test/axb"));
        assert!(is("/a$b^c|d[e]", "http://x.test/a$b^c|d[e]"));
        assert!(is("/a)", "http://x.test/a)"));
    }

    #[test]
    fn escapes_make_special_characters_literal() {
        assert!(is(r"/a\+b", "http://x.test/a+b"));
        assert!(is(r"/time/12\:30", "http://x.test/time/12:30"));
        assert!(is(r"/a\*", "http://x.test/a*"));
        assert!(!is(r"/a\*", "http://x.test/ab"));
        assert!(is(r"/a\(b\)", "http://x.test/a(b)"));
        // An escaped '/' is no prefix: the param is then not optional-with-slash.
        assert!(is(r"/a\/:b?", "http://x.test/a/"));
        assert!(!is(r"/a\/:b?", "http://x.test/a"));
    }

    #[test]
    fn repeated_name_keeps_the_last_value() {
        assert_eq!(
            params("/:id/:id", "http://x.test/1/2"),
            vec![p("id", &["2"])]
        );
        // An absent later occurrence does not erase an earlier value.
        assert_eq!(
            params("/:id/x/:id?", "http://x.test/1/x"),
            vec![p("id", &["1"])]
        );
    }

    #[test]
    fn custom_param_patterns() {
        assert_eq!(
            params(r"/users/:id(\d+)", "http://x.test/users/42"),
            vec![p("id", &["42"])]
        );
        assert!(!is(r"/users/:id(\d+)", "http://x.test/users/abc"));
        assert_eq!(
            params(r"/v/:version(v1|v2)/x", "http://x.test/v/V2/x"),
            vec![p("version", &["V2"])]
        );
        assert!(!is(r"/v/:version(v1|v2)/x", "http://x.test/v/v3/x"));
        assert_eq!(
            params(r"/n/:ids(\d+)+", "http://x.test/n/1/2/3"),
            vec![p("ids", &["1", "2", "3"])]
        );
        assert!(!is(r"/n/:ids(\d+)+", "http://x.test/n/1/a"));
        assert_eq!(params(r"/n/:id(\d+)?", "http://x.test/n"), vec![]);
        // Nested non-capturing groups and escaped parens are fine.
        assert_eq!(
            params(r"/g/:x((?:ab)+\))", "http://x.test/g/abab)"),
            vec![p("x", &["abab)"])]
        );
        // A custom pattern may span segments.
        assert_eq!(
            params(r"/raw/:rest(.*)", "http://x.test/raw/a/b"),
            vec![p("rest", &["a/b"])]
        );
    }

    #[test]
    fn errors_report_exact_positions() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "must be an absolute URL"),
            ("posts", 0, "must be an absolute URL"),
            ("posts/:id", 0, "start with '/'"),
            ("ftp:nonsense", 0, "must be an absolute URL"),
            ("http:/x.test/a", 0, "must be an absolute URL"),
            ("1http://x.test", 0, "must be an absolute URL"),
            (" /posts", 0, "must be an absolute URL"),
            ("/posts/:", 7, "missing parameter name"),
            ("/posts/:/x", 7, "missing parameter name"),
            ("/a/:-b", 3, "missing parameter name"),
            ("/a:*", 2, "missing parameter name"),
            ("/a/{b}", 3, "'{'"),
            ("/a/b}", 4, "'}'"),
            ("/a/(b)", 3, "'('"),
            ("/a/*(x)", 4, "'('"),
            ("/a/+", 3, "'+'"),
            ("/a+", 2, "'+'"),
            ("/a/:id*+", 7, "'+'"),
            ("/a/:id**", 7, "at most one modifier"),
            ("/a:id*", 5, "cannot repeat parameter \"id\""),
            ("/a-*+", 4, "cannot repeat parameter \"0\""),
            ("/a\\", 2, "trailing '\\'"),
            ("/u/:id(", 6, "unbalanced"),
            ("/u/:id(\\d+", 6, "unbalanced"),
            ("/u/:id()", 6, "empty custom pattern"),
            ("/u/:id([a-)", 6, "invalid custom pattern"),
            ("/u/:id((\\d+))", 6, "capturing groups"),
            ("/u/:id(\\d+)(x)", 11, "'('"),
            ("https://", 8, "missing host"),
            ("https:///a", 8, "missing host"),
            ("https://:3000/a", 8, "missing host"),
            ("https://user:pw@x.test/a", 15, "credentials"),
            ("http://localhost:abc/a", 17, "is not a port"),
            ("http://127.0.0.1:port/a", 17, "is not a port"),
            ("http://localhost:30:00/a", 19, "invalid port"),
            ("http://localhost:99999/a", 17, "out of range"),
            ("http://x.test:3*/a", 15, "invalid port"),
            ("https://:.example.com", 8, "missing parameter name"),
            ("https://api.:.example.com", 12, "missing parameter name"),
            (
                "http://localhost::port/x",
                17,
                "cannot be a named parameter",
            ),
            ("https://:id.test/users/:id", 23, "\"id\" is used twice"),
            ("https://:a.:a.test/", 11, "\"a\" is used twice"),
            ("https://:a.:b.test/:c/:b", 22, "\"b\" is used twice"),
            ("*://:id.test/users/:id", 19, "\"id\" is used twice"),
            ("https://:sub?.example.com/", 12, "right after a '.'"),
            ("https://api-:r?.example.com/", 14, "right after a '.'"),
            ("https://api-:r+.x.test/", 14, "cannot repeat"),
            ("https://a{b}.test/a", 9, "unexpected character '{' in host"),
            ("https://a!b.test/a", 9, "unexpected character '!' in host"),
            ("https://a+b.test/a", 9, "unexpected character '+' in host"),
            (
                "https://a\\/b.test/a",
                10,
                "unexpected character '/' in host",
            ),
            ("https://:id(\\d+.test/a", 11, "unbalanced"),
            ("https://*.bücher.de/x", 11, "IDNA form"),
            ("https://:a.bücher.de/x", 12, "IDNA form"),
            ("https://[::1/a", 8, "unclosed '['"),
            ("https://[::1]x/a", 13, "after an IPv6 host"),
            ("https://x.test/a/:", 17, "missing parameter name"),
            ("*/a/{", 4, "'{'"),
            ("*:", 1, "missing parameter name"),
        ];
        for &(pattern, position, reason) in cases {
            let e = err(pattern);
            assert_eq!(e.pattern, pattern);
            assert_eq!(e.position, position, "position for {pattern:?}: {e}");
            assert!(
                e.reason.contains(reason),
                "reason for {pattern:?}: {:?}",
                e.reason
            );
        }
    }

    #[test]
    fn error_display_points_at_the_position() {
        let e = err("/posts/:/x");
        assert_eq!(
            e.to_string(),
            format!(
                "invalid path pattern \"/posts/:/x\" at position 7: {}\n  /posts/:/x\n         ^",
                e.reason
            )
        );
        let e = err("");
        assert!(e.to_string().ends_with("\n  \n  ^"));
    }

    #[test]
    fn index_keys() {
        let key = |s: &str| pat(s).index_key();
        let k = |origin: Option<&str>, prefix: &str| IndexKey {
            origin: origin.map(str::to_string),
            path_prefix: prefix.to_string(),
        };
        assert_eq!(key("/posts/:id"), k(None, "/posts"));
        assert_eq!(key("/posts/:id?"), k(None, "/posts"));
        assert_eq!(key("/Posts/All"), k(None, "/posts/all"));
        assert_eq!(key("/files/:path*"), k(None, "/files"));
        assert_eq!(key("/user/*"), k(None, "/user"));
        assert_eq!(key("/files/abc*"), k(None, "/files/abc"));
        assert_eq!(key("/file.:ext?"), k(None, "/file"));
        assert_eq!(key("/range/:from-:to"), k(None, "/range"));
        assert_eq!(key("/users/John Doe"), k(None, "/users/john%20doe"));
        assert_eq!(key("/café/:x"), k(None, "/caf%c3%a9"));
        assert_eq!(key("/posts?x=1"), k(None, "/posts"));
        assert_eq!(key("*/user"), k(None, ""));
        assert_eq!(key("*"), k(None, ""));
        assert_eq!(
            key("https://API.example.com/User/:id"),
            k(Some("https://api.example.com"), "/user")
        );
        assert_eq!(key("https://x.test:443/a"), k(Some("https://x.test"), "/a"));
        assert_eq!(
            key("http://localhost:3000"),
            k(Some("http://localhost:3000"), "/")
        );
        assert_eq!(key("https://*.x.test/a/:b"), k(None, "/a"));
        assert_eq!(key("http://localhost:*/a"), k(None, "/a"));
        // A host param is no literal origin either.
        assert_eq!(key("https://:t.example.com/a/:b"), k(None, "/a"));
        assert_eq!(key("https://api.:r?.example.com"), k(None, "/"));
        assert_eq!(
            key("http://[::1]:8080/a"),
            k(Some("http://[::1]:8080"), "/a")
        );
    }

    const PATTERNS: &[&str] = &[
        "/",
        "/posts",
        "/posts/",
        "/posts/:id",
        "/posts/:id?",
        "/posts/:id/comments",
        "/files/:path*",
        "/files/:path+",
        "/files/:path*/meta",
        "/user/*",
        "/a/*/b/*",
        "/*",
        "/*.json",
        "/file.:ext?",
        "/files/abc*",
        r"/users/:id(\d+)",
        "/range/:from-:to",
        "/Users/John Doe",
        "/café",
        "https://api.example.com",
        "https://api.example.com/posts/:id?",
        "http://localhost:3000/posts/:id",
        "https://*.example.com/user/*",
        "http://localhost:*/files/:path*",
        "https://:sub.example.com/user/*",
        "https://:a.:b.example.com/posts/:id",
        "https://api.:region?.example.com/posts/:id?",
        "http://:host:3000/posts",
        "*://:sub.example.com/api/:v",
        "*",
        "*/user",
        "*/api/*",
        "*://localhost:3000/posts",
    ];

    const URLS: &[&str] = &[
        "http://localhost:3000/",
        "http://localhost:3000/posts",
        "http://localhost:3000/posts/",
        "http://localhost:3000/POSTS/1",
        "http://localhost:3000/posts/1/comments",
        "http://localhost/files",
        "http://localhost/files/a/b/c",
        "http://localhost/files/a/meta",
        "https://api.example.com/",
        "https://api.example.com/posts/7?x=1",
        "https://api.example.com/user/a/b",
        "https://a.b.example.com/user/",
        "https://api.example.com/api/v1",
        "http://x.test/user/",
        "http://x.test/a/1/b/2",
        "http://x.test/x.json",
        "http://x.test/file",
        "http://x.test/file.tar",
        "http://x.test/files/abcd",
        "http://x.test/users/42",
        "http://x.test/range/1-2",
        "http://x.test/users/john%20doe",
        "http://x.test/caf%C3%A9",
        "http://x.test/%E2%82%AC/x",
    ];

    #[test]
    fn index_prefix_is_a_true_prefix_of_every_match() {
        let mut matched = 0;
        for pattern in PATTERNS {
            let compiled = pat(pattern);
            let key = compiled.index_key();
            for request in URLS {
                let request = url(request);
                if compiled.matches(&request, None).is_some() {
                    matched += 1;
                    let path = request.path().to_ascii_lowercase();
                    assert!(
                        path.starts_with(&key.path_prefix),
                        "{pattern} matched {request} but {path:?} lacks prefix {:?}",
                        key.path_prefix
                    );
                    if let Some(origin) = &key.origin {
                        assert_eq!(
                            request.origin().ascii_serialization().to_ascii_lowercase(),
                            *origin,
                            "{pattern} vs {request}"
                        );
                    }
                }
            }
        }
        // Make sure the check is not vacuous.
        assert!(matched > 40, "only {matched} matches");
    }

    /// A tiny deterministic generator; no dev-dependencies needed.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_input_never_panics() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let alphabet: Vec<char> = ":/*?+(){}\\#.-_aZ09é ".chars().collect();
        let heads = [
            "",
            "/",
            "*",
            "http://",
            "https://a.test",
            "http://x:",
            "*://",
            "https://:",
            "https://a.:",
        ];
        let urls: Vec<Url> = [
            "http://localhost:3000/",
            "https://a.test/a/b/c",
            "http://x:8080/posts/1?x#y",
            "https://a.test/%FF/(x)",
        ]
        .iter()
        .map(|u| url(u))
        .collect();
        let base = url("https://a.test/");
        let mut parsed = 0;
        for round in 0..4000 {
            let text: String = if round % 4 == 0 {
                // Raw bytes, lossily decoded: arbitrary characters.
                let bytes: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            } else {
                let mut s = heads[rng.below(heads.len())].to_string();
                for _ in 0..rng.below(16) {
                    s.push(alphabet[rng.below(alphabet.len())]);
                }
                s
            };
            match PathPattern::parse(&text) {
                Ok(compiled) => {
                    parsed += 1;
                    let key = compiled.index_key();
                    for u in &urls {
                        if compiled.matches(u, None).is_some() {
                            assert!(u.path().to_ascii_lowercase().starts_with(&key.path_prefix));
                        }
                        let _ = compiled.matches(u, Some(&base));
                    }
                }
                Err(e) => {
                    assert!(e.position <= text.chars().count(), "{e}");
                    let _ = e.to_string();
                }
            }
        }
        assert!(parsed > 200, "only {parsed} random patterns parsed");
    }
}
