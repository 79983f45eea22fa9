//! `server/discover`: client and server capabilities and the discovery result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{CacheScope, JsonObject, Meta, ResultType, impl_cacheable};

/// The identifier of the Tasks extension (SEP-2663), the key of `extensions` in both sides'
/// capabilities.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Capabilities a client supports, declared per request. Not a closed set: unknown
/// capabilities are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<BTreeMap<String, JsonObject>>,
    /// Present if the client supports listing roots (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client supports sampling from an LLM (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client supports elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// MCP extensions the client supports, by extension identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<BTreeMap<String, JsonObject>>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The client's `roots` capability (an empty object in this revision).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RootsCapability {
    /// Members this schema revision does not define (e.g. the legacy `listChanged`).
    #[serde(flatten)]
    pub extra: Meta,
}

/// The client's `sampling` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SamplingCapability {
    /// Present if the client supports `includeContext` (deprecated values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present if the client supports `tools` and `toolChoice` in sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The client's `elicitation` capability; an empty object means form mode only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Present if the client supports form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present if the client supports URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl ElicitationCapability {
    /// Whether form mode is supported (declared, or implied by an empty capability).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// Capabilities a server supports. Not a closed set: unknown capabilities are kept in
/// `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<BTreeMap<String, JsonObject>>,
    /// Present if the server sends log messages (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// MCP extensions the server supports, by extension identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<BTreeMap<String, JsonObject>>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The server's `prompts` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server notifies changes of the prompt list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The server's `resources` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether the server supports subscribing to resource updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server notifies changes of the resource list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The server's `tools` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server notifies changes of the tool list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The result of a `server/discover` request: versions, capabilities and instructions.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Result metadata (servers should put [`SERVER_INFO_META_KEY`](super::SERVER_INFO_META_KEY) here).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result; servers of this revision always send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The protocol versions this server supports.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Natural-language guidance about the server, e.g. for a system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long (ms) the client may cache this result (required on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache this result (required on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl DiscoverResult {
    /// A complete discovery result (caching hints unset).
    pub fn new(supported_versions: Vec<String>, capabilities: ServerCapabilities) -> Self {
        DiscoverResult {
            result_type: Some(ResultType::Complete),
            supported_versions,
            capabilities,
            ..Default::default()
        }
    }
}

impl_cacheable!(DiscoverResult);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_capabilities_are_kept() {
        let v = json!({"tools": {"listChanged": true, "x": 1}, "com.example/cap": {}});
        let c: ServerCapabilities = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(c.tools.as_ref().unwrap().list_changed, Some(true));
        assert_eq!(serde_json::to_value(&c).unwrap(), v);
    }

    #[test]
    fn empty_elicitation_capability_means_form_only() {
        let c = ElicitationCapability::default();
        assert!(c.supports_form() && !c.supports_url());
    }
}
