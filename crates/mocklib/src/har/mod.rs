//! Replaying HAR files as handlers (Polly.JS, VCR, vcrpy: record once,
//! replay offline).
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

mod model;
mod record;
mod replay;

use std::path::{Path, PathBuf};

pub use model::REDACTED;
pub use record::{RecordMode, Recording};
pub use replay::Replay;

use crate::handler::Handler;

/// The handlers replaying every exchange of the HAR file at `path`, with
/// the default matching (see the [module docs](self)); [`Replay`] for more.
pub fn handlers(path: impl AsRef<Path>) -> Result<Vec<Handler>, HarError> {
    Replay::from_path(path)?.handlers()
}

/// Why a HAR file could not be read or replayed.
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
}
