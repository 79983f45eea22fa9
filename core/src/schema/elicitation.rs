//! `elicitation/create`: asking the user for information through the client, in form mode
//! or URL mode, asked for inside an `InputRequiredResult`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{JsonObject, Meta};
use super::elicitation_schema::{ObjectTag, PrimitiveSchemaDefinition};

const_tag! {
    /// The `"form"` value of `mode`.
    FormModeTag = "form"
}

const_tag! {
    /// The `"url"` value of `mode`.
    UrlModeTag = "url"
}

/// Params of an `elicitation/create` request: form mode or URL mode.
///
/// A `mode` of `"url"` selects URL mode; an absent `mode` means form mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// URL mode: send the user to a URL (for sensitive data).
    Url(ElicitRequestURLParams),
    /// Form mode: a form from a restricted JSON Schema (for non-sensitive data).
    Form(ElicitRequestFormParams),
}

impl ElicitRequestParams {
    /// A form-mode elicitation.
    pub fn form(message: impl Into<String>, requested_schema: ElicitRequestedSchema) -> Self {
        ElicitRequestParams::Form(ElicitRequestFormParams {
            mode: Some(FormModeTag),
            message: message.into(),
            requested_schema,
            extra: Meta::new(),
        })
    }

    /// A URL-mode elicitation.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestParams::Url(ElicitRequestURLParams {
            mode: UrlModeTag,
            message: message.into(),
            url: url.into(),
            extra: Meta::new(),
        })
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Url(p) => &p.message,
            ElicitRequestParams::Form(p) => &p.message,
        }
    }
}

/// Params of a form-mode elicitation, for non-sensitive information.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"`, or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormModeTag>,
    /// What information is requested, shown to the user.
    pub message: String,
    /// The form: a flat object schema of primitive properties.
    pub requested_schema: ElicitRequestedSchema,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// Params of a URL-mode elicitation, for interactions that must not pass through the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitRequestURLParams {
    /// Always `"url"`.
    pub mode: UrlModeTag,
    /// Why the interaction is needed, shown to the user.
    pub message: String,
    /// The URL the user should navigate to.
    pub url: String,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The `requestedSchema` of a form elicitation: a restricted JSON Schema with only
/// top-level primitive properties.
///
/// ```
/// use mcpaxle::schema::{ElicitRequestedSchema, StringSchema};
/// let schema = ElicitRequestedSchema::new()
///     .with_property("name", StringSchema::default().into(), true);
/// assert_eq!(schema.required.as_deref(), Some(&["name".to_owned()][..]));
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitRequestedSchema {
    /// The JSON Schema dialect (`$schema`).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub r#type: ObjectTag,
    /// The fields of the form.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// The names of required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Keywords this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitRequestedSchema {
    /// A form with no fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field, optionally marking it required.
    pub fn with_property(mut self, name: impl Into<String>, schema: PrimitiveSchemaDefinition, required: bool) -> Self {
        let name = name.into();
        if required {
            self.required.get_or_insert_with(Vec::new).push(name.clone());
        }
        self.properties.insert(name, schema);
        self
    }
}

/// The user's action in answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted the form or confirmed the action.
    Accept,
    /// The user explicitly declined.
    Decline,
    /// The user dismissed without an explicit choice.
    Cancel,
}

/// The client's result for `elicitation/create`. Unlike server results it has no
/// `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form data (accepted form mode only): strings, numbers, booleans or
    /// arrays of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl ElicitResult {
    /// The user accepted, with form content (`None` for URL mode).
    pub fn accept(content: Option<JsonObject>) -> Self {
        ElicitResult { action: ElicitAction::Accept, content, extra: Meta::new() }
    }

    /// The user declined.
    pub fn decline() -> Self {
        ElicitResult { action: ElicitAction::Decline, content: None, extra: Meta::new() }
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        ElicitResult { action: ElicitAction::Cancel, content: None, extra: Meta::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mode_selects_the_variant() {
        let p: ElicitRequestParams =
            serde_json::from_value(json!({"mode": "url", "message": "m", "url": "https://x.example/"})).unwrap();
        assert!(matches!(p, ElicitRequestParams::Url(_)));
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "message": "m", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}
        }))
        .unwrap();
        assert!(matches!(p, ElicitRequestParams::Form(_)));
        // A URL-mode request without a URL is neither.
        assert!(serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"})).is_err());
    }
}
