//! Batched requests: a JSON array of operations, answered with a JSON array.
//!
//! The engine resolves one request into one response, walking the handler
//! list in order and calling each matching handler's resolver until one
//! answers. A batch rides on that same walk: the request's parse result (one
//! per request, shared by every handler the walk tries) keeps one answer slot
//! per operation. Each GraphQL handler the walk reaches resolves the
//! still-unanswered operations it matches, in order, fills their slots, and:
//!
//! - when every slot is filled, answers the request with the array of answers;
//! - otherwise falls through, so later handlers fill the remaining slots.
//!
//! So for each operation the *first* handler in list order whose resolver
//! answers it wins — exactly the rule for a single operation. A resolver that
//! answers nothing leaves its slot to later handlers. If the walk ends with a
//! slot still empty, the batch is not mocked as a whole: it goes on like any
//! request nobody answered (a later `http` handler may answer it; otherwise it
//! is performed as it is) and a warning names the unanswered operations.
//!
//! This file keeps a batch's answers; the handler's side of the walk is in
//! `handler.rs` (`try_match_batch`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http::HeaderValue;
use serde_json::Value;

use super::OperationInfo;
use super::operation::GRAPHQL_RESPONSE_JSON;
use crate::handling::resolver::{Resolution, ResolverError};
use crate::message::response::{HttpResponse, Kind};

/// The answers of one batched request, filled as the lookup goes.
pub(crate) struct BatchState {
    answers: Mutex<Vec<Option<Answer>>>,
    /// Whether the request got its final answer from the batch (a response,
    /// a network error, a passthrough or a failure).
    settled: AtomicBool,
    labels: Vec<String>,
    request_line: String,
}

struct Answer {
    body: Value,
    set_cookies: Vec<HeaderValue>,
}

impl BatchState {
    pub(crate) fn new(operations: &[Arc<OperationInfo>], request_line: String) -> Self {
        BatchState {
            answers: Mutex::new(operations.iter().map(|_| None).collect()),
            settled: AtomicBool::new(false),
            labels: operations
                .iter()
                .enumerate()
                .map(|(index, operation)| label(index, operation))
                .collect(),
            request_line,
        }
    }

    /// The positions of the operations no handler answered yet.
    pub(super) fn unanswered(&self) -> Vec<usize> {
        let answers = self.lock();
        (0..answers.len())
            .filter(|&i| answers[i].is_none())
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Option<Answer>>> {
        self.answers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn label(index: usize, operation: &OperationInfo) -> String {
    match operation.operation_name() {
        Some(name) => format!("#{index} {} {name}", operation.operation_type()),
        None => format!("#{index} anonymous {}", operation.operation_type()),
    }
}

impl Drop for BatchState {
    fn drop(&mut self) {
        if *self.settled.get_mut() {
            return;
        }
        let answers = self
            .answers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if answers.iter().all(Option::is_none) {
            // No GraphQL handler answered anything: the engine's own
            // unhandled-request message (if any) says it all.
            return;
        }
        let missing: Vec<&str> = answers
            .iter()
            .zip(&self.labels)
            .filter(|(answer, _)| answer.is_none())
            .map(|(_, label)| label.as_str())
            .collect();
        crate::support::log::warn(&format!(
            "the batched GraphQL request {} was not answered as a whole: no graphql handler \
             answered {}. A batch is mocked only when every operation in it is answered; this \
             one went on to the rest of the handler list like any unanswered request.",
            self.request_line,
            missing.join(", ")
        ));
    }
}

/// Files one operation's resolution in its slot. Returns what the whole
/// request gets when the resolution decides for the batch: a failure, a
/// network error or a passthrough.
pub(super) fn record(
    batch: &BatchState,
    index: usize,
    resolution: Resolution,
) -> Option<Resolution> {
    let decided = match resolution {
        // A used-up handler answers no operation of this batch.
        Resolution::Fallthrough | Resolution::Exhausted => return None,
        #[cfg(feature = "ws")]
        Resolution::Upgrade(_) => return None,
        Resolution::Failed(error) => Resolution::Failed(ResolverError {
            message: format!(
                "{} (operation {} of a batched request)",
                error.message, batch.labels[index]
            ),
            name: error.name,
        }),
        // A network error or a passthrough decides for the whole batch.
        Resolution::Respond(response) if response.kind() != Kind::Mock => {
            Resolution::Respond(response)
        }
        Resolution::Respond(response) => match answer_of(response) {
            Ok(answer) => {
                batch.lock()[index] = Some(answer);
                return None;
            }
            Err(message) => Resolution::Failed(ResolverError {
                name: "InvalidResponse".to_owned(),
                message: format!(
                    "the response to operation {} of a batched request {message}",
                    batch.labels[index]
                ),
            }),
        },
    };
    batch.settled.store(true, Ordering::Relaxed);
    Some(decided)
}

/// The array of answers once every operation has one; until then the
/// request falls through to later handlers.
pub(super) fn combined(batch: &BatchState, prefers_graphql_response: bool) -> Resolution {
    let answers = batch.lock();
    if answers.iter().any(Option::is_none) {
        return Resolution::Fallthrough;
    }
    batch.settled.store(true, Ordering::Relaxed);
    let bodies: Vec<&Value> = answers
        .iter()
        .flatten()
        .map(|answer| &answer.body)
        .collect();
    let mut response = HttpResponse::json(&bodies);
    for cookie in answers.iter().flatten().flat_map(|a| &a.set_cookies) {
        if let Ok(cookie) = cookie.to_str() {
            response = response.header("set-cookie", cookie);
        }
    }
    if prefers_graphql_response {
        response = response.header("content-type", GRAPHQL_RESPONSE_JSON);
    }
    Resolution::Respond(response)
}

/// The JSON body (and cookies) of one operation's response.
fn answer_of(response: HttpResponse) -> Result<Answer, String> {
    let response = response
        .into_http()
        .map_err(|error| format!("is invalid: {error}"))?;
    let Some(bytes) = response.body().as_bytes() else {
        return Err("streams its body: a batch needs each operation's whole JSON body".to_owned());
    };
    let body = serde_json::from_slice::<Value>(bytes).map_err(|error| {
        format!(
            "is not JSON (status {}, {} bytes): {error}",
            response.status().as_u16(),
            bytes.len()
        )
    })?;
    Ok(Answer {
        body,
        set_cookies: response
            .headers()
            .get_all(http::header::SET_COOKIE)
            .iter()
            .cloned()
            .collect(),
    })
}
