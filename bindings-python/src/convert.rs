//! JSON values between Rust (`serde_json::Value`) and Python (`dict`, `list`, `str`, `int`,
//! `float`, `bool`, `None`), and a handler's value as the core's [`Returned`] (JSON with its
//! `bytes` kept apart). Hand-written: one pass, no intermediate text.

use mcpaxle::server::Returned;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Nesting deeper than this is refused (a cycle, or a value no client would accept).
const MAX_DEPTH: usize = 256;

/// A JSON value as a new Python object.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let items = a.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(m) => map_to_py(py, m)?.into_any(),
    })
}

/// A JSON object as a new Python `dict`.
pub fn map_to_py<'py>(py: Python<'py>, m: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, x) in m {
        d.set_item(PyString::new(py, k), to_py(py, x)?)?;
    }
    Ok(d)
}

/// A Python object made of JSON types as a JSON value. Dict keys must be strings (ints are
/// written as their decimal text, as `json.dumps` does); a float that is not finite becomes
/// `null`. Anything else raises `TypeError`.
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    from_py_at(obj, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("value nested too deeply to send as JSON (a reference cycle?)"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(PyOverflowError::new_err(format!(
            "integer {obj} does not fit in 64 bits: send it as a string or a float"
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Number::from_f64(f.value()).map(Value::Number).unwrap_or(Value::Null));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            m.insert(dict_key(&k)?, from_py_at(&v, depth + 1)?);
        }
        return Ok(Value::Object(m));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|x| from_py_at(&x, depth + 1)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|x| from_py_at(&x, depth + 1)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    Err(PyTypeError::new_err(format!(
        "a {} cannot be sent as JSON: use dict, list, tuple, str, int, float, bool or None",
        obj.get_type().name()?
    )))
}

/// A dict key as a JSON member name: a string, or an int as its decimal text.
fn dict_key(k: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = k.cast::<PyString>() {
        Ok(s.to_str()?.to_owned())
    } else if k.is_instance_of::<PyInt>() && !k.is_instance_of::<PyBool>() {
        Ok(k.str()?.to_str()?.to_owned())
    } else {
        Err(PyTypeError::new_err(format!("dict keys must be strings to send as JSON, not {}", k.get_type().name()?)))
    }
}

/// A handler's value as the core's [`Returned`]: JSON types as by [`from_py`], and `bytes`,
/// `bytearray` and `memoryview` (at any depth) kept as bytes for the core's shaping rule.
pub fn returned_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Returned> {
    match from_py(obj) {
        Ok(v) => Ok(Returned::Json(v)),
        Err(_) => returned_at(obj, 0),
    }
}

fn returned_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Returned> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("value nested too deeply to send as JSON (a reference cycle?)"));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Returned::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Returned::Bytes(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let b = obj.py().get_type::<PyBytes>().call1((obj,))?;
        return Ok(Returned::Bytes(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut members = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            members.push((dict_key(&k)?, returned_at(&v, depth + 1)?));
        }
        return Ok(Returned::object(members));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|x| returned_at(&x, depth + 1)).collect::<PyResult<Vec<_>>>().map(Returned::list);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|x| returned_at(&x, depth + 1)).collect::<PyResult<Vec<_>>>().map(Returned::list);
    }
    from_py_at(obj, depth).map(Returned::Json)
}
