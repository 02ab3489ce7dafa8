//! Recording requests performed for real into a HAR file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use http::HeaderMap;

use super::model::REDACTED;
use super::model::{
    Content, Creator, Entry, Har, HarRequest, HarResponse, Log, NameValue, PostData, Timings,
};
use super::{HarError, Replay};
use crate::message::exchange::{Exchange, ExchangeSink};

/// Headers redacted unless told otherwise: credentials and sessions.
const SECRET_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// How a recording uses its file (VCR's record modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordMode {
    /// Record when the file is missing; replay it, recording nothing, when
    /// it exists. Delete the file to record again.
    #[default]
    Once,
    /// Replay what the file has and record the requests it has no answer
    /// for, adding them to it.
    NewEpisodes,
    /// Replay only: a request the file does not answer is unhandled (the
    /// unhandled-request strategy applies).
    None,
    /// Record every request again, replacing the file.
    All,
}

/// A recording: its file, mode and what to redact. Start it with
/// [`Server::record`](crate::node::Server::record).
///
/// Secrets never reach the file: the values of the `Authorization`,
/// `Proxy-Authorization`, `Cookie` and `Set-Cookie` headers are replaced
/// by [`REDACTED`], and so are the headers, query parameters and JSON body
/// fields (at any depth) named with [`redact_header`](Self::redact_header),
/// [`redact_query`](Self::redact_query) and
/// [`redact_json_field`](Self::redact_json_field). A redacted query
/// parameter still matches on replay, whatever its value.
#[derive(Clone)]
pub struct Recording {
    path: PathBuf,
    mode: RecordMode,
    redaction: Redaction,
    matching: Arc<dyn Fn(Replay) -> Replay + Send + Sync>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("redaction", &self.redaction)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// A recording into (or from) the HAR file at `path`, in
    /// [`RecordMode::Once`].
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Recording {
            path: path.into(),
            mode: RecordMode::Once,
            redaction: Redaction {
                headers: SECRET_HEADERS.iter().map(|h| (*h).to_owned()).collect(),
                query: HashSet::new(),
                json_fields: HashSet::new(),
            },
            matching: Arc::new(|replay| replay),
        }
    }

    /// How the file's exchanges match requests on replay, as [`Replay`]'s
    /// options (method, URL and query by default).
    ///
    /// ```
    /// use mocklib::har::Recording;
    ///
    /// let recording = Recording::new("tests/fixtures/api.har")
    ///     .matching(|replay| replay.match_body().match_headers(["accept"]));
    /// # let _ = recording;
    /// ```
    pub fn matching(mut self, options: impl Fn(Replay) -> Replay + Send + Sync + 'static) -> Self {
        self.matching = Arc::new(options);
        self
    }

    /// The file's exchanges, read for replay with the matching options.
    pub(crate) fn replay(&self) -> Result<Replay, HarError> {
        Ok((self.matching)(Replay::from_path(&self.path)?))
    }

    /// Sets the mode.
    pub fn mode(mut self, mode: RecordMode) -> Self {
        self.mode = mode;
        self
    }

    /// Also redacts this header (case-insensitive), in requests and
    /// responses.
    pub fn redact_header(mut self, name: &str) -> Self {
        self.redaction.headers.insert(name.to_ascii_lowercase());
        self
    }

    /// Also redacts this query parameter.
    pub fn redact_query(mut self, name: &str) -> Self {
        self.redaction.query.insert(name.to_owned());
        self
    }

    /// Also redacts this field of JSON bodies, wherever it appears.
    pub fn redact_json_field(mut self, name: &str) -> Self {
        self.redaction.json_fields.insert(name.to_owned());
        self
    }

    /// Whether requests are to be recorded, and whether the file's entries
    /// are to be replayed (and kept), given whether it exists now.
    pub(crate) fn plan(&self) -> (bool, bool) {
        let exists = self.path.exists();
        match self.mode {
            RecordMode::Once => (!exists, exists),
            RecordMode::NewEpisodes => (true, exists),
            RecordMode::None => (false, true),
            RecordMode::All => (true, false),
        }
    }

    /// The recorder writing into the file, starting from `kept` entries;
    /// writes them at once, so the file exists (and is valid) from now on.
    pub(crate) fn recorder(&self, kept: Vec<Entry>) -> Result<Recorder, HarError> {
        let recorder = Recorder {
            path: self.path.clone(),
            redaction: self.redaction.clone(),
            entries: Mutex::new(kept),
        };
        recorder.write()?;
        Ok(recorder)
    }
}

#[derive(Debug, Clone)]
struct Redaction {
    /// Lowercase names.
    headers: HashSet<String>,
    query: HashSet<String>,
    json_fields: HashSet<String>,
}

/// Appends each exchange it is given to its HAR file, rewriting the file
/// atomically each time.
#[derive(Debug)]
pub(crate) struct Recorder {
    path: PathBuf,
    redaction: Redaction,
    entries: Mutex<Vec<Entry>>,
}

impl Recorder {
    fn write(&self) -> Result<(), HarError> {
        let entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.write_entries(&entries)
    }

