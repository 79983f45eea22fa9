//! The one tokio runtime of this process: created on first use, stamped with the PID of the
//! process that created it. A forked child inherits the memory of the runtime but none of its
//! threads, so every entry point checks the stamp ([`check_fork`]) and raises
//! `mcpaxle.errors.ForkError` instead of waiting forever on threads that do not exist.
//!
//! Every Rust future this module runs is spawned through [`spawn`]; every Python awaitable is
//! made by [`crate::bridge::awaitable`]. Those two are the only ways across.

use crate::errors;
use mcpaxle::host_runtime::HostRuntime;
use once_cell::sync::OnceCell;
use pyo3::prelude::*;
use std::future::Future;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

static RUNTIME: OnceCell<HostRuntime> = OnceCell::new();

/// Fails with `ForkError` when the runtime was created by another process (this one is a
/// child forked after the runtime started).
pub fn check_fork() -> PyResult<()> {
    match RUNTIME.get().map(HostRuntime::get) {
        Some(Err(parent)) => Err(fork_error(parent)),
        _ => Ok(()),
    }
}

/// The runtime, created on first use; then the core's log events start reaching Python's
/// `logging`, and telemetry turns on if the `OTEL_*` environment asks for it.
pub fn runtime() -> PyResult<&'static Runtime> {
    let host = RUNTIME.get_or_try_init(|| {
        // First, so that a warning of the runtime's start (a bad OTEL_* setting) reaches Python.
        Python::attach(crate::log::forward);
        HostRuntime::start()
            .map_err(|e| errors::new_py_err("TransportError", format!("cannot start the mcpaxle runtime: {e}")))
    })?;
    host.get().map_err(fork_error)
}

/// Whether the runtime exists in this process (and was created by it).
pub fn started() -> bool {
    matches!(RUNTIME.get().map(HostRuntime::get), Some(Ok(_)))
}

/// Spawns a future on the runtime: the one place Rust work is started from Python.
pub fn spawn<F>(fut: F) -> PyResult<JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(runtime()?.spawn(fut))
}

fn fork_error(parent: u32) -> PyErr {
    errors::new_py_err(
        "ForkError",
        format!(
            "mcpaxle was started in process {parent} and this is a child forked from it (pid {}): the child has none of its \
             threads. Use mcpaxle only in the parent, start the child with the 'spawn' or 'forkserver' multiprocessing \
             start method, or fork before the first server starts.",
            std::process::id()
        ),
    )
}
