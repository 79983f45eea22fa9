//! The connections of the Streamable HTTP server: how many may be open, how long each may take
//! to send its request, how long it may sit idle, and which one makes room when the server is
//! full.
//!
//! Every accepted connection is in a table. It is *busy* while a request of it is being
//! handled: its body has arrived and its response has not ended (a running handler, an SSE
//! stream, a `subscriptions/listen` carrying keep-alives). Otherwise it is *idle*: between
//! requests, or still sending a request's headers or body. When [`ConnectionLimits::max_connections`]
//! are open, the idle connection least recently busy (or accepted) is closed to make room for
//! the new one. With none idle, the table is shared fairly between hosts (an IPv4 address,
//! or an IPv6 /64): if the host holding the most connections holds more than one beyond what
//! the newcomer's host would, its connection busy the longest is closed (its client reconnects
//! and finds its host at the top: refused), else the new connection is closed at once. One
//! client's streams therefore cannot lock every other client out; clients behind one proxy
//! share one host's share, which is the whole table when they are alone. An idle connection is
//! also closed when it overstays: [`ConnectionLimits::header_read_timeout`] for the headers of
//! a request, [`ConnectionLimits::idle_timeout`] between requests; a body slower than
//! [`ConnectionLimits::body_read_timeout`] is answered `408`.
//!
//! All of this applies to [`HttpServer`](super::HttpServer). An application that mounts
//! [`McpService`](super::McpService) in its own hyper or axum server sets its own
//! server's limits.

use crate::error::{Error, Result};
use bytes::Bytes;
use http::Request;
use http_body::{Body, Frame, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde::{Deserialize, Deserializer};
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

/// The limits of the connections of an [`HttpServer`](super::HttpServer)
/// ([`HttpOptions::connections`](super::HttpOptions::connections)). The defaults need no
/// tuning; every binding takes the same fields, by the names of the JSON form.
///
/// From JSON (the C and Node bindings, and Python's native options, hand this over as data):
/// camelCase names, durations in milliseconds; absent fields keep their defaults. The Python
/// spellings (`max_connections`, `header_read_timeout_ms`, ...) are accepted too.
///
/// ```
/// use mcpaxle::transport::connections::ConnectionLimits;
/// let limits = ConnectionLimits::from_json(serde_json::json!({ "maxConnections": 500, "idleTimeoutMs": 30000 })).unwrap();
/// assert_eq!(limits.max_connections, Some(500));
/// assert_eq!(limits.idle_timeout, std::time::Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ConnectionLimits {
    /// The most connections open at once (JSON `maxConnections`). `None` (the default): sized
    /// from the process's file-descriptor limit once the server has raised its soft limit to
    /// the hard one: three quarters of it, at least 16 and at most 10,000 (768 for a limit of
    /// 1,024). When that many are open, the least recently busy idle connection is closed for
    /// each new one; with none idle, the oldest busy connection of the host holding the most
    /// makes room if that host holds more than the newcomer's (see the module's doc); else the
    /// new connection is closed at once.
    #[serde(alias = "max_connections")]
    pub max_connections: Option<usize>,
    /// How long a client may take to send a request's headers (default 10 s; JSON
    /// `headerReadTimeoutMs`): from the connect for a connection's first request, from its
    /// first byte for the next ones. Past it the connection is closed.
    #[serde(rename = "headerReadTimeoutMs", alias = "header_read_timeout_ms", with = "crate::options::ms")]
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request's body once its headers are in (default
    /// 30 s; JSON `bodyReadTimeoutMs`). Past it the request is answered `408` with a JSON-RPC
    /// error and the connection is closed.
    #[serde(rename = "bodyReadTimeoutMs", alias = "body_read_timeout_ms", with = "crate::options::ms")]
    pub body_read_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request (default 60 s; JSON
    /// `idleTimeoutMs`). Busy connections (a handler running, a response stream open, a listen
    /// stream with its keep-alives) are never idle.
    #[serde(rename = "idleTimeoutMs", alias = "idle_timeout_ms", with = "crate::options::ms")]
    pub idle_timeout: Duration,
    /// The interval of HTTP/2 PING frames on an HTTP/2 connection (default 30 s; JSON
    /// `http2KeepAliveIntervalMs`, `0` for none): a peer that has gone away is noticed even
    /// while its streams are quiet.
    #[serde(
        rename = "http2KeepAliveIntervalMs",
        alias = "http2_keep_alive_interval_ms",
        deserialize_with = "optional_millis"
    )]
    pub http2_keep_alive_interval: Option<Duration>,
    /// How long an HTTP/2 PING may go unanswered before the connection is closed (default
    /// 20 s; JSON `http2KeepAliveTimeoutMs`).
    #[serde(rename = "http2KeepAliveTimeoutMs", alias = "http2_keep_alive_timeout_ms", with = "crate::options::ms")]
    pub http2_keep_alive_timeout: Duration,
    /// The most bytes of request headers (default 64 KiB, at least 8 KiB; JSON
    /// `maxHeaderBytes`): the HTTP/1.1 read buffer and the HTTP/2 header list. Larger headers
    /// get `431` (HTTP/1.1) or a stream reset (HTTP/2).
    #[serde(alias = "max_header_bytes")]
    pub max_header_bytes: usize,
    /// The most requests at once on one HTTP/2 connection (default 100; JSON
    /// `http2MaxConcurrentStreams`).
    #[serde(rename = "http2MaxConcurrentStreams", alias = "http2_max_concurrent_streams")]
    pub http2_max_concurrent_streams: u32,
    /// The most bytes of request bodies held at once while they arrive, over all connections
    /// (default 128 MiB; JSON `maxBodyBytesInFlight`). A body that would go past it is answered
    /// `503` with `Retry-After`; each body is also capped by
    /// [`HttpOptions::max_body`](super::HttpOptions::max_body).
    #[serde(alias = "max_body_bytes_in_flight")]
    pub max_body_bytes_in_flight: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: None,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            http2_keep_alive_interval: Some(Duration::from_secs(30)),
            http2_keep_alive_timeout: Duration::from_secs(20),
            max_header_bytes: 64 << 10,
            http2_max_concurrent_streams: 100,
            max_body_bytes_in_flight: 128 << 20,
        }
    }
}

