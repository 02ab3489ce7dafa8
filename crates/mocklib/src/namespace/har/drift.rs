//! [`Drift`]: a recording's requests sent again to the live API, and its
//! answers compared with the recorded ones.
//!
//! This file plans the requests and judges the answers; sending them is a
//! front door's job (`node/net/drift.rs` adds [`Drift::check`]), so that
//! the `har` layer imports nothing above it.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use super::HarError;
use super::model::{Entry, REDACTED, body_bytes};
use super::replay::Replay;
use super::report::{DriftFinding, DriftKind, DriftReport, EntryDrift};
use super::shape;
use crate::handling::contract::{Answered, Contract};
use crate::message::request::Request;
use crate::message::response::HttpResponse;

/// How long each request may take by default.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Request headers never sent again: `Host` and `Content-Length` belong to
/// the recorded origin and body (the client sets its own), and without
/// `Accept-Encoding` the live body comes uncompressed, so its shape can be
/// read (mocklib has no decompressor). The upstream client drops the
/// hop-by-hop ones.
const NOT_SENT: [&str; 3] = ["host", "content-length", "accept-encoding"];

/// A drift check of a HAR file: each recorded request is sent again, to
/// the live API, and each answer compared with the recorded one (what
/// re-recording a VCR cassette and diffing it would show, without touching
/// the file; see the [module docs](super#drift)). Build it, then
/// [`check`](Self::check).
///
/// ```
/// use std::time::Duration;
/// use mocklib::har::Drift;
///
/// # fn main() -> Result<(), mocklib::har::HarError> {
/// let drift = Drift::from_json(r#"{"log": {"entries": []}}"#)?
///     .against("http://127.0.0.1:8080")   // instead of the recorded origins
///     .header("authorization", "Bearer staging-token") // redacted in the file
///     .ignore("/meta")                    // free-form: not compared
///     .ignore("/items/*/extra")
///     .timeout(Duration::from_secs(5));
/// # let _ = drift;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Drift {
    entries: Vec<Entry>,
    source_name: String,
    against: Option<String>,
    headers: Vec<(String, String)>,
    ignored: Vec<String>,
    timeout: Duration,
}

