//! The Tasks extension (`io.modelcontextprotocol/tasks`, `spec/ext-tasks/schema.ts`): a task's
//! [`TaskStatus`] and the [`DetailedTask`] that `tasks/get` answers with.

use serde::{Deserialize, Serialize};

use super::common::{JsonObject, Meta, ResultType};
use super::mrtr::InputRequests;
use crate::jsonrpc::ErrorObject;

/// A task's status (`TaskStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The task waits for the client's answers to its `inputRequests`.
    InputRequired,
    /// The request completed; the result (even an `isError` one) is inlined.
    Completed,
    /// The request ended with a JSON-RPC error, inlined.
    Failed,
    /// The request was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// A task with what its status carries (`DetailedTask`, flat): the result of `tasks/get`
/// (`GetTaskResult`) and the params of `notifications/tasks`. The status-specific members
/// are `Option`s: `input_requests` while `input_required`, `result` once `completed`, `error`
/// once `failed`.
///
/// ```
/// use mcpaxle::schema::{DetailedTask, TaskStatus};
/// let task: DetailedTask = serde_json::from_value(serde_json::json!({
///     "taskId": "t1", "status": "completed", "createdAt": "2026-07-28T10:00:00Z",
///     "lastUpdatedAt": "2026-07-28T10:01:00Z", "ttlMs": null,
///     "result": { "content": [{ "type": "text", "text": "done" }] }
/// })).unwrap();
/// assert_eq!(task.status, TaskStatus::Completed);
/// assert!(task.status.is_terminal());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result (`complete` for `tasks/get`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The task's id, as the server created it.
    pub task_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// A message about the current status, for the user or model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (ISO 8601).
    pub created_at: String,
    /// When the task last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long the server keeps the task from its creation, in milliseconds; `None`
    /// (`null`) for no limit.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// The polling interval the server suggests, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// The outstanding input requests (`input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The result of the original request (`completed`): for `tools/call`, a
    /// `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error the request ended with (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}
