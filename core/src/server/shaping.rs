//! What a handler returns, made into a result: the one rule for shorthand returns, the same
//! in Rust, Python, Node and C.
//!
//! A handler returns a [`Returned`]: a JSON value, where a host that has a bytes type keeps
//! bytes apart ([`Returned::Bytes`], inside [`Returned::List`] and [`Returned::Object`] when
//! they are nested). Rust handlers return the typed results (`CallToolResult`, ...), which
//! convert into a `Returned` and are full results under the rules below; bindings convert
//! their host's value and hand it over as it is. Bytes that reach a place where only JSON
//! fits (a field of structured data) become their base64 text.
//!
//! # Tools (`tools/call`)
//!
//! In this order:
//! 1. A string: one text block.
//! 2. An object with a `content` array: the `CallToolResult` itself. Its content items are
//!    shaped as content blocks (below); when it has `structuredContent` and no content, the
//!    content is that value's JSON as text.
//! 3. When the tool declares an `outputSchema`: the value (as JSON) is the `structuredContent`
//!    when it is an object that matches the schema, else it is wrapped as `{"result": value}`;
//!    the content is one text block with the value's JSON.
//! 4. Without an `outputSchema`: null gives no content; bytes give one block (below); a
//!    content block object gives itself; a non-empty list of strings, bytes and content blocks
//!    gives one block each; another object is the `structuredContent`, with its JSON as text;
//!    anything else (a number, a list of data) is its JSON as text.
//!
//! A content block is a string (text), bytes (an `image` or `audio` block when the bytes
//! start with a PNG, JPEG, GIF, WebP, MP3, Ogg, FLAC or WAV signature, else an embedded
//! `application/octet-stream` resource), an object with a string `type` (taken as it is), or
//! any other value as its JSON text.
//!
//! # Resources (`resources/read`)
//!
//! An object with a `contents` array is the `ReadResourceResult` itself. A list holding at
//! least one contents object (or bytes, or an embedded `resource` block) gives one contents
//! item per element; any other value gives one. A contents item is made from a string (text),
//! bytes (a base64 `blob`), a contents object (an object with a string `text` or `blob`, kept
//! with its members), an embedded resource block (its `resource`), or any other value (its
//! JSON as text). Every item gets the URI read and the `mimeType` the resource or template
//! was registered with when it has none of its own; without one, `text/plain` for text,
//! `application/octet-stream` for a blob, `application/json` for JSON.
//!
//! # Prompts (`prompts/get`)
//!
//! An object with a `messages` array is the `GetPromptResult` (its messages shaped); a list
//! gives one message per element; anything else one message. A message is an object with a
//! `role` (its `content` shaped as a content block unless it is an object already), or any
//! other value as the content block of a `user` message.
//!
//! # Completions (`completion/complete`)
//!
//! An object with a `completion` object is the `CompleteResult`; an object with `values` is
//! its `completion` (`total` and `hasMore` kept); a list gives the values; a string is one
//! value; null none. A value that is not a string is its JSON text. Whatever the shape, at
//! most [`MAX_COMPLETION_VALUES`] values are sent: past that, the list is cut, `hasMore` is
//! true and `total` says how many there were (unless the handler set it).

use crate::error::{Error, Result};
use crate::schema::{CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult};
use crate::server::input_schema::CompiledSchema;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// What a handler returned, before it is shaped into a result (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Returned {
    /// A JSON value without bytes in it.
    Json(Value),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// A list holding bytes somewhere.
    List(Vec<Returned>),
    /// An object holding bytes somewhere.
    Object(Vec<(String, Returned)>),
    /// A `CallToolResult` a Rust handler built: a full result already, shaped without a trip
    /// through JSON (elsewhere it counts as its JSON).
    ToolResult(Box<CallToolResult>),
}

/// The most completion values a result carries (the spec's cap).
pub const MAX_COMPLETION_VALUES: usize = 100;

impl Returned {
    /// The value as JSON, bytes as their base64 text.
    pub fn into_json(self) -> Value {
        match self {
            Returned::Json(v) => v,
            Returned::Bytes(b) => Value::String(STANDARD.encode(b)),
            Returned::List(items) => Value::Array(items.into_iter().map(Returned::into_json).collect()),
            Returned::Object(members) => Value::Object(members.into_iter().map(|(k, v)| (k, v.into_json())).collect()),
            Returned::ToolResult(r) => serde_json::to_value(r).unwrap_or(Value::Null),
        }
    }

