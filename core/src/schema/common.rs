//! Types shared by every area of the protocol: `_meta`, result fields, roles, annotations,
//! icons, implementation info, log levels and the common request and notification params.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::capabilities::ClientCapabilities;

/// The revision of the protocol these types describe.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// `_meta` key in request params: the protocol version of the request (required).
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key in request params: the client's [`Implementation`].
pub const CLIENT_INFO_META_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key in request params: the client's [`ClientCapabilities`] for this request (required).
pub const CLIENT_CAPABILITIES_META_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key in request params: the [`LoggingLevel`] the client opts in to (deprecated).
pub const LOG_LEVEL_META_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key in request params: the token for `notifications/progress`.
pub const PROGRESS_TOKEN_META_KEY: &str = "progressToken";
/// `_meta` key in notifications and the `subscriptions/listen` result: the id of the
/// `subscriptions/listen` request the message belongs to.
pub const SUBSCRIPTION_ID_META_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key in results: the server's [`Implementation`].
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The contents of a `_meta` field (`MetaObject`): any JSON object.
pub type Meta = serde_json::Map<String, Value>;

/// A free-form JSON object (`JSONObject`).
pub type JsonObject = serde_json::Map<String, Value>;

/// A JSON-RPC request id: a string or an integer.
pub use crate::jsonrpc::RequestId;

/// A progress token (string or integer), used to tie progress notifications to a request.
pub type ProgressToken = RequestId;

/// An opaque token used to represent a cursor for pagination.
pub type Cursor = String;

/// The kind of a result (`resultType`), telling the client how to parse it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// `"complete"`: the request completed and the result holds the final content.
    Complete,
    /// `"input_required"`: the result is an `InputRequiredResult`; retry with the input.
    InputRequired,
    /// Any other value, kept as sent.
    Other(String),
}

impl ResultType {
    /// The wire string of this result type.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            _ => ResultType::Other(s),
        })
    }
}

/// Who may cache a cacheable result (`cacheScope`), like HTTP `Cache-Control`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any client or intermediary may cache and share it.
    Public,
    /// Cacheable only within the same authorization context.
    Private,
}

/// A result that carries the `ttlMs` and `cacheScope` caching hints (`CacheableResult`).
///
/// Implemented by every cacheable result so that the server can fill the hints in centrally.
pub trait CacheableResult {
    /// How long (in milliseconds) the client may cache the result.
    fn ttl_ms(&self) -> Option<u64>;
    /// Who may cache the result.
    fn cache_scope(&self) -> Option<CacheScope>;
    /// Sets both caching hints.
    fn set_cache_hints(&mut self, ttl_ms: u64, scope: CacheScope);
}

/// Implements [`CacheableResult`] for result structs with `ttl_ms` and `cache_scope` fields.
macro_rules! impl_cacheable {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::schema::CacheableResult for $t {
            fn ttl_ms(&self) -> Option<u64> {
                self.ttl_ms
            }
            fn cache_scope(&self) -> Option<$crate::schema::CacheScope> {
                self.cache_scope
            }
            fn set_cache_hints(&mut self, ttl_ms: u64, scope: $crate::schema::CacheScope) {
                self.ttl_ms = Some(ttl_ms);
                self.cache_scope = Some(scope);
            }
        }
    )*};
}
pub(crate) use impl_cacheable;

/// The sender or recipient of messages and data in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// Optional annotations that inform how the client uses or displays an object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the intended audience of this object or data is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important this data is, from 0 (optional) to 1 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "super::number::option::serialize")]
    pub priority: Option<f64>,
    /// When the object was last modified, as an ISO 8601 string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The background theme an [`Icon`] is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
}

/// An optionally-sized icon that can be displayed in a user interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An HTTP(S) URL or a `data:` URI of the icon.
    pub src: String,
    /// MIME type override if the source's type is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon can be used at (`"48x48"`, or `"any"` for scalable formats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src`, with no MIME type, sizes or theme.
    pub fn new(src: impl Into<String>) -> Self {
        Icon { src: src.into(), mime_type: None, sizes: None, theme: None }
    }
}

