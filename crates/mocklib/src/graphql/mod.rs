//! The `graphql` namespace: handlers for GraphQL APIs, matched by operation
//! rather than by URL (MSW: [`graphql`](https://mswjs.io/docs/api/graphql), which MSW recommends
//! over `http` for GraphQL APIs).
//!
//! ```
//! use mocklib::{graphql, HttpResponse};
//! use serde_json::json;
//!
//! let github = graphql::link("https://api.github.com/graphql");
//! let handlers = [
//!     // `query GetUser { … }` sent to any endpoint
//!     graphql::query("GetUser", |args| {
//!         graphql::data(json!({ "user": { "id": args.variables["id"], "name": "John" } }))
//!     }),
//!     // `mutation UpdatePost { … }`, async, with typed variables
//!     graphql::mutation("UpdatePost", |args| async move {
//!         #[derive(serde::Deserialize)]
//!         struct Vars { id: u32, title: String }
//!         let vars: Vars = args.variables()?;
//!         Ok::<_, graphql::VariablesError>(graphql::data(json!({
//!             "updatePost": { "id": vars.id, "title": vars.title }
//!         })))
//!     }),
//!     // only operations sent to one endpoint
//!     github.query("GetRepository", |_| graphql::errors(json!([{ "message": "Not found" }]))),
//!     // any operation, named or anonymous (spy on everything, then fall through)
//!     graphql::operation(|args| {
//!         println!("{} {:?}", args.operation_type, args.operation_name);
//!     }),
//! ];
//! # let _ = handlers;
//! ```
//!
//! # Handlers
//!
//! | Function | Matches |
//! |---|---|
//! | [`query(predicate, resolver)`](query) | named `query` operations whose name matches |
//! | [`mutation(predicate, resolver)`](mutation) | named `mutation` operations whose name matches |
//! | [`operation(resolver)`](operation) | every operation: queries, mutations, subscriptions, named or anonymous |
//! | [`link(url)`](link)`.query/.mutation/.operation` | the same, only for requests to that endpoint |
//!
//! A predicate is an exact operation name (`&str`, `String`), a
//! [`regex::Regex`](https://docs.rs/regex/1/regex/struct.Regex.html) (feature `regex`) tested against the name, or a closure over the operation
//! ([`GraphqlPredicate::custom`]). Handlers are ordinary [`Handler`]s:
//! `.once()`, `use_handlers`, boundaries, `list_handlers()` and life-cycle
//! events work as for `http`, and `http` and `graphql` handlers mix freely in
//! one list (the first to answer wins, in list order).
//!
//! `list_handlers()` prints a GraphQL handler as `query GetUser (origin: *)`,
//! `mutation UpdatePost (origin: https://api.example.com/graphql)`,
//! `query /^Get/ (origin: *)` or `operation (origin: *)`.
//!
//! # The resolver
//!
//! A sync or async closure taking one [`GraphqlResolverArgs`] — `query`,
//! `variables`, `operation_name`, `operation_type`, `cookies`, `request`,
//! `request_id` — and returning anything an `http` resolver may return (see
//! [`resolver`](crate::resolver)): an [`HttpResponse`], nothing (fall through
//! to the next matching handler), [`passthrough()`](crate::passthrough),
//! [`HttpResponse::error()`], a `Result`…
//!
//! A GraphQL response is JSON with `data` and/or `errors`;
//! `HttpResponse::json(&json!({ "data": … }))` is sent unchanged, and
//! [`data`] / [`errors`] / [`error_message`] write the common shapes for you.
//! When the request's `Accept` header prefers
//! `application/graphql-response+json` over `application/json` (by quality,
//! then specificity, then order), a response whose content type is the
//! default `application/json` is sent as `application/graphql-response+json`;
//! a content type you set yourself is never changed.
//!
//! # What counts as a GraphQL request
//!
//! | Form | Read from |
//! |---|---|
//! | `POST` with a JSON body (any content type; `application/json` usually) | `query`, `variables`, `operationName` |
//! | `GET` | the `query`, `variables` (JSON text) and `operationName` query parameters |
//! | `POST multipart/form-data` ([GraphQL multipart request spec]) | the `operations` field (JSON), with the files of the `map` field substituted into it |
//! | `POST` with a JSON array of operations (a batch) | each element as above; see [Batches](#batches) |
//!
//! The document is parsed once per request, however many handlers look at it.
//! A document with several operations is narrowed by `operationName`.
//!
//! **Anonymous operations** (`query { … }`, `{ … }`) are matched only by
//! [`operation`]; `query`/`mutation` handlers skip them, and the first one
//! to do so prints one warning for the request (not one per handler).
//!
//! **Not GraphQL.** A request that does not have this shape (a body that is
//! not JSON, JSON without `query`, another method, a multipart body that does
//! not parse or has no `operations` field) is silently not a GraphQL
//! request: GraphQL handlers skip it, `http` handlers may answer it, or it is
//! unhandled. A request that *looks* like GraphQL but breaks the rules — a
//! document that does not parse (the parser's message, with line and column,
//! is printed), `variables` that is not an object, `query` or
//! `operationName` that is not a string, an `operationName` the document
//! lacks, several operations and no `operationName`, a multipart `map` that
//! is not JSON or points at a missing file or path — is not treated as
//! GraphQL either, and one warning per request says why. mocklib never
//! answers such a request with an error of its own: it is not the server,
//! and an `http` handler (or the real server) may want it. No input panics.
//!
//! # File uploads
//!
//! In a multipart request each file is substituted into `variables` (at
//! every path the `map` lists) by a JSON description, the shape of a
//! JavaScript `File` plus its text ([`GraphqlUpload`]):
//!
//! ```json
//! { "name": "a.txt", "type": "text/plain", "size": 5, "text": "hello" }
//! ```
//!
//! `text` is present when the file is valid UTF-8. Read the raw bytes with
//! [`args.request.form()`](crate::Request::form) when you need them.
//!
//! # Batches
//!
//! A `POST` whose JSON body (or multipart `operations`) is an array is a
//! batch: each operation is resolved on its own, and the request is answered
//! with a JSON array holding, in order, the body (`{ "data": … }` /
//! `{ "errors": … }`) of each operation's response. The rules:
//!
//! 1. For each operation, the first GraphQL handler in list order whose
//!    predicate (and endpoint) matches and whose resolver answers it wins, as
//!    for a single operation; a resolver that answers nothing leaves it to the
//!    next matching handler.
//! 2. The batch is mocked only when **every** operation is answered by a
//!    GraphQL handler. Otherwise the request goes on down the list like any
//!    request no one answered (an `http` handler may still answer it whole;
//!    failing that it is performed as it is), and a warning names the
//!    operations no handler answered.
//! 3. Each answer's body must be JSON; its status and headers are dropped
//!    (the batch is a `200`), except `Set-Cookie` headers, which are kept.
//! 4. A resolver that fails (an `Err`, a panic, a body that is not JSON) fails
//!    the whole batch with the usual 500 "Unhandled Exception"; a resolver
//!    that returns [`HttpResponse::error()`] or
//!    [`passthrough()`](crate::passthrough) decides for the whole batch.
//! 5. A `.once()` handler is used up by the request, even if it answered
//!    several operations of the batch.
//!
//! # The parser
//!
//! Documents are parsed by mocklib itself, with no dependency: the parser
//! checks a document against the grammar of GraphQL executable documents in
//! the [GraphQL specification] (with the `\u{…}` escapes and full Unicode of
//! its current edition) and reads each operation's type and name, nothing
//! more. Its errors name the line and column and what was expected
//! (``Parse error at 1:18: expected a field, `...` or `}`, found the end of
//! the document``). Selection sets, lists, objects and list types may nest
//! 128 levels deep.
//!
//! [GraphQL multipart request spec]: https://github.com/jaydenseric/graphql-multipart-request-spec
//! [GraphQL specification]: https://spec.graphql.org/

