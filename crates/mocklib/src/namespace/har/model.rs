//! The HAR 1.2 format (<http://www.softwareishard.com/blog/har-12-spec/>),
//! as far as recording and replaying HTTP exchanges need it.
//!
//! Reading is lenient, because HAR files come from many tools (browsers'
//! developer tools, proxies, Polly.JS): every field mocklib does not need
//! may be missing, and unknown fields are ignored. Writing fills every field
//! the format requires, in a fixed order, so recordings diff well.
//!
//! mocklib adds two custom fields (the format allows fields starting with
//! `_`): `_mocklibEncoded` on a response's content, when `text` holds the
//! body exactly as it came over the wire (still compressed if the response
//! was), and `encoding` on a request's `postData` for binary request bodies,
//! as `content` has it.

use serde::{Deserialize, Serialize};

/// What replaces a redacted value in a recording (and matches any value on
/// replay).
pub const REDACTED: &str = "[REDACTED]";

/// A HAR file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Har {
    pub(crate) log: Log,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Log {
    #[serde(default = "version")]
    pub(crate) version: String,
    #[serde(default)]
    pub(crate) creator: Creator,
    #[serde(default)]
    pub(crate) entries: Vec<Entry>,
}

fn version() -> String {
    "1.2".to_owned()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Creator {
    pub(crate) name: String,
    pub(crate) version: String,
}

impl Default for Creator {
    fn default() -> Self {
        Creator {
            name: "mocklib".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Entry {
    #[serde(default)]
    pub(crate) started_date_time: String,
    /// Milliseconds from the request to the end of the response.
    #[serde(default)]
    pub(crate) time: f64,
    pub(crate) request: HarRequest,
    pub(crate) response: HarResponse,
    #[serde(default)]
    pub(crate) cache: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub(crate) timings: Timings,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Timings {
    pub(crate) send: f64,
    pub(crate) wait: f64,
    pub(crate) receive: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HarRequest {
    pub(crate) method: String,
    pub(crate) url: String,
    #[serde(default = "http_version")]
    pub(crate) http_version: String,
    #[serde(default)]
    pub(crate) cookies: Vec<Cookie>,
    #[serde(default)]
    pub(crate) headers: Vec<NameValue>,
    #[serde(default)]
    pub(crate) query_string: Vec<NameValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) post_data: Option<PostData>,
    #[serde(default = "unknown")]
    pub(crate) headers_size: i64,
    #[serde(default = "unknown")]
    pub(crate) body_size: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HarResponse {
    pub(crate) status: u16,
    #[serde(default)]
    pub(crate) status_text: String,
    #[serde(default = "http_version")]
    pub(crate) http_version: String,
    #[serde(default)]
    pub(crate) cookies: Vec<Cookie>,
    #[serde(default)]
    pub(crate) headers: Vec<NameValue>,
    #[serde(default)]
    pub(crate) content: Content,
    #[serde(default, rename = "redirectURL")]
    pub(crate) redirect_url: String,
    #[serde(default = "unknown")]
    pub(crate) headers_size: i64,
    #[serde(default = "unknown")]
    pub(crate) body_size: i64,
}

fn http_version() -> String {
    "HTTP/1.1".to_owned()
}

/// HAR's "not known" size.
fn unknown() -> i64 {
    -1
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NameValue {
    pub(crate) name: String,
    pub(crate) value: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Cookie {
    pub(crate) name: String,
    pub(crate) value: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PostData {
    #[serde(default)]
    pub(crate) mime_type: String,
    #[serde(default)]
    pub(crate) text: String,
    /// `"base64"` when `text` is a binary body encoded (mocklib's addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encoding: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Content {
    #[serde(default)]
    pub(crate) size: i64,
    #[serde(default)]
    pub(crate) mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encoding: Option<String>,
    /// `text` is the body as sent, not decoded from its `Content-Encoding`
    /// (mocklib's addition; browsers store the decoded body).
    #[serde(
        default,
        rename = "_mocklibEncoded",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub(crate) as_sent: bool,
}

impl HarRequest {
    /// The method, URL and body, checked: what replaying the request needs
    /// to be valid, or what is wrong (the entry cannot be replayed).
    pub(crate) fn parts(&self) -> Result<(http::Method, url::Url, Vec<u8>), String> {
        let method = self
            .method
            .parse()
            .map_err(|_| format!("invalid method {:?}", self.method))?;
        let url = self
            .url
            .parse()
            .map_err(|error| format!("invalid URL {:?}: {error}", self.url))?;
        let body = match &self.post_data {
            Some(data) => body_bytes(&data.text, data.encoding.as_deref())
                .ok_or("the request body is not valid base64")?,
            None => Vec::new(),
        };
        Ok((method, url, body))
    }

    /// The headers `keep` accepts (given the lowercase name and the
    /// value), leaving out those no client can send: invalid names and
    /// values, HTTP/2 pseudo-headers as browsers list them.
    pub(crate) fn header_map(&self, keep: impl Fn(&str, &str) -> bool) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        for NameValue { name, value } in &self.headers {
            if let (Ok(name), Ok(header)) = (
                http::HeaderName::try_from(name.as_str()),
                http::HeaderValue::try_from(value.as_str()),
            ) {
                if keep(name.as_str(), value) {
                    headers.append(name, header);
                }
            }
        }
        headers
    }
}

/// `text` as bytes: base64-decoded when `encoding` says so.
pub(crate) fn body_bytes(text: &str, encoding: Option<&str>) -> Option<Vec<u8>> {
    match encoding {
        Some(encoding) if encoding.eq_ignore_ascii_case("base64") => {
            crate::support::base64::decode(text.trim())
        }
        _ => Some(text.as_bytes().to_vec()),
    }
}
