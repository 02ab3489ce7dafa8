//! A GraphQL schema read from SDL, as the [contract](crate::contract) a
//! GraphQL endpoint's requests and answers are checked against.
//!
//! ```
//! use mocklib::graphql::{self, Schema};
//! use mocklib::node::setup_server;
//! use serde_json::json;
//!
//! let schema = Schema::from_sdl(r#"
//!     type Query { user(id: ID!): User }
//!     type User { id: ID! name: String! email: String }
//! "#)?;
//! let server = setup_server([graphql::query("GetUser", |_| {
//!     // `name` is non-null, and the query did not select `age`.
//!     graphql::data(json!({ "user": { "id": "1", "name": null, "age": 3 } }))
//! })]);
//! server.attach_contract(schema.contract("https://api.example.com/graphql")?);
//! # server.listen();
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let client = server.reqwest_client();
//! client
//!     .post("https://api.example.com/graphql")
//!     .json(&json!({ "query": "query GetUser { user(id: 1) { id name } }" }))
//!     .send()
//!     .await
//!     .unwrap();
//! # });
//! let findings = server.requests()[0].contract_findings().to_vec();
//! let pointers: Vec<&str> = findings.iter().map(|f| f.pointer.as_str()).collect();
//! assert_eq!(pointers, ["/response/body/data/user/name", "/response/body/data/user/age"]);
//! assert_eq!(findings[0].operation.as_deref(), Some("query GetUser"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is checked
//!
//! Requests to the contract's endpoint (a URL pattern, as for
//! [`graphql::link`](super::link)) that are GraphQL as the handlers read
//! them: a `POST` with a JSON body `{query, variables, operationName}` (or
//! a batch of them, or a multipart upload), a `GET` with `?query=`. Other
//! requests are not the contract's business, except a `POST` to the
//! endpoint that is not a GraphQL request, or one that breaks the rules (a
//! document that does not parse, an `operationName` it lacks): a finding
//! at `/request`.
//!
//! **The request** (pointers `/request/query/…`, a path of response keys,
//! `user(id)` for an argument, `... on Admin` and `...Fragment` for
//! fragments; `/request/variables/…` for the variables):
//!
//! - an operation type the schema lacks (a `mutation` and no mutation type);
//! - fields the type does not have (named with the type and its fields);
//! - arguments the field does not take, required arguments missing, and
//!   literals of the wrong type (`Int`, `Float`, `String`, `Boolean`, `ID`,
//!   enum values, input objects with unknown or missing fields, lists);
//! - variables: used but not defined, of a type the position does not
//!   allow, of a type the schema lacks, and their JSON values against
//!   their declared types (a required one missing included);
//! - a scalar or enum field with a selection set, an object field without;
//! - fragments: undefined, on types the schema lacks or that are not
//!   object, interface or union types, or that can never apply where they
//!   are spread.
//!
//! Not checked: directives (other than reading `@skip` and `@include`),
//! field merging conflicts, unused fragments or variables, and
//! introspection fields (`__schema`, `__type`), which are left alone.
//!
//! **The answer** (pointers `/response/body/data/…`): a JSON body with
//! `data` and/or `errors` (and `extensions`) only; `errors` a non-empty
//! list of objects with a `message`; `data` `null` only with `errors`;
//! then `data` walked along the operation's selection set, through
//! aliases, named and inline fragments:
//!
//! - a selected field missing, a key the query did not select;
//! - `null` where the type is non-null;
//! - a list where the type is not one, or the other way round;
//! - scalars: `Int` a 32-bit integer, `Float` a number, `String` and `ID`
//!   strings (an `ID` is serialized as a string), `Boolean`; an enum one of
//!   its values; a custom scalar anything;
//! - `__typename`: the object's type, or for an interface or union one of
//!   its possible types. On an interface or union, fragments on one of its
//!   types apply when `__typename` says the object is of that type; without
//!   `__typename` their fields may be present or not.
//!
//! Fields under `@skip` or `@include` whose condition is a variable the
//! request did not set may be absent. The answer is checked when its
//! status is 2xx, or when its content type is
//! `application/graphql-response+json`; event streams (subscriptions) are
//! not. A batch's answer is an array, checked element by element
//! (`/response/body/0/data/…`, `/request/0/query/…`).
//!
//! The findings of an exchange are remembered by a fingerprint of the
//! request and the answer: a mock answering the same request again costs a
//! hash, not a walk.
//!
//! # The schema
//!
//! [`Schema::from_sdl`] reads the type system definition language: object
//! types, interfaces (also implementing interfaces), unions, enums, input
//! types, custom scalars (the built-in `Int`, `Float`, `String`, `Boolean`
//! and `ID` are there already), list and non-null types, descriptions,
//! directives and their definitions (read, not checked), `schema { query
//! mutation subscription }` (else the types named `Query`, `Mutation` and
//! `Subscription`), and `extend` of each. It is read by mocklib's own
//! GraphQL parser. A schema that refers to a type it does not define, or
//! defines one twice, is an error.

