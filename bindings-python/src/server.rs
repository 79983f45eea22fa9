//! The native server (`mcpaxle._native.Server`): the core's `Server`, its registries fed with
//! Python handlers, and its two transports started on the process's runtime.

use crate::bridge::{self, Bridge, BridgeInner, Make};
use crate::handlers::{Home, PyHandler};
use crate::runtime::{self, check_fork};
use crate::{convert, errors};
use mcpaxle::legacy::LegacyOptions;
use mcpaxle::schema::{CacheScope, Prompt, Resource, ResourceTemplate, Tool};
use mcpaxle::server::{
    CacheDefaults, CacheHint, CompletionRef, Server, ServerEvent, StateKey, TemplateOptions, ToolOptions,
};
use mcpaxle::transport::http::{ConnectionLimits, HttpOptions, HttpServer};
use mcpaxle::transport::stdio::{self, StdioOptions};
use mcpaxle::{Error, ErrorKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::de::DeserializeOwned;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// An MCP server whose handlers are Python callables.
#[pyclass(frozen, name = "Server", module = "mcpaxle._native")]
pub struct PyServer {
    server: Server,
    home: Home,
}

fn usage(message: String) -> PyErr {
    errors::new_py_err("UsageError", message)
}

fn core_err(e: Error) -> PyErr {
    Python::attach(|py| errors::to_py_err(py, &e))
}

fn definition<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    serde_json::from_value(convert::from_py(obj)?).map_err(|e| usage(format!("invalid {what} definition: {e}")))
}

fn scope(s: &str) -> PyResult<CacheScope> {
    match s {
        "public" => Ok(CacheScope::Public),
        "private" => Ok(CacheScope::Private),
        other => Err(PyValueError::new_err(format!("cache scope must be \"public\" or \"private\", not {other:?}"))),
    }
}

fn hint(h: Option<(u64, String)>) -> PyResult<Option<CacheHint>> {
    h.map(|(ttl, s)| Ok(CacheHint::new(ttl, scope(&s)?))).transpose()
}

fn ms(v: Option<u64>) -> Option<Duration> {
    v.map(Duration::from_millis)
}

