//! The sessions of one HTTP endpoint: minted on `initialize`, bound to the principal that
//! opened them, expired when idle, capped in number overall and per principal (or per peer
//! address), and, when full, the least recently used idle one makes room for a new one.

use crate::jsonrpc::ErrorObject;
use crate::legacy::LegacyOptions;
use crate::legacy::session::{ActivityIndex, BusyGuard, Session, lock};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Why `initialize` found no room for a new session: everything that could make room is in
/// use. No time is promised: a slot frees up when a request or stream of a session ends, or
/// when a client ends its session with DELETE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRefused {
    /// All [`LegacyOptions::max_sessions`] sessions are busy (a request in flight or an open
    /// stream); HTTP answers `503`.
    Full {
        /// The table's size.
        max_sessions: usize,
    },
    /// The principal (or the peer address, unauthenticated) already holds its quota of
    /// sessions ([`LegacyOptions::max_sessions_per_principal`], `max_sessions_per_peer`), all
    /// busy; HTTP answers `429`.
    Quota {
        /// The quota that applies.
        limit: usize,
        /// `"principal"` or `"peer address"`.
        per: &'static str,
    },
}

impl SessionRefused {
    /// The JSON-RPC error (-32000) a client gets, saying what to do.
    pub fn to_error_object(&self) -> ErrorObject {
        let message = match self {
            SessionRefused::Full { max_sessions } => format!(
                "Server busy: all {max_sessions} sessions are in use (a request in flight or an open stream); retry when one ends, and end unused sessions with DELETE"
            ),
            SessionRefused::Quota { limit, per } => format!(
                "Too many sessions: this {per} already has {limit} sessions open, all in use (a request in flight or an open stream); end unused sessions with DELETE"
            ),
        };
        ErrorObject::new(-32000, message)
    }
}

/// Whose quota a session counts against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum QuotaKey {
    Principal(String),
    /// An IPv4 address, or the /64 prefix of an IPv6 one (what one host usually holds whole).
    Peer(IpAddr),
}

impl QuotaKey {
    fn peer(ip: IpAddr) -> QuotaKey {
        QuotaKey::Peer(crate::peer::host_of(ip))
    }
}

/// Where an idle session sits in eviction order: sessions that never went past `initialize`
/// go first, then the least recently used.
type IdleKey = (bool, Instant, u64);

/// Idle sessions in eviction order.
#[derive(Default)]
struct Lru {
    /// Never went past `initialize`, oldest first.
    fresh: BTreeMap<(Instant, u64), Arc<Session>>,
    /// Initialized, least recently used first.
    used: BTreeMap<(Instant, u64), Arc<Session>>,
}

impl Lru {
    fn side(&mut self, initialized: bool) -> &mut BTreeMap<(Instant, u64), Arc<Session>> {
        if initialized { &mut self.used } else { &mut self.fresh }
    }

    fn insert(&mut self, (initialized, at, serial): IdleKey, session: Arc<Session>) {
        self.side(initialized).insert((at, serial), session);
    }

    fn remove(&mut self, (initialized, at, serial): IdleKey) {
        self.side(initialized).remove(&(at, serial));
    }

    /// The session to evict first.
    fn victim(&self) -> Option<&Arc<Session>> {
        self.fresh.values().next().or_else(|| self.used.values().next())
    }
}

struct Entry {
    session: Arc<Session>,
    /// The principal that opened the session (`None`: it was opened without one).
    principal: Option<String>,
    quota: Option<QuotaKey>,
    serial: u64,
    /// Where it sits among the idle sessions; `None` while in use.
    idle: Option<IdleKey>,
}

#[derive(Default)]
struct Quota {
    count: usize,
    idle: Lru,
}

#[derive(Default)]
struct Table {
    entries: HashMap<String, Entry>,
    idle: Lru,
    quotas: HashMap<QuotaKey, Quota>,
    next_serial: u64,
}

