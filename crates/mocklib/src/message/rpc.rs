//! RPC protocols carried over HTTP, as far as the answers mocklib makes
//! itself need them: whether a request is a call of one, and that
//! protocol's form of an error.
//!
//! A client of such a protocol reads every answer as the protocol's: a
//! gRPC client reads a plain-text `502` as a message frame and reports a
//! protocol error. So every answer that no handler wrote — an unhandled
//! call under the `error` strategy, a call passed through to nowhere, a
//! refusal of the listener, a real server that cannot be reached, a
//! failing resolver — asks [`call_error`] first, and a call gets its
//! protocol's error with a [`Code`] instead of its HTTP answer: gRPC's
//! trailers-only status, gRPC-Web's the same in its content type, Connect's
//! JSON error (a unary call) or end-of-stream message (a streaming one).
//!
//! No prost, no tonic: the core builds these answers on every target and
//! without the `grpc` feature (the listener passes calls through without
//! it).

use http::{HeaderMap, HeaderName, HeaderValue, Method};

use crate::message::body::Body;

/// A gRPC status code (the numbers every gRPC implementation shares).
// Reachable as `grpc::Code`; without that feature only the core's own
// answers use it.
#[cfg_attr(not(feature = "grpc"), allow(unreachable_pub, dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// Not an error.
    Ok = 0,
    /// The call was cancelled, typically by the caller.
    Cancelled = 1,
    /// An error of an unknown kind.
    Unknown = 2,
    /// The client gave an invalid argument.
    InvalidArgument = 3,
    /// The deadline passed before the call completed.
    DeadlineExceeded = 4,
    /// A requested entity was not found.
    NotFound = 5,
    /// The entity a client tried to create exists.
    AlreadyExists = 6,
    /// The caller may not do this.
    PermissionDenied = 7,
    /// A resource (a quota, the message size) is exhausted.
    ResourceExhausted = 8,
    /// The system is not in a state the call needs.
    FailedPrecondition = 9,
    /// The call was aborted (a concurrency conflict).
    Aborted = 10,
    /// Past the valid range.
    OutOfRange = 11,
    /// The method is not implemented or not supported.
    Unimplemented = 12,
    /// An internal error.
    Internal = 13,
    /// The service is unavailable for now.
    Unavailable = 14,
    /// Data was lost or corrupted.
    DataLoss = 15,
    /// The caller is not authenticated.
    Unauthenticated = 16,
}

#[cfg_attr(not(feature = "grpc"), allow(unreachable_pub, dead_code))]
impl Code {
    /// The code's number, as sent in `grpc-status`.
    pub fn as_i32(self) -> i32 {
        self as i32
    }

    /// The code of a number; `None` outside gRPC's 0 to 16 (a client
    /// reads those as `UNKNOWN`).
    pub fn from_i32(code: i32) -> Option<Code> {
        const ALL: [Code; 17] = [
            Code::Ok,
            Code::Cancelled,
            Code::Unknown,
            Code::InvalidArgument,
            Code::DeadlineExceeded,
            Code::NotFound,
            Code::AlreadyExists,
            Code::PermissionDenied,
            Code::ResourceExhausted,
            Code::FailedPrecondition,
            Code::Aborted,
            Code::OutOfRange,
            Code::Unimplemented,
            Code::Internal,
            Code::Unavailable,
            Code::DataLoss,
            Code::Unauthenticated,
        ];
        usize::try_from(code)
            .ok()
            .and_then(|index| ALL.get(index).copied())
    }

    /// The code as a `grpc-status` value: a static one, so sending a status
    /// allocates nothing for it (a number formatted would be a new value).
    pub(crate) fn header_value(self) -> HeaderValue {
        const CODES: [&str; 17] = [
            "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
            "16",
        ];
        HeaderValue::from_static(CODES[self.as_i32() as usize])
    }
}

/// `grpc-status`.
pub(crate) const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
/// `grpc-message`.
pub(crate) const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");

/// `message` as a `grpc-message` value: percent-encoded, as gRPC over
/// HTTP/2 asks (every byte outside printable ASCII, and `%` itself).
pub(crate) fn encode_message(message: &str) -> Option<HeaderValue> {
    const ESCAPES: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b'%');
    let encoded: String = percent_encoding::utf8_percent_encode(message, ESCAPES).collect();
    HeaderValue::try_from(encoded).ok()
}