#[pymethods]
impl PyServer {
    /// Builds a server. `cache` maps "discover", "tools", "prompts", "resources", "templates"
    /// and "read" to `(ttl_ms, "public" | "private")`; `state_key` is 32 bytes, or any bytes
    /// to derive a key from.
    #[new]
    #[pyo3(signature = (name, version, *, title=None, instructions=None, cache=None, state_key=None, state_ttl_ms=None, page_size=None,
        server_info_in_results=true, logging=false, legacy=true, legacy_max_sessions=None, legacy_idle_timeout_ms=None, legacy_request_timeout_ms=None,
        legacy_max_sessions_per_principal=None, legacy_max_sessions_per_peer=None, legacy_uninitialized_timeout_ms=None,
        handler_timeout_ms=None, mask_error_details=false))]
    #[allow(clippy::too_many_arguments)] // keyword-only options of a Python constructor
    fn new(
        name: String,
        version: String,
        title: Option<String>,
        instructions: Option<String>,
        cache: Option<&Bound<'_, PyDict>>,
        state_key: Option<Vec<u8>>,
        state_ttl_ms: Option<u64>,
        page_size: Option<usize>,
        server_info_in_results: bool,
        logging: bool,
        legacy: bool,
        legacy_max_sessions: Option<usize>,
        legacy_idle_timeout_ms: Option<u64>,
        legacy_request_timeout_ms: Option<u64>,
        legacy_max_sessions_per_principal: Option<usize>,
        legacy_max_sessions_per_peer: Option<usize>,
        legacy_uninitialized_timeout_ms: Option<u64>,
        handler_timeout_ms: Option<u64>,
        mask_error_details: bool,
    ) -> PyResult<Self> {
        check_fork()?;
        let mut b = Server::builder(name, version)
            .server_info_in_results(server_info_in_results)
            .mask_error_details(mask_error_details);
        if let Some(t) = title {
            b = b.title(t);
        }
        if let Some(i) = instructions {
            b = b.instructions(i);
        }
        if let Some(cache) = cache {
            let mut defaults = CacheDefaults::default();
            for (k, v) in cache.iter() {
                let key: String = k.extract()?;
                let Some(h) = hint(Some(v.extract::<(u64, String)>()?))? else { continue };
                match key.as_str() {
                    "discover" => defaults.discover = h,
                    "tools" => defaults.tools = h,
                    "prompts" => defaults.prompts = h,
                    "resources" => defaults.resources = h,
                    "templates" => defaults.templates = h,
                    "read" => defaults.read = h,
                    other => return Err(PyValueError::new_err(format!("unknown cache entry {other:?}"))),
                }
            }
            b = b.cache_defaults(defaults);
        }
        if let Some(key) = state_key {
            b = b.state_key(match <[u8; 32]>::try_from(key.as_slice()) {
                Ok(k) => StateKey::from_bytes(k),
                Err(_) => StateKey::derive(&key),
            });
        }
        if let Some(ttl) = ms(state_ttl_ms) {
            b = b.state_ttl(ttl);
        }
        if let Some(n) = page_size {
            b = b.page_size(n);
        }
        if logging {
            b = b.enable_logging();
        }
        let mut lo = if legacy { LegacyOptions::default() } else { LegacyOptions::disabled() };
        if let Some(n) = legacy_max_sessions {
            lo.max_sessions = n;
        }
        if let Some(d) = ms(legacy_idle_timeout_ms) {
            lo.idle_timeout = d;
        }
        if let Some(d) = ms(legacy_request_timeout_ms) {
            lo.request_timeout = d;
        }
        if let Some(n) = legacy_max_sessions_per_principal {
            lo.max_sessions_per_principal = n;
        }
        if let Some(n) = legacy_max_sessions_per_peer {
            lo.max_sessions_per_peer = n;
        }
        if let Some(d) = ms(legacy_uninitialized_timeout_ms) {
            lo.uninitialized_timeout = d;
        }
        b = b.legacy(lo);
        if let Some(d) = ms(handler_timeout_ms) {
            b = b.handler_timeout(d);
        }
        Ok(PyServer { server: b.build(), home: Home::default() })
    }

    /// Adds or replaces a tool (`definition` is a `Tool` object as a dict); listeners get
    /// `notifications/tools/list_changed`. `timeout_ms` is the tool's own handler timeout
    /// (None: the server's).
    #[pyo3(signature = (definition, handler, timeout_ms=None))]
    fn add_tool(&self, definition: &Bound<'_, PyAny>, handler: Py<PyAny>, timeout_ms: Option<u64>) -> PyResult<()> {
        check_fork()?;
        let tool: Tool = self::definition(definition, "tool")?;
        let h = PyHandler::new(self.home.clone(), handler, format!("tool {:?}", tool.name));
        self.server.add_tool_with(tool, ToolOptions { timeout: ms(timeout_ms) }, h).map_err(core_err)
    }

    /// Removes a tool; returns whether it existed.
    fn remove_tool(&self, name: &str) -> PyResult<bool> {
        check_fork()?;
        Ok(self.server.remove_tool(name))
    }

    /// Adds or replaces a direct resource; `cache` overrides the `resources/read` hint.
    #[pyo3(signature = (definition, handler, cache=None))]
    fn add_resource(
        &self,
        definition: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        cache: Option<(u64, String)>,
    ) -> PyResult<()> {
        check_fork()?;
        let r: Resource = self::definition(definition, "resource")?;
        let h = PyHandler::new(self.home.clone(), handler, format!("resource {:?}", r.uri));
        self.server.add_resource(r, hint(cache)?, h).map_err(core_err)
    }

    /// Removes a direct resource; returns whether it existed.
    fn remove_resource(&self, uri: &str) -> PyResult<bool> {
        check_fork()?;
        Ok(self.server.remove_resource(uri))
    }

    /// Adds or replaces a resource template (RFC 6570 `uriTemplate`). Variables that could
    /// climb out of a directory are refused before `handler` runs unless
    /// `allow_path_traversal` (see the core's `TemplateOptions`).
    #[pyo3(signature = (definition, handler, cache=None, allow_path_traversal=false))]
    fn add_resource_template(
        &self,
        definition: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        cache: Option<(u64, String)>,
        allow_path_traversal: bool,
    ) -> PyResult<()> {
        check_fork()?;
        let t: ResourceTemplate = self::definition(definition, "resource template")?;
        let h = PyHandler::new(self.home.clone(), handler, format!("resource template {:?}", t.uri_template));
        let options = TemplateOptions { allow_path_traversal };
        self.server.add_resource_template_with(t, hint(cache)?, options, h).map_err(core_err)
    }

    /// Removes a resource template; returns whether it existed.
    fn remove_resource_template(&self, uri_template: &str) -> PyResult<bool> {
        check_fork()?;
        Ok(self.server.remove_resource_template(uri_template))
    }

    /// Adds or replaces a prompt; listeners get `notifications/prompts/list_changed`.
    fn add_prompt(&self, definition: &Bound<'_, PyAny>, handler: Py<PyAny>) -> PyResult<()> {
        check_fork()?;
        let p: Prompt = self::definition(definition, "prompt")?;
        let h = PyHandler::new(self.home.clone(), handler, format!("prompt {:?}", p.name));
        self.server.add_prompt(p, h).map_err(core_err)
    }

    /// Removes a prompt; returns whether it existed.
    fn remove_prompt(&self, name: &str) -> PyResult<bool> {
        check_fork()?;
        Ok(self.server.remove_prompt(name))
    }

    /// Sets the completion handler of a prompt's arguments (`kind` "prompt", `name` its name)
    /// or of a resource template's variables (`kind` "resource", `name` its URI template).
    fn set_completion(&self, kind: &str, name: String, handler: Py<PyAny>) -> PyResult<()> {
        check_fork()?;
        let r = completion_ref(kind, name)?;
        let what = match &r {
            CompletionRef::Prompt(n) => format!("completion of prompt {n:?}"),
            CompletionRef::ResourceTemplate(t) => format!("completion of resource template {t:?}"),
        };
        self.server.set_completion(r, PyHandler::new(self.home.clone(), handler, what));
        Ok(())
    }

    /// Removes a completion handler; returns whether it existed.
    fn remove_completion(&self, kind: &str, name: String) -> PyResult<bool> {
        check_fork()?;
        Ok(self.server.remove_completion(&completion_ref(kind, name)?))
    }

    /// Sends `notifications/resources/updated` to listeners subscribed to `uri`.
    fn notify_resource_updated(&self, uri: &str) -> PyResult<()> {
        check_fork()?;
        self.server.notify_resource_updated(uri);
        Ok(())
    }

    /// Sends `notifications/<list>/list_changed` to listeners that asked for it; `list` is
    /// "tools", "prompts" or "resources".
    fn notify_list_changed(&self, list: &str) -> PyResult<()> {
        check_fork()?;
        self.server.publish(ServerEvent::list_changed(list).map_err(core_err)?);
        Ok(())
    }

    /// The server's name.
    #[getter]
    fn name(&self) -> &str {
        &self.server.info().name
    }

    /// The server's version.
    #[getter]
    fn version(&self) -> &str {
        &self.server.info().version
    }

    /// Makes `bridge`'s loop the one every handler of this server runs on (None: no loop).
    /// Fails while another live loop serves it.
    fn attach(&self, bridge: Option<&Bound<'_, Bridge>>) -> PyResult<()> {
        check_fork()?;
        let next = bridge.map(|b| b.get().inner.clone());
        if let (Some(current), Some(n)) = (self.home.get(), &next) {
            if !Arc::ptr_eq(&current, n) && !current.is_closed() {
                return Err(usage("this server is already served on another event loop".into()));
            }
        }
        self.home.set(next);
        Ok(())
    }

    /// Starts serving Streamable HTTP on `host:port`: an awaitable resolving to a
    /// [`Running`] once the port is bound. `options`: `path`, `max_body`, `allowed_hosts`,
    /// `allowed_origins`, `keep_alive_ms`, `drain_timeout_ms`, `connections` (the core's
    /// [`ConnectionLimits`] as a dict, read by the core), and `auth` (the dict of
    /// `mcpaxle.BearerAuth`, whose verifier runs on `bridge`'s loop).
    #[pyo3(signature = (bridge, host, port, options=None))]
    fn start_http<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        host: String,
        port: u16,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        check_fork()?;
        let options = http_options(&bridge.get().inner, options)?;
        let addr: SocketAddr = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| PyValueError::new_err(format!("cannot resolve {host}:{port}")))?;
        let server = self.server.clone();
        let fut = async move {
            let running = HttpServer::bind(server, addr, options).await?;
            let addr = running.local_addr();
            let token = running.shutdown_token();
            let (tx, rx) = watch::channel(false);
            runtime::spawn(async move {
                running.wait().await;
                let _ = tx.send(true);
            })
            .map_err(|_| Error::new(ErrorKind::Transport, "the runtime is gone"))?;
            Ok(Running { address: addr.to_string(), token, done: rx })
        };
        bridge::awaitable(py, &bridge.get().inner, fut, make_running)
    }

    /// Starts serving stdio: MCP messages on this process's stdin and stdout. With
    /// `redirect_stdout`, file descriptor 1 points at stderr while serving, so that nothing
    /// else (a `print`, a C library) can write into the protocol stream. `max_outbound_queue`:
    /// the most messages waiting to be written before the server stops reading stdin (the
    /// core's `StdioOptions::max_outbound_queue`, default 1024).
    #[pyo3(signature = (redirect_stdout=true, drain_timeout_ms=None, max_outbound_queue=None))]
    fn start_stdio(
        &self,
        redirect_stdout: bool,
        drain_timeout_ms: Option<u64>,
        max_outbound_queue: Option<usize>,
    ) -> PyResult<Running> {
        check_fork()?;
        if max_outbound_queue == Some(0) {
            return Err(usage("max_outbound_queue must be at least 1".into()));
        }
        runtime::runtime()?;
        let out = crate::stdio::protocol_out(redirect_stdout)?;
        let token = CancellationToken::new();
        let mut options = StdioOptions { shutdown: token.clone(), ..Default::default() };
        if let Some(d) = ms(drain_timeout_ms) {
            options.drain_timeout = d;
        }
        if let Some(n) = max_outbound_queue {
            options.max_outbound_queue = n;
        }
        let (tx, rx) = watch::channel(false);
        let server = self.server.clone();
        runtime::spawn(async move {
            if let Err(e) = stdio::serve_with(server, tokio::io::stdin(), out.writer, options).await {
                eprintln!("mcpaxle: the stdio transport failed: {e}");
            }
            let _ = out.flushed.await;
            crate::stdio::restore_stdout(out.saved_stdout);
            let _ = tx.send(true);
        })?;
        Ok(Running { address: "stdio".into(), token, done: rx })
    }
}

