//! The client: [`NativeClient`] wraps [`mcpaxle::client::Client`]; each method converts its
//! arguments, calls the core and hands back JSON text (the JavaScript layer parses it, which is
//! faster than building objects property by property through Node-API).

use crate::callbacks::{self, AuthorizeFn, EventFn, INPUT_KINDS, InputFn, StrongEventFn};
use crate::cancel::{CancelToken, until_cancelled};
use crate::errors::{self, parse_json, to_text, usage};
use crate::runtime;
use crate::subscription::NativeSubscription;
use mcpaxle::client::{CallOptions, Client, ClientOptions, OAuthOptions, StderrMode};
use mcpaxle::schema::{
    CompleteRequestArgument, CompleteRequestContext, CompletionReference, Implementation, LoggingLevel,
    SubscriptionFilter,
};
use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Result};
use napi_derive::napi;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// How a client is configured (the JavaScript layer fills it from `connectHttp` /
/// `connectStdio` options).
#[napi(object, object_to_js = false)]
pub struct ClientConfig {
    /// `clientInfo` as JSON (`name`, `version`, optional `title`, …).
    pub client_info_json: Option<String>,
    /// Protocol revisions the client may speak, most preferred first.
    pub protocol_versions: Option<Vec<String>>,
    /// Per-request timeout in milliseconds (default 60 000).
    pub timeout_ms: Option<f64>,
    /// The longest a request may take however much progress it reports (default 600 000).
    pub max_timeout_ms: Option<f64>,
    /// Whether a progress notification restarts the timeout (default true).
    pub reset_timeout_on_progress: Option<bool>,
    /// stdio: how long the `server/discover` probe waits before assuming a legacy server.
    pub probe_timeout_ms: Option<f64>,
    /// Whether results are cached per their `ttlMs` / `cacheScope` (default true).
    pub cache: Option<bool>,
    /// HTTP headers sent with every request.
    pub headers: Option<HashMap<String, String>>,
    /// Declared capabilities as JSON; default: one per handled input kind.
    pub capabilities_json: Option<String>,
    /// The input kinds (`elicitation`, `sampling`, `roots`) answered by `on_input`.
    pub input_kinds: Option<Vec<String>>,
    /// Answers the server's input requests: `(kind, paramsJson) => Promise<envelope>`.
    #[napi(ts_type = "(kind: string, paramsJson: string) => Promise<string>")]
    pub on_input: Option<InputFn>,
    /// Receives log messages not tied to a call (`notifications/message` params as JSON).
    #[napi(ts_type = "(json: string) => void")]
    pub on_log: Option<EventFn>,
    /// The log level asked of the server.
    pub log_level: Option<String>,
    /// How many MRTR rounds one call may take (default 8).
    pub max_input_rounds: Option<u32>,
    /// Legacy HTTP sessions: whether to open the GET stream (default true).
    pub legacy_get_stream: Option<bool>,
    /// The largest message accepted from the server, in bytes.
    pub max_message_size: Option<u32>,
    /// stdio: environment variables given to the server, on top of the few it inherits.
    pub env: Option<HashMap<String, String>>,
    /// stdio: whether the server inherits this process's whole environment (default false:
    /// only HOME, LOGNAME, PATH, SHELL, TERM and USER, plus `env`, so the host's secrets do not
    /// leak into every server it starts).
    pub inherit_env: Option<bool>,
    /// stdio: the server's working directory.
    pub cwd: Option<String>,
    /// stdio: `"inherit"` (default) or `"ignore"` for the server's standard error.
    pub stderr: Option<String>,
    /// stdio: how long `close()` waits after closing stdin, and after SIGTERM.
    pub shutdown_timeout_ms: Option<f64>,
    /// HTTP: OAuth 2.1 authorization, used when the server answers `401` or `403
    /// insufficient_scope`.
    pub oauth: Option<OAuthConfig>,
}

/// How a client obtains access tokens (the core's [`OAuthOptions`]).
#[napi(object, object_to_js = false)]
pub struct OAuthConfig {
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// The user-agent step: `(authorizationUrl) => Promise<envelope>` whose `ok` is the URL the
    /// authorization server redirected to. None: the authorization URL is fetched and its
    /// redirect followed, without a user ([`OAuthOptions::without_user`]).
    #[napi(ts_type = "(authorizationUrl: string) => Promise<string>")]
    pub authorize: Option<AuthorizeFn>,
    /// Pre-registered `client_id`.
    pub client_id: Option<String>,
    /// Pre-registered `client_secret` (with `client_id`).
    pub client_secret: Option<String>,
    /// The issuer the pre-registered credentials belong to (with `client_id`).
    pub issuer: Option<String>,
    /// The HTTPS URL of this client's Client ID Metadata Document.
    pub client_metadata_url: Option<String>,
    /// `client_name` in Dynamic Client Registration (default: the client's name).
    pub client_name: Option<String>,
    /// How many authorization flows one request may trigger (default 3).
    pub max_authorizations: Option<u32>,
}

/// Options of one call.
#[napi(object, object_to_js = false)]
pub struct CallConfig {
    /// Timeout of each round trip of this call, in milliseconds.
    pub timeout_ms: Option<f64>,
    /// Extra `_meta` members as JSON.
    pub meta_json: Option<String>,
    /// Skip the cache for this call.
    pub bypass_cache: Option<bool>,
    /// The log level asked of the server for this call.
    pub log_level: Option<String>,
}

