//! `/__mocklib/requests`: the journal of one state (the server's own list
//! or a scope) as JSON, filtered; `DELETE` clears it.

use mocklib::journal::AnswerSummary;
use mocklib::node::Server;
use mocklib::{Handler, HttpResponse, Request};
use prost_reflect::DescriptorPool;

use crate::base64::base64;
use crate::proto;

/// Answers `GET` (the journal, less the admin API's own requests) and
/// `DELETE` (clears it), in the caller's scope. gRPC calls' messages are
/// decoded with the descriptors in `pool`.
pub(super) fn answer(
    server: &Server,
    request: &Request,
    pool: Option<&DescriptorPool>,
) -> HttpResponse {
    match request.method().as_str() {
        "GET" => {
            let filter = match JournalFilter::of(request.url()) {
                Ok(filter) => filter,
                Err(why) => return super::refuse(400, &why),
            };
            let recorded = match &filter.matching {
                Some(handler) => server.requests_matching(handler),
                None => server.requests(),
            };
            let requests: Vec<serde_json::Value> = recorded
                .iter()
                // What a test asks of the server is not what its code
                // under test sent.
                .filter(|entry| {
                    !super::origin::is_admin_request(entry.url()) && filter.keeps(entry)
                })
                .map(|entry| journal_entry(entry, pool))
                .collect();
            HttpResponse::json(&requests)
        }
        "DELETE" => {
            server.clear_requests();
            HttpResponse::empty().status(204)
        }
        _ => super::not_allowed("GET, DELETE"),
    }
}

/// The journal's query: `method` and `url` (a mocklib pattern, as a
/// handler's predicate: `/users/:id`, `*/orders*`), `handler` (text the
/// answering handler's description contains), `unhandled=true`.
struct JournalFilter {
    /// A handler whose predicate the method and URL make, if given.
    matching: Option<Handler>,
    handler: Option<String>,
    unhandled: bool,
}

impl JournalFilter {
    fn of(url: &url::Url) -> Result<Self, String> {
        let (mut method, mut pattern, mut handler, mut unhandled) = (None, None, None, false);
        for (name, value) in url.query_pairs() {
            match &*name {
                "method" => method = Some(value.to_ascii_uppercase()),
                "url" => pattern = Some(value.into_owned()),
                "handler" => handler = Some(value.into_owned()),
                "unhandled" => unhandled = value == "true" || value == "1",
                // The admin token, for a client that cannot send a header.
                "token" => {}
                other => {
                    return Err(format!(
                        "unknown filter {other:?}: the journal filters by method, url, handler and unhandled"
                    ));
                }
            }
        }
        let matching = if method.is_none() && pattern.is_none() {
            None
        } else {
            let pattern = pattern.unwrap_or_else(|| "*".to_owned());
            let answer = |_| HttpResponse::empty();
            let made = match method {
                Some(method) => http::Method::from_bytes(method.as_bytes())
                    .map_err(|_| format!("method: {method:?} is not a method"))
                    .and_then(|method| {
                        mocklib::http::try_on(method, pattern, answer)
                            .map_err(|e| format!("url: {e}"))
                    })?,
                None => mocklib::http::try_all(pattern, answer).map_err(|e| format!("url: {e}"))?,
            };
            Some(made)
        };
        Ok(JournalFilter {
            matching,
            handler,
            unhandled,
        })
    }

    fn keeps(&self, entry: &mocklib::journal::RecordedRequest) -> bool {
        let handler_ok = self.handler.as_ref().is_none_or(|text| {
            entry
                .handler()
                .is_some_and(|handler| handler.header().contains(text.as_str()))
        });
        let unhandled_ok = !self.unhandled || *entry.answer() == AnswerSummary::Unhandled;
        handler_ok && unhandled_ok
    }
}

/// One journal entry as JSON: the body as text when it is UTF-8, base64
/// otherwise; repeated headers joined with ", "; for a gRPC call answered
/// by a `grpc` handler, its messages and status (`grpc`, `null` for other
/// requests).
pub(crate) fn journal_entry(
    entry: &mocklib::journal::RecordedRequest,
    pool: Option<&DescriptorPool>,
) -> serde_json::Value {
    let mut headers = serde_json::Map::new();
    for (name, value) in entry.headers() {
        let value = String::from_utf8_lossy(value.as_bytes());
        match headers.get_mut(name.as_str()) {
            Some(serde_json::Value::String(joined)) => {
                joined.push_str(", ");
                joined.push_str(&value);
            }
            _ => {
                headers.insert(name.as_str().to_owned(), value.into());
            }
        }
    }
    let (body, encoding) = match std::str::from_utf8(entry.body()) {
        Ok(text) => (text.to_owned(), "utf8"),
        Err(_) => (base64(entry.body()), "base64"),
    };
    let (answer, status) = match entry.answer() {
        AnswerSummary::Mocked(status) => ("mocked", Some(status.as_u16())),
        AnswerSummary::Passthrough => ("passthrough", None),
        AnswerSummary::NetworkError => ("network_error", None),
        AnswerSummary::Unhandled => ("unhandled", None),
        AnswerSummary::WebSocket => ("websocket", None),
        _ => ("other", None),
    };
    serde_json::json!({
        "method": entry.method().as_str(),
        "url": entry.url().as_str(),
        "headers": headers,
        "body": body,
        "body_encoding": encoding,
        "body_len": entry.body_len(),
        "handler": entry.handler().map(Handler::header),
        "answer": answer,
        "status": status,
        "grpc": entry.grpc_call().map(|call| proto::call_json(pool, call)),
        "contract_findings": entry.contract_findings(),
        "webhooks": entry.webhooks().iter().map(webhook_json).collect::<Vec<_>>(),
    })
}

/// A webhook the entry's answer sent, and its outcome: `pending`,
/// `answered` with the receiver's `status` and `body`, or `failed` with
/// `error`.
fn webhook_json(sent: &mocklib::webhook::SentWebhook) -> serde_json::Value {
    use mocklib::webhook::WebhookOutcome;
    let mut json = serde_json::json!({ "method": sent.method.as_str(), "url": sent.url });
    match &sent.outcome {
        WebhookOutcome::Answered { status, body } => {
            json["outcome"] = "answered".into();
            json["status"] = (*status).into();
            json["body"] = String::from_utf8_lossy(body).into_owned().into();
        }
        WebhookOutcome::Failed(why) => {
            json["outcome"] = "failed".into();
            json["error"] = why.clone().into();
        }
        _ => json["outcome"] = "pending".into(),
    }
    json
}
