//! The C ABI of mcpaxle (`include/mcpaxle.h`, generated from this crate by cbindgen).
//!
//! Every export: takes opaque handles and NUL-terminated UTF-8 strings (JSON payloads),
//! returns an [`mcpaxle_result`](ffi::mcpaxle_result) (or a plain value when it cannot fail),
//! checks its pointers, and runs inside the one panic boundary ([`ffi::ffi_boundary!`]), which
//! also refuses to run in a child process after `fork()`. Handler callbacks run on the
//! library's handler pool ([`pool`]) and finish through reply handles ([`calls`]); no callback runs
//! after the `_free` of the object that makes it ([`owner`]).
//!
//! The crate holds conversions and the bridge only: protocol behaviour lives in `mcpaxle`.

#![allow(non_camel_case_types)]
// Each export's doc states its pointer contract in C's terms (who owns what, how long it must
// live, which thread): that text is what lands in the header, so no separate "# Safety".
#![allow(clippy::missing_safety_doc)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod calls;
pub mod client;
pub mod client_methods;
pub mod client_methods_ffi;
pub mod client_oauth;
pub mod client_tasks;
pub mod context;
pub mod ffi;
pub mod json;
pub mod log;
pub mod middleware;
pub mod mount;
#[cfg(test)]
mod options_tests;
mod owner;
mod pool;
mod runtime;
pub mod serve;
pub mod server;
pub mod server_auth;
pub mod telemetry;
