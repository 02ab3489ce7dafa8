//! Messages for the developer.
//!
//! Through `tracing` when the application installed a subscriber, otherwise
//! on standard error — an unhandled-request warning must never vanish just
//! because nobody set up logging (test harnesses show captured stderr of a
//! failing test).

pub(crate) fn warn(message: &str) {
    if tracing::dispatcher::has_been_set() {
        tracing::warn!(target: "mocklib", "{message}");
    } else {
        eprintln!("[mocklib] Warning: {message}");
    }
}

pub(crate) fn error(message: &str) {
    if tracing::dispatcher::has_been_set() {
        tracing::error!(target: "mocklib", "{message}");
    } else {
        eprintln!("[mocklib] Error: {message}");
    }
}