mod contract;
mod request;
mod response;
#[cfg(test)]
mod walk_tests;

pub use contract::Contract;

use std::collections::HashMap;
use std::sync::Arc;

use super::OperationType;
use super::document::tree::{self, Definition, FieldDef, TypeKind, TypeRef};
use crate::matching::PatternError;

/// Why a schema cannot be read, or its contract not made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The SDL does not parse: `Parse error at 3:7: expected …`.
    #[error("the GraphQL schema does not parse: {0}")]
    Syntax(String),
    /// It parses, but is not a schema: a type it refers to is not defined,
    /// one is defined twice, a root type is not an object type…
    #[error("the GraphQL schema is not valid: {0}")]
    Invalid(String),
    /// The contract's endpoint is not a valid URL pattern.
    #[error("the GraphQL endpoint is not a valid URL pattern: {0}")]
    Endpoint(#[from] PatternError),
}

/// A GraphQL schema, read from SDL; [`contract`](Self::contract) makes it a
/// contract for one endpoint. See the [module docs](self). Clones share it.
#[derive(Clone)]
pub struct Schema(Arc<Types>);

/// The types of a schema, by name, and its root operation types.
struct Types {
    types: HashMap<String, TypeKind>,
    query: Option<String>,
    mutation: Option<String>,
    subscription: Option<String>,
    /// The object types implementing each interface.
    implementations: HashMap<String, Vec<String>>,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("types", &self.0.types.len())
            .field("query", &self.0.query)
            .field("mutation", &self.0.mutation)
            .field("subscription", &self.0.subscription)
            .finish()
    }
}

const BUILT_IN_SCALARS: [&str; 5] = ["Int", "Float", "String", "Boolean", "ID"];

