//! The one line reader of both sides of stdio: newline-delimited JSON-RPC read with
//! tokio-util's [`AnyDelimiterCodec`], bounded by a maximum line length.
//!
//! Bytes, not text: a line that is not UTF-8 reaches the JSON-RPC parser (which answers it
//! with a parse error) instead of ending the input, which is why this is not `LinesCodec`.

use bytes::{Bytes, BytesMut};
use std::io;
use tokio::io::AsyncRead;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder, FramedRead};

/// How much input is read at once.
const READ_CAPACITY: usize = 64 * 1024;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line, without its `\n` nor a `\r` before it (the last line may lack the `\n`).
    Data(Bytes),
    /// A line longer than the limit: reported once, as soon as it passes the limit, and
    /// skipped up to its `\n` without being held.
    TooLong,
}

/// The lines of `input`, none longer than `max` bytes (without the `\n`); the stream ends at
/// end of input, after an I/O error (yielded first).
pub(crate) fn lines<R: AsyncRead>(input: R, max: usize) -> FramedRead<R, LineCodec> {
    let codec = AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), b"\n".to_vec(), max);
    FramedRead::with_capacity(input, LineCodec(codec), READ_CAPACITY)
}

/// [`AnyDelimiterCodec`] with a line past the limit as an item ([`Line::TooLong`]) instead of
/// an error, which would end the stream.
pub(crate) struct LineCodec(AnyDelimiterCodec);

impl LineCodec {
    fn line(r: Result<Option<Bytes>, AnyDelimiterCodecError>) -> io::Result<Option<Line>> {
        match r {
            Ok(Some(mut b)) => {
                if b.last() == Some(&b'\r') {
                    b.truncate(b.len() - 1);
                }
                Ok(Some(Line::Data(b)))
            }
            Ok(None) => Ok(None),
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => Ok(Some(Line::TooLong)),
            Err(AnyDelimiterCodecError::Io(e)) => Err(e),
        }
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        Self::line(self.0.decode(buf))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        Self::line(self.0.decode_eof(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    async fn read(input: &'static [u8], max: usize) -> Vec<Line> {
        lines(input, max).map(|l| l.unwrap()).collect().await
    }

    fn data(s: &'static str) -> Line {
        Line::Data(Bytes::from_static(s.as_bytes()))
    }

    #[tokio::test]
    async fn splits_on_newlines_and_drops_a_carriage_return_before_them() {
        assert_eq!(read(b"a\nbc\r\n\n  \nlast", 16).await, [data("a"), data("bc"), data(""), data("  "), data("last")]);
        assert_eq!(read(b"", 16).await, []);
    }

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_a_line() {
        assert_eq!(read(b"\xff\xfe\n{}\n", 16).await, [Line::Data(Bytes::from_static(b"\xff\xfe")), data("{}")]);
    }

    #[tokio::test]
    async fn a_line_of_the_limit_passes_one_past_it_is_skipped_once() {
        assert_eq!(read(b"12345\n123456\nok\n", 5).await, [data("12345"), Line::TooLong, data("ok")]);
        assert_eq!(read(b"ok\n1234567890123", 5).await, [data("ok"), Line::TooLong]);
    }

    #[tokio::test]
    async fn a_long_line_is_skipped_however_it_arrives() {
        let (mut tx, rx) = tokio::io::duplex(4);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            tx.write_all(&[b'x'; 100]).await.unwrap();
            tx.write_all(b"\n{}\n").await.unwrap();
        });
        let got: Vec<Line> = lines(rx, 10).map(|l| l.unwrap()).collect().await;
        writer.await.unwrap();
        assert_eq!(got, [Line::TooLong, data("{}")]);
    }
}
