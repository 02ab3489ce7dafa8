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
//!   `Prefer: code=404, example=missing` combines both;
//! - `Prefer: dynamic=true` generates the body from the schema for this
//!   request (see [below](#dynamic-answers)).
//!
//! When nothing documented fits the `Prefer` header, the answer is a 500
//! with an error body like the validation errors below (location
//! `header.prefer`), and a warning is logged.
//!
//! The media type is the one the request's `Accept` names, else the first
//! JSON one, else the first; it is the response's `Content-Type`. Its body
//! is, in order: the media type's `example`, its first named `examples`
//! entry (references to `components/examples` followed; an
//! [`externalValue`](#examples-in-files) read from its file), or a value
//! generated from its schema: the schema's `example`, `default`, first
//! `examples` entry (3.1) or first `enum` value, else built from its
//! type: objects with every property (not `writeOnly` ones), arrays with
//! one item (or `minItems`), strings matching their `pattern` (the
//! simplest match: `^[A-Z]{3}-\d{4}$` gives `AAA-0000`) or honouring
//! `format` (`date-time`, `date`, `uuid`, `email`, `uri`, …), within the
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
//! # Dynamic answers
//!
//! Prism's `dynamic=true`: instead of the same example every time, the
//! body (and the headers with a schema) is generated from the schema for
//! each request, with random values: strings of random length within
//! `minLength`/`maxLength` (matching `pattern`, shaped by `format`: random
//! dates, UUIDs, e-mail addresses, …), numbers anywhere within
//! `minimum`/`maximum` (a multiple of `multipleOf`), arrays of
//! `minItems` to `maxItems` items each generated on its own, a random
//! value of an `enum` and branch of a `oneOf`/`anyOf`. Examples and
//! defaults are ignored (`const` is not); a named example asked for with
//! `Prefer: example=` is still sent as it is, and a media type without a
//! schema sends its example.
//!
//! - `Prefer: dynamic=true` asks for one answer; [`OpenApi::dynamic`]
//!   makes every answer dynamic (`Prefer: dynamic=false` then asks for
//!   the static one).
//! - Values come from a seeded generator, so a test can have them again:
//!   `Prefer: dynamic=true, seed=42` (or `seed=42` alone) gives the same
//!   answer every time; [`OpenApi::dynamic_seed`] makes runs
//!   reproducible (the seed mixed with each request's method and URL:
//!   `/users/1` and `/users/2` differ, each is the same every run).
//!   Without a seed each request gets a random one.
//! - Every dynamic answer says its seed in `Preference-Applied:
//!   dynamic=true, seed=N` (RFC 7240's reply to `Prefer`): a value a test
//!   did not expect can be asked for again with `Prefer: seed=N`.
//!
//! The same seed gives the same values with the same document and the
//! same mocklib version (the generator is `fastrand`'s).
//!
//! ```
//! use mocklib::{node::setup_server, openapi::OpenApi};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let document = r#"
//! openapi: 3.1.0
//! info: { title: Orders, version: "1" }
//! servers: [{ url: "https://shop.example.com" }]
//! paths:
//!   /orders/{id}:
//!     get:
//!       responses:
//!         "200":
//!           description: an order
//!           content:
//!             application/json:
//!               schema:
//!                 type: object
//!                 properties:
//!                   reference: { type: string, pattern: '^[A-Z]{3}-\d{4}$' }
//!                   items: { type: integer, minimum: 1, maximum: 9 }
//! "#;
//! let server = setup_server(OpenApi::from_yaml(document)?.handlers()?);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let order = |prefer: &'static str| {
//!     client.get("https://shop.example.com/orders/1").header("prefer", prefer).send()
//! };
//!
//! let fixed: serde_json::Value = order("dynamic=false").await?.json().await?;
//! assert_eq!(fixed, serde_json::json!({ "reference": "AAA-0000", "items": 1 }));
//!
//! let seeded = order("dynamic=true, seed=42").await?;
//! assert_eq!(seeded.headers()["preference-applied"], "dynamic=true, seed=42");
//! let value: serde_json::Value = seeded.json().await?;
//! let again: serde_json::Value = order("dynamic=true, seed=42").await?.json().await?;
//! assert_eq!(value, again);
//! assert!((1..=9).contains(&value["items"].as_i64().unwrap()));
//! # Ok(())
//! # }
//! ```
//!
//! # Security
//!
//! An operation's `security` (else the document's) names schemes of
//! `components.securitySchemes`; a request must meet one of its
//! requirements, each with every scheme it lists:
//!
//! - `http` `bearer`, `oauth2` and `openIdConnect`: `Authorization: Bearer
//!   <token>` with a token;
//! - `http` `basic`: `Authorization: Basic <base64 of user:password>`;
//!   another `http` scheme (`digest`, …): `Authorization` with that scheme;
//! - `apiKey`: the header, query parameter or cookie it names, not empty;
//! - `mutualTLS`: met (a client certificate is the TLS layer's business).
//!
//! An empty requirement (`security: [{}, {bearerAuth: []}]`) makes the
//! credentials optional, `security: []` drops the document's. A request
//! that meets none is answered `401` with a `WWW-Authenticate` challenge
//! for each scheme (`Bearer`, `Basic realm="<title>"`, `ApiKey in="header",
//! name="X-API-Key"`), as Prism does: with the response `Prefer: code=401`
//! would pick (the documented `401`, `4XX` or `default`), else an error
//! body in the shape of the validation errors below, one entry per way to
//! authenticate (`{"location": "header.authorization", "message":
//! "bearerAuth: expected a bearer token (Authorization: Bearer <token>)"}`).
//! A credential present but not of the expected shape (`Basic` for a
//! bearer scheme, `Basic` that decodes to no `user:password`) counts as
//! missing.
//!
//! Never `403` on its own: whether a credential is *right* (the token
//! valid, its scopes enough) is for a real server to know — a mock has no
//! users, and guessing would refuse requests the real API accepts.
//! Prism's security checks, likewise, only ever answer 401. A test that
//! wants a 403 asks for the documented one with `Prefer: code=403`, or
//! puts a handler of its own first that refuses a particular token.
//!
//! Security is checked by default, with or without request validation —
//! a client that forgets its token should fail against the mock as it
//! would against the API; [`OpenApi::check_security`]`(false)` turns it
//! off. A requirement naming a scheme the document does not define makes
//! [`OpenApi::handlers`] fail, naming where.
//!
//! ```
//! use mocklib::{node::setup_server, openapi::OpenApi};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let document = r#"
//! openapi: 3.0.3
//! info: { title: Vault, version: "1" }
//! servers: [{ url: "https://vault.example.com" }]
//! security: [{ token: [] }]
//! components:
//!   securitySchemes:
//!     token: { type: http, scheme: bearer }
//! paths:
//!   /secrets:
//!     get:
//!       responses:
//!         "200": { description: the secrets }
//! "#;
//! let server = setup_server(OpenApi::from_yaml(document)?.handlers()?);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let refused = client.get("https://vault.example.com/secrets").send().await?;
//! assert_eq!(refused.status(), 401);
//! assert_eq!(refused.headers()["www-authenticate"], "Bearer");
//!
//! let allowed = client
//!     .get("https://vault.example.com/secrets")
//!     .bearer_auth("any-token")
//!     .send()
//!     .await?;
//! assert_eq!(allowed.status(), 200);
//! # Ok(())
//! # }
//! ```
//!
//! # Examples in files
//!
//! An example may name a file instead of holding its value:
//!
//! ```yaml
//! examples:
//!   march: { externalValue: examples/statement.json }
//! ```
//!
//! The file is read once, by [`OpenApi::handlers`]: as JSON for a JSON
//! media type, as bytes sent unchanged otherwise (`application/pdf`,
//! `image/png`). A relative path (percent-encoded as URI references are)
//! is resolved against the document's folder when it was read with
//! [`OpenApi::from_path`], against the current directory when it was
//! read from text ([`from_yaml`](OpenApi::from_yaml),
//! [`from_json`](OpenApi::from_json)); a `file:` URL names its file.
//! mocklib fetches nothing over the network: an `http(s)` URL, like a
//! file that cannot be read or a JSON example that is not JSON, makes
//! `handlers()` fail with an error naming the JSON pointer of the
//! `externalValue` and the file ([`OpenApiError::ExternalValue`]).
//!
//! # Validating requests
//!
//! With [`OpenApi::validate_requests`], each request is first checked
//! against the operation: path, query, header and cookie parameters
//! (present when `required`, and their text read as the schema's type
//! then validated against it; arrays as `form` style, `?tags=a&tags=b` or
//! `?tags=a,b`) and the request body (present when `required`, a
//! documented media type, and JSON bodies validated against their schema).
//! A request that fails is answered `400 Bad Request` with every failure
//! (after the [security](#security) check, whose 401 comes first):
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
//! # Reporting instead of answering 400
//!
//! With [`OpenApi::report_invalid_requests`] the same checks run, but an
//! invalid request (or one without its credentials) is answered as a
//! valid one would be, and what was wrong is kept for later: with the
//! request's journal entry, as [contract
//! findings](crate::journal::RecordedRequest::contract_findings) named after the
//! document's title and the `operationId`, at the pointers
//! [`OpenApi::contract`] uses (`/request/query/limit`,
//! `/request/header/authorization`, `/request/body/name`); logged as a
//! warning; and reported by [`verify`](crate::node::Server::verify), with
//! the request and the handler. For a client that would stop at the
//! first 400, or a test that asserts on what the client sent after the
//! fact. (A journal with no capacity keeps nothing to report.)
//!
//! ```
//! use mocklib::{node::setup_server, openapi::OpenApi};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let document = r#"
//! openapi: 3.0.3
//! info: { title: Search, version: "1" }
//! servers: [{ url: "https://search.example.com" }]
//! paths:
//!   /search:
//!     get:
//!       operationId: search
//!       parameters:
//!         - { name: limit, in: query, schema: { type: integer, maximum: 100 } }
//!       responses:
//!         "200": { description: results }
//! "#;
//! let server = setup_server(OpenApi::from_yaml(document)?.report_invalid_requests().handlers()?);
//! server.listen();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let answered = client.get("https://search.example.com/search?limit=500").send().await?;
//! assert_eq!(answered.status(), 200);
//!
//! let report = server.verify().unwrap_err();
//! let finding = report.contract_findings()[0].finding();
//! assert_eq!(finding.operation.as_deref(), Some("search"));
//! assert_eq!(finding.pointer, "/request/query/limit");
//! assert!(report.to_string().contains("500 is greater than the maximum of 100"));
//! # Ok(())
//! # }
//! ```
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
//! `"null"` type; 3.1 schemas as JSON Schema 2020-12. Patterns are walked
//! with `regex-syntax`, which `jsonschema` compiles already; dynamic
//! values come from `fastrand`'s seedable generator, a crate without
//! dependencies (the `mocklib` command uses it too).
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
mod external;
mod generate;
mod operation;
mod pattern;
mod security;
mod validate;