fn millis(ms: f64, what: &str) -> Result<Duration> {
    if !ms.is_finite() || ms < 0.0 {
        return Err(usage(format!("{what} must be a non-negative number of milliseconds, not {ms}")));
    }
    Ok(Duration::from_secs_f64(ms / 1000.0))
}

fn log_level(level: &str) -> Result<LoggingLevel> {
    serde_json::from_value(json!(level)).map_err(|_| usage(format!("unknown log level {level:?}")))
}

fn oauth_options(c: OAuthConfig) -> Result<OAuthOptions> {
    let mut o = match c.authorize {
        Some(f) => {
            let handler = callbacks::authorization_handler(f);
            OAuthOptions::new(c.redirect_uri, move |url| handler(url))
        }
        None => OAuthOptions::without_user(c.redirect_uri).map_err(errors::to_napi)?,
    };
    match c.client_id {
        Some(id) => o = o.pre_registered(id, c.client_secret, c.issuer),
        None if c.client_secret.is_some() || c.issuer.is_some() => {
            return Err(usage(
                "oauth.clientSecret and oauth.issuer describe pre-registered credentials: pass oauth.clientId with them",
            ));
        }
        None => {}
    }
    if let Some(url) = c.client_metadata_url {
        o = o.client_metadata_url(url);
    }
    if let Some(name) = c.client_name {
        o = o.client_name(name);
    }
    if let Some(n) = c.max_authorizations {
        o.max_authorizations = n;
    }
    Ok(o)
}

fn client_options(c: ClientConfig) -> Result<ClientOptions> {
    let mut o = ClientOptions::default();
    if let Some(info) = c.client_info_json {
        o.client_info = serde_json::from_str::<Implementation>(&info)
            .map_err(|e| usage(format!("clientInfo is not valid: {e}")))?;
    }
    if let Some(v) = c.protocol_versions {
        o.protocol_versions = v;
    }
    if let Some(ms) = c.timeout_ms {
        o.request_timeout = millis(ms, "timeoutMs")?;
    }
    if let Some(ms) = c.max_timeout_ms {
        o.max_request_timeout = millis(ms, "maxTimeoutMs")?;
    }
    if let Some(b) = c.reset_timeout_on_progress {
        o.reset_timeout_on_progress = b;
    }
    if let Some(ms) = c.probe_timeout_ms {
        o.probe_timeout = millis(ms, "probeTimeoutMs")?;
    }
    if let Some(b) = c.cache {
        o.cache = b;
    }
    o.headers = c.headers.unwrap_or_default().into_iter().collect();
    if let Some(caps) = c.capabilities_json {
        o.capabilities =
            Some(serde_json::from_str(&caps).map_err(|e| usage(format!("capabilities are not valid: {e}")))?);
    }
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
    if let Some(l) = c.log_level {
        o.log_level = Some(log_level(&l)?);
    }
    if let Some(n) = c.max_input_rounds {
        o.max_input_rounds = n as usize;
    }
    if let Some(b) = c.legacy_get_stream {
        o.legacy_get_stream = b;
    }
    if let Some(n) = c.max_message_size {
        o.max_message_size = n as usize;
    }
    o.env = c.env.unwrap_or_default().into_iter().map(|(k, v)| (k.into(), v.into())).collect();
    o.inherit_env = c.inherit_env.unwrap_or(false);
    o.cwd = c.cwd.map(Into::into);
    o.stderr = match c.stderr.as_deref() {
        None | Some("inherit") => StderrMode::Inherit,
        Some("ignore") => StderrMode::Null,
        Some(other) => {
            return Err(usage(format!("stderr must be \"inherit\" or \"ignore\", not {other:?}")));
        }
    };
    if let Some(ms) = c.shutdown_timeout_ms {
        o.shutdown_timeout = millis(ms, "shutdownTimeoutMs")?;
    }
    if let Some(oauth) = c.oauth {
        o.oauth = Some(oauth_options(oauth)?);
    }
    Ok(o)
}

fn call_options(
    c: Option<CallConfig>,
    on_progress: Option<EventFn>,
    on_log: Option<EventFn>,
    cancel: Option<&CancelToken>,
) -> Result<CallOptions> {
    let mut o = CallOptions::new();
    if let Some(c) = c {
        if let Some(ms) = c.timeout_ms {
            o.timeout = Some(millis(ms, "timeoutMs")?);
        }
        if let Some(m) = c.meta_json {
            match serde_json::from_str(&m) {
                Ok(Value::Object(m)) => o.meta = Some(m),
                _ => return Err(usage("_meta must be a JSON object")),
            }
        }
        o.bypass_cache = c.bypass_cache.unwrap_or(false);
        if let Some(l) = c.log_level {
            o.log_level = Some(log_level(&l)?);
        }
    }
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
        let reference: CompletionReference =
            serde_json::from_str(&ref_json).map_err(|e| usage(format!("the completion ref is not valid: {e}")))?;
        let argument: CompleteRequestArgument = serde_json::from_str(&argument_json)
            .map_err(|e| usage(format!("the completion argument is not valid: {e}")))?;
        let context: Option<CompleteRequestContext> = match context_json {
            None => None,
            Some(t) => {
                Some(serde_json::from_str(&t).map_err(|e| usage(format!("the completion context is not valid: {e}")))?)
            }
        };
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
