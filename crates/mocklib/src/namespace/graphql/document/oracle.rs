//! The parser against `graphql-parser` (the test oracle) on generated valid
//! documents, mutated ones and arbitrary strings.
//!
//! Where `graphql-parser` 0.4 deviates from the spec, the parser follows the
//! spec; [`known_deviation`] recognizes those inputs, and
//! `where_graphql_parser_deviates_from_the_spec` lists them:
//!
//! - numbers: it rejects an exponent whose first digit is `0` or `9` (`1e0`),
//!   integers beyond `i64`, and a number directly followed by `"`, `-` or a
//!   BOM (`[1"a"]`, `[1-1]`), which it lexes as part of the number;
//! - strings: it accepts a carriage return in a `"…"` string and `\u+041`
//!   (Rust's `from_str_radix` takes the `+`), and rejects `\u{…}` and
//!   surrogate pairs (`\uD83D\uDE00`), both valid since the spec's full
//!   Unicode support;
//! - it accepts a fragment named `on` and rejects directives on variable
//!   definitions (`$v: Int @deprecated`);
//! - it rejects more than 50 levels of `(`, `[` and `{` together; this parser
//!   allows [`MAX_DEPTH`] levels of selection sets, lists, objects and list
//!   types.

use proptest::prelude::*;
use proptest::sample::{Index, select};

use super::lexer::{Kind, Lexer, Token};
use super::*;

type ExpectedOperation = (OperationType, Option<String>);
type Expected = Vec<ExpectedOperation>;

/// The operations `graphql-parser` finds, or its error.
fn oracle(document: &str) -> Result<Expected, String> {
    use graphql_parser::query::{Definition, OperationDefinition as Op};
    let parsed = graphql_parser::query::parse_query::<&str>(document).map_err(|e| e.to_string())?;
    let mut found = Expected::new();
    for definition in &parsed.definitions {
        let Definition::Operation(operation) = definition else {
            continue;
        };
        found.push(match operation {
            Op::SelectionSet(_) => (OperationType::Query, None),
            Op::Query(query) => (OperationType::Query, query.name.map(str::to_owned)),
            Op::Mutation(mutation) => (OperationType::Mutation, mutation.name.map(str::to_owned)),
            Op::Subscription(subscription) => (
                OperationType::Subscription,
                subscription.name.map(str::to_owned),
            ),
        });
    }
    Ok(found)
}

fn ours(document: &str) -> Result<Expected, SyntaxError> {
    let owned = |(kind, name): Operation<'_>| (kind, name.map(str::to_owned));
    operations(document).map(|found| found.into_iter().map(owned).collect())
}

// ───── what graphql-parser gets wrong ─────

/// Why `graphql-parser` may disagree with the spec on `document`, if it
/// holds one of the constructs it gets wrong.
fn known_deviation(document: &str) -> Option<&'static str> {
    let mut lexer = Lexer::new(document);
    let (mut depth, mut previous, mut variables) = (0usize, None::<&str>, None::<usize>);
    loop {
        let token = match lexer.next_token() {
            Ok(token) => token,
            Err(error) => return lexer_error_deviation(document, error.0.offset, &error.0.message),
        };
        let text = &document[token.start..token.end];
        match token.kind {
            Kind::End => return None,
            Kind::Punct(b'(' | b'[' | b'{') => {
                // At the top level, `(` can only open variable definitions.
                if text == "(" && depth == 0 {
                    variables = Some(depth);
                }
                depth += 1;
                if depth >= 45 {
                    return Some("more than 50 levels of nesting");
                }
            }
            Kind::Punct(b')' | b']' | b'}') => {
                depth = depth.saturating_sub(1);
                if text == ")" && variables == Some(depth) {
                    variables = None;
                }
            }
            Kind::Punct(b'@') if variables.is_some() => return Some("a variable's directive"),
            Kind::Int | Kind::Float => {
                if let Some(reason) = number_deviation(document, token) {
                    return Some(reason);
                }
            }
            Kind::String if text.contains("\\u{") || has_surrogate_pair(text) => {
                return Some("a `\\u{…}` escape or a surrogate pair");
            }
            Kind::Name if text == "on" && previous == Some("fragment") => {
                return Some("a fragment named `on`");
            }
            _ => {}
        }
        previous = Some(text);
    }
}

