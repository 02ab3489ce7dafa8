//! One test per piece of the grammar, and the error positions.

use super::*;
use OperationType::{Mutation, Query, Subscription};

fn ops(document: &str) -> Vec<Operation<'_>> {
    operations(document).unwrap_or_else(|error| panic!("{document:?}: {error}"))
}

/// Parses `body` as the selection set of an anonymous query.
fn accepts(body: &str) -> bool {
    operations(&format!("{{ {body} }}")).is_ok()
}

/// The error for `document` as `line:column: message`.
fn error(document: &str) -> String {
    let error = operations(document).expect_err(document);
    format!("{}:{}: {}", error.line, error.column, error.message)
}

fn rejects(document: &str, expected: &str) {
    assert_eq!(error(document), expected, "{document:?}");
}

// ───── operations ─────

#[test]
fn operation_types_and_names() {
    assert_eq!(ops("{ a }"), [(Query, None)]);
    assert_eq!(ops("query { a }"), [(Query, None)]);
    assert_eq!(ops("query Q { a }"), [(Query, Some("Q"))]);
    assert_eq!(ops("mutation M { a }"), [(Mutation, Some("M"))]);
    assert_eq!(ops("subscription S { a }"), [(Subscription, Some("S"))]);
    assert_eq!(ops("mutation @live { a }"), [(Mutation, None)]);
    assert_eq!(
        ops("query A { a } fragment F on T { b } mutation B { c } { d }"),
        [(Query, Some("A")), (Mutation, Some("B")), (Query, None)]
    );
    // Keywords are ordinary names everywhere else.
    assert_eq!(
        ops("query query { query mutation: subscription fragment on }"),
        [(Query, Some("query"))]
    );
    assert_eq!(ops("query on { a }"), [(Query, Some("on"))]);
    assert_eq!(
        ops("fragment F on T { a } query Q { ...F }"),
        [(Query, Some("Q"))]
    );
}

#[test]
fn definitions_are_required_and_recognized() {
    rejects(
        "",
        "1:1: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found the end of the document",
    );
    rejects(
        " # only a comment\n",
        "2:1: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found the end of the document",
    );
    rejects(
        "Query { a }",
        "1:1: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found `Query`",
    );
    rejects(
        "{ a } }",
        "1:7: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found `}`",
    );
    rejects(
        "type T { a: Int }",
        "1:1: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found `type`",
    );
    rejects(
        "query Q",
        "1:8: expected `{`, found the end of the document",
    );
    rejects("query Q R { a }", "1:9: expected `{`, found `R`");
    rejects(
        "query 1 { a }",
        "1:7: expected an operation name, `(`, `@` or `{`, found the number `1`",
    );
    rejects(
        "query Q ()",
        "1:10: expected a variable (`$name`), found `)`",
    );
}

// ───── variable definitions and types ─────

#[test]
fn variable_definitions() {
    for document in [
        "query Q($a: Int) { a }",
        "query Q($a: Int!, $b: [String], $c: [[ID!]!]!) { a }",
        "query Q($a:Int$b:Int) { a }",
        "query ($a: Int = 1 $b: In = {a: [1, 2.5, \"s\", true, null, ENUM, {}]}) { a }",
        "query Q($a: Int = 1 @deprecated(reason: \"x\") @other) { a }",
        "query Q($ a : Int) { a }",
    ] {
        assert!(operations(document).is_ok(), "{document}");
    }
    rejects(
        "query Q($a) { a }",
        "1:11: expected `:` and the variable's type, found `)`",
    );
    rejects("query Q($a: ) { a }", "1:13: expected a type, found `)`");
    rejects("query Q($a: [Int) { a }", "1:17: expected `]`, found `)`");
    rejects(
        "query Q($a: Int!!) { a }",
        "1:17: expected `$` or `)`, found `!`",
    );
    rejects(
        "query Q($a: Int = $b) { a }",
        "1:19: expected a constant value (a default value or a variable's directive cannot use variables), found `$`",
    );
    rejects(
        "query Q($a: Int = [$b]) { a }",
        "1:20: expected a constant value (a default value or a variable's directive cannot use variables), found `$`",
    );
    rejects(
        "query Q($a: Int @d(x: $b)) { a }",
        "1:23: expected a constant value (a default value or a variable's directive cannot use variables), found `$`",
    );
    rejects(
        "query Q(a: Int) { a }",
        "1:9: expected a variable (`$name`), found `a`",
    );
    rejects(
        "query Q($a: Int { a }",
        "1:17: expected `$` or `)`, found `{`",
    );
}

// ───── selections ─────

