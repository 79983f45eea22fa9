//! The client: [`NativeClient`] wraps [`mcpaxle::client::Client`]; each method converts its
//! arguments, calls the core and hands back JSON text (the JavaScript layer parses it, which is
//! faster than building objects property by property through Node-API).

use crate::callbacks::{self, AuthorizeFn, EventFn, INPUT_KINDS, InputFn, StrongEventFn};
use crate::cancel::{CancelToken, until_cancelled};
use crate::errors::{self, parse_json, to_napi, to_text, usage};
use crate::runtime;
use crate::server::NativeServer;
use crate::subscription::NativeSubscription;
use mcpaxle::client::{CallOptions, Client, ClientOptions, ToolTask};
use mcpaxle::schema::SubscriptionFilter;
use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Result};
use napi_derive::napi;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a client is configured: the JavaScript layer sends the data options of `connectHttp` /
/// `connectStdio` as JSON (the core reads them: [`ClientOptions`]) and the callbacks beside.
#[napi(object, object_to_js = false)]
pub struct ClientConfig {
    /// The data options as JSON: the core's `ClientOptions` (`clientInfo`, `requestTimeoutMs`,
    /// `oauth`, ...), camelCase names, durations in milliseconds.
    pub options_json: String,
    /// The input kinds (`elicitation`, `sampling`, `roots`) answered by `on_input`.
    pub input_kinds: Option<Vec<String>>,
    /// Answers the server's input requests: `(kind, paramsJson) => Promise<envelope>`.
    #[napi(ts_type = "(kind: string, paramsJson: string) => Promise<string>")]
    pub on_input: Option<InputFn>,
    /// Receives log messages not tied to a call (`notifications/message` params as JSON).
    #[napi(ts_type = "(json: string) => void")]
    pub on_log: Option<EventFn>,
    /// OAuth's user-agent step (with the `oauth` option): `(authorizationUrl) =>
    /// Promise<envelope>` whose `ok` is the URL the authorization server redirected to. None:
    /// the authorization URL is fetched and its redirect followed, without a user.
    #[napi(ts_type = "(authorizationUrl: string) => Promise<string>")]
    pub authorize: Option<AuthorizeFn>,
    /// A token store of the application's own (with the `oauth` option): `(requestJson) =>
    /// Promise<envelope>`, each of the core's store operations as JSON (`{"op": "load" | "save"
    /// | "clear", "key", "token"?}`), the envelope's `ok` the loaded token or null.
    #[napi(ts_type = "(requestJson: string) => Promise<string>")]
    pub token_store: Option<AuthorizeFn>,
}

/// Options of one call.
#[napi(object, object_to_js = false)]
pub struct CallConfig {
    /// The data options as JSON: the core's `CallOptions` (`timeoutMs`, `meta`, `logLevel`,
    /// `bypassCache`).
    pub options_json: Option<String>,
}

fn client_options(c: ClientConfig) -> Result<ClientOptions> {
    let mut o: ClientOptions = mcpaxle::options::from_str("the client options", &c.options_json).map_err(to_napi)?;
    if let Some(f) = c.on_input {
        let f = Arc::new(f);
        for kind in c.input_kinds.unwrap_or_default() {
            let Some(kind) = INPUT_KINDS.iter().copied().find(|k| *k == kind) else {
                return Err(usage(format!("unknown input kind {kind:?} (expected elicitation, sampling or roots)")));
            };
            let h = callbacks::input_handler(f.clone(), kind);
            match kind {
                "elicitation" => o.elicitation = Some(h),
                "sampling" => o.sampling = Some(h),
                _ => o.roots = Some(h),
            }
        }
    }
    if let Some(f) = c.on_log {
        o.on_log = Some(callbacks::log(f));
    }
    if let (Some(oauth), Some(f)) = (o.oauth.as_mut(), c.authorize) {
        let handler = callbacks::authorization_handler(f);
        oauth.authorize = Arc::new(move |url| handler(url));
    }
    if let (Some(oauth), Some(f)) = (o.oauth.as_mut(), c.token_store) {
        oauth.token_store = Some(callbacks::token_store(f));
    }
    Ok(o)
}

