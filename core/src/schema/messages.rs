//! Typed `{method, params}` of the messages of this revision: the requests a client sends
//! ([`ClientRequest`]), the notifications a client sends ([`ClientNotification`]) and the
//! notifications a server sends ([`ServerNotification`]). They pair with the envelopes of
//! [`crate::jsonrpc`].

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::common::{NotificationParams, PaginatedRequestParams, RequestId, RequestParams};
use super::completion::CompleteRequestParams;
use super::notifications::{CancelledNotificationParams, LoggingMessageNotificationParams, ProgressNotificationParams};
use super::prompts::GetPromptRequestParams;
use super::resources::ReadResourceRequestParams;
use super::subscriptions::{
    ResourceUpdatedNotificationParams, SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
};
use super::tools::CallToolRequestParams;
use crate::jsonrpc::{self, JsonRpcVersion};

/// Why a `{method, params}` pair could not be read as a typed message.
#[derive(Debug)]
pub enum MethodParseError {
    /// The method is not one this type covers (JSON-RPC -32601).
    UnknownMethod(String),
    /// The params do not fit the method (JSON-RPC -32602).
    InvalidParams {
        /// The method.
        method: String,
        /// What is wrong with the params.
        error: serde_json::Error,
    },
}

impl MethodParseError {
    /// The JSON-RPC error code this failure earns.
    pub fn code(&self) -> i32 {
        match self {
            MethodParseError::UnknownMethod(_) => jsonrpc::METHOD_NOT_FOUND,
            MethodParseError::InvalidParams { .. } => jsonrpc::INVALID_PARAMS,
        }
    }
}

impl fmt::Display for MethodParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MethodParseError::UnknownMethod(m) => write!(f, "Method not found: {m}"),
            MethodParseError::InvalidParams { method, error } => write!(f, "Invalid params for {method}: {error}"),
        }
    }
}

impl std::error::Error for MethodParseError {}

/// Reads params; absent params read as `null` (for optional params) or else as `{}`.
pub(crate) fn parse_params<T: DeserializeOwned>(params: Option<Value>) -> Result<T, serde_json::Error> {
    match params {
        Some(v) => serde_json::from_value(v),
        None => {
            serde_json::from_value(Value::Null).or_else(|_| serde_json::from_value(Value::Object(Default::default())))
        }
    }
}

/// The `{method, params}` members of a message, as read before dispatching on the method.
#[derive(serde::Deserialize)]
pub(crate) struct RawMethodCall {
    pub(crate) method: String,
    #[serde(default)]
    pub(crate) params: Option<Value>,
}

/// Params as JSON; `None` when they serialize to `null` (absent optional params).
pub(crate) fn params_to_value<T: Serialize>(params: &T) -> Option<Value> {
    // These types have string keys only, so serializing them cannot fail.
    match serde_json::to_value(params) {
        Ok(Value::Null) | Err(_) => None,
        Ok(v) => Some(v),
    }
}

method_enum! {
    /// A request from the client to the server (`ClientRequest`).
    ///
    /// ```
    /// use mcpaxle::schema::ClientRequest;
    /// use serde_json::json;
    /// let r = ClientRequest::from_parts("tools/call", Some(json!({"name": "add"}))).unwrap();
    /// assert!(matches!(r, ClientRequest::CallTool(ref p) if p.name == "add"));
    /// assert!(ClientRequest::from_parts("nope", None).is_err());
    /// ```
    pub enum ClientRequest {
        /// `server/discover`.
        Discover(RequestParams) = "server/discover",
        /// `completion/complete`.
        Complete(CompleteRequestParams) = "completion/complete",
        /// `prompts/get`.
        GetPrompt(GetPromptRequestParams) = "prompts/get",
        /// `prompts/list`.
        ListPrompts(PaginatedRequestParams) = "prompts/list",
        /// `resources/list`.
        ListResources(PaginatedRequestParams) = "resources/list",
        /// `resources/templates/list`.
        ListResourceTemplates(PaginatedRequestParams) = "resources/templates/list",
        /// `resources/read`.
        ReadResource(ReadResourceRequestParams) = "resources/read",
        /// `subscriptions/listen`.
        SubscriptionsListen(SubscriptionsListenRequestParams) = "subscriptions/listen",
        /// `tools/call`.
        CallTool(CallToolRequestParams) = "tools/call",
        /// `tools/list`.
        ListTools(PaginatedRequestParams) = "tools/list",
    }
}

