//! The answer's side of the contract: a GraphQL response's shape, and its
//! `data` walked along the operation's selection set and the schema's types.

use serde_json::{Map, Value as Json};

use super::request::MAX_WALK_DEPTH;
use super::{Types, describe_leaf, json_fits, push_segment};
use crate::handling::contract::Finding;
use crate::handling::contract::short;
use crate::namespace::graphql::document::tree::{
    Directive, Executable, Field, OperationDef, Selection, TypeKind, TypeRef, Value,
};

/// Checks the answer `body` to `operation`; `prefix` is where its pointers
/// start (`/response/body`, or `/response/body/0` in a batch).
pub(super) fn check(
    types: &Types,
    document: &Executable<'_>,
    operation: &OperationDef<'_>,
    variables: &Json,
    body: &Json,
    prefix: &str,
    findings: &mut Vec<Finding>,
) {
    let Json::Object(body) = body else {
        let expected = "a GraphQL response (an object with `data` and/or `errors`)";
        findings.push(Finding::new(prefix, expected, kind_of(body)));
        return;
    };
    for key in body.keys() {
        if !matches!(key.as_str(), "data" | "errors" | "extensions") {
            let mut pointer = prefix.to_owned();
            push_segment(&mut pointer, key);
            let expected = "only `data`, `errors` and `extensions` at the top";
            findings.push(Finding::new(pointer, expected, key.as_str()));
        }
    }
    let has_errors = match body.get("errors") {
        None => false,
        Some(errors) => {
            check_errors(errors, &format!("{prefix}/errors"), findings);
            true
        }
    };
    let pointer = format!("{prefix}/data");
    match body.get("data") {
        None if !has_errors => {
            findings.push(Finding::new(prefix, "`data` or `errors`", "neither"));
        }
        Some(Json::Null) if !has_errors => {
            let expected = "an object (`data` is null only with `errors`)";
            findings.push(Finding::new(pointer, expected, "null"));
        }
        None | Some(Json::Null) => {}
        Some(data) => {
            let Some(root) = types.root(operation.operation_type) else {
                // The request's finding says it.
                return;
            };
            let mut walk = Walk {
                types,
                document,
                variables,
                findings,
                depth: 0,
            };
            let mut pointer = pointer;
            let root_set: &[Selection<'_>] = &operation.selection_set;
            walk.object(data, root, &[root_set], &mut pointer);
        }
    }
}

/// `errors`: a non-empty list of objects, each with a `message`.
fn check_errors(errors: &Json, pointer: &str, findings: &mut Vec<Finding>) {
    let Some(list) = errors.as_array().filter(|list| !list.is_empty()) else {
        let received = short(&errors.to_string());
        findings.push(Finding::new(
            pointer,
            "a non-empty list of errors",
            received,
        ));
        return;
    };
    for (index, error) in list.iter().enumerate() {
        if !error.get("message").is_some_and(Json::is_string) {
            let pointer = format!("{pointer}/{index}/message");
            let received = error
                .get("message")
                .map_or("none".to_owned(), |m| short(&m.to_string()));
            findings.push(Finding::new(
                pointer,
                "a string (the error's message)",
                received,
            ));
        }
    }
}

fn kind_of(value: &Json) -> String {
    match value {
        Json::Null => "null".to_owned(),
        Json::Bool(_) | Json::Number(_) | Json::String(_) => short(&value.to_string()),
        Json::Array(_) => "a list".to_owned(),
        Json::Object(_) => "an object".to_owned(),
    }
}

struct Walk<'d, 'f> {
    /// The schema and the document, for as long as the walk (one lifetime:
    /// type names come from both).
    types: &'d Types,
    document: &'d Executable<'d>,
    /// The request's variables: what `@skip(if: $x)` reads.
    variables: &'d Json,
    findings: &'f mut Vec<Finding>,
    depth: usize,
}

/// The fields selected under one response key: their nodes (with the type
/// each was selected on), and whether the key must be there.
struct Group<'d> {
    key: &'d str,
    fields: Vec<(&'d Field<'d>, &'d str)>,
    /// Selected unconditionally: not only under `@skip`/`@include` whose
    /// condition is unknown, nor only in fragments that may not apply.
    required: bool,
}

/// Whether a fragment applies to the object at hand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    Yes,
    Maybe,
    No,
}