mod batch;
mod document;
#[cfg(all(feature = "ws", not(target_arch = "wasm32")))]
mod over_ws;
mod parse;
mod subscription;

pub use subscription::{Subscription, SubscriptionArgs};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use http::Method;
#[cfg(feature = "regex")]
use regex::Regex;
use serde_json::Value;

pub(crate) use parse::ParsedGraphql;

use crate::cookies::Cookies;
use crate::handler::{Handler, HandlerLogic, Invocation, LookupContext};
use crate::matching::{PatternError, Predicate};
use crate::request::Request;
use crate::resolver::{
    CallContext, RequestId, Resolution, ResolverCall, ResolverOutput, SessionOutput,
};
use crate::response::{HttpResponse, Kind};

const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";

/// The type of a GraphQL operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationType {
    /// `query { … }` (also the shorthand `{ … }`).
    Query,
    /// `mutation { … }`.
    Mutation,
    /// `subscription { … }` (matched only by [`operation`]).
    Subscription,
}

impl OperationType {
    /// `"query"`, `"mutation"` or `"subscription"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationType::Query => "query",
            OperationType::Mutation => "mutation",
            OperationType::Subscription => "subscription",
        }
    }
}

impl std::fmt::Display for OperationType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operation a request carries, as a [`GraphqlPredicate::custom`]
/// closure sees it.
#[derive(Debug, Clone)]
pub struct OperationInfo {
    operation_type: OperationType,
    operation_name: Option<String>,
    query: String,
    variables: Value,
}

