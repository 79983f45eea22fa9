//! The MCP client of the core (`mcpaxle::client::Client`) for Python. Every call returns an
//! awaitable made by [`bridge::awaitable`] (cancelling it drops the Rust future, and the core
//! cancels the request); results are plain JSON objects. The server's asks (elicitation,
//! sampling, roots), progress notifications and OAuth's user-agent step call Python
//! callables on the loop that made the client, through the bridge ([`bridge::call_client`]):
//! never on a runtime thread.

use crate::bridge::{self, Bridge, BridgeInner, Make};
use crate::errors::usage;
use crate::{convert, runtime};
use futures_util::future::BoxFuture;
use mcpaxle::client::{
    CallOptions, CallbackTokenStore, Client, ClientOptions, Era, InputHandler, LogCallback, OAuthOptions, Subscription,
    ToolTask,
};
use mcpaxle::schema::{Implementation, SubscriptionFilter};
use mcpaxle::{Error, Result};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

fn to_json<T: Serialize>(v: T) -> Result<Value> {
    serde_json::to_value(v)
        .map_err(|e| Error::internal(format!("Internal error: cannot convert a result to JSON: {e}")))
}

/// An input handler calling `handler(params)` (a coroutine function) on the bridge's loop.
fn input_handler(bridge: &Arc<BridgeInner>, handler: Py<PyAny>) -> InputHandler {
    let bridge = bridge.clone();
    let handler = Arc::new(handler);
    Arc::new(move |params: Value| Box::pin(bridge::call_client(bridge.clone(), handler.clone(), params)))
}

/// OAuth's user-agent step calling `authorize(authorization_url)` (a coroutine function
/// returning the redirect URL) on the bridge's loop.
fn authorization_handler(
    bridge: &Arc<BridgeInner>,
    authorize: Py<PyAny>,
) -> impl Fn(String) -> BoxFuture<'static, Result<String>> + Send + Sync + 'static {
    let bridge = bridge.clone();
    let authorize = Arc::new(authorize);
    move |url: String| -> BoxFuture<'static, Result<String>> {
        let call = bridge::call_client(bridge.clone(), authorize.clone(), Value::String(url));
        Box::pin(async move {
            match call.await? {
                Value::String(redirect) => Ok(redirect),
                other => Err(Error::usage(format!(
                    "the OAuth authorize callback must return the redirect URL as a str, not {other}"
                ))),
            }
        })
    }
}

/// The core's OAuth options from the dict `mcpaxle.OAuth` passes: the core's `OAuthOptions` by
/// their Python names (`redirect_uri`, `client_id`, `client_secret`, `issuer`,
/// `client_metadata_url`, `client_name`, `max_authorizations`, `token_store`), read by the core, and
/// `authorize` (a coroutine function; absent: the authorization server's redirect is followed
/// without a user), and `token_store_callback` (a coroutine function taking the core's token
/// store requests, made by `mcpaxle.OAuth` from a store object with load/save/clear).
fn oauth_options(bridge: &Arc<BridgeInner>, d: &Bound<'_, PyAny>) -> PyResult<OAuthOptions> {
    let d = d
        .cast::<PyDict>()
        .map_err(|_| usage("the oauth option must be a dict (build it with mcpaxle.OAuth)"))?
        .copy()?;
    let authorize = take(&d, "authorize")?;
    let store = take(&d, "token_store_callback")?;
    let mut o: OAuthOptions = crate::server::from_dict(&d, "OAuth")?;
    if let Some(authorize) = authorize {
        o.authorize = Arc::new(authorization_handler(bridge, authorize.unbind()));
    }
    if let Some(store) = store {
        let (bridge, store) = (bridge.clone(), Arc::new(store.unbind()));
        let call = move |request: Value| -> BoxFuture<'static, Result<Value>> {
            Box::pin(bridge::call_client(bridge.clone(), store.clone(), request))
        };
        o.token_store = Some(Arc::new(CallbackTokenStore::new(Arc::new(call))));
    }
    Ok(o)
}

