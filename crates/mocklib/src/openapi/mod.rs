//! OpenAPI documents as handlers (Prism's mock server, in-process).
//!
//! [`handlers`] reads an OpenAPI 3.0 or 3.1 document, YAML or JSON, and
//! makes one ordinary [`Handler`] per operation, so everything that applies
//! to handlers applies here: `use_handlers`, boundaries, `once`,
//! expectations, the journal. Each answers with the example the document
//! gives, or a value generated from its schema.
//!
//! # Matching
//!
//! An operation's handler matches its method and its path under the
//! document's first server (`servers[0].url`, variables at their
//! defaults; a path item's or an operation's own `servers` first), or
//! under [`OpenApi::base_url`]: `/pets/{petId}` of
//! `https://petstore.example.com/v1` becomes the handler
//! `GET https://petstore.example.com/v1/pets/:petId`. A relative server URL
//! (`/v1`, or none) makes relative predicates, which match on any origin
//! (or the listener's base URL; see [`matching`](crate::matching)).
//!
//! # Which response
//!
//! As [Prism](https://stoplight.io/open-source/prism) does:
//!
//! - by default the lowest 2xx response (`200` before `2XX`), else the
//!   first documented one;
//! - `Prefer: code=404` picks the response documented for that status,
//!   else its range (`4XX`), else `default`, sent with that status;
//! - `Prefer: example=cat` picks the example named `cat` (in the chosen
//!   response, or the first response that has one);
//!   `Prefer: code=404, example=missing` combines both.
//!
//! When nothing documented fits the `Prefer` header, the answer is a 500
//! with an error body like the validation errors below (location
//! `header.prefer`), and a warning is logged. (Prism's `dynamic=true`, a
//! random value per request, is not offered: answers are reproducible.)
//!
//! The media type is the one the request's `Accept` names, else the first
//! JSON one, else the first; it is the response's `Content-Type`. Its body
//! is, in order: the media type's `example`, its first named `examples`
//! entry (references to `components/examples` followed), or a value
//! generated from its schema: the schema's `example`, `default`, first
//! `examples` entry (3.1) or first `enum` value, else built from its
//! type: objects with every property (not `writeOnly` ones), arrays with
//! one item (or `minItems`), strings honouring `format` (`date-time`,
//! `date`, `uuid`, `email`, `uri`, …) or matching their `pattern` (the
//! simplest match: `^[A-Z]{3}-\d{4}$` gives `AAA-0000`), within the
//! length bounds, numbers at 0 moved within `minimum`/`maximum`, `allOf`
//! merged, the first of `oneOf`/`anyOf`. A recursive schema ends where it
//! recurs: such a property is left out (`null` when required), a list of
//! it is empty. Response headers with an example or a scalar schema are
//! sent too.
//!
//! A `pattern` is read by `regex-syntax` (the parser of the `regex`
//! crate) and its syntax tree walked: literals, classes (their ASCII
//! members first: `\d` gives ASCII digits, as ECMA-262 means it),
//! repetitions and alternatives, grown or shortened to meet
//! `minLength`/`maxLength`; anchors and word boundaries are checked on the
//! result rather than generated. A pattern it cannot read (look-arounds,
//! back-references) or cannot meet within the bounds gives the string a
//! schema without it would, and a warning says why; nothing panics.
//!
//! # Validating requests
//!
//! With [`OpenApi::validate_requests`], each request is first checked
//! against the operation: path, query, header and cookie parameters
//! (present when `required`, and their text read as the schema's type
//! then validated against it; arrays as `form` style, `?tags=a&tags=b` or
//! `?tags=a,b`) and the request body (present when `required`, a
//! documented media type, and JSON bodies validated against their schema).
//! A request that fails is answered `400 Bad Request` with every failure:
//!
//! ```json
//! {"errors": [{"location": "query.limit", "message": "101 is greater than the maximum of 100"},
//!             {"location": "body.name", "message": "..."}]}
//! ```
//!
//! Locations are `path.NAME`, `query.NAME`, `header.NAME`, `cookie.NAME`,
//! `header.content-type`, `body` or `body.` followed by the failing
//! field's path (`body.tags.0`).
//!
//! # Choices made
//!
//! The document is read as YAML with `serde_norway`, the maintained fork
//! of the archived `serde_yaml` (the same API and the same `libyaml`
//! port), which keeps the order of keys that "the first documented
//! response" and "the first example" depend on; a `.json` file is first
//! checked by `serde_json` for exact error positions. Schemas are
//! validated by the `jsonschema` crate, offline: only local references
//! (`#/components/...`) are followed, in every part of the document. 3.0
//! schemas are read as JSON Schema draft 4 with `nullable: true` as a
//! `"null"` type; 3.1 schemas as JSON Schema 2020-12.
//!
//! # With handlers written by hand
//!
//! Put yours first: the lookup takes the first handler that answers, so
//! yours win, and a resolver of yours that returns nothing falls through
//! to the document.
//!
//! ```
//! use mocklib::{http, openapi::OpenApi, HttpResponse, node::setup_server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let document = r#"
//! openapi: 3.0.3
//! info: { title: Users, version: "1" }
//! servers: [{ url: "https://api.example.com" }]
//! paths:
//!   /users/{id}:
//!     get:
//!       parameters:
//!         - { name: id, in: path, required: true, schema: { type: integer } }
//!       responses:
//!         "200":
//!           description: a user
//!           content:
//!             application/json:
//!               schema:
//!                 type: object
//!                 required: [id, name]
//!                 properties:
//!                   id: { type: integer, minimum: 1 }
//!                   name: { type: string, example: John }
//!         "404":
//!           description: no such user
//!           content:
//!             application/json:
//!               example: { message: not found }
//! "#;
//! let mut list = vec![http::get("https://api.example.com/status", |_| HttpResponse::text("up"))];
//! list.extend(OpenApi::from_yaml(document)?.validate_requests().handlers()?);
//! let server = setup_server(list);
//! server.listen();
//!
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let user = client.get("https://api.example.com/users/7").send().await?;
//! assert_eq!(user.text().await?, r#"{"id":1,"name":"John"}"#);
//!
//! let missing = client
//!     .get("https://api.example.com/users/7")
//!     .header("prefer", "code=404")
//!     .send()
//!     .await?;
//! assert_eq!(missing.status(), 404);
//!
//! let invalid = client.get("https://api.example.com/users/seven").send().await?;
//! assert_eq!(invalid.status(), 400);
//! let errors: serde_json::Value = invalid.json().await?;
//! assert_eq!(errors["errors"][0]["location"], "path.id");
//! # Ok(())
//! # }
//! ```

