//! Verification: whether the expectations of a scope were met and whether
//! strict mode saw unhandled requests, as one report.
//!
//! The report is meant to be read in a failed test's output, so for each
//! expectation that was not met it shows the recorded requests closest to
//! the handler, with what differs marked: the method, or the part of the
//! URL where request and predicate part ways.

use std::fmt::{self, Write as _};

use crate::engine::journal::{AnswerSummary, RecordedRequest};
use crate::engine::list::{Record, Scope};
use crate::handling::handler::Handler;
use crate::handling::times::Times;
use crate::message::request::Request;

/// Why [`verify`](crate::node::Server::verify) failed: the expectations that
/// were not met and the requests strict mode recorded as unhandled.
///
/// Its `Display` is the whole report, closest requests and differences
/// included.
#[derive(Debug, Clone)]
pub struct VerificationError {
    unmet: Vec<UnmetExpectation>,
    unhandled: Vec<String>,
    /// Answers that broke an attached contract: each finding with the
    /// request and the handler that answered.
    contract: Vec<ContractBreach>,
    /// Webhooks that failed, as `METHOD URL (after METHOD URL): why`.
    webhooks: Vec<String>,
    /// Requests the journal dropped (beyond its capacity): the closest
    /// requests shown may be incomplete.
    dropped: usize,
}

/// A handler that did not match as many requests as it expected.
#[derive(Debug, Clone)]
pub struct UnmetExpectation {
    handler: Handler,
    expected: Times,
    received: usize,
    /// The report's lines about the closest requests, rendered at once.
    details: Vec<String>,
}

impl UnmetExpectation {
    /// The handler whose expectation was not met.
    pub fn handler(&self) -> &Handler {
        &self.handler
    }

    /// What it expected.
    pub fn expected(&self) -> Times {
        self.expected
    }

    /// How many requests it matched.
    pub fn received(&self) -> usize {
        self.received
    }
}

impl VerificationError {
    /// The expectations that were not met, in handler-list order.
    pub fn unmet(&self) -> &[UnmetExpectation] {
        &self.unmet
    }

    /// Strict mode's unhandled requests, as their error messages.
    pub fn unhandled(&self) -> &[String] {
        &self.unhandled
    }

    /// Answers that broke an attached contract, oldest first.
    pub fn contract_findings(&self) -> &[ContractBreach] {
        &self.contract
    }

    /// Webhooks ([`Handler::webhook`](crate::Handler::webhook)) that could not be sent or whose
    /// receiver could not be reached, oldest first, each as `METHOD URL
    /// (after METHOD URL): why`. One still waiting is not in it.
    pub fn failed_webhooks(&self) -> &[String] {
        &self.webhooks
    }
}

/// An answer that broke a contract: the finding, the request and the
/// handler that answered it. `Serialize` gives `{request, handler}` and the
/// finding's fields beside them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ContractBreach {
    #[serde(flatten)]
    finding: crate::handling::contract::Finding,
    /// `GET https://api.example.com/users/7`.
    request: String,
    handler: Option<String>,
}

impl ContractBreach {
    /// What differs.
    pub fn finding(&self) -> &crate::handling::contract::Finding {
        &self.finding
    }

    /// The request, as `METHOD URL`.
    pub fn request(&self) -> &str {
        &self.request
    }

    /// The header of the handler that answered.
    pub fn handler(&self) -> Option<&str> {
        self.handler.as_deref()
    }
}

impl std::error::Error for VerificationError {}

impl fmt::Display for VerificationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problems =
            self.unmet.len() + self.unhandled.len() + self.contract.len() + self.webhooks.len();
        let plural = if problems == 1 { "" } else { "s" };
        writeln!(
            f,
            "mocklib: verification failed ({problems} problem{plural})"
        )?;
        for (number, unmet) in self.unmet.iter().enumerate() {
            writeln!(
                f,
                "\n{}. {}: expected {}, received {}",
                number + 1,
                unmet.handler.header(),
                unmet.expected,
                unmet.received
            )?;
            for line in &unmet.details {
                writeln!(f, "   {line}")?;
            }
        }
        for (number, message) in self.unhandled.iter().enumerate() {
            writeln!(
                f,
                "\n{}. strict mode: {}",
                self.unmet.len() + number + 1,
                indent(message)
            )?;
        }
        for (number, breach) in self.contract.iter().enumerate() {
            write!(
                f,
                "\n{}. {}: {}",
                self.unmet.len() + self.unhandled.len() + number + 1,
                breach.request,
                breach.finding
            )?;
            match &breach.handler {
                Some(handler) => writeln!(f, "\n   answered by {handler}")?,
                None => writeln!(f)?,
            }
        }
        let before = self.unmet.len() + self.unhandled.len() + self.contract.len();
        for (number, webhook) in self.webhooks.iter().enumerate() {
            writeln!(f, "\n{}. webhook {webhook}", before + number + 1)?;
        }
        if self.dropped > 0 {
            writeln!(
                f,
                "\n(the request journal dropped {} older requests; raise ListenOptions::journal_capacity to see them)",
                self.dropped
            )?;
        }
        Ok(())
    }
}