    /// A typed result as its JSON, anything else as it is: the form the shorthand rules read.
    fn untyped(self) -> Self {
        match self {
            r @ Returned::ToolResult(_) => Returned::Json(r.into_json()),
            r => r,
        }
    }

    /// A list from its items: [`Returned::Json`] when none holds bytes.
    pub fn list(items: Vec<Returned>) -> Self {
        if items.iter().all(|i| matches!(i, Returned::Json(_))) {
            Returned::Json(Value::Array(items.into_iter().map(Returned::into_json).collect()))
        } else {
            Returned::List(items)
        }
    }

    /// An object from its members: [`Returned::Json`] when none holds bytes.
    pub fn object(members: Vec<(String, Returned)>) -> Self {
        if members.iter().all(|(_, v)| matches!(v, Returned::Json(_))) {
            Returned::Json(Value::Object(members.into_iter().map(|(k, v)| (k, v.into_json())).collect()))
        } else {
            Returned::Object(members)
        }
    }

    /// Decodes the tagged JSON form hosts without a bytes type in JSON send (the Node
    /// binding): `{"json": value}`, `{"bytes": "<base64>"}`, `{"list": [tagged, ...]}` or
    /// `{"object": {"key": tagged, ...}}`.
    pub fn from_tagged(v: Value) -> Result<Self> {
        let bad = || Error::internal("Internal error: a handler's value arrived in an unknown form");
        let Value::Object(mut m) = v else { return Err(bad()) };
        if m.len() != 1 {
            return Err(bad());
        }
        let (tag, inner) = m.iter_mut().next().map(|(k, v)| (k.clone(), v.take())).ok_or_else(bad)?;
        Ok(match (tag.as_str(), inner) {
            ("json", v) => Returned::Json(v),
            ("bytes", Value::String(s)) => Returned::Bytes(
                STANDARD.decode(s).map_err(|e| Error::internal(format!("Internal error: bad base64 bytes: {e}")))?,
            ),
            ("list", Value::Array(items)) => {
                Returned::list(items.into_iter().map(Returned::from_tagged).collect::<Result<_>>()?)
            }
            ("object", Value::Object(members)) => Returned::object(
                members.into_iter().map(|(k, v)| Ok((k, Returned::from_tagged(v)?))).collect::<Result<_>>()?,
            ),
            _ => return Err(bad()),
        })
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Returned::Json(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Returned::Json(Value::Null))
    }

    /// The member `key` of an object.
    fn get(&self, key: &str) -> Option<Returned> {
        match self {
            Returned::Json(Value::Object(m)) => m.get(key).cloned().map(Returned::Json),
            Returned::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()),
            _ => None,
        }
    }

    fn is_object(&self) -> bool {
        matches!(self, Returned::Json(Value::Object(_)) | Returned::Object(_))
    }

    /// The items of a list.
    fn items(self) -> Option<Vec<Returned>> {
        match self {
            Returned::Json(Value::Array(a)) => Some(a.into_iter().map(Returned::Json).collect()),
            Returned::List(items) => Some(items),
            _ => None,
        }
    }

    fn is_list(&self) -> bool {
        matches!(self, Returned::Json(Value::Array(_)) | Returned::List(_))
    }

    /// An object with a member `key` that is a list (looked at in place: a large `content` is
    /// not copied to be asked).
    fn has_list(&self, key: &str) -> bool {
        match self {
            Returned::Json(Value::Object(m)) => m.get(key).is_some_and(Value::is_array),
            Returned::Object(members) => members.iter().any(|(k, v)| k == key && v.is_list()),
            _ => false,
        }
    }

    /// The members of an object.
    fn members(self) -> Vec<(String, Returned)> {
        match self {
            Returned::Json(Value::Object(m)) => m.into_iter().map(|(k, v)| (k, Returned::Json(v))).collect(),
            Returned::Object(members) => members,
            _ => Vec::new(),
        }
    }
}

macro_rules! returned_from_result {
    ($($t:ty),*) => {$(
        impl From<$t> for Returned {
            fn from(r: $t) -> Self {
                Returned::Json(serde_json::to_value(r).unwrap_or(Value::Null))
            }
        }
    )*};
}
returned_from_result!(ReadResourceResult, GetPromptResult, CompleteResult);

impl From<CallToolResult> for Returned {
    fn from(r: CallToolResult) -> Self {
        Returned::ToolResult(Box::new(r))
    }
}

