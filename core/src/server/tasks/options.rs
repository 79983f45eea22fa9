//! What a tool and a server say about tasks: [`TaskSupport`] per tool, [`TaskOptions`] per
//! server (TTL, polling interval, limits).

use crate::error::{Error, Result};
use crate::server::redis_bus::{BusOptions, redacted};
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

/// The namespace of the keys when none is named.
pub const DEFAULT_NAMESPACE: &str = "mcpaxle:tasks";
/// How long an instance is taken to be alive after it last said so, when not configured.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// Where a server keeps its tasks (task option `store`): `"memory"` (this process, bounded by
/// the task options' limits), a Redis URL, or `{"url": ..., "namespace": ..., "leaseMs": ...}`.
/// Absent: in the Redis of the server's notification bus when it has one (a fleet shares its
/// tasks as it shares its changes), else in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreOptions {
    /// In this process's memory ([`MemoryTaskStore`](super::MemoryTaskStore)).
    Memory,
    /// In Redis, shared by a fleet ([`RedisTaskStore`]).
    Redis(RedisTaskStoreOptions),
}

/// Where and how a [`RedisTaskStore`] keeps tasks.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisTaskStoreOptions {
    url: String,
    namespace: String,
    lease: Duration,
}

impl std::fmt::Debug for RedisTaskStoreOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStoreOptions")
            .field("url", &redacted(&self.url))
            .field("namespace", &self.namespace)
            .field("lease", &self.lease)
            .finish()
    }
}

impl RedisTaskStoreOptions {
    /// Tasks in the Redis at `url`, under the default namespace and lease.
    ///
    /// # Errors
    /// A usage error if `url` is not a Redis URL (the same rule as the bus's).
    pub fn new(url: impl Into<String>) -> Result<Self> {
        let url = BusOptions::redis(url)?.url().to_owned();
        Ok(RedisTaskStoreOptions { url, namespace: DEFAULT_NAMESPACE.into(), lease: DEFAULT_LEASE })
    }

    /// Tasks in the Redis of a notification bus.
    pub fn on_bus(bus: &BusOptions) -> Self {
        RedisTaskStoreOptions { url: bus.url().to_owned(), namespace: DEFAULT_NAMESPACE.into(), lease: DEFAULT_LEASE }
    }

    /// The same store under another key namespace (fleets sharing one Redis keep theirs apart).
    ///
    /// # Errors
    /// A usage error if `namespace` is empty.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Result<Self> {
        self.namespace = namespace.into();
        if self.namespace.is_empty() {
            return Err(Error::usage("the task store's namespace must not be empty"));
        }
        Ok(self)
    }

    /// The same store with another lease: how long after an instance last renewed it (every
    /// third of the lease) its unfinished tasks are reported `failed`. At least 1 ms.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// The Redis URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The key namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The lease of an instance.
    pub fn lease(&self) -> Duration {
        self.lease
    }
}

impl<'de> Deserialize<'de> for TaskStoreOptions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Object {
            url: String,
            #[serde(default)]
            namespace: Option<String>,
            #[serde(default, rename = "leaseMs", alias = "lease_ms", with = "crate::options::opt_positive_ms")]
            lease: Option<Duration>,
        }
        #[derive(Deserialize)]
        #[serde(
            untagged,
            expecting = "\"memory\", a Redis URL, or an object {\"url\": ..., \"namespace\": ..., \"leaseMs\": ...}"
        )]
        enum Either {
            Name(String),
            Object(Object),
        }
        let err = |e: Error| serde::de::Error::custom(e.message());
        match Either::deserialize(d)? {
            Either::Name(name) if name == "memory" => Ok(TaskStoreOptions::Memory),
            Either::Name(url) => RedisTaskStoreOptions::new(url).map(TaskStoreOptions::Redis).map_err(err),
            Either::Object(o) => {
                let mut options = RedisTaskStoreOptions::new(o.url).map_err(err)?;
                if let Some(ns) = o.namespace {
                    options = options.with_namespace(ns).map_err(err)?;
                }
                if let Some(lease) = o.lease {
                    options = options.with_lease(lease);
                }
                Ok(TaskStoreOptions::Redis(options))
            }
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

    #[test]
    fn options_from_a_name_a_url_or_an_object() {
        let o: TaskStoreOptions = serde_json::from_value(json!("memory")).unwrap();
        assert_eq!(o, TaskStoreOptions::Memory);
        let TaskStoreOptions::Redis(o) = serde_json::from_value(json!("redis://127.0.0.1:6379/1")).unwrap() else {
            panic!("a URL is a Redis store")
        };
        assert_eq!((o.url(), o.namespace(), o.lease()), ("redis://127.0.0.1:6379/1", DEFAULT_NAMESPACE, DEFAULT_LEASE));
        let TaskStoreOptions::Redis(o) =
            serde_json::from_value(json!({ "url": "redis://h/0", "namespace": "app", "leaseMs": 3000 })).unwrap()
        else {
            panic!("an object is a Redis store")
        };
        assert_eq!((o.namespace(), o.lease()), ("app", Duration::from_secs(3)));
        for (bad, says) in [
            (json!("mem"), "is not a Redis URL"),
            (json!({ "url": "redis://h", "namespace": "" }), "must not be empty"),
            (json!({ "url": "redis://h", "leaseMs": 0 }), "memory"),
            (json!(7), "memory"),
        ] {
            let e = serde_json::from_value::<TaskStoreOptions>(bad.clone()).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let o = RedisTaskStoreOptions::new("redis://:s3cret@h/0").unwrap();
        assert!(!format!("{o:?}").contains("s3cret"));
    }
}
