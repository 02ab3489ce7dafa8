//! `multipart/form-data` and `application/x-www-form-urlencoded` bodies.
//!
//! [`FormData`] is what [`Request::form`](crate::Request::form) returns and what
//! [`HttpResponse::form_data`](crate::HttpResponse::form_data) sends.

use bytes::{BufMut, Bytes, BytesMut};

/// One value of a form field: text, or a file with its name and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormValue {
    /// A plain text field.
    Text(String),
    /// An uploaded file.
    File {
        /// The `filename` the client gave, if any.
        filename: Option<String>,
        /// The part's `Content-Type`, if any.
        content_type: Option<String>,
        /// The file's bytes.
        data: Bytes,
    },
}

impl FormValue {
    /// The text of a text field; `None` for a file.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            FormValue::Text(text) => Some(text),
            FormValue::File { .. } => None,
        }
    }
}

/// An ordered list of form fields; a name may repeat.
///
/// ```
/// use mocklib::request::FormData;
///
/// let form = FormData::new().text("title", "Hello").text("tag", "a").text("tag", "b");
/// assert_eq!(form.get("title"), Some("Hello"));
/// assert_eq!(form.get_all("tag").count(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormData {
    fields: Vec<(String, FormValue)>,
}

/// Why a request body could not be read as a form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// The `Content-Type` is neither form type.
    #[error("content type {0:?} is not application/x-www-form-urlencoded or multipart/form-data")]
    UnsupportedContentType(String),
    /// A multipart content type without a `boundary` parameter.
    #[error("multipart/form-data content type has no boundary parameter")]
    MissingBoundary,
    /// The multipart body does not follow RFC 7578.
    #[error("malformed multipart body: {0}")]
    Malformed(&'static str),
}

impl FormData {
    /// An empty form.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a text field (builder style).
    pub fn text(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.append(name, FormValue::Text(value.into()));
        self
    }

    /// Adds a file field (builder style).
    pub fn file(
        mut self,
        name: impl Into<String>,
        filename: impl Into<String>,
        content_type: impl Into<String>,
        data: impl Into<Bytes>,
    ) -> Self {
        self.append(
            name,
            FormValue::File {
                filename: Some(filename.into()),
                content_type: Some(content_type.into()),
                data: data.into(),
            },
        );
        self
    }

    /// Appends a field.
    pub fn append(&mut self, name: impl Into<String>, value: FormValue) {
        self.fields.push((name.into(), value));
    }

    /// The text of the first field called `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_value(name).and_then(FormValue::as_text)
    }

    /// The first field called `name`, text or file.
    pub fn get_value(&self, name: &str) -> Option<&FormValue> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Every field called `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a FormValue> + 'a {
        self.fields
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Every field, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FormValue)> {
        self.fields.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Whether the form has no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Parses a body according to its `Content-Type`.
    pub fn parse(content_type: &str, body: &[u8]) -> Result<Self, FormError> {
        match media_type(content_type).as_str() {
            "application/x-www-form-urlencoded" => Ok(FormData {
                fields: form_urlencoded::parse(body)
                    .map(|(k, v)| (k.into_owned(), FormValue::Text(v.into_owned())))
                    .collect(),
            }),
            "multipart/form-data" => {
                let boundary =
                    header_param(content_type, "boundary").ok_or(FormError::MissingBoundary)?;
                parse_multipart(body, boundary.as_bytes())
            }
            _ => Err(FormError::UnsupportedContentType(content_type.to_owned())),
        }
    }

    /// Encodes the form as `multipart/form-data` with `boundary`.
    pub(crate) fn to_multipart(&self, boundary: &str) -> Bytes {
        let mut out = BytesMut::new();
        for (name, value) in &self.fields {
            out.put_slice(format!("--{boundary}\r\n").as_bytes());
            let name = escape_quoted(name);
            match value {
                FormValue::Text(text) => {
                    out.put_slice(
                        format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n")
                            .as_bytes(),
                    );
                    out.put_slice(text.as_bytes());
                }
                FormValue::File {
                    filename,
                    content_type,
                    data,
                } => {
                    let filename = escape_quoted(filename.as_deref().unwrap_or("blob"));
                    let content_type = content_type
                        .as_deref()
                        .unwrap_or("application/octet-stream");
                    out.put_slice(
                        format!(
                            "Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n"
                        )
                        .as_bytes(),
                    );
                    out.put_slice(data);
                }
            }
            out.put_slice(b"\r\n");
        }
        out.put_slice(format!("--{boundary}--\r\n").as_bytes());
        out.freeze()
    }
}

/// Encodes a name or filename for a quoted header parameter the way browsers
/// do (WHATWG multipart/form-data): `"`, CR and LF are percent-encoded, and
/// nothing else — backslashes stay as they are.
fn escape_quoted(text: &str) -> String {
    text.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Reverses [`escape_quoted`].
fn unescape_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3).unwrap_or_default();
        let decoded = match code.to_ascii_uppercase().as_str() {
            "22" => Some('"'),
            "0D" => Some('\r'),
            "0A" => Some('\n'),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of parameter `name` in a header such as
/// `form-data; name="a;b"; filename="x.txt"`. A `;` inside quotes belongs to
/// the value. Backslashes are literal, as browsers send them.
fn header_param<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = header.split_once(';')?.1;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ';']);
        if rest.is_empty() {
            return None;
        }
        let key_end = rest.find(['=', ';']).unwrap_or(rest.len());
        let key = rest[..key_end].trim();
        if !rest[key_end..].starts_with('=') {
            rest = &rest[key_end..];
            continue;
        }
        let after = rest[key_end + 1..].trim_start();
        let (value, remainder) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"').unwrap_or(quoted.len());
                (&quoted[..end], quoted.get(end + 1..).unwrap_or_default())
            }
            None => {
                let end = after.find(';').unwrap_or(after.len());
                (after[..end].trim(), &after[end..])
            }
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
        rest = remainder;
    }
}