impl Table {
    /// Moves a session to where its activity puts it in eviction order.
    fn reindex(&mut self, session: &Session) {
        let Some(entry) = self.entries.get_mut(session.id()) else { return };
        if !std::ptr::eq(Arc::as_ptr(&entry.session), session) {
            return;
        }
        let a = session.activity();
        let want = (a.busy == 0).then_some((a.initialized, a.last_seen, entry.serial));
        if want == entry.idle {
            return;
        }
        let quota = entry.quota.as_ref().and_then(|k| self.quotas.get_mut(k));
        if let Some(old) = entry.idle.take() {
            self.idle.remove(old);
            if let Some(q) = quota {
                q.idle.remove(old);
            }
        }
        if let Some(new) = want {
            self.idle.insert(new, entry.session.clone());
            if let Some(q) = entry.quota.as_ref().and_then(|k| self.quotas.get_mut(k)) {
                q.idle.insert(new, entry.session.clone());
            }
        }
        entry.idle = want;
    }

    /// Takes a session out of the table and every index.
    fn take(&mut self, id: &str) -> Option<Arc<Session>> {
        let entry = self.entries.remove(id)?;
        if let Some(k) = entry.idle {
            self.idle.remove(k);
        }
        if let Some(key) = &entry.quota {
            if let Some(q) = self.quotas.get_mut(key) {
                q.count -= 1;
                if let Some(k) = entry.idle {
                    q.idle.remove(k);
                }
                if q.count == 0 {
                    self.quotas.remove(key);
                }
            }
        }
        Some(entry.session)
    }

    /// Takes the first idle session of `lru` (the table's or a quota's) out of the table.
    fn evict(&mut self, quota: Option<&QuotaKey>) -> Option<Arc<Session>> {
        loop {
            let lru = match quota {
                Some(k) => &self.quotas.get(k)?.idle,
                None => &self.idle,
            };
            let session = lru.victim()?.clone();
            // Only the store's own checkout makes an idle session busy, under this lock; should
            // anything else have, the index is put right rather than a busy session ended.
            if session.activity().busy > 0 {
                self.reindex(&session);
                continue;
            }
            return self.take(session.id());
        }
    }

    /// The idle session whose time is up first, if it is up.
    fn expired(&self, now: Instant, fresh_timeout: Duration, idle_timeout: Duration) -> Option<Arc<Session>> {
        let up = |m: &BTreeMap<(Instant, u64), Arc<Session>>, t: Duration| {
            m.iter().next().filter(|((at, _), _)| now.saturating_duration_since(*at) >= t).map(|(_, s)| s.clone())
        };
        up(&self.idle.fresh, fresh_timeout.min(idle_timeout)).or_else(|| up(&self.idle.used, idle_timeout))
    }
}

