//! Acceptance test of the connection limits (issue 10): a server process whose file-descriptor
//! limit is 1,024 (soft and hard), 2,000 idle or slow connections from one client (bare TCP
//! connects, partial headers, bodies shorter than their Content-Length, idle keep-alive after
//! one request), and a well-behaved client still served within 1 s while the server's RSS
//! stays bounded.
//!
//! Its own harness (`harness = false`): the same binary is the server child when started as
//! `connections_load serve` (see `main`). `MCPAXLE_MEASURE=1` instead opens connections in
//! steps (of 50; of 5 near 1,024) and prints after how many a well-behaved client is refused
//! or times out.

use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::Server;
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use serde_json::{Value, json};
use std::io::BufRead;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SERVER_FDS: u64 = 1024;
const ATTACK: usize = 2000;
/// What the server may grow by (VmRSS) while holding or shedding 2,000 connections.
const MAX_RSS_GROWTH_KB: u64 = 48 * 1024;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return serve();
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if std::env::var_os("MCPAXLE_MEASURE").is_some() {
        rt.block_on(measure());
    } else {
        let started = Instant::now();
        rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), acceptance()).await })
            .expect("the acceptance test took over 60 s");
        println!("connections_load: ok ({:.1} s)", started.elapsed().as_secs_f64());
    }
}

/// The server child: an `echo` tool on an HTTP server with the default options, its port on
/// stdout, until stdin closes.
fn serve() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let server = Server::builder("load", "1").build();
        server
            .add_tool(Tool::new("echo", "Echoes", json!({ "type": "object" })), |a: Value, _c| async move {
                Ok(CallToolResult::text(a.to_string()))
            })
            .unwrap();
        let http = HttpServer::bind(server, "127.0.0.1:0".parse().unwrap(), HttpOptions::default()).await.unwrap();
        println!("{}", http.local_addr().port());
        tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        })
        .await
        .unwrap();
        http.shutdown().await;
    });
}

/// The soft limit of this process's descriptors raised to what 2,000 sockets need.
// rlim_t is u64 on Linux, another integer elsewhere.
#[allow(clippy::unnecessary_cast)]
fn raise_own_fd_limit() {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit with a valid pointer.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut r), 0);
        let want = (ATTACK as u64 + 512).min(r.rlim_max as u64);
        assert!(want >= ATTACK as u64 + 256, "the hard fd limit ({}) is too low for this test", r.rlim_max);
        if (r.rlim_cur as u64) < want {
            r.rlim_cur = want as _;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &r), 0);
        }
    }
}

struct Child_ {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Child_ {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_server() -> Child_ {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.arg("serve").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit { rlim_cur: SERVER_FDS as _, rlim_max: SERVER_FDS as _ };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port: u16 = line.trim().parse().unwrap_or_else(|_| panic!("the server child printed {line:?}"));
    Child_ { child, addr: SocketAddr::from(([127, 0, 0, 1], port)) }
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn call_body(id: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "echo", "arguments": { "n": id }, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "load", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": {}
        } }
    }))
    .unwrap()
}

fn call_head(addr: SocketAddr, len: usize, close: bool) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {len}\r\n{}\r\n",
        addr.port(),
        if close { "Connection: close\r\n" } else { "" }
    )
}

/// Reads one HTTP/1.1 response with a Content-Length; its status.
async fn read_response(s: &mut TcpStream) -> std::io::Result<u16> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = s.read(&mut chunk).await?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Ok(head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0));
        }
    }
}

