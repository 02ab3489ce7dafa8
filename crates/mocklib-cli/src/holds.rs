//! Whether a JSON value holds another, by the rules of the library's
//! `matchers::json_body` (every key of an expected object, arrays element
//! by element, other values equal), for the entries that match JSON that
//! is not a request body: GraphQL variables, WebSocket messages.

use mocklib::matchers::Matcher;

/// A JSON subset to check values against, built once at load.
pub(crate) struct Holds(Matcher);

impl Holds {
    pub(crate) fn new(expected: &serde_json::Value) -> Self {
        Holds(mocklib::matchers::json_body(expected))
    }

    /// Whether `actual` (JSON text) holds the expected value.
    pub(crate) fn text(&self, actual: impl Into<bytes::Bytes>) -> bool {
        let url = url::Url::parse("http://json.invalid/").expect("a fixed URL parses");
        let request = mocklib::Request::from_parts(
            http::Method::POST,
            url,
            http::HeaderMap::new(),
            actual.into(),
        );
        self.0.check(&request).is_ok()
    }

    /// Whether `actual` holds the expected value.
    pub(crate) fn value(&self, actual: &serde_json::Value) -> bool {
        self.text(serde_json::to_vec(actual).unwrap_or_default())
    }
}