/// Removes `key` from `d`, returning its value unless it was `None`.
fn take<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    let v = d.get_item(key)?;
    if v.is_some() {
        d.del_item(key)?;
    }
    Ok(v.filter(|v| !v.is_none()))
}

/// The core's client options from the dict the Python layer passes: the core's
/// `ClientOptions` by their Python names, read by the core, beside the callbacks
/// (`on_elicitation`, `on_sampling`, `on_roots`, `on_log`) and `oauth` (`mcpaxle.OAuth._native()`).
fn client_options(py: Python<'_>, bridge: &Arc<BridgeInner>, d: Option<&Bound<'_, PyDict>>) -> PyResult<ClientOptions> {
    let d = match d {
        Some(d) => d.copy()?,
        None => PyDict::new(py),
    };
    let handlers = [take(&d, "on_elicitation")?, take(&d, "on_sampling")?, take(&d, "on_roots")?];
    let oauth = take(&d, "oauth")?;
    let on_log = take(&d, "on_log")?;
    let named = d.contains("client_info")? || d.contains("clientInfo")?;
    let mut o: ClientOptions = crate::server::from_dict(&d, "client options")?;
    if !named {
        o.client_info = Implementation::new("mcpaxle-python", env!("CARGO_PKG_VERSION"));
    }
    let [elicitation, sampling, roots] = handlers.map(|h| h.map(|h| input_handler(bridge, h.unbind())));
    (o.elicitation, o.sampling, o.roots) = (elicitation, sampling, roots);
    if let Some(oauth) = oauth {
        o = o.oauth(oauth_options(bridge, &oauth)?);
    }
    if let Some(cb) = on_log {
        o.on_log = Some(log_forwarder(bridge, Arc::new(cb.unbind()))?);
    }
    Ok(o)
}

/// Log messages waiting for the client's `on_log` at most; past it they are dropped (a server
/// logging faster than the callback runs must not grow the client's memory).
const LOG_BACKLOG: usize = 1024;

/// The client's log callback: messages go in order to `cb` on the loop through one task,
/// which ends when the client (holding the sender) is dropped.
fn log_forwarder(bridge: &Arc<BridgeInner>, cb: Arc<Py<PyAny>>) -> PyResult<LogCallback> {
    let (tx, mut rx) = mpsc::channel::<Value>(LOG_BACKLOG);
    let b = bridge.clone();
    runtime::spawn(async move {
        while let Some(v) = rx.recv().await {
            let _ = bridge::call_client(b.clone(), cb.clone(), v).await;
        }
    })?;
    let dropped = std::sync::atomic::AtomicU64::new(0);
    Ok(Arc::new(move |m| {
        let Ok(v) = serde_json::to_value(m) else { return };
        if tx.try_send(v).is_err() {
            let n = dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                let message =
                    format!("the client's on_log is {LOG_BACKLOG} messages behind: {n} log messages dropped so far");
                Python::attach(|py| {
                    let logged = py.import("logging").and_then(|l| l.call_method1("getLogger", ("mcpaxle",)));
                    let _ = logged.and_then(|logger| logger.call_method1("warning", (message,)));
                });
            }
        }
    }))
}

