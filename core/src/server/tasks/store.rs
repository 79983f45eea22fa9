//! Where task state lives: the [`TaskStore`] trait and its bounded in-memory default.

use super::options::TaskOptions;
use super::record::{TaskRecord, now_ms};
use crate::error::{Error, Result};
use futures_util::future::{BoxFuture, ready};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What `tasks/update` or `tasks/cancel` asks of a task that runs on another instance of a
/// fleet: a shared store hands it to that instance ([`TaskStore::forward`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum TaskControl {
    /// The answers of a `tasks/update` (its `inputResponses`).
    #[serde(rename_all = "camelCase")]
    Update {
        /// Input request key to its result.
        input_responses: Map<String, Value>,
    },
    /// A `tasks/cancel`.
    Cancel,
}

/// Where a store hands the controls other instances forward to tasks running in this
/// process: the task's id and the control (see [`TaskStore::receive`]).
pub type ControlSink = Arc<dyn Fn(String, TaskControl) + Send + Sync>;

/// Keeps task records (see [`TaskRecord`]). A store shared by the instances of a fleet lets
/// any of them answer `tasks/get` for a task another one runs. Every method may be called
/// concurrently.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. Fails (with a message naming the limit) when the store cannot take
    /// it; the call is then answered with that error instead of a task.
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<()>>;

    /// Replaces a task's record with a newer version; an older version than the one stored,
    /// or a task no longer stored (expired), is ignored.
    fn update(&self, record: TaskRecord) -> BoxFuture<'_, Result<()>>;

    /// The task's record, if it is stored and has not expired. A shared store reports a task
    /// whose instance stopped (without ending it) as `failed`, never `working` forever.
    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<TaskRecord>>>;

    /// Hands `control` to the instance running the task, when that is another process (a
    /// store shared by a fleet). Called for a stored task that does not run in this process.
    /// Default: nothing (a store of one process holds only its own tasks: one not running
    /// here has ended).
    fn forward(&self, task_id: &str, control: TaskControl) -> BoxFuture<'_, Result<()>> {
        let _ = (task_id, control);
        Box::pin(ready(Ok(())))
    }

    /// Tells the store where to deliver what other instances [`forward`](TaskStore::forward)
    /// to tasks of this process; the server calls it once, when it is built. Default: nothing.
    fn receive(&self, sink: ControlSink) {
        let _ = sink;
    }
}

/// The default store: in this process's memory, bounded by [`TaskOptions::max_tasks`] and
/// [`TaskOptions::max_tasks_per_principal`], each task forgotten once its TTL has passed.
pub struct MemoryTaskStore {
    max_tasks: usize,
    max_per_principal: usize,
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// A store with the limits of `options`.
    pub fn new(options: &TaskOptions) -> Self {
        MemoryTaskStore {
            max_tasks: options.max_tasks.max(1),
            max_per_principal: options.max_tasks_per_principal.max(1),
            tasks: Mutex::new(HashMap::new()),
        }
    }

    /// How many tasks are stored (expired ones included until the next write purges them).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn insert(&self, record: TaskRecord) -> Result<()> {
        let mut tasks = self.lock();
        let now = now_ms();
        tasks.retain(|_, r| r.expires_at_ms() > now);
        // Makes room among `who`'s tasks (None: all) by forgetting the oldest finished one.
        let make_room = |tasks: &mut HashMap<String, TaskRecord>, who: Option<&Option<String>>, limit: usize| {
            let mine = |r: &TaskRecord| who.is_none_or(|p| &r.principal == p);
            if tasks.values().filter(|r| mine(r)).count() < limit {
                return true;
            }
            let oldest = tasks
                .values()
                .filter(|r| mine(r) && r.status.is_terminal())
                .min_by_key(|r| r.last_updated_at_ms)
                .map(|r| r.task_id.clone());
            oldest.is_some_and(|id| tasks.remove(&id).is_some())
        };
        if !make_room(&mut tasks, Some(&record.principal), self.max_per_principal) {
            return Err(Error::internal(format!(
                "Internal error: this caller already has {} tasks running, the most the server keeps for one caller \
                 (maxTasksPerPrincipal); wait for one to finish or cancel one",
                self.max_per_principal
            )));
        }
        if !make_room(&mut tasks, None, self.max_tasks) {
            return Err(Error::internal(format!(
                "Internal error: the server already has {} tasks running, the most it keeps (maxTasks); try again later",
                self.max_tasks
            )));
        }
        tasks.insert(record.task_id.clone(), record);
        Ok(())
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<()>> {
        Box::pin(ready(self.insert(record)))
    }

