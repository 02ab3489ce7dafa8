//! Example values: the document's own, else one generated from a schema.

use serde_json::{Map, Value as Json, json};
use serde_norway::Value;

use super::document::{Document, entries, to_json};
use super::pattern::{self, Lengths};

/// How many references deep generation follows (recursive ones end at
/// once); a bound on the size of what is generated.
const MAX_DEPTH: usize = 12;

/// How many values one generated example may hold, a string counting one
/// more per 64 characters. A document of a few hundred bytes can ask for
/// billions: `width` properties referring to a schema `depth` levels down
/// (`width ^ depth` values), `minItems: 1e12`, `minLength: 1e12`; that hung
/// `handlers()` or aborted on allocation (found by tests/hostile_input.rs).
/// What lies beyond the budget is left out, as a recursive reference is.
const BUDGET: usize = 100_000;

/// The named examples of a media type or parameter (`examples:`), in
/// document order, with references to `components/examples` followed.
pub(crate) fn named_examples(doc: &Document, holder: &Value) -> Vec<(String, Json)> {
    entries(holder.get("examples"))
        .filter_map(|(name, example)| {
            let (example, _) = doc.resolve(example, String::new()).ok()?;
            Some((name, to_json(example.get("value")?)))
        })
        .collect()
}

/// The value a media type, parameter or header answers with: its
/// `example`, else its first named example, else one from its schema.
pub(crate) fn example_of(doc: &Document, holder: &Value) -> Option<Json> {
    if let Some(example) = holder.get("example") {
        return Some(to_json(example));
    }
    if let Some((_, first)) = named_examples(doc, holder).into_iter().next() {
        return Some(first);
    }
    holder.get("schema").map(|schema| from_schema(doc, schema))
}

/// A value valid for `schema` as far as this simple generator knows: the
/// schema's example, default or first enum value, else one built from its
/// type (see the module docs of `openapi`).
pub(crate) fn from_schema(doc: &Document, schema: &Value) -> Json {
    Generator {
        doc,
        expanding: Vec::new(),
        budget: BUDGET,
    }
    .value(schema)
    .unwrap_or(Json::Null)
}

/// Builds values, following references.
struct Generator<'a> {
    doc: &'a Document,
    /// The references being expanded, outermost first: one met again is a
    /// recursive schema (a tree node's children), which ends there.
    expanding: Vec<String>,
    /// What is left of [`BUDGET`].
    budget: usize,
}

