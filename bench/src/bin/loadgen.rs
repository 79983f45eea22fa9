//! The benchmark's load generator: MCP `tools/call` requests, as fast as the server answers.
//!
//! ```text
//! loadgen --http http://127.0.0.1:8080/mcp [--connections 8]     # closed loop per connection
//! loadgen --stdio-fds IN,OUT [--window 64]                        # a server whose pipes we were handed
//! loadgen [--window 64] --stdio CMD ARG...                        # spawn the server ourselves
//! common: [--warmup 1] [--duration 5] [--tool echo] [--text hello | --text-bytes N]
//!         [--method tools/call|tools/list] [--count N] [--progress N]
//! ```
//!
//! HTTP: N keep-alive connections (hyper's `client::conn::http1`), each sending one request,
//! reading the whole answer, then sending the next. Stdio: newline-delimited JSON-RPC,
//! pipelined, at most `--window` requests outstanding, responses matched by id.
//!
//! Protocol on stdout (one JSON object a line, flushed at once, so a driver can sample the
//! server's CPU time exactly at the edges of the measured window):
//! `{"event":"warmup_done"}` when measuring starts, `{"event":"measure_done"}` when it stops,
//! then `{"event":"result", ...}` with the figures of the window. Only requests completed inside
//! the window are counted. The runtime is single-threaded, to leave the other core(s) to the
//! server.
//!
//! `--method tools/list` sends `tools/list` (first page, no cursor) instead of `tools/call`, and
//! `--text-bytes N` makes the `text` argument N bytes long (the large-payload scenarios of
//! `bench/run.py`).
//!
//! `--count N` ends the window after N successful requests (`--duration` is then only a time
//! cap), and `--progress N` prints `{"event":"progress","count":K}` after every N of them (the
//! soak benchmark, `bench/soak.py`, samples the server's memory on these lines).

use bytes::Bytes;
use http::{HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;

const PROTOCOL_VERSION: &str = "2026-07-28";

/// 0: warming up, 1: measuring, 2: stopped.
static PHASE: AtomicU8 = AtomicU8::new(0);
const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOPPED: u8 = 2;

fn phase() -> u8 {
    PHASE.load(Ordering::Relaxed)
}

/// `--count` and `--progress` (0: not given), read by [`record`].
static COUNT: AtomicU64 = AtomicU64::new(0);
static PROGRESS: AtomicU64 = AtomicU64::new(0);
/// Successful requests completed inside the window so far.
static COMPLETED: AtomicU64 = AtomicU64::new(0);
/// Notified when `--count` requests have completed.
static COUNT_REACHED: tokio::sync::Notify = tokio::sync::Notify::const_new();

// ---------------------------------------------------------------------------------------------
// Latency histogram: log-linear buckets over nanoseconds, exact below 128 ns, then 64 linear
// sub-buckets per power of two (under 1.6 % relative error), like HdrHistogram with 6 bits.

const SUB: u64 = 64;
const BUCKETS: usize = 128 + 57 * SUB as usize;

#[derive(Clone)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Histogram {
    fn new() -> Self {
        Histogram { counts: vec![0; BUCKETS], total: 0, sum_ns: 0, max_ns: 0 }
    }

    fn index(v: u64) -> usize {
        if v < 2 * SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros() as u64; // >= 7
        let shift = msb - 6;
        let mantissa = v >> shift; // 64..=127
        (2 * SUB + (shift - 1) * SUB + (mantissa - SUB)) as usize
    }

    /// The middle of bucket `i`, in ns.
    fn value(i: usize) -> f64 {
        let i = i as u64;
        if i < 2 * SUB {
            return i as f64;
        }
        let k = i - 2 * SUB;
        let shift = k / SUB + 1;
        let mantissa = SUB + k % SUB;
        let lo = (mantissa as u128) << shift;
        let hi = ((mantissa + 1) as u128) << shift;
        (lo + hi) as f64 / 2.0
    }

    fn record(&mut self, d: Duration) {
        let ns = d.as_nanos().min(u64::MAX as u128) as u64;
        self.counts[Self::index(ns)] += 1;
        self.total += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.total += o.total;
        self.sum_ns += o.sum_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    /// The `q` quantile (0..=1), in µs.
    fn quantile_us(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return (Self::value(i) / 1000.0).min(self.max_ns as f64 / 1000.0);
            }
        }
        self.max_ns as f64 / 1000.0
    }

    fn mean_us(&self) -> f64 {
        if self.total == 0 { 0.0 } else { self.sum_ns as f64 / self.total as f64 / 1000.0 }
    }
}

