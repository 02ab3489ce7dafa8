//! Boundaries: handler-list changes confined to one scope.
//!
//! [`Server::boundary`](crate::node::Server::boundary) wraps a callback; every
//! call of the wrapped function runs the callback in a fresh scope whose list
//! starts as the caller's current list. Inside it, `use_handlers`,
//! `reset_handlers` and the handler lookup of in-process front doors act on
//! that scope only, so concurrent tests can override handlers without seeing
//! each other.
//!
//! **What decides a request's scope.** The scope is tracked per thread while
//! code runs inside the boundary: during the synchronous call, and during every
//! poll of the future the callback returns (like a tokio task-local, but
//! independent of the runtime). A task started with `tokio::spawn` or
//! `std::thread::spawn` does not inherit it; carry it explicitly with
//! [`BoundaryExt::in_current_boundary`] (as `tracing` carries spans with
//! `.in_current_span()`):
//!
//! ```
//! # async fn demo() {
//! use mocklib::BoundaryExt;
//!
//! let task = tokio::spawn(async { /* requests here use the caller's boundary */ }.in_current_boundary());
//! # task.await.unwrap();
//! # }
//! ```

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::engine::list::Scope;
pub use crate::handling::scope_local::ScopeLocal;

thread_local! {
    /// Scopes entered on this thread, innermost last. Several servers may
    /// each have one.
    static ACTIVE: RefCell<Vec<Arc<Scope>>> = const { RefCell::new(Vec::new()) };
}

/// The innermost scope of engine `engine_id` entered on this thread.
pub(crate) fn current(engine_id: u64) -> Option<Arc<Scope>> {
    ACTIVE.with(|active| {
        active
            .borrow()
            .iter()
            .rev()
            .find(|scope| scope.engine_id() == engine_id)
            .cloned()
    })
}

/// Runs `f` with `scopes` entered on top of the current ones (innermost
/// last), restoring the previous state afterwards even if `f` panics.
pub(crate) fn enter<T>(scopes: &[Arc<Scope>], f: impl FnOnce() -> T) -> T {
    // Generic (a boundary's future polls through it), so kept to a guard
    // made and dropped by non-generic code: a test crate compiles little
    // per future it runs in a boundary.
    let _exit = Exit::entering(scopes);
    f()
}

/// Leaves what [`enter`] entered when dropped, even on a panic.
struct Exit(usize);

impl Exit {
    fn entering(scopes: &[Arc<Scope>]) -> Exit {
        Exit(ACTIVE.with(|active| {
            let mut active = active.borrow_mut();
            let depth = active.len();
            active.extend(scopes.iter().cloned());
            depth
        }))
    }
}

impl Drop for Exit {
    fn drop(&mut self) {
        ACTIVE.with(|active| active.borrow_mut().truncate(self.0));
    }
}

/// Runs `f` with no scope of engine `engine_id` entered (other servers'
/// stay), restoring the previous state afterwards even if `f` panics.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn outside<T>(engine_id: u64, f: impl FnOnce() -> T) -> T {
    let kept: Vec<Arc<Scope>> = ACTIVE.with(|active| {
        active
            .borrow()
            .iter()
            .filter(|scope| scope.engine_id() != engine_id)
            .cloned()
            .collect()
    });
    replace(&kept, f)
}

/// Holds a boundary open: every [`Boundary`] value and every boundary
/// call's [`Scoped`] is one, and the boundary ends when the last goes. What
/// else holds its scope (a connection of the listener, a task carrying it
/// with [`BoundaryExt::in_current_boundary`], a request in flight) does not
/// keep it open: the listener stops answering its port, its credential
/// and its connections as it ends.
pub(crate) struct Owner(Arc<Scope>);

impl Owner {
    pub(crate) fn new(scope: Arc<Scope>) -> Self {
        scope.hold_open();
        Owner(scope)
    }
}

impl Clone for Owner {
    fn clone(&self) -> Self {
        Owner::new(Arc::clone(&self.0))
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.let_go();
    }
}

impl std::ops::Deref for Owner {
    type Target = Arc<Scope>;
    fn deref(&self) -> &Arc<Scope> {
        &self.0
    }
}

