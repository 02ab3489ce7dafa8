//! A handler kind for JSON-RPC 2.0 endpoints: one handler per method.
//!
//! ```
//! use mocklib_extension_example::jsonrpc;
//! use serde_json::json;
//!
//! let rpc = jsonrpc::endpoint("https://rpc.example.com/");
//! let handlers = [
//!     rpc.method("eth_blockNumber", |_| json!("0x10")),
//!     rpc.method("eth_getBalance", |args| json!({ "account": args.params[0] })),
//! ];
//! # let _ = handlers;
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use mocklib::handler::{HandlerKind, IndexHint, KeySource, Keys, MatchContext, Matched};
use mocklib::resolver::{CallContext, ResolverCall};
use mocklib::{Handler, HttpResponse, Request, matching::Predicate};
use serde_json::{Value, json};

/// The handlers of one JSON-RPC endpoint. Cheap to clone.
#[derive(Clone)]
pub struct Endpoint {
    shared: Arc<Shared>,
    /// The index's lane for this endpoint, shared by its handlers so the
    /// index groups them and asks once per request.
    methods: Arc<dyn KeySource>,
}

struct Shared {
    url: Predicate,
    /// How many times a handler of this endpoint was asked whether it
    /// matches: what the index saves shows here.
    asked: AtomicUsize,
}

/// The handlers for JSON-RPC calls POSTed to `url` (a mocklib path pattern).
///
/// # Panics
/// When `url` is an invalid pattern.
pub fn endpoint(url: &str) -> Endpoint {
    let url = Predicate::path(url).unwrap_or_else(|error| panic!("{error}"));
    let shared = Arc::new(Shared {
        url,
        asked: AtomicUsize::new(0),
    });
    Endpoint {
        methods: Arc::new(Methods(Arc::clone(&shared))),
        shared,
    }
}

/// What a JSON-RPC resolver receives.
#[derive(Debug)]
#[non_exhaustive]
pub struct RpcArgs {
    /// The call's `params` (`null` when absent).
    pub params: Value,
    /// The call's `id`.
    pub id: Value,
    /// The HTTP request that carried the call.
    pub request: Request,
    call: CallContext,
}

impl RpcArgs {
    /// How many times this handler answered before, in the current scope.
    pub fn previous_calls(&self) -> usize {
        self.call.previous_calls()
    }
}

impl Endpoint {
    /// A handler answering calls of `method` with the resolver's result
    /// (`{"jsonrpc": "2.0", "id": …, "result": …}`).
    pub fn method(
        &self,
        method: &str,
        resolver: impl Fn(RpcArgs) -> Value + Send + Sync + 'static,
    ) -> Handler {
        Handler::new(MethodHandler {
            endpoint: self.clone(),
            method: method.to_owned(),
            header: format!("jsonrpc {method} at {}", self.shared.url.describe()),
            resolver: Arc::new(resolver),
        })
    }

    /// How many times this endpoint's handlers were asked whether they
    /// match a request (the index skips the others).
    pub fn asked(&self) -> usize {
        self.shared.asked.load(Ordering::Relaxed)
    }
}

type Resolver = dyn Fn(RpcArgs) -> Value + Send + Sync;

struct MethodHandler {
    endpoint: Endpoint,
    method: String,
    header: String,
    resolver: Arc<Resolver>,
}

/// One request's JSON-RPC call, parsed once however many handlers look.
#[derive(Default)]
struct Parsed(OnceLock<Option<RpcCall>>);

struct RpcCall {
    method: String,
    params: Value,
    id: Value,
}

fn parse<'a>(context: &'a MatchContext<'_>) -> Option<&'a RpcCall> {
    let parsed = context.state::<Parsed>().0.get_or_init(|| {
        let request = context.request();
        if request.method() != http::Method::POST {
            return None;
        }
        let body: Value = serde_json::from_slice(request.body()).ok()?;
        Some(RpcCall {
            method: body.get("method")?.as_str()?.to_owned(),
            params: body.get("params").cloned().unwrap_or(Value::Null),
            id: body.get("id").cloned().unwrap_or(Value::Null),
        })
    });
    parsed.as_ref()
}

/// The index's lane for this endpoint: a request's key is its method.
struct Methods(Arc<Shared>);

impl KeySource for Methods {
    fn keys<'a>(&self, context: &'a MatchContext<'_>) -> Keys<'a> {
        let url = &self.0.url;
        if url.matches(context.request(), context.base_url()).is_none() {
            return Keys::NotApplicable;
        }
        match parse(context) {
            Some(call) => Keys::Named(vec![call.method.as_str()]),
            None => Keys::NotApplicable,
        }
    }
}

impl HandlerKind for MethodHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn method(&self) -> Option<&http::Method> {
        Some(&http::Method::POST)
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.endpoint.shared.url.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::key(Arc::clone(&self.endpoint.methods), &self.method)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        self.endpoint.shared.asked.fetch_add(1, Ordering::Relaxed);
        self.endpoint
            .shared
            .url
            .matches(context.request(), context.base_url())?;
        let call = parse(context).filter(|call| call.method == self.method)?;
        let (params, id) = (call.params.clone(), call.id.clone());
        let request = context.request().clone();
        let resolver = Arc::clone(&self.resolver);
        Some(Matched::new(move |call| {
            let id_for_answer = id.clone();
            let result = resolver(RpcArgs {
                params,
                id,
                request,
                call,
            });
            ResolverCall::new(HttpResponse::json(
                &json!({ "jsonrpc": "2.0", "id": id_for_answer, "result": result }),
            ))
        }))
    }
}
