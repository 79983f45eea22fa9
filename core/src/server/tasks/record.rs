//! One task's state as the store keeps it ([`TaskRecord`]), and its wire shapes: the
//! `CreateTaskResult` answering the `tools/call`, the `DetailedTask` of `tasks/get`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use crate::schema::TaskStatus;

/// What a [`TaskStore`](super::TaskStore) keeps of one task. Serializable, so that a shared
/// store can hold it for every instance of a fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The unguessable id (128 random bits, base64url).
    pub task_id: String,
    /// The principal that created the task: only it may read, update or cancel it.
    pub principal: Option<String>,
    /// The current status.
    pub status: TaskStatus,
    /// A message about the current status, for the user or model.
    pub status_message: Option<String>,
    /// When the task was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// How long it is kept from its creation.
    pub ttl_ms: u64,
    /// The polling interval suggested to the client.
    pub poll_interval_ms: u64,
    /// Outstanding input requests (`input_required`): key to `{method, params}`.
    pub input_requests: Map<String, Value>,
    /// The result, once `completed`.
    pub result: Option<Value>,
    /// The JSON-RPC error object, once `failed`.
    pub error: Option<Value>,
    /// Increases with every change: a store keeps the newest version it was given.
    pub version: u64,
    /// The `traceparent` of the span of the `tools/call` that created the task (telemetry
    /// on): the spans of `tasks/get`, `tasks/update` and `tasks/cancel` link to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl TaskRecord {
    /// A new `working` task for `principal`, with a fresh random id.
    pub fn new(principal: Option<String>, ttl: Duration, poll_interval: Duration) -> Self {
        let now = now_ms();
        TaskRecord {
            task_id: new_task_id(),
            principal,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms: millis(ttl),
            poll_interval_ms: millis(poll_interval).max(1),
            input_requests: Map::new(),
            result: None,
            error: None,
            version: 0,
            trace: None,
        }
    }

    /// Marks a change: a newer version, now as `lastUpdatedAt`.
    pub fn touch(&mut self) {
        self.version += 1;
        self.last_updated_at_ms = now_ms().max(self.last_updated_at_ms);
    }

    /// When the task may be forgotten, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.created_at_ms.saturating_add(self.ttl_ms)
    }

    /// The `Task` fields common to every shape.
    fn task(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("taskId".into(), json!(self.task_id));
        m.insert("status".into(), serde_json::to_value(self.status).unwrap_or(Value::Null));
        if let Some(s) = &self.status_message {
            m.insert("statusMessage".into(), json!(s));
        }
        m.insert("createdAt".into(), json!(iso8601(self.created_at_ms)));
        m.insert("lastUpdatedAt".into(), json!(iso8601(self.last_updated_at_ms)));
        m.insert("ttlMs".into(), json!(self.ttl_ms));
        m.insert("pollIntervalMs".into(), json!(self.poll_interval_ms));
        m
    }

    /// The `CreateTaskResult` fields (the caller adds `_meta`): the task, `resultType: "task"`.
    pub fn create_task_result(&self) -> Map<String, Value> {
        let mut m = self.task();
        m.insert("resultType".into(), json!("task"));
        m
    }

    /// The `DetailedTask` of `tasks/get` and `notifications/tasks`: the task with what its
    /// status carries (`inputRequests`, `result` or `error`).
    pub fn detailed(&self) -> Map<String, Value> {
        let mut m = self.task();
        match self.status {
            TaskStatus::InputRequired => {
                m.insert("inputRequests".into(), Value::Object(self.input_requests.clone()));
            }
            TaskStatus::Completed => {
                m.insert("result".into(), self.result.clone().unwrap_or_else(|| json!({})));
            }
            TaskStatus::Failed => {
                let error =
                    self.error.clone().unwrap_or_else(|| json!({ "code": -32603, "message": "Internal error" }));
                m.insert("error".into(), error);
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        m
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, millis)
}

/// 128 bits from the operating system's random source, base64url without padding: a task id
/// no other caller can guess or enumerate.
fn new_task_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    crate::server::seal::fill_random(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Milliseconds since the Unix epoch as an ISO 8601 UTC timestamp, `2026-07-28T10:30:00.123Z`.
pub(crate) fn iso8601(ms: u64) -> String {
    let (secs, milli) = (ms / 1000, ms % 1000);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{milli:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_785_235_800_123), "2026-07-28T10:50:00.123Z");
    }

    #[test]
    fn ids_are_random_and_shapes_carry_what_their_status_does() {
        let mut r = TaskRecord::new(None, Duration::from_secs(60), Duration::from_millis(500));
        assert_eq!(r.task_id.len(), 22);
        assert_ne!(r.task_id, TaskRecord::new(None, Duration::ZERO, Duration::ZERO).task_id);
        let created = r.create_task_result();
        assert_eq!((created["resultType"].clone(), created["ttlMs"].clone()), (json!("task"), json!(60000)));
        assert!(!created.contains_key("inputRequests") && !created.contains_key("result"));
        r.status = TaskStatus::InputRequired;
        r.input_requests.insert("k".into(), json!({ "method": "roots/list", "params": {} }));
        assert_eq!(r.detailed()["inputRequests"]["k"]["method"], "roots/list");
        r.status = TaskStatus::Cancelled;
        assert!(!r.detailed().contains_key("inputRequests"));
        assert!(TaskStatus::Cancelled.is_terminal() && !TaskStatus::InputRequired.is_terminal());
    }
}