impl Schema {
    /// Reads a schema from the type system definition language.
    ///
    /// ```
    /// use mocklib::graphql::Schema;
    ///
    /// let schema = Schema::from_sdl("type Query { hello: String }")?;
    /// assert_eq!(schema.root_type(mocklib::graphql::OperationType::Query), Some("Query"));
    /// let error = Schema::from_sdl("type Query { user: User }").unwrap_err();
    /// assert!(error.to_string().contains("`User`"), "{error}");
    /// # Ok::<(), mocklib::graphql::SchemaError>(())
    /// ```
    pub fn from_sdl(sdl: &str) -> Result<Schema, SchemaError> {
        let definitions =
            tree::type_system(sdl).map_err(|error| SchemaError::Syntax(error.to_string()))?;
        let mut types: HashMap<String, TypeKind> = BUILT_IN_SCALARS
            .iter()
            .map(|name| ((*name).to_owned(), TypeKind::Scalar))
            .collect();
        let mut roots: Option<Vec<(OperationType, String)>> = None;
        let mut extensions = Vec::new();
        let mut schema_extensions = Vec::new();
        for definition in definitions {
            match definition {
                Definition::Type {
                    extend: false,
                    name,
                    kind,
                } => {
                    if types.contains_key(&name) {
                        return Err(invalid(format!("the type `{name}` is defined twice")));
                    }
                    types.insert(name, kind);
                }
                Definition::Type {
                    extend: true,
                    name,
                    kind,
                } => extensions.push((name, kind)),
                Definition::Schema {
                    extend: false,
                    roots: these,
                } => {
                    if roots.replace(these).is_some() {
                        return Err(invalid("`schema` is defined twice".to_owned()));
                    }
                }
                Definition::Schema {
                    extend: true,
                    roots: these,
                } => schema_extensions.extend(these),
            }
        }
        // Extensions apply after every definition: SDL may extend a type
        // above its definition.
        for (name, extension) in extensions {
            let Some(kind) = types.get_mut(&name) else {
                return Err(invalid(format!(
                    "`extend` of the type `{name}`, which is not defined"
                )));
            };
            extend(&name, kind, extension)?;
        }
        let mut schema = Types {
            query: None,
            mutation: None,
            subscription: None,
            implementations: HashMap::new(),
            types,
        };
        let explicit = roots.is_some();
        let roots = roots
            .unwrap_or_default()
            .into_iter()
            .chain(schema_extensions);
        for (operation_type, name) in roots {
            let slot = schema.root_slot(operation_type);
            if slot.replace(name).is_some() {
                return Err(invalid(format!(
                    "the {operation_type} root type is defined twice"
                )));
            }
        }
        if !explicit {
            // The default names, where no `schema` says otherwise.
            for (operation_type, name) in [
                (OperationType::Query, "Query"),
                (OperationType::Mutation, "Mutation"),
                (OperationType::Subscription, "Subscription"),
            ] {
                let slot_empty = schema.root_slot(operation_type).is_none();
                if slot_empty && schema.types.contains_key(name) {
                    *schema.root_slot(operation_type) = Some(name.to_owned());
                }
            }
        }
        schema.check()?;
        Ok(Schema(Arc::new(schema)))
    }

    /// The name of the root type of `operation_type`'s operations, if the
    /// schema has one.
    pub fn root_type(&self, operation_type: OperationType) -> Option<&str> {
        self.0.root(operation_type)
    }
}

fn invalid(message: String) -> SchemaError {
    SchemaError::Invalid(message)
}

/// Adds `extension` to the type `name` of `kind`.
fn extend(name: &str, kind: &mut TypeKind, extension: TypeKind) -> Result<(), SchemaError> {
    match (kind, extension) {
        (TypeKind::Scalar, TypeKind::Scalar) => {}
        (
            TypeKind::Object { interfaces, fields },
            TypeKind::Object {
                interfaces: more_interfaces,
                fields: more_fields,
            },
        )
        | (
            TypeKind::Interface { interfaces, fields },
            TypeKind::Interface {
                interfaces: more_interfaces,
                fields: more_fields,
            },
        ) => {
            interfaces.extend(more_interfaces);
            for field in more_fields {
                if fields.iter().any(|known| known.name == field.name) {
                    return Err(invalid(format!(
                        "`extend` of `{name}` defines its field `{}` again",
                        field.name
                    )));
                }
                fields.push(field);
            }
        }
        (TypeKind::Union(members), TypeKind::Union(more)) => members.extend(more),
        (TypeKind::Enum(values), TypeKind::Enum(more)) => values.extend(more),
        (TypeKind::Input(fields), TypeKind::Input(more)) => fields.extend(more),
        (kind, extension) => {
            return Err(invalid(format!(
                "`extend {}` of `{name}`, which is a {}",
                extension.keyword(),
                kind.describe()
            )));
        }
    }
    Ok(())
}

