//! How a [`Client`](super::Client) is configured ([`ClientOptions`]) and how one call is
//! ([`CallOptions`]), and the callback types a host implements: input handlers for the
//! server's asks (elicitation, sampling, roots), progress and log callbacks.

use super::auth::OAuthOptions;
use crate::error::Result;
use crate::schema::{
    ClientCapabilities, ElicitationCapability, Implementation, LoggingLevel, LoggingMessageNotificationParams,
    ProgressNotificationParams, RootsCapability, SamplingCapability,
};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The protocol revisions this client speaks, most preferred first: the modern
/// (per-request `_meta`) revision, then the legacy (`initialize` handshake) ones.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// Whether `version` is a legacy revision, negotiated with an `initialize` handshake.
pub fn is_legacy_version(version: &str) -> bool {
    version <= "2025-11-25"
}

/// Answers one request of the server: `elicitation/create`, `sampling/createMessage` or
/// `roots/list`. Takes the request's `params` (`{}` when it had none) and returns the result
/// object (an `ElicitResult`, `CreateMessageResult` or `ListRootsResult`).
///
/// Under the modern revision the answer goes into the retry's `inputResponses`; under a legacy
/// session it is the JSON-RPC response to the server's request. An error fails the call (modern)
/// or answers the server's request with a JSON-RPC error (legacy).
pub type InputHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value>> + Send + Sync>;

/// Receives the `notifications/progress` of one call.
pub type ProgressCallback = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

/// Receives `notifications/message` log messages.
pub type LogCallback = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;

fn input_handler<F, Fut>(f: F) -> InputHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

/// What happens to a stdio server's standard error. As data: `"inherit"`, `"tracing"` or
/// `"null"`, the same spelling in every binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StderrMode {
    /// The child writes to this process's standard error (the default).
    #[default]
    Inherit,
    /// Each line becomes a `tracing` event at INFO level (target `mcpaxle::client::stderr`).
    Tracing,
    /// Discarded.
    Null,
}