    fn update(&self, record: TaskRecord) -> BoxFuture<'_, Result<()>> {
        let mut tasks = self.lock();
        if let Some(stored) = tasks.get_mut(&record.task_id) {
            if stored.version <= record.version {
                *stored = record;
            }
        }
        Box::pin(ready(Ok(())))
    }

    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<TaskRecord>>> {
        let mut tasks = self.lock();
        let found = match tasks.get(task_id) {
            Some(r) if r.expires_at_ms() <= now_ms() => {
                tasks.remove(task_id);
                None
            }
            found => found.cloned(),
        };
        Box::pin(ready(Ok(found)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::tasks::TaskStatus;
    use futures_util::FutureExt;
    use std::time::Duration;

    fn record(principal: Option<&str>, ttl_ms: u64) -> TaskRecord {
        TaskRecord::new(principal.map(str::to_owned), Duration::from_millis(ttl_ms), Duration::from_millis(10))
    }

    fn now<T>(f: BoxFuture<'_, T>) -> T {
        f.now_or_never().expect("the memory store answers at once")
    }

    #[test]
    fn a_full_store_forgets_its_oldest_finished_task_and_refuses_when_all_run() {
        let store = MemoryTaskStore::new(&TaskOptions { max_tasks: 2, ..TaskOptions::default() });
        let mut done = record(None, 60_000);
        done.status = TaskStatus::Completed;
        let (done_id, running) = (done.task_id.clone(), record(Some("a"), 60_000));
        now(store.create(done)).unwrap();
        now(store.create(running.clone())).unwrap();
        now(store.create(record(Some("b"), 60_000))).unwrap();
        assert!(now(store.get(&done_id)).unwrap().is_none(), "the finished task made room");
        let e = now(store.create(record(Some("c"), 60_000))).unwrap_err();
        assert!(e.message().contains("2 tasks running") && e.message().contains("maxTasks"), "{e}");
        assert_eq!(now(store.get(&running.task_id)).unwrap().unwrap().principal.as_deref(), Some("a"));
    }

    #[test]
    fn one_principal_cannot_take_every_place() {
        let store = MemoryTaskStore::new(&TaskOptions { max_tasks_per_principal: 1, ..TaskOptions::default() });
        now(store.create(record(Some("a"), 60_000))).unwrap();
        let e = now(store.create(record(Some("a"), 60_000))).unwrap_err();
        assert!(e.message().contains("maxTasksPerPrincipal"), "{e}");
        now(store.create(record(Some("b"), 60_000))).unwrap();
    }

    #[test]
    fn expired_tasks_are_gone_and_older_versions_do_not_overwrite() {
        let store = MemoryTaskStore::new(&TaskOptions::default());
        let short = record(None, 1);
        now(store.create(short.clone())).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(now(store.get(&short.task_id)).unwrap().is_none());
        let mut r = record(None, 60_000);
        now(store.create(r.clone())).unwrap();
        let stale = r.clone();
        r.status = TaskStatus::Completed;
        r.touch();
        now(store.update(r.clone())).unwrap();
        now(store.update(stale)).unwrap();
        assert_eq!(now(store.get(&r.task_id)).unwrap().unwrap().status, TaskStatus::Completed);
    }
}
