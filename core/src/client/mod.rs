//! The MCP client: talks to any MCP server, modern (2026-07-28, per-request `_meta`) or legacy
//! (2025-11-25 and earlier, `initialize` handshake), over stdio or Streamable HTTP.
//!
//! * Era detection as the specification says (stdio: a `server/discover` probe; HTTP: the
//!   modern request first, its error body inspected), remembered for the connection.
//! * Per-request `_meta` (protocol version, client info, capabilities, progress token, log
//!   level) and the HTTP request-metadata headers (`MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name`, `Mcp-Param-*` from `x-mcp-header`).
//! * Multi round-trip requests: the registered input handlers answer every `inputRequests`
//!   entry, and the request is retried with `inputResponses`, the `requestState` as received
//!   and a new id, for a bounded number of rounds. Under a legacy session the same handlers
//!   answer the server's own requests.
//! * A cache honoring `ttlMs` and `cacheScope`, invalidated by change notifications.
//! * Subscriptions as streams; progress callbacks; timeouts (optionally reset by progress);
//!   cancellation by token or by dropping the call's future.
//!
//! ```no_run
//! use mcpaxle::client::{CallOptions, Client, ClientOptions};
//! use serde_json::json;
//!
//! # async fn run() -> mcpaxle::Result<()> {
//! let options = ClientOptions::new("my-app", "1.0.0")
//!     .on_elicitation(|_request| async { Ok(json!({"action": "accept", "content": {"name": "Ada"}})) });
//! let client = Client::connect_http("http://127.0.0.1:3000/mcp", options).await?;
//! for tool in client.list_all_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("greet", json!({"name": "Ada"}), CallOptions::new()).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(()) }
//! ```

pub(crate) mod auth;
mod cache;
mod call;
mod conn;
mod era;
mod mrtr;
pub(crate) mod options;
mod subscriptions;
mod tasks;
mod tool_task;
pub(crate) mod transport;
mod wire;

pub use crate::era::Era;
pub use crate::transport::stdio::client::{DEFAULT_INHERITED_ENV_VARS, default_environment};
pub use auth::{
    AuthorizationHandler, CallbackTokenStore, FileTokenStore, Grant, MemoryTokenStore, OAuthOptions,
    PreRegisteredClient, PrivateKey, StoredClient, StoredToken, TokenKey, TokenStore, TokenStoreCallback,
};
pub use mrtr::apply_schema_defaults;
pub use options::{
    CallOptions, ClientOptions, InputHandler, LogCallback, ProgressCallback, SUPPORTED_VERSIONS, StderrMode,
    is_legacy_version,
};
pub use subscriptions::Subscription;
pub use tool_task::ToolTask;

use crate::error::{Error, ErrorKind, Result};
use crate::schema::{
    CallToolResult, CompleteRequestArgument, CompleteRequestContext, CompleteResult, CompletionReference,
    DiscoverResult, GetPromptResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities,
    SubscriptionFilter, Tool,
};
use call::filter_tools;
use conn::Inner;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tool_task::parse_tool_result;

/// The parts of a `completion/complete` request from the JSON texts the bindings receive:
/// `ref`, `argument` and an optional `context`, each read as its schema type; a usage error
/// names the part that is not valid. `(reference, argument, context)` for [`Client::complete`].
pub fn completion_parts(
    reference: &str,
    argument: &str,
    context: Option<&str>,
) -> Result<(CompletionReference, CompleteRequestArgument, Option<CompleteRequestContext>)> {
    fn part<T: DeserializeOwned>(text: &str, what: &str) -> Result<T> {
        serde_json::from_str(text).map_err(|e| Error::usage(format!("the completion {what} is not valid: {e}")))
    }
    Ok((part(reference, "ref")?, part(argument, "argument")?, context.map(|c| part(c, "context")).transpose()?))
}
use wire::Wire;

/// An MCP client connected to one server. Cheap to clone: clones share the connection.
///
/// Methods fail with an [`Error`] whose [`kind`](Error::kind) is stable: the server's JSON-RPC
/// errors keep their code (e.g. [`ErrorKind::InvalidParams`]), a lost connection is
/// [`ErrorKind::Transport`], a timeout [`ErrorKind::Timeout`], a cancellation
/// [`ErrorKind::Cancelled`], an answer that cannot be read [`ErrorKind::ParseError`].
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.inner.state();
        f.debug_struct("Client").field("era", &st.era).field("version", &st.version).finish_non_exhaustive()
    }
}

