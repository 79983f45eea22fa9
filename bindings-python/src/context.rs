//! The native request context handed to every Python handler (wrapped by
//! `mcpaxle.Context`): request metadata, progress and logs, the MRTR asks, request state,
//! cancellation. Values are converted only when read.

use crate::bridge::{self, BridgeInner};
use crate::runtime::check_fork;
use crate::{convert, errors};
use mcpaxle::jsonrpc::RequestId;
use mcpaxle::schema::LoggingLevel;
use mcpaxle::server::{Ask, AskKind, RequestContext};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;
use std::sync::Arc;

/// The context of one request.
#[pyclass(frozen, name = "RequestContext", module = "mcpaxle._native")]
pub struct PyRequestContext {
    ctx: RequestContext,
    bridge: Arc<BridgeInner>,
}

impl PyRequestContext {
    pub fn new(ctx: RequestContext, bridge: Arc<BridgeInner>) -> Self {
        PyRequestContext { ctx, bridge }
    }
}

fn level(name: &str) -> PyResult<LoggingLevel> {
    serde_json::from_value(Value::String(name.to_ascii_lowercase())).map_err(|_| {
        PyValueError::new_err(format!(
            "unknown log level {name:?}: use debug, info, notice, warning, error, critical, alert or emergency"
        ))
    })
}

#[pymethods]
impl PyRequestContext {
    /// The JSON-RPC id of the request (int or str).
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.ctx.request_id() {
            RequestId::Number(n) => n.into_pyobject(py)?.into_any(),
            RequestId::String(s) => s.into_pyobject(py)?.into_any(),
            // An integer outside i64: Python's int holds it exactly.
            RequestId::BigNumber(t) => py.get_type::<pyo3::types::PyInt>().call1((t.as_str(),))?,
        })
    }

    /// The method of the request, e.g. "tools/call".
    #[getter]
    fn method(&self) -> &str {
        self.ctx.method()
    }

    /// The protocol version of the request.
    #[getter]
    fn protocol_version(&self) -> &str {
        self.ctx.protocol_version()
    }

    /// The client's capabilities for this request.
    #[getter]
    fn client_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(convert::map_to_py(py, self.ctx.client_capabilities())?.into_any())
    }

    /// The client's `clientInfo`, when sent.
    #[getter]
    fn client_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, self.ctx.client_info().unwrap_or(&Value::Null))
    }

    /// The whole `_meta` object of the request.
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(convert::map_to_py(py, self.ctx.meta())?.into_any())
    }

    /// The trace context of the request's span while telemetry is on (`{"traceparent": ...}`,
    /// with `tracestate` and `baggage` when there are any), else `None`: what the handler runs
    /// in.
    #[getter]
    fn trace_context<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.ctx.trace_context().map(|t| Ok(convert::map_to_py(py, &t.to_map())?.into_any())).transpose()
    }

    /// The authenticated principal, when the transport established one.
    #[getter]
    fn principal(&self) -> Option<&str> {
        self.ctx.principal()
    }

    /// The request's HTTP headers: lowercase names, repeated ones joined with ", "; empty
    /// on stdio.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let headers = self.ctx.headers().map(mcpaxle::server::middleware::headers_to_json).unwrap_or_default();
        Ok(convert::map_to_py(py, &headers)?.into_any())
    }

    /// The bearer token's claims (the verifier's "claims"), or None without a token.
    #[getter]
    fn claims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.ctx.claims() {
            Some(c) => Ok(convert::map_to_py(py, c)?.into_any()),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The bearer token's scopes, or None without a token.
    #[getter]
    fn scopes(&self) -> Option<Vec<String>> {
        self.ctx.token().map(|t| t.scopes.clone())
    }

    /// The progress token of the request, when the client asked for progress.
    #[getter]
    fn progress_token<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, self.ctx.progress_token().unwrap_or(&Value::Null))
    }

    /// Whether the request was cancelled (client cancel, disconnect or server shutdown).
    #[getter]
    fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Whether the client declared a capability ("sampling", "elicitation", "roots", ...).
    fn client_supports(&self, capability: &str) -> bool {
        self.ctx.client_supports(capability)
    }

    /// Sends `notifications/progress` (only when the client sent a progress token).
    #[pyo3(signature = (progress, total=None, message=None))]
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.ctx.progress(progress, total, message);
    }

    /// Ends the request's SSE response stream now; the client reconnects after `retry_ms`
    /// (legacy sessions only; elsewhere a no-op).
    fn close_stream(&self, retry_ms: u64) {
        self.ctx.close_stream(std::time::Duration::from_millis(retry_ms));
    }

    /// Whether a log message at `level` would be sent.
    fn log_enabled(&self, level: &str) -> PyResult<bool> {
        Ok(self.ctx.log_enabled(self::level(level)?))
    }

    /// Sends `notifications/message` when the request asked for logs at this level.
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &Bound<'_, PyAny>, logger: Option<&str>) -> PyResult<()> {
        let level = self::level(level)?;
        if self.ctx.log_enabled(level) {
            self.ctx.log(level, logger, convert::from_py(data)?);
        }
        Ok(())
    }

    /// An MRTR ask: `kind` is "elicitation", "sampling" or "roots"; `key` None takes the
    /// core's next automatic key. Returns `(True, answer)` when the answer is known now (the
    /// usual case) or `(False, awaitable)` when it must be awaited (a legacy session's real
    /// request to the client). Raises `InputRequired` when this round must end so the client
    /// can answer, `MissingCapability` when the client cannot.
    #[pyo3(signature = (kind, key=None, params=None))]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        key: Option<String>,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        check_fork()?;
        let kind: AskKind = kind.parse().map_err(|e: mcpaxle::Error| PyValueError::new_err(e.message().to_owned()))?;
        let params = match params {
            Some(p) => convert::from_py(p)?,
            None => Value::Object(Default::default()),
        };
        match self.ctx.ask_now(kind, key.as_deref(), params) {
            Ask::Answered(Ok(v)) => {
                PyTuple::new(py, [true.into_pyobject(py)?.to_owned().into_any(), convert::to_py(py, &v)?])
            }
            Ask::Answered(Err(e)) => Err(errors::to_py_err(py, &e)),
            Ask::Pending(fut) => {
                let aw = bridge::awaitable(py, &self.bridge, fut, bridge::make_value)?;
                PyTuple::new(py, [false.into_pyobject(py)?.to_owned().into_any(), aw])
            }
        }
    }

    /// The state saved by an earlier round with `set_request_state`, or None.
    fn request_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.ctx.request_state().unwrap_or(Value::Null))
    }

    /// Saves JSON state for the next MRTR round (sealed into `requestState`).
    fn set_request_state(&self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        self.ctx.set_request_state(convert::from_py(state)?);
        Ok(())
    }

    /// The id of the task this call runs as (the Tasks extension), or None.
    #[getter]
    fn task_id(&self) -> Option<String> {
        self.ctx.task_id()
    }

    /// An awaitable of whether the call now runs as a task: for a tool registered with
    /// `defer_task`, answers the call with its task's handle and goes on as the task.
    fn start_task<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        check_fork()?;
        let ctx = self.ctx.clone();
        bridge::awaitable(py, &self.bridge, async move { ctx.start_task().await.map(Value::Bool) }, bridge::make_value)
    }

    /// An awaitable that completes when the request is cancelled.
    fn cancelled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        check_fork()?;
        let ctx = self.ctx.clone();
        bridge::awaitable(
            py,
            &self.bridge,
            async move {
                ctx.cancelled().await;
                Ok(())
            },
            bridge::make_none,
        )
    }
}
