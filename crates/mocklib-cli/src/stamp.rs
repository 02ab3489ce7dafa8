//! File stamps, for reloading what changed. Its own module because both
//! `serve` (which polls) and `handler_file` (which records the files an
//! entry reads) use it: kept in `serve`, the two files imported each other.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file and its [`stamp`].
pub(crate) type Watched = (PathBuf, Option<(SystemTime, u64)>);

/// A file's modification time and length (`None` while it is missing):
/// an edit within the file system's time granularity still changes the
/// length most of the time. Taken *before* a file is read, so a write
/// that lands after the read changes it.
pub(crate) fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}
