//! `webhook:` on a handler-file entry: a request the server sends after
//! the entry has answered, templated from the request and the answer —
//! the library's `Handler::webhook` with a `Webhook`.
//!
//! ```yaml
//! - method: POST
//!   path: /charges
//!   status: 201
//!   json: { id: ch_1 }
//!   webhook:
//!     url: http://127.0.0.1:9000/events       # a template too
//!     method: POST                            # the default
//!     headers: { x-charge: "{{ response.json.id }}" }
//!     json: { type: charge.succeeded, charge: "{{ response.json.id }}", amount: "{{ request.json.amount }}" }
//!     delay_ms: 100
//! ```
//!
//! Every string of it is a template (`template.rs`) seeing `request` (as
//! the answer's templates do) and `response`: `status`, `headers`, `body`
//! and `json` (the body parsed, when it is JSON). Each webhook sent and its
//! outcome are in the journal entry of the request that caused it
//! (`webhooks` in `GET /__mocklib/requests`); one that fails to render is
//! journaled as failed, saying why.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mocklib::webhook::Webhook;
use mocklib::{Handler, HttpResponse, Request};

use crate::template::{
    Templates, add_json, path_params, path_predicate, render_json, request_value,
};

/// The fields of `webhook:`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookSpec {
    /// `POST` unless given.
    method: Option<String>,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// A text body.
    body: Option<String>,
    /// A JSON body (and `content-type: application/json`).
    json: Option<serde_json::Value>,
    delay_ms: Option<u64>,
}

impl WebhookSpec {
    /// `handler`, sending this webhook after it answers; `path`: the
    /// entry's, whose `:params` the templates see.
    pub(crate) fn apply(self, handler: Handler, path: Option<&str>) -> Result<Handler, String> {
        if self.body.is_some() && self.json.is_some() {
            return Err("webhook: give body or json, not both".to_owned());
        }
        let method = match &self.method {
            Some(method) => http::Method::from_bytes(method.as_bytes())
                .map_err(|_| format!("webhook.method: {method:?} is not an HTTP method"))?,
            None => http::Method::POST,
        };
        let mut templates = Templates::new();
        templates.add("webhook.url".to_owned(), self.url.clone())?;
        for (name, value) in &self.headers {
            templates.add(format!("webhook.headers.{name}"), value.clone())?;
        }
        if let Some(body) = &self.body {
            templates.add("webhook.body".to_owned(), body.clone())?;
        }
        if let Some(json) = &self.json {
            add_json(&mut templates, json, "webhook.json")?;
        }
        let spec = Arc::new(self);
        let predicate = path_predicate(path)?;
        Ok(handler.webhook(move |request, answer| {
            let params = path_params(predicate.as_ref(), request);
            Some(build(
                &spec,
                &templates,
                method.clone(),
                request,
                answer,
                params,
            ))
        }))
    }
}

/// The webhook for one answer; a template that fails makes a webhook that
/// is journaled as failed, saying why.
fn build(
    spec: &WebhookSpec,
    templates: &Templates,
    method: http::Method,
    request: &Request,
    answer: &HttpResponse,
    params: BTreeMap<String, String>,
) -> Webhook {
    let context = context(request, answer, params);
    let rendered = (|| -> Result<Webhook, String> {
        let url = templates.render("webhook.url", &context)?;
        let mut webhook = Webhook::new(method.clone(), url);
        for name in spec.headers.keys() {
            let value = templates.render(&format!("webhook.headers.{name}"), &context)?;
            webhook = webhook.header(name, value);
        }
        if spec.body.is_some() {
            webhook = webhook.body(templates.render("webhook.body", &context)?);
        }
        if let Some(json) = &spec.json {
            webhook = webhook.json(&render_json(templates, json, "webhook.json", &context)?);
        }
        if let Some(delay) = spec.delay_ms {
            webhook = webhook.delay(Duration::from_millis(delay));
        }
        Ok(webhook)
    })();
    rendered.unwrap_or_else(|why| Webhook::failed(method, spec.url.clone(), why))
}

/// What the webhook's templates see: `request` and `response`.
fn context(
    request: &Request,
    answer: &HttpResponse,
    params: BTreeMap<String, String>,
) -> minijinja::Value {
    let cookies = mocklib::request::Cookies::from_headers(request.headers());
    let headers: BTreeMap<String, String> = answer
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect();
    let body = answer.text_body().unwrap_or_default().to_owned();
    let json: Option<serde_json::Value> = serde_json::from_str(&body).ok();
    minijinja::context! {
        request => request_value(request, &cookies, params),
        response => minijinja::context! {
            status => answer.status_code().as_u16(),
            headers => headers,
            body => body,
            json => minijinja::Value::from(minijinja::value::Serde(&json)),
        },
    }
}