fn call_options(
    c: Option<CallConfig>,
    on_progress: Option<EventFn>,
    on_log: Option<EventFn>,
    cancel: Option<&CancelToken>,
) -> Result<CallOptions> {
    let mut o: CallOptions = match c.and_then(|c| c.options_json) {
        Some(json) => mcpaxle::options::from_str("the call options", &json).map_err(to_napi)?,
        None => CallOptions::new(),
    };
    o.on_progress = on_progress.map(callbacks::progress);
    o.on_log = on_log.map(callbacks::log);
    o.cancel = cancel.map(CancelToken::token);
    Ok(o)
}

/// Connects to a Streamable HTTP endpoint.
#[napi]
pub fn connect_http<'env>(env: &'env Env, url: String, config: ClientConfig) -> Result<PromiseRaw<'env, NativeClient>> {
    let options = client_options(config)?;
    runtime::promise(env, async move { Ok(NativeClient { client: Client::connect_http(&url, options).await? }) })
}

/// Spawns a server and connects to it over stdio.
#[napi]
pub fn connect_stdio<'env>(
    env: &'env Env,
    command: String,
    args: Vec<String>,
    config: ClientConfig,
) -> Result<PromiseRaw<'env, NativeClient>> {
    let options = client_options(config)?;
    runtime::promise(
        env,
        async move { Ok(NativeClient { client: Client::connect_stdio(&command, &args, options).await? }) },
    )
}

/// Connects to `server`, served in this process over an in-memory pipe (the core's
/// `Client::connect_in_memory`): no port, no child process.
#[napi]
pub fn connect_in_memory<'env>(
    env: &'env Env,
    server: &NativeServer,
    config: ClientConfig,
) -> Result<PromiseRaw<'env, NativeClient>> {
    let options = client_options(config)?;
    let server = server.core().clone();
    runtime::promise(
        env,
        async move { Ok(NativeClient { client: Client::connect_in_memory(&server, options).await? }) },
    )
}

/// A connected client (the JavaScript `Client` wraps it).
#[napi]
pub struct NativeClient {
    client: Client,
}

#[napi]
impl NativeClient {
    /// What the client knows of the server, as JSON: `era`, `protocolVersion`, `serverInfo`,
    /// `capabilities`, `instructions`, `pid`, `sessionId`.
    #[napi]
    pub fn info(&self) -> Result<String> {
        let c = &self.client;
        let v = json!({
            "era": match c.era() { mcpaxle::client::Era::Modern => "modern", mcpaxle::client::Era::Legacy => "legacy" },
            "protocolVersion": c.protocol_version(),
            "serverInfo": c.server_info(),
            "capabilities": c.server_capabilities(),
            "instructions": c.instructions(),
            "pid": c.process_id(),
            "sessionId": c.session_id(),
        });
        Ok(v.to_string())
    }

    /// Sets (or, with no value, removes) an HTTP header sent with every later request.
    #[napi]
    pub fn set_header(&self, name: String, value: Option<String>) -> Result<()> {
        self.client.set_header(&name, value.as_deref()).map_err(errors::to_napi)
    }

    /// Forgets every cached result.
    #[napi]
    pub fn clear_cache(&self) {
        self.client.clear_cache();
    }

