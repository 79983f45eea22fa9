//! The server: [`NativeServer`] wraps [`mcpaxle::Server`] (registries changeable at run time,
//! JavaScript handlers) and serves it over Streamable HTTP ([`NativeHttpServer`]) or this
//! process's stdin/stdout.

use crate::auth::{self, AuthConfig};
use crate::cancel::CancelToken;
use crate::errors::{self, usage};
use crate::handlers::{HandlerFn, JsHandler};
use crate::runtime;
use mcpaxle::legacy::LegacyOptions;
use mcpaxle::schema::{CacheScope, Prompt, Resource, ResourceTemplate, Tool};
use mcpaxle::server::{
    CacheDefaults, CacheHint, CompletionRef, Server, ServerEvent, StateKey, TemplateOptions, ToolOptions,
};
use mcpaxle::transport::http::{ConnectionLimits, HttpOptions, HttpServer};
use mcpaxle::transport::stdio::{self, StdioOptions};
use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Result};
use napi_derive::napi;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a server is configured.
#[napi(object, object_to_js = false)]
pub struct ServerConfig {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// The instructions `server/discover` and `initialize` return.
    pub instructions: Option<String>,
    /// Items per page of every list (default 100).
    pub page_size: Option<u32>,
    /// Advertise the (deprecated) logging capability.
    pub enable_logging: Option<bool>,
    /// A secret the MRTR `requestState` key is derived from (share it across instances).
    pub state_secret: Option<String>,
    /// How long a sealed `requestState` stays valid, in milliseconds.
    pub state_ttl_ms: Option<f64>,
    /// Whether legacy (2025-11-25) clients are served (default true).
    pub legacy: Option<bool>,
    /// The most legacy sessions open at once on one HTTP endpoint (default 10000).
    pub legacy_max_sessions: Option<u32>,
    /// The most legacy sessions one principal holds at once (default 100).
    pub legacy_max_sessions_per_principal: Option<u32>,
    /// Without a principal: the most legacy sessions per peer address, IPv4 or IPv6 /64 (default 1000).
    pub legacy_max_sessions_per_peer: Option<u32>,
    /// A legacy session idle this long ends, in milliseconds (default 1800000, 30 min).
    pub legacy_idle_timeout_ms: Option<f64>,
    /// A legacy session that never went past `initialize` ends after this, in milliseconds (default 30000).
    pub legacy_uninitialized_timeout_ms: Option<f64>,
    /// How long a request to a legacy client waits for its answer, in milliseconds (default 300000).
    pub legacy_request_timeout_ms: Option<f64>,
    /// Caching hints of the cacheable results as JSON: `{"tools": {"ttlMs", "cacheScope"}, …}`
    /// for `discover`, `tools`, `prompts`, `resources`, `templates` and `read`.
    pub cache_json: Option<String>,
    /// The longest one call of any handler may run, in milliseconds (default: no limit); the
    /// call then fails with an error naming the handler and the limit.
    pub handler_timeout_ms: Option<f64>,
    /// Whether a handler's unexpected exception (a thrown value that is not an `McpError`)
    /// shows the client a generic text instead of its message (default false).
    pub mask_error_details: Option<bool>,
}

/// How the stdio transport is configured.
#[napi(object, object_to_js = false)]
pub struct StdioConfig {
    /// The most messages waiting to be written before the server stops reading stdin (the
    /// core's `StdioOptions::max_outbound_queue`, default 1024).
    pub max_outbound_queue: Option<u32>,
}

/// How the HTTP transport is configured.
#[napi(object, object_to_js = false)]
pub struct HttpConfig {
    /// The MCP endpoint path (default `/mcp`).
    pub path: Option<String>,
    /// Host header values accepted besides the loopback names.
    pub allowed_hosts: Option<Vec<String>>,
    /// Origins accepted besides loopback ones (`"*"` for any).
    pub allowed_origins: Option<Vec<String>>,
    /// The largest request body accepted, in bytes.
    pub max_body: Option<u32>,
    /// How long `close()` waits for requests in flight, in milliseconds.
    pub drain_timeout_ms: Option<f64>,
    /// Bearer-token protection (OAuth 2.1 resource server); none by default.
    pub auth: Option<AuthConfig>,
    /// The connection limits as JSON (the core's `ConnectionLimits`: `maxConnections`,
    /// `headerReadTimeoutMs`, `bodyReadTimeoutMs`, `idleTimeoutMs`, `http2KeepAliveIntervalMs`,
    /// `http2KeepAliveTimeoutMs`, `maxHeaderBytes`, `http2MaxConcurrentStreams`,
    /// `maxBodyBytesInFlight`); the core's defaults by default.
    pub connections_json: Option<String>,
}

