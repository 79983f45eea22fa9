//! Validation of `tools/call` arguments against a tool's `inputSchema`.
//!
//! A schema is compiled once, when the tool is registered or listed, and then validates many
//! calls. Compilation follows the specification's "JSON Schema Usage" rules: no `$schema` means
//! JSON Schema 2020-12; 2019-09, draft-07, draft-06 and draft-04 may be declared; anything else is
//! refused. A `$ref` is only ever resolved inside the schema document: nothing is fetched over the
//! network or read from files, and a reference that would need that makes compilation fail rather
//! than leave the schema silently permissive. Keywords the dialect does not know, such as
//! `x-mcp-header`, are ignored.
//!
//! Schemas may come from a peer, so compilation refuses documents past [`MAX_SCHEMA_BYTES`],
//! [`MAX_SCHEMA_DEPTH`] or [`MAX_SUBSCHEMAS`] before any real work is done.

use std::fmt;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, ReferencingError, ValidationError, Validator};
use serde_json::Value;

/// Largest accepted schema, measured as compact serialized JSON (1 MiB).
pub const MAX_SCHEMA_BYTES: usize = 1 << 20;
/// Deepest accepted nesting of subschemas; the root schema is level 1.
pub const MAX_SCHEMA_DEPTH: usize = 64;
/// Most subschemas (objects or booleans in schema position, the root included) in one schema.
pub const MAX_SUBSCHEMAS: usize = 10_000;
/// Deepest accepted nesting of JSON arrays and objects anywhere in the schema document,
/// including data such as `default` values.
pub const MAX_JSON_NESTING: usize = 256;
/// Most messages [`CompiledSchema::validate`] returns for one instance.
pub const MAX_ERROR_MESSAGES: usize = 10;
/// Longest single message of [`CompiledSchema::validate`], in characters, before it is cut.
const MAX_MESSAGE_CHARS: usize = 200;

/// A JSON Schema dialect this crate validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// JSON Schema 2020-12, the default when `$schema` is absent.
    Draft202012,
    /// JSON Schema 2019-09.
    Draft201909,
    /// JSON Schema draft-07.
    Draft7,
    /// JSON Schema draft-06.
    Draft6,
    /// JSON Schema draft-04.
    Draft4,
}

impl Dialect {
    /// Every supported dialect, newest first.
    pub const ALL: [Dialect; 5] =
        [Dialect::Draft202012, Dialect::Draft201909, Dialect::Draft7, Dialect::Draft6, Dialect::Draft4];

    /// The canonical `$schema` URI of the dialect.
    pub fn uri(self) -> &'static str {
        match self {
            Dialect::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
            Dialect::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
            Dialect::Draft7 => "http://json-schema.org/draft-07/schema#",
            Dialect::Draft6 => "http://json-schema.org/draft-06/schema#",
            Dialect::Draft4 => "http://json-schema.org/draft-04/schema#",
        }
    }

    /// Recognises a `$schema` value: the canonical URIs over `http` or `https`, with or without
    /// an empty fragment (`#`).
    pub fn from_uri(uri: &str) -> Option<Dialect> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let rest = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://"))?;
        match rest {
            "json-schema.org/draft/2020-12/schema" => Some(Dialect::Draft202012),
            "json-schema.org/draft/2019-09/schema" => Some(Dialect::Draft201909),
            "json-schema.org/draft-07/schema" => Some(Dialect::Draft7),
            "json-schema.org/draft-06/schema" => Some(Dialect::Draft6),
            "json-schema.org/draft-04/schema" => Some(Dialect::Draft4),
            _ => None,
        }
    }

    fn draft(self) -> Draft {
        match self {
            Dialect::Draft202012 => Draft::Draft202012,
            Dialect::Draft201909 => Draft::Draft201909,
            Dialect::Draft7 => Draft::Draft7,
            Dialect::Draft6 => Draft::Draft6,
            Dialect::Draft4 => Draft::Draft4,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::Draft202012 => "JSON Schema 2020-12",
            Dialect::Draft201909 => "JSON Schema 2019-09",
            Dialect::Draft7 => "JSON Schema draft-07",
            Dialect::Draft6 => "JSON Schema draft-06",
            Dialect::Draft4 => "JSON Schema draft-04",
        })
    }
}

