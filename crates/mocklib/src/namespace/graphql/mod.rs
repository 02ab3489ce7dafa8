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
//! ([`Predicate::custom`]). Handlers are ordinary [`Handler`]s:
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
//! A sync or async closure taking one [`ResolverArgs`] — `query`,
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
//! JavaScript `File` plus its text ([`Upload`]):
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
//! # Contracts
//!
//! A [`Schema`] read from SDL is the [contract](crate::contract) of an
//! endpoint: [`Schema::contract`] checks every GraphQL request answered
//! there against the schema, and the mocked `data` against the operation's
//! selection set. See [`schema`] for what is checked and how findings
//! point into the exchange.
//!
//! ```
//! use mocklib::graphql::Schema;
//!
//! let schema = Schema::from_sdl("type Query { user(id: ID!): User } type User { name: String! }")?;
//! let contract = schema.contract("https://api.example.com/graphql")?;
//! // server.attach_contract(contract);
//! # let _ = contract;
//! # Ok::<(), mocklib::graphql::SchemaError>(())
//! ```
//!
//! # The parser
//!
//! Documents are parsed by mocklib itself, with no dependency: the parser
//! checks a document against the grammar of GraphQL executable documents in
//! the [GraphQL specification] (with the `\u{…}` escapes and full Unicode of
//! its current edition) and reads each operation's type and name, nothing
//! more (contracts build a syntax tree of the operation, and read schemas
//! in SDL, with the same lexer). Its errors name the line and column and what was expected
//! (``Parse error at 1:18: expected a field, `...` or `}`, found the end of
//! the document``). Selection sets, lists, objects and list types may nest
//! 128 levels deep.
//!
//! [GraphQL multipart request spec]: https://github.com/jaydenseric/graphql-multipart-request-spec
//! [GraphQL specification]: https://spec.graphql.org/

mod args;
mod batch;
mod document;
mod handler;
mod operation;
#[cfg(all(feature = "ws", not(target_arch = "wasm32")))]
mod over_ws;
mod parse;
mod predicate;
pub mod schema;
mod subscription;

pub use args::{ResolverArgs, Upload, VariablesError};
use handler::Accepts;
pub(crate) use handler::GraphqlHandler;
pub use operation::{OperationInfo, OperationType};
pub use predicate::{IntoPredicate, Predicate};
pub use schema::{Contract, Schema, SchemaError};
pub use subscription::{Subscription, SubscriptionArgs};

use std::sync::Arc;

use crate::handling::handler::Handler;
use crate::handling::resolver::{ResolverOutput, SessionOutput};
use crate::matching::PatternError;
use crate::message::response::HttpResponse;

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

/// A handler for `query` operations whose name matches `predicate`, sent to
/// any endpoint (MSW: [`graphql.query(operationName, resolver)`][msw]).
///
/// [msw]: https://mswjs.io/docs/api/graphql
pub fn query<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Query,
        Some(predicate.into_graphql_predicate()),
        handler::OperationKeys::anywhere(),
        resolver,
    )
}

/// A handler for `mutation` operations whose name matches `predicate`, sent
/// to any endpoint (MSW: [`graphql.mutation(operationName, resolver)`][msw]).
///
/// [msw]: https://mswjs.io/docs/api/graphql
pub fn mutation<P, F, R, M>(predicate: P, resolver: F) -> Handler
where
    P: IntoPredicate,
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Mutation,
        Some(predicate.into_graphql_predicate()),
        handler::OperationKeys::anywhere(),
        resolver,
    )
}

/// A handler for every GraphQL operation — query, mutation or subscription,
/// named or anonymous — sent to any endpoint (MSW:
/// [`graphql.operation(resolver)`](https://mswjs.io/docs/api/graphql)).
pub fn operation<F, R, M>(resolver: F) -> Handler
where
    F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
    R: ResolverOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Any,
        None,
        handler::OperationKeys::anywhere(),
        resolver,
    )
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
    P: IntoPredicate,
    F: Fn(SubscriptionArgs) -> R + Send + Sync + 'static,
    R: SessionOutput<M>,
{
    GraphqlHandler::handler(
        Accepts::Subscription,
        Some(predicate.into_graphql_predicate()),
        handler::OperationKeys::anywhere(),
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
pub struct Link {
    /// The URL pattern as given.
    url: String,
    /// The index's operation source for this endpoint, shared by the
    /// link's handlers.
    keys: Arc<handler::OperationKeys>,
}

/// Handlers scoped to the endpoint `url`.
///
/// # Panics
/// When `url` is an invalid pattern (see [`try_link`]).
#[track_caller]
pub fn link(url: impl AsRef<str>) -> Link {
    try_link(url).unwrap_or_else(|error| panic!("{error}"))
}

/// Like [`link`], returning an invalid URL pattern as an error instead of
/// panicking.
pub fn try_link(url: impl AsRef<str>) -> Result<Link, PatternError> {
    let url = url.as_ref().to_owned();
    let endpoint = crate::matching::Predicate::path(&crate::matching::as_http_url(&url))?;
    Ok(Link {
        url,
        keys: handler::OperationKeys::at(Arc::new(endpoint)),
    })
}

impl Link {
    /// The endpoint's URL pattern as given (as [`ws::Link::url`](crate::ws::Link::url)).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Like [`graphql::query`](query), for this endpoint only.
    pub fn query<P, F, R, M>(&self, predicate: P, resolver: F) -> Handler
    where
        P: IntoPredicate,
        F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
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
        P: IntoPredicate,
        F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
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
        P: IntoPredicate,
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
        F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        self.handler(Accepts::Any, None, resolver)
    }

    /// A handler for this endpoint only.
    fn handler<F, R, M>(
        &self,
        accepts: Accepts,
        predicate: Option<Predicate>,
        resolver: F,
    ) -> Handler
    where
        F: Fn(ResolverArgs) -> R + Send + Sync + 'static,
        R: ResolverOutput<M>,
    {
        GraphqlHandler::handler(accepts, predicate, Arc::clone(&self.keys), resolver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handling::resolver::{CallContext, RequestId};
    use crate::message::cookies::Cookies;
    use crate::message::request::Request;
    use http::Method;
    #[cfg(feature = "regex")]
    use regex::Regex;
    use serde_json::json;

    #[test]
    fn headers_name_the_operation_and_the_origin() {
        let noop = |_: ResolverArgs| {};
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
        let args = ResolverArgs::from_parts(
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
