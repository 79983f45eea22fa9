//! `tools/list` and `tools/call`: tool definitions, call params and results.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{CacheScope, Cursor, Icon, JsonObject, Meta, ResultType, impl_cacheable};
use super::content::ContentBlock;
use super::mrtr::InputResponses;

/// Definition of a tool the client can call.
///
/// ```
/// use mcpaxle::schema::{Tool, ToolAnnotations};
/// use serde_json::json;
/// let tool = Tool::new("add", "Add two numbers", json!({
///     "type": "object",
///     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
///     "required": ["a", "b"]
/// }))
/// .with_title("Adder")
/// .with_annotations(ToolAnnotations { read_only_hint: Some(true), ..Default::default() });
/// assert_eq!(tool.name, "add");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, used in `tools/call`.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; a hint to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (2020-12 unless `$schema` says otherwise) of the arguments; its root has
    /// `"type": "object"`.
    pub input_schema: Value,
    /// JSON Schema of the `structuredContent` of the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints about the tool's behavior.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons a user interface can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl Tool {
    /// A tool with a name, description and input schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, input_schema: Value) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            extra: Meta::new(),
        }
    }

    /// Sets the display name.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the JSON Schema of the tool's `structuredContent`.
    pub fn with_output_schema(mut self, output_schema: Value) -> Self {
        self.output_schema = Some(output_schema);
        self
    }

    /// Sets the behavior hints.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Hints describing a [`Tool`] to clients; never to be trusted from untrusted servers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title for the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (default true; meaningful if not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// Params of a `tools/call` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Request metadata; see [`RequestMetaObject`](super::RequestMetaObject).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The name of the tool.
    pub name: String,
    /// The arguments of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// On a retry: the client's answers to the previous `InputRequiredResult`'s requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// On a retry: the opaque `requestState` of the previous `InputRequiredResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The result of a `tools/call` request.
///
/// Errors that come from the tool itself belong here with `is_error: true` (so that the model
/// can see them), not in a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result; servers of this revision always send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result (any JSON value), conforming to the tool's output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call ended in an error (absent means false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl CallToolResult {
    /// A complete result with the given content blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult { result_type: Some(ResultType::Complete), content, ..Default::default() }
    }

    /// A complete result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A tool error: `isError: true` with the message as one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult { is_error: Some(true), ..Self::text(message) }
    }

    /// A structured result: `structuredContent` plus its JSON text as a text block, for
    /// clients that only read `content` (as the specification recommends).
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        CallToolResult { structured_content: Some(value), ..Self::text(text) }
    }
}

/// The result of a `tools/list` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result; servers of this revision always send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The tools.
    pub tools: Vec<Tool>,
    /// Cursor of the next page, if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
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

impl ListToolsResult {
    /// A complete page of tools (caching hints and cursor unset).
    pub fn new(tools: Vec<Tool>) -> Self {
        ListToolsResult { result_type: Some(ResultType::Complete), tools, ..Default::default() }
    }
}

impl_cacheable!(ListToolsResult);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_tool_result_constructors() {
        assert_eq!(
            serde_json::to_value(CallToolResult::error("boom")).unwrap(),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "boom"}], "isError": true})
        );
        let r = CallToolResult::structured(json!({"t": 22.5}));
        assert_eq!(r.content[0].as_text(), Some(r#"{"t":22.5}"#));
        assert_eq!(r.structured_content, Some(json!({"t": 22.5})));
    }
}
