//! The native server (`mcpaxle._native.Server`): the core's `Server`, its registries fed with
//! Python handlers, and its two transports started on the process's runtime.

use crate::bridge::{self, Bridge, BridgeInner, Make};
use crate::convert;
use crate::errors::{core_err, usage};
use crate::handlers::{Home, PyHandler};
use crate::runtime::{self, check_fork};
use mcpaxle::schema::{Prompt, Resource, ResourceTemplate, Tool};
use mcpaxle::server::{CacheHint, CompletionRef, Server, ServerEvent, ServerOptions, TemplateOptions, ToolOptions};
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use mcpaxle::transport::stdio::{self, StdioOptions};
use mcpaxle::{Error, ErrorKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::de::DeserializeOwned;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// An MCP server whose handlers are Python callables.
#[pyclass(frozen, name = "Server", module = "mcpaxle._native")]
pub struct PyServer {
    server: Server,
    home: Home,
}

fn definition<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    serde_json::from_value(convert::from_py(obj)?).map_err(|e| usage(format!("invalid {what} definition: {e}")))
}

/// Options of type `T` from a dict of the Python layer (snake_case names, the core's; members
/// that are `None` keep their defaults), read by the core.
pub(crate) fn from_dict<T: DeserializeOwned>(d: &Bound<'_, PyDict>, what: &str) -> PyResult<T> {
    let mut m = serde_json::Map::new();
    for (k, v) in d.iter() {
        if !v.is_none() {
            m.insert(k.extract()?, convert::from_py(&v)?);
        }
    }
    mcpaxle::options::from_json(what, serde_json::Value::Object(m)).map_err(core_err)
}

/// [`from_dict`], or every default without a dict.
fn options<T: DeserializeOwned + Default>(d: Option<&Bound<'_, PyDict>>, what: &str) -> PyResult<T> {
    d.map_or_else(|| Ok(T::default()), |d| from_dict(d, what))
}

/// A cache hint from the dict `{"ttl_ms": n, "cache_scope": "public" | "private"}` (scope
/// default private, the core's).
fn hint(d: Option<&Bound<'_, PyDict>>) -> PyResult<Option<CacheHint>> {
    d.map(|d| from_dict(d, "cache hint")).transpose()
}

impl PyServer {
    /// The core's server.
    pub(crate) fn core(&self) -> &Server {
        &self.server
    }
}

#[pymethods]
impl PyServer {
    /// Builds a server. `options` is a dict of the core's server options by their Python names
    /// (`title`, `instructions`, `page_size`, `server_info_in_results`, `enable`,
    /// `state_secret`, `previous_state_secret`, `state_ttl_ms`, `cache`, `legacy`,
    /// `handler_timeout_ms`, `bus`), read by the core; the state secrets it leaves unset come
    /// from `MCPAXLE_STATE_SECRET` / `MCPAXLE_PREVIOUS_STATE_SECRET`.
    #[new]
    #[pyo3(signature = (name, version, options=None))]
    fn new(name: String, version: String, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        check_fork()?;
        let o = self::options::<ServerOptions>(options, "server options")?.with_environment().map_err(core_err)?;
        Ok(PyServer { server: Server::builder(name, version).options(o).build(), home: Home::default() })
    }

    /// Adds or replaces a tool (`definition` is a `Tool` object as a dict); listeners get
    /// `notifications/tools/list_changed`. `options` is the core's tool options as a dict
    /// (`timeout_ms`: the tool's own handler timeout; None: the server's).
    #[pyo3(signature = (definition, handler, options=None))]
    fn add_tool(
        &self,
        definition: &Bound<'_, PyAny>,
        handler: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        check_fork()?;
        let tool: Tool = self::definition(definition, "tool")?;
        let options: ToolOptions = self::options(options, "tool options")?;
        let h = PyHandler::new(self.home.clone(), handler, format!("tool {:?}", tool.name));
        self.server.add_tool_with(tool, options, h).map_err(core_err)
    }

    /// Appends a middleware to the server's chain (the first added runs outermost):
    /// `handler((request, call_next))` returns a coroutine of the result dict, where `request`
    /// is the dict of the core's `RequestInfo::to_json` and awaiting `call_next()` runs the
    /// rest of the chain. Its exceptions are the request's errors.
    fn add_middleware(&self, handler: Py<PyAny>) -> PyResult<()> {
        check_fork()?;
        self.server.use_middleware(crate::middleware::PyMiddleware::new(self.home.clone(), handler));
        Ok(())
    }