/// The configuration of a [`Client`](super::Client).
///
/// As data (every binding's client options, from [`crate::options::from_json`]): the fields
/// below by their camelCase names, durations in milliseconds (`requestTimeoutMs`,
/// `maxRequestTimeoutMs`, `probeTimeoutMs`, `shutdownTimeoutMs`), `headers` and `env` as
/// objects, `oauth` as [`OAuthOptions`]' data; absent fields keep their defaults. The
/// callbacks (`onLog`, the input handlers, OAuth's user-agent step) are the binding's to set.
///
/// ```
/// use mcpaxle::client::ClientOptions;
/// use serde_json::json;
/// let options = ClientOptions::new("my-app", "1.0.0")
///     .header("Authorization", "Bearer t0k3n")
///     .on_elicitation(|_params| async { Ok(json!({"action": "decline"})) });
/// assert!(options.capabilities().elicitation.is_some());
/// ```
#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ClientOptions {
    /// `clientInfo`: who this client is.
    #[serde(alias = "client_info")]
    pub client_info: Implementation,
    /// Declared capabilities; `None` (the default) derives them from the registered input
    /// handlers (see [`ClientOptions::capabilities`]).
    pub capabilities: Option<ClientCapabilities>,
    /// The protocol revisions the client may speak, most preferred first (default
    /// [`SUPPORTED_VERSIONS`]). With no modern revision the client goes straight to the
    /// `initialize` handshake; with no legacy one it never falls back to it.
    #[serde(alias = "protocol_versions")]
    pub protocol_versions: Vec<String>,
    /// How long a request may wait for its response (JSON `requestTimeoutMs`, default 60000:
    /// 60 s).
    #[serde(rename = "requestTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "request_timeout_ms")]
    pub request_timeout: Duration,
    /// Whether a progress notification restarts the request's timeout (default true).
    #[serde(alias = "reset_timeout_on_progress")]
    pub reset_timeout_on_progress: bool,
    /// The longest a request may take however much progress it reports (JSON
    /// `maxRequestTimeoutMs`, default 600000: 10 min).
    #[serde(rename = "maxRequestTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "max_request_timeout_ms")]
    pub max_request_timeout: Duration,
    /// How long the stdio `server/discover` probe waits before taking the server for a legacy
    /// one (JSON `probeTimeoutMs`, default 5000: 5 s).
    #[serde(rename = "probeTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "probe_timeout_ms")]
    pub probe_timeout: Duration,
    /// Whether cacheable results are cached per their `ttlMs` and `cacheScope` (default true).
    pub cache: bool,
    /// Extra HTTP headers sent with every HTTP request (e.g. `Authorization`); as data an
    /// object of names to values.
    #[serde(deserialize_with = "string_pairs")]
    pub headers: Vec<(String, String)>,
    /// HTTP only: OAuth authorization, for servers that answer `401` (see [`OAuthOptions`]).
    pub oauth: Option<OAuthOptions>,
    /// How many `input_required` rounds one call may go through (default 8).
    #[serde(alias = "max_input_rounds")]
    pub max_input_rounds: usize,
    /// The log level requested from the server (`_meta` log level, or `logging/setLevel` in a
    /// legacy session); `None` asks for no log messages.
    #[serde(alias = "log_level")]
    pub log_level: Option<LoggingLevel>,
    /// Receives log messages not tied to a call with its own log callback.
    #[serde(skip)]
    pub on_log: Option<LogCallback>,
    /// Answers `elicitation/create`.
    #[serde(skip)]
    pub elicitation: Option<InputHandler>,
    /// Answers `sampling/createMessage`.
    #[serde(skip)]
    pub sampling: Option<InputHandler>,
    /// Answers `roots/list`.
    #[serde(skip)]
    pub roots: Option<InputHandler>,
    /// Legacy Streamable HTTP sessions only: whether to open the GET stream for the server's
    /// own requests and notifications (default true).
    #[serde(alias = "legacy_get_stream")]
    pub legacy_get_stream: bool,
    /// The largest message accepted from the server, in bytes (default 16777216: 16 MiB).
    #[serde(alias = "max_message_size")]
    pub max_message_size: usize,
    /// stdio: environment variables given to the child, on top of the few it inherits (see
    /// `inherit_env`). A variable set here wins over an inherited one. As data an object.
    #[serde(deserialize_with = "env_pairs")]
    pub env: Vec<(OsString, OsString)>,
    /// stdio: whether the child inherits this process's whole environment (default false).
    ///
    /// By default a server started by the client sees only `env` plus
    /// [`DEFAULT_INHERITED_ENV_VARS`](super::DEFAULT_INHERITED_ENV_VARS) (`HOME`,
    /// `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`; on Windows the variables a process needs to
    /// run), as the official MCP SDKs do: secrets in the host's environment (API keys, tokens)
    /// do not leak into every server it launches. Set it for a trusted server that needs more.
    #[serde(alias = "inherit_env")]
    pub inherit_env: bool,
    /// stdio: the child's working directory.
    pub cwd: Option<PathBuf>,
    /// stdio: what happens to the child's standard error (default `"inherit"`).
    pub stderr: StderrMode,
    /// stdio: how long [`Client::close`](super::Client::close) waits after closing the child's
    /// stdin, and again after SIGTERM, before the next step (JSON `shutdownTimeoutMs`, default
    /// 2000: 2 s).
    #[serde(rename = "shutdownTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "shutdown_timeout_ms")]
    pub shutdown_timeout: Duration,
}

fn string_pairs<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<(String, String)>, D::Error> {
    Ok(BTreeMap::<String, String>::deserialize(d)?.into_iter().collect())
}

fn env_pairs<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<(OsString, OsString)>, D::Error> {
    Ok(string_pairs(d)?.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("client_info", &self.client_info)
            .field("protocol_versions", &self.protocol_versions)
            .field("request_timeout", &self.request_timeout)
            .field("cache", &self.cache)
            .field("oauth", &self.oauth)
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions::new("mcpaxle-client", env!("CARGO_PKG_VERSION"))
    }
}

