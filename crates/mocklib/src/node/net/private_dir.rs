//! A private temporary directory (0700 on Unix), removed with its value:
//! where the CA bundle for child processes is written. Plain `std`: the
//! `tempfile` crate would compile `rustix` and more into every build for
//! this one directory.

use std::fs::DirBuilder;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many names to try before giving up (others may exist already).
const ATTEMPTS: u32 = 64;

/// A directory `mocklib-ca-…` in the system's temporary directory, deleted
/// with everything in it on drop.
pub(crate) struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Creates a new, empty directory that only this user can enter.
    ///
    /// `create` fails when the path exists, so a directory (or symbolic link)
    /// that someone else put there first is never used: the next name is
    /// tried instead.
    pub(super) fn new() -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let mut builder = DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        for _ in 0..ATTEMPTS {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.subsec_nanos());
            let path = base.join(format!(
                "mocklib-ca-{}-{}-{nanos:08x}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match builder.create(&path) {
                Ok(()) => return Ok(PrivateDir { path }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{ATTEMPTS} names in {} were all taken", base.display()),
        ))
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            crate::log::warn(&format!(
                "could not remove the CA bundle directory {}: {error}",
                self.path.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_directory_is_new_private_and_removed_with_its_contents() {
        let first = PrivateDir::new().unwrap();
        let second = PrivateDir::new().unwrap();
        assert_ne!(first.path(), second.path());
        assert!(first.path().starts_with(std::env::temp_dir()));
        std::fs::write(first.path().join("file"), "x").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(first.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "only the owner may enter");
        }
        let path = first.path().to_owned();
        drop(first);
        assert!(!path.exists());
        assert!(second.path().is_dir());
    }
}
