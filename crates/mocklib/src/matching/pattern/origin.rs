//! The origin of a pattern: `scheme://host[:port]` of an absolute URL, and
//! the authority of a `*`-led pattern.

use std::fmt::Write as _;
use std::ops::Range;

use url::Url;

use super::compiler::compile_path;
use super::tokenizer::{
    HOST_LABEL_PATTERN, HOST_SYNTAX, PATH_SYNTAX, Syntax, closing_paren, is_name_char, tokenize,
};
use super::{ColonRole, Ctx, HostMatcher, Kind, OriginMatcher, PatternError, PortMatcher, Token};

/// The index of the `:` in a leading `scheme://`, if the pattern starts so.
pub(super) fn scheme_colon(chars: &[char]) -> Option<usize> {
    if !chars.first()?.is_ascii_alphabetic() {
        return None;
    }
    let colon = chars
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))?;
    (chars.get(colon..colon + 3)? == [':', '/', '/']).then_some(colon)
}

/// `scheme://authority/path`: the origin matcher and the path's tokens.
pub(super) fn parse_absolute(
    chars: &[char],
    colon: usize,
    ctx: &mut Ctx<'_>,
) -> Result<(Kind, Vec<Token>), PatternError> {
    let origin = parse_origin(chars, colon, ctx)?;
    let tokens = match origin.path_start {
        Some(start) => tokenize(chars, start, ctx, &PATH_SYNTAX)?,
        // No path after the authority means the root path.
        None => vec![Token::Literal("/".to_owned())],
    };
    check_host_names(origin.host_tokens.iter().chain(&tokens), origin.host, ctx)?;
    Ok((Kind::Absolute(origin.matcher), tokens))
}

/// A pattern starting with `*`, matched against the whole clean URL.
pub(super) fn parse_wildcard_led(
    chars: &[char],
    ctx: &mut Ctx<'_>,
) -> Result<Vec<Token>, PatternError> {
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
    ctx: &Ctx<'_>,
) -> Result<(), PatternError> {
    let mut seen: Vec<(&str, bool)> = Vec::new();
    for token in tokens {
        let Token::Param { name, at, .. } = token else {
            continue;
        };
        let in_host = host.contains(at);
        let first_in_host = seen
            .iter()
            .find(|(seen, _)| seen == name)
            .map(|&(_, first_in_host)| first_in_host);
        if first_in_host.is_some_and(|first_in_host| in_host || first_in_host) {
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
fn parse_origin(
    chars: &[char],
    colon: usize,
    ctx: &mut Ctx<'_>,
) -> Result<ParsedOrigin, PatternError> {
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
    closing_paren(chars, open).map_or(chars.len(), |close| close + 1)
}

/// Where the host ends and the port starts, if there is one. An IPv6 host
/// is bracketed and contains colons.
fn split_host_port(
    chars: &[char],
    start: usize,
    authority: &Authority,
    ctx: &Ctx<'_>,
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
    ctx: &Ctx<'_>,
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
    ctx: &mut Ctx<'_>,
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
fn reject_port_lookalike(tokens: &[Token], ctx: &Ctx<'_>) -> Result<(), PatternError> {
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
    ctx: &Ctx<'_>,
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
    ctx: &Ctx<'_>,
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