    /// `server/discover` (built from `initialize` in a legacy session).
    #[napi]
    pub fn discover<'env>(&self, env: &'env Env, cancel: Option<&CancelToken>) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move { to_text(&until_cancelled(cancel, "server/discover", c.discover()).await?) })
    }

    /// One page of a list: `what` is `tools`, `resources`, `resourceTemplates` or `prompts`.
    #[napi]
    pub fn list<'env>(
        &self,
        env: &'env Env,
        what: String,
        cursor: Option<String>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let method = list_method(&what)?;
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move {
            let cursor = cursor.as_deref();
            until_cancelled(cancel, method, async {
                match what.as_str() {
                    "tools" => to_text(&c.list_tools(cursor).await?),
                    "resources" => to_text(&c.list_resources(cursor).await?),
                    "resourceTemplates" => to_text(&c.list_resource_templates(cursor).await?),
                    _ => to_text(&c.list_prompts(cursor).await?),
                }
            })
            .await
        })
    }

    /// Every item of a list, following `nextCursor` (a JSON array).
    #[napi]
    pub fn list_all<'env>(
        &self,
        env: &'env Env,
        what: String,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let method = list_method(&what)?;
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move {
            until_cancelled(cancel, method, async {
                match what.as_str() {
                    "tools" => to_text(&c.list_all_tools().await?),
                    "resources" => to_text(&c.list_all_resources().await?),
                    "resourceTemplates" => to_text(&c.list_all_resource_templates().await?),
                    _ => to_text(&c.list_all_prompts().await?),
                }
            })
            .await
        })
    }

    /// `tools/call`.
    #[napi]
    #[allow(clippy::too_many_arguments)] // the native layer takes each option as it is
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments_json: Option<String>,
        config: Option<CallConfig>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_progress: Option<EventFn>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_log: Option<EventFn>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let args = parse_json(arguments_json.as_deref(), "the tool arguments")?;
        let options = call_options(config, on_progress, on_log, cancel)?;
        runtime::promise(env, async move { to_text(&c.call_tool(&name, args, options).await?) })
    }

    /// `tools/call` held as a task (the core's `Client::call_tool_as_task`): the handle.
    #[napi]
    #[allow(clippy::too_many_arguments)] // the native layer takes each option as it is
    pub fn call_tool_as_task<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments_json: Option<String>,
        config: Option<CallConfig>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_progress: Option<EventFn>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_log: Option<EventFn>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, NativeToolTask>> {
        let c = self.client.clone();
        let args = parse_json(arguments_json.as_deref(), "the tool arguments")?;
        let options = call_options(config, on_progress, on_log, cancel)?;
        runtime::promise(
            env,
            async move { Ok(NativeToolTask { task: c.call_tool_as_task(&name, args, options).await? }) },
        )
    }

    /// The handle of a task created earlier (the core's `Client::task`); sends nothing.
    #[napi]
    pub fn task(&self, task_id: String) -> NativeToolTask {
        NativeToolTask { task: self.client.task(&task_id) }
    }

    /// `resources/read`.
    #[napi]
    pub fn read_resource<'env>(
        &self,
        env: &'env Env,
        uri: String,
        config: Option<CallConfig>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_progress: Option<EventFn>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let options = call_options(config, on_progress, None, cancel)?;
        runtime::promise(env, async move { to_text(&c.read_resource(&uri, options).await?) })
    }

    /// `prompts/get` (arguments a JSON object of strings).
    #[napi]
    #[allow(clippy::too_many_arguments)] // the native layer takes each option as it is
    pub fn get_prompt<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments_json: Option<String>,
        config: Option<CallConfig>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_progress: Option<EventFn>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let arguments: BTreeMap<String, String> = match arguments_json {
            None => BTreeMap::new(),
            Some(a) => serde_json::from_str(&a)
                .map_err(|e| usage(format!("prompt arguments must be an object of strings: {e}")))?,
        };
        let options = call_options(config, on_progress, None, cancel)?;
        runtime::promise(env, async move { to_text(&c.get_prompt(&name, arguments, options).await?) })
    }

    /// `completion/complete`: `ref` (`{"type": "ref/prompt", "name"}` or
    /// `{"type": "ref/resource", "uri"}`), `argument` (`{"name", "value"}`), optional `context`.
    #[napi]
    pub fn complete<'env>(
        &self,
        env: &'env Env,
        ref_json: String,
        argument_json: String,
        context_json: Option<String>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let (reference, argument, context) =
            mcpaxle::client::completion_parts(&ref_json, &argument_json, context_json.as_deref()).map_err(to_napi)?;
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move {
            to_text(&until_cancelled(cancel, "completion/complete", c.complete(reference, argument, context)).await?)
        })
    }

    /// Any request, with the whole pipeline (`_meta`, headers, cache, MRTR, retries).
    #[napi]
    #[allow(clippy::too_many_arguments)] // the native layer takes each option as it is
    pub fn request<'env>(
        &self,
        env: &'env Env,
        method: String,
        params_json: Option<String>,
        config: Option<CallConfig>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_progress: Option<EventFn>,
        #[napi(ts_arg_type = "((json: string) => void) | undefined | null")] on_log: Option<EventFn>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.client.clone();
        let params = parse_json(params_json.as_deref(), "the request params")?;
        let options = call_options(config, on_progress, on_log, cancel)?;
        runtime::promise(env, async move { to_text(&c.request(&method, params, options).await?) })
    }

    /// Opens a subscription (`filterJson` a `SubscriptionFilter`); `deliver` receives each batch
    /// of notifications as JSON, then the end of the stream.
    #[napi]
    pub fn subscribe<'env>(
        &self,
        env: &'env Env,
        filter_json: String,
        #[napi(ts_arg_type = "(json: string) => void")] deliver: StrongEventFn,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, NativeSubscription>> {
        let c = self.client.clone();
        let filter: SubscriptionFilter = serde_json::from_str(&filter_json)
            .map_err(|e| usage(format!("the subscription filter is not valid: {e}")))?;
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move {
            let sub = until_cancelled(cancel, "subscriptions/listen", c.subscribe(filter)).await?;
            NativeSubscription::start(sub, deliver)
        })
    }

    /// Closes the connection: pending calls fail, a stdio server is shut down.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let c = self.client.clone();
        runtime::promise(env, async move {
            c.close().await;
            Ok(())
        })
    }
}

