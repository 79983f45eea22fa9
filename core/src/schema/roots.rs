//! `roots/list` (deprecated as of 2026-07-28): the client's root directories and files,
//! asked for inside an `InputRequiredResult`.

use serde::{Deserialize, Serialize};

use super::common::Meta;

/// Params of a `roots/list` request (which may also omit `params` altogether).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsRequestParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The client's result for `roots/list`. Unlike server results it has no `resultType`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// A root directory or file the server can operate on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// The URI of the root (a `file://` URI for now).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root at `uri` with an optional name.
    pub fn new(uri: impl Into<String>, name: Option<String>) -> Self {
        Root { uri: uri.into(), name, meta: None }
    }
}
