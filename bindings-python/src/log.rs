//! The core's log events in Python's `logging` (`python/mcpaxle/_logging.py` decides the
//! logger and whether anyone listens). Installed with the runtime, by the process that starts
//! it: a worker forked before that installs its own.

use mcpaxle::host_log::{LogRecord, set_sink};
use pyo3::prelude::*;

/// Hands the core's log records to `mcpaxle._logging._record(level, target, message, fields)`.
/// Nothing happens when that cannot be imported or the process already has a `tracing`
/// subscriber.
pub fn forward(py: Python<'_>) {
    let Ok(record) = py.import("mcpaxle._logging").and_then(|m| m.getattr("_record")) else { return };
    let record = record.unbind();
    let _ = set_sink(Some(Box::new(move |r: LogRecord| {
        // Not once the interpreter is shutting down.
        Python::try_attach(|py| {
            let level =
                serde_json::to_value(r.level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            let fields = pythonize::pythonize(py, &r.fields).ok();
            if let Err(e) = record.call1(py, (level, r.target, r.message, fields)) {
                e.print(py);
            }
        });
    })));
}
