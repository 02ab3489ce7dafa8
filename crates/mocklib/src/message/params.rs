//! Path parameters captured by a handler's predicate.
//!
//! `:name` segments, `*` wildcards (named `"0"`, `"1"`, …) and a regex's capture
//! groups all end up here:
//!
//! ```
//! use mocklib::{http, HttpResponse};
//!
//! let handler = http::delete("/posts/:id", |args| {
//!     HttpResponse::text(format!("deleted {}", &args.params["id"]))
//! });
//! # let _ = handler;
//! ```

use smallvec::SmallVec;

/// The value of one path parameter.
///
/// `:name` and `:name?` capture one segment; `:name*` and `:name+` capture a
/// list of segments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// One segment, percent-decoded.
    One(String),
    /// Several segments (from `:name*` or `:name+`), each percent-decoded.
    Many(Vec<String>),
}

impl ParamValue {
    /// The value as text: the segment itself, or the segments joined by `/`
    /// (as they stood in the path).
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        match self {
            ParamValue::One(value) => value.into(),
            ParamValue::Many(values) => values.join("/").into(),
        }
    }

    /// The value as a list of segments (a single value is a list of one).
    pub fn segments(&self) -> &[String] {
        match self {
            ParamValue::One(value) => std::slice::from_ref(value),
            ParamValue::Many(values) => values,
        }
    }
}

/// Path parameters parsed from the request URL, keyed by name.
// Sorted by name, without repeats: a pattern has a few parameters, whose
// list (the first on the stack) costs less to make, read and drop on every
// request than a map's node does.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Params(SmallVec<[(String, ParamValue); 1]>);

impl Params {
    pub(crate) fn insert(&mut self, name: String, value: ParamValue) {
        match self.position(&name) {
            // A repeated name keeps the last value, as in MSW.
            Ok(found) => self.0[found].1 = value,
            Err(place) => self.0.insert(place, (name, value)),
        }
    }

    /// Where `name` is, else where it would go.
    fn position(&self, name: &str) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(known, _)| known.as_str().cmp(name))
    }

    fn find(&self, name: &str) -> Option<&ParamValue> {
        self.position(name).ok().map(|found| &self.0[found].1)
    }

    /// The single-segment value of `name`. `None` when the predicate has no
    /// such parameter, it matched nothing (an absent `:name?`), or it holds a
    /// list (use [`Params::value`] for `:name*` / `:name+`).
    ///
    /// ```
    /// use mocklib::{http, HttpResponse, node::setup_server, front_door::Outcome, Request};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = setup_server([http::get("/posts/:id/:slug?", |args| {
    ///     let id = args.params.get("id").unwrap_or_default();
    ///     match args.params.get("slug") {
    ///         Some(slug) => HttpResponse::text(format!("post {id}: {slug}")),
    ///         None => HttpResponse::text(format!("post {id}")),
    ///     }
    /// })]);
    /// server.listen();
    /// for (path, expected) in [("/posts/1/hello-world", "post 1: hello-world"), ("/posts/1", "post 1")] {
    ///     let url = format!("https://api.example.com{path}").parse().unwrap();
    ///     let outcome = server.handle(Request::new(::http::Method::GET, url), None).await;
    ///     let Outcome::Mocked(response) = outcome else { panic!("{path} was not mocked") };
    ///     assert_eq!(response.body(), expected);
    /// }
    /// # }
    /// ```
    pub fn get(&self, name: &str) -> Option<&str> {
        match self.find(name)? {
            ParamValue::One(value) => Some(value),
            ParamValue::Many(_) => None,
        }
    }

    /// The value of `name`, whether one segment or a list.
    pub fn value(&self, name: &str) -> Option<&ParamValue> {
        self.find(name)
    }

    /// The segments of `name`: the list of a `:name*` / `:name+` parameter,
    /// a single value as a list of one, and an empty list when it captured
    /// nothing (an absent `:name?`, a `:name*` matching no segment).
    pub fn segments(&self, name: &str) -> &[String] {
        self.find(name).map_or(&[], ParamValue::segments)
    }

    /// Parses the single-segment value of `name` into `T`, for example a
    /// numeric id. `None` when absent; `Some(Err(_))` when it does not parse.
    pub fn parse<T: std::str::FromStr>(&self, name: &str) -> Option<Result<T, T::Err>> {
        self.get(name).map(str::parse)
    }

    /// Whether a parameter called `name` captured something.
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// How many parameters captured something.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no parameter captured anything.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every `(name, value)` pair, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// As a map: `{"id": One("7")}`.
impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        struct Map<'a>(&'a Params);
        impl std::fmt::Debug for Map<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_map().entries(self.0.iter()).finish()
            }
        }
        f.debug_tuple("Params").field(&Map(self)).finish()
    }
}

/// As a JSON object, by name.
impl serde::Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl std::ops::Index<&str> for Params {
    type Output = str;

    /// The single-segment value of `name`.
    ///
    /// # Panics
    /// When there is no such single-segment parameter (see [`Params::get`]).
    fn index(&self, name: &str) -> &str {
        self.get(name).unwrap_or_else(|| {
            let known: Vec<&str> = self.iter().map(|(name, _)| name).collect();
            panic!("no single-valued path parameter {name:?} (captured: {known:?})")
        })
    }
}
