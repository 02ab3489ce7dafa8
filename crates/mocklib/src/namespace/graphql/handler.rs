//! The GraphQL handler: which requests it takes, and how it answers them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use http::Method;

use super::batch;
use super::operation::GRAPHQL_RESPONSE_JSON;
#[cfg(all(feature = "ws", not(target_arch = "wasm32")))]
use super::over_ws;
use super::parse::{self, ParsedGraphql};
use super::{OperationInfo, OperationType, Predicate, ResolverArgs};
use crate::handling::handler::{
    Handler, HandlerKind, IndexHint, KeySource, Keys, MatchContext, Matched,
};
use crate::handling::resolver::{CallContext, RequestId, Resolution, ResolverCall, ResolverOutput};
use crate::matching::Predicate as UrlPredicate;
use crate::message::cookies::Cookies;
use crate::message::request::Request;
use crate::message::response::Kind;

/// The GraphQL state of one lookup, kept in its `MatchContext` and shared
/// by every handler the lookup tries.
#[derive(Default)]
pub(crate) struct LookupCache {
    /// The request's operation(s); `None` inside when it is not GraphQL.
    parsed: OnceLock<parse::ParseOutcome>,
    /// The last link endpoint checked (its `Arc` address) with whether it
    /// matched in the low bit; 0 when none. The handlers of one link share
    /// their endpoint, so a list of many handlers for one endpoint matches
    /// the URL once, not once per handler.
    last_endpoint: AtomicUsize,
}

impl LookupCache {
    /// The request's operation(s), parsed on first use.
    fn parsed(&self, request: &Request) -> Option<&Arc<ParsedGraphql>> {
        self.outcome(request).graphql()
    }

    /// The parse outcome, without printing anything (for the handler index).
    fn outcome(&self, request: &Request) -> &parse::ParseOutcome {
        self.parsed.get_or_init(|| parse::parse_request(request))
    }

    /// Whether `endpoint` matches the request, remembering the last answer.
    fn endpoint_matches(&self, endpoint: &Arc<UrlPredicate>, context: &MatchContext<'_>) -> bool {
        // An `Arc`'s allocation is aligned to at least 4, so bit 0 is free.
        let key = Arc::as_ptr(endpoint) as usize;
        let cached = self.last_endpoint.load(Ordering::Relaxed);
        if cached & !1 == key {
            return cached & 1 == 1;
        }
        let matches = endpoint
            .matches(context.request, context.base_url)
            .is_some();
        self.last_endpoint
            .store(key | usize::from(matches), Ordering::Relaxed);
        matches
    }
}

pub(crate) type DynResolver = dyn Fn(ResolverArgs) -> ResolverCall + Send + Sync;

/// Which operation types a handler accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Accepts {
    Query,
    Mutation,
    Subscription,
    Any,
}

/// The index's source of a request's operation names, for the handlers of
/// one endpoint (`None`: any). One per link, shared by its handlers, so the
/// index asks it once for all of them.
#[derive(Debug)]
pub(super) struct OperationKeys {
    endpoint: Option<Arc<UrlPredicate>>,
}

impl OperationKeys {
    pub(super) fn at(endpoint: Arc<UrlPredicate>) -> Arc<Self> {
        Arc::new(OperationKeys {
            endpoint: Some(endpoint),
        })
    }

    /// The source of every handler not scoped to an endpoint.
    pub(super) fn anywhere() -> Arc<Self> {
        static ANYWHERE: OnceLock<Arc<OperationKeys>> = OnceLock::new();
        Arc::clone(ANYWHERE.get_or_init(|| Arc::new(OperationKeys { endpoint: None })))
    }

    pub(super) fn endpoint(&self) -> Option<&Arc<UrlPredicate>> {
        self.endpoint.as_ref()
    }
}

impl KeySource for OperationKeys {
    fn keys<'a>(&self, context: &'a MatchContext<'_>) -> Keys<'a> {
        let cache = context.state::<LookupCache>();
        // A handler whose endpoint does not match never parses the
        // request: neither does the index on its behalf.
        if let Some(endpoint) = &self.endpoint {
            if !cache.endpoint_matches(endpoint, context) {
                return Keys::NotApplicable;
            }
        }
        match cache.outcome(context.request()) {
            parse::ParseOutcome::NotGraphql => Keys::NotApplicable,
            parse::ParseOutcome::Invalid { .. } => Keys::Unknown,
            parse::ParseOutcome::Graphql(parsed) => {
                let names: Option<Vec<&str>> = parsed
                    .operations
                    .iter()
                    .map(|op| op.operation_name())
                    .collect();
                // An anonymous operation: named handlers warn about it, so they look.
                names.map_or(Keys::Unknown, Keys::Named)
            }
        }
    }
}

pub(crate) struct GraphqlHandler {
    accepts: Accepts,
    /// `None` for `operation()`: every operation, anonymous ones included.
    predicate: Option<Predicate>,
    /// The endpoint (`None`: any), shared by the handlers of one link.
    keys: Arc<OperationKeys>,
    pub(super) resolver: Arc<DynResolver>,
    header: String,
}

