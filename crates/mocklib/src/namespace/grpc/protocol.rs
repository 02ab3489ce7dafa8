//! gRPC-Web and Connect calls answered by the gRPC handlers: a call of
//! either is made the gRPC call the handler reads, and the handler's gRPC
//! answer is made the call's own protocol's — one resolver for the three
//! protocols, as tonic-web does it in front of a tonic server.
//!
//! gRPC-Web frames its messages as gRPC does and puts the status in a last
//! frame of the body (flag `0x80`), or all of it in base64 (`-text`).
//! Connect sends a unary call's one message bare (`application/proto` or
//! `application/json`, or in a GET's query) and answers an error as JSON
//! with an HTTP status; a streaming call frames messages as gRPC does and
//! ends with a JSON end-of-stream message (flag `0x02`).

use std::sync::{Arc, Mutex, PoisonError};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::FutureExt;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use super::{Code, Status};
use crate::handling::handler::{Handler, HandlerKind, IndexHint, MatchContext, Matched};
use crate::handling::resolver::{CallState, Resolution, ResolverCall};
use crate::message::body::{Body, StreamError};
use crate::message::request::Request;
use crate::message::response::HttpResponse;
use crate::message::rpc::{Rpc, add_cors, connect_end_of_stream, connect_error_value};

/// The protocol a gRPC method's call came in on
/// ([`CallRecord::protocol`](super::CallRecord::protocol)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// gRPC over HTTP/2.
    Grpc,
    /// gRPC-Web, binary (`application/grpc-web`, `+proto`).
    GrpcWeb,
    /// gRPC-Web in base64 (`application/grpc-web-text`).
    GrpcWebText,
    /// Connect: unary (`application/proto`, `application/json`, or a
    /// `GET`) or streaming (`application/connect+proto`, `+json`).
    Connect,
}

impl Protocol {
    /// The protocol's name as the journal of `mocklib serve` writes it:
    /// `grpc`, `grpc-web`, `grpc-web-text` or `connect`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::GrpcWeb => "grpc-web",
            Protocol::GrpcWebText => "grpc-web-text",
            Protocol::Connect => "connect",
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Protocol::Grpc => "gRPC",
            Protocol::GrpcWeb => "gRPC-Web",
            Protocol::GrpcWebText => "gRPC-Web (text)",
            Protocol::Connect => "Connect",
        })
    }
}

/// Converts a Connect call's JSON messages to protobuf and back, for the
/// method whose path it is given (`/package.Service/Method`): what a
/// handler needs to answer Connect's JSON form (`application/json`, the
/// form `curl` and Connect-ES send by default), since a prost message knows
/// only its binary form. `mocklib serve --proto` gives its handlers one
/// made from the `.proto` files; give yours one made from your descriptors
/// (prost-reflect's `DynamicMessage` does both directions) with
/// [`with_json`]. Without one, a JSON call gets HTTP 415 naming the forms
/// the method takes (`application/proto`), as Connect asks.
pub trait JsonCodec: Send + Sync + 'static {
    /// The request message of `method`, from its JSON to its protobuf bytes;
    /// `Err` says why it does not convert (the call ends `INVALID_ARGUMENT`).
    fn request_from_json(&self, method: &str, json: &[u8]) -> Result<Vec<u8>, String>;
    /// A reply message of `method`, from its protobuf bytes to its JSON;
    /// `Err` says why not (the call ends `INTERNAL`).
    fn reply_to_json(&self, method: &str, message: &[u8]) -> Result<Vec<u8>, String>;
}