/// `text` with every line after the first indented under a list number
/// (blank lines left empty).
fn indent(text: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    for line in lines {
        out.push('\n');
        if !line.is_empty() {
            out.push_str("   ");
            out.push_str(line);
        }
    }
    out
}

/// Checks every expectation in `scope`'s current list and its strict-mode
/// failures.
pub(crate) fn verify(scope: &Scope) -> Result<(), VerificationError> {
    let record = scope.record_for_verification();
    let mut unmet = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for handler in record.handlers.iter() {
        let Some(expected) = handler.expected() else {
            continue;
        };
        // A handler added twice is one expectation.
        if !seen.insert(handler.id()) {
            continue;
        }
        let received = record.uses.get(&handler.id()).copied().unwrap_or(0);
        if !expected.contains(received) {
            unmet.push(UnmetExpectation {
                handler: handler.clone(),
                expected,
                received,
                details: details(handler, expected, received, &record),
            });
        }
    }
    let contract: Vec<ContractBreach> = record
        .requests
        .iter()
        .flat_map(|entry| {
            entry
                .contract_findings()
                .iter()
                .map(|finding| ContractBreach {
                    finding: finding.clone(),
                    request: format!("{} {}", entry.method(), entry.url()),
                    handler: entry.handler().map(|handler| handler.header().to_owned()),
                })
        })
        .collect();
    let webhooks: Vec<String> = record
        .requests
        .iter()
        .flat_map(|entry| {
            entry
                .webhooks()
                .into_iter()
                .filter_map(move |sent| match sent.outcome {
                    crate::handling::webhook::WebhookOutcome::Failed(why) => Some(format!(
                        "{} {} (after {} {}): {why}",
                        sent.method,
                        sent.url,
                        entry.method(),
                        entry.url()
                    )),
                    _ => None,
                })
        })
        .collect();
    if unmet.is_empty() && record.failures.is_empty() && contract.is_empty() && webhooks.is_empty()
    {
        return Ok(());
    }
    Err(VerificationError {
        unmet,
        unhandled: record.failures,
        contract,
        webhooks,
        dropped: record.dropped,
    })
}

/// The lines under an unmet expectation: for too few requests, the recorded
/// requests closest to the handler and how each differs; for too many, the
/// requests it matched.
fn details(handler: &Handler, expected: Times, received: usize, record: &Record) -> Vec<String> {
    let answered_by_it =
        |entry: &&RecordedRequest| entry.handler().is_some_and(|h| h.id() == handler.id());
    let mut lines = Vec::new();
    if received < expected.min() {
        let others: Vec<&RecordedRequest> = record
            .requests
            .iter()
            .filter(|entry| !answered_by_it(entry))
            .collect();
        let closest = crate::engine::suggest::closest_requests(
            handler,
            others.iter().map(|entry| entry.request()),
        );
        if record.requests.is_empty() {
            lines.push("No request was recorded in this scope.".to_owned());
        } else if closest.is_empty() {
            lines.push("No recorded request comes close to it.".to_owned());
        } else {
            lines.push("The closest requests it did not match:".to_owned());
            for request in closest {
                let entry = others
                    .iter()
                    .find(|entry| std::ptr::eq(entry.request(), request))
                    .expect("closest_requests returns requests it was given");
                lines.extend(difference(handler, entry));
            }
        }
    } else {
        lines.push("The requests it matched:".to_owned());
        for entry in record.requests.iter().filter(answered_by_it).take(5) {
            lines.push(format!("  • {} {}", entry.method(), entry.url()));
        }
    }
    lines
}

/// How `entry` differs from what `handler` matches, as indented lines.
fn difference(handler: &Handler, entry: &RecordedRequest) -> Vec<String> {
    let request = entry.request();
    let mut lines = vec![format!(
        "  • {} {} ({})",
        request.method(),
        request.url(),
        describe(entry)
    )];
    if handler.matches(request, entry.base_url()) {
        lines.push(
            "      its predicate matches this request, but an earlier handler answered it first"
                .to_owned(),
        );
        return lines;
    }
    lines.extend(mismatch(handler, request, entry.base_url()));
    lines
}

