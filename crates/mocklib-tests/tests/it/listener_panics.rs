//! Counts panics on mocklib's listener threads, for the tests that feed the
//! listener hostile bytes (listener_robustness, hostile_input) and must see
//! it survive without one.
//!
//! The listener runtime and the panic hook are per process, and this binary
//! holds every module: other modules' resolvers and event listeners panic on
//! listener threads on purpose (a resolver bug answers 500). So a panic is
//! counted only when it is raised outside this folder's test code: in
//! mocklib or a dependency, where a panic is a bug.

use std::panic::PanicHookInfo;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Panics in mocklib or its dependencies on any mocklib listener thread of
/// this test binary.
static LISTENER_PANICS: AtomicUsize = AtomicUsize::new(0);

/// Installs, once for the whole binary, a panic hook that counts them and
/// then runs the previous hook. Tests run in parallel, so it is installed
/// exactly once and never removed; every test that reads the count calls
/// this before it starts a server.
pub fn count_listener_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            let on_listener = std::thread::current()
                .name()
                .is_some_and(|name| name.starts_with("mocklib-listener"));
            if on_listener && !raised_by_a_test(info) {
                LISTENER_PANICS.fetch_add(1, Ordering::SeqCst);
            }
            previous(info);
        }));
    });
}

/// How many such panics there have been so far.
pub fn listener_panics() -> usize {
    LISTENER_PANICS.load(Ordering::SeqCst)
}

/// Whether the panic was raised in this folder (a test's own `panic!`,
/// `unwrap` or `expect`, which point at their caller).
fn raised_by_a_test(info: &PanicHookInfo<'_>) -> bool {
    let tests = std::path::Path::new(file!()).parent();
    info.location().is_some_and(|location| {
        tests.is_some_and(|tests| std::path::Path::new(location.file()).starts_with(tests))
    })
}