pin_project_lite::pin_project! {
    /// The result of a boundary call: the callback's return value, kept inside
    /// its scope.
    ///
    /// When the callback returned a future, `Scoped` is a future with the same
    /// output whose every poll runs inside the boundary — `.await` it as you
    /// would the original. When it returned a plain value, take it with
    /// [`into_inner`](Scoped::into_inner) (or use it through `Deref`).
    #[must_use = "a boundary's future does nothing unless awaited"]
    pub struct Scoped<R> {
        scope: Arc<Scope>,
        // A boundary call's own: it ends the boundary as it goes. (`None`
        // in a request's resolution, which runs in a scope it does not own.)
        owner: Option<Owner>,
        verify_on_exit: bool,
        #[pin]
        inner: R,
    }
}

impl<R> Scoped<R> {
    pub(crate) fn new(scope: Arc<Scope>, inner: R) -> Self {
        Scoped {
            scope,
            owner: None,
            verify_on_exit: false,
            inner,
        }
    }

    /// A boundary call's result, holding the boundary open while it lives.
    pub(crate) fn owning(owner: Owner, inner: R) -> Self {
        Scoped {
            scope: Arc::clone(&owner),
            owner: Some(owner),
            verify_on_exit: false,
            inner,
        }
    }

    /// Verifies the boundary's expectations (and strict-mode failures) when
    /// it ends — when the future completes, or at
    /// [`into_inner`](Self::into_inner) — and panics with the report if they
    /// fail, as [`Server::verify`](crate::node::Server::verify) would return
    /// it.
    ///
    /// ```should_panic
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([]);
    /// let inner = server.clone();
    /// server
    ///     .in_boundary(async move {
    ///         inner.use_handlers([http::get("/user", |_| HttpResponse::empty()).times(1)]);
    ///         // ... the code under test never calls GET /user ...
    ///     })
    ///     .verify_on_exit()
    ///     .await; // panics: GET /user: expected exactly 1, received 0
    /// # }
    /// ```
    pub fn verify_on_exit(mut self) -> Self {
        self.verify_on_exit = true;
        self
    }

    /// The callback's return value.
    pub fn into_inner(self) -> R {
        if self.verify_on_exit {
            verify_or_panic(&self.scope);
        }
        self.inner
    }
}

/// A boundary held open by a value, not by a call: for code whose scope
/// does not follow one function — a server that opens a boundary per
/// client, or a test harness that opens one per worker and ends it later.
///
/// Made by [`Server::open_boundary`](crate::node::Server::open_boundary)
/// from the caller's current scope, as [`Server::boundary`] makes one per
/// call. Code run with [`in_scope`](Self::in_scope), and futures wrapped
/// with [`scoped`](Self::scoped), act on the boundary's list, journal and
/// expectations; the URL, proxy URL and environment obtained inside lead
/// requests of other processes into it.
///
/// The boundary ends when the last clone and the last future made by
/// [`scoped`](Self::scoped) are dropped, or at [`end`](Self::end), whatever
/// its clients still hold open: its port closes, its proxy credential is
/// refused with `407`, and the connections made to it (kept-alive HTTP/1.1,
/// HTTP/2, `CONNECT` tunnels) close, a request still arriving on one
/// answered `410 Gone`; its streamed bodies and WebSockets end.
///
/// Clones are the same boundary (`==` tells).
///
/// ```
/// use mocklib::{http, HttpResponse, node::setup_server};
///
/// let server = setup_server([http::get("/user", |_| HttpResponse::text("John"))]);
/// let boundary = server.open_boundary();
/// boundary.in_scope(|| server.use_handlers([http::get("/user", |_| HttpResponse::text("Kate"))]));
/// assert_eq!(boundary.in_scope(|| server.list_handlers().len()), 2);
/// assert_eq!(server.list_handlers().len(), 1); // outside, the list did not change
/// ```
///
/// [`Server::boundary`]: crate::node::Server::boundary
#[cfg(not(target_arch = "wasm32"))] // no boundaries in the browser yet
#[derive(Clone)]
pub struct Boundary {
    owner: Owner,
}

