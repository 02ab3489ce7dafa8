//! The `callback` entries of handler files: a resolver written in the
//! test's language (Python, Node…), answered over the scope's callback
//! channel — a WebSocket its client holds open (see `admin/callbacks.rs`,
//! and the protocol in this package's README).
//!
//! ```yaml
//! - method: GET                   # optional: any method when left out
//!   path: https://api.example.com/users/:id   # optional: any URL
//!   callback: user_by_id          # the function's name, as its client gave it
//!   timeout_ms: 5000              # optional: how long to wait for its answer
//!   times: 1                      # optional, as on HTTP entries (once, match too)
//! ```
//!
//! Each matching request becomes a `call` frame sent over the channel of
//! the scope the request is resolved in; the client's answer (a response,
//! passthrough, fallthrough, a network error or the error its function
//! raised) is the resolver's. With no channel, a channel that closes, or
//! no answer in time, the request gets a `502` or `504` naming the handler
//! and the callback; the server keeps serving.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::lock::lock;

use bytes::Bytes;
use mocklib::grpc::{self, Code};
use mocklib::handler::{HandlerKind, IndexHint, MatchContext, Matched};
use mocklib::node::Server;
use mocklib::resolver::{Resolution, ResolverError};
use mocklib::{Handler, HttpResponse, ResolverArgs};
use tokio::sync::oneshot;

use crate::base64::{base64, decode_base64};

/// How long a call waits for its answer unless the entry says otherwise.
const DEFAULT_TIMEOUT_MS: u64 = 5000;

/// The open callback channels, one per scope at most, and what the
/// resolvers of `callback` entries send their calls through. Clones share
/// them.
#[derive(Clone)]
pub(crate) struct Callbacks {
    server: Server,
    /// By scope, named as [`Callbacks::key`] names it.
    channels: Arc<Mutex<HashMap<String, Arc<Channel>>>>,
}

/// One scope's channel: the client holding it and its calls awaiting an
/// answer.
pub(crate) struct Channel {
    client: mocklib::ws::Client,
    /// What the channel is for, in messages (`scope 3`, `the server's own scope`).
    scope: String,
    next_id: AtomicU64,
    /// `None` once the channel closed: a call then fails at once.
    pending: Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>,
}

/// A client's answer to one call, as the protocol frames it.
#[derive(serde::Deserialize)]
struct AnswerFrame {
    id: u64,
    response: Option<ResponseFrame>,
    #[serde(default)]
    passthrough: bool,
    #[serde(default)]
    fallthrough: bool,
    #[serde(default)]
    network_error: bool,
    error: Option<String>,
}

#[derive(serde::Deserialize)]
struct ResponseFrame {
    status: Option<u16>,
    #[serde(default)]
    headers: Vec<(String, String)>,
    body: Option<String>,
    body_base64: Option<String>,
    delay_ms: Option<u64>,
}

/// What a call's answer says the resolver does.
enum Answer {
    Respond(HttpResponse, Option<u64>),
    Passthrough,
    Fallthrough,
    NetworkError,
    /// The client's function raised this.
    Raised(String),
    /// The answer is one mocklib cannot use, for this reason.
    Unusable(String),
}

impl Callbacks {
    pub(crate) fn new(server: Server) -> Self {
        Callbacks {
            server,
            channels: Arc::default(),
        }
    }