/// A `tools/call` held as a task (the core's `ToolTask`; the JavaScript `ToolTask` wraps it).
/// Dropping it does not cancel the task; a `cancel` token stops a wait, not the task.
#[napi]
pub struct NativeToolTask {
    task: ToolTask,
}

#[napi]
impl NativeToolTask {
    /// The task's id, none when the server answered with the result at once.
    #[napi(getter)]
    pub fn task_id(&self) -> Option<String> {
        self.task.task_id().map(str::to_owned)
    }

    /// `tasks/get`: the `DetailedTask` as JSON.
    #[napi]
    pub fn status<'env>(&self, env: &'env Env, cancel: Option<&CancelToken>) -> Result<PromiseRaw<'env, String>> {
        let t = self.task.clone();
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move { to_text(&until_cancelled(cancel, "tasks/get", t.status()).await?) })
    }

    /// The call's result as JSON, the task followed to its end.
    #[napi]
    pub fn result<'env>(&self, env: &'env Env, cancel: Option<&CancelToken>) -> Result<PromiseRaw<'env, String>> {
        let t = self.task.clone();
        let cancel = cancel.map(CancelToken::token);
        runtime::promise(env, async move { to_text(&until_cancelled(cancel, "tasks/get", t.result()).await?) })
    }

    /// `tasks/cancel`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cancel<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let t = self.task.clone();
        runtime::promise(env, async move { t.cancel().await })
    }
}

/// The method of a list (`what` as `list` and `list_all` take it).
fn list_method(what: &str) -> Result<&'static str> {
    match what {
        "tools" => Ok("tools/list"),
        "resources" => Ok("resources/list"),
        "resourceTemplates" => Ok("resources/templates/list"),
        "prompts" => Ok("prompts/list"),
        _ => Err(usage(format!("unknown list {what:?}"))),
    }
}

/// Fills the members of an elicitation's `content` that the `requestedSchema` gives a default
/// for and the user left out (SEP-1034); returns the completed content (JSON).
#[napi]
pub fn apply_schema_defaults(requested_schema_json: String, content_json: Option<String>) -> Result<String> {
    let schema = parse_json(Some(&requested_schema_json), "the requested schema")?;
    let mut content = match parse_json(content_json.as_deref(), "the content")? {
        Value::Object(m) => m,
        Value::Null => serde_json::Map::new(),
        _ => return Err(usage("the content must be a JSON object")),
    };
    mcpaxle::client::apply_schema_defaults(&schema, &mut content);
    Ok(Value::Object(content).to_string())
}

/// The protocol revisions the client speaks, most preferred first.
#[napi]
pub fn supported_versions() -> Vec<String> {
    mcpaxle::client::SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect()
}