/// `handler` (a `grpc` handler) answering Connect's JSON form with `codec`
/// (see [`JsonCodec`]).
///
/// ```
/// use mocklib::grpc::{self, JsonCodec, RawMessage, ResolverArgs};
///
/// /// Echoes JSON as it came (a real codec converts with descriptors).
/// struct Verbatim;
/// impl JsonCodec for Verbatim {
///     fn request_from_json(&self, _: &str, json: &[u8]) -> Result<Vec<u8>, String> {
///         Ok(json.to_vec())
///     }
///     fn reply_to_json(&self, _: &str, message: &[u8]) -> Result<Vec<u8>, String> {
///         Ok(message.to_vec())
///     }
/// }
///
/// let echo = grpc::with_json(
///     Verbatim,
///     grpc::unary("echo.Echo/Echo", |args: ResolverArgs<RawMessage>| Ok(args.message)),
/// );
/// # let _ = echo;
/// ```
pub fn with_json(codec: impl JsonCodec, handler: Handler) -> Handler {
    let codec: Arc<dyn JsonCodec> = Arc::new(codec);
    handler.map_kind(|inner| WithJson { inner, codec })
}

/// A handler kind whose calls carry a [`JsonCodec`] to the `grpc` kind it
/// wraps, through the request's state.
struct WithJson {
    inner: Arc<dyn HandlerKind>,
    codec: Arc<dyn JsonCodec>,
}

/// The codec of the handler being tried, for the `grpc` kind inside it.
#[derive(Default)]
struct JsonSlot(Mutex<Option<Arc<dyn JsonCodec>>>);

impl HandlerKind for WithJson {
    fn header(&self) -> &str {
        self.inner.header()
    }

    fn method(&self) -> Option<&Method> {
        self.inner.method()
    }

    fn suggestion_text(&self) -> Option<&str> {
        self.inner.suggestion_text()
    }

    fn index_hint(&self) -> IndexHint {
        self.inner.index_hint()
    }

    fn try_match(&self, context: &MatchContext<'_>) -> Option<Matched> {
        if !is_json(context.request()) {
            return self.inner.try_match(context);
        }
        let slot = &context.state::<JsonSlot>().0;
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&self.codec));
        let matched = self.inner.try_match(context);
        slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        matched
    }
}

/// Whether `request` may be a Connect call in JSON (by its content type or
/// a GET's `encoding`): only those look for a codec.
fn is_json(request: &Request) -> bool {
    let content_type = request.header("content-type").unwrap_or_default();
    content_type.contains("json") || request.method() == Method::GET
}

/// The codec the handler being tried carries, if any.
fn codec_of(context: &MatchContext<'_>) -> Option<Arc<dyn JsonCodec>> {
    context
        .state::<JsonSlot>()
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// A request to a gRPC method, as its handler takes it.
pub(super) enum Incoming {
    /// A gRPC call: read as it is.
    Grpc,
    /// A call of another protocol made gRPC's, and how its answer goes back.
    Translated(Request, Back),
    /// Answered without the resolver: a CORS preflight, or a call that
    /// cannot be read (in its protocol's form).
    Answered(HttpResponse),
    /// Not a call: another method or content type.
    NotACall,
}

/// Whether a request with `method` may be for a gRPC method at all: a
/// call (`POST`, Connect's `GET`) or a browser's CORS preflight. Asked
/// first, so other requests skip the path's pattern (the handler kinds no
/// longer tell the index they take `POST` only).
pub(super) fn may_be_call(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::GET | Method::OPTIONS)
}

/// `request` to the gRPC method at `path`, as its handler takes it.
pub(super) fn incoming(request: &Request, path: &str, context: &MatchContext<'_>) -> Incoming {
    let method = request.method();
    if method == Method::POST {
        match Rpc::of_content_type(request.headers()) {
            Some(Rpc::Grpc) => Incoming::Grpc,
            Some(Rpc::GrpcWeb { text }) => web_call(request, text),
            Some(Rpc::Connect { stream: true }) => connect_stream_call(request, path, context),
            // A unary Connect call need not say `connect-protocol-version`
            // to a method's path (`curl -d '{...}'` does not).
            Some(Rpc::Connect { stream: false }) | None => match unary_form(request.headers()) {
                Some(json) => connect_unary_call(request, request.bytes(), json, path, context),
                None => Incoming::NotACall,
            },
        }
    } else if method == Method::GET {
        connect_get_call(request, path, context)
    } else if method == Method::OPTIONS
        && request
            .headers()
            .contains_key(http::header::ACCESS_CONTROL_REQUEST_METHOD)
    {
        Incoming::Answered(preflight(request))
    } else {
        Incoming::NotACall
    }
}

