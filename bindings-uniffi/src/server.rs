//! A server for JVM services: [`McpServer`] wraps [`mcpaxle::Server`] with the application's
//! handlers ([`ServerHandler`], Kotlin `suspend` functions), served over Streamable HTTP
//! ([`McpHttpServer`]) or this process's stdin and stdout.
//!
//! As in the other bindings, definitions and options go in as JSON and are read by the core
//! (the same names and units), and a handler's value is shaped into its result by the core's
//! one rule ([`mcpaxle::server::Returned`]).

use crate::callbacks::{BearerVerifier, bearer_verifier};
use crate::errors::{McpError, parse_json, read_options, to_text, usage};
use crate::runtime;
use mcpaxle::Error;
use mcpaxle::RequestContext;
use mcpaxle::schema::{LoggingLevel, Prompt, Resource, ResourceTemplate, Tool};
use mcpaxle::server::{
    Ask, AskKind, BoxFuture, CacheHint, CompletionRef, JsonHandler, JsonInput, Returned, Server, ServerEvent,
    ServerOptions, TemplateOptions, ToolOptions,
};
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use mcpaxle::transport::stdio::{self, StdioOptions};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One of the application's handlers: a tool, a resource (or template), a prompt or a
/// completion. `input_json` is the tool's arguments, the prompt's arguments, `{"uri",
/// "variables"}` for a resource, or `{"argument", "value", "context"}` for a completion. The
/// answer is the handler's value in the core's tagged JSON form (`{"json": VALUE}`, `{"bytes":
/// BASE64}`, `{"list": [TAGGED...]}`, `{"object": {NAME: TAGGED}}`), which the core shapes into
/// the result. Throwing an `McpError` fails the request with its kind (`tool`: a tool result
/// with `isError`; `input_required`: the asks made so far go to the client, MRTR).
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ServerHandler: Send + Sync {
    /// One run of the handler.
    async fn run(&self, input_json: String, ctx: Arc<McpRequestContext>) -> Result<String, McpError>;
}

/// The application's handler as each of the core's handler traits (through [`JsonInput`]).
struct Foreign(Arc<dyn ServerHandler>);

impl JsonHandler for Foreign {
    fn run(&self, input: &Value, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        let f = self.0.clone();
        let input = input.to_string();
        Box::pin(async move {
            let text = f.run(input, Arc::new(McpRequestContext { ctx })).await.map_err(McpError::into_core)?;
            let tagged = serde_json::from_str(&text).map_err(|e| {
                Error::internal(format!("Internal error: a handler answered with text that is not JSON: {e}"))
            })?;
            Returned::from_tagged(tagged)
        })
    }
}

/// A definition (`Tool`, `Resource`, ...) from its JSON.
fn definition<T: DeserializeOwned>(json: &str, what: &str) -> Result<T, McpError> {
    serde_json::from_str(json).map_err(|e| usage(format!("the {what} definition is not valid: {e}")))
}

/// An MCP server whose handlers are the application's.
#[derive(uniffi::Object)]
pub struct McpServer {
    server: Server,
}

#[uniffi::export]
impl McpServer {
    /// A server named `name` (`serverInfo`); `options_json` the core's `ServerOptions`
    /// (`title`, `instructions`, `pageSize`, `legacy`, `cache`, `handlerTimeoutMs`,
    /// `maskErrorDetails`, `tasks`, ...), environment overrides applied.
    #[uniffi::constructor]
    pub fn new(name: String, version: String, options_json: Option<String>) -> Result<Arc<Self>, McpError> {
        let _in_runtime = runtime::handle()?.enter();
        let o = read_options::<ServerOptions>(options_json.as_deref(), "the server options")?
            .with_environment()
            .map_err(McpError::from)?;
        Ok(Arc::new(McpServer { server: Server::builder(name, version).options(o).build() }))
    }

    /// Adds or replaces a tool (`definition_json` a `Tool`; `options_json` the core's
    /// `ToolOptions`, e.g. `{"timeoutMs": 5000}`).
    pub fn add_tool(
        &self,
        definition_json: String,
        options_json: Option<String>,
        handler: Arc<dyn ServerHandler>,
    ) -> Result<(), McpError> {
        let tool: Tool = definition(&definition_json, "tool")?;
        let options: ToolOptions = read_options(options_json.as_deref(), "the tool options")?;
        Ok(self.server.add_tool_with(tool, options, JsonInput(Foreign(handler)))?)
    }

    /// Removes a tool; whether it existed.
    pub fn remove_tool(&self, name: String) -> bool {
        self.server.remove_tool(&name)
    }

