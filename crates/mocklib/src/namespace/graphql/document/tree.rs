//! Syntax trees, for contracts: of executable documents (what a request
//! sends) and of type system documents (a schema's SDL).
//!
//! The handlers' lookup does not build them: it needs each operation's type
//! and name only, which `Parser` reads without allocating. Both share the
//! lexer and the [`Cursor`]; the same nesting limit applies, so no input
//! panics or overflows the stack.

use std::fmt;

use super::lexer::Kind;
use super::{Cursor, Error, SyntaxError};
use crate::namespace::graphql::OperationType;

/// An executable document: its operations and fragments, in document order.
#[derive(Debug)]
pub(crate) struct Executable<'a> {
    pub(crate) operations: Vec<OperationDef<'a>>,
    pub(crate) fragments: Vec<FragmentDef<'a>>,
}

#[derive(Debug)]
pub(crate) struct OperationDef<'a> {
    pub(crate) operation_type: OperationType,
    pub(crate) name: Option<&'a str>,
    pub(crate) variables: Vec<VariableDef<'a>>,
    pub(crate) selection_set: Vec<Selection<'a>>,
}

/// `$name: Type = default`.
#[derive(Debug)]
pub(crate) struct VariableDef<'a> {
    pub(crate) name: &'a str,
    pub(crate) ty: TypeRef,
    pub(crate) default: Option<Value<'a>>,
}

/// `fragment Name on Type { … }`.
#[derive(Debug)]
pub(crate) struct FragmentDef<'a> {
    pub(crate) name: &'a str,
    pub(crate) type_condition: &'a str,
    pub(crate) selection_set: Vec<Selection<'a>>,
}

#[derive(Debug)]
pub(crate) enum Selection<'a> {
    Field(Field<'a>),
    /// `...Name @directives`
    Spread {
        name: &'a str,
        directives: Vec<Directive<'a>>,
    },
    /// `... on Type @directives { … }` (the type is optional).
    Inline {
        type_condition: Option<&'a str>,
        directives: Vec<Directive<'a>>,
        selection_set: Vec<Selection<'a>>,
    },
}

#[derive(Debug)]
pub(crate) struct Field<'a> {
    pub(crate) alias: Option<&'a str>,
    pub(crate) name: &'a str,
    pub(crate) arguments: Vec<Argument<'a>>,
    pub(crate) directives: Vec<Directive<'a>>,
    /// Empty when the field has none.
    pub(crate) selection_set: Vec<Selection<'a>>,
}

impl<'a> Field<'a> {
    /// The key of the field in the response: its alias, else its name.
    pub(crate) fn response_key(&self) -> &'a str {
        self.alias.unwrap_or(self.name)
    }
}

/// `@name(arguments)`.
#[derive(Debug)]
pub(crate) struct Directive<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Vec<Argument<'a>>,
}

/// `name: value`, in arguments and object values.
pub(crate) type Argument<'a> = (&'a str, Value<'a>);

/// A value as written: scalars keep their source text (strings with their
/// quotes), which is all a type check needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    Variable(&'a str),
    Int(&'a str),
    Float(&'a str),
    String(&'a str),
    Boolean(bool),
    Null,
    Enum(&'a str),
    List(Vec<Value<'a>>),
    Object(Vec<Argument<'a>>),
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Variable(name) => write!(f, "${name}"),
            Value::Int(text) | Value::Float(text) | Value::String(text) | Value::Enum(text) => {
                f.write_str(text)
            }
            Value::Boolean(value) => write!(f, "{value}"),
            Value::Null => f.write_str("null"),
            Value::List(items) => {
                f.write_str("[")?;
                for (index, item) in items.iter().enumerate() {
                    let separator = if index == 0 { "" } else { ", " };
                    write!(f, "{separator}{item}")?;
                }
                f.write_str("]")
            }
            Value::Object(fields) => {
                f.write_str("{")?;
                for (index, (name, value)) in fields.iter().enumerate() {
                    let separator = if index == 0 { "" } else { "," };
                    write!(f, "{separator} {name}: {value}")?;
                }
                f.write_str(" }")
            }
        }
    }
}

/// A type reference: `Int`, `[Int!]!`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeRef {
    Named(String),
    List(Box<TypeRef>),
    NonNull(Box<TypeRef>),
}

impl TypeRef {
    /// The named type at its core (`Int` of `[Int!]!`).
    pub(crate) fn named(&self) -> &str {
        match self {
            TypeRef::Named(name) => name,
            TypeRef::List(inner) | TypeRef::NonNull(inner) => inner.named(),
        }
    }
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeRef::Named(name) => f.write_str(name),
            TypeRef::List(inner) => write!(f, "[{inner}]"),
            TypeRef::NonNull(inner) => write!(f, "{inner}!"),
        }
    }
}

