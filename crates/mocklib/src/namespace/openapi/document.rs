//! The parsed document: YAML or JSON text as an ordered tree, local `$ref`s
//! followed, JSON pointers into it for error messages.

use serde_norway::Value;

use super::OpenApiError;

/// An OpenAPI document, parsed once and shared by its handlers.
#[derive(Debug)]
pub(crate) struct Document {
    /// The tree as written: mappings keep the document's order, which the
    /// response and example choices depend on.
    pub(crate) root: Value,
    /// Whether the document is OpenAPI 3.1 or later (JSON Schema 2020-12)
    /// rather than 3.0 (its own dialect of JSON Schema draft 4).
    pub(crate) is_3_1: bool,
    /// The file, or "the OpenAPI text".
    pub(crate) source_name: String,
    /// The folder of the file, what relative `externalValue`s are read
    /// from (`None`: text, read from the current directory).
    pub(crate) base_dir: Option<std::path::PathBuf>,
}

impl Document {
    /// Parses `text`: JSON when `json`, else YAML.
    pub(crate) fn parse(text: &str, json: bool, source_name: String) -> Result<Self, OpenApiError> {
        let parse_error = |line, column, message: String| OpenApiError::Parse {
            source_name: source_name.clone(),
            line,
            column,
            message,
        };
        if json {
            // serde_json is the strict JSON parser with exact positions; the
            // tree itself comes from the YAML parser below, which keeps the
            // order of keys (serde_json's maps are sorted).
            if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
                return Err(parse_error(error.line(), error.column(), error.to_string()));
            }
        }
        let yaml_error = |error: serde_norway::Error| {
            let (line, column) = error
                .location()
                .map_or((0, 0), |at| (at.line(), at.column()));
            parse_error(line, column, error.to_string())
        };
        let mut root: Value = serde_norway::from_str(text).map_err(yaml_error)?;
        // YAML merge keys (`<<: *base`), which documents use to share
        // fields, are not applied by the parser itself.
        root.apply_merge().map_err(yaml_error)?;
        let is_3_1 = check_version(&root).map_err(|(pointer, message)| OpenApiError::Invalid {
            source_name: source_name.clone(),
            pointer: pointer.to_owned(),
            message,
        })?;
        Ok(Document {
            root,
            is_3_1,
            source_name,
            base_dir: None,
        })
    }

    /// The value at a JSON pointer (`/paths/~1pets/get`), if any.
    pub(crate) fn at(&self, pointer: &str) -> Option<&Value> {
        let mut value = &self.root;
        for segment in pointer.split('/').skip(1) {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            value = match value {
                Value::Mapping(map) => {
                    map.iter()
                        .find(|(key, _)| scalar_text(key).as_deref() == Some(&segment))?
                        .1
                }
                Value::Sequence(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(value)
    }

    /// `value` (found at `pointer`) with its local `$ref`s followed, and the
    /// pointer of what it refers to.
    pub(crate) fn resolve<'a>(
        &'a self,
        mut value: &'a Value,
        mut pointer: String,
    ) -> Result<(&'a Value, String), OpenApiError> {
        // A bound rather than cycle detection: chains of references to
        // references are short in real documents.
        for _ in 0..32 {
            let Some(reference) = value.get("$ref") else {
                return Ok((value, pointer));
            };
            let reference = reference.as_str().unwrap_or_default();
            let Some(fragment) = reference.strip_prefix('#') else {
                return Err(self.invalid(
                    &pointer,
                    format!("only local references (\"#/...\") are supported, not {reference:?}"),
                ));
            };
            let decoded = percent_encoding::percent_decode_str(fragment)
                .decode_utf8_lossy()
                .into_owned();
            value = self.at(&decoded).ok_or_else(|| {
                self.invalid(
                    &pointer,
                    format!("the reference {reference:?} points nowhere"),
                )
            })?;
            pointer = decoded;
        }
        Err(self.invalid(&pointer, "the references form a cycle".to_owned()))
    }

    /// The entries of `holder`'s mapping `key` (`responses`, `content`,
    /// `headers`) in document order, each with its references followed
    /// and its pointer (`holder` is at `pointer`).
    pub(crate) fn entries_at<'a>(
        &'a self,
        holder: &'a Value,
        pointer: &str,
        key: &str,
    ) -> Result<Vec<(String, &'a Value, String)>, OpenApiError> {
        let at = child(pointer, key);
        entries(holder.get(key))
            .map(|(name, value)| {
                let (value, pointer) = self.resolve(value, child(&at, &name))?;
                Ok((name, value, pointer))
            })
            .collect()
    }

    /// The error for what is wrong at `pointer`.
    pub(crate) fn invalid(&self, pointer: &str, message: String) -> OpenApiError {
        OpenApiError::Invalid {
            source_name: self.source_name.clone(),
            pointer: pointer.to_owned(),
            message,
        }
    }

    /// The document as JSON, in the JSON Schema dialect the validator
    /// knows: 3.0's `nullable: true` becomes a `"null"` type.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut json = to_json(&self.root);
        if !self.is_3_1 {
            nullable_to_null_type(&mut json);
        }
        json
    }
}

