//! JSON-RPC 2.0 envelopes as MCP uses them: requests, notifications, responses,
//! error objects and the error codes of the specification.
//!
//! Parsing is deliberately two-step: [`parse_message`] classifies one frame (an HTTP body or
//! one stdio line) into an [`Incoming`] message or a [`Rejected`] frame that already carries the
//! right error response (-32700 for bad JSON, -32600 for a frame that is not a JSON-RPC message),
//! so every transport reports bad input the same way.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The JSON-RPC version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// Invalid JSON was received.
pub const PARSE_ERROR: i32 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i32 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i32 = -32603;
/// An HTTP header does not match the request body (`HeaderMismatchError`).
pub const HEADER_MISMATCH: i32 = -32020;
/// The request needs a client capability the client did not declare
/// (`MissingRequiredClientCapabilityError`).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
/// The requested protocol version is not supported (`UnsupportedProtocolVersionError`).
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// A request id: a string or a number.
///
/// JSON-RPC ids are any JSON number, not only those that fit `i64`: an integer id outside that
/// range (`18446744073709551616`, `-9223372036854775809`) is kept as the decimal text it was
/// sent with, so that the response echoes it unchanged. Ids with a fraction or an exponent
/// (`1.5`, `1e3`) are not ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A numeric id within the range of `i64`.
    Number(i64),
    /// A string id.
    String(String),
    /// An integer id outside the range of `i64`, as its exact decimal text (an optional `-`
    /// and digits, as received). It serializes back as that number.
    ///
    /// Inside another JSON value (a `progressToken` echoed in a notification, the
    /// `subscriptionId` of a listen stream's notifications), an id beyond the `u64` range
    /// becomes the nearest double, as `serde_json::Value` holds no larger integers; the
    /// response's own `id` is always exact.
    BigNumber(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::BigNumber(t) => f.write_str(t),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// Whether `text` is a JSON integer: an optional `-`, then `0` or digits without a leading zero.
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'))
}

impl RequestId {
    /// Parses an id from its JSON value: strings and integral numbers are ids, anything
    /// else is not. (A `Value` cannot hold an integer beyond the `u64` range exactly; such an
    /// id is read from the message's text by [`parse_message`].)
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Some(RequestId::Number(i)),
                (None, Some(u)) => Some(RequestId::BigNumber(u.to_string())),
                (None, None) => None,
            },
            _ => None,
        }
    }

    /// The id as a JSON value (see [`RequestId::BigNumber`] for ids beyond `u64`).
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
            RequestId::BigNumber(t) => match t.parse::<u64>() {
                Ok(u) => Value::from(u),
                Err(_) => serde_json::from_str(t).unwrap_or_else(|_| Value::from(t.as_str())),
            },
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(t) => s.serialize_str(t),
            RequestId::BigNumber(t) => {
                if let Ok(u) = t.parse::<u64>() {
                    return s.serialize_u64(u);
                }
                if !is_integer_text(t) {
                    return Err(serde::ser::Error::custom(format!("request id {t:?} is not an integer")));
                }
                // Written verbatim by serde_json's serializer: the digits as they were received.
                let raw = serde_json::value::RawValue::from_string(t.clone()).map_err(serde::ser::Error::custom)?;
                raw.serialize(s)
            }
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl serde::de::Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
                Ok(i64::try_from(n).map_or_else(|_| RequestId::BigNumber(n.to_string()), RequestId::Number))
            }
            fn visit_i128<E: serde::de::Error>(self, n: i128) -> Result<RequestId, E> {
                Ok(i64::try_from(n).map_or_else(|_| RequestId::BigNumber(n.to_string()), RequestId::Number))
            }
            fn visit_u128<E: serde::de::Error>(self, n: u128) -> Result<RequestId, E> {
                Ok(i64::try_from(n).map_or_else(|_| RequestId::BigNumber(n.to_string()), RequestId::Number))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<RequestId, E> {
                Ok(RequestId::String(s))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

/// The error object of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see the constants of this module).
    pub code: i32,
    /// A short, single-sentence description a person can act on.
    pub message: String,
    /// Structured details, defined per code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error object with a code and message and no data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// Adds `data` to the error.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// A request: it has an id and expects a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters; MCP requests carry an object with `_meta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A notification: no id, no response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The method name, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Notification {
    /// A notification with the given method and params.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification { jsonrpc: JsonRpcVersion, method: method.into(), params }
    }
}

