//! How `query` and `mutation` handlers pick operations by name.

use std::sync::Arc;

#[cfg(feature = "regex")]
use regex::Regex;

use super::OperationInfo;

/// How a [`query`](super::query) or [`mutation`](super::mutation) handler picks operations by name. Usually
/// built implicitly from a `&str`, a `String` or a `Regex`
/// ([`IntoGraphqlPredicate`]); build one explicitly for a closure.
#[derive(Clone)]
pub struct GraphqlPredicate {
    kind: PredicateKind,
}

#[derive(Clone)]
enum PredicateKind {
    Name(String),
    #[cfg(feature = "regex")]
    Regex(Regex),
    Custom(Arc<dyn Fn(&OperationInfo) -> bool + Send + Sync>),
}

impl GraphqlPredicate {
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
        GraphqlPredicate {
            kind: PredicateKind::Name(name.into()),
        }
    }

    /// Operations whose name the regex matches (anywhere; anchor it with
    /// `^…$` for the whole name).
    #[cfg(feature = "regex")]
    #[cfg_attr(docsrs, doc(cfg(feature = "regex")))]
    pub fn regex(regex: Regex) -> Self {
        GraphqlPredicate {
            kind: PredicateKind::Regex(regex),
        }
    }

    /// Operations the closure accepts. It sees only named operations of the
    /// handler's type (anonymous ones go to [`operation`](super::operation())).
    ///
    /// ```
    /// use mocklib::graphql::{self, GraphqlPredicate};
    ///
    /// graphql::query(
    ///     GraphqlPredicate::custom(|op| op.variables().get("id").is_some()),
    ///     |_| graphql::data(serde_json::json!({ "user": null })),
    /// );
    /// ```
    pub fn custom(matches: impl Fn(&OperationInfo) -> bool + Send + Sync + 'static) -> Self {
        GraphqlPredicate {
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

impl std::fmt::Debug for GraphqlPredicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("GraphqlPredicate")
            .field(&self.describe())
            .finish()
    }
}

/// Anything that can pick operations for [`query`](super::query) / [`mutation`](super::mutation): `&str`,
/// `String`, `Regex` (feature `regex`), [`GraphqlPredicate`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not pick GraphQL operations",
    label = "not an operation predicate",
    note = "an operation predicate is a name (`&str`, `String`), a `regex::Regex` \
            (with mocklib's `regex` feature) or a `GraphqlPredicate`: wrap a closure \
            over the operation in `GraphqlPredicate::custom(|operation| ..)`"
)]
pub trait IntoGraphqlPredicate {
    /// Converts the value.
    fn into_graphql_predicate(self) -> GraphqlPredicate;
}

impl IntoGraphqlPredicate for GraphqlPredicate {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        self
    }
}

impl IntoGraphqlPredicate for &str {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::name(self)
    }
}

impl IntoGraphqlPredicate for String {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::name(self)
    }
}

impl IntoGraphqlPredicate for &String {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::name(self.as_str())
    }
}

#[cfg(feature = "regex")]
#[cfg_attr(docsrs, doc(cfg(feature = "regex")))]
impl IntoGraphqlPredicate for Regex {
    fn into_graphql_predicate(self) -> GraphqlPredicate {
        GraphqlPredicate::regex(self)
    }
}