    /// Adds or replaces a resource (`definition_json` a `Resource`; `cache_json` an optional
    /// `{ttlMs, cacheScope}` for its reads).
    pub fn add_resource(
        &self,
        definition_json: String,
        cache_json: Option<String>,
        handler: Arc<dyn ServerHandler>,
    ) -> Result<(), McpError> {
        let resource: Resource = definition(&definition_json, "resource")?;
        let cache: Option<CacheHint> = read_options(cache_json.as_deref(), "the cache hint")?;
        Ok(self.server.add_resource(resource, cache, JsonInput(Foreign(handler)))?)
    }

    /// Removes a resource by URI; whether it existed.
    pub fn remove_resource(&self, uri: String) -> bool {
        self.server.remove_resource(&uri)
    }

    /// Adds or replaces a resource template (`definition_json` a `ResourceTemplate`;
    /// `options_json` the core's `TemplateOptions`, e.g. `{"allowPathTraversal": true}`).
    pub fn add_resource_template(
        &self,
        definition_json: String,
        cache_json: Option<String>,
        options_json: Option<String>,
        handler: Arc<dyn ServerHandler>,
    ) -> Result<(), McpError> {
        let template: ResourceTemplate = definition(&definition_json, "resource template")?;
        let cache: Option<CacheHint> = read_options(cache_json.as_deref(), "the cache hint")?;
        let options: TemplateOptions = read_options(options_json.as_deref(), "the resource template options")?;
        Ok(self.server.add_resource_template_with(template, cache, options, JsonInput(Foreign(handler)))?)
    }

    /// Removes a resource template by its URI template; whether it existed.
    pub fn remove_resource_template(&self, uri_template: String) -> bool {
        self.server.remove_resource_template(&uri_template)
    }

    /// Adds or replaces a prompt (`definition_json` a `Prompt`).
    pub fn add_prompt(&self, definition_json: String, handler: Arc<dyn ServerHandler>) -> Result<(), McpError> {
        let prompt: Prompt = definition(&definition_json, "prompt")?;
        Ok(self.server.add_prompt(prompt, JsonInput(Foreign(handler)))?)
    }

    /// Removes a prompt; whether it existed.
    pub fn remove_prompt(&self, name: String) -> bool {
        self.server.remove_prompt(&name)
    }

    /// Sets the completion handler of a prompt's (`kind` `"prompt"`) or a resource template's
    /// (`"resource"`) arguments.
    pub fn set_completion(&self, kind: String, name: String, handler: Arc<dyn ServerHandler>) -> Result<(), McpError> {
        self.server.set_completion(CompletionRef::from_kind(&kind, name)?, JsonInput(Foreign(handler)));
        Ok(())
    }

    /// Announces that a resource changed (`notifications/resources/updated` to subscribers).
    pub fn notify_resource_updated(&self, uri: String) {
        self.server.notify_resource_updated(&uri);
    }

    /// Announces that a list changed (`notifications/<list>/list_changed` to listeners);
    /// `list` is "tools", "prompts" or "resources".
    pub fn notify_list_changed(&self, list: String) -> Result<(), McpError> {
        self.server.publish(ServerEvent::list_changed(&list)?);
        Ok(())
    }

    /// Serves over Streamable HTTP on `address` (`host:port`, port 0: any free port);
    /// `options_json` the core's `HttpOptions` (`path`, `maxBody`, `allowedHosts`,
    /// `allowedOrigins`, `connections`, `cors`, `healthPath`, `auth`, ...). With `auth`, tokens
    /// are checked by `verify`, or by the built-in `jwt` / `introspection` verifiers.
    pub async fn serve_http(
        &self,
        address: String,
        options_json: Option<String>,
        verify: Option<Arc<dyn BearerVerifier>>,
    ) -> Result<Arc<McpHttpServer>, McpError> {
        let addr: SocketAddr = address
            .parse()
            .map_err(|_| usage(format!("the address must be an IP address and a port, not {address:?}")))?;
        let mut options: HttpOptions = read_options(options_json.as_deref(), "the HTTP options")?;
        match options.auth.as_mut() {
            Some(auth) => auth.use_verifier(verify.map(bearer_verifier)).map_err(McpError::from)?,
            None if verify.is_some() => return Err(usage("a token verifier needs the \"auth\" HTTP option")),
            None => {}
        }
        options.connections.validate().map_err(McpError::from)?;
        let path = options.path.clone();
        let server = self.server.clone();
        runtime::run(async move {
            let running = HttpServer::bind(server, addr, options).await?;
            let (addr, shutdown, stopped) = (running.local_addr(), running.shutdown_token(), CancellationToken::new());
            let done = stopped.clone();
            tokio::spawn(async move {
                running.wait().await;
                done.cancel();
            });
            Ok(Arc::new(McpHttpServer { addr, path, shutdown, stopped }))
        })
        .await
    }