/// Call options from the dict the Python layer passes: the core's `CallOptions` by their
/// Python names (`timeout_ms`, `meta`, `log_level`, `bypass_cache`), read by the core, beside
/// the callbacks `on_progress` and `on_log` (coroutine functions). The callbacks are fed in
/// order by one forwarding task, which ends once the options are dropped (the call is over)
/// and every notification was delivered: awaiting it makes the callbacks run before the call's
/// result is returned.
fn call_options(
    bridge: &Arc<BridgeInner>,
    d: Option<&Bound<'_, PyDict>>,
) -> PyResult<(CallOptions, Option<JoinHandle<()>>)> {
    let Some(d) = d else { return Ok((CallOptions::new(), None)) };
    let d = d.copy()?;
    let on_progress = take(&d, "on_progress")?.map(|f| Arc::new(f.unbind()));
    let on_log = take(&d, "on_log")?.map(|f| Arc::new(f.unbind()));
    let mut o: CallOptions = crate::server::from_dict(&d, "the call options")?;
    if on_progress.is_none() && on_log.is_none() {
        return Ok((o, None));
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<(Arc<Py<PyAny>>, Value)>();
    let b = bridge.clone();
    let forwarder = runtime::spawn(async move {
        while let Some((cb, v)) = rx.recv().await {
            let _ = bridge::call_client(b.clone(), cb, v).await;
        }
    })?;
    if let Some(cb) = on_progress {
        let tx = tx.clone();
        o = o.on_progress(move |p| {
            if let Ok(v) = serde_json::to_value(p) {
                let _ = tx.send((cb.clone(), v));
            }
        });
    }
    if let Some(cb) = on_log {
        o = o.on_log(move |m| {
            if let Ok(v) = serde_json::to_value(m) {
                let _ = tx.send((cb.clone(), v));
            }
        });
    }
    Ok((o, Some(forwarder)))
}

/// Runs a call (which owns its options), then waits until its callbacks have run.
async fn delivered<T>(call: impl Future<Output = Result<T>>, forwarder: Option<JoinHandle<()>>) -> Result<T> {
    let result = call.await;
    if let Some(f) = forwarder {
        let _ = f.await;
    }
    result
}

fn make_client(c: Client) -> Make {
    Box::new(move |py| Ok(Py::new(py, PyClient { client: c })?.into_bound(py).into_any()))
}

fn make_subscription(s: (Subscription, Value)) -> Make {
    Box::new(move |py| {
        let (sub, acknowledged) = s;
        let sub = PySubscription {
            sub: Arc::new(tokio::sync::Mutex::new(sub)),
            closed: CancellationToken::new(),
            acknowledged,
        };
        Ok(Py::new(py, sub)?.into_bound(py).into_any())
    })
}

fn make_tool_task(task: ToolTask) -> Make {
    Box::new(move |py| Ok(Py::new(py, PyToolTask { task })?.into_bound(py).into_any()))
}

fn make_option(v: Option<Value>) -> Make {
    Box::new(move |py| match v {
        Some(v) => convert::to_py(py, &v),
        None => Ok(py.None().into_bound(py)),
    })
}

/// Connects to a Streamable HTTP endpoint: an awaitable resolving to a `Client`.
#[pyfunction]
#[pyo3(signature = (bridge, url, options=None))]
pub fn connect_http<'py>(
    py: Python<'py>,
    bridge: &Bound<'py, Bridge>,
    url: String,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let b = &bridge.get().inner;
    let o = client_options(py, b, options)?;
    bridge::awaitable(py, b, async move { Client::connect_http(&url, o).await }, make_client)
}

/// Connects to `server`, served in this process over an in-memory pipe (the core's
/// `Client::connect_in_memory`); its handlers run on the loop the Python layer attached.
#[pyfunction]
#[pyo3(signature = (bridge, server, options=None))]
pub fn connect_in_memory<'py>(
    py: Python<'py>,
    bridge: &Bound<'py, Bridge>,
    server: &Bound<'py, crate::server::PyServer>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let b = &bridge.get().inner;
    let o = client_options(py, b, options)?;
    let server = server.get().core().clone();
    bridge::awaitable(py, b, async move { Client::connect_in_memory(&server, o).await }, make_client)
}

/// Spawns `command[0]` with the rest as arguments and connects over stdio.
#[pyfunction]
#[pyo3(signature = (bridge, command, options=None))]
pub fn connect_stdio<'py>(
    py: Python<'py>,
    bridge: &Bound<'py, Bridge>,
    command: Vec<String>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let b = &bridge.get().inner;
    let o = client_options(py, b, options)?;
    let Some((cmd, args)) = command.split_first() else {
        return Err(usage("connect_stdio needs a command: [program, *args]"));
    };
    let (cmd, args) = (cmd.clone(), args.to_vec());
    bridge::awaitable(py, b, async move { Client::connect_stdio(cmd, args, o).await }, make_client)
}

/// A connected MCP client (the core's `Client`).
#[pyclass(frozen, name = "Client", module = "mcpaxle._native")]
pub struct PyClient {
    client: Client,
}