use std::path::Path;
use std::sync::Arc;

use serde_norway::Value;

pub use crate::handling::contract::{Coverage, OperationCoverage, ResponseCoverage};
use crate::handling::handler::Handler;
pub use contract::OpenApiContract;
use document::{Document, entries, scalar_text};
pub use error::OpenApiError;

/// The handlers answering every operation of the OpenAPI document at
/// `path` (`.json` files are read as JSON, others as YAML), with no request
/// validation (credentials are checked, see [Security](self#security));
/// [`OpenApi`] for more.
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
    answering: Answering,
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
        let mut document = Document::parse(&text, json, path.display().to_string())?;
        // Relative `externalValue`s are read from the document's folder.
        document.base_dir = Some(path.parent().unwrap_or(Path::new("")).to_owned());
        Ok(Self::new(document))
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
        Ok(Self::new(Document::parse(text, json, source_name)?))
    }

    fn new(document: Document) -> Self {
        OpenApi {
            document: Arc::new(document),
            base_url: None,
            answering: Answering {
                security: true,
                ..Answering::default()
            },
        }
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
        self.answering.validation = Validation::Answer;
        self
    }

    /// Checks each request against its operation as
    /// [`validate_requests`](Self::validate_requests) does, but answers an
    /// invalid one as a valid one (and one lacking credentials as one that
    /// has them): the failures are kept with the request's journal entry
    /// as [contract findings](crate::journal::RecordedRequest::contract_findings),
    /// logged, and reported by [`verify`](crate::node::Server::verify). For
    /// tests that check what the client sent after the fact, and clients
    /// that would stop at a 400. See the
    /// [module docs](self#reporting-instead-of-answering-400).
    pub fn report_invalid_requests(mut self) -> Self {
        self.answering.validation = Validation::Report;
        self
    }

    /// Whether a request lacking the credentials its operation's
    /// `security` (or the document's) asks for is answered `401` with
    /// `WWW-Authenticate`: `true` by default, as Prism does. See the
    /// [module docs](self#security).
    pub fn check_security(mut self, check: bool) -> Self {
        self.answering.security = check;
        self
    }

    /// Every answer dynamic, as Prism's `--dynamic`: generated from the
    /// schema for each request, with random values within its bounds
    /// (a request's `Prefer: dynamic=false` asks for the static one). See
    /// the [module docs](self#dynamic-answers).
    pub fn dynamic(mut self) -> Self {
        self.answering.dynamic = true;
        self
    }

    /// Dynamic answers from `seed` rather than a random seed: reproducible
    /// from run to run. Each request's seed mixes `seed` with its method,
    /// path and query, so the same request gets the same answer and
    /// another request (`/users/2`) another one; a request's own
    /// `Prefer: seed=N` still wins. Answers are only dynamic when asked
    /// for ([`dynamic`](Self::dynamic), or a request's
    /// `Prefer: dynamic=true`).
    pub fn dynamic_seed(mut self, seed: u64) -> Self {
        self.answering.seed = Some(seed);
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
    /// pattern, an example file (`externalValue`) that cannot be read, a
    /// security scheme that is not defined (when checking security), or
    /// (when validating) a schema the validator rejects.
    pub fn handlers(&self) -> Result<Vec<Handler>, OpenApiError> {
        operation::handlers(
            &self.document,
            &self.server(),
            self.answering,
            &self.title(),
        )
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
        OpenApiContract::new(&self.document, &self.server(), self.title())
    }

    /// The document's title: what its contract findings are named by.
    fn title(&self) -> String {
        self.document
            .root
            .get("info")
            .and_then(|info| info.get("title"))
            .and_then(scalar_text)
            .unwrap_or_else(|| "the OpenAPI document".to_owned())
    }

    fn server(&self) -> Server {
        Server {
            url: self.server_url(),
            fixed: self.base_url.is_some(),
        }
    }
}

/// How the handlers answer: what the [`OpenApi`] builder chose.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Answering {
    pub(crate) validation: Validation,
    /// Whether requests lacking the credentials `security` asks for are
    /// answered 401 (or reported, with [`Validation::Report`]).
    pub(crate) security: bool,
    /// Dynamic answers unless a request says `Prefer: dynamic=false`.
    pub(crate) dynamic: bool,
    /// The seed of dynamic answers whose request names none (mixed with
    /// the request's method and URL).
    pub(crate) seed: Option<u64>,
}

/// What happens to a request that does not match its operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Validation {
    /// Not checked.
    #[default]
    Off,
    /// Answered 400 (401 for missing credentials).
    Answer,
    /// Answered as a valid one would be; the failures kept with its
    /// journal entry for `verify()`.
    Report,
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
