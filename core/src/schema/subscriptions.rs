//! `subscriptions/listen`: a long-lived stream of list-changed and resource-updated
//! notifications, opened by the client and acknowledged by the server.

use serde::{Deserialize, Serialize};

use super::common::{Meta, RequestId, ResultType, subscription_meta};

/// The notification types a client opts in to on `subscriptions/listen` (each is opt-in).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// Receive `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// Receive `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// Receive `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// Receive `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Receive `notifications/tasks` for these tasks (the Tasks extension: the request's
    /// client capabilities must declare it). The acknowledgement names those the server agreed
    /// to follow: the caller's own, known tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Params of a `subscriptions/listen` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata; see [`RequestMetaObject`](super::RequestMetaObject).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The notifications the client opts in to.
    pub notifications: SubscriptionFilter,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// Params of `notifications/subscriptions/acknowledged`, the first message of a
/// subscription: the subset of the requested notifications the server will send.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Notification metadata, holding the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The notification types the server agreed to send.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsAcknowledgedNotificationParams {
    /// Acknowledges the subscription opened by request `subscription_id`.
    pub fn new(subscription_id: &RequestId, notifications: SubscriptionFilter) -> Self {
        SubscriptionsAcknowledgedNotificationParams { meta: Some(subscription_meta(subscription_id)), notifications }
    }
}

/// Params of `notifications/resources/updated`: a subscribed resource changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// Notification metadata (the subscription id, on a listen stream).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The URI of the updated resource (possibly a sub-resource of the subscribed one).
    pub uri: String,
}

impl ResourceUpdatedNotificationParams {
    /// An update of `uri`, delivered on the subscription opened by `subscription_id`.
    pub fn new(uri: impl Into<String>, subscription_id: Option<&RequestId>) -> Self {
        ResourceUpdatedNotificationParams { meta: subscription_id.map(subscription_meta), uri: uri.into() }
    }
}

/// The result of `subscriptions/listen`, sent only when the server ends the subscription
/// gracefully. Its `_meta` must carry the subscription id.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Result metadata, holding the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result; servers of this revision always send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl SubscriptionsListenResult {
    /// The graceful end of the subscription opened by request `subscription_id`.
    pub fn closed(subscription_id: &RequestId) -> Self {
        SubscriptionsListenResult {
            meta: Some(subscription_meta(subscription_id)),
            result_type: Some(ResultType::Complete),
            extra: Meta::new(),
        }
    }
}
