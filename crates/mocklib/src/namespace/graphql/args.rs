//! What a GraphQL resolver receives.

use serde_json::Value;

use crate::handling::resolver::{CallContext, RequestId};
use crate::message::cookies::Cookies;
use crate::message::request::Request;

use super::{OperationInfo, OperationType};

/// The one argument every GraphQL resolver receives. Fields are public so it
/// can be destructured: `|ResolverArgs { variables, cookies, .. }|`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResolverArgs {
    /// The whole GraphQL document, as sent.
    pub query: String,
    /// The operation's variables: always a JSON object (empty when none were
    /// sent). Uploaded files appear as [`Upload`] descriptions. Read
    /// them into a typed struct with [`variables()`](Self::variables).
    pub variables: Value,
    /// The name of the operation being resolved; `None` when anonymous.
    #[doc(alias = "operationName")]
    pub operation_name: Option<String>,
    /// Query, mutation or subscription.
    pub operation_type: OperationType,
    /// The request's cookies.
    pub cookies: Cookies,
    /// The intercepted HTTP request (its body can be read any number of times).
    pub request: Request,
    /// An id unique to this request, the same one life-cycle events carry.
    /// The operations of a batch share their request's id.
    pub request_id: RequestId,
    call: CallContext,
}

impl crate::handling::resolver::CallHistory for ResolverArgs {
    fn previous_calls(&self) -> usize {
        self.call.previous_calls
    }
}

impl ResolverArgs {
    pub(super) fn from_parts(
        operation: &OperationInfo,
        request: Request,
        cookies: Cookies,
        request_id: RequestId,
        call: CallContext,
    ) -> Self {
        ResolverArgs {
            call,
            query: operation.query.clone(),
            variables: operation.variables.clone(),
            operation_name: operation.operation_name.clone(),
            operation_type: operation.operation_type,
            cookies,
            request,
            request_id,
        }
    }

    /// Registers `cleanup` to run once this answer is over (after the
    /// response is sent, or when the resolver returns anything else); see
    /// [`ResolverArgs::finalize`](crate::ResolverArgs::finalize).
    pub fn finalize(&self, cleanup: impl FnOnce() + Send + 'static) {
        self.call.finalizers.push(Box::new(cleanup));
    }

    /// How many times this handler's resolver ran before this call, in the
    /// current scope; see [`sequence`](crate::sequence).
    pub fn previous_calls(&self) -> usize {
        self.call.previous_calls
    }

    /// The variables read into `T` with serde.
    ///
    /// ```
    /// use mocklib::graphql;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct GetUser { id: String }
    ///
    /// graphql::query("GetUser", |args| {
    ///     let vars: GetUser = args.variables()?;
    ///     Ok::<_, graphql::VariablesError>(graphql::data(serde_json::json!({ "user": { "id": vars.id } })))
    /// });
    /// ```
    pub fn variables<T: serde::de::DeserializeOwned>(&self) -> Result<T, VariablesError> {
        T::deserialize(&self.variables).map_err(VariablesError)
    }
}

/// The variables are not of the shape a resolver asked for. Returned from a
/// resolver with `?`, the request gets a 500 naming the serde error.
#[derive(Debug, thiserror::Error)]
#[error("the GraphQL variables are not of the expected shape: {0}")]
pub struct VariablesError(#[source] pub serde_json::Error);

/// What an uploaded file becomes in the variables of a multipart request (see
/// [File uploads](super#file-uploads)); use it as a field type in typed
/// variables.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct UploadVars { file: mocklib::graphql::Upload }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Upload {
    /// The file name the client gave (`""` if none).
    pub name: String,
    /// The part's content type (`""` if none).
    #[serde(rename = "type")]
    pub content_type: String,
    /// The size in bytes.
    pub size: u64,
    /// The content as text, when it is valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