impl Types {
    fn root_slot(&mut self, operation_type: OperationType) -> &mut Option<String> {
        match operation_type {
            OperationType::Query => &mut self.query,
            OperationType::Mutation => &mut self.mutation,
            OperationType::Subscription => &mut self.subscription,
        }
    }

    /// The fields of each root operation type, in schema order: what
    /// coverage counts.
    pub(super) fn root_fields(&self) -> Vec<(OperationType, String)> {
        let mut fields = Vec::new();
        for operation_type in [
            OperationType::Query,
            OperationType::Mutation,
            OperationType::Subscription,
        ] {
            let kind = self
                .root(operation_type)
                .and_then(|name| self.types.get(name));
            if let Some(TypeKind::Object {
                fields: defined, ..
            }) = kind
            {
                fields.extend(
                    defined
                        .iter()
                        .map(|field| (operation_type, field.name.clone())),
                );
            }
        }
        fields
    }

    pub(super) fn root(&self, operation_type: OperationType) -> Option<&str> {
        match operation_type {
            OperationType::Query => self.query.as_deref(),
            OperationType::Mutation => self.mutation.as_deref(),
            OperationType::Subscription => self.subscription.as_deref(),
        }
    }

    /// Every type named is defined and of the right kind; fills
    /// `implementations`. The walkers rely on it: a type a field refers to
    /// exists.
    fn check(&mut self) -> Result<(), SchemaError> {
        let kind_of = |name: &str| self.types.get(name);
        for operation_type in [
            OperationType::Query,
            OperationType::Mutation,
            OperationType::Subscription,
        ] {
            if let Some(root) = self.root(operation_type) {
                if !matches!(kind_of(root), Some(TypeKind::Object { .. })) {
                    return Err(invalid(format!(
                        "the {operation_type} root type `{root}` is not an object type"
                    )));
                }
            }
        }
        let mut implementations: HashMap<String, Vec<String>> = HashMap::new();
        for (name, kind) in &self.types {
            let input = |ty: &TypeRef, place: &str| match kind_of(ty.named()) {
                Some(TypeKind::Scalar | TypeKind::Enum(_) | TypeKind::Input(_)) => Ok(()),
                Some(other) => Err(invalid(format!(
                    "{place} is of type `{ty}`, a {}: inputs take scalars, enums and input types",
                    other.describe()
                ))),
                None => Err(undefined(ty.named(), place)),
            };
            match kind {
                TypeKind::Scalar | TypeKind::Enum(_) => {}
                TypeKind::Object { interfaces, fields }
                | TypeKind::Interface { interfaces, fields } => {
                    for interface in interfaces {
                        if !matches!(kind_of(interface), Some(TypeKind::Interface { .. })) {
                            return Err(invalid(format!(
                                "`{name}` implements `{interface}`, which is not an interface"
                            )));
                        }
                        if matches!(kind, TypeKind::Object { .. }) {
                            implementations
                                .entry(interface.clone())
                                .or_default()
                                .push(name.clone());
                        }
                    }
                    for field in fields {
                        let place = format!("the field `{name}.{}`", field.name);
                        match kind_of(field.ty.named()) {
                            None => return Err(undefined(field.ty.named(), &place)),
                            Some(TypeKind::Input(_)) => {
                                return Err(invalid(format!(
                                    "{place} is of type `{}`, an input type",
                                    field.ty
                                )));
                            }
                            Some(_) => {}
                        }
                        for argument in &field.arguments {
                            input(
                                &argument.ty,
                                &format!(
                                    "the argument `{}` of `{name}.{}`",
                                    argument.name, field.name
                                ),
                            )?;
                        }
                    }
                }
                TypeKind::Union(members) => {
                    for member in members {
                        if !matches!(kind_of(member), Some(TypeKind::Object { .. })) {
                            return Err(invalid(format!(
                                "the union `{name}` has the member `{member}`, which is not an \
                                 object type"
                            )));
                        }
                    }
                }
                TypeKind::Input(fields) => {
                    for field in fields {
                        input(
                            &field.ty,
                            &format!("the input field `{name}.{}`", field.name),
                        )?;
                    }
                }
            }
        }
        for objects in implementations.values_mut() {
            objects.sort_unstable();
        }
        self.implementations = implementations;
        Ok(())
    }

