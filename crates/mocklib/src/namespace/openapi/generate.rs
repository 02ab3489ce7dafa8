//! Example values: the document's own, else one generated from a schema —
//! the same value on every request (static), or random values from a
//! seeded generator (dynamic, `Prefer: dynamic=true`).

use fastrand::Rng;
use serde_json::{Map, Value as Json, json};
use serde_norway::Value;

use super::OpenApiError;
use super::document::{Document, child, entries, to_json};
use super::external::Example;
use super::pattern::{self, Lengths};

/// How many references deep generation follows (recursive ones end at
/// once); a bound on the size of what is generated.
const MAX_DEPTH: usize = 12;

/// How many values one generated example may hold, a string counting one
/// more per 64 characters. A document of a few hundred bytes can ask for
/// billions: `width` properties referring to a schema `depth` levels down
/// (`width ^ depth` values), `minItems: 1e12`, `minLength: 1e12`; that hung
/// `handlers()` or aborted on allocation (found by mocklib-tests' tests/it/hostile_input.rs).
/// What lies beyond the budget is left out, as a recursive reference is.
const BUDGET: usize = 100_000;

/// How far past its lower bound a dynamic value goes when the schema sets
/// no upper one: array items, string characters.
const SPREAD: usize = 8;

/// The named examples of a media type or parameter (`examples:` at
/// `pointer`), in document order, with references to
/// `components/examples` followed and `externalValue` files read (as JSON
/// when `json`: the media type is JSON). A file that cannot be read is an
/// error.
pub(crate) fn named_examples(
    doc: &Document,
    holder: &Value,
    pointer: &str,
    json: bool,
) -> Result<Vec<(String, Example)>, OpenApiError> {
    let mut examples = Vec::new();
    let examples_pointer = child(pointer, "examples");
    for (name, example) in entries(holder.get("examples")) {
        let Ok((example, at)) = doc.resolve(example, child(&examples_pointer, &name)) else {
            continue;
        };
        if let Some(value) = example.get("value") {
            examples.push((name, Example::Json(to_json(value))));
        } else if let Some(file) = example.get("externalValue").and_then(Value::as_str) {
            let value = super::external::read(doc, &child(&at, "externalValue"), file, json)?;
            examples.push((name, value));
        }
    }
    Ok(examples)
}

/// The value a media type, parameter or header (at `pointer`) answers
/// with: its `example`, else its first named example, else one from its
/// schema (`json`: as [`named_examples`] reads files).
pub(crate) fn example_of(
    doc: &Document,
    holder: &Value,
    pointer: &str,
    json: bool,
) -> Result<Option<Example>, OpenApiError> {
    if let Some(example) = holder.get("example") {
        return Ok(Some(Example::Json(to_json(example))));
    }
    if let Some((_, first)) = named_examples(doc, holder, pointer, json)?
        .into_iter()
        .next()
    {
        return Ok(Some(first));
    }
    Ok(holder
        .get("schema")
        .map(|schema| Example::Json(from_schema(doc, schema))))
}

/// A value valid for `schema` as far as this simple generator knows: the
/// schema's example, default or first enum value, else one built from its
/// type (see the module docs of `openapi`).
pub(crate) fn from_schema(doc: &Document, schema: &Value) -> Json {
    Generator::new(doc, None)
        .value(schema)
        .unwrap_or(Json::Null)
}

/// A random value valid for `schema`, drawn from `rng`: its examples and
/// defaults ignored, an enum's or a `oneOf`'s choice random, lengths and
/// numbers anywhere within their bounds.
pub(crate) fn dynamic(doc: &Document, schema: &Value, rng: &mut Rng) -> Json {
    Generator::new(doc, Some(rng))
        .value(schema)
        .unwrap_or(Json::Null)
}

/// Builds values, following references.
struct Generator<'a, 'r> {
    doc: &'a Document,
    /// The references being expanded, outermost first: one met again is a
    /// recursive schema (a tree node's children), which ends there.
    expanding: Vec<String>,
    /// What is left of [`BUDGET`].
    budget: usize,
    /// Static values without one, dynamic ones with it.
    rng: Option<&'r mut Rng>,
}