/// A duration option in milliseconds: a positive, finite number.
fn millis(name: &str, v: Option<f64>) -> Result<Option<Duration>> {
    match v {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(Some(Duration::from_secs_f64(ms / 1000.0))),
        Some(_) => Err(usage(format!("{name} must be a positive number of milliseconds"))),
    }
}

fn definition<T: DeserializeOwned>(json: &str, what: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| usage(format!("the {what} definition is not valid: {e}")))
}

fn cache_hint(json: Option<String>) -> Result<Option<CacheHint>> {
    let Some(json) = json else { return Ok(None) };
    let v: Value = serde_json::from_str(&json).map_err(|e| usage(format!("the cache hint is not valid JSON: {e}")))?;
    let ttl = v
        .get("ttlMs")
        .and_then(Value::as_u64)
        .ok_or_else(|| usage("the cache hint needs ttlMs, a non-negative integer"))?;
    let scope = match v.get("cacheScope").and_then(Value::as_str) {
        None | Some("private") => CacheScope::Private,
        Some("public") => CacheScope::Public,
        Some(other) => {
            return Err(usage(format!("cacheScope must be \"public\" or \"private\", not {other:?}")));
        }
    };
    Ok(Some(CacheHint::new(ttl, scope)))
}

fn cache_defaults(json: &str) -> Result<CacheDefaults> {
    let v: Value = serde_json::from_str(json).map_err(|e| usage(format!("the cache hints are not valid JSON: {e}")))?;
    let Some(o) = v.as_object() else {
        return Err(usage("the cache hints must be an object"));
    };
    let mut d = CacheDefaults::default();
    for (key, hint) in o {
        let slot = match key.as_str() {
            "discover" => &mut d.discover,
            "tools" => &mut d.tools,
            "prompts" => &mut d.prompts,
            "resources" => &mut d.resources,
            "templates" => &mut d.templates,
            "read" => &mut d.read,
            other => return Err(usage(format!("unknown cache hint {other:?}"))),
        };
        if let Some(h) = cache_hint(Some(hint.to_string()))? {
            *slot = h;
        }
    }
    Ok(d)
}

/// A timeout in milliseconds: a positive, finite number.
fn positive_ms(ms: Option<f64>, what: &str) -> Result<Option<Duration>> {
    match ms {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(Some(Duration::from_secs_f64(ms / 1000.0))),
        Some(_) => Err(usage(format!("{what} must be a positive number of milliseconds"))),
    }
}

fn completion_ref(kind: &str, name: String) -> Result<CompletionRef> {
    match kind {
        "prompt" => Ok(CompletionRef::Prompt(name)),
        "resource" => Ok(CompletionRef::ResourceTemplate(name)),
        other => Err(usage(format!("a completion is for a \"prompt\" or a \"resource\" template, not {other:?}"))),
    }
}

/// An MCP server with JavaScript handlers (the JavaScript `Server` wraps it).
#[napi]
pub struct NativeServer {
    server: Server,
}

#[napi]
impl NativeServer {
    /// Builds a server.
    #[napi(constructor)]
    pub fn new(config: ServerConfig) -> Result<Self> {
        runtime::check()?;
        let mut b = Server::builder(config.name, config.version);
        if let Some(t) = config.title {
            b = b.title(t);
        }
        if let Some(i) = config.instructions {
            b = b.instructions(i);
        }
        if let Some(n) = config.page_size {
            b = b.page_size(n as usize);
        }
        if config.enable_logging == Some(true) {
            b = b.enable_logging();
        }
        if let Some(s) = config.state_secret {
            b = b.state_key(StateKey::derive(s.as_bytes()));
        }
        if let Some(ms) = config.state_ttl_ms {
            if !ms.is_finite() || ms <= 0.0 {
                return Err(usage("stateTtlMs must be a positive number of milliseconds"));
            }
            b = b.state_ttl(Duration::from_secs_f64(ms / 1000.0));
        }
        let mut legacy =
            if config.legacy == Some(false) { LegacyOptions::disabled() } else { LegacyOptions::default() };
        if let Some(n) = config.legacy_max_sessions {
            legacy.max_sessions = n as usize;
        }
        if let Some(n) = config.legacy_max_sessions_per_principal {
            legacy.max_sessions_per_principal = n as usize;
        }
        if let Some(n) = config.legacy_max_sessions_per_peer {
            legacy.max_sessions_per_peer = n as usize;
        }
        if let Some(d) = millis("legacyIdleTimeoutMs", config.legacy_idle_timeout_ms)? {
            legacy.idle_timeout = d;
        }
        if let Some(d) = millis("legacyUninitializedTimeoutMs", config.legacy_uninitialized_timeout_ms)? {
            legacy.uninitialized_timeout = d;
        }
        if let Some(d) = millis("legacyRequestTimeoutMs", config.legacy_request_timeout_ms)? {
            legacy.request_timeout = d;
        }
        b = b.legacy(legacy);
        if let Some(c) = config.cache_json {
            b = b.cache_defaults(cache_defaults(&c)?);
        }
        if let Some(d) = positive_ms(config.handler_timeout_ms, "handlerTimeoutMs")? {
            b = b.handler_timeout(d);
        }
        b = b.mask_error_details(config.mask_error_details.unwrap_or(false));
        Ok(NativeServer { server: b.build() })
    }

