//! Following a task to its result (the Tasks extension, SEP-2663): a `tools/call` answered
//! with a `CreateTaskResult` is polled with `tasks/get` at the task's `pollIntervalMs`; its
//! input requests are answered by the same input handlers as MRTR's, through `tasks/update`;
//! cancelling the call sends `tasks/cancel`. The caller gets the final result as if the call
//! had answered with it.

use super::conn::Inner;
use super::mrtr::answer_input_requests;
use super::options::{CallOptions, ProgressCallback};
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::ErrorObject;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long a cancelled `tools/call` stays open in the background for a `CreateTaskResult`
/// already on its way (see [`Inner::call_round_trip`]).
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// The polling interval used when the server suggests none, and the bounds of any.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(60);

fn poll_interval(task: &Value, last: Duration) -> Duration {
    task.get("pollIntervalMs").and_then(Value::as_u64).map_or(last, Duration::from_millis).clamp(MIN_POLL, MAX_POLL)
}

fn task_params(task_id: &str) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("taskId".into(), json!(task_id));
    p
}

impl Inner {
    /// Polls the task of `created` (a `CreateTaskResult`) until it ends: its result when it
    /// completes, its JSON-RPC error when it fails, a cancelled error when it is cancelled.
    pub(super) async fn follow_task(self: &Arc<Self>, created: Value, opts: &CallOptions) -> Result<Value> {
        let Some(task_id) = created.get("taskId").and_then(Value::as_str).map(str::to_owned) else {
            return Err(Error::new(ErrorKind::InvalidParams, "the server's CreateTaskResult has no taskId"));
        };
        let cancel = opts.cancel.clone().unwrap_or_default();
        let mut interval = poll_interval(&created, DEFAULT_POLL);
        let mut answered: HashSet<String> = HashSet::new();
        let mut task = created;
        loop {
            match task.get("status").and_then(Value::as_str) {
                Some("completed") => return Ok(task.get("result").cloned().unwrap_or_else(|| json!({}))),
                Some("failed") => {
                    let error = task.get("error").cloned().and_then(|e| serde_json::from_value::<ErrorObject>(e).ok());
                    return Err(Error::remote(error.unwrap_or_else(|| {
                        ErrorObject::new(crate::jsonrpc::INTERNAL_ERROR, format!("task {task_id} failed"))
                    })));
                }
                // By anyone: this client through another handle, another client, the server.
                Some("cancelled") => {
                    return Err(Error::new(ErrorKind::Cancelled, format!("task {task_id} was cancelled")));
                }
                Some("input_required") => {
                    let pending: Map<String, Value> = task
                        .get("inputRequests")
                        .and_then(Value::as_object)
                        .map(|r| r.iter().filter(|(k, _)| !answered.contains(*k)).map(|(k, v)| (k.clone(), v.clone())))
                        .into_iter()
                        .flatten()
                        .collect();
                    if !pending.is_empty() {
                        let answers = tokio::select! {
                            _ = cancel.cancelled() => return self.cancel_task(&task_id).await,
                            a = answer_input_requests(&self.options, &pending) => a?,
                        };
                        answered.extend(answers.keys().cloned());
                        let mut p = task_params(&task_id);
                        p.insert("inputResponses".into(), Value::Object(answers));
                        self.round_trip("tasks/update", &p, opts).await?;
                        task = self.round_trip("tasks/get", &task_params(&task_id), opts).await?;
                        continue;
                    }
                }
                _ => {}
            }
            tokio::select! {
                _ = cancel.cancelled() => return self.cancel_task(&task_id).await,
                _ = tokio::time::sleep(interval) => {}
            }
            let polled = self.round_trip("tasks/get", &task_params(&task_id), opts).await;
            if cancel.is_cancelled() {
                return self.cancel_task(&task_id).await;
            }
            task = polled?;
            interval = poll_interval(&task, interval);
        }
    }

