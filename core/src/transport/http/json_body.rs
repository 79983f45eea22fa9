//! A JSON answer serialized straight into the chunks of its HTTP body.
//!
//! Serializing into one `Vec` grows it by doubling: a 1 MB result is copied about twice more
//! on the way, and each large buffer is fresh memory the kernel has to fault in and zero. Here
//! the JSON goes into chunks that grow from 1 KiB to at most 64 KiB, small enough for the
//! allocator to reuse freed ones; hyper writes them out one after the other, without joining
//! them. A small answer is one chunk, as before.

use crate::json_text;
use crate::jsonrpc::Response;
use bytes::Bytes;
use std::collections::VecDeque;
use std::io;

/// The first chunk's capacity: most answers fit in it.
const FIRST_CHUNK: usize = 1024;
/// The largest chunk: below glibc's mmap threshold (128 KiB), so chunks come from, and go
/// back to, the allocator's free lists.
const LARGEST_CHUNK: usize = 64 * 1024;

/// A body's chunks, filled in order.
#[derive(Default)]
pub(crate) struct Chunks {
    full: VecDeque<Bytes>,
    current: Vec<u8>,
}

impl Chunks {
    /// A JSON-RPC response's text as chunks, none of them empty ([`crate::json_text`]:
    /// strings scanned eight bytes at a time).
    pub(crate) fn response(response: &Response) -> VecDeque<Bytes> {
        let mut chunks = Chunks { full: VecDeque::new(), current: Vec::with_capacity(FIRST_CHUNK) };
        // Writing into memory cannot fail.
        let _ = json_text::write_response(&mut chunks, response);
        chunks.finish()
    }

    fn finish(mut self) -> VecDeque<Bytes> {
        if !self.current.is_empty() {
            self.full.push_back(Bytes::from(self.current));
        }
        self.full
    }

    /// Writes what does not fit in the current chunk: fills it, then the next ones.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, mut buf: &[u8]) {
        while !buf.is_empty() {
            let room = self.current.capacity() - self.current.len();
            if room == 0 {
                self.next_chunk();
                continue;
            }
            let n = room.min(buf.len());
            self.current.extend_from_slice(&buf[..n]);
            buf = &buf[n..];
        }
    }

    /// Closes the current chunk and starts one twice its size (up to [`LARGEST_CHUNK`]).
    fn next_chunk(&mut self) {
        let size = (self.current.capacity() * 2).clamp(FIRST_CHUNK, LARGEST_CHUNK);
        let done = std::mem::replace(&mut self.current, Vec::with_capacity(size));
        if !done.is_empty() {
            self.full.push_back(Bytes::from(done));
        }
    }
}

impl io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if buf.len() <= self.current.capacity() - self.current.len() {
            self.current.extend_from_slice(buf); // the usual case: it fits
        } else {
            self.spill(buf);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;
    use serde_json::{Value, json};

    fn chunks(result: Value) -> (VecDeque<Bytes>, Vec<u8>) {
        let response = Response::result(RequestId::Number(1), result);
        (Chunks::response(&response), serde_json::to_vec(&response).unwrap())
    }

    fn joined(chunks: &VecDeque<Bytes>) -> Vec<u8> {
        chunks.iter().flat_map(|c| c.iter().copied()).collect()
    }

    #[test]
    fn the_chunks_join_to_the_json_text() {
        for value in [json!({}), json!({"a": "b"}), json!({"text": "x\"y\n".repeat(300_000)}), json!([1, 2, 3])] {
            let (chunks, text) = chunks(value);
            assert_eq!(joined(&chunks), text);
            assert!(chunks.iter().all(|c| !c.is_empty() && c.len() <= LARGEST_CHUNK));
        }
    }

    #[test]
    fn a_small_answer_is_one_chunk_and_a_large_one_is_cut_at_the_largest_size() {
        assert_eq!(chunks(json!({"ok": true})).0.len(), 1);
        let big = chunks(json!("y".repeat(1_000_000))).0;
        assert!(big.len() > 10);
        assert!(big.iter().skip(6).take(big.len() - 7).all(|c| c.len() == LARGEST_CHUNK));
    }
}
