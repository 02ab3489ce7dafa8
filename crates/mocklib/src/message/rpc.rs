//! RPC protocols carried over HTTP, as far as the answers mocklib makes
//! itself need them: whether a request is a call of one, and that
//! protocol's form of an error.
//!
//! A client of such a protocol reads every answer as the protocol's: a
//! gRPC client reads a plain-text `502` as a message frame and reports a
//! protocol error. So every answer that no handler wrote — an unhandled
//! call under the `error` strategy, a call passed through to nowhere, a
//! refusal of the listener, a real server that cannot be reached, a
//! failing resolver — asks [`Rpc::of_call`] first, and a call gets
//! [`Rpc::error`] with a [`Code`] instead of its HTTP answer. Only gRPC so
//! far; gRPC-Web and Connect would be variants here (their content types,
//! their forms of an error), and every such answer would take them.
//!
//! No prost, no tonic: the core builds these answers on every target and
//! without the `grpc` feature (the listener passes gRPC calls through
//! without it).

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
}

impl Rpc {
    /// The protocol `headers`' content type names: gRPC for
    /// `application/grpc` and `application/grpc+proto` and the like; not
    /// gRPC-Web (`application/grpc-web`, which HTTP/1.1 carries too, and
    /// whose errors take another form).
    #[inline] // per request with a body: the front doors stream a call's
    pub(crate) fn of_content_type(headers: &HeaderMap) -> Option<Rpc> {
        let value = headers.get(http::header::CONTENT_TYPE)?.to_str().ok()?;
        // Per request with a body: compared in place, not lowercased into a copy.
        let value = value.trim().as_bytes();
        let grpc = b"application/grpc";
        let is_grpc = value.len() >= grpc.len()
            && value[..grpc.len()].eq_ignore_ascii_case(grpc)
            && matches!(value.get(grpc.len()), None | Some(b'+' | b';'));
        is_grpc.then_some(Rpc::Grpc)
    }

    /// The protocol a request with `method` and `headers` is a call of
    /// (gRPC: a `POST` of its content type); `None` for any other request,
    /// which gets mocklib's HTTP answers.
    pub(crate) fn of_call(method: &Method, headers: &HeaderMap) -> Option<Rpc> {
        if method != Method::POST {
            return None;
        }
        Rpc::of_content_type(headers)
    }

    /// This protocol's answer to a call that ends with `code` and
    /// `message` (which should name the method and say why; cut to 2 KiB).
    /// gRPC: HTTP 200, trailers-only — the status in the headers, no body.
    pub(crate) fn error(self, code: Code, message: &str) -> http::Response<Body> {
        match self {
            Rpc::Grpc => {
                let mut response = http::Response::new(Body::empty());
                let headers = response.headers_mut();
                headers.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/grpc"),
                );
                headers.insert(GRPC_STATUS, code.header_value());
                if let Some(value) = encode_message(&cut(message, MAX_MESSAGE)) {
                    headers.insert(GRPC_MESSAGE, value);
                }
                response
            }
        }
    }
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
    Rpc::of_call(method, headers).map(|rpc| rpc.error(code, &message()))
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
    fn grpc_content_types_are_told_apart() {
        for yes in [
            "application/grpc",
            "application/grpc+proto",
            "application/grpc; charset=x",
            " Application/GRPC+json ",
        ] {
            assert_eq!(
                Rpc::of_content_type(&headers(yes)),
                Some(Rpc::Grpc),
                "{yes}"
            );
        }
        for no in [
            "application/grpc-web",
            "application/grpc-web+proto",
            "application/grpcx",
            "application/grp",
            "application/json",
        ] {
            assert_eq!(Rpc::of_content_type(&headers(no)), None, "{no}");
        }
        assert_eq!(Rpc::of_content_type(&HeaderMap::new()), None);
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
