//! The `data` of the MCP-specific JSON-RPC errors, and constructors for their error objects.

use serde::{Deserialize, Serialize};

use super::capabilities::ClientCapabilities;
use crate::jsonrpc::{self, ErrorObject};

/// The `data` of an `UnsupportedProtocolVersionError` (-32022).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionErrorData {
    /// The protocol versions the server supports.
    pub supported: Vec<String>,
    /// The version the client requested.
    pub requested: String,
}

/// The `data` of a `MissingRequiredClientCapabilityError` (-32021).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityErrorData {
    /// The capabilities the server needs from the client for this request.
    pub required_capabilities: ClientCapabilities,
}

/// The error object of an `UnsupportedProtocolVersionError`.
pub fn unsupported_protocol_version_error(supported: Vec<String>, requested: impl Into<String>) -> ErrorObject {
    let data = UnsupportedProtocolVersionErrorData { supported, requested: requested.into() };
    ErrorObject::new(jsonrpc::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(serde_json::to_value(data).unwrap_or_default())
}

/// The error object of a `MissingRequiredClientCapabilityError`.
pub fn missing_required_client_capability_error(
    message: impl Into<String>,
    required_capabilities: ClientCapabilities,
) -> ErrorObject {
    let data = MissingRequiredClientCapabilityErrorData { required_capabilities };
    ErrorObject::new(jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
        .with_data(serde_json::to_value(data).unwrap_or_default())
}
