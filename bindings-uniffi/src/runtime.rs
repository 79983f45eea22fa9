//! The one tokio runtime of the process (the core's `host_runtime::shared`), created on first
//! use and stamped with the PID: every future of this binding is spawned on it through [`run`],
//! the choke point.
//!
//! uniffi polls a binding's futures from the host (a Kotlin coroutine, a Swift task), which is
//! no tokio context; so [`run`] spawns the core's future on the runtime and hands back a future
//! of its outcome that aborts the task when dropped: a host that stops waiting cancels the call.

use crate::errors::McpError;
use mcpaxle::host_runtime;
use mcpaxle::{Error, ErrorKind};
use std::future::Future;
use tokio::runtime::{Handle, Runtime};
use tokio::task::JoinHandle;

/// The runtime's handle, starting it on first use; fails in a child forked after it started.
pub(crate) fn handle() -> Result<&'static Handle, McpError> {
    host_runtime::shared().map(Runtime::handle).map_err(|e| Error::from(e).into())
}

/// Aborts the spawned task when the host drops the future waiting for it.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` on the runtime; the core's error becomes an [`McpError`], a panic the `panic` kind.
pub(crate) async fn run<T, F>(fut: F) -> Result<T, McpError>
where
    T: Send + 'static,
    F: Future<Output = mcpaxle::Result<T>> + Send + 'static,
{
    let mut task = AbortOnDrop(handle()?.spawn(fut));
    match (&mut task.0).await {
        Ok(outcome) => outcome.map_err(McpError::from),
        Err(e) if e.is_panic() => Err(Error::new(ErrorKind::Panic, format!("a call panicked: {e}")).into()),
        Err(e) => Err(Error::new(ErrorKind::Cancelled, format!("the call was cancelled: {e}")).into()),
    }
}
