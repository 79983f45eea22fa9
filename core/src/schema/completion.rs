//! `completion/complete`: argument autocompletion.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{Meta, ResultType};

/// Params of a `completion/complete` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequestParams {
    /// Request metadata; see [`RequestMetaObject`](super::RequestMetaObject).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The prompt or resource template whose argument is completed (`ref` on the wire).
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument being completed.
    pub argument: CompleteRequestArgument,
    /// Additional context for the completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteRequestContext>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// What a completion is for (`PromptReference | ResourceTemplateReference`), tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// `"ref/prompt"`: an argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"ref/resource"`: a variable of a resource template.
    #[serde(rename = "ref/resource")]
    ResourceTemplate(ResourceTemplateReference),
}

/// Identifies a prompt (`"type": "ref/prompt"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// The prompt's display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Identifies a resource or resource template (`"type": "ref/resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceTemplateReference {
    /// The URI or URI template of the resource.
    pub uri: String,
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestArgument {
    /// The argument's name.
    pub name: String,
    /// The partial value to complete.
    pub value: String,
}

/// Additional context for a completion.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteRequestContext {
    /// Already resolved variables of the URI template or prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The result of a `completion/complete` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result; servers of this revision always send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The completion values.
    pub completion: Completion,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl CompleteResult {
    /// A complete result with the given values (at most 100 are allowed) and no total.
    pub fn new(values: Vec<String>) -> Self {
        CompleteResult {
            result_type: Some(ResultType::Complete),
            completion: Completion { values, total: None, has_more: None },
            ..Default::default()
        }
    }
}

/// The `completion` member of a [`CompleteResult`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The completion values (at most 100).
    pub values: Vec<String>,
    /// The total number of options, which may exceed the values sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more options than those sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}