    /// Serves on this process's stdin and stdout until stdin closes (requests in flight finish
    /// within the drain deadline) or the caller stops waiting; `options_json` the core's
    /// `StdioOptions` (`maxMessageSize`, `drainTimeoutMs`, `maxOutboundQueue`).
    pub async fn serve_stdio(&self, options_json: Option<String>) -> Result<(), McpError> {
        let options: StdioOptions = read_options(options_json.as_deref(), "the stdio options")?;
        let server = self.server.clone();
        runtime::run(async move { stdio::serve_with(server, tokio::io::stdin(), tokio::io::stdout(), options).await })
            .await
    }
}

/// A running Streamable HTTP server.
#[derive(uniffi::Object)]
pub struct McpHttpServer {
    addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    stopped: CancellationToken,
}

#[uniffi::export]
impl McpHttpServer {
    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Stops accepting, ends listen streams, drains requests in flight; returns when done.
    /// (Not `close`: the generated Kotlin class is an `AutoCloseable`, whose `close` frees it.)
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.wait().await;
    }

    /// Returns when the server has stopped.
    pub async fn wait(&self) {
        let stopped = self.stopped.clone();
        // The runtime is up: this server runs on it.
        let _ = runtime::run(async move {
            stopped.cancelled().await;
            Ok(())
        })
        .await;
    }
}

/// The context of one request a handler runs for.
#[derive(uniffi::Object)]
pub struct McpRequestContext {
    ctx: RequestContext,
}

fn level_of(level: &str) -> Result<LoggingLevel, McpError> {
    serde_json::from_value(json!(level)).map_err(|_| usage(format!("unknown log level {level:?}")))
}

#[uniffi::export]
impl McpRequestContext {
    /// The request's metadata as JSON: `method`, `requestId`, `protocolVersion`,
    /// `clientCapabilities`, `clientInfo`, `principal`, `progressToken`, `meta`, `headers`,
    /// `claims`, `scopes`, `taskId`, `trace`.
    pub fn info_json(&self) -> String {
        self.ctx.info_json().to_string()
    }

    /// Sends `notifications/progress` (nothing when the client asked for no progress).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.ctx.progress(progress, total, message.as_deref());
    }

    /// Whether a log message at `level` would be sent.
    pub fn log_enabled(&self, level: String) -> Result<bool, McpError> {
        Ok(self.ctx.log_enabled(level_of(&level)?))
    }

    /// Sends `notifications/message` when the request asked for logs at this level.
    pub fn log(&self, level: String, data_json: String, logger: Option<String>) -> Result<(), McpError> {
        let data = parse_json(Some(&data_json), "the log data")?;
        self.ctx.log(level_of(&level)?, logger.as_deref(), data);
        Ok(())
    }

    /// Whether the request was cancelled (by the client, or the server shutting down).
    pub fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Asks the client for input (`kind`: `elicitation`, `sampling` or `roots`) under `key`
    /// (none: the core's next automatic key), the result as JSON. In the stateless era the
    /// first run fails with the `input_required` kind: let it propagate, and the client's
    /// answer arrives in the next round's run; in a legacy session it is a request to the client.
    pub async fn ask(
        &self,
        kind: String,
        key: Option<String>,
        params_json: Option<String>,
    ) -> Result<String, McpError> {
        let kind: AskKind = kind.parse()?;
        let params = match parse_json(params_json.as_deref(), "the ask params")? {
            Value::Null => json!({}),
            p => p,
        };
        let answer = match self.ctx.ask_now(kind, key.as_deref(), params) {
            Ask::Answered(r) => r?,
            Ask::Pending(fut) => runtime::run(fut).await?,
        };
        Ok(to_text(&answer)?)
    }

    /// The state the handler saved in an earlier round (JSON), if any.
    pub fn request_state(&self) -> Option<String> {
        self.ctx.request_state().map(|v| v.to_string())
    }

    /// Saves state (JSON) for the next round.
    pub fn set_request_state(&self, state_json: String) -> Result<(), McpError> {
        self.ctx.set_request_state(parse_json(Some(&state_json), "the request state")?);
        Ok(())
    }
}