#[test]
fn fields() {
    for body in [
        "a",
        "a b c",
        "alias: a",
        "alias : a(x: 1) @d { b }",
        "a(x: 1, y: $v) { b(z: [1]) { c } }",
        "a @include(if: $v) @skip(if: false)",
        "__typename",
        "_a_1",
    ] {
        assert!(accepts(body), "{body}");
    }
    rejects("{ }", "1:3: expected a field or `...`, found `}`");
    rejects("{ a() }", "1:5: expected an argument name, found `)`");
    rejects("{ a(x) }", "1:6: expected `:` and a value, found `)`");
    rejects("{ a(x:) }", "1:7: expected a value, found `)`");
    rejects(
        "{ a(x: 1 }",
        "1:10: expected an argument name or `)`, found `}`",
    );
    rejects("{ a: }", "1:6: expected a field name, found `}`");
    rejects("{ a {} }", "1:6: expected a field or `...`, found `}`");
    rejects("{ a @ }", "1:7: expected a directive name, found `}`");
    rejects(
        "{ a 1 }",
        "1:5: expected a field, `...` or `}`, found the number `1`",
    );
    rejects(
        "{ a",
        "1:4: expected a field, `...` or `}`, found the end of the document",
    );
}

#[test]
fn fragments() {
    for body in [
        "...F",
        "... F @d(x: 1)",
        "... on T { a }",
        "...on T @d { a }",
        "... @include(if: $v) { a }",
        "... { a }",
        "... on on { a }",
        "...onion",
    ] {
        assert!(accepts(body), "{body}");
    }
    rejects(
        "{ ... }",
        "1:7: expected a fragment name, `on`, `@` or `{`, found `}`",
    );
    rejects("{ ...on }", "1:9: expected a type name, found `}`");
    rejects("{ ... on T }", "1:12: expected `{`, found `}`");
    rejects(
        "{ ...F { a } }",
        "1:8: expected a field, `...` or `}`, found `{`",
    );
    assert!(operations("fragment F on T @d { a ...G } fragment G on U { b }").is_ok());
    rejects(
        "fragment on on T { a }",
        "1:10: expected a fragment name (which cannot be `on`), found `on`",
    );
    rejects(
        "fragment F T { a }",
        "1:12: expected `on` and a type name, found `T`",
    );
    rejects(
        "fragment F on { a }",
        "1:15: expected a type name, found `{`",
    );
    rejects(
        "fragment F on T",
        "1:16: expected `{`, found the end of the document",
    );
}

// ───── values ─────

#[test]
fn values() {
    for value in [
        "$v",
        "$ v",
        "1",
        "-1",
        "0",
        "-0",
        "1.5",
        "-0.0",
        "1e10",
        "1E-3",
        "1.5e+3",
        "\"s\"",
        "\"\"\"block\"\"\"",
        "true",
        "false",
        "null",
        "ENUM",
        "[]",
        "[1 2, 3]",
        "[[]]",
        "{}",
        "{a: 1, b: {c: [$v]}}",
        "{a:1 b:2}",
        "[1\"s\"]",
        "[1-1]",
        "9999999999999999999999",
    ] {
        assert!(accepts(&format!("f(x: {value})")), "{value}");
    }
    rejects("{ f(x: [1 }", "1:11: expected a value or `]`, found `}`");
    rejects("{ f(x: {a}) }", "1:10: expected `:` and a value, found `}`");
    rejects(
        "{ f(x: {a: 1) }",
        "1:13: expected a field name or `}`, found `)`",
    );
    rejects(
        "{ f(x: {1: 1}) }",
        "1:9: expected a field name, found the number `1`",
    );
    rejects(
        "{ f(x: $1) }",
        "1:9: expected a variable name, found the number `1`",
    );
    rejects("{ f(x: @) }", "1:8: expected a value, found `@`");
    rejects("{ f(x: ...) }", "1:8: expected a value, found `...`");
}

// ───── lexical grammar ─────

#[test]
fn ignored_tokens() {
    for document in [
        "\u{feff}{ a }",
        "{\u{feff}a\u{feff}}",
        ",,{,a,,b,},,",
        "\t{\ta\t}\t",
        "{ a }\n\r\n\r",
        "# comment\n{ a # comment } still a comment\r b }# end",
        "{a}#",
        "# comment with any character \u{0} \u{1F600} \u{7}\n{ a }",
    ] {
        assert_eq!(ops(document), [(Query, None)], "{document:?}");
    }
    rejects("{ a \u{a0} }", "1:5: unexpected character `\\u{a0}`");
    rejects("{ a \u{0} }", "1:5: unexpected character `\\0`");
    rejects("{ a \u{b} }", "1:5: unexpected character `\\u{b}`");
    rejects("{ a % }", "1:5: unexpected character `%`");
    rejects("{ a ; }", "1:5: unexpected character `;`");
    rejects("{ a 'b' }", "1:5: unexpected character `'`");
    rejects("{ é }", "1:3: unexpected character `é`");
}