/// The reason a schema was refused by [`compile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaErrorKind {
    /// The schema is neither a JSON object nor a boolean.
    NotASchema,
    /// `$schema` names a dialect this crate does not validate.
    UnsupportedDialect,
    /// The schema passes one of the size, depth or count limits.
    TooLarge,
    /// The schema breaks its dialect's meta-schema, or a local `$ref` leads nowhere.
    InvalidSchema,
    /// A `$ref` points outside the schema document; it is never fetched.
    ExternalReference,
}

/// A schema that cannot be compiled: a stable kind and a message for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    kind: SchemaErrorKind,
    message: String,
}

impl SchemaError {
    fn new(kind: SchemaErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// Why the schema was refused.
    pub fn kind(&self) -> SchemaErrorKind {
        self.kind
    }

    /// What is wrong and where, in words.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SchemaError {}

/// A tool's `inputSchema`, compiled once by [`compile`] and then used to validate each call's
/// arguments.
/// Cheap to share across threads behind an `Arc`; `Clone` copies the compiled form.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    validator: Validator,
    dialect: Dialect,
    accepts_missing_arguments: bool,
}

/// Compiles `schema` (an object, or the boolean schemas `true`/`false`).
///
/// # Errors
/// A [`SchemaError`] whose kind says whether the value is not a schema, declares an
/// unsupported dialect, passes a limit ([`MAX_SCHEMA_BYTES`], [`MAX_SCHEMA_DEPTH`],
/// [`MAX_SUBSCHEMAS`], [`MAX_JSON_NESTING`]), breaks its meta-schema, or has a `$ref` that
/// cannot be resolved inside the document.
pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    if !(schema.is_object() || schema.is_boolean()) {
        return Err(SchemaError::new(
            SchemaErrorKind::NotASchema,
            format!("input schema must be a JSON object (or true/false), not {}", json_type(schema)),
        ));
    }
    serialized_len(schema)?;
    check_subschemas(schema)?;
    let dialect = dialect_of(schema)?;
    let validator = jsonschema::options()
        .with_draft(dialect.draft())
        .offline()
        .build(schema)
        .map_err(|e| build_error(dialect, &e))?;
    let accepts_missing_arguments = validator.is_valid(&Value::Object(Default::default()));
    Ok(CompiledSchema { validator, dialect, accepts_missing_arguments })
}

impl CompiledSchema {
    /// The dialect the schema was compiled under.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether `instance` conforms, without building any messages.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Validates `instance`. On failure, returns up to [`MAX_ERROR_MESSAGES`] lines of the form
    /// `/days: "x" is not of type "integer"`: the JSON pointer of the offending value (`(root)`
    /// for the instance itself), then what is wrong.
    ///
    /// # Errors
    /// The readable messages, never empty.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<String>> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut messages: Vec<String> =
            self.validator.iter_errors(instance).take(MAX_ERROR_MESSAGES).map(|e| describe(&e)).collect();
        if messages.is_empty() {
            messages.push("(root): the value does not conform to the schema".to_owned());
        }
        Err(messages)
    }

    /// Whether the schema accepts `{}`: a tool whose schema does accepts a `tools/call`
    /// without `arguments`.
    pub fn accepts_missing_arguments(&self) -> bool {
        self.accepts_missing_arguments
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn dialect_of(schema: &Value) -> Result<Dialect, SchemaError> {
    let supported = || Dialect::ALL.iter().map(|d| format!("{d} ({})", d.uri())).collect::<Vec<_>>().join(", ");
    match schema.get("$schema") {
        None => Ok(Dialect::Draft202012),
        Some(Value::String(uri)) => Dialect::from_uri(uri).ok_or_else(|| {
            SchemaError::new(
                SchemaErrorKind::UnsupportedDialect,
                format!(
                    "input schema declares the unsupported dialect \"$schema\": {uri:?}; \
                     supported dialects are {}",
                    supported()
                ),
            )
        }),
        Some(other) => Err(SchemaError::new(
            SchemaErrorKind::InvalidSchema,
            format!(
                "input schema's \"$schema\" must be a URI string, not {}; supported dialects \
                 are {}",
                json_type(other),
                supported()
            ),
        )),
    }
}

/// The compact serialized size of `schema`, measured without recursion and without
/// serializing; fails as soon as [`MAX_SCHEMA_BYTES`] or [`MAX_JSON_NESTING`] is passed.
fn serialized_len(schema: &Value) -> Result<usize, SchemaError> {
    let mut bytes = 0usize;
    let mut stack = vec![(schema, 1usize)];
    while let Some((value, nesting)) = stack.pop() {
        if nesting > MAX_JSON_NESTING {
            return Err(SchemaError::new(
                SchemaErrorKind::TooLarge,
                format!(
                    "input schema nests JSON arrays and objects more than {MAX_JSON_NESTING} \
                     levels deep (MAX_JSON_NESTING)"
                ),
            ));
        }
        bytes += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => n.to_string().len(),
            Value::String(s) => quoted_len(s),
            Value::Array(items) => {
                stack.extend(items.iter().map(|item| (item, nesting + 1)));
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                stack.extend(map.values().map(|item| (item, nesting + 1)));
                2 + map.len().saturating_sub(1) + map.keys().map(|k| quoted_len(k) + 1).sum::<usize>()
            }
        };
        if bytes > MAX_SCHEMA_BYTES {
            return Err(SchemaError::new(
                SchemaErrorKind::TooLarge,
                format!(
                    "input schema is larger than {MAX_SCHEMA_BYTES} bytes of serialized JSON \
                     (MAX_SCHEMA_BYTES)"
                ),
            ));
        }
    }
    Ok(bytes)
}

