//! The server: [`NativeServer`] wraps [`mcpaxle::Server`] (registries changeable at run time,
//! JavaScript handlers) and serves it over Streamable HTTP ([`NativeHttpServer`]) or this
//! process's stdin/stdout.

use crate::auth;
use crate::callbacks::VerifyFn;
use crate::cancel::CancelToken;
use crate::errors::{self, usage};
use crate::handlers::{HandlerFn, JsHandler};
use crate::mount::NativeMount;
use crate::runtime;
use mcpaxle::schema::{Prompt, Resource, ResourceTemplate, Tool};
use mcpaxle::server::{
    CacheHint, CompletionRef, JsonInput, Server, ServerEvent, ServerOptions, TemplateOptions, ToolOptions,
};
use mcpaxle::transport::http::{HttpOptions, HttpServer, McpService};
use mcpaxle::transport::stdio::{self, StdioOptions};
use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Result};
use napi_derive::napi;
use serde::de::DeserializeOwned;
use std::net::{IpAddr, SocketAddr};
use tokio_util::sync::CancellationToken;

/// How a server is configured.
#[napi(object, object_to_js = false)]
pub struct ServerConfig {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// The other options as JSON: the core's `ServerOptions` (`title`, `instructions`,
    /// `pageSize`, `legacy`, `cache`, `handlerTimeoutMs`, `maskErrorDetails`, ...).
    pub options_json: Option<String>,
}

/// How the stdio transport is configured.
#[napi(object, object_to_js = false)]
pub struct StdioConfig {
    /// The options as JSON: the core's `StdioOptions` (`maxMessageSize`, `drainTimeoutMs`,
    /// `maxOutboundQueue`).
    pub options_json: Option<String>,
}

/// How the HTTP transport is configured.
#[napi(object, object_to_js = false)]
pub struct HttpConfig {
    /// The options as JSON: the core's `HttpOptions` (`path`, `maxBody`, `allowedHosts`,
    /// `allowedOrigins`, `keepAliveMs`, `drainTimeoutMs`, `auth` without its `verify`,
    /// `connections`, `cors`, `healthPath`).
    pub options_json: Option<String>,
    /// The token verifier of `auth` (required with it): `(token) => Promise<envelope>` whose
    /// `ok` is `{subject, scopes}`, or `null` for an invalid token.
    #[napi(ts_type = "(token: string) => Promise<string>")]
    pub verify: Option<VerifyFn>,
}

/// Options of type `T` from the JSON text the JavaScript layer sends (`None`: every default).
fn options<T: DeserializeOwned + Default>(json: Option<&str>, what: &str) -> Result<T> {
    json.map_or_else(|| Ok(T::default()), |j| mcpaxle::options::from_str(what, j).map_err(errors::to_napi))
}

/// The HTTP options of `config`, with the JavaScript verifier of `auth`.
fn http_options(config: Option<HttpConfig>) -> Result<HttpOptions> {
    let (json, verify) = config.map_or((None, None), |c| (c.options_json, c.verify));
    let mut options: HttpOptions = options(json.as_deref(), "the HTTP options")?;
    if let Some(a) = options.auth.as_mut() {
        a.use_verifier(verify.map(auth::verifier)).map_err(errors::to_napi)?;
    }
    Ok(options)
}

fn definition<T: DeserializeOwned>(json: &str, what: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| usage(format!("the {what} definition is not valid: {e}")))
}

fn cache_hint(json: Option<String>) -> Result<Option<CacheHint>> {
    let Some(json) = json else { return Ok(None) };
    mcpaxle::options::from_str::<Option<CacheHint>>("the cache hint", &json).map_err(errors::to_napi)
}

fn completion_ref(kind: &str, name: String) -> Result<CompletionRef> {
    CompletionRef::from_kind(kind, name).map_err(errors::to_napi)
}

/// An MCP server with JavaScript handlers (the JavaScript `Server` wraps it).
#[napi]
pub struct NativeServer {
    server: Server,
}

impl NativeServer {
    /// The core's server.
    pub fn core(&self) -> &Server {
        &self.server
    }
}

#[napi]
impl NativeServer {
    /// Builds a server.
    #[napi(constructor)]
    pub fn new(config: ServerConfig) -> Result<Self> {
        runtime::check()?;
        let o = options::<ServerOptions>(config.options_json.as_deref(), "the server options")?
            .with_environment()
            .map_err(errors::to_napi)?;
        Ok(NativeServer { server: Server::builder(config.name, config.version).options(o).build() })
    }