#[test]
fn punctuators_and_names() {
    rejects(
        "{ a | b }",
        "1:5: expected a field, `...` or `}`, found `|`",
    );
    rejects(
        "{ a & b }",
        "1:5: expected a field, `...` or `}`, found `&`",
    );
    rejects("{ .. a }", "1:3: unexpected `.` (the spread is `...`)");
    rejects("{ a. }", "1:4: unexpected `.` (the spread is `...`)");
    // `....` is a spread then a lone `.`.
    rejects("{ ....F }", "1:6: unexpected `.` (the spread is `...`)");
    assert!(accepts("a_B9 _ __ Z"));
    // A name ends where name characters end: `a-b` is not one name.
    rejects(
        "{ a-b }",
        "1:5: invalid number `-`: expected a digit after `-`, found `b`",
    );
}

#[test]
fn numbers() {
    for (value, valid) in [
        ("0", true),
        ("-0", true),
        ("123", true),
        ("0.0", true),
        ("1.25", true),
        ("1e3", true),
        ("1e0", true),
        ("1e9", true),
        ("1E+3", true),
        ("1e-3", true),
        ("1.5e05", true),
        ("01", false),
        ("-01", false),
        ("00", false),
        ("1.", false),
        (".5", false),
        ("1.e5", false),
        ("1e", false),
        ("1e+", false),
        ("-", false),
        ("--1", false),
        ("+1", false),
        ("1.2.3", false),
        ("1a", false),
        ("0x1F", false),
        ("1_000", false),
        ("1.5e3e3", false),
        ("1...", false),
    ] {
        assert_eq!(accepts(&format!("f(x: {value})")), valid, "{value}");
    }
}

#[test]
fn number_errors() {
    rejects(
        "{ f(x: 01) }",
        "1:9: invalid number `0`: it cannot be followed by `1`",
    );
    rejects(
        "{ f(x: 1.) }",
        "1:10: invalid number `1.`: expected a digit after `.`, found `)`",
    );
    rejects(
        "{ f(x: 1e) }",
        "1:10: invalid number `1e`: expected a digit in the exponent, found `)`",
    );
    rejects(
        "{ f(x: -) }",
        "1:9: invalid number `-`: expected a digit after `-`, found `)`",
    );
    rejects(
        "{ f(x: 12ab) }",
        "1:10: invalid number `12`: it cannot be followed by `a`",
    );
    rejects(
        "{ f(x: 1.5.) }",
        "1:11: invalid number `1.5`: it cannot be followed by `.`",
    );
    rejects(
        "{ f(x: 1",
        "1:9: expected an argument name or `)`, found the end of the document",
    );
}

