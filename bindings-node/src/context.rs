//! [`RequestCtx`]: the core's [`RequestContext`] as handed to a JavaScript handler (the
//! JavaScript layer wraps it as `ctx`).

use crate::errors::{self, parse_json, usage};
use crate::runtime;
use mcpaxle::RequestContext;
use mcpaxle::schema::LoggingLevel;
use mcpaxle::server::{Ask, AskKind};
use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::{Env, Result};
use napi_derive::napi;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The context of one request being handled by a JavaScript handler.
#[napi]
pub struct RequestCtx {
    ctx: RequestContext,
    /// Cancelled when the handler's run is over (answered, failed or dropped).
    over: CancellationToken,
    /// Whether the run ended with the handler's answer (rather than being dropped).
    answered: Arc<AtomicBool>,
}

/// A result as the envelope the JavaScript layer opens.
fn envelope(r: mcpaxle::Result<Value>) -> String {
    match r {
        Ok(v) => json!({ "ok": v }).to_string(),
        Err(e) => json!({ "error": errors::to_json(&e) }).to_string(),
    }
}

impl RequestCtx {
    /// Wraps a context; the caller cancels `over` when the run is over and sets `answered`
    /// when it ended with the handler's answer.
    pub fn new(ctx: RequestContext, over: CancellationToken, answered: Arc<AtomicBool>) -> Self {
        RequestCtx { ctx, over, answered }
    }
}

#[napi]
impl RequestCtx {
    /// The request's metadata as JSON ([`RequestContext::info_json`]).
    #[napi]
    pub fn info(&self) -> String {
        self.ctx.info_json().to_string()
    }

    /// Sends `notifications/progress` (nothing when the client asked for no progress).
    #[napi]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.ctx.progress(progress, total, message.as_deref());
    }

    /// Whether a log message at `level` would be sent.
    #[napi]
    pub fn log_enabled(&self, level: String) -> Result<bool> {
        Ok(self.ctx.log_enabled(level_of(&level)?))
    }

    /// Sends `notifications/message` when the request asked for logs at this level.
    #[napi]
    pub fn log(&self, level: String, data_json: String, logger: Option<String>) -> Result<()> {
        let data = parse_json(Some(&data_json), "the log data")?;
        self.ctx.log(level_of(&level)?, logger.as_deref(), data);
        Ok(())
    }

    /// Sends any request-scoped notification.
    #[napi]
    pub fn notify(&self, method: String, params_json: Option<String>) -> Result<()> {
        let params = parse_json(params_json.as_deref(), "the notification params")?;
        self.ctx.notify(&method, params);
        Ok(())
    }

    /// Ends this request's SSE response stream now and asks the client to reconnect after
    /// `retryMs` milliseconds (SEP-1699 polling). The request goes on; what it sends afterwards,
    /// its response included, reaches the client when it resumes with `Last-Event-ID`. Only
    /// legacy (2025-11-25) Streamable HTTP sessions have resumable streams; elsewhere this does
    /// nothing.
    #[napi]
    pub fn close_stream(&self, retry_ms: f64) -> Result<()> {
        if !retry_ms.is_finite() || retry_ms < 0.0 {
            return Err(usage("retryMs must be a non-negative number of milliseconds"));
        }
        self.ctx.close_stream(Duration::from_secs_f64(retry_ms / 1000.0));
        Ok(())
    }

    /// An MRTR ask (`kind`: `elicitation`, `sampling` or `roots`) under `key` (none: the
    /// core's next automatic key, `elicitation_1`...), answered with an envelope: at once (a
    /// string) when the answer is known or the ask was recorded for the next round
    /// (`INPUT_REQUIRED`), otherwise (a legacy session, where the ask is a real request to the
    /// client) a `Promise` of it.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn ask<'env>(
        &self,
        env: &'env Env,
        kind: String,
        key: Option<String>,
        params_json: Option<String>,
    ) -> Result<Either<String, PromiseRaw<'env, String>>> {
        let kind: AskKind = kind.parse().map_err(errors::to_napi)?;
        let params = match parse_json(params_json.as_deref(), "the ask params")? {
            Value::Null => json!({}),
            p => p,
        };
        match self.ctx.ask_now(kind, key.as_deref(), params) {
            Ask::Answered(r) => Ok(Either::A(envelope(r))),
            Ask::Pending(fut) => Ok(Either::B(runtime::promise(env, async move { Ok(envelope(fut.await)) })?)),
        }
    }

    /// The state the handler saved in an earlier round (JSON), if any.
    #[napi]
    pub fn request_state(&self) -> Option<String> {
        self.ctx.request_state().map(|v| v.to_string())
    }

    /// Saves state (JSON) for the next round.
    #[napi]
    pub fn set_request_state(&self, state_json: String) -> Result<()> {
        self.ctx.set_request_state(parse_json(Some(&state_json), "the request state")?);
        Ok(())
    }

    /// The id of the task this call runs as (the Tasks extension), `null` for an ordinary call.
    #[napi(getter)]
    pub fn task_id(&self) -> Option<String> {
        self.ctx.task_id()
    }

    /// For a tool registered with `deferTask`: answers the `tools/call` now with its task's
    /// handle and goes on as that task. Resolves whether the call now runs as a task (false
    /// when the client did not declare the extension).
    #[napi]
    pub fn start_task<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, bool>> {
        let ctx = self.ctx.clone();
        runtime::promise(env, async move { ctx.start_task().await })
    }

    /// Whether the request was cancelled.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Resolves `true` when the request is cancelled (or its run dropped), `false` when the
    /// handler answered first (so the wait never outlives the request).
    #[napi]
    pub fn wait_cancelled<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, bool>> {
        let (ctx, over, answered) = (self.ctx.clone(), self.over.clone(), self.answered.clone());
        runtime::promise(env, async move {
            Ok(tokio::select! {
                biased;
                _ = ctx.cancelled() => true,
                _ = over.cancelled() => ctx.is_cancelled() || !answered.load(Ordering::Acquire),
            })
        })
    }
}

fn level_of(level: &str) -> Result<LoggingLevel> {
    serde_json::from_value(json!(level)).map_err(|_| usage(format!("unknown log level {level:?}")))
}
