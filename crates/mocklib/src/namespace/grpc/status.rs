//! gRPC status codes and the status a call ends with.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};

// The codes are the core's (`crate::message::rpc`): its own answers to gRPC calls
// use them without this feature.
pub use crate::message::rpc::Code;
use crate::message::rpc::{GRPC_MESSAGE, GRPC_STATUS, encode_message};

/// How a gRPC call ends: a [`Code`], a message, and optionally binary
/// details (`grpc-status-details-bin`, usually an encoded
/// `google.rpc.Status`) and trailing metadata. A resolver returns
/// `Err(Status)` to fail a call (as a tonic service does).
///
/// ```
/// use mocklib::grpc::{Code, Status};
///
/// let status = Status::new(Code::NotFound, "no user 7").with_metadata("x-retry", "never");
/// assert_eq!(status.code(), Code::NotFound);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    code: Code,
    message: String,
    details: Bytes,
    /// Boxed: most statuses have none, and a status is an `Err` often.
    metadata: Option<Box<HeaderMap>>,
}

impl Status {
    /// A status with `code` and `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Status {
            code,
            message: message.into(),
            details: Bytes::new(),
            metadata: None,
        }
    }

    /// This status with binary details (`grpc-status-details-bin`).
    pub fn with_details(mut self, details: impl Into<Bytes>) -> Self {
        self.details = details.into();
        self
    }

    /// This status with one more trailing metadata entry; a name or value
    /// that is not valid in a header is left out.
    pub fn with_metadata(mut self, name: &str, value: &str) -> Self {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::try_from(name),
            HeaderValue::try_from(value),
        ) {
            self.metadata
                .get_or_insert_with(Box::default)
                .append(name, value);
        }
        self
    }

    /// The status code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The binary details.
    pub fn details(&self) -> &Bytes {
        &self.details
    }

    /// The trailing metadata.
    pub fn metadata(&self) -> &HeaderMap {
        static NONE: std::sync::OnceLock<HeaderMap> = std::sync::OnceLock::new();
        self.metadata
            .as_deref()
            .unwrap_or_else(|| NONE.get_or_init(HeaderMap::new))
    }

    /// The status as trailers (or the headers of a trailers-only answer).
    pub(crate) fn to_headers(&self) -> HeaderMap {
        // Once per call: a static name and value cost no allocation (a
        // name given as `&str` is copied, a number formatted into a new one).
        let mut headers = self.metadata().clone();
        headers.insert(GRPC_STATUS, self.code.header_value());
        if !self.message.is_empty() {
            if let Some(value) = encode_message(&self.message) {
                headers.insert(GRPC_MESSAGE, value);
            }
        }
        if !self.details.is_empty() {
            let encoded = crate::support::base64::encode(&self.details);
            if let Ok(value) = HeaderValue::try_from(encoded) {
                headers.insert(HeaderName::from_static("grpc-status-details-bin"), value);
            }
        }
        headers
    }
}

impl Status {
    /// The status in `headers` (a call's trailers, or the headers of a
    /// trailers-only answer); `None` when they carry no `grpc-status`. The
    /// other headers, but for gRPC's own, are its metadata.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Option<Status> {
        let code = headers.get("grpc-status")?;
        let code = code
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .and_then(Code::from_i32)
            .unwrap_or(Code::Unknown);
        let message = headers
            .get("grpc-message")
            .map(|value| {
                percent_encoding::percent_decode(value.as_bytes())
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .unwrap_or_default();
        let mut status = Status::new(code, message);
        if let Some(details) = headers
            .get("grpc-status-details-bin")
            .and_then(|value| value.to_str().ok())
            .and_then(crate::support::base64::decode)
        {
            status = status.with_details(details);
        }
        let metadata: HeaderMap = headers
            .iter()
            .filter(|(name, _)| {
                !name.as_str().starts_with("grpc-") && *name != http::header::CONTENT_TYPE
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        if !metadata.is_empty() {
            status.metadata = Some(Box::new(metadata));
        }
        Some(status)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl std::error::Error for Status {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_becomes_its_headers() {
        let status = Status::new(Code::NotFound, "100% gone\n")
            .with_details(&b"\x01\x02"[..])
            .with_metadata("x-why", "because");
        let headers = status.to_headers();
        assert_eq!(headers["grpc-status"], "5");
        assert_eq!(headers["grpc-message"], "100%25 gone%0A");
        assert_eq!(headers["grpc-status-details-bin"], "AQI=");
        assert_eq!(headers["x-why"], "because");
        // And back, as a client reads it.
        assert_eq!(Status::from_headers(&headers), Some(status));
    }

    #[test]
    fn a_status_of_an_unknown_code_or_none_reads_as_a_client_does() {
        let mut headers = HeaderMap::new();
        assert_eq!(Status::from_headers(&headers), None);
        headers.insert("grpc-status", HeaderValue::from_static("99"));
        assert_eq!(
            Status::from_headers(&headers).unwrap().code(),
            Code::Unknown
        );
        assert_eq!(Code::from_i32(16), Some(Code::Unauthenticated));
        assert_eq!(Code::from_i32(-1), None);
    }
}