impl OperationInfo {
    /// Query, mutation or subscription.
    pub fn operation_type(&self) -> OperationType {
        self.operation_type
    }

    /// The operation's name; `None` for an anonymous operation.
    pub fn operation_name(&self) -> Option<&str> {
        self.operation_name.as_deref()
    }

    /// The whole document text, as sent.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The variables (an object; empty when none were sent).
    pub fn variables(&self) -> &Value {
        &self.variables
    }
}

/// How a [`query`] or [`mutation`] handler picks operations by name. Usually
/// built implicitly from a `&str`, a `String` or a `Regex`
/// ([`IntoGraphqlPredicate`]); build one explicitly for a closure.
#[derive(Clone)]
pub struct GraphqlPredicate {
    kind: PredicateKind,
}

#[derive(Clone)]
enum PredicateKind {
    Name(String),
    #[cfg(feature = "regex")]
    Regex(Regex),
    Custom(Arc<dyn Fn(&OperationInfo) -> bool + Send + Sync>),
}

impl GraphqlPredicate {
    /// The name of an exact-name predicate (what the handler index keys on).
    fn exact_name(&self) -> Option<&str> {
        match &self.kind {
            PredicateKind::Name(name) => Some(name),
            #[cfg(feature = "regex")]
            PredicateKind::Regex(_) => None,
            PredicateKind::Custom(_) => None,
        }
    }

    /// Operations with exactly this name (case-sensitive, as GraphQL names are).
    pub fn name(name: impl Into<String>) -> Self {
        GraphqlPredicate {
            kind: PredicateKind::Name(name.into()),
        }
    }

    /// Operations whose name the regex matches (anywhere; anchor it with
    /// `^…$` for the whole name).
    #[cfg(feature = "regex")]
    #[cfg_attr(docsrs, doc(cfg(feature = "regex")))]
    pub fn regex(regex: Regex) -> Self {
        GraphqlPredicate {
            kind: PredicateKind::Regex(regex),
        }
    }

    /// Operations the closure accepts. It sees only named operations of the
    /// handler's type (anonymous ones go to [`operation`]).
    ///
    /// ```
    /// use mocklib::graphql::{self, GraphqlPredicate};
    ///
    /// graphql::query(
    ///     GraphqlPredicate::custom(|op| op.variables().get("id").is_some()),
    ///     |_| graphql::data(serde_json::json!({ "user": null })),
    /// );
    /// ```
    pub fn custom(matches: impl Fn(&OperationInfo) -> bool + Send + Sync + 'static) -> Self {
        GraphqlPredicate {
            kind: PredicateKind::Custom(Arc::new(matches)),
        }
    }

    /// The predicate as text, for handler headers.
    pub fn describe(&self) -> String {
        match &self.kind {
            PredicateKind::Name(name) => name.clone(),
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => format!("/{}/", regex.as_str()),
            PredicateKind::Custom(_) => "<custom predicate>".to_owned(),
        }
    }

    fn matches(&self, name: &str, operation: &OperationInfo) -> bool {
        match &self.kind {
            PredicateKind::Name(expected) => expected == name,
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => regex.is_match(name),
            PredicateKind::Custom(matches) => matches(operation),
        }
    }
}

impl std::fmt::Debug for GraphqlPredicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("GraphqlPredicate")
            .field(&self.describe())
            .finish()
    }
}

/// Anything that can pick operations for [`query`] / [`mutation`]: `&str`,
/// `String`, `Regex` (feature `regex`), [`GraphqlPredicate`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not pick GraphQL operations",
    label = "not an operation predicate",
    note = "an operation predicate is a name (`&str`, `String`), a `regex::Regex` \
            (with mocklib's `regex` feature) or a `GraphqlPredicate`: wrap a closure \
            over the operation in `GraphqlPredicate::custom(|operation| ..)`"
)]
pub trait IntoGraphqlPredicate {
    /// Converts the value.
    fn into_graphql_predicate(self) -> GraphqlPredicate;
}