    /// The name of the scope the caller runs in: its proxy URL, whose
    /// credential names a boundary (plain at the root). The listener runs a
    /// resolver inside the scope of its request, and the proxy URL is the
    /// library's public name for a scope; asking it binds nothing.
    pub(crate) fn key(&self) -> Option<String> {
        // Not listening (a document loaded by a unit test): no scope.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.server.proxy_url().to_string()
        }))
        .ok()
    }

    /// Whether a client holds the channel of the scope named `key`.
    pub(crate) fn is_open(&self, key: &str) -> bool {
        lock(&self.channels).contains_key(key)
    }

    /// Makes `client` the channel of the scope named `key`, unless another
    /// holds it (then `None`).
    pub(crate) fn open(
        &self,
        key: String,
        scope: String,
        client: mocklib::ws::Client,
    ) -> Option<Arc<Channel>> {
        let mut channels = lock(&self.channels);
        if channels.contains_key(&key) {
            return None;
        }
        let channel = Arc::new(Channel {
            client,
            scope,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Some(HashMap::new())),
        });
        channels.insert(key, Arc::clone(&channel));
        Some(channel)
    }

    /// The channel `channel` of `key` closed: its calls in flight fail
    /// (502) and the scope may open another.
    pub(crate) fn closed(&self, key: &str, channel: &Arc<Channel>) {
        let mut channels = lock(&self.channels);
        if channels
            .get(key)
            .is_some_and(|open| Arc::ptr_eq(open, channel))
        {
            channels.remove(key);
        }
        drop(channels);
        // Dropping the senders wakes every waiting call.
        lock(&channel.pending).take();
    }

    /// Ends the channel of the scope named `key` (its scope ended): closes
    /// it with 1001, and its calls in flight fail.
    pub(crate) fn end(&self, key: &str) {
        let channel = lock(&self.channels).remove(key);
        if let Some(channel) = channel {
            channel.client.close_with(1001, "the scope ended");
            lock(&channel.pending).take();
        }
    }

    fn channel(&self, key: &str) -> Option<Arc<Channel>> {
        lock(&self.channels).get(key).cloned()
    }
}

impl Channel {
    /// Takes a frame the client sent: the answer to a call in flight, or
    /// else something to log and ignore (the channel stays open).
    pub(crate) fn receive(&self, message: &mocklib::ws::Message) {
        let ignored = |why: String| {
            eprintln!(
                "mocklib serve: the callback channel of {} sent a frame that is ignored: {why}",
                self.scope
            );
        };
        let Some(text) = message.as_text() else {
            return ignored("a binary frame (answers are text frames of JSON)".to_owned());
        };
        let frame: AnswerFrame = match serde_json::from_str(text) {
            Ok(frame) => frame,
            Err(error) => return ignored(format!("{error}: {}", clip(text))),
        };
        let waiting = lock(&self.pending)
            .as_mut()
            .and_then(|pending| pending.remove(&frame.id));
        let Some(waiting) = waiting else {
            return ignored(format!(
                "no call {} awaits an answer (answered already, too late, or never sent)",
                frame.id
            ));
        };
        // The call may have just timed out: then nobody reads it.
        let _ = waiting.send(frame.answer());
    }

    /// A new call's id and where its answer arrives; `None` once the
    /// channel closed.
    fn start_call(&self) -> Option<(u64, oneshot::Receiver<Answer>)> {
        let mut pending = lock(&self.pending);
        let pending = pending.as_mut()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        pending.insert(id, sender);
        Some((id, receiver))
    }

    /// Forgets call `id` (it timed out): a late answer is then ignored.
    fn forget(&self, id: u64) {
        if let Some(pending) = lock(&self.pending).as_mut() {
            pending.remove(&id);
        }
    }
}

impl AnswerFrame {
    /// What the frame asks for: exactly one of its kinds.
    fn answer(self) -> Answer {
        let kinds = [
            self.response.is_some(),
            self.passthrough,
            self.fallthrough,
            self.network_error,
            self.error.is_some(),
        ];
        if kinds.iter().filter(|given| **given).count() != 1 {
            return Answer::Unusable(
                "give exactly one of response, passthrough, fallthrough, network_error and error"
                    .to_owned(),
            );
        }
        if let Some(response) = self.response {
            return response.answer();
        }
        if let Some(error) = self.error {
            return Answer::Raised(error);
        }
        if self.passthrough {
            Answer::Passthrough
        } else if self.fallthrough {
            Answer::Fallthrough
        } else {
            Answer::NetworkError
        }
    }
}