/// The fewest header bytes hyper's HTTP/1.1 buffer takes.
const MIN_HEADER_BYTES: usize = 8 << 10;
/// The most connections [`ConnectionLimits::max_connections`] defaults to, whatever the fd limit
/// (about 16 KiB each while idle: 160 MiB at most).
const MAX_DEFAULT_CONNECTIONS: usize = 10_000;

impl ConnectionLimits {
    /// The limits of a JSON object (camelCase names, durations in milliseconds); absent fields
    /// keep their defaults, unknown ones are an error naming them.
    pub fn from_json(value: serde_json::Value) -> Result<Self> {
        let limits: ConnectionLimits =
            serde_json::from_value(value).map_err(|e| Error::usage(format!("connection limits: {e}")))?;
        limits.validate()?;
        Ok(limits)
    }

    /// Checks values the server cannot use.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::usage(format!("connection limits: {m}")));
        if self.max_connections == Some(0) {
            return bad("maxConnections must be at least 1".into());
        }
        if self.max_header_bytes < MIN_HEADER_BYTES {
            return bad(format!("maxHeaderBytes must be at least {MIN_HEADER_BYTES}, not {}", self.max_header_bytes));
        }
        if self.max_body_bytes_in_flight == 0 {
            return bad("maxBodyBytesInFlight must be at least 1".into());
        }
        if self.http2_max_concurrent_streams == 0 {
            return bad("http2MaxConcurrentStreams must be at least 1".into());
        }
        for (name, d) in [
            ("headerReadTimeoutMs", self.header_read_timeout),
            ("bodyReadTimeoutMs", self.body_read_timeout),
            ("idleTimeoutMs", self.idle_timeout),
        ] {
            if d.is_zero() {
                return bad(format!("{name} must be more than 0"));
            }
        }
        Ok(())
    }

    /// [`ConnectionLimits::max_connections`], or its default for the current fd limit.
    pub fn resolved_max_connections(&self) -> usize {
        self.max_connections.unwrap_or_else(|| default_max_connections(fd_limit().unwrap_or(1024)))
    }

    /// hyper's connection builder with these limits (HTTP/1.1 with keep-alive, and HTTP/2 with
    /// prior knowledge).
    pub(crate) fn builder(&self) -> hyper_util::server::conn::auto::Builder<TokioExecutor> {
        let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        // hyper's own header timeout would also end idle keep-alive connections at the header
        // limit, and does not cover the protocol sniffing before it: the table times both.
        builder.http1().header_read_timeout(None).max_buf_size(self.max_header_bytes.max(MIN_HEADER_BYTES));
        builder
            .http2()
            .timer(TokioTimer::new())
            .keep_alive_interval(self.http2_keep_alive_interval)
            .keep_alive_timeout(self.http2_keep_alive_timeout)
            .max_concurrent_streams(self.http2_max_concurrent_streams)
            .max_header_list_size(u32::try_from(self.max_header_bytes).unwrap_or(u32::MAX));
        builder
    }
}

