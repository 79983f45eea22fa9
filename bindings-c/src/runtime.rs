//! The one tokio runtime of the process, created on first use and stamped with the PID: the
//! choke point through which every future is spawned or waited for.

use crate::ffi::{FfiError, FfiResult, mcpaxle_result};
use std::future::Future;
use std::sync::OnceLock;
use tokio::runtime::{Handle, Runtime};

struct Stamped {
    pid: u32,
    runtime: Runtime,
}

static RUNTIME: OnceLock<Option<Stamped>> = OnceLock::new();

fn stamped() -> FfiResult<&'static Stamped> {
    let slot = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("mcpaxle-rt")
            .build()
            .ok()
            .map(|runtime| Stamped { pid: std::process::id(), runtime })
    });
    slot.as_ref().ok_or_else(|| {
        FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, "cannot start the mcpaxle runtime (no threads?)")
    })
}

/// Fails with `MCPAXLE_ERR_FORK` in a child process forked after the runtime started: its
/// worker threads do not exist there.
pub(crate) fn check_pid() -> FfiResult {
    match RUNTIME.get() {
        Some(Some(s)) if s.pid != std::process::id() => Err(FfiError::new(
            mcpaxle_result::MCPAXLE_ERR_FORK,
            "mcpaxle was started in the parent process before fork(): it cannot be used in the child (exec() first)",
        )),
        _ => Ok(()),
    }
}

/// The runtime's handle, starting the runtime on first use.
pub(crate) fn handle() -> FfiResult<&'static Handle> {
    stamped().map(|s| s.runtime.handle())
}

/// Runs a future to completion on the calling thread: a C thread, or the blocking-pool thread
/// a callback runs on. (From inside an async task tokio panics, which the export's boundary
/// turns into `MCPAXLE_ERR_PANIC`; no mcpaxle callback ever runs on such a thread.)
pub(crate) fn block_on<F: Future>(f: F) -> FfiResult<F::Output> {
    Ok(handle()?.block_on(f))
}

/// Spawns a future on the runtime.
pub(crate) fn spawn<F>(f: F) -> FfiResult<tokio::task::JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(handle()?.spawn(f))
}