/// A response: a result or an error, echoing the request id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered; `None` only for errors about a frame whose id could
    /// not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The outcome.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The outcome carried by a [`Response`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// A successful result.
    #[serde(rename = "result")]
    Result(Value),
    /// An error.
    #[serde(rename = "error")]
    Error(ErrorObject),
}

impl Response {
    /// A successful response.
    pub fn result(id: RequestId, result: Value) -> Self {
        Response { jsonrpc: JsonRpcVersion, id: Some(id), outcome: Outcome::Result(result) }
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response { jsonrpc: JsonRpcVersion, id, outcome: Outcome::Error(error) }
    }

    /// The error, if this is an error response.
    pub fn as_error(&self) -> Option<&ErrorObject> {
        match &self.outcome {
            Outcome::Error(e) => Some(e),
            Outcome::Result(_) => None,
        }
    }
}

/// Any JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => r.serialize(s),
            Message::Notification(n) => n.serialize(s),
            Message::Response(r) => r.serialize(s),
        }
    }
}

impl Message {
    /// Serializes the message to compact JSON bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serializing these types cannot fail: every map key is a string.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The `"jsonrpc": "2.0"` member: serializes as `"2.0"`, accepts only `"2.0"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(JSONRPC_VERSION)
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if s == JSONRPC_VERSION {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom(format!("jsonrpc must be \"2.0\", got {s:?}")))
        }
    }
}

/// A frame that could not be accepted as a message, with the error response it earns.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The error response to send back (its id is the frame's id when it could be read).
    pub response: Response,
}

/// Parses one frame into a message, or the error response for it.
///
/// * Not JSON → `-32700` Parse error, no id.
/// * JSON but not a request, notification or response (an array, a missing or non-string
///   `method`, a bad `jsonrpc`, an id that is neither string nor integer, params that are not
///   an object or array) → `-32600` Invalid Request, echoing the id when it is readable.
pub fn parse_message(bytes: &[u8]) -> Result<Message, Rejected> {
    // Straight into the members that tell what the message is (no map of the whole frame).
    // Anything else (not an object: a struct would also read an array, item by item; a repeated
    // member; not JSON) takes the general path, which also names what is wrong.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let direct = if object { serde_json::from_slice::<Frame>(bytes).ok() } else { None };
    let frame = match direct {
        Some(f) => f,
        None => match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => return classify_with(v, || raw_id_text(bytes)),
            Err(e) => {
                return Err(Rejected {
                    response: Response::error(
                        None,
                        ErrorObject::new(PARSE_ERROR, format!("Parse error: the message is not valid JSON ({e})")),
                    ),
                });
            }
        },
    };
    classify_frame(frame, || raw_id_text(bytes))
}

/// The members of a message that say what it is, each `Some` when present (even as null).
#[derive(Deserialize)]
struct Frame {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The text of a frame's `id` member when it is an integer.
fn raw_id_text(bytes: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Box<serde_json::value::RawValue>,
    }
    let frame: IdOnly = serde_json::from_slice(bytes).ok()?;
    let text = frame.id.get();
    is_integer_text(text).then(|| text.to_owned())
}

/// Classifies an already parsed JSON value as a message; see [`parse_message`]. (An integer id
/// beyond the `u64` range is not exact in a `Value`: such a frame is refused here, while
/// [`parse_message`] reads the id from the text.)
pub fn classify(value: Value) -> Result<Message, Rejected> {
    classify_with(value, || None)
}

/// `id_text`: the text of an integer id that a `Value` does not hold exactly, if it can be read.
fn classify_with(value: Value, id_text: impl FnOnce() -> Option<String>) -> Result<Message, Rejected> {
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(invalid(
                None,
                "Invalid Request: JSON-RPC batches are not supported; send one message per request",
            ));
        }
        _ => return Err(invalid(None, "Invalid Request: a JSON-RPC message must be a JSON object")),
    };
    let frame = Frame {
        jsonrpc: obj.remove("jsonrpc"),
        id: obj.remove("id"),
        method: obj.remove("method"),
        params: obj.remove("params"),
        result: obj.remove("result"),
        error: obj.remove("error"),
    };
    classify_frame(frame, id_text)
}