fn optional_millis<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Duration>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|&ms| ms > 0).map(Duration::from_millis))
}

/// Three quarters of `fds` (the rest for the process's other files), within 16..=10,000.
fn default_max_connections(fds: u64) -> usize {
    usize::try_from(fds / 4 * 3).unwrap_or(usize::MAX).clamp(16, MAX_DEFAULT_CONNECTIONS)
}

/// The soft limit of this process's file descriptors.
pub fn fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes into the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0 {
            // rlim_t is u64 on Linux, another integer elsewhere.
            #[allow(clippy::unnecessary_cast)]
            return Some(r.rlim_cur as u64);
        }
    }
    None
}

/// Raises the soft limit of this process's file descriptors to its hard limit, as most servers
/// do at start; once per process (later calls return the first result). The limit now, or
/// `None` where it cannot be read. [`HttpServer::bind`](super::HttpServer::bind) calls it.
pub fn raise_fd_limit() -> Option<u64> {
    static RAISED: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *RAISED.get_or_init(|| {
        #[cfg(unix)]
        {
            let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit/setrlimit on a valid struct.
            unsafe {
                if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
                    return None;
                }
                if r.rlim_cur < r.rlim_max {
                    let want = libc::rlimit { rlim_cur: r.rlim_max, rlim_max: r.rlim_max };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &want) != 0 {
                        tracing::debug!(
                            "cannot raise the fd limit to {}: {}",
                            r.rlim_max,
                            std::io::Error::last_os_error()
                        );
                    }
                }
            }
        }
        fd_limit()
    })
}

/// A body that took longer than [`ConnectionLimits::body_read_timeout`]: the error its request
/// body ends with (the endpoint answers `408`).
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeout {
    /// The limit it went past.
    pub limit: Duration,
}

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request body did not arrive within {} ms", self.limit.as_millis())
    }
}

impl std::error::Error for BodyTimeout {}

/// A body refused because the bodies arriving over all connections already hold
/// [`ConnectionLimits::max_body_bytes_in_flight`] (the endpoint answers `503`).
#[derive(Debug, Clone, Copy)]
pub struct BodiesInFlight {
    /// The limit it would have gone past.
    pub limit: usize,
}

impl std::fmt::Display for BodiesInFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request bodies arriving already hold {} bytes", self.limit)
    }
}

impl std::error::Error for BodiesInFlight {}