/// A mapping's entries with their keys as text (YAML allows `200:` as a
/// number), in document order.
pub(crate) fn entries(value: Option<&Value>) -> impl Iterator<Item = (String, &Value)> {
    value
        .and_then(Value::as_mapping)
        .into_iter()
        .flat_map(|map| map.iter())
        .filter_map(|(key, value)| Some((scalar_text(key)?, value)))
}

/// A scalar as text: what a key or a header value reads as.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// A YAML value as JSON (numbers and booleans as keys become text).
pub(crate) fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(flag) => serde_json::Value::Bool(*flag),
        Value::Number(number) => {
            if let Some(n) = number.as_u64() {
                n.into()
            } else if let Some(n) = number.as_i64() {
                n.into()
            } else {
                number.as_f64().map_or(serde_json::Value::Null, Into::into)
            }
        }
        Value::String(text) => serde_json::Value::String(text.clone()),
        Value::Sequence(items) => items.iter().map(to_json).collect(),
        Value::Mapping(map) => map
            .iter()
            .filter_map(|(key, value)| Some((scalar_text(key)?, to_json(value))))
            .collect(),
        Value::Tagged(tagged) => to_json(&tagged.value),
    }
}

/// Appends a pointer segment, escaped.
pub(crate) fn child(pointer: &str, segment: &str) -> String {
    format!(
        "{pointer}/{}",
        segment.replace('~', "~0").replace('/', "~1")
    )
}

fn nullable_to_null_type(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if map.get("nullable") == Some(&serde_json::Value::Bool(true)) {
                if let Some(serde_json::Value::String(kind)) = map.get("type") {
                    let types = serde_json::json!([kind, "null"]);
                    map.insert("type".to_owned(), types);
                }
            }
            map.values_mut().for_each(nullable_to_null_type);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(nullable_to_null_type),
        _ => {}
    }
}

/// Whether the document is OpenAPI 3.1 (else 3.0); `Err`: the pointer and
/// why it is neither, or not a usable document.
fn check_version(root: &Value) -> Result<bool, (&'static str, String)> {
    if !root.is_mapping() {
        return Err(("", "the document is not a mapping".to_owned()));
    }
    let version = match root.get("openapi") {
        Some(Value::String(version)) => version.clone(),
        Some(other) => scalar_text(other).unwrap_or_default(),
        None if root.get("swagger").is_some() => {
            let message = "Swagger 2.0 documents are not supported: convert them to OpenAPI 3";
            return Err(("/swagger", message.to_owned()));
        }
        None => return Err(("/openapi", "the `openapi` version is missing".to_owned())),
    };
    let is_3_1 = match version.split('.').take(2).collect::<Vec<_>>()[..] {
        ["3", "0"] => false,
        ["3", minor] if minor.parse::<u32>().is_ok() => true,
        _ => {
            let message = format!("OpenAPI {version:?} is not supported (3.0 and 3.1 are)");
            return Err(("/openapi", message));
        }
    };
    if !root.get("paths").is_none_or(Value::is_mapping) {
        return Err(("/paths", "`paths` is not a mapping".to_owned()));
    }
    Ok(is_3_1)
}
