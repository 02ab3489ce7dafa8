//! [`Replay`]: recorded exchanges as handlers.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};
use url::Url;

use super::HarError;
use super::model::{Entry, Har, NameValue, REDACTED, body_bytes};
use crate::handling::handler::Handler;
use crate::matching::Predicate;
use crate::message::request::Request;
use crate::message::response::HttpResponse;

/// Headers never replayed: hop-by-hop ones (RFC 9110 §7.6.1), HTTP/2
/// pseudo-headers as browsers list them, and the length, which is the
/// replayed body's own.
const NOT_REPLAYED: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "content-length",
];

/// A HAR document and how its exchanges match requests.
///
/// ```
/// use mocklib::har::Replay;
///
/// # fn main() -> Result<(), mocklib::har::HarError> {
/// let replay = Replay::from_json(r#"{"log": {"entries": []}}"#)?
///     .match_headers(["accept"])
///     .match_body();
/// assert!(replay.handlers()?.is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Replay {
    entries: Vec<Entry>,
    source_name: String,
    on: MatchOn,
}

impl Replay {
    /// Reads the HAR file at `path`.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, HarError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| HarError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path.display().to_string())
    }

    /// Reads a HAR document from its JSON text.
    pub fn from_json(text: &str) -> Result<Self, HarError> {
        Self::parse(text, "the HAR text".to_owned())
    }

    /// The entries, for a recording that keeps them.
    pub(crate) fn into_entries(self) -> Vec<Entry> {
        self.entries
    }

    fn parse(text: &str, source_name: String) -> Result<Self, HarError> {
        match serde_json::from_str::<Har>(text) {
            Ok(har) => Ok(Replay {
                entries: har.log.entries,
                source_name,
                on: MatchOn {
                    query: true,
                    headers: Vec::new(),
                    body: false,
                },
            }),
            Err(source) => Err(HarError::Parse {
                source_name,
                source,
            }),
        }
    }

    /// Matches requests whatever their query.
    pub fn ignore_query(mut self) -> Self {
        self.on.query = false;
        self
    }

    /// Also matches these headers: a request must carry each with the
    /// recorded values (or lack it, if the recording did). Names are
    /// case-insensitive; invalid ones are ignored.
    pub fn match_headers<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.on.headers.extend(
            names
                .into_iter()
                .filter_map(|name| name.as_ref().parse().ok()),
        );
        self
    }

    /// Also matches the request body, byte for byte.
    pub fn match_body(mut self) -> Self {
        self.on.body = true;
        self
    }

    /// One handler per recorded exchange, in recorded order. Those followed
    /// by an identical request later in the file are `.once()`, so repeated
    /// requests get the recorded answers in order, the last repeating.
    pub fn handlers(&self) -> Result<Vec<Handler>, HarError> {
        let exchanges = self
            .entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                Exchange::new(entry, &self.on).map_err(|message| HarError::Entry {
                    source_name: self.source_name.clone(),
                    index,
                    message,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut remaining: HashMap<&Key, usize> = HashMap::new();
        for exchange in &exchanges {
            *remaining.entry(&exchange.key).or_insert(0) += 1;
        }
        let mut handlers = Vec::with_capacity(exchanges.len());
        for exchange in &exchanges {
            let left = remaining.get_mut(&exchange.key).expect("counted above");
            *left -= 1;
            let handler = exchange.handler();
            handlers.push(if *left > 0 { handler.once() } else { handler });
        }
        Ok(handlers)
    }
}

/// What a request must have to be answered by an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    method: Method,
    /// Origin and path.
    url: String,
    /// Sorted, when the query is matched.
    query: Option<Vec<(String, String)>>,
    headers: Vec<(HeaderName, Vec<Vec<u8>>)>,
    body: Option<Bytes>,
}

impl Key {
    /// Whether a request with key `live` is the one recorded: equal, but a
    /// redacted query parameter or header matches any value.
    fn accepts(&self, live: &Key) -> bool {
        self.method == live.method
            && self.url == live.url
            && self.body == live.body
            && query_accepts(self.query.as_deref(), live.query.as_deref())
            && self.headers.len() == live.headers.len()
            && self
                .headers
                .iter()
                .zip(&live.headers)
                .all(|(recorded, live)| {
                    let redacted = recorded.1.iter().any(|v| v == REDACTED.as_bytes());
                    recorded.0 == live.0
                        && (recorded.1 == live.1 || (redacted && live.1.len() == recorded.1.len()))
                })
    }
}