/// The open connections of one server.
pub(crate) struct Connections {
    limits: ConnectionLimits,
    max: usize,
    epoch: Instant,
    table: Mutex<Table>,
    /// Bytes of the request bodies now arriving.
    body_bytes: AtomicUsize,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// Bumped whenever a connection is accepted or stops being busy: the LRU order.
    seq: u64,
    open: HashMap<u64, Entry>,
    /// `(seq, id)` of the idle connections, least recently busy first.
    idle: BTreeSet<(u64, u64)>,
    /// How many connections each host holds ([`crate::peer::host_of`]).
    hosts: HashMap<IpAddr, usize>,
}

struct Entry {
    seq: u64,
    busy: u32,
    host: Option<IpAddr>,
    shared: Arc<Shared>,
}

/// What a connection's tasks share: its requests, times (ms since the table's epoch, `0` for
/// none) and close signal.
struct Shared {
    id: u64,
    accepted: u64,
    /// Requests whose headers are in and whose response has not ended.
    open: AtomicU32,
    /// Requests started on this connection.
    served: AtomicU64,
    /// When `open` last fell to 0.
    idle_since: AtomicU64,
    /// The first byte of the next request's headers, while none is open.
    head_started: AtomicU64,
    h2: AtomicBool,
    sniffed: AtomicBool,
    close: CancellationToken,
}

impl Connections {
    /// The table for `limits` (`max_connections` resolved now).
    pub(crate) fn new(limits: &ConnectionLimits) -> Arc<Connections> {
        let max = limits.resolved_max_connections();
        Arc::new(Connections {
            limits: limits.clone(),
            max,
            epoch: Instant::now(),
            table: Mutex::default(),
            body_bytes: AtomicUsize::new(0),
        })
    }

    fn now(&self) -> u64 {
        // Never 0, which means "none".
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many connections are open.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().open.len()
    }

    /// Takes a new connection from `peer` in. When full: the least recently busy idle
    /// connection is closed; with none idle, the connection busy the longest of the host
    /// holding the most is closed if that host holds more than one beyond what `peer`'s host
    /// would (so one client's streams cannot lock everyone else out, and under exhaustion the
    /// table tends to equal shares per host); else `None` (close the new one).
    pub(crate) fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Option<Conn> {
        let now = self.now();
        let host = peer.map(crate::peer::host_of);
        let mut t = self.lock();
        if t.open.len() >= self.max && !Self::shed_locked(&mut t) && !Self::shed_busiest_host(&mut t, host) {
            return None;
        }
        t.next_id += 1;
        t.seq += 1;
        let (id, seq) = (t.next_id, t.seq);
        let shared = Arc::new(Shared {
            id,
            accepted: now,
            open: AtomicU32::new(0),
            served: AtomicU64::new(0),
            idle_since: AtomicU64::new(now),
            head_started: AtomicU64::new(0),
            h2: AtomicBool::new(false),
            sniffed: AtomicBool::new(false),
            close: CancellationToken::new(),
        });
        t.open.insert(id, Entry { seq, busy: 0, host, shared: shared.clone() });
        t.idle.insert((seq, id));
        if let Some(h) = host {
            *t.hosts.entry(h).or_default() += 1;
        }
        Some(Conn { table: self.clone(), shared })
    }

    /// Closes the least recently busy idle connection (when descriptors ran out); whether
    /// there was one.
    pub(crate) fn shed_idle(&self) -> bool {
        Self::shed_locked(&mut self.lock())
    }

    fn shed_locked(t: &mut Table) -> bool {
        let Some((_, id)) = t.idle.pop_first() else { return false };
        if let Some(e) = Self::take(t, id) {
            tracing::debug!("connection limit reached: closing idle connection {id}");
            e.shared.close.cancel();
        }
        true
    }

