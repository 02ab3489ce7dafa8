//! The `http` namespace: handlers for REST APIs.
//!
//! One function per request method, each pairing a predicate (see
//! [`matching`](crate::matching)) with a resolver (see
//! [`resolver`](crate::resolver)):
//!
//! ```
//! use mocklib::{http, HttpResponse};
//!
//! let handlers = [
//!     http::get("https://api.example.com/user", |_| HttpResponse::json(&serde_json::json!({ "name": "John" }))),
//!     http::post("/posts", |args| async move {
//!         let post: serde_json::Value = args.request.json()?;
//!         Ok::<_, mocklib::request::BodyError>(HttpResponse::json(&post).status(201))
//!     }),
//!     http::delete("/posts/:id", |args| HttpResponse::text(format!("deleted {}", &args.params["id"]))),
//!     // Parameters in the host: one label each (see `matching`).
//!     http::get("https://:tenant.example.com/user", |args| {
//!         HttpResponse::text(format!("tenant {}", &args.params["tenant"]))
//!     }),
//!     http::all("*", |args| {
//!         println!("{} {}", args.request.method(), args.request.url());
//!         // returning nothing lets the next matching handler answer
//!     }),
//! ];
//! # let _ = handlers;
//! ```
//!
//! `http::get` does not match `HEAD` requests; `http::all` matches every method.
//! Each function panics on an invalid pattern (like an invalid axum route);
//! its `try_` twin returns the [`PatternError`] instead.

use std::sync::Arc;

use http::Method;

// Only mocklib's public surface: a handler kind outside the crate is
// written the same way (see `crate::handler`).
use crate::handling::handler::{
    Handler, HandlerKind, IndexHint, MatchContext, Matched, ResolverParts,
};
use crate::handling::resolver::DynResolver;
use crate::handling::resolver::{ResolverArgs, ResolverCall, ResolverOutput};
use crate::matching::{IntoPredicate, PatternError, Predicate};

struct HttpHandler {
    method: Option<Method>,
    predicate: Predicate,
    resolver: Arc<DynResolver>,
    header: String,
}

impl HandlerKind for HttpHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.predicate.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::of_predicate(&self.predicate)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        if let Some(method) = &self.method {
            if method != context.request().method() {
                return None;
            }
        }
        let params = self
            .predicate
            .matches(context.request(), context.base_url())?;
        Some(Matched::resolver(
            Arc::clone(&self.resolver),
            ResolverParts {
                request: context.request().clone(),
                params,
                cookies: context.cookies().clone(),
                request_id: context.request_id(),
            },
        ))
    }
}

/// Like [`on`], returning an invalid pattern as an error instead of panicking.
pub fn try_on<P, F, R, M>(
    method: Method,
    predicate: P,
    resolver: F,
) -> Result<Handler, PatternError>
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    let resolver = erase(resolver);
    try_with(predicate.into_predicate(), resolver, Some(method))
}

// The public constructors are generic over the resolver's closure, so a
// test crate compiles them once per handler it writes: they only box the
// resolver (`erase`) and convert the predicate, and hand both to these
// functions, compiled once in mocklib (issue 42: what a user's test crate
// compiles per handler). The resolver is boxed first and the method passed
// last, so a panicking conversion leaves only an `Arc` to drop.

/// Boxes `resolver` as the one resolver type HTTP handlers keep: the only
/// code compiled per resolver closure.
fn erase<F, R, M>(resolver: F) -> Arc<DynResolver>
where
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    Arc::new(move |args| ResolverCall::new(resolver(args)))
}

/// A handler for requests with `method` (any method when `None`): the
/// building block of every function here.
fn try_with(
    predicate: Result<Predicate, PatternError>,
    resolver: Arc<DynResolver>,
    method: Option<Method>,
) -> Result<Handler, PatternError> {
    Ok(labeled_handler("", method, predicate?, resolver))
}

/// [`try_with`], panicking at the caller's line on an invalid pattern.
#[track_caller]
fn with(
    predicate: Result<Predicate, PatternError>,
    resolver: Arc<DynResolver>,
    method: Option<Method>,
) -> Handler {
    match try_with(predicate, resolver, method) {
        Ok(handler) => handler,
        Err(error) => panic!("{error}"),
    }
}

/// A handler for another namespace built on HTTP handlers (`sse`): its
/// `label` starts the handler's header, as in `sse GET /stream`.
pub(crate) fn labeled_handler(
    label: &str,
    method: Option<Method>,
    predicate: Predicate,
    resolver: Arc<DynResolver>,
) -> Handler {
    let header = format!(
        "{label}{}{} {}",
        if label.is_empty() { "" } else { " " },
        method.as_ref().map_or("ALL", Method::as_str),
        predicate.describe()
    );
    Handler::new(HttpHandler {
        method,
        predicate,
        resolver,
        header,
    })
}

/// A handler for requests with `method`: for methods without a function of
/// their own (`TRACE`, `PROPFIND`, …); [`all`] takes every method. The same
/// shape as [`sse::on`](crate::sse::on).
///
/// ```
/// use mocklib::{http, HttpResponse};
///
/// let propfind = ::http::Method::from_bytes(b"PROPFIND").unwrap();
/// let handler = http::on(propfind, "/dav/*", |_| HttpResponse::empty().status(207));
/// assert_eq!(handler.header(), "PROPFIND /dav/*");
/// ```
///
/// # Panics
/// When the predicate is an invalid pattern; the message names the pattern
/// and the position.
#[track_caller]
pub fn on<P, F, R, M>(method: Method, predicate: P, resolver: F) -> Handler
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    let resolver = erase(resolver);
    with(predicate.into_predicate(), resolver, Some(method))
}

macro_rules! method_handlers {
    ($($(#[$doc:meta])* $name:ident $try_name:ident => $method:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// # Panics
        /// When the predicate is an invalid pattern; the message names the
        /// pattern and the position.
        #[track_caller]
        pub fn $name<P, F, R, M>(predicate: P, resolver: F) -> Handler
        where
            P: IntoPredicate,
            F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
            R: ResolverOutput<M>,
        {
            let resolver = erase(resolver);
            with(predicate.into_predicate(), resolver, $method)
        }

        #[doc = concat!("Like [`", stringify!($name), "`], returning an invalid pattern as an error instead of panicking.")]
        pub fn $try_name<P, F, R, M>(predicate: P, resolver: F) -> Result<Handler, PatternError>
        where
            P: IntoPredicate,
            F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
            R: ResolverOutput<M>,
        {
            let resolver = erase(resolver);
            try_with(predicate.into_predicate(), resolver, $method)
        }
    )*};
}

method_handlers! {
    /// A handler for `GET` requests (not `HEAD`).
    get try_get => Some(Method::GET);
    /// A handler for `POST` requests.
    post try_post => Some(Method::POST);
    /// A handler for `PUT` requests.
    put try_put => Some(Method::PUT);
    /// A handler for `PATCH` requests.
    patch try_patch => Some(Method::PATCH);
    /// A handler for `DELETE` requests.
    delete try_delete => Some(Method::DELETE);
    /// A handler for `HEAD` requests.
    head try_head => Some(Method::HEAD);
    /// A handler for `OPTIONS` requests.
    options try_options => Some(Method::OPTIONS);
    /// A handler for requests of every method.
    all try_all => None;
}
