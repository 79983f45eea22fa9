//! The per-request `_meta` of MCP 2026-07-28: protocol version, client capabilities, client
//! info, log level and progress token, validated before any handler runs.

use crate::error::{Error, ErrorKind, Result};
use crate::schema::LoggingLevel;
use serde_json::{Map, Value};

pub use crate::schema::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY,
};

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = crate::schema::LATEST_PROTOCOL_VERSION;

/// The validated request metadata of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities` (an object).
    pub client_capabilities: Map<String, Value>,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub client_info: Option<Value>,
    /// `io.modelcontextprotocol/logLevel`, when sent.
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`, when sent.
    pub progress_token: Option<Value>,
    /// The whole `_meta` object, for keys of other namespaces (trace context and the like).
    pub raw: Map<String, Value>,
    /// The trace context of the request's server span, while telemetry is on: what its handler
    /// runs in (see [`crate::telemetry`]).
    pub trace: Option<crate::telemetry::TraceContext>,
}

impl RequestMeta {
    /// Reads and validates `params._meta`. Missing `_meta`, a missing or non-string protocol
    /// version, or missing or non-object client capabilities are `-32602` errors.
    pub fn from_params(params: Option<&Value>) -> Result<RequestMeta> {
        let meta = match params.and_then(|p| p.get("_meta")) {
            Some(Value::Object(m)) => m,
            Some(_) => return Err(Error::invalid_params("Invalid params: \"_meta\" must be an object")),
            None => {
                return Err(Error::invalid_params(format!(
                    "Invalid params: params._meta is required on every request (with \"{PROTOCOL_VERSION_META_KEY}\" and \"{CLIENT_CAPABILITIES_META_KEY}\")"
                )));
            }
        };
        let protocol_version = match meta.get(PROTOCOL_VERSION_META_KEY) {
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(Error::invalid_params(format!(
                    "Invalid params: _meta[\"{PROTOCOL_VERSION_META_KEY}\"] must be a string"
                )));
            }
            None => {
                return Err(Error::invalid_params(format!(
                    "Invalid params: _meta[\"{PROTOCOL_VERSION_META_KEY}\"] is required"
                )));
            }
        };
        let client_capabilities = match meta.get(CLIENT_CAPABILITIES_META_KEY) {
            Some(Value::Object(c)) => c.clone(),
            Some(_) => {
                return Err(Error::invalid_params(format!(
                    "Invalid params: _meta[\"{CLIENT_CAPABILITIES_META_KEY}\"] must be an object"
                )));
            }
            None => {
                return Err(Error::invalid_params(format!(
                    "Invalid params: _meta[\"{CLIENT_CAPABILITIES_META_KEY}\"] is required (send {{}} for a client with no optional capabilities)"
                )));
            }
        };
        let log_level = match meta.get(LOG_LEVEL_META_KEY) {
            None | Some(Value::Null) => None,
            Some(v) => Some(serde_json::from_value::<LoggingLevel>(v.clone()).map_err(|_| {
                Error::invalid_params(format!(
                    "Invalid params: _meta[\"{LOG_LEVEL_META_KEY}\"] must be one of debug, info, notice, warning, error, critical, alert, emergency"
                ))
            })?),
        };
        let progress_token = match meta.get("progressToken") {
            None | Some(Value::Null) => None,
            Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
            Some(_) => {
                return Err(Error::invalid_params("Invalid params: _meta.progressToken must be a string or a number"));
            }
        };
        Ok(RequestMeta {
            protocol_version,
            client_capabilities,
            client_info: meta.get(CLIENT_INFO_META_KEY).cloned(),
            log_level,
            progress_token,
            raw: meta.clone(),
            trace: None,
        })
    }

    /// Whether the client declared a capability (e.g. `"sampling"`, `"elicitation"`, `"roots"`).
    pub fn client_supports(&self, capability: &str) -> bool {
        matches!(self.client_capabilities.get(capability), Some(v) if !v.is_null() && v != &Value::Bool(false))
    }
}

/// The error for a protocol version this server does not speak.
pub fn unsupported_version(requested: &str, supported: &[&str]) -> Error {
    Error::new(
        ErrorKind::UnsupportedProtocolVersion,
        format!("Unsupported protocol version {requested:?}; this server supports {}", supported.join(", ")),
    )
    .with_data(serde_json::json!({ "supported": supported, "requested": requested }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(m: Value) -> Result<RequestMeta> {
        RequestMeta::from_params(Some(&json!({ "_meta": m })))
    }

    #[test]
    fn requires_version_and_capabilities() {
        assert!(RequestMeta::from_params(None).is_err());
        assert!(RequestMeta::from_params(Some(&json!({}))).is_err());
        assert!(meta(json!({ CLIENT_CAPABILITIES_META_KEY: {} })).is_err());
        assert!(meta(json!({ PROTOCOL_VERSION_META_KEY: "2026-07-28" })).is_err());
        assert!(meta(json!({ PROTOCOL_VERSION_META_KEY: 5, CLIENT_CAPABILITIES_META_KEY: {} })).is_err());
        assert!(meta(json!({ PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_CAPABILITIES_META_KEY: [] })).is_err());
        let m = meta(json!({ PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_CAPABILITIES_META_KEY: {"sampling": {}}, "progressToken": 3 })).unwrap();
        assert!(m.client_supports("sampling"));
        assert!(!m.client_supports("elicitation"));
        assert_eq!(m.progress_token, Some(json!(3)));
        assert!(
            meta(
                json!({ PROTOCOL_VERSION_META_KEY: "x", CLIENT_CAPABILITIES_META_KEY: {}, LOG_LEVEL_META_KEY: "loud" })
            )
            .is_err()
        );
    }
}
