//! The request's cookies, parsed once from its `Cookie` headers.
//!
//! A resolver reads them from [`ResolverArgs::cookies`](crate::ResolverArgs::cookies):
//!
//! ```
//! use mocklib::{http, HttpResponse};
//!
//! let handler = http::get("https://api.example.com/user", |args| {
//!     match args.cookies.get("session") {
//!         Some(session) => HttpResponse::text(format!("hello, {session}")),
//!         None => HttpResponse::empty().status(401),
//!     }
//! });
//! # let _ = handler;
//! ```

use std::collections::BTreeMap;

use http::HeaderMap;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

/// Cookies sent with a request, keyed by name.
///
/// Parsed from every `Cookie` header of the request as the `cookie` crate's
/// `split_parse_encoded` does: `name=value` pairs split on `;`, trimmed, names
/// and values percent-decoded. When a name appears twice, the first value wins
/// (browsers send the most specific cookie first). Pairs that do not parse are
/// skipped rather than failing the whole header.
#[derive(Clone, Default, PartialEq, Eq)]
// `None` when the request sent none (never an empty map): nothing to free
// for the usual request (an empty `BTreeMap` still walks its drop). Boxed,
// so a resolver's arguments, moved a few times a request, stay small.
#[allow(clippy::box_collection)]
pub struct Cookies(Option<Box<BTreeMap<String, String>>>);

/// The map of a request without cookies.
static EMPTY: BTreeMap<String, String> = BTreeMap::new();

impl Cookies {
    /// A request without cookies.
    pub(crate) const NONE: Cookies = Cookies(None);

    /// Parses the `Cookie` headers of `headers`.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let mut map = BTreeMap::new();
        for header in headers.get_all(http::header::COOKIE) {
            let Ok(text) = header.to_str() else { continue };
            for (name, value) in parse_pairs(text) {
                map.entry(name).or_insert(value);
            }
        }
        Cookies((!map.is_empty()).then(|| Box::new(map)))
    }

    fn map(&self) -> &BTreeMap<String, String> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }

    /// The value of the cookie called `name`, if the request sent one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map().get(name).map(String::as_str)
    }

    /// Whether the request sent a cookie called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.map().contains_key(name)
    }

    /// How many distinct cookies the request sent.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether the request sent no cookies.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Every `(name, value)` pair, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map().iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// As the map: `Cookies({"session": "abc"})`.
impl std::fmt::Debug for Cookies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Cookies").field(self.map()).finish()
    }
}

/// As the map of names to values.
impl serde::Serialize for Cookies {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.map().serialize(serializer)
    }
}

/// The `name=value` pairs of one `Cookie` header, percent-decoded. A pair
/// without `=`, with an empty name, or that does not decode to UTF-8 is
/// skipped.
fn parse_pairs(header: &str) -> impl Iterator<Item = (String, String)> + '_ {
    let decode = |text: &str| {
        percent_decode_str(text)
            .decode_utf8()
            .ok()
            .map(|decoded| decoded.into_owned())
    };
    header.split(';').filter_map(move |pair| {
        let (name, value) = pair.split_once('=')?;
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        Some((decode(name)?, decode(value.trim())?))
    })
}

/// What a cookie name or value percent-encodes in `Set-Cookie`: the URL
/// userinfo set plus `(`, `)` and `,` (RFC 6265 section 4.1.1), as the
/// `cookie` crate does, so every value survives the header.
const COOKIE_ENCODE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'(')
    .add(b')')
    .add(b',')
    .add(b'/')
    .add(b':')
    .add(b';')
    .add(b'<')
    .add(b'=')
    .add(b'>')
    .add(b'?')
    .add(b'@')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The `Set-Cookie` value `name=value`, both percent-encoded.
pub(crate) fn set_cookie_value(name: &str, value: &str) -> String {
    format!(
        "{}={}",
        utf8_percent_encode(name, COOKIE_ENCODE),
        utf8_percent_encode(value, COOKIE_ENCODE)
    )
}

impl std::ops::Index<&str> for Cookies {
    type Output = str;

    /// # Panics
    /// When the request has no such cookie; use [`Cookies::get`] to check.
    fn index(&self, name: &str) -> &str {
        self.get(name)
            .unwrap_or_else(|| panic!("the request has no cookie named {name:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_cookie_header_and_decodes_values() {
        let mut headers = HeaderMap::new();
        headers.append("cookie", "session=abc%20def; theme=dark".parse().unwrap());
        headers.append("cookie", "lang=en; theme=light".parse().unwrap());
        let cookies = Cookies::from_headers(&headers);
        assert_eq!(cookies.get("session"), Some("abc def"));
        assert_eq!(cookies.get("theme"), Some("dark"));
        assert_eq!(&cookies["lang"], "en");
        assert_eq!(cookies.len(), 3);
    }

    #[test]
    fn garbage_pairs_are_skipped() {
        let mut headers = HeaderMap::new();
        headers.append("cookie", "=novalue; ok=1;;; ".parse().unwrap());
        let cookies = Cookies::from_headers(&headers);
        assert_eq!(cookies.get("ok"), Some("1"));
    }

    #[test]
    fn no_cookies_are_one_value_shown_and_serialized_as_an_empty_map() {
        let mut headers = HeaderMap::new();
        headers.append("cookie", "=novalue;;".parse().unwrap());
        let none = Cookies::from_headers(&headers);
        assert_eq!(none, Cookies::default());
        assert_eq!(none, Cookies::NONE);
        assert!(none.is_empty());
        assert_eq!(format!("{none:?}"), "Cookies({})");
        assert_eq!(serde_json::to_string(&none).unwrap(), "{}");
        headers.append("cookie", "a=1".parse().unwrap());
        let some = Cookies::from_headers(&headers);
        assert_eq!(format!("{some:?}"), r#"Cookies({"a": "1"})"#);
        assert_eq!(serde_json::to_string(&some).unwrap(), r#"{"a":"1"}"#);
    }

    #[test]
    fn set_cookie_values_are_percent_encoded() {
        assert_eq!(set_cookie_value("session", "abc"), "session=abc");
        assert_eq!(
            set_cookie_value("a b", "x;y=z, (1) \u{e9}"),
            "a%20b=x%3By%3Dz%2C%20%281%29%20%C3%A9"
        );
    }
}
