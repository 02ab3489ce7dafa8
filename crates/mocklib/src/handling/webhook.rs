//! Webhooks: after a handler answers, a request of the mock's own — the
//! payment provider's callback, the CI system's status — made from the
//! request and the answer, after a delay (WireMock's webhooks, Prism's
//! OpenAPI `callbacks`).
//!
//! ```
//! use std::time::Duration;
//! use mocklib::webhook::Webhook;
//! use mocklib::{http, HttpResponse};
//!
//! let receiver = "http://127.0.0.1:9000/payment-events";
//! let pay = http::post("https://pay.example/charges", |_| HttpResponse::json(&serde_json::json!({"id": "ch_1"})))
//!     .webhook(move |request, answer| {
//!         let charge: serde_json::Value = answer.json_body().ok()?;
//!         Some(
//!             Webhook::post(receiver)
//!                 .json(&serde_json::json!({"type": "charge.succeeded", "charge": charge["id"]}))
//!                 .header("x-request", request.url().as_str())
//!                 .delay(Duration::from_millis(50)),
//!         )
//!     });
//! # let _ = pay;
//! ```
//!
//! The webhook is sent in the background once the answer is made (the
//! answer never waits for it), the way a `bypass()` is: through the
//! server's upstream client, with its TLS and proxy rules, so it needs a
//! listening server (`net`). Each one sent, and its outcome — the
//! receiver's status, or why it failed (a receiver that is down) — is in
//! the journal entry of the request that caused it
//! ([`RecordedRequest::webhooks`](crate::journal::RecordedRequest::webhooks)),
//! in that request's scope; a failure is also logged (`tracing`, `warn`).
//! No webhook follows a fallthrough, a failed resolver, a network error or
//! a fault, nor a `passthrough()` (whose answer is not known then).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};

use crate::handling::handler::{Handler, Matched};
use crate::handling::resolver::Resolution;
use crate::message::request::Request;
use crate::message::response::HttpResponse;

/// A request the mock sends after answering: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Webhook {
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Bytes,
    delay: Duration,
    /// A header that could not be set, said when sending.
    invalid: Option<String>,
}

impl Webhook {
    /// A webhook with `method` to `url`, no body.
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Webhook {
            method,
            url: url.into(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            delay: Duration::ZERO,
            invalid: None,
        }
    }

    /// A `POST` to `url`.
    pub fn post(url: impl Into<String>) -> Self {
        Webhook::new(Method::POST, url)
    }

    /// This webhook with the header `name: value` (added to any of that
    /// name). One that is not a valid header fails the webhook, saying so
    /// in the journal.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(name), Ok(value)) => {
                self.headers.append(name, value);
            }
            _ => {
                self.invalid
                    .get_or_insert_with(|| format!("invalid header {name:?}: {value:?}"));
            }
        }
        self
    }

    /// A webhook that could not be made as wanted (a template of it
    /// failed): it is not sent, and its journal entry says `why`.
    ///
    /// ```
    /// use mocklib::webhook::Webhook;
    ///
    /// let hook = Webhook::failed(http::Method::POST, "{{ bad }}", "the template of url failed");
    /// # let _ = hook;
    /// ```
    pub fn failed(method: Method, url: impl Into<String>, why: impl Into<String>) -> Self {
        Webhook {
            invalid: Some(why.into()),
            ..Webhook::new(method, url)
        }
    }

    /// This webhook with `body`.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// This webhook with `data` as its JSON body (and `content-type:
    /// application/json`).
    pub fn json<T: serde::Serialize + ?Sized>(mut self, data: &T) -> Self {
        match serde_json::to_vec(data) {
            Ok(body) => {
                self.body = body.into();
                self.headers.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
            }
            Err(error) => {
                self.invalid
                    .get_or_insert_with(|| format!("the JSON body did not serialize: {error}"));
            }
        }
        self
    }

    /// This webhook sent `delay` after the answer.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A webhook a handler sent, as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SentWebhook {
    /// The method.
    pub method: Method,
    /// The URL.
    pub url: String,
    /// What came of it so far.
    pub outcome: WebhookOutcome,
}

