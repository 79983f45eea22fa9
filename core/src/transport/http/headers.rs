//! The request-metadata headers of the Streamable HTTP transport, shared by the server and the
//! client: the standard header names, the Base64 sentinel [value encoding], and the custom
//! `Mcp-Param-{Name}` headers that a tool declares with `x-mcp-header` in its `inputSchema`.
//!
//! A client calls [`header_params`] on each tool definition it receives (an `Err` means the tool
//! must be left out of `tools/list`), then for each call [`header_value_for`] and
//! [`encode_value`]. A server calls [`decode_value`] on each received header and
//! [`header_matches`] against the body, answering `HeaderMismatch` (-32020) on any failure.
//!
//! [value encoding]: https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#value-encoding

use std::collections::HashMap;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::Value;

/// `MCP-Protocol-Version`: the protocol revision of a POST request.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`: mirrors the JSON-RPC `method` of the body.
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name`: mirrors `params.name` (`tools/call`, `prompts/get`) or `params.uri`
/// (`resources/read`).
pub const MCP_NAME: &str = "mcp-name";
/// Prefix of the custom headers that mirror tool arguments: `Mcp-Param-{Name}`.
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// `Mcp-Session-Id`: the session of a legacy (2025-11-25 era) Streamable HTTP connection.
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// The JSON Schema extension keyword that designates a tool parameter to mirror into a header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";
/// The largest integer magnitude an IEEE 754 double holds exactly: 2^53 − 1.
const MAX_SAFE_INTEGER: i128 = (1 << 53) - 1;

/// Decoder for the sentinel payload: standard alphabet with canonical padding (SEP-2243's
/// test table rejects a payload whose padding is missing).
const STRICT_STANDARD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// Why a header value or an `x-mcp-header` annotation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// A received header value holds a character that RFC 9110 does not allow in a field
    /// value (a control character other than tab, or a byte outside visible ASCII).
    InvalidCharacters {
        /// What was wrong, for a log line or an error message.
        message: String,
    },
    /// A value in the `=?base64?…?=` sentinel form whose payload is not valid Base64, or
    /// does not decode to UTF-8.
    InvalidEncoding {
        /// What was wrong, for a log line or an error message.
        message: String,
    },
    /// An `x-mcp-header` annotation breaks one of the specification's constraints, which
    /// makes the whole tool definition invalid.
    InvalidAnnotation {
        /// Where the annotation is, in words: `property /config/region` (the argument's JSON
        /// pointer) when it sits on a property reachable through `properties`, otherwise
        /// `schema location /properties/tags/items` or `the schema root`.
        path: String,
        /// Which constraint it breaks.
        reason: String,
    },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidCharacters { message } | Self::InvalidEncoding { message } => f.write_str(message),
            Self::InvalidAnnotation { path, reason } => {
                write!(f, "invalid x-mcp-header at {path}: {reason}")
            }
        }
    }
}

impl std::error::Error for HeaderError {}

/// Encodes a header value per the Value Encoding rules: plain when every character is visible
/// ASCII or an inner space or tab and the value does not look like the sentinel form,
/// otherwise `=?base64?{Base64 of the UTF-8 bytes}?=`. The empty string stays empty.
///
/// For example `us-west1` stays `us-west1`, while `Hello, 世界` becomes
/// `=?base64?SGVsbG8sIOS4lueVjA==?=`.
pub fn encode_value(value: &str) -> String {
    if is_plain_safe(value) {
        value.to_owned()
    } else {
        format!("{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}", STANDARD.encode(value))
    }
}

fn is_plain_safe(value: &str) -> bool {
    let bytes = value.as_bytes();
    let edge_ok = |b: Option<&u8>| !matches!(b, Some(b' ' | b'\t'));
    bytes.iter().all(|&b| matches!(b, 0x21..=0x7E | b' ' | b'\t'))
        && edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && !(value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX))
}

/// Decodes a received `Mcp-Name` or `Mcp-Param-{Name}` value: trims surrounding spaces and
/// tabs, refuses characters RFC 9110 forbids, and decodes the `=?base64?…?=` form (markers are
/// case-sensitive; the Base64 payload must carry its canonical padding). Any other value is returned as is.
///
/// # Errors
/// [`HeaderError::InvalidCharacters`] for a control character other than tab or a non-ASCII
/// character; [`HeaderError::InvalidEncoding`] for a sentinel whose payload is not Base64 or
/// not UTF-8.
pub fn decode_value(header: &str) -> Result<String, HeaderError> {
    let value = header.trim_matches([' ', '\t']);
    if let Some(bad) = value.chars().find(|&c| !matches!(c, '\x21'..='\x7E' | ' ' | '\t')) {
        return Err(HeaderError::InvalidCharacters {
            message: format!(
                "header value contains the character {:?} (U+{:04X}); only visible ASCII, space \
                 and tab are allowed, other text must use the =?base64?…?= form",
                bad, bad as u32
            ),
        });
    }
    let Some(payload) = value.strip_prefix(SENTINEL_PREFIX).and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX)) else {
        return Ok(value.to_owned());
    };
    let bytes = STRICT_STANDARD.decode(payload).map_err(|e| HeaderError::InvalidEncoding {
        message: format!("header value in =?base64?…?= form is not valid Base64: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|_| HeaderError::InvalidEncoding {
        message: "header value in =?base64?…?= form does not decode to UTF-8 text".to_owned(),
    })
}

/// The primitive JSON Schema type of a property mirrored into a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// `"type": "string"`: the value as is.
    String,
    /// `"type": "integer"`: the decimal form, within ±(2^53 − 1).
    Integer,
    /// `"type": "boolean"`: `true` or `false`.
    Boolean,
}

/// One valid `x-mcp-header` annotation of a tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderParam {
    /// The `x-mcp-header` value as declared, e.g. `Region` for `Mcp-Param-Region`.
    pub header_name: String,
    /// The chain of `properties` keys from the schema root to the annotated property, which is
    /// also the path of the value inside the call's `arguments`.
    pub path: Vec<String>,
    /// The property's declared type.
    pub kind: ParamKind,
}

impl HeaderParam {
    /// The full HTTP header name in lowercase, e.g. `mcp-param-region`.
    pub fn http_header_name(&self) -> String {
        format!("{MCP_PARAM_PREFIX}{}", self.header_name.to_ascii_lowercase())
    }

    /// The argument at [`path`](Self::path) in `arguments`, or `None` when it is absent or
    /// `null` (in which case no header is sent and none is expected).
    pub fn argument<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        let value = self.path.iter().try_fold(arguments, |value, key| value.as_object()?.get(key))?;
        (!value.is_null()).then_some(value)
    }
}

/// Collects and checks every `x-mcp-header` annotation of a tool's `inputSchema`, depth first
/// in the iteration order of the schema's JSON objects.
///
/// # Errors
/// [`HeaderError::InvalidAnnotation`] naming the first offending property (or schema location)
/// and the reason: an empty name, a character outside the RFC 9110 token set, a name that
/// repeats another case-insensitively, a property whose `type` is not exactly one of `string`,
/// `integer` or `boolean`, or an annotation that is not reached from the root through
/// `properties` keys alone (inside `items`, `anyOf`, `$defs`, `additionalProperties`, …, or on
/// the root itself). A client must then leave the tool out of `tools/list`.
pub fn header_params(input_schema: &Value) -> Result<Vec<HeaderParam>, HeaderError> {
    let mut found = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    // (schema, location inside the schema, property path when statically reachable)
    let mut stack: Vec<(&Value, String, Option<Vec<String>>)> = vec![(input_schema, String::new(), Some(Vec::new()))];
    while let Some((node, location, props)) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(annotation) = map.get(X_MCP_HEADER) {
                    let param = match &props {
                        Some(path) if !path.is_empty() => check_annotation(annotation, map, path)?,
                        _ => {
                            return Err(HeaderError::InvalidAnnotation {
                                path: display_location(&location),
                                reason: "the annotation is not on a property reachable from the \
                                         schema root through `properties` keys alone"
                                    .to_owned(),
                            });
                        }
                    };
                    let key = param.header_name.to_ascii_lowercase();
                    let here = format!("property {}", pointer(&param.path));
                    if let Some(first) = seen.insert(key, here.clone()) {
                        return Err(HeaderError::InvalidAnnotation {
                            path: here,
                            reason: format!(
                                "header name {:?} repeats the one at {first} (names are compared \
                                 case-insensitively)",
                                param.header_name
                            ),
                        });
                    }
                    found.push(param);
                }
                // Pushed in reverse so that the stack pops them in document order.
                for (key, child) in map.iter().rev() {
                    if key == X_MCP_HEADER || is_data_keyword(key) {
                        continue;
                    }
                    let child_location = format!("{location}/{}", escape_pointer(key));
                    if let ("properties", Value::Object(properties)) = (key.as_str(), child) {
                        for (name, sub) in properties.iter().rev() {
                            let sub_props = props.as_ref().map(|path| {
                                let mut path = path.clone();
                                path.push(name.clone());
                                path
                            });
                            let sub_location = format!("{child_location}/{}", escape_pointer(name));
                            stack.push((sub, sub_location, sub_props));
                        }
                        continue;
                    }
                    stack.push((child, child_location, None));
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate().rev() {
                    stack.push((item, format!("{location}/{index}"), None));
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

/// Keywords whose values are instance data, not schemas: an `x-mcp-header` key inside them is
/// not an annotation.
fn is_data_keyword(key: &str) -> bool {
    matches!(key, "const" | "enum" | "default" | "examples")
}

fn check_annotation(
    annotation: &Value,
    property: &serde_json::Map<String, Value>,
    path: &[String],
) -> Result<HeaderParam, HeaderError> {
    let invalid =
        |reason: String| HeaderError::InvalidAnnotation { path: format!("property {}", pointer(path)), reason };
    let Value::String(name) = annotation else {
        return Err(invalid(format!("the value must be a string, not {annotation}")));
    };
    if name.is_empty() {
        return Err(invalid("the header name is empty".to_owned()));
    }
    if let Some(bad) = name.chars().find(|&c| !is_tchar(c)) {
        let what = if bad.is_control() { "a control character" } else { "a character outside the RFC 9110 token set" };
        return Err(invalid(format!("header name {name:?} contains {what} ({bad:?})")));
    }
    let kind = match property.get("type") {
        Some(Value::String(t)) => primitive_kind(t),
        Some(Value::Array(types)) if types.len() == 1 => types[0].as_str().and_then(primitive_kind),
        _ => None,
    };
    let Some(kind) = kind else {
        let declared = property.get("type").map_or_else(|| "no type".to_owned(), |t| format!("type {t}"));
        return Err(invalid(format!(
            "the property has {declared}; only a single type of \"string\", \"integer\" or \
             \"boolean\" may be mirrored into a header"
        )));
    };
    Ok(HeaderParam { header_name: name.clone(), path: path.to_vec(), kind })
}

fn primitive_kind(name: &str) -> Option<ParamKind> {
    match name {
        "string" => Some(ParamKind::String),
        "integer" => Some(ParamKind::Integer),
        "boolean" => Some(ParamKind::Boolean),
        _ => None,
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|p| format!("/{}", escape_pointer(p))).collect()
}

fn display_location(location: &str) -> String {
    if location.is_empty() { "the schema root".to_owned() } else { format!("schema location {location}") }
}

/// The plain text (before [`encode_value`]) that a client sends for `param`, read from the
/// call's `arguments`: a string as is, an integer in decimal, a boolean as `true`/`false`.
///
/// `None` means no header: the value is absent or `null`, its JSON type does not fit
/// [`HeaderParam::kind`], or it is an integer outside ±(2^53 − 1), which the specification
/// forbids mirroring (such a call then fails the server's header check).
pub fn header_value_for(param: &HeaderParam, arguments: &Value) -> Option<String> {
    let value = param.argument(arguments)?;
    match param.kind {
        ParamKind::String => value.as_str().map(str::to_owned),
        ParamKind::Boolean => value.as_bool().map(|b| b.to_string()),
        ParamKind::Integer => json_integer(value).filter(|n| n.abs() <= MAX_SAFE_INTEGER).map(|n| n.to_string()),
    }
}

/// Server side: whether a received header, already passed through [`decode_value`], agrees with
/// the body's value at the parameter's path. Strings compare exactly; integers compare
/// numerically, so `42`, `42.0` and `4.2e1` are equal; booleans are `true`/`false`.
/// A `null` or mistyped body value never matches.
pub fn header_matches(param: &HeaderParam, decoded_header: &str, body_value: &Value) -> bool {
    match param.kind {
        ParamKind::String => body_value.as_str() == Some(decoded_header),
        ParamKind::Boolean => body_value.as_bool().is_some_and(|b| decoded_header == if b { "true" } else { "false" }),
        ParamKind::Integer => match (parse_integer(decoded_header), json_integer(body_value)) {
            (Some(header), Some(body)) => header == body,
            _ => false,
        },
    }
}

/// An integer-valued JSON number (`42` or `42.0`) as `i128`.
fn json_integer(value: &Value) -> Option<i128> {
    let number = value.as_number()?;
    if let Some(n) = number.as_i64() {
        return Some(n.into());
    }
    if let Some(n) = number.as_u64() {
        return Some(n.into());
    }
    float_integer(number.as_f64()?)
}

/// Parses a header's decimal integer text, accepting integral float forms (`42.0`, `4.2e1`).
fn parse_integer(text: &str) -> Option<i128> {
    if let Ok(n) = text.parse::<i128>() {
        return Some(n);
    }
    if !text.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) {
        return None; // refuses "inf", "NaN" and the like
    }
    float_integer(text.parse::<f64>().ok()?)
}

/// An integral float within the exactly representable range, as `i128`.
fn float_integer(f: f64) -> Option<i128> {
    (f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64).then_some(f as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_the_specification_table() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
    }

    #[test]
    fn encodes_edge_cases() {
        assert_eq!(encode_value(""), "");
        assert_eq!(encode_value("a b\tc"), "a b\tc");
        assert_eq!(encode_value("tab\t"), "=?base64?dGFiCQ==?=");
        assert_eq!(encode_value("bell\x07"), "=?base64?YmVsbAc=?=");
        assert_eq!(encode_value("del\x7f"), "=?base64?ZGVsfw==?=");
        // Only the exact lowercase sentinel shape is reserved.
        assert_eq!(encode_value("=?BASE64?x?="), "=?BASE64?x?=");
        assert_eq!(encode_value("=?base64?x"), "=?base64?x");
    }

    #[test]
    fn decodes_what_it_encodes() {
        for original in
            ["us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "", "tab\t", "a b"]
        {
            assert_eq!(decode_value(&encode_value(original)).unwrap(), original);
        }
    }

    #[test]
    fn decode_trims_and_requires_canonical_padding() {
        assert_eq!(decode_value("  us-west1\t").unwrap(), "us-west1");
        assert_eq!(decode_value(" =?base64?SGVsbG8sIOS4lueVjA==?= ").unwrap(), "Hello, 世界");
        assert!(decode_value("=?base64?SGVsbG8sIOS4lueVjA?=").is_err());
        assert!(decode_value("=?base64?SGVsbG8?=").is_err());
        assert!(decode_value("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(decode_value("=?base64??=").unwrap(), "");
    }

    #[test]
    fn decode_markers_are_case_sensitive() {
        assert_eq!(decode_value("=?BASE64?SGk=?=").unwrap(), "=?BASE64?SGk=?=");
        assert_eq!(decode_value("=?Base64?SGk=?=").unwrap(), "=?Base64?SGk=?=");
    }

    #[test]
    fn decode_refuses_bad_values() {
        assert!(matches!(decode_value("a\nb"), Err(HeaderError::InvalidCharacters { .. })));
        assert!(matches!(decode_value("a\rb"), Err(HeaderError::InvalidCharacters { .. })));
        assert!(matches!(decode_value("a\0b"), Err(HeaderError::InvalidCharacters { .. })));
        assert!(matches!(decode_value("世界"), Err(HeaderError::InvalidCharacters { .. })));
        assert!(matches!(decode_value("=?base64?not base64!?="), Err(HeaderError::InvalidEncoding { .. })));
        // 0xFF 0xFE is valid Base64 but not UTF-8.
        assert!(matches!(decode_value("=?base64?//4=?="), Err(HeaderError::InvalidEncoding { .. })));
        assert_eq!(decode_value("a\tb").unwrap(), "a\tb");
    }

    fn spanner_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"},
                "config": {
                    "type": "object",
                    "properties": {
                        "shard": {"type": "integer", "x-mcp-header": "Shard"},
                        "dry": {"type": ["boolean"], "x-mcp-header": "Dry-Run"}
                    }
                }
            },
            "required": ["region", "query"]
        })
    }

    /// The params of [`spanner_schema`] ordered Region, Shard, Dry-Run, whatever the map order.
    fn spanner_params() -> Vec<HeaderParam> {
        let mut params = header_params(&spanner_schema()).unwrap();
        params.sort_by_key(|p| ["Region", "Shard", "Dry-Run"].iter().position(|n| *n == p.header_name));
        params
    }

    #[test]
    fn collects_statically_reachable_annotations() {
        let params = spanner_params();
        assert_eq!(
            params,
            vec![
                HeaderParam { header_name: "Region".into(), path: vec!["region".into()], kind: ParamKind::String },
                HeaderParam {
                    header_name: "Shard".into(),
                    path: vec!["config".into(), "shard".into()],
                    kind: ParamKind::Integer
                },
                HeaderParam {
                    header_name: "Dry-Run".into(),
                    path: vec!["config".into(), "dry".into()],
                    kind: ParamKind::Boolean
                },
            ]
        );
        assert_eq!(params[0].http_header_name(), "mcp-param-region");
        assert_eq!(header_params(&json!({"type": "object"})).unwrap(), vec![]);
        assert_eq!(header_params(&json!(true)).unwrap(), vec![]);
    }

    #[test]
    fn ignores_annotation_lookalikes_in_data_and_property_names() {
        let schema = json!({
            "type": "object",
            "properties": {
                "x-mcp-header": {"type": "string"},
                "properties": {"type": "string", "x-mcp-header": "Props"},
                "mode": {"type": "object", "default": {"x-mcp-header": "NotOne"},
                         "examples": [{"x-mcp-header": "Nope"}]}
            }
        });
        let params = header_params(&schema).unwrap();
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].path, vec!["properties".to_owned()]);
    }

    fn rejection(schema: Value) -> (String, String) {
        match header_params(&schema) {
            Err(HeaderError::InvalidAnnotation { path, reason }) => (path, reason),
            other => panic!("expected an invalid annotation, got {other:?}"),
        }
    }

    fn with_property(property: Value) -> Value {
        json!({"type": "object", "properties": {"p": property}})
    }

    #[test]
    fn rejects_bad_names() {
        for name in [json!(""), json!("a b"), json!("a:b"), json!("a\r\nb"), json!("é"), json!(5)] {
            let (path, _) = rejection(with_property(json!({"type": "string", "x-mcp-header": name})));
            assert_eq!(path, "property /p");
        }
        let (_, reason) = rejection(with_property(json!({"type": "string", "x-mcp-header": ""})));
        assert!(reason.contains("empty"), "{reason}");
        let (_, reason) = rejection(with_property(json!({"type": "string", "x-mcp-header": "a\nb"})));
        assert!(reason.contains("control character"), "{reason}");
    }

    #[test]
    fn rejects_non_primitive_types() {
        for ty in [
            json!("object"),
            json!("array"),
            json!("null"),
            json!("number"),
            json!(["string", "null"]),
            json!(["string", "integer"]),
        ] {
            let (path, reason) = rejection(with_property(json!({"type": ty, "x-mcp-header": "P"})));
            assert_eq!(path, "property /p");
            assert!(reason.contains("only a single type"), "{reason}");
        }
        let (_, reason) = rejection(with_property(json!({"x-mcp-header": "P"})));
        assert!(reason.contains("no type"), "{reason}");
    }

    #[test]
    fn rejects_case_insensitive_duplicates() {
        let (path, reason) = rejection(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "object", "properties": {
                    "c": {"type": "string", "x-mcp-header": "REGION"}
                }}
            }
        }));
        assert_eq!(path, "property /b/c");
        assert!(reason.contains("property /a"), "{reason}");
    }

    #[test]
    fn rejects_annotations_off_the_properties_chain() {
        let annotated = json!({"type": "string", "x-mcp-header": "X"});
        let cases = [
            ("items", json!({"type": "array", "items": annotated})),
            ("prefixItems", json!({"prefixItems": [annotated]})),
            ("anyOf", json!({"anyOf": [annotated]})),
            ("oneOf", json!({"oneOf": [{"type": "object"}, annotated]})),
            ("allOf", json!({"allOf": [annotated]})),
            ("not", json!({"not": annotated})),
            ("then", json!({"if": {"type": "object"}, "then": annotated})),
            ("$defs", json!({"$defs": {"d": annotated}})),
            ("additionalProperties", json!({"additionalProperties": annotated})),
            ("patternProperties", json!({"patternProperties": {"^x": annotated}})),
        ];
        for (keyword, wrapper) in cases {
            let schema = with_property(wrapper);
            let (path, reason) = rejection(schema);
            assert!(path.contains(keyword), "{keyword}: {path}");
            assert!(reason.contains("properties"), "{reason}");
        }
        // Properties of a schema under `items` are not reachable either.
        let (path, _) = rejection(json!({
            "type": "object",
            "properties": {"list": {"type": "array", "items": {
                "type": "object", "properties": {"id": annotated}
            }}}
        }));
        assert_eq!(path, "schema location /properties/list/items/properties/id");
        let (path, _) = rejection(json!({"type": "string", "x-mcp-header": "Root"}));
        assert_eq!(path, "the schema root");
    }

    #[test]
    fn values_for_headers() {
        let params = spanner_params();
        let args = json!({"region": "us-west1", "config": {"shard": 42, "dry": false}});
        assert_eq!(header_value_for(&params[0], &args).as_deref(), Some("us-west1"));
        assert_eq!(header_value_for(&params[1], &args).as_deref(), Some("42"));
        assert_eq!(header_value_for(&params[2], &args).as_deref(), Some("false"));
        let float = json!({"config": {"shard": -7.0}});
        assert_eq!(header_value_for(&params[1], &float).as_deref(), Some("-7"));
        for absent in [
            json!({}),
            json!({"region": null}),
            json!({"config": null}),
            json!({"config": {"shard": 9007199254740992_u64}}),
            json!({"config": {"shard": 1.5}}),
            json!({"config": {"shard": "42"}}),
            json!(null),
        ] {
            assert_eq!(header_value_for(&params[1], &absent), None, "{absent}");
        }
        let max = json!({"config": {"shard": 9007199254740991_u64}});
        assert_eq!(header_value_for(&params[1], &max).as_deref(), Some("9007199254740991"));
    }

    #[test]
    fn server_side_comparison() {
        let params = spanner_params();
        let (region, shard, dry) = (&params[0], &params[1], &params[2]);
        assert!(header_matches(region, "us-west1", &json!("us-west1")));
        assert!(!header_matches(region, "US-WEST1", &json!("us-west1")));
        assert!(!header_matches(region, "1", &json!(1)));
        assert!(header_matches(shard, "42", &json!(42)));
        assert!(header_matches(shard, "42.0", &json!(42)));
        assert!(header_matches(shard, "42", &json!(42.0)));
        assert!(header_matches(shard, "4.2e1", &json!(42)));
        assert!(header_matches(shard, "-7", &json!(-7)));
        assert!(!header_matches(shard, "43", &json!(42)));
        assert!(!header_matches(shard, "42.5", &json!(42.5)));
        assert!(!header_matches(shard, "inf", &json!(42)));
        assert!(!header_matches(shard, "", &json!(42)));
        assert!(!header_matches(shard, "42", &json!("42")));
        assert!(header_matches(dry, "true", &json!(true)));
        assert!(header_matches(dry, "false", &json!(false)));
        assert!(!header_matches(dry, "True", &json!(true)));
        assert!(!header_matches(dry, "1", &json!(true)));
        assert!(!header_matches(region, "null", &Value::Null));
    }

    #[test]
    fn round_trip_through_encoding() {
        let params = spanner_params();
        let args = json!({"region": " 世界 "});
        let sent = encode_value(&header_value_for(&params[0], &args).unwrap());
        let received = decode_value(&sent).unwrap();
        assert!(header_matches(&params[0], &received, params[0].argument(&args).unwrap()));
    }
}
