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

/// Cookies sent with a request, keyed by name.
///
/// Parsed with the [`cookie`] crate from every `Cookie` header of the request;
/// values are percent-decoded. When a name appears twice, the first value wins
/// (browsers send the most specific cookie first). Pairs that do not parse are
/// skipped rather than failing the whole header.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Cookies(BTreeMap<String, String>);

impl Cookies {
    /// Parses the `Cookie` headers of `headers`.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let mut map = BTreeMap::new();
        for header in headers.get_all(http::header::COOKIE) {
            let Ok(text) = header.to_str() else { continue };
            for cookie in cookie::Cookie::split_parse_encoded(text).flatten() {
                map.entry(cookie.name().to_owned())
                    .or_insert_with(|| cookie.value().to_owned());
            }
        }
        Cookies(map)
    }

    /// The value of the cookie called `name`, if the request sent one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Whether the request sent a cookie called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// How many distinct cookies the request sent.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the request sent no cookies.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every `(name, value)` pair, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
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
}
