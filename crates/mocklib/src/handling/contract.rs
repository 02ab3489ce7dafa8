//! Contracts: every mocked answer checked against what the API promises.
//!
//! A mock is only as good as its fidelity: when the real API renames a
//! field, a handler written last year keeps answering the old shape and the
//! tests stay green. A [`Contract`] attached to a server
//! ([`Server::attach_contract`](crate::node::Server::attach_contract)) sees
//! every request answered — written by hand, replayed from a HAR
//! file, loaded from a handler file — with the answer, and says how they
//! differ from the API's description. Its [`Finding`]s are kept with the
//! request's journal entry ([`RecordedRequest::contract_findings`](crate::journal::RecordedRequest::contract_findings)) and fail
//! [`verify`](crate::node::Server::verify), naming the handler that answered.
//! A strict contract fails the request itself: the client gets a `500`
//! whose body lists the findings.
//!
//! mocklib's OpenAPI support is one contract
//! ([`OpenApi::contract`](crate::openapi::OpenApi::contract)), a GraphQL
//! schema another ([`Schema::contract`](crate::graphql::Schema::contract));
//! the trait is small so that other descriptions (a protocol of your own)
//! can be one too.
//!
//! ```
//! use mocklib::contract::{Answered, Contract, Finding};
//! use mocklib::{http, node::setup_server, HttpResponse};
//!
//! /// Our API never answers 500.
//! struct NoServerErrors;
//!
//! impl Contract for NoServerErrors {
//!     fn name(&self) -> &str {
//!         "no server errors"
//!     }
//!
//!     fn check(&self, answered: &Answered<'_>) -> Vec<Finding> {
//!         if answered.status.is_server_error() {
//!             vec![Finding::new("/status", "not 5xx", answered.status.as_str())]
//!         } else {
//!             Vec::new()
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = setup_server([http::get("/boom", |_| HttpResponse::empty().status(500))]);
//! server.attach_contract(NoServerErrors);
//! # server.listen();
//! let request = mocklib::Request::new(::http::Method::GET, "http://localhost/boom".parse().unwrap());
//! let _ = server.handle(request, Some("http://localhost".parse().unwrap())).await;
//! let report = server.verify().unwrap_err().to_string();
//! assert!(report.contains("no server errors"), "{report}");
//! # }
//! ```
//!
//! Requests performed for real (a passthrough, an unhandled request
//! bypassed) are checked too, once their answer is whole, through the front
//! door's capture (the listener and the tower service capture; see
//! [`Passthrough::capture`](crate::front_door::Passthrough::capture)): the findings join
//! the journal entry and `verify`, and strictness cannot apply, the answer
//! being on its way.

use std::fmt;
use std::sync::Arc;

use http::{HeaderMap, StatusCode};

use crate::message::request::Request;

/// A request a handler answered, with the answer, as a [`Contract`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Answered<'a> {
    /// The request (its body as received).
    pub request: &'a Request,
    /// The answer's status.
    pub status: StatusCode,
    /// The answer's headers.
    pub headers: &'a HeaderMap,
    /// The answer's body, when it is whole (`None` for a streamed one).
    pub body: Option<&'a [u8]>,
    /// The front door's own origin, if it has one: where relative
    /// descriptions (an OpenAPI server `/v1`) apply.
    pub base_url: Option<&'a url::Url>,
}

/// A description of an API that answered requests are checked against; see
/// the [module docs](self).
pub trait Contract: Send + Sync + 'static {
    /// How findings name it: a title, a file name.
    fn name(&self) -> &str;

    /// How `answered` differs from the description; empty when it does not
    /// (or when the description says nothing about it).
    fn check(&self, answered: &Answered<'_>) -> Vec<Finding>;

    /// What of the description the requests checked so far exercised, if
    /// the contract counts it (`None` by default).
    fn coverage(&self) -> Option<Coverage> {
        None
    }
}

/// Which operations of a contract the checked requests exercised, and
/// which documented responses they got ([`Contract::coverage`]); `Display`
/// is a table, `Serialize` the same as data (for CI).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Coverage {
    /// The contract's name (the document's title).
    pub contract: String,
    /// Every operation, in document order.
    pub operations: Vec<OperationCoverage>,
}

/// One operation's part of a [`Coverage`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct OperationCoverage {
    /// Its `operationId`, else `GET /path`.
    pub operation: String,
    /// Its method.
    pub method: String,
    /// Its path in the document.
    pub path: String,
    /// Requests that mapped to it.
    pub requests: u64,
    /// Each documented response (`200`, `4XX`, `default`) and how many
    /// answers it described.
    pub responses: Vec<ResponseCoverage>,
    /// Answers with a status no response documents.
    pub undocumented: u64,
}