fn classify_frame(frame: Frame, id_text: impl FnOnce() -> Option<String>) -> Result<Message, Rejected> {
    let Frame { jsonrpc, id: raw_id, method, params, result, error } = frame;
    // A number `Value` cannot hold exactly (an integer beyond u64 or below i64): read the
    // id's own text, so that the response can echo it. Only such rare frames pay a second pass.
    let id = match &raw_id {
        None | Some(Value::Null) => None,
        Some(v) => {
            let big = || match v {
                Value::Number(n) if n.is_f64() => id_text().map(RequestId::BigNumber),
                _ => None,
            };
            match RequestId::from_value(v).or_else(big) {
                Some(id) => Some(id),
                None => return Err(invalid(None, "Invalid Request: \"id\" must be a string or an integer")),
            }
        }
    };
    match &jsonrpc {
        Some(Value::String(s)) if s == JSONRPC_VERSION => {}
        Some(_) => return Err(invalid(id, "Invalid Request: \"jsonrpc\" must be \"2.0\"")),
        None => return Err(invalid(id, "Invalid Request: the \"jsonrpc\": \"2.0\" member is missing")),
    }
    if let Some(p) = &params {
        if !(p.is_object() || p.is_array()) {
            return Err(invalid(id, "Invalid Request: \"params\" must be an object"));
        }
    }
    match method {
        Some(Value::String(method)) => match id {
            Some(id) => Ok(Message::Request(Request { jsonrpc: JsonRpcVersion, id, method, params })),
            None if raw_id.is_some() => Err(invalid(None, "Invalid Request: \"id\" must not be null")),
            None => Ok(Message::Notification(Notification { jsonrpc: JsonRpcVersion, method, params })),
        },
        Some(_) => Err(invalid(id, "Invalid Request: \"method\" must be a string")),
        None => response_from(id, result, error),
    }
}

fn response_from(id: Option<RequestId>, result: Option<Value>, error: Option<Value>) -> Result<Message, Rejected> {
    match (result, error) {
        (Some(result), None) => match id {
            Some(id) => Ok(Message::Response(Response::result(id, result))),
            None => Err(invalid(None, "Invalid Request: a result response needs an \"id\"")),
        },
        (None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
            Ok(e) => Ok(Message::Response(Response::error(id, e))),
            Err(_) => {
                Err(invalid(id, "Invalid Request: \"error\" must have an integer \"code\" and a string \"message\""))
            }
        },
        _ => Err(invalid(id, "Invalid Request: the message has no \"method\", and is not a response")),
    }
}

