//! The `rest` namespace: stateful REST resources, answered from an
//! in-memory collection (as json-server, Mockoon's CRUD routes and
//! WireMock's scenarios do; MSW leaves it to a resolver and a `Map`).
//!
//! [`resource("/users")`](resource) is one handler for a collection and its
//! items. It keeps JSON objects keyed by their id field (`id` unless
//! [`id_field`](Resource::id_field) says otherwise), in insertion order,
//! starting from its [`seed`](Resource::seed):
//!
//! | Request | Answer |
//! |---|---|
//! | `GET /users` | 200, the items as a JSON array; `?name=Kate&age=30` keeps the items whose top-level fields are equal (a string as it is, another value as JSON writes it; a repeated name: any of its values) |
//! | `GET /users/:id` | 200, the item; 404 if there is none |
//! | `POST /users` | 201, the item stored, with `Location: …/users/:id`; an item without id gets one (the next integer while every id is an integer, else a UUID-like string); 409 if the id is taken |
//! | `PUT /users/:id` | 200, the item replaced (keeping its id and its place); 404 if there is none — items are created with `POST`, as in APIs whose server assigns ids |
//! | `PATCH /users/:id` | 200, the item after a JSON merge patch (RFC 7396: `null` removes a field); 404 if there is none |
//! | `DELETE /users/:id` | 200, the item removed; 404 if there is none |
//!
//! `HEAD` answers as `GET` does, without the body; another method is a 405
//! with an `Allow` header, and `OPTIONS` is left to the next handler (CORS).
//! A body that is not a JSON object is a 400; so is a `PUT` or `PATCH`
//! body whose id differs from the path's (an item's id never changes) or a
//! patch removing it. Every error has a JSON body
//! `{"error": "Not Found", "message": "/users has no item with id \"7\""}`.
//!
//! ```
//! use mocklib::{node::setup_server, rest};
//! use serde_json::{json, Value};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = setup_server([rest::resource("https://api.example.com/users")
//!     .seed([json!({ "id": 1, "name": "Kate" })])
//!     .handler()]);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let users = "https://api.example.com/users";
//!
//! let created = client.post(users).json(&json!({ "name": "Sarah" })).send().await?;
//! assert_eq!(created.status(), 201);
//! assert_eq!(created.headers()["location"], "https://api.example.com/users/2");
//! assert_eq!(created.json::<Value>().await?, json!({ "id": 2, "name": "Sarah" }));
//!
//! let patched = client.patch(format!("{users}/2")).json(&json!({ "role": "admin" })).send().await?;
//! assert_eq!(patched.json::<Value>().await?, json!({ "id": 2, "name": "Sarah", "role": "admin" }));
//!
//! client.delete(format!("{users}/1")).send().await?;
//! let list: Value = client.get(users).send().await?.json().await?;
//! assert_eq!(list, json!([{ "id": 2, "name": "Sarah", "role": "admin" }]));
//! assert_eq!(client.get(format!("{users}/1")).send().await?.status(), 404);
//! # Ok(())
//! # }
//! ```
//!
//! # State per scope
//!
//! The collection is kept per scope, in a [`ScopeLocal`]: a
//! [boundary](crate::boundary) starts from the collection its enclosing
//! scope had when it was entered (the seed, if that scope never touched it),
//! and what it creates, changes or deletes is not seen outside it — as a
//! boundary's `once` handlers are its own. So concurrent tests sharing a
//! server each see their own data:
//!
//! ```
//! use mocklib::{node::setup_server, rest};
//! use serde_json::{json, Value};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = setup_server([rest::resource("https://api.example.com/todos").handler()]);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! const TODOS: &str = "https://api.example.com/todos";
//!
//! let test = server.boundary({
//!     let client = client.clone();
//!     move |title: &'static str| {
//!         let client = client.clone();
//!         async move {
//!             client.post(TODOS).json(&json!({ "title": title })).send().await?;
//!             let list = client.get(TODOS).send().await?.json::<Value>().await?;
//!             Ok::<_, reqwest_middleware::Error>(list)
//!         }
//!     }
//! });
//! assert_eq!(test("one").await?, json!([{ "id": 1, "title": "one" }]));
//! assert_eq!(test("two").await?, json!([{ "id": 1, "title": "two" }]));
//! // The server's own collection is still empty.
//! assert_eq!(client.get(TODOS).send().await?.json::<Value>().await?, json!([]));
//! # Ok(())
//! # }
//! ```
//!
//! [`restore_handlers`](crate::node::Server::restore_handlers) starts the
//! scope's collections over from their seeds; `reset_handlers` keeps them.
//! `mocklib serve` handler files have the same resources (`resource: /users`),
//! one collection per server.

