//! A small incremental parser for `text/event-stream` (the WHATWG Server-Sent Events
//! format): `data:` lines joined with newlines, `event:`, `id:`, `retry:`, comments (lines
//! starting with `:`), and any of CRLF, LF or CR as line ends.
//!
//! Bytes go in as they arrive ([`SseParser::push`]); complete events come out. The last event
//! id and the reconnection delay are kept apart from events, because a server may set them
//! with an event that carries no data (the priming event of a resumable stream).
//!
//! The writing side is here too ([`message_event`], [`priming_event`], [`retry_field`],
//! [`KEEP_ALIVE`]): every event and comment the server's endpoint sends is framed by them.

use bytes::Bytes;
use std::time::Duration;

/// A comment that keeps a long-lived stream alive (clients ignore it).
pub(crate) const KEEP_ALIVE: Bytes = Bytes::from_static(b": keep-alive\n\n");

/// A `message` event carrying one JSON-RPC message, with an `id:` when the stream is
/// resumable. Compact JSON holds no newline, so the message is one `data:` line.
pub(crate) fn message_event(id: Option<&str>, json: &[u8]) -> Bytes {
    let mut b = Vec::with_capacity(json.len() + 24 + id.map_or(0, |i| i.len() + 5));
    if let Some(id) = id {
        b.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    b.extend_from_slice(b"event: message\ndata: ");
    b.extend_from_slice(json);
    b.extend_from_slice(b"\n\n");
    Bytes::from(b)
}

/// The event that opens a resumable stream: its first id and the reconnection delay, with
/// empty data (a client keeps the id and the delay and dispatches nothing to read).
pub(crate) fn priming_event(id: &str, retry: Duration) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {}\ndata: \n\n", retry.as_millis()))
}

/// Only a reconnection delay, sent before a stream is ended early so that the client knows
/// when to resume it.
pub(crate) fn retry_field(retry: Duration) -> Bytes {
    Bytes::from(format!("retry: {}\n\n", retry.as_millis()))
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` type; `message` when the event named none.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The last event id in force when the event was dispatched.
    pub id: Option<String>,
}

/// Why the parser refused the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseTooLarge {
    /// The limit in bytes that was exceeded.
    pub limit: usize,
}

/// The parser state of one SSE stream.
#[derive(Debug)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    data: String,
    has_data: bool,
    event: String,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
    max_event: usize,
}

impl SseParser {
    /// A parser that refuses any line or event larger than `max_event` bytes.
    pub fn new(max_event: usize) -> Self {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            data: String::new(),
            has_data: false,
            event: String::new(),
            last_event_id: None,
            retry_ms: None,
            max_event,
        }
    }

    /// A parser resuming a stream whose last event id is known (for `Last-Event-ID`).
    pub fn resuming(max_event: usize, last_event_id: Option<String>, retry_ms: Option<u64>) -> Self {
        SseParser { last_event_id, retry_ms, ..SseParser::new(max_event) }
    }

    /// The id of the last event (`id:` field) seen on the stream, if any.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server asked for with `retry:`, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseTooLarge> {
        let mut events = Vec::new();
        if bytes.is_empty() {
            // An empty chunk (an empty HTTP/2 DATA frame) between a `\r` and its `\n` must not
            // make that `\n` a line of its own.
            return Ok(events);
        }
        let mut rest = bytes;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..i]);
            let ending = rest[i];
            rest = &rest[i + 1..];
            if ending == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.on_line(&line)? {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > self.max_event {
            return Err(SseTooLarge { limit: self.max_event });
        }
        Ok(events)
    }

    fn on_line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, SseTooLarge> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                // The `\n` joining this line to the previous ones counts too.
                if self.data.len() + usize::from(self.has_data) + value.len() > self.max_event {
                    return Err(SseTooLarge { limit: self.max_event });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        let has_data = std::mem::replace(&mut self.has_data, false);
        let data = std::mem::take(&mut self.data);
        if !has_data || data.is_empty() {
            return None;
        }
        Some(SseEvent {
            event: if event.is_empty() { "message".to_owned() } else { event },
            data,
            id: self.last_event_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseParser) {
        let mut p = SseParser::new(1 << 20);
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c).unwrap());
        }
        (out, p)
    }

    #[test]
    fn what_is_written_reads_back() {
        let (ev, p) = all(&[
            &KEEP_ALIVE,
            &priming_event("3-0", Duration::from_millis(250)),
            &message_event(Some("3-1"), br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            &message_event(None, br#"{"a":1}"#),
            &retry_field(Duration::from_secs(2)),
        ]);
        let message =
            |data: &str, id: &str| SseEvent { event: "message".into(), data: data.into(), id: Some(id.into()) };
        assert_eq!(ev, [message(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "3-1"), message(r#"{"a":1}"#, "3-1")]);
        assert_eq!((p.last_event_id(), p.retry_ms()), (Some("3-1"), Some(2000)));
        assert_eq!(&message_event(None, b"{}")[..], b"event: message\ndata: {}\n\n");
        assert_eq!(&message_event(Some("1-2"), b"{}")[..], b"id: 1-2\nevent: message\ndata: {}\n\n");
        assert_eq!(&retry_field(Duration::from_millis(500))[..], b"retry: 500\n\n");
    }

    #[test]
    fn parses_events_comments_and_fields() {
        let (ev, p) =
            all(&[b": keep-alive\n\nevent: message\ndata: {\"a\":1}\n\nid: 7\nretry: 500\ndata: x\ndata: y\n\n"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].data, "{\"a\":1}");
        assert_eq!(ev[0].event, "message");
        assert_eq!(ev[1].data, "x\ny");
        assert_eq!(ev[1].id.as_deref(), Some("7"));
        assert_eq!(p.retry_ms(), Some(500));
    }

    #[test]
    fn priming_event_sets_id_without_dispatching() {
        let (ev, p) = all(&[b"id: event-1\nretry: 500\ndata: \n\n"]);
        assert!(ev.is_empty());
        assert_eq!(p.last_event_id(), Some("event-1"));
        assert_eq!(p.retry_ms(), Some(500));
    }

    #[test]
    fn handles_split_chunks_and_every_line_ending() {
        let (ev, _) = all(&[b"da", b"ta: one\r", b"\n\r", b"\ndata:two\r\rdata: three\n", b"\n"]);
        let data: Vec<_> = ev.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["one", "two", "three"]);
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_is_no_line() {
        // Found by the sse fuzz target (fuzz/regressions/sse/empty-chunk-after-cr): the empty
        // chunk used to forget the pending `\r`, so the `\n` ended the event early.
        let (ev, _) = all(&[b"data: a\r", b"", b"\ndata: b\n\n"]);
        let data: Vec<_> = ev.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["a\nb"]);
    }

    #[test]
    fn the_newlines_joining_data_lines_count_against_the_limit() {
        // Found by the sse fuzz target: an event of `max_event + 1` bytes used to pass.
        let mut p = SseParser::new(8);
        assert!(p.push(b"data: 1234\ndata: 5678\n").is_err());
        let mut p = SseParser::new(8);
        assert_eq!(p.push(b"data: 1234\ndata: 567\n\n").unwrap()[0].data, "1234\n567");
        let mut p = SseParser::new(8);
        assert!(p.push(&b"data:\n".repeat(10)).is_err());
    }

    #[test]
    fn refuses_oversized_events() {
        let mut p = SseParser::new(8);
        assert!(p.push(b"data: 0123456789\n").is_err());
        let mut p = SseParser::new(8);
        assert!(p.push(b"data: 0123456789").is_err());
    }
}