impl IntoGraphqlPredicate for GraphqlPredicate {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        self
    }
}

impl IntoGraphqlPredicate for &str {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::name(self)
    }
}

impl IntoGraphqlPredicate for String {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::name(self)
    }
}

impl IntoGraphqlPredicate for &String {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::name(self.as_str())
    }
}

#[cfg(feature = "regex")]
#[cfg_attr(docsrs, doc(cfg(feature = "regex")))]
impl IntoGraphqlPredicate for Regex {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::regex(self)
    }
}

/// The one argument every GraphQL resolver receives. Fields are public so it
/// can be destructured: `|GraphqlResolverArgs { variables, cookies, .. }|`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GraphqlResolverArgs {
    /// The whole GraphQL document, as sent.
    pub query: String,
    /// The operation's variables: always a JSON object (empty when none were
    /// sent). Uploaded files appear as [`GraphqlUpload`] descriptions. Read
    /// them into a typed struct with [`variables()`](Self::variables).
    pub variables: Value,
    /// The name of the operation being resolved; `None` when anonymous.
    #[doc(alias = "operationName")]
    pub operation_name: Option<String>,
    /// Query, mutation or subscription.
    pub operation_type: OperationType,
    /// The request's cookies.
    pub cookies: Cookies,
    /// The intercepted HTTP request (its body can be read any number of times).
    pub request: Request,
    /// An id unique to this request, the same one life-cycle events carry.
    /// The operations of a batch share their request's id.
    pub request_id: RequestId,
    call: CallContext,
}

impl crate::resolver::CallHistory for GraphqlResolverArgs {
    fn previous_calls(&self) -> usize {
        self.call.previous_calls
    }
}

impl GraphqlResolverArgs {
    fn from_parts(
        operation: &OperationInfo,
        request: Request,
        cookies: Cookies,
        request_id: RequestId,
        call: CallContext,
    ) -> Self {
        GraphqlResolverArgs {
            call,
            query: operation.query.clone(),
            variables: operation.variables.clone(),
            operation_name: operation.operation_name.clone(),
            operation_type: operation.operation_type,
            cookies,
            request,
            request_id,
        }
    }

    /// Registers `cleanup` to run once this answer is over (after the
    /// response is sent, or when the resolver returns anything else); see
    /// [`ResolverArgs::finalize`](crate::ResolverArgs::finalize).
    pub fn finalize(&self, cleanup: impl FnOnce() + Send + 'static) {
        self.call.finalizers.push(Box::new(cleanup));
    }

    /// How many times this handler's resolver ran before this call, in the
    /// current scope; see [`sequence`](crate::sequence).
    pub fn previous_calls(&self) -> usize {
        self.call.previous_calls
    }

    /// The variables read into `T` with serde.
    ///
    /// ```
    /// use mocklib::graphql;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct GetUser { id: String }
    ///
    /// graphql::query("GetUser", |args| {
    ///     let vars: GetUser = args.variables()?;
    ///     Ok::<_, graphql::VariablesError>(graphql::data(serde_json::json!({ "user": { "id": vars.id } })))
    /// });
    /// ```
    pub fn variables<T: serde::de::DeserializeOwned>(&self) -> Result<T, VariablesError> {
        T::deserialize(&self.variables).map_err(VariablesError)
    }
}