/// A Connect unary POST's form: `Some(true)` for JSON, `Some(false)` for
/// protobuf, `None` for another content type.
fn unary_form(headers: &HeaderMap) -> Option<bool> {
    let value = headers.get(http::header::CONTENT_TYPE)?.to_str().ok()?;
    let media = value.split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("application/json") {
        Some(true)
    } else if media.eq_ignore_ascii_case("application/proto") {
        Some(false)
    } else {
        None
    }
}

/// How the gRPC answer to a translated call goes back in its protocol.
pub(super) struct Back {
    form: Form,
    /// The call's own headers: its `Origin` for CORS.
    request_headers: HeaderMap,
    /// The method's path, for the codec.
    path: Arc<str>,
    codec: Option<Arc<dyn JsonCodec>>,
}

#[derive(Clone, Copy)]
enum Form {
    Web { text: bool },
    ConnectUnary { json: bool },
    ConnectStream { json: bool },
}

impl Back {
    /// The protocol the call came in on.
    pub(super) fn protocol(&self) -> Protocol {
        match self.form {
            Form::Web { text: false } => Protocol::GrpcWeb,
            Form::Web { text: true } => Protocol::GrpcWebText,
            Form::ConnectUnary { .. } | Form::ConnectStream { .. } => Protocol::Connect,
        }
    }

    /// `call` (the handler's, answering in gRPC) answering in the call's
    /// protocol.
    pub(super) fn answer(self, call: ResolverCall) -> ResolverCall {
        match self.form {
            Form::ConnectUnary { json } => {
                let convert = move |resolution| async move {
                    match resolution {
                        Resolution::Respond(response) => {
                            Resolution::Respond(connect_unary_answer(response, json, self).await)
                        }
                        other => other,
                    }
                };
                match call.0 {
                    // A unary answer is usually buffered: converted at once.
                    CallState::Ready(resolution) => {
                        let mut converting = Box::pin(convert(resolution));
                        match converting.as_mut().now_or_never() {
                            Some(resolution) => ResolverCall::ready(resolution),
                            None => ResolverCall::pending(converting),
                        }
                    }
                    CallState::Pending(future) => {
                        ResolverCall::pending(Box::pin(async move { convert(future.await).await }))
                    }
                }
            }
            Form::Web { .. } | Form::ConnectStream { .. } => {
                call.map(move |resolution| match resolution {
                    Resolution::Respond(response) => Resolution::Respond(self.streamed(response)),
                    other => other,
                })
            }
        }
    }

