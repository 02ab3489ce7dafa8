//! Tokens to a matcher: path-to-regexp v6 `tokensToRegexp`.

use std::borrow::Cow;
use std::fmt::Write as _;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use regex::Regex;

use super::{Compiled, Ctx, Group, Matcher, Modifier, PatternError, Token};

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
pub(super) fn compile_path(tokens: &[Token], ctx: &Ctx) -> Result<Compiled, PatternError> {
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