    fn write_entries(&self, entries: &[Entry]) -> Result<(), HarError> {
        let har = Har {
            log: Log {
                version: "1.2".to_owned(),
                creator: Creator::default(),
                entries: entries.to_vec(),
            },
        };
        let mut text = serde_json::to_string_pretty(&har).expect("a HAR document serializes");
        text.push('\n');
        write_atomically(&self.path, text.as_bytes()).map_err(|source| HarError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

impl ExchangeSink for Recorder {
    fn record(&self, exchange: Exchange) {
        let entry = entry(&exchange, &self.redaction);
        // Held while writing, so concurrent exchanges are written one after
        // the other and the last write holds them all.
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.push(entry);
        if let Err(error) = self.write_entries(&entries) {
            crate::support::log::error(&format!("the recording lost an exchange: {error}"));
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`: readers see the old file or the new one, never half of one.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// The HAR entry of an exchange, with the secrets redacted.
fn entry(exchange: &Exchange, redaction: &Redaction) -> Entry {
    let millis = exchange.elapsed.as_secs_f64() * 1000.0;
    Entry {
        started_date_time: crate::support::date::rfc3339(exchange.started),
        time: millis,
        request: request(exchange, redaction),
        response: response(exchange, redaction),
        cache: serde_json::Map::new(),
        timings: Timings {
            send: 0.0,
            wait: millis,
            receive: 0.0,
        },
    }
}

fn request(exchange: &Exchange, redaction: &Redaction) -> HarRequest {
    let request = &exchange.request;
    let mut url = request.url().clone();
    redact_query(&mut url, redaction);
    let query_string = url
        .query_pairs()
        .map(|(name, value)| NameValue {
            name: name.into_owned(),
            value: value.into_owned(),
        })
        .collect();
    let post_data = (!request.body().is_empty()).then(|| {
        let (text, encoding) = body_text(request.body(), redaction);
        PostData {
            mime_type: content_type(request.headers()),
            text,
            encoding,
        }
    });
    HarRequest {
        method: request.method().to_string(),
        url: url.to_string(),
        http_version: format!("{:?}", request.version()),
        cookies: Vec::new(),
        headers: headers(request.headers(), redaction),
        query_string,
        post_data,
        headers_size: -1,
        body_size: request.body().len() as i64,
    }
}

fn response(exchange: &Exchange, redaction: &Redaction) -> HarResponse {
    let location = exchange.headers.get(http::header::LOCATION);
    let (text, encoding) = if exchange
        .headers
        .contains_key(http::header::CONTENT_ENCODING)
    {
        // Compressed bytes are not text, and are redacted as they are.
        (
            crate::support::base64::encode(&exchange.body),
            Some("base64".to_owned()),
        )
    } else {
        body_text(&exchange.body, redaction)
    };
    HarResponse {
        status: exchange.status.as_u16(),
        status_text: exchange.status.canonical_reason().unwrap_or("").to_owned(),
        http_version: format!("{:?}", exchange.version),
        cookies: Vec::new(),
        headers: headers(&exchange.headers, redaction),
        content: Content {
            size: exchange.body.len() as i64,
            mime_type: content_type(&exchange.headers),
            text: Some(text),
            encoding,
            as_sent: true,
        },
        redirect_url: location
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned(),
        headers_size: -1,
        body_size: exchange.body.len() as i64,
    }
}

fn headers(headers: &HeaderMap, redaction: &Redaction) -> Vec<NameValue> {
    headers
        .iter()
        .map(|(name, value)| NameValue {
            name: name.as_str().to_owned(),
            value: if redaction.headers.contains(name.as_str()) {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            },
        })
        .collect()
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

fn redact_query(url: &mut url::Url, redaction: &Redaction) {
    if url.query().is_none() || redaction.query.is_empty() {
        return;
    }
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(name, value)| {
            let value = if redaction.query.contains(name.as_ref()) {
                REDACTED.to_owned()
            } else {
                value.into_owned()
            };
            (name.into_owned(), value)
        })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
}

/// A body as HAR text: itself when UTF-8 (JSON with its secret fields
/// redacted), base64 otherwise.
fn body_text(body: &[u8], redaction: &Redaction) -> (String, Option<String>) {
    let Ok(text) = std::str::from_utf8(body) else {
        return (
            crate::support::base64::encode(body),
            Some("base64".to_owned()),
        );
    };
    if !redaction.json_fields.is_empty() {
        if let Ok(mut json) = serde_json::from_str::<serde_json::Value>(text) {
            if redact_json(&mut json, &redaction.json_fields) {
                return (json.to_string(), None);
            }
        }
    }
    (text.to_owned(), None)
}

/// Replaces the values of `fields` at any depth; whether any was.
fn redact_json(value: &mut serde_json::Value, fields: &HashSet<String>) -> bool {
    match value {
        serde_json::Value::Object(object) => {
            let mut redacted = false;
            for (key, value) in object.iter_mut() {
                if fields.contains(key) {
                    *value = serde_json::Value::String(REDACTED.to_owned());
                    redacted = true;
                } else {
                    redacted |= redact_json(value, fields);
                }
            }
            redacted
        }
        serde_json::Value::Array(items) => {
            // Every item, not up to the first redacted one.
            let mut redacted = false;
            for item in items {
                redacted |= redact_json(item, fields);
            }
            redacted
        }
        _ => false,
    }
}
