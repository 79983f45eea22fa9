//! mcpaxle: the Model Context Protocol (revision 2026-07-28, and the legacy 2025-11-25 era)
//! in one Rust core that Python, Node and C programs use through thin bindings.
//!
//! * [`server::Server`]: tools, resources, resource templates, prompts and completions,
//!   registered and removed at run time, served by [`transport::stdio`] or
//!   [`transport::http`].
//! * [`client::Client`]: talks to any MCP server, modern or legacy, over stdio or Streamable
//!   HTTP.
//! * [`schema`]: serde types for every message of the specification.
//! * [`jsonrpc`]: the JSON-RPC 2.0 envelopes and error codes.

pub mod catalog;
pub mod client;
mod era;
pub mod error;
/// Entry points of the fuzz targets in `fuzz/` (see `make fuzz`); not public API.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod host_log;
pub mod host_runtime;
mod json_text;
pub mod jsonrpc;
pub mod legacy;
pub mod options;
mod peer;
pub mod schema;
pub mod server;
pub mod telemetry;
pub mod transport;

pub use era::Era;
pub use error::{Error, ErrorKind, Result};
pub use server::{RequestContext, Server};
pub use transport::http::headers;