/// What one worker measured inside the window.
struct Stats {
    hist: Histogram,
    errors: u64,
    first_error: Option<String>,
}

type SharedStats = Arc<Mutex<Stats>>;

fn new_stats() -> SharedStats {
    Arc::new(Mutex::new(Stats { hist: Histogram::new(), errors: 0, first_error: None }))
}

/// Records a completed request, if it completed inside the window. A failure during warm-up
/// means the benchmark is misconfigured: it is reported and ends the run.
fn record(stats: &SharedStats, latency: Duration, outcome: Result<(), String>) {
    if let (WARMUP, Err(e)) = (phase(), &outcome) {
        eprintln!("loadgen: error during warm-up: {e}");
        std::process::exit(1);
    }
    if phase() != MEASURE {
        return;
    }
    let mut s = stats.lock().unwrap();
    match outcome {
        Ok(()) => s.hist.record(latency),
        Err(e) => {
            s.errors += 1;
            s.first_error.get_or_insert(e);
            return;
        }
    }
    drop(s);
    let done = COMPLETED.fetch_add(1, Ordering::Relaxed) + 1;
    let every = PROGRESS.load(Ordering::Relaxed);
    if every != 0 && done % every == 0 {
        emit(&serde_json::json!({ "event": "progress", "count": done }));
    }
    if done == COUNT.load(Ordering::Relaxed) {
        // Stop at exactly `--count`: answers still in flight are no longer counted.
        PHASE.store(STOPPED, Ordering::Relaxed);
        COUNT_REACHED.notify_one();
    }
}

// ---------------------------------------------------------------------------------------------
// Requests.

/// The methods a run can send.
const METHODS: [&str; 2] = ["tools/call", "tools/list"];

/// Request bodies (`tools/call` of `tool`, or `tools/list`): a fixed prefix and suffix around
/// the JSON-RPC id.
struct Body {
    prefix: String,
    suffix: String,
}

impl Body {
    fn new(method: &str, tool: &str, text: &str) -> Body {
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let params = match method {
            "tools/call" => serde_json::json!({ "name": tool, "arguments": { "text": text }, "_meta": meta }),
            _ => serde_json::json!({ "_meta": meta }),
        };
        Body {
            prefix: r#"{"jsonrpc":"2.0","id":"#.to_owned(),
            suffix: format!(r#","method":"{method}","params":{params}}}"#),
        }
    }

    fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(self.prefix.as_bytes());
        let mut buf = [0u8; 20];
        let mut n = id;
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&buf[i..]);
        out.extend_from_slice(self.suffix.as_bytes());
    }
}