/// The most bytes of a message mocklib puts in its own error answers:
/// clients cap a response's headers (gRPC core at 8 KiB by default), and an
/// answer over the cap would reach them as a broken call, not a status.
const MAX_MESSAGE: usize = 2048;

/// An RPC protocol whose clients read mocklib's own answers in its form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rpc {
    /// gRPC over HTTP/2 (`application/grpc`, `application/grpc+proto`, ...).
    Grpc,
    /// gRPC-Web (`application/grpc-web`, `+proto`), or its base64 form
    /// (`application/grpc-web-text`): gRPC's frames over HTTP/1.1 or
    /// HTTP/2, the status in a last frame of the body.
    GrpcWeb {
        /// The base64 form.
        text: bool,
    },
    /// Connect: a unary call (`application/proto` or `application/json`
    /// with a `connect-protocol-version` header: without it such a POST is
    /// any POST), or a streaming one (`application/connect+proto`,
    /// `+json`).
    Connect {
        /// A streaming call: enveloped messages, the status in an
        /// end-of-stream message.
        stream: bool,
    },
}

/// `value` starts with `prefix` (ASCII case aside), followed by nothing,
/// `+` or `;`: a media type and its suffix or parameters.
fn is_media_type(value: &[u8], prefix: &[u8]) -> bool {
    value.len() >= prefix.len()
        && value[..prefix.len()].eq_ignore_ascii_case(prefix)
        && matches!(value.get(prefix.len()), None | Some(b'+' | b';'))
}

impl Rpc {
    /// The protocol `headers`' content type names: gRPC for
    /// `application/grpc` and `application/grpc+proto` and the like,
    /// gRPC-Web for `application/grpc-web…`, Connect for
    /// `application/connect+…` (and `application/proto` or `/json` with
    /// `connect-protocol-version`).
    #[inline] // per request with a body: the front doors stream a call's
    pub(crate) fn of_content_type(headers: &HeaderMap) -> Option<Rpc> {
        let value = headers.get(http::header::CONTENT_TYPE)?.as_bytes();
        // Per request with a body: compared in place, not lowercased into a copy.
        let value = value.trim_ascii();
        if value.len() < 16 || !value[..12].eq_ignore_ascii_case(b"application/") {
            return None;
        }
        if is_media_type(value, b"application/grpc") {
            return Some(Rpc::Grpc);
        }
        Rpc::of_other_content_type(value, headers)
    }

    /// [`Self::of_content_type`] past gRPC's own: kept out of line, as
    /// most requests with a body are none of these.
    #[cold]
    fn of_other_content_type(value: &[u8], headers: &HeaderMap) -> Option<Rpc> {
        if is_media_type(value, b"application/grpc-web-text") {
            Some(Rpc::GrpcWeb { text: true })
        } else if is_media_type(value, b"application/grpc-web") {
            Some(Rpc::GrpcWeb { text: false })
        } else if value.len() > 20 && value[..20].eq_ignore_ascii_case(b"application/connect+") {
            Some(Rpc::Connect { stream: true })
        } else if (is_media_type(value, b"application/proto")
            || is_media_type(value, b"application/json"))
            && headers.contains_key(CONNECT_PROTOCOL_VERSION)
        {
            Some(Rpc::Connect { stream: false })
        } else {
            None
        }
    }

    /// The protocol a request with `method` and `headers` is a call of (a
    /// `POST` of its content type); `None` for any other request, which
    /// gets mocklib's HTTP answers.
    pub(crate) fn of_call(method: &Method, headers: &HeaderMap) -> Option<Rpc> {
        if method != Method::POST {
            return None;
        }
        Rpc::of_content_type(headers)
    }