fn invalid(id: Option<RequestId>, message: &str) -> Rejected {
    Rejected { response: Response::error(id, ErrorObject::new(INVALID_REQUEST, message)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_request_notification_and_responses() {
        let m = parse_message(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#).unwrap();
        assert!(matches!(m, Message::Request(Request { id: RequestId::Number(1), .. })));
        let m = parse_message(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        let m = parse_message(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(m, Message::Response(Response { outcome: Outcome::Result(_), .. })));
        let m = parse_message(br#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}"#).unwrap();
        assert!(matches!(m, Message::Response(Response { outcome: Outcome::Error(_), .. })));
    }

    #[test]
    fn bad_frames_get_the_right_codes() {
        let code = |b: &[u8]| parse_message(b).unwrap_err().response.as_error().unwrap().code;
        assert_eq!(code(b"{not json"), PARSE_ERROR);
        assert_eq!(code(b"[]"), INVALID_REQUEST);
        assert_eq!(code(b"42"), INVALID_REQUEST);
        assert_eq!(code(br#"{"id":1,"method":"x"}"#), INVALID_REQUEST);
        assert_eq!(code(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#), INVALID_REQUEST);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1,"method":7}"#), INVALID_REQUEST);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#), INVALID_REQUEST);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#), INVALID_REQUEST);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1}"#), INVALID_REQUEST);
        // The id is echoed whenever it can be read.
        let r = parse_message(br#"{"jsonrpc":"2.0","id":9,"method":7}"#).unwrap_err();
        assert_eq!(r.response.id, Some(RequestId::Number(9)));
    }

    #[test]
    fn the_direct_read_and_the_general_path_agree() {
        let frames: [&[u8]; 14] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}},"extra":[1]}"#,
            br#"{"method":"x","jsonrpc":"2.0"}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":"a","result":null}"#,
            br#"{"jsonrpc":"2.0","id":"a","result":{},"error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"2.0","id":"a","error":{"code":"1"}}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            br#"{"jsonrpc":null,"id":1,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
            br#"{"jsonrpc":"2\u002e0","id":1,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
            br#""x""#,
        ];
        for f in frames {
            let general = classify(serde_json::from_slice(f).unwrap());
            assert_eq!(format!("{:?}", parse_message(f)), format!("{general:?}"), "{}", String::from_utf8_lossy(f));
        }
    }

    #[test]
    fn integer_ids_outside_i64_are_echoed_exactly() {
        for id in [
            "18446744073709551616",
            "-9223372036854775809",
            "18446744073709551615",
            "9223372036854775808",
            "123456789012345678901234567890",
        ] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
            let Message::Request(r) = parse_message(frame.as_bytes()).unwrap() else { panic!("{id}: not a request") };
            assert_eq!(r.id, RequestId::BigNumber(id.to_owned()));
            let echoed = Message::Response(Response::result(r.id, json!({}))).to_bytes();
            assert_eq!(String::from_utf8(echoed).unwrap(), format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
        }
        // The edges of i64 stay plain numbers.
        for (text, n) in [("9223372036854775807", i64::MAX), ("-9223372036854775808", i64::MIN)] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"x"}}"#);
            assert!(
                matches!(parse_message(frame.as_bytes()).unwrap(), Message::Request(Request { id: RequestId::Number(m), .. }) if m == n)
            );
        }
        // Fractions and exponents are not ids, and an error about a frame never echoes one.
        for id in ["1.5", "1e3", "2E2", "-0.0"] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
            let rejected = parse_message(frame.as_bytes()).unwrap_err();
            assert_eq!(rejected.response.as_error().unwrap().code, INVALID_REQUEST, "{id}");
            assert_eq!(rejected.response.id, None);
        }
        // A big id in an error about the frame (here: a bad method) is echoed too.
        let r = parse_message(br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":7}"#).unwrap_err();
        assert_eq!(r.response.id, Some(RequestId::BigNumber("18446744073709551616".into())));
        // Responses (what a client reads) carry them as well.
        let Message::Response(r) =
            parse_message(br#"{"jsonrpc":"2.0","id":-9223372036854775809,"result":{}}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.id, Some(RequestId::BigNumber("-9223372036854775809".into())));
    }

    #[test]
    fn request_ids_deserialize_and_convert() {
        let id: RequestId = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(id, RequestId::BigNumber("18446744073709551615".into()));
        assert_eq!(id.to_value(), json!(18446744073709551615_u64));
        assert_eq!(serde_json::to_value(&id).unwrap(), json!(18446744073709551615_u64));
        assert_eq!(id.to_string(), "18446744073709551615");
        assert_eq!(serde_json::from_str::<RequestId>("-7").unwrap(), RequestId::Number(-7));
        assert_eq!(serde_json::from_str::<RequestId>(r#""a""#).unwrap(), RequestId::from("a"));
        assert!(serde_json::from_str::<RequestId>("1.5").is_err());
        assert!(serde_json::from_str::<RequestId>("null").is_err());
        assert_eq!(
            RequestId::from_value(&json!(9223372036854775808_u64)),
            Some(RequestId::BigNumber("9223372036854775808".into()))
        );
        assert_eq!(RequestId::from_value(&json!(1.0)), None);
        assert!(
            serde_json::to_vec(&RequestId::BigNumber("12x".into())).is_err(),
            "not an integer: refused, never written raw"
        );
    }

    #[test]
    fn serializes_compactly() {
        let r = Message::Response(Response::result(RequestId::from("x"), json!({"a": 1})));
        assert_eq!(r.to_bytes(), br#"{"jsonrpc":"2.0","id":"x","result":{"a":1}}"#);
        let e = Message::Response(Response::error(None, ErrorObject::new(PARSE_ERROR, "bad")));
        assert_eq!(e.to_bytes(), br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}}"#);
    }
}