fn number_deviation(document: &str, token: Token) -> Option<&'static str> {
    let text = &document[token.start..token.end];
    let next = document.as_bytes().get(token.end).copied();
    if let Some(b'"' | b'-' | 0xEF) = next {
        return Some("a number followed by `\"`, `-` or a BOM");
    }
    if let Some(exponent) = text.find(['e', 'E']) {
        if let Some(b'0' | b'9') = text.as_bytes().get(exponent + 1) {
            return Some("an exponent starting with 0 or 9");
        }
    }
    if token.kind == Kind::Int && text.parse::<i64>().is_err() {
        return Some("an integer beyond i64");
    }
    None
}

fn has_surrogate_pair(string: &str) -> bool {
    string.as_bytes().windows(4).any(|window| {
        window[..2] == *b"\\u"
            && matches!(window[2], b'd' | b'D')
            && matches!(window[3], b'8'..=b'9' | b'a'..=b'b' | b'A'..=b'B')
    })
}

/// Lexical errors of ours that `graphql-parser` does not make.
fn lexer_error_deviation(document: &str, offset: usize, message: &str) -> Option<&'static str> {
    let rest = &document.as_bytes()[offset..];
    if message.starts_with("unterminated string: it reaches the end of the line") {
        let line_break = rest.iter().find(|&&b| b == b'\n' || b == b'\r');
        return (line_break == Some(&b'\r')).then_some("a carriage return in a string");
    }
    if message.starts_with("invalid Unicode escape") && rest.starts_with(b"\\u+") {
        return Some("`\\u+XXX`");
    }
    None
}

#[test]
fn where_graphql_parser_deviates_from_the_spec() {
    let deep = format!("{}a{}", "{ a ".repeat(51), " }".repeat(51));
    // (document, valid by the spec)
    for (document, valid) in [
        ("{ f(x: 1e0) }", true),
        ("{ f(x: 2.5E9) }", true),
        ("{ f(x: 9223372036854775808) }", true),
        ("{ f(x: [1\"a\"]) }", true),
        ("{ f(x: [1-1]) }", true),
        ("{ f(x: 1\u{feff}) }", true),
        ("{ f(x: \"\\u{1F600}\") }", true),
        ("{ f(x: \"\\uD83D\\uDE00\") }", true),
        ("{ f(x: \"\\u+041\") }", false),
        ("{ f(x: \"a\rb\") }", false),
        ("query Q($v: Int @deprecated) { a }", true),
        ("fragment on on T { a } { a }", false),
        (&deep, true),
    ] {
        assert_eq!(operations(document).is_ok(), valid, "{document:?}");
        let oracle = oracle(document).is_ok();
        assert_eq!(
            oracle, !valid,
            "graphql-parser agrees with the spec on {document:?} now"
        );
        assert!(known_deviation(document).is_some(), "{document:?}");
    }
}

// ───── generated documents ─────

/// `Oracle`: only what `graphql-parser` gets right; `Spec`: all the spec allows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Oracle,
    Spec,
}

type Tokens = Vec<String>;

fn regex(pattern: &str) -> BoxedStrategy<String> {
    proptest::string::string_regex(pattern)
        .expect("a valid regex")
        .boxed()
}