    /// Adds or replaces a tool (`definitionJson` a `Tool`; `timeoutMs` its own handler
    /// timeout, overriding the server's).
    #[napi]
    pub fn add_tool(
        &self,
        definition_json: String,
        timeout_ms: Option<f64>,
        #[napi(ts_arg_type = "(inputJson: string, ctx: RequestCtx) => Promise<string>")] handler: HandlerFn,
    ) -> Result<()> {
        let tool: Tool = definition(&definition_json, "tool")?;
        let options = ToolOptions { timeout: positive_ms(timeout_ms, "timeoutMs")? };
        self.server.add_tool_with(tool, options, JsHandler::new(handler)).map_err(errors::to_napi)
    }

    /// Removes a tool; whether it existed.
    #[napi]
    pub fn remove_tool(&self, name: String) -> bool {
        self.server.remove_tool(&name)
    }

    /// Adds or replaces a resource (`definitionJson` a `Resource`; `cacheJson` an optional
    /// `{ttlMs, cacheScope}` for its reads).
    #[napi]
    pub fn add_resource(
        &self,
        definition_json: String,
        cache_json: Option<String>,
        #[napi(ts_arg_type = "(inputJson: string, ctx: RequestCtx) => Promise<string>")] handler: HandlerFn,
    ) -> Result<()> {
        let resource: Resource = definition(&definition_json, "resource")?;
        self.server.add_resource(resource, cache_hint(cache_json)?, JsHandler::new(handler)).map_err(errors::to_napi)
    }

    /// Removes a resource by URI; whether it existed.
    #[napi]
    pub fn remove_resource(&self, uri: String) -> bool {
        self.server.remove_resource(&uri)
    }

