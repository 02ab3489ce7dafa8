//! How `query` and `mutation` handlers pick operations by name.

use std::sync::Arc;

#[cfg(feature = "regex")]
use regex::Regex;

use super::OperationInfo;

/// How a [`query`](super::query) or [`mutation`](super::mutation) handler picks operations by name. Usually
/// built implicitly from a `&str`, a `String` or a `Regex`
/// ([`IntoPredicate`]); build one explicitly for a closure.
#[derive(Clone)]
pub struct Predicate {
    kind: PredicateKind,
}

#[derive(Clone)]
enum PredicateKind {
    Name(String),
    #[cfg(feature = "regex")]
    Regex(Regex),
    Custom(Arc<dyn Fn(&OperationInfo) -> bool + Send + Sync>),
}

impl Predicate {
    /// The name of an exact-name predicate (what the handler index keys on).
    pub(super) fn exact_name(&self) -> Option<&str> {
        match &self.kind {
            PredicateKind::Name(name) => Some(name),
            #[cfg(feature = "regex")]
            PredicateKind::Regex(_) => None,
            PredicateKind::Custom(_) => None,
        }
    }

    /// Operations with exactly this name (case-sensitive, as GraphQL names are).
    pub fn name(name: impl Into<String>) -> Self {
        Predicate {
            kind: PredicateKind::Name(name.into()),
        }
    }

    /// Operations whose name the regex matches (anywhere; anchor it with
    /// `^…$` for the whole name).
    #[cfg(feature = "regex")]
    pub fn regex(regex: Regex) -> Self {
        Predicate {
            kind: PredicateKind::Regex(regex),
        }
    }

    /// Operations the closure accepts. It sees only named operations of the
    /// handler's type (anonymous ones go to [`operation`](super::operation())).
    ///
    /// ```
    /// use mocklib::graphql::{self, Predicate};
    ///
    /// graphql::query(
    ///     Predicate::custom(|op| op.variables().get("id").is_some()),
    ///     |_| graphql::data(serde_json::json!({ "user": null })),
    /// );
    /// ```
    pub fn custom(matches: impl Fn(&OperationInfo) -> bool + Send + Sync + 'static) -> Self {
        Predicate {
            kind: PredicateKind::Custom(Arc::new(matches)),
        }
    }

    /// The predicate as text, for handler headers.
    pub fn describe(&self) -> String {
        match &self.kind {
            PredicateKind::Name(name) => name.clone(),
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => format!("/{}/", regex.as_str()),
            PredicateKind::Custom(_) => "<custom predicate>".to_owned(),
        }
    }

    pub(super) fn matches(&self, name: &str, operation: &OperationInfo) -> bool {
        match &self.kind {
            PredicateKind::Name(expected) => expected == name,
            #[cfg(feature = "regex")]
            PredicateKind::Regex(regex) => regex.is_match(name),
            PredicateKind::Custom(matches) => matches(operation),
        }
    }
}

impl std::fmt::Debug for Predicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Predicate").field(&self.describe()).finish()
    }
}

/// Anything that can pick operations for [`query`](super::query) / [`mutation`](super::mutation): `&str`,
/// `String`, `Regex` (feature `regex`), [`Predicate`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not pick GraphQL operations",
    label = "not an operation predicate",
    note = "an operation predicate is a name (`&str`, `String`), a `regex::Regex` \
            (with mocklib's `regex` feature) or a `Predicate`: wrap a closure \
            over the operation in `Predicate::custom(|operation| ..)`"
)]
pub trait IntoPredicate {
    /// Converts the value.
    fn into_graphql_predicate(self) -> Predicate;
}

impl IntoPredicate for Predicate {
    fn into_graphql_predicate(self) -> Predicate {
        self
    }
}

impl IntoPredicate for &str {
    fn into_graphql_predicate(self) -> Predicate {
        Predicate::name(self)
    }
}

impl IntoPredicate for String {
    fn into_graphql_predicate(self) -> Predicate {
        Predicate::name(self)
    }
}

impl IntoPredicate for &String {
    fn into_graphql_predicate(self) -> Predicate {
        Predicate::name(self.as_str())
    }
}

#[cfg(feature = "regex")]
impl IntoPredicate for Regex {
    fn into_graphql_predicate(self) -> Predicate {
        Predicate::regex(self)
    }
}