/// Describes an MCP implementation (a client or a server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version of the implementation.
    pub version: String,
    /// What this implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// URL of the implementation's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons a user interface can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl Implementation {
    /// An implementation with a name and version and nothing else.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            website_url: None,
            icons: None,
            extra: Meta::new(),
        }
    }
}

/// The severity of a log message (RFC 5424 syslog severities), ordered from `Debug` (least
/// severe) to `Emergency` (most severe). Deprecated as of 2026-07-28.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// Common params for any request (`RequestParams`); `server/discover` takes exactly these.
///
/// On the wire `_meta` is required and holds a [`RequestMetaObject`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata; see [`RequestMetaObject`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// Common params for paginated requests (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Request metadata; see [`RequestMetaObject`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Where to continue listing: the `nextCursor` of a previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// Common params for any notification (`NotificationParams`), and the params of the
/// `list_changed` notifications.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata (may hold [`SUBSCRIPTION_ID_META_KEY`]).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl NotificationParams {
    /// Params whose `_meta` tags the notification with the `subscriptions/listen` request
    /// it is delivered on.
    pub fn for_subscription(subscription_id: &RequestId) -> Self {
        NotificationParams { meta: Some(subscription_meta(subscription_id)), extra: Meta::new() }
    }
}

/// A `_meta` object holding only [`SUBSCRIPTION_ID_META_KEY`].
pub fn subscription_meta(subscription_id: &RequestId) -> Meta {
    let mut meta = Meta::new();
    meta.insert(SUBSCRIPTION_ID_META_KEY.to_owned(), subscription_id.to_value());
    meta
}

/// The typed view of a request's `_meta` (`RequestMetaObject`).
///
/// ```
/// use mcpaxle::schema::{RequestMetaObject, Meta};
/// let meta: Meta = serde_json::from_str(r#"{
///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities": {}
/// }"#).unwrap();
/// let m = RequestMetaObject::from_meta(&meta).unwrap();
/// assert_eq!(m.protocol_version, "2026-07-28");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestMetaObject {
    /// Token for out-of-band `notifications/progress` about this request.
    #[serde(rename = "progressToken", default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// The protocol version of this request.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// The client software making the request (self-reported).
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// The client's capabilities for this request.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// The log level the client opts in to for this request (deprecated).
    #[serde(rename = "io.modelcontextprotocol/logLevel", default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// Other `_meta` keys, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl RequestMetaObject {
    /// Reads the typed view out of a `_meta` object.
    pub fn from_meta(meta: &Meta) -> Result<Self, serde_json::Error> {
        serde_json::from_value(Value::Object(meta.clone()))
    }

    /// Converts back into a `_meta` object.
    pub fn into_meta(self) -> Meta {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            // A struct with string keys always serializes to an object.
            _ => Meta::new(),
        }
    }
}

/// A result that indicates success but carries no data (`EmptyResult`, the base `Result`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Result metadata (may hold [`SERVER_INFO_META_KEY`]).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result; servers of this revision always send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl EmptyResult {
    /// An empty, complete result.
    pub fn complete() -> Self {
        EmptyResult { result_type: Some(ResultType::Complete), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn logging_levels_are_ordered_by_severity() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Warning < LoggingLevel::Error);
        assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
        assert_eq!(serde_json::to_value(LoggingLevel::Emergency).unwrap(), json!("emergency"));
    }

    #[test]
    fn result_type_keeps_unknown_values() {
        let t: ResultType = serde_json::from_value(json!("input_required")).unwrap();
        assert_eq!(t, ResultType::InputRequired);
        let t: ResultType = serde_json::from_value(json!("partial")).unwrap();
        assert_eq!(t, ResultType::Other("partial".into()));
        assert_eq!(serde_json::to_value(&t).unwrap(), json!("partial"));
    }

    #[test]
    fn request_meta_round_trips() {
        let v = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/logLevel": "warning",
            "progressToken": 7,
            "com.example/x": true
        });
        let m = RequestMetaObject::from_meta(v.as_object().unwrap()).unwrap();
        assert_eq!(m.log_level, Some(LoggingLevel::Warning));
        assert_eq!(m.progress_token, Some(RequestId::Number(7)));
        assert_eq!(Value::Object(m.into_meta()), v);
    }
}
