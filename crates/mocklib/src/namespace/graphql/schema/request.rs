//! The request's side of the contract: the operation validated against the
//! schema (a subset of GraphQL's validation; the module docs list it).

use std::collections::HashSet;

use serde_json::Value as Json;

use super::{Types, describe_leaf, json_fits, push_segment};
use crate::handling::contract::Finding;
use crate::handling::contract::short;
use crate::namespace::graphql::document::tree::{
    Executable, Field, InputValueDef, OperationDef, Selection, TypeKind, TypeRef, Value,
};

/// How deep the walk follows selections through fragments: the parser
/// bounds the nesting of one definition, not of a chain of fragments.
pub(super) const MAX_WALK_DEPTH: usize = 256;

/// Checks one operation of a request; `prefix` is where its pointers start
/// (`/request`, or `/request/0` in a batch).
pub(super) fn check(
    types: &Types,
    document: &Executable<'_>,
    operation: &OperationDef<'_>,
    variables: &Json,
    prefix: &str,
    findings: &mut Vec<Finding>,
) {
    let mut query = format!("{prefix}/query");
    let Some(root) = types.root(operation.operation_type) else {
        let available: Vec<&str> = [
            crate::namespace::graphql::OperationType::Query,
            crate::namespace::graphql::OperationType::Mutation,
            crate::namespace::graphql::OperationType::Subscription,
        ]
        .into_iter()
        .filter(|kind| types.root(*kind).is_some())
        .map(|kind| kind.as_str())
        .collect();
        findings.push(Finding::new(
            query,
            format!(
                "an operation type the schema has ({})",
                available.join(", ")
            ),
            operation.operation_type.as_str(),
        ));
        return;
    };
    let mut walk = Walk {
        types,
        document,
        operation,
        findings,
        walked: HashSet::new(),
        depth: 0,
    };
    walk.variables(variables, prefix);
    walk.selections(root, &operation.selection_set, &mut query);
}

struct Walk<'s, 'd, 'f> {
    types: &'s Types,
    document: &'d Executable<'d>,
    operation: &'d OperationDef<'d>,
    findings: &'f mut Vec<Finding>,
    /// Fragments walked already: each once, and no cycle followed.
    walked: HashSet<&'d str>,
    depth: usize,
}

impl<'d> Walk<'_, 'd, '_> {
    fn finding(&mut self, pointer: &str, expected: impl Into<String>, received: impl Into<String>) {
        self.findings
            .push(Finding::new(pointer, expected, received));
    }

    /// The variables' definitions, and the values sent for them.
    fn variables(&mut self, values: &Json, prefix: &str) {
        for definition in &self.operation.variables {
            let mut pointer = format!("{prefix}/query");
            push_segment(&mut pointer, &format!("${}", definition.name));
            let named = definition.ty.named();
            match self.types.kind(named) {
                None => {
                    self.finding(&pointer, "a type of the schema", named);
                    continue;
                }
                Some(TypeKind::Scalar | TypeKind::Enum(_) | TypeKind::Input(_)) => {}
                Some(other) => {
                    let expected = "an input type (a scalar, an enum or an input type)";
                    let received = format!("{named}, {}", article(other.describe()));
                    self.finding(&pointer, expected, received);
                    continue;
                }
            }
            let mut pointer = format!("{prefix}/variables");
            push_segment(&mut pointer, definition.name);
            match values.get(definition.name) {
                None if matches!(definition.ty, TypeRef::NonNull(_))
                    && definition.default.is_none() =>
                {
                    let expected = format!("a value of type {} (required)", definition.ty);
                    self.finding(&pointer, expected, "none");
                }
                None => {}
                Some(value) => self.input(value, &definition.ty, false, &mut pointer),
            }
        }
    }

