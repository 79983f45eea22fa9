//! Errors across the boundary, mapped by kind, never by message.
//!
//! Rust to JavaScript: a napi error whose message is [`MARKER`] followed by a JSON object
//! `{"kind": "invalid_params", "code": -32602, "message": …, "data"?: …}`; the JavaScript
//! layer (`lib/errors.js`) turns it into an `McpError` with those properties. `kind` is the
//! core's [`ErrorKind`] name ([`ErrorKind::as_str`]), `code` the JSON-RPC code the error is
//! sent with ([`Error::code`]).
//!
//! JavaScript to Rust: a handler's outcome travels as an envelope, `{"ok": value}` or
//! `{"error": {"kind", "message", "code"?, "data"?}}` (the JavaScript layer catches every
//! throw and rejection, so no JavaScript exception ever crosses into Rust).

use mcpaxle::{Error, ErrorKind};
use napi_derive::napi;
use serde_json::{Value, json};

/// Prefixes the message of every error the JavaScript layer should decode.
pub const MARKER: &str = "\u{1}mcpaxle-error:";

/// One kind of the core's errors, as `errorKinds()` lists it.
#[napi(object)]
pub struct ErrorKindInfo {
    /// The kind's stable name (`"invalid_params"`): an `McpError`'s `kind`.
    pub name: String,
    /// The JSON-RPC code errors of this kind are sent with: an `McpError`'s default `code`.
    pub code: i32,
}

/// Every kind of the core's errors, in the core's order: what `lib/errors.js` builds
/// `ErrorKind` and the default codes from.
#[napi]
pub fn error_kinds() -> Vec<ErrorKindInfo> {
    ErrorKind::ALL.iter().map(|k| ErrorKindInfo { name: k.as_str().to_owned(), code: k.code() }).collect()
}

/// A core error as the JSON the JavaScript layer decodes.
pub fn to_json(e: &Error) -> Value {
    let mut v = json!({ "kind": e.kind().as_str(), "code": e.code(), "message": e.message() });
    if let Some(d) = e.data() {
        v["data"] = d.clone();
    }
    v
}

/// A core error as a napi error (a rejected promise or a thrown exception in JavaScript).
pub fn to_napi(e: Error) -> napi::Error {
    napi::Error::new(napi::Status::GenericFailure, format!("{MARKER}{}", to_json(&e)))
}

/// A misuse of the API (bad argument, bad definition) as a napi error.
pub fn usage(message: impl Into<String>) -> napi::Error {
    to_napi(Error::usage(message))
}

/// A core error from the `error` member of a JavaScript envelope (an unknown `kind` is an
/// internal error; `lib/errors.js` only sends the core's; `"unexpected": true` marks a thrown
/// value that is not an `McpError`: [`Error::unexpected`]).
pub fn from_json(v: &Value) -> Error {
    let kind = v.get("kind").and_then(Value::as_str).and_then(|k| k.parse().ok()).unwrap_or(ErrorKind::Internal);
    let message = v.get("message").and_then(Value::as_str).unwrap_or("the JavaScript handler failed");
    let unexpected = kind == ErrorKind::Internal && v.get("unexpected") == Some(&Value::Bool(true));
    let mut e = if unexpected { Error::unexpected(message) } else { Error::new(kind, message) };
    if let Some(d) = v.get("data").filter(|d| !d.is_null()) {
        e = e.with_data(d.clone());
    }
    let code = v.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok());
    if let Some(code) = code.filter(|c| *c != kind.code()) {
        e = e.with_code(code);
    }
    e
}

/// Decodes a JavaScript envelope: the `ok` value, or the `error` as a core error.
pub fn open_envelope(text: &str) -> mcpaxle::Result<Value> {
    let mut v: Value = serde_json::from_str(text)
        .map_err(|e| Error::internal(format!("the JavaScript layer sent a malformed answer: {e}")))?;
    if let Some(e) = v.get("error") {
        return Err(from_json(e));
    }
    Ok(v.get_mut("ok").map(Value::take).unwrap_or(Value::Null))
}

/// A napi error (a failed threadsafe call, a rejected promise) as a core error.
pub fn from_napi(e: napi::Error) -> Error {
    Error::internal(format!("the JavaScript handler could not be called: {}", e.reason))
}

/// Parses JSON sent by the JavaScript layer (`null` when absent).
pub fn parse_json(text: Option<&str>, what: &str) -> napi::Result<Value> {
    match text {
        None => Ok(Value::Null),
        Some(t) => serde_json::from_str(t).map_err(|e| usage(format!("{what} is not valid JSON: {e}"))),
    }
}

/// Serializes a result for the JavaScript layer.
pub fn to_text<T: serde::Serialize>(v: &T) -> mcpaxle::Result<String> {
    serde_json::to_string(v).map_err(|e| Error::internal(format!("cannot serialize the result: {e}")))
}
