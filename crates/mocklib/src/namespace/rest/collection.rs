//! A resource's collection: JSON objects keyed by their id field, in
//! insertion order, and what each REST operation does to it. Pure data: no
//! request, no response, no lock (the caller holds the scope's).

use serde_json::{Map, Value};

/// Why [`Resource::try_handler`](super::Resource::try_handler) refused a
/// resource: its path, its id field or an item of its seed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// The path is not a valid pattern.
    #[error(transparent)]
    Pattern(#[from] crate::matching::PatternError),
    /// The id field's name is empty.
    #[error("the id field's name is empty")]
    EmptyIdField,
    /// A seed item is not a JSON object.
    #[error("seed[{index}]: expected a JSON object, found {found}")]
    NotAnObject {
        /// The item's position in the seed, from 0.
        index: usize,
        /// What it is instead (`an array`, `a string`, …).
        found: &'static str,
    },
    /// A seed item has no id field.
    #[error("seed[{index}]: no `{field}` field (the id field)")]
    MissingId {
        /// The item's position in the seed, from 0.
        index: usize,
        /// The id field's name.
        field: String,
    },
    /// A seed item's id is neither a non-empty string nor a number.
    #[error("seed[{index}].{field}: an id is a string or a number, found {found}")]
    InvalidId {
        /// The item's position in the seed, from 0.
        index: usize,
        /// The id field's name.
        field: String,
        /// The id as JSON.
        found: String,
    },
    /// Two seed items have the same id.
    #[error("seed[{index}].{field}: duplicate id {id} (seed[{first}] has it too)")]
    DuplicateId {
        /// The later item's position in the seed, from 0.
        index: usize,
        /// The earlier item's position.
        first: usize,
        /// The id field's name.
        field: String,
        /// The id as JSON.
        id: String,
    },
}

/// What a resource is: its path (for messages) and its id field.
#[derive(Debug)]
pub(super) struct Schema {
    pub(super) path: String,
    pub(super) id_field: String,
}

/// An answer before it is a response: a status and a JSON body, with the
/// id of a created item (for `Location`) or the methods allowed (for 405).
#[derive(Debug)]
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) body: Value,
    pub(super) created: Option<String>,
    pub(super) allow: Option<&'static str>,
}

impl Reply {
    fn ok(status: u16, body: Value) -> Self {
        Reply {
            status,
            body,
            created: None,
            allow: None,
        }
    }

    /// An error answer: `{"error": reason phrase, "message": why}`.
    pub(super) fn error(status: u16, message: String) -> Self {
        let reason = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|status| status.canonical_reason())
            .unwrap_or("Error");
        Reply::ok(
            status,
            serde_json::json!({ "error": reason, "message": message }),
        )
    }

    pub(super) fn method_not_allowed(method: &http::Method, allow: &'static str) -> Self {
        Reply {
            allow: Some(allow),
            ..Reply::error(
                405,
                format!("{method} is not allowed here (allowed: {allow})"),
            )
        }
    }
}

/// The items, in insertion order, each with its id as text (the form a
/// path carries it in).
#[derive(Debug, Clone)]
pub(super) struct Collection {
    items: Vec<(String, Value)>,
    /// Whether every id stored so far is a non-negative integer: new ids
    /// are then the next integer, else uuid-like strings.
    integer_ids: bool,
    /// The next integer id: above every integer id ever stored, so the id of
    /// a deleted item is not given again (as a database sequence).
    next_id: u64,
}

