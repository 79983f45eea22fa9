//! Errors across the boundary, by kind: one error type whose `kind` is the core's
//! [`ErrorKind`] name ([`ErrorKind::as_str`]), `code` the JSON-RPC code it is sent with,
//! `reason` (the core's message), and `data` as JSON. Kotlin sees `McpException.Mcp`, Swift `McpError.Mcp`.
//!
//! The same type travels back: an input handler or authorizer that throws one fails the request
//! with that kind and code; any other exception is the core's "unexpected" internal error.

use mcpaxle::{Error, ErrorKind};

/// An error of mcpaxle: the core's error kind, its JSON-RPC code, message and data.
#[derive(Debug, uniffi::Error)]
pub enum McpError {
    /// The one variant (uniffi errors are enums): every failure is described by its fields.
    Mcp {
        /// The kind's stable name, one of [`error_kinds`] (`"invalid_params"`, `"timeout"`, ...).
        kind: String,
        /// The JSON-RPC code (the server's own code for a remote error).
        code: i32,
        /// What went wrong: the core's message. (Named `reason` because Kotlin's exceptions have
        /// a `message` of their own, which uniffi fills with every field.)
        reason: String,
        /// The error's `data` as JSON, if it has any.
        data_json: Option<String>,
    },
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let McpError::Mcp { kind, code, reason, .. } = self;
        write!(f, "{kind} ({code}): {reason}")
    }
}

impl std::error::Error for McpError {}

impl From<Error> for McpError {
    fn from(e: Error) -> Self {
        McpError::Mcp {
            kind: e.kind().as_str().to_owned(),
            code: e.code(),
            reason: e.message().to_owned(),
            data_json: e.data().map(|d| d.to_string()),
        }
    }
}

/// A callback that failed in a way uniffi could not describe as an `McpError` (an exception of
/// another class): the core's unexpected internal error.
impl From<uniffi::UnexpectedUniFFICallbackError> for McpError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Error::unexpected(format!("the application's callback failed: {}", e.reason)).into()
    }
}

impl McpError {
    /// The core error an application's callback failed with (an unknown kind is internal).
    pub(crate) fn into_core(self) -> Error {
        let McpError::Mcp { kind, code, reason, data_json } = self;
        let kind: ErrorKind = kind.parse().unwrap_or(ErrorKind::Internal);
        let mut e = Error::new(kind, reason);
        if let Some(d) = data_json.and_then(|d| serde_json::from_str(&d).ok()) {
            e = e.with_data(d);
        }
        if code != kind.code() {
            e = e.with_code(code);
        }
        e
    }
}

/// A misuse of the API (an argument that is not valid JSON, an unknown name).
pub(crate) fn usage(message: impl Into<String>) -> McpError {
    Error::usage(message).into()
}

/// Options of type `T` from the application's JSON (`None`: every default), read by the core; a
/// name or value it refuses is a usage error, as in every binding.
pub(crate) fn read_options<T: serde::de::DeserializeOwned + Default>(
    json: Option<&str>,
    what: &str,
) -> Result<T, McpError> {
    json.map_or_else(|| Ok(T::default()), |j| mcpaxle::options::from_str(what, j).map_err(McpError::from))
}

/// Parses JSON the application sent (`null` when absent).
pub(crate) fn parse_json(text: Option<&str>, what: &str) -> Result<serde_json::Value, McpError> {
    match text {
        None => Ok(serde_json::Value::Null),
        Some(t) => serde_json::from_str(t).map_err(|e| usage(format!("{what} is not valid JSON: {e}"))),
    }
}

/// A result of the core as JSON text.
pub(crate) fn to_text<T: serde::Serialize>(v: &T) -> mcpaxle::Result<String> {
    serde_json::to_string(v).map_err(|e| Error::internal(format!("cannot serialize the result: {e}")))
}

/// One kind of the core's errors.
#[derive(Debug, uniffi::Record)]
pub struct ErrorKindInfo {
    /// The kind's stable name: an `McpError`'s `kind`.
    pub name: String,
    /// The JSON-RPC code errors of this kind are sent with.
    pub code: i32,
}

/// Every kind of the core's errors, in the core's order (what an application can match
/// `McpError.kind` against).
#[uniffi::export]
pub fn error_kinds() -> Vec<ErrorKindInfo> {
    ErrorKind::ALL.iter().map(|k| ErrorKindInfo { name: k.as_str().to_owned(), code: k.code() }).collect()
}
