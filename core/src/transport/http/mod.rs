//! Streamable HTTP: the server ([`HttpServer`], [`McpService`]) and, crate-internal, the
//! client's transport, with what both sides share: the request-metadata headers
//! ([`headers`]), the SSE framing (`sse`) and, server side, bearer auth ([`auth`]),
//! connection limits ([`connections`]), CORS ([`CorsOptions`]), Origin/Host rules and stream
//! resumption.

pub mod auth;
pub(crate) mod client;
pub mod connections;
mod cors;
pub mod headers;
pub(crate) mod hyper_client;
mod json_body;
pub mod mounted;
pub(crate) mod oauth_wire;
mod resume;
mod rules;
mod server;
pub(crate) mod sse;
pub mod token_verifiers;

pub use connections::ConnectionLimits;
pub use cors::CorsOptions;
pub use server::{HttpOptions, HttpServer, McpBody, McpService, PeerAddr, Principal, serve};