/// A well-behaved client: connect, one `tools/call`, the answer; how long it took.
async fn good_client(addr: SocketAddr) -> std::result::Result<Duration, String> {
    let started = Instant::now();
    let attempt = async {
        let mut s = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        let body = call_body(1);
        s.write_all(call_head(addr, body.len(), true).as_bytes()).await.map_err(|e| format!("write: {e}"))?;
        s.write_all(&body).await.map_err(|e| format!("write: {e}"))?;
        match read_response(&mut s).await {
            Ok(200) => Ok(()),
            Ok(status) => Err(format!("status {status}")),
            Err(e) => Err(format!("read: {e}")),
        }
    };
    match tokio::time::timeout(Duration::from_secs(1), attempt).await {
        Ok(Ok(())) => Ok(started.elapsed()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("no answer within 1 s".into()),
    }
}

/// Opens connection number `i` of the attack: the kinds in turn. `None` when the server
/// refused or dropped it at once.
async fn hostile(addr: SocketAddr, i: usize) -> Option<TcpStream> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    match i % 4 {
        // A bare TCP connect.
        0 => {}
        // Partial headers.
        1 => s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty").await.ok()?,
        // A body shorter than its Content-Length.
        2 => {
            let body = call_body(i as u64);
            s.write_all(call_head(addr, body.len() + 100, false).as_bytes()).await.ok()?;
            s.write_all(&body).await.ok()?;
        }
        // Idle keep-alive after one request.
        _ => {
            let body = call_body(i as u64);
            s.write_all(call_head(addr, body.len(), false).as_bytes()).await.ok()?;
            s.write_all(&body).await.ok()?;
            tokio::time::timeout(Duration::from_secs(2), read_response(&mut s)).await.ok()?.ok()?;
        }
    }
    Some(s)
}

async fn acceptance() {
    raise_own_fd_limit();
    let server = spawn_server();
    let addr = server.addr;
    let pid = server.child.id();
    good_client(addr).await.expect("the server serves before the attack");
    let rss_before = rss_kb(pid);
    let mut held = Vec::with_capacity(ATTACK);
    let mut worst = Duration::ZERO;
    for i in 0..ATTACK {
        if let Some(s) = hostile(addr, i).await {
            held.push(s);
        }
        if i % 250 == 249 {
            let took = good_client(addr)
                .await
                .unwrap_or_else(|e| panic!("a good client after {} hostile connections: {e}", i + 1));
            worst = worst.max(took);
        }
    }
    for _ in 0..20 {
        let took = good_client(addr)
            .await
            .unwrap_or_else(|e| panic!("a good client with {ATTACK} hostile connections opened: {e}"));
        worst = worst.max(took);
    }
    let rss_after = rss_kb(pid);
    // The ones the server closed to make room read as EOF (or a reset).
    let mut closed = 0;
    for s in &held {
        let mut byte = [0u8; 1];
        match s.try_read(&mut byte) {
            Ok(0) => closed += 1,
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => closed += 1,
            _ => {}
        }
    }
    println!(
        "connections_load: {ATTACK} hostile connections opened ({} refused at connect), {closed} of them closed by the server; \
         good client at worst {:.1} ms; server RSS {rss_before} kB -> {rss_after} kB",
        ATTACK - held.len(),
        worst.as_secs_f64() * 1000.0
    );
    assert!(
        rss_after <= rss_before + MAX_RSS_GROWTH_KB,
        "the server's RSS grew from {rss_before} kB to {rss_after} kB"
    );
    drop(held);
}

/// Opens hostile connections in steps until a good client fails (or 2,000 are open).
async fn measure() {
    raise_own_fd_limit();
    let server = spawn_server();
    let addr = server.addr;
    let pid = server.child.id();
    let rss_before = rss_kb(pid);
    let mut held = Vec::new();
    for i in 0..ATTACK {
        if let Some(s) = hostile(addr, i).await {
            held.push(s);
        }
        // Every 50, and every 5 near the 1,024 descriptors of the server.
        if i % 50 == 49 || ((950..1100).contains(&i) && i % 5 == 4) {
            match good_client(addr).await {
                Ok(took) => println!(
                    "{:>5} hostile connections: good client served in {:.1} ms, server RSS {} kB",
                    i + 1,
                    took.as_secs_f64() * 1000.0,
                    rss_kb(pid)
                ),
                Err(e) => {
                    println!(
                        "{:>5} hostile connections: good client FAILED ({e}), server RSS {} kB (before: {rss_before} kB)",
                        i + 1,
                        rss_kb(pid)
                    );
                    return;
                }
            }
        }
    }
    println!("all {ATTACK} hostile connections opened; server RSS {rss_before} kB -> {} kB", rss_kb(pid));
}