/// What came of a [`SentWebhook`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebhookOutcome {
    /// Waiting for its delay, or for the receiver's answer.
    Pending,
    /// The receiver answered with this status and body.
    Answered {
        /// The status.
        status: u16,
        /// The body.
        body: Bytes,
    },
    /// It could not be sent, or the receiver could not be reached: why.
    Failed(String),
}

/// The webhooks of one journal entry, filled in as they complete.
#[derive(Clone, Default)]
pub(crate) struct WebhookLog(Arc<Mutex<Vec<SentWebhook>>>);

impl WebhookLog {
    pub(crate) fn snapshot(&self) -> Vec<SentWebhook> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn push(&self, sent: SentWebhook) -> usize {
        let mut log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        log.push(sent);
        log.len() - 1
    }

    fn settle(&self, index: usize, outcome: WebhookOutcome) {
        if let Some(sent) = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(index)
        {
            sent.outcome = outcome;
        }
    }
}

type MakeWebhook = dyn Fn(&Request, &HttpResponse) -> Option<Webhook> + Send + Sync;

impl Handler {
    /// This handler, sending the webhook `make` builds from the request and
    /// the answer, after answering (`None`: none this time). See
    /// [`webhook`](crate::webhook).
    pub fn webhook(
        self,
        make: impl Fn(&Request, &HttpResponse) -> Option<Webhook> + Send + Sync + 'static,
    ) -> Handler {
        let make: Arc<MakeWebhook> = Arc::new(make);
        self.around(move |context, matched| {
            let request = context.request().clone();
            let make = Arc::clone(&make);
            Some(Matched::new(move |call| {
                matched.call(call).map(move |resolution| match resolution {
                    Resolution::Respond(response) => {
                        Resolution::Respond(send_after(&request, response, &*make))
                    }
                    other => other,
                })
            }))
        })
    }
}

/// `response`, with the webhook `make` builds sent in the background and
/// logged in its journal entry.
fn send_after(request: &Request, response: HttpResponse, make: &MakeWebhook) -> HttpResponse {
    use crate::message::response::Kind;
    if !matches!(response.kind(), Kind::Mock) || response.is_network_error() {
        return response;
    }
    let Some(webhook) = make(request, &response) else {
        return response;
    };
    let log = WebhookLog::default();
    let index = log.push(SentWebhook {
        method: webhook.method.clone(),
        url: webhook.url.clone(),
        outcome: WebhookOutcome::Pending,
    });
    let failed = |why: String| {
        tracing::warn!(
            "mocklib: the webhook {} {} was not sent: {why}",
            webhook.method,
            webhook.url
        );
        log.settle(index, WebhookOutcome::Failed(why));
    };
    if let Some(why) = &webhook.invalid {
        failed(why.clone());
        return response.journal_extension(log);
    }
    let url = match webhook.url.parse() {
        Ok(url) => url,
        Err(error) => {
            failed(format!("{:?} is not a URL: {error}", webhook.url));
            return response.journal_extension(log);
        }
    };
    let Some(performer) = request.performer().cloned() else {
        failed("no network to send it on: it needs a listening server (feature `net`)".to_owned());
        return response.journal_extension(log);
    };
    let mut outgoing = Request::from_parts(
        webhook.method.clone(),
        url,
        webhook.headers.clone(),
        webhook.body.clone(),
    );
    outgoing.set_performer(Arc::clone(&performer));
    let task = {
        let (log, webhook, performer) = (log.clone(), webhook.clone(), Arc::clone(&performer));
        async move {
            if !webhook.delay.is_zero() {
                crate::message::delay::delay(webhook.delay).await;
            }
            let outcome = match performer.perform(&outgoing).await {
                Ok(answer) => WebhookOutcome::Answered {
                    status: answer.status_code().as_u16(),
                    body: answer.body().as_bytes().cloned().unwrap_or_default(),
                },
                Err(error) => {
                    let why = match error {
                        crate::message::request::PerformError::Unsendable(reason) => {
                            reason.to_string()
                        }
                        crate::message::request::PerformError::Failed(message) => message,
                    };
                    tracing::warn!(
                        "mocklib: the webhook {} {} failed: {why}",
                        webhook.method,
                        webhook.url
                    );
                    WebhookOutcome::Failed(why)
                }
            };
            log.settle(index, outcome);
        }
    };
    if let Err(why) = performer.spawn(Box::pin(task)) {
        failed(why);
    }
    response.journal_extension(log)
}
