//! The legacy 2025-11-25 era, served by the same [`Server`] and the same handlers.
//!
//! A legacy client opens with `initialize` (without the modern `_meta`); the server answers
//! with its capabilities and, on HTTP, an `Mcp-Session-Id`. From then on the session holds
//! what modern requests carry in `_meta`: the protocol version, the client's capabilities,
//! the log level (`logging/setLevel`) and resource subscriptions (`resources/subscribe`).
//!
//! Handlers do not know which era they serve. An MRTR ask ([`RequestContext::elicit`],
//! `sample`, `list_roots`) becomes a real server-to-client request on the session, sent on the
//! response stream of the request being handled, and the ask awaits the client's answer
//! (bounded by [`LegacyOptions::request_timeout`]; on timeout the client gets
//! `notifications/cancelled`). Handlers that end a round with only request state are
//! replayed at once with it.
//!
//! On stdio the first request decides the era of the process; on HTTP both eras are served
//! on one endpoint at once.
//!
//! [`RequestContext::elicit`]: crate::server::RequestContext::elicit

mod dispatch;
mod session;

pub use session::{Session, SessionStore};

use std::time::Duration;

/// The legacy protocol versions served, newest first.
pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// How the legacy era is served.
#[derive(Debug, Clone)]
pub struct LegacyOptions {
    /// Whether legacy clients are served at all (default true). When false the server is
    /// modern-only: `initialize`, `ping` and the other removed methods get -32601 / 404.
    pub enabled: bool,
    /// The most sessions open at once on one HTTP endpoint (default 10,000); `initialize`
    /// beyond that is refused with 503 until sessions end or expire.
    pub max_sessions: usize,
    /// A session with no request and no open stream for this long ends (default 30 min).
    pub idle_timeout: Duration,
    /// How long a server-to-client request (elicitation, sampling, roots) waits for the
    /// client's answer (default 5 min).
    pub request_timeout: Duration,
}

impl Default for LegacyOptions {
    fn default() -> Self {
        LegacyOptions { enabled: true, max_sessions: 10_000, idle_timeout: Duration::from_secs(30 * 60), request_timeout: Duration::from_secs(300) }
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
        && req.params.as_ref().and_then(|p| p.get("_meta")).and_then(|m| m.get(crate::schema::PROTOCOL_VERSION_META_KEY)).is_none()
}