    fn selections(&mut self, parent: &str, selections: &'d [Selection<'d>], path: &mut String) {
        self.depth += 1;
        if self.depth > MAX_WALK_DEPTH {
            let expected = format!("selections nested at most {MAX_WALK_DEPTH} deep");
            self.finding(path, expected, "deeper, through fragments");
        } else {
            for selection in selections {
                let length = path.len();
                match selection {
                    Selection::Field(field) => {
                        push_segment(path, field.response_key());
                        self.field(parent, field, path);
                    }
                    Selection::Spread { name, .. } => {
                        push_segment(path, &format!("...{name}"));
                        self.spread(parent, name, path);
                    }
                    Selection::Inline {
                        type_condition,
                        selection_set,
                        ..
                    } => {
                        let on = type_condition.unwrap_or(parent);
                        match type_condition {
                            Some(on) => push_segment(path, &format!("... on {on}")),
                            None => push_segment(path, "..."),
                        }
                        if self.fragment_applies(parent, on, path) {
                            self.selections(on, selection_set, path);
                        }
                    }
                }
                path.truncate(length);
            }
        }
        self.depth -= 1;
    }

    /// Whether a fragment on `on` can be spread in a selection on
    /// `parent`; a finding when not.
    fn fragment_applies(&mut self, parent: &str, on: &str, path: &str) -> bool {
        if self.types.kind(on).is_none() {
            self.finding(
                path,
                "a fragment on a type of the schema",
                format!("on {on}"),
            );
            return false;
        }
        if !self.types.is_composite(on) {
            let expected = "a fragment on an object type, an interface or a union";
            self.finding(path, expected, format!("on {on}"));
            return false;
        }
        if !self.types.overlap(parent, on) {
            let expected = format!("a fragment on a type a {parent} can be");
            self.finding(path, expected, format!("on {on}"));
            return false;
        }
        true
    }

    fn spread(&mut self, parent: &str, name: &str, path: &mut String) {
        let document = self.document;
        let Some(fragment) = document
            .fragments
            .iter()
            .find(|fragment| fragment.name == name)
        else {
            self.finding(path, "a fragment the document defines", name);
            return;
        };
        if !self.fragment_applies(parent, fragment.type_condition, path) {
            return;
        }
        // A fragment's fields are checked on its own type: once is enough.
        if self.walked.insert(fragment.name) {
            self.selections(fragment.type_condition, &fragment.selection_set, path);
        }
    }

    fn field(&mut self, parent: &str, field: &'d Field<'d>, path: &mut String) {
        if field.name == "__typename" {
            return;
        }
        // Introspection is the server's own: not in the SDL, not checked.
        if field.name.starts_with("__") {
            return;
        }
        let types = self.types;
        let Some(definition) = types.field(parent, field.name) else {
            let expected = match types.kind(parent) {
                Some(TypeKind::Union(members)) => format!(
                    "`__typename` or a fragment on a member of the union {parent} ({})",
                    members.join(", ")
                ),
                _ => format!("a field of {}", types.describe_fields(parent)),
            };
            self.finding(path, expected, field.name);
            return;
        };
        for (name, value) in &field.arguments {
            let mut pointer = format!("{path}({name})");
            match definition
                .arguments
                .iter()
                .find(|argument| argument.name == *name)
            {
                None => {
                    let expected = format!(
                        "an argument of {parent}.{} ({})",
                        field.name,
                        names(&definition.arguments)
                    );
                    self.finding(&pointer, expected, *name);
                }
                Some(argument) => {
                    self.input(value, &argument.ty, argument.has_default, &mut pointer)
                }
            }
        }
        for argument in &definition.arguments {
            let given = field
                .arguments
                .iter()
                .any(|(name, _)| *name == argument.name);
            if argument.required() && !given {
                let pointer = format!("{path}({})", argument.name);
                let expected =
                    format!("the required argument `{}: {}`", argument.name, argument.ty);
                self.finding(&pointer, expected, "none");
            }
        }
        let named = definition.ty.named();
        let composite = types.is_composite(named);
        match (composite, field.selection_set.is_empty()) {
            (true, true) => {
                let expected = format!("a selection set (the fields of {named} wanted)");
                self.finding(path, expected, "none");
            }
            (false, false) => {
                let expected = format!("no selection set ({named} is a scalar or an enum)");
                self.finding(path, expected, "a selection set");
            }
            (true, false) => self.selections(named, &field.selection_set, path),
            (false, true) => {}
        }
    }

    /// A value where one of type `ty` goes: an argument's (or an input
    /// field's) literal, with `has_default` from its definition, or a
    /// variable's JSON value.
    fn input<V: InputValue>(
        &mut self,
        value: &V,
        ty: &TypeRef,
        has_default: bool,
        pointer: &mut String,
    ) {
        if let Some(name) = value.variable() {
            self.variable_usage(name, ty, has_default, pointer);
            return;
        }
        match ty {
            TypeRef::NonNull(_) if value.is_null() => {
                self.finding(pointer, format!("a value of type {ty}"), "null");
            }
            TypeRef::NonNull(inner) => self.input(value, inner, false, pointer),
            _ if value.is_null() => {}
            TypeRef::List(inner) => match value.items() {
                Some(items) => {
                    for (index, item) in items.into_iter().enumerate() {
                        let length = pointer.len();
                        push_segment(pointer, &index.to_string());
                        self.input(item, inner, false, pointer);
                        pointer.truncate(length);
                    }
                }
                // One value where a list is expected is a list of one.
                None => self.input(value, inner, false, pointer),
            },
            TypeRef::Named(name) => match self.types.kind(name) {
                None => {}
                Some(TypeKind::Input(fields)) => {
                    let Some(given) = value.entries() else {
                        let received = short(&value.text());
                        self.finding(pointer, format!("an input object {name}"), received);
                        return;
                    };
                    for (field_name, field_value) in &given {
                        let length = pointer.len();
                        push_segment(pointer, field_name);
                        match fields.iter().find(|field| field.name == *field_name) {
                            None => {
                                let expected =
                                    format!("a field of the input {name} ({})", names(fields));
                                self.finding(pointer, expected, *field_name);
                            }
                            Some(field) => {
                                self.input(*field_value, &field.ty, field.has_default, pointer);
                            }
                        }
                        pointer.truncate(length);
                    }
                    for field in fields {
                        if field.required() && !given.iter().any(|(name, _)| *name == field.name) {
                            let length = pointer.len();
                            push_segment(pointer, &field.name);
                            let expected =
                                format!("the required field `{}: {}`", field.name, field.ty);
                            self.finding(pointer, expected, "none");
                            pointer.truncate(length);
                        }
                    }
                }
                Some(leaf) if !value.fits(name, leaf) => {
                    let received = short(&value.text());
                    self.finding(pointer, describe_leaf(name, leaf), received);
                }
                Some(_) => {}
            },
        }
    }

    /// `$name` where a value of type `ty` goes: defined, and of a type
    /// allowed there.
    fn variable_usage(&mut self, name: &str, ty: &TypeRef, has_default: bool, pointer: &str) {
        let Some(definition) = self
            .operation
            .variables
            .iter()
            .find(|definition| definition.name == name)
        else {
            let expected = "a variable the operation defines";
            self.finding(pointer, expected, format!("${name}"));
            return;
        };
        // A nullable variable with a default (or into a position with
        // one) may stand where a non-null type is expected.
        let relaxed = match (ty, &definition.ty) {
            (TypeRef::NonNull(inner), variable) if !matches!(variable, TypeRef::NonNull(_)) => {
                let has_value = definition
                    .default
                    .as_ref()
                    .is_some_and(|default| *default != Value::Null);
                if !has_value && !has_default {
                    None
                } else {
                    Some(&**inner)
                }
            }
            (ty, _) => Some(ty),
        };
        if !relaxed.is_some_and(|ty| compatible(&definition.ty, ty)) {
            let expected = format!("a variable of type {ty}");
            self.finding(pointer, expected, format!("${name}: {}", definition.ty));
        }
    }
}