impl<'a, 'r> Generator<'a, 'r> {
    fn new(doc: &'a Document, rng: Option<&'r mut Rng>) -> Self {
        Generator {
            doc,
            expanding: Vec::new(),
            budget: BUDGET,
            rng,
        }
    }

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

    /// One of `count` choices: the first for a static value.
    fn choose(&mut self, count: usize) -> usize {
        match self.rng.as_deref_mut() {
            Some(rng) if count > 0 => rng.usize(..count),
            _ => 0,
        }
    }

    fn resolved(&mut self, schema: &Value) -> Json {
        if self.rng.is_none() {
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
        } else if let Some(choices) = schema
            .get("enum")
            .and_then(Value::as_sequence)
            .filter(|choices| !choices.is_empty())
        {
            // A dynamic value ignores examples and defaults, not the
            // values an enum allows.
            let index = self.choose(choices.len());
            return to_json(&choices[index]);
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
            if let Some(choices) = schema
                .get(choice)
                .and_then(Value::as_sequence)
                .filter(|choices| !choices.is_empty())
            {
                let index = self.choose(choices.len());
                return self.value(&choices[index]).unwrap_or(Json::Null);
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
            Some("array") => self.array(schema),
            Some("string") => {
                let text = self.string(schema);
                self.budget -= (text.len() / 64).min(self.budget);
                Json::String(text)
            }
            Some(kind @ ("integer" | "number")) => {
                let integer = kind == "integer";
                let value = match self.rng.as_deref_mut() {
                    Some(rng) => random_in_range(schema, integer, rng),
                    None => in_range(schema, integer),
                };
                if integer {
                    json!(value as i64)
                } else {
                    json!(value)
                }
            }
            Some("boolean") => Json::Bool(self.rng.as_deref_mut().is_none_or(|rng| rng.bool())),
            _ => Json::Null,
        }
    }

    /// One item (or `minItems`) for a static value, copies of one;
    /// for a dynamic one, `minItems` (else 1) to `maxItems` (else a few
    /// more) items, each its own.
    fn array(&mut self, schema: &Value) -> Json {
        // `as` saturates (and makes NaN 0).
        let min_items = number(schema, "minItems").map(|n| n.max(0.0) as usize);
        let max_items = number(schema, "maxItems").map(|n| n.max(0.0) as usize);
        let Some(items) = schema.get("items") else {
            return Json::Array(Vec::new());
        };
        let Some(rng) = self.rng.as_deref_mut() else {
            let wanted = min_items.map_or(1, |n| n.max(1));
            let before = self.budget;
            return match self.value(items) {
                Some(item) => {
                    // Each copy costs what the first did.
                    let cost = (before - self.budget).max(1);
                    let count = wanted.min(1 + self.budget / cost);
                    self.budget -= cost * (count - 1);
                    Json::Array(vec![item; count])
                }
                None => Json::Array(Vec::new()),
            };
        };
        let low = min_items.unwrap_or(1).min(max_items.unwrap_or(usize::MAX));
        let high = max_items
            .unwrap_or(low + SPREAD)
            .min(low.saturating_add(SPREAD));
        let count = rng.usize(low..=high.max(low));
        let unique = schema.get("uniqueItems").and_then(Value::as_bool) == Some(true);
        let mut values = Vec::with_capacity(count.min(64));
        let mut tries = 0;
        while values.len() < count && tries < count.saturating_mul(4) {
            tries += 1;
            // Nothing more: a recursive item, or the budget spent.
            let Some(value) = self.value(items) else {
                break;
            };
            if !(unique && values.contains(&value)) {
                values.push(value);
            }
        }
        Json::Array(values)
    }

    /// A string for `schema`: matching its `pattern` if it has one, else
    /// by its `format`, within `minLength`/`maxLength` (padded or cut).
    fn string(&mut self, schema: &Value) -> String {
        let limit = self.budget.saturating_mul(64);
        let min = number(schema, "minLength").map_or(0, |n| (n as usize).min(limit));
        let max = number(schema, "maxLength").map(|n| n as usize);
        if let Some(regex) = schema.get("pattern").and_then(Value::as_str) {
            let lengths = Lengths { min, max, limit };
            let dynamic = self.rng.is_some();
            match pattern::matching(regex, lengths, self.rng.as_deref_mut()) {
                Ok(text) => return text,
                // Static values are made once, when the handlers are; a
                // dynamic one on every request, which need not warn again.
                Err(why) if dynamic => {
                    tracing::debug!(target: "mocklib", "openapi: pattern {regex:?}: {why}; a string ignoring it is sent");
                }
                Err(why) => crate::support::log::warn(&format!(
                    "openapi: pattern {regex:?}: {why}; a string ignoring it is sent"
                )),
            }
        }
        let format = schema.get("format").and_then(Value::as_str);
        let mut text = match self.rng.as_deref_mut() {
            None => static_format(format).to_owned(),
            Some(rng) => random_format(format, rng).unwrap_or_else(|| {
                let high = max.unwrap_or(min + SPREAD).min(min + 2 * SPREAD);
                let length = rng.usize(min.max(1).min(high)..=high);
                (0..length).map(|_| rng.lowercase()).collect()
            }),
        };
        let length = text.chars().count();
        if length < min {
            text.push_str(&"x".repeat(min - length));
        }
        if let Some(max) = max {
            text = text.chars().take(max).collect();
        }
        text
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

/// A bound and whether it is exclusive (booleans next to it in 3.0,
/// numbers of their own in 3.1).
fn bound(schema: &Value, bound: &str, exclusive: &str) -> Option<(f64, bool)> {
    match schema.get(exclusive) {
        Some(Value::Bool(true)) => number(schema, bound).map(|n| (n, true)),
        Some(value) if value.as_f64().is_some() => value.as_f64().map(|n| (n, true)),
        _ => number(schema, bound).map(|n| (n, false)),
    }
}

/// 0, moved into `minimum`..`maximum` (exclusive bounds as booleans in
/// 3.0, as numbers in 3.1).
fn in_range(schema: &Value, integer: bool) -> f64 {
    let step = if integer { 1.0 } else { 0.5 };
    let mut value = 0.0;
    if let Some((minimum, strict)) = bound(schema, "minimum", "exclusiveMinimum") {
        let minimum = if integer { minimum.ceil() } else { minimum };
        if value < minimum || (strict && value <= minimum) {
            value = if strict { minimum + step } else { minimum };
        }
    }
    if let Some((maximum, strict)) = bound(schema, "maximum", "exclusiveMaximum") {
        let maximum = if integer { maximum.floor() } else { maximum };
        if value > maximum || (strict && value >= maximum) {
            value = if strict { maximum - step } else { maximum };
        }
    }
    value
}

/// A random number within `minimum`..`maximum` (0 to 1,000 when the
/// schema sets neither, 1,000 wide when it sets one), a multiple of
/// `multipleOf`; integers whole, other numbers with two decimals. Bounds
/// that leave no such number give the static value.
fn random_in_range(schema: &Value, integer: bool, rng: &mut Rng) -> f64 {
    const WIDTH: f64 = 1000.0;
    // Within i64 (and f64's exact integers), so the draws below cannot
    // overflow.
    const FAR: f64 = 9.0e15;
    let lower = bound(schema, "minimum", "exclusiveMinimum");
    let upper = bound(schema, "maximum", "exclusiveMaximum");
    let (low, low_strict) = lower.unwrap_or_else(|| match upper {
        Some((high, _)) => (high.min(FAR) - WIDTH, false),
        None => (0.0, false),
    });
    let (high, high_strict) = upper.unwrap_or((low.max(-FAR) + WIDTH, false));
    let (low, high) = (low.clamp(-FAR, FAR), high.clamp(-FAR, FAR));
    // The step the value moves in: 1 for integers, `multipleOf`, or 0.01.
    let step = match number(schema, "multipleOf").filter(|m| *m > 0.0) {
        Some(multiple) if integer && multiple.fract() != 0.0 => multiple.ceil(),
        Some(multiple) => multiple,
        None if integer => 1.0,
        None => 0.01,
    };
    let mut first = (low / step).ceil();
    if low_strict && first * step <= low {
        first += 1.0;
    }
    let mut last = (high / step).floor();
    if high_strict && last * step >= high {
        last -= 1.0;
    }
    if !(first.is_finite() && last.is_finite()) || first > last {
        return in_range(schema, integer);
    }
    let value = rng.i64(first as i64..=last as i64) as f64 * step;
    if step == 0.01 {
        // 0.07 * 100 is not exactly 7: the decimals a reader expects.
        (value * 100.0).round() / 100.0
    } else {
        value
    }
}

/// The string a static value has for `format` (`None`: no format, or
/// one without a fixed example).
fn static_format(format: Option<&str>) -> &'static str {
    match format {
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
    }
}

/// A random string of `format`, if it is one with a shape.
fn random_format(format: Option<&str>, rng: &mut Rng) -> Option<String> {
    let word = |rng: &mut Rng, lengths: std::ops::RangeInclusive<usize>| -> String {
        let length = rng.usize(lengths);
        (0..length).map(|_| rng.lowercase()).collect()
    };
    // 2000-01-01 and 30 years on.
    let date = |rng: &mut Rng| {
        let (year, month, day) = crate::support::date::civil_date_since(rng.u64(10_957..=21_914));
        format!("{year:04}-{month:02}-{day:02}")
    };
    let time = |rng: &mut Rng| {
        let (hour, minute, second) = (rng.u8(..24), rng.u8(..60), rng.u8(..60));
        format!("{hour:02}:{minute:02}:{second:02}Z")
    };
    Some(match format? {
        "date-time" => format!("{}T{}", date(rng), time(rng)),
        "date" => date(rng),
        "time" => time(rng),
        "uuid" => {
            let mut bytes: [u8; 16] = std::array::from_fn(|_| rng.u8(..));
            // Version 4, variant 1 (RFC 9562): a random UUID.
            bytes[6] = (bytes[6] & 0x0f) | 0x40;
            bytes[8] = (bytes[8] & 0x3f) | 0x80;
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!(
                "{}-{}-{}-{}-{}",
                &hex[..8],
                &hex[8..12],
                &hex[12..16],
                &hex[16..20],
                &hex[20..]
            )
        }
        "email" => format!("{}@example.com", word(rng, 3..=10)),
        "uri" | "url" => format!("https://example.com/{}", word(rng, 1..=10)),
        "hostname" => format!("{}.example.com", word(rng, 1..=10)),
        "ipv4" => format!(
            "{}.{}.{}.{}",
            rng.u8(1..=223),
            rng.u8(..),
            rng.u8(..),
            rng.u8(1..=254)
        ),
        // The documentation prefix (RFC 3849).
        "ipv6" => format!("2001:db8::{:x}:{:x}", rng.u16(..), rng.u16(1..)),
        "byte" => {
            let bytes: Vec<u8> = (0..rng.usize(1..=12)).map(|_| rng.u8(..)).collect();
            crate::support::base64::encode(&bytes)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regressions found by tests/it/hostile_input.rs: small documents that
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

    /// Schemas with every keyword dynamic values must honour.
    const SCHEMAS: &[&str] = &[
        r#"{"type": "integer", "minimum": -5, "maximum": 5}"#,
        r#"{"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 3, "exclusiveMaximum": true}"#,
        r#"{"type": "integer", "minimum": 10, "maximum": 1000, "multipleOf": 25}"#,
        r#"{"type": "number", "minimum": 0.5, "maximum": 0.75}"#,
        r#"{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.02}"#,
        r#"{"type": "number", "maximum": -1000000}"#,
        r#"{"type": "string", "minLength": 2, "maxLength": 4}"#,
        r#"{"type": "string", "format": "date-time"}"#,
        r#"{"type": "string", "format": "date"}"#,
        r#"{"type": "string", "format": "uuid"}"#,
        r#"{"type": "string", "format": "email"}"#,
        r#"{"type": "string", "format": "ipv4"}"#,
        r#"{"type": "string", "format": "ipv6"}"#,
        r#"{"type": "string", "format": "uri"}"#,
        r#"{"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"}"#,
        r#"{"type": "string", "enum": ["a", "b", "c"]}"#,
        r#"{"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": true, "items": {"type": "integer", "minimum": 0, "maximum": 1000}}"#,
        r#"{"type": "array", "maxItems": 0, "items": {"type": "string"}}"#,
        r#"{"oneOf": [{"type": "string", "pattern": "^x+$"}, {"type": "integer", "minimum": 100, "maximum": 200}]}"#,
        r##"{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 1}, "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}}}}"##,
    ];

    proptest::proptest! {
        /// Every dynamic value is valid for its schema, as jsonschema
        /// (formats included) judges it.
        #[test]
        fn dynamic_values_are_valid(index in 0..SCHEMAS.len(), seed in proptest::prelude::any::<u64>()) {
            let schema = SCHEMAS[index];
            let schemas = r#"{"Tag": {"type": "string", "minLength": 1, "maxLength": 5}}"#;
            let value = dynamic_value(schemas, schema, seed);
            let mut json: Json = serde_json::from_str(schema).unwrap();
            json["components"] = serde_json::from_str(&format!(r#"{{"schemas": {schemas}}}"#)).unwrap();
            // 3.0's boolean exclusive bounds are draft 4's; the rest is
            // checked by 2020-12, which knows every format used here.
            let draft = if schema.contains("exclusiveMinimum\": true") {
                jsonschema::Draft::Draft4
            } else {
                jsonschema::Draft::Draft202012
            };
            let validator = jsonschema::options()
                .with_draft(draft)
                .should_validate_formats(true)
                .build(&json)
                .unwrap();
            let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
            proptest::prop_assert!(errors.is_empty(), "{schema}: {value}: {errors:?}");
        }
    }

    fn dynamic_value(schemas: &str, schema: &str, seed: u64) -> Json {
        let text = format!(
            r#"{{"openapi": "3.0.3", "info": {{"title": "t", "version": "1"}}, "paths": {{}},
                "components": {{"schemas": {schemas}}}}}"#
        );
        let doc = Document::parse(&text, true, "the test".to_owned()).unwrap();
        dynamic(
            &doc,
            &serde_norway::from_str(schema).unwrap(),
            &mut Rng::with_seed(seed),
        )
    }

    #[test]
    fn dynamic_values_vary_with_the_seed_and_repeat_with_it() {
        let object = r#"{"type": "object", "example": {"fixed": true}, "properties": {
            "name": {"type": "string", "default": "x"}, "size": {"type": "integer"},
            "kind": {"enum": ["a", "b", "c", "d"]}, "at": {"type": "string", "format": "date-time"}}}"#;
        let value = dynamic_value("{}", object, 1);
        assert_eq!(value, dynamic_value("{}", object, 1));
        // Examples and defaults are not what a dynamic value shows.
        assert!(value.get("fixed").is_none(), "{value}");
        let values: std::collections::HashSet<String> = (0..40)
            .map(|seed| dynamic_value("{}", object, seed).to_string())
            .collect();
        assert_eq!(values.len(), 40);
        // Every choice of an enum comes up.
        let kinds: std::collections::HashSet<String> = (0..40)
            .map(|seed| dynamic_value("{}", object, seed)["kind"].to_string())
            .collect();
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        // Static values stay what they were.
        let doc = Document::parse(
            r#"{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}}"#,
            true,
            "the test".to_owned(),
        )
        .unwrap();
        let schema = serde_norway::from_str(object).unwrap();
        assert_eq!(from_schema(&doc, &schema), json!({"fixed": true}));
    }

    #[test]
    fn a_huge_min_length_is_cut_to_the_budget() {
        let value = generated("{}", r#"{"type": "string", "minLength": 1e15}"#);
        let length = value.as_str().unwrap().len();
        assert!((64..=64 * BUDGET).contains(&length), "{length}");
    }
}
