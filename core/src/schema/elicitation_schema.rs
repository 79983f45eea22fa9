//! The restricted JSON Schema of elicitation forms (`PrimitiveSchemaDefinition` and its
//! members): flat string, number, boolean and enum fields.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

const_tag! {
    /// The `"object"` value of `type`.
    ObjectTag = "object"
}

const_tag! {
    /// The `"string"` value of `type`.
    StringTag = "string"
}

const_tag! {
    /// The `"boolean"` value of `type`.
    BooleanTag = "boolean"
}

const_tag! {
    /// The `"array"` value of `type`.
    ArrayTag = "array"
}

/// One field of an elicitation form: a string, number, boolean or enum schema
/// (`StringSchema | NumberSchema | BooleanSchema | EnumSchema`).
///
/// Which member a schema is follows from `type` and the keywords present (`oneOf`,
/// `enumNames`, `enum`, `items.anyOf`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// A free string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of some strings (`enum`).
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    /// One of some titled options (`oneOf` of `const`/`title`).
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    /// Several of some strings (`items.enum`).
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    /// Several of some titled options (`items.anyOf` of `const`/`title`).
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    /// One of some strings with the legacy `enumNames` titles.
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use PrimitiveSchemaDefinition as P;
        use serde::de::Error;
        use serde_json::from_value;
        let v = Value::deserialize(d)?;
        let has = |k: &str| v.get(k).is_some();
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let parsed = match kind.as_str() {
            "string" if has("oneOf") => from_value(v).map(P::TitledSingleSelectEnum),
            "string" if has("enumNames") => from_value(v).map(P::LegacyTitledEnum),
            "string" if has("enum") => from_value(v).map(P::UntitledSingleSelectEnum),
            "string" => from_value(v).map(P::String),
            "number" | "integer" => from_value(v).map(P::Number),
            "boolean" => from_value(v).map(P::Boolean),
            "array" if v.get("items").is_some_and(|i| i.get("anyOf").is_some()) => {
                from_value(v).map(P::TitledMultiSelectEnum)
            }
            "array" => from_value(v).map(P::UntitledMultiSelectEnum),
            other => {
                return Err(D::Error::custom(format!(
                    "a form field's type must be string, number, integer, boolean or array, not {other:?}"
                )));
            }
        };
        parsed.map_err(D::Error::custom)
    }
}

macro_rules! impl_from_schema {
    ($($variant:ident($t:ty)),* $(,)?) => {$(
        impl From<$t> for PrimitiveSchemaDefinition {
            fn from(s: $t) -> Self {
                PrimitiveSchemaDefinition::$variant(s)
            }
        }
    )*};
}

impl_from_schema!(
    String(StringSchema),
    Number(NumberSchema),
    Boolean(BooleanSchema),
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    LegacyTitledEnum(LegacyTitledEnumSchema),
);

/// A string field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The formats a [`StringSchema`] may require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// `"email"`.
    Email,
    /// `"uri"`.
    Uri,
    /// `"date"`.
    Date,
    /// `"date-time"`.
    DateTime,
}

/// The `type` of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `"number"`.
    #[default]
    Number,
    /// `"integer"`.
    Integer,
}

/// A number or integer field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    pub r#type: NumberType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub default: Option<f64>,
}

/// A boolean field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    pub r#type: BooleanTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// A single choice among strings, without display titles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from (`enum`).
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// An option with a value and a display title (`{const, title}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value (`const`).
    #[serde(rename = "const")]
    pub value: String,
    /// The display label.
    pub title: String,
}

/// A single choice among titled options.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options (`oneOf`).
    pub one_of: Vec<EnumOption>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Several choices among strings, without display titles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    pub r#type: ArrayTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values to choose from.
    pub items: UntitledEnumItems,
    /// Default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// The `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// The values to choose from (`enum`).
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
}

/// Several choices among titled options.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    pub r#type: ArrayTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The options to choose from.
    pub items: TitledEnumItems,
    /// Default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// The `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The options (`anyOf`).
    pub any_of: Vec<EnumOption>,
}

/// A single choice among strings titled by the legacy, non-standard `enumNames`; use
/// [`TitledSingleSelectEnumSchema`] instead.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from (`enum`).
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
    /// Display names of the values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_are_chosen_by_keywords() {
        let p = |v: Value| serde_json::from_value::<PrimitiveSchemaDefinition>(v).unwrap();
        assert!(matches!(p(json!({"type": "string"})), PrimitiveSchemaDefinition::String(_)));
        assert!(matches!(p(json!({"type": "integer"})), PrimitiveSchemaDefinition::Number(_)));
        assert!(matches!(
            p(json!({"type": "string", "enum": ["a"]})),
            PrimitiveSchemaDefinition::UntitledSingleSelectEnum(_)
        ));
        assert!(matches!(
            p(json!({"type": "string", "enum": ["a"], "enumNames": ["A"]})),
            PrimitiveSchemaDefinition::LegacyTitledEnum(_)
        ));
        assert!(matches!(
            p(json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}})),
            PrimitiveSchemaDefinition::TitledMultiSelectEnum(_)
        ));
        assert!(serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"})).is_err());
    }
}