/// One documented response's part of a [`Coverage`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ResponseCoverage {
    /// The status key as documented.
    pub status: String,
    /// Answers it described.
    pub answers: u64,
}

impl Coverage {
    /// Operations at least one request mapped to.
    pub fn exercised(&self) -> usize {
        self.operations
            .iter()
            .filter(|operation| operation.requests > 0)
            .count()
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let documented: usize = self.operations.iter().map(|op| op.responses.len()).sum();
        let answered: usize = self
            .operations
            .iter()
            .map(|op| {
                op.responses
                    .iter()
                    .filter(|response| response.answers > 0)
                    .count()
            })
            .sum();
        write!(
            f,
            "{}: {} of {} operations exercised",
            self.contract,
            self.exercised(),
            self.operations.len()
        )?;
        // GraphQL documents no statuses: nothing to count there.
        if documented > 0 {
            write!(f, ", {answered} of {documented} documented responses")?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "\n| operation | requests | responses exercised | not exercised |"
        )?;
        writeln!(f, "|---|---|---|---|")?;
        for operation in &self.operations {
            let list = |exercised: bool| {
                let statuses: Vec<String> = operation
                    .responses
                    .iter()
                    .filter(|response| (response.answers > 0) == exercised)
                    .map(|response| match exercised {
                        true => format!("{} ({})", response.status, response.answers),
                        false => response.status.clone(),
                    })
                    .collect();
                if statuses.is_empty() {
                    "—".to_owned()
                } else {
                    statuses.join(", ")
                }
            };
            writeln!(
                f,
                "| {} ({} {}) | {} | {} | {} |",
                operation.operation,
                operation.method,
                operation.path,
                operation.requests,
                list(true),
                list(false)
            )?;
        }
        Ok(())
    }
}

/// One way an answered request differs from a contract. `Serialize`
/// gives `{contract, operation, pointer, expected, received}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The contract's [`name`](Contract::name); set when the finding is kept.
    pub contract: String,
    /// The operation the request maps to (an OpenAPI `operationId`, or
    /// `GET /users/{id}`), if any.
    pub operation: Option<String>,
    /// Where: a JSON pointer into the exchange — `/request/query/limit`,
    /// `/response/status`, `/response/body/user/name`.
    pub pointer: String,
    /// What the contract expects there.
    pub expected: String,
    /// What the exchange had.
    pub received: String,
}

impl Finding {
    /// A finding at `pointer`.
    pub fn new(
        pointer: impl Into<String>,
        expected: impl Into<String>,
        received: impl Into<String>,
    ) -> Self {
        Finding {
            contract: String::new(),
            operation: None,
            pointer: pointer.into(),
            expected: expected.into(),
            received: received.into(),
        }
    }

    /// The same, about `operation`.
    pub fn operation(mut self, operation: impl Into<String>) -> Self {
        self.operation = Some(operation.into());
        self
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.contract)?;
        if let Some(operation) = &self.operation {
            write!(f, ", {operation}")?;
        }
        write!(
            f,
            ": {}: expected {}, received {}",
            self.pointer, self.expected, self.received
        )
    }
}

/// The findings about one answered request, kept in its journal entry's
/// extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Findings(pub(crate) Arc<Vec<Finding>>);

/// The `500` a strict contract answers with instead: the findings, for the
/// test that reads it.
pub(crate) fn strict_answer(findings: &[Finding]) -> http::Response<crate::message::body::Body> {
    let body = serde_json::json!({
        "error": format!(
            "mocklib: the mocked answer breaks the contract: {}",
            findings.first().map(ToString::to_string).unwrap_or_default()
        ),
        "findings": findings,
    });
    let mut response = http::Response::new(crate::message::body::Body::from(
        serde_json::to_vec(&body).expect("JSON serializes"),
    ));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

impl fmt::Debug for Attached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Attached")
            .field("contract", &self.contract.name())
            .field("strict", &self.strict)
            .finish()
    }
}

/// A contract attached to a server.
#[derive(Clone)]
pub(crate) struct Attached {
    pub(crate) contract: Arc<dyn Contract>,
    /// Fails the request itself.
    pub(crate) strict: bool,
}

/// Checks `answered` against every contract in `attached`; whether one
/// that found something is strict.
pub(crate) fn check(attached: &[Attached], answered: &Answered<'_>) -> (Vec<Finding>, bool) {
    let mut findings = Vec::new();
    let mut strict = false;
    for one in attached {
        let found = one.contract.check(answered);
        if found.is_empty() {
            continue;
        }
        strict |= one.strict;
        let name = one.contract.name();
        findings.extend(found.into_iter().map(|mut finding| {
            finding.contract = name.to_owned();
            finding
        }));
    }
    (findings, strict)
}