/// The id as path text: a non-empty string as it is, a number as JSON
/// writes it; `None` for anything else.
fn key_of(id: &Value) -> Option<String> {
    match id {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Collection {
    /// The collection holding `seed`, checked: objects only, each with a
    /// valid id of its own.
    pub(super) fn from_seed(seed: Vec<Value>, id_field: &str) -> Result<Self, ResourceError> {
        let mut collection = Collection {
            items: Vec::with_capacity(seed.len()),
            integer_ids: true,
            next_id: 1,
        };
        for (index, item) in seed.into_iter().enumerate() {
            let Value::Object(object) = &item else {
                return Err(ResourceError::NotAnObject {
                    index,
                    found: kind_of(&item),
                });
            };
            let Some(id) = object.get(id_field) else {
                return Err(ResourceError::MissingId {
                    index,
                    field: id_field.to_owned(),
                });
            };
            let Some(key) = key_of(id) else {
                return Err(ResourceError::InvalidId {
                    index,
                    field: id_field.to_owned(),
                    found: id.to_string(),
                });
            };
            if let Some(first) = collection.position(&key) {
                return Err(ResourceError::DuplicateId {
                    index,
                    first,
                    field: id_field.to_owned(),
                    id: id.to_string(),
                });
            }
            collection.note_id(id);
            collection.items.push((key, item));
        }
        Ok(collection)
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.items.iter().position(|(k, _)| k == key)
    }

    /// Keeps the id policy up to date with a stored id.
    fn note_id(&mut self, id: &Value) {
        match id.as_u64() {
            Some(number) => self.next_id = self.next_id.max(number.saturating_add(1)),
            None => self.integer_ids = false,
        }
    }

    /// A new id no item has.
    fn new_id(&mut self) -> Value {
        loop {
            let id = if self.integer_ids {
                let id = self.next_id;
                self.next_id = self.next_id.saturating_add(1);
                Value::from(id)
            } else {
                Value::String(uuid_like())
            };
            let key = key_of(&id).expect("a generated id is valid");
            if self.position(&key).is_none() {
                return id;
            }
        }
    }

    /// `GET /users`: the items that have every field of `filters` equal to
    /// one of the values given for it.
    pub(super) fn list(&self, filters: &[(String, String)]) -> Reply {
        let items = self
            .items
            .iter()
            .map(|(_, item)| item)
            .filter(|item| {
                filters.iter().all(|(name, _)| {
                    filters
                        .iter()
                        .filter(|(other, _)| other == name)
                        .any(|(_, wanted)| field_equals(item.get(name), wanted))
                })
            })
            .cloned()
            .collect();
        Reply::ok(200, Value::Array(items))
    }

    /// `GET /users/:id`.
    pub(super) fn get(&self, schema: &Schema, key: &str) -> Reply {
        match self.position(key) {
            Some(at) => Reply::ok(200, self.items[at].1.clone()),
            None => not_found(schema, key),
        }
    }

    /// `POST /users`: stores `object`, with a new id when it has none.
    pub(super) fn create(&mut self, schema: &Schema, mut object: Map<String, Value>) -> Reply {
        let field = &schema.id_field;
        let id = match object.get(field) {
            None | Some(Value::Null) => {
                let id = self.new_id();
                object.insert(field.clone(), id.clone());
                id
            }
            Some(id) => id.clone(),
        };
        let Some(key) = key_of(&id) else {
            return invalid_id(field, &id);
        };
        if self.position(&key).is_some() {
            return Reply::error(
                409,
                format!("{} already has an item with {field} {id}", schema.path),
            );
        }
        self.note_id(&id);
        let item = Value::Object(object);
        self.items.push((key.clone(), item.clone()));
        Reply {
            created: Some(key),
            ..Reply::ok(201, item)
        }
    }

    /// `PUT /users/:id`: replaces the item, keeping its id (and its place).
    pub(super) fn replace(
        &mut self,
        schema: &Schema,
        key: &str,
        mut object: Map<String, Value>,
    ) -> Reply {
        let Some(at) = self.position(key) else {
            return not_found(schema, key);
        };
        if let Err(reply) = same_id(schema, key, object.get(&schema.id_field)) {
            return reply;
        }
        let id = self.items[at].1[&schema.id_field].clone();
        object.insert(schema.id_field.clone(), id);
        self.items[at].1 = Value::Object(object);
        Reply::ok(200, self.items[at].1.clone())
    }

    /// `PATCH /users/:id`: applies `patch` as a JSON merge patch (RFC 7396).
    pub(super) fn patch(&mut self, schema: &Schema, key: &str, patch: Map<String, Value>) -> Reply {
        let Some(at) = self.position(key) else {
            return not_found(schema, key);
        };
        if let Some(Value::Null) = patch.get(&schema.id_field) {
            return Reply::error(
                400,
                format!("the patch removes the id field `{}`", schema.id_field),
            );
        }
        if let Err(reply) = same_id(schema, key, patch.get(&schema.id_field)) {
            return reply;
        }
        merge_patch(&mut self.items[at].1, &Value::Object(patch));
        Reply::ok(200, self.items[at].1.clone())
    }

    /// `DELETE /users/:id`: removes the item and answers with it.
    pub(super) fn remove(&mut self, schema: &Schema, key: &str) -> Reply {
        match self.position(key) {
            Some(at) => Reply::ok(200, self.items.remove(at).1),
            None => not_found(schema, key),
        }
    }
}

fn not_found(schema: &Schema, key: &str) -> Reply {
    Reply::error(
        404,
        format!(
            "{} has no item with {} {key:?}",
            schema.path, schema.id_field
        ),
    )
}

fn invalid_id(field: &str, id: &Value) -> Reply {
    Reply::error(
        400,
        format!("`{field}` is the id: a non-empty string or a number, not {id}"),
    )
}

/// Whether a body's id, if it has one, is the path's.
fn same_id(schema: &Schema, key: &str, body_id: Option<&Value>) -> Result<(), Reply> {
    let Some(id) = body_id else {
        return Ok(());
    };
    match key_of(id) {
        None => Err(invalid_id(&schema.id_field, id)),
        Some(body_key) if body_key != key => Err(Reply::error(
            400,
            format!(
                "the body's {} {id} differs from the path's {key:?}; an item's id does not change",
                schema.id_field
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// A query filter's value against a field: a string as it is, any other
/// JSON value as JSON writes it (`?age=30`, `?admin=true`).
fn field_equals(field: Option<&Value>, wanted: &str) -> bool {
    match field {
        None => false,
        Some(Value::String(text)) => text == wanted,
        Some(other) => serde_json::to_string(other).is_ok_and(|text| text == wanted),
    }
}

/// Applies a JSON Merge Patch ([RFC 7396]) to `target`, as a resource's
/// `PATCH` does: members of an object patch merge recursively, `null`
/// removes, anything else replaces. Handy in a resolver that alters a
/// [`bypass`](crate::bypass) response.
///
/// ```
/// use serde_json::json;
///
/// let mut user = json!({ "name": "Kate", "secret": "s3cret", "plan": { "tier": "free" } });
/// mocklib::rest::merge_patch(&mut user, &json!({ "secret": null, "plan": { "tier": "pro" } }));
/// assert_eq!(user, json!({ "name": "Kate", "plan": { "tier": "pro" } }));
/// ```
///
/// [RFC 7396]: https://www.rfc-editor.org/rfc/rfc7396
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(object) = target else {
        unreachable!("made an object above")
    };
    for (name, value) in members {
        if value.is_null() {
            object.remove(name);
        } else {
            merge_patch(object.entry(name.clone()).or_insert(Value::Null), value);
        }
    }
}

/// A random id in the form of a version 4 UUID. From std's per-process
/// random hash keys and a counter: no random-number crate for an id that
/// only has to be unique (the collection checks it is).
fn uuid_like() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let state = std::collections::hash_map::RandomState::new();
    let half = |salt: u64| {
        let mut hasher = state.build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u64(salt);
        hasher.finish()
    };
    let (high, low) = (half(1), half(2));
    let high = (high & !0xf000) | 0x4000; // version 4
    let low = (low & !(0xc << 60)) | (0x8 << 60); // variant 10
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema {
            path: "/users".to_owned(),
            id_field: "id".to_owned(),
        }
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(object) => object,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn merge_patch_follows_rfc_7396_examples() {
        // The examples of RFC 7396, appendix A (a selection).
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!([1, 2]),
                json!({"a": "b", "c": null}),
                json!({"a": "b"}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
        ];
        for (mut target, patch, expected) in cases {
            merge_patch(&mut target, &patch);
            assert_eq!(target, expected, "patch {patch}");
        }
    }

    #[test]
    fn integer_ids_continue_past_deleted_ones_and_strings_get_uuids() {
        let mut users =
            Collection::from_seed(vec![json!({"id": 1}), json!({"id": 5})], "id").unwrap();
        users.remove(&schema(), "5");
        let created = users.create(&schema(), object(json!({"name": "Kate"})));
        assert_eq!(created.body["id"], 6);
        assert_eq!(created.created.as_deref(), Some("6"));

        let mut keyed = Collection::from_seed(vec![json!({"id": "a"})], "id").unwrap();
        let id = keyed.create(&schema(), Map::new()).body["id"].clone();
        let id = id.as_str().unwrap();
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(&id[14..15], "4", "{id}");
        let other = keyed.create(&schema(), Map::new()).body["id"].clone();
        assert_ne!(other, id);
    }

    #[test]
    fn seed_errors_name_the_item_and_the_field() {
        let error = |seed: Value| {
            let Value::Array(seed) = seed else {
                unreachable!()
            };
            Collection::from_seed(seed, "id").unwrap_err().to_string()
        };
        assert_eq!(
            error(json!([{"id": 1}, [1]])),
            "seed[1]: expected a JSON object, found an array"
        );
        assert_eq!(
            error(json!([{"name": "Kate"}])),
            "seed[0]: no `id` field (the id field)"
        );
        assert_eq!(
            error(json!([{"id": true}])),
            "seed[0].id: an id is a string or a number, found true"
        );
        assert_eq!(
            error(json!([{"id": 1}, {"id": 2}, {"id": 1}])),
            "seed[2].id: duplicate id 1 (seed[0] has it too)"
        );
    }

    #[test]
    fn filters_compare_strings_as_text_and_other_values_as_json() {
        let users = Collection::from_seed(
            vec![
                json!({"id": 1, "name": "Kate", "age": 30, "admin": true}),
                json!({"id": 2, "name": "Sarah", "age": 30}),
            ],
            "id",
        )
        .unwrap();
        let names = |filters: &[(&str, &str)]| {
            let filters: Vec<_> = filters
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect();
            users
                .list(&filters)
                .body
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u["id"].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&[("age", "30")]), [1, 2]);
        assert_eq!(names(&[("age", "30"), ("admin", "true")]), [1]);
        assert_eq!(names(&[("name", "Kate"), ("name", "Sarah")]), [1, 2]);
        assert_eq!(names(&[("missing", "x")]), Vec::<Value>::new());
    }
}
