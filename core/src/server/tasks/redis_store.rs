//! A [`TaskStore`] in Redis, shared by the instances of a fleet: any instance answers
//! `tasks/get` for a task another one runs, hands `tasks/update` and `tasks/cancel` to the
//! instance that runs it, and reports a task whose instance stopped as `failed`.
//!
//! Keys, under the namespace `ns` (default `mcpaxle:tasks`):
//!
//! * `ns:task:ID`, a hash: `record` (the [`TaskRecord`] as JSON), `version`, `terminal`
//!   (`1` once it ended: an ended task is never changed again), `owner` (the instance running
//!   it) and `set` (its principal's set); it expires with the task's TTL.
//! * `ns:all` and `ns:principal:P` (`ns:anonymous` for unauthenticated callers): sorted sets of
//!   task ids by expiry, for [`TaskOptions::max_tasks`] and
//!   [`TaskOptions::max_tasks_per_principal`]. When one is full, its oldest ended task is
//!   forgotten; when every one still runs, a new task is refused.
//! * `ns:instance:I`: present while instance `I` lives (renewed every third of the lease).
//!   A task whose owner's key has expired is `failed` from then on.
//! * `ns:inbox:I`: a list of the controls other instances forwarded to instance `I`, which
//!   takes them with `BLPOP` (a list, not pub/sub: what arrives while the owner is briefly cut
//!   off from Redis waits for it).
//!
//! Every change is one Lua script, so instances never interleave halfway. Redis Cluster is
//! not supported (the scripts touch keys of several slots).

use super::options::{RedisTaskStoreOptions, TaskOptions};
use super::record::{TaskRecord, TaskStatus, now_ms};
use super::store::{ControlSink, TaskControl, TaskStore};
use crate::error::{Error, Result};
use crate::server::redis_bus::redacted;
use crate::server::seal::fill_random;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long one attempt to reach Redis may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one `BLPOP` of the inbox waits before it is sent again.
const INBOX_WAIT_SECS: u64 = 5;

/// Stores a new task, making room in the full sets by forgetting their oldest ended task, and
/// says this instance is alive. KEYS: task, all, principal's set, instance. ARGV: record,
/// version, owner, expires at (ms), now (ms), max tasks, max per principal, task id, the
/// task-key prefix, lease (ms). Returns 0, or 1 (the principal's set is full of running
/// tasks), or 2 (all is).
const CREATE: &str = r"
local function make_room(set, limit)
  redis.call('ZREMRANGEBYSCORE', set, '-inf', ARGV[5])
  if redis.call('ZCARD', set) < limit then return true end
  for _, id in ipairs(redis.call('ZRANGE', set, 0, -1)) do
    local key = ARGV[9] .. id
    local v = redis.call('HMGET', key, 'terminal', 'set')
    if v[1] ~= '0' then
      redis.call('DEL', key)
      redis.call('ZREM', KEYS[2], id)
      if v[2] then redis.call('ZREM', v[2], id) end
      redis.call('ZREM', set, id)
      return true
    end
  end
  return false
end
if not make_room(KEYS[3], tonumber(ARGV[7])) then return 1 end
if not make_room(KEYS[2], tonumber(ARGV[6])) then return 2 end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'version', ARGV[2], 'terminal', '0', 'owner', ARGV[3], 'set', KEYS[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[8])
redis.call('SET', KEYS[4], '1', 'PX', ARGV[10])
return 0
";

/// Replaces a task's record with a newer version, unless the task is gone or has ended.
/// KEYS: task. ARGV: record, version, terminal (0 or 1). Returns 1 if stored.
const UPDATE: &str = r"
local v = redis.call('HMGET', KEYS[1], 'version', 'terminal')
if not v[1] or v[2] == '1' or tonumber(v[1]) > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'version', ARGV[2], 'terminal', ARGV[3])
return 1
";