    /// A gRPC answer made gRPC-Web's or a Connect stream's: the status in
    /// the body's last frame (or, trailers-only, where each protocol puts it).
    fn streamed(self, response: HttpResponse) -> HttpResponse {
        let Back {
            form,
            request_headers,
            path,
            codec,
        } = self;
        response.rewrite(move |_, headers, body| {
            headers.remove(http::header::CONTENT_LENGTH);
            let body = match form {
                Form::Web { text } => {
                    headers.insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static(if text {
                            "application/grpc-web-text+proto"
                        } else {
                            "application/grpc-web+proto"
                        }),
                    );
                    // Trailers-only: the status stays in the headers, as
                    // gRPC-Web allows.
                    let body = body.trailers_into_body(|trailers| trailers.map(web_trailers));
                    if text {
                        body.map_chunks(|chunk| {
                            Ok(Bytes::from(crate::support::base64::encode(&chunk)))
                        })
                    } else {
                        body
                    }
                }
                Form::ConnectStream { json } => {
                    headers.insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static(if json {
                            "application/connect+json"
                        } else {
                            "application/connect+proto"
                        }),
                    );
                    // Trailers-only: the status leaves the headers for the
                    // end-of-stream message.
                    let in_headers = Status::from_headers(headers);
                    if in_headers.is_some() {
                        remove_status(headers);
                    }
                    let body = match (json, codec) {
                        (true, Some(codec)) => json_replies(body, codec, path),
                        _ => body,
                    };
                    body.trailers_into_body(move |trailers| {
                        Some(match trailers {
                            Some(trailers) => connect_end(&trailers, None),
                            None => connect_end(&HeaderMap::new(), in_headers),
                        })
                    })
                }
                // Converted whole by `answer`, which never sends it here.
                Form::ConnectUnary { .. } => body,
            };
            add_cors(&request_headers, headers);
            body
        })
    }
}

/// The status headers gRPC puts in a response's headers or trailers.
fn remove_status(headers: &mut HeaderMap) {
    for name in ["grpc-status", "grpc-message", "grpc-status-details-bin"] {
        headers.remove(name);
    }
}

/// gRPC's trailers as gRPC-Web's last frame: flag `0x80`, then
/// `name:value\r\n` for each.
fn web_trailers(trailers: HeaderMap) -> Bytes {
    let mut block = BytesMut::new();
    for (name, value) in &trailers {
        block.put_slice(name.as_str().as_bytes());
        block.put_u8(b':');
        block.put_slice(value.as_bytes());
        block.put_slice(b"\r\n");
    }
    let mut frame = BytesMut::with_capacity(5 + block.len());
    frame.put_u8(0x80);
    frame.put_u32(u32::try_from(block.len()).unwrap_or(u32::MAX));
    frame.put_slice(&block);
    frame.freeze()
}

/// Connect's end-of-stream message for a call that ended with the status
/// in `trailers` (or `status`, when it came in the headers): its error
/// unless `OK`, and the rest of the trailers as metadata.
fn connect_end(trailers: &HeaderMap, status: Option<Status>) -> Bytes {
    let status = status.or_else(|| Status::from_headers(trailers));
    let mut end = serde_json::Map::new();
    if let Some(status) = status.filter(|status| status.code() != Code::Ok) {
        end.insert("error".into(), connect_error(&status));
    }
    let metadata = metadata_json(trailers);
    if !metadata.is_empty() {
        end.insert("metadata".into(), serde_json::Value::Object(metadata));
    }
    connect_end_of_stream(&serde_json::Value::Object(end))
}

/// `headers` but gRPC's status as Connect's metadata: `{name: [values]}`.
fn metadata_json(headers: &HeaderMap) -> serde_json::Map<String, serde_json::Value> {
    let mut metadata = serde_json::Map::new();
    for name in headers.keys() {
        if name.as_str().starts_with("grpc-") {
            continue;
        }
        let values = headers
            .get_all(name)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .map(|value| serde_json::Value::String(value.to_owned()))
            .collect();
        metadata.insert(name.as_str().to_owned(), serde_json::Value::Array(values));
    }
    metadata
}

/// A status as Connect's error JSON, its details (a `google.rpc.Status`'s
/// `Any`s) as `{"type", "value"}`.
fn connect_error(status: &Status) -> serde_json::Value {
    let mut error = connect_error_value(status.code(), status.message());
    let details = any_details(status.details());
    if !details.is_empty() {
        error["details"] = serde_json::Value::Array(details);
    }
    error
}