    /// Full of busy connections: closes the one busy the longest of the host that holds the
    /// most, when that is not `newcomer`'s host and holds more than one beyond what
    /// `newcomer`'s would after admission; whether it did.
    fn shed_busiest_host(t: &mut Table, newcomer: Option<IpAddr>) -> bool {
        let Some((&top, &held)) = t.hosts.iter().max_by_key(|(_, n)| **n) else { return false };
        let theirs = newcomer.and_then(|h| t.hosts.get(&h).copied()).unwrap_or(0);
        if Some(top) == newcomer || held <= theirs + 1 {
            return false;
        }
        let oldest = t.open.iter().filter(|(_, e)| e.host == Some(top)).min_by_key(|(_, e)| e.seq).map(|(id, _)| *id);
        let Some(e) = oldest.and_then(|id| Self::take(t, id)) else { return false };
        tracing::warn!(
            "connection limit reached with every connection busy: closing the oldest of the {held} held by {top} \
             to let another client in"
        );
        e.shared.close.cancel();
        true
    }

    /// Takes connection `id` out of the table and its indexes.
    fn take(t: &mut Table, id: u64) -> Option<Entry> {
        let e = t.open.remove(&id)?;
        if e.busy == 0 {
            t.idle.remove(&(e.seq, id));
        }
        if let Some(h) = e.host {
            if let Some(n) = t.hosts.get_mut(&h) {
                *n -= 1;
                if *n == 0 {
                    t.hosts.remove(&h);
                }
            }
        }
        Some(e)
    }

    fn remove(&self, id: u64) {
        Self::take(&mut self.lock(), id);
    }

    fn set_busy(&self, id: u64) {
        let mut t = self.lock();
        let Some(e) = t.open.get_mut(&id) else { return };
        e.busy += 1;
        if e.busy == 1 {
            let key = (e.seq, id);
            t.idle.remove(&key);
        }
    }

    fn end_busy(&self, id: u64) {
        let mut t = self.lock();
        t.seq += 1;
        let seq = t.seq;
        let Some(e) = t.open.get_mut(&id) else { return };
        e.busy = e.busy.saturating_sub(1);
        if e.busy == 0 {
            e.seq = seq;
            t.idle.insert((seq, id));
        }
    }
}

/// One admitted connection; it leaves the table when dropped.
#[derive(Clone)]
pub(crate) struct Conn {
    table: Arc<Connections>,
    shared: Arc<Shared>,
}

/// The connection's guard, owned by its task: dropping it takes the connection out.
pub(crate) struct Admitted(pub(crate) Conn);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.table.remove(self.0.shared.id);
    }
}

impl Conn {
    /// The socket, watched for the first bytes of each request's headers.
    pub(crate) fn io<T>(&self, io: T) -> TrackedIo<T> {
        TrackedIo { io, conn: self.clone() }
    }

    /// A request whose headers are in: its body with the body deadline, and the state that
    /// ends with its response ([`Conn::respond`]).
    pub(crate) fn request(&self, req: Request<hyper::body::Incoming>) -> (Request<DeadlineBody>, Arc<RequestState>) {
        let s = &self.shared;
        s.open.fetch_add(1, Ordering::SeqCst);
        s.served.fetch_add(1, Ordering::SeqCst);
        s.head_started.store(0, Ordering::SeqCst);
        let state = Arc::new(RequestState { conn: self.clone(), busy: AtomicBool::new(false) });
        let limit = self.table.limits.body_read_timeout;
        let (parts, body) = req.into_parts();
        let body = DeadlineBody {
            done: false,
            held: 0,
            inner: body,
            deadline: Box::pin(tokio::time::sleep(limit)),
            limit,
            state: state.clone(),
        };
        if body.inner.is_end_stream() {
            state.set_busy();
        }
        (Request::from_parts(parts, body), state)
    }

    /// The response of a request: the request stays open until its body ends or is dropped.
    pub(crate) fn respond<B>(
        &self,
        resp: http::Response<B>,
        state: Arc<RequestState>,
    ) -> http::Response<TrackedBody<B>> {
        // A response before the body ended (a refusal): the handler is done with it.
        state.set_busy();
        resp.map(|inner| TrackedBody { inner, _state: state })
    }

