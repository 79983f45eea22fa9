//! Legacy sessions: what a 2025-11-25 client set up with `initialize`, and whether it is in
//! use (a request in flight, an open stream) or idle since when, which the
//! [`SessionStore`](crate::legacy::SessionStore) expires and evicts by.

use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{JsonRpcVersion, Outcome, Request, RequestId, Response};
use crate::schema::LoggingLevel;
use crate::server::exchange::Outgoing;
use crate::server::exchange::OutgoingTx;
use crate::server::seal::fill_random;
use crate::telemetry::{self, Counted, Gauge};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One legacy (2025-11-25 era) session.
pub struct Session {
    id: String,
    version: String,
    client_capabilities: Map<String, Value>,
    client_info: Option<Value>,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<BTreeSet<String>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Response>>>,
    inflight: Mutex<HashMap<RequestId, CancellationToken>>,
    next_id: AtomicU64,
    activity: Mutex<Activity>,
    /// The store holding the session (HTTP), told of every change of activity.
    store: OnceLock<Weak<dyn ActivityIndex>>,
    closed: CancellationToken,
    request_timeout: Duration,
    /// Counted among the open sessions while telemetry is on.
    _counted: Option<Gauge>,
}

/// What the store orders sessions by: in use, or idle since when.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Activity {
    /// Requests in flight, open streams and HTTP requests being answered.
    pub busy: usize,
    /// When the session was last used (the end of its last request or stream).
    pub last_seen: Instant,
    /// Whether the client went past `initialize` (any later message of its own).
    pub initialized: bool,
}

impl Session {
    pub(crate) fn new(
        version: String,
        client_capabilities: Map<String, Value>,
        client_info: Option<Value>,
        request_timeout: Duration,
    ) -> Self {
        let mut raw = [0u8; 16];
        fill_random(&mut raw);
        let id = raw.iter().map(|b| format!("{b:02x}")).collect();
        Session {
            id,
            version,
            client_capabilities,
            client_info,
            log_level: Mutex::new(None),
            subscriptions: Mutex::default(),
            pending: Mutex::default(),
            inflight: Mutex::default(),
            next_id: AtomicU64::new(1),
            activity: Mutex::new(Activity { busy: 0, last_seen: Instant::now(), initialized: false }),
            store: OnceLock::new(),
            _counted: telemetry::gauge(Counted::LegacySession),
            closed: CancellationToken::new(),
            request_timeout,
        }
    }

