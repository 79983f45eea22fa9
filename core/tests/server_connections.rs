//! The connection limits of the Streamable HTTP server over real sockets: each timeout one past
//! its limit (and a client within it served), idle connections shed first when the server is
//! full, listen streams with keep-alives outliving the idle timeout, HTTP/2 keep-alive pings.

use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::{RequestContext, Server};
use mcpaxle::transport::http::{ConnectionLimits, HttpOptions, HttpServer};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

const V: &str = "2026-07-28";

fn call(id: u64, method: &str, mut params: Value) -> Vec<u8> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).unwrap()
}

fn head(addr: SocketAddr, method: &str, name: Option<&str>, len: usize) -> String {
    let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: {V}\r\nMcp-Method: {method}\r\n{name}Content-Length: {len}\r\n\r\n",
        addr.port()
    )
}

/// Writes one `tools/call` of `tool` on `s`.
async fn send_call(s: &mut TcpStream, tool: &str) {
    let addr = s.peer_addr().unwrap();
    let body = call(1, "tools/call", json!({ "name": tool, "arguments": {} }));
    s.write_all(head(addr, "tools/call", Some(tool), body.len()).as_bytes()).await.unwrap();
    s.write_all(&body).await.unwrap();
}

/// Reads one response with a Content-Length: its status, headers (lowercase) and body.
async fn response(s: &mut TcpStream) -> (u16, String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed before a response: {}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let h = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = h
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = s.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the connection closed inside a response");
                buf.extend_from_slice(&chunk[..n]);
            }
            let status = h.split_whitespace().nth(1).unwrap().parse().unwrap();
            return (status, h, buf[end + 4..end + 4 + len].to_vec());
        }
    }
}