/// A definition of a type system document (directive definitions are read
/// and dropped: contracts do not check directives).
#[derive(Debug)]
pub(crate) enum Definition {
    /// `schema { query: Query … }`, or its extension.
    Schema {
        extend: bool,
        roots: Vec<(OperationType, String)>,
    },
    /// A type, or (with `extend`) more of one.
    Type {
        extend: bool,
        name: String,
        kind: TypeKind,
    },
}

/// What a type definition holds.
#[derive(Debug, Clone)]
pub(crate) enum TypeKind {
    Scalar,
    Object {
        interfaces: Vec<String>,
        fields: Vec<FieldDef>,
    },
    Interface {
        interfaces: Vec<String>,
        fields: Vec<FieldDef>,
    },
    Union(Vec<String>),
    Enum(Vec<String>),
    Input(Vec<InputValueDef>),
}

impl TypeKind {
    /// Its SDL keyword, and what messages call it.
    fn words(&self) -> (&'static str, &'static str) {
        match self {
            TypeKind::Scalar => ("scalar", "scalar"),
            TypeKind::Object { .. } => ("type", "object type"),
            TypeKind::Interface { .. } => ("interface", "interface"),
            TypeKind::Union(_) => ("union", "union"),
            TypeKind::Enum(_) => ("enum", "enum"),
            TypeKind::Input(_) => ("input", "input type"),
        }
    }

    /// `type`, `enum`…
    pub(crate) fn keyword(&self) -> &'static str {
        self.words().0
    }

    /// `object type`, `enum`…: for messages.
    pub(crate) fn describe(&self) -> &'static str {
        self.words().1
    }
}

/// A field of an object type or interface.
#[derive(Debug, Clone)]
pub(crate) struct FieldDef {
    pub(crate) name: String,
    pub(crate) arguments: Vec<InputValueDef>,
    pub(crate) ty: TypeRef,
}

/// An argument of a field, or a field of an input type.
#[derive(Debug, Clone)]
pub(crate) struct InputValueDef {
    pub(crate) name: String,
    pub(crate) ty: TypeRef,
    pub(crate) has_default: bool,
}

impl InputValueDef {
    /// Whether it must be given: non-null and no default.
    pub(crate) fn required(&self) -> bool {
        matches!(self.ty, TypeRef::NonNull(_)) && !self.has_default
    }
}

/// The tree of an executable document, or why it does not parse.
pub(crate) fn executable(document: &str) -> Result<Executable<'_>, SyntaxError> {
    Cursor::new(document)
        .and_then(|mut cursor| cursor.read_executable())
        .map_err(|error| SyntaxError::new(document, error))
}

/// The definitions of a type system document (SDL), or why it does not
/// parse.
pub(crate) fn type_system(document: &str) -> Result<Vec<Definition>, SyntaxError> {
    Cursor::new(document)
        .and_then(|mut cursor| cursor.read_type_system())
        .map_err(|error| SyntaxError::new(document, error))
}

const TYPE_DEFINITION: &str = "a definition (`type`, `interface`, `union`, `enum`, `input`, \
                               `scalar`, `schema`, `directive` or `extend`)";

/// Words that start a definition: what ends a legacy `implements A B` list.
const DEFINITION_WORDS: [&str; 9] = [
    "type",
    "interface",
    "union",
    "enum",
    "input",
    "scalar",
    "schema",
    "directive",
    "extend",
];

