//! The `resource` entries of handler files: a stateful REST collection
//! (`mocklib::rest::resource`) answering list, get, create, replace, patch
//! and delete.
//!
//! ```yaml
//! - resource: /users              # a mocklib pattern; absolute URLs too
//!   id_field: id                  # optional: id
//!   seed: [ { id: 1, name: Kate } ]   # optional: the items it starts with,
//!                                 # or seed_file: users.json (JSON or YAML)
//!   match: { bearer: t0ken }      # optional, as on HTTP entries
//! ```
//!
//! The collection is the server's: every client sees the same one, and it
//! starts over from the seed when the files are reloaded. The seed is
//! checked at load (a list of objects, each with a distinct id).

use std::path::{Path, PathBuf};

use mocklib::Handler;

use crate::stamp::{Watched, stamp};

/// A `resource` entry's fields, as written.
pub(crate) struct ResourceEntry {
    /// The collection's path.
    pub(crate) path: String,
    pub(crate) id_field: Option<String>,
    /// The items inline.
    pub(crate) seed: Option<serde_json::Value>,
    /// The items in a JSON or YAML file, relative to the handler file.
    pub(crate) seed_file: Option<PathBuf>,
}

/// The handler of a `resource` entry; `dir` is the handler file's folder,
/// and a seed file read joins `files` (so an edit reloads it).
pub(crate) fn handler(
    entry: ResourceEntry,
    dir: &Path,
    files: &mut Vec<Watched>,
) -> Result<Handler, String> {
    let (seed, origin) = match (entry.seed, entry.seed_file) {
        (Some(_), Some(_)) => return Err("give seed or seed_file, not both".to_owned()),
        (None, None) => (serde_json::Value::Array(Vec::new()), String::new()),
        (Some(seed), None) => (seed, String::new()),
        (None, Some(file)) => {
            let file = dir.join(file);
            let name = file.display().to_string();
            let stamp = stamp(&file);
            let text = std::fs::read_to_string(&file)
                .map_err(|error| format!("seed_file: could not read {name}: {error}"))?;
            let yaml = matches!(
                file.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            );
            let seed = if yaml {
                serde_norway::from_str(&text)
                    .map_err(|error| format!("seed_file: {name} is not YAML: {error}"))?
            } else {
                serde_json::from_str(&text)
                    .map_err(|error| format!("seed_file: {name} is not JSON: {error}"))?
            };
            files.push((file, stamp));
            (seed, format!("seed_file {name}: "))
        }
    };
    let serde_json::Value::Array(items) = seed else {
        let field = if origin.is_empty() { "seed: " } else { &origin };
        return Err(format!(
            "{field}expected a list of JSON objects, found {}",
            kind_of(&seed)
        ));
    };
    let mut resource = mocklib::rest::resource(entry.path).seed(items);
    if let Some(id_field) = entry.id_field {
        resource = resource.id_field(id_field);
    }
    // The library's message names the item and the field (`seed[2].id`);
    // from a file, say which file too.
    resource
        .try_handler()
        .map_err(|error| format!("{origin}{error}"))
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "nothing",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}
