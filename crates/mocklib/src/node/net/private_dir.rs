//! A private temporary directory (0700 on Unix), removed with its value:
//! where the CA bundle for child processes is written. Plain `std`: the
//! `tempfile` crate would compile `rustix` and more into every build for
//! this one directory.

use std::fs::DirBuilder;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many names to try before giving up (others may exist already).
const ATTEMPTS: u32 = 64;

/// The start of every directory's name.
const PREFIX: &str = "mocklib-ca-";

/// How old an abandoned directory must be before another process removes
/// it: a guard for a temporary directory shared across PID namespaces (a
/// container's `/tmp` mounted from the host), where a live owner's PID is
/// not in this process's `/proc`.
const ABANDONED_AFTER: Duration = Duration::from_secs(60 * 60);

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
        static SWEPT: Once = Once::new();
        let base = std::env::temp_dir();
        SWEPT.call_once(|| remove_abandoned(&base, SystemTime::now()));
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
                "{PREFIX}{}-{}-{nanos:08x}",
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

/// Removes the directories of processes that ended without removing their
/// own: killed (a harness's `SIGKILL` of `mocklib serve`), or holding their
/// server in a `static`, whose destructor never runs. Without this, every
/// such run leaves its bundle (~400 KB) behind. Where a process's liveness
/// cannot be read (no `/proc`), nothing is removed.
fn remove_abandoned(base: &Path, now: SystemTime) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .filter(|pid| {
                pid.parse::<u32>()
                    .is_ok_and(|pid| pid != std::process::id())
            })
        else {
            continue;
        };
        // Not followed: a symbolic link is not one of ours.
        let Ok(metadata) = entry.path().symlink_metadata() else {
            continue;
        };
        let old = metadata
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age >= ABANDONED_AFTER);
        if metadata.is_dir() && old && !proc.join(pid).exists() {
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => {
                    tracing::debug!(target: "mocklib", path = %entry.path().display(), "removed an ended process's CA bundle directory")
                }
                Err(error) => {
                    tracing::debug!(target: "mocklib", path = %entry.path().display(), %error, "could not remove an ended process's CA bundle directory")
                }
            }
        }
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            crate::support::log::warn(&format!(
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

    #[test]
    #[cfg(target_os = "linux")]
    fn an_ended_processs_old_directory_is_removed_and_nothing_else() {
        let base = PrivateDir::new().unwrap();
        // Above Linux's largest PID (2^22): no such process.
        let ended = format!("{PREFIX}4294967-0-00000000");
        let live = format!("{PREFIX}1-0-00000000");
        let own = format!("{PREFIX}{}-9-00000000", std::process::id());
        let other = "mocklib-x509-4294967".to_owned();
        for name in [&ended, &live, &own, &other] {
            std::fs::create_dir(base.path().join(name)).unwrap();
            std::fs::write(base.path().join(name).join("ca-bundle.pem"), "x").unwrap();
        }
        let later = SystemTime::now() + ABANDONED_AFTER + Duration::from_secs(60);

        // Young: the owner may be alive in another PID namespace.
        remove_abandoned(base.path(), SystemTime::now());
        assert!(base.path().join(&ended).is_dir());

        remove_abandoned(base.path(), later);
        assert!(!base.path().join(&ended).exists());
        for kept in [&live, &own, &other] {
            assert!(base.path().join(kept).is_dir(), "{kept} kept");
        }
    }
}