/// The media type of a `Content-Type` value, lowercased, without parameters:
/// `Multipart/Form-Data; boundary=x` → `multipart/form-data`.
pub(crate) fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_multipart(body: &[u8], boundary: &[u8]) -> Result<FormData, FormError> {
    let mut delimiter = b"--".to_vec();
    delimiter.extend_from_slice(boundary);
    let start = find(body, &delimiter).ok_or(FormError::Malformed("no opening boundary"))?;
    let mut rest = &body[start + delimiter.len()..];
    let mut form = FormData::new();
    let mut next_delimiter = b"\r\n".to_vec();
    next_delimiter.extend_from_slice(&delimiter);
    loop {
        if rest.starts_with(b"--") {
            return Ok(form);
        }
        rest = rest.strip_prefix(b"\r\n").ok_or(FormError::Malformed(
            "boundary not followed by a line break",
        ))?;
        let end = find(rest, &next_delimiter)
            .ok_or(FormError::Malformed("part is not closed by a boundary"))?;
        form.fields.push(parse_part(&rest[..end])?);
        rest = &rest[end + next_delimiter.len()..];
    }
}

fn parse_part(part: &[u8]) -> Result<(String, FormValue), FormError> {
    let split = find(part, b"\r\n\r\n").ok_or(FormError::Malformed("part has no header end"))?;
    let headers = std::str::from_utf8(&part[..split])
        .map_err(|_| FormError::Malformed("part headers are not UTF-8"))?;
    let data = Bytes::copy_from_slice(&part[split + 4..]);
    let (mut name, mut filename, mut content_type) = (None, None, None);
    for line in headers.split("\r\n") {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("content-disposition") {
            name = header_param(value, "name").map(unescape_quoted);
            filename = header_param(value, "filename").map(unescape_quoted);
        } else if key.trim().eq_ignore_ascii_case("content-type") {
            content_type = Some(value.trim().to_owned());
        }
    }
    let name = name.ok_or(FormError::Malformed("part has no name"))?;
    let value = if filename.is_some() || content_type.is_some() {
        FormValue::File {
            filename,
            content_type,
            data,
        }
    } else {
        let text = String::from_utf8(data.to_vec())
            .map_err(|_| FormError::Malformed("text field is not UTF-8"))?;
        FormValue::Text(text)
    };
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_round_trips() {
        let form = FormData::new().text("title", "Hello \"world\"").file(
            "upload",
            "a.txt",
            "text/plain",
            &b"line1\r\nline2"[..],
        );
        let body = form.to_multipart("XyZ");
        let parsed = FormData::parse("multipart/form-data; boundary=XyZ", &body).unwrap();
        assert_eq!(parsed.get("title"), Some("Hello \"world\""));
        match parsed.get_value("upload").unwrap() {
            FormValue::File { filename, data, .. } => {
                assert_eq!(filename.as_deref(), Some("a.txt"));
                assert_eq!(&data[..], b"line1\r\nline2");
            }
            other @ FormValue::Text(_) => panic!("expected a file, got {other:?}"),
        }
    }

    #[test]
    fn header_params_respect_quotes() {
        let header = r#"form-data; name="a;b"; filename="C:\dir\x.txt""#;
        assert_eq!(header_param(header, "name"), Some("a;b"));
        assert_eq!(header_param(header, "filename"), Some(r"C:\dir\x.txt"));
        assert_eq!(
            header_param("multipart/form-data; boundary=xyz", "boundary"),
            Some("xyz")
        );
        assert_eq!(header_param("form-data; flag; name=x", "name"), Some("x"));
        assert_eq!(
            header_param(r#"form-data; name="unterminated"#, "name"),
            Some("unterminated")
        );
        assert_eq!(header_param("form-data", "name"), None);
    }

    #[test]
    fn quoted_names_round_trip() {
        for name in [
            "say \"hi\"",
            "line\r\nbreak",
            "100%",
            "50%off",
            r"back\slash",
        ] {
            assert_eq!(unescape_quoted(&escape_quoted(name)), name);
        }
        // The browser encoding is ambiguous for a literal "%22": it reads as a quote.
        assert_eq!(unescape_quoted("%22"), "\"");
    }

    #[test]
    fn urlencoded_fields_keep_order_and_repeats() {
        let form = FormData::parse("application/x-www-form-urlencoded", b"a=1&b=x+y&a=2").unwrap();
        assert_eq!(form.get("b"), Some("x y"));
        let all: Vec<_> = form.get_all("a").filter_map(FormValue::as_text).collect();
        assert_eq!(all, ["1", "2"]);
    }

    #[test]
    fn broken_bodies_are_errors_not_panics() {
        assert_eq!(
            FormData::parse("multipart/form-data", b""),
            Err(FormError::MissingBoundary)
        );
        for body in [
            &b""[..],
            b"--b",
            b"--b\r\nno-header-end",
            b"--b\r\n\r\nx\r\n--b--",
            b"--bXX",
        ] {
            assert!(
                FormData::parse("multipart/form-data; boundary=b", body).is_err(),
                "{body:?}"
            );
        }
        assert!(matches!(
            FormData::parse("text/plain", b"a=1"),
            Err(FormError::UnsupportedContentType(_))
        ));
    }
}