    /// This protocol's answer to a call that ends with `code` and
    /// `message` (which should name the method and say why; cut to 2 KiB).
    /// gRPC and gRPC-Web: HTTP 200, trailers-only — the status in the
    /// headers, no body. Connect: the HTTP status of the code and a JSON
    /// error (unary), or HTTP 200 and an end-of-stream message (streaming).
    pub(crate) fn error(self, code: Code, message: &str) -> http::Response<Body> {
        let message = cut(message, MAX_MESSAGE);
        let (status, content_type, body) = match self {
            Rpc::Grpc | Rpc::GrpcWeb { .. } => {
                let content_type = match self {
                    Rpc::GrpcWeb { text: true } => "application/grpc-web-text+proto",
                    Rpc::GrpcWeb { text: false } => "application/grpc-web+proto",
                    _ => "application/grpc",
                };
                let mut response = http::Response::new(Body::empty());
                let headers = response.headers_mut();
                headers.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static(content_type),
                );
                headers.insert(GRPC_STATUS, code.header_value());
                if let Some(value) = encode_message(&message) {
                    headers.insert(GRPC_MESSAGE, value);
                }
                return response;
            }
            Rpc::Connect { stream: false } => (
                code.connect_http_status(),
                "application/json",
                connect_error_json(code, &message),
            ),
            Rpc::Connect { stream: true } => {
                let end = serde_json::json!({ "error": connect_error_value(code, &message) });
                (
                    http::StatusCode::OK,
                    "application/connect+json",
                    connect_end_of_stream(&end),
                )
            }
        };
        let mut response = http::Response::new(Body::from(body));
        *response.status_mut() = status;
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(content_type),
        );
        response
    }
}

impl Rpc {
    /// [`Self::error`] as the answer to a call with `request_headers`:
    /// with the CORS headers a browser needs to read it (gRPC-Web and
    /// Connect, from a page on another origin).
    pub(crate) fn answer(
        self,
        request_headers: &HeaderMap,
        code: Code,
        message: &str,
    ) -> http::Response<Body> {
        let mut answer = self.error(code, message);
        if self != Rpc::Grpc {
            add_cors(request_headers, answer.headers_mut());
        }
        answer
    }
}

/// `connect-protocol-version`: what a Connect client sends with a unary
/// call (`1`), which tells it from any POST of JSON.
pub(crate) const CONNECT_PROTOCOL_VERSION: HeaderName =
    HeaderName::from_static("connect-protocol-version");

impl Code {
    /// The code's name in Connect's errors (`"not_found"`; `"canceled"`
    /// with one `l`, as Connect spells it).
    pub(crate) fn connect_name(self) -> &'static str {
        const NAMES: [&str; 17] = [
            "ok",
            "canceled",
            "unknown",
            "invalid_argument",
            "deadline_exceeded",
            "not_found",
            "already_exists",
            "permission_denied",
            "resource_exhausted",
            "failed_precondition",
            "aborted",
            "out_of_range",
            "unimplemented",
            "internal",
            "unavailable",
            "data_loss",
            "unauthenticated",
        ];
        NAMES[self.as_i32() as usize]
    }

    /// The HTTP status of a Connect unary call that ends with this code
    /// (Connect's table: `not_found` 404, `unavailable` 503, ...).
    pub(crate) fn connect_http_status(self) -> http::StatusCode {
        let status = match self {
            Code::Ok => 200,
            Code::Cancelled => 499,
            Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
            Code::DeadlineExceeded => 504,
            Code::NotFound => 404,
            Code::AlreadyExists | Code::Aborted => 409,
            Code::PermissionDenied => 403,
            Code::ResourceExhausted => 429,
            Code::Unimplemented => 501,
            Code::Unavailable => 503,
            Code::Unauthenticated => 401,
            Code::Unknown | Code::Internal | Code::DataLoss => 500,
        };
        http::StatusCode::from_u16(status).expect("a valid status")
    }
}

/// A Connect error as JSON: `{"code": "not_found", "message": "..."}`.
pub(crate) fn connect_error_value(code: Code, message: &str) -> serde_json::Value {
    let mut error = serde_json::Map::new();
    error.insert("code".into(), code.connect_name().into());
    if !message.is_empty() {
        error.insert("message".into(), message.into());
    }
    serde_json::Value::Object(error)
}

/// A Connect unary call's error body.
pub(crate) fn connect_error_json(code: Code, message: &str) -> bytes::Bytes {
    serde_json::to_vec(&connect_error_value(code, message))
        .expect("JSON of strings")
        .into()
}

/// Connect's end-of-stream message: `end` (JSON) in an envelope flagged
/// `0x02`.
pub(crate) fn connect_end_of_stream(end: &serde_json::Value) -> bytes::Bytes {
    let json = serde_json::to_vec(end).expect("JSON of strings");
    let mut envelope = Vec::with_capacity(5 + json.len());
    envelope.push(0x02);
    envelope.extend_from_slice(&u32::try_from(json.len()).unwrap_or(u32::MAX).to_be_bytes());
    envelope.extend_from_slice(&json);
    envelope.into()
}

