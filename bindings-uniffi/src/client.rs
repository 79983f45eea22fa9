//! The client: [`McpClient`] wraps [`mcpaxle::client::Client`]. Options go in as JSON (the
//! core's `ClientOptions` and `CallOptions`, read by [`mcpaxle::options`]), callbacks beside
//! them; results come back as the JSON of the core's result types.

use crate::callbacks::{self, Authorizer, InputHandler, NotificationListener, TokenStore};
use crate::errors::{McpError, parse_json, read_options, to_text, usage};
use crate::runtime;
use crate::subscription::McpSubscription;
use mcpaxle::client::{CallOptions, Client, ClientOptions, Era, ToolTask};
use mcpaxle::schema::SubscriptionFilter;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// How a client is configured.
#[derive(uniffi::Record)]
pub struct ClientConfig {
    /// The data options as JSON: the core's `ClientOptions` (`clientInfo`, `protocolVersions`,
    /// `requestTimeoutMs`, `headers`, `oauth`, `cache`, ...), camelCase names, durations in
    /// milliseconds. `{}` for the defaults.
    pub options_json: String,
    /// The input kinds `on_input` answers (`elicitation`, `sampling`, `roots`): the client
    /// declares those capabilities.
    #[uniffi(default = [])]
    pub input_kinds: Vec<String>,
    /// Answers the server's input requests (MRTR, or a legacy server's own requests).
    #[uniffi(default = None)]
    pub on_input: Option<Arc<dyn InputHandler>>,
    /// Receives log messages not tied to a call (`notifications/message` params).
    #[uniffi(default = None)]
    pub on_log: Option<Arc<dyn NotificationListener>>,
    /// OAuth's user-agent step (with the `oauth` option). None: the client fetches the
    /// authorization URL itself and follows its redirect, for servers that approve without a
    /// user.
    #[uniffi(default = None)]
    pub authorize: Option<Arc<dyn Authorizer>>,
    /// Where the OAuth tokens are kept (with the `oauth` option), instead of the memory of this
    /// client or the `tokenStore: {"file": ...}` option.
    #[uniffi(default = None)]
    pub token_store: Option<Arc<dyn TokenStore>>,
}

/// Options of one call.
#[derive(uniffi::Record, Default)]
pub struct CallConfig {
    /// The data options as JSON: the core's `CallOptions` (`timeoutMs`, `meta`, `logLevel`,
    /// `bypassCache`).
    #[uniffi(default = None)]
    pub options_json: Option<String>,
    /// Receives the call's `notifications/progress` params.
    #[uniffi(default = None)]
    pub on_progress: Option<Arc<dyn NotificationListener>>,
    /// Receives the call's `notifications/message` params.
    #[uniffi(default = None)]
    pub on_log: Option<Arc<dyn NotificationListener>>,
}

/// The lists a server pages through.
#[derive(uniffi::Enum, Clone, Copy, Debug)]
pub enum ListKind {
    /// `tools/list`
    Tools,
    /// `resources/list`
    Resources,
    /// `resources/templates/list`
    ResourceTemplates,
    /// `prompts/list`
    Prompts,
}

fn client_options(c: ClientConfig) -> Result<ClientOptions, McpError> {
    let mut o: ClientOptions = read_options(Some(&c.options_json), "the client options")?;
    if let Some(f) = c.on_input {
        for kind in c.input_kinds {
            match kind.as_str() {
                "elicitation" => o.elicitation = Some(callbacks::input_handler(f.clone(), "elicitation")),
                "sampling" => o.sampling = Some(callbacks::input_handler(f.clone(), "sampling")),
                "roots" => o.roots = Some(callbacks::input_handler(f.clone(), "roots")),
                _ => {
                    return Err(usage(format!(
                        "unknown input kind {kind:?} (expected elicitation, sampling or roots)"
                    )));
                }
            }
        }
    } else if !c.input_kinds.is_empty() {
        return Err(usage("input_kinds names kinds but there is no on_input handler to answer them"));
    }
    if let Some(f) = c.on_log {
        o.on_log = Some(callbacks::log(f));
    }
    if let Some(f) = c.authorize {
        let Some(oauth) = o.oauth.as_mut() else {
            return Err(usage("an authorize callback needs the \"oauth\" option"));
        };
        oauth.authorize = callbacks::authorization_handler(f);
    }
    if let Some(f) = c.token_store {
        let Some(oauth) = o.oauth.as_mut() else {
            return Err(usage("a token store needs the \"oauth\" option"));
        };
        oauth.token_store = Some(callbacks::token_store(f));
    }
    Ok(o)
}