#[test]
fn strings() {
    for string in [
        r#""""#,
        r#""plain""#,
        r#""  spaces and ＵＮＩＣＯＤＥ 🎉 ""#,
        r#""escapes \" \\ \/ \b \f \n \r \t""#,
        r#""\u0041\u00e9\uFFFF\u0000""#,
        r#""\u{1F600} \u{0} \u{10FFFF} \u{000000041}""#,
        r#""\uD83D\uDE00 \uD800\uDC00 \uDBFF\uDFFF""#,
        "\"tab\tand control \u{1} characters\"",
        r##""# not a comment""##,
    ] {
        assert!(accepts(&format!("f(x: {string})")), "{string}");
    }
    rejects(r#"{ f(x: "a\x") }"#, r"1:10: invalid escape sequence `\x`");
    for escape in [r"\u12", r"\u12G4", r"\u{}", r"\u{41", r"\u+123", r"\u"] {
        rejects(
            &format!(r#"{{ f(x: "{escape}") }}"#),
            r"1:9: invalid Unicode escape: `\u` takes 4 hexadecimal digits or `{…}`",
        );
    }
    // Not scalar values: beyond U+10FFFF, or a surrogate that is not the
    // first half of a pair (`\uD83D\uDE00`).
    for (escape, reported) in [
        (r"\u{110000}", r"\u{110000}"),
        (r"\u{FFFFFFFFFFFF}", r"\u{FFFFFFFFFFFF}"),
        (r"\u{D800}", r"\u{D800}"),
        (r"\uD800", r"\uD800"),
        (r"\uD800\u0041", r"\uD800"),
        (r"\uD800\uD800", r"\uD800"),
        (r"\uDE00", r"\uDE00"),
        (r"\uDE00\uD83D", r"\uDE00"),
    ] {
        rejects(
            &format!(r#"{{ f(x: "{escape}") }}"#),
            &format!("1:9: invalid Unicode escape `{reported}`: not a Unicode scalar value"),
        );
    }
    let line_break = "unterminated string: it reaches the end of the line \
                      (a line break in a string is written `\\n`)";
    rejects("{ f(x: \"a\nb\") }", &format!("1:8: {line_break}"));
    rejects("{ f(x: \"a\rb\") }", &format!("1:8: {line_break}"));
    rejects("{ f(x: \"abc", "1:8: unterminated string");
    rejects("{ f(x: \"abc\\", "1:8: unterminated string");
    rejects(r#"{ f(x: "abc\") }"#, "1:8: unterminated string");
}

#[test]
fn block_strings() {
    for string in [
        r#""""""""#,
        r#""""block""""#,
        "\"\"\"multi\n  line\r\n \"quoted\" \"\"twice\"\" \\n \\u{zz} \\\"\"\" \"\"\"",
        r#""""\"""""""#,
        r#""""\\\"""""""#,
    ] {
        assert!(accepts(&format!("f(x: {string})")), "{string}");
    }
    // `""` then `"` opens a block string: `""""""` is one empty block string.
    assert!(accepts(r#"f(x: """""")"#));
    rejects(r#"{ f(x: """) }"#, "1:8: unterminated block string");
    rejects(r#"{ f(x: """ \""") }"#, "1:8: unterminated block string");
    // The block string ends at the first `"""`; the fourth quote opens a string.
    rejects(r#"{ f(x: """a"""") }"#, "1:15: unterminated string");
}

// ───── error positions ─────

#[test]
fn positions_count_lines_and_characters() {
    rejects(
        "query Broken { a ",
        "1:18: expected a field, `...` or `}`, found the end of the document",
    );
    rejects(
        "query {\n  user {\n    id\n  }\n",
        "5:1: expected a field, `...` or `}`, found the end of the document",
    );
    rejects(
        "{\n  a(x: 1\n  }",
        "3:3: expected an argument name or `)`, found `}`",
    );
    // `\r\n` is one line terminator, `\r` alone another.
    rejects(
        "{\r\n  a\r\n}\r\n}",
        "4:1: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found `}`",
    );
    rejects(
        "{\r  a\r}\r}",
        "4:1: expected `query`, `mutation`, `subscription`, `fragment` or `{`, found `}`",
    );
    rejects("# a\r# b\n{ a }\r\n\n%", "5:1: unexpected character `%`");
    // Columns count characters, not bytes; a tab or a BOM is one.
    rejects("{ f(x: \"ééé\") %", "1:15: unexpected character `%`");
    rejects(
        "\u{feff}\t{ a )",
        "1:7: expected a field, `...` or `}`, found `)`",
    );
    assert_eq!(
        operations("{ a").unwrap_err().to_string(),
        "Parse error at 1:4: expected a field, `...` or `}`, found the end of the document"
    );
}

// ───── nesting ─────

fn nested_selections(depth: usize) -> String {
    format!("{}a{}", "{ a ".repeat(depth), " }".repeat(depth))
}

fn nested_lists(depth: usize) -> String {
    format!("{{ f(x: {}1{}) }}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn nesting_is_limited_without_overflowing_the_stack() {
    // A small stack (debug builds have big frames): the limit keeps the
    // recursion within it, whatever the input.
    let check = || {
        assert!(operations(&nested_selections(MAX_DEPTH)).is_ok());
        assert!(operations(&nested_lists(MAX_DEPTH - 1)).is_ok());
        let objects = format!(
            "{{ f(x: {}1{}) }}",
            "{a: ".repeat(MAX_DEPTH - 1),
            "}".repeat(MAX_DEPTH - 1)
        );
        assert!(operations(&objects).is_ok());
        let types = format!(
            "query ($v: {}Int{}) {{ a }}",
            "[".repeat(MAX_DEPTH),
            "]!".repeat(MAX_DEPTH)
        );
        assert!(operations(&types).is_ok());
        let too_deep = format!("the document nests deeper than {MAX_DEPTH} levels");
        for document in [
            nested_selections(MAX_DEPTH + 1),
            nested_lists(MAX_DEPTH),
            format!("{{ f(x: {}", "[{a: ".repeat(100_000)),
            format!("query ($v: {}", "[".repeat(100_000)),
        ] {
            let error = operations(&document).unwrap_err();
            assert_eq!(error.message, too_deep);
        }
    };
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(check)
        .unwrap()
        .join()
        .unwrap();
}
