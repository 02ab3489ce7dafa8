//! Runs request tasks so that a panicking resolver costs one request, not
//! the page.
//!
//! On `wasm32-unknown-unknown` a panic aborts: the module traps and no
//! destructor runs, so `catch_unwind` cannot help and a general executor that
//! was polling at the time is left with a `RefCell` borrowed forever. Here
//! each poll is a separate call from JavaScript (see `schedulePoll` and `pollNow` in
//! `glue.js`) that catches the trap, and no borrow is held while a task runs:
//! the future is taken out of the table first. A trapped task is reported to
//! its `on_panic` (the front door answers 500) and its future is leaked.
//!
//! What a trap cannot give back is the wasm shadow stack its frames held:
//! the stack pointer is a module global that neither Rust nor the
//! wasm-bindgen glue can reset. Measured in headless Chromium: about 8 KiB
//! per panic in a debug build, so the default 1 MiB stack takes over a
//! hundred panicking requests per page load (more in release builds).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use wasm_bindgen::prelude::*;

use super::glue;

type LocalFuture = Pin<Box<dyn Future<Output = ()>>>;

/// What to do when a task's poll trapped; gets the panic message.
type OnPanic = Box<dyn FnOnce(String)>;

struct Task {
    /// `None` while the task is being polled.
    future: Option<LocalFuture>,
    on_panic: Option<OnPanic>,
    /// A poll is already queued: further wakes are no-ops.
    scheduled: bool,
}

struct Driver {
    tasks: RefCell<HashMap<u32, Task>>,
    next_id: Cell<u32>,
    poll: Closure<dyn Fn(u32)>,
    failed: Closure<dyn Fn(u32, String)>,
}

thread_local! {
    static DRIVER: Driver = Driver {
        tasks: RefCell::default(),
        next_id: Cell::new(0),
        poll: Closure::new(poll_task),
        failed: Closure::new(task_trapped),
    };
    /// The message of the last panic, recorded by our panic hook.
    static LAST_PANIC: Cell<Option<String>> = const { Cell::new(None) };
}

/// Runs `future` to completion; if one of its polls panics, `on_panic` gets
/// the panic message instead.
pub(crate) fn spawn(
    future: impl Future<Output = ()> + 'static,
    on_panic: impl FnOnce(String) + 'static,
) {
    schedule(insert(future, on_panic));
}

/// As [`spawn`], but polls the task the first time now, within this call,
/// instead of in a microtask: for a call from JavaScript that holds no
/// borrow a task could need and whose caller cannot observe the order (a
/// Service Worker's question, answered within its message event). Measured
/// in both browsers, each step of a Service Worker question costs some
/// 5-40 µs; the microtask hop was one.
pub(crate) fn spawn_now(
    future: impl Future<Output = ()> + 'static,
    on_panic: impl FnOnce(String) + 'static,
) {
    let id = insert(future, on_panic);
    DRIVER.with(|driver| glue::poll_now(driver.poll.as_ref(), driver.failed.as_ref(), id));
}

/// Adds a task, not yet scheduled; returns its id.
fn insert(
    future: impl Future<Output = ()> + 'static,
    on_panic: impl FnOnce(String) + 'static,
) -> u32 {
    install_panic_hook();
    DRIVER.with(|driver| {
        let id = driver.next_id.get();
        driver.next_id.set(id.wrapping_add(1));
        driver.tasks.borrow_mut().insert(
            id,
            Task {
                future: Some(Box::pin(future)),
                on_panic: Some(Box::new(on_panic)),
                scheduled: false,
            },
        );
        id
    })
}

fn schedule(id: u32) {
    DRIVER.with(|driver| {
        let mut tasks = driver.tasks.borrow_mut();
        let Some(task) = tasks.get_mut(&id) else {
            return;
        };
        if std::mem::replace(&mut task.scheduled, true) {
            return;
        }
        drop(tasks);
        glue::schedule_poll(driver.poll.as_ref(), driver.failed.as_ref(), id);
    });
}

fn poll_task(id: u32) {
    // Take the future out so no borrow is alive while user code runs.
    let Some(mut future) = DRIVER.with(|driver| {
        let mut tasks = driver.tasks.borrow_mut();
        let task = tasks.get_mut(&id)?;
        task.scheduled = false;
        task.future.take()
    }) else {
        return;
    };
    let waker = Waker::from(Arc::new(TaskWaker(id)));
    let done = future
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_ready();
    DRIVER.with(|driver| {
        let mut tasks = driver.tasks.borrow_mut();
        if done {
            tasks.remove(&id);
        } else if let Some(task) = tasks.get_mut(&id) {
            task.future = Some(future);
        }
    });
}

fn task_trapped(id: u32, error: String) {
    let task = DRIVER.with(|driver| driver.tasks.borrow_mut().remove(&id));
    let message = LAST_PANIC
        .with(Cell::take)
        .unwrap_or_else(|| format!("the request handler trapped: {error}"));
    if let Some(on_panic) = task.and_then(|mut task| task.on_panic.take()) {
        on_panic(message);
    }
}

struct TaskWaker(u32);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        schedule(self.0);
    }
}

/// Records each panic's message for [`task_trapped`], then runs the hook
/// that was there before (a `console_error_panic_hook`, say).
fn install_panic_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = crate::support::log::panic_message(info.payload());
            LAST_PANIC.with(|last| last.set(Some(message)));
            previous(info);
        }));
    });
}