#[derive(Deserialize)]
struct ResponseLite {
    id: Option<u64>,
    result: Option<ResultLite>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ResultLite {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

/// Checks that a response is a successful tool result; returns its id.
fn check_response(bytes: &[u8]) -> Result<Option<u64>, String> {
    let r: ResponseLite = serde_json::from_slice(bytes)
        .map_err(|e| format!("unparsable response ({e}): {}", String::from_utf8_lossy(bytes)))?;
    match (&r.result, &r.error) {
        (Some(res), None) if res.is_error != Some(true) => Ok(r.id),
        _ => Err(format!("not a successful tool result: {}", String::from_utf8_lossy(bytes))),
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP: one closed loop per keep-alive connection.

struct HttpTarget {
    addr: String,
    host: HeaderValue,
    path: String,
    method: HeaderValue,
    /// `Mcp-Name` (tools/call only).
    tool: Option<HeaderValue>,
    body: Body,
}

fn parse_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap_or_else(|| die("--http takes an http:// URL"));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    (authority.to_owned(), path.to_owned())
}

async fn http_worker(t: Arc<HttpTarget>, stats: SharedStats) {
    let mut id = 0u64;
    let mut buf = Vec::with_capacity(512);
    'connect: while phase() != STOPPED {
        let stream = match tokio::net::TcpStream::connect(&t.addr).await {
            Ok(s) => s,
            Err(e) => {
                record(&stats, Duration::ZERO, Err(format!("connect to {}: {e}", t.addr)));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
            Ok(x) => x,
            Err(e) => {
                record(&stats, Duration::ZERO, Err(format!("handshake: {e}")));
                continue;
            }
        };
        tokio::spawn(conn);
        // The first answer on each connection is parsed in full, as a sanity check.
        let mut verify = true;
        while phase() != STOPPED {
            if let Err(e) = sender.ready().await {
                record(&stats, Duration::ZERO, Err(format!("connection lost: {e}")));
                continue 'connect;
            }
            id += 1;
            buf.clear();
            t.body.write(id, &mut buf);
            let mut req = Request::new(Full::new(Bytes::copy_from_slice(&buf)));
            *req.method_mut() = Method::POST;
            *req.uri_mut() = t.path.parse().unwrap_or_else(|_| die("bad path"));
            let h = req.headers_mut();
            h.insert(header::HOST, t.host.clone());
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
            h.insert("mcp-protocol-version", HeaderValue::from_static(PROTOCOL_VERSION));
            h.insert("mcp-method", t.method.clone());
            if let Some(tool) = &t.tool {
                h.insert("mcp-name", tool.clone());
            }
            let start = Instant::now();
            let resp = match sender.send_request(req).await {
                Ok(r) => r,
                Err(e) => {
                    record(&stats, start.elapsed(), Err(format!("request failed: {e}")));
                    continue 'connect;
                }
            };
            let status = resp.status();
            let body = match resp.into_body().collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => {
                    record(&stats, start.elapsed(), Err(format!("reading the response failed: {e}")));
                    continue 'connect;
                }
            };
            let latency = start.elapsed();
            let outcome = if status != http::StatusCode::OK {
                Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)))
            } else if verify {
                verify = false;
                check_response(&body).map(|_| ())
            } else {
                Ok(())
            };
            record(&stats, latency, outcome);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stdio: pipelined, a window of outstanding requests, responses matched by id.

/// Keeps the server's input open until `release` is notified (the server must stay alive while
/// the driver samples it at the end of the window).
async fn stdio_run<R, W>(
    input: R,
    mut output: W,
    window: usize,
    body: Arc<Body>,
    stats: SharedStats,
    release: Arc<tokio::sync::Notify>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(window));
    let sent: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    {
        let (permits, sent, stats) = (permits.clone(), sent.clone(), stats.clone());
        tokio::spawn(async move {
            let mut r = BufReader::with_capacity(256 * 1024, input);
            let mut line = Vec::with_capacity(4096);
            loop {
                line.clear();
                match r.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => {
                        if phase() != STOPPED {
                            eprintln!("loadgen: the server closed its output");
                            std::process::exit(1);
                        }
                        return;
                    }
                    Ok(_) => {}
                }
                let now = Instant::now();
                let (id, outcome) = match check_response(&line) {
                    Ok(id) => (id, Ok(())),
                    Err(e) => (serde_json::from_slice::<ResponseLite>(&line).ok().and_then(|r| r.id), Err(e)),
                };
                let Some(start) = id.and_then(|id| sent.lock().unwrap().remove(&id)) else {
                    record(
                        &stats,
                        Duration::ZERO,
                        Err(format!("an answer to no request: {}", String::from_utf8_lossy(&line))),
                    );
                    continue;
                };
                record(&stats, now - start, outcome);
                permits.add_permits(1);
            }
        });
    }
    let mut id = 0u64;
    let mut buf = Vec::with_capacity(64 * 1024);
    while phase() != STOPPED {
        let Ok(p) = permits.acquire().await else {
            break;
        };
        p.forget();
        // Take every free slot at once: one write for the whole batch.
        let mut n = 1;
        while n < window {
            match permits.try_acquire() {
                Ok(p) => {
                    p.forget();
                    n += 1;
                }
                Err(_) => break,
            }
        }
        buf.clear();
        let now = Instant::now();
        {
            let mut sent = sent.lock().unwrap();
            for _ in 0..n {
                id += 1;
                body.write(id, &mut buf);
                buf.push(b'\n');
                sent.insert(id, now);
            }
        }
        if output.write_all(&buf).await.is_err() || output.flush().await.is_err() {
            eprintln!("loadgen: the server closed its input");
            std::process::exit(1);
        }
    }
    release.notified().await;
    drop(output);
}

// ---------------------------------------------------------------------------------------------

enum Mode {
    Http(String),
    StdioFds(i32, i32),
    StdioSpawn(Vec<String>),
}

struct Args {
    mode: Mode,
    connections: usize,
    window: usize,
    warmup: f64,
    duration: f64,
    method: String,
    tool: String,
    text: String,
    /// Stop after this many successful requests in the window (then `duration` is a time cap).
    count: Option<u64>,
    /// Print a `progress` line after every this many successful requests.
    progress: Option<u64>,
}

