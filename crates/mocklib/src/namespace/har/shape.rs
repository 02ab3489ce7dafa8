//! The shape of a JSON document, and how two shapes differ: what a drift
//! check compares, since values (ids, timestamps, names) change from run
//! to run and the fields and their types should not.
//!
//! A shape is, at each place of the document, the set of types found there
//! and, for objects, the shapes of their fields. An array's elements count
//! as one place: their shapes are merged (the union of their types and of
//! their fields), so a list of three users compares cleanly with a list of
//! five, and with one where some users lack an optional field. An empty
//! array says nothing about its elements, so it is never compared with
//! another array's elements.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::REDACTED;
use super::report::{DriftFinding, DriftKind};

/// The JSON types, in the order a description lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Type {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl Type {
    fn of(value: &Value) -> Self {
        match value {
            Value::Null => Type::Null,
            Value::Bool(_) => Type::Boolean,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::Array(_) => Type::Array,
            Value::Object(_) => Type::Object,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Type::Null => "null",
            Type::Boolean => "boolean",
            Type::Number => "number",
            Type::String => "string",
            Type::Array => "array",
            Type::Object => "object",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The shape of the values found at one place of a document.
#[derive(Debug, Default)]
struct Shape {
    /// Where it was first found: the pointer findings name.
    pointer: String,
    /// The types found, one bit each.
    types: u8,
    /// Found redacted by a recording ([`REDACTED`]): its type is unknown.
    redacted: bool,
    /// The fields of the objects found, merged.
    fields: BTreeMap<String, Shape>,
    /// The elements of the arrays found, merged; `None` while every array
    /// found was empty.
    items: Option<Box<Shape>>,
}

impl Shape {
    fn of(value: &Value) -> Self {
        let mut shape = Shape::default();
        shape.add(value, "");
        shape
    }

    fn at(pointer: String) -> Self {
        Shape {
            pointer,
            ..Shape::default()
        }
    }

    /// Merges `value`, found at `pointer`, into this shape.
    fn add(&mut self, value: &Value, pointer: &str) {
        match value {
            Value::String(text) if text == REDACTED => self.redacted = true,
            Value::Object(object) => {
                self.types |= Type::Object.bit();
                for (name, value) in object {
                    let pointer = format!("{pointer}/{}", escape(name));
                    self.fields
                        .entry(name.clone())
                        .or_insert_with(|| Shape::at(pointer.clone()))
                        .add(value, &pointer);
                }
            }
            Value::Array(items) => {
                self.types |= Type::Array.bit();
                for (index, item) in items.iter().enumerate() {
                    let pointer = format!("{pointer}/{index}");
                    self.items
                        .get_or_insert_with(|| Box::new(Shape::at(pointer.clone())))
                        .add(item, &pointer);
                }
            }
            _ => self.types |= Type::of(value).bit(),
        }
    }

    fn has(&self, kind: Type) -> bool {
        self.types & kind.bit() != 0
    }

    /// `number`, `null or string`; `redacted` for a value known only as
    /// redacted.
    fn describe(&self) -> String {
        let names: Vec<&str> = [
            Type::Null,
            Type::Boolean,
            Type::Number,
            Type::String,
            Type::Array,
            Type::Object,
        ]
        .into_iter()
        .filter(|kind| self.has(*kind))
        .map(Type::name)
        .collect();
        if names.is_empty() {
            "redacted".to_owned()
        } else {
            names.join(" or ")
        }
    }
}

/// How the shape of `actual` differs from that of `expected`: fields
/// added and removed, types changed, each at the JSON pointer of its first
/// place (an added field's in `actual`, the others' in `expected`).
/// Values are not compared.
pub(crate) fn diff(expected: &Value, actual: &Value) -> Vec<DriftFinding> {
    let mut findings = Vec::new();
    compare(&Shape::of(expected), &Shape::of(actual), &mut findings);
    findings
}

fn compare(expected: &Shape, actual: &Shape, findings: &mut Vec<DriftFinding>) {
    // A redacted value may have been of any type: only what is inside it
    // could be compared, and nothing is.
    if !expected.redacted && expected.types != actual.types {
        findings.push(DriftFinding::new(
            DriftKind::TypeChanged,
            expected.pointer.clone(),
            Some(expected.describe()),
            Some(actual.describe()),
        ));
    }
    // Fields and elements only where both sides have objects (arrays):
    // otherwise the type change says it all.
    if expected.has(Type::Object) && actual.has(Type::Object) {
        for (name, shape) in &expected.fields {
            match actual.fields.get(name) {
                Some(found) => compare(shape, found, findings),
                None => findings.push(DriftFinding::new(
                    DriftKind::FieldRemoved,
                    shape.pointer.clone(),
                    Some(shape.describe()),
                    None,
                )),
            }
        }
        for (name, shape) in &actual.fields {
            if !expected.fields.contains_key(name) {
                findings.push(DriftFinding::new(
                    DriftKind::FieldAdded,
                    shape.pointer.clone(),
                    None,
                    Some(shape.describe()),
                ));
            }
        }
    }
    if let (Some(expected), Some(actual)) = (&expected.items, &actual.items) {
        compare(expected, actual, findings);
    }
}

/// A name as a JSON pointer segment (RFC 6901).
pub(crate) fn escape(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains(['~', '/']) {
        name.replace('~', "~0").replace('/', "~1").into()
    } else {
        name.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The findings as `kind pointer expected actual` lines.
    fn lines(expected: Value, actual: Value) -> Vec<String> {
        diff(&expected, &actual)
            .into_iter()
            .map(|finding| {
                format!(
                    "{:?} {} {} {}",
                    finding.kind,
                    finding.pointer,
                    finding.expected.as_deref().unwrap_or("-"),
                    finding.received.as_deref().unwrap_or("-")
                )
            })
            .collect()
    }

    #[test]
    fn values_are_never_compared() {
        let expected = json!({"id": 1, "name": "Kate", "at": "2024-01-01", "ok": true,
                              "tags": ["a", "b"], "none": null});
        let actual = json!({"id": 2, "name": "John", "at": "2025-06-30", "ok": false,
                            "tags": ["c"], "none": null});
        assert_eq!(lines(expected, actual), Vec::<String>::new());
        assert!(
            lines(json!(1.5), json!(-7)).is_empty(),
            "integers and floats are numbers"
        );
    }

    #[test]
    fn fields_added_removed_and_retyped_at_any_depth() {
        let expected = json!({"user": {"id": 1, "name": "Kate", "address": {"zip": "123"}}});
        let actual = json!({"user": {"id": "1", "full_name": "Kate", "address": {"zip": 123}}});
        assert_eq!(
            lines(expected, actual),
            [
                "TypeChanged /user/address/zip string number",
                "TypeChanged /user/id number string",
                "FieldRemoved /user/name string -",
                "FieldAdded /user/full_name - string",
            ]
        );
    }

    #[test]
    fn the_root_and_each_json_type_compare() {
        assert_eq!(lines(json!({}), json!([])), ["TypeChanged  object array"]);
        assert_eq!(
            lines(
                json!({"a": null, "b": true, "c": 1, "d": "x", "e": [], "f": {}}),
                json!({"a": "x", "b": 1, "c": "1", "d": null, "e": {}, "f": []})
            ),
            [
                "TypeChanged /a null string",
                "TypeChanged /b boolean number",
                "TypeChanged /c number string",
                "TypeChanged /d string null",
                "TypeChanged /e array object",
                "TypeChanged /f object array",
            ]
        );
    }

    #[test]
    fn array_elements_compare_as_the_union_of_their_shapes() {
        // Three users against one: no noise from the lengths, nor from an
        // optional field found in some elements only.
        let expected = json!({"items": [{"id": 1}, {"id": 2, "nick": "k"}, {"id": 3}]});
        let actual = json!({"items": [{"id": 9, "nick": "j"}]});
        assert!(lines(expected.clone(), actual).is_empty());

        // A field gone from every element; one added in the third only.
        let actual = json!({"items": [{"key": 1}, {"key": 2}, {"key": 3, "extra": true}]});
        assert_eq!(
            lines(expected, actual),
            [
                "FieldRemoved /items/0/id number -",
                "FieldRemoved /items/1/nick string -",
                "FieldAdded /items/2/extra - boolean",
                "FieldAdded /items/0/key - number",
            ]
        );
    }

    #[test]
    fn element_types_and_nested_arrays() {
        assert_eq!(
            lines(json!([[1, 2], [3]]), json!([["1"], []])),
            ["TypeChanged /0/0 number string"]
        );
        // A mixed array: the union of its types.
        assert_eq!(
            lines(json!([1, "a", null]), json!([1, 2])),
            ["TypeChanged /0 null or number or string number"]
        );
    }

    #[test]
    fn an_empty_array_says_nothing_about_elements() {
        assert!(lines(json!({"items": []}), json!({"items": [{"id": 1}]})).is_empty());
        assert!(lines(json!({"items": [{"id": 1}]}), json!({"items": []})).is_empty());
    }

    #[test]
    fn a_type_change_is_not_also_reported_as_fields() {
        assert_eq!(
            lines(json!({"user": {"id": 1}}), json!({"user": [1]})),
            ["TypeChanged /user object array"]
        );
    }

    #[test]
    fn redacted_values_match_any_type() {
        assert!(lines(json!({"token": REDACTED}), json!({"token": {"a": 1}})).is_empty());
        assert!(lines(json!({"token": REDACTED}), json!({"token": 7})).is_empty());
        // Still a field: its removal is drift.
        assert_eq!(
            lines(json!({"token": REDACTED}), json!({})),
            ["FieldRemoved /token redacted -"]
        );
    }

    #[test]
    fn pointers_escape_slash_and_tilde() {
        assert_eq!(
            lines(json!({"a/b": 1, "c~d": 1}), json!({"a/b": "1"})),
            [
                "TypeChanged /a~1b number string",
                "FieldRemoved /c~0d number -"
            ]
        );
    }
}