/// The variables are not of the shape a resolver asked for. Returned from a
/// resolver with `?`, the request gets a 500 naming the serde error.
#[derive(Debug, thiserror::Error)]
#[error("the GraphQL variables are not of the expected shape: {0}")]
pub struct VariablesError(#[source] pub serde_json::Error);

/// What an uploaded file becomes in the variables of a multipart request (see
/// [File uploads](self#file-uploads)); use it as a field type in typed
/// variables.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct UploadVars { file: mocklib::graphql::GraphqlUpload }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GraphqlUpload {
    /// The file name the client gave (`""` if none).
    pub name: String,
    /// The part's content type (`""` if none).
    #[serde(rename = "type")]
    pub content_type: String,
    /// The size in bytes.
    pub size: u64,
    /// The content as text, when it is valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `{"data": data}` as JSON: the usual successful GraphQL response.
///
/// ```
/// use mocklib::graphql;
/// use serde_json::json;
///
/// let handler = graphql::query("GetUser", |_| graphql::data(json!({ "user": { "name": "John" } })));
/// # let _ = handler;
/// ```
pub fn data(data: impl serde::Serialize) -> HttpResponse {
    HttpResponse::json(&serde_json::json!({ "data": data }))
}

/// `{"errors": errors}` as JSON (status 200, as GraphQL servers answer
/// errors); `errors` is the array of GraphQL errors.
///
/// ```
/// use mocklib::graphql;
/// use serde_json::json;
///
/// let handler = graphql::query("GetUser", |_| graphql::errors(json!([{ "message": "Not authorized", "path": ["user"] }])));
/// # let _ = handler;
/// ```
pub fn errors(errors: impl serde::Serialize) -> HttpResponse {
    HttpResponse::json(&serde_json::json!({ "errors": errors }))
}

/// `{"errors": [{"message": message}]}`: one GraphQL error.
pub fn error_message(message: impl Into<String>) -> HttpResponse {
    errors([serde_json::json!({ "message": message.into() })])
}

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
enum Accepts {
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
    resolver: Arc<DynResolver>,
    header: String,
}

impl GraphqlHandler {
    fn handler<F, R, M>(
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
    fn matches(&self, operation: &OperationInfo, parsed: &ParsedGraphql) -> bool {
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

/// A handler for `query` operations whose name matches `predicate`, sent to
/// any endpoint (MSW: [`graphql.query(operationName, resolver)`][msw]).
///
/// [msw]: https://mswjs.io/docs/api/graphql
pub fn query<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoGraphqlPredicate,
    F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Query,
        Some(predicate.into_graphql_predicate()),
        None,
        resolver,
    )
}

/// A handler for `mutation` operations whose name matches `predicate`, sent
/// to any endpoint (MSW: [`graphql.mutation(operationName, resolver)`][msw]).
///
/// [msw]: https://mswjs.io/docs/api/graphql
pub fn mutation<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoGraphqlPredicate,
    F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Mutation,
        Some(predicate.into_graphql_predicate()),
        None,
        resolver,
    )
}

/// A handler for every GraphQL operation — query, mutation or subscription,
/// named or anonymous — sent to any endpoint (MSW:
/// [`graphql.operation(resolver)`](https://mswjs.io/docs/api/graphql)).
pub fn operation<F, R, M>(resolver: F) -> Handler
where
    F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    GraphqlHandler::handler(Accepts::Any, None, None, resolver)
}

/// A handler for `subscription` operations whose name matches `predicate`,
/// sent to any endpoint (MSW 3: `graphql.subscription`). The resolver
/// publishes results through `args.subscription` for as long as it runs:
///
/// ```
/// use std::time::Duration;
/// use mocklib::{delay, graphql};
/// use serde_json::json;
///
/// graphql::subscription("OnPrice", |args| async move {
///     let symbol = args.operation.variables["symbol"].clone();
///     for price in [100, 101] {
///         args.subscription.next_data(json!({ "price": { "symbol": symbol, "value": price } }));
///         delay(Duration::from_millis(50)).await;
///     }
///     args.subscription.complete();
/// });
/// ```
///
/// Over HTTP the answer is an event stream as in GraphQL over SSE
/// (`event: next`, then `event: complete`). With the `ws` feature the
/// handler also takes WebSocket connections to its endpoint that speak
/// `graphql-transport-ws`: subscriptions stream as `next` messages, and
/// queries and mutations sent over the socket resolve against the other
/// `graphql` handlers.
pub fn subscription<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoGraphqlPredicate,
    F: Fn(SubscriptionArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Subscription,
        Some(predicate.into_graphql_predicate()),
        None,
        subscription::resolver(resolver),
    )
}

/// Handlers scoped to one GraphQL endpoint (MSW: [`graphql.link(url)`][msw]).
///
/// [msw]: https://mswjs.io/docs/api/graphql
///
/// The URL is a predicate like an `http` one: an absolute URL
/// (`https://api.example.com/graphql`), a path relative to the base URL, or
/// a pattern with `*`. Its query string is ignored when matching, so `GET`
/// requests match too.
///
/// ```
/// use mocklib::graphql;
/// use serde_json::json;
///
/// let github = graphql::link("https://api.github.com/graphql");
/// let stripe = graphql::link("https://api.stripe.com/graphql");
/// let handlers = [
///     github.query("GetUser", |_| graphql::data(json!({ "user": { "login": "octocat" } }))),
///     stripe.query("GetUser", |_| graphql::data(json!({ "user": { "email": "a@b.c" } }))),
/// ];
/// # let _ = handlers;
/// ```
#[derive(Clone, Debug)]
pub struct GraphqlLink {
    endpoint: Arc<Predicate>,
}

