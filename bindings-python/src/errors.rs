//! Errors across the boundary: each core [`ErrorKind`] is one class of `mcpaxle.errors`
//! (mapped by kind, never by message), and a Python exception raised by a handler becomes a
//! core [`Error`] of the kind its class names.

use crate::convert;
use mcpaxle::{Error, ErrorKind};
use pyo3::exceptions::{PyRuntimeError, asyncio::CancelledError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// Every kind of the core's errors as `(name, JSON-RPC code)`, in the core's order: what
/// `mcpaxle.errors` builds its classes' `kind` and `code` from.
#[pyfunction]
pub fn error_kinds() -> Vec<(&'static str, i32)> {
    ErrorKind::ALL.iter().map(|k| (k.as_str(), k.code())).collect()
}

struct Classes {
    mcp_error: Py<PyType>,
    input_required: Py<PyType>,
    class_for_kind: Py<PyAny>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let m = py.import("mcpaxle.errors")?;
        Ok(Classes {
            mcp_error: m.getattr("McpError")?.cast_into::<PyType>()?.unbind(),
            input_required: m.getattr("InputRequired")?.cast_into::<PyType>()?.unbind(),
            class_for_kind: m.getattr("class_for_kind")?.unbind(),
        })
    })
}

/// An instance of `mcpaxle.errors.<class>` with a message, as a `PyErr`. Falls back to a
/// `RuntimeError` when the Python package cannot be imported (a broken installation).
pub fn new_py_err(class: &str, message: String) -> PyErr {
    Python::attach(|py| match py.import("mcpaxle.errors").and_then(|m| m.getattr(class)) {
        Ok(cls) => match cls.call1((message.clone(),)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(e) => e,
        },
        Err(_) => PyRuntimeError::new_err(message),
    })
}

/// A misuse of the API (a bad option, definition or argument): `mcpaxle.errors.UsageError`.
pub fn usage(message: impl Into<String>) -> PyErr {
    new_py_err("UsageError", message.into())
}

/// [`to_py_err`] where no `Python` token is at hand.
pub fn core_err(e: Error) -> PyErr {
    Python::attach(|py| to_py_err(py, &e))
}

/// A core error as the Python exception of its kind (`message`, `data` and `code` kept).
pub fn to_py_err(py: Python<'_>, e: &Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = classes(py)?.class_for_kind.bind(py).call1((e.kind().as_str(),))?;
        let kwargs = PyDict::new(py);
        if let Some(d) = e.data() {
            kwargs.set_item("data", convert::to_py(py, d)?)?;
        }
        kwargs.set_item("code", e.code())?;
        Ok(PyErr::from_value(cls.call((e.message(),), Some(&kwargs))?))
    };
    build().unwrap_or_else(|err| err)
}

/// An exception that is not an mcpaxle error, with its message (its type's name when it has
/// none): the core decides what a client sees of it.
fn unexpected(value: &Bound<'_, pyo3::exceptions::PyBaseException>) -> Error {
    let text = value.to_string();
    if text.is_empty() {
        return Error::unexpected(value.get_type().name().map(|n| n.to_string()).unwrap_or_default());
    }
    Error::unexpected(text)
}

/// The core error for an exception a handler raised: an `mcpaxle.errors` exception keeps its
/// kind (its `kind` names one of the core's, or it is internal), message, data and code; `asyncio.CancelledError` is a cancellation; anything else is
/// an unexpected exception ([`Error::unexpected`]; the Python layer has already logged it with
/// its traceback).
pub fn from_py_err(py: Python<'_>, err: &PyErr) -> Error {
    let value = err.value(py);
    if err.is_instance_of::<CancelledError>(py) {
        return Error::new(ErrorKind::Cancelled, "Cancelled: the handler's task was cancelled");
    }
    let Ok(cls) = classes(py) else {
        return Error::internal(format!("Internal error: {value}"));
    };
    if value.is_instance(cls.input_required.bind(py)).unwrap_or(false) {
        return Error::input_required();
    }
    if !value.is_instance(cls.mcp_error.bind(py)).unwrap_or(false) {
        return unexpected(value);
    }
    let kind = value
        .getattr("kind")
        .ok()
        .and_then(|k| k.extract::<String>().ok())
        .and_then(|k| k.parse::<ErrorKind>().ok())
        .unwrap_or(ErrorKind::Internal);
    let message =
        value.getattr("message").ok().and_then(|m| m.extract::<String>().ok()).unwrap_or_else(|| value.to_string());
    let mut e = Error::new(kind, message);
    if let Ok(data) = value.getattr("data") {
        if !data.is_none() {
            if let Ok(d) = convert::from_py(&data) {
                e = e.with_data(d);
            }
        }
    }
    if let Ok(code) = value.getattr("code").and_then(|c| c.extract::<Option<i32>>()) {
        if let Some(code) = code.filter(|c| *c != kind.code()) {
            e = e.with_code(code);
        }
    }
    e
}
