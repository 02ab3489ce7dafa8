//! Replaying HAR files as handlers (Polly.JS, VCR, vcrpy: record once,
//! replay offline), and checking recordings against the live API for drift.
//!
//! A [HAR](http://www.softwareishard.com/blog/har-12-spec/) file holds HTTP
//! exchanges: browsers' developer tools export them ("Save all as HAR"), and
//! so do proxies. [`handlers`] turns each recorded exchange into an ordinary
//! [`Handler`] that answers the same request with the recorded response, so
//! everything that applies to handlers applies here: `use_handlers`,
//! boundaries, `once`, expectations, the journal.
//!
//! # Matching
//!
//! A recorded exchange answers a request with the same method, origin and
//! path, and the same query parameters in any order. [`Replay`] also
//! matches headers by name and the body, or ignores the query. Repeated
//! identical requests are answered in recorded order, the last answer
//! repeating: the handlers of all but the last are `.once()`, so
//! [`restore_handlers`](crate::node::Server::restore_handlers) starts them over.
//!
//! # Bodies
//!
//! Binary bodies come from base64 (`"encoding": "base64"`) byte for byte.
//! Browsers store a compressed response's body decoded, so unless the file
//! says the body is as it was sent (mocklib's `_mocklibEncoded`), its
//! `Content-Encoding` header is left out of the replayed response;
//! `Content-Length` is always that of the replayed body.
//!
//! # With handlers written by hand
//!
//! Put the handlers you write first and the replayed ones after them: the
//! lookup takes the first handler that answers, so yours win, and a
//! resolver of yours that returns nothing falls through to the recording.
//!
//! ```
//! use mocklib::{har, http, HttpResponse, node::setup_server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let recording = r#"{"log": {"version": "1.2", "creator": {"name": "devtools", "version": "1"},
//!   "entries": [{
//!     "request": {"method": "GET", "url": "https://api.example.com/user?id=1"},
//!     "response": {"status": 200, "headers": [{"name": "content-type", "value": "application/json"}],
//!                  "content": {"size": 15, "mimeType": "application/json", "text": "{\"name\":\"John\"}"}}
//!   }]}}"#;
//! let mut list = vec![http::get("https://api.example.com/status", |_| HttpResponse::text("up"))];
//! list.extend(har::Replay::from_json(recording)?.handlers()?);
//! let server = setup_server(list);
//! server.listen();
//!
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(server.middleware())
//!     .build();
//! let user = client.get("https://api.example.com/user?id=1").send().await?.text().await?;
//! assert_eq!(user, r#"{"name":"John"}"#);
//! # Ok(())
//! # }
//! ```
//!
//! # Drift
//!
//! A recording ages: the API behind it changes, and the tests replaying it
//! keep passing on answers the API no longer gives. A drift check (feature
//! `net` too) sends each recorded request again, to the live API or to a
//! base URL in its place (path and query kept), and compares each answer
//! with the recorded one:
//!
//! - the status, and the media type of `Content-Type` (`charset` aside);
//! - for JSON bodies, the *shape*: fields added, fields removed, types
//!   changed (null, boolean, number, string, array, object), at any depth,
//!   each at a JSON pointer (`/items/0/id`). Values are not compared: ids,
//!   timestamps and names change from run to run. An array's elements are
//!   compared as one shape, the union of theirs, so a list of three users
//!   compares cleanly with a list of five;
//! - other bodies only as empty or not.
//!
//! A request that gets no answer (nothing listening, a timeout) is a
//! finding of its entry, and the other entries are still checked.
//! [`check_drift`] is the one call, [`Drift`] has the options (headers in
//! place of redacted ones, pointers not to compare, a timeout), and
//! `mocklib check --har FILE --against URL` runs it from CI (exit code 1
//! on drift).
//!
//! ```
//! use mocklib::{har::Drift, http, HttpResponse, node::setup_server};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let recording = r#"{"log": {"entries": [{
//!     "request": {"method": "GET", "url": "https://api.example.com/users/1"},
//!     "response": {"status": 200, "headers": [{"name": "content-type", "value": "application/json"}],
//!                  "content": {"mimeType": "application/json", "text": "{\"id\":1,\"name\":\"John\",\"tags\":[]}"}}
//!   }]}}"#;
//! // The API today (here a mocklib server on loopback): `name` renamed,
//! // `id` a string; other values are no drift.
//! let api = setup_server([http::get("/users/:id", |_| {
//!     HttpResponse::json(&json!({ "id": "2", "full_name": "Kate", "tags": ["admin"] }))
//! })]);
//! api.listen();
//!
//! let report = Drift::from_json(recording)?.against(api.url()).check().await?;
//! assert!(report.has_drift());
//! let findings: Vec<String> = report.entries[0].findings.iter().map(ToString::to_string).collect();
//! assert_eq!(findings, [
//!     "type changed /id: number -> string",
//!     "field removed /name: string",
//!     "field added /full_name: string",
//! ]);
//! println!("{report}"); // the entries that drifted, each with its findings
//! # Ok(())
//! # }
//! ```

#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
mod drift;
mod model;
mod record;
mod replay;
mod report;
#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
mod shape;

use std::path::{Path, PathBuf};

#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
pub use drift::Drift;
pub use model::REDACTED;
pub use record::{RecordMode, Recording};
pub use replay::Replay;
pub use report::{DriftFinding, DriftKind, DriftReport, EntryDrift};

use crate::handling::handler::Handler;

/// The handlers replaying every exchange of the HAR file at `path`, with
/// the default matching (see the [module docs](self)); [`Replay`] for more.
pub fn handlers(path: impl AsRef<Path>) -> Result<Vec<Handler>, HarError> {
    Replay::from_path(path)?.handlers()
}

/// Sends each request of the HAR file at `path` again, to `base_url`
/// instead of its recorded origin, and reports how the answers differ from
/// the recorded ones (see [Drift](self#drift)); [`Drift`] for more options.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mocklib::har::HarError> {
/// let report = mocklib::har::check_drift("tests/fixtures/api.har", "https://staging.example.com").await?;
/// assert!(!report.has_drift(), "{report}");
/// # Ok(())
/// # }
/// ```
#[cfg(all(feature = "net", not(target_arch = "wasm32")))]
pub async fn check_drift(
    path: impl AsRef<Path>,
    base_url: impl AsRef<str>,
) -> Result<DriftReport, HarError> {
    Drift::from_path(path)?.against(base_url).check().await
}

/// Why a HAR file could not be read, replayed or checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarError {
    /// The file could not be read.
    #[error("could not read the HAR file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The recording could not be written.
    #[error("could not write the HAR file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a HAR document.
    #[error("{source_name} is not a HAR document: {source}")]
    Parse {
        /// The file, or "the HAR text".
        source_name: String,
        /// Where and why, from the JSON parser.
        source: serde_json::Error,
    },
    /// An entry cannot be replayed (an invalid method, URL, header or body).
    #[error("entry {index} of {source_name} cannot be replayed: {message}")]
    Entry {
        /// The file, or "the HAR text".
        source_name: String,
        /// The entry's index in `log.entries`, from 0.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// An option of a drift check cannot be used: the base URL, a header,
    /// an ignored pointer. Nothing was sent.
    #[error("{what} {value:?} cannot be used: {reason}")]
    InvalidOption {
        /// Which option: "the base URL", "the header", "the ignored pointer".
        what: &'static str,
        /// The value given (a header's name).
        value: String,
        /// Why.
        reason: String,
    },
}
