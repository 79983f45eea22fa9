//! Transports: stdio and Streamable HTTP, each with its server side (which only moves bytes
//! and calls [`Server::handle_request`](crate::server::Server::handle_request)) and the
//! client's side (crate-internal, driven by [`Client`](crate::client::Client)); [`in_memory`]
//! joins a client and a server in one process.

pub mod http;
pub mod in_memory;
mod shared;
pub mod stdio;

pub use self::http::{auth, connections};
pub(crate) use shared::outgoing_bytes;
pub use shared::shutdown_signal;