fn completion_ref(kind: &str, name: String) -> PyResult<CompletionRef> {
    match kind {
        "prompt" => Ok(CompletionRef::Prompt(name)),
        "resource" => Ok(CompletionRef::ResourceTemplate(name)),
        other => {
            Err(PyValueError::new_err(format!("completion kind must be \"prompt\" or \"resource\", not {other:?}")))
        }
    }
}

/// The core's HTTP options from the dict `Server.start_http` passes; the verifier of `auth`
/// runs on `bridge`'s loop.
fn http_options(bridge: &Arc<BridgeInner>, d: Option<&Bound<'_, PyDict>>) -> PyResult<HttpOptions> {
    let mut o = HttpOptions::default();
    let Some(d) = d else { return Ok(o) };
    for (k, v) in d.iter() {
        if v.is_none() {
            continue;
        }
        let key: String = k.extract()?;
        match key.as_str() {
            "path" => o.path = v.extract()?,
            "max_body" => o.max_body = v.extract()?,
            "allowed_hosts" => o.allowed_hosts = Some(v.extract()?),
            "allowed_origins" => o.allowed_origins = v.extract()?,
            "keep_alive_ms" => o.keep_alive = Duration::from_millis(v.extract()?),
            "drain_timeout_ms" => o.drain_timeout = Duration::from_millis(v.extract()?),
            "auth" => o.auth = Some(crate::auth::bearer_auth(bridge, &v)?),
            "connections" => {
                o.connections = ConnectionLimits::from_json(crate::convert::from_py(&v)?)
                    .map_err(|e| usage(e.message().to_owned()))?
            }
            other => return Err(PyTypeError::new_err(format!("unknown HTTP option {other:?}"))),
        }
    }
    Ok(o)
}