fn die(msg: &str) -> ! {
    eprintln!("loadgen: {msg}");
    eprintln!(
        "usage: loadgen (--http URL | --stdio-fds IN,OUT | --stdio CMD ARG...) [--connections 8] [--window 64] [--warmup 1] [--duration 5] [--method tools/call|tools/list] [--tool echo] [--text hello | --text-bytes N] [--count N] [--progress N]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        mode: Mode::Http(String::new()),
        connections: 8,
        window: 64,
        warmup: 1.0,
        duration: 5.0,
        method: "tools/call".into(),
        tool: "echo".into(),
        text: "hello".into(),
        count: None,
        progress: None,
    };
    let mut mode = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = |what: &str| it.next().unwrap_or_else(|| die(&format!("{arg} needs {what}")));
        match arg.as_str() {
            "--http" => mode = Some(Mode::Http(val("a URL"))),
            "--stdio-fds" => {
                let v = val("IN,OUT");
                let (i, o) = v.split_once(',').unwrap_or_else(|| die("--stdio-fds takes IN,OUT"));
                mode = Some(Mode::StdioFds(
                    i.parse().unwrap_or_else(|_| die("bad fd")),
                    o.parse().unwrap_or_else(|_| die("bad fd")),
                ));
            }
            "--connections" => a.connections = val("a number").parse().unwrap_or_else(|_| die("bad --connections")),
            "--window" => a.window = val("a number").parse().unwrap_or_else(|_| die("bad --window")),
            "--warmup" => a.warmup = val("seconds").parse().unwrap_or_else(|_| die("bad --warmup")),
            "--duration" => a.duration = val("seconds").parse().unwrap_or_else(|_| die("bad --duration")),
            "--count" => {
                a.count = Some(val("a number").parse().ok().filter(|&n| n > 0).unwrap_or_else(|| die("bad --count")))
            }
            "--progress" => {
                a.progress =
                    Some(val("a number").parse().ok().filter(|&n| n > 0).unwrap_or_else(|| die("bad --progress")))
            }
            "--tool" => a.tool = val("a name"),
            "--text" => a.text = val("a string"),
            "--text-bytes" => {
                let n: usize = val("a number").parse().unwrap_or_else(|_| die("bad --text-bytes"));
                a.text = "x".repeat(n);
            }
            "--method" => {
                a.method = val("a method");
                if !METHODS.contains(&a.method.as_str()) {
                    die(&format!("--method takes one of {}", METHODS.join(", ")));
                }
            }
            "--stdio" => {
                let cmd: Vec<String> = it.by_ref().collect();
                if cmd.is_empty() {
                    die("--stdio needs a command");
                }
                mode = Some(Mode::StdioSpawn(cmd));
            }
            _ => die(&format!("unknown argument {arg}")),
        }
    }
    a.mode = mode.unwrap_or_else(|| die("say --http, --stdio-fds or --stdio"));
    if a.connections == 0 || a.window == 0 || a.duration <= 0.0 || a.warmup < 0.0 {
        die("--connections, --window and --duration must be positive");
    }
    if !a.tool.bytes().all(|b| b.is_ascii_graphic()) {
        die("--tool must be printable ASCII (it goes into the Mcp-Name header as is)");
    }
    a
}

