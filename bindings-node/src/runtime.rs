//! The one way across from JavaScript into Rust futures.
//!
//! The process has one tokio runtime: napi's (feature `tokio_rt`), created on first use and shut
//! down with the Node environment. Every future this module runs is turned into a JavaScript
//! `Promise` by [`promise`], the single choke point: it checks the PID stamp, converts the core's
//! errors, and spawns on napi's runtime. Background tasks that settle no promise (subscription
//! delivery, a server's shutdown watch) go through [`spawn`]; work that blocks a thread (waiting on
//! an exporter) goes through [`blocking`].
//!
//! On first use (the first [`check`]), telemetry turns on if the `OTEL_*` environment asks for it
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, ...: [`mcpaxle::telemetry::install_from_env`]).
//!
//! A pending promise holds a reference on Node's event loop (napi settles it through a
//! threadsafe function), so an awaited call keeps the process alive and nothing else does.

use crate::errors;
use mcpaxle::{Error, ErrorKind};
use napi::bindgen_prelude::{PromiseRaw, ToNapiValue, within_runtime_if_available};
use napi::{Env, Result};
use std::future::Future;
use std::sync::OnceLock;

/// The PID of the process that first used the runtime.
static PID: OnceLock<u32> = OnceLock::new();

/// Fails when this process is not the one that started the runtime (a `fork()` copies the
/// memory of the runtime but none of its threads; Node itself never forks, but an embedder
/// might).
pub fn check() -> Result<()> {
    let pid = *PID.get_or_init(|| {
        telemetry_from_env();
        std::process::id()
    });
    if pid == std::process::id() {
        return Ok(());
    }
    Err(errors::usage(format!(
        "mcpaxle was started in process {pid} and this is a child forked from it (pid {}): the child has none of its \
         runtime threads; load mcpaxle only after the fork",
        std::process::id()
    )))
}

/// Turns telemetry on when the `OTEL_*` environment asks for OTLP export; a bad setting is a
/// warning in the core's log (`setLogHandler`), not a failure of the call that started the runtime.
fn telemetry_from_env() {
    if let Err(e) = within_runtime_if_available(mcpaxle::telemetry::install_from_env) {
        tracing::warn!(target: "mcpaxle::telemetry", "telemetry from the OTEL_* environment is off: {e}");
    }
}

/// Runs `fut` on the runtime and returns a `Promise` of its output; an error of the core
/// becomes a rejection carrying its kind (see [`errors::to_napi`]).
pub fn promise<'env, T, F>(env: &'env Env, fut: F) -> Result<PromiseRaw<'env, T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = mcpaxle::Result<T>> + Send + 'static,
{
    check()?;
    env.spawn_future(async move { fut.await.map_err(errors::to_napi) })
}

/// Spawns a background task on the runtime.
pub fn spawn<F>(fut: F) -> Result<tokio::task::JoinHandle<()>>
where
    F: Future<Output = ()> + Send + 'static,
{
    check()?;
    Ok(napi::bindgen_prelude::spawn(fut))
}

/// Runs `f`, which blocks its thread (it waits on an exporter), on the runtime's blocking pool,
/// never on the JavaScript thread nor on a runtime worker, and returns a `Promise` of its output
/// (a panic in `f` rejects it with kind `panic`).
pub fn blocking<'env, T, F>(env: &'env Env, f: F) -> Result<PromiseRaw<'env, T>>
where
    T: ToNapiValue + Send + 'static,
    F: FnOnce() -> mcpaxle::Result<T> + Send + 'static,
{
    promise(env, async move {
        tokio::task::spawn_blocking(f).await.map_err(|e| {
            if e.is_panic() {
                Error::new(ErrorKind::Panic, format!("a blocking call panicked: {e}"))
            } else {
                Error::internal(format!("a blocking call was cancelled: {e}"))
            }
        })?
    })
}
