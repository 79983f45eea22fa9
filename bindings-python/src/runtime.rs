//! The one tokio runtime of this process (the core's `host_runtime::shared`): created on first
//! use, stamped with the PID of the process that created it. A forked child inherits the memory
//! of the runtime but none of its threads, so every entry point checks the stamp
//! ([`check_fork`]) and raises `mcpaxle.errors.ForkError` instead of waiting forever on threads
//! that do not exist.
//!
//! Every Rust future this module runs is spawned through [`spawn`]; every Python awaitable is
//! made by [`crate::bridge::awaitable`]. Those two are the only ways across.

use crate::errors;
use mcpaxle::host_runtime::{self, Unavailable};
use pyo3::prelude::*;
use std::future::Future;
use std::sync::Once;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// Fails with `ForkError` when the runtime was created by another process (this one is a
/// child forked after the runtime started).
pub fn check_fork() -> PyResult<()> {
    host_runtime::shared_if_started().map(drop).map_err(py_err)
}

/// The runtime, created on first use; then the core's log events start reaching Python's
/// `logging`, and telemetry turns on if the `OTEL_*` environment asks for it.
pub fn runtime() -> PyResult<&'static Runtime> {
    // First, so that a warning of the runtime's start (a bad OTEL_* setting) reaches Python.
    static FORWARD_LOG: Once = Once::new();
    FORWARD_LOG.call_once(|| Python::attach(crate::log::forward));
    host_runtime::shared().map_err(py_err)
}

/// Whether the runtime exists in this process (and was created by it).
pub fn started() -> bool {
    matches!(host_runtime::shared_if_started(), Ok(Some(_)))
}

/// Spawns a future on the runtime: the one place Rust work is started from Python.
pub fn spawn<F>(fut: F) -> PyResult<JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(runtime()?.spawn(fut))
}

fn py_err(e: Unavailable) -> PyErr {
    let class = match e {
        Unavailable::Start(_) => "TransportError",
        Unavailable::Forked { .. } => "ForkError",
    };
    errors::new_py_err(class, e.to_string())
}
