//! Service Worker interception, the page's half.
//!
//! Our worker script (`mocklib-worker.js`) sees every request of the pages
//! it controls — `fetch`, XHR, `<img>`, requests of the page's Web Workers —
//! except navigations. For each it posts the request to the page that
//! started mocking and waits for the answer on a fresh `MessageChannel`:
//! mocked (status, headers, body), passthrough (the worker performs it) or a
//! network error. This file answers those messages with the engine.

use std::sync::Arc;

use bytes::Bytes;
use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::answer::{Answer, answer, report_passthrough};
use super::convert::{BrowserRequest, MockedResponse};
use super::perform::js_message;
use super::{StartError, glue, task};
use crate::engine::{Engine, Passthrough};

/// An open request channel to the worker; closed when dropped.
pub(super) struct Connection {
    worker: JsValue,
    connection: JsValue,
    /// Answers the worker's requests; handed to JavaScript on disconnect so
    /// it outlives us until the worker has acknowledged.
    on_request: Option<Closure<dyn Fn(JsValue, JsValue)>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        let on_request = self
            .on_request
            .take()
            .map_or(JsValue::UNDEFINED, Closure::into_js_value);
        glue::disconnect_service_worker(&self.worker, &self.connection, on_request);
    }
}

/// Why registering the worker failed, by kind.
pub(super) enum RegisterFailure {
    /// Service Workers are unavailable on this page.
    Unsupported(String),
    /// The script URL answered 404.
    Missing,
    Failed(String),
}

/// Registers the worker script, waits for it to be active and opens the
/// request channel.
pub(super) async fn connect(
    engine: Arc<Engine>,
    script_url: &str,
    scope: Option<String>,
    quiet: bool,
) -> Result<Connection, RegisterFailure> {
    let original = super::perform::original_fetch()
        .map_err(|e| RegisterFailure::Unsupported(js_message(e)))?;
    let registered = JsFuture::from(glue::register_service_worker(script_url, scope, &original))
        .await
        .map_err(classify)?;
    let worker = get(&registered, "worker");
    let scope = get(&registered, "scope").as_string().unwrap_or_default();
    if get(&registered, "controlled").is_falsy() {
        crate::log::warn(&format!(
            "this page is outside the Service Worker's scope {scope}; only requests of pages \
             under it (and their frames and Web Workers) are intercepted"
        ));
    }
    let on_request =
        Closure::<dyn Fn(JsValue, JsValue)>::new(move |data: JsValue, port: JsValue| {
            on_request(Arc::clone(&engine), quiet, data, port);
        });
    let connection = JsFuture::from(glue::connect_service_worker(&worker, on_request.as_ref()))
        .await
        .map_err(classify)?;
    let version = get(&connection, "version").as_string().unwrap_or_default();
    if version != env!("CARGO_PKG_VERSION") {
        crate::log::warn(&format!(
            "the Service Worker script at {script_url} is from mocklib {version}, this page runs \
             mocklib {}; write it again (`mocklib init <public-dir>`) so both speak the same protocol",
            env!("CARGO_PKG_VERSION")
        ));
    }
    Ok(Connection {
        worker,
        connection,
        on_request: Some(on_request),
    })
}

fn classify(error: JsValue) -> RegisterFailure {
    let kind = get(&error, "mocklibKind").as_string().unwrap_or_default();
    let message = js_message(error);
    match kind.as_str() {
        "unsupported" => RegisterFailure::Unsupported(message),
        "missing" => RegisterFailure::Missing,
        _ => RegisterFailure::Failed(message),
    }
}