impl From<Value> for Returned {
    fn from(v: Value) -> Self {
        Returned::Json(v)
    }
}

impl From<String> for Returned {
    fn from(s: String) -> Self {
        Returned::Json(Value::String(s))
    }
}

impl From<&str> for Returned {
    fn from(s: &str) -> Self {
        Returned::Json(Value::String(s.to_owned()))
    }
}

impl From<Vec<u8>> for Returned {
    fn from(b: Vec<u8>) -> Self {
        Returned::Bytes(b)
    }
}

fn typed<T: DeserializeOwned>(v: Value, what: &str) -> Result<T> {
    serde_json::from_value(v)
        .map_err(|e| Error::internal(format!("Internal error: the {what} returned a result of the wrong shape: {e}")))
}

fn text(s: impl Into<String>) -> Value {
    json!({ "type": "text", "text": s.into() })
}

fn json_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The content types of the protocol's `ContentBlock`.
const CONTENT_TYPES: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

fn is_content_block(r: &Returned) -> bool {
    r.get("type").is_some_and(|t| t.as_str().is_some_and(|t| CONTENT_TYPES.contains(&t)))
}

/// Bytes as a content block: an image or audio block when a known signature starts them,
/// else an embedded binary resource.
fn sniff(data: &[u8]) -> Value {
    let b64 = STANDARD.encode(data);
    const SIGNATURES: [(&[u8], &str, &str); 6] = [
        (b"\x89PNG\r\n\x1a\n", "image", "image/png"),
        (b"\xff\xd8\xff", "image", "image/jpeg"),
        (b"GIF8", "image", "image/gif"),
        (b"ID3", "audio", "audio/mpeg"),
        (b"OggS", "audio", "audio/ogg"),
        (b"fLaC", "audio", "audio/flac"),
    ];
    let riff = |kind: &[u8]| data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == kind;
    let found = SIGNATURES.iter().find(|(magic, _, _)| data.starts_with(magic)).map(|(_, k, m)| (*k, *m)).or(
        if riff(b"WEBP") {
            Some(("image", "image/webp"))
        } else if riff(b"WAVE") {
            Some(("audio", "audio/wav"))
        } else {
            None
        },
    );
    match found {
        Some((kind, mime)) => json!({ "type": kind, "data": b64, "mimeType": mime }),
        None => json!({
            "type": "resource",
            "resource": { "uri": "mcpaxle://bytes", "mimeType": "application/octet-stream", "blob": b64 },
        }),
    }
}

/// One content block (see the module docs).
pub fn content_block(r: Returned) -> Value {
    match r.untyped() {
        Returned::Json(Value::String(s)) => text(s),
        Returned::Bytes(b) => sniff(&b),
        r if is_content_block(&r) => r.into_json(),
        r => text(json_text(&r.into_json())),
    }
}

/// Shapes a tool's value into its result; `output` is the tool's compiled `outputSchema`.
pub fn tool_result(r: Returned, output: Option<&CompiledSchema>) -> Result<CallToolResult> {
    match r {
        Returned::ToolResult(r) => Ok(finish_typed(*r)),
        // Text, what most handlers of the bindings return: the result rule 1 makes of it,
        // built as it is rather than as JSON read back into a result.
        Returned::Json(Value::String(s)) => Ok(CallToolResult::text(s)),
        r => typed(tool_value(r, output), "tool"),
    }
}

/// What rule 2 makes of a typed result: the same as of its JSON (no content but
/// `structuredContent`: that value's JSON as text), without the round trip.
fn finish_typed(mut r: CallToolResult) -> CallToolResult {
    if r.structured_content == Some(Value::Null) {
        r.structured_content = None;
    }
    if r.content.is_empty() {
        if let Some(s) = &r.structured_content {
            r.content.push(crate::schema::ContentBlock::text(json_text(s)));
        }
    }
    r
}