mod collection;

use std::sync::Arc;

use http::Method;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::Value;

use crate::handling::handler::{Handler, HandlerKind, IndexHint, MatchContext, Matched};
use crate::handling::resolver::{CallContext, ResolverCall};
use crate::handling::scope_local::ScopeLocal;
use crate::matching::Predicate;
use crate::message::request::Request;
use crate::message::response::HttpResponse;

use collection::{Collection, Reply, Schema};
pub use collection::{ResourceError, merge_patch};

/// A REST resource at `path` (a mocklib pattern without the id: `"/users"`,
/// `"https://api.example.com/users"`), empty and keyed by `id` until told
/// otherwise; [`handler`](Resource::handler) makes it a handler. See the
/// [module docs](self) for what it answers.
///
/// ```
/// use mocklib::rest;
/// use serde_json::json;
///
/// let users = rest::resource("/users")
///     .id_field("uuid")
///     .seed([json!({ "uuid": "6f9a", "name": "Kate" })])
///     .handler();
/// assert_eq!(users.header(), "resource /users");
/// ```
pub fn resource(path: impl Into<String>) -> Resource {
    Resource {
        path: path.into(),
        id_field: "id".to_owned(),
        seed: Vec::new(),
    }
}

/// A REST resource being described; see [`resource`].
#[derive(Debug, Clone)]
#[must_use = "a resource does nothing until `.handler()` makes it a handler"]
pub struct Resource {
    path: String,
    id_field: String,
    seed: Vec<Value>,
}

impl Resource {
    /// The top-level field that holds each item's id (default `id`).
    pub fn id_field(mut self, name: impl Into<String>) -> Self {
        self.id_field = name.into();
        self
    }

    /// The items the collection starts with, in order: JSON objects, each
    /// with a distinct id (a non-empty string or a number) in the id field.
    /// Replaces an earlier seed. Checked by [`try_handler`](Self::try_handler).
    pub fn seed(mut self, items: impl IntoIterator<Item = Value>) -> Self {
        self.seed = items.into_iter().collect();
        self
    }

    /// The handler, or why the path, the id field or the seed is invalid
    /// (naming the seed item and the field).
    ///
    /// ```
    /// use mocklib::rest;
    /// use serde_json::json;
    ///
    /// let error = rest::resource("/users")
    ///     .seed([json!({ "id": 1 }), json!({ "id": 1 })])
    ///     .try_handler()
    ///     .unwrap_err();
    /// assert_eq!(error.to_string(), "seed[1].id: duplicate id 1 (seed[0] has it too)");
    /// ```
    pub fn try_handler(self) -> Result<Handler, ResourceError> {
        if self.id_field.is_empty() {
            return Err(ResourceError::EmptyIdField);
        }
        let base = self.path.trim_end_matches('/');
        // The item's id is a path parameter named apart from any of the
        // path's own (`/teams/:id/members`).
        let param = ["id", "item_id", "mocklib_item_id"]
            .into_iter()
            .find(|name| !base.contains(&format!(":{name}")))
            .unwrap_or("mocklib_item_id");
        let predicate = Predicate::path(&format!("{base}/:{param}?"))?;
        let collection = Collection::from_seed(self.seed, &self.id_field)?;
        let seeded = Arc::new(collection);
        Ok(Handler::new(ResourceKind {
            header: format!("resource {}", self.path),
            predicate,
            param,
            schema: Arc::new(Schema {
                path: self.path,
                id_field: self.id_field,
            }),
            collection: ScopeLocal::new(move || Collection::clone(&seeded)),
        }))
    }

    /// The handler.
    ///
    /// # Panics
    /// When [`try_handler`](Self::try_handler) fails: an invalid path
    /// pattern, an empty id field, or an invalid seed; the message says
    /// which item and field.
    #[track_caller]
    pub fn handler(self) -> Handler {
        self.try_handler()
            .unwrap_or_else(|error| panic!("rest::resource: {error}"))
    }
}