#[cfg(feature = "graphql")]
pub(crate) use shared::fingerprint;
#[cfg(feature = "openapi")]
pub(crate) use shared::fingerprints;
#[cfg(any(feature = "openapi", feature = "graphql"))]
pub(crate) use shared::{Memo, short};

/// What the contracts mocklib ships share: remembering what a check found,
/// values shortened for messages.
#[cfg(any(feature = "openapi", feature = "graphql"))]
mod shared {
    use std::collections::HashMap;
    use std::hash::{BuildHasher, Hash, Hasher};
    use std::sync::{Mutex, PoisonError};

    use super::Answered;

    /// What a contract's checks found before, by a fingerprint of what they
    /// read: a mock answers the same request the same way again and again, and
    /// parsing and checking its body each time would cost more than the request
    /// itself. Bounded: it starts over past [`Memo::CAPACITY`] entries.
    // foldhash: the keys are fingerprints already; SipHash cost ~140
    // instructions a lookup, and a new request makes three or four.
    pub(crate) struct Memo<V, K = u64>(Mutex<HashMap<K, V, foldhash::fast::FixedState>>);

    impl<V, K> Default for Memo<V, K> {
        fn default() -> Self {
            Memo(Mutex::default())
        }
    }

    impl<V: Clone, K: Hash + Eq> Memo<V, K> {
        /// Entries kept before it starts over.
        const CAPACITY: usize = 4096;

        /// What it holds for `key`, else what `check` finds (then kept).
        pub(crate) fn get_or_check(&self, key: K, check: impl FnOnce() -> V) -> V {
            let lock = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(found) = lock().get(&key) {
                return found.clone();
            }
            let found = check();
            let mut memory = lock();
            if memory.len() >= Self::CAPACITY {
                memory.clear();
            }
            memory.insert(key, found.clone());
            found
        }
    }

    /// The fingerprints of one exchange: of the answer alone (status,
    /// headers, body) and of everything a check may read (the request's
    /// method, URL, headers and body, the origin relative descriptions are
    /// read on, and the answer).
    #[derive(Clone, Copy)]
    pub(crate) struct Fingerprints {
        // Read by the OpenAPI contract's memory of answers alone.
        #[cfg_attr(not(feature = "openapi"), allow(dead_code))]
        pub(crate) answer: u64,
        pub(crate) exchange: u64,
    }

    /// The exchange's fingerprint (see [`Fingerprints`]).
    #[cfg(feature = "graphql")]
    pub(crate) fn fingerprint(answered: &Answered<'_>) -> u64 {
        fingerprints(answered).exchange
    }

    /// Both fingerprints of `answered`, the answer read once.
    pub(crate) fn fingerprints(answered: &Answered<'_>) -> Fingerprints {
        let mut answer = Pieces::default();
        answer.feed(&answered.status.as_u16().to_le_bytes());
        answer.headers(answered.headers);
        match answered.body {
            Some(body) => {
                answer.feed(b"whole");
                answer.feed(body);
            }
            None => answer.feed(b"streamed"),
        }
        let answer = answer.0.finish();
        let mut exchange = Pieces::default();
        let request = answered.request;
        exchange.feed(request.method().as_str().as_bytes());
        exchange.feed(request.url().as_str().as_bytes());
        exchange.headers(request.headers());
        exchange.feed(request.body());
        match answered.base_url {
            Some(base) => {
                exchange.feed(b"base");
                exchange.feed(base.as_str().as_bytes());
            }
            None => exchange.feed(b"no base"),
        }
        exchange.feed(&answer.to_le_bytes());
        Fingerprints {
            answer,
            exchange: exchange.0.finish(),
        }
    }

    /// A fingerprint of length-prefixed pieces (so that they cannot run
    /// together), by foldhash's quality variant, whose 64 bits collide no
    /// more than a random function's. An exchange is some twenty short
    /// pieces, on which SipHash spent ~80 instructions each (foldhash ~10);
    /// and all go through one small `feed`, whose code a new request finds
    /// cold in the instruction cache like the rest of the check's.
    struct Pieces(foldhash::quality::FoldHasher<'static>);

    impl Default for Pieces {
        fn default() -> Self {
            Pieces(foldhash::quality::FixedState::default().build_hasher())
        }
    }

    impl Pieces {
        #[inline(never)]
        fn feed(&mut self, bytes: &[u8]) {
            self.0.write_usize(bytes.len());
            self.0.write(bytes);
        }

        fn headers(&mut self, headers: &http::HeaderMap) {
            self.feed(&headers.len().to_le_bytes());
            for (name, value) in headers {
                self.feed(name.as_str().as_bytes());
                self.feed(value.as_bytes());
            }
        }
    }

    /// `text` cut to a length a message can hold.
    pub(crate) fn short(text: &str) -> String {
        const MAX: usize = 120;
        if text.len() <= MAX {
            return text.to_owned();
        }
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &text[..end])
    }
}
