//! The one tokio runtime of this process: created on first use, stamped with the PID of the
//! process that created it. A forked child inherits the memory of the runtime but none of its
//! threads, so every entry point checks the stamp ([`check_fork`]) and raises
//! `mcpaxle.errors.ForkError` instead of waiting forever on threads that do not exist.
//!
//! Every Rust future this module runs is spawned through [`spawn`]; every Python awaitable is
//! made by [`crate::bridge::awaitable`]. Those two are the only ways across.

use crate::errors;
use once_cell::sync::OnceCell;
use pyo3::prelude::*;
use std::future::Future;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

static RUNTIME: OnceCell<(u32, Runtime)> = OnceCell::new();

/// Fails with `ForkError` when the runtime was created by another process (this one is a
/// child forked after the runtime started).
pub fn check_fork() -> PyResult<()> {
    match RUNTIME.get() {
        Some((pid, _)) if *pid != std::process::id() => Err(fork_error(*pid)),
        _ => Ok(()),
    }
}

/// The runtime, created on first use; then the core's log events start reaching Python's
/// `logging`, and telemetry turns on if the `OTEL_*` environment asks for it.
pub fn runtime() -> PyResult<&'static Runtime> {
    let (pid, rt) = RUNTIME.get_or_try_init(|| {
        let threads =
            std::env::var("MCPAXLE_WORKER_THREADS").ok().and_then(|v| v.parse::<usize>().ok()).filter(|n| *n > 0);
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.enable_all().thread_name("mcpaxle-rt");
        if let Some(n) = threads {
            b.worker_threads(n);
        }
        let rt = b
            .build()
            .map(|rt| (std::process::id(), rt))
            .map_err(|e| errors::new_py_err("TransportError", format!("cannot start the mcpaxle runtime: {e}")))?;
        Python::attach(crate::log::forward);
        {
            // OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) set: telemetry on from the start.
            let _in_runtime = rt.1.enter();
            if let Err(e) = mcpaxle::telemetry::install_from_env() {
                tracing::warn!(target: "mcpaxle::telemetry", "telemetry from the OTEL_* environment is off: {e}");
            }
        }
        Ok::<_, PyErr>(rt)
    })?;
    if *pid != std::process::id() {
        return Err(fork_error(*pid));
    }
    Ok(rt)
}

/// Whether the runtime exists in this process (and was created by it).
pub fn started() -> bool {
    matches!(RUNTIME.get(), Some((pid, _)) if *pid == std::process::id())
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