fn words(words: &[&'static str]) -> BoxedStrategy<String> {
    select(words.to_vec()).prop_map(str::to_owned).boxed()
}

fn name() -> BoxedStrategy<String> {
    let keywords = [
        "query",
        "mutation",
        "subscription",
        "fragment",
        "on",
        "true",
        "false",
        "null",
    ];
    prop_oneof![4 => regex("[_A-Za-z][_0-9A-Za-z]{0,6}"), 1 => words(&keywords)].boxed()
}

fn fragment_name() -> BoxedStrategy<String> {
    name()
        .prop_filter("a fragment cannot be named `on`", |name| name != "on")
        .boxed()
}

fn number(mode: Mode) -> BoxedStrategy<String> {
    let (int, exponent) = match mode {
        // graphql-parser: integers within i64, exponents starting with 1-8 or a sign
        Mode::Oracle => (
            "-?(0|[1-9][0-9]{0,17})",
            "[eE]([+-][0-9]{1,3}|[1-8][0-9]{0,2})",
        ),
        Mode::Spec => ("-?(0|[1-9][0-9]{0,30})", "[eE][+-]?[0-9]{1,3}"),
    };
    let float = format!("{int}(\\.[0-9]{{1,4}}|{exponent}|\\.[0-9]{{1,4}}{exponent})");
    prop_oneof![regex(int), regex(&float)].boxed()
}

fn string_value(mode: Mode) -> BoxedStrategy<String> {
    let plain = any::<char>().prop_filter("not special in strings", |c| {
        !matches!(c, '"' | '\\' | '\n' | '\r')
    });
    let fixed = (0u32..0x1_0000).prop_filter_map("a scalar value", char::from_u32);
    let mut pieces = vec![
        (6, plain.prop_map(String::from).boxed()),
        (
            2,
            words(&["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]),
        ),
        (
            2,
            (fixed, any::<bool>())
                .prop_map(|(c, upper)| unicode_escape(c as u32, upper))
                .boxed(),
        ),
    ];
    if mode == Mode::Spec {
        let braces = any::<char>()
            .prop_map(|c| format!("\\u{{{:x}}}", c as u32))
            .boxed();
        let pair = (0x1_0000u32..=0x10_FFFF).prop_map(|c| {
            let c = c - 0x1_0000;
            unicode_escape(0xD800 + (c >> 10), false) + &unicode_escape(0xDC00 + (c & 0x3FF), true)
        });
        pieces.extend([(1, braces), (1, pair.boxed())]);
    }
    prop::collection::vec(proptest::strategy::Union::new_weighted(pieces), 0..8)
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()))
        .boxed()
}

fn unicode_escape(value: u32, upper: bool) -> String {
    if upper {
        format!("\\u{value:04X}")
    } else {
        format!("\\u{value:04x}")
    }
}

fn block_string() -> BoxedStrategy<String> {
    // Each piece ends with a character that cannot merge with the closing `"""`.
    let plain =
        || any::<char>().prop_filter("not a quote or backslash", |c| !matches!(c, '"' | '\\'));
    let piece = prop_oneof![
        4 => plain().prop_map(String::from),
        1 => words(&["\n", "\r\n", "  ", "\\\"\"\""]),
        1 => (words(&["\"", "\"\"", "\\"]), plain()).prop_map(|(prefix, c)| format!("{prefix}{c}")),
    ];
    prop::collection::vec(piece, 0..8)
        .prop_map(|pieces| format!("\"\"\"{}\"\"\"", pieces.concat()))
        .boxed()
}

fn value(mode: Mode, constant: bool) -> BoxedStrategy<Tokens> {
    let mut leaves = vec![
        number(mode),
        string_value(mode),
        block_string(),
        name(), // true, false, null or an enum value
    ];
    if !constant {
        leaves.push(name().prop_map(|name| format!("${name}")).boxed());
    }
    let leaf = proptest::strategy::Union::new(leaves).prop_map(|token| vec![token]);
    leaf.prop_recursive(3, 16, 4, |inner| {
        let list =
            prop::collection::vec(inner.clone(), 0..4).prop_map(|items| wrap("[", items, "]"));
        let field = (name(), inner).prop_map(|(name, value)| cat([vec![name, ":".into()], value]));
        let object = prop::collection::vec(field, 0..3).prop_map(|fields| wrap("{", fields, "}"));
        prop_oneof![list, object]
    })
    .boxed()
}

/// `open`, the token lists, `close`.
fn wrap(open: &str, items: Vec<Tokens>, close: &str) -> Tokens {
    cat([
        vec![open.to_owned()],
        items.concat(),
        vec![close.to_owned()],
    ])
}

fn cat<const N: usize>(parts: [Tokens; N]) -> Tokens {
    parts.concat()
}

fn type_reference() -> BoxedStrategy<Tokens> {
    let bang = |tokens: Tokens, non_null: bool| {
        if non_null {
            cat([tokens, vec!["!".into()]])
        } else {
            tokens
        }
    };
    (name(), any::<bool>())
        .prop_map(move |(name, non_null)| bang(vec![name], non_null))
        .prop_recursive(3, 6, 1, move |inner| {
            (inner, any::<bool>())
                .prop_map(move |(item, non_null)| bang(wrap("[", vec![item], "]"), non_null))
        })
        .boxed()
}

fn arguments(mode: Mode, constant: bool) -> BoxedStrategy<Tokens> {
    let argument = (name(), value(mode, constant))
        .prop_map(|(name, value)| cat([vec![name, ":".into()], value]));
    prop::collection::vec(argument, 1..4)
        .prop_map(|arguments| wrap("(", arguments, ")"))
        .boxed()
}

fn directives(mode: Mode, constant: bool) -> BoxedStrategy<Tokens> {
    let directive = (name(), prop::option::of(arguments(mode, constant)))
        .prop_map(|(name, arguments)| cat([vec!["@".into(), name], arguments.unwrap_or_default()]));
    prop::collection::vec(directive, 0..3)
        .prop_map(|directives| directives.concat())
        .boxed()
}

fn selection_set(mode: Mode) -> BoxedStrategy<Tokens> {
    let field = (
        prop::option::of(name()),
        name(),
        prop::option::of(arguments(mode, false)),
        directives(mode, false),
    )
        .prop_map(|(alias, name, arguments, directives)| {
            let alias = alias
                .map(|alias| vec![alias, ":".into()])
                .unwrap_or_default();
            cat([alias, vec![name], arguments.unwrap_or_default(), directives])
        })
        .boxed();
    let spread = (fragment_name(), directives(mode, false))
        .prop_map(|(name, directives)| cat([vec!["...".into(), name], directives]))
        .boxed();
    let leaf = prop::collection::vec(prop_oneof![field.clone(), spread.clone()], 1..4);
    leaf.prop_map(|selections| wrap("{", selections, "}"))
        .prop_recursive(4, 24, 4, move |inner| {
            let with_set =
                (field.clone(), inner.clone()).prop_map(|(field, set)| cat([field, set]));
            let inline = (prop::option::of(name()), directives(mode, false), inner).prop_map(
                |(condition, directives, set)| {
                    let condition = condition
                        .map(|name| vec!["on".into(), name])
                        .unwrap_or_default();
                    cat([vec!["...".into()], condition, directives, set])
                },
            );
            let selection = prop_oneof![field.clone(), spread.clone(), with_set, inline];
            prop::collection::vec(selection, 1..4).prop_map(|selections| wrap("{", selections, "}"))
        })
        .boxed()
}

fn variable_definitions(mode: Mode) -> BoxedStrategy<Tokens> {
    // graphql-parser has no directives on variable definitions.
    let directives = match mode {
        Mode::Oracle => Just(Tokens::new()).boxed(),
        Mode::Spec => directives(mode, true),
    };
    let definition = (
        name(),
        type_reference(),
        prop::option::of(value(mode, true)),
        directives,
    )
        .prop_map(|(name, kind, default, directives)| {
            let default = default
                .map(|value| cat([vec!["=".into()], value]))
                .unwrap_or_default();
            cat([
                vec!["$".into(), name, ":".into()],
                kind,
                default,
                directives,
            ])
        });
    prop::collection::vec(definition, 1..3)
        .prop_map(|definitions| wrap("(", definitions, ")"))
        .boxed()
}

/// A definition and the operation it is, if it is one.
fn definition(mode: Mode) -> BoxedStrategy<(Tokens, Option<ExpectedOperation>)> {
    let shorthand = selection_set(mode).prop_map(|set| (set, Some((OperationType::Query, None))));
    let kinds = [
        OperationType::Query,
        OperationType::Mutation,
        OperationType::Subscription,
    ];
    let operation = (
        select(kinds.to_vec()),
        prop::option::of(name()),
        prop::option::of(variable_definitions(mode)),
        directives(mode, false),
        selection_set(mode),
    )
        .prop_map(|(kind, name, variables, directives, set)| {
            let head = cat([
                vec![kind.as_str().to_owned()],
                name.iter().cloned().collect(),
            ]);
            (
                cat([head, variables.unwrap_or_default(), directives, set]),
                Some((kind, name)),
            )
        });
    let fragment = (
        fragment_name(),
        name(),
        directives(mode, false),
        selection_set(mode),
    )
        .prop_map(|(name, condition, directives, set)| {
            let head = vec!["fragment".into(), name, "on".into(), condition];
            (cat([head, directives, set]), None)
        });
    prop_oneof![shorthand, operation, fragment].boxed()
}

/// A valid document, its tokens joined by ignored characters, and its operations.
fn document(mode: Mode) -> BoxedStrategy<(String, Expected)> {
    prop::collection::vec(definition(mode), 1..4)
        .prop_flat_map(move |definitions| {
            let (tokens, operations): (Vec<Tokens>, Vec<_>) = definitions.into_iter().unzip();
            let tokens = tokens.concat();
            let separators = prop::collection::vec(separator(), tokens.len() + 1);
            (
                Just(tokens),
                Just(operations.into_iter().flatten().collect()),
                separators,
            )
        })
        .prop_map(move |(tokens, operations, separators)| {
            (join(&tokens, &separators, mode), operations)
        })
        .boxed()
}

fn separator() -> BoxedStrategy<String> {
    let separators = [
        "",
        "",
        "",
        " ",
        " ",
        "\n",
        ",",
        "\t",
        " ,\n\t",
        "# comment\n",
        "#\u{1F600} \u{1}\r\n",
        "\r\n",
        "\r",
        "\u{feff}",
        ",,,",
    ];
    words(&separators)
}

/// The tokens with the separators between them, and a space where two
/// tokens would otherwise merge (or where graphql-parser needs one).
fn join(tokens: &[String], separators: &[String], mode: Mode) -> String {
    let mut document = separators[0].clone();
    for (index, token) in tokens.iter().enumerate() {
        if index > 0 {
            let (previous, separator) = (&tokens[index - 1], &separators[index]);
            if needs_space(previous, separator, token, mode) {
                document.push(' ');
            }
            document.push_str(separator);
        }
        document.push_str(token);
    }
    document + &separators[tokens.len()]
}

fn needs_space(previous: &str, separator: &str, next: &str, mode: Mode) -> bool {
    let (last, first) = (
        previous.chars().last().unwrap_or(' '),
        next.chars().next().unwrap_or(' '),
    );
    let word = |c: char| c == '_' || c.is_ascii_alphanumeric();
    let number = matches!(previous.as_bytes()[0], b'-' | b'0'..=b'9');
    if separator.is_empty()
        && (word(last) && word(first) || last == '"' && first == '"' || number && first == '.')
    {
        return true;
    }
    // graphql-parser ends a number only at a space, a comma, a comment or a punctuator.
    let delimiter = separator.chars().next().unwrap_or(first);
    mode == Mode::Oracle && number && !" \n\r\t,#!$:=@|&()[]{}".contains(delimiter)
}

// ───── the properties ─────

fn check_agreement(document: &str) -> Result<(), TestCaseError> {
    match (ours(document), oracle(document)) {
        (Ok(found), Ok(expected)) => prop_assert_eq!(found, expected),
        (Err(_), Err(_)) => {}
        (ours, oracle) => prop_assert!(
            known_deviation(document).is_some(),
            "disagreement on {:?}: ours {:?}, graphql-parser {:?}",
            document,
            ours.map(drop),
            oracle.map(drop)
        ),
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(Index, usize),
    Insert(Index, String),
    Duplicate(Index, usize),
}

fn mutation() -> BoxedStrategy<Mutation> {
    let snippets = [
        "{", "}", "(", ")", "[", "]", "$", "@", ":", "=", "!", "...", ".", "on", "fragment",
        "query", "\"", "\"\"\"", "\\", "\\u", "\\u{", "\\uD83D", "1", "-", "0", "e", "E", "+", "#",
        "\n", "\r", ",", " ", "\u{feff}", "é", "\u{0}", "a", "9",
    ];
    prop_oneof![
        (any::<Index>(), 1..4usize).prop_map(|(at, len)| Mutation::Delete(at, len)),
        (any::<Index>(), words(&snippets)).prop_map(|(at, snippet)| Mutation::Insert(at, snippet)),
        (any::<Index>(), 1..8usize).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
    ]
    .boxed()
}

fn apply(document: &str, mutation: &Mutation) -> String {
    let boundaries: Vec<usize> = document
        .char_indices()
        .map(|(at, _)| at)
        .chain([document.len()])
        .collect();
    let position = |at: &Index| boundaries[at.index(boundaries.len())];
    let end = |start: usize, len: usize| {
        boundaries
            .iter()
            .copied()
            .find(|&b| b >= start + len)
            .unwrap_or(document.len())
    };
    match mutation {
        Mutation::Delete(at, len) => {
            let start = position(at);
            format!("{}{}", &document[..start], &document[end(start, *len)..])
        }
        Mutation::Insert(at, snippet) => {
            let start = position(at);
            format!("{}{snippet}{}", &document[..start], &document[start..])
        }
        Mutation::Duplicate(at, len) => {
            let start = position(at);
            let end = end(start, *len);
            format!("{}{}", &document[..end], &document[start..])
        }
    }
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Oracle), Just(Mode::Spec)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn valid_documents_parse_as_graphql_parser_parses_them((document, expected) in document(Mode::Oracle)) {
        prop_assert_eq!(ours(&document).map_err(|e| e.to_string()), Ok(expected.clone()), "{:?}", document);
        prop_assert_eq!(oracle(&document), Ok(expected), "{:?}", document);
    }

    #[test]
    fn valid_documents_with_what_only_the_spec_allows_parse((document, expected) in document(Mode::Spec)) {
        prop_assert_eq!(ours(&document).map_err(|e| e.to_string()), Ok(expected), "{:?}", document);
    }

    #[test]
    fn mutated_documents_agree_with_graphql_parser(
        (document, _) in mode().prop_flat_map(document),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mutated = mutations.iter().fold(document, |document, mutation| apply(&document, mutation));
        check_agreement(&mutated)?;
    }

    #[test]
    fn arbitrary_strings_agree_with_graphql_parser(
        document in prop_oneof![
            regex("[{}()\\[\\]$@:=!.a-z0-9 \"\\\\#,\n\r\t+eE\u{feff}-]{0,40}"),
            regex("(query|mutation|fragment|on|\\{|\\}|\\(|\\)|\\$|@|:|=|!|\\.\\.\\.|a|1|\"|\"\"\"| |\n){0,30}"),
            any::<String>(),
        ]
    ) {
        check_agreement(&document)?;
    }
}
