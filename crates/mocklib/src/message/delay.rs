//! `delay()`: make a mocked response take time.
//!
//! ```
//! use std::time::Duration;
//! use mocklib::{delay, http, response::Delay, HttpResponse};
//!
//! http::get("/slow", |_| async {
//!     delay(Duration::from_millis(300)).await;
//!     HttpResponse::text("finally")
//! });
//! http::get("/realistic", |_| async {
//!     delay(Delay::Real).await;
//!     HttpResponse::text("as from a nearby server")
//! });
//! ```

use std::future::Future;
use std::time::Duration;

/// How long [`delay`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delay {
    /// A realistic server response time: 5 ms in native code (as Mock Service
    /// Worker does in Node.js), a random 100–400 ms in the browser.
    Real,
    /// Never completes: the request stays pending until the client gives up.
    /// Holds no timer, so it keeps no process alive.
    Infinite,
    /// Exactly this long.
    Exactly(Duration),
}

impl From<Duration> for Delay {
    fn from(duration: Duration) -> Self {
        Delay::Exactly(duration)
    }
}

/// Milliseconds, as in `delay(1200)`.
impl From<u64> for Delay {
    fn from(milliseconds: u64) -> Self {
        Delay::Exactly(Duration::from_millis(milliseconds))
    }
}

/// Waits as `how` says; `.await` it inside an async resolver.
///
/// Uses the current tokio runtime's timer when there is one (so
/// `tokio::time::pause` applies), otherwise a helper thread.
pub fn delay(how: impl Into<Delay>) -> impl Future<Output = ()> + Send + 'static {
    let duration = match how.into() {
        Delay::Real => Some(realistic()),
        Delay::Infinite => None,
        Delay::Exactly(duration) => Some(duration),
    };
    async move {
        match duration {
            None => std::future::pending::<()>().await,
            Some(duration) => sleep(duration).await,
        }
    }
}

#[cfg(target_arch = "wasm32")]
async fn sleep(duration: Duration) {
    timer::Sleep::start(duration, timer::set_timeout).await
}

#[cfg(not(target_arch = "wasm32"))]
async fn sleep(duration: Duration) {
    #[cfg(feature = "tokio")]
    if tokio::runtime::Handle::try_current().is_ok() {
        return tokio::time::sleep(duration).await;
    }
    timer::Sleep::start(duration, |duration, fire| {
        std::thread::spawn(move || {
            std::thread::sleep(duration);
            fire();
        });
    })
    .await
}

/// The realistic delay: 5 ms natively, 100–400 ms in the browser.
fn realistic() -> Duration {
    #[cfg(target_arch = "wasm32")]
    {
        Duration::from_millis(100 + (js_sys::Math::random() * 300.0) as u64)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Duration::from_millis(5)
    }
}

/// A future completed by a callback, whoever calls it (a thread, a JS timer).
mod timer {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex, PoisonError};
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;

    #[derive(Default)]
    struct Shared {
        done: bool,
        waker: Option<Waker>,
    }

    pub(super) struct Sleep {
        shared: Arc<Mutex<Shared>>,
    }

    impl Sleep {
        /// Starts the wait: `schedule` must call `fire` once `duration` has passed.
        pub(super) fn start(
            duration: Duration,
            schedule: impl FnOnce(Duration, Box<dyn FnOnce() + Send>),
        ) -> Sleep {
            let shared = Arc::new(Mutex::new(Shared::default()));
            let timer = Arc::clone(&shared);
            schedule(
                duration,
                Box::new(move || {
                    let mut shared = timer.lock().unwrap_or_else(PoisonError::into_inner);
                    shared.done = true;
                    if let Some(waker) = shared.waker.take() {
                        waker.wake();
                    }
                }),
            );
            Sleep { shared }
        }
    }

    impl Future for Sleep {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
            if shared.done {
                Poll::Ready(())
            } else {
                shared.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// `setTimeout` on the global object (a window or a worker).
    #[cfg(target_arch = "wasm32")]
    pub(super) fn set_timeout(duration: Duration, fire: Box<dyn FnOnce() + Send>) {
        use wasm_bindgen::JsCast;
        let global = js_sys::global();
        let callback = wasm_bindgen::closure::Closure::once_into_js(fire);
        let set_timeout = js_sys::Reflect::get(&global, &"setTimeout".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        match set_timeout {
            Some(set_timeout) => {
                let millis = duration.as_millis().min(i32::MAX as u128) as f64;
                if set_timeout
                    .call2(&global, &callback, &millis.into())
                    .is_err()
                {
                    crate::support::log::error("setTimeout failed; delay() never completes");
                }
            }
            None => crate::support::log::error(
                "no setTimeout in this JavaScript environment; delay() never completes",
            ),
        }
    }
}