    /// Adds or replaces a tool (`definitionJson` a `Tool`; `optionsJson` the core's
    /// `ToolOptions`, e.g. `{"timeoutMs": 5000}`, its own handler timeout).
    #[napi]
    pub fn add_tool(
        &self,
        definition_json: String,
        options_json: Option<String>,
        #[napi(ts_arg_type = "(callId: number, inputJson: string, traceJson: string | null) => void")]
        handler: HandlerFn,
    ) -> Result<()> {
        let tool: Tool = definition(&definition_json, "tool")?;
        let options: ToolOptions = options(options_json.as_deref(), "the tool options")?;
        self.server.add_tool_with(tool, options, JsonInput(JsHandler::new(handler))).map_err(errors::to_napi)
    }

    /// Appends a middleware to the chain (the first added runs outermost): `(requestJson,
    /// next) => Promise<envelope>` whose `ok` is the result, where `requestJson` is the core's
    /// `RequestInfo::to_json` and `next.run()` runs the rest of the chain.
    #[napi]
    pub fn use_middleware(
        &self,
        #[napi(ts_arg_type = "(requestJson: string, next: MiddlewareNext) => Promise<string>")]
        middleware: crate::middleware::MiddlewareFn,
    ) {
        self.server.use_middleware(crate::middleware::JsMiddleware::new(middleware));
    }

    /// Sets the visibility predicate (none removes it): `(askedJson) => Promise<envelope>`,
    /// asked with `{"request", "items"}` once per request, whose `ok` is one boolean per item
    /// (`{"kind", "name", "definition"}`), in order.
    #[napi]
    pub fn set_visibility(
        &self,
        #[napi(ts_arg_type = "((askedJson: string) => Promise<string>) | undefined | null")] predicate: Option<
            crate::middleware::VisibilityFn,
        >,
    ) {
        match predicate {
            Some(f) => self.server.set_visibility_filter(crate::middleware::JsVisibility::new(f)),
            None => self.server.clear_visibility(),
        }
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
        #[napi(ts_arg_type = "(callId: number, inputJson: string, traceJson: string | null) => void")]
        handler: HandlerFn,
    ) -> Result<()> {
        let resource: Resource = definition(&definition_json, "resource")?;
        self.server
            .add_resource(resource, cache_hint(cache_json)?, JsonInput(JsHandler::new(handler)))
            .map_err(errors::to_napi)
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
        #[napi(ts_arg_type = "(callId: number, inputJson: string, traceJson: string | null) => void")]
        handler: HandlerFn,
        options_json: Option<String>,
    ) -> Result<()> {
        let template: ResourceTemplate = definition(&definition_json, "resource template")?;
        let options: TemplateOptions = options(options_json.as_deref(), "the resource template options")?;
        self.server
            .add_resource_template_with(template, cache_hint(cache_json)?, options, JsonInput(JsHandler::new(handler)))
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
        #[napi(ts_arg_type = "(callId: number, inputJson: string, traceJson: string | null) => void")]
        handler: HandlerFn,
    ) -> Result<()> {
        let prompt: Prompt = definition(&definition_json, "prompt")?;
        self.server.add_prompt(prompt, JsonInput(JsHandler::new(handler))).map_err(errors::to_napi)
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
        #[napi(ts_arg_type = "(callId: number, inputJson: string, traceJson: string | null) => void")]
        handler: HandlerFn,
    ) -> Result<()> {
        self.server.set_completion(completion_ref(&kind, name)?, JsonInput(JsHandler::new(handler)));
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
        let options = http_options(config)?;
        options.connections.validate().map_err(errors::to_napi)?;
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

    /// The endpoint to mount in the host's own HTTP server, with the options of `serveHttp`
    /// (`connections` is the host's business and not used).
    #[napi]
    pub fn mount(&self, config: Option<HttpConfig>) -> Result<NativeMount> {
        runtime::check()?;
        let options = http_options(config)?;
        let max_body = options.max_body;
        Ok(NativeMount::new(McpService::new(self.server.clone(), options), max_body))
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
        let o: StdioOptions = options(config.and_then(|c| c.options_json).as_deref(), "the stdio options")?;
        let options = StdioOptions { shutdown: stop.token(), ..o };
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

/// The core's option names per options struct, as JSON (`{"server": ["title", ...], ...}`):
/// what the JavaScript options take, by the same names.
#[napi]
pub fn options_schema() -> String {
    mcpaxle::catalog::schema_json().to_string()
}

/// A valid value for every option of [`options_schema`], by the same areas, as JSON (for tests
/// that hand every option of the core to the JavaScript API).
#[napi]
pub fn options_examples() -> String {
    mcpaxle::catalog::examples().to_string()
}