/// What the input check reads of a value: a literal in the document, or
/// a variable's JSON value.
trait InputValue {
    /// `$name`: a variable standing for the value.
    fn variable(&self) -> Option<&str>;
    fn is_null(&self) -> bool;
    fn items(&self) -> Option<Vec<&Self>>;
    fn entries(&self) -> Option<Vec<(&str, &Self)>>;
    /// Whether it is a value of the scalar or enum `name`.
    fn fits(&self, name: &str, kind: &TypeKind) -> bool;
    fn text(&self) -> String;
}

impl InputValue for Value<'_> {
    fn variable(&self) -> Option<&str> {
        match self {
            Value::Variable(name) => Some(name),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        *self == Value::Null
    }

    fn items(&self) -> Option<Vec<&Self>> {
        match self {
            Value::List(items) => Some(items.iter().collect()),
            _ => None,
        }
    }

    fn entries(&self) -> Option<Vec<(&str, &Self)>> {
        match self {
            Value::Object(fields) => {
                Some(fields.iter().map(|(name, value)| (*name, value)).collect())
            }
            _ => None,
        }
    }

    fn fits(&self, name: &str, kind: &TypeKind) -> bool {
        match (kind, name, self) {
            (TypeKind::Enum(values), _, Value::Enum(text)) => {
                values.iter().any(|known| known == text)
            }
            (TypeKind::Enum(_), _, _) => false,
            (_, "Int", Value::Int(text)) => text.parse::<i32>().is_ok(),
            (_, "Float", Value::Int(_) | Value::Float(_)) => true,
            (_, "String", Value::String(_)) => true,
            (_, "Boolean", Value::Boolean(_)) => true,
            (_, "ID", Value::String(_) | Value::Int(_)) => true,
            (_, "Int" | "Float" | "String" | "Boolean" | "ID", _) => false,
            // A custom scalar: whatever its parser takes.
            _ => true,
        }
    }

    fn text(&self) -> String {
        self.to_string()
    }
}

