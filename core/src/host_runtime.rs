//! The tokio runtime a binding runs the core on: one per process, started on the host's first
//! use and stamped with the process that started it. Python, C and uniffi keep theirs in a
//! static; Node runs on napi's own runtime. A Rust application builds its runtime itself.
//!
//! Its worker threads (one per core unless `TOKIO_WORKER_THREADS` says otherwise) are named
//! `mcpaxle-rt`. Telemetry turns on as it starts when the `OTEL_*` environment asks for it
//! ([`crate::telemetry::install_from_env`]); a bad setting is a warning in the core's log, not
//! a failure of the host's first call.

use tokio::runtime::{Builder, Runtime};

/// A binding's runtime, with the PID of the process that started it.
#[derive(Debug)]
pub struct HostRuntime {
    pid: u32,
    runtime: Runtime,
}

impl HostRuntime {
    /// Starts the runtime in this process.
    pub fn start() -> std::io::Result<HostRuntime> {
        let runtime = Builder::new_multi_thread().enable_all().thread_name("mcpaxle-rt").build()?;
        {
            let _in_runtime = runtime.enter();
            if let Err(e) = crate::telemetry::install_from_env() {
                tracing::warn!(target: "mcpaxle::telemetry", "telemetry from the OTEL_* environment is off: {e}");
            }
        }
        Ok(HostRuntime { pid: std::process::id(), runtime })
    }

    /// The runtime, in the process that started it. In a child forked after it started, the
    /// runtime's memory is there but none of its threads, so anything waiting on it would wait
    /// forever: `Err` holds the PID of the parent that started it.
    pub fn get(&self) -> Result<&Runtime, u32> {
        if self.pid == std::process::id() { Ok(&self.runtime) } else { Err(self.pid) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_runtime_runs_futures_in_its_own_process() {
        let host = HostRuntime::start().unwrap();
        let rt = host.get().unwrap();
        assert_eq!(rt.block_on(async { tokio::spawn(async { 6 * 7 }).await.unwrap() }), 42);
    }

    #[test]
    fn a_runtime_stamped_by_another_process_is_refused() {
        let mut host = HostRuntime::start().unwrap();
        host.pid = host.pid.wrapping_add(1);
        assert_eq!(host.get().unwrap_err(), std::process::id().wrapping_add(1));
    }
}