    /// Completes when the connection must close: it overstayed a limit while idle, or was
    /// closed to make room.
    ///
    /// Nothing a request does tells this watch: whatever it changes (a request's headers
    /// starting, a response ending) sets a deadline at least the shorter of the header and
    /// idle timeouts after it. So the watch looks again at the deadline it knows or that long
    /// from now, whichever comes first, and never misses one; a request re-arms no timer.
    pub(crate) async fn expired(&self) {
        let s = &self.shared;
        let l = &self.table.limits;
        // At least daily, so that the time to wake at is one an `Instant` holds, whatever the
        // timeouts (`Duration::MAX` among them).
        let soonest =
            u64::try_from(l.header_read_timeout.min(l.idle_timeout).as_millis()).unwrap_or(u64::MAX).clamp(1, DAY_MS);
        loop {
            let now = self.table.now();
            let look = match self.deadline() {
                Some(d) if d <= now => {
                    tracing::debug!("closing connection {}: it overstayed its header or idle timeout", s.id);
                    return;
                }
                Some(d) => d.min(now.saturating_add(soonest)),
                None => now.saturating_add(soonest),
            };
            // `now` counts from 1: a deadline is reached when the epoch is `look - 1` ms behind.
            let at = self.table.epoch + Duration::from_millis(look - 1);
            tokio::select! {
                _ = s.close.cancelled() => return,
                _ = tokio::time::sleep_until(at) => {}
            }
        }
    }

    /// When the connection times out if nothing changes (ms since the epoch); `None` while a
    /// request is open.
    fn deadline(&self) -> Option<u64> {
        let s = &self.shared;
        let l = &self.table.limits;
        if s.open.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let after = |t: u64, d: Duration| t.saturating_add(d.as_millis().try_into().unwrap_or(u64::MAX));
        let head_started = s.head_started.load(Ordering::SeqCst);
        Some(if s.served.load(Ordering::SeqCst) == 0 {
            after(s.accepted, l.header_read_timeout)
        } else if head_started != 0 && !s.h2.load(Ordering::Relaxed) {
            after(head_started, l.header_read_timeout)
        } else {
            after(s.idle_since.load(Ordering::SeqCst), l.idle_timeout)
        })
    }

    fn on_read(&self, bytes: &[u8]) {
        let s = &self.shared;
        if !s.sniffed.swap(true, Ordering::Relaxed) && bytes.starts_with(b"PRI ") {
            s.h2.store(true, Ordering::Relaxed);
        }
        if s.open.load(Ordering::SeqCst) == 0
            && s.head_started.load(Ordering::SeqCst) == 0
            && s.served.load(Ordering::SeqCst) > 0
        {
            s.head_started.store(self.table.now(), Ordering::SeqCst);
        }
    }
}

/// A day in ms: the longest a connection's watch sleeps before it looks again.
const DAY_MS: u64 = 24 * 3600 * 1000;

/// One request of a connection, from its headers to the end of its response.
pub(crate) struct RequestState {
    conn: Conn,
    /// Its body has arrived (or the handler answered): the connection is busy.
    busy: AtomicBool,
}

impl RequestState {
    fn set_busy(&self) {
        if !self.busy.swap(true, Ordering::SeqCst) {
            self.conn.table.set_busy(self.conn.shared.id);
        }
    }
}

impl Drop for RequestState {
    fn drop(&mut self) {
        let s = &self.conn.shared;
        if *self.busy.get_mut() {
            self.conn.table.end_busy(s.id);
        }
        if s.open.fetch_sub(1, Ordering::SeqCst) == 1 {
            s.idle_since.store(self.conn.table.now(), Ordering::SeqCst);
        }
    }
}

/// A request body that fails with [`BodyTimeout`] past its deadline.
pub(crate) struct DeadlineBody {
    inner: hyper::body::Incoming,
    deadline: Pin<Box<Sleep>>,
    limit: Duration,
    done: bool,
    /// Bytes taken from the table's body budget, given back when dropped.
    held: usize,
    state: Arc<RequestState>,
}

