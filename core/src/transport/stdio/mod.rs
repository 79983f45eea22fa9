//! stdio: newline-delimited JSON-RPC, the server side ([`serve`], [`serve_with`]) and,
//! crate-internal, the client's transport to a child process.

pub(crate) mod client;
mod lines;
mod server;

pub use server::{DEFAULT_MAX_OUTBOUND_QUEUE, StdioOptions, serve, serve_with};
