//! Errors across the boundary, mapped by kind, never by message.
//!
//! Rust to JavaScript: a napi error whose message is [`MARKER`] followed by a JSON object
//! `{"code": "INVALID_PARAMS", "message": …, "rpcCode"?: -32602, "data"?: …}`; the JavaScript
//! layer (`lib/errors.js`) turns it into an `McpError` with those properties. `code` is the
//! core's [`ErrorKind`] as a stable string; `rpcCode` is present for the kinds that are JSON-RPC
//! errors.
//!
//! JavaScript to Rust: a handler's outcome travels as an envelope, `{"ok": value}` or
//! `{"error": {"code", "message", "data"?, "rpcCode"?}}` (the JavaScript layer catches every
//! throw and rejection, so no JavaScript exception ever crosses into Rust).

use mcpaxle::{Error, ErrorKind};
use serde_json::{Value, json};

/// Prefixes the message of every error the JavaScript layer should decode.
pub const MARKER: &str = "\u{1}mcpaxle-error:";

/// The stable string of a kind (the `code` of a JavaScript `McpError`).
pub fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ParseError => "PARSE_ERROR",
        ErrorKind::InvalidRequest => "INVALID_REQUEST",
        ErrorKind::MethodNotFound => "METHOD_NOT_FOUND",
        ErrorKind::InvalidParams => "INVALID_PARAMS",
        ErrorKind::Internal => "INTERNAL",
        ErrorKind::HeaderMismatch => "HEADER_MISMATCH",
        ErrorKind::MissingRequiredClientCapability => "MISSING_REQUIRED_CLIENT_CAPABILITY",
        ErrorKind::UnsupportedProtocolVersion => "UNSUPPORTED_PROTOCOL_VERSION",
        ErrorKind::Tool => "TOOL",
        ErrorKind::InputRequired => "INPUT_REQUIRED",
        ErrorKind::Cancelled => "CANCELLED",
        ErrorKind::Panic => "PANIC",
        ErrorKind::Transport => "TRANSPORT",
        ErrorKind::Remote => "REMOTE",
        ErrorKind::Timeout => "TIMEOUT",
        ErrorKind::Usage => "USAGE",
        _ => "INTERNAL",
    }
}

/// The kind a `code` string names; unknown codes are internal errors.
pub fn kind_from_name(name: &str) -> ErrorKind {
    match name {
        "PARSE_ERROR" => ErrorKind::ParseError,
        "INVALID_REQUEST" => ErrorKind::InvalidRequest,
        "METHOD_NOT_FOUND" => ErrorKind::MethodNotFound,
        "INVALID_PARAMS" => ErrorKind::InvalidParams,
        "HEADER_MISMATCH" => ErrorKind::HeaderMismatch,
        "MISSING_REQUIRED_CLIENT_CAPABILITY" => ErrorKind::MissingRequiredClientCapability,
        "UNSUPPORTED_PROTOCOL_VERSION" => ErrorKind::UnsupportedProtocolVersion,
        "TOOL" => ErrorKind::Tool,
        "INPUT_REQUIRED" => ErrorKind::InputRequired,
        "CANCELLED" => ErrorKind::Cancelled,
        "PANIC" => ErrorKind::Panic,
        "TRANSPORT" => ErrorKind::Transport,
        "REMOTE" => ErrorKind::Remote,
        "TIMEOUT" => ErrorKind::Timeout,
        "USAGE" => ErrorKind::Usage,
        _ => ErrorKind::Internal,
    }
}

/// Whether errors of this kind are JSON-RPC errors (and so have an `rpcCode`).
fn is_rpc(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ParseError
            | ErrorKind::InvalidRequest
            | ErrorKind::MethodNotFound
            | ErrorKind::InvalidParams
            | ErrorKind::Internal
            | ErrorKind::HeaderMismatch
            | ErrorKind::MissingRequiredClientCapability
            | ErrorKind::UnsupportedProtocolVersion
            | ErrorKind::Remote
    )
}

/// A core error as the JSON the JavaScript layer decodes.
pub fn to_json(e: &Error) -> Value {
    let mut v = json!({ "code": kind_name(e.kind()), "message": e.message() });
    if is_rpc(e.kind()) {
        v["rpcCode"] = json!(e.code());
    }
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

/// A core error from the `error` member of a JavaScript envelope (`"unexpected": true` marks a
/// thrown value that is not an `McpError`: [`Error::unexpected`]).
pub fn from_json(v: &Value) -> Error {
    let kind = kind_from_name(v.get("code").and_then(Value::as_str).unwrap_or_default());
    let message = v.get("message").and_then(Value::as_str).unwrap_or("the JavaScript handler failed");
    let unexpected = kind == ErrorKind::Internal && v.get("unexpected") == Some(&Value::Bool(true));
    let mut e = if unexpected { Error::unexpected(message) } else { Error::new(kind, message) };
    if let Some(d) = v.get("data").filter(|d| !d.is_null()) {
        e = e.with_data(d.clone());
    }
    let code = v.get("rpcCode").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok());
    if let Some(code) = code.filter(|c| *c != e.code()) {
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
