//! The request journal: what each scope received and how it was answered.
//!
//! Every request the engine resolves while listening is recorded in the
//! scope it ran in (the server's, or a boundary's), in arrival order, with
//! the handler that answered it and how. Tests read it through
//! [`Server::requests`](crate::node::Server::requests) and
//! [`requests_matching`](crate::node::Server::requests_matching); verification
//! uses it to show the requests closest to an unmet expectation.
//!
//! Memory is bounded: a scope keeps its last [`DEFAULT_CAPACITY`] requests
//! (older ones are dropped and counted) and at most [`MAX_BODY`] bytes of
//! each body. `ListenOptions::journal_capacity` changes the cap; `0`
//! switches the journal off.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use url::Url;

use crate::handling::handler::Handler;
use crate::message::request::Request;
use crate::message::response::JournalValues;

/// How many requests a scope's journal keeps unless told otherwise.
pub const DEFAULT_CAPACITY: usize = 1000;

/// How many bytes of each request body the journal keeps (64 KiB).
pub const MAX_BODY: usize = 64 * 1024;

/// How a recorded request was answered: the journal's summary of the answer
/// (the status of a mocked response, not the response itself).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerSummary {
    /// A handler answered with a mocked response of this status (500 when
    /// its resolver failed or panicked).
    Mocked(StatusCode),
    /// Performed for real: `passthrough()`, or handlers matched but none
    /// answered.
    Passthrough,
    /// A handler answered with `HttpResponse::error()`.
    NetworkError,
    /// No handler matched; the unhandled-request strategy decided the rest.
    Unhandled,
    /// A WebSocket handler accepted the upgrade.
    WebSocket,
}

/// A request as the journal recorded it.
///
/// ```
/// use mocklib::{http, journal::AnswerSummary, HttpResponse, node::setup_server};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = setup_server([http::post("https://api.example.com/posts", |_| {
///     HttpResponse::text("created").status(201)
/// })]);
/// server.listen();
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(server.middleware())
///     .build();
/// client.post("https://api.example.com/posts").body("hello").send().await?;
///
/// let [request] = server.requests().try_into().unwrap();
/// assert_eq!(request.method(), "POST");
/// assert_eq!(request.body(), "hello");
/// assert_eq!(request.answer(), &AnswerSummary::Mocked(::http::StatusCode::CREATED));
/// assert_eq!(request.handler().unwrap().header(), "POST https://api.example.com/posts");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    request: Request,
    body_len: usize,
    handler: Option<Handler>,
    answer: AnswerSummary,
    base_url: Option<Arc<Url>>,
    /// The typed values the mocked response carried.
    extensions: http::Extensions,
    /// The record of the gRPC call it was (kept apart from `extensions`:
    /// one per call, without the type map's allocations).
    #[cfg(feature = "grpc")]
    grpc_call: Option<crate::namespace::grpc::CallRecord>,
    /// Its number in its journal (set when it is pushed).
    sequence: u64,
}

impl RecordedRequest {
    /// The record of the gRPC call this entry is about: its method, every
    /// message each way, its status. `None` for any other request (and for a
    /// call no `grpc` handler answered).
    #[cfg(feature = "grpc")]
    pub fn grpc_call(&self) -> Option<&crate::namespace::grpc::CallRecord> {
        self.grpc_call.as_ref()
    }

    /// The webhooks the answer sent ([`Handler::webhook`](crate::Handler::webhook)),
    /// each with its outcome so far (a webhook still waiting is `Pending`).
    pub fn webhooks(&self) -> Vec<crate::handling::webhook::SentWebhook> {
        self.extensions
            .get::<crate::handling::webhook::WebhookLog>()
            .map(crate::handling::webhook::WebhookLog::snapshot)
            .unwrap_or_default()
    }

    /// How the answer differed from the contracts attached to the server
    /// ([`attach_contract`](crate::node::Server::attach_contract)); empty
    /// when it did not, or when none is attached.
    pub fn contract_findings(&self) -> &[crate::handling::contract::Finding] {
        self.extensions
            .get::<crate::handling::contract::Findings>()
            .map_or(&[], |findings| findings.0.as_slice())
    }

    /// The request (its body cut to [`MAX_BODY`] bytes).
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The request method.
    pub fn method(&self) -> &Method {
        self.request.method()
    }

    /// The request URL.
    pub fn url(&self) -> &Url {
        self.request.url()
    }

    /// The request headers.
    pub fn headers(&self) -> &HeaderMap {
        self.request.headers()
    }