impl ClientOptions {
    /// Options for a client named `name` at `version`, with every default.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            client_info: Implementation::new(name, version),
            capabilities: None,
            protocol_versions: SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect(),
            request_timeout: Duration::from_secs(60),
            reset_timeout_on_progress: true,
            max_request_timeout: Duration::from_secs(600),
            probe_timeout: Duration::from_secs(5),
            cache: true,
            headers: Vec::new(),
            oauth: None,
            max_input_rounds: 8,
            log_level: None,
            on_log: None,
            elicitation: None,
            sampling: None,
            roots: None,
            legacy_get_stream: true,
            max_message_size: 16 << 20,
            env: Vec::new(),
            inherit_env: false,
            cwd: None,
            stderr: StderrMode::default(),
            shutdown_timeout: Duration::from_secs(2),
        }
    }

    /// The capabilities the client declares: the explicit ones if set, otherwise `elicitation`,
    /// `sampling` and `roots` for each registered handler.
    pub fn capabilities(&self) -> ClientCapabilities {
        if let Some(c) = &self.capabilities {
            return c.clone();
        }
        ClientCapabilities {
            elicitation: self.elicitation.as_ref().map(|_| ElicitationCapability::default()),
            sampling: self.sampling.as_ref().map(|_| SamplingCapability::default()),
            roots: self.roots.as_ref().map(|_| RootsCapability::default()),
            ..Default::default()
        }
    }

    /// Authorizes with OAuth when the HTTP server asks for it (see [`OAuthOptions`]).
    pub fn oauth(mut self, oauth: OAuthOptions) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Registers the `elicitation/create` handler (and declares the capability).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value>> + Send + 'static,
    {
        self.elicitation = Some(input_handler(f));
        self
    }

    /// Registers the `sampling/createMessage` handler (and declares the capability).
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value>> + Send + 'static,
    {
        self.sampling = Some(input_handler(f));
        self
    }

    /// Registers the `roots/list` handler (and declares the capability).
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value>> + Send + 'static,
    {
        self.roots = Some(input_handler(f));
        self
    }

    /// Receives log messages (see [`ClientOptions::on_log`]).
    pub fn on_log(mut self, f: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static) -> Self {
        self.on_log = Some(Arc::new(f));
        self
    }

    /// Adds an HTTP header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the protocol revisions the client may speak, most preferred first.
    pub fn protocol_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protocol_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the default request timeout.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Turns the result cache on or off.
    pub fn cache(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// Sets the log level asked of the server.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    pub(crate) fn modern_version(&self) -> Option<&str> {
        self.protocol_versions.iter().map(String::as_str).find(|v| !is_legacy_version(v))
    }

    pub(crate) fn legacy_versions(&self) -> impl Iterator<Item = &str> {
        self.protocol_versions.iter().map(String::as_str).filter(|v| is_legacy_version(v))
    }
}

/// Options of one call.
///
/// As data: `timeoutMs`, `meta` (extra `_meta` members), `logLevel`, `bypassCache`; the
/// callbacks and the cancellation token are the binding's to set.
///
/// ```
/// use mcpaxle::client::CallOptions;
/// use std::time::Duration;
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .on_progress(|p| println!("{}/{:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[derive(Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CallOptions {
    /// Receives the call's progress notifications (a `progressToken` is sent only when set).
    #[serde(skip)]
    pub on_progress: Option<ProgressCallback>,
    /// Receives the call's log messages (else the client's [`ClientOptions::on_log`]). On
    /// stdio, where a log message names no request, they all go to the client's callback.
    #[serde(skip)]
    pub on_log: Option<LogCallback>,
    /// Overrides the client's request timeout for each round trip of this call (JSON
    /// `timeoutMs`).
    #[serde(rename = "timeoutMs", with = "crate::options::opt_positive_ms")]
    #[serde(alias = "timeout_ms")]
    pub timeout: Option<Duration>,
    /// Cancels the call when cancelled (dropping the call's future does too).
    #[serde(skip)]
    pub cancel: Option<CancellationToken>,
    /// Extra `_meta` members sent with the request.
    pub meta: Option<Map<String, Value>>,
    /// Overrides the client's log level for this call.
    #[serde(alias = "log_level")]
    pub log_level: Option<LoggingLevel>,
    /// Skips the cache for this call (the fresh result is still stored).
    #[serde(alias = "bypass_cache")]
    pub bypass_cache: bool,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("on_progress", &self.on_progress.is_some())
            .field("timeout", &self.timeout)
            .field("meta", &self.meta)
            .field("bypass_cache", &self.bypass_cache)
            .finish_non_exhaustive()
    }
}

