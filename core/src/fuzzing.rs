//! Entry points of the fuzz targets under `fuzz/` (one function per target), with the
//! properties each one checks beyond "does not panic". Not public API: compiled only for this
//! crate's tests and with the `fuzzing` feature, which only the `fuzz/` crate turns on.
//!
//! Each function takes the raw bytes libFuzzer hands over and panics when a property breaks;
//! the unit tests below replay every committed corpus file (`fuzz/corpus/<target>/`) and
//! regression input (`fuzz/regressions/<target>/`) through the same functions, so the corpora
//! stay meaningful in the normal test suite.

use serde_json::{Value, json};

use crate::headers::{self, HeaderParam, ParamKind};
use crate::jsonrpc::{self, Message, Outcome};
use crate::server::input_schema::{self, MAX_ERROR_MESSAGES};
use crate::server::uri_template::{MAX_URI_LENGTH, UriTemplate};
use crate::transport::http::sse::SseParser;

/// `jsonrpc_envelope`: [`jsonrpc::parse_message`] on any bytes. A message it accepts serializes
/// to bytes that parse back to a message of the same kind, id and method; a frame it refuses
/// earns an error response that is itself a well-formed JSON-RPC error with a standard code.
pub fn jsonrpc_envelope(data: &[u8]) {
    match jsonrpc::parse_message(data) {
        Ok(message) => {
            let again = jsonrpc::parse_message(&message.to_bytes())
                .unwrap_or_else(|r| panic!("a parsed message does not parse back: {r:?}"));
            assert_eq!(shape(&message), shape(&again), "the message changed on a round trip");
        }
        Err(rejected) => {
            let code = rejected.response.as_error().map(|e| e.code);
            assert!(
                matches!(code, Some(jsonrpc::PARSE_ERROR | jsonrpc::INVALID_REQUEST)),
                "a refused frame earned {code:?}"
            );
            let bytes = Message::Response(rejected.response.clone()).to_bytes();
            match jsonrpc::parse_message(&bytes) {
                Ok(Message::Response(r)) => {
                    assert_eq!(r, rejected.response, "the error response changed on a round trip")
                }
                other => panic!("the error response for a refused frame is not a response: {other:?}"),
            }
        }
    }
}

/// Kind, id and method of a message (values inside params or results are left out: floats need
/// not survive a text round trip bit for bit).
fn shape(message: &Message) -> (u8, Option<Value>, Option<String>) {
    match message {
        Message::Request(r) => (0, Some(r.id.to_value()), Some(r.method.clone())),
        Message::Notification(n) => (1, None, Some(n.method.clone())),
        Message::Response(r) => {
            (if matches!(r.outcome, Outcome::Result(_)) { 2 } else { 3 }, r.id.as_ref().map(|id| id.to_value()), None)
        }
    }
}

/// `mcp_param`: [`headers::decode_value`] on any header text (as the server receives an
/// `Mcp-Name` or `Mcp-Param-*` value), and [`headers::encode_value`] of any text: what a client
/// encodes is a valid header value (visible ASCII, space, tab) that decodes back to the same text,
/// and what decodes re-encodes to something that decodes the same.
pub fn mcp_param(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let encoded = headers::encode_value(&text);
    assert!(
        encoded.bytes().all(|b| matches!(b, 0x21..=0x7E | b' ' | b'\t')),
        "encode_value produced an invalid header value: {encoded:?}"
    );
    assert!(http::HeaderValue::from_str(&encoded).is_ok(), "encode_value produced a value http refuses: {encoded:?}");
    assert_eq!(headers::decode_value(&encoded).as_deref(), Ok(text.as_ref()), "encode then decode changed {text:?}");
    if let Ok(decoded) = headers::decode_value(&text) {
        assert_eq!(headers::decode_value(&headers::encode_value(&decoded)).as_deref(), Ok(decoded.as_str()));
        for kind in [ParamKind::String, ParamKind::Integer, ParamKind::Boolean] {
            let param = HeaderParam { header_name: "X".to_owned(), path: vec!["x".to_owned()], kind };
            for body in [json!(decoded), json!(42), json!(-7.0), json!(1e300), json!(true), Value::Null] {
                let _ = headers::header_matches(&param, &decoded, &body);
            }
            // The text as an argument, and as the JSON value it spells (`42`, `4.2e1`, `true`).
            for argument in [json!(decoded), serde_json::from_str(&decoded).unwrap_or(Value::Null)] {
                let arguments = json!({ "x": argument });
                if let Some(value) = headers::header_value_for(&param, &arguments) {
                    let received = headers::decode_value(&headers::encode_value(&value));
                    let received = received
                        .unwrap_or_else(|e| panic!("the header a client sends for {argument} does not decode: {e}"));
                    assert!(
                        headers::header_matches(&param, &received, &arguments["x"]),
                        "the header a client sends for {argument} does not match it"
                    );
                }
            }
        }
    }
}