/// The `Any`s of an encoded `google.rpc.Status` (`grpc-status-details-bin`)
/// as Connect's details: the type's name (without `type.googleapis.com/`)
/// and the value in unpadded base64.
fn any_details(details: &Bytes) -> Vec<serde_json::Value> {
    // google.rpc.Status: `repeated google.protobuf.Any details = 3`, each
    // `string type_url = 1; bytes value = 2`.
    fields(details)
        .filter(|(number, _)| *number == 3)
        .filter_map(|(_, any)| {
            let (mut name, mut value) = (None, &[][..]);
            for (number, field) in fields(any) {
                match number {
                    1 => name = std::str::from_utf8(field).ok(),
                    2 => value = field,
                    _ => {}
                }
            }
            let name = name?.rsplit('/').next().unwrap_or_default();
            let value = crate::support::base64::encode(value);
            Some(serde_json::json!({ "type": name, "value": value.trim_end_matches('=') }))
        })
        .collect()
}

/// The length-delimited fields of a protobuf message, as (number, bytes);
/// the others skipped. Ends at the first malformed field.
fn fields(mut message: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    std::iter::from_fn(move || {
        loop {
            let key = prost::encoding::decode_varint(&mut message).ok()?;
            let skip = match key & 7 {
                0 => {
                    prost::encoding::decode_varint(&mut message).ok()?;
                    0
                }
                1 => 8,
                5 => 4,
                2 => {
                    let length =
                        usize::try_from(prost::encoding::decode_varint(&mut message).ok()?).ok()?;
                    let field = message.get(..length)?;
                    message = &message[length..];
                    return Some((key >> 3, field));
                }
                _ => return None,
            };
            message = message.get(skip..)?;
        }
    })
}

/// The gRPC answer to a Connect unary call made Connect's: the one reply
/// bare with `200`, or the status as a JSON error with its HTTP status.
async fn connect_unary_answer(response: HttpResponse, json: bool, back: Back) -> HttpResponse {
    let Back {
        request_headers,
        path,
        codec,
        ..
    } = back;
    let mut answer = None;
    let response = response.rewrite(|status, headers, body| {
        answer = Some((std::mem::take(status), std::mem::take(headers), body));
        Body::empty()
    });
    let Some((_, mut headers, body)) = answer else {
        return response; // not a mocked answer: passed on as it is
    };
    let collected = body.collect_with_trailers().await;
    let outcome = match collected {
        Ok((bytes, trailers)) => {
            let trailers = trailers.unwrap_or_default();
            let status = Status::from_headers(&trailers)
                .or_else(|| Status::from_headers(&headers))
                .unwrap_or_else(|| {
                    Status::new(Code::Internal, "the handler's answer carries no status")
                });
            match status.code() {
                Code::Ok => one_reply(&bytes)
                    .and_then(|message| match (json, &codec) {
                        (true, Some(codec)) => codec
                            .reply_to_json(&path, &message)
                            .map(Bytes::from)
                            .map_err(|why| {
                                Status::new(
                                    Code::Internal,
                                    format!("the reply does not convert to JSON: {why}"),
                                )
                            }),
                        _ => Ok(message),
                    })
                    .map(|message| (message, trailers)),
                _ => Err(status),
            }
            .map_err(|status| (status, trailers_of(&headers)))
        }
        Err(error) => Err((
            Status::new(
                Code::Internal,
                format!("the handler's answer failed: {error}"),
            ),
            HeaderMap::new(),
        )),
    };
    remove_status(&mut headers);
    headers.remove(http::header::CONTENT_TYPE);
    headers.remove(http::header::CONTENT_LENGTH);
    let (status_code, content_type, body, trailers) = match outcome {
        Ok((message, trailers)) => (
            StatusCode::OK,
            if json {
                "application/json"
            } else {
                "application/proto"
            },
            message,
            trailers,
        ),
        Err((status, trailers)) => (
            status.code().connect_http_status(),
            "application/json",
            Bytes::from(serde_json::to_vec(&connect_error(&status)).expect("JSON of strings")),
            status
                .metadata()
                .clone()
                .into_iter()
                .fold(trailers, |mut all, (name, value)| {
                    if let Some(name) = name {
                        all.append(name, value);
                    }
                    all
                }),
        ),
    };
    // Trailing metadata travels in headers, prefixed `trailer-`.
    for (name, value) in &trailers {
        if name.as_str().starts_with("grpc-") {
            continue;
        }
        if let Ok(prefixed) = HeaderName::try_from(format!("trailer-{name}")) {
            headers.append(prefixed, value.clone());
        }
    }
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(content_type),
    );
    add_cors(&request_headers, &mut headers);
    response.rewrite(move |status, all, _| {
        *status = status_code;
        *all = headers;
        Body::from(body)
    })
}

