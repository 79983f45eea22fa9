//! The state of one client connection and one round trip on it: per-request `_meta` and
//! HTTP request-metadata headers, the timeout, progress and cancellation, the server's own
//! requests and notifications. The cache, the retries and the MRTR loop around a round trip
//! are in [`call`](super::call).

use super::cache::Cache;
use super::mrtr::answer_server_request;
use super::options::{CallOptions, ClientOptions, LogCallback, is_legacy_version};
use super::transport::{Inbound, Outbound, connection_lost};
use super::wire::Wire;
use crate::era::Era;
use crate::error::{Error, ErrorKind, Result};
use crate::headers::{self, HeaderParam};
use crate::jsonrpc::{JsonRpcVersion, Notification, Outcome, Request, RequestId, Response};
use crate::schema::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, Implementation, LOG_LEVEL_META_KEY,
    LoggingMessageNotificationParams, PROTOCOL_VERSION_META_KEY, ProgressNotificationParams, ServerCapabilities,
    TASKS_EXTENSION,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What the client knows about the server it talks to.
#[derive(Debug, Clone)]
pub(crate) struct ConnState {
    pub era: Era,
    /// The protocol version of every request (modern) or the negotiated one (legacy).
    pub version: String,
    pub server_info: Option<Implementation>,
    pub capabilities: ServerCapabilities,
    pub instructions: Option<String>,
}