impl InputValue for Json {
    fn variable(&self) -> Option<&str> {
        None
    }

    fn is_null(&self) -> bool {
        self.is_null()
    }

    fn items(&self) -> Option<Vec<&Self>> {
        self.as_array().map(|items| items.iter().collect())
    }

    fn entries(&self) -> Option<Vec<(&str, &Self)>> {
        self.as_object().map(|fields| {
            fields
                .iter()
                .map(|(name, value)| (name.as_str(), value))
                .collect()
        })
    }

    fn fits(&self, name: &str, kind: &TypeKind) -> bool {
        json_fits(name, kind, self, true) != Some(false)
    }

    fn text(&self) -> String {
        self.to_string()
    }
}

/// Whether a variable of type `variable` may stand where `location` is
/// expected (GraphQL's `AreTypesCompatible`).
fn compatible(variable: &TypeRef, location: &TypeRef) -> bool {
    match (variable, location) {
        (TypeRef::NonNull(variable), TypeRef::NonNull(location)) => compatible(variable, location),
        (_, TypeRef::NonNull(_)) => false,
        (TypeRef::NonNull(variable), location) => compatible(variable, location),
        (TypeRef::List(variable), TypeRef::List(location)) => compatible(variable, location),
        (TypeRef::List(_), _) | (_, TypeRef::List(_)) => false,
        (TypeRef::Named(variable), TypeRef::Named(location)) => variable == location,
    }
}

fn names(values: &[InputValueDef]) -> String {
    let names: Vec<&str> = values.iter().map(|value| value.name.as_str()).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// `an object type`, `a union`.
fn article(what: &str) -> String {
    let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {what}")
}