impl ResponseFrame {
    fn answer(self) -> Answer {
        let body = match (self.body, self.body_base64) {
            (Some(_), Some(_)) => {
                return Answer::Unusable("response: give body or body_base64, not both".to_owned());
            }
            (Some(text), None) => Bytes::from(text),
            (None, Some(encoded)) => match decode_base64(&encoded) {
                Some(bytes) => Bytes::from(bytes),
                None => {
                    return Answer::Unusable(
                        "response.body_base64: not standard base64".to_owned(),
                    );
                }
            },
            (None, None) => Bytes::new(),
        };
        let mut response = HttpResponse::new(body);
        if let Some(status) = self.status {
            if http::StatusCode::from_u16(status).is_err() {
                return Answer::Unusable(format!(
                    "response.status: {status} is not an HTTP status"
                ));
            }
            response = response.status(status);
        }
        for (name, value) in &self.headers {
            if http::HeaderName::try_from(name).is_err()
                || http::HeaderValue::try_from(value).is_err()
            {
                return Answer::Unusable(format!(
                    "response.headers: invalid header {name:?}: {value:?}"
                ));
            }
            response = response.header(name, value);
        }
        Answer::Respond(response, self.delay_ms)
    }
}

/// `text`, cut to a length a log line can show.
fn clip(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// A `callback` entry's fields, as written.
pub(crate) struct CallbackEntry {
    pub(crate) method: Option<http::Method>,
    pub(crate) path: String,
    /// The function's name, as its client gave it.
    pub(crate) callback: String,
    pub(crate) timeout_ms: Option<u64>,
}

/// The handler of a `callback` entry (before its `match`, `once` and
/// `times`): an HTTP handler whose header names the callback, as in
/// `GET /users/:id (callback user_by_id)`.
pub(crate) fn handler(entry: CallbackEntry, callbacks: &Callbacks) -> Result<Handler, String> {
    if entry.callback.is_empty() {
        return Err("callback: give the function's name".to_owned());
    }
    let timeout_ms = entry.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if timeout_ms == 0 {
        return Err("timeout_ms: give at least 1".to_owned());
    }
    let predicate =
        mocklib::matching::Predicate::path(&entry.path).map_err(|error| error.to_string())?;
    // As the `http` namespace writes its handlers' headers.
    let handler_text = format!(
        "{} {}",
        entry.method.as_ref().map_or("ALL", http::Method::as_str),
        predicate.describe()
    );
    let header = format!("{handler_text} (callback {})", entry.callback);
    let call = Arc::new(Call {
        callbacks: callbacks.clone(),
        callback: entry.callback,
        handler: handler_text,
        timeout_ms,
    });
    let resolve = move |args: ResolverArgs| {
        let call = Arc::clone(&call);
        // Inside the request's scope now: which channel is its.
        let key = call.callbacks.key();
        async move { call.run(key, args).await }
    };
    let inner = match entry.method {
        Some(method) => mocklib::http::try_on(method, predicate, resolve),
        None => mocklib::http::try_all(predicate, resolve),
    }
    .map_err(|error| error.to_string())?;
    Ok(Handler::new(Labeled { inner, header }))
}

/// What one `callback` entry's resolver needs.
struct Call {
    callbacks: Callbacks,
    callback: String,
    /// The HTTP handler's header (`GET /users/:id`).
    handler: String,
    timeout_ms: u64,
}

impl Call {
    /// Sends the request over the channel of the scope named `key`, and
    /// makes its answer the resolver's.
    async fn run(&self, key: Option<String>, args: ResolverArgs) -> Resolution {
        let (handler, callback) = (&self.handler, &self.callback);
        let Some(channel) = key.and_then(|key| self.callbacks.channel(&key)) else {
            return refuse(
                &args.request,
                502,
                Code::Unavailable,
                &format!(
                    "{handler}: the callback {callback} cannot be called: no client holds this scope's callback channel (GET /__mocklib/callbacks)"
                ),
            );
        };
        let closed = || {
            refuse(
                &args.request,
                502,
                Code::Unavailable,
                &format!(
                    "{handler}: the callback channel closed before the callback {callback} answered"
                ),
            )
        };
        let Some((id, answer)) = channel.start_call() else {
            return closed();
        };
        channel
            .client
            .send(call_frame(id, callback, handler, &args).to_string());
        let timeout = std::pin::pin!(mocklib::delay(self.timeout_ms));
        let answer = match futures_util::future::select(answer, timeout).await {
            futures_util::future::Either::Left((Ok(answer), _)) => answer,
            futures_util::future::Either::Left((Err(_), _)) => return closed(),
            futures_util::future::Either::Right(((), _)) => {
                channel.forget(id);
                return refuse(
                    &args.request,
                    504,
                    Code::DeadlineExceeded,
                    &format!(
                        "{handler}: the callback {callback} did not answer within {} ms (timeout_ms)",
                        self.timeout_ms
                    ),
                );
            }
        };
        match answer {
            Answer::Respond(response, delay) => {
                if let Some(milliseconds) = delay {
                    mocklib::delay(milliseconds).await;
                }
                Resolution::Respond(response)
            }
            Answer::Passthrough => Resolution::Respond(mocklib::passthrough()),
            Answer::Fallthrough => Resolution::Fallthrough,
            Answer::NetworkError => Resolution::Respond(HttpResponse::error()),
            Answer::Raised(error) => Resolution::Failed(ResolverError {
                name: "CallbackError".to_owned(),
                message: format!("{handler}: the callback {callback} raised: {error}"),
            }),
            Answer::Unusable(why) => {
                eprintln!(
                    "mocklib serve: the callback {callback} of {handler} answered call {id} with something mocklib cannot use: {why}"
                );
                Resolution::Failed(ResolverError {
                    name: "CallbackError".to_owned(),
                    message: format!(
                        "{handler}: the callback {callback} answered something mocklib cannot use: {why}"
                    ),
                })
            }
        }
    }
}

/// The `call` frame of one request (see the protocol in the README).
fn call_frame(id: u64, callback: &str, handler: &str, args: &ResolverArgs) -> serde_json::Value {
    let request = &args.request;
    let headers: Vec<[String; 2]> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            [
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ]
        })
        .collect();
    let (body, body_base64) = match std::str::from_utf8(request.body()) {
        Ok(text) => (Some(text.to_owned()), None),
        Err(_) => (None, Some(base64(request.body()))),
    };
    let params: serde_json::Map<String, serde_json::Value> = args
        .params
        .iter()
        .map(|(name, value)| (name.to_owned(), value.as_str().into_owned().into()))
        .collect();
    let cookies: serde_json::Map<String, serde_json::Value> = args
        .cookies
        .iter()
        .map(|(name, value)| (name.to_owned(), value.to_owned().into()))
        .collect();
    serde_json::json!({
        "type": "call",
        "id": id,
        "callback": callback,
        "handler": handler,
        "request": {
            "method": request.method().as_str(),
            "url": request.url().as_str(),
            "headers": headers,
            "body": body,
            "body_base64": body_base64,
        },
        "params": params,
        "cookies": cookies,
    })
}

/// The server's own answer to `request`: a text with `status`, or for a
/// call of gRPC, gRPC-Web or Connect (whose client would read a text as a
/// garbled message) the status `code` with `why` in the call's protocol,
/// as the library answers the calls it fails itself.
fn refuse(request: &mocklib::Request, status: u16, code: Code, why: &str) -> Resolution {
    Resolution::Respond(if grpc::is_call(request) {
        grpc::end_call(request, grpc::Status::new(code, why))
    } else {
        HttpResponse::text(format!("{why}\n")).status(status)
    })
}

/// An HTTP handler under another header: everything else is the inner
/// handler's kind (its match, method and index hint).
struct Labeled {
    inner: Handler,
    header: String,
}

impl HandlerKind for Labeled {
    fn header(&self) -> &str {
        &self.header
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        self.inner.kind().try_match(context)
    }

    fn method(&self) -> Option<&http::Method> {
        self.inner.kind().method()
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.inner.kind().suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        self.inner.kind().index_hint()
    }
}
