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
mod options;
mod session;
mod store;

pub use options::{LEGACY_VERSIONS, LegacyOptions, is_legacy_initialize, negotiate};
pub use session::Session;
pub use store::{SessionRefused, SessionStore};