/// Whether the server closes `s` within `within` (reading and discarding anything it sends).
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut chunk = [0u8; 4096];
    let r = tokio::time::timeout(within, async {
        loop {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    r.is_ok()
}

/// A server with `echo`, and `hold`, which waits for a permit of `gate`.
async fn start(limits: ConnectionLimits, gate: Arc<Semaphore>) -> HttpServer {
    let server = Server::builder("conn-test", "1").build();
    server
        .add_tool(Tool::new("echo", "Echoes", json!({ "type": "object" })), |_a: Value, _c| async move {
            Ok(CallToolResult::text("ok"))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("hold", "Waits for the test", json!({ "type": "object" })),
            move |_a: Value, _c: RequestContext| {
                let gate = gate.clone();
                async move {
                    let _permit = gate.acquire().await;
                    Ok(CallToolResult::text("released"))
                }
            },
        )
        .unwrap();
    let options = HttpOptions { keep_alive: Duration::from_millis(100), connections: limits, ..Default::default() };
    HttpServer::bind(server, "127.0.0.1:0".parse().unwrap(), options).await.unwrap()
}

fn limits() -> ConnectionLimits {
    ConnectionLimits {
        header_read_timeout: Duration::from_secs(30),
        body_read_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(30),
        ..Default::default()
    }
}

const LIMIT: Duration = Duration::from_millis(300);
/// Scheduling slack on a loaded machine.
const SLACK: Duration = Duration::from_secs(2);

#[tokio::test]
async fn header_read_timeout_closes_slow_headers_and_spares_prompt_ones() {
    let http = start(ConnectionLimits { header_read_timeout: LIMIT, ..limits() }, Arc::new(Semaphore::new(0))).await;
    let a = http.local_addr();
    // A bare connect and partial headers: closed once the limit has passed, not before.
    let mut bare = TcpStream::connect(a).await.unwrap();
    let mut partial = TcpStream::connect(a).await.unwrap();
    partial.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut bare, LIMIT + SLACK).await, "a bare connect outlived the header timeout");
    assert!(started.elapsed() >= LIMIT - Duration::from_millis(20), "closed before the header timeout");
    assert!(closed_within(&mut partial, SLACK).await, "partial headers outlived the header timeout");
    // Headers in well within the limit: served, and the next request on the same connection
    // gets a header timeout of its own, from its first byte.
    let mut ok = TcpStream::connect(a).await.unwrap();
    send_call(&mut ok, "echo").await;
    assert_eq!(response(&mut ok).await.0, 200);
    tokio::time::sleep(LIMIT * 2).await;
    ok.write_all(b"POST /mcp HTTP/1.1\r\n").await.unwrap();
    let started = Instant::now();
    assert!(
        closed_within(&mut ok, LIMIT + SLACK).await,
        "slow headers on a keep-alive connection outlived the header timeout"
    );
    assert!(started.elapsed() >= LIMIT - Duration::from_millis(20));
    http.shutdown().await;
}

#[tokio::test]
async fn a_body_slower_than_its_deadline_gets_408_with_a_json_rpc_error() {
    let http = start(ConnectionLimits { body_read_timeout: LIMIT, ..limits() }, Arc::new(Semaphore::new(0))).await;
    let a = http.local_addr();
    let body = call(1, "tools/call", json!({ "name": "echo", "arguments": {} }));
    let mut s = TcpStream::connect(a).await.unwrap();
    s.write_all(head(a, "tools/call", Some("echo"), body.len()).as_bytes()).await.unwrap();
    s.write_all(&body[..10]).await.unwrap();
    let started = Instant::now();
    let (status, h, b) = tokio::time::timeout(LIMIT + SLACK, response(&mut s)).await.expect("no 408 in time");
    assert!(started.elapsed() >= LIMIT - Duration::from_millis(20));
    assert_eq!(status, 408);
    assert!(h.contains("content-type: application/json"), "{h}");
    let e: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(e["error"]["code"], json!(-32600));
    let message = e["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Request Timeout") && message.contains("300 ms") && message.contains("bodyReadTimeoutMs"),
        "{message}"
    );
    assert!(closed_within(&mut s, SLACK).await, "the connection stays open after the 408");
    // A body that arrives in pieces within the deadline is served.
    let mut s = TcpStream::connect(a).await.unwrap();
    s.write_all(head(a, "tools/call", Some("echo"), body.len()).as_bytes()).await.unwrap();
    s.write_all(&body[..10]).await.unwrap();
    tokio::time::sleep(LIMIT / 3).await;
    s.write_all(&body[10..]).await.unwrap();
    assert_eq!(response(&mut s).await.0, 200);
    http.shutdown().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_close_after_the_idle_timeout() {
    let http = start(ConnectionLimits { idle_timeout: LIMIT, ..limits() }, Arc::new(Semaphore::new(0))).await;
    let a = http.local_addr();
    let mut s = TcpStream::connect(a).await.unwrap();
    send_call(&mut s, "echo").await;
    assert_eq!(response(&mut s).await.0, 200);
    // Within the idle timeout the connection is reused.
    tokio::time::sleep(LIMIT / 3).await;
    send_call(&mut s, "echo").await;
    assert_eq!(response(&mut s).await.0, 200);
    let started = Instant::now();
    assert!(closed_within(&mut s, LIMIT + SLACK).await, "an idle connection outlived the idle timeout");
    assert!(started.elapsed() >= LIMIT - Duration::from_millis(20), "closed before the idle timeout");
    http.shutdown().await;
}

#[tokio::test]
async fn timeouts_longer_than_an_instant_holds_mean_never() {
    let never = ConnectionLimits { header_read_timeout: Duration::MAX, idle_timeout: Duration::MAX, ..limits() };
    let http = start(never, Arc::new(Semaphore::new(0))).await;
    let mut s = TcpStream::connect(http.local_addr()).await.unwrap();
    send_call(&mut s, "echo").await;
    assert_eq!(response(&mut s).await.0, 200);
    assert!(!closed_within(&mut s, LIMIT).await, "an idle connection closed although its timeouts never pass");
    send_call(&mut s, "echo").await;
    assert_eq!(response(&mut s).await.0, 200);
    http.shutdown().await;
}

#[tokio::test]
async fn a_running_handler_and_a_listen_stream_are_not_idle() {
    let gate = Arc::new(Semaphore::new(0));
    let short = ConnectionLimits { header_read_timeout: LIMIT, idle_timeout: LIMIT, ..limits() };
    let http = start(short, gate.clone()).await;
    let a = http.local_addr();
    // A handler that runs for 4 idle timeouts.
    let mut busy = TcpStream::connect(a).await.unwrap();
    send_call(&mut busy, "hold").await;
    // A listen stream: keep-alive comments every 100 ms, for 4 idle timeouts.
    let mut listen = TcpStream::connect(a).await.unwrap();
    let b = call(2, "subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } }));
    listen.write_all(head(a, "subscriptions/listen", None, b.len()).as_bytes()).await.unwrap();
    listen.write_all(&b).await.unwrap();
    let mut seen = Vec::new();
    let until = Instant::now() + LIMIT * 4;
    let mut chunk = [0u8; 4096];
    while Instant::now() < until {
        match tokio::time::timeout(until - Instant::now(), listen.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => panic!("the listen stream was closed: {}", String::from_utf8_lossy(&seen)),
            Ok(Ok(n)) => seen.extend_from_slice(&chunk[..n]),
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&seen);
    assert!(text.matches(": keep-alive").count() >= 3, "{text}");
    gate.add_permits(1);
    let (status, _, body) = response(&mut busy).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("released"));
    http.shutdown().await;
}

#[tokio::test]
async fn a_full_server_closes_the_least_recently_busy_idle_connection_first() {
    let gate = Arc::new(Semaphore::new(0));
    let http = start(ConnectionLimits { max_connections: Some(3), ..limits() }, gate.clone()).await;
    let a = http.local_addr();
    // 1: busy (a handler running); 2: a bare connect; 3: idle after a request.
    let mut busy = TcpStream::connect(a).await.unwrap();
    send_call(&mut busy, "hold").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut bare = TcpStream::connect(a).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut idle = TcpStream::connect(a).await.unwrap();
    send_call(&mut idle, "echo").await;
    assert_eq!(response(&mut idle).await.0, 200);
    // 4: the bare connect (idle, least recently busy) makes room.
    let mut fourth = TcpStream::connect(a).await.unwrap();
    assert!(closed_within(&mut bare, SLACK).await, "the least recently busy idle connection was not closed");
    send_call(&mut fourth, "echo").await;
    assert_eq!(response(&mut fourth).await.0, 200);
    // 5: now the connection idle the longest is `idle`; the busy one is never closed.
    let mut fifth = TcpStream::connect(a).await.unwrap();
    assert!(closed_within(&mut idle, SLACK).await, "the idle connection was not closed");
    send_call(&mut fifth, "echo").await;
    assert_eq!(response(&mut fifth).await.0, 200);
    gate.add_permits(1);
    assert_eq!(response(&mut busy).await.0, 200);
    http.shutdown().await;
}

#[tokio::test]
async fn a_server_full_of_busy_connections_closes_new_ones() {
    let gate = Arc::new(Semaphore::new(0));
    let http = start(ConnectionLimits { max_connections: Some(2), ..limits() }, gate.clone()).await;
    let a = http.local_addr();
    let mut first = TcpStream::connect(a).await.unwrap();
    send_call(&mut first, "hold").await;
    let mut second = TcpStream::connect(a).await.unwrap();
    send_call(&mut second, "hold").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = TcpStream::connect(a).await.unwrap();
    assert!(closed_within(&mut third, SLACK).await, "a third connection was kept although both others are busy");
    gate.add_permits(2);
    assert_eq!(response(&mut first).await.0, 200);
    assert_eq!(response(&mut second).await.0, 200);
    // Idle now: a new connection is served again.
    let mut fourth = TcpStream::connect(a).await.unwrap();
    send_call(&mut fourth, "echo").await;
    assert_eq!(response(&mut fourth).await.0, 200);
    http.shutdown().await;
}

#[tokio::test]
async fn one_host_holding_every_connection_busy_does_not_lock_out_another() {
    let gate = Arc::new(Semaphore::new(0));
    let http = start(ConnectionLimits { max_connections: Some(4), ..limits() }, gate.clone()).await;
    let a = http.local_addr();
    // 127.0.0.1 holds the whole table with running handlers (as listen streams would).
    let mut hog = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(a).await.unwrap();
        send_call(&mut s, "hold").await;
        hog.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Its next connection is refused...
    let mut more = TcpStream::connect(a).await.unwrap();
    assert!(closed_within(&mut more, SLACK).await, "the host holding every connection got another one");
    // ...but another host (127.0.0.2, loopback too) is served at once, at the cost of the
    // hog's oldest connection.
    let other = tokio::net::TcpSocket::new_v4().unwrap();
    other.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut other = other.connect(a).await.unwrap();
    let started = std::time::Instant::now();
    send_call(&mut other, "echo").await;
    assert_eq!(response(&mut other).await.0, 200);
    assert!(started.elapsed() < Duration::from_secs(1), "served in {:?}", started.elapsed());
    assert!(closed_within(&mut hog[0], SLACK).await, "the hog's oldest connection was kept");
    gate.add_permits(3);
    for s in &mut hog[1..] {
        assert_eq!(response(s).await.0, 200);
    }
    http.shutdown().await;
}

/// The frames (type, flags) an HTTP/2 server sends on a prior-knowledge connection in `within`.
async fn h2_frames(addr: SocketAddr, within: Duration) -> (Vec<(u8, u8)>, bool) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.unwrap();
    // An empty SETTINGS frame.
    s.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
    let mut frames = Vec::new();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let until = tokio::time::Instant::now() + within;
    let closed = loop {
        match tokio::time::timeout_at(until, s.read(&mut chunk)).await {
            Err(_) => break false,
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
        }
        while buf.len() >= 9 {
            let len = (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
            if buf.len() < 9 + len {
                break;
            }
            let (kind, flags) = (buf[3], buf[4]);
            frames.push((kind, flags));
            // ACK the server's SETTINGS; leave its PINGs unanswered.
            if kind == 4 && flags & 1 == 0 {
                s.write_all(&[0, 0, 0, 4, 1, 0, 0, 0, 0]).await.unwrap();
            }
            buf.drain(..9 + len);
        }
    };
    (frames, closed)
}

const PING: u8 = 6;

#[tokio::test]
async fn http2_keep_alive_pings_follow_the_option() {
    let with = ConnectionLimits {
        http2_keep_alive_interval: Some(Duration::from_millis(100)),
        http2_keep_alive_timeout: LIMIT,
        ..limits()
    };
    let http = start(with, Arc::new(Semaphore::new(0))).await;
    let (frames, closed) = h2_frames(http.local_addr(), Duration::from_millis(100) + LIMIT + SLACK).await;
    assert!(frames.iter().any(|&(k, f)| k == PING && f & 1 == 0), "no PING from the server: {frames:?}");
    assert!(closed, "a peer that answers no PING was not closed after the keep-alive timeout");
    http.shutdown().await;
    // Without pings: none within the same time, and the connection stays.
    let without = ConnectionLimits { http2_keep_alive_interval: None, ..limits() };
    let http = start(without, Arc::new(Semaphore::new(0))).await;
    let (frames, closed) = h2_frames(http.local_addr(), Duration::from_millis(600)).await;
    assert!(!frames.iter().any(|&(k, _)| k == PING), "{frames:?}");
    assert!(!closed);
    http.shutdown().await;
}

const GOAWAY: u8 = 7;

#[tokio::test]
async fn an_http2_connection_closed_to_make_room_is_told_so_with_goaway() {
    let http = start(ConnectionLimits { max_connections: Some(2), ..limits() }, Arc::new(Semaphore::new(0))).await;
    let a = http.local_addr();
    let h2 = tokio::spawn(h2_frames(a, SLACK * 2));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Two newer connections: the HTTP/2 one, idle the longest, makes room.
    let _b = TcpStream::connect(a).await.unwrap();
    let _c = TcpStream::connect(a).await.unwrap();
    let (frames, closed) = h2.await.unwrap();
    assert!(frames.iter().any(|&(k, _)| k == GOAWAY), "no GOAWAY before the close: {frames:?}");
    assert!(closed, "the HTTP/2 connection was not closed to make room");
    http.shutdown().await;
}

#[tokio::test]
async fn bad_limits_are_refused_at_bind_with_a_clear_error() {
    let server = Server::builder("conn-test", "1").build();
    let options = HttpOptions {
        connections: ConnectionLimits { max_header_bytes: 100, ..Default::default() },
        ..Default::default()
    };
    let e = HttpServer::bind(server, "127.0.0.1:0".parse().unwrap(), options)
        .await
        .err()
        .expect("bind accepted maxHeaderBytes 100");
    assert!(e.to_string().contains("maxHeaderBytes must be at least 8192"), "{e}");
}

#[tokio::test]
async fn bodies_past_the_in_flight_budget_get_503_and_the_rest_are_served() {
    let http =
        start(ConnectionLimits { max_body_bytes_in_flight: 10_000, ..limits() }, Arc::new(Semaphore::new(0))).await;
    let a = http.local_addr();
    let padded = |n: usize| call(1, "tools/call", json!({ "name": "echo", "arguments": { "pad": "x".repeat(n) } }));
    // 8,000 bytes of a body held by a slow sender.
    let slow = padded(8_500);
    let mut first = TcpStream::connect(a).await.unwrap();
    first.write_all(head(a, "tools/call", Some("echo"), slow.len()).as_bytes()).await.unwrap();
    first.write_all(&slow[..8_000]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // 5,000 more would pass 10,000.
    let big = padded(5_000);
    let mut second = TcpStream::connect(a).await.unwrap();
    second.write_all(head(a, "tools/call", Some("echo"), big.len()).as_bytes()).await.unwrap();
    let _ = second.write_all(&big).await;
    let (status, h, b) = response(&mut second).await;
    assert_eq!(status, 503);
    assert!(h.contains("retry-after: 1"), "{h}");
    let e: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(e["error"]["code"], json!(-32000));
    assert!(e["error"]["message"].as_str().unwrap().contains("too many request bodies"), "{e}");
    // A small one still fits, and so does the slow one once it is all in.
    let mut third = TcpStream::connect(a).await.unwrap();
    send_call(&mut third, "echo").await;
    assert_eq!(response(&mut third).await.0, 200);
    first.write_all(&slow[8_000..]).await.unwrap();
    assert_eq!(response(&mut first).await.0, 200);
    // Its bytes are given back: the big one is served now.
    let mut fourth = TcpStream::connect(a).await.unwrap();
    fourth.write_all(head(a, "tools/call", Some("echo"), big.len()).as_bytes()).await.unwrap();
    fourth.write_all(&big).await.unwrap();
    assert_eq!(response(&mut fourth).await.0, 200);
    http.shutdown().await;
}

#[tokio::test]
async fn a_connection_still_sending_its_body_is_idle_and_can_be_shed() {
    let gate = Arc::new(Semaphore::new(0));
    let http = start(ConnectionLimits { max_connections: Some(2), ..limits() }, gate.clone()).await;
    let a = http.local_addr();
    // 1: headers in, body still arriving; 2: a handler running.
    let body = call(1, "tools/call", json!({ "name": "echo", "arguments": {} }));
    let mut slow = TcpStream::connect(a).await.unwrap();
    slow.write_all(head(a, "tools/call", Some("echo"), body.len()).as_bytes()).await.unwrap();
    slow.write_all(&body[..10]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut busy = TcpStream::connect(a).await.unwrap();
    send_call(&mut busy, "hold").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // 3: the slow sender makes room, the handler keeps running.
    let mut third = TcpStream::connect(a).await.unwrap();
    assert!(closed_within(&mut slow, SLACK).await, "a connection still sending its body was kept over a new one");
    send_call(&mut third, "echo").await;
    assert_eq!(response(&mut third).await.0, 200);
    gate.add_permits(1);
    assert_eq!(response(&mut busy).await.0, 200);
    http.shutdown().await;
}