fn tool_value(r: Returned, output: Option<&CompiledSchema>) -> Value {
    if let Some(s) = r.as_str() {
        return json!({ "content": [text(s)] });
    }
    if r.is_object() && r.has_list("content") {
        let mut out = Map::new();
        for (k, v) in r.members() {
            let v = if k == "content" {
                Value::Array(v.items().unwrap_or_default().into_iter().map(content_block).collect())
            } else {
                v.into_json()
            };
            out.insert(k, v);
        }
        return finish_full(out);
    }
    if let Some(schema) = output {
        let data = r.into_json();
        let structured = if data.is_object() && schema.validate(&data).is_ok() {
            data.clone()
        } else {
            json!({ "result": data.clone() })
        };
        return json!({ "content": [text(json_text(&data))], "structuredContent": structured });
    }
    if r.is_null() {
        return json!({ "content": [] });
    }
    if matches!(r, Returned::Bytes(_)) || is_content_block(&r) {
        return json!({ "content": [content_block(r)] });
    }
    if r.is_list() {
        let items = r.clone().items().unwrap_or_default();
        let contentish = |i: &Returned| i.as_str().is_some() || matches!(i, Returned::Bytes(_)) || is_content_block(i);
        if !items.is_empty() && items.iter().all(contentish) {
            return json!({ "content": items.into_iter().map(content_block).collect::<Vec<_>>() });
        }
    }
    let data = r.into_json();
    if data.is_object() {
        return json!({ "content": [text(json_text(&data))], "structuredContent": data });
    }
    json!({ "content": [text(json_text(&data))] })
}

fn finish_full(mut out: Map<String, Value>) -> Value {
    let empty = out.get("content").and_then(Value::as_array).is_some_and(Vec::is_empty);
    if empty {
        if let Some(s) = out.get("structuredContent").filter(|s| !s.is_null()) {
            let t = text(json_text(s));
            out.insert("content".into(), json!([t]));
        }
    }
    Value::Object(out)
}

/// Shapes a resource handler's value into its result; `uri` is the URI read, `mime_type` the
/// one the resource or template was registered with.
pub fn resource_result(r: Returned, uri: &str, mime_type: Option<&str>) -> Result<ReadResourceResult> {
    typed(resource_value(r.untyped(), uri, mime_type), "resource")
}

fn is_contents(r: &Returned) -> bool {
    r.get("type").is_none()
        && (r.get("text").is_some_and(|t| t.as_str().is_some()) || r.get("blob").is_some_and(|b| b.as_str().is_some()))
}

fn is_embedded(r: &Returned) -> bool {
    r.get("type").is_some_and(|t| t.as_str() == Some("resource")) && r.get("resource").is_some_and(|c| c.is_object())
}

fn resource_value(r: Returned, uri: &str, mime: Option<&str>) -> Value {
    if r.is_object() && r.has_list("contents") {
        return r.into_json();
    }
    if r.is_list() {
        let items = r.clone().items().unwrap_or_default();
        if items.iter().any(|i| is_contents(i) || is_embedded(i) || matches!(i, Returned::Bytes(_))) {
            return json!({ "contents": items.into_iter().map(|i| contents(i, uri, mime)).collect::<Vec<_>>() });
        }
    }
    json!({ "contents": [contents(r, uri, mime)] })
}

fn contents(r: Returned, uri: &str, mime: Option<&str>) -> Value {
    let (mut item, default_mime) = match r {
        Returned::Json(Value::String(s)) => (json!({ "text": s }), "text/plain"),
        Returned::Bytes(b) => (json!({ "blob": STANDARD.encode(b) }), "application/octet-stream"),
        r if is_contents(&r) => {
            let blob = r.get("blob").is_some();
            (r.into_json(), if blob { "application/octet-stream" } else { "text/plain" })
        }
        r if is_embedded(&r) => return r.get("resource").map(Returned::into_json).unwrap_or_default(),
        r => (json!({ "text": json_text(&r.into_json()) }), "application/json"),
    };
    if let Value::Object(m) = &mut item {
        m.entry("uri").or_insert_with(|| json!(uri));
        m.entry("mimeType").or_insert_with(|| json!(mime.unwrap_or(default_mime)));
    }
    item
}

/// Shapes a prompt handler's value into its result.
pub fn prompt_result(r: Returned) -> Result<GetPromptResult> {
    typed(prompt_value(r.untyped()), "prompt")
}

fn prompt_value(r: Returned) -> Value {
    if r.is_object() && r.has_list("messages") {
        let mut out = Map::new();
        for (k, v) in r.members() {
            let v = if k == "messages" {
                Value::Array(v.items().unwrap_or_default().into_iter().map(message).collect())
            } else {
                v.into_json()
            };
            out.insert(k, v);
        }
        return Value::Object(out);
    }
    let messages: Vec<Value> = match r.clone().items() {
        Some(items) => items.into_iter().map(message).collect(),
        None => vec![message(r)],
    };
    json!({ "messages": messages })
}