fn emit(line: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn main() {
    let args = parse_args();
    COUNT.store(args.count.unwrap_or(0), Ordering::Relaxed);
    PROGRESS.store(args.progress.unwrap_or(0), Ordering::Relaxed);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    rt.block_on(run(args));
    // Dropping the runtime cancels the workers; a spawned server sees its input close.
    drop(rt);
}

async fn run(args: Args) {
    let body = Arc::new(Body::new(&args.method, &args.tool, &args.text));
    let mut all: Vec<SharedStats> = Vec::new();
    let mut child = None;
    let release = Arc::new(tokio::sync::Notify::new());
    let transport;
    match &args.mode {
        Mode::Http(url) => {
            transport = "http";
            let (addr, path) = parse_url(url);
            let host = HeaderValue::from_str(&addr).unwrap_or_else(|_| die("bad host"));
            let tool = (args.method == "tools/call")
                .then(|| HeaderValue::from_str(&args.tool).unwrap_or_else(|_| die("bad tool name")));
            let method = HeaderValue::from_str(&args.method).unwrap_or_else(|_| die("bad method"));
            let body = Body::new(&args.method, &args.tool, &args.text);
            let t = Arc::new(HttpTarget { addr, host, path, method, tool, body });
            for _ in 0..args.connections {
                let s = new_stats();
                all.push(s.clone());
                tokio::spawn(http_worker(t.clone(), s));
            }
        }
        Mode::StdioFds(i, o) => {
            transport = "stdio";
            use std::os::fd::FromRawFd;
            // SAFETY: the caller handed us these descriptors for our exclusive use.
            let (fi, fo) = unsafe { (std::fs::File::from_raw_fd(*i), std::fs::File::from_raw_fd(*o)) };
            let input =
                tokio::net::unix::pipe::Receiver::from_file(fi).unwrap_or_else(|e| die(&format!("fd {i}: {e}")));
            let output = tokio::net::unix::pipe::Sender::from_file(fo).unwrap_or_else(|e| die(&format!("fd {o}: {e}")));
            let s = new_stats();
            all.push(s.clone());
            tokio::spawn(stdio_run(input, output, args.window, body.clone(), s, release.clone()));
        }
        Mode::StdioSpawn(cmd) => {
            transport = "stdio";
            let mut c = tokio::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .unwrap_or_else(|e| die(&format!("cannot start {}: {e}", cmd[0])));
            let (input, output) = (c.stdout.take().unwrap(), c.stdin.take().unwrap());
            emit(&serde_json::json!({ "event": "server_pid", "pid": c.id() }));
            let s = new_stats();
            all.push(s.clone());
            tokio::spawn(stdio_run(input, output, args.window, body.clone(), s, release.clone()));
            child = Some(c);
        }
    }

    tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
    PHASE.store(MEASURE, Ordering::Relaxed);
    let t0 = Instant::now();
    emit(&serde_json::json!({ "event": "warmup_done" }));
    let window = tokio::time::sleep(Duration::from_secs_f64(args.duration));
    if args.count.is_some() {
        tokio::select! {
            _ = COUNT_REACHED.notified() => {}
            _ = window => {}
        }
    } else {
        window.await;
    }
    PHASE.store(STOPPED, Ordering::Relaxed);
    let elapsed = t0.elapsed().as_secs_f64();
    emit(&serde_json::json!({ "event": "measure_done" }));

    let mut hist = Histogram::new();
    let mut errors = 0;
    let mut first_error = None;
    for s in &all {
        let s = s.lock().unwrap();
        hist.merge(&s.hist);
        errors += s.errors;
        if first_error.is_none() {
            first_error = s.first_error.clone();
        }
    }
    let mut result = serde_json::json!({
        "event": "result",
        "transport": transport,
        "warmup_s": args.warmup,
        "duration_s": elapsed,
        "count": hist.total,
        "errors": errors,
        "throughput_rps": hist.total as f64 / elapsed,
        "p50_us": hist.quantile_us(0.50),
        "p90_us": hist.quantile_us(0.90),
        "p99_us": hist.quantile_us(0.99),
        "p999_us": hist.quantile_us(0.999),
        "max_us": hist.max_ns as f64 / 1000.0,
        "mean_us": hist.mean_us(),
    });
    let o = result.as_object_mut().unwrap();
    match transport {
        "http" => o.insert("connections".into(), args.connections.into()),
        _ => o.insert("window".into(), args.window.into()),
    };
    if let Some(e) = first_error {
        o.insert("first_error".into(), e.chars().take(500).collect::<String>().into());
    }
    emit(&result);
    release.notify_one();
    if let Some(mut c) = child {
        if tokio::time::timeout(Duration::from_secs(3), c.wait()).await.is_err() {
            let _ = c.kill().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_contiguous_and_tight() {
        let mut last = 0;
        for v in (0..200_000u64).chain([1 << 20, 1 << 40, u64::MAX]) {
            let i = Histogram::index(v);
            assert!(i >= last && i < BUCKETS, "index of {v}");
            last = i;
            let mid = Histogram::value(i);
            assert!((mid - v as f64).abs() <= v as f64 * 0.016 + 0.5, "{v} → bucket middle {mid}");
        }
    }

    #[test]
    fn quantiles() {
        let mut h = Histogram::new();
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        assert!((h.quantile_us(0.5) - 500.0).abs() < 10.0);
        assert!((h.quantile_us(0.99) - 990.0).abs() < 16.0);
        assert_eq!(h.quantile_us(1.0), 1000.0);
        assert!((h.mean_us() - 500.5).abs() < 0.01);
    }

    #[test]
    fn request_bodies() {
        let b = Body::new("tools/call", "echo", "a \"quoted\" text");
        let mut out = Vec::new();
        b.write(42, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 42);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["arguments"]["text"], "a \"quoted\" text");
        assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], PROTOCOL_VERSION);
        assert!(v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object());
        let mut out = Vec::new();
        Body::new("tools/list", "echo", "").write(7, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!((v["method"].as_str(), v["params"].get("name")), (Some("tools/list"), None));
        assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], PROTOCOL_VERSION);
    }

    #[test]
    fn responses() {
        assert_eq!(check_response(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#), Ok(Some(7)));
        assert!(check_response(br#"{"jsonrpc":"2.0","id":7,"result":{"isError":true}}"#).is_err());
        assert!(check_response(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}"#).is_err());
    }
}
