//! Service Worker interception, the page's half.
//!
//! Our worker script (`mocklib-worker.js`) sees every request of the pages
//! it controls — `fetch`, XHR, `<img>`, requests of the page's Web Workers,
//! navigations. For each it posts the request to the page that
//! started mocking, over the one `MessagePort` the page opened at start, and
//! waits for the answer: mocked (status, headers, body), passthrough (the
//! worker performs it) or a network error. This file answers those messages
//! with the engine. A streamed body follows its head chunk by chunk (see
//! `stream.rs`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::answer::{Answer, answer, report_passthrough};
use super::convert::{BrowserRequest, MockedBody, MockedResponse, pairs};
use super::perform::js_message;
use super::stream::{self, Flows};
use super::{StartError, glue, task};
use crate::engine::{Engine, Passthrough};

/// An open request channel to the worker; closed when dropped.
pub(super) struct Connection {
    worker: JsValue,
    connection: JsValue,
    /// Answer the worker's messages; handed to JavaScript on disconnect so
    /// they outlive us until the worker has acknowledged.
    callbacks: Option<Callbacks>,
    /// The streamed bodies being sent.
    flows: Rc<Flows>,
}

/// Gets a request packed as `BrowserRequest::unpack` reads it, its body,
/// its id and the port its answer goes back on.
type OnRequest = Closure<dyn Fn(String, Option<Vec<u8>>, u32, JsValue)>;

struct Callbacks {
    on_request: OnRequest,
    on_response: Closure<dyn Fn(u32, u16, Vec<String>)>,
    on_flow: Closure<dyn Fn(u32, u32, bool)>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The channel closes: bodies still streaming end here (the worker
        // fails them), and their `finalize` runs.
        self.flows.cancel_all();
        let callbacks = self.callbacks.take().map_or(JsValue::UNDEFINED, |c| {
            Array::of3(
                &c.on_request.into_js_value(),
                &c.on_response.into_js_value(),
                &c.on_flow.into_js_value(),
            )
            .into()
        });
        glue::disconnect_service_worker(&self.worker, &self.connection, callbacks);
    }
}

/// Why registering the worker failed, by kind.
pub(super) enum RegisterFailure {
    /// Service Workers are unavailable on this page.
    Unsupported(String),
    /// The script URL answered 404.
    Missing,
    /// The script is from a mocklib speaking another protocol.
    Outdated {
        version: String,
    },
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
        crate::support::log::warn(&format!(
            "this page is outside the Service Worker's scope {scope}; only requests of pages \
             under it (and their frames and Web Workers) are intercepted"
        ));
    }
    let flows = Rc::new(Flows::default());
    let callbacks = Callbacks {
        on_request: Closure::new({
            let flows = Rc::clone(&flows);
            move |request: String, body: Option<Vec<u8>>, id, port| {
                let body = body.map(Bytes::from).unwrap_or_default();
                let request = BrowserRequest::unpack(&request, body);
                on_request(Arc::clone(&engine), &flows, quiet, request, id, port);
            }
        }),
        on_response: Closure::new(on_response),
        on_flow: Closure::new({
            let flows = Rc::clone(&flows);
            move |id, credit, cancelled| flows.on_message(id, credit, cancelled)
        }),
    };
    let connection = JsFuture::from(glue::connect_service_worker(
        &worker,
        callbacks.on_request.as_ref(),
        callbacks.on_response.as_ref(),
        callbacks.on_flow.as_ref(),
    ))
    .await
    .map_err(classify)?;
    let version = get(&connection, "version").as_string().unwrap_or_default();
    if version != env!("CARGO_PKG_VERSION") {
        crate::support::log::warn(&format!(
            "the Service Worker script at {script_url} is from mocklib {version}, this page runs \
             mocklib {}; write it again (`mocklib init <public-dir>`) so both speak the same protocol",
            env!("CARGO_PKG_VERSION")
        ));
    }
    Ok(Connection {
        worker,
        connection,
        callbacks: Some(callbacks),
        flows,
    })
}

fn classify(error: JsValue) -> RegisterFailure {
    let kind = get(&error, "mocklibKind").as_string().unwrap_or_default();
    let version = get(&error, "version").as_string().unwrap_or_default();
    let message = js_message(error);
    match kind.as_str() {
        "unsupported" => RegisterFailure::Unsupported(message),
        "missing" => RegisterFailure::Missing,
        "outdated" => RegisterFailure::Outdated { version },
        _ => RegisterFailure::Failed(message),
    }
}

impl RegisterFailure {
    pub(super) fn into_start_error(self, script_url: &str) -> StartError {
        match self {
            RegisterFailure::Missing => StartError::WorkerScriptMissing {
                url: script_url.to_owned(),
            },
            RegisterFailure::Outdated { version } => StartError::WorkerScriptOutdated {
                url: script_url.to_owned(),
                version,
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
    static PASSTHROUGHS: RefCell<HashMap<u32, Passthrough>> = RefCell::default();
}

/// The worker asks about request `id`; the answer goes back on `port`.
fn on_request(
    engine: Arc<Engine>,
    flows: &Rc<Flows>,
    quiet: bool,
    request: BrowserRequest,
    id: u32,
    port: JsValue,
) {
    let (panic_port, panic_flows) = (port.clone(), Rc::clone(flows));
    let flows = Rc::clone(flows);
    task::spawn_now(
        async move {
            match answer(&engine, &request, quiet).await {
                Ok(Answer::Mocked(mocked)) if !mocked.has_browser_status() => {
                    crate::support::log::error(&format!(
                        "a browser response cannot have status {} (allowed: 200-599); the request fails",
                        mocked.status
                    ));
                    glue::post_outcome(&port, id, "network-error");
                }
                Ok(Answer::Mocked(mocked)) => {
                    mocked.store_cookies();
                    post_mocked(&port, id, mocked, &flows);
                }
                Ok(Answer::Passthrough(passthrough)) => {
                    // The worker performs it and reports the real response head.
                    PASSTHROUGHS.with(|p| p.borrow_mut().insert(id, passthrough));
                    glue::post_outcome(&port, id, "passthrough");
                }
                Ok(Answer::NetworkError) => glue::post_outcome(&port, id, "network-error"),
                Err(message) => {
                    crate::support::log::error(&message);
                    glue::post_outcome(&port, id, "network-error");
                }
            }
        },
        move |message| {
            let mocked = MockedResponse::handler_panicked(&message);
            post_mocked(&panic_port, id, mocked, &panic_flows);
        },
    );
}

/// The real response head of the passthrough `id`, for `response:bypass`.
fn on_response(id: u32, status: u16, headers: Vec<String>) {
    if let Some(passthrough) = PASSTHROUGHS.with(|p| p.borrow_mut().remove(&id)) {
        report_passthrough(passthrough, status, &pairs(headers));
    }
}

/// Posts the mocked response; a streamed body follows its head chunk by
/// chunk.
fn post_mocked(port: &JsValue, id: u32, mut mocked: MockedResponse, flows: &Rc<Flows>) {
    let body = mocked.take_body();
    let streamed = matches!(body, Some(MockedBody::Stream(_)));
    glue::post_mocked(
        port,
        id,
        mocked.status,
        &mocked.status_text,
        &mocked.joined_headers(),
        body.as_ref().and_then(MockedBody::bytes),
        streamed,
    );
    if let Some(MockedBody::Stream(body)) = body {
        stream::send(flows, port.clone(), id, body);
    }
}
