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
use serde_json::{Map, Value};
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

/// What happens to a stdio server's standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
/// ```
/// use mcpaxle::client::ClientOptions;
/// use serde_json::json;
/// let options = ClientOptions::new("my-app", "1.0.0")
///     .header("Authorization", "Bearer t0k3n")
///     .on_elicitation(|_params| async { Ok(json!({"action": "decline"})) });
/// assert!(options.capabilities().elicitation.is_some());
/// ```
#[derive(Clone)]
pub struct ClientOptions {
    /// `clientInfo`: who this client is.
    pub client_info: Implementation,
    /// Declared capabilities; `None` (the default) derives them from the registered input
    /// handlers (see [`ClientOptions::capabilities`]).
    pub capabilities: Option<ClientCapabilities>,
    /// The protocol revisions the client may speak, most preferred first (default
    /// [`SUPPORTED_VERSIONS`]). With no modern revision the client goes straight to the
    /// `initialize` handshake; with no legacy one it never falls back to it.
    pub protocol_versions: Vec<String>,
    /// How long a request may wait for its response (default 60 s).
    pub request_timeout: Duration,
    /// Whether a progress notification restarts the request's timeout (default true).
    pub reset_timeout_on_progress: bool,
    /// The longest a request may take however much progress it reports (default 10 min).
    pub max_request_timeout: Duration,
    /// How long the stdio `server/discover` probe waits before taking the server for a legacy
    /// one (default 5 s).
    pub probe_timeout: Duration,
    /// Whether cacheable results are cached per their `ttlMs` and `cacheScope` (default true).
    pub cache: bool,
    /// Extra HTTP headers sent with every HTTP request (e.g. `Authorization`).
    pub headers: Vec<(String, String)>,
    /// HTTP only: OAuth authorization, for servers that answer `401` (see [`OAuthOptions`]).
    pub oauth: Option<OAuthOptions>,
    /// How many `input_required` rounds one call may go through (default 8).
    pub max_input_rounds: usize,
    /// The log level requested from the server (`_meta` log level, or `logging/setLevel` in a
    /// legacy session); `None` asks for no log messages.
    pub log_level: Option<LoggingLevel>,
    /// Receives log messages not tied to a call with its own log callback.
    pub on_log: Option<LogCallback>,
    /// Answers `elicitation/create`.
    pub elicitation: Option<InputHandler>,
    /// Answers `sampling/createMessage`.
    pub sampling: Option<InputHandler>,
    /// Answers `roots/list`.
    pub roots: Option<InputHandler>,
    /// Legacy Streamable HTTP sessions only: whether to open the GET stream for the server's
    /// own requests and notifications (default true).
    pub legacy_get_stream: bool,
    /// The largest message accepted from the server, in bytes (default 16 MiB).
    pub max_message_size: usize,
    /// stdio: environment variables given to the child, on top of the few it inherits (see
    /// `inherit_env`). A variable set here wins over an inherited one.
    pub env: Vec<(OsString, OsString)>,
    /// stdio: whether the child inherits this process's whole environment (default false).
    ///
    /// By default a server started by the client sees only `env` plus
    /// [`DEFAULT_INHERITED_ENV_VARS`](super::DEFAULT_INHERITED_ENV_VARS) (`HOME`,
    /// `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`; on Windows the variables a process needs to
    /// run), as the official MCP SDKs do: secrets in the host's environment (API keys, tokens)
    /// do not leak into every server it launches. Set it for a trusted server that needs more.
    pub inherit_env: bool,
    /// stdio: the child's working directory.
    pub cwd: Option<PathBuf>,
    /// stdio: what happens to the child's standard error.
    pub stderr: StderrMode,
    /// stdio: how long [`Client::close`](super::Client::close) waits after closing the child's
    /// stdin, and again after SIGTERM, before the next step (default 2 s).
    pub shutdown_timeout: Duration,
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
/// ```
/// use mcpaxle::client::CallOptions;
/// use std::time::Duration;
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .on_progress(|p| println!("{}/{:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Receives the call's progress notifications (a `progressToken` is sent only when set).
    pub on_progress: Option<ProgressCallback>,
    /// Receives the call's log messages (else the client's [`ClientOptions::on_log`]). On
    /// stdio, where a log message names no request, they all go to the client's callback.
    pub on_log: Option<LogCallback>,
    /// Overrides the client's request timeout for each round trip of this call.
    pub timeout: Option<Duration>,
    /// Cancels the call when cancelled (dropping the call's future does too).
    pub cancel: Option<CancellationToken>,
    /// Extra `_meta` members sent with the request.
    pub meta: Option<Map<String, Value>>,
    /// Overrides the client's log level for this call.
    pub log_level: Option<LoggingLevel>,
    /// Skips the cache for this call (the fresh result is still stored).
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
