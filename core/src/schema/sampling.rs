//! `sampling/createMessage` (deprecated as of 2026-07-28): LLM sampling through the client,
//! asked for inside an `InputRequiredResult`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{JsonObject, Meta, Role};
use super::content::{AudioContent, ContentBlock, ImageContent, TextContent};
use super::tools::Tool;

/// Params of a `sampling/createMessage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation to sample from.
    pub messages: Vec<SamplingMessage>,
    /// The server's model preferences; the client may ignore them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt; the client may modify or omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context from MCP servers to include (only `"none"` is not deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub temperature: Option<f64>,
    /// The maximum number of tokens to sample.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata passed through to the LLM provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (needs the client's `sampling.tools` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use tools (default `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl CreateMessageRequestParams {
    /// A request to sample at most `max_tokens` tokens from `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            extra: Meta::new(),
        }
    }
}

/// Which servers' context to include in a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context (the default).
    None,
    /// Context from the requesting server (deprecated).
    ThisServer,
    /// Context from all servers (deprecated).
    AllServers,
}

/// Controls tool selection in sampling.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolChoice {
    /// How the model may use tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// The tool-use mode of a [`ToolChoice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

/// The server's preferences for model selection; always advisory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model hints, evaluated in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub speed_priority: Option<f64>,
    /// How much intelligence matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub intelligence_priority: Option<f64>,
}

/// A hint for model selection.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelHint {
    /// A (sub)string of a model name, e.g. `sonnet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Keys the specification leaves to the client, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// A message issued to or received from an LLM API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One content block or several.
    pub content: SamplingMessageContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A text message from the user.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: SamplingMessageContent::Single(SamplingMessageContentBlock::Text(TextContent::new(text))),
            meta: None,
        }
    }
}

/// The `content` of a sampling message: one block or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingMessageContent {
    /// A single block.
    Single(SamplingMessageContentBlock),
    /// Several blocks.
    Multiple(Vec<SamplingMessageContentBlock>),
}

/// A block of sampling content, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SamplingMessageContentBlock {
    /// `"text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `"image"`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `"audio"`.
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `"tool_use"`: the assistant asks to call a tool.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `"tool_result"`: the result of a tool use, sent back to the assistant.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

/// A request from the assistant to call a tool (`"type": "tool_use"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Identifier matching this use to its result.
    pub id: String,
    /// The name of the tool.
    pub name: String,
    /// The arguments, conforming to the tool's input schema.
    pub input: JsonObject,
    /// Metadata; clients should preserve it in later requests.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, sent back to the assistant (`"type": "tool_result"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The id of the [`ToolUseContent`] this answers.
    pub tool_use_id: String,
    /// The unstructured result, as in a `CallToolResult`.
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata; clients should preserve it in later requests.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's result for `sampling/createMessage`: the sampled message and its model.
///
/// Unlike server results it has no `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (normally the assistant).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingMessageContent,
    /// The name of the model that generated the message.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or another
    /// provider-specific value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}