impl GraphqlHandler {
    pub(super) fn handler<F, R, M>(
        accepts: Accepts,
        predicate: Option<Predicate>,
        keys: Arc<OperationKeys>,
        resolver: F,
    ) -> Handler
    where
        F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        let origin = keys
            .endpoint()
            .map_or("*".to_owned(), |endpoint| endpoint.describe());
        let header = match (accepts, &predicate) {
            (Accepts::Query, Some(predicate)) => {
                format!("query {} (origin: {origin})", predicate.describe())
            }
            (Accepts::Mutation, Some(predicate)) => {
                format!("mutation {} (origin: {origin})", predicate.describe())
            }
            (Accepts::Subscription, Some(predicate)) => {
                format!("subscription {} (origin: {origin})", predicate.describe())
            }
            _ => format!("operation (origin: {origin})"),
        };
        Handler::new(GraphqlHandler {
            accepts,
            predicate,
            keys,
            resolver: Arc::new(move |args| ResolverCall::new(resolver(args))),
            header,
        })
    }

    /// Whether this handler answers `operation` (endpoint aside).
    pub(super) fn matches(&self, operation: &OperationInfo, parsed: &ParsedGraphql) -> bool {
        let type_matches = match self.accepts {
            Accepts::Query => operation.operation_type == OperationType::Query,
            Accepts::Mutation => operation.operation_type == OperationType::Mutation,
            Accepts::Subscription => operation.operation_type == OperationType::Subscription,
            Accepts::Any => true,
        };
        if !type_matches {
            return false;
        }
        let Some(predicate) = &self.predicate else {
            return true;
        };
        let Some(name) = operation.operation_name() else {
            parsed.warn_anonymous(operation);
            return false;
        };
        predicate.matches(name, operation)
    }
}

impl HandlerKind for GraphqlHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn index_hint(&self) -> IndexHint {
        // A subscription handler also takes WebSocket upgrades, which carry
        // no operation for the index to see.
        if matches!(self.accepts, Accepts::Subscription) {
            return IndexHint::always();
        }
        match self.predicate.as_ref().and_then(Predicate::exact_name) {
            Some(name) => IndexHint::key(Arc::clone(&self.keys) as Arc<dyn KeySource>, name),
            None => IndexHint::always(),
        }
    }

    fn method(&self) -> Option<&Method> {
        None
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.keys
            .endpoint()
            .and_then(|endpoint| endpoint.suggestion_text())
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        #[cfg(all(feature = "ws", not(target_arch = "wasm32")))]
        if matches!(self.accepts, Accepts::Subscription) && context.request.is_websocket_upgrade() {
            return over_ws::try_upgrade(self.keys.endpoint().map(|e| &**e), context);
        }
        // The endpoint first: a request to another URL is not even parsed.
        let cache = context.state::<LookupCache>();
        if let Some(endpoint) = self.keys.endpoint() {
            if !cache.endpoint_matches(endpoint, context) {
                return None;
            }
        }
        let parsed = cache.parsed(context.request)?;
        if parsed.batch.is_some() {
            return try_match_batch(self, context, parsed);
        }
        let operation = &parsed.operations[0];
        if !self.matches(operation, parsed) {
            return None;
        }
        let operation = operation.clone();
        let request = context.request.clone();
        let cookies = context.cookies().clone();
        let request_id = context.request_id;
        let resolver = Arc::clone(&self.resolver);
        let prefers_graphql_response = parsed.prefers_graphql_response;
        Some(Matched::new(move |call| {
            let args = ResolverArgs::from_parts(&operation, request, cookies, request_id, call);
            let call = resolver(args);
            if prefers_graphql_response {
                with_graphql_content_type(call)
            } else {
                call
            }
        }))
    }
}

/// The lookup reached `handler` with a batched request: its call if it
/// matches at least one operation not answered yet (see `batch.rs`).
fn try_match_batch(
    handler: &GraphqlHandler,
    context: &MatchContext<'_>,
    parsed: &Arc<ParsedGraphql>,
) -> Option<Matched> {
    let batch = parsed.batch.as_ref()?;
    let pending: Vec<usize> = batch
        .unanswered()
        .into_iter()
        .filter(|&index| handler.matches(&parsed.operations[index], parsed))
        .collect();
    if pending.is_empty() {
        return None;
    }
    let resolver = Arc::clone(&handler.resolver);
    let parsed = Arc::clone(parsed);
    let request = context.request.clone();
    let cookies = context.cookies().clone();
    let request_id = context.request_id;
    Some(Matched::new(move |call| {
        ResolverCall::pending(Box::pin(resolve_batch(
            resolver, parsed, pending, request, cookies, request_id, call,
        )))
    }))
}

async fn resolve_batch(
    resolver: Arc<DynResolver>,
    parsed: Arc<ParsedGraphql>,
    pending: Vec<usize>,
    request: Request,
    cookies: Cookies,
    request_id: RequestId,
    call: CallContext,
) -> Resolution {
    let batch = parsed
        .batch
        .as_ref()
        .expect("a batch invocation is only made for a batch");
    for index in pending {
        let operation = &parsed.operations[index];
        let args = ResolverArgs::from_parts(
            operation,
            request.clone(),
            cookies.clone(),
            request_id,
            call.clone(),
        );
        let resolution = resolver(args).resolve().await;
        if let Some(decided) = batch::record(batch, index, resolution) {
            return decided;
        }
    }
    batch::combined(batch, parsed.prefers_graphql_response)
}

/// The resolver's response, sent as `application/graphql-response+json`
/// when its content type is the default `application/json`.
fn with_graphql_content_type(call: ResolverCall) -> ResolverCall {
    fn adjust(resolution: Resolution) -> Resolution {
        let Resolution::Respond(response) = resolution else {
            return resolution;
        };
        if response.kind() != Kind::Mock
            || response.headers().contains_key(http::header::CONTENT_TYPE)
        {
            return Resolution::Respond(response);
        }
        // The constructor's default content type is only visible once built.
        let default_is_json = response.clone().into_http().is_ok_and(|built| {
            built
                .headers()
                .get(http::header::CONTENT_TYPE)
                .is_some_and(|value| value == "application/json")
        });
        Resolution::Respond(if default_is_json {
            response.header("content-type", GRAPHQL_RESPONSE_JSON)
        } else {
            response
        })
    }
    call.map(adjust)
}