impl Drift {
    /// Reads the HAR file at `path`.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, HarError> {
        let path = path.as_ref();
        let entries = Replay::from_path(path)?.into_entries();
        Ok(Self::new(entries, path.display().to_string()))
    }

    /// Reads a HAR document from its JSON text.
    pub fn from_json(text: &str) -> Result<Self, HarError> {
        let entries = Replay::from_json(text)?.into_entries();
        Ok(Self::new(entries, "the HAR text".to_owned()))
    }

    fn new(entries: Vec<Entry>, source_name: String) -> Self {
        Drift {
            entries,
            source_name,
            against: None,
            headers: Vec::new(),
            ignored: Vec::new(),
            timeout: TIMEOUT,
        }
    }

    /// Sends the requests to this base URL instead of their recorded
    /// origins: scheme, host and port are replaced, path and query kept. A
    /// path in the base URL is put before the recorded path
    /// (`https://staging.example.com/api` sends `/users` to `/api/users`).
    pub fn against(mut self, base_url: impl AsRef<str>) -> Self {
        self.against = Some(base_url.as_ref().to_owned());
        self
    }

    /// Sends this header with every request, in place of the recorded
    /// values: credentials the recording redacted, for instance (headers
    /// recorded as [`REDACTED`](super::REDACTED) are not sent at all). A
    /// later call for the same name replaces the value.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.headers
            .retain(|(earlier, _)| !earlier.eq_ignore_ascii_case(&name));
        self.headers.push((name, value.into()));
        self
    }

    /// Does not report what differs in JSON bodies at or below this JSON
    /// pointer; a `*` segment stands for any field or index
    /// (`/items/*/metadata`). Status, content type and failed requests are
    /// always reported.
    pub fn ignore(mut self, pointer: impl Into<String>) -> Self {
        self.ignored.push(pointer.into());
        self
    }

    /// How long each request may take before its entry is reported as
    /// failed (30 seconds unless set).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Checks each recorded exchange against `contract` — an OpenAPI
    /// document's ([`OpenApi::contract`](crate::openapi::OpenApi::contract)),
    /// say — without sending anything: what the recording holds that the
    /// API's description does not allow (a field its schema lacks, an
    /// undocumented status), per entry, in the same report as a drift
    /// check ([`DriftKind::Contract`] findings). The report's
    /// `expected_from` is the contract, its `received_from` the file.
    ///
    /// ```
    /// use mocklib::contract::{Answered, Contract, Finding};
    /// use mocklib::har::Drift;
    ///
    /// struct OnlyOk;
    /// impl Contract for OnlyOk {
    ///     fn name(&self) -> &str { "only 200" }
    ///     fn check(&self, answered: &Answered<'_>) -> Vec<Finding> {
    ///         (answered.status != 200)
    ///             .then(|| Finding::new("/response/status", "200", answered.status.as_str()))
    ///             .into_iter()
    ///             .collect()
    ///     }
    /// }
    ///
    /// let har = r#"{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [
    ///   {"startedDateTime": "2026-01-01T00:00:00Z", "time": 1,
    ///    "request": {"method": "GET", "url": "https://api.example.com/user", "httpVersion": "HTTP/1.1",
    ///                "cookies": [], "headers": [], "queryString": [], "headersSize": -1, "bodySize": 0},
    ///    "response": {"status": 404, "statusText": "Not Found", "httpVersion": "HTTP/1.1", "cookies": [],
    ///                 "headers": [], "content": {"size": 0, "mimeType": "text/plain"},
    ///                 "redirectURL": "", "headersSize": -1, "bodySize": 0},
    ///    "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}]}}"#;
    /// let report = Drift::from_json(har)?.check_contract(&OnlyOk)?;
    /// assert!(report.has_drift());
    /// assert_eq!(report.entries[0].findings[0].pointer, "/response/status");
    /// # Ok::<(), mocklib::har::HarError>(())
    /// ```
    pub fn check_contract(&self, contract: &dyn Contract) -> Result<DriftReport, HarError> {
        let mut entries = Vec::with_capacity(self.entries.len());
        for (index, entry) in self.entries.iter().enumerate() {
            let fail = |message: String| HarError::Entry {
                source_name: self.source_name.clone(),
                index,
                message,
            };
            let (method, url, body) = entry.request.parts().map_err(fail)?;
            let headers = entry.request.header_map(|_, value| value != REDACTED);
            let request =
                Request::from_parts(method.clone(), url.clone(), headers, Bytes::from(body));
            let answer = super::replay::response(entry)
                .and_then(HttpResponse::into_http)
                .map_err(fail)?;
            let answered = Answered {
                request: &request,
                status: answer.status(),
                headers: answer.headers(),
                body: answer.body().as_bytes().map(|bytes| &bytes[..]),
                base_url: None,
            };
            let findings = contract
                .check(&answered)
                .into_iter()
                .map(|finding| DriftFinding {
                    kind: DriftKind::Contract,
                    pointer: finding.pointer,
                    expected: Some(finding.expected),
                    received: Some(finding.received),
                    operation: finding.operation,
                })
                .collect();
            entries.push(EntryDrift {
                index,
                method: method.to_string(),
                url: url.to_string(),
                findings,
            });
        }
        Ok(DriftReport {
            expected_from: contract.name().to_owned(),
            received_from: self.source_name.clone(),
            entries,
        })
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends each entry's request with `send`, one after the other in file
    /// order (a recording's requests may depend on the ones before them),
    /// and compares the answers. Every entry and option is checked before
    /// anything is sent.
    pub(crate) async fn run<F, Fut>(&self, mut send: F) -> Result<DriftReport, HarError>
    where
        F: FnMut(&Request) -> Fut,
        Fut: Future<Output = Result<HttpResponse, String>>,
    {
        let base = self.base_url()?;
        let overrides = self.overrides()?;
        self.check_ignored()?;
        let plans = self
            .entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                Plan::new(entry, base.as_ref(), &overrides).map_err(|message| HarError::Entry {
                    source_name: self.source_name.clone(),
                    index,
                    message,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut entries = Vec::with_capacity(plans.len());
        for (index, plan) in plans.into_iter().enumerate() {
            let findings = match &plan.request {
                Ok(request) => {
                    let answer = send(request).await;
                    self.judge(&plan.expected, answer)
                }
                Err(why) => vec![request_failed(&plan.expected, why.clone())],
            };
            entries.push(EntryDrift {
                index,
                method: plan.method,
                url: plan.url,
                findings,
            });
        }
        Ok(DriftReport {
            expected_from: self.source_name.clone(),
            received_from: base.map_or_else(|| "the recorded origins".to_owned(), String::from),
            entries,
        })
    }

    fn base_url(&self) -> Result<Option<Url>, HarError> {
        let Some(text) = &self.against else {
            return Ok(None);
        };
        let invalid = |reason: &str| HarError::InvalidOption {
            what: "the base URL",
            value: text.clone(),
            reason: reason.to_owned(),
        };
        let url = Url::parse(text).map_err(|error| invalid(&error.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(
                "only http:// and https:// URLs can be checked against",
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid("it has no host"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(
                "a base URL has no query or fragment (the recorded ones are kept)",
            ));
        }
        Ok(Some(url))
    }

    fn overrides(&self) -> Result<Vec<(HeaderName, HeaderValue)>, HarError> {
        self.headers
            .iter()
            .map(|(name, value)| {
                let invalid = |reason: String| HarError::InvalidOption {
                    what: "the header",
                    value: name.clone(),
                    reason,
                };
                let name = HeaderName::try_from(name.as_str())
                    .map_err(|error| invalid(error.to_string()))?;
                let value = HeaderValue::try_from(value.as_str())
                    .map_err(|_| invalid("its value is not a valid header value".to_owned()))?;
                Ok((name, value))
            })
            .collect()
    }

    fn check_ignored(&self) -> Result<(), HarError> {
        match self
            .ignored
            .iter()
            .find(|pointer| !pointer.is_empty() && !pointer.starts_with('/'))
        {
            Some(pointer) => Err(HarError::InvalidOption {
                what: "the ignored pointer",
                value: pointer.clone(),
                reason: "a JSON pointer is empty (the whole body) or starts with /".to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// What differs between the expected answer and the actual one.
    fn judge(
        &self,
        expected: &Expected,
        answer: Result<HttpResponse, String>,
    ) -> Vec<DriftFinding> {
        let live = match answer {
            Ok(live) => live,
            Err(why) => return vec![request_failed(expected, why)],
        };
        let mut findings = Vec::new();
        let status = live.status_code().as_u16();
        if status != expected.status {
            findings.push(DriftFinding::new(
                DriftKind::Status,
                "",
                Some(expected.status.to_string()),
                Some(status.to_string()),
            ));
        }
        let media_type = media_type(header(live.headers(), "content-type"));
        if media_type != expected.media_type {
            findings.push(DriftFinding::new(
                DriftKind::ContentType,
                "",
                Some(or_none(&expected.media_type)),
                Some(or_none(&media_type)),
            ));
        }
        let body = BodyKind::read(
            live.body().as_bytes().map(|bytes| &bytes[..]),
            header(live.headers(), "content-encoding"),
            &media_type,
        );
        let same_type = media_type == expected.media_type;
        match (&expected.body, &body) {
            (BodyKind::Json(expected_json), BodyKind::Json(actual_json)) => findings.extend(
                shape::diff(expected_json, actual_json)
                    .into_iter()
                    .filter(|finding| !self.is_ignored(finding)),
            ),
            (BodyKind::Unknown, _) | (_, BodyKind::Unknown) => {}
            (BodyKind::Empty, BodyKind::Empty) => {}
            (BodyKind::Empty, _) | (_, BodyKind::Empty) => {
                let says = |kind: &BodyKind| {
                    if matches!(kind, BodyKind::Empty) {
                        "empty"
                    } else {
                        "not empty"
                    }
                    .to_owned()
                };
                findings.push(DriftFinding::new(
                    DriftKind::Body,
                    "",
                    Some(says(&expected.body)),
                    Some(says(&body)),
                ));
            }
            // Under the same content type, so nothing above says it.
            (BodyKind::Json(_), BodyKind::Other) if same_type => findings.push(DriftFinding::new(
                DriftKind::Body,
                "",
                Some("JSON".to_owned()),
                Some("not JSON".to_owned()),
            )),
            (BodyKind::Other, BodyKind::Json(_)) if same_type => findings.push(DriftFinding::new(
                DriftKind::Body,
                "",
                Some("not JSON".to_owned()),
                Some("JSON".to_owned()),
            )),
            _ => {}
        }
        findings
    }

    /// Whether a shape finding is at or below an ignored pointer.
    fn is_ignored(&self, finding: &DriftFinding) -> bool {
        matches!(
            finding.kind,
            DriftKind::FieldAdded | DriftKind::FieldRemoved | DriftKind::TypeChanged
        ) && self
            .ignored
            .iter()
            .any(|pattern| pointer_matches(pattern, &finding.pointer))
    }
}

/// Whether `pointer` is `pattern` or below it; a `*` segment of `pattern`
/// stands for any one segment.
fn pointer_matches(pattern: &str, pointer: &str) -> bool {
    let mut segments = pointer.split('/').skip(1);
    pattern.split('/').skip(1).all(|wanted| {
        segments
            .next()
            .is_some_and(|s| wanted == "*" || wanted == s)
    })
}

fn request_failed(expected: &Expected, why: String) -> DriftFinding {
    DriftFinding::new(
        DriftKind::RequestFailed,
        "",
        Some(expected.status.to_string()),
        Some(why),
    )
}

fn or_none(media_type: &str) -> String {
    if media_type.is_empty() {
        "(none)".to_owned()
    } else {
        media_type.to_owned()
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
}

/// `application/json` of `Application/JSON; charset=utf-8`.
fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn is_json(media_type: &str) -> bool {
    media_type == "application/json" || media_type.ends_with("+json")
}

/// One entry, ready to send: its request (or why it cannot be sent) and
/// what its answer should look like.
struct Plan {
    method: String,
    url: String,
    request: Result<Request, String>,
    expected: Expected,
}

/// The recorded answer, as far as it is compared.
struct Expected {
    status: u16,
    media_type: String,
    body: BodyKind,
}

/// A body, as far as it is compared.
enum BodyKind {
    /// Not known: not in the file, or still compressed.
    Unknown,
    Empty,
    Json(serde_json::Value),
    /// Not empty, and not JSON (by its content type, or it does not parse).
    Other,
}

impl BodyKind {
    fn read(bytes: Option<&[u8]>, encoding: &str, media_type: &str) -> Self {
        let Some(bytes) = bytes else {
            return BodyKind::Unknown;
        };
        if bytes.is_empty() {
            return BodyKind::Empty;
        }
        // mocklib keeps nothing to decompress with; the live request asks
        // for no compression, and a recording's compressed body is skipped.
        if !encoding.is_empty() && !encoding.eq_ignore_ascii_case("identity") {
            return BodyKind::Unknown;
        }
        if !is_json(media_type) {
            return BodyKind::Other;
        }
        serde_json::from_slice(bytes).map_or(BodyKind::Other, BodyKind::Json)
    }
}

impl Plan {
    fn new(
        entry: &Entry,
        base: Option<&Url>,
        overrides: &[(HeaderName, HeaderValue)],
    ) -> Result<Self, String> {
        let (method, url, body) = entry.request.parts()?;
        let expected = Expected::new(entry)?;
        // A browser's HAR may hold `data:` or `ws:` entries: nothing to send
        // over HTTP, said in the report rather than failing the whole file.
        if !matches!(url.scheme(), "http" | "https") {
            return Ok(Plan {
                method: method.to_string(),
                url: url.to_string(),
                request: Err(format!("a {}: URL cannot be sent over HTTP", url.scheme())),
                expected,
            });
        }
        let url = match base {
            Some(base) => rebase(&url, base),
            None => url,
        };
        // Lenient, as replaying is: a header no client could send is left
        // out, the rest of the entry is still checked.
        let mut headers = entry
            .request
            .header_map(|name, value| !NOT_SENT.contains(&name) && value != REDACTED);
        for (name, _) in overrides {
            headers.remove(name);
        }
        for (name, value) in overrides {
            headers.append(name.clone(), value.clone());
        }
        Ok(Plan {
            method: method.to_string(),
            url: url.to_string(),
            request: Ok(Request::from_parts(method, url, headers, Bytes::from(body))),
            expected,
        })
    }
}

impl Expected {
    fn new(entry: &Entry) -> Result<Self, String> {
        let response = &entry.response;
        let headers = |wanted: &str| {
            response
                .headers
                .iter()
                .find(|header| header.name.eq_ignore_ascii_case(wanted))
                .map_or("", |header| header.value.as_str())
        };
        // Browsers' files have the header; the content's `mimeType` is the
        // fallback for files that list no headers.
        let content_type = match headers("content-type") {
            "" => response.content.mime_type.as_str(),
            found => found,
        };
        let media_type = media_type(content_type);
        let content = &response.content;
        let bytes = match &content.text {
            Some(text) => Some(
                body_bytes(text, content.encoding.as_deref())
                    .ok_or("the response body is not valid base64")?,
            ),
            None => None,
        };
        // Browsers store a compressed body decoded; mocklib stores it as
        // sent, and says so.
        let encoding = if content.as_sent {
            headers("content-encoding")
        } else {
            ""
        };
        Ok(Expected {
            status: response.status,
            body: BodyKind::read(bytes.as_deref(), encoding, &media_type),
            media_type,
        })
    }
}

/// `recorded`'s path and query on `base`'s origin, after `base`'s path.
fn rebase(recorded: &Url, base: &Url) -> Url {
    let mut url = base.clone();
    let prefix = base.path().trim_end_matches('/');
    url.set_path(&format!("{prefix}{}", recorded.path()));
    url.set_query(recorded.query());
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_replaces_the_origin_and_prefixes_the_path() {
        let recorded: Url = "https://api.example.com/users/1?a=1&b=%20".parse().unwrap();
        let base: Url = "http://127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            rebase(&recorded, &base).as_str(),
            "http://127.0.0.1:8080/users/1?a=1&b=%20"
        );
        let base: Url = "http://127.0.0.1:8080/api/".parse().unwrap();
        assert_eq!(
            rebase(&recorded, &base).as_str(),
            "http://127.0.0.1:8080/api/users/1?a=1&b=%20"
        );
    }

    #[test]
    fn ignored_pointers_match_themselves_what_is_below_and_stars() {
        assert!(pointer_matches("/meta", "/meta"));
        assert!(pointer_matches("/meta", "/meta/etag"));
        assert!(!pointer_matches("/meta", "/metadata"));
        assert!(!pointer_matches("/meta/etag", "/meta"));
        assert!(pointer_matches("/items/*/id", "/items/3/id"));
        assert!(!pointer_matches("/items/*/id", "/items/3/name"));
        assert!(pointer_matches("", "/anything"));
        assert!(pointer_matches("", ""));
    }

    #[test]
    fn media_types_drop_parameters_and_case() {
        assert_eq!(
            media_type("Application/JSON ; charset=utf-8"),
            "application/json"
        );
        assert!(is_json("application/problem+json"));
        assert!(!is_json("text/json-ish"));
    }

    #[test]
    fn options_are_checked_before_anything_is_sent() {
        let drift = Drift::from_json(
            r#"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a.test/"},
                                     "response": {"status": 200}}]}}"#,
        )
        .unwrap();
        let sent = std::cell::Cell::new(0);
        let run = |drift: Drift| {
            let sent = &sent;
            let future = drift.run(|_| {
                sent.set(sent.get() + 1);
                async { Err("unreachable".to_owned()) }
            });
            futures_util::FutureExt::now_or_never(future).expect("nothing awaits")
        };
        for (drift, says) in [
            (
                drift.clone().against("ftp://a.test"),
                "the base URL \"ftp://a.test\" cannot be used: only http:// and https://",
            ),
            (
                drift.clone().against("not a url"),
                "the base URL \"not a url\" cannot be used: relative URL without a base",
            ),
            (
                drift.clone().against("http://a.test/?q=1"),
                "cannot be used: a base URL has no query",
            ),
            (
                drift.clone().header("bad name", "x"),
                "the header \"bad name\" cannot be used: invalid HTTP header name",
            ),
            (
                drift.clone().header("x-ok", "line\nbreak"),
                "the header \"x-ok\" cannot be used: its value",
            ),
            (
                drift.clone().ignore("items"),
                "the ignored pointer \"items\" cannot be used: a JSON pointer",
            ),
        ] {
            let error = run(drift).unwrap_err().to_string();
            assert!(error.contains(says), "{error}");
        }
        assert_eq!(sent.get(), 0);
        // An entry that cannot be sent fails the file, naming it.
        let broken = Drift::from_json(
            r#"{"log": {"entries": [{"request": {"method": "G T", "url": "http://a.test/"},
                                     "response": {"status": 200}}]}}"#,
        )
        .unwrap();
        let error = run(broken).unwrap_err().to_string();
        assert_eq!(
            error,
            "entry 0 of the HAR text cannot be replayed: invalid method \"G T\""
        );
        assert_eq!(sent.get(), 0);
    }
}
