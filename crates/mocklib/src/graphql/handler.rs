//! The GraphQL handler: which requests it takes, and how it answers them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use http::Method;

use super::batch;
#[cfg(all(feature = "ws", not(target_arch = "wasm32")))]
use super::over_ws;
use super::parse::{self, ParsedGraphql};
use super::{GraphqlPredicate, GraphqlResolverArgs, OperationInfo, OperationType};
use crate::handler::{Handler, HandlerLogic, Invocation, LookupContext};
use crate::matching::Predicate;
use crate::request::Request;
use crate::resolver::{Resolution, ResolverCall, ResolverOutput};
use crate::response::Kind;

pub(super) const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";

/// The GraphQL state of one lookup, kept in its `LookupContext` and shared
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
    fn endpoint_matches(&self, endpoint: &Arc<Predicate>, context: &LookupContext<'_>) -> bool {
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

pub(crate) type DynResolver = dyn Fn(GraphqlResolverArgs) -> ResolverCall + Send + Sync;

/// Which operation types a handler accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Accepts {
    Query,
    Mutation,
    Subscription,
    Any,
}

pub(crate) struct GraphqlHandler {
    accepts: Accepts,
    /// `None` for `operation()`: every operation, anonymous ones included.
    predicate: Option<GraphqlPredicate>,
    /// `None`: any endpoint. Shared by the handlers of one link.
    endpoint: Option<Arc<Predicate>>,
    pub(super) resolver: Arc<DynResolver>,
    header: String,
}

impl GraphqlHandler {
    pub(super) fn handler<F, R, M>(
        accepts: Accepts,
        predicate: Option<GraphqlPredicate>,
        endpoint: Option<Arc<Predicate>>,
        resolver: F,
    ) -> Handler
    where
        F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        let origin = endpoint
            .as_ref()
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
        Handler::new(Arc::new(GraphqlHandler {
            accepts,
            predicate,
            endpoint,
            resolver: Arc::new(move |args| resolver(args).into_call().0),
            header,
        }))
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

impl crate::handler::OperationSource for LookupContext<'_> {
    fn endpoint_applies(&self, endpoint: &Arc<Predicate>) -> bool {
        self.namespace_state::<LookupCache>()
            .endpoint_matches(endpoint, self)
    }

    fn operations(&self) -> crate::handler::Operations<'_> {
        use crate::handler::Operations;
        match self.namespace_state::<LookupCache>().outcome(self.request) {
            parse::ParseOutcome::NotGraphql => Operations::NotGraphql,
            parse::ParseOutcome::Invalid { .. } => Operations::AskEveryone,
            parse::ParseOutcome::Graphql(parsed) => {
                let names: Option<Vec<&str>> = parsed
                    .operations
                    .iter()
                    .map(|op| op.operation_name())
                    .collect();
                // An anonymous operation: named handlers warn about it, so they look.
                names.map_or(Operations::AskEveryone, Operations::Named)
            }
        }
    }
}

impl HandlerLogic for GraphqlHandler {
    fn header(&self) -> &str {
        &self.header
    }

    fn index_hint(&self) -> crate::handler::IndexHint {
        // A subscription handler also takes WebSocket upgrades, which carry
        // no operation for the index to see.
        if matches!(self.accepts, Accepts::Subscription) {
            return crate::handler::IndexHint::Always;
        }
        match self
            .predicate
            .as_ref()
            .and_then(GraphqlPredicate::exact_name)
        {
            Some(name) => crate::handler::IndexHint::Operation {
                name: name.to_owned(),
                endpoint: self.endpoint.clone(),
            },
            None => crate::handler::IndexHint::Always,
        }
    }

    fn method(&self) -> Option<&Method> {
        None
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.endpoint
            .as_deref()
            .and_then(Predicate::suggestion_text)
    }

    fn try_match(&self, context: &LookupContext<'_>) -> Option<Invocation> {
        #[cfg(all(feature = "ws", not(target_arch = "wasm32")))]
        if matches!(self.accepts, Accepts::Subscription) && context.request.is_websocket_upgrade() {
            return over_ws::try_upgrade(self.endpoint.as_deref(), context);
        }
        // The endpoint first: a request to another URL is not even parsed.
        let cache = context.namespace_state::<LookupCache>();
        if let Some(endpoint) = &self.endpoint {
            if !cache.endpoint_matches(endpoint, context) {
                return None;
            }
        }
        let parsed = cache.parsed(context.request)?;
        if parsed.batch.is_some() {
            return batch::try_match(self, context, parsed);
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
        Some(Box::new(move |call| {
            let args =
                GraphqlResolverArgs::from_parts(&operation, request, cookies, request_id, call);
            let call = resolver(args);
            if prefers_graphql_response {
                with_graphql_content_type(call)
            } else {
                call
            }
        }))
    }
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
    match call {
        ResolverCall::Ready(resolution) => ResolverCall::Ready(adjust(resolution)),
        ResolverCall::Pending(future) => {
            ResolverCall::Pending(Box::pin(async move { adjust(future.await) }))
        }
    }
}