    /// Sets the visibility predicate (None removes it): `handler({"request", "items"})`
    /// returns a coroutine of one bool per item (`{"kind", "name", "definition"}`), in order.
    #[pyo3(signature = (handler=None))]
    fn set_visibility(&self, handler: Option<Py<PyAny>>) -> PyResult<()> {
        check_fork()?;
        match handler {
            Some(h) => self.server.set_visibility_filter(crate::middleware::PyVisibility::new(self.home.clone(), h)),
            None => self.server.clear_visibility(),
        }
        Ok(())
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
        handler: &Bound<'_, PyAny>,
        cache: Option<&Bound<'_, PyDict>>,
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
    /// `options` allow it (`{"allow_path_traversal": True}`, the core's `TemplateOptions`).
    #[pyo3(signature = (definition, handler, cache=None, options=None))]
    fn add_resource_template(
        &self,
        definition: &Bound<'_, PyAny>,
        handler: &Bound<'_, PyAny>,
        cache: Option<&Bound<'_, PyDict>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        check_fork()?;
        let t: ResourceTemplate = self::definition(definition, "resource template")?;
        let options: TemplateOptions = self::options(options, "resource template options")?;
        let h = PyHandler::new(self.home.clone(), handler, format!("resource template {:?}", t.uri_template));
        self.server.add_resource_template_with(t, hint(cache)?, options, h).map_err(core_err)
    }

    /// Removes a resource template; returns whether it existed.
    fn remove_resource_template(&self, uri_template: &str) -> PyResult<bool> {
        check_fork()?;
        Ok(self.server.remove_resource_template(uri_template))
    }

    /// Adds or replaces a prompt; listeners get `notifications/prompts/list_changed`.
    fn add_prompt(&self, definition: &Bound<'_, PyAny>, handler: &Bound<'_, PyAny>) -> PyResult<()> {
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
    fn set_completion(&self, kind: &str, name: String, handler: &Bound<'_, PyAny>) -> PyResult<()> {
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
                return Err(usage("this server is already served on another event loop"));
            }
        }
        self.home.set(next);
        Ok(())
    }

    /// Starts serving Streamable HTTP on `host:port`: an awaitable resolving to a
    /// [`Running`] once the port is bound. `options`: the core's HTTP options as a dict
    /// (`path`, `max_body`, `allowed_hosts`, `allowed_origins`, `keep_alive_ms`,
    /// `drain_timeout_ms`, `connections`), read by the core, and `auth` (the dict of
    /// `mcpaxle.BearerAuth`: the core's bearer auth options and `verify`, which runs on
    /// `bridge`'s loop).
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

    /// The MCP endpoint for a host's ASGI application (`Server.asgi_app()`): one
    /// [`McpService`](mcpaxle::transport::http::McpService) with `options` (the HTTP options
    /// of `start_http`; `path` only names the endpoint's public path, for the protected
    /// resource metadata), whose bearer verifier runs on `bridge`'s loop.
    #[pyo3(signature = (bridge, options=None))]
    fn asgi_service(
        &self,
        bridge: &Bound<'_, Bridge>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<crate::asgi::PyAsgiService> {
        check_fork()?;
        let options = http_options(&bridge.get().inner, options)?;
        let (max_body, drain_timeout_ms) = (options.max_body, options.drain_timeout.as_millis() as u64);
        let service = mcpaxle::transport::http::McpService::new(self.server.clone(), options);
        Ok(crate::asgi::PyAsgiService { service, max_body, drain_timeout_ms })
    }

    /// Starts serving stdio: MCP messages on this process's stdin and stdout. With
    /// `redirect_stdout`, file descriptor 1 points at stderr while serving, so that nothing
    /// else (a `print`, a C library) can write into the protocol stream. `options`: the core's
    /// stdio options as a dict (`max_message_size`, `drain_timeout_ms`, `max_outbound_queue`).
    #[pyo3(signature = (redirect_stdout=true, options=None))]
    fn start_stdio(&self, redirect_stdout: bool, options: Option<&Bound<'_, PyDict>>) -> PyResult<Running> {
        check_fork()?;
        let o: StdioOptions = self::options(options, "stdio options")?;
        runtime::runtime()?;
        let out = crate::stdio::protocol_out(redirect_stdout)?;
        let token = CancellationToken::new();
        let options = StdioOptions { shutdown: token.clone(), ..o };
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
    CompletionRef::from_kind(kind, name).map_err(|e| PyValueError::new_err(e.message().to_owned()))
}

/// The core's HTTP options from the dict `Server.start_http` passes; the verifier of `auth`
/// runs on `bridge`'s loop.
fn http_options(bridge: &Arc<BridgeInner>, d: Option<&Bound<'_, PyDict>>) -> PyResult<HttpOptions> {
    let Some(d) = d else { return Ok(HttpOptions::default()) };
    let d = d.copy()?;
    let auth = d.get_item("auth")?.filter(|a| !a.is_none());
    if auth.is_some() {
        d.del_item("auth")?;
    }
    let mut o: HttpOptions = options(Some(&d), "HTTP options")?;
    o.auth = auth.map(|a| crate::auth::bearer_auth(bridge, &a)).transpose()?;
    o.connections.validate().map_err(core_err)?;
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