/// The CORS headers a browser needs to read an answer to `request_headers`'
/// call (gRPC-Web or Connect from a page on another origin), as tonic-web
/// answers: the origin mirrored, credentials allowed, and the headers a
/// client reads exposed. Nothing without an `Origin`.
pub(crate) fn add_cors(request_headers: &HeaderMap, headers: &mut HeaderMap) {
    let Some(origin) = request_headers.get(http::header::ORIGIN) else {
        return;
    };
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(
        http::header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("true"),
    );
    // Every header of the answer (metadata a page reads), and the status.
    let mut exposed = String::from("grpc-status,grpc-message,grpc-status-details-bin");
    for name in headers.keys() {
        let name = name.as_str();
        if !name.starts_with("access-control-") && !exposed.split(',').any(|n| n == name) {
            exposed.push(',');
            exposed.push_str(name);
        }
    }
    if let Ok(exposed) = HeaderValue::try_from(exposed) {
        headers.insert(http::header::ACCESS_CONTROL_EXPOSE_HEADERS, exposed);
    }
    headers.append(http::header::VARY, HeaderValue::from_static("origin"));
}

/// mocklib's own answer to a request when it is a call of an RPC protocol
/// ([`Rpc::of_call`]): the protocol's error with `code` and the message
/// `message` makes. `None` for any other request, which the caller answers
/// in HTTP. The one place that decides: every answer mocklib makes itself
/// asks it.
pub(crate) fn call_error(
    method: &Method,
    headers: &HeaderMap,
    code: Code,
    message: impl FnOnce() -> String,
) -> Option<http::Response<Body>> {
    Rpc::of_call(method, headers).map(|rpc| rpc.answer(headers, code, &message()))
}

