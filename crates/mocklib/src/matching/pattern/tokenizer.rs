//! Splitting pattern text into literals and parameters, path-to-regexp v6
//! style.

use std::borrow::Cow;

use regex_lite::Regex;

use super::{ColonRole, Ctx, Modifier, PatternError, Token};

/// path-to-regexp v6's default parameter pattern: one segment, lazily.
pub(super) const SEGMENT_PATTERN: &str = "[^/#?]+?";
/// MSW's `coercePath` turns each `*` into the unnamed group `(.*)`.
pub(super) const WILDCARD_PATTERN: &str = ".*";
/// A `:*` port wildcard inside a `*`-led pattern.
const PORT_PATTERN: &str = r"\d+";
/// A host parameter: one label. Unlike MSW (see the module docs), never a
/// `.`; `/`, `:`, `#` and `?` keep it out of the port and path of a `*`-led
/// pattern's URL.
pub(super) const HOST_LABEL_PATTERN: &str = "[^./:#?]+?";

pub(super) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// How [`tokenize`] reads the text it is given.
pub(super) struct Syntax<'a> {
    pub(super) colon_role: &'a dyn Fn(usize) -> ColonRole,
    /// Literal text is limited to the characters of a host name.
    pub(super) host: bool,
}

/// A path, or the path part of a pattern.
pub(super) const PATH_SYNTAX: Syntax<'static> = Syntax {
    colon_role: &|_| ColonRole::Param,
    host: false,
};

/// The host of an absolute pattern, its port already cut off.
pub(super) const HOST_SYNTAX: Syntax<'static> = Syntax {
    colon_role: &|_| ColonRole::HostParam,
    host: true,
};

impl Syntax<'_> {
    fn check_literal(&self, c: char, at: usize, ctx: &Ctx<'_>) -> Result<(), PatternError> {
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
pub(super) fn tokenize(
    chars: &[char],
    start: usize,
    ctx: &mut Ctx<'_>,
    syntax: &Syntax<'_>,
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
fn misplaced(c: char, at: usize, ctx: &Ctx<'_>) -> PatternError {
    let reason = match c {
        '+' => "unexpected '+': a modifier must follow a parameter \
                (write \\+ to match a literal '+')"
            .to_owned(),
        '(' => "unexpected '(': a custom pattern must directly follow a parameter \
                name, as in \":id(\\d+)\" (write \\( to match it literally)"
            .to_owned(),
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
    ctx: &mut Ctx<'_>,
    syntax: &Syntax<'_>,
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
    ctx: &Ctx<'_>,
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

fn missing_name(chars: &[char], at: usize, in_host: bool, ctx: &Ctx<'_>) -> PatternError {
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
    ctx: &mut Ctx<'_>,
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
    ctx: &Ctx<'_>,
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
    if modifier.repeats() && prefix.is_none() {
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
    ctx: &Ctx<'_>,
) -> Result<(String, usize), PatternError> {
    let Some(close) = closing_paren(chars, open) else {
        return Err(ctx.error(open, "unbalanced '(': the custom pattern is never closed"));
    };
    let pattern: String = chars[open + 1..close].iter().collect();
    if pattern.is_empty() {
        return Err(ctx.error(open, "empty custom pattern \"()\""));
    }
    check_custom_pattern(&pattern, open, ctx)?;
    Ok((pattern, close + 1))
}

/// The index of the `)` closing the `(` at `open`, skipping nested groups
/// and backslash escapes; `None` when it is never closed.
pub(super) fn closing_paren(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = open;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 1,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
        k += 1;
    }
    None
}

/// Validates a custom pattern on its own, so that a bad regex is reported
/// at its '(' rather than as an opaque failure of the whole pattern.
fn check_custom_pattern(pattern: &str, open: usize, ctx: &Ctx<'_>) -> Result<(), PatternError> {
    match Regex::new(&format!("(?:{pattern})")) {
        Err(e) => {
            let detail = e.to_string();
            let detail = detail
                .lines()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(detail.lines().next().unwrap_or("invalid regex"))
                .to_owned();
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
        Ok(_) => Ok(()),
    }
}
