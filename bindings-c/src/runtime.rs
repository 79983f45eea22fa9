//! The one tokio runtime of the process (the core's `host_runtime::shared`), created on first
//! use and stamped with the PID: the choke point through which every future is spawned or
//! waited for.

use crate::ffi::{FfiError, FfiResult, mcpaxle_result};
use mcpaxle_core::host_runtime::{self, Unavailable};
use std::cell::Cell;
use std::future::Future;
use tokio::runtime::{Handle, Runtime};

/// Fails with `MCPAXLE_ERR_FORK` in a child process forked after the runtime started: its
/// worker threads do not exist there.
pub(crate) fn check_pid() -> FfiResult {
    host_runtime::shared_if_started().map(drop).map_err(ffi_error)
}

/// The runtime's handle, starting the runtime on first use.
pub(crate) fn handle() -> FfiResult<&'static Handle> {
    host_runtime::shared().map(Runtime::handle).map_err(ffi_error)
}

fn ffi_error(e: Unavailable) -> FfiError {
    let code = match e {
        Unavailable::Start(_) => mcpaxle_result::MCPAXLE_ERR_TRANSPORT,
        Unavailable::Forked { .. } => mcpaxle_result::MCPAXLE_ERR_FORK,
    };
    FfiError::new(code, e.to_string())
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
             handler pool (mcpaxle_server_set_inline_handlers(server, false)) or from a thread of your own",
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