    pub(super) fn kind(&self, name: &str) -> Option<&TypeKind> {
        self.types.get(name)
    }

    /// The field `name` of the object type or interface `type_name`.
    pub(super) fn field(&self, type_name: &str, name: &str) -> Option<&FieldDef> {
        match self.kind(type_name)? {
            TypeKind::Object { fields, .. } | TypeKind::Interface { fields, .. } => {
                fields.iter().find(|field| field.name == name)
            }
            _ => None,
        }
    }

    /// Whether `name` is an object type, an interface or a union.
    pub(super) fn is_composite(&self, name: &str) -> bool {
        matches!(
            self.kind(name),
            Some(TypeKind::Object { .. } | TypeKind::Interface { .. } | TypeKind::Union(_))
        )
    }

    /// The object types a value of type `name` can be.
    pub(super) fn possible_types<'s>(&'s self, name: &'s str) -> Vec<&'s str> {
        match self.kind(name) {
            Some(TypeKind::Object { .. }) => vec![name],
            Some(TypeKind::Interface { .. }) => self
                .implementations
                .get(name)
                .map(|objects| objects.iter().map(String::as_str).collect())
                .unwrap_or_default(),
            Some(TypeKind::Union(members)) => members.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether some object can be both `a` and `b`: where a fragment on
    /// `b` may apply in a selection on `a`.
    pub(super) fn overlap(&self, a: &str, b: &str) -> bool {
        let b = self.possible_types(b);
        self.possible_types(a)
            .iter()
            .any(|object| b.contains(object))
    }

    /// Whether every object of type `a` is of type `b`.
    pub(super) fn within(&self, a: &str, b: &str) -> bool {
        if a == b {
            return true;
        }
        let b = self.possible_types(b);
        let a = self.possible_types(a);
        !a.is_empty() && a.iter().all(|object| b.contains(object))
    }

    /// `User (id, name, email)`: a type and its fields, for messages.
    pub(super) fn describe_fields(&self, type_name: &str) -> String {
        match self.kind(type_name) {
            Some(TypeKind::Object { fields, .. } | TypeKind::Interface { fields, .. }) => {
                let names: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
                format!("{type_name} ({})", names.join(", "))
            }
            _ => type_name.to_owned(),
        }
    }
}

/// Appends `/segment` to a JSON pointer, escaped (`~0`, `~1`).
fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Whether the JSON `value` is one of the scalar or enum type `name` (of
/// `kind`): as a variable's value (`input`) or in an answer. `None` when
/// `name` is not a scalar or an enum.
fn json_fits(name: &str, kind: &TypeKind, value: &serde_json::Value, input: bool) -> Option<bool> {
    use serde_json::Value as Json;
    Some(match (kind, name) {
        (TypeKind::Enum(values), _) => {
            matches!(value, Json::String(text) if values.iter().any(|known| known == text))
        }
        (TypeKind::Scalar, "Int") => int32(value),
        (TypeKind::Scalar, "Float") => value.is_number(),
        (TypeKind::Scalar, "String") => value.is_string(),
        (TypeKind::Scalar, "Boolean") => value.is_boolean(),
        // An ID is serialized as a string; as input an integer is one too.
        (TypeKind::Scalar, "ID") => {
            value.is_string() || (input && (value.is_i64() || value.is_u64()))
        }
        // A custom scalar: whatever its serializer makes.
        (TypeKind::Scalar, _) => true,
        _ => return None,
    })
}

/// A 32-bit integer (`1.0` too: JSON does not tell them apart).
fn int32(value: &serde_json::Value) -> bool {
    match value.as_f64() {
        Some(number) => {
            number.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&number)
        }
        None => false,
    }
}

/// What a scalar or enum type takes, in words: `Int (a 32-bit integer)`.
fn describe_leaf(name: &str, kind: &TypeKind) -> String {
    match (kind, name) {
        (TypeKind::Enum(values), _) => format!("one of the enum {name} ({})", values.join(", ")),
        (_, "Int") => "Int (a 32-bit integer)".to_owned(),
        (_, "Float") => "Float (a number)".to_owned(),
        (_, "String") => "String (a string)".to_owned(),
        (_, "Boolean") => "Boolean (true or false)".to_owned(),
        (_, "ID") => "ID (a string)".to_owned(),
        _ => name.to_owned(),
    }
}

fn undefined(name: &str, place: &str) -> SchemaError {
    invalid(format!(
        "{place} refers to the type `{name}`, which is not defined"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_default_to_the_conventional_names_unless_schema_says() {
        let schema = Schema::from_sdl("type Query { a: Int } type Mutation { b: Int }").unwrap();
        assert_eq!(schema.root_type(OperationType::Query), Some("Query"));
        assert_eq!(schema.root_type(OperationType::Mutation), Some("Mutation"));
        assert_eq!(schema.root_type(OperationType::Subscription), None);
        let schema = Schema::from_sdl(
            "schema { query: Root } type Root { a: Int } type Mutation { b: Int }",
        )
        .unwrap();
        assert_eq!(schema.root_type(OperationType::Query), Some("Root"));
        assert_eq!(schema.root_type(OperationType::Mutation), None);
        let schema = Schema::from_sdl(
            "schema { query: Root } extend schema { mutation: M } type Root { a: Int } type M { b: Int }",
        )
        .unwrap();
        assert_eq!(schema.root_type(OperationType::Mutation), Some("M"));
    }

    #[test]
    fn extensions_add_to_their_type_wherever_they_stand() {
        let schema = Schema::from_sdl(
            "extend type Query { b: Int } type Query { a: Int } \
             interface Node { id: ID! } extend type Query implements Node { id: ID! } \
             enum E { A } extend enum E { B } union U = Query extend union U = Other type Other { x: Int } \
             input I { a: Int } extend input I { b: Int } scalar Date extend scalar Date @x",
        )
        .unwrap();
        let types = &schema.0;
        assert!(types.field("Query", "b").is_some());
        assert_eq!(types.possible_types("Node"), ["Query"]);
        assert_eq!(types.possible_types("U"), ["Query", "Other"]);
        assert!(matches!(types.kind("E"), Some(TypeKind::Enum(values)) if values.len() == 2));
        assert!(types.within("Query", "Node") && !types.within("U", "Node"));
        assert!(types.overlap("U", "Node") && !types.overlap("Other", "Node"));
    }

    #[test]
    fn a_schema_that_does_not_hold_together_is_an_error_naming_why() {
        let error = |sdl: &str| Schema::from_sdl(sdl).unwrap_err().to_string();
        assert!(error("type Query { a: Nope }").contains("`Query.a` refers to the type `Nope`"));
        assert!(error("type Query { a: Int } type Query { b: Int }").contains("defined twice"));
        assert!(error("extend type Nope { a: Int }").contains("not defined"));
        assert!(error("type Query { a: Int } extend enum Query { A }").contains("object type"));
        assert!(error("type Query { a(x: Query): Int }").contains("inputs take"));
        assert!(error("input I { a: Int } type Query { a: I }").contains("an input type"));
        assert!(error("schema { query: E } enum E { A }").contains("not an object type"));
        assert!(error("union U = Int type Query { u: U }").contains("not an object type"));
        assert!(error("type Query implements Int { a: Int }").contains("not an interface"));
        assert!(
            error("type Query {")
                .starts_with("the GraphQL schema does not parse: Parse error at 1:13")
        );
        assert!(error("type Query { a: Int } extend type Query { a: Int }").contains("again"));
    }
}
