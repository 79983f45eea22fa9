//! The one error type of mcpaxle: a stable [`ErrorKind`], a message a person can act on, and
//! optional structured data. Bindings map kinds, never message strings.

use crate::jsonrpc::{self, ErrorObject};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The stable kind of an [`Error`]. Each protocol kind maps to one JSON-RPC code.
///
/// This enum is the one vocabulary of errors: every binding derives its names from
/// [`ErrorKind::ALL`], [`ErrorKind::as_str`] and [`ErrorKind::code`] (Python's exception
/// classes, Node's `kind` strings, C's error details), so a kind added here appears everywhere.
///
/// ```
/// use mcpaxle::ErrorKind;
/// let kind: ErrorKind = "invalid_params".parse().unwrap();
/// assert_eq!(kind, ErrorKind::InvalidParams);
/// assert_eq!(kind.as_str(), "invalid_params");
/// assert_eq!(kind.code(), -32602);
/// ```
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

impl ErrorKind {
    /// Every kind, in a fixed order (the order of declaration; new kinds are only appended).
    pub const ALL: [ErrorKind; 16] = [
        ErrorKind::ParseError,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::HeaderMismatch,
        ErrorKind::MissingRequiredClientCapability,
        ErrorKind::UnsupportedProtocolVersion,
        ErrorKind::Tool,
        ErrorKind::InputRequired,
        ErrorKind::Cancelled,
        ErrorKind::Panic,
        ErrorKind::Transport,
        ErrorKind::Remote,
        ErrorKind::Timeout,
        ErrorKind::Usage,
    ];

