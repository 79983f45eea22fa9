//! Raw HTTP/1.1 exchanges with a server under test: what a test sends is exactly the bytes it
//! wrote, and what it reads back is the status, the headers and the (de-chunked) body.

use serde_json::Value;
use std::net::SocketAddr;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A raw HTTP/1.1 exchange: the status, the headers (lowercased names), and the body
/// (de-chunked).
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    /// The JSON messages of an SSE body.
    pub fn events(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .split("\n\n")
            .filter_map(|ev| ev.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    /// Whether any CORS header (`access-control-*`) came back.
    pub fn has_cors(&self) -> bool {
        self.headers.iter().any(|(n, _)| n.starts_with("access-control-"))
    }
}

/// Sends `head` (the request line and headers, up to the blank line) and `payload` as they are.
pub async fn send_raw(addr: SocketAddr, head: &str, payload: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    // A server may answer (413) and close before reading a large body: that is fine.
    let _ = s.write_all(payload).await;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).await.unwrap();
    let status = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).await.unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').unwrap();
        headers.push((n.to_ascii_lowercase(), v.trim().to_owned()));
    }
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).await.unwrap();
            let n = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).await.unwrap();
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        r.read_to_end(&mut body).await.unwrap();
    }
    Reply { status, headers, body }
}
