//! The one error type of mcpaxle: a stable [`ErrorKind`], a message a person can act on, and
//! optional structured data. Bindings map kinds, never message strings.

use crate::jsonrpc::{self, ErrorObject};
use serde_json::Value;
use std::fmt;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The stable kind of an [`Error`]. Each protocol kind maps to one JSON-RPC code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Invalid JSON (-32700).
    ParseError,
    /// Not a valid JSON-RPC request (-32600).
    InvalidRequest,
    /// Unknown or unavailable method (-32601).
    MethodNotFound,
    /// Invalid parameters: unknown tool, prompt or resource, bad cursor, bad arguments (-32602).
    InvalidParams,
    /// An internal error (-32603).
    Internal,
    /// HTTP headers disagree with the body (-32020).
    HeaderMismatch,
    /// The request needs a client capability the client did not declare (-32021).
    MissingRequiredClientCapability,
    /// The protocol version is not supported (-32022).
    UnsupportedProtocolVersion,
    /// A tool failed in a way the model should read: becomes a `CallToolResult` with
    /// `isError: true` on `tools/call`.
    Tool,
    /// A handler needs input from the client (an MRTR round): the dispatcher answers with an
    /// `InputRequiredResult` carrying every pending ask.
    InputRequired,
    /// The request was cancelled.
    Cancelled,
    /// A handler panicked; the request fails, the server goes on.
    Panic,
    /// An I/O or transport failure.
    Transport,
    /// The peer answered with a JSON-RPC error (client side).
    Remote,
    /// A request timed out.
    Timeout,
    /// The library is used wrongly (bad configuration, bad definition).
    Usage,
}

/// An mcpaxle error.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    data: Option<Value>,
    code: Option<i32>,
    /// Raised by a handler that did not mean to fail (see [`Error::unexpected`]).
    unexpected: bool,
}

impl Error {
    /// An error of a kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), data: None, code: None, unexpected: false }
    }

    /// Invalid params (-32602).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// Method not found (-32601).
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorKind::MethodNotFound, format!("Method not found: {method}"))
    }

    /// Internal error (-32603).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// A tool error meant for the model: `tools/call` answers with `isError: true` and this
    /// message as text.
    pub fn tool(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Tool, message)
    }

    /// An exception a handler did not mean to raise (a bug in it, or a failure it did not
    /// handle), with the exception's message: an internal error, whose message reaches the
    /// client (a tool's as an `isError` result, so that the model can correct itself) unless the
    /// server masks error details ([`ServerBuilder::mask_error_details`]). Bindings make one of
    /// every host exception that is not an mcpaxle error.
    ///
    /// [`ServerBuilder::mask_error_details`]: crate::server::ServerBuilder::mask_error_details
    pub fn unexpected(message: impl Into<String>) -> Self {
        Error { unexpected: true, ..Self::new(ErrorKind::Internal, message) }
    }

    /// Whether this is a handler's unexpected exception ([`Error::unexpected`]).
    pub fn is_unexpected(&self) -> bool {
        self.unexpected
    }

    /// Misuse of the library (bad definition, bad configuration).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }

    /// The request needs a client capability the client did not declare. `required` is a
    /// `ClientCapabilities` object such as `{"sampling": {}}`.
    pub fn missing_capability(required: Value) -> Self {
        let names: Vec<String> = required.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
        Self::new(
            ErrorKind::MissingRequiredClientCapability,
            format!(
                "This request requires the client capability {}, which the request's clientCapabilities do not declare",
                names.join(", ")
            ),
        )
        .with_data(serde_json::json!({ "requiredCapabilities": required }))
    }

    /// An error from a peer's JSON-RPC error object.
    pub fn remote(e: ErrorObject) -> Self {
        let kind = kind_for_code(e.code);
        Error { kind, message: e.message, data: e.data, code: Some(e.code), unexpected: false }
    }

    /// Sends this error with another JSON-RPC code (its kind stays).
    pub fn with_code(mut self, code: i32) -> Self {
        self.code = Some(code);
        self
    }

    /// Attaches structured data (JSON-RPC `error.data`).
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The stable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The structured data, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// The JSON-RPC code this error is sent with.
    pub fn code(&self) -> i32 {
        if let Some(code) = self.code {
            return code;
        }
        match self.kind {
            ErrorKind::ParseError => jsonrpc::PARSE_ERROR,
            ErrorKind::InvalidRequest => jsonrpc::INVALID_REQUEST,
            ErrorKind::MethodNotFound => jsonrpc::METHOD_NOT_FOUND,
            ErrorKind::InvalidParams => jsonrpc::INVALID_PARAMS,
            ErrorKind::HeaderMismatch => jsonrpc::HEADER_MISMATCH,
            ErrorKind::MissingRequiredClientCapability => jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY,
            ErrorKind::UnsupportedProtocolVersion => jsonrpc::UNSUPPORTED_PROTOCOL_VERSION,
            _ => jsonrpc::INTERNAL_ERROR,
        }
    }

    /// The JSON-RPC error object for this error.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject { code: self.code(), message: self.message.clone(), data: self.data.clone() }
    }
}

fn kind_for_code(code: i32) -> ErrorKind {
    match code {
        jsonrpc::PARSE_ERROR => ErrorKind::ParseError,
        jsonrpc::INVALID_REQUEST => ErrorKind::InvalidRequest,
        jsonrpc::METHOD_NOT_FOUND => ErrorKind::MethodNotFound,
        jsonrpc::INVALID_PARAMS => ErrorKind::InvalidParams,
        jsonrpc::HEADER_MISMATCH => ErrorKind::HeaderMismatch,
        jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY => ErrorKind::MissingRequiredClientCapability,
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => ErrorKind::UnsupportedProtocolVersion,
        jsonrpc::INTERNAL_ERROR => ErrorKind::Internal,
        _ => ErrorKind::Remote,
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<ErrorObject> for Error {
    fn from(e: ErrorObject) -> Self {
        Error::remote(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(ErrorKind::Transport, e.to_string())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::invalid_params(e.to_string())
    }
}

/// The HTTP status a JSON-RPC error code is sent with on Streamable HTTP: 400 for bad
/// requests (including the MCP codes -32020..-32022), 404 for unknown methods, 500 for
/// internal errors, 200 for application codes.
pub fn http_status_for_code(code: i32) -> u16 {
    match code {
        jsonrpc::PARSE_ERROR
        | jsonrpc::INVALID_REQUEST
        | jsonrpc::INVALID_PARAMS
        | jsonrpc::HEADER_MISMATCH
        | jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY
        | jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => 400,
        jsonrpc::METHOD_NOT_FOUND => 404,
        jsonrpc::INTERNAL_ERROR => 500,
        _ => 200,
    }
}
