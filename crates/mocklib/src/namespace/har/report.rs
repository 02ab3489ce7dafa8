//! What a drift check found: per entry of a HAR file, how an answer
//! differs from what was expected of it.
//!
//! The types say "expected" and "received", as
//! [`contract::Finding`](crate::contract::Finding) does, not "recorded" and
//! "live": a recording checked against the live API is one source of
//! expectations, and a document describing the API (a contract) can be
//! another, reporting per entry with the same kinds of findings.

use std::fmt;

use serde::Serialize;

/// The outcome of a drift check: every entry checked, in file order, each
/// with what differs (nothing, for most).
///
/// `Display` renders a report for people (the entries that drifted and
/// how); `Serialize` gives the same as data, for CI tooling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DriftReport {
    /// Where the expectations come from: the HAR file.
    pub expected_from: String,
    /// Where the received answers come from: the base URL the requests were
    /// sent to (or "the recorded origins").
    pub received_from: String,
    /// Every entry checked, in file order.
    pub entries: Vec<EntryDrift>,
}

impl DriftReport {
    /// Whether any entry drifted: the check fails.
    pub fn has_drift(&self) -> bool {
        self.entries.iter().any(|entry| !entry.findings.is_empty())
    }

    /// The entries that drifted.
    pub fn drifted(&self) -> impl Iterator<Item = &EntryDrift> {
        self.entries
            .iter()
            .filter(|entry| !entry.findings.is_empty())
    }
}

/// One entry of the HAR file and what differs in its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EntryDrift {
    /// The entry's index in `log.entries`, from 0 (as
    /// [`HarError::Entry`](super::HarError::Entry) counts).
    pub index: usize,
    /// The request method.
    pub method: String,
    /// The URL the request was sent to.
    pub url: String,
    /// What differs; empty when nothing does.
    pub findings: Vec<DriftFinding>,
}

/// One difference between the expected answer and the received one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DriftFinding {
    /// What differs.
    pub kind: DriftKind,
    /// Where in the JSON body, as a JSON pointer (`/items/0/id`); empty
    /// for what is not in the body (status, content type, a failed
    /// request) and for the body as a whole.
    ///
    /// An array's elements are compared as one shape (the union of
    /// theirs), so the index is that of the first element that has the
    /// field: in the expected body, or in the received one for an added
    /// field.
    pub pointer: String,
    /// What was expected (the recorded status, type, ...); `None` for an
    /// added field.
    #[doc(alias = "recorded")]
    pub expected: Option<String>,
    /// What was found instead; `None` for a removed field.
    #[doc(alias("live", "actual"))]
    pub received: Option<String>,
    /// For a [`DriftKind::Contract`] finding: the operation the request
    /// maps to, when the contract names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
}

impl DriftFinding {
    // Only the drift check (`net`) makes findings so far.
    #[cfg_attr(
        not(all(feature = "net", not(target_arch = "wasm32"))),
        allow(dead_code)
    )]
    pub(crate) fn new(
        kind: DriftKind,
        pointer: impl Into<String>,
        expected: Option<String>,
        received: Option<String>,
    ) -> Self {
        DriftFinding {
            kind,
            pointer: pointer.into(),
            expected,
            received,
            operation: None,
        }
    }
}

/// The kinds of [`DriftFinding`]. Values never are one: ids, timestamps and
/// names change from run to run, the shape of an answer should not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DriftKind {
    /// The request got no answer: the connection was refused, timed out,
    /// broke off. `received` says why.
    RequestFailed,
    /// The status code differs.
    Status,
    /// The media type of `Content-Type` differs (parameters such as
    /// `charset` are not compared).
    ContentType,
    /// The body as a whole: empty where it was not (or the reverse), or
    /// not JSON where JSON was expected under the same content type.
    Body,
    /// A field of a JSON object is new.
    FieldAdded,
    /// A field of a JSON object is gone.
    FieldRemoved,
    /// A JSON value has another type (null, boolean, number, string,
    /// array, object).
    TypeChanged,
    /// The recorded exchange breaks a contract
    /// ([`Drift::check_contract`](super::Drift::check_contract)); the
    /// pointer is the contract's (`/response/body/name`).
    Contract,
}

impl DriftKind {
    fn label(self) -> &'static str {
        match self {
            DriftKind::RequestFailed => "request failed",
            DriftKind::Status => "status",
            DriftKind::ContentType => "content type",
            DriftKind::Body => "body",
            DriftKind::FieldAdded => "field added",
            DriftKind::FieldRemoved => "field removed",
            DriftKind::TypeChanged => "type changed",
            DriftKind::Contract => "contract",
        }
    }
}

impl fmt::Display for DriftFinding {
    /// `status: 200 -> 404`, `field removed /items/0/name: string`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.label())?;
        if !self.pointer.is_empty() {
            write!(f, " {}", self.pointer)?;
        }
        match (&self.expected, &self.received) {
            (Some(expected), Some(received)) if self.kind == DriftKind::RequestFailed => {
                write!(f, " (expected {expected}): {received}")
            }
            (Some(expected), Some(received)) => write!(f, ": {expected} -> {received}"),
            (Some(only), None) | (None, Some(only)) => write!(f, ": {only}"),
            (None, None) => Ok(()),
        }
    }
}

impl fmt::Display for DriftReport {
    /// A summary line, then each entry that drifted with its findings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let drifted = self.drifted().count();
        let total = self.entries.len();
        write!(f, "{} against {}: ", self.expected_from, self.received_from)?;
        let entries = if total == 1 { "entry" } else { "entries" };
        if drifted == 0 {
            return writeln!(f, "no drift in {total} {entries}");
        }
        writeln!(
            f,
            "{drifted} of {total} {entries} drifted (expected -> received)"
        )?;
        for entry in self.drifted() {
            writeln!(f, "entry {} {} {}", entry.index, entry.method, entry.url)?;
            for finding in &entry.findings {
                writeln!(f, "  {finding}")?;
            }
        }
        Ok(())
    }
}