impl DeadlineBody {
    fn take(&mut self, n: usize) -> bool {
        let budget = &self.state.conn.table.body_bytes;
        let limit = self.state.conn.table.limits.max_body_bytes_in_flight;
        let ok = budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| held.checked_add(n).filter(|&t| t <= limit))
            .is_ok();
        if ok {
            self.held += n;
        }
        ok
    }
}

impl Drop for DeadlineBody {
    fn drop(&mut self) {
        self.state.conn.table.body_bytes.fetch_sub(self.held, Ordering::SeqCst);
    }
}

impl Body for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.done = true;
                this.state.set_busy();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) if frame.data_ref().is_some_and(|d| !this.take(d.len())) => {
                this.done = true;
                let limit = this.state.conn.table.limits.max_body_bytes_in_flight;
                Poll::Ready(Some(Err(Box::new(BodiesInFlight { limit }))))
            }
            Poll::Ready(Some(r)) => {
                if this.inner.is_end_stream() {
                    this.done = true;
                    this.state.set_busy();
                }
                Poll::Ready(Some(r.map_err(Into::into)))
            }
            Poll::Pending if !this.done && this.deadline.as_mut().poll(cx).is_ready() => {
                this.done = true;
                Poll::Ready(Some(Err(Box::new(BodyTimeout { limit: this.limit }))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

use std::future::Future as _;

/// A response body that keeps its request open until it ends.
pub(crate) struct TrackedBody<B> {
    inner: B,
    _state: Arc<RequestState>,
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A socket whose reads mark when a request's headers start arriving.
pub(crate) struct TrackedIo<T> {
    io: T,
    conn: Conn,
}

impl<T: AsyncRead + Unpin> AsyncRead for TrackedIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.on_read(&buf.filled()[before..]);
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TrackedIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Whether an accept failed for want of file descriptors.
pub(crate) fn out_of_descriptors(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limits_come_from_camel_case_json_in_milliseconds_and_python_names() {
        let l = ConnectionLimits::from_json(json!({
            "maxConnections": 5, "headerReadTimeoutMs": 1500, "bodyReadTimeoutMs": 2000, "idleTimeoutMs": 3000,
            "http2KeepAliveIntervalMs": 0, "http2KeepAliveTimeoutMs": 400, "maxHeaderBytes": 16384, "http2MaxConcurrentStreams": 7,
            "maxBodyBytesInFlight": 1048576
        }))
        .unwrap();
        assert_eq!(
            l,
            ConnectionLimits {
                max_connections: Some(5),
                header_read_timeout: Duration::from_millis(1500),
                body_read_timeout: Duration::from_secs(2),
                idle_timeout: Duration::from_secs(3),
                http2_keep_alive_interval: None,
                http2_keep_alive_timeout: Duration::from_millis(400),
                max_header_bytes: 16384,
                http2_max_concurrent_streams: 7,
                max_body_bytes_in_flight: 1 << 20,
            }
        );
        let py = ConnectionLimits::from_json(
            json!({ "max_connections": 9, "idle_timeout_ms": 10, "http2_keep_alive_interval_ms": 50 }),
        )
        .unwrap();
        assert_eq!(
            (py.max_connections, py.idle_timeout, py.http2_keep_alive_interval),
            (Some(9), Duration::from_millis(10), Some(Duration::from_millis(50)))
        );
        assert_eq!(ConnectionLimits::from_json(json!({})).unwrap(), ConnectionLimits::default());
        assert_eq!(ConnectionLimits::from_json(json!({ "maxConnections": null })).unwrap().max_connections, None);
    }

    #[test]
    fn bad_limits_are_errors_that_name_the_field() {
        for (v, needle) in [
            (json!({ "idleTimeout": 5 }), "unknown field `idleTimeout`"),
            (json!({ "idleTimeoutMs": -1 }), "invalid value: integer `-1`, expected u64"),
            (json!({ "idleTimeoutMs": 0 }), "idleTimeoutMs must be more than 0"),
            (json!({ "maxConnections": 0 }), "maxConnections must be at least 1"),
            (json!({ "maxHeaderBytes": 1024 }), "maxHeaderBytes must be at least 8192"),
            (json!({ "http2MaxConcurrentStreams": 0 }), "http2MaxConcurrentStreams must be at least 1"),
        ] {
            let e = ConnectionLimits::from_json(v.clone()).expect_err(&v.to_string()).to_string();
            assert!(e.contains(needle), "{v}: {e}");
        }
    }

    #[test]
    fn the_default_connection_limit_follows_the_fd_limit() {
        assert_eq!(default_max_connections(1024), 768);
        assert_eq!(default_max_connections(8), 16);
        assert_eq!(default_max_connections(1 << 20), MAX_DEFAULT_CONNECTIONS);
        let raised = raise_fd_limit();
        assert_eq!(raised, fd_limit());
        assert_eq!(
            ConnectionLimits::default().resolved_max_connections(),
            default_max_connections(raised.unwrap_or(1024))
        );
    }

    #[tokio::test]
    async fn the_table_sheds_the_least_recently_busy_idle_connection() {
        let table = Connections::new(&ConnectionLimits { max_connections: Some(2), ..Default::default() });
        let a = table.admit(None).unwrap();
        let b = table.admit(None).unwrap();
        // `a` busy, then idle again: now more recent than `b`.
        table.set_busy(a.shared.id);
        table.end_busy(a.shared.id);
        let c = table.admit(None).unwrap();
        assert!(b.shared.close.is_cancelled() && !a.shared.close.is_cancelled());
        // Both left busy: no room.
        table.set_busy(a.shared.id);
        table.set_busy(c.shared.id);
        assert!(table.admit(None).is_none());
        assert!(!table.shed_idle());
        assert_eq!(table.len(), 2);
        drop(Admitted(c));
        assert_eq!(table.len(), 1);
        assert!(table.admit(None).is_some());
    }

    #[tokio::test]
    async fn a_table_full_of_busy_connections_is_shared_fairly_between_hosts() {
        let table = Connections::new(&ConnectionLimits { max_connections: Some(4), ..Default::default() });
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        let busy = |c: &Conn| table.set_busy(c.shared.id);
        // One host takes the whole table with busy connections (listen streams, say).
        let hog: Vec<Conn> = (0..4).map(|_| table.admit(ip("192.0.2.1")).unwrap()).collect();
        hog.iter().for_each(busy);
        // The hog's next one is refused, nothing of its own is closed.
        assert!(table.admit(ip("192.0.2.1")).is_none());
        assert!(hog.iter().all(|c| !c.shared.close.is_cancelled()));
        // Another host gets in: the hog's oldest connection makes room.
        let other = table.admit(ip("198.51.100.7")).unwrap();
        busy(&other);
        assert!(hog[0].shared.close.is_cancelled() && !hog[1].shared.close.is_cancelled());
        // Another address of the same IPv6 /64 counts as one host; two more hosts get in too.
        let v6a = table.admit(ip("2001:db8::1")).unwrap();
        busy(&v6a);
        assert!(hog[1].shared.close.is_cancelled());
        assert_eq!(table.lock().hosts[&"192.0.2.1".parse::<IpAddr>().unwrap()], 2);
        // Now 2 (hog) + 1 + 1: the /64's second address would hold 2, no more than the hog.
        assert!(table.admit(ip("2001:db8::ffff")).is_none());
        // Without a peer (a test, a Unix socket) a newcomer holds nothing: the hog still yields.
        let anon = table.admit(None).unwrap();
        assert!(hog[2].shared.close.is_cancelled());
        drop(Admitted(anon));
        assert_eq!(table.len(), 3);
    }
}
