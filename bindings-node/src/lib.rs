//! mcpaxle for Node.js: the native module of the `mcpaxle` npm package.
//!
//! This crate only converts values and bridges calls: every protocol behaviour lives in the
//! core (`mcpaxle`). The JavaScript layer (`index.js`, `lib/`) turns this module's JSON-text
//! API into the package's API (objects, `AbortSignal`s, async iterators, `McpError`s).
//!
//! * [`runtime`]: the one choke point through which every Rust future becomes a `Promise`.
//! * [`client`], [`subscription`], [`cancel`]: the client.
//! * [`server`], [`handlers`], [`context`], [`auth`]: the server, its JavaScript handlers and
//!   its bearer-token protection; [`mount`]: the server mounted in the host's HTTP server.
//! * [`callbacks`]: JavaScript functions as the core's callbacks (threadsafe functions).
//! * [`errors`]: the core's errors (kind name, JSON-RPC code, message, data), both ways.
//! * [`telemetry`]: the core's OpenTelemetry traces and metrics, for the process.

// napi registers the exported functions and classes in code compiled out under `cfg(test)`
// (which `cargo clippy --all-targets` checks), where they would all look unused.
#![cfg_attr(test, allow(dead_code))]

mod auth;
mod callbacks;
mod cancel;
mod client;
mod context;
mod errors;
mod handlers;
mod middleware;
mod mount;
mod runtime;
mod server;
mod subscription;
mod telemetry;