fn parse<T: DeserializeOwned>(method: &str, v: Value) -> Result<T> {
    serde_json::from_value(v)
        .map_err(|e| Error::new(ErrorKind::ParseError, format!("the server's {method} result is not valid: {e}")))
}

impl Client {
    fn check(options: &ClientOptions) -> Result<()> {
        if options.protocol_versions.is_empty() {
            return Err(Error::usage("ClientOptions::protocol_versions is empty: list at least one protocol version"));
        }
        Ok(())
    }

    async fn start(
        wire: Wire,
        rx: mpsc::UnboundedReceiver<transport::Inbound>,
        options: ClientOptions,
    ) -> Result<Client> {
        let inner = Arc::new(Inner::new(options, wire));
        let task = tokio::spawn(conn::unsolicited_loop(Arc::downgrade(&inner), rx));
        inner.background.lock().unwrap_or_else(|e| e.into_inner()).push(task);
        if let Err(e) = era::establish(&inner).await {
            inner.wire.close().await;
            return Err(e);
        }
        Ok(Client { inner })
    }

    /// Connects to the Streamable HTTP endpoint at `url` (`http://` or `https://`), finding
    /// out the server's era with its first request.
    pub async fn connect_http(url: &str, options: ClientOptions) -> Result<Client> {
        Client::check(&options)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let t = crate::transport::http::client::HttpTransport::new(url, &options, tx)?;
        Client::start(Wire::Http(t), rx, options).await
    }

