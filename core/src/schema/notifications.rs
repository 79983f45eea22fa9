//! Params of `notifications/cancelled`, `notifications/progress` and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{LoggingLevel, Meta, ProgressToken, RequestId};

/// Params of `notifications/cancelled`: the sender cancels a request it issued (a server
/// sends it only to end a `subscriptions/listen` stream on stdio).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why, for logs or the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`, with an optional reason.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        CancelledNotificationParams { meta: None, request_id, reason }
    }
}

/// Params of `notifications/progress`: progress of a long-running request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The `progressToken` of the request's `_meta`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    #[serde(serialize_with = "super::number::serialize")]
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub total: Option<f64>,
    /// A description of the current progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress for `progress_token`.
    pub fn new(progress_token: ProgressToken, progress: f64, total: Option<f64>, message: Option<String>) -> Self {
        ProgressNotificationParams { meta: None, progress_token, progress, total, message }
    }
}

/// Params of `notifications/message`: a log message (deprecated as of 2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Severity.
    pub level: LoggingLevel,
    /// The name of the logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// What is logged: any JSON value.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// A log message at `level`.
    pub fn new(level: LoggingLevel, logger: Option<String>, data: Value) -> Self {
        LoggingMessageNotificationParams { meta: None, level, logger, data }
    }
}
