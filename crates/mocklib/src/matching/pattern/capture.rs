//! Match time: running a compiled pattern on a request URL.

use std::borrow::Cow;
use std::fmt::Write as _;

use percent_encoding::percent_decode_str;
use smallvec::SmallVec;
use url::Url;

use super::{
    Compiled, HostMatcher, Matcher, OriginMatcher, ParamClass, Piece, PortMatcher, RawParam,
    RawParams, STEPS_LIMIT,
};
use crate::message::params::ParamValue;

impl Matcher {
    pub(super) fn is_match(&self, haystack: &str) -> bool {
        match self {
            Matcher::Literal(text) => {
                let rest = match haystack.get(..text.len()) {
                    Some(head) if head.eq_ignore_ascii_case(text) => &haystack[text.len()..],
                    _ => return false,
                };
                // `strict: false`: one trailing delimiter may follow.
                rest.is_empty() || matches!(rest, "/" | "#" | "?")
            }
            Matcher::Steps {
                fallback: Some(regex),
                ..
            } if haystack.len() > STEPS_LIMIT => regex.is_match(haystack),
            Matcher::Steps { pieces, .. } => run_steps(pieces, haystack, &mut Values::new()),
            Matcher::Regex(regex) => regex.is_match(haystack),
        }
    }
}

/// The parameters' texts as steps find them: on the stack for the usual few.
type Values<'h> = SmallVec<[&'h str; 4]>;

/// Runs the steps of a [`Matcher::Steps`] on `rest`, pushing each
/// parameter's text to `values`; whether the whole of `rest` matched.
fn run_steps<'h>(pieces: &[Piece], mut rest: &'h str, values: &mut Values<'h>) -> bool {
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(text) => match rest.as_bytes().get(..text.len()) {
                Some(head) if head.eq_ignore_ascii_case(text.as_bytes()) => {
                    // ASCII on both sides, so this is a character boundary.
                    rest = &rest[text.len()..];
                }
                _ => return false,
            },
            Piece::Param(class) => {
                let end = class.run(rest);
                if end < class.min() {
                    return false;
                }
                values.push(&rest[..end]);
                rest = &rest[end..];
            }
            Piece::Free(class) => return run_free(*class, &pieces[i + 1..], rest, values),
        }
    }
    // `strict: false`: one trailing delimiter may follow.
    rest.is_empty() || matches!(rest, "/" | "#" | "?")
}

/// The free parameter at the start of `rest`: its possible ends, longest
/// first for `.*` and shortest first for `+?` (the regex's preference),
/// until the steps after it match.
fn run_free<'h>(
    class: ParamClass,
    after: &[Piece],
    rest: &'h str,
    values: &mut Values<'h>,
) -> bool {
    let mark = values.len();
    let mut attempt = |end: usize| {
        if !rest.is_char_boundary(end) {
            return false;
        }
        values.truncate(mark);
        values.push(&rest[..end]);
        run_steps(after, &rest[end..], values)
    };
    let ends = class.min()..=class.run(rest);
    let found = if class.greedy() {
        ends.rev().any(&mut attempt)
    } else {
        ends.into_iter().any(&mut attempt)
    };
    if !found {
        values.truncate(mark);
    }
    found
}

impl OriginMatcher {
    pub(super) fn matches(&self, url: &Url, params: &mut RawParams) -> bool {
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
                    push_param(params, name, ParamValue::One(port.to_string()));
                }
                true
            }
        }
    }
}

/// Same scheme, host and effective port.
pub(super) fn same_origin(a: &Url, b: &Url) -> bool {
    // Written alike is the same origin (a request under the base URL, in
    // base URL mode: every request); only differently written ones are
    // compared part by part. In base URL mode both are the listener's own
    // origin, one value: no text to compare.
    std::ptr::eq(a, b)
        || a[..url::Position::BeforePath] == b[..url::Position::BeforePath]
        || a.scheme().eq_ignore_ascii_case(b.scheme())
            && match (a.host_str(), b.host_str()) {
                (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
                (None, None) => true,
                _ => false,
            }
            && a.port_or_known_default() == b.port_or_known_default()
}

/// `scheme://host[:port]/path`, without credentials, query or fragment.
/// Borrowed straight from the serialization in the common case.
pub(super) fn clean_url(url: &Url) -> Cow<'_, str> {
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
pub(super) fn capture(compiled: &Compiled, haystack: &str, params: &mut RawParams) -> bool {
    let regex = match &compiled.matcher {
        Matcher::Regex(regex) if !compiled.groups.is_empty() => regex,
        Matcher::Steps {
            fallback: Some(regex),
            ..
        } if haystack.len() > STEPS_LIMIT => regex,
        Matcher::Steps { pieces, .. } => {
            let mut values = Values::new();
            if !run_steps(pieces, haystack, &mut values) {
                return false;
            }
            for (group, value) in compiled.groups.iter().zip(values) {
                push_param(params, &group.name, ParamValue::One(decode(value)));
            }
            return true;
        }
        matcher => return matcher.is_match(haystack),
    };
    let Some(caps) = regex.captures(haystack) else {
        return false;
    };
    for (i, group) in compiled.groups.iter().enumerate() {
        // A group that did not take part (optional absent, `*` with zero
        // segments) is left out, as path-to-regexp does.
        let Some(m) = caps.get(i + 1) else { continue };
        let value = if group.repeating {
            ParamValue::Many(m.as_str().split(group.separator).map(decode).collect())
        } else {
            ParamValue::One(decode(m.as_str()))
        };
        push_param(params, &group.name, value);
    }
    true
}

/// Adds a param; a repeated name keeps the last value, at the first position.
pub(super) fn push_param(params: &mut RawParams, name: &str, value: ParamValue) {
    if let Some(existing) = params.iter_mut().find(|p| p.name == name) {
        existing.value = value;
    } else {
        params.push(RawParam {
            name: name.to_owned(),
            value,
        });
    }
}

/// `decodeURIComponent`, except that undecodable input is kept as is
/// instead of failing the match.
fn decode(raw: &str) -> String {
    // Most values have nothing to decode.
    if !raw.contains('%') {
        return raw.to_owned();
    }
    match percent_decode_str(raw).decode_utf8() {
        Ok(decoded) => decoded.into_owned(),
        Err(_) => raw.to_owned(),
    }
}