/// The shared state behind a [`Client`](super::Client).
pub(crate) struct Inner {
    pub options: ClientOptions,
    pub wire: Wire,
    pub state: RwLock<ConnState>,
    next_id: AtomicI64,
    pub cache: Cache,
    /// The `x-mcp-header` parameters of every tool last listed, by tool name.
    tools: RwLock<HashMap<String, Arc<Vec<HeaderParam>>>>,
    /// Change notifications seen on any stream (legacy subscriptions read them here).
    pub events: broadcast::Sender<Notification>,
    /// Serializes era changes (legacy fallback, re-initialization).
    pub era_lock: tokio::sync::Mutex<()>,
    pub closed: CancellationToken,
    pub background: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Inner {
    pub fn new(options: ClientOptions, wire: Wire) -> Self {
        let version = options.protocol_versions.first().cloned().unwrap_or_default();
        let era = if is_legacy_version(&version) { Era::Legacy } else { Era::Modern };
        Inner {
            options,
            wire,
            state: RwLock::new(ConnState {
                era,
                version,
                server_info: None,
                capabilities: ServerCapabilities::default(),
                instructions: None,
            }),
            next_id: AtomicI64::new(1),
            cache: Cache::default(),
            tools: RwLock::default(),
            events: broadcast::channel(256).0,
            era_lock: tokio::sync::Mutex::new(()),
            closed: CancellationToken::new(),
            background: Mutex::default(),
        }
    }

    pub fn state(&self) -> ConnState {
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn update_state(&self, f: impl FnOnce(&mut ConnState)) {
        f(&mut self.state.write().unwrap_or_else(|e| e.into_inner()));
    }

    pub fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    pub fn authorization(&self) -> Option<String> {
        match &self.wire {
            Wire::Http(t) => t.authorization(),
            Wire::Lines(_) => None,
        }
    }

    /// Records the `x-mcp-header` parameters of a listed tool.
    pub fn remember_tool(&self, name: &str, params: Vec<HeaderParam>) {
        self.tools.write().unwrap_or_else(|e| e.into_inner()).insert(name.to_owned(), Arc::new(params));
    }

    /// Whether a `tools/call` may be answered with a task: the 2026-07-28 era, with the Tasks
    /// extension declared (by default, or in the application's own capabilities).
    pub(super) fn declares_tasks(&self) -> bool {
        self.state().era == Era::Modern
            && self
                .options
                .capabilities
                .as_ref()
                .is_none_or(|c| c.extensions.as_ref().is_some_and(|e| e.contains_key(TASKS_EXTENSION)))
    }

    fn tool_params(&self, name: &str) -> Option<Arc<Vec<HeaderParam>>> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
    }

    /// Builds the request `method(params)` for the current era.
    pub fn outbound(&self, method: &str, mut params: Map<String, Value>, opts: &CallOptions) -> Outbound {
        let id = self.next_id();
        let st = self.state();
        let modern = st.era == Era::Modern;
        let mut meta = opts.meta.clone().unwrap_or_default();
        if let Some(Value::Object(m)) = params.remove("_meta") {
            for (k, v) in m {
                meta.entry(k).or_insert(v);
            }
        }
        if modern {
            meta.insert(PROTOCOL_VERSION_META_KEY.into(), json!(st.version));
            meta.insert(
                CLIENT_INFO_META_KEY.into(),
                serde_json::to_value(&self.options.client_info).unwrap_or(Value::Null),
            );
            let mut caps = serde_json::to_value(self.options.capabilities()).unwrap_or_else(|_| json!({}));
            if self.options.capabilities.is_none() {
                // The client follows tasks to their result (client/tasks.rs).
                caps["extensions"][TASKS_EXTENSION] = json!({});
            }
            meta.insert(CLIENT_CAPABILITIES_META_KEY.into(), caps);
            if let Some(level) = opts.log_level.or(self.options.log_level) {
                meta.insert(LOG_LEVEL_META_KEY.into(), json!(level));
            }
        }
        let progress_token = opts.on_progress.as_ref().map(|_| id.to_value());
        if let Some(t) = &progress_token {
            meta.insert("progressToken".into(), t.clone());
        }
        let mut headers = Vec::new();
        if modern && self.wire.is_http() {
            headers.push(("mcp-method".to_owned(), method.to_owned()));
            let name = match method {
                "tools/call" | "prompts/get" => params.get("name"),
                "resources/read" => params.get("uri"),
                // The Tasks extension routes on the task id.
                "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
                _ => None,
            };
            if let Some(name) = name.and_then(Value::as_str) {
                headers.push((headers::MCP_NAME.to_owned(), headers::encode_value(name)));
            }
            if method == "tools/call" {
                let tool = params.get("name").and_then(Value::as_str).and_then(|n| self.tool_params(n));
                let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
                for p in tool.iter().flat_map(|t| t.iter()) {
                    if let Some(v) = headers::header_value_for(p, &arguments) {
                        headers.push((p.http_header_name(), headers::encode_value(&v)));
                    }
                }
            }
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let protocol_version = (modern || (self.wire.is_http() && method != "initialize")).then(|| st.version.clone());
        let params = if params.is_empty() && !modern { None } else { Some(Value::Object(params)) };
        Outbound {
            request: Request { jsonrpc: JsonRpcVersion, id, method: method.to_owned(), params },
            protocol_version,
            headers,
            progress_token,
            resumable: !modern && self.wire.is_http(),
            cancel_on_drop: true,
        }
    }

    /// Applies a notification from any stream: cache invalidation, log messages, legacy
    /// subscriptions.
    pub fn on_notification(&self, n: &Notification, call_log: Option<&LogCallback>) {
        self.cache.observe(&n.method, n.params.as_ref());
        match n.method.as_str() {
            "notifications/message" => {
                let parsed =
                    n.params.clone().and_then(|p| serde_json::from_value::<LoggingMessageNotificationParams>(p).ok());
                match (parsed, call_log.or(self.options.on_log.as_ref())) {
                    (Some(p), Some(cb)) => cb(p),
                    (Some(p), None) => {
                        tracing::debug!(target: "mcpaxle::client::server_log", level = ?p.level, logger = ?p.logger, "{}", p.data)
                    }
                    (None, _) => tracing::debug!("a malformed notifications/message from the server"),
                }
            }
            "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated" => {
                let _ = self.events.send(n.clone());
            }
            _ => {}
        }
    }

    /// Answers a legacy server's request in the background.
    pub fn spawn_answer(self: &Arc<Self>, request: Request) {
        let inner = self.clone();
        tokio::spawn(async move {
            let response = answer_server_request(&inner.options, request).await;
            inner.respond(response).await;
        });
    }

    /// Sends the answer to a legacy server's request in the background.
    fn spawn_respond(self: &Arc<Self>, response: Response) {
        let inner = self.clone();
        tokio::spawn(async move { inner.respond(response).await });
    }

    async fn respond(&self, response: Response) {
        let version = self.state().version;
        if let Err(e) = self.wire.respond(response, Some(version)).await {
            tracing::warn!("cannot answer the MCP server's request: {e}");
        }
    }

    /// One round trip: sends `out` and waits for its response, handing over the messages that
    /// come before it. Dropping the future, the cancel token and the timeout all cancel it.
    pub async fn exchange(
        self: &Arc<Self>,
        out: Outbound,
        opts: &CallOptions,
        timeout: Duration,
    ) -> Result<(Response, Option<u16>)> {
        let method = out.request.method.clone();
        let start = Instant::now();
        let hard_deadline = start + self.options.max_request_timeout.max(timeout);
        let mut deadline = start + timeout;
        let cancel = opts.cancel.clone().unwrap_or_default();
        let mut guard = LegacyCancel::new(self, &out);
        let timed_out =
            || Error::new(ErrorKind::Timeout, format!("no response to {method} within {} ms", timeout.as_millis()));
        let cancelled = || Error::new(ErrorKind::Cancelled, format!("{method} was cancelled"));
        let mut pending = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(cancelled()),
            _ = self.closed.cancelled() => return Err(connection_lost("the client is closed")),
            _ = tokio::time::sleep_until(deadline) => return Err(timed_out()),
            p = self.wire.send(out) => p?,
        };
        loop {
            let message = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(cancelled()),
                _ = self.closed.cancelled() => return Err(connection_lost("the client is closed")),
                _ = tokio::time::sleep_until(deadline) => return Err(timed_out()),
                m = pending.recv() => m,
            };
            match message {
                None => return Err(connection_lost("the server sent no response")),
                Some(Err(e)) => {
                    guard.disarm();
                    return Err(e);
                }
                Some(Ok(Inbound::Response(r))) => {
                    guard.disarm();
                    return Ok((r, pending.http_status));
                }
                Some(Ok(Inbound::Notification(n))) => {
                    if n.method == "notifications/progress" {
                        if self.options.reset_timeout_on_progress {
                            deadline = (Instant::now() + timeout).min(hard_deadline);
                        }
                        if let (Some(cb), Some(p)) = (&opts.on_progress, n.params.clone()) {
                            if let Ok(p) = serde_json::from_value::<ProgressNotificationParams>(p) {
                                cb(p);
                            }
                        }
                    }
                    self.on_notification(&n, opts.on_log.as_ref());
                }
                Some(Ok(Inbound::Request(r))) => {
                    // A legacy server's request on this request's stream: the server waits
                    // for the answer, so the clock restarts once it is given.
                    let response = tokio::select! {
                        biased;
                        _ = cancel.cancelled() => return Err(cancelled()),
                        _ = self.closed.cancelled() => return Err(connection_lost("the client is closed")),
                        r = answer_server_request(&self.options, r) => r,
                    };
                    self.spawn_respond(response);
                    deadline = Instant::now() + timeout;
                }
            }
        }
    }
}

