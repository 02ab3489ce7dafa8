//! Why an OpenAPI document could not be read or served: its own file, so
//! the document reader and the module's entry points both use it without
//! importing each other.

use std::path::PathBuf;

/// Why an OpenAPI document could not be read or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenApiError {
    /// The file could not be read.
    #[error("could not read the OpenAPI document {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not YAML or JSON.
    #[error("{source_name} is not valid YAML or JSON (line {line}, column {column}): {message}")]
    Parse {
        /// The file, or "the OpenAPI text".
        source_name: String,
        /// Where, from 1 (0 when the parser could not tell).
        line: usize,
        /// Where in the line, from 1 (0 when the parser could not tell).
        column: usize,
        /// Why, from the parser.
        message: String,
    },
    /// A file an example names (`externalValue`) could not be read.
    #[error("{source_name} cannot be served: at {pointer}: the example file {} cannot be read: {source}", path.display())]
    ExternalValue {
        /// The file, or "the OpenAPI text".
        source_name: String,
        /// A JSON pointer to the `externalValue`
        /// (`/components/examples/cat/externalValue`).
        pointer: String,
        /// The file it names, resolved against the document's folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The document cannot be served as it is.
    #[error("{source_name} cannot be served: at {}: {message}", if pointer.is_empty() { "the root" } else { pointer })]
    Invalid {
        /// The file, or "the OpenAPI text".
        source_name: String,
        /// A JSON pointer to the place (`/paths/~1pets~1{petId}/get`).
        pointer: String,
        /// What is wrong there.
        message: String,
    },
}