/// A task's record, and whether the instance running it (if it still runs) is alive.
/// KEYS: task. ARGV: the instance-key prefix. Returns nil or {record, alive}.
const GET: &str = r"
local v = redis.call('HMGET', KEYS[1], 'record', 'terminal', 'owner')
if not v[1] then return false end
local alive = 1
if v[2] ~= '1' then alive = redis.call('EXISTS', ARGV[1] .. v[3]) end
return {v[1], alive}
";

/// Queues a control for the instance running a task that has not ended. KEYS: task.
/// ARGV: the inbox-key prefix, the message, how long an inbox outlives its last message (ms).
const FORWARD: &str = r"
local v = redis.call('HMGET', KEYS[1], 'terminal', 'owner')
if not v[1] or v[1] == '1' then return 0 end
local inbox = ARGV[1] .. v[2]
redis.call('RPUSH', inbox, ARGV[2])
redis.call('PEXPIRE', inbox, ARGV[3])
return 1
";

/// Task state in Redis, shared by the instances of a fleet (see the module's documentation
/// for its keys). Each instance has its own id; its lease and inbox start with its first task.
pub struct RedisTaskStore {
    options: RedisTaskStoreOptions,
    limits: (usize, usize),
    client: redis::Client,
    instance: String,
    /// The URL as logs and errors show it.
    shown: String,
    connection: tokio::sync::Mutex<Option<redis::aio::MultiplexedConnection>>,
    sink: Mutex<Option<ControlSink>>,
    started: std::sync::Once,
    stop: CancellationToken,
    /// This store, for the background work it starts.
    me: std::sync::Weak<RedisTaskStore>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").field("options", &self.options).field("instance", &self.instance).finish()
    }
}

impl Drop for RedisTaskStore {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl RedisTaskStore {
    /// A store with `options`, bounded by the limits of `tasks`. Nothing connects until the
    /// first task is created or read.
    pub fn new(options: RedisTaskStoreOptions, tasks: &TaskOptions) -> Arc<Self> {
        let mut id = [0u8; 8];
        fill_random(&mut id);
        Arc::new_cyclic(|me| RedisTaskStore {
            // Opening a client only reads the URL, which the options have checked.
            client: redis::Client::open(options.url()).expect("a RedisTaskStoreOptions URL is valid"),
            shown: redacted(options.url()),
            limits: (tasks.max_tasks.max(1), tasks.max_tasks_per_principal.max(1)),
            options,
            instance: id.iter().map(|b| format!("{b:02x}")).collect(),
            connection: tokio::sync::Mutex::new(None),
            sink: Mutex::new(None),
            started: std::sync::Once::new(),
            stop: CancellationToken::new(),
            me: me.clone(),
        })
    }

    /// This instance's id in the store.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.options.namespace())
    }

    fn principal_set(&self, principal: &Option<String>) -> String {
        match principal {
            Some(p) => self.key("principal", p),
            None => format!("{}:anonymous", self.options.namespace()),
        }
    }

    fn unreachable(&self, e: impl std::fmt::Display) -> Error {
        Error::internal(format!("Internal error: the task store (Redis at {}) failed: {e}", self.shown))
    }

    /// Runs one command on the shared connection, connecting first if needed; a failed
    /// connection is dropped, so that the next command connects again.
    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        let mut slot = self.connection.lock().await;
        if slot.is_none() {
            let c = tokio::time::timeout(CONNECT_TIMEOUT, self.client.get_multiplexed_async_connection())
                .await
                .map_err(|_| self.unreachable(format_args!("no answer in {CONNECT_TIMEOUT:?}")))?
                .map_err(|e| self.unreachable(e))?;
            *slot = Some(c);
        }
        let mut c = slot.clone().expect("connected above");
        drop(slot);
        match cmd.query_async(&mut c).await {
            Ok(v) => Ok(v),
            Err(e) => {
                if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() {
                    *self.connection.lock().await = None;
                }
                Err(self.unreachable(e))
            }
        }
    }

    fn script(source: &str, keys: &[&str]) -> redis::Cmd {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(source).arg(keys.len()).arg(keys);
        cmd
    }

    /// Starts renewing this instance's lease and reading its inbox (once, on the runtime).
    fn start(&self) {
        self.started.call_once(|| {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
            runtime.spawn(renew_lease(self.me.clone()));
            runtime.spawn(Inbox { store: self.me.clone() }.read());
        });
    }

    fn encode(record: &TaskRecord) -> Result<String> {
        serde_json::to_string(record).map_err(|e| Error::internal(format!("Internal error: a task record: {e}")))
    }
}

