//! Legacy sessions: what a 2025-11-25 client set up with `initialize`, and the store that
//! mints, finds, expires and caps them.

use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{ErrorObject, Request, RequestId, Response, JsonRpcVersion, Outcome};
use crate::schema::LoggingLevel;
use crate::server::exchange::Outgoing;
use crate::server::seal::fill_random;
use crate::legacy::LegacyOptions;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use crate::server::exchange::OutgoingTx;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
    last_seen: Mutex<Instant>,
    open_streams: AtomicUsize,
    closed: CancellationToken,
    request_timeout: Duration,
}

impl Session {
    pub(crate) fn new(version: String, client_capabilities: Map<String, Value>, client_info: Option<Value>, request_timeout: Duration) -> Self {
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
            last_seen: Mutex::new(Instant::now()),
            open_streams: AtomicUsize::new(0),
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
        *lock(&self.last_seen) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        if self.open_streams.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        lock(&self.last_seen).elapsed()
    }

    /// Cancelled when the session ends (DELETE, expiry, server shutdown).
    pub fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    pub(crate) fn stream_opened(self: &Arc<Self>) -> StreamGuard {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
        StreamGuard(self.clone())
    }

    /// Registers a request in flight so `notifications/cancelled` can reach it; the entry
    /// goes when the returned guard is dropped (the request finished or was dropped).
    pub(crate) fn track(self: &Arc<Self>, id: RequestId, token: CancellationToken) -> InflightGuard {
        lock(&self.inflight).insert(id.clone(), token);
        InflightGuard { session: self.clone(), id }
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
    pub(crate) async fn request(&self, out: &OutgoingTx, method: &str, params: Value, cancel: &CancellationToken) -> Result<Value> {
        let id = RequestId::String(format!("mcpaxle-{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        // However this ends (answer, timeout, or the caller dropped), nothing stays pending.
        let _pending = Untrack { map: &self.pending, id: &id };
        let request = Request { jsonrpc: JsonRpcVersion, id: id.clone(), method: method.to_owned(), params: Some(params) };
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
                let _ = out.send(Outgoing::Notification(crate::jsonrpc::Notification::new("notifications/cancelled", Some(params))));
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

/// Keeps a session from idling out while a stream of it is open.
pub(crate) struct StreamGuard(Arc<Session>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// The sessions of one HTTP endpoint: minted on `initialize`, expired when idle, capped in
/// number.
pub struct SessionStore {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    options: LegacyOptions,
    reaper: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl SessionStore {
    /// A store with these limits.
    pub fn new(options: LegacyOptions) -> Arc<Self> {
        Arc::new(SessionStore { sessions: Mutex::default(), options, reaper: Mutex::new(None) })
    }

    /// Adds a session, or refuses when the store is full.
    pub fn insert(self: &Arc<Self>, session: Arc<Session>) -> std::result::Result<(), ErrorObject> {
        {
            let mut map = lock(&self.sessions);
            if map.len() >= self.options.max_sessions {
                return Err(ErrorObject::new(
                    -32000,
                    format!(
                        "Server busy: {} sessions are open, the maximum; retry later, and end unused sessions with DELETE",
                        self.options.max_sessions
                    ),
                ));
            }
            map.insert(session.id.clone(), session);
        }
        self.ensure_reaper();
        Ok(())
    }

    /// Finds a live session and marks it used.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let s = lock(&self.sessions).get(id).cloned();
        if let Some(s) = &s {
            s.touch();
        }
        s
    }

    /// Ends a session; returns whether it existed.
    pub fn remove(&self, id: &str) -> bool {
        match lock(&self.sessions).remove(id) {
            Some(s) => {
                s.closed.cancel();
                true
            }
            None => false,
        }
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends every session (server shutdown).
    pub fn close_all(&self) {
        for (_, s) in lock(&self.sessions).drain() {
            s.closed.cancel();
        }
        if let Some(r) = lock(&self.reaper).take() {
            r.abort();
        }
    }

    /// Removes sessions idle for longer than the idle timeout; returns how many.
    pub fn expire_idle(&self) -> usize {
        let idle = self.options.idle_timeout;
        let mut expired = Vec::new();
        lock(&self.sessions).retain(|_, s| {
            let keep = s.idle_for() < idle;
            if !keep {
                expired.push(s.clone());
            }
            keep
        });
        for s in &expired {
            s.closed.cancel();
        }
        if !expired.is_empty() {
            let mut map = lock(&self.sessions);
            let keep = map.len() * 2;
            map.shrink_to(keep);
        }
        expired.len()
    }

    fn ensure_reaper(self: &Arc<Self>) {
        let mut reaper = lock(&self.reaper);
        if reaper.is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let weak: Weak<SessionStore> = Arc::downgrade(self);
        let period = (self.options.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        *reaper = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(store) => {
                        store.expire_idle();
                    }
                    None => return,
                }
            }
        }));
    }
}

impl Drop for SessionStore {
    fn drop(&mut self) {
        if let Some(r) = lock(&self.reaper).take() {
            r.abort();
        }
    }
}