impl CallOptions {
    /// Default call options.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Receives progress notifications.
    pub fn on_progress(mut self, f: impl Fn(ProgressNotificationParams) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Receives log messages.
    pub fn on_log(mut self, f: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static) -> Self {
        self.on_log = Some(Arc::new(f));
        self
    }

    /// Sets the timeout of each round trip.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sets extra `_meta` members.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Skips the cache for this call.
    pub fn bypass_cache(mut self) -> Self {
        self.bypass_cache = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::from_json;
    use serde_json::json;

    #[test]
    fn client_options_from_data_keep_the_defaults_of_what_is_left_out() {
        let o: ClientOptions = from_json("client options", json!({})).unwrap();
        let d = ClientOptions::default();
        assert_eq!((o.request_timeout, o.max_request_timeout), (d.request_timeout, d.max_request_timeout));
        assert_eq!((o.probe_timeout, o.shutdown_timeout), (Duration::from_secs(5), Duration::from_secs(2)));
        assert_eq!((o.max_input_rounds, o.cache, o.legacy_get_stream), (8, true, true));
        assert_eq!(o.protocol_versions, SUPPORTED_VERSIONS);
        assert_eq!(o.stderr, StderrMode::Inherit);
    }

    #[test]
    fn client_options_from_data_read_every_field() {
        let o: ClientOptions = from_json(
            "client options",
            json!({
                "clientInfo": { "name": "app", "version": "2", "title": "App" },
                "capabilities": { "roots": {} },
                "protocolVersions": ["2025-11-25"],
                "requestTimeoutMs": 1000, "maxRequestTimeoutMs": 2000, "probeTimeoutMs": 300,
                "resetTimeoutOnProgress": false, "cache": false,
                "headers": { "X-A": "1" }, "maxInputRounds": 2, "logLevel": "debug",
                "legacyGetStream": false, "maxMessageSize": 1024,
                "env": { "K": "V" }, "inheritEnv": true, "cwd": "/tmp", "stderr": "null",
                "shutdownTimeoutMs": 10,
                "oauth": { "redirectUri": "http://127.0.0.1:1/cb", "clientId": "c", "maxAuthorizations": 1 }
            }),
        )
        .unwrap();
        assert_eq!(o.client_info.title.as_deref(), Some("App"));
        assert!(o.capabilities.is_some_and(|c| c.roots.is_some()));
        assert_eq!(o.protocol_versions, ["2025-11-25"]);
        assert_eq!(o.request_timeout, Duration::from_secs(1));
        assert_eq!(o.max_request_timeout, Duration::from_secs(2));
        assert_eq!(o.probe_timeout, Duration::from_millis(300));
        assert_eq!(o.shutdown_timeout, Duration::from_millis(10));
        assert!(!o.reset_timeout_on_progress && !o.cache && !o.legacy_get_stream && o.inherit_env);
        assert_eq!(o.headers, [("X-A".to_owned(), "1".to_owned())]);
        assert_eq!((o.max_input_rounds, o.max_message_size), (2, 1024));
        assert_eq!(o.log_level, Some(LoggingLevel::Debug));
        assert_eq!(o.env, [(OsString::from("K"), OsString::from("V"))]);
        assert_eq!(o.cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(o.stderr, StderrMode::Null);
        let oauth = o.oauth.unwrap();
        assert_eq!((oauth.redirect_uri.as_str(), oauth.max_authorizations), ("http://127.0.0.1:1/cb", 1));
        assert_eq!(oauth.pre_registered.map(|p| p.client_id).as_deref(), Some("c"));
    }

    #[test]
    fn bad_client_options_are_named() {
        let bad = |v: Value| from_json::<ClientOptions>("client options", v).unwrap_err().message().to_owned();
        assert!(bad(json!({ "timeoutMs": 5 })).contains("unknown field `timeoutMs`, expected one of"));
        assert!(bad(json!({ "stderr": "ignore" })).contains("unknown variant `ignore`, expected one of `inherit`"));
        assert!(bad(json!({ "requestTimeoutMs": 0 })).contains("at least 1 millisecond"));
        assert!(
            bad(json!({ "oauth": { "redirectUri": "x:/cb", "issuer": "https://as.example" } }))
                .contains("give clientId too")
        );
        assert!(bad(json!({ "oauth": { "redirectUri": "x:/cb", "scope": "y" } })).contains("unknown field `scope`"));
    }

    #[test]
    fn call_options_from_data() {
        let o: CallOptions = from_json(
            "call options",
            json!({ "timeoutMs": 50, "meta": { "k": 1 }, "logLevel": "info", "bypassCache": true }),
        )
        .unwrap();
        assert_eq!(o.timeout, Some(Duration::from_millis(50)));
        assert_eq!(o.meta, Some(Map::from_iter([("k".to_owned(), json!(1))])));
        assert_eq!(o.log_level, Some(LoggingLevel::Info));
        assert!(o.bypass_cache);
        assert!(from_json::<CallOptions>("call options", json!({ "timeoutMs": -1 })).is_err());
    }
}