mod contract;
mod document;
mod error;
mod generate;
mod operation;
mod pattern;
mod validate;

use std::path::Path;
use std::sync::Arc;

use serde_norway::Value;

use crate::handler::Handler;
pub use contract::{Coverage, OpenApiContract, OperationCoverage, ResponseCoverage};
use document::{Document, entries, scalar_text};
pub use error::OpenApiError;

/// The handlers answering every operation of the OpenAPI document at
/// `path` (`.json` files are read as JSON, others as YAML), with no request
/// validation; [`OpenApi`] for more.
pub fn handlers(path: impl AsRef<Path>) -> Result<Vec<Handler>, OpenApiError> {
    OpenApi::from_path(path)?.handlers()
}

/// An OpenAPI document and how its handlers answer.
///
/// ```
/// use mocklib::openapi::OpenApi;
///
/// # fn main() -> Result<(), mocklib::openapi::OpenApiError> {
/// let api = OpenApi::from_json(r#"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
///   "paths": {"/health": {"get": {"responses": {"204": {"description": "up"}}}}}}"#)?
///     .base_url("http://localhost:8080/api")
///     .validate_requests();
/// let handlers = api.handlers()?;
/// assert_eq!(handlers[0].header(), "GET http://localhost:8080/api/health");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OpenApi {
    document: Arc<Document>,
    base_url: Option<String>,
    validate: bool,
}