#[cfg(not(target_arch = "wasm32"))]
impl Boundary {
    pub(crate) fn new(scope: Arc<Scope>) -> Self {
        Boundary {
            owner: Owner::new(scope),
        }
    }

    /// Runs `f` inside the boundary (and inside nothing else of its server:
    /// the boundary replaces the caller's scope of the same server for the
    /// call).
    pub fn in_scope<T>(&self, f: impl FnOnce() -> T) -> T {
        enter(std::slice::from_ref(&*self.owner), f)
    }

    /// `future`, every poll of which runs inside the boundary.
    ///
    /// ```
    /// # use mocklib::node::setup_server;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([]);
    /// let boundary = server.open_boundary();
    /// let inner = server.clone();
    /// let count = boundary.scoped(async move { inner.requests().len() }).await;
    /// assert_eq!(count, 0);
    /// # }
    /// ```
    pub fn scoped<F: Future>(&self, future: F) -> Scoped<F> {
        Scoped::owning(self.owner.clone(), future)
    }

    /// Ends the boundary now, though clones of it remain: its port closes,
    /// its proxy credential is refused, the connections its clients keep
    /// to it close (a request still arriving on one is answered `410
    /// Gone`), and its streamed bodies and WebSockets end. Code run with
    /// [`in_scope`](Self::in_scope) still reads and changes its list and
    /// journal; addresses obtained in it from now on lead nowhere.
    ///
    /// ```
    /// use mocklib::node::setup_server;
    ///
    /// let server = setup_server([]);
    /// server.listen();
    /// let boundary = server.open_boundary();
    /// let kept = boundary.clone();
    /// let port = boundary.in_scope(|| server.url());
    /// boundary.end();
    /// assert!(kept.is_ended());
    /// assert!(std::net::TcpStream::connect(port.socket_addrs(|| None).unwrap()[0]).is_err());
    /// ```
    pub fn end(&self) {
        self.owner.end();
    }

    /// Whether the boundary has ended (see [`end`](Self::end)).
    pub fn is_ended(&self) -> bool {
        self.owner.is_ended()
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl PartialEq for Boundary {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.owner, &other.owner)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Eq for Boundary {}

#[cfg(not(target_arch = "wasm32"))]
impl fmt::Debug for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Boundary").finish_non_exhaustive()
    }
}

fn verify_or_panic(scope: &Scope) {
    if let Err(report) = crate::engine::verify::verify(scope) {
        panic!("{report}");
    }
}

impl<R> std::ops::Deref for Scoped<R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.inner
    }
}

impl<R: std::fmt::Debug> std::fmt::Debug for Scoped<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Scoped").field(&self.inner).finish()
    }
}

impl<R: Future> Future for Scoped<R> {
    type Output = R::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R::Output> {
        let this = self.project();
        let inner = this.inner;
        // The root with no scope of its engine entered (a request at the
        // root, as most are): the current scope is the root already.
        let poll = if this.scope.is_root() && current(this.scope.engine_id()).is_none() {
            inner.poll(cx)
        } else {
            enter(std::slice::from_ref(this.scope), || inner.poll(cx))
        };
        if poll.is_ready() && *this.verify_on_exit {
            verify_or_panic(this.scope);
        }
        poll
    }
}

pin_project_lite::pin_project! {
    /// A future carrying the boundaries that were current when it was made;
    /// see [`BoundaryExt::in_current_boundary`].
    #[must_use = "futures do nothing unless awaited"]
    pub struct InBoundary<F> {
        scopes: Vec<Arc<Scope>>,
        #[pin]
        inner: F,
    }
}

impl<F: Future> Future for InBoundary<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let inner = this.inner;
        // Exactly the captured scopes, not the poller's: a future captured at
        // the root stays at the root even when polled inside a boundary.
        replace(this.scopes, || inner.poll(cx))
    }
}

/// Runs `f` with exactly `scopes` active, restoring the previous state
/// afterwards even if `f` panics.
fn replace<T>(scopes: &[Arc<Scope>], f: impl FnOnce() -> T) -> T {
    // As in `enter`: the guard's code is not generic.
    let _restore = Restore::replacing(scopes);
    f()
}

/// Puts back the scopes [`replace`] replaced when dropped, even on a panic.
struct Restore(Vec<Arc<Scope>>);