/// The sessions of one HTTP endpoint.
///
/// Limits (all in [`LegacyOptions`]): at most `max_sessions` sessions; at most
/// `max_sessions_per_principal` of one principal, or, without a principal, at most
/// `max_sessions_per_peer` from one peer address (known when the request carries a
/// [`PeerAddr`](crate::transport::http::PeerAddr)). When a limit is reached, `initialize`
/// ends the least recently used idle session under that limit (sessions that never went past
/// `initialize` first) to make room, and is refused only when every one of them is in use.
/// Idle sessions end after `idle_timeout`, or `uninitialized_timeout` if the client never
/// went past `initialize`.
pub struct SessionStore {
    table: Mutex<Table>,
    options: LegacyOptions,
    reaper: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl SessionStore {
    /// A store with these limits.
    pub fn new(options: LegacyOptions) -> Arc<Self> {
        Arc::new(SessionStore { table: Mutex::default(), options, reaper: Mutex::new(None) })
    }

    /// Adds a session opened by `principal` (`None`: without one) from `peer`, making room by
    /// ending the least recently used idle session where a limit is reached; refuses when
    /// every session that could make room is in use.
    pub fn insert(
        self: &Arc<Self>,
        session: Arc<Session>,
        principal: Option<String>,
        peer: Option<IpAddr>,
    ) -> Result<(), SessionRefused> {
        let o = &self.options;
        let (quota, limit, per) = match (&principal, peer) {
            (Some(p), _) => (Some(QuotaKey::Principal(p.clone())), o.max_sessions_per_principal, "principal"),
            (None, Some(ip)) => (Some(QuotaKey::peer(ip)), o.max_sessions_per_peer, "peer address"),
            (None, None) => (None, usize::MAX, ""),
        };
        let mut ended = Vec::new();
        {
            let mut t = lock(&self.table);
            if let Some(key) = &quota {
                if t.quotas.get(key).map_or(0, |q| q.count) >= limit {
                    match t.evict(Some(key)) {
                        Some(s) => ended.push(s),
                        None => return Err(SessionRefused::Quota { limit, per }),
                    }
                }
            }
            if t.entries.len() >= o.max_sessions {
                match t.evict(None) {
                    Some(s) => ended.push(s),
                    None => {
                        drop(t);
                        end(ended);
                        return Err(SessionRefused::Full { max_sessions: o.max_sessions });
                    }
                }
            }
            let this: Weak<SessionStore> = Arc::downgrade(self);
            session.attach(this);
            let serial = t.next_serial;
            t.next_serial += 1;
            if let Some(key) = &quota {
                t.quotas.entry(key.clone()).or_default().count += 1;
            }
            let id = session.id().to_owned();
            t.entries.insert(id, Entry { session: session.clone(), principal, quota, serial, idle: None });
            t.reindex(&session);
        }
        if !ended.is_empty() {
            tracing::debug!(evicted = ended.len(), "legacy sessions ended to make room for a new one");
        }
        end(ended);
        self.ensure_reaper();
        Ok(())
    }

    /// Finds a live session opened by `principal` (`None`: one opened without a principal).
    /// A session of another principal is not found. Looking does not count as use.
    pub fn get(&self, id: &str, principal: Option<&str>) -> Option<Arc<Session>> {
        let t = lock(&self.table);
        t.entries.get(id).filter(|e| e.principal.as_deref() == principal).map(|e| e.session.clone())
    }

    /// A message of the session's own client (`principal` matches): finds the session, marks it
    /// used and past `initialize`, and keeps it in use until the guard is dropped.
    pub(crate) fn checkout(&self, id: &str, principal: Option<&str>) -> Option<(Arc<Session>, BusyGuard)> {
        let mut t = lock(&self.table);
        let session = t.entries.get(id).filter(|e| e.principal.as_deref() == principal)?.session.clone();
        {
            let mut a = session.activity_mut();
            a.busy += 1;
            a.last_seen = Instant::now();
            a.initialized = true;
        }
        t.reindex(&session);
        drop(t);
        let guard = session.adopt_busy();
        Some((session, guard))
    }

    /// Ends a session opened by `principal`; returns whether it existed (one of another
    /// principal is left alone, as if it did not).
    pub fn remove(&self, id: &str, principal: Option<&str>) -> bool {
        let taken = {
            let mut t = lock(&self.table);
            if t.entries.get(id).is_none_or(|e| e.principal.as_deref() != principal) {
                return false;
            }
            t.take(id)
        };
        taken.map(|s| s.closed().cancel()).is_some()
    }

    pub(crate) fn reindex(&self, session: &Session) {
        lock(&self.table).reindex(session);
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        lock(&self.table).entries.len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends every session (server shutdown).
    pub fn close_all(&self) {
        let all = std::mem::take(&mut *lock(&self.table));
        for (_, e) in all.entries {
            e.session.closed().cancel();
        }
        if let Some(r) = lock(&self.reaper).take() {
            r.abort();
        }
    }

    /// Ends the sessions idle for longer than their timeout (`uninitialized_timeout` for
    /// those that never went past `initialize`, else `idle_timeout`); returns how many.
    pub fn expire_idle(&self) -> usize {
        let now = Instant::now();
        let mut expired = Vec::new();
        {
            let mut t = lock(&self.table);
            while let Some(s) = t.expired(now, self.options.uninitialized_timeout, self.options.idle_timeout) {
                expired.extend(t.take(s.id()));
            }
            if !expired.is_empty() {
                let keep = t.entries.len() * 2;
                t.entries.shrink_to(keep);
                let keep = t.quotas.len() * 2;
                t.quotas.shrink_to(keep);
            }
        }
        let n = expired.len();
        end(expired);
        n
    }

    fn ensure_reaper(self: &Arc<Self>) {
        let mut reaper = lock(&self.reaper);
        if reaper.is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let weak: Weak<SessionStore> = Arc::downgrade(self);
        let shortest = self.options.idle_timeout.min(self.options.uninitialized_timeout);
        let period = (shortest / 4).clamp(Duration::from_millis(20), Duration::from_secs(30));
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

/// Ends sessions taken out of the table (outside its lock).
fn end(sessions: Vec<Arc<Session>>) {
    for s in sessions {
        s.closed().cancel();
    }
}

impl ActivityIndex for SessionStore {
    fn activity_changed(&self, session: &Session) {
        self.reindex(session);
    }
}

impl Drop for SessionStore {
    fn drop(&mut self) {
        if let Some(r) = lock(&self.reaper).take() {
            r.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn session() -> Arc<Session> {
        Arc::new(Session::new("2025-11-25".into(), Map::new(), None, Duration::from_secs(1)))
    }

    /// The indexes agree with the sessions' activity: every idle session once in the table's
    /// and once in its quota's order, no busy one, counts right.
    fn check(store: &SessionStore) {
        let t = lock(&store.table);
        let idle: Vec<&Entry> = t.entries.values().filter(|e| e.session.is_idle()).collect();
        assert_eq!(t.idle.fresh.len() + t.idle.used.len(), idle.len());
        for e in t.entries.values() {
            assert_eq!(e.idle.is_some(), e.session.is_idle(), "{:?}", e.session);
        }
        let mut counts: HashMap<&QuotaKey, usize> = HashMap::new();
        for e in t.entries.values() {
            if let Some(k) = &e.quota {
                *counts.entry(k).or_default() += 1;
            }
        }
        assert_eq!(counts.len(), t.quotas.len());
        for (k, q) in &t.quotas {
            assert_eq!(counts[k], q.count);
            let idle_here = t.entries.values().filter(|e| e.quota.as_ref() == Some(k) && e.idle.is_some()).count();
            assert_eq!(q.idle.fresh.len() + q.idle.used.len(), idle_here);
        }
    }

    #[test]
    fn peers_are_ipv4_addresses_and_ipv6_slash_64_prefixes() {
        let key = |s: &str| QuotaKey::peer(s.parse().unwrap());
        assert_eq!(key("192.0.2.1"), QuotaKey::Peer("192.0.2.1".parse().unwrap()));
        assert_eq!(key("::ffff:192.0.2.1"), key("192.0.2.1"));
        assert_eq!(key("2001:db8:1:2:3:4:5:6"), QuotaKey::Peer("2001:db8:1:2::".parse().unwrap()));
        assert_eq!(key("2001:db8:1:2::9"), key("2001:db8:1:2:ffff::1"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
    }

    #[test]
    fn the_indexes_follow_every_change_of_activity() {
        let store =
            SessionStore::new(LegacyOptions { max_sessions: 8, max_sessions_per_peer: 3, ..Default::default() });
        let peer: IpAddr = "192.0.2.1".parse().unwrap();
        let mut held = Vec::new();
        for i in 0..40u32 {
            let s = session();
            let owner = (i % 3 == 0).then(|| format!("p{}", i % 2));
            let from = (i % 2 == 0).then_some(peer);
            let _ = store.insert(s.clone(), owner.clone(), from);
            check(&store);
            if let Some((_, g)) = store.checkout(s.id(), owner.as_deref()) {
                if i % 4 == 0 {
                    held.push(g);
                }
            }
            check(&store);
            if i % 5 == 0 {
                held.pop();
                check(&store);
            }
            if i % 7 == 0 {
                store.remove(s.id(), owner.as_deref());
                check(&store);
            }
        }
        drop(held);
        check(&store);
        assert!(store.len() <= 8);
    }

    #[test]
    fn a_quota_of_busy_sessions_refuses_and_ends_nothing() {
        let store = SessionStore::new(LegacyOptions { max_sessions_per_principal: 2, ..Default::default() });
        let (a, b) = (session(), session());
        store.insert(a.clone(), Some("alice".into()), None).unwrap();
        store.insert(b.clone(), Some("alice".into()), None).unwrap();
        let _in_use =
            [store.checkout(a.id(), Some("alice")).unwrap().1, store.checkout(b.id(), Some("alice")).unwrap().1];
        assert_eq!(
            store.insert(session(), Some("alice".into()), None),
            Err(SessionRefused::Quota { limit: 2, per: "principal" })
        );
        assert!(!a.closed().is_cancelled() && !b.closed().is_cancelled());
        store.insert(session(), Some("bob".into()), None).unwrap();
        assert_eq!(store.len(), 3);
        check(&store);
    }
}