/// The metadata of a trailers-only answer's headers (its status aside).
fn trailers_of(headers: &HeaderMap) -> HeaderMap {
    let mut trailers = headers.clone();
    remove_status(&mut trailers);
    trailers.remove(http::header::CONTENT_TYPE);
    trailers
}

/// The one message of a unary call's framed reply.
fn one_reply(framed: &Bytes) -> Result<Bytes, Status> {
    let mut framer = super::frame::Framer::default();
    framer.push(framed.clone());
    let message = framer
        .next_message()
        .unwrap_or_else(|| Err(Status::new(Code::Internal, "the handler answered no reply")))?;
    match framer.next_message() {
        None => Ok(message),
        Some(_) => Err(Status::new(
            Code::Internal,
            "the handler answered more than one reply to a unary call",
        )),
    }
}

/// A streaming body of framed protobuf replies, each made JSON by `codec`
/// (a reply that does not convert ends the stream with an error).
fn json_replies(body: Body, codec: Arc<dyn JsonCodec>, path: Arc<str>) -> Body {
    let mut framer = super::frame::Framer::default();
    body.map_chunks(move |chunk| {
        framer.push(chunk);
        let mut out = BytesMut::new();
        while let Some(message) = framer.next_message() {
            let json = message
                .map_err(|status| status.message().to_owned())
                .and_then(|message| codec.reply_to_json(&path, &message))
                .map_err(|why| {
                    StreamError::new(format!("a reply does not convert to JSON: {why}"))
                })?;
            put_frame(&mut out, &json);
        }
        Ok(out.freeze())
    })
}

/// The gRPC-Web call `request`, made gRPC's: its text form decoded.
fn web_call(request: &Request, text: bool) -> Incoming {
    let back = |request: &Request| Back {
        form: Form::Web { text },
        request_headers: request.headers().clone(),
        path: Arc::from(""),
        codec: None,
    };
    let body = if text {
        match crate::support::base64::decode_lenient(request.body()) {
            Some(decoded) => Bytes::from(decoded),
            None => {
                return refused(
                    request,
                    Rpc::GrpcWeb { text },
                    Code::Internal,
                    "the gRPC-Web text body is not base64",
                );
            }
        }
    } else {
        request.bytes()
    };
    Incoming::Translated(
        grpc_request(request, Method::POST, body, None),
        back(request),
    )
}

/// A Connect streaming call made gRPC's: its envelopes are gRPC's frames
/// (JSON ones converted by the handler's codec).
fn connect_stream_call(request: &Request, path: &str, context: &MatchContext<'_>) -> Incoming {
    let rpc = Rpc::Connect { stream: true };
    let json = request
        .header("content-type")
        .is_some_and(|value| value.to_ascii_lowercase().contains("+json"));
    let encoding = request
        .header("connect-content-encoding")
        .map(str::to_owned);
    if let Some(refusal) = compressed(request, rpc, encoding) {
        return refusal;
    }
    let codec = if json { codec_of(context) } else { None };
    if json && codec.is_none() {
        return Incoming::Answered(unsupported_json(request, path));
    }
    let body = match &codec {
        Some(codec) => {
            let mut framer = super::frame::Framer::default();
            framer.push(request.bytes());
            let mut framed = BytesMut::new();
            while let Some(message) = framer.next_message() {
                let converted = message
                    .map_err(|status| status.message().to_owned())
                    .and_then(|message| codec.request_from_json(path, &message));
                match converted {
                    Ok(proto) => put_frame(&mut framed, &proto),
                    Err(why) => {
                        return refused(
                            request,
                            rpc,
                            Code::InvalidArgument,
                            &format!("a request message does not convert from JSON: {why}"),
                        );
                    }
                }
            }
            framed.freeze()
        }
        None => request.bytes(),
    };
    let timeout = connect_timeout(request.headers());
    Incoming::Translated(
        grpc_request(request, Method::POST, body, timeout),
        Back {
            form: Form::ConnectStream { json },
            request_headers: request.headers().clone(),
            path: Arc::from(path),
            codec,
        },
    )
}