impl Generator<'_> {
    /// The value, or `None` for a recursive reference (or one too deep),
    /// or when the budget is spent.
    fn value(&mut self, schema: &Value) -> Option<Json> {
        self.budget = self.budget.checked_sub(1)?;
        let reference = schema.get("$ref").is_some();
        let Ok((schema, pointer)) = self.doc.resolve(schema, String::new()) else {
            return Some(Json::Null);
        };
        if reference {
            if self.expanding.contains(&pointer) || self.expanding.len() > MAX_DEPTH {
                return None;
            }
            self.expanding.push(pointer);
        }
        let value = self.resolved(schema);
        if reference {
            self.expanding.pop();
        }
        Some(value)
    }

    fn resolved(&mut self, schema: &Value) -> Json {
        if let Some(value) = schema.get("example").or_else(|| schema.get("default")) {
            return to_json(value);
        }
        for list in ["examples", "enum"] {
            // 3.1 schemas: `examples` is an array of values.
            if let Some(first) = schema
                .get(list)
                .and_then(Value::as_sequence)
                .and_then(|s| s.first())
            {
                return to_json(first);
            }
        }
        if let Some(value) = schema.get("const") {
            return to_json(value);
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_sequence) {
            let mut merged = Map::new();
            let mut last = Json::Null;
            for part in parts {
                match self.value(part) {
                    Some(Json::Object(fields)) => merged.extend(fields),
                    Some(other) => last = other,
                    None => {}
                }
            }
            if merged.is_empty() {
                return last;
            }
            // Properties next to `allOf` belong to the same object.
            if let Json::Object(own) = self.typed(schema) {
                merged.extend(own);
            }
            return Json::Object(merged);
        }
        for choice in ["oneOf", "anyOf"] {
            if let Some(first) = schema
                .get(choice)
                .and_then(Value::as_sequence)
                .and_then(|s| s.first())
            {
                return self.value(first).unwrap_or(Json::Null);
            }
        }
        self.typed(schema)
    }

    fn typed(&mut self, schema: &Value) -> Json {
        match type_of(schema) {
            Some("object") => {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_sequence)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let mut object = Map::new();
                for (name, property) in entries(schema.get("properties")) {
                    let resolved = self
                        .doc
                        .resolve(property, String::new())
                        .map_or(property, |r| r.0);
                    // A response never carries what only requests may send.
                    if resolved.get("writeOnly").and_then(Value::as_bool) == Some(true) {
                        continue;
                    }
                    // A recursive property ends the recursion: left out
                    // unless required, then null.
                    match self.value(property) {
                        Some(value) => {
                            object.insert(name, value);
                        }
                        None if required.contains(&name.as_str()) => {
                            object.insert(name, Json::Null);
                        }
                        None => {}
                    }
                }
                Json::Object(object)
            }
            Some("array") => {
                // `as` saturates (and makes NaN 0).
                let wanted = number(schema, "minItems").map_or(1, |n| n.max(1.0) as usize);
                let before = self.budget;
                match schema.get("items").and_then(|items| self.value(items)) {
                    Some(item) => {
                        // Each copy costs what the first did.
                        let cost = (before - self.budget).max(1);
                        let count = wanted.min(1 + self.budget / cost);
                        self.budget -= cost * (count - 1);
                        Json::Array(vec![item; count])
                    }
                    None => Json::Array(Vec::new()),
                }
            }
            Some("string") => {
                let text = string(schema, self.budget.saturating_mul(64));
                self.budget -= (text.len() / 64).min(self.budget);
                Json::String(text)
            }
            Some(kind @ ("integer" | "number")) => {
                let value = in_range(schema, kind == "integer");
                if kind == "integer" {
                    json!(value as i64)
                } else {
                    json!(value)
                }
            }
            Some("boolean") => Json::Bool(true),
            _ => Json::Null,
        }
    }
}

/// The schema's type: `type: string`, or 3.1's `type: [string, "null"]`
/// (the first that is not `null`), else guessed from its keywords.
pub(crate) fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => Some(kind),
        Some(Value::Sequence(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .or(Some("null")),
        _ if schema.get("properties").is_some() => Some("object"),
        _ if schema.get("items").is_some() => Some("array"),
        _ => None,
    }
}

fn number(schema: &Value, keyword: &str) -> Option<f64> {
    schema.get(keyword).and_then(Value::as_f64)
}

/// 0, moved into `minimum`..`maximum` (exclusive bounds as booleans in
/// 3.0, as numbers in 3.1).
fn in_range(schema: &Value, integer: bool) -> f64 {
    let step = if integer { 1.0 } else { 0.5 };
    let exclusive = |bound: &str, flag: &str| match schema.get(flag) {
        Some(Value::Bool(true)) => number(schema, bound).map(|n| (n, true)),
        Some(value) => value.as_f64().map(|n| (n, true)),
        None => number(schema, bound).map(|n| (n, false)),
    };
    let mut value = 0.0;
    if let Some((minimum, strict)) = exclusive("minimum", "exclusiveMinimum") {
        let minimum = if integer { minimum.ceil() } else { minimum };
        if value < minimum || (strict && value <= minimum) {
            value = if strict { minimum + step } else { minimum };
        }
    }
    if let Some((maximum, strict)) = exclusive("maximum", "exclusiveMaximum") {
        let maximum = if integer { maximum.floor() } else { maximum };
        if value > maximum || (strict && value >= maximum) {
            value = if strict { maximum - step } else { maximum };
        }
    }
    value
}

