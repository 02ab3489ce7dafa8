//! Tokens to a matcher: path-to-regexp v6 `tokensToRegexp`.

use std::borrow::Cow;
use std::fmt::Write as _;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use regex_lite::Regex;

use super::{Compiled, Ctx, Group, Matcher, Modifier, ParamClass, PatternError, Piece, Token};

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

/// Literal text as it appears in a request path.
fn encode_literal(text: &str) -> Cow<'_, str> {
    utf8_percent_encode(text, PATH_ENCODE_SET).into()
}

/// The lowercased encoded literal text before the first parameter.
pub(super) fn literal_prefix(tokens: &[Token]) -> String {
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
pub(super) fn compile_path(tokens: &[Token], ctx: &Ctx<'_>) -> Result<Compiled, PatternError> {
    if let Some(literal) = literal_matcher(tokens) {
        return Ok(literal);
    }
    if let Some(steps) = step_matcher(tokens, ctx)? {
        return Ok(steps);
    }
    compile_regex(tokens, ctx)
}

/// The general case: one anchored, case-insensitive regex.
pub(super) fn compile_regex(tokens: &[Token], ctx: &Ctx<'_>) -> Result<Compiled, PatternError> {
    let (regex, groups) = regex_of(tokens, ctx)?;
    Ok(Compiled {
        matcher: Matcher::Regex(regex),
        groups,
    })
}

/// The tokens' regex and what each of its capture groups means.
fn regex_of(tokens: &[Token], ctx: &Ctx<'_>) -> Result<(Regex, Vec<Group>), PatternError> {
    let mut re = String::from("(?i)^");
    let mut groups = Vec::new();
    for token in tokens {
        match token {
            Token::Literal(text) => re.push_str(&regex_lite::escape(&encode_literal(text))),
            Token::Param {
                name,
                prefix,
                pattern,
                modifier,
                ..
            } => {
                groups.push(Group {
                    name: name.clone(),
                    repeating: modifier.repeats(),
                    separator: prefix.unwrap_or('/'),
                });
                push_param_regex(&mut re, *prefix, pattern, *modifier);
            }
        }
    }
    // strict: false tolerates one trailing delimiter on the request.
    re.push_str("[/#?]?$");
    Ok((build_regex(&re, ctx)?, groups))
}

/// A pattern of literal text only (the common case) compares without a
/// regex, provided its encoded text is ASCII.
fn literal_matcher(tokens: &[Token]) -> Option<Compiled> {
    let mut literal = String::new();
    for token in tokens {
        let Token::Literal(text) = token else {
            return None;
        };
        literal.push_str(&encode_literal(text));
    }
    literal.is_ascii().then(|| Compiled {
        matcher: Matcher::Literal(literal),
        groups: Vec::new(),
    })
}

/// Patterns matched in steps, without running a regex (see
/// [`Matcher::Steps`]): literal text and built-in parameters (a segment, a
/// host label, a `*`), each exactly once. A parameter followed by the end
/// or by text starting with a character it cannot hold is *forced*: it runs
/// up to that character (a lazy `[^/#?]+?` has no other way to match, a
/// greedy `.*` at the end takes everything). At most one may be *free*
/// (`*/user`, `:name.json`): its ends are tried in the regex's order. Any
/// other shape goes to the regex.
fn step_matcher(tokens: &[Token], ctx: &Ctx<'_>) -> Result<Option<Compiled>, PatternError> {
    let mut pieces = Vec::new();
    let mut groups = Vec::new();
    let mut free = false;
    for (i, token) in tokens.iter().enumerate() {
        let (name, prefix, class) = match token {
            Token::Literal(text) => {
                let Some(text) = ascii(encode_literal(text)) else {
                    return Ok(None);
                };
                pieces.push(Piece::Literal(text));
                continue;
            }
            Token::Param {
                name,
                prefix,
                pattern,
                modifier: Modifier::One,
                ..
            } => match ParamClass::of(pattern) {
                Some(class) => (name, prefix, class),
                None => return Ok(None),
            },
            Token::Param { .. } => return Ok(None),
        };
        let forced = is_forced(class, tokens.get(i + 1));
        if !forced && std::mem::replace(&mut free, true) {
            return Ok(None);
        }
        if let Some(prefix) = prefix {
            pieces.push(Piece::Literal(prefix.to_string()));
        }
        groups.push(Group {
            name: name.clone(),
            repeating: false,
            separator: prefix.unwrap_or('/'),
        });
        pieces.push(if forced {
            Piece::Param(class)
        } else {
            Piece::Free(class)
        });
    }
    // Trying every end of a free parameter is quadratic in the worst case:
    // long URLs take the regex, which is linear.
    let fallback = match free {
        true => Some(regex_of(tokens, ctx)?.0),
        false => None,
    };
    Ok(Some(Compiled {
        matcher: Matcher::Steps { pieces, fallback },
        groups,
    }))
}

/// Whether a parameter of `class` followed by `next` has one possible end:
/// at the end of the pattern, or before text starting with a character it
/// cannot hold.
fn is_forced(class: ParamClass, next: Option<&Token>) -> bool {
    match next {
        None => true,
        Some(Token::Literal(next)) => next.bytes().next().is_some_and(|b| class.excludes(b)),
        Some(Token::Param { .. }) => false,
    }
}

fn ascii(text: Cow<'_, str>) -> Option<String> {
    text.is_ascii().then(|| text.into_owned())
}

/// Appends one parameter's capture group, as path-to-regexp writes it: the
/// prefix belongs to the optional or repeated group, and repeated segments
/// are captured as one run, split on the prefix later.
fn push_param_regex(re: &mut String, prefix: Option<char>, pattern: &str, modifier: Modifier) {
    let quantifier = match modifier {
        Modifier::Optional | Modifier::ZeroOrMore => "?",
        Modifier::One | Modifier::OneOrMore => "",
    };
    let Some(prefix) = prefix else {
        // Repetition without a prefix was rejected by `parse_modifier`.
        let _ = write!(re, "({pattern}){quantifier}");
        return;
    };
    let mut buf = [0u8; 4];
    let p = regex_lite::escape(prefix.encode_utf8(&mut buf));
    let _ = if modifier.repeats() {
        write!(
            re,
            "(?:{p}((?:{pattern})(?:{p}(?:{pattern}))*)){quantifier}"
        )
    } else {
        write!(re, "(?:{p}({pattern})){quantifier}")
    };
}

/// Compiles the assembled regex; its parts were validated while reading the
/// pattern, so only its size can make this fail.
fn build_regex(re: &str, ctx: &Ctx<'_>) -> Result<Regex, PatternError> {
    Regex::new(re).map_err(|e| {
        ctx.error(
            0,
            format!(
                "the pattern is too complex to compile: {}",
                e.to_string().lines().last().unwrap_or("")
            ),
        )
    })
}