impl<'a> Cursor<'a> {
    fn read_name(&mut self, expected: &str) -> Result<&'a str, Error> {
        if self.token.kind != Kind::Name {
            return Err(self.unexpected(expected));
        }
        let name = self.text();
        self.advance()?;
        Ok(name)
    }

    fn read_executable(&mut self) -> Result<Executable<'a>, Error> {
        let mut document = Executable {
            operations: Vec::new(),
            fragments: Vec::new(),
        };
        loop {
            let operation_type = match (self.token.kind, self.text()) {
                (Kind::Punct(b'{'), _) => {
                    let selection_set = self.read_selection_set()?;
                    document.operations.push(OperationDef {
                        operation_type: OperationType::Query,
                        name: None,
                        variables: Vec::new(),
                        selection_set,
                    });
                    None
                }
                (Kind::Name, "query") => Some(OperationType::Query),
                (Kind::Name, "mutation") => Some(OperationType::Mutation),
                (Kind::Name, "subscription") => Some(OperationType::Subscription),
                (Kind::Name, "fragment") => {
                    self.advance()?;
                    if self.keyword("on") {
                        return Err(self.unexpected("a fragment name (which cannot be `on`)"));
                    }
                    let name = self.read_name("a fragment name")?;
                    if !self.keyword("on") {
                        return Err(self.unexpected("`on` and a type name"));
                    }
                    self.advance()?;
                    let type_condition = self.read_name("a type name")?;
                    self.read_directives(false)?;
                    let selection_set = self.read_selection_set()?;
                    document.fragments.push(FragmentDef {
                        name,
                        type_condition,
                        selection_set,
                    });
                    None
                }
                _ => return Err(self.unexpected(super::DEFINITION)),
            };
            if let Some(operation_type) = operation_type {
                let operation = self.read_operation(operation_type)?;
                document.operations.push(operation);
            }
            if self.token.kind == Kind::End {
                return Ok(document);
            }
        }
    }

    /// An operation, at its type.
    fn read_operation(&mut self, operation_type: OperationType) -> Result<OperationDef<'a>, Error> {
        self.advance()?;
        let name = match self.token.kind {
            Kind::Name => Some(self.read_name("an operation name")?),
            Kind::Punct(b'(' | b'@' | b'{') => None,
            _ => return Err(self.unexpected("an operation name, `(`, `@` or `{`")),
        };
        let mut variables = Vec::new();
        if self.eat(b'(')? {
            loop {
                self.expect(b'$', "a variable (`$name`)")?;
                let name = self.read_name("a variable name")?;
                self.expect(b':', "`:` and the variable's type")?;
                let ty = self.read_type()?;
                let default = if self.eat(b'=')? {
                    Some(self.read_value(true)?)
                } else {
                    None
                };
                self.read_directives(true)?;
                variables.push(VariableDef { name, ty, default });
                if self.eat(b')')? {
                    break;
                }
                if !self.is(b'$') {
                    return Err(self.unexpected("`$` or `)`"));
                }
            }
        }
        self.read_directives(false)?;
        Ok(OperationDef {
            operation_type,
            name,
            variables,
            selection_set: self.read_selection_set()?,
        })
    }

    /// `Name`, `[Type]`, either followed by an optional `!`.
    fn read_type(&mut self) -> Result<TypeRef, Error> {
        let ty = match self.token.kind {
            Kind::Name => TypeRef::Named(self.read_name("a type")?.to_owned()),
            Kind::Punct(b'[') => {
                self.enter()?;
                let inner = self.read_type()?;
                self.expect(b']', "`]`")?;
                self.depth -= 1;
                TypeRef::List(Box::new(inner))
            }
            _ => return Err(self.unexpected("a type")),
        };
        Ok(if self.eat(b'!')? {
            TypeRef::NonNull(Box::new(ty))
        } else {
            ty
        })
    }

    /// `{ Selection+ }`
    fn read_selection_set(&mut self) -> Result<Vec<Selection<'a>>, Error> {
        if !self.is(b'{') {
            return Err(self.unexpected("`{`"));
        }
        self.enter()?;
        let mut selections = Vec::new();
        loop {
            let selection = match self.token.kind {
                Kind::Name => Selection::Field(self.read_field()?),
                Kind::Spread => self.read_fragment_selection()?,
                Kind::Punct(b'}') if !selections.is_empty() => {
                    self.depth -= 1;
                    self.advance()?;
                    return Ok(selections);
                }
                _ if selections.is_empty() => return Err(self.unexpected("a field or `...`")),
                _ => return Err(self.unexpected("a field, `...` or `}`")),
            };
            selections.push(selection);
        }
    }

    /// `Alias? Name Arguments? Directives? SelectionSet?`
    fn read_field(&mut self) -> Result<Field<'a>, Error> {
        let first = self.read_name("a field")?;
        let (alias, name) = if self.eat(b':')? {
            (Some(first), self.read_name("a field name")?)
        } else {
            (None, first)
        };
        let arguments = self.read_arguments(false)?;
        let directives = self.read_directives(false)?;
        let selection_set = if self.is(b'{') {
            self.read_selection_set()?
        } else {
            Vec::new()
        };
        Ok(Field {
            alias,
            name,
            arguments,
            directives,
            selection_set,
        })
    }

    /// `...Name Directives?` or `... (on Type)? Directives? SelectionSet`.
    fn read_fragment_selection(&mut self) -> Result<Selection<'a>, Error> {
        self.advance()?;
        let type_condition = match self.token.kind {
            Kind::Name if self.keyword("on") => {
                self.advance()?;
                Some(self.read_name("a type name")?)
            }
            Kind::Name => {
                let name = self.read_name("a fragment name")?;
                let directives = self.read_directives(false)?;
                return Ok(Selection::Spread { name, directives });
            }
            Kind::Punct(b'@' | b'{') => None,
            _ => return Err(self.unexpected("a fragment name, `on`, `@` or `{`")),
        };
        let directives = self.read_directives(false)?;
        Ok(Selection::Inline {
            type_condition,
            directives,
            selection_set: self.read_selection_set()?,
        })
    }

    /// `(@ Name Arguments?)*`; `constant`: no variables in the arguments.
    fn read_directives(&mut self, constant: bool) -> Result<Vec<Directive<'a>>, Error> {
        let mut directives = Vec::new();
        while self.eat(b'@')? {
            let name = self.read_name("a directive name")?;
            let arguments = self.read_arguments(constant)?;
            directives.push(Directive { name, arguments });
        }
        Ok(directives)
    }

    /// `( name: value … )` if there, else none.
    fn read_arguments(&mut self, constant: bool) -> Result<Vec<Argument<'a>>, Error> {
        if !self.eat(b'(')? {
            return Ok(Vec::new());
        }
        let mut arguments = Vec::new();
        loop {
            let name = self.read_name("an argument name")?;
            self.expect(b':', "`:` and a value")?;
            arguments.push((name, self.read_value(constant)?));
            if self.eat(b')')? {
                return Ok(arguments);
            }
            if self.token.kind != Kind::Name {
                return Err(self.unexpected("an argument name or `)`"));
            }
        }
    }

    /// `Value[Const]`.
    fn read_value(&mut self, constant: bool) -> Result<Value<'a>, Error> {
        let text = self.text();
        let value = match self.token.kind {
            Kind::Int => Value::Int(text),
            Kind::Float => Value::Float(text),
            Kind::String | Kind::BlockString => Value::String(text),
            Kind::Name => match text {
                "true" => Value::Boolean(true),
                "false" => Value::Boolean(false),
                "null" => Value::Null,
                _ => Value::Enum(text),
            },
            Kind::Punct(b'$') if constant => {
                return Err(self.unexpected(
                    "a constant value (a default value or a variable's directive cannot use \
                     variables)",
                ));
            }
            Kind::Punct(b'$') => {
                self.advance()?;
                return Ok(Value::Variable(self.read_name("a variable name")?));
            }
            Kind::Punct(b'[') => {
                self.enter()?;
                let mut items = Vec::new();
                while !self.eat(b']')? {
                    if !self.starts_value() {
                        return Err(self.unexpected("a value or `]`"));
                    }
                    items.push(self.read_value(constant)?);
                }
                self.depth -= 1;
                return Ok(Value::List(items));
            }
            Kind::Punct(b'{') => {
                self.enter()?;
                let mut fields = Vec::new();
                while !self.eat(b'}')? {
                    let name = self.read_name("a field name or `}`")?;
                    self.expect(b':', "`:` and a value")?;
                    fields.push((name, self.read_value(constant)?));
                }
                self.depth -= 1;
                return Ok(Value::Object(fields));
            }
            _ => return Err(self.unexpected("a value")),
        };
        self.advance()?;
        Ok(value)
    }

    // ───── type system documents ─────

    fn read_type_system(&mut self) -> Result<Vec<Definition>, Error> {
        let mut definitions = Vec::new();
        loop {
            if self.token.kind == Kind::End && !definitions.is_empty() {
                return Ok(definitions);
            }
            let described = self.read_description()?;
            let extend = !described && self.keyword("extend");
            if extend {
                self.advance()?;
            }
            if self.token.kind != Kind::Name {
                return Err(self.unexpected(TYPE_DEFINITION));
            }
            let definition = match self.text() {
                "schema" => self.read_schema(extend)?,
                "directive" if !extend => {
                    self.read_directive_definition()?;
                    continue;
                }
                "scalar" | "type" | "interface" | "union" | "enum" | "input" => {
                    self.read_type_definition(extend)?
                }
                _ => return Err(self.unexpected(TYPE_DEFINITION)),
            };
            definitions.push(definition);
        }
    }

    /// Skips a description (a string) if there is one.
    fn read_description(&mut self) -> Result<bool, Error> {
        let described = matches!(self.token.kind, Kind::String | Kind::BlockString);
        if described {
            self.advance()?;
        }
        Ok(described)
    }

    /// `schema Directives? { query: Query … }`, at `schema`.
    fn read_schema(&mut self, extend: bool) -> Result<Definition, Error> {
        self.advance()?;
        self.read_directives(true)?;
        let mut roots = Vec::new();
        // An extension may add directives only.
        if !extend || self.is(b'{') {
            self.expect(b'{', "`{`")?;
            loop {
                let operation_type = match self.text() {
                    "query" => OperationType::Query,
                    "mutation" => OperationType::Mutation,
                    "subscription" => OperationType::Subscription,
                    _ => return Err(self.unexpected("`query`, `mutation` or `subscription`")),
                };
                self.advance()?;
                self.expect(b':', "`:` and a type name")?;
                roots.push((operation_type, self.read_name("a type name")?.to_owned()));
                if self.eat(b'}')? {
                    break;
                }
            }
        }
        Ok(Definition::Schema { extend, roots })
    }

    /// `directive @name(arguments) repeatable? on LOCATION | …`, dropped.
    fn read_directive_definition(&mut self) -> Result<(), Error> {
        self.advance()?;
        self.expect(b'@', "`@` and the directive's name")?;
        self.read_name("a directive name")?;
        if self.is(b'(') {
            self.read_input_values(b'(', b')')?;
        }
        if self.keyword("repeatable") {
            self.advance()?;
        }
        if !self.keyword("on") {
            return Err(self.unexpected("`on` and the directive's locations"));
        }
        self.advance()?;
        self.eat(b'|')?;
        loop {
            self.read_name("a directive location")?;
            if !self.eat(b'|')? {
                return Ok(());
            }
        }
    }

    /// A type definition or extension, at its keyword.
    fn read_type_definition(&mut self, extend: bool) -> Result<Definition, Error> {
        let keyword = self.text();
        self.advance()?;
        let name = self.read_name("a type name")?.to_owned();
        let kind = match keyword {
            "scalar" => {
                self.read_directives(true)?;
                TypeKind::Scalar
            }
            "type" | "interface" => {
                let interfaces = self.read_implements()?;
                self.read_directives(true)?;
                let fields = if self.is(b'{') {
                    self.read_fields()?
                } else {
                    Vec::new()
                };
                if keyword == "type" {
                    TypeKind::Object { interfaces, fields }
                } else {
                    TypeKind::Interface { interfaces, fields }
                }
            }
            "union" => {
                self.read_directives(true)?;
                let mut members = Vec::new();
                if self.eat(b'=')? {
                    self.eat(b'|')?;
                    loop {
                        members.push(self.read_name("a member type")?.to_owned());
                        if !self.eat(b'|')? {
                            break;
                        }
                    }
                }
                TypeKind::Union(members)
            }
            "enum" => {
                self.read_directives(true)?;
                let mut values = Vec::new();
                if self.eat(b'{')? {
                    while !self.eat(b'}')? {
                        self.read_description()?;
                        values.push(self.read_name("an enum value or `}`")?.to_owned());
                        self.read_directives(true)?;
                    }
                }
                TypeKind::Enum(values)
            }
            _ => {
                self.read_directives(true)?;
                let fields = if self.is(b'{') {
                    self.read_input_values(b'{', b'}')?
                } else {
                    Vec::new()
                };
                TypeKind::Input(fields)
            }
        };
        Ok(Definition::Type { extend, name, kind })
    }

    /// `implements A & B`; also the legacy `implements A, B` (commas are
    /// white space, so `A B`).
    fn read_implements(&mut self) -> Result<Vec<String>, Error> {
        let mut interfaces = Vec::new();
        if !self.keyword("implements") {
            return Ok(interfaces);
        }
        self.advance()?;
        self.eat(b'&')?;
        loop {
            interfaces.push(self.read_name("an interface name")?.to_owned());
            let legacy = self.token.kind == Kind::Name && !DEFINITION_WORDS.contains(&self.text());
            if !self.eat(b'&')? && !legacy {
                return Ok(interfaces);
            }
        }
    }

    /// `{ FieldDefinition+ }`, each `"description"? name(arguments): Type @directives`.
    fn read_fields(&mut self) -> Result<Vec<FieldDef>, Error> {
        self.expect(b'{', "`{`")?;
        let mut fields = Vec::new();
        while !self.eat(b'}')? {
            self.read_description()?;
            let name = self.read_name("a field name or `}`")?.to_owned();
            let arguments = if self.is(b'(') {
                self.read_input_values(b'(', b')')?
            } else {
                Vec::new()
            };
            self.expect(b':', "`:` and the field's type")?;
            let ty = self.read_type()?;
            self.read_directives(true)?;
            fields.push(FieldDef {
                name,
                arguments,
                ty,
            });
        }
        Ok(fields)
    }

    /// Argument definitions `( … )` or input fields `{ … }`: each
    /// `"description"? name: Type = default @directives`.
    fn read_input_values(&mut self, open: u8, close: u8) -> Result<Vec<InputValueDef>, Error> {
        self.expect(open, "`(` or `{`")?;
        let mut values = Vec::new();
        while !self.eat(close)? {
            self.read_description()?;
            let name = self.read_name("a name")?.to_owned();
            self.expect(b':', "`:` and a type")?;
            let ty = self.read_type()?;
            let has_default = self.eat(b'=')?;
            if has_default {
                self.read_value(true)?;
            }
            self.read_directives(true)?;
            values.push(InputValueDef {
                name,
                ty,
                has_default,
            });
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_executable_document_becomes_a_tree() {
        let document = executable(
            r#"query GetUser($id: ID!, $n: [Int!] = [1]) @live {
                me: user(id: $id, filter: { name: "x", tags: [A, B] }) {
                    id ...Fields @include(if: true)
                    ... on Admin { level }
                    ... @skip(if: false) { name }
                }
            }
            fragment Fields on User { email }"#,
        )
        .unwrap();
        let [operation] = &document.operations[..] else {
            panic!()
        };
        assert_eq!(operation.name, Some("GetUser"));
        assert_eq!(operation.variables[0].ty.to_string(), "ID!");
        assert_eq!(operation.variables[1].ty.to_string(), "[Int!]");
        assert_eq!(
            operation.variables[1].default,
            Some(Value::List(vec![Value::Int("1")]))
        );
        let Selection::Field(user) = &operation.selection_set[0] else {
            panic!()
        };
        assert_eq!(
            (user.alias, user.name, user.response_key()),
            (Some("me"), "user", "me")
        );
        assert_eq!(user.arguments[0], ("id", Value::Variable("id")));
        assert_eq!(
            user.arguments[1].1.to_string(),
            r#"{ name: "x", tags: [A, B] }"#
        );
        assert!(matches!(
            &user.selection_set[1],
            Selection::Spread { name: "Fields", directives } if directives[0].name == "include"
        ));
        assert!(matches!(
            &user.selection_set[2],
            Selection::Inline {
                type_condition: Some("Admin"),
                ..
            }
        ));
        assert!(matches!(
            &user.selection_set[3],
            Selection::Inline { type_condition: None, directives, .. } if directives.len() == 1
        ));
        assert_eq!(document.fragments[0].type_condition, "User");
        assert_eq!(executable("{ a }").unwrap().operations.len(), 1);
    }

    #[test]
    fn a_type_system_document_becomes_definitions() {
        let definitions = type_system(
            r#"
            "The root"
            schema @a { query: Root mutation: M }
            directive @auth(role: String = "x") repeatable on FIELD_DEFINITION | OBJECT
            """A user"""
            type User implements Node & Named @key(fields: "id") {
                "its id" id: ID!
                posts(first: Int = 10, "after" after: String): [Post!]!
            }
            interface Node { id: ID! }
            type Legacy implements Node, Named { id: ID! }
            union Result = | User | Error
            enum Role { ADMIN "a user" USER @deprecated }
            input Filter { name: String!, limit: Int = 5 }
            scalar Date @specifiedBy(url: "x")
            extend type User { age: Int }
            extend schema @b
            "#,
        )
        .unwrap();
        assert_eq!(definitions.len(), 10);
        let Definition::Schema { roots, .. } = &definitions[0] else {
            panic!()
        };
        assert_eq!(roots[1], (OperationType::Mutation, "M".to_owned()));
        let Definition::Type {
            name,
            kind: TypeKind::Object { interfaces, fields },
            ..
        } = &definitions[1]
        else {
            panic!()
        };
        assert_eq!(name, "User");
        assert_eq!(interfaces, &["Node", "Named"]);
        assert_eq!(fields[1].ty.to_string(), "[Post!]!");
        assert!(fields[1].arguments[0].has_default);
        let Definition::Type {
            kind: TypeKind::Object { interfaces, .. },
            ..
        } = &definitions[3]
        else {
            panic!()
        };
        assert_eq!(interfaces, &["Node", "Named"]);
        assert!(
            matches!(&definitions[4], Definition::Type { kind: TypeKind::Union(members), .. } if members.len() == 2)
        );
        assert!(
            matches!(&definitions[5], Definition::Type { kind: TypeKind::Enum(values), .. } if values == &["ADMIN", "USER"])
        );
        assert!(
            matches!(&definitions[6], Definition::Type { kind: TypeKind::Input(fields), .. } if fields[0].required() && !fields[1].required())
        );
        assert!(matches!(
            &definitions[8],
            Definition::Type { extend: true, .. }
        ));
        assert!(
            matches!(&definitions[9], Definition::Schema { extend: true, roots } if roots.is_empty())
        );
    }

    #[test]
    fn errors_name_the_place_and_deep_nesting_is_an_error_not_a_crash() {
        let error = type_system("type User { id: }").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Parse error at 1:17: expected a type, found `}`"
        );
        assert!(type_system("").is_err());
        assert!(type_system("query { a }").is_err());
        assert!(executable("type A { a: Int }").is_err());
        let deep = format!("{{ a(x: {}1{}) }}", "[".repeat(500), "]".repeat(500));
        assert!(
            executable(&deep)
                .unwrap_err()
                .message
                .contains("nests deeper")
        );
        let deep = format!("type A {{ a: {}Int{} }}", "[".repeat(500), "]".repeat(500));
        assert!(type_system(&deep).is_err());
    }
}
