//! JSON values between Rust (`serde_json::Value`) and Python (`dict`, `list`, `str`, `int`,
//! `float`, `bool`, `None`), through `pythonize`. Towards Python it is `pythonize` as is; from
//! Python, `pythonize` walks the object and [`JsonSeed`] keeps the JSON rules of the binding:
//! a depth limit (a cycle would otherwise recurse until the stack overflows), integers of at
//! most 64 bits, non-finite floats as `null`, and integer dict keys as their decimal text. A
//! handler's value becomes the core's [`Returned`] ([`returned_from_py`]): JSON with its `bytes`
//! kept apart for the core's shaping rule.

use std::cell::RefCell;
use std::fmt;

use mcpaxle::server::Returned;
use pyo3::exceptions::{PyException, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyList, PyMemoryView, PyString, PyTuple};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Nesting deeper than this is refused (a cycle, or a value no client would accept).
const MAX_DEPTH: usize = 256;

/// A JSON value as a new Python object.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, v)?)
}

/// A JSON object as a new Python `dict`.
pub fn map_to_py<'py>(py: Python<'py>, m: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    Ok(pythonize::pythonize(py, m)?.cast_into::<PyDict>()?)
}

/// A Python object made of JSON types as a JSON value. Dict keys must be strings (ints are
/// written as their decimal text, as `json.dumps` does); a float that is not finite becomes
/// `null`; an int must fit in 64 bits (`OverflowError`); nesting deeper than 256 raises
/// `ValueError`. Tuples, sets and other sequences are lists, other mappings and dataclasses
/// are dicts; anything else raises `TypeError`.
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let refusal = RefCell::new(None);
    let seed = JsonSeed { depth: 0, refusal: &refusal };
    seed.deserialize(&mut pythonize::Depythonizer::from_object(obj)).map_err(|e| {
        if let Some(err) = refusal.take() {
            return err;
        }
        let py = obj.py();
        let err = PyErr::from(e);
        if err.is_instance_of::<PyOverflowError>(py) {
            // Past 128 bits pythonize's own conversion refuses the int.
            return too_big("beyond 128 bits");
        }
        // pythonize raises TypeError for a type it does not know and a plain Exception for a
        // type our visitors refuse (bytes, a float dict key, ...): both are TypeErrors here.
        let exact_exception = err.get_type(py).is(py.get_type::<PyException>());
        if exact_exception || err.is_instance_of::<PyTypeError>(py) {
            let value = err.value(py).to_string();
            return PyTypeError::new_err(format!(
                "cannot be sent as JSON: {value} (use dict, list, tuple, str, int, float, bool or None)"
            ));
        }
        err
    })
}

/// Reads one JSON value at `depth`; a refusal of ours is kept in `refusal` with its Python
/// exception class (serde errors carry only text).
#[derive(Clone, Copy)]
struct JsonSeed<'r> {
    depth: usize,
    refusal: &'r RefCell<Option<PyErr>>,
}

impl JsonSeed<'_> {
    fn refuse<E: de::Error>(&self, err: PyErr) -> E {
        let message = err.to_string();
        *self.refusal.borrow_mut() = Some(err);
        E::custom(message)
    }

    fn deeper(self) -> Self {
        JsonSeed { depth: self.depth + 1, ..self }
    }
}

impl<'de> DeserializeSeed<'de> for JsonSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        if self.depth > MAX_DEPTH {
            return Err(
                self.refuse(PyValueError::new_err("value nested too deeply to send as JSON (a reference cycle?)"))
            );
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("dict, list, str, int, float, bool or None")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Err(self.refuse(too_big(v)))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Err(self.refuse(too_big(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self.deeper())? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed(self))? {
            members.insert(key, map.next_value_seed(self.deeper())?);
        }
        Ok(Value::Object(members))
    }
}

fn too_big(v: impl fmt::Display) -> PyErr {
    PyOverflowError::new_err(format!("integer {v} does not fit in 64 bits: send it as a string or a float"))
}

/// A dict key: a string, or an int written as its decimal text.
struct KeySeed<'r>(JsonSeed<'r>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a str dict key")
    }

    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_i64<E>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_i128<E>(self, v: i128) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u128<E>(self, v: u128) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<String, E> {
        Err(self.0.refuse(PyTypeError::new_err("dict keys must be strings to send as JSON, not bool")))
    }
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
    from_py(obj).map(Returned::Json)
}