/// A running transport: stop it with `shutdown()`, await `wait(bridge)` for the end.
#[pyclass(frozen, module = "mcpaxle._native")]
pub struct Running {
    address: String,
    token: CancellationToken,
    done: watch::Receiver<bool>,
}

fn make_running(r: Running) -> Make {
    Box::new(move |py| Ok(Py::new(py, r)?.into_bound(py).into_any()))
}

#[pymethods]
impl Running {
    /// `host:port` of an HTTP server (the bound port when 0 was asked), "stdio" for stdio.
    #[getter]
    fn address(&self) -> &str {
        &self.address
    }

    /// Whether the transport has stopped.
    #[getter]
    fn done(&self) -> bool {
        *self.done.borrow()
    }

    /// Starts a graceful shutdown: stop accepting, end listen streams, drain requests in
    /// flight (up to the drain timeout).
    fn shutdown(&self) -> PyResult<()> {
        check_fork()?;
        self.token.cancel();
        Ok(())
    }

    /// An awaitable (on `bridge`'s loop) that completes when the transport has stopped.
    fn wait<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        check_fork()?;
        let mut rx = self.done.clone();
        bridge::awaitable(
            py,
            &bridge.get().inner,
            async move {
                let _ = rx.wait_for(|d| *d).await;
                Ok(())
            },
            bridge::make_none,
        )
    }
}