impl ClientRequest {
    /// Reads a JSON-RPC request.
    pub fn from_request(request: &jsonrpc::Request) -> Result<Self, MethodParseError> {
        Self::from_parts(&request.method, request.params.clone())
    }

    /// The JSON-RPC request carrying this one under `id`.
    pub fn to_request(&self, id: RequestId) -> jsonrpc::Request {
        let (method, params) = self.to_parts();
        jsonrpc::Request { jsonrpc: JsonRpcVersion, id, method: method.to_owned(), params }
    }
}

method_enum! {
    /// A notification from the client to the server (`ClientNotification`).
    pub enum ClientNotification {
        /// `notifications/cancelled`.
        Cancelled(CancelledNotificationParams) = "notifications/cancelled",
    }
}

method_enum! {
    /// A notification from the server to the client (`ServerNotification`).
    pub enum ServerNotification {
        /// `notifications/cancelled` (only to end a `subscriptions/listen` stream on stdio).
        Cancelled(CancelledNotificationParams) = "notifications/cancelled",
        /// `notifications/progress`.
        Progress(ProgressNotificationParams) = "notifications/progress",
        /// `notifications/message` (deprecated).
        LoggingMessage(LoggingMessageNotificationParams) = "notifications/message",
        /// `notifications/resources/updated`.
        ResourceUpdated(ResourceUpdatedNotificationParams) = "notifications/resources/updated",
        /// `notifications/resources/list_changed`.
        ResourceListChanged(Option<NotificationParams>) = "notifications/resources/list_changed",
        /// `notifications/tools/list_changed`.
        ToolListChanged(Option<NotificationParams>) = "notifications/tools/list_changed",
        /// `notifications/prompts/list_changed`.
        PromptListChanged(Option<NotificationParams>) = "notifications/prompts/list_changed",
        /// `notifications/subscriptions/acknowledged`.
        SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams) = "notifications/subscriptions/acknowledged",
    }
}

macro_rules! notification_conversions {
    ($($t:ty),*) => {$(
        impl $t {
            /// Reads a JSON-RPC notification.
            pub fn from_notification(n: &jsonrpc::Notification) -> Result<Self, MethodParseError> {
                Self::from_parts(&n.method, n.params.clone())
            }

            /// The JSON-RPC notification carrying this one.
            pub fn to_notification(&self) -> jsonrpc::Notification {
                let (method, params) = self.to_parts();
                jsonrpc::Notification::new(method, params)
            }
        }
    )*};
}

notification_conversions!(ClientNotification, ServerNotification);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_optional_params_stay_absent() {
        let n = ServerNotification::from_parts("notifications/tools/list_changed", None).unwrap();
        assert_eq!(n, ServerNotification::ToolListChanged(None));
        assert_eq!(serde_json::to_value(&n).unwrap(), json!({"method": "notifications/tools/list_changed"}));
        assert_eq!(n.to_notification().params, None);
    }

    #[test]
    fn absent_params_read_as_an_empty_object() {
        let r = ClientRequest::from_parts("tools/list", None).unwrap();
        assert_eq!(r, ClientRequest::ListTools(PaginatedRequestParams::default()));
        let e = ClientRequest::from_parts("tools/call", None).unwrap_err();
        assert_eq!(e.code(), jsonrpc::INVALID_PARAMS);
        assert!(e.to_string().contains("name"), "{e}");
    }

    #[test]
    fn unknown_methods_are_method_not_found() {
        let e = ServerNotification::from_parts("notifications/nope", None).unwrap_err();
        assert_eq!(e.code(), jsonrpc::METHOD_NOT_FOUND);
        assert!(serde_json::from_value::<ClientRequest>(json!({"method": "ping"})).is_err());
    }
}