/// Legacy HTTP sessions: dropping a request does not cancel it on the server (a disconnect
/// is not a cancellation there), so a `notifications/cancelled` is POSTed.
struct LegacyCancel {
    inner: Option<Weak<Inner>>,
    id: RequestId,
}

impl LegacyCancel {
    fn new(inner: &Arc<Inner>, out: &Outbound) -> Self {
        let armed = out.resumable && out.request.method != "initialize";
        LegacyCancel { inner: armed.then(|| Arc::downgrade(inner)), id: out.request.id.clone() }
    }

    fn disarm(&mut self) {
        self.inner = None;
    }
}

impl Drop for LegacyCancel {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take().and_then(|w| w.upgrade()) else { return };
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let id = self.id.clone();
        rt.spawn(async move {
            let n = Notification::new(
                "notifications/cancelled",
                Some(json!({ "requestId": id.to_value(), "reason": "cancelled by the client" })),
            );
            let version = inner.state().version;
            let _ = inner.wire.notify(n, Some(version)).await;
        });
    }
}

/// Handles what the transport delivers outside any request: notifications, and a legacy
/// server's requests.
pub(crate) async fn unsolicited_loop(weak: Weak<Inner>, mut rx: mpsc::UnboundedReceiver<Inbound>) {
    while let Some(message) = rx.recv().await {
        let Some(inner) = weak.upgrade() else { return };
        match message {
            Inbound::Notification(n) => inner.on_notification(&n, None),
            Inbound::Request(r) => inner.spawn_answer(r),
            Inbound::Response(_) => {}
        }
    }
}

/// A response whose outcome is an error, as an [`Error`].
pub(crate) fn into_result(r: Response) -> Result<Value> {
    match r.outcome {
        Outcome::Result(v) => Ok(v),
        Outcome::Error(e) => Err(Error::remote(e)),
    }
}
