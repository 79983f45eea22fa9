//! How the legacy era is served ([`LegacyOptions`]) and which of its versions are spoken.

use serde::Deserialize;
use std::time::Duration;

/// The legacy protocol versions served, newest first.
pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// How the legacy era is served.
///
/// As data (the `legacy` server option): camelCase names, durations in milliseconds
/// (`idleTimeoutMs`, `uninitializedTimeoutMs`, `requestTimeoutMs`); absent fields keep their
/// defaults.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct LegacyOptions {
    /// Whether legacy clients are served at all (default true). When false the server is
    /// modern-only: `initialize`, `ping` and the other removed methods get -32601 / 404.
    pub enabled: bool,
    /// The most sessions open at once on one HTTP endpoint (default 10,000). When full,
    /// `initialize` ends the least recently used idle session (no request in flight, no open
    /// stream; those that never went past `initialize` first) to make room; only when every
    /// session is in use is it refused, with 503 and no `Retry-After` (no one can say when a
    /// request or stream will end).
    #[serde(alias = "max_sessions")]
    pub max_sessions: usize,
    /// The most sessions one principal (the bearer token's subject, or the
    /// [`Principal`](crate::transport::http::Principal) of the request) holds at once
    /// (default 100). Its next `initialize` ends its own least recently used idle session, or,
    /// when all of them are in use, is refused with 429.
    #[serde(alias = "max_sessions_per_principal")]
    pub max_sessions_per_principal: usize,
    /// The same quota for requests without a principal, per peer address (an IPv4 address,
    /// or the /64 prefix of an IPv6 one; default 1,000, room for clients behind one NAT).
    /// It applies when the request carries a [`PeerAddr`](crate::transport::http::PeerAddr),
    /// as every request served by [`HttpServer`](crate::transport::http::HttpServer) does;
    /// without principal or peer address only `max_sessions` applies.
    #[serde(alias = "max_sessions_per_peer")]
    pub max_sessions_per_peer: usize,
    /// A session with no request and no open stream for this long ends (default 30 min).
    #[serde(rename = "idleTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "idle_timeout_ms")]
    pub idle_timeout: Duration,
    /// A session whose client never went past `initialize` (no `notifications/initialized`,
    /// no other message) ends after this long (default 30 s), so abandoned handshakes do not
    /// hold slots for the whole `idle_timeout`.
    #[serde(rename = "uninitializedTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "uninitialized_timeout_ms")]
    pub uninitialized_timeout: Duration,
    /// How long a server-to-client request (elicitation, sampling, roots) waits for the
    /// client's answer (default 5 min).
    #[serde(rename = "requestTimeoutMs", with = "crate::options::positive_ms")]
    #[serde(alias = "request_timeout_ms")]
    pub request_timeout: Duration,
}

impl Default for LegacyOptions {
    fn default() -> Self {
        LegacyOptions {
            enabled: true,
            max_sessions: 10_000,
            max_sessions_per_principal: 100,
            max_sessions_per_peer: 1_000,
            idle_timeout: Duration::from_secs(30 * 60),
            uninitialized_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
        }
    }
}

impl LegacyOptions {
    /// Modern-only: no legacy era.
    pub fn disabled() -> Self {
        LegacyOptions { enabled: false, ..Default::default() }
    }
}

/// The version to answer `initialize` with: the client's when served, else the newest.
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS.iter().copied().find(|v| *v == requested).unwrap_or(LEGACY_VERSIONS[0])
}

/// Whether a request is a legacy `initialize`: that method without the modern `_meta`
/// protocol version (a modern client sending `initialize` gets -32601).
pub fn is_legacy_initialize(req: &crate::jsonrpc::Request) -> bool {
    req.method == "initialize"
        && req
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(crate::schema::PROTOCOL_VERSION_META_KEY))
            .is_none()
}