/// Says every third of the lease that this instance is alive, until the store is dropped.
async fn renew_lease(store: std::sync::Weak<RedisTaskStore>) {
    let weak = store;
    {
        loop {
            let Some(store) = weak.upgrade() else { return };
            let (every, stop) = (store.options.lease() / 3, store.stop.clone());
            let key = store.key("instance", &store.instance);
            let mut cmd = redis::cmd("SET");
            cmd.arg(&key).arg("1").arg("PX").arg(store.options.lease().as_millis().max(1) as u64);
            if let Err(e) = store.query::<()>(&cmd).await {
                tracing::warn!("task store: renewing this instance's lease: {}", e.message());
            }
            drop(store);
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every.max(Duration::from_millis(1))) => {}
            }
        }
    }
}

/// Reads the controls other instances forward to this one.
struct Inbox {
    store: std::sync::Weak<RedisTaskStore>,
}

impl Inbox {
    async fn read(self) {
        let Some(store) = self.store.upgrade() else { return };
        let (client, stop, key, shown) =
            (store.client.clone(), store.stop.clone(), store.key("inbox", &store.instance), store.shown.clone());
        drop(store);
        // BLPOP waits longer than a command's default response timeout (500 ms).
        let blocking = redis::AsyncConnectionConfig::new()
            .set_response_timeout(Some(Duration::from_secs(INBOX_WAIT_SECS) + CONNECT_TIMEOUT));
        let mut connection = None;
        loop {
            if connection.is_none() {
                let attempt = tokio::select! {
                    _ = stop.cancelled() => return,
                    c = tokio::time::timeout(CONNECT_TIMEOUT, client.get_multiplexed_async_connection_with_config(&blocking)) => c,
                };
                match attempt {
                    Ok(Ok(c)) => connection = Some(c),
                    Ok(Err(e)) => tracing::warn!("task store: reading this instance's inbox at {shown}: {e}"),
                    Err(_) => tracing::warn!("task store: Redis at {shown} did not answer in {CONNECT_TIMEOUT:?}"),
                }
                if connection.is_none() {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    }
                }
            }
            let c = connection.as_mut().expect("connected above");
            let mut blpop = redis::cmd("BLPOP");
            blpop.arg(&key).arg(INBOX_WAIT_SECS);
            let popped: redis::RedisResult<Option<(String, String)>> = tokio::select! {
                _ = stop.cancelled() => return,
                p = blpop.query_async(c) => p,
            };
            match popped {
                Ok(Some((_, message))) => self.deliver(&message),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!("task store: reading this instance's inbox at {shown}: {e}");
                    connection = None;
                }
            }
        }
    }

    fn deliver(&self, message: &str) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Forwarded {
            task_id: String,
            control: TaskControl,
        }
        let Some(store) = self.store.upgrade() else { return };
        match serde_json::from_str::<Forwarded>(message) {
            Ok(f) => {
                let sink = store.sink.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if let Some(sink) = sink {
                    sink(f.task_id, f.control);
                }
            }
            Err(e) => tracing::warn!("task store: skipped a forwarded control that is not one ({e})"),
        }
    }
}

/// The record of a task whose instance stopped before it ended: `failed`, saying so.
fn orphaned(mut record: TaskRecord) -> TaskRecord {
    let message = "Internal error: the server instance running this task stopped before the task ended";
    record.status = TaskStatus::Failed;
    record.status_message = Some(message.into());
    record.input_requests.clear();
    record.error = Some(json!({ "code": crate::jsonrpc::INTERNAL_ERROR, "message": message }));
    record.touch();
    record
}