fn message(m: Returned) -> Value {
    if m.is_object() && m.get("role").is_some() {
        let mut out = Map::new();
        for (k, v) in m.members() {
            let v = if k == "content" && !v.is_object() { content_block(v) } else { v.into_json() };
            out.insert(k, v);
        }
        return Value::Object(out);
    }
    json!({ "role": "user", "content": content_block(m) })
}

/// Shapes a completion handler's value into its result, at most [`MAX_COMPLETION_VALUES`]
/// values.
pub fn completion_result(r: Returned) -> Result<CompleteResult> {
    let mut v = completion_value(r.into_json());
    if let Some(Value::Object(completion)) = v.get_mut("completion") {
        cap_completion(completion);
    }
    typed(v, "completion")
}

fn completion_value(v: Value) -> Value {
    let values = |a: Vec<Value>| -> Vec<Value> {
        a.into_iter()
            .map(|x| match x {
                Value::String(s) => Value::String(s),
                other => Value::String(json_text(&other)),
            })
            .collect()
    };
    match v {
        Value::Object(m) if m.get("completion").is_some_and(Value::is_object) => Value::Object(m),
        Value::Object(mut m) if m.contains_key("values") => {
            let list = match m.remove("values") {
                Some(Value::Array(a)) => values(a),
                Some(Value::Null) | None => Vec::new(),
                Some(other) => values(vec![other]),
            };
            m.insert("values".into(), Value::Array(list));
            json!({ "completion": m })
        }
        Value::Null => json!({ "completion": { "values": [] } }),
        Value::Array(a) => json!({ "completion": { "values": values(a) } }),
        other => json!({ "completion": { "values": values(vec![other]) } }),
    }
}

/// Cuts a completion to [`MAX_COMPLETION_VALUES`] values: `hasMore` then says so and `total`
/// keeps the full count (unless the handler set it).
fn cap_completion(completion: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = completion.get_mut("values") else { return };
    let n = values.len();
    if n > MAX_COMPLETION_VALUES {
        values.truncate(MAX_COMPLETION_VALUES);
        completion.insert("hasMore".into(), Value::Bool(true));
        completion.entry("total").or_insert_with(|| json!(n));
    }
}