#[pymethods]
impl PyClient {
    /// "modern" or "legacy".
    #[getter]
    fn era(&self) -> &'static str {
        match self.client.era() {
            Era::Modern => "modern",
            _ => "legacy",
        }
    }

    #[getter]
    fn protocol_version(&self) -> String {
        self.client.protocol_version()
    }

    #[getter]
    fn server_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.client.server_info()).unwrap_or(Value::Null);
        convert::to_py(py, &v)
    }

    #[getter]
    fn server_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.client.server_capabilities()).unwrap_or_else(|_| json!({}));
        convert::to_py(py, &v)
    }

    #[getter]
    fn instructions(&self) -> Option<String> {
        self.client.instructions()
    }

    #[getter]
    fn process_id(&self) -> Option<u32> {
        self.client.process_id()
    }

    #[getter]
    fn session_id(&self) -> Option<String> {
        self.client.session_id()
    }

    /// Any request, untyped: its result object.
    #[pyo3(signature = (bridge, method, params=None, options=None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = &bridge.get().inner;
        let params = params.map(convert::from_py).transpose()?.unwrap_or(Value::Null);
        let (o, forwarder) = call_options(b, options)?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            b,
            async move { delivered(c.request(&method, params, o), forwarder).await },
            bridge::make_value,
        )
    }

    fn discover<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        bridge::awaitable(py, &bridge.get().inner, async move { to_json(c.discover().await?) }, bridge::make_value)
    }

    /// Every tool (all pages).
    fn list_tools<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move { to_json(c.list_all_tools().await?) },
            bridge::make_value,
        )
    }

    #[pyo3(signature = (bridge, name, arguments=None, options=None))]
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = &bridge.get().inner;
        let args = arguments.map(convert::from_py).transpose()?.unwrap_or(Value::Null);
        let (o, forwarder) = call_options(b, options)?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            b,
            async move { to_json(delivered(c.call_tool(&name, args, o), forwarder).await?) },
            bridge::make_value,
        )
    }

    /// `tools/call` held as a task: an awaitable of a `ToolTask` (the core's
    /// `Client::call_tool_as_task`).
    #[pyo3(signature = (bridge, name, arguments=None, options=None))]
    fn call_tool_as_task<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = &bridge.get().inner;
        let args = arguments.map(convert::from_py).transpose()?.unwrap_or(Value::Null);
        let (o, forwarder) = call_options(b, options)?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            b,
            async move { delivered(c.call_tool_as_task(&name, args, o), forwarder).await },
            make_tool_task,
        )
    }

    /// The handle of a task created earlier (the core's `Client::task`); sends nothing.
    fn task(&self, task_id: &str) -> PyToolTask {
        PyToolTask { task: self.client.task(task_id) }
    }

    /// Every resource (all pages).
    fn list_resources<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move { to_json(c.list_all_resources().await?) },
            bridge::make_value,
        )
    }

    /// Every resource template (all pages).
    fn list_resource_templates<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move { to_json(c.list_all_resource_templates().await?) },
            bridge::make_value,
        )
    }

    #[pyo3(signature = (bridge, uri, options=None))]
    fn read_resource<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        uri: String,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = &bridge.get().inner;
        let (o, forwarder) = call_options(b, options)?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            b,
            async move { to_json(delivered(c.read_resource(&uri, o), forwarder).await?) },
            bridge::make_value,
        )
    }

    /// Every prompt (all pages).
    fn list_prompts<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move { to_json(c.list_all_prompts().await?) },
            bridge::make_value,
        )
    }

    #[pyo3(signature = (bridge, name, arguments=None, options=None))]
    fn get_prompt<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args: std::collections::BTreeMap<String, String> =
            arguments.map(|a| a.extract()).transpose()?.unwrap_or_default();
        let b = &bridge.get().inner;
        let (o, forwarder) = call_options(b, options)?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            b,
            async move { to_json(delivered(c.get_prompt(&name, args, o), forwarder).await?) },
            bridge::make_value,
        )
    }

    /// `completion/complete` with `ref` and `argument` objects (and an optional `context`);
    /// `options` as `request`'s.
    #[pyo3(signature = (bridge, reference, argument, context=None, options=None))]
    fn complete<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        reference: &Bound<'py, PyAny>,
        argument: &Bound<'py, PyAny>,
        context: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut params = Map::new();
        params.insert("ref".into(), convert::from_py(reference)?);
        params.insert("argument".into(), convert::from_py(argument)?);
        if let Some(c) = context {
            params.insert("context".into(), convert::from_py(c)?);
        }
        let b = &bridge.get().inner;
        let (o, forwarder) = call_options(b, options)?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            b,
            async move { delivered(c.request("completion/complete", Value::Object(params), o), forwarder).await },
            bridge::make_value,
        )
    }

    /// Opens a subscription (`filter` in the wire's camelCase): an awaitable of a `Subscription`.
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        filter: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter: SubscriptionFilter = serde_json::from_value(convert::from_py(filter)?)
            .map_err(|e| PyTypeError::new_err(format!("not a subscription filter: {e}")))?;
        let c = self.client.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move {
                let sub = c.subscribe(filter).await?;
                let ack = to_json(sub.acknowledged())?;
                Ok((sub, ack))
            },
            make_subscription,
        )
    }

    /// Closes the connection (a stdio server is shut down).
    fn close<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move {
                c.close().await;
                Ok(())
            },
            bridge::make_none,
        )
    }
}