/// Length of `s` as a JSON string literal, escapes included (as serde_json writes it).
fn quoted_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\x08' | '\x0c' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// Keywords whose value is one subschema (in some dialect).
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value is an object whose values are subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] =
    &["$defs", "definitions", "dependentSchemas", "dependencies", "patternProperties", "properties"];

/// Counts subschemas and their nesting through the keywords of every supported dialect.
fn check_subschemas(schema: &Value) -> Result<(), SchemaError> {
    let mut count = 0usize;
    let mut stack = vec![(schema, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(_) => {
                count += 1;
                continue;
            }
            _ => continue,
        };
        count += 1;
        if count > MAX_SUBSCHEMAS {
            return Err(SchemaError::new(
                SchemaErrorKind::TooLarge,
                format!("input schema has more than {MAX_SUBSCHEMAS} subschemas (MAX_SUBSCHEMAS)"),
            ));
        }
        if depth > MAX_SCHEMA_DEPTH {
            return Err(SchemaError::new(
                SchemaErrorKind::TooLarge,
                format!(
                    "input schema nests subschemas more than {MAX_SCHEMA_DEPTH} levels deep \
                     (MAX_SCHEMA_DEPTH)"
                ),
            ));
        }
        for (key, value) in map {
            let key = key.as_str();
            match value {
                Value::Object(children) if SCHEMA_MAP_KEYWORDS.contains(&key) => {
                    stack.extend(children.values().map(|child| (child, depth + 1)));
                }
                Value::Array(children) if SCHEMA_ARRAY_KEYWORDS.contains(&key) => {
                    stack.extend(children.iter().map(|child| (child, depth + 1)));
                }
                Value::Object(_) | Value::Bool(_) if SCHEMA_KEYWORDS.contains(&key) => {
                    stack.push((value, depth + 1));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn build_error(dialect: Dialect, error: &ValidationError<'_>) -> SchemaError {
    if let ValidationErrorKind::Referencing(reference) = error.kind() {
        return match reference {
            ReferencingError::Unretrievable { uri, .. } => SchemaError::new(
                SchemaErrorKind::ExternalReference,
                format!(
                    "input schema refers to {uri}, outside the schema document; external \
                     references are never fetched, so the schema is refused rather than treated \
                     as permissive (bundle the referenced schema under $defs instead)"
                ),
            ),
            other => SchemaError::new(
                SchemaErrorKind::InvalidSchema,
                format!("input schema has a $ref that cannot be resolved: {other}"),
            ),
        };
    }
    let location = error.instance_path().as_str();
    let location = if location.is_empty() { "(root)" } else { location };
    SchemaError::new(
        SchemaErrorKind::InvalidSchema,
        format!("input schema is not a valid {dialect} schema: at {location}: {}", truncate(error.to_string())),
    )
}

fn describe(error: &ValidationError<'_>) -> String {
    let pointer = error.instance_path().as_str();
    let pointer = if pointer.is_empty() { "(root)" } else { pointer };
    format!("{pointer}: {}", truncate(error.to_string()))
}

fn truncate(message: String) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(schema: Value) -> CompiledSchema {
        super::compile(&schema).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refusal(schema: Value) -> SchemaError {
        match super::compile(&schema) {
            Ok(_) => panic!("schema was accepted: {schema}"),
            Err(e) => e,
        }
    }

    #[test]
    fn validates_with_pointer_messages() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "days": {"type": "integer", "minimum": 1}
            },
            "required": ["location"]
        }));
        assert!(schema.validate(&json!({"location": "Paris", "days": 3})).is_ok());
        let errors = schema.validate(&json!({"days": "x"})).unwrap_err();
        assert!(errors.contains(&r#"/days: "x" is not of type "integer""#.to_owned()), "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("(root): ") && e.contains("location")));
        assert!(!schema.accepts_missing_arguments());
        assert_eq!(schema.dialect(), Dialect::Draft202012);
    }

    #[test]
    fn caps_and_truncates_messages() {
        let properties: serde_json::Map<String, Value> =
            (0..30).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect();
        let schema = compiled(json!({"type": "object", "properties": properties}));
        let instance: serde_json::Map<String, Value> = (0..30).map(|i| (format!("p{i}"), json!("text"))).collect();
        let errors = schema.validate(&Value::Object(instance)).unwrap_err();
        assert_eq!(errors.len(), MAX_ERROR_MESSAGES);

        let schema = compiled(json!({"type": "string"}));
        let errors = schema.validate(&json!({"long": "x".repeat(5000)})).unwrap_err();
        assert!(errors[0].chars().count() < MAX_MESSAGE_CHARS + 20, "{}", errors[0]);
        assert!(errors[0].ends_with('…'));
    }

    #[test]
    fn missing_arguments() {
        assert!(compiled(json!({"type": "object"})).accepts_missing_arguments());
        assert!(compiled(json!({"type": "object", "additionalProperties": false})).accepts_missing_arguments());
        assert!(
            compiled(json!({"type": "object", "properties": {"a": {"type": "string"}}})).accepts_missing_arguments()
        );
        assert!(compiled(json!(true)).accepts_missing_arguments());
        assert!(!compiled(json!(false)).accepts_missing_arguments());
        assert!(compiled(json!(false)).validate(&json!({})).is_err());
    }

    #[test]
    fn dialects() {
        for (uri, dialect) in [
            ("https://json-schema.org/draft/2020-12/schema", Dialect::Draft202012),
            ("http://json-schema.org/draft/2020-12/schema#", Dialect::Draft202012),
            ("https://json-schema.org/draft/2019-09/schema#", Dialect::Draft201909),
            ("http://json-schema.org/draft-07/schema#", Dialect::Draft7),
            ("https://json-schema.org/draft-07/schema", Dialect::Draft7),
            ("http://json-schema.org/draft-06/schema#", Dialect::Draft6),
            ("http://json-schema.org/draft-04/schema#", Dialect::Draft4),
        ] {
            let schema = compiled(json!({"$schema": uri, "type": "object"}));
            assert_eq!(schema.dialect(), dialect, "{uri}");
        }
        for uri in
            ["http://json-schema.org/draft-03/schema#", "https://example.com/my-meta", "https://json-schema.org/schema"]
        {
            let error = refusal(json!({"$schema": uri, "type": "object"}));
            assert_eq!(error.kind(), SchemaErrorKind::UnsupportedDialect);
            assert!(error.message().contains(uri), "{error}");
            assert!(error.message().contains("draft-07"), "{error}");
        }
        assert_eq!(refusal(json!({"$schema": 7})).kind(), SchemaErrorKind::InvalidSchema);
    }

    #[test]
    fn dialect_semantics_apply() {
        // draft-04: exclusiveMaximum is a boolean modifier of maximum.
        let schema = compiled(json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "integer", "maximum": 5, "exclusiveMaximum": true
        }));
        assert!(schema.validate(&json!(5)).is_err());
        assert!(schema.validate(&json!(4)).is_ok());
        // 2020-12: prefixItems; in draft-07 an items array does the same.
        let schema = compiled(json!({"prefixItems": [{"type": "string"}], "items": false}));
        assert!(schema.validate(&json!(["a"])).is_ok());
        assert!(schema.validate(&json!(["a", "b"])).is_err());
        let schema = compiled(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "items": [{"type": "string"}], "additionalItems": false
        }));
        assert!(schema.validate(&json!([1])).is_err());
    }

    #[test]
    fn refuses_non_schemas_and_invalid_schemas() {
        for value in [json!(null), json!(1), json!("s"), json!([])] {
            assert_eq!(refusal(value).kind(), SchemaErrorKind::NotASchema);
        }
        let error = refusal(json!({"type": "objekt"}));
        assert_eq!(error.kind(), SchemaErrorKind::InvalidSchema);
        assert!(error.message().contains("/type"), "{error}");
        assert_eq!(refusal(json!({"minimum": "ten"})).kind(), SchemaErrorKind::InvalidSchema);
        assert_eq!(refusal(json!({"properties": {"a": {"required": "a"}}})).kind(), SchemaErrorKind::InvalidSchema);
    }

    #[test]
    fn unknown_keywords_are_ignored() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region", "x-other": {}}},
            "x-vendor": [1, 2]
        }));
        assert!(schema.validate(&json!({"region": "eu"})).is_ok());
        assert!(schema.validate(&json!({"region": 1})).is_err());
    }

    #[test]
    fn local_references_resolve() {
        let schema = compiled(json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/positive"},
                "b": {"$ref": "#named"},
                "c": {"$ref": "#/definitions/legacy"},
                "tree": {"$ref": "#/$defs/node"}
            },
            "$defs": {
                "positive": {"type": "integer", "minimum": 1},
                "anchored": {"$anchor": "named", "type": "string"},
                "node": {"type": "object", "properties": {"kids": {
                    "type": "array", "items": {"$ref": "#/$defs/node"}
                }}}
            },
            "definitions": {"legacy": {"type": "boolean"}}
        }));
        assert!(schema.validate(&json!({"a": 1, "b": "x", "c": true})).is_ok());
        assert!(schema.validate(&json!({"a": 0})).is_err());
        assert!(schema.validate(&json!({"b": 1})).is_err());
        assert!(schema.validate(&json!({"c": "no"})).is_err());
        assert!(schema.validate(&json!({"tree": {"kids": [{"kids": []}]}})).is_ok());
        assert!(schema.validate(&json!({"tree": {"kids": [{"kids": 1}]}})).is_err());
    }

    #[test]
    fn id_relative_references_resolve_within_the_document() {
        let schema = compiled(json!({
            "$id": "https://example.com/schemas/root.json",
            "type": "object",
            "properties": {"item": {"$ref": "item.json"}},
            "$defs": {"item": {"$id": "item.json", "type": "string"}}
        }));
        assert!(schema.validate(&json!({"item": "x"})).is_ok());
        assert!(schema.validate(&json!({"item": 1})).is_err());
    }

    #[test]
    fn external_references_are_refused() {
        for reference in [
            "https://example.com/schemas/thing.json",
            "http://127.0.0.1:1/schema.json",
            "file:///etc/passwd",
            "other.json",
        ] {
            let error = refusal(json!({"properties": {"x": {"$ref": reference}}}));
            assert_eq!(error.kind(), SchemaErrorKind::ExternalReference, "{reference}: {error}");
            assert!(error.message().contains("never fetched"), "{error}");
        }
        let error = refusal(json!({"properties": {"x": {"$ref": "#/$defs/missing"}}}));
        assert_eq!(error.kind(), SchemaErrorKind::InvalidSchema, "{error}");
    }

    #[test]
    fn limits() {
        let mut deep = json!({"type": "string"});
        for _ in 0..MAX_SCHEMA_DEPTH {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        let error = refusal(deep);
        assert_eq!(error.kind(), SchemaErrorKind::TooLarge);
        assert!(error.message().contains("MAX_SCHEMA_DEPTH"), "{error}");

        let mut just_fits = json!({"type": "string"});
        for _ in 0..MAX_SCHEMA_DEPTH - 1 {
            just_fits = json!({"type": "object", "properties": {"a": just_fits}});
        }
        compiled(just_fits);

        let many: Vec<Value> = (0..MAX_SUBSCHEMAS).map(|_| json!({})).collect();
        let error = refusal(json!({"anyOf": many}));
        assert!(error.message().contains("MAX_SUBSCHEMAS"), "{error}");

        let big = json!({"description": "x".repeat(MAX_SCHEMA_BYTES)});
        let error = refusal(big);
        assert!(error.message().contains("MAX_SCHEMA_BYTES"), "{error}");

        let mut nested = json!(1);
        for _ in 0..MAX_JSON_NESTING {
            nested = json!([nested]);
        }
        let error = refusal(json!({"default": nested}));
        assert!(error.message().contains("MAX_JSON_NESTING"), "{error}");
    }

    #[test]
    fn measured_size_is_the_serialized_size() {
        let value = json!({
            "a\"b": ["x\n\u{1}\t", 1.5, -3, 18446744073709551615_u64, null, true, false,
                     {"é": "世界\\", "\u{7f}": []}],
            "": {}
        });
        assert_eq!(serialized_len(&value).unwrap(), serde_json::to_vec(&value).unwrap().len());
    }

    #[test]
    fn compiled_schema_is_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CompiledSchema>();
    }
}