    /// Adds or replaces a resource template (`definitionJson` a `ResourceTemplate`;
    /// `optionsJson` optional `TemplateOptions`, e.g. `{"allowPathTraversal": true}`).
    #[napi]
    pub fn add_resource_template(
        &self,
        definition_json: String,
        cache_json: Option<String>,
        #[napi(ts_arg_type = "(inputJson: string, ctx: RequestCtx) => Promise<string>")] handler: HandlerFn,
        options_json: Option<String>,
    ) -> Result<()> {
        let template: ResourceTemplate = definition(&definition_json, "resource template")?;
        let options: TemplateOptions = match options_json {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| usage(format!("the resource template options are not valid: {e}")))?,
            None => TemplateOptions::default(),
        };
        self.server
            .add_resource_template_with(template, cache_hint(cache_json)?, options, JsHandler::new(handler))
            .map_err(errors::to_napi)
    }

    /// Removes a resource template by its URI template; whether it existed.
    #[napi]
    pub fn remove_resource_template(&self, uri_template: String) -> bool {
        self.server.remove_resource_template(&uri_template)
    }

    /// Adds or replaces a prompt (`definitionJson` a `Prompt`).
    #[napi]
    pub fn add_prompt(
        &self,
        definition_json: String,
        #[napi(ts_arg_type = "(inputJson: string, ctx: RequestCtx) => Promise<string>")] handler: HandlerFn,
    ) -> Result<()> {
        let prompt: Prompt = definition(&definition_json, "prompt")?;
        self.server.add_prompt(prompt, JsHandler::new(handler)).map_err(errors::to_napi)
    }

    /// Removes a prompt; whether it existed.
    #[napi]
    pub fn remove_prompt(&self, name: String) -> bool {
        self.server.remove_prompt(&name)
    }

    /// Sets the completion handler of a prompt's (`kind` `"prompt"`) or a resource template's
    /// (`"resource"`) arguments.
    #[napi]
    pub fn set_completion(
        &self,
        kind: String,
        name: String,
        #[napi(ts_arg_type = "(inputJson: string, ctx: RequestCtx) => Promise<string>")] handler: HandlerFn,
    ) -> Result<()> {
        self.server.set_completion(completion_ref(&kind, name)?, JsHandler::new(handler));
        Ok(())
    }

    /// Removes a completion handler; whether it existed.
    #[napi]
    pub fn remove_completion(&self, kind: String, name: String) -> Result<bool> {
        Ok(self.server.remove_completion(&completion_ref(&kind, name)?))
    }

    /// Announces that a resource changed (`notifications/resources/updated` to subscribers).
    #[napi]
    pub fn notify_resource_updated(&self, uri: String) {
        self.server.notify_resource_updated(&uri);
    }

    /// Announces that a list changed (`notifications/<list>/list_changed` to listeners);
    /// `list` is "tools", "prompts" or "resources".
    #[napi]
    pub fn notify_list_changed(&self, list: String) -> Result<()> {
        self.server.publish(ServerEvent::list_changed(&list).map_err(errors::to_napi)?);
        Ok(())
    }

    /// Serves over Streamable HTTP on `host:port` (port 0: any free port).
    #[napi]
    pub fn serve_http<'env>(
        &self,
        env: &'env Env,
        host: String,
        port: u32,
        config: Option<HttpConfig>,
    ) -> Result<PromiseRaw<'env, NativeHttpServer>> {
        let ip: IpAddr = host.parse().map_err(|_| usage(format!("host must be an IP address, not {host:?}")))?;
        let port = u16::try_from(port).map_err(|_| usage(format!("port {port} is out of range")))?;
        let mut options = HttpOptions::default();
        if let Some(c) = config {
            if let Some(p) = c.path {
                options.path = p;
            }
            options.allowed_hosts = c.allowed_hosts;
            options.allowed_origins = c.allowed_origins.unwrap_or_default();
            if let Some(n) = c.max_body {
                options.max_body = n as usize;
            }
            if let Some(ms) = c.drain_timeout_ms {
                if !ms.is_finite() || ms < 0.0 {
                    return Err(usage("drainTimeoutMs must be a non-negative number of milliseconds"));
                }
                options.drain_timeout = Duration::from_secs_f64(ms / 1000.0);
            }
            options.auth = c.auth.map(auth::bearer_auth);
            if let Some(json) = c.connections_json {
                let v: Value =
                    serde_json::from_str(&json).map_err(|e| usage(format!("connections is not valid JSON: {e}")))?;
                options.connections = ConnectionLimits::from_json(v).map_err(|e| usage(e.message().to_owned()))?;
            }
        }
        let path = options.path.clone();
        let server = self.server.clone();
        runtime::promise(env, async move {
            let running = HttpServer::bind(server, SocketAddr::new(ip, port), options).await?;
            let (addr, shutdown, stopped) = (running.local_addr(), running.shutdown_token(), CancellationToken::new());
            let done = stopped.clone();
            runtime::spawn(async move {
                running.wait().await;
                done.cancel();
            })
            .map_err(|e| mcpaxle::Error::internal(e.reason))?;
            Ok(NativeHttpServer { addr, path, shutdown, stopped })
        })
    }

    /// Serves on this process's stdin and stdout until stdin closes or `stop` is cancelled.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn serve_stdio<'env>(
        &self,
        env: &'env Env,
        stop: &CancelToken,
        config: Option<StdioConfig>,
    ) -> Result<PromiseRaw<'env, ()>> {
        let server = self.server.clone();
        let mut options = StdioOptions { shutdown: stop.token(), ..StdioOptions::default() };
        if let Some(n) = config.and_then(|c| c.max_outbound_queue) {
            if n == 0 {
                return Err(usage("maxOutboundQueue must be at least 1"));
            }
            options.max_outbound_queue = n as usize;
        }
        runtime::promise(env, async move {
            stdio::serve_with(server, tokio::io::stdin(), tokio::io::stdout(), options).await
        })
    }
}

/// A running Streamable HTTP server.
#[napi]
pub struct NativeHttpServer {
    addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    stopped: CancellationToken,
}

#[napi]
impl NativeHttpServer {
    /// The MCP endpoint's URL.
    #[napi(getter)]
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// The port listened on.
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        u32::from(self.addr.port())
    }

    /// Stops accepting, ends listen streams, drains requests in flight; resolves when done.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        self.shutdown.cancel();
        self.wait(env)
    }

    /// Resolves when the server has stopped (while pending, it keeps the process alive).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn wait<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let stopped = self.stopped.clone();
        runtime::promise(env, async move {
            stopped.cancelled().await;
            Ok(())
        })
    }
}