    /// The kind's stable name, snake_case (`"invalid_params"`). These names are public API in
    /// every binding (Python's `McpError.kind`, Node's `McpError.kind`, C's
    /// `mcpaxle_error_kind`): they never change.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ParseError => "parse_error",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::MethodNotFound => "method_not_found",
            ErrorKind::InvalidParams => "invalid_params",
            ErrorKind::Internal => "internal",
            ErrorKind::HeaderMismatch => "header_mismatch",
            ErrorKind::MissingRequiredClientCapability => "missing_required_client_capability",
            ErrorKind::UnsupportedProtocolVersion => "unsupported_protocol_version",
            ErrorKind::Tool => "tool",
            ErrorKind::InputRequired => "input_required",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Panic => "panic",
            ErrorKind::Transport => "transport",
            ErrorKind::Remote => "remote",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Usage => "usage",
        }
    }

    /// The JSON-RPC code an error of this kind is sent with (unless the error carries its own,
    /// see [`Error::with_code`]).
    ///
    /// The protocol kinds have their own code (-32700, -32600, -32601, -32602, -32603 and MCP's
    /// -32020..-32022). Every other kind (`Tool`, `InputRequired`, `Cancelled`, `Panic`,
    /// `Transport`, `Remote`, `Timeout`, `Usage`) maps to Internal's -32603: JSON-RPC and MCP
    /// define no code for them, and when one of them does reach the wire it is, for the peer,
    /// a failure inside the server (a tool error is sent as an `isError` result, never as a
    /// JSON-RPC error; a `Remote` error keeps the code its peer sent).
    pub const fn code(self) -> i32 {
        match self.wire_code() {
            Some(code) => code,
            None => jsonrpc::INTERNAL_ERROR,
        }
    }

    /// The code of the kinds that have one of their own in JSON-RPC or MCP.
    const fn wire_code(self) -> Option<i32> {
        Some(match self {
            ErrorKind::ParseError => jsonrpc::PARSE_ERROR,
            ErrorKind::InvalidRequest => jsonrpc::INVALID_REQUEST,
            ErrorKind::MethodNotFound => jsonrpc::METHOD_NOT_FOUND,
            ErrorKind::InvalidParams => jsonrpc::INVALID_PARAMS,
            ErrorKind::Internal => jsonrpc::INTERNAL_ERROR,
            ErrorKind::HeaderMismatch => jsonrpc::HEADER_MISMATCH,
            ErrorKind::MissingRequiredClientCapability => jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY,
            ErrorKind::UnsupportedProtocolVersion => jsonrpc::UNSUPPORTED_PROTOCOL_VERSION,
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorKind {
    type Err = Error;

    /// The kind named by [`ErrorKind::as_str`]; a usage error listing the names otherwise.
    fn from_str(name: &str) -> Result<Self> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == name).ok_or_else(|| {
            let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
            Error::usage(format!("unknown error kind {name:?}; the kinds are: {}", names.join(", ")))
        })
    }
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
    /// Already logged by the binding that made it (see [`Error::reported`]).
    reported: bool,
}

impl Error {
    /// An error of a kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), data: None, code: None, unexpected: false, reported: false }
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

    /// Marks an error its maker has already logged, with what its host knows of it (a Python
    /// traceback): the server does not log it a second time.
    pub fn reported(mut self) -> Self {
        self.reported = true;
        self
    }

    /// Whether the error was logged where it was made ([`Error::reported`]).
    pub fn is_reported(&self) -> bool {
        self.reported
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
        Error { kind, message: e.message, data: e.data, code: Some(e.code), unexpected: false, reported: false }
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

    /// The JSON-RPC code this error is sent with: its own (a peer's, or [`Error::with_code`]),
    /// else its kind's ([`ErrorKind::code`]).
    pub fn code(&self) -> i32 {
        self.code.unwrap_or(self.kind.code())
    }

    /// The JSON-RPC error object for this error.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject { code: self.code(), message: self.message.clone(), data: self.data.clone() }
    }
}

/// The kind of a peer's error code: the kind that owns the code, else `Remote`.
fn kind_for_code(code: i32) -> ErrorKind {
    ErrorKind::ALL.into_iter().find(|k| k.wire_code() == Some(code)).unwrap_or(ErrorKind::Remote)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_kind_is_listed_once_with_a_unique_snake_case_name() {
        let kinds: HashSet<ErrorKind> = ErrorKind::ALL.into_iter().collect();
        assert_eq!(kinds.len(), ErrorKind::ALL.len());
        let names: HashSet<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        for name in names {
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{name}");
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_usage_errors() {
        for kind in ErrorKind::ALL {
            assert_eq!(kind.as_str().parse::<ErrorKind>().unwrap(), kind);
            assert_eq!(kind.to_string(), kind.as_str());
        }
        let e = "InvalidParams".parse::<ErrorKind>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(e.message().contains("\"InvalidParams\"") && e.message().contains("invalid_params"), "{e}");
    }

    #[test]
    fn codes_are_the_protocol_codes_or_internal() {
        let expected = [
            (ErrorKind::ParseError, -32700),
            (ErrorKind::InvalidRequest, -32600),
            (ErrorKind::MethodNotFound, -32601),
            (ErrorKind::InvalidParams, -32602),
            (ErrorKind::Internal, -32603),
            (ErrorKind::HeaderMismatch, -32020),
            (ErrorKind::MissingRequiredClientCapability, -32021),
            (ErrorKind::UnsupportedProtocolVersion, -32022),
        ];
        for kind in ErrorKind::ALL {
            let code = expected.iter().find(|(k, _)| *k == kind).map_or(-32603, |(_, c)| *c);
            assert_eq!(kind.code(), code, "{kind}");
            assert_eq!(Error::new(kind, "x").code(), code, "{kind}");
        }
    }

    #[test]
    fn a_peer_code_maps_to_the_kind_that_owns_it_else_remote() {
        for kind in ErrorKind::ALL.into_iter().filter(|k| k.wire_code().is_some()) {
            let e = Error::remote(ErrorObject { code: kind.code(), message: "m".into(), data: None });
            assert_eq!(e.kind(), kind);
        }
        let e = Error::remote(ErrorObject { code: -32042, message: "m".into(), data: None });
        assert_eq!((e.kind(), e.code()), (ErrorKind::Remote, -32042));
    }
}