    /// The round trip of a `tools/call` that the server may answer with a task. Stopping to
    /// wait (the call's cancel token, or its future dropped) cannot simply drop the request:
    /// the server may already have created the task, and its `CreateTaskResult` may be on its
    /// way, so the task would run on unseen. The caller is released at once; the request stays
    /// open in the background for up to [`CANCEL_GRACE`] (see [`InFlightCall`]).
    pub(super) async fn call_round_trip(
        self: &Arc<Self>,
        params: Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value> {
        let cancel = opts.cancel.clone().unwrap_or_default();
        let stopped = CancellationToken::new();
        let mut background = opts.clone();
        background.cancel = None;
        // Progress stops reaching the caller once it has stopped waiting.
        background.on_progress = opts.on_progress.clone().map(|cb| {
            let stopped = stopped.clone();
            let gated: ProgressCallback = Arc::new(move |p| {
                if !stopped.is_cancelled() {
                    cb(p);
                }
            });
            gated
        });
        let this = self.clone();
        let call = tokio::spawn(async move { this.round_trip("tools/call", &params, &background).await });
        let mut flight = InFlightCall { inner: self.clone(), call: Some(call), stopped };
        let joined = {
            let Some(call) = flight.call.as_mut() else { unreachable!("the call was just spawned") };
            tokio::select! {
                biased;
                joined = call => joined,
                _ = cancel.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "tools/call was cancelled")),
            }
        };
        flight.call = None;
        joined.unwrap_or_else(|e| Err(Error::new(ErrorKind::Internal, format!("tools/call failed: {e}"))))
    }

    /// `tasks/get`: the task's `DetailedTask`, as JSON.
    pub(super) async fn get_task(self: &Arc<Self>, task_id: &str, opts: &CallOptions) -> Result<Value> {
        self.round_trip("tasks/get", &task_params(task_id), opts).await
    }

    /// `tasks/cancel`: the server's acknowledgement (cancellation itself is cooperative and
    /// eventually consistent).
    pub(super) async fn send_task_cancel(self: &Arc<Self>, task_id: &str, opts: &CallOptions) -> Result<()> {
        self.round_trip("tasks/cancel", &task_params(task_id), opts).await.map(drop)
    }

    /// Sends `tasks/cancel` (best effort) and ends the call as cancelled.
    async fn cancel_task(self: &Arc<Self>, task_id: &str) -> Result<Value> {
        let _ = self.round_trip("tasks/cancel", &task_params(task_id), &CallOptions::new()).await;
        Err(Error::new(ErrorKind::Cancelled, format!("tools/call was cancelled (task {task_id} too)")))
    }
}

/// A `tools/call` whose caller stopped waiting before its answer came: dropped, it keeps the
/// request open in the background for up to [`CANCEL_GRACE`]. An answer that is a task gets
/// `tasks/cancel`; any other answer is dropped; a call still running when the grace ends is
/// dropped (which cancels its handler on the server, as for any request).
struct InFlightCall {
    inner: Arc<Inner>,
    /// `None` once the caller has its answer.
    call: Option<JoinHandle<Result<Value>>>,
    /// Cancelled when the caller stops waiting: its progress callback is no longer called.
    stopped: CancellationToken,
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.stopped.cancel();
        let Some(mut call) = self.call.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            call.abort();
            return;
        };
        let inner = self.inner.clone();
        runtime.spawn(async move {
            match tokio::time::timeout(CANCEL_GRACE, &mut call).await {
                Ok(Ok(Ok(answer))) => {
                    let created = answer.get("resultType").and_then(Value::as_str) == Some("task");
                    if let Some(task_id) = answer.get("taskId").and_then(Value::as_str).filter(|_| created) {
                        let _ = inner.round_trip("tasks/cancel", &task_params(task_id), &CallOptions::new()).await;
                    }
                }
                Ok(_) => {}
                Err(_) => call.abort(),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polling_interval_is_the_servers_within_bounds() {
        assert_eq!(poll_interval(&json!({ "pollIntervalMs": 250 }), DEFAULT_POLL), Duration::from_millis(250));
        assert_eq!(poll_interval(&json!({}), Duration::from_millis(300)), Duration::from_millis(300));
        assert_eq!(poll_interval(&json!({ "pollIntervalMs": 0 }), DEFAULT_POLL), MIN_POLL);
        assert_eq!(poll_interval(&json!({ "pollIntervalMs": 3_600_000 }), DEFAULT_POLL), MAX_POLL);
    }
}