    /// The request body, cut to [`MAX_BODY`] bytes (see
    /// [`body_len`](Self::body_len) for the whole length).
    pub fn body(&self) -> &Bytes {
        self.request.body()
    }

    /// The length of the whole body as it was received.
    pub fn body_len(&self) -> usize {
        self.body_len
    }

    /// The handler that answered, if one did (a handler that matched but
    /// returned nothing does not count).
    pub fn handler(&self) -> Option<&Handler> {
        self.handler.as_ref()
    }

    /// How the request was answered.
    pub fn answer(&self) -> &AnswerSummary {
        &self.answer
    }

    /// The typed values the mocked response carried
    /// ([`HttpResponse::extension`](crate::HttpResponse::extension)): what a
    /// handler kind tells the journal beyond the request and its status,
    /// such as a gRPC call's messages and status
    /// ([`grpc::CallRecord`](crate::grpc::CallRecord), feature `grpc`).
    /// Empty for any other answer.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server};
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Served(&'static str);
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = setup_server([http::get("https://api.example.com/user", |_| {
    ///     HttpResponse::text("John").extension(Served("from the fixture"))
    /// })]);
    /// server.listen();
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(server.middleware())
    ///     .build();
    /// client.get("https://api.example.com/user").send().await?;
    /// let [request] = server.requests().try_into().unwrap();
    /// assert_eq!(request.extensions().get(), Some(&Served("from the fixture")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// Its number in the order its scope's journal recorded requests, from
    /// 0. Numbers are never reused, neither after the oldest entries are
    /// dropped for capacity nor after
    /// [`clear_requests`](crate::node::Server::clear_requests): a reader
    /// that remembers the last number it saw finds what came after it, as a
    /// live view of the journal does.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, Request, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([http::get("https://api.example.com/user", |_| HttpResponse::text("John"))]);
    /// server.listen();
    /// let get = || Request::new(::http::Method::GET, "https://api.example.com/user".parse().unwrap());
    /// server.handle(get(), None).await;
    /// server.handle(get(), None).await;
    /// let numbers: Vec<u64> = server.requests().iter().map(|entry| entry.sequence()).collect();
    /// assert_eq!(numbers, [0, 1]);
    ///
    /// server.clear_requests();
    /// server.handle(get(), None).await;
    /// assert_eq!(server.requests()[0].sequence(), 2);
    /// # }
    /// ```
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The entry for `request`, built before taking the journal's lock.
    pub(crate) fn new(
        request: &Request,
        handler: Option<&Handler>,
        answer: AnswerSummary,
        base_url: Option<&Arc<Url>>,
    ) -> Self {
        RecordedRequest {
            // A copy that owns its bytes: the request itself would keep a
            // large upload, or the read buffer its headers were parsed in,
            // alive for as long as the journal keeps it.
            request: request.detached(MAX_BODY),
            body_len: request.body().len(),
            handler: handler.cloned(),
            answer,
            base_url: base_url.cloned(),
            extensions: http::Extensions::new(),
            #[cfg(feature = "grpc")]
            grpc_call: None,
            sequence: 0,
        }
    }

    /// Keeps the values the answer had for the journal.
    pub(crate) fn set_journal_values(&mut self, values: JournalValues) {
        let JournalValues { extensions, shared } = values;
        if !extensions.is_empty() {
            self.extensions = extensions;
        }
        #[cfg(feature = "grpc")]
        {
            self.grpc_call = shared.and_then(crate::namespace::grpc::CallRecord::from_shared);
        }
        #[cfg(not(feature = "grpc"))]
        drop(shared);
    }

    /// The base URL relative predicates matched against.
    pub(crate) fn base_url(&self) -> Option<&Url> {
        self.base_url.as_deref()
    }
}

/// One scope's recorded requests, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Journal {
    entries: VecDeque<RecordedRequest>,
    /// Requests dropped to stay within the capacity.
    dropped: usize,
    /// Requests pushed since the journal was made (clearing keeps the
    /// count): the next entry's [`RecordedRequest::sequence`].
    recorded: u64,
}

impl Journal {
    /// Records a request, dropping the oldest beyond `capacity` (`0`: keep
    /// nothing).
    #[cfg(test)]
    fn record(
        &mut self,
        capacity: usize,
        request: &Request,
        handler: Option<&Handler>,
        answer: AnswerSummary,
        base_url: Option<&Arc<Url>>,
    ) {
        let entry = RecordedRequest::new(request, handler, answer, base_url);
        drop(self.push(capacity, entry));
    }

    /// Appends `entry`, dropping the oldest beyond `capacity` (`0`: keep
    /// nothing). Returns the entry it let go of, for the caller to free
    /// after releasing its lock (the last hold on an old request frees it).
    pub(crate) fn push(
        &mut self,
        capacity: usize,
        mut entry: RecordedRequest,
    ) -> Option<RecordedRequest> {
        if capacity == 0 {
            return None;
        }
        entry.sequence = self.recorded;
        self.recorded += 1;
        let mut evicted = None;
        while self.entries.len() >= capacity {
            evicted = self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back(entry);
        evicted
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &RecordedRequest> {
        self.entries.iter()
    }

    /// The entries numbered after `sequence`, oldest first (the numbers
    /// rise from front to back, so the rest is not read).
    pub(crate) fn entries_after(&self, sequence: u64) -> impl Iterator<Item = &RecordedRequest> {
        let start = self
            .entries
            .partition_point(|entry| entry.sequence <= sequence);
        self.entries.range(start..)
    }

    /// The number the last entry pushed got, if any.
    pub(crate) fn last_sequence(&self) -> Option<u64> {
        self.recorded.checked_sub(1)
    }

    /// Adds `findings` to the entry numbered `sequence`, if the journal
    /// still holds it: a contract's verdict on an answer that came later
    /// than the entry (a request performed for real).
    pub(crate) fn add_findings(
        &mut self,
        sequence: u64,
        findings: Vec<crate::handling::contract::Finding>,
    ) {
        let Some(entry) = self
            .entries
            .iter_mut()
            .rev()
            .find(|entry| entry.sequence == sequence)
        else {
            return;
        };
        let mut all = entry.contract_findings().to_vec();
        all.extend(findings);
        entry
            .extensions
            .insert(crate::handling::contract::Findings(std::sync::Arc::new(
                all,
            )));
    }

    pub(crate) fn dropped(&self) -> usize {
        self.dropped
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.dropped = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, body: usize) -> Request {
        Request::from_parts(
            Method::POST,
            format!("http://localhost{path}").parse().unwrap(),
            HeaderMap::new(),
            Bytes::from(vec![b'x'; body]),
        )
    }

    /// A journal of capacity 3 that recorded `/0` to `/4`.
    fn five_kept_three() -> Journal {
        let mut journal = Journal::default();
        for i in 0..5 {
            journal.record(
                3,
                &request(&format!("/{i}"), 0),
                None,
                AnswerSummary::Unhandled,
                None,
            );
        }
        journal
    }

    #[test]
    fn keeps_the_newest_within_capacity() {
        let mut journal = five_kept_three();
        let paths: Vec<_> = journal
            .entries()
            .map(|e| e.url().path().to_owned())
            .collect();
        assert_eq!(paths, ["/2", "/3", "/4"]);
        assert_eq!(journal.dropped(), 2);
        // Numbered in arrival order, the dropped ones included.
        let numbers: Vec<_> = journal.entries().map(RecordedRequest::sequence).collect();
        assert_eq!(numbers, [2, 3, 4]);
        journal.clear();
        journal.record(3, &request("/5", 0), None, AnswerSummary::Unhandled, None);
        assert_eq!(journal.entries().next().unwrap().sequence(), 5);
    }

    #[test]
    fn entries_after_a_number_are_those_recorded_since_kept_or_not() {
        let mut journal = five_kept_three();
        let after = |journal: &Journal, sequence| -> Vec<u64> {
            journal
                .entries_after(sequence)
                .map(RecordedRequest::sequence)
                .collect()
        };
        // 0 and 1 were dropped for capacity: what is kept of what came after.
        assert_eq!(after(&journal, 0), [2, 3, 4]);
        assert_eq!(after(&journal, 3), [4]);
        assert!(after(&journal, 4).is_empty());
        assert!(after(&journal, 10).is_empty());
        journal.clear();
        journal.record(3, &request("/5", 0), None, AnswerSummary::Unhandled, None);
        assert_eq!(after(&journal, 4), [5]);
    }

    #[test]
    fn capacity_zero_records_nothing() {
        let mut journal = Journal::default();
        journal.record(0, &request("/", 0), None, AnswerSummary::Passthrough, None);
        assert_eq!(journal.entries().count(), 0);
    }

    #[test]
    fn large_bodies_are_cut() {
        let mut journal = Journal::default();
        journal.record(
            1,
            &request("/", MAX_BODY + 10),
            None,
            AnswerSummary::Passthrough,
            None,
        );
        let entry = journal.entries().next().unwrap();
        assert_eq!(entry.body().len(), MAX_BODY);
        assert_eq!(entry.body_len(), MAX_BODY + 10);
    }
}