impl RedisTaskStore {
    async fn create_task(&self, record: TaskRecord) -> Result<()> {
        self.start();
        let (task, all) = (self.key("task", &record.task_id), format!("{}:all", self.options.namespace()));
        let (set, instance) = (self.principal_set(&record.principal), self.key("instance", &self.instance));
        let mut cmd = Self::script(CREATE, &[&task, &all, &set, &instance]);
        cmd.arg(Self::encode(&record)?)
            .arg(record.version)
            .arg(&self.instance)
            .arg(record.expires_at_ms())
            .arg(now_ms())
            .arg(self.limits.0)
            .arg(self.limits.1)
            .arg(&record.task_id)
            .arg(self.key("task", ""))
            .arg(self.options.lease().as_millis().max(1) as u64);
        match self.query::<i64>(&cmd).await? {
            0 => Ok(()),
            1 => Err(Error::internal(format!(
                "Internal error: this caller already has {} tasks running, the most the server keeps for one caller \
                 (maxTasksPerPrincipal); wait for one to finish or cancel one",
                self.limits.1
            ))),
            _ => Err(Error::internal(format!(
                "Internal error: the server already has {} tasks running, the most it keeps (maxTasks); try again later",
                self.limits.0
            ))),
        }
    }

    async fn update_task(&self, record: TaskRecord) -> Result<()> {
        let key = self.key("task", &record.task_id);
        let mut cmd = Self::script(UPDATE, &[&key]);
        cmd.arg(Self::encode(&record)?).arg(record.version).arg(u8::from(record.status.is_terminal()));
        self.query::<i64>(&cmd).await.map(drop)
    }

    async fn get_task(&self, task_id: String) -> Result<Option<TaskRecord>> {
        let mut cmd = Self::script(GET, &[&self.key("task", &task_id)]);
        cmd.arg(self.key("instance", ""));
        let Some((text, alive)) = self.query::<Option<(String, i64)>>(&cmd).await? else { return Ok(None) };
        let record: TaskRecord = serde_json::from_str(&text)
            .map_err(|e| Error::internal(format!("Internal error: the task store holds a bad record ({e})")))?;
        if alive == 1 || record.status.is_terminal() {
            return Ok(Some(record));
        }
        let failed = orphaned(record);
        self.update_task(failed.clone()).await?;
        Ok(Some(failed))
    }

    async fn forward_control(&self, task_id: String, control: TaskControl) -> Result<()> {
        let message = json!({ "taskId": task_id, "control": control }).to_string();
        let mut cmd = Self::script(FORWARD, &[&self.key("task", &task_id)]);
        let keep = (self.options.lease() * 4).as_millis().max(1) as u64;
        cmd.arg(self.key("inbox", "")).arg(message).arg(keep);
        self.query::<i64>(&cmd).await.map(drop)
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.create_task(record))
    }

    fn update(&self, record: TaskRecord) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.update_task(record))
    }

    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<TaskRecord>>> {
        Box::pin(self.get_task(task_id.to_owned()))
    }

    fn forward(&self, task_id: &str, control: TaskControl) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.forward_control(task_id.to_owned(), control))
    }

    fn receive(&self, sink: ControlSink) {
        *self.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_orphaned_task_fails_saying_why() {
        let mut r = TaskRecord::new(None, Duration::from_secs(60), Duration::from_millis(10));
        r.status = TaskStatus::InputRequired;
        r.input_requests.insert("k".into(), json!({ "method": "roots/list" }));
        let f = orphaned(r.clone());
        assert_eq!((f.status, f.version), (TaskStatus::Failed, r.version + 1));
        assert!(f.input_requests.is_empty());
        assert_eq!(f.error.unwrap()["code"], -32603);
        assert!(f.status_message.unwrap().contains("stopped before the task ended"));
    }
}
