//! The one way across from JavaScript into Rust futures.
//!
//! The process has one tokio runtime: napi's (feature `tokio_rt`), created on first use and shut
//! down with the Node environment. Every future this module runs is turned into a JavaScript
//! `Promise` by [`promise`], the single choke point: it checks the PID stamp, converts the core's
//! errors, and spawns on napi's runtime. Background tasks that settle no promise (subscription
//! delivery, a server's shutdown watch) go through [`spawn`].
//!
//! A pending promise holds a reference on Node's event loop (napi settles it through a
//! threadsafe function), so an awaited call keeps the process alive and nothing else does.

use crate::errors;
use napi::bindgen_prelude::{PromiseRaw, ToNapiValue};
use napi::{Env, Result};
use std::future::Future;
use std::sync::OnceLock;

/// The PID of the process that first used the runtime.
static PID: OnceLock<u32> = OnceLock::new();

/// Fails when this process is not the one that started the runtime (a `fork()` copies the
/// memory of the runtime but none of its threads; Node itself never forks, but an embedder
/// might).
pub fn check() -> Result<()> {
    let pid = *PID.get_or_init(std::process::id);
    if pid == std::process::id() {
        return Ok(());
    }
    Err(errors::usage(format!(
        "mcpaxle was started in process {pid} and this is a child forked from it (pid {}): the child has none of its \
         runtime threads; load mcpaxle only after the fork",
        std::process::id()
    )))
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