/// An example string for `schema`: the simplest one matching its
/// `pattern` if it has one, else by its `format`, padded to its
/// `minLength` but to no more than `limit` characters.
fn string(schema: &Value, limit: usize) -> String {
    if let Some(regex) = schema.get("pattern").and_then(Value::as_str) {
        let min = number(schema, "minLength").map_or(0, |n| (n as usize).min(limit));
        let max = number(schema, "maxLength").map(|n| n as usize);
        match pattern::matching(regex, Lengths { min, max, limit }, None) {
            Ok(text) => return text,
            // Made once, when the handlers are.
            Err(why) => crate::log::warn(&format!(
                "openapi: pattern {regex:?}: {why}; a string ignoring it is sent"
            )),
        }
    }
    let text = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => "2024-01-01T00:00:00Z",
        Some("date") => "2024-01-01",
        Some("time") => "00:00:00Z",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some("email") => "user@example.com",
        Some("uri" | "url") => "https://example.com/",
        Some("hostname") => "example.com",
        Some("ipv4") => "192.0.2.1",
        Some("ipv6") => "2001:db8::1",
        Some("byte") => "c3RyaW5n",
        _ => "string",
    };
    let mut text = text.to_owned();
    if let Some(min) = number(schema, "minLength") {
        let (min, length) = ((min as usize).min(limit), text.chars().count());
        if length < min {
            text.push_str(&"x".repeat(min - length));
        }
    }
    if let Some(max) = number(schema, "maxLength") {
        text = text.chars().take(max as usize).collect();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regressions found by tests/hostile_input.rs: small documents that
    /// asked for billions of values.
    fn generated(schemas: &str, schema: &str) -> Json {
        let text = format!(
            r#"{{"openapi": "3.0.3", "info": {{"title": "t", "version": "1"}}, "paths": {{}},
                "components": {{"schemas": {schemas}}}}}"#
        );
        let doc = Document::parse(&text, true, "the test".to_owned()).unwrap();
        from_schema(&doc, &serde_norway::from_str(schema).unwrap())
    }

    fn values_in(value: &Json) -> usize {
        1 + match value {
            Json::Array(items) => items.iter().map(values_in).sum(),
            Json::Object(fields) => fields.values().map(values_in).sum(),
            _ => 0,
        }
    }

    #[test]
    fn references_fanning_out_stop_at_the_budget() {
        // 6 properties, each referring 7 levels down: 6^7 = 279,936 values.
        let schemas: Vec<String> = (0..7)
            .map(|level| {
                let properties: Vec<String> = (0..6)
                    .map(|i| {
                        format!(
                            r##""p{i}": {{"$ref": "#/components/schemas/S{}"}}"##,
                            level + 1
                        )
                    })
                    .collect();
                format!(
                    r#""S{level}": {{"type": "object", "properties": {{{}}}}}"#,
                    properties.join(",")
                )
            })
            .chain([r#""S7": {"type": "string"}"#.to_owned()])
            .collect();
        let value = generated(
            &format!("{{{}}}", schemas.join(",")),
            r##"{"$ref": "#/components/schemas/S0"}"##,
        );
        assert!(value["p0"].is_object(), "{value}");
        assert!(values_in(&value) <= BUDGET, "{}", values_in(&value));
    }

    #[test]
    fn a_huge_min_items_is_cut_to_the_budget() {
        let value = generated(
            "{}",
            r#"{"type": "array", "minItems": 1e15, "items": {"type": "array", "minItems": 1e15, "items": {"type": "integer"}}}"#,
        );
        assert!(!value.as_array().unwrap().is_empty());
        assert!(values_in(&value) <= BUDGET + 1, "{}", values_in(&value));
    }

    #[test]
    fn a_huge_min_length_is_cut_to_the_budget() {
        let value = generated("{}", r#"{"type": "string", "minLength": 1e15}"#);
        let length = value.as_str().unwrap().len();
        assert!((64..=64 * BUDGET).contains(&length), "{length}");
    }
}
