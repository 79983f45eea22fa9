//! The tasks of a server ([`Tasks`]: its store, and the tasks running in this process), and
//! the link from one call's [`RequestContext`](crate::server::RequestContext) to its task
//! ([`CallLink`]): creating the task, its input requests and their answers, its end.

use super::options::TaskOptions;
use super::record::{TaskRecord, TaskStatus};
use super::store::{TaskControl, TaskStore};
use crate::error::{Error, ErrorKind, Result};
use crate::server::context::TaskLink;
use crate::server::{NotificationBus, ServerEvent};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// A server's tasks: where their state is kept, and those running in this process.
pub(crate) struct Tasks {
    pub options: TaskOptions,
    pub store: Arc<dyn TaskStore>,
    /// Where each change is announced (`notifications/tasks` on listen streams).
    bus: Arc<dyn NotificationBus>,
    running: Mutex<HashMap<String, Arc<Running>>>,
}

/// A task whose handler runs in this process.
pub(crate) struct Running {
    record: Mutex<TaskRecord>,
    /// The handler's cancellation token: `tasks/cancel`, the TTL and shutdown cancel it.
    pub cancel: CancellationToken,
    /// Input requests waiting for their answer, by key.
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// The answers received, by key (a key names one request over the task's lifetime).
    answered: Mutex<Map<String, Value>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a task's handler ended.
pub(crate) enum Ending {
    /// Its result (the shaped `CallToolResult`, `isError` ones included).
    Completed(Value),
    /// A JSON-RPC error.
    Failed(Error),
    /// Cancelled (by the client, or when its TTL passed).
    Cancelled,
}

impl Tasks {
    /// The tasks of a server whose state `store` keeps and whose changes `bus` announces; what
    /// other instances forward through the store reaches the tasks running here.
    pub fn new(options: TaskOptions, store: Arc<dyn TaskStore>, bus: Arc<dyn NotificationBus>) -> Arc<Self> {
        let tasks = Arc::new(Tasks { options, store, bus, running: Mutex::new(HashMap::new()) });
        let weak: Weak<Tasks> = Arc::downgrade(&tasks);
        tasks.store.receive(Arc::new(move |task_id: String, control: TaskControl| {
            let Some(tasks) = weak.upgrade() else { return };
            let Some(running) = tasks.running(&task_id) else { return };
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn(async move { tasks.apply(&running, control).await })),
                Err(_) => tracing::warn!("a task control arrived off the runtime and was dropped"),
            }
        }));
        tasks
    }

    /// The task's record, if it is stored and `principal` created it (else, as for an unknown
    /// or expired task, none).
    pub async fn get(&self, task_id: &str, principal: &Option<String>) -> Result<Option<TaskRecord>> {
        Ok(self.store.get(task_id).await?.filter(|r| &r.principal == principal))
    }

    /// Carries out a `tasks/update` or `tasks/cancel` of a stored task: here if the task runs
    /// here, else through the store on the instance that runs it (a fleet); a task that has
    /// ended is left as it is.
    pub async fn control(&self, record: &TaskRecord, control: TaskControl) -> Result<()> {
        match self.running(&record.task_id) {
            Some(running) => self.apply(&running, control).await,
            None if !record.status.is_terminal() => self.store.forward(&record.task_id, control).await?,
            None => {}
        }
        Ok(())
    }

    async fn apply(&self, running: &Running, control: TaskControl) {
        match control {
            TaskControl::Update { input_responses } => self.answer(running, &input_responses).await,
            TaskControl::Cancel => running.cancel.cancel(),
        }
    }

    /// A task running in this process, by id.
    pub fn running(&self, task_id: &str) -> Option<Arc<Running>> {
        lock(&self.running).get(task_id).cloned()
    }

    /// Creates a `working` task for `principal` in the store (it resolves in `tasks/get`
    /// before this returns) whose handler is cancelled through `cancel`; cancels it when its
    /// TTL passes.
    async fn create(
        &self,
        principal: Option<String>,
        cancel: CancellationToken,
        trace: Option<String>,
    ) -> Result<Arc<Running>> {
        let record = TaskRecord { trace, ..TaskRecord::new(principal, self.options.ttl, self.options.poll_interval) };
        self.store.create(record.clone()).await?;
        let id = record.task_id.clone();
        let running = Arc::new(Running {
            record: Mutex::new(record),
            cancel: cancel.clone(),
            waiting: Mutex::new(HashMap::new()),
            answered: Mutex::new(Map::new()),
        });
        lock(&self.running).insert(id, running.clone());
        let ttl = self.options.ttl;
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(ttl) => cancel.cancel(),
                _ = cancel.cancelled() => {}
            }
        });
        Ok(running)
    }

    /// Changes a running task's record and writes the new version to the store.
    async fn write(&self, running: &Running, change: impl FnOnce(&mut TaskRecord)) {
        if let Some(record) = Self::change(running, change) {
            self.persist(record).await;
        }
    }

    /// Changes a running task's record (not a finished one's): the new version to store.
    fn change(running: &Running, change: impl FnOnce(&mut TaskRecord)) -> Option<TaskRecord> {
        let mut r = lock(&running.record);
        if r.status.is_terminal() {
            return None;
        }
        change(&mut r);
        r.touch();
        Some(r.clone())
    }

    /// Stores a new version of a task and announces it to the listen streams following it.
    async fn persist(&self, record: TaskRecord) {
        let task_id = record.task_id.clone();
        if let Err(e) = self.store.update(record).await {
            tracing::error!("the task store failed to record a task's change: {}", e.message());
        }
        self.bus.publish(ServerEvent::TaskStatus { task_id });
    }

    /// Records how a task's handler ended; the task no longer runs here.
    pub async fn end(&self, running: &Running, ending: Ending) {
        let id = lock(&running.record).task_id.clone();
        lock(&self.running).remove(&id);
        lock(&running.waiting).clear();
        self.write(running, |r| {
            r.input_requests.clear();
            match ending {
                Ending::Completed(result) => {
                    r.status = TaskStatus::Completed;
                    r.result = Some(result);
                }
                Ending::Failed(e) => {
                    r.status = TaskStatus::Failed;
                    r.status_message = Some(e.message().to_owned());
                    r.error = Some(serde_json::to_value(e.to_error_object()).unwrap_or(Value::Null));
                }
                Ending::Cancelled => {
                    r.status = TaskStatus::Cancelled;
                    r.status_message = Some("The task was cancelled".into());
                }
            }
        })
        .await;
    }

    /// Makes an input request of a running task (`input_required` until every one is
    /// answered) and waits for its answer; a key answered before gets that answer again.
    async fn ask(&self, running: &Running, key: String, method: &str, params: Value) -> Result<Value> {
        if let Some(answer) = lock(&running.answered).get(&key) {
            return Ok(answer.clone());
        }
        let (tx, rx) = oneshot::channel();
        lock(&running.waiting).insert(key.clone(), tx);
        self.write(running, |r| {
            r.input_requests.insert(key, json!({ "method": method, "params": params }));
            r.status = TaskStatus::InputRequired;
        })
        .await;
        tokio::select! {
            answer = rx => answer.map_err(|_| Error::new(ErrorKind::Cancelled, "Cancelled: the task ended while waiting for input")),
            _ = running.cancel.cancelled() => Err(Error::new(ErrorKind::Cancelled, "Cancelled: the task was cancelled while waiting for input")),
        }
    }

    /// Delivers a `tasks/update`'s answers: those to outstanding requests reach the handler
    /// (and leave `inputRequests`, before this returns); the others are ignored.
    pub async fn answer(&self, running: &Running, responses: &Map<String, Value>) {
        let mut delivered = Vec::new();
        {
            let mut waiting = lock(&running.waiting);
            let mut answered = lock(&running.answered);
            for (key, answer) in responses {
                if let Some(tx) = waiting.remove(key) {
                    answered.insert(key.clone(), answer.clone());
                    let _ = tx.send(answer.clone());
                    delivered.push(key.clone());
                }
            }
        }
        if delivered.is_empty() {
            return;
        }
        self.write(running, |r| {
            for key in &delivered {
                r.input_requests.remove(key);
            }
            if r.input_requests.is_empty() && r.status == TaskStatus::InputRequired {
                r.status = TaskStatus::Working;
            }
        })
        .await;
    }
}

