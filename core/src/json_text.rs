//! JSON text of the messages the core sends, written byte for byte as `serde_json` writes
//! it, but with strings scanned eight bytes at a time.
//!
//! `serde_json` looks up every byte of a string in a table to find what needs escaping;
//! a large text (a file read, a long tool answer) is almost all bytes that do not, and that
//! loop was a fifth of the server's time on a 1 MB `tools/call`. Here a run of eight bytes
//! with no quote, backslash or control character is copied as it is, and only the rare byte
//! that needs an escape is looked at on its own. Numbers, and everything that is not a
//! [`Value`], still go through `serde_json`.

use crate::jsonrpc::{Outcome, Response};
use serde_json::Value;
use std::io::{self, Write};

/// Writes `response` as compact JSON, the same text as `serde_json::to_writer`.
pub(crate) fn write_response<W: Write>(out: &mut W, response: &Response) -> io::Result<()> {
    match &response.outcome {
        Outcome::Result(result) => {
            out.write_all(br#"{"jsonrpc":"2.0","#)?;
            if let Some(id) = &response.id {
                out.write_all(br#""id":"#)?;
                serde_json::to_writer(&mut *out, id)?;
                out.write_all(b",")?;
            }
            out.write_all(br#""result":"#)?;
            write_value(out, result)?;
            out.write_all(b"}")
        }
        Outcome::Error(_) => Ok(serde_json::to_writer(out, response)?),
    }
}

/// Writes `value` as compact JSON, the same text as `serde_json::to_writer`.
pub(crate) fn write_value<W: Write>(out: &mut W, value: &Value) -> io::Result<()> {
    match value {
        Value::Null => out.write_all(b"null"),
        Value::Bool(true) => out.write_all(b"true"),
        Value::Bool(false) => out.write_all(b"false"),
        Value::Number(n) => Ok(serde_json::to_writer(out, n)?),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_value(out, item)?;
            }
            out.write_all(b"]")
        }
        Value::Object(members) => {
            out.write_all(b"{")?;
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_str(out, key)?;
                out.write_all(b":")?;
                write_value(out, item)?;
            }
            out.write_all(b"}")
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Whether any of the eight bytes of `word` is a quote, a backslash or below 0x20 (exact: the
/// "has a byte less than n" and "has a zero byte" tests of Hacker's Delight, which have no false
/// answer as a whole; bytes of 0x80 and above, UTF-8's, never match).
fn needs_escape(word: u64) -> bool {
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH_BITS;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH_BITS;
    (control | has_zero(word ^ (ONES * u64::from(b'"'))) | has_zero(word ^ (ONES * u64::from(b'\\')))) != 0
}

/// The escape of a byte, as `serde_json` writes it; `None` for a byte written as it is.
fn escape(byte: u8) -> Option<&'static [u8]> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    const fn table() -> [[u8; 6]; 32] {
        let mut t = [[0u8; 6]; 32];
        let mut i = 0;
        while i < 32 {
            t[i] = [b'\\', b'u', b'0', b'0', HEX[i >> 4], HEX[i & 0xf]];
            i += 1;
        }
        t
    }
    static CONTROL: [[u8; 6]; 32] = table();
    Some(match byte {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        0x0c => b"\\f",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        0..0x20 => &CONTROL[byte as usize],
        _ => return None,
    })
}

fn write_str<W: Write>(out: &mut W, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    out.write_all(b"\"")?;
    let mut start = 0; // the first byte not written yet
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if !needs_escape(word) {
                i += 8;
                continue;
            }
        }
        // Some byte of these eight (or of the last few) needs a look of its own.
        let end = (i + 8).min(bytes.len());
        while i < end {
            if let Some(escaped) = escape(bytes[i]) {
                out.write_all(&bytes[start..i])?;
                out.write_all(escaped)?;
                start = i + 1;
            }
            i += 1;
        }
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{ErrorObject, RequestId};
    use serde_json::json;

    fn text(value: &Value) -> String {
        let mut out = Vec::new();
        write_value(&mut out, value).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_byte_is_written_as_serde_json_writes_it() {
        // Every ASCII byte, alone and at each offset of an eight-byte word, and UTF-8 around it.
        for byte in 0u8..0x80 {
            for offset in 0..17 {
                let s = format!("{}{}é€𝄞{}", "a".repeat(offset), byte as char, "b".repeat(offset % 5));
                let v = Value::String(s);
                assert_eq!(text(&v), serde_json::to_string(&v).unwrap(), "byte {byte:#x} at {offset}");
            }
        }
    }

    #[test]
    fn values_and_responses_match_serde_json() {
        let value = json!({
            "content": [{ "type": "text", "text": "line\nnext \"quoted\" \\ tab\t\u{1}\u{7f}\u{2028}" }],
            "n": [0, -1, 1.5, 1e300, u64::MAX, i64::MIN], "b": [true, false, null], "nested": { "": {}, "a": [] },
            "long": "x".repeat(1000) + "\"" + &"y".repeat(13),
        });
        assert_eq!(text(&value), serde_json::to_string(&value).unwrap());
        for response in [
            Response::result(RequestId::Number(7), value.clone()),
            Response::result(RequestId::String("a\"b".into()), json!(null)),
            Response { id: None, ..Response::result(RequestId::Number(1), json!({})) },
            Response::error(Some(RequestId::Number(2)), ErrorObject::new(-32602, "bad \"x\"")),
        ] {
            let mut out = Vec::new();
            write_response(&mut out, &response).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&response).unwrap());
        }
    }
}