impl From<Resource> for Handler {
    /// [`Resource::handler`]; panics the same way.
    #[track_caller]
    fn from(resource: Resource) -> Self {
        resource.handler()
    }
}

struct ResourceKind {
    header: String,
    /// The path followed by an optional id segment.
    predicate: Predicate,
    /// The name of the id's path parameter.
    param: &'static str,
    schema: Arc<Schema>,
    collection: ScopeLocal<Collection>,
}

impl HandlerKind for ResourceKind {
    fn header(&self) -> &str {
        &self.header
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.predicate.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        IndexHint::of_predicate(&self.predicate)
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        // OPTIONS goes on to the next handler (a CORS preflight's).
        if context.request().method() == Method::OPTIONS {
            return None;
        }
        let params = self
            .predicate
            .matches(context.request(), context.base_url())?;
        let id = params.get(self.param).map(str::to_owned);
        let request = context.request().clone();
        let schema = Arc::clone(&self.schema);
        let collection = self.collection.clone();
        Some(Matched::new(move |call| {
            let reply = answer(&schema, &collection, &call, &request, id.as_deref());
            ResolverCall::new(response(&request, reply))
        }))
    }
}

/// What the collection answers to `request` (`id`: the path's item id).
fn answer(
    schema: &Schema,
    collection: &ScopeLocal<Collection>,
    call: &CallContext,
    request: &Request,
    id: Option<&str>,
) -> Reply {
    let method = request.method();
    let with = |f: &mut dyn FnMut(&mut Collection) -> Reply| call.scope_local(collection, f);
    match id {
        None if method == Method::GET || method == Method::HEAD => {
            let filters: Vec<(String, String)> = request.url().query_pairs().into_owned().collect();
            with(&mut |items| items.list(&filters))
        }
        None if method == Method::POST => match object_body(request) {
            Ok(object) => {
                let mut object = Some(object);
                with(&mut |items| items.create(schema, object.take().unwrap_or_default()))
            }
            Err(reply) => reply,
        },
        None => Reply::method_not_allowed(method, "GET, HEAD, POST"),
        Some(id) if method == Method::GET || method == Method::HEAD => {
            with(&mut |items| items.get(schema, id))
        }
        Some(id) if method == Method::PUT || method == Method::PATCH => {
            match object_body(request) {
                Ok(object) => {
                    let mut object = Some(object);
                    let put = method == Method::PUT;
                    with(&mut |items| {
                        let object = object.take().unwrap_or_default();
                        if put {
                            items.replace(schema, id, object)
                        } else {
                            items.patch(schema, id, object)
                        }
                    })
                }
                Err(reply) => reply,
            }
        }
        Some(id) if method == Method::DELETE => with(&mut |items| items.remove(schema, id)),
        Some(_) => Reply::method_not_allowed(method, "GET, HEAD, PUT, PATCH, DELETE"),
    }
}

/// The request's body as a JSON object, or the 400 saying why it is not.
fn object_body(request: &Request) -> Result<serde_json::Map<String, Value>, Reply> {
    if request.body().iter().all(u8::is_ascii_whitespace) {
        return Err(Reply::error(
            400,
            "the request has no body; expected a JSON object".to_owned(),
        ));
    }
    match request.json::<Value>() {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(Reply::error(
            400,
            format!(
                "expected a JSON object, found {}",
                match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                }
            ),
        )),
        Err(error) => Err(Reply::error(
            400,
            format!("the request body is not valid JSON: {error}"),
        )),
    }
}

/// Characters escaped in the id segment of a `Location` (a path segment's
/// reserved and unsafe characters).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

fn response(request: &Request, reply: Reply) -> HttpResponse {
    let mut response = HttpResponse::json(&reply.body).status(reply.status);
    if let Some(key) = reply.created {
        // The request's URL (where the client sent it) with the id appended.
        let mut location = request.url().clone();
        let path = format!(
            "{}/{}",
            location.path().trim_end_matches('/'),
            utf8_percent_encode(&key, SEGMENT)
        );
        location.set_path(&path);
        location.set_query(None);
        location.set_fragment(None);
        response = response.header("location", location.as_str());
    }
    if let Some(allow) = reply.allow {
        response = response.header("allow", allow);
    }
    response
}
