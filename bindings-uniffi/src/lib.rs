//! mcpaxle's client (and a server for JVM services) for Kotlin (JVM, Android) and Swift, through
//! uniffi.
//!
//! A thin binding, as the others: the core reads every option (JSON in, [`mcpaxle::options`]),
//! results go out as the JSON of the core's types, errors carry the core's [`mcpaxle::ErrorKind`]
//! names. Async functions are uniffi async (Kotlin `suspend`, Swift `async`): each runs on the
//! process's one tokio runtime ([`runtime`]), and a caller that stops waiting (a cancelled
//! coroutine or task) drops the core's future, which cancels the request.
//!
//! The generated sources are committed: `bindings-uniffi/kotlin/src/main/kotlin/mcpaxle/ffi/`
//! and `packaging/swift/Sources/McpaxleFFI/` (`make test-kotlin` regenerates and compares them).

mod callbacks;
mod client;
mod errors;
mod runtime;
mod server;
mod subscription;

pub use callbacks::{Authorizer, BearerVerifier, InputHandler, NotificationListener, TokenStore};
pub use client::{CallConfig, ClientConfig, ListKind, McpClient, McpToolTask};
pub use errors::{ErrorKindInfo, McpError};
pub use server::{McpHttpServer, McpRequestContext, McpServer, ServerHandler};
pub use subscription::McpSubscription;

uniffi::setup_scaffolding!();
