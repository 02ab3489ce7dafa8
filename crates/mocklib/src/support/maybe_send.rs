//! `Send` where there are threads, nothing in the browser.
//!
//! Native front doors move request futures between threads, so resolver
//! futures must be `Send` there. In the browser (`wasm32`) everything runs on
//! one thread and an async resolver often awaits a `JsFuture`, which is not
//! `Send`; requiring it there would rule out the very resolvers browser apps
//! write. [`MaybeSend`] is the bound that means the right thing on each target.

use std::future::Future;
use std::pin::Pin;

/// `Send` on native targets; no requirement on `wasm32`, where everything
/// runs on one thread.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> MaybeSend for T {}

/// `Send` on native targets; no requirement on `wasm32`, where everything
/// runs on one thread.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// A boxed future that is `Send` exactly where [`MaybeSend`] requires it.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
/// A boxed future that is `Send` exactly where [`MaybeSend`] requires it.
#[cfg(target_arch = "wasm32")]
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T>>>;
