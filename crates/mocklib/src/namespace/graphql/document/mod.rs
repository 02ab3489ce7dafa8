//! A parser of GraphQL executable documents that checks their syntax and
//! returns each operation's type and name, and nothing else.
//!
//! It follows the GraphQL specification: the document grammar of the
//! October 2021 edition, and the lexical grammar of the current one
//! (September 2025), which adds `\u{…}` escapes and allows any Unicode
//! scalar value in strings and comments. Where `graphql-parser` (the parser
//! mocklib used before) differs from the spec, this parser follows the spec:
//! see `oracle.rs`. No input panics, however deep it nests: nesting is
//! limited to [`MAX_DEPTH`] levels.

mod lexer;
#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;
pub(super) mod tree;

use std::fmt;

use self::lexer::{Kind, Lexer, Token};
use super::OperationType;

/// How deep selection sets, list and object values and list types may nest
/// (the spec sets no limit; the parser recurses, and the stack does).
pub(crate) const MAX_DEPTH: usize = 128;

/// An operation of a document: its type and its name (`None` when anonymous).
pub(crate) type Operation<'a> = (OperationType, Option<&'a str>);

/// The operations of `document` in document order (fragments are checked,
/// not returned), or why it is not a valid executable document.
pub(crate) fn operations(document: &str) -> Result<Vec<Operation<'_>>, SyntaxError> {
    parse(document).map_err(|error| SyntaxError::new(document, error))
}

/// Why a document does not parse: `Parse error at 3:7: expected `}`, found …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// 1-based; a line ends at `\n`, `\r\n` or `\r`.
    pub(crate) line: usize,
    /// 1-based, in characters (a tab is one).
    pub(crate) column: usize,
    pub(crate) message: String,
}

impl SyntaxError {
    fn new(document: &str, error: Error) -> Self {
        let ErrorAt { offset, message } = *error.0;
        let mut offset = offset.min(document.len());
        while !document.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &document.as_bytes()[..offset];
        let (mut line, mut line_start) = (1, 0);
        for (index, &byte) in before.iter().enumerate() {
            // `\r\n` is one terminator: count it at its `\n`.
            let crlf = byte == b'\r' && before.get(index + 1) == Some(&b'\n');
            if byte == b'\n' || (byte == b'\r' && !crlf) {
                line += 1;
                line_start = index + 1;
            }
        }
        SyntaxError {
            line,
            column: document[line_start..offset].chars().count() + 1,
            message,
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Parse error at {}:{}: {}",
            self.line, self.column, self.message
        )
    }
}

/// An error at a byte offset of the document. Boxed: errors are rare, and
/// a small `Result` keeps the recursive functions' frames small.
#[derive(Debug)]
struct Error(Box<ErrorAt>);

#[derive(Debug)]
struct ErrorAt {
    offset: usize,
    message: String,
}

impl Error {
    #[cold]
    fn new(offset: usize, message: impl Into<String>) -> Self {
        Error(Box::new(ErrorAt {
            offset,
            message: message.into(),
        }))
    }
}

fn parse(document: &str) -> Result<Vec<Operation<'_>>, Error> {
    let mut parser = Parser {
        cursor: Cursor::new(document)?,
    };
    parser.document()
}

const DEFINITION: &str = "`query`, `mutation`, `subscription`, `fragment` or `{`";

/// A recursive-descent parser with one token of lookahead (the grammar is
/// LL(1)); it keeps no syntax tree (`tree.rs` builds one, for contracts).
struct Parser<'a> {
    cursor: Cursor<'a>,
}

impl<'a> std::ops::Deref for Parser<'a> {
    type Target = Cursor<'a>;
    fn deref(&self) -> &Cursor<'a> {
        &self.cursor
    }
}

impl std::ops::DerefMut for Parser<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cursor
    }
}

/// The tokens with one of lookahead, and how deep the parser is: what this
/// syntax checker and the tree builder share.
struct Cursor<'a> {
    lexer: Lexer<'a>,
    /// The current token, not consumed yet.
    token: Token,
    depth: usize,
}