/// Handlers scoped to the endpoint `url`.
///
/// # Panics
/// When `url` is an invalid pattern (see [`try_link`]).
#[track_caller]
pub fn link(url: &str) -> GraphqlLink {
    try_link(url).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`link`], returning an invalid URL pattern as an error instead of
/// panicking.
pub fn try_link(url: &str) -> Result<GraphqlLink, PatternError> {
    let url = crate::matching::as_http_url(url);
    Ok(GraphqlLink {
        endpoint: Arc::new(Predicate::path(&url)?),
    })
}

impl GraphqlLink {
    /// The endpoint as given, as in handler headers.
    pub fn url(&self) -> String {
        self.endpoint.describe()
    }

    /// Like [`graphql::query`](query), for this endpoint only.
    pub fn query<P, F, R, M>(&self, predicate: P, resolver: F) -> Handler
    where
        P: IntoGraphqlPredicate,
        F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        self.handler(
            Accepts::Query,
            Some(predicate.into_graphql_predicate()),
            resolver,
        )
    }

    /// Like [`graphql::mutation`](mutation), for this endpoint only.
    pub fn mutation<P, F, R, M>(&self, predicate: P, resolver: F) -> Handler
    where
        P: IntoGraphqlPredicate,
        F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        self.handler(
            Accepts::Mutation,
            Some(predicate.into_graphql_predicate()),
            resolver,
        )
    }

    /// Like [`graphql::subscription`](subscription), for this endpoint only.
    pub fn subscription<P, F, R, M>(&self, predicate: P, resolver: F) -> Handler
    where
        P: IntoGraphqlPredicate,
        F: Fn(SubscriptionArgs) -> R + Send + Sync + 'static,
        R: SessionOutput<M>,
    {
        let predicate = Some(predicate.into_graphql_predicate());
        self.handler(
            Accepts::Subscription,
            predicate,
            subscription::resolver(resolver),
        )
    }

    /// Like [`graphql::operation`](operation), for this endpoint only.
    pub fn operation<F, R, M>(&self, resolver: F) -> Handler
    where
        F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        self.handler(Accepts::Any, None, resolver)
    }

    /// A handler for this endpoint only.
    fn handler<F, R, M>(
        &self,
        accepts: Accepts,
        predicate: Option<GraphqlPredicate>,
        resolver: F,
    ) -> Handler
    where
        F: Fn(GraphqlResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        GraphqlHandler::handler(
            accepts,
            predicate,
            Some(Arc::clone(&self.endpoint)),
            resolver,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_name_the_operation_and_the_origin() {
        let noop = |_: GraphqlResolverArgs| {};
        assert_eq!(query("GetUser", noop).header(), "query GetUser (origin: *)");
        assert_eq!(
            link("https://api.example.com/graphql")
                .mutation("UpdatePost", noop)
                .header(),
            "mutation UpdatePost (origin: https://api.example.com/graphql)"
        );
        #[cfg(feature = "regex")]
        assert_eq!(
            query(Regex::new("^Get").unwrap(), noop).header(),
            "query /^Get/ (origin: *)"
        );
        assert_eq!(operation(noop).header(), "operation (origin: *)");
        assert!(try_link("https://api.example.com/:").is_err());
    }

    #[test]
    fn response_helpers() {
        let response = data(json!({ "a": 1 })).into_http().unwrap();
        assert_eq!(
            &response.body().as_bytes().unwrap()[..],
            br#"{"data":{"a":1}}"#
        );
        let response = error_message("nope").into_http().unwrap();
        assert_eq!(
            &response.body().as_bytes().unwrap()[..],
            br#"{"errors":[{"message":"nope"}]}"#
        );
    }

    #[test]
    fn typed_variables() {
        #[derive(serde::Deserialize)]
        struct Vars {
            id: u32,
        }
        let info = OperationInfo {
            operation_type: OperationType::Query,
            operation_name: Some("A".into()),
            query: "query A { a }".into(),
            variables: json!({ "id": 7 }),
        };
        let args = GraphqlResolverArgs::from_parts(
            &info,
            Request::new(Method::POST, url::Url::parse("http://x/").unwrap()),
            Cookies::default(),
            RequestId::next(),
            CallContext::default(),
        );
        assert_eq!(args.variables::<Vars>().unwrap().id, 7);
        assert!(args.variables::<Vec<u8>>().is_err());
    }
}
