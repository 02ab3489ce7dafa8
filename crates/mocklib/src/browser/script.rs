//! The Service Worker script shipped with the crate, and how to install it.

/// The file name the worker script is served under by default:
/// `/mocklib-worker.js` (see [`StartOptions::service_worker_url`](super::StartOptions)).
pub const WORKER_SCRIPT_NAME: &str = "mocklib-worker.js";

/// The Service Worker script of this version of mocklib. Serve it from your
/// app's public folder; [`write_worker_script`] or the `mocklib init
/// <public-dir>` command put it there.
pub const WORKER_SCRIPT: &str = include_str!("mocklib-worker.js");

/// Writes [`WORKER_SCRIPT`] to `<public_dir>/mocklib-worker.js`, creating the
/// folder if needed; returns the file's path. Call it from a build script or
/// a test setup so the script always matches the crate version.
///
/// ```no_run
/// // build.rs of a Trunk / Leptos / Dioxus app
/// mocklib::browser::write_worker_script("public").expect("write the mocklib worker script");
/// ```
pub fn write_worker_script(
    public_dir: impl AsRef<std::path::Path>,
) -> std::io::Result<std::path::PathBuf> {
    let dir = public_dir.as_ref();
    std::fs::create_dir_all(dir)?;
    let path = dir.join(WORKER_SCRIPT_NAME);
    // Unchanged content is not rewritten, so build tools see no change.
    if std::fs::read_to_string(&path).ok().as_deref() != Some(WORKER_SCRIPT) {
        std::fs::write(&path, WORKER_SCRIPT)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_carries_the_crate_version() {
        let expected = format!("const MOCKLIB_VERSION = '{}';", env!("CARGO_PKG_VERSION"));
        assert!(
            WORKER_SCRIPT.contains(&expected),
            "update MOCKLIB_VERSION in src/browser/mocklib-worker.js to the crate version"
        );
    }

    /// A fresh folder under the system's temporary one, removed on drop.
    /// (Not the `tempfile` crate: every example of the library would
    /// compile it and rustix.)
    struct TempDir(std::path::PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }

        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn writes_the_script_into_a_new_folder() {
        let dir = TempDir::new("mocklib-worker-script-test");
        let path = write_worker_script(dir.path().join("public")).unwrap();
        assert_eq!(path, dir.path().join("public").join(WORKER_SCRIPT_NAME));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), WORKER_SCRIPT);
        // A second write of the same content leaves the file alone.
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        write_worker_script(dir.path().join("public")).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified
        );
    }
}
