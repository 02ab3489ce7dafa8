//! What a GraphQL operation is: its type and what a predicate sees of it.

use serde_json::Value;

/// The media type of GraphQL over HTTP's own responses (a client asks for
/// it in `Accept`; mocklib answers with it then).
pub(super) const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";

/// The type of a GraphQL operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationType {
    /// `query { … }` (also the shorthand `{ … }`).
    Query,
    /// `mutation { … }`.
    Mutation,
    /// `subscription { … }` (matched only by [`operation`](super::operation())).
    Subscription,
}

impl OperationType {
    /// `"query"`, `"mutation"` or `"subscription"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationType::Query => "query",
            OperationType::Mutation => "mutation",
            OperationType::Subscription => "subscription",
        }
    }
}

impl std::fmt::Display for OperationType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operation a request carries, as a [`Predicate::custom`](super::Predicate::custom)
/// closure sees it.
#[derive(Debug, Clone)]
pub struct OperationInfo {
    pub(super) operation_type: OperationType,
    pub(super) operation_name: Option<String>,
    pub(super) query: String,
    pub(super) variables: Value,
}

impl OperationInfo {
    /// Query, mutation or subscription.
    pub fn operation_type(&self) -> OperationType {
        self.operation_type
    }

    /// The operation's name; `None` for an anonymous operation.
    pub fn operation_name(&self) -> Option<&str> {
        self.operation_name.as_deref()
    }

    /// The whole document text, as sent.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The variables (an object; empty when none were sent).
    pub fn variables(&self) -> &Value {
        &self.variables
    }
}
