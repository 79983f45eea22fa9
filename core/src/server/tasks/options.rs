//! What a tool and a server say about tasks: [`TaskSupport`] per tool, [`TaskOptions`] per
//! server (TTL, polling interval, limits).

use super::redis_store::TaskStoreOptions;
use serde::Deserialize;
use std::time::Duration;

/// Whether a tool's calls may run as tasks (JSON `taskSupport`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskSupport {
    /// Never: every call is answered with its result (the default).
    #[default]
    Forbidden,
    /// A call from a client that declares the extension runs as a task; from any other
    /// client, as an ordinary call.
    Optional,
    /// Only as a task: a client that does not declare the extension gets -32021 (Missing
    /// Required Client Capability) naming it.
    Required,
}

impl TaskSupport {
    /// Whether a call may run as a task at all.
    pub fn allows_tasks(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// How a server keeps its tasks (server option `tasks`): as data
/// `{"ttlMs": 3600000, "pollIntervalMs": 1000, "maxTasks": 10000, "maxTasksPerPrincipal": 1000,
/// "store": "memory"}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskOptions {
    /// How long a task is kept from its creation (its `ttlMs`, default 1 hour): then it is
    /// forgotten (`tasks/get` answers "not found") and, if still running, cancelled. At least
    /// 1 ms.
    #[serde(rename = "ttlMs", with = "crate::options::positive_ms")]
    #[serde(alias = "ttl_ms")]
    pub ttl: Duration,
    /// The `pollIntervalMs` suggested to clients (default 1000 ms). At least 1 ms.
    #[serde(rename = "pollIntervalMs", with = "crate::options::positive_ms")]
    #[serde(alias = "poll_interval_ms")]
    pub poll_interval: Duration,
    /// The most tasks the store keeps (default 10,000): when full, the oldest finished task is
    /// forgotten; when every one is still running, a new task is refused.
    #[serde(alias = "max_tasks")]
    pub max_tasks: usize,
    /// The most tasks one principal (or all unauthenticated callers together) may hold
    /// (default 1,000), so that one caller cannot fill the store for the others.
    #[serde(alias = "max_tasks_per_principal")]
    pub max_tasks_per_principal: usize,
    /// Where tasks are kept (see [`TaskStoreOptions`]): `"memory"`, a Redis URL, or
    /// `{"url": ..., "namespace": ..., "leaseMs": ...}`. Default: in the Redis of the server's
    /// notification bus when it has one (so that every instance of a fleet answers for every
    /// task), else in memory.
    pub store: Option<TaskStoreOptions>,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
            max_tasks: 10_000,
            max_tasks_per_principal: 1_000,
            store: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::from_json;
    use serde_json::json;

    #[test]
    fn options_read_with_their_defaults_and_limits() {
        let o: TaskOptions = from_json("task options", json!({})).unwrap();
        assert_eq!(o, TaskOptions::default());
        let o: TaskOptions =
            from_json("task options", json!({ "ttlMs": 5, "poll_interval_ms": 7, "maxTasks": 2 })).unwrap();
        assert_eq!((o.ttl, o.poll_interval, o.max_tasks), (Duration::from_millis(5), Duration::from_millis(7), 2));
        let e = from_json::<TaskOptions>("task options", json!({ "ttlMs": 0 })).unwrap_err();
        assert!(e.message().contains("at least 1 millisecond"), "{e}");
        let t: TaskSupport = serde_json::from_value(json!("required")).unwrap();
        assert_eq!(t, TaskSupport::Required);
        assert!(!TaskSupport::default().allows_tasks());
    }
}