fn call_options(c: Option<CallConfig>) -> Result<CallOptions, McpError> {
    let c = c.unwrap_or_default();
    let mut o: CallOptions = match c.options_json {
        Some(json) => read_options(Some(&json), "the call options")?,
        None => CallOptions::new(),
    };
    o.on_progress = c.on_progress.map(callbacks::progress);
    o.on_log = c.on_log.map(callbacks::log);
    Ok(o)
}

/// Connects to a Streamable HTTP endpoint (`http://` or `https://`); the server's era is found
/// with the first request.
#[uniffi::export]
pub async fn connect_http(url: String, config: ClientConfig) -> Result<Arc<McpClient>, McpError> {
    let options = client_options(config)?;
    let client = runtime::run(async move { Client::connect_http(&url, options).await }).await?;
    Ok(Arc::new(McpClient { client }))
}

/// Spawns `command` with `args` and connects to it over stdio (the `env`, `cwd`, `stderr`
/// options say how).
#[uniffi::export]
pub async fn connect_stdio(
    command: String,
    args: Vec<String>,
    config: ClientConfig,
) -> Result<Arc<McpClient>, McpError> {
    let options = client_options(config)?;
    let client = runtime::run(async move { Client::connect_stdio(&command, &args, options).await }).await?;
    Ok(Arc::new(McpClient { client }))
}

/// The protocol revisions the client speaks, most preferred first.
#[uniffi::export]
pub fn supported_versions() -> Vec<String> {
    mcpaxle::client::SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect()
}

/// Fills the members of an elicitation's `content` that the `requestedSchema` gives a default
/// for and the user left out (SEP-1034); returns the completed content (JSON).
#[uniffi::export]
pub fn apply_schema_defaults(requested_schema_json: String, content_json: Option<String>) -> Result<String, McpError> {
    let schema = parse_json(Some(&requested_schema_json), "the requested schema")?;
    let mut content = match parse_json(content_json.as_deref(), "the content")? {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => serde_json::Map::new(),
        _ => return Err(usage("the content must be a JSON object")),
    };
    mcpaxle::client::apply_schema_defaults(&schema, &mut content);
    Ok(serde_json::Value::Object(content).to_string())
}

/// A client connected to one server. Every call may run concurrently with the others.
#[derive(uniffi::Object)]
pub struct McpClient {
    client: Client,
}

#[uniffi::export]
impl McpClient {
    /// `modern` (2026-07-28, per-request `_meta`) or `legacy` (an `initialize` session).
    pub fn era(&self) -> String {
        match self.client.era() {
            Era::Modern => "modern".into(),
            Era::Legacy => "legacy".into(),
        }
    }

    /// The protocol revision in use.
    pub fn protocol_version(&self) -> String {
        self.client.protocol_version()
    }

    /// What the client knows of the server, as JSON: `era`, `protocolVersion`, `serverInfo`,
    /// `capabilities`, `instructions`, `pid` (stdio), `sessionId` (legacy HTTP).
    pub fn info(&self) -> String {
        let c = &self.client;
        json!({
            "era": self.era(),
            "protocolVersion": c.protocol_version(),
            "serverInfo": c.server_info(),
            "capabilities": c.server_capabilities(),
            "instructions": c.instructions(),
            "pid": c.process_id(),
            "sessionId": c.session_id(),
        })
        .to_string()
    }

    /// Sets (or, with no value, removes) an HTTP header sent with every later request.
    pub fn set_header(&self, name: String, value: Option<String>) -> Result<(), McpError> {
        Ok(self.client.set_header(&name, value.as_deref())?)
    }

    /// Forgets every cached result.
    pub fn clear_cache(&self) {
        self.client.clear_cache();
    }

    /// `server/discover` (built from `initialize` in a legacy session), as JSON.
    pub async fn discover(&self) -> Result<String, McpError> {
        let c = self.client.clone();
        runtime::run(async move { to_text(&c.discover().await?) }).await
    }