    /// Spawns `command` with `args` as the server (stdin and stdout piped, stderr per
    /// [`ClientOptions::stderr`]) and connects to it. [`Client::close`] shuts it down: stdin
    /// closed, then SIGTERM, then SIGKILL to its process group. Dropping the last clone of an
    /// open client kills it.
    pub async fn connect_stdio<I, S>(command: impl AsRef<OsStr>, args: I, options: ClientOptions) -> Result<Client>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Client::check(&options)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let t = crate::transport::stdio::client::LineTransport::spawn(command.as_ref(), args, tx, &options)?;
        Client::start(Wire::Lines(Box::new(t)), rx, options).await
    }

    /// Connects over any pair of byte streams with stdio framing (a Unix socket, a TCP
    /// connection, an in-process pipe): `reader` carries the server's messages, `writer` the
    /// client's.
    pub async fn connect_with<R, W>(reader: R, writer: W, options: ClientOptions) -> Result<Client>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Client::check(&options)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let t = crate::transport::stdio::client::LineTransport::new(reader, writer, tx, &options);
        Client::start(Wire::Lines(Box::new(t)), rx, options).await
    }

    /// The era of the server.
    pub fn era(&self) -> Era {
        self.inner.state().era
    }

    /// The protocol version in use (sent with every modern request, or negotiated).
    pub fn protocol_version(&self) -> String {
        self.inner.state().version
    }

    /// The server's identity, when it told it.
    pub fn server_info(&self) -> Option<Implementation> {
        self.inner.state().server_info
    }

    /// The server's capabilities (from `server/discover` or `initialize`).
    pub fn server_capabilities(&self) -> ServerCapabilities {
        self.inner.state().capabilities
    }

    /// The server's instructions, if any.
    pub fn instructions(&self) -> Option<String> {
        self.inner.state().instructions
    }

    /// The process id of a server started by [`Client::connect_stdio`].
    pub fn process_id(&self) -> Option<u32> {
        self.inner.wire.process_id()
    }

    /// The `Mcp-Session-Id` of a legacy Streamable HTTP session.
    pub fn session_id(&self) -> Option<String> {
        match &self.inner.wire {
            Wire::Http(t) => t.session_id(),
            Wire::Lines(_) => None,
        }
    }

    /// HTTP: sets (`Some`) or removes (`None`) a header sent with every later request, e.g. a
    /// refreshed `Authorization`. Private cache entries follow the authorization in force.
    pub fn set_header(&self, name: &str, value: Option<&str>) -> Result<()> {
        match &self.inner.wire {
            Wire::Http(t) => t.set_header(name, value),
            Wire::Lines(_) => Err(Error::usage("HTTP headers exist only on an HTTP connection")),
        }
    }

    /// Forgets every cached result.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// Sends any request (with the pipeline of every method: `_meta`, headers, cache, MRTR,
    /// retries) and returns its result object. `params` is an object or `null`.
    pub async fn request(&self, method: &str, params: Value, options: CallOptions) -> Result<Value> {
        let params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => return Err(Error::usage("request params must be a JSON object")),
        };
        let result = self.inner.request(method, params, &options).await?;
        Ok(if method == "tools/list" { filter_tools(&self.inner, result) } else { result })
    }

    /// `server/discover`: versions, capabilities, instructions. In a legacy session, built from
    /// the `initialize` result.
    pub async fn discover(&self) -> Result<DiscoverResult> {
        let st = self.inner.state();
        if st.era == Era::Legacy {
            let mut d = DiscoverResult::new(vec![st.version], st.capabilities);
            d.instructions = st.instructions;
            if let Some(info) = st.server_info {
                let mut meta = Map::new();
                meta.insert(crate::schema::SERVER_INFO_META_KEY.into(), serde_json::to_value(info)?);
                d.meta = Some(meta);
            }
            return Ok(d);
        }
        let v = self.inner.request("server/discover", Map::new(), &CallOptions::default()).await?;
        parse("server/discover", v)
    }

    async fn list_page(&self, method: &str, cursor: Option<&str>) -> Result<Value> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), json!(c));
        }
        self.inner.request(method, params, &CallOptions::default()).await
    }

    async fn list_all<T: DeserializeOwned>(&self, method: &str, field: &str) -> Result<Vec<T>> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let mut page = self.list_page(method, cursor.as_deref()).await?;
            if method == "tools/list" {
                page = filter_tools(&self.inner, page);
            }
            let list = page.get_mut(field).map(Value::take).unwrap_or_else(|| json!([]));
            items.extend(parse::<Vec<T>>(method, list)?);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if seen.insert(c.to_owned()) => cursor = Some(c.to_owned()),
                Some(_) => {
                    return Err(Error::new(
                        ErrorKind::Remote,
                        format!("the server's {method} pages loop (a cursor came back)"),
                    ));
                }
                None => return Ok(items),
            }
        }
    }

    /// One page of `tools/list`. On HTTP, tools whose `x-mcp-header` annotations are invalid
    /// are left out (with a warning naming the tool and the reason).
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        let page = filter_tools(&self.inner, self.list_page("tools/list", cursor).await?);
        parse("tools/list", page)
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>> {
        self.list_all("tools/list", "tools").await
    }

    fn tool_call_params(name: &str, arguments: Value) -> Result<Map<String, Value>> {
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        match arguments {
            Value::Null => {}
            a @ Value::Object(_) => {
                params.insert("arguments".into(), a);
            }
            _ => return Err(Error::usage("tool arguments must be a JSON object")),
        }
        Ok(params)
    }

    /// `tools/call`. On HTTP the arguments of `x-mcp-header` parameters (as last listed) are
    /// mirrored into `Mcp-Param-*` headers. Input requests are answered by the input handlers.
    /// A call the server runs as a task (the Tasks extension) is followed to its result; see
    /// [`Client::call_tool_as_task`] to hold the task instead.
    pub async fn call_tool(&self, name: &str, arguments: Value, options: CallOptions) -> Result<CallToolResult> {
        let params = Client::tool_call_params(name, arguments)?;
        parse_tool_result(self.inner.request("tools/call", params, &options).await?)
    }

    /// `tools/call`, returning a [`ToolTask`] handle instead of following a task: its
    /// `task_id`, `status` (`tasks/get`), `result` (follows the task to its end) and `cancel`
    /// (`tasks/cancel`). When the server answers with the result itself (the tool does not
    /// run as a task), the handle is already complete with it. Dropping the handle does not
    /// cancel the task. The timeout, `_meta` and log level of `options` also serve the
    /// handle's later requests; its callbacks and cancellation token serve this `tools/call`
    /// only.
    ///
    /// ```no_run
    /// # use mcpaxle::client::{CallOptions, Client};
    /// # use serde_json::json;
    /// # async fn run(client: Client) -> mcpaxle::Result<()> {
    /// let task = client.call_tool_as_task("rebuild_index", json!({}), CallOptions::new()).await?;
    /// let saved = task.task_id().map(str::to_owned); // e.g. written to disk
    /// // ... later, perhaps after a restart:
    /// if let Some(id) = saved {
    ///     let result = client.task(&id).result().await?;
    /// #   let _ = result;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_as_task(&self, name: &str, arguments: Value, options: CallOptions) -> Result<ToolTask> {
        let params = Client::tool_call_params(name, arguments)?;
        let answer = self.inner.request_or_task("tools/call", params, &options, false).await?;
        ToolTask::from_answer(self.inner.clone(), answer, &options)
    }

    /// The handle of a task created earlier by a `tools/call` (by this client, or by another
    /// one with the same credentials, e.g. before the application restarted). Sends nothing:
    /// an unknown id fails at the handle's first request.
    pub fn task(&self, task_id: &str) -> ToolTask {
        ToolTask::from_id(self.inner.clone(), task_id)
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        parse("resources/list", self.list_page("resources/list", cursor).await?)
    }

    /// Every resource, following `nextCursor`.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.list_all("resources/list", "resources").await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(&self, cursor: Option<&str>) -> Result<ListResourceTemplatesResult> {
        parse("resources/templates/list", self.list_page("resources/templates/list", cursor).await?)
    }

    /// Every resource template, following `nextCursor`.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.list_all("resources/templates/list", "resourceTemplates").await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str, options: CallOptions) -> Result<ReadResourceResult> {
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        parse("resources/read", self.inner.request("resources/read", params, &options).await?)
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult> {
        parse("prompts/list", self.list_page("prompts/list", cursor).await?)
    }

    /// Every prompt, following `nextCursor`.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `prompts/get` with string arguments (none when empty).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: CallOptions,
    ) -> Result<GetPromptResult> {
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        if !arguments.is_empty() {
            params.insert("arguments".into(), json!(arguments));
        }
        parse("prompts/get", self.inner.request("prompts/get", params, &options).await?)
    }

    /// `completion/complete`: values for `argument` of a prompt or resource template.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: CompleteRequestArgument,
        context: Option<CompleteRequestContext>,
    ) -> Result<CompleteResult> {
        let mut params = Map::new();
        params.insert("ref".into(), serde_json::to_value(reference)?);
        params.insert("argument".into(), serde_json::to_value(argument)?);
        if let Some(c) = context {
            params.insert("context".into(), serde_json::to_value(c)?);
        }
        parse("completion/complete", self.inner.request("completion/complete", params, &CallOptions::default()).await?)
    }

    /// Opens a subscription to the change notifications `filter` asks for
    /// (`subscriptions/listen`, or `resources/subscribe` plus the session's notifications in a
    /// legacy session). Returns once the server acknowledged it.
    pub async fn subscribe(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        subscriptions::subscribe(&self.inner, filter).await
    }

    /// Closes the connection: pending calls fail, a legacy HTTP session is ended with DELETE,
    /// a stdio server is shut down (stdin closed, then SIGTERM, then SIGKILL).
    pub async fn close(&self) {
        self.inner.closed.cancel();
        self.inner.wire.close().await;
        for t in self.inner.background.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            t.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::completion_parts;
    use crate::error::ErrorKind;

    #[test]
    fn completion_parts_read_each_part_and_name_the_bad_one() {
        let (reference, argument, context) = completion_parts(
            r#"{"type": "ref/prompt", "name": "code_review"}"#,
            r#"{"name": "language", "value": "py"}"#,
            Some(r#"{"arguments": {"framework": "flask"}}"#),
        )
        .unwrap();
        assert_eq!(serde_json::to_value(reference).unwrap()["name"], "code_review");
        assert_eq!(argument.value, "py");
        assert!(context.is_some());
        assert!(
            completion_parts(
                r#"{"type": "ref/resource", "uri": "file:///{path}"}"#,
                r#"{"name": "path", "value": ""}"#,
                None
            )
            .unwrap()
            .2
            .is_none()
        );
        for (reference, argument, context, named) in [
            ("{", r#"{"name": "a", "value": "b"}"#, None, "the completion ref is not valid"),
            (
                r#"{"type": "ref/prompt", "name": "p"}"#,
                r#"{"name": "a"}"#,
                None,
                "the completion argument is not valid",
            ),
            (
                r#"{"type": "ref/prompt", "name": "p"}"#,
                r#"{"name": "a", "value": "b"}"#,
                Some("\"nope\""),
                "the completion context is not valid",
            ),
        ] {
            let e = completion_parts(reference, argument, context).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Usage);
            assert!(e.to_string().contains(named), "{e}");
        }
    }
}