impl<'d> Walk<'d, '_> {
    fn finding(&mut self, pointer: &str, expected: impl Into<String>, received: impl Into<String>) {
        self.findings
            .push(Finding::new(pointer, expected, received));
    }

    /// A value of type `ty`; `sets` are the selection sets of the fields
    /// that selected it (what an object must hold).
    fn value(
        &mut self,
        value: &Json,
        ty: &'d TypeRef,
        sets: &[&'d [Selection<'d>]],
        pointer: &mut String,
    ) {
        match ty {
            TypeRef::NonNull(_) if value.is_null() => {
                self.finding(pointer, format!("a non-null {ty}"), "null");
            }
            TypeRef::NonNull(inner) => self.value(value, inner, sets, pointer),
            _ if value.is_null() => {}
            TypeRef::List(inner) => {
                let Json::Array(items) = value else {
                    self.finding(pointer, format!("a list ({ty})"), kind_of(value));
                    return;
                };
                for (index, item) in items.iter().enumerate() {
                    let length = pointer.len();
                    push_segment(pointer, &index.to_string());
                    self.value(item, inner, sets, pointer);
                    pointer.truncate(length);
                }
            }
            TypeRef::Named(name) => {
                let Some(kind) = self.types.kind(name) else {
                    return;
                };
                match kind {
                    TypeKind::Object { .. } | TypeKind::Interface { .. } | TypeKind::Union(_) => {
                        self.object(value, name, sets, pointer);
                    }
                    leaf => {
                        if value.is_array() {
                            self.finding(pointer, format!("a single {name}, not a list"), "a list");
                        } else if json_fits(name, leaf, value, false) == Some(false) {
                            self.finding(pointer, describe_leaf(name, leaf), kind_of(value));
                        }
                    }
                }
            }
        }
    }

    /// An object of the composite type `static_type`.
    fn object(
        &mut self,
        value: &Json,
        static_type: &'d str,
        sets: &[&'d [Selection<'d>]],
        pointer: &mut String,
    ) {
        let Json::Object(object) = value else {
            let expected = format!("an object ({static_type})");
            self.finding(pointer, expected, kind_of(value));
            return;
        };
        self.depth += 1;
        if self.depth > MAX_WALK_DEPTH {
            self.depth -= 1;
            return;
        }
        let mut groups = Vec::new();
        // What the object is: its type when that is an object type, else
        // what its `__typename` says (when selected and sent).
        let types = self.types;
        let concrete = if matches!(types.kind(static_type), Some(TypeKind::Object { .. })) {
            Some(static_type.to_owned())
        } else {
            self.collect(sets, static_type, None, true, &mut groups, &mut Vec::new());
            let typename = groups
                .iter()
                .find(|group| {
                    group
                        .fields
                        .iter()
                        .any(|(field, _)| field.name == "__typename")
                })
                .and_then(|group| object.get(group.key))
                .and_then(Json::as_str);
            groups.clear();
            typename
                .filter(|name| types.possible_types(static_type).contains(name))
                .map(str::to_owned)
        };
        self.collect(
            sets,
            static_type,
            concrete.as_deref(),
            true,
            &mut groups,
            &mut Vec::new(),
        );
        for group in &groups {
            let length = pointer.len();
            push_segment(pointer, group.key);
            self.group(object, group, static_type, concrete.as_deref(), pointer);
            pointer.truncate(length);
        }
        for key in object.keys() {
            if !groups.iter().any(|group| group.key == key) {
                let length = pointer.len();
                push_segment(pointer, key);
                let keys: Vec<&str> = groups.iter().map(|group| group.key).collect();
                let expected = format!("only the fields the query selected ({})", keys.join(", "));
                self.finding(pointer, expected, "a field it did not select");
                pointer.truncate(length);
            }
        }
        self.depth -= 1;
    }

    /// One response key of an object.
    fn group(
        &mut self,
        object: &Map<String, Json>,
        group: &Group<'d>,
        static_type: &str,
        concrete: Option<&str>,
        pointer: &mut String,
    ) {
        let Some(&(first, selected_on)) = group.fields.first() else {
            return;
        };
        let types = self.types;
        let typename = first.name == "__typename";
        // Introspection is the server's own, and an unknown field is the
        // request's finding: neither is looked for in the answer.
        let definition = concrete
            .and_then(|concrete| types.field(concrete, first.name))
            .or_else(|| types.field(selected_on, first.name));
        if definition.is_none() && !typename {
            return;
        }
        let Some(value) = object.get(group.key) else {
            if group.required {
                let expected = format!("the field `{}` (selected)", first.name);
                self.finding(pointer, expected, "none");
            }
            return;
        };
        let Some(definition) = definition else {
            let possible = types.possible_types(static_type);
            let fits = value.as_str().is_some_and(|name| possible.contains(&name));
            if !fits {
                let expected = if possible.len() == 1 {
                    format!("\"{static_type}\"")
                } else {
                    format!(
                        "one of the types of {static_type} ({})",
                        possible.join(", ")
                    )
                };
                self.finding(pointer, expected, short(&value.to_string()));
            }
            return;
        };
        let sets: Vec<&'d [Selection<'d>]> = group
            .fields
            .iter()
            .map(|(field, _)| &field.selection_set[..])
            .collect();
        self.value(value, &definition.ty, &sets, pointer);
    }

    /// Collects the fields of `sets` by response key (GraphQL's
    /// `CollectFields`), for an object of `static_type` that is of the
    /// object type `concrete` when known.
    fn collect(
        &self,
        sets: &[&'d [Selection<'d>]],
        parent: &'d str,
        concrete: Option<&str>,
        required: bool,
        groups: &mut Vec<Group<'d>>,
        fragments: &mut Vec<&'d str>,
    ) {
        for set in sets {
            for selection in *set {
                let (directives, on) = match selection {
                    Selection::Field(field) => (&field.directives[..], None),
                    Selection::Spread { directives, .. } => (&directives[..], None),
                    Selection::Inline {
                        directives,
                        type_condition,
                        ..
                    } => (&directives[..], *type_condition),
                };
                let Some(included) = self.included(directives) else {
                    continue;
                };
                let required = required && included;
                match selection {
                    Selection::Field(field) => {
                        let key = field.response_key();
                        match groups.iter_mut().find(|group| group.key == key) {
                            Some(group) => {
                                group.fields.push((field, parent));
                                group.required |= required;
                            }
                            None => groups.push(Group {
                                key,
                                fields: vec![(field, parent)],
                                required,
                            }),
                        }
                    }
                    Selection::Inline { selection_set, .. } => {
                        let on = on.unwrap_or(parent);
                        let applies = self.applies(on, parent, concrete);
                        if applies != Applies::No {
                            let required = required && applies == Applies::Yes;
                            self.collect(
                                &[selection_set],
                                on,
                                concrete,
                                required,
                                groups,
                                fragments,
                            );
                        }
                    }
                    Selection::Spread { name, .. } => {
                        let document = self.document;
                        let Some(fragment) = document.fragments.iter().find(|f| f.name == *name)
                        else {
                            continue;
                        };
                        // A cycle (the request's finding) is not followed.
                        if fragments.contains(name) || fragments.len() >= MAX_WALK_DEPTH {
                            continue;
                        }
                        let on = fragment.type_condition;
                        let applies = self.applies(on, parent, concrete);
                        if applies != Applies::No {
                            let required = required && applies == Applies::Yes;
                            fragments.push(name);
                            let set: &[Selection<'d>] = &fragment.selection_set;
                            self.collect(&[set], on, concrete, required, groups, fragments);
                            fragments.pop();
                        }
                    }
                }
            }
        }
    }

    /// Whether a fragment on `on`, in a selection on `parent`, applies to
    /// an object of type `concrete` (when known).
    fn applies(&self, on: &str, parent: &str, concrete: Option<&str>) -> Applies {
        let types = self.types;
        if self.types.kind(on).is_none() {
            return Applies::No;
        }
        match concrete {
            Some(concrete) if types.possible_types(on).contains(&concrete) => Applies::Yes,
            Some(_) => Applies::No,
            None if types.within(parent, on) => Applies::Yes,
            None if types.overlap(parent, on) => Applies::Maybe,
            None => Applies::No,
        }
    }

    /// Whether `@skip`/`@include` keep a selection: `Some(true)` yes,
    /// `None` no, `Some(false)` unknown (a variable not sent).
    fn included(&self, directives: &[Directive<'_>]) -> Option<bool> {
        let mut known = true;
        for directive in directives {
            let wanted = match directive.name {
                "include" => true,
                "skip" => false,
                _ => continue,
            };
            let condition = directive
                .arguments
                .iter()
                .find(|(name, _)| *name == "if")
                .and_then(|(_, value)| match value {
                    Value::Boolean(value) => Some(*value),
                    Value::Variable(name) => self.variables.get(*name).and_then(Json::as_bool),
                    _ => None,
                });
            match condition {
                Some(condition) if condition != wanted => return None,
                Some(_) => {}
                None => known = false,
            }
        }
        Some(known)
    }
}