    /// One page of a list (the `*ListResult` as JSON, `nextCursor` included).
    pub async fn list(&self, what: ListKind, cursor: Option<String>) -> Result<String, McpError> {
        let c = self.client.clone();
        runtime::run(async move {
            let cursor = cursor.as_deref();
            match what {
                ListKind::Tools => to_text(&c.list_tools(cursor).await?),
                ListKind::Resources => to_text(&c.list_resources(cursor).await?),
                ListKind::ResourceTemplates => to_text(&c.list_resource_templates(cursor).await?),
                ListKind::Prompts => to_text(&c.list_prompts(cursor).await?),
            }
        })
        .await
    }

    /// Every item of a list, following `nextCursor` (a JSON array).
    pub async fn list_all(&self, what: ListKind) -> Result<String, McpError> {
        let c = self.client.clone();
        runtime::run(async move {
            match what {
                ListKind::Tools => to_text(&c.list_all_tools().await?),
                ListKind::Resources => to_text(&c.list_all_resources().await?),
                ListKind::ResourceTemplates => to_text(&c.list_all_resource_templates().await?),
                ListKind::Prompts => to_text(&c.list_all_prompts().await?),
            }
        })
        .await
    }

    /// `tools/call` (`arguments_json` an object, none for no arguments): the `CallToolResult`
    /// as JSON. A tool's own failure is a result with `isError`, not an error.
    pub async fn call_tool(
        &self,
        name: String,
        arguments_json: Option<String>,
        call: Option<CallConfig>,
    ) -> Result<String, McpError> {
        let c = self.client.clone();
        let args = parse_json(arguments_json.as_deref(), "the tool arguments")?;
        let options = call_options(call)?;
        runtime::run(async move { to_text(&c.call_tool(&name, args, options).await?) }).await
    }

    /// `tools/call` held as a task (the Tasks extension): its handle, at once.
    pub async fn call_tool_as_task(
        &self,
        name: String,
        arguments_json: Option<String>,
        call: Option<CallConfig>,
    ) -> Result<Arc<McpToolTask>, McpError> {
        let c = self.client.clone();
        let args = parse_json(arguments_json.as_deref(), "the tool arguments")?;
        let options = call_options(call)?;
        let task = runtime::run(async move { c.call_tool_as_task(&name, args, options).await }).await?;
        Ok(Arc::new(McpToolTask { task }))
    }

    /// The handle of a task created earlier; sends nothing.
    pub fn task(&self, task_id: String) -> Arc<McpToolTask> {
        Arc::new(McpToolTask { task: self.client.task(&task_id) })
    }

    /// `resources/read`: the `ReadResourceResult` as JSON.
    pub async fn read_resource(&self, uri: String, call: Option<CallConfig>) -> Result<String, McpError> {
        let c = self.client.clone();
        let options = call_options(call)?;
        runtime::run(async move { to_text(&c.read_resource(&uri, options).await?) }).await
    }

    /// `prompts/get` (`arguments` strings by name): the `GetPromptResult` as JSON.
    pub async fn get_prompt(
        &self,
        name: String,
        arguments: HashMap<String, String>,
        call: Option<CallConfig>,
    ) -> Result<String, McpError> {
        let c = self.client.clone();
        let options = call_options(call)?;
        runtime::run(async move {
            to_text(&c.get_prompt(&name, arguments.into_iter().collect::<BTreeMap<_, _>>(), options).await?)
        })
        .await
    }

    /// `completion/complete`: `ref_json` (`{"type": "ref/prompt", "name"}` or
    /// `{"type": "ref/resource", "uri"}`), `argument_json` (`{"name", "value"}`), optional
    /// `context_json` (`{"arguments": {...}}`): the `CompleteResult` as JSON.
    pub async fn complete(
        &self,
        ref_json: String,
        argument_json: String,
        context_json: Option<String>,
    ) -> Result<String, McpError> {
        let c = self.client.clone();
        let (reference, argument, context) =
            mcpaxle::client::completion_parts(&ref_json, &argument_json, context_json.as_deref())?;
        runtime::run(async move { to_text(&c.complete(reference, argument, context).await?) }).await
    }

