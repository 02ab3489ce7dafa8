//! `externalValue` examples: files named by a relative path (against the
//! document's folder) or a `file:` URL, read once when the handlers are
//! made.

use std::path::PathBuf;

use serde_json::Value as Json;

use super::OpenApiError;
use super::document::Document;

/// An example as it is sent: JSON, or the bytes of an `externalValue`
/// file whose media type is not JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Example {
    Json(Json),
    Raw(bytes::Bytes),
}

/// The example in the file `reference` names (found at `pointer`): JSON
/// when `json` (the media type is), the bytes as they are otherwise.
pub(crate) fn read(
    doc: &Document,
    pointer: &str,
    reference: &str,
    json: bool,
) -> Result<Example, OpenApiError> {
    let path = locate(doc, reference).map_err(|why| doc.invalid(pointer, why))?;
    let bytes = std::fs::read(&path).map_err(|source| OpenApiError::ExternalValue {
        source_name: doc.source_name.clone(),
        pointer: pointer.to_owned(),
        path: path.clone(),
        source,
    })?;
    if !json {
        return Ok(Example::Raw(bytes.into()));
    }
    serde_json::from_slice(&bytes)
        .map(Example::Json)
        .map_err(|error| {
            let message = format!("the example file {} is not JSON: {error}", path.display());
            doc.invalid(pointer, message)
        })
}

/// The file `reference` names: a `file:` URL as it is, a relative
/// reference (percent-decoded) against the document's folder, or the
/// current directory for a document read from text. Other URLs are not
/// fetched: mocklib makes no requests of its own.
fn locate(doc: &Document, reference: &str) -> Result<PathBuf, String> {
    match url::Url::parse(reference) {
        // One letter is a Windows drive (`C:\examples\cat.json`).
        Ok(url) if url.scheme().len() > 1 => {
            if url.scheme() != "file" {
                return Err(format!(
                    "the externalValue {reference:?} is not a file (a relative path or a file: URL); mocklib does not fetch examples"
                ));
            }
            file_path(&url).ok_or_else(|| format!("the file URL {reference:?} names no local file"))
        }
        _ => {
            let path = reference.split(['?', '#']).next().unwrap_or_default();
            let path = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
            Ok(match &doc.base_dir {
                Some(folder) => folder.join(path.as_ref()),
                None => PathBuf::from(path.as_ref()),
            })
        }
    }
}

#[cfg(any(unix, windows))]
fn file_path(url: &url::Url) -> Option<PathBuf> {
    url.to_file_path().ok()
}

/// No files where there is no file system (the browser).
#[cfg(not(any(unix, windows)))]
fn file_path(_: &url::Url) -> Option<PathBuf> {
    None
}