/// A Connect unary call (a POST's body, or a GET's message) made gRPC's:
/// its message framed (converted from JSON by the handler's codec).
fn connect_unary_call(
    request: &Request,
    message: Bytes,
    json: bool,
    path: &str,
    context: &MatchContext<'_>,
) -> Incoming {
    let rpc = Rpc::Connect { stream: false };
    let encoding = if request.method() == Method::GET {
        query_value(request, "compression")
    } else {
        request.header("content-encoding").map(str::to_owned)
    };
    if let Some(refusal) = compressed(request, rpc, encoding) {
        return refusal;
    }
    let codec = if json { codec_of(context) } else { None };
    let proto = match (json, &codec) {
        (false, _) => message,
        (true, Some(codec)) => match codec.request_from_json(path, &message) {
            Ok(proto) => Bytes::from(proto),
            Err(why) => {
                return refused(
                    request,
                    rpc,
                    Code::InvalidArgument,
                    &format!("the request message does not convert from JSON: {why}"),
                );
            }
        },
        (true, None) => return Incoming::Answered(unsupported_json(request, path)),
    };
    let mut framed = BytesMut::with_capacity(5 + proto.len());
    put_frame(&mut framed, &proto);
    let timeout = connect_timeout(request.headers());
    Incoming::Translated(
        grpc_request(request, Method::POST, framed.freeze(), timeout),
        Back {
            form: Form::ConnectUnary { json },
            request_headers: request.headers().clone(),
            path: Arc::from(path),
            codec,
        },
    )
}

/// The refusal of a Connect call whose messages are compressed with
/// `encoding` (anything but `identity`): mocklib reads uncompressed ones.
fn compressed(request: &Request, rpc: Rpc, encoding: Option<String>) -> Option<Incoming> {
    let encoding = encoding.filter(|encoding| !encoding.eq_ignore_ascii_case("identity"))?;
    Some(refused(
        request,
        rpc,
        Code::Unimplemented,
        &format!("mocklib reads uncompressed Connect messages only, not {encoding}"),
    ))
}

/// A Connect GET (`?connect=v1&encoding=proto&message=…&base64=1`): a
/// unary call of an idempotent method, its message in the query.
fn connect_get_call(request: &Request, path: &str, context: &MatchContext<'_>) -> Incoming {
    let (Some(encoding), Some(message)) = (
        query_value(request, "encoding"),
        query_value(request, "message"),
    ) else {
        return Incoming::NotACall;
    };
    let rpc = Rpc::Connect { stream: false };
    let json = match encoding.as_str() {
        "json" => true,
        "proto" => false,
        other => {
            return refused(
                request,
                rpc,
                Code::InvalidArgument,
                &format!("a Connect GET's encoding is `proto` or `json`, not `{other}`"),
            );
        }
    };
    let message = if query_value(request, "base64").as_deref() == Some("1") {
        match crate::support::base64::decode_lenient(message.as_bytes()) {
            Some(decoded) => Bytes::from(decoded),
            None => {
                return refused(
                    request,
                    rpc,
                    Code::InvalidArgument,
                    "the GET's message is not base64",
                );
            }
        }
    } else {
        Bytes::from(message.into_bytes())
    };
    connect_unary_call(request, message, json, path, context)
}