    /// Any request, through the whole pipeline (`_meta`, headers, cache, MRTR, retries): the
    /// result as JSON.
    pub async fn request(
        &self,
        method: String,
        params_json: Option<String>,
        call: Option<CallConfig>,
    ) -> Result<String, McpError> {
        let c = self.client.clone();
        let params = parse_json(params_json.as_deref(), "the params")?;
        let options = call_options(call)?;
        runtime::run(async move { to_text(&c.request(&method, params, options).await?) }).await
    }

    /// Subscribes to change notifications: `filter_json` is a `SubscriptionFilter`
    /// (`{"toolsListChanged": true, "resourceSubscriptions": ["uri"], ...}`). Returns once the
    /// server acknowledged it.
    pub async fn subscribe(&self, filter_json: String) -> Result<Arc<McpSubscription>, McpError> {
        let c = self.client.clone();
        let filter: SubscriptionFilter = serde_json::from_str(&filter_json)
            .map_err(|e| usage(format!("the subscription filter is not valid: {e}")))?;
        let sub = runtime::run(async move { McpSubscription::new(c.subscribe(filter).await?) }).await?;
        Ok(Arc::new(sub))
    }

    /// Closes the connection: pending calls fail, a legacy HTTP session is ended, a stdio
    /// server is shut down. (Not `close`: the generated class is an `AutoCloseable`, whose
    /// `close()` frees the native handle.)
    pub async fn disconnect(&self) -> Result<(), McpError> {
        let c = self.client.clone();
        runtime::run(async move {
            c.close().await;
            Ok(())
        })
        .await
    }
}

/// A `tools/call` held as a task. Dropping it does not cancel the task.
#[derive(uniffi::Object)]
pub struct McpToolTask {
    task: ToolTask,
}

#[uniffi::export]
impl McpToolTask {
    /// The task's id, none when the server answered with the result at once.
    pub fn task_id(&self) -> Option<String> {
        self.task.task_id().map(str::to_owned)
    }

    /// `tasks/get`: the `DetailedTask` as JSON.
    pub async fn status(&self) -> Result<String, McpError> {
        let t = self.task.clone();
        runtime::run(async move { to_text(&t.status().await?) }).await
    }

    /// The call's `CallToolResult` as JSON, the task followed to its end.
    pub async fn result(&self) -> Result<String, McpError> {
        let t = self.task.clone();
        runtime::run(async move { to_text(&t.result().await?) }).await
    }

    /// `tasks/cancel`.
    pub async fn cancel(&self) -> Result<(), McpError> {
        let t = self.task.clone();
        runtime::run(async move { t.cancel().await }).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(options: serde_json::Value) -> ClientConfig {
        ClientConfig {
            options_json: options.to_string(),
            input_kinds: vec![],
            on_input: None,
            on_log: None,
            authorize: None,
            token_store: None,
        }
    }

    /// Every option of the core's client areas (`catalog::examples()`: a valid value for each)
    /// goes through the binding to the core: an option added in the core is in the examples, so
    /// this fails if the binding stops handing its JSON over.
    #[test]
    fn every_client_option_of_the_core_reaches_the_binding() {
        let ex = mcpaxle::catalog::examples();
        let mut client = ex["client"].clone();
        client["oauth"] = ex["oauth"].clone();
        let o = client_options(config(client)).unwrap();
        assert!(o.oauth.is_some());
        assert_eq!(o.max_input_rounds, 8);
        let call = call_options(Some(CallConfig { options_json: Some(ex["call"].to_string()), ..Default::default() }));
        assert_eq!(call.unwrap().timeout, Some(std::time::Duration::from_millis(5000)));
    }

    #[test]
    fn refused_options_name_what_is_wrong() {
        let McpError::Mcp { kind, reason, .. } = client_options(config(json!({ "noSuchOption": 1 }))).err().unwrap();
        assert_eq!(kind, "usage", "an option the core refuses is a misuse, as in every binding");
        assert!(reason.contains("noSuchOption"), "{reason}");
        let mut c = config(json!({}));
        c.input_kinds = vec!["elicitation".into()];
        let McpError::Mcp { kind, .. } = client_options(c).err().unwrap();
        assert_eq!(kind, "usage", "input kinds without a handler");
    }
}