impl Restore {
    fn replacing(scopes: &[Arc<Scope>]) -> Restore {
        Restore(ACTIVE.with(|active| std::mem::replace(&mut *active.borrow_mut(), scopes.to_vec())))
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        ACTIVE.with(|active| std::mem::swap(&mut *active.borrow_mut(), &mut self.0));
    }
}

/// Carries the current boundaries into a future that will run elsewhere
/// (`tokio::spawn`, a worker pool).
pub trait BoundaryExt: Future + Sized {
    /// Wraps the future so that it runs inside the boundaries current at this
    /// call, wherever it is polled.
    fn in_current_boundary(self) -> InBoundary<Self> {
        InBoundary {
            scopes: ACTIVE.with(|active| active.borrow().clone()),
            inner: self,
        }
    }
}

impl<F: Future> BoundaryExt for F {}

/// Callbacks `boundary` accepts: closures of 0 to 6 arguments, sync or async.
/// `Args` is a tuple of the argument types and is always inferred.
///
/// Like an axum handler, the callback is `FnOnce + Clone`: each call of the
/// bound function runs a fresh clone, so the body may move what it captures
/// (`move |name: &'static str| async move { server.use_handlers(..); .. }`)
/// and the bound function can still be called any number of times. A closure
/// is `Clone` when everything it captures is, and cloning it clones each
/// capture: a [`Server`](crate::node::Server) or an `Arc` costs one reference
/// count. Share a value that is not `Clone` (a `Mutex`, a channel's receiver)
/// through an `Arc`.
///
/// The closure's argument types must be written out (`|name: &'static str|`):
/// `boundary` accepts every arity, so Rust cannot infer them.
///
/// ```compile_fail,E0277
/// # let server = mocklib::node::setup_server([]);
/// // A closure of seven arguments is not a boundary callback.
/// let run = server.boundary(|a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8| a + b + c + d + e + f + g);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a boundary callback",
    label = "not a boundary callback",
    note = "`boundary` takes a closure of 0 to 6 arguments with annotated types, sync or async: \
            `server.boundary(move |name: &'static str| async move {{ .. }})`",
    note = "the closure must be `Clone + Send + Sync + 'static`: move in clones of what it uses \
            (`let server = server.clone();`), not references"
)]
pub trait BoundaryCallback<Args>: Clone + Send + Sync + 'static {
    /// The wrapped callable: same arguments, result wrapped in [`Scoped`].
    type Bounded;

    #[doc(hidden)]
    fn bind(self, new_scope: NewScope) -> Self::Bounded;
}

/// Creates the scope of one boundary call (opaque; used by
/// [`BoundaryCallback`]).
#[doc(hidden)]
#[derive(Clone)]
pub struct NewScope(pub(crate) Arc<dyn Fn() -> Arc<Scope> + Send + Sync>);

impl fmt::Debug for NewScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewScope").finish_non_exhaustive()
    }
}

macro_rules! boundary_callback {
    ($($arg:ident),*) => {
        impl<F, R, $($arg,)*> BoundaryCallback<($($arg,)*)> for F
        where
            F: FnOnce($($arg),*) -> R + Clone + Send + Sync + 'static,
            R: 'static,
            $($arg: 'static,)*
        {
            type Bounded = Arc<dyn Fn($($arg),*) -> Scoped<R> + Send + Sync>;

            #[allow(non_snake_case)]
            fn bind(self, new_scope: NewScope) -> Self::Bounded {
                Arc::new(move |$($arg),*| {
                    let owner = Owner::new((new_scope.0)());
                    // A fresh clone per call, so the callback may consume
                    // what it captured (axum's handlers work the same way).
                    let callback = self.clone();
                    let result = enter(std::slice::from_ref(&*owner), || callback($($arg),*));
                    Scoped::owning(owner, result)
                })
            }
        }
    };
}

boundary_callback!();
boundary_callback!(A1);
boundary_callback!(A1, A2);
boundary_callback!(A1, A2, A3);
boundary_callback!(A1, A2, A3, A4);
boundary_callback!(A1, A2, A3, A4, A5);
boundary_callback!(A1, A2, A3, A4, A5, A6);
