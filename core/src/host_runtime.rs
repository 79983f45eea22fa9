//! The tokio runtime the bindings run the core on: one per process ([`shared`]), started on the
//! host's first use and stamped with the process that started it. Python, C and uniffi run on
//! it; Node runs on napi's own runtime. A Rust application builds its runtime itself.
//!
//! Its worker threads (one per core unless `TOKIO_WORKER_THREADS` says otherwise) are named
//! `mcpaxle-rt`. Telemetry turns on as it starts when the `OTEL_*` environment asks for it
//! ([`crate::telemetry::install_from_env`]); a bad setting is a warning in the core's log, not
//! a failure of the host's first call.
//!
//! A child forked after the runtime started has the runtime's memory but none of its threads,
//! so anything waiting on it would wait forever: there every use is refused with
//! [`Unavailable::Forked`], which each binding reports as its own fork error (Python's
//! `ForkError`, C's `MCPAXLE_ERR_FORK`) with the message given here.

use crate::{Error, ErrorKind};
use std::fmt;
use std::sync::OnceLock;
use tokio::runtime::{Builder, Runtime};

/// A runtime, with the PID of the process that started it.
#[derive(Debug)]
struct HostRuntime {
    pid: u32,
    runtime: Runtime,
}

/// Why the shared runtime cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// It could not start (the system refused a thread, for one).
    Start(String),
    /// This process is a child forked from `parent` after the runtime started there.
    Forked { parent: u32, child: u32 },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Start(e) => write!(f, "cannot start the mcpaxle runtime: {e}"),
            Unavailable::Forked { parent, child } => write!(
                f,
                "mcpaxle was started in process {parent} and this is a child forked from it (pid {child}): the child \
                 has none of its threads, so it cannot use mcpaxle. Use mcpaxle in the parent only, start the child \
                 as a new program (exec; in Python the 'spawn' or 'forkserver' multiprocessing start method), or \
                 fork before mcpaxle's first use"
            ),
        }
    }
}

impl std::error::Error for Unavailable {}

impl From<Unavailable> for Error {
    /// `Start` is a transport failure, `Forked` a usage error.
    fn from(e: Unavailable) -> Error {
        let kind = match e {
            Unavailable::Start(_) => ErrorKind::Transport,
            Unavailable::Forked { .. } => ErrorKind::Usage,
        };
        Error::new(kind, e.to_string())
    }
}

impl HostRuntime {
    fn start() -> Result<HostRuntime, Unavailable> {
        let runtime = Builder::new_multi_thread()
            .enable_all()
            .thread_name("mcpaxle-rt")
            .build()
            .map_err(|e| Unavailable::Start(e.to_string()))?;
        {
            let _in_runtime = runtime.enter();
            if let Err(e) = crate::telemetry::install_from_env() {
                tracing::warn!(target: "mcpaxle::telemetry", "telemetry from the OTEL_* environment is off: {e}");
            }
        }
        Ok(HostRuntime { pid: std::process::id(), runtime })
    }

    fn get(&self) -> Result<&Runtime, Unavailable> {
        let child = std::process::id();
        if self.pid == child { Ok(&self.runtime) } else { Err(Unavailable::Forked { parent: self.pid, child }) }
    }
}

static SHARED: OnceLock<Result<HostRuntime, Unavailable>> = OnceLock::new();

/// The process's runtime, started by the first call.
pub fn shared() -> Result<&'static Runtime, Unavailable> {
    SHARED.get_or_init(HostRuntime::start).as_ref().map_err(Clone::clone)?.get()
}

/// The process's runtime if it has started, without starting it: `Ok(None)` before the first
/// [`shared`], [`Unavailable::Forked`] in a child forked after it.
pub fn shared_if_started() -> Result<Option<&'static Runtime>, Unavailable> {
    match SHARED.get() {
        None => Ok(None),
        Some(started) => started.as_ref().map_err(Clone::clone)?.get().map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_runtime_starts_once_and_runs_futures() {
        let rt = shared().unwrap();
        assert!(std::ptr::eq(rt, shared().unwrap()));
        assert!(std::ptr::eq(rt, shared_if_started().unwrap().unwrap()));
        assert_eq!(rt.block_on(async { tokio::spawn(async { 6 * 7 }).await.unwrap() }), 42);
    }

    #[test]
    fn a_runtime_stamped_by_another_process_is_refused_as_a_fork() {
        let mut host = HostRuntime::start().unwrap();
        host.pid = host.pid.wrapping_add(1);
        let e = host.get().unwrap_err();
        assert_eq!(e, Unavailable::Forked { parent: host.pid, child: std::process::id() });
        let e = Error::from(e);
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(e.message().contains("forked from it"), "{e}");
    }
}