impl OpenApi {
    /// Reads the document at `path`: JSON when its name ends in `.json`,
    /// YAML otherwise.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, OpenApiError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| OpenApiError::Read {
            path: path.to_owned(),
            source,
        })?;
        let json = path
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
        Self::parse(&text, json, path.display().to_string())
    }

    /// Reads a document from its YAML text.
    pub fn from_yaml(text: &str) -> Result<Self, OpenApiError> {
        Self::parse(text, false, "the OpenAPI text".to_owned())
    }

    /// Reads a document from its JSON text.
    pub fn from_json(text: &str) -> Result<Self, OpenApiError> {
        Self::parse(text, true, "the OpenAPI text".to_owned())
    }

    fn parse(text: &str, json: bool, source_name: String) -> Result<Self, OpenApiError> {
        Ok(OpenApi {
            document: Arc::new(Document::parse(text, json, source_name)?),
            base_url: None,
            validate: false,
        })
    }

    /// Serves the operations under `url` (absolute, or a path like
    /// `/api`) instead of the document's first server.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Checks each request against its operation first, answering 400
    /// with the failures (see the [module docs](self#validating-requests)).
    pub fn validate_requests(mut self) -> Self {
        self.validate = true;
        self
    }

    /// The URL the operations' paths are joined to, without a trailing
    /// `/`: the [`base_url`](Self::base_url), else the document's first
    /// server (a path item or an operation with `servers` of its own uses
    /// its first one instead, unless a base URL is set).
    pub fn server_url(&self) -> String {
        match &self.base_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => first_server(&self.document.root).unwrap_or_default(),
        }
    }

    /// One handler per operation, in document order. Fails on what cannot
    /// be served: a reference that points nowhere, a path that is no valid
    /// pattern, or (when validating) a schema the validator rejects.
    pub fn handlers(&self) -> Result<Vec<Handler>, OpenApiError> {
        operation::handlers(&self.document, &self.server(), self.validate)
    }

    /// The document as a [contract](crate::contract) for
    /// [`attach_contract`](crate::node::Server::attach_contract): every
    /// answered request under the document's server is checked against the
    /// operation it maps to — its parameters and body, the answer's status
    /// (documented, else its range, else `default`), content type, required
    /// headers and JSON body (by the schema: types, formats, required
    /// fields, `additionalProperties: false`) — and a request to a path or
    /// a method the document lacks is a finding. Schemas are compiled here,
    /// once. Findings name the `operationId` (else `GET /path`) and a
    /// pointer: `/request/query/limit`, `/response/status`,
    /// `/response/headers/x-rate-limit`, `/response/body/user/name`.
    ///
    /// ```
    /// use mocklib::{http, openapi::OpenApi, node::setup_server, HttpResponse};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let document = r#"
    /// openapi: 3.1.0
    /// info: { title: Users, version: "1" }
    /// servers: [{ url: "https://api.example.com" }]
    /// paths:
    ///   /users/{id}:
    ///     get:
    ///       operationId: getUser
    ///       responses:
    ///         "200":
    ///           description: a user
    ///           content:
    ///             application/json:
    ///               schema:
    ///                 type: object
    ///                 required: [id, fullName]
    ///                 properties: { id: { type: integer }, fullName: { type: string } }
    /// "#;
    /// // Written before the API renamed `name` to `fullName`.
    /// let server = setup_server([http::get("https://api.example.com/users/:id", |_| {
    ///     HttpResponse::json(&serde_json::json!({ "id": 7, "name": "Kate" }))
    /// })]);
    /// server.attach_contract(OpenApi::from_yaml(document)?.contract()?);
    /// # server.listen();
    /// let request = mocklib::Request::new(::http::Method::GET, "https://api.example.com/users/7".parse()?);
    /// let _ = server.handle(request, None).await;
    ///
    /// let journal = server.requests();
    /// let finding = &journal[0].contract_findings()[0];
    /// assert_eq!(finding.operation.as_deref(), Some("getUser"));
    /// assert_eq!(finding.pointer, "/response/body");
    /// assert!(finding.expected.contains("fullName"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contract(&self) -> Result<OpenApiContract, OpenApiError> {
        let name = self
            .document
            .root
            .get("info")
            .and_then(|info| info.get("title"))
            .and_then(scalar_text)
            .unwrap_or_else(|| "the OpenAPI document".to_owned());
        OpenApiContract::new(&self.document, &self.server(), name)
    }

    fn server(&self) -> Server {
        Server {
            url: self.server_url(),
            fixed: self.base_url.is_some(),
        }
    }
}

/// Where the operations are served.
pub(crate) struct Server {
    /// The URL paths are joined to, without a trailing `/`.
    url: String,
    /// Whether it was set by [`OpenApi::base_url`], so that no `servers`
    /// of a path item or an operation replace it.
    fixed: bool,
}

impl Server {
    /// The URL for what `holders` (an operation, then its path item) say.
    pub(crate) fn url_for(&self, holders: &[&Value]) -> String {
        if self.fixed {
            return self.url.clone();
        }
        holders
            .iter()
            .find_map(|holder| first_server(holder))
            .unwrap_or_else(|| self.url.clone())
    }
}

/// The first of `holder`'s `servers` with its variables at their
/// defaults, without a trailing `/`.
fn first_server(holder: &Value) -> Option<String> {
    let server = holder.get("servers")?.as_sequence()?.first()?;
    let mut url = server.get("url").and_then(scalar_text).unwrap_or_default();
    for (name, variable) in entries(server.get("variables")) {
        if let Some(default) = variable.get("default").and_then(scalar_text) {
            url = url.replace(&format!("{{{name}}}"), &default);
        }
    }
    Some(url.trim_end_matches('/').to_owned())
}