/// A `tools/call` held as a task (the core's `ToolTask`). Dropping it does not cancel the
/// task.
#[pyclass(frozen, name = "ToolTask", module = "mcpaxle._native")]
pub struct PyToolTask {
    task: ToolTask,
}

#[pymethods]
impl PyToolTask {
    /// The task's id, `None` when the server answered with the result at once.
    #[getter]
    fn task_id(&self) -> Option<&str> {
        self.task.task_id()
    }

    /// `tasks/get`: the `DetailedTask`.
    fn status<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.task.clone();
        bridge::awaitable(py, &bridge.get().inner, async move { to_json(t.status().await?) }, bridge::make_value)
    }

    /// The call's result, the task followed to its end.
    fn result<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.task.clone();
        bridge::awaitable(py, &bridge.get().inner, async move { to_json(t.result().await?) }, bridge::make_value)
    }

    /// `tasks/cancel`.
    fn cancel<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.task.clone();
        bridge::awaitable(py, &bridge.get().inner, async move { t.cancel().await }, bridge::make_none)
    }
}

/// An open subscription: `next(bridge)` resolves to the next notification, or `None` once it
/// ended.
#[pyclass(frozen, name = "Subscription", module = "mcpaxle._native")]
pub struct PySubscription {
    sub: Arc<tokio::sync::Mutex<Subscription>>,
    closed: CancellationToken,
    acknowledged: Value,
}

#[pymethods]
impl PySubscription {
    /// The notification types the server agreed to send.
    #[getter]
    fn acknowledged<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.acknowledged)
    }

    /// The next notification (`{"method", "params"}`), `None` once ended.
    fn next<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        let (sub, closed) = (self.sub.clone(), self.closed.clone());
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move {
                let mut sub = tokio::select! {
                    _ = closed.cancelled() => return Ok(None),
                    s = sub.lock() => s,
                };
                tokio::select! {
                    _ = closed.cancelled() => Ok(None),
                    n = sub.next() => match n {
                        None => Ok(None),
                        Some(Ok(n)) => Ok(Some(to_json(n)?)),
                        Some(Err(e)) => Err(e),
                    },
                }
            },
            make_option,
        )
    }

    /// Ends the subscription.
    fn close(&self) -> PyResult<()> {
        if self.closed.is_cancelled() {
            return Ok(());
        }
        self.closed.cancel();
        let sub = self.sub.clone();
        runtime::spawn(async move { sub.lock().await.close() })?;
        Ok(())
    }

    #[getter]
    fn closed(&self) -> bool {
        self.closed.is_cancelled()
    }
}
