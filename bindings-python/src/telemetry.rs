//! The core's OpenTelemetry traces and metrics for Python (`mcpaxle.telemetry`): turned on,
//! flushed and shut down for the process. Exports run on the process's runtime; the calls that
//! wait for them release the GIL.

use crate::{errors, runtime};
use mcpaxle::telemetry::{self, TelemetryOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Turns traces and metrics on for the process (OTLP over HTTP) with `options`, the core's
/// `TelemetryOptions` by their Python names (`None` values keep the defaults), read and
/// checked by the core; replaces an earlier setting, whose pending exports are sent first.
#[pyfunction]
#[pyo3(signature = (options=None))]
pub fn telemetry_configure(py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let options: TelemetryOptions = match options {
        Some(d) => crate::server::from_dict(d, "telemetry options")?,
        None => TelemetryOptions::default(),
    };
    let rt = runtime::runtime()?;
    py.detach(|| {
        let _in_runtime = rt.enter();
        telemetry::install(options)
    })
    .map_err(|e| errors::to_py_err(py, &e))
}

/// Exports every span and metric recorded so far and waits for the exporter (the GIL
/// released).
#[pyfunction]
pub fn telemetry_flush(py: Python<'_>) -> PyResult<()> {
    runtime::check_fork()?;
    py.detach(telemetry::flush).map_err(|e| errors::to_py_err(py, &e))
}

/// Exports what is left (waiting for it, the GIL released) and turns telemetry off.
#[pyfunction]
pub fn telemetry_shutdown(py: Python<'_>) -> PyResult<()> {
    runtime::check_fork()?;
    py.detach(telemetry::shutdown);
    Ok(())
}

/// Whether telemetry is on.
#[pyfunction]
pub fn telemetry_is_enabled() -> bool {
    telemetry::is_enabled()
}

/// The metrics in Prometheus's text format while telemetry is on with `prometheus`, else
/// `None`.
#[pyfunction]
pub fn telemetry_prometheus_text() -> Option<String> {
    telemetry::prometheus_text()
}