impl RegisterFailure {
    pub(super) fn into_start_error(self, script_url: &str) -> StartError {
        match self {
            RegisterFailure::Missing => StartError::WorkerScriptMissing {
                url: script_url.to_owned(),
            },
            RegisterFailure::Unsupported(reason) => StartError::ServiceWorkerUnavailable { reason },
            RegisterFailure::Failed(reason) => StartError::ServiceWorkerFailed {
                url: script_url.to_owned(),
                reason,
            },
        }
    }
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

thread_local! {
    /// Passthroughs waiting for the worker's report of the real response.
    static PASSTHROUGHS: std::cell::RefCell<std::collections::HashMap<u32, Passthrough>> =
        std::cell::RefCell::default();
}

/// A message from the worker: a request to answer on `port`, or the real
/// response head of an earlier passthrough.
fn on_request(engine: Arc<Engine>, quiet: bool, data: JsValue, port: JsValue) {
    let id = get(&data, "id");
    let key = id.as_f64().unwrap_or(-1.0) as u32;
    if get(&data, "type").as_string().as_deref() == Some("mocklib:response") {
        if let Some(passthrough) = PASSTHROUGHS.with(|p| p.borrow_mut().remove(&key)) {
            let status = get(&data, "status").as_f64().unwrap_or(0.0) as u16;
            report_passthrough(passthrough, status, &pairs(&get(&data, "headers")));
        }
        return;
    }
    let request = match read_request(&data) {
        Ok(request) => request,
        Err(message) => {
            crate::log::error(&format!(
                "a malformed request from the Service Worker: {message}"
            ));
            glue::post_answer(&port, &kind_only(&id, "passthrough"));
            return;
        }
    };
    let (panic_port, panic_id) = (port.clone(), id.clone());
    task::spawn(
        async move {
            let message = match answer(&engine, &request, quiet).await {
                Ok(Answer::Mocked(mocked)) if !mocked.has_browser_status() => {
                    crate::log::error(&format!(
                        "a browser response cannot have status {} (allowed: 200-599); the request fails",
                        mocked.status
                    ));
                    kind_only(&id, "network-error")
                }
                Ok(Answer::Mocked(mocked)) => {
                    mocked.store_cookies();
                    mocked_message(&id, &mocked)
                }
                Ok(Answer::Passthrough(passthrough)) => {
                    // The worker performs it and reports the real response head.
                    PASSTHROUGHS.with(|p| p.borrow_mut().insert(key, passthrough));
                    kind_only(&id, "passthrough")
                }
                Ok(Answer::NetworkError) => kind_only(&id, "network-error"),
                Err(message) => {
                    crate::log::error(&message);
                    kind_only(&id, "network-error")
                }
            };
            glue::post_answer(&port, &message);
        },
        move |message| {
            let mocked = MockedResponse::handler_panicked(&message);
            glue::post_answer(&panic_port, &mocked_message(&panic_id, &mocked));
        },
    );
}

fn read_request(data: &JsValue) -> Result<BrowserRequest, String> {
    let text = |key: &str| {
        get(data, key)
            .as_string()
            .ok_or_else(|| format!("no {key}"))
    };
    let body = get(data, "body");
    let body = if body.is_instance_of::<ArrayBuffer>() {
        Bytes::from(Uint8Array::new(&body).to_vec())
    } else {
        Bytes::new()
    };
    Ok(BrowserRequest {
        method: text("method")?,
        url: text("url")?,
        headers: pairs(&get(data, "headers")),
        body,
        credentials: text("credentials").unwrap_or_else(|_| "same-origin".to_owned()),
    })
}

/// `[[name, value], ...]` as pairs.
fn pairs(value: &JsValue) -> Vec<(String, String)> {
    let Some(array) = value.dyn_ref::<Array>() else {
        return Vec::new();
    };
    array
        .iter()
        .filter_map(|entry| {
            let entry: Array = entry.dyn_into().ok()?;
            Some((entry.get(0).as_string()?, entry.get(1).as_string()?))
        })
        .collect()
}

/// An answer to request `id` that carries only its kind.
fn kind_only(id: &JsValue, kind: &str) -> JsValue {
    let message = Object::new();
    let _ = Reflect::set(&message, &JsValue::from_str("id"), id);
    let _ = Reflect::set(
        &message,
        &JsValue::from_str("kind"),
        &JsValue::from_str(kind),
    );
    message.into()
}

fn mocked_message(id: &JsValue, mocked: &MockedResponse) -> JsValue {
    let message = kind_only(id, "mocked");
    let headers: Array = mocked
        .headers
        .iter()
        .map(|(name, value)| {
            JsValue::from(Array::of2(
                &JsValue::from_str(name),
                &JsValue::from_str(value),
            ))
        })
        .collect();
    let body = if mocked.is_null_body() {
        JsValue::NULL
    } else {
        Uint8Array::from(&mocked.body[..]).buffer().into()
    };
    for (key, value) in [
        ("status", JsValue::from(mocked.status)),
        ("statusText", JsValue::from_str(&mocked.status_text)),
        ("headers", headers.into()),
        ("body", body),
    ] {
        let _ = Reflect::set(&message, &JsValue::from_str(key), &value);
    }
    message
}