impl<'a> Parser<'a> {
    /// `ExecutableDocument : ExecutableDefinition+`
    fn document(&mut self) -> Result<Vec<Operation<'a>>, Error> {
        let mut operations = Vec::new();
        loop {
            match (self.token.kind, self.text()) {
                (Kind::Punct(b'{'), _) => {
                    self.selection_set()?;
                    operations.push((OperationType::Query, None));
                }
                (Kind::Name, "query") => {
                    operations.push(self.operation_definition(OperationType::Query)?);
                }
                (Kind::Name, "mutation") => {
                    operations.push(self.operation_definition(OperationType::Mutation)?);
                }
                (Kind::Name, "subscription") => {
                    operations.push(self.operation_definition(OperationType::Subscription)?);
                }
                (Kind::Name, "fragment") => self.fragment_definition()?,
                _ => return Err(self.unexpected(DEFINITION)),
            }
            if self.token.kind == Kind::End {
                return Ok(operations);
            }
        }
    }

    /// `OperationType Name? VariableDefinitions? Directives? SelectionSet`,
    /// at its operation type.
    fn operation_definition(
        &mut self,
        operation_type: OperationType,
    ) -> Result<Operation<'a>, Error> {
        self.advance()?;
        let name = match self.token.kind {
            Kind::Name => {
                let name = self.text();
                self.advance()?;
                Some(name)
            }
            Kind::Punct(b'(' | b'@' | b'{') => None,
            _ => return Err(self.unexpected("an operation name, `(`, `@` or `{`")),
        };
        if self.is(b'(') {
            self.variable_definitions()?;
        }
        self.directives(false)?;
        self.selection_set()?;
        Ok((operation_type, name))
    }

    /// `( VariableDefinition+ )`, each `$name: Type = default @directive`.
    fn variable_definitions(&mut self) -> Result<(), Error> {
        self.advance()?;
        loop {
            self.expect(b'$', "a variable (`$name`)")?;
            self.expect_name("a variable name")?;
            self.expect(b':', "`:` and the variable's type")?;
            self.type_reference()?;
            if self.eat(b'=')? {
                self.value(true)?;
            }
            self.directives(true)?;
            if self.eat(b')')? {
                return Ok(());
            }
            if !self.is(b'$') {
                return Err(self.unexpected("`$` or `)`"));
            }
        }
    }

    /// `Name`, `[Type]`, either followed by an optional `!`.
    fn type_reference(&mut self) -> Result<(), Error> {
        match self.token.kind {
            Kind::Name => self.advance()?,
            Kind::Punct(b'[') => {
                self.enter()?;
                self.type_reference()?;
                self.expect(b']', "`]`")?;
                self.depth -= 1;
            }
            _ => return Err(self.unexpected("a type")),
        }
        self.eat(b'!')?;
        Ok(())
    }

    /// `fragment Name on Type Directives? SelectionSet`, at `fragment`.
    fn fragment_definition(&mut self) -> Result<(), Error> {
        self.advance()?;
        if self.keyword("on") {
            return Err(self.unexpected("a fragment name (which cannot be `on`)"));
        }
        self.expect_name("a fragment name")?;
        if !self.keyword("on") {
            return Err(self.unexpected("`on` and a type name"));
        }
        self.advance()?;
        self.expect_name("a type name")?;
        self.directives(false)?;
        self.selection_set()
    }

    /// `{ Selection+ }`
    fn selection_set(&mut self) -> Result<(), Error> {
        if !self.is(b'{') {
            return Err(self.unexpected("`{`"));
        }
        self.enter()?;
        let mut first = true;
        loop {
            match self.token.kind {
                Kind::Name => self.field()?,
                Kind::Spread => self.fragment_selection()?,
                Kind::Punct(b'}') if !first => {
                    self.depth -= 1;
                    return self.advance();
                }
                _ if first => return Err(self.unexpected("a field or `...`")),
                _ => return Err(self.unexpected("a field, `...` or `}`")),
            }
            first = false;
        }
    }

    /// `Alias? Name Arguments? Directives? SelectionSet?`, at its first name.
    fn field(&mut self) -> Result<(), Error> {
        self.advance()?;
        if self.eat(b':')? {
            self.expect_name("a field name")?;
        }
        if self.eat(b'(')? {
            self.named_values(b')', false)?;
        }
        self.directives(false)?;
        if self.is(b'{') {
            self.selection_set()?;
        }
        Ok(())
    }

    /// A fragment spread `...Name Directives?` or an inline fragment
    /// `... (on Type)? Directives? SelectionSet`, at `...`.
    fn fragment_selection(&mut self) -> Result<(), Error> {
        self.advance()?;
        match self.token.kind {
            Kind::Name if self.keyword("on") => {
                self.advance()?;
                self.expect_name("a type name")?;
            }
            Kind::Name => {
                self.advance()?;
                return self.directives(false);
            }
            Kind::Punct(b'@' | b'{') => {}
            _ => return Err(self.unexpected("a fragment name, `on`, `@` or `{`")),
        }
        self.directives(false)?;
        self.selection_set()
    }

    /// `(@ Name Arguments?)*`; `constant`: no variables in the arguments.
    fn directives(&mut self, constant: bool) -> Result<(), Error> {
        while self.eat(b'@')? {
            self.expect_name("a directive name")?;
            if self.eat(b'(')? {
                self.named_values(b')', constant)?;
            }
        }
        Ok(())
    }

    /// `name: value` pairs after `(` or `{`, to `close`: arguments
    /// (`( … )`, at least one) or an object value (`{ … }`, maybe empty).
    fn named_values(&mut self, close: u8, constant: bool) -> Result<(), Error> {
        let what = if close == b')' {
            "an argument name"
        } else {
            "a field name"
        };
        if close == b'}' && self.eat(b'}')? {
            return Ok(());
        }
        loop {
            self.expect_name(what)?;
            self.expect(b':', "`:` and a value")?;
            self.value(constant)?;
            if self.eat(close)? {
                return Ok(());
            }
            if self.token.kind != Kind::Name {
                return Err(self.unexpected(if close == b')' {
                    "an argument name or `)`"
                } else {
                    "a field name or `}`"
                }));
            }
        }
    }

    /// `Value[Const]`: a variable (unless `constant`), a number, a string,
    /// a name (`true`, `false`, `null` or an enum value), a list, an object.
    fn value(&mut self, constant: bool) -> Result<(), Error> {
        match self.token.kind {
            Kind::Name | Kind::Int | Kind::Float | Kind::String | Kind::BlockString => {
                self.advance()
            }
            Kind::Punct(b'$') if constant => Err(self.unexpected(
                "a constant value (a default value or a variable's directive cannot use variables)",
            )),
            Kind::Punct(b'$') => {
                self.advance()?;
                self.expect_name("a variable name")
            }
            Kind::Punct(b'[') => {
                self.enter()?;
                while !self.eat(b']')? {
                    if !self.starts_value() {
                        return Err(self.unexpected("a value or `]`"));
                    }
                    self.value(constant)?;
                }
                self.depth -= 1;
                Ok(())
            }
            Kind::Punct(b'{') => {
                self.enter()?;
                self.named_values(b'}', constant)?;
                self.depth -= 1;
                Ok(())
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}

impl<'a> Cursor<'a> {
    fn new(document: &'a str) -> Result<Self, Error> {
        let mut lexer = Lexer::new(document);
        let token = lexer.next_token()?;
        Ok(Cursor {
            lexer,
            token,
            depth: 0,
        })
    }

    fn advance(&mut self) -> Result<(), Error> {
        self.token = self.lexer.next_token()?;
        Ok(())
    }

    fn text(&self) -> &'a str {
        &self.lexer.src[self.token.start..self.token.end]
    }

    fn is(&self, punct: u8) -> bool {
        self.token.kind == Kind::Punct(punct)
    }

    fn starts_value(&self) -> bool {
        match self.token.kind {
            Kind::Name | Kind::Int | Kind::Float | Kind::String | Kind::BlockString => true,
            Kind::Punct(punct) => matches!(punct, b'$' | b'[' | b'{'),
            Kind::Spread | Kind::End => false,
        }
    }

    fn keyword(&self, keyword: &str) -> bool {
        self.token.kind == Kind::Name && self.text() == keyword
    }

    /// Consumes `punct` if it is the current token.
    fn eat(&mut self, punct: u8) -> Result<bool, Error> {
        let found = self.is(punct);
        if found {
            self.advance()?;
        }
        Ok(found)
    }

    fn expect(&mut self, punct: u8, expected: &str) -> Result<(), Error> {
        if self.eat(punct)? {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_name(&mut self, expected: &str) -> Result<(), Error> {
        if self.token.kind != Kind::Name {
            return Err(self.unexpected(expected));
        }
        self.advance()
    }

    /// Consumes an opening `{` or `[`, one level deeper.
    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let message = format!("the document nests deeper than {MAX_DEPTH} levels");
            return Err(Error::new(self.token.start, message));
        }
        self.advance()
    }

    #[cold]
    fn unexpected(&self, expected: &str) -> Error {
        let found = match self.token.kind {
            Kind::End => "the end of the document".to_owned(),
            Kind::String | Kind::BlockString => "a string".to_owned(),
            Kind::Int | Kind::Float => format!("the number `{}`", self.text()),
            Kind::Name | Kind::Punct(_) | Kind::Spread => format!("`{}`", self.text()),
        };
        Error::new(
            self.token.start,
            format!("expected {expected}, found {found}"),
        )
    }
}