/// The value of the query parameter `name`, percent-decoded.
fn query_value(request: &Request, name: &str) -> Option<String> {
    request
        .url()
        .query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// `connect-timeout-ms`, as `grpc-timeout` says it.
fn connect_timeout(headers: &HeaderMap) -> Option<HeaderValue> {
    let millis: u64 = headers
        .get("connect-timeout-ms")?
        .to_str()
        .ok()?
        .parse()
        .ok()?;
    HeaderValue::try_from(format!("{}m", millis.min(99_999_999))).ok()
}

/// Appends `message` to `out` in gRPC's frame.
fn put_frame(out: &mut BytesMut, message: &[u8]) {
    out.reserve(5 + message.len());
    super::wire::put_header(message.len(), out);
    out.put_slice(message);
}

/// The gRPC call the handler reads for `request`: its headers with gRPC's
/// content type (and the deadline), `body` framed as gRPC frames it.
fn grpc_request(
    request: &Request,
    method: Method,
    body: Bytes,
    timeout: Option<HeaderValue>,
) -> Request {
    let mut headers = request.headers().clone();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.remove(http::header::CONTENT_LENGTH);
    if let Some(timeout) = timeout {
        headers.insert(HeaderName::from_static("grpc-timeout"), timeout);
    }
    request.rewritten(method, headers, body)
}

/// A call refused before its handler reads it, in its protocol's form.
fn refused(request: &Request, rpc: Rpc, code: Code, why: &str) -> Incoming {
    let message = format!("{} {}: {why}", rpc_name(rpc), request.url().path());
    Incoming::Answered(HttpResponse::from_body(rpc.answer(
        request.headers(),
        code,
        &message,
    )))
}

fn rpc_name(rpc: Rpc) -> &'static str {
    match rpc {
        Rpc::Grpc => "gRPC call",
        Rpc::GrpcWeb { .. } => "gRPC-Web call",
        Rpc::Connect { .. } => "Connect call",
    }
}

/// HTTP 415 to a Connect JSON call of a handler without a [`JsonCodec`],
/// naming the forms it takes (`Accept-Post`), as Connect asks.
fn unsupported_json(request: &Request, path: &str) -> HttpResponse {
    let mut headers = HeaderMap::new();
    add_cors(request.headers(), &mut headers);
    let mut response = HttpResponse::text(format!(
        "mocklib: {path} is a gRPC method: it takes gRPC (application/grpc), gRPC-Web \
         (application/grpc-web) and Connect's protobuf form (application/proto, \
         application/connect+proto); its handler has no JSON codec for application/json \
         (grpc::with_json)\n"
    ))
    .status(415)
    .header(
        "accept-post",
        "application/proto, application/connect+proto, application/grpc, application/grpc-web",
    );
    for (name, value) in &headers {
        if let Ok(value) = value.to_str() {
            response = response.header(name.as_str(), value);
        }
    }
    response
}

/// The answer to a CORS preflight of a browser's gRPC-Web or Connect call,
/// as tonic-web gives it: the origin, method and headers asked for
/// allowed, for a day.
fn preflight(request: &Request) -> HttpResponse {
    let mut response = HttpResponse::empty().status(204);
    let asked = |name| request.header(name).unwrap_or_default().to_owned();
    if let Some(origin) = request.header("origin") {
        response = response
            .header("access-control-allow-origin", origin)
            .header("access-control-allow-credentials", "true")
            .header("vary", "origin");
    }
    response
        .header(
            "access-control-allow-methods",
            asked("access-control-request-method"),
        )
        .header(
            "access-control-allow-headers",
            asked("access-control-request-headers"),
        )
        .header("access-control-max-age", "86400")
}