impl Running {
    /// The task's id.
    pub fn task_id(&self) -> String {
        lock(&self.record).task_id.clone()
    }
}

/// The link from one `tools/call` to the task it runs as: created at once, or when the
/// handler calls `start_task` (deferred creation).
pub(crate) struct CallLink {
    tasks: Arc<Tasks>,
    principal: Option<String>,
    /// The handler's cancellation token, the task's once it is one.
    pub cancel: CancellationToken,
    running: OnceLock<Arc<Running>>,
    starting: tokio::sync::Mutex<()>,
    /// Tells the `tools/call` exchange that the task exists (its `CreateTaskResult`).
    created: Mutex<Option<oneshot::Sender<Map<String, Value>>>>,
    /// The runtime the call is served on: a status message set from a host thread (a
    /// binding's synchronous handler) is stored from there.
    runtime: Option<tokio::runtime::Handle>,
    /// The `traceparent` of the call's span, kept in the task's record.
    trace: Option<String>,
}

impl CallLink {
    /// A link for a call by `principal` (whose span is `trace`, telemetry on); `created`
    /// learns the `CreateTaskResult` once the task exists.
    pub fn new(
        tasks: Arc<Tasks>,
        (principal, trace): (Option<String>, Option<String>),
        created: oneshot::Sender<Map<String, Value>>,
    ) -> Self {
        CallLink {
            tasks,
            principal,
            trace,
            cancel: CancellationToken::new(),
            running: OnceLock::new(),
            starting: tokio::sync::Mutex::new(()),
            created: Mutex::new(Some(created)),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    /// The task, once the call is one.
    pub fn running(&self) -> Option<&Arc<Running>> {
        self.running.get()
    }

    /// Creates the task (once).
    pub async fn create(&self) -> Result<()> {
        let _one = self.starting.lock().await;
        if self.running.get().is_some() {
            return Ok(());
        }
        let running = self.tasks.create(self.principal.clone(), self.cancel.clone(), self.trace.clone()).await?;
        let created = lock(&running.record).create_task_result();
        let _ = self.running.set(running);
        if let Some(tx) = lock(&self.created).take() {
            let _ = tx.send(created);
        }
        Ok(())
    }

    /// Records how the handler ended, if the call is a task.
    pub async fn end(&self, ending: Ending) {
        if let Some(running) = self.running.get() {
            self.tasks.end(running, ending).await;
        }
    }
}

/// A link that can start its task: the call's context holds it through [`TaskLink`].
pub(crate) struct Linked(pub Arc<CallLink>);

impl TaskLink for Linked {
    fn task_id(&self) -> Option<String> {
        self.0.running().map(|r| r.task_id())
    }

    fn start(&self) -> BoxFuture<'static, Result<bool>> {
        let link = self.0.clone();
        Box::pin(async move { link.create().await.map(|()| true) })
    }

    fn ask(&self, key: String, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value>> {
        let link = self.0.clone();
        Box::pin(async move {
            let Some(running) = link.running().cloned() else {
                return Err(Error::internal("Internal error: an input request of a call that is not a task"));
            };
            link.tasks.ask(&running, key, method, params).await
        })
    }

    fn status_message(&self, message: &str) {
        let Some(running) = self.0.running() else { return };
        let Some(record) = Tasks::change(running, |r| r.status_message = Some(message.to_owned())) else { return };
        let link = self.0.clone();
        let persist = async move { link.tasks.persist(record).await };
        match &self.0.runtime {
            Some(runtime) => drop(runtime.spawn(persist)),
            // Not served on a runtime (never, through the transports): the next change stores it.
            None => drop(persist),
        }
    }
}
