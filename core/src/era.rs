//! The two generations of the protocol, named once for the whole crate: the client reports
//! the era of its server with it, and the server transports answer in it.

/// Which generation of the protocol a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2026-07-28 and later: stateless, with per-request `_meta`.
    Modern,
    /// 2025-11-25 and earlier: a session opened by `initialize`.
    Legacy,
}