/// `uri_template`: the bytes up to the first newline are a template, the rest a URI.
/// [`UriTemplate::parse`] then [`UriTemplate::match_uri`]. When the URI matches, expanding the
/// variables found gives a URI a server could hand out, and that one matches back to variables
/// that expand to it again (the module's promise). The first URI itself need not come back: a
/// lenient match of text no expansion produces (`?&x=`) may split differently.
pub fn uri_template(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(template) else { return };
    let _ = template.variable_names();
    let Some(vars) = template.match_uri(uri) else { return };
    let handed_out = template.expand(&vars);
    // Expansion percent-encodes what a match accepted raw, so the URI can grow past the limit.
    // An exploded object with a member named like a variable of the template (`{?x*}` with
    // {"x": "1"}) expands exactly like the list ["1"]: RFC 6570 is ambiguous there.
    let names: Vec<String> = template.variable_names().into_iter().map(percent_decoded).collect();
    let shadowed = vars.values().any(|v| v.as_object().is_some_and(|o| o.keys().any(|k| names.contains(k))));
    // A template that repeats a variable costs up to the cube of the URI's length to search (each
    // value of the first occurrence starts the rest again), so past about a hundred bytes the
    // match budget may end the search (no match, as documented); otherwise 2 KiB.
    let limit = if template.repeats_a_variable() { 96 } else { MAX_URI_LENGTH / 4 };
    if handed_out.len() <= limit && !shadowed {
        let Some(again) = template.match_uri(&handed_out) else {
            panic!("{uri:?} matched {vars:?}, which expands to {handed_out:?}, which does not match");
        };
        assert_eq!(template.expand(&again), handed_out, "{handed_out:?} (the expansion of {vars:?}) matched {again:?}");
    }
}

/// A variable name with its `%XX` triplets decoded (names may hold them: `{?%3F*}`).
fn percent_decoded(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `sse`: the first byte chooses the parser's event limit and how the rest is cut into chunks.
/// [`SseParser::push`] never yields an event larger than its limit, and (when no limit is hit)
/// the events do not depend on how the stream was cut.
pub fn sse(data: &[u8]) {
    let Some((&control, stream)) = data.split_first() else { return };
    let max_event = 1usize << (4 + (control & 0x07));
    let whole = feed(max_event, &[stream]);
    let mut chunks = Vec::new();
    let mut rest = stream;
    let mut step = usize::from(control >> 3) % 7;
    while !rest.is_empty() {
        let n = step.min(rest.len());
        chunks.push(&rest[..n]);
        rest = &rest[n..];
        step = (step * 5 + 3) % 11;
    }
    let split = feed(max_event, &chunks);
    if let (Some(whole), Some(split)) = (whole, split) {
        assert_eq!(
            whole,
            split,
            "the events depend on the chunking {:?}",
            chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
        );
    }
}

type Fed = (Vec<crate::transport::http::sse::SseEvent>, Option<String>, Option<u64>);

fn feed(max_event: usize, chunks: &[&[u8]]) -> Option<Fed> {
    let mut parser = SseParser::new(max_event);
    let mut events = Vec::new();
    for chunk in chunks {
        let batch = parser.push(chunk).ok()?;
        for event in &batch {
            assert!(
                event.data.len() <= max_event,
                "an event of {} bytes passed the limit of {max_event}",
                event.data.len()
            );
        }
        events.extend(batch);
    }
    Some((events, parser.last_event_id().map(str::to_owned), parser.retry_ms()))
}

/// `input_schema`: the bytes are a stream of JSON values, the first a tool's `inputSchema`, the
/// others `arguments`. [`input_schema::compile`] and [`headers::header_params`] on the schema;
/// when it compiles, `is_valid` and `validate` agree on every instance and a refusal carries
/// between 1 and [`MAX_ERROR_MESSAGES`] messages.
pub fn input_schema(data: &[u8]) {
    let mut values = serde_json::Deserializer::from_slice(data).into_iter::<Value>();
    let Some(Ok(schema)) = values.next() else { return };
    let _ = headers::header_params(&schema);
    let Ok(compiled) = input_schema::compile(&schema) else { return };
    assert_eq!(compiled.accepts_missing_arguments(), compiled.is_valid(&json!({})));
    for instance in values.take(8) {
        let Ok(instance) = instance else { return };
        match compiled.validate(&instance) {
            Ok(()) => assert!(compiled.is_valid(&instance)),
            Err(messages) => {
                assert!(!compiled.is_valid(&instance));
                assert!((1..=MAX_ERROR_MESSAGES).contains(&messages.len()), "{} messages", messages.len());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    type Target = (&'static str, fn(&[u8]));

    /// Every target with its entry point, by the name of its directory under `fuzz/corpus`.
    const TARGETS: [Target; 5] = [
        ("jsonrpc_envelope", super::jsonrpc_envelope),
        ("mcp_param", super::mcp_param),
        ("uri_template", super::uri_template),
        ("sse", super::sse),
        ("input_schema", super::input_schema),
    ];

    fn files(dir: &str, target: &str) -> Vec<PathBuf> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz").join(dir).join(target);
        match std::fs::read_dir(&dir) {
            Ok(entries) => entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect(),
            Err(_) => Vec::new(),
        }
    }

    #[test]
    fn committed_corpora_replay_without_a_failure() {
        for (target, run) in TARGETS {
            let corpus = files("corpus", target);
            assert!(corpus.len() >= 5, "fuzz/corpus/{target} has {} seeds", corpus.len());
            // known/: open findings the properties leave out, which must pass them.
            for path in corpus.iter().chain(&files("regressions", target)).chain(&files("known", target)) {
                let data = std::fs::read(path).unwrap();
                if let Err(panic) = std::panic::catch_unwind(|| run(&data)) {
                    panic!("{target}: {} fails: {:?}", path.display(), panic.downcast_ref::<String>());
                }
            }
        }
    }
}