/// The shared table of shaping cases (`tests/shaping_cases.json`, also read by the Python,
/// Node and C behaviour tests), and the edges the table does not show.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::input_schema;

    const CASES: &str = include_str!("../../../tests/shaping_cases.json");

    /// The result as the table writes it: without `resultType`, `_meta` and caching hints.
    fn bare(mut v: Value) -> Value {
        if let Value::Object(m) = &mut v {
            for k in ["resultType", "_meta", "ttlMs", "cacheScope"] {
                m.remove(k);
            }
        }
        v
    }

    fn shape(case: &Value) -> Result<Value> {
        let returned = Returned::from_tagged(case["returned"].clone())?;
        let v = match case["kind"].as_str() {
            Some("tool") => {
                let schema = case.get("outputSchema").map(|s| input_schema::compile(s).unwrap());
                serde_json::to_value(tool_result(returned, schema.as_ref())?)
            }
            Some("resource") => serde_json::to_value(resource_result(
                returned,
                case["uri"].as_str().unwrap(),
                case.get("mimeType").and_then(Value::as_str),
            )?),
            Some("prompt") => serde_json::to_value(prompt_result(returned)?),
            Some("completion") => serde_json::to_value(completion_result(returned)?),
            other => panic!("unknown kind {other:?}"),
        };
        Ok(bare(v.unwrap()))
    }

    #[test]
    fn every_case_of_the_shared_table_gives_its_result() {
        let doc: Value = serde_json::from_str(CASES).unwrap();
        let cases = doc["cases"].as_array().unwrap();
        assert!(cases.len() >= 20);
        for case in cases {
            let got = shape(case).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
            assert_eq!(got, case["expected"], "{}", case["name"]);
        }
    }

    #[test]
    fn typed_results_are_full_results() {
        let r = tool_result(CallToolResult::text("t").into(), None).unwrap();
        assert_eq!(r, CallToolResult::text("t"));
        let r = resource_result(ReadResourceResult::default().into(), "x://", Some("text/plain")).unwrap();
        assert!(r.contents.is_empty());
    }

    #[test]
    fn a_typed_tool_result_is_shaped_as_its_json_would_be() {
        let structured = CallToolResult { structured_content: Some(json!({ "n": 1 })), ..CallToolResult::new(vec![]) };
        let null = CallToolResult { structured_content: Some(Value::Null), ..CallToolResult::new(vec![]) };
        let mut extra = CallToolResult::text("t");
        extra.is_error = Some(true);
        extra.extra.insert("x-vendor".into(), json!([1]));
        for r in [CallToolResult::text("t"), CallToolResult::new(vec![]), structured, null, extra] {
            let via_json = tool_result(Returned::Json(serde_json::to_value(&r).unwrap()), None).unwrap();
            let typed = tool_result(r.clone().into(), None).unwrap();
            assert!(matches!(Returned::from(r.clone()), Returned::ToolResult(_)));
            assert_eq!(typed, via_json, "{r:?}");
        }
        // Where a typed tool result is not a tool's, it counts as its JSON.
        let block = content_block(CallToolResult::text("t").into());
        assert_eq!(block["type"], "text");
        assert!(block["text"].as_str().unwrap().contains("\"content\""));
    }

    #[test]
    fn text_is_shaped_as_its_json_would_be() {
        let schema = input_schema::compile(&json!({ "type": "object" })).unwrap();
        for output in [None, Some(&schema)] {
            for s in ["", "hi", "{\"n\":1}"] {
                let text = tool_result(Returned::Json(json!(s)), output).unwrap();
                let via_json: CallToolResult = typed(tool_value(Returned::Json(json!(s)), output), "tool").unwrap();
                assert_eq!(bare(serde_json::to_value(text).unwrap()), bare(serde_json::to_value(via_json).unwrap()));
            }
        }
    }

    #[test]
    fn sniffed_signatures() {
        let kinds = |b: &[u8]| {
            let v = sniff(b);
            (v["type"].as_str().unwrap().to_owned(), v["mimeType"].as_str().map(str::to_owned))
        };
        assert_eq!(kinds(b"\xff\xd8\xff\xe0"), ("image".into(), Some("image/jpeg".into())));
        assert_eq!(kinds(b"RIFF\0\0\0\0WEBPVP8 "), ("image".into(), Some("image/webp".into())));
        assert_eq!(kinds(b"RIFF\0\0\0\0WAVEfmt "), ("audio".into(), Some("audio/wav".into())));
        assert_eq!(kinds(b"RIFF"), ("resource".into(), None));
    }

    #[test]
    fn bytes_inside_data_become_base64_text() {
        let r = Returned::object(vec![("b".into(), Returned::Bytes(vec![0, 1]))]);
        let v = serde_json::to_value(tool_result(r, None).unwrap()).unwrap();
        assert_eq!(v["structuredContent"], json!({ "b": "AAE=" }));
    }

    #[test]
    fn a_full_result_with_bytes_in_its_content_sniffs_them() {
        let png = b"\x89PNG\r\n\x1a\n".to_vec();
        let r = Returned::object(vec![("content".into(), Returned::List(vec![Returned::Bytes(png)]))]);
        let v = serde_json::to_value(tool_result(r, None).unwrap()).unwrap();
        assert_eq!(v["content"][0]["type"], "image");
    }

    #[test]
    fn a_wrong_shape_is_an_internal_error_naming_the_handler() {
        let e =
            prompt_result(Returned::Json(json!({ "messages": [{ "role": "robot", "content": "x" }] }))).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Internal);
        assert!(e.message().contains("the prompt returned a result of the wrong shape"), "{}", e.message());
    }

    #[test]
    fn tagged_forms_are_checked() {
        assert!(Returned::from_tagged(json!({ "bytes": "not base64!" })).is_err());
        assert!(Returned::from_tagged(json!({ "json": 1, "bytes": "" })).is_err());
        assert!(Returned::from_tagged(json!([1])).is_err());
        assert_eq!(Returned::from_tagged(json!({ "list": [{ "json": 1 }] })).unwrap(), Returned::Json(json!([1])));
    }

    #[test]
    fn a_completion_handler_total_is_kept_when_capped() {
        let values: Vec<Value> = (0..120).map(|i| json!(i)).collect();
        let r = completion_result(Returned::Json(json!({ "values": values, "total": 500 }))).unwrap();
        assert_eq!(r.completion.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!((r.completion.total, r.completion.has_more), (Some(500), Some(true)));
        assert_eq!(r.completion.values[7], "7");
    }
}
