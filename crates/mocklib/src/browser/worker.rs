//! [`Worker`]: the handler list and the switch that makes it intercept.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use super::fallback::FetchPatch;
use super::perform::FetchPerformer;
use super::service_worker::{self, Connection, RegisterFailure};
#[cfg(feature = "ws")]
use super::websocket::WebSocketPatch;
use super::{Mode, StartError, StartOptions};
use crate::engine::{Engine, InterceptOptions};
use crate::front_door::setup_api::SetupApi;
use crate::handling::handler::Handler;

/// Creates a worker with `handlers` as its initial handlers (MSW:
/// [`setupWorker(...handlers)`](https://mswjs.io/docs/api/setup-worker)). Nothing is intercepted
/// until [`Worker::start`].
#[doc(alias = "setupWorker")]
pub fn setup_worker(handlers: impl IntoIterator<Item = Handler>) -> Worker {
    let engine = Engine::new(handlers.into_iter().collect());
    Worker {
        api: Rc::new(SetupApi::new(Arc::clone(&engine))),
        engine,
        state: Rc::default(),
    }
}

/// A set of request handlers intercepting the page's requests once started.
///
/// Its handler-list methods (`use_handlers`, `reset_handlers`,
/// `list_handlers`, `events`, `verify`, ...) are the native `Server`'s too
/// (MSW: the `SetupApi` both share). Cloning is cheap and every clone is the
/// same worker.
#[derive(Clone)]
pub struct Worker {
    engine: Arc<Engine>,
    api: Rc<SetupApi>,
    state: Rc<RefCell<State>>,
}

#[derive(Default)]
enum State {
    #[default]
    Stopped,
    Starting,
    Running {
        mode: Mode,
        quiet: bool,
        _interception: Interception,
        /// The page's `WebSocket` class, replaced in both modes.
        #[cfg(feature = "ws")]
        _websockets: WebSocketPatch,
    },
}

/// Held while started; dropping it undoes the interception.
enum Interception {
    Fallback { _patch: FetchPatch },
    ServiceWorker { _connection: Connection },
}

impl Worker {
    /// Starts intercepting with default [`StartOptions`]: the Service Worker
    /// at `/mocklib-worker.js` when it can run, otherwise the `fetch` patch.
    /// Returns the mode that is active.
    ///
    /// With the `ws` feature, the page's `WebSocket` class is replaced too,
    /// in either mode (a Service Worker never sees a WebSocket; MSW patches
    /// the class the same way), until [`stop`](Self::stop) puts the
    /// browser's back. See [`ws`](crate::ws).
    pub async fn start(&self) -> Result<Mode, StartError> {
        self.start_with(StartOptions::default()).await
    }

    /// Starts intercepting with `options`. A second call while started
    /// warns and keeps the first activation.
    pub async fn start_with(&self, options: StartOptions) -> Result<Mode, StartError> {
        match &*self.state.borrow() {
            State::Running { mode, .. } => {
                crate::support::log::warn(
                    "start() was called on a worker that is already started; it keeps its current \
                     activation (call stop() first to start with other options)",
                );
                return Ok(*mode);
            }
            State::Starting => {
                crate::support::log::warn("start() was called while the worker is starting");
                return Err(StartError::AlreadyStarting);
            }
            State::Stopped => {}
        }
        *self.state.borrow_mut() = State::Starting;
        self.engine.listen(InterceptOptions {
            on_unhandled_request: options.on_unhandled_request.clone(),
            journal_capacity: options.journal_capacity,
            fallthrough_is_unhandled: options.fallthrough_is_unhandled,
            ..InterceptOptions::default()
        });
        match self.intercept(&options).await {
            Ok(interception) => {
                let mode = match interception {
                    Interception::Fallback { .. } => Mode::Fallback,
                    Interception::ServiceWorker { .. } => Mode::ServiceWorker,
                };
                self.engine.set_performer(Arc::new(FetchPerformer {
                    through_service_worker: mode == Mode::ServiceWorker,
                }));
                if !options.quiet {
                    crate::support::log::info(&format!("Mocking enabled ({mode})."));
                }
                *self.state.borrow_mut() = State::Running {
                    mode,
                    quiet: options.quiet,
                    _interception: interception,
                    #[cfg(feature = "ws")]
                    _websockets: WebSocketPatch::install(Arc::clone(&self.engine), options.quiet),
                };
                Ok(mode)
            }
            Err(error) => {
                self.engine.close();
                *self.state.borrow_mut() = State::Stopped;
                Err(error)
            }
        }
    }

    async fn intercept(&self, options: &StartOptions) -> Result<Interception, StartError> {
        let url = &options.service_worker_url;
        if options.mode != Some(Mode::Fallback) {
            let connected = service_worker::connect(
                Arc::clone(&self.engine),
                url,
                options.scope.clone(),
                options.quiet,
            )
            .await;
            match connected {
                Ok(connection) => {
                    return Ok(Interception::ServiceWorker {
                        _connection: connection,
                    });
                }
                // The app's public folder needs fixing: say so, whatever the mode.
                Err(failure @ (RegisterFailure::Missing | RegisterFailure::Outdated { .. })) => {
                    return Err(failure.into_start_error(url));
                }
                Err(failure) if options.mode == Some(Mode::ServiceWorker) => {
                    return Err(failure.into_start_error(url));
                }
                Err(RegisterFailure::Unsupported(reason) | RegisterFailure::Failed(reason)) => {
                    crate::support::log::warn(&format!(
                        "the Service Worker could not start ({reason}); patching fetch instead: \
                         requests made with fetch are intercepted, XHR and <img> are not"
                    ));
                }
            }
        }
        Ok(Interception::Fallback {
            _patch: FetchPatch::install(Arc::clone(&self.engine), options.quiet),
        })
    }

    /// Stops intercepting: the `fetch` patch is removed or the Service Worker
    /// stops asking this page, and the browser's `WebSocket` class is back
    /// (sockets opened before keep their handlers until they close). The
    /// handler list is kept; `start()` again resumes. A second call warns.
    pub fn stop(&self) {
        let previous = std::mem::take(&mut *self.state.borrow_mut());
        match previous {
            State::Running { quiet, .. } => {
                self.engine.close();
                if !quiet {
                    crate::support::log::info("Mocking disabled.");
                }
            }
            State::Starting => {
                crate::support::log::warn(
                    "stop() was called while the worker is starting; ignored",
                );
                *self.state.borrow_mut() = State::Starting;
            }
            State::Stopped => crate::support::log::warn(
                "stop() was called on a worker that is not started; nothing to stop",
            ),
        }
    }

    /// The active mode, while started.
    pub fn mode(&self) -> Option<Mode> {
        match &*self.state.borrow() {
            State::Running { mode, .. } => Some(*mode),
            _ => None,
        }
    }
}

impl Worker {
    crate::front_door::setup_api::shared_api!();
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("mode", &self.mode())
            .field("handlers", &self.engine.list_handlers().len())
            .finish()
    }
}
