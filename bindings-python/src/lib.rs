//! `mcpaxle._native`: the Python binding of the mcpaxle core. It holds conversions and the
//! bridge between the tokio runtime and asyncio, nothing else: every protocol rule lives in
//! the core. The public Python API is the pure-Python package `mcpaxle` around it.

mod asgi;
mod auth;
mod bridge;
mod client;
mod context;
mod convert;
mod errors;
mod handlers;
mod log;
mod middleware;
mod pool;
mod runtime;
mod server;
mod stdio;
mod telemetry;

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

/// The core's option names per options struct, as JSON text (`{"server": ["title", ...], ...}`;
/// the Python names are their snake_case forms).
#[pyfunction]
fn options_schema() -> String {
    mcpaxle::catalog::schema_json().to_string()
}

/// A valid value for every option of `options_schema`, by the same areas, as JSON text (for the
/// test that hands every option of the core to the Python API).
#[pyfunction]
fn options_examples() -> String {
    mcpaxle::catalog::examples().to_string()
}

/// The distinct variable names of the RFC 6570 URI template `uri`, in order of first appearance
/// (the core's reading); empty for a URI without `{`, which is a plain resource. Raises
/// `UsageError` when `uri` has a `{` but is not a valid template.
#[pyfunction]
fn template_variables(uri: &str) -> PyResult<Vec<String>> {
    if !uri.contains('{') {
        return Ok(Vec::new());
    }
    let template = mcpaxle::server::uri_template::UriTemplate::parse(uri)
        .map_err(|e| errors::usage(format!("resource {uri:?} is not a valid URI template: {e}")))?;
    Ok(template.variable_names().into_iter().map(str::to_owned).collect())
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
    m.add_class::<asgi::PyAsgiService>()?;
    m.add_class::<asgi::PyAsgiBody>()?;
    m.add_class::<middleware::CallNext>()?;
    m.add_class::<pool::Pool>()?;
    m.add_class::<pool::PoolJob>()?;
    m.add_class::<pool::PoolHandler>()?;
    m.add_class::<client::PyClient>()?;
    m.add_class::<client::PySubscription>()?;
    m.add_class::<client::PyToolTask>()?;
    m.add_function(wrap_pyfunction!(client::connect_http, m)?)?;
    m.add_function(wrap_pyfunction!(client::connect_stdio, m)?)?;
    m.add_function(wrap_pyfunction!(client::connect_in_memory, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_started, m)?)?;
    m.add_function(wrap_pyfunction!(ensure_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_versions, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(options_schema, m)?)?;
    m.add_function(wrap_pyfunction!(options_examples, m)?)?;
    m.add_function(wrap_pyfunction!(auth::check_options, m)?)?;
    m.add_function(wrap_pyfunction!(auth::check_token_info, m)?)?;
    m.add_function(wrap_pyfunction!(template_variables, m)?)?;
    m.add_function(wrap_pyfunction!(content_block, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::telemetry_configure, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::telemetry_flush, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::telemetry_shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::telemetry_is_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::telemetry_prometheus_text, m)?)?;
    Ok(())
}
