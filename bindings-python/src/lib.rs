//! `mcpaxle._native`: the Python binding of the mcpaxle core. It holds conversions and the
//! bridge between the tokio runtime and asyncio, nothing else: every protocol rule lives in
//! the core. The public Python API is the pure-Python package `mcpaxle` around it.

mod auth;
mod bridge;
mod client;
mod context;
mod convert;
mod errors;
mod handlers;
mod runtime;
mod server;
mod stdio;

use pyo3::prelude::*;

/// Whether this process's runtime has started (and was started by this process).
#[pyfunction]
fn runtime_started() -> bool {
    runtime::started()
}

/// Starts the runtime now (it otherwise starts on first use); raises `ForkError` in a child
/// forked after it started.
#[pyfunction]
fn ensure_runtime() -> PyResult<()> {
    runtime::runtime().map(|_| ())
}

/// The protocol revisions the core serves, newest first.
#[pyfunction]
fn protocol_versions() -> Vec<&'static str> {
    let mut v = vec![mcpaxle::server::request_meta::PROTOCOL_VERSION];
    v.extend(mcpaxle::legacy::LEGACY_VERSIONS.iter().copied());
    v
}

/// One content block made from a value by the core's shaping rule (a str is text, bytes an
/// image, audio or blob block, a dict with "type" itself, anything else its JSON as text).
#[pyfunction]
fn content_block<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let block = mcpaxle::server::shaping::content_block(convert::returned_from_py(value)?);
    convert::to_py(value.py(), &block)
}

#[pymodule(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<bridge::Bridge>()?;
    m.add_class::<context::PyRequestContext>()?;
    m.add_class::<server::PyServer>()?;
    m.add_class::<server::Running>()?;
    m.add_class::<client::PyClient>()?;
    m.add_class::<client::PySubscription>()?;
    m.add_function(wrap_pyfunction!(client::connect_http, m)?)?;
    m.add_function(wrap_pyfunction!(client::connect_stdio, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_started, m)?)?;
    m.add_function(wrap_pyfunction!(ensure_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_versions, m)?)?;
    m.add_function(wrap_pyfunction!(content_block, m)?)?;
    Ok(())
}