// Here rather than in journal.rs: explaining an entry takes the
// suggestions and the differences, a layer above the journal.
impl RecordedRequest {
    /// The handlers among `handlers` closest to this request, closest first
    /// (at most four: those the unhandled-request warning suggests, "Did
    /// you mean …"), each with the lines that say how the request differs
    /// from what it matches, as strict mode's report says it: another
    /// method, the conditions it fails, the URL with a caret line under
    /// where the two part ways. For an entry read later, against the
    /// handlers of that time: a handler with no lines matches the request
    /// now. Empty when none comes close.
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, Request, node::setup_server};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([http::post("https://api.example.com/users", |_| HttpResponse::empty())]);
    /// server.listen();
    /// let url = "https://api.example.com/users".parse().unwrap();
    /// server.handle(Request::new(::http::Method::GET, url), None).await;
    ///
    /// let handlers = server.list_handlers();
    /// let [(handler, why)] = server.requests()[0].closest_handlers(&handlers).try_into().unwrap();
    /// assert_eq!(handler.header(), "POST https://api.example.com/users");
    /// assert_eq!(why, ["method: expected POST, received GET"]);
    /// # }
    /// ```
    pub fn closest_handlers<'a>(
        &self,
        handlers: impl IntoIterator<Item = &'a Handler>,
    ) -> Vec<(&'a Handler, Vec<String>)> {
        crate::engine::suggest::closest_handlers(self.request(), handlers.into_iter())
            .into_iter()
            .map(|handler| {
                let why = differences(handler, self.request(), self.base_url());
                (handler, why)
            })
            .collect()
    }
}

/// For strict mode's report: how an unhandled `request` differs from each
/// of the handlers closest to it.
pub(crate) fn closest_handler_differences(
    request: &Request,
    closest: &[&Handler],
    base_url: Option<&url::Url>,
) -> String {
    let mut text = String::from("How it differs from the closest handlers:\n");
    for handler in closest {
        let _ = writeln!(text, "  • {}", handler.header());
        for line in mismatch(handler, request, base_url) {
            let _ = writeln!(text, "{line}");
        }
    }
    text
}

/// What keeps `handler` from matching `request`, as lines indented under
/// the handler's in a report.
fn mismatch(handler: &Handler, request: &Request, base_url: Option<&url::Url>) -> Vec<String> {
    differences(handler, request, base_url)
        .into_iter()
        .map(|line| format!("      {line}"))
        .collect()
}

/// What keeps `handler` from matching `request`: another method, the
/// conditions it fails, or the URL with the part where they part ways
/// marked (a caret line under `received`); nothing when it matches.
fn differences(handler: &Handler, request: &Request, base_url: Option<&url::Url>) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(method) = handler
        .kind()
        .method()
        .filter(|&method| method != request.method())
    {
        lines.push(format!(
            "method: expected {method}, received {}",
            request.method()
        ));
        if handler.matches(&with_method(request, method), base_url) {
            return lines; // the URL is not what differs
        }
    }
    // The kind matches: what differs is a condition of `when`.
    if let Some(failed) = handler.mismatches(request, base_url) {
        lines.extend(failed.iter().map(|mismatch| format!("✗ {mismatch}")));
        return lines;
    }
    if let Some(text) = handler.kind().suggestion_text() {
        let received = crate::engine::suggest::comparable_url(request, text);
        if !received.eq_ignore_ascii_case(text) {
            lines.push(format!("expected {text}"));
            lines.push(format!("received {received}"));
            lines.push(format!("         {}", marker(text, &received)));
        }
    }
    lines
}

/// `request` as if sent with `method`.
fn with_method(request: &Request, method: &http::Method) -> Request {
    Request::from_parts(
        method.clone(),
        request.url().clone(),
        request.headers().clone(),
        request.body().clone(),
    )
}

/// How the journal says a request was answered, in a few words.
fn describe(entry: &RecordedRequest) -> String {
    let mut text = match entry.answer() {
        AnswerSummary::Mocked(status) => format!("mocked {}", status.as_u16()),
        AnswerSummary::Passthrough => "performed as it is".to_owned(),
        AnswerSummary::NetworkError => "network error".to_owned(),
        AnswerSummary::Unhandled => "unhandled".to_owned(),
        AnswerSummary::WebSocket => "WebSocket".to_owned(),
    };
    if let Some(handler) = entry.handler() {
        let _ = write!(text, " by {}", handler.header());
    }
    text
}

/// Carets under the part of `received` that differs from `expected`: after
/// their common prefix and before their common suffix (one caret where
/// `received` lacks characters).
fn marker(expected: &str, received: &str) -> String {
    let expected: Vec<char> = expected.chars().collect();
    let received: Vec<char> = received.chars().collect();
    let prefix = expected
        .iter()
        .zip(&received)
        .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
        .count();
    let room = expected.len().min(received.len()) - prefix;
    let suffix = expected
        .iter()
        .rev()
        .zip(received.iter().rev())
        .take(room)
        .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
        .count();
    let width = (received.len() - prefix - suffix).max(1);
    format!("{}{}", " ".repeat(prefix), "^".repeat(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_point_at_the_difference() {
        assert_eq!(marker("/users/1", "/user/1"), "     ^");
        assert_eq!(marker("/user", "/users"), "     ^");
        assert_eq!(marker("/a/b/c", "/a/x/c"), "   ^");
        // Common prefix "/" and suffix "ts".
        assert_eq!(marker("/posts", "/comments"), " ^^^^^^");
    }
}