/// `text` cut to at most `max` bytes, on a character's boundary, with `…`
/// when cut.
fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(content_type: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(content_type),
        );
        headers
    }

    #[test]
    fn the_protocols_are_told_apart_by_content_type() {
        for (value, expected) in [
            ("application/grpc", Some(Rpc::Grpc)),
            ("application/grpc+proto", Some(Rpc::Grpc)),
            ("application/grpc; charset=x", Some(Rpc::Grpc)),
            (" Application/GRPC+json ", Some(Rpc::Grpc)),
            ("application/grpc-web", Some(Rpc::GrpcWeb { text: false })),
            (
                "application/grpc-web+proto",
                Some(Rpc::GrpcWeb { text: false }),
            ),
            (
                "application/grpc-web-text",
                Some(Rpc::GrpcWeb { text: true }),
            ),
            (
                "Application/gRPC-Web-Text+proto",
                Some(Rpc::GrpcWeb { text: true }),
            ),
            (
                "application/connect+proto",
                Some(Rpc::Connect { stream: true }),
            ),
            (
                "application/connect+json",
                Some(Rpc::Connect { stream: true }),
            ),
            // Without `connect-protocol-version`, any POST of JSON.
            ("application/json", None),
            ("application/proto", None),
            ("application/grpcx", None),
            ("application/grp", None),
            ("application/grpc-webx", None),
            ("application/connect", None),
        ] {
            assert_eq!(Rpc::of_content_type(&headers(value)), expected, "{value}");
        }
        assert_eq!(Rpc::of_content_type(&HeaderMap::new()), None);
        for unary in ["application/json", "application/proto; charset=utf-8"] {
            let mut connect = headers("application/json");
            connect.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_str(unary).unwrap(),
            );
            connect.insert(CONNECT_PROTOCOL_VERSION, HeaderValue::from_static("1"));
            assert_eq!(
                Rpc::of_content_type(&connect),
                Some(Rpc::Connect { stream: false }),
                "{unary}"
            );
        }
    }

    #[test]
    fn each_protocol_has_its_form_of_an_error() {
        let web = Rpc::GrpcWeb { text: true }.error(Code::NotFound, "/a.B/C: gone");
        assert_eq!(web.status(), http::StatusCode::OK);
        assert_eq!(
            web.headers()["content-type"],
            "application/grpc-web-text+proto"
        );
        assert_eq!(web.headers()["grpc-status"], "5");

        let unary = Rpc::Connect { stream: false }.error(Code::Unavailable, "/a.B/C: down");
        assert_eq!(unary.status(), http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(unary.headers()["content-type"], "application/json");
        assert_eq!(
            unary.body().as_bytes().unwrap(),
            &br#"{"code":"unavailable","message":"/a.B/C: down"}"#[..]
        );

        let stream = Rpc::Connect { stream: true }.error(Code::Cancelled, "stop");
        assert_eq!(stream.status(), http::StatusCode::OK);
        assert_eq!(stream.headers()["content-type"], "application/connect+json");
        let body = stream.body().as_bytes().unwrap();
        assert_eq!(body[0], 0x02, "an end-of-stream envelope");
        assert_eq!(
            &body[5..],
            br#"{"error":{"code":"canceled","message":"stop"}}"#
        );
        assert_eq!(
            u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize,
            body.len() - 5
        );
    }

    #[test]
    fn a_browsers_call_gets_cors_headers_with_its_error_and_grpc_none() {
        let mut web = headers("application/grpc-web");
        web.insert(
            http::header::ORIGIN,
            HeaderValue::from_static("http://app.test"),
        );
        let answer = call_error(&Method::POST, &web, Code::Internal, || "x".into()).unwrap();
        assert_eq!(
            answer.headers()["access-control-allow-origin"],
            "http://app.test"
        );
        let exposed = answer.headers()["access-control-expose-headers"]
            .to_str()
            .unwrap();
        assert!(
            exposed.contains("grpc-status") && exposed.contains("grpc-message"),
            "{exposed}"
        );
        let mut grpc = headers("application/grpc");
        grpc.insert(
            http::header::ORIGIN,
            HeaderValue::from_static("http://app.test"),
        );
        let answer = call_error(&Method::POST, &grpc, Code::Internal, || "x".into()).unwrap();
        assert!(!answer.headers().contains_key("access-control-allow-origin"));
    }

    #[test]
    fn every_code_has_connects_name_and_http_status() {
        let names: Vec<_> = (0..17)
            .map(|n| Code::from_i32(n).unwrap().connect_name())
            .collect();
        assert_eq!(names[1], "canceled");
        assert_eq!(names[16], "unauthenticated");
        assert_eq!(Code::Unimplemented.connect_http_status(), 501);
        assert_eq!(Code::ResourceExhausted.connect_http_status(), 429);
        assert_eq!(Code::Cancelled.connect_http_status().as_u16(), 499);
    }

    #[test]
    fn only_a_post_is_a_call() {
        let grpc = headers("application/grpc");
        assert_eq!(Rpc::of_call(&Method::POST, &grpc), Some(Rpc::Grpc));
        assert_eq!(Rpc::of_call(&Method::GET, &grpc), None);
        let mut called = false;
        let answer = call_error(&Method::GET, &grpc, Code::Internal, || {
            called = true;
            String::new()
        });
        assert!(answer.is_none() && !called, "no message made for HTTP");
    }

    #[test]
    fn a_grpc_error_is_trailers_only_with_the_message_percent_encoded() {
        let answer = Rpc::Grpc.error(Code::Unimplemented, "/a.B/C: 100% not\nhere, café");
        assert_eq!(answer.status(), http::StatusCode::OK);
        assert_eq!(answer.headers()["content-type"], "application/grpc");
        assert_eq!(answer.headers()["grpc-status"], "12");
        assert_eq!(
            answer.headers()["grpc-message"],
            "/a.B/C: 100%25 not%0Ahere, caf%C3%A9"
        );
        assert_eq!(answer.body().as_bytes().map(|body| body.len()), Some(0));
        assert!(!answer.body().has_trailers());
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let long = "é".repeat(3000);
        let cut = cut(&long, MAX_MESSAGE);
        assert!(
            cut.len() <= MAX_MESSAGE && cut.ends_with('…'),
            "{}",
            cut.len()
        );
        let answer = Rpc::Grpc.error(Code::Internal, &long);
        assert!(answer.headers()["grpc-message"].len() < 3 * MAX_MESSAGE);
    }

    #[test]
    fn every_code_has_its_number_as_header_value() {
        for number in 0..17 {
            let code = Code::from_i32(number).unwrap();
            assert_eq!(code.header_value(), number.to_string().as_str());
        }
        assert_eq!(Code::from_i32(17), None);
    }
}
