//! An explicit handle on a `tools/call` that the server runs as a task (the Tasks extension):
//! [`ToolTask`], from [`Client::call_tool_as_task`](super::Client::call_tool_as_task) or, from
//! a task id alone, [`Client::task`](super::Client::task).

use super::conn::Inner;
use super::options::CallOptions;
use crate::error::{Error, ErrorKind, Result};
use crate::schema::{CallToolResult, DetailedTask, ResultType};
use serde_json::Value;
use std::sync::Arc;

/// Reads a `tools/call` result (marked `complete` when the server left `resultType` out).
pub(super) fn parse_tool_result(v: Value) -> Result<CallToolResult> {
    let mut r: CallToolResult = serde_json::from_value(v)
        .map_err(|e| Error::new(ErrorKind::ParseError, format!("the server's tools/call result is not valid: {e}")))?;
    r.result_type.get_or_insert(ResultType::Complete);
    Ok(r)
}

/// A `tools/call` the server may run as a task, held by the caller instead of followed
/// transparently.
///
/// When the server answered with a task (`resultType: "task"`), [`task_id`](Self::task_id)
/// is its id and every method talks to the server: [`status`](Self::status) is one
/// `tasks/get`, [`result`](Self::result) follows the task to its end as
/// [`Client::call_tool`](super::Client::call_tool) does (polling at the server's
/// `pollIntervalMs`, answering its input requests with the client's input handlers through
/// `tasks/update`), [`cancel`](Self::cancel) sends `tasks/cancel`. When the server answered
/// with the result itself (the tool, or the server, does not run it as a task), the handle is
/// already complete: `task_id` is `None` and `result` returns that result.
///
/// A task outlives the request that created it: **dropping the handle (or a `result` future)
/// does not cancel the task**; only [`cancel`](Self::cancel) does. Keep the task id to pick
/// the task up again later, even from another process, with
/// [`Client::task`](super::Client::task).
///
/// ```no_run
/// # use mcpaxle::client::{CallOptions, Client};
/// # use serde_json::json;
/// # async fn run(client: Client) -> mcpaxle::Result<()> {
/// let task = client.call_tool_as_task("rebuild_index", json!({}), CallOptions::new()).await?;
/// if let Some(id) = task.task_id() {
///     println!("task {id}: {:?}", task.status().await?.status);
/// }
/// let result = task.result().await?;
/// # let _ = result; Ok(()) }
/// ```
#[derive(Clone)]
pub struct ToolTask {
    inner: Arc<Inner>,
    state: State,
    options: CallOptions,
}

#[derive(Clone, Debug)]
enum State {
    Task(String),
    Complete(Box<CallToolResult>),
}

impl std::fmt::Debug for ToolTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolTask").field("state", &self.state).finish_non_exhaustive()
    }
}

impl ToolTask {
    /// The handle of what a `tools/call` answered with (`answer`: a `CreateTaskResult` or
    /// the call's result). The later requests keep the timeout, `_meta` and log level of
    /// `options`, not their callbacks (a task reports progress in its `statusMessage`) nor
    /// their cancellation token: cancelling a task is [`ToolTask::cancel`].
    pub(super) fn from_answer(inner: Arc<Inner>, answer: Value, options: &CallOptions) -> Result<ToolTask> {
        let state = if answer.get("resultType").and_then(Value::as_str) == Some("task") {
            match answer.get("taskId").and_then(Value::as_str) {
                Some(id) => State::Task(id.to_owned()),
                None => {
                    return Err(Error::new(ErrorKind::InvalidParams, "the server's CreateTaskResult has no taskId"));
                }
            }
        } else {
            State::Complete(Box::new(parse_tool_result(answer)?))
        };
        let mut kept = CallOptions::new();
        (kept.timeout, kept.meta, kept.log_level) = (options.timeout, options.meta.clone(), options.log_level);
        let options = kept;
        Ok(ToolTask { inner, state, options })
    }

    /// The handle of the task `task_id`, created earlier (by this client or another one of
    /// the same principal).
    pub(super) fn from_id(inner: Arc<Inner>, task_id: &str) -> ToolTask {
        ToolTask { inner, state: State::Task(task_id.to_owned()), options: CallOptions::new() }
    }

    /// The task's id, or `None` when the server answered with the result at once.
    pub fn task_id(&self) -> Option<&str> {
        match &self.state {
            State::Task(id) => Some(id),
            State::Complete(_) => None,
        }
    }

    /// `tasks/get`: the task's current status, and what it carries (its input requests, its
    /// result or its error). Fails with [`ErrorKind::Usage`] when there is no task (the
    /// server answered with the result: see [`ToolTask::result`]).
    pub async fn status(&self) -> Result<DetailedTask> {
        let task_id = self.task_id().ok_or_else(|| {
            Error::usage("the server answered tools/call with its result, not a task: there is no status to get")
        })?;
        let v = self.inner.get_task(task_id, &self.options).await?;
        serde_json::from_value(v)
            .map_err(|e| Error::new(ErrorKind::ParseError, format!("the server's tasks/get result is not valid: {e}")))
    }

    /// The call's result: follows the task to its end, exactly as
    /// [`Client::call_tool`](super::Client::call_tool) does, answering its input requests with
    /// the client's input handlers. A failed task is its JSON-RPC error, a cancelled one
    /// [`ErrorKind::Cancelled`]. Dropping the future stops following, not the task. Without
    /// a task, the result the server answered with.
    pub async fn result(&self) -> Result<CallToolResult> {
        match &self.state {
            State::Complete(r) => Ok((**r).clone()),
            State::Task(id) => {
                let task = self.inner.get_task(id, &self.options).await?;
                parse_tool_result(self.inner.follow_task(task, &self.options).await?)
            }
        }
    }

    /// `tasks/cancel`: asks the server to cancel the task. The server only acknowledges it:
    /// the task may still end otherwise if its work finished first ([`ToolTask::status`] tells).
    /// Without a task there is nothing to cancel: returns at once.
    pub async fn cancel(&self) -> Result<()> {
        match &self.state {
            State::Complete(_) => Ok(()),
            State::Task(id) => self.inner.send_task_cancel(id, &self.options).await,
        }
    }
}