    /// The session id (`Mcp-Session-Id`): 128 random bits as hex, visible ASCII.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.version
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.client_capabilities
    }

    /// The client's identity from `initialize`.
    pub fn client_info(&self) -> Option<&Value> {
        self.client_info.as_ref()
    }

    /// The level set with `logging/setLevel` (nothing is logged before it is set).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        *lock(&self.log_level)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *lock(&self.log_level) = Some(level);
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        lock(&self.subscriptions).insert(uri.to_owned());
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }

    /// Marks the session as used now.
    pub fn touch(&self) {
        let busy = {
            let mut a = lock(&self.activity);
            a.last_seen = Instant::now();
            a.busy > 0
        };
        // A busy session is in no index; it is placed when it goes idle.
        if !busy {
            self.reindex();
        }
    }

    /// Whether nothing of the session is in use: no request in flight, no open stream. Only
    /// idle sessions expire or are evicted.
    pub fn is_idle(&self) -> bool {
        lock(&self.activity).busy == 0
    }

    /// How long the session has been idle (`None` while in use): what expiry and eviction
    /// go by (diagnostics).
    pub fn idle_for(&self) -> Option<Duration> {
        let a = lock(&self.activity);
        (a.busy == 0).then(|| a.last_seen.elapsed())
    }

    /// Whether the client went past `initialize`: sent any message in the session after it
    /// (diagnostics; until then the session ends after [`LegacyOptions::uninitialized_timeout`]).
    ///
    /// [`LegacyOptions::uninitialized_timeout`]: crate::legacy::LegacyOptions::uninitialized_timeout
    pub fn is_initialized(&self) -> bool {
        lock(&self.activity).initialized
    }

    pub(crate) fn activity(&self) -> Activity {
        *lock(&self.activity)
    }

    pub(crate) fn activity_mut(&self) -> std::sync::MutexGuard<'_, Activity> {
        lock(&self.activity)
    }

    pub(crate) fn attach(&self, store: Weak<dyn ActivityIndex>) {
        let _ = self.store.set(store);
    }

    /// Tells the store (if any) that the activity changed. Never called with the store locked.
    fn reindex(&self) {
        if let Some(store) = self.store.get().and_then(Weak::upgrade) {
            store.activity_changed(self);
        }
    }

    /// Marks the session in use until the guard is dropped.
    pub(crate) fn busy(self: &Arc<Self>) -> BusyGuard {
        lock(&self.activity).busy += 1;
        self.reindex();
        BusyGuard(self.clone())
    }

    /// A guard for a use already counted in the activity (by the store, under its lock).
    pub(crate) fn adopt_busy(self: &Arc<Self>) -> BusyGuard {
        BusyGuard(self.clone())
    }

    /// Cancelled when the session ends (DELETE, expiry, server shutdown).
    pub fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    /// Keeps the session from idling out (and from eviction) while a stream of it is open.
    pub(crate) fn stream_opened(self: &Arc<Self>) -> BusyGuard {
        self.busy()
    }

    /// Registers a request in flight so `notifications/cancelled` can reach it; the entry
    /// goes when the returned guard is dropped (the request finished or was dropped).
    pub(crate) fn track(self: &Arc<Self>, id: RequestId, token: CancellationToken) -> InflightGuard {
        let busy = self.busy();
        lock(&self.inflight).insert(id.clone(), token);
        InflightGuard { session: self.clone(), id, _busy: busy }
    }

    /// Cancels a request in flight (the client sent `notifications/cancelled`).
    pub fn cancel(&self, id: &RequestId) {
        if let Some(t) = lock(&self.inflight).remove(id) {
            t.cancel();
        }
    }

    /// How many requests of this session are being handled (diagnostics).
    pub fn requests_in_flight(&self) -> usize {
        lock(&self.inflight).len()
    }

    /// How many requests this server sent the client that await an answer (diagnostics).
    pub fn requests_to_client_pending(&self) -> usize {
        lock(&self.pending).len()
    }

    /// Delivers the client's response to a request this server sent; returns whether a
    /// request was waiting for it.
    pub fn deliver(&self, response: Response) -> bool {
        let Some(id) = response.id.clone() else { return false };
        match lock(&self.pending).remove(&id) {
            Some(tx) => tx.send(response).is_ok(),
            None => false,
        }
    }

    /// Sends a request to the client on `out` and waits for its response, up to the
    /// session's request timeout; on timeout or cancellation the client is told with
    /// `notifications/cancelled`.
    pub(crate) async fn request(
        &self,
        out: &OutgoingTx,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
    ) -> Result<Value> {
        let id = RequestId::String(format!("mcpaxle-{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        // However this ends (answer, timeout, or the caller dropped), nothing stays pending.
        let _pending = Untrack { map: &self.pending, id: &id };
        let request =
            Request { jsonrpc: JsonRpcVersion, id: id.clone(), method: method.to_owned(), params: Some(params) };
        if out.send(Outgoing::Request(request)).is_err() {
            return Err(Error::new(ErrorKind::Cancelled, "the request's stream is closed"));
        }
        let outcome = tokio::select! {
            r = rx => r.map_err(|_| Error::new(ErrorKind::Cancelled, "the session ended")),
            _ = tokio::time::sleep(self.request_timeout) => Err(Error::new(
                ErrorKind::Timeout,
                format!("the client did not answer {method} within {} s", self.request_timeout.as_secs()),
            )),
            _ = cancel.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the request was cancelled")),
            _ = self.closed.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the session ended")),
        };
        match outcome {
            Ok(Response { outcome: Outcome::Result(v), .. }) => Ok(v),
            Ok(Response { outcome: Outcome::Error(e), .. }) => Err(Error::remote(e)),
            Err(e) => {
                let params = serde_json::json!({ "requestId": id.to_value(), "reason": e.message() });
                let _ = out.send(Outgoing::Notification(crate::jsonrpc::Notification::new(
                    "notifications/cancelled",
                    Some(params),
                )));
                Err(e)
            }
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).field("version", &self.version).finish_non_exhaustive()
    }
}

/// Removes a request from its session's in-flight map when dropped.
pub(crate) struct InflightGuard {
    session: Arc<Session>,
    id: RequestId,
    _busy: BusyGuard,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        lock(&self.session.inflight).remove(&self.id);
    }
}

/// Removes an entry from a session's map when dropped.
pub(crate) struct Untrack<'a, V> {
    pub map: &'a Mutex<HashMap<RequestId, V>>,
    pub id: &'a RequestId,
}

impl<V> Drop for Untrack<'_, V> {
    fn drop(&mut self) {
        lock(self.map).remove(self.id);
    }
}

/// What orders sessions by their activity and is told of every change of it: the
/// [`SessionStore`](crate::legacy::SessionStore) holding the session (HTTP). A trait, so that
/// a session does not depend on the store that depends on it.
pub(crate) trait ActivityIndex: Send + Sync {
    /// The activity of `session` changed. Never called with the index locked.
    fn activity_changed(&self, session: &Session);
}

/// Keeps a session in use (not idle: it neither expires nor is evicted) while alive; on drop
/// the session was last used now.
pub(crate) struct BusyGuard(Arc<Session>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        {
            let mut a = lock(&self.0.activity);
            a.busy = a.busy.saturating_sub(1);
            a.last_seen = Instant::now();
        }
        self.0.reindex();
    }
}
