//! Messages for the developer.
//!
//! Through `tracing` when the application installed a subscriber, otherwise
//! where the developer looks: standard error natively (test harnesses show
//! the captured stderr of a failing test), the console in the browser. An
//! unhandled-request warning must never vanish just because nobody set up
//! logging.
//!
//! Whether a subscriber is installed is decided per message and per thread:
//! a scoped subscriber (`tracing::subscriber::with_default`, as a test may
//! set) covers its own thread only, so a warning from another thread (a
//! listener thread, another test) still goes to the fallback. A subscriber
//! that is in effect is respected even if it filters mocklib's target out.
//!
//! The listener resolves requests on threads of its own, where a test's
//! scoped subscriber is not in effect: the subscriber in effect where
//! `listen` was called is kept with the server's options, and a request
//! resolved on a thread without one logs to it. So a warning reaches the
//! test that caused it, once, also when tests run in parallel.

/// Whether a `tracing` subscriber is in effect on this thread: the thread's
/// scoped one, or else the global default. Cheap: one atomic load when
/// `tracing` was never set up, a thread-local lookup otherwise.
pub(crate) fn has_subscriber() -> bool {
    // `has_been_set` stays true once any thread ever set a scoped
    // subscriber, so it only rules subscribers out; the thread's current
    // dispatcher decides.
    tracing::dispatcher::has_been_set()
        && tracing::dispatcher::get_default(|dispatch| {
            !dispatch.is::<tracing::subscriber::NoSubscriber>()
        })
}

/// The subscriber in effect on this thread, if any (see
/// [`has_subscriber`]).
pub(crate) fn current_dispatch() -> Option<tracing::Dispatch> {
    has_subscriber().then(|| tracing::dispatcher::get_default(Clone::clone))
}

pub(crate) fn warn(message: &str) {
    if has_subscriber() {
        tracing::warn!(target: "mocklib", "{message}");
    } else {
        fallback::warn(&format!("[mocklib] Warning: {message}"));
    }
}

pub(crate) fn error(message: &str) {
    if has_subscriber() {
        tracing::error!(target: "mocklib", "{message}");
    } else {
        fallback::error(&format!("[mocklib] Error: {message}"));
    }
}

/// Routine news (mocking enabled, a request mocked); the browser front door
/// prints these unless started `quiet`, as Mock Service Worker does.
#[cfg(target_arch = "wasm32")]
pub(crate) fn info(message: &str) {
    if has_subscriber() {
        tracing::info!(target: "mocklib", "{message}");
    } else {
        fallback::info(&format!("[mocklib] {message}"));
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod fallback {
    pub(super) fn warn(line: &str) {
        eprintln!("{line}");
    }
    pub(super) fn error(line: &str) {
        eprintln!("{line}");
    }
}

#[cfg(target_arch = "wasm32")]
mod fallback {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = console, js_name = warn)]
        fn console_warn(line: &str);
        #[wasm_bindgen(js_namespace = console, js_name = error)]
        fn console_error(line: &str);
        #[wasm_bindgen(js_namespace = console, js_name = log)]
        fn console_log(line: &str);
    }

    pub(super) fn warn(line: &str) {
        console_warn(line);
    }
    pub(super) fn error(line: &str) {
        console_error(line);
    }
    pub(super) fn info(line: &str) {
        console_log(line);
    }
}

/// The message a panic carried (`panic!("…")`'s text), for reports.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

pin_project_lite::pin_project! {
    /// A future that turns a panic while it is polled into `Err` (what
    /// futures-util's `catch_unwind` does, which needs its `std` feature:
    /// turning that on would rebuild every crate of the application that
    /// depends on futures-util).
    pub(crate) struct CatchUnwind<F> {
        #[pin]
        inner: F,
    }
}

/// `future`, with a panic while it is polled turned into `Err(payload)`.
/// The caller vouches for unwind safety, as with `AssertUnwindSafe`.
pub(crate) fn catch_unwind<F: std::future::Future>(future: F) -> CatchUnwind<F> {
    CatchUnwind { inner: future }
}

impl<F: std::future::Future> std::future::Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = self.project().inner;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(output)) => std::task::Poll::Ready(Ok(output)),
            Err(panic) => std::task::Poll::Ready(Err(panic)),
        }
    }
}