fn query_accepts(recorded: Option<&[(String, String)]>, live: Option<&[(String, String)]>) -> bool {
    let (Some(recorded), Some(live)) = (recorded, live) else {
        return recorded.is_none() && live.is_none();
    };
    if !recorded.iter().any(|(_, value)| value == REDACTED) {
        return recorded == live;
    }
    names(recorded) == names(live)
        && recorded
            .iter()
            .all(|pair| pair.1 == REDACTED || live.contains(pair))
}

/// The parameter names of a query, sorted.
fn names(pairs: &[(String, String)]) -> Vec<&str> {
    let mut names: Vec<&str> = pairs.iter().map(|(name, _)| name.as_str()).collect();
    names.sort_unstable();
    names
}

/// One recorded exchange, checked and ready to answer.
struct Exchange {
    key: Key,
    on: MatchOn,
    response: HttpResponse,
}

impl Exchange {
    fn new(entry: &Entry, on: &MatchOn) -> Result<Self, String> {
        let (method, url, body) = entry.request.parts()?;
        let headers = entry.request.header_map(|_, _| true);
        let request = Request::from_parts(method, url, headers, Bytes::from(body));
        Ok(Exchange {
            key: on.key(&request),
            on: on.clone(),
            response: response(entry)?,
        })
    }

    fn handler(&self) -> Handler {
        let key = self.key.clone();
        let on = self.on.clone();
        let description = match &key.query {
            Some(query) if !query.is_empty() => {
                let pairs = form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(query)
                    .finish();
                format!("{}?{pairs}", key.url)
            }
            _ => key.url.clone(),
        };
        let wanted = Arc::new(key);
        let method = wanted.method.clone();
        let predicate =
            Predicate::described(description, move |request| wanted.accepts(&on.key(request)));
        let response = self.response.clone();
        crate::namespace::http::on(method, predicate, move |_| response.clone())
    }
}

/// What of a request is matched; each handler's predicate owns a copy.
#[derive(Debug, Clone)]
struct MatchOn {
    query: bool,
    headers: Vec<HeaderName>,
    body: bool,
}

impl MatchOn {
    fn key(&self, request: &Request) -> Key {
        Key {
            method: request.method().clone(),
            url: clean_url(request.url()),
            query: self.query.then(|| sorted_query(request.url())),
            headers: self
                .headers
                .iter()
                .map(|name| {
                    let values = request.headers().get_all(name);
                    (
                        name.clone(),
                        values.iter().map(|v| v.as_bytes().to_vec()).collect(),
                    )
                })
                .collect(),
            body: self.body.then(|| request.body().clone()),
        }
    }
}

/// The recorded response as a mocked one.
pub(crate) fn response(entry: &Entry) -> Result<HttpResponse, String> {
    let recorded = &entry.response;
    let content = &recorded.content;
    let body = match &content.text {
        Some(text) => body_bytes(text, content.encoding.as_deref())
            .ok_or("the response body is not valid base64")?,
        None => Vec::new(),
    };
    // A HEAD response's length is that of the GET it stands for: kept as
    // recorded. Otherwise it is the replayed body's.
    let head = entry.request.method.eq_ignore_ascii_case("HEAD");
    let length = body.len().to_string();
    let mut response = HttpResponse::new(body).status(recorded.status);
    if !head {
        response = response.header("content-length", length);
    }
    if !recorded.status_text.is_empty() {
        response = response.status_text(&recorded.status_text);
    }
    for NameValue { name, value } in &recorded.headers {
        let lower = name.to_ascii_lowercase();
        let decoded = lower == "content-encoding" && !content.as_sent;
        let length = lower == "content-length";
        if lower.starts_with(':')
            || (NOT_REPLAYED.contains(&lower.as_str()) && !(head && length))
            || decoded
        {
            continue;
        }
        if HeaderName::try_from(name.as_str()).is_err() || HeaderValue::try_from(value).is_err() {
            return Err(format!("invalid response header {name:?}: {value:?}"));
        }
        response = response.header(name, value);
    }
    Ok(response)
}

/// Origin and path: what a request's URL is matched on besides its query.
fn clean_url(url: &Url) -> String {
    format!("{}{}", url.origin().ascii_serialization(), url.path())
}

fn sorted_query(url: &Url) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    pairs.sort();
    pairs
}
