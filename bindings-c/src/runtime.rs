//! The one tokio runtime of the process, created on first use and stamped with the PID: the
//! choke point through which every future is spawned or waited for.

use crate::ffi::{FfiError, FfiResult, mcpaxle_result};
use mcpaxle_core::host_runtime::HostRuntime;
use std::cell::Cell;
use std::future::Future;
use std::sync::OnceLock;
use tokio::runtime::{Handle, Runtime};

static RUNTIME: OnceLock<Option<HostRuntime>> = OnceLock::new();

fn host() -> FfiResult<&'static HostRuntime> {
    RUNTIME.get_or_init(|| HostRuntime::start().ok()).as_ref().ok_or_else(|| {
        FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, "cannot start the mcpaxle runtime (no threads?)")
    })
}

/// Fails with `MCPAXLE_ERR_FORK` in a child process forked after the runtime started: its
/// worker threads do not exist there.
pub(crate) fn check_pid() -> FfiResult {
    match RUNTIME.get() {
        Some(Some(host)) => host.get().map(|_| ()).map_err(fork_error),
        _ => Ok(()),
    }
}

fn fork_error(parent: u32) -> FfiError {
    FfiError::new(
        mcpaxle_result::MCPAXLE_ERR_FORK,
        format!(
            "mcpaxle was started in process {parent} and this is a child forked from it (pid {}): the child has none \
             of its threads, so it cannot use mcpaxle (exec() first, or fork before the first mcpaxle call)",
            std::process::id()
        ),
    )
}

/// The runtime's handle, starting the runtime on first use.
pub(crate) fn handle() -> FfiResult<&'static Handle> {
    host()?.get().map(Runtime::handle).map_err(fork_error)
}

thread_local! {
    /// Whether this thread is a worker of the runtime running an inline handler's callback.
    static INLINE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a callback into C, on this worker thread of the runtime: [`block_on`] refuses to
/// run while it does.
pub(crate) fn inline<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            INLINE.set(self.0);
        }
    }
    let _reset = Reset(INLINE.replace(true));
    f()
}

/// Runs a future to completion on the calling thread: a C thread, or the blocking-pool thread
/// a callback runs on; `MCPAXLE_ERR_USAGE` on a worker of the runtime (an inline handler's
/// thread), where it would stall the runtime.
pub(crate) fn block_on<F: Future>(f: F) -> FfiResult<F::Output> {
    refuse_inline()?;
    Ok(handle()?.block_on(f))
}

/// `MCPAXLE_ERR_USAGE` on a worker of the runtime (an inline handler's thread), for a function
/// that waits for the runtime.
pub(crate) fn refuse_inline() -> FfiResult {
    if INLINE.get() {
        return Err(FfiError::usage(
            "this function waits for the runtime, which an inline handler runs on: call it from a handler on the \
             blocking pool (mcpaxle_server_set_inline_handlers(server, false)) or from a thread of your own",
        ));
    }
    Ok(())
}

/// Spawns a future on the runtime.
pub(crate) fn spawn<F>(f: F) -> FfiResult<tokio::task::JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(handle()?.spawn(f))
}
