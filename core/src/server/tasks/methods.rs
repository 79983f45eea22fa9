//! `tasks/get`, `tasks/update` and `tasks/cancel`: only for a client that declares the
//! extension on the request (else -32021), and only on a task its principal created (any
//! other task id, unknown, expired or another caller's, is "not found", -32602).

use super::protocol::{TaskMethod, negotiated, required_capability};
use super::store::TaskControl;
use crate::error::{Error, Result};
use crate::jsonrpc::{Request, Response};
use crate::server::Server;
use crate::server::dispatch::{ServedIn, TransportContext};
use crate::server::exchange::{Exchange, outgoing_channel};
use crate::server::request_meta::RequestMeta;
use crate::telemetry::TraceContext;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

fn not_found(task_id: &str) -> Error {
    Error::invalid_params(format!(
        "Failed to retrieve task: Task not found: {task_id:?} (unknown, expired, or not yours)"
    ))
}

impl Server {
    /// Serves `tasks/get`, `tasks/update` or `tasks/cancel`.
    pub(crate) fn serve_task_method(
        &self,
        method: TaskMethod,
        req: Request,
        meta: &RequestMeta,
        tc: &TransportContext,
    ) -> Result<Exchange> {
        if !negotiated(meta) {
            return Err(required_capability());
        }
        let params = req.params.as_ref();
        let task_id = match params.and_then(|p| p.get("taskId")) {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(Error::invalid_params("Invalid params: \"taskId\" must be a string")),
            None => return Err(Error::invalid_params("Invalid params: \"taskId\" is required")),
        };
        let responses = match (method, params.and_then(|p| p.get("inputResponses"))) {
            (TaskMethod::Update, Some(Value::Object(r))) => r.clone(),
            (TaskMethod::Update, _) => {
                return Err(Error::invalid_params(
                    "Invalid params: \"inputResponses\" must be an object mapping input request keys to results",
                ));
            }
            _ => Map::new(),
        };
        let (server, principal, id, trace) = (self.clone(), tc.principal.clone(), req.id, meta.trace.clone());
        let (_tx, rx) = outgoing_channel();
        let fut = async move {
            let outcome = server.task_method(method, &task_id, (principal, trace.as_ref()), &responses).await;
            Some(match outcome {
                Ok(result) => Response::result(id, server.finish(result, None, &ServedIn::Modern)),
                Err(e) => Response::error(Some(id), e.to_error_object()),
            })
        };
        Ok(Exchange::running(fut, rx, CancellationToken::new(), false))
    }

    async fn task_method(
        &self,
        method: TaskMethod,
        task_id: &str,
        (principal, trace): (Option<String>, Option<&TraceContext>),
        responses: &Map<String, Value>,
    ) -> Result<Map<String, Value>> {
        let tasks = &self.inner.tasks;
        let record = tasks.get(task_id, &principal).await?.ok_or_else(|| not_found(task_id))?;
        if let (Some(t), Some(created_by)) = (trace, &record.trace) {
            t.link(created_by, "task");
        }
        match method {
            TaskMethod::Get => return Ok(record.detailed()),
            TaskMethod::Update => {
                tasks.control(&record, TaskControl::Update { input_responses: responses.clone() }).await?;
            }
            TaskMethod::Cancel => tasks.control(&record, TaskControl::Cancel).await?,
        }
        Ok(Map::new())
    }

    /// A `CreateTaskResult` as sent: with the server's identity in `_meta`.
    pub(crate) fn finish_task_result(&self, mut created: Map<String, Value>) -> Value {
        self.stamp_server_info(&mut created);
        Value::Object(created)
    }
}
