//! The stdio transport over in-memory pipes: concurrency, cancellation, bad frames, prompt
//! exit at end of input (after the drain), and nothing but valid MCP messages on the output.

mod support;

use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::{RequestContext, Server};
use mcpaxle::transport::stdio::{StdioOptions, serve_with};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

fn request(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    format!("{}\n", json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
}

struct Harness {
    input: DuplexStream,
    output: Lines<BufReader<DuplexStream>>,
    done: tokio::task::JoinHandle<mcpaxle::Result<()>>,
    cancelled: Arc<AtomicBool>,
}

fn harness(options: StdioOptions) -> Harness {
    let server = Server::builder("t", "1").build();
    let schema = json!({ "type": "object" });
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    server
        .add_tool(Tool::new("slow", "Sleeps 1 s unless cancelled", schema.clone()), move |_a, ctx: RequestContext| {
            let flag = flag.clone();
            async move {
                // Cancellation drops this future (and fires the context's token): the guard
                // records that the handler did not run to completion.
                struct Dropped(Arc<AtomicBool>, RequestContext, bool);
                impl Drop for Dropped {
                    fn drop(&mut self) {
                        if !self.2 {
                            self.0.store(true, Ordering::SeqCst);
                        }
                    }
                }
                let mut guard = Dropped(flag, ctx.clone(), false);
                tokio::time::sleep(Duration::from_secs(1)).await;
                guard.2 = !guard.1.is_cancelled();
                Ok(CallToolResult::text("slow done"))
            }
        })
        .unwrap();
    server
        .add_tool(Tool::new("fast", "Answers at once", schema), |_a, _c| async {
            Ok(CallToolResult::text("fast done"))
        })
        .unwrap();
    let (input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    let done = tokio::spawn(serve_with(server, server_in, server_out, options));
    Harness { input, output: BufReader::new(output).lines(), done, cancelled }
}

async fn next(h: &mut Harness) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(5), h.output.next_line()).await.unwrap().unwrap().unwrap();
    let v: Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
    support::validate_server_message(Some("tools/call"), &v).unwrap_or_else(|e| panic!("invalid message {v}: {e}"));
    v
}

#[tokio::test]
async fn a_slow_tool_never_delays_another() {
    let mut h = harness(StdioOptions::default());
    h.input.write_all(request(1, "tools/call", json!({ "name": "slow" })).as_bytes()).await.unwrap();
    h.input.write_all(request(2, "tools/call", json!({ "name": "fast" })).as_bytes()).await.unwrap();
    let first = next(&mut h).await;
    assert_eq!(first["id"], json!(2), "the fast call answers first");
    // Cancel the slow one: its handler sees the token and no response is sent for it.
    h.input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n")
        .await
        .unwrap();
    h.input.write_all(request(3, "tools/call", json!({ "name": "fast" })).as_bytes()).await.unwrap();
    assert_eq!(next(&mut h).await["id"], json!(3));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(h.cancelled.load(Ordering::SeqCst));
    drop(h.input);
    tokio::time::timeout(Duration::from_secs(2), h.done).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn integer_ids_outside_i64_are_echoed_exactly() {
    let mut h = harness(StdioOptions::default());
    for id in ["18446744073709551616", "-9223372036854775809", "18446744073709551615"] {
        let frame =
            request(1, "tools/call", json!({ "name": "fast" })).replacen("\"id\":1", &format!("\"id\":{id}"), 1);
        h.input.write_all(frame.as_bytes()).await.unwrap();
        // Read the line as text: a serde_json Value would round the id.
        let line = tokio::time::timeout(Duration::from_secs(5), h.output.next_line()).await.unwrap().unwrap().unwrap();
        assert!(line.contains(&format!("\"id\":{id},")), "{id}: {line}");
        assert!(line.contains("fast done"), "{line}");
    }
    drop(h.input);
    tokio::time::timeout(Duration::from_secs(2), h.done).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn bad_frames_get_errors_and_serving_goes_on() {
    let mut h = harness(StdioOptions { max_message_size: 1024, ..Default::default() });
    h.input.write_all(b"{nope\n").await.unwrap();
    assert_eq!(next(&mut h).await["error"]["code"], json!(-32700));
    h.input.write_all(format!("{}\n", "x".repeat(5000)).as_bytes()).await.unwrap();
    assert_eq!(next(&mut h).await["error"]["code"], json!(-32700));
    h.input.write_all(b"\n   \n[1]\n").await.unwrap();
    assert_eq!(next(&mut h).await["error"]["code"], json!(-32600));
    h.input.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}\n").await.unwrap();
    let r = next(&mut h).await;
    assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(4), json!(-32602)), "missing _meta");
    h.input.write_all(request(5, "tools/call", json!({ "name": "fast" })).as_bytes()).await.unwrap();
    assert_eq!(next(&mut h).await["result"]["content"][0]["text"], json!("fast done"));
    drop(h.input);
    tokio::time::timeout(Duration::from_secs(2), h.done).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn end_of_input_lets_work_in_flight_answer_then_returns() {
    // `echo REQUEST | server`: the answer still comes, then serving ends.
    let mut h = harness(StdioOptions::default());
    h.input.write_all(request(1, "tools/call", json!({ "name": "slow" })).as_bytes()).await.unwrap();
    let (input, _) = tokio::io::duplex(1);
    drop(std::mem::replace(&mut h.input, input));
    let r = next(&mut h).await;
    assert_eq!(r["result"]["content"][0]["text"], json!("slow done"), "in-flight work answers after end of input");
    tokio::time::timeout(Duration::from_secs(2), h.done)
        .await
        .expect("serve returns after the drain")
        .unwrap()
        .unwrap();
    assert!(!h.cancelled.load(Ordering::SeqCst));
}

#[tokio::test]
async fn end_of_input_cancels_what_outlives_the_drain_deadline() {
    let h = harness(StdioOptions { drain_timeout: Duration::from_millis(200), ..Default::default() });
    let mut input = h.input;
    input.write_all(request(1, "tools/call", json!({ "name": "slow" })).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(input);
    tokio::time::timeout(Duration::from_millis(700), h.done)
        .await
        .expect("serve returns at the drain deadline")
        .unwrap()
        .unwrap();
    assert!(h.cancelled.load(Ordering::SeqCst));
}

#[tokio::test]
async fn shutdown_drains_requests_in_flight() {
    let token = tokio_util::sync::CancellationToken::new();
    let mut h = harness(StdioOptions { shutdown: token.clone(), ..Default::default() });
    h.input.write_all(request(1, "tools/call", json!({ "name": "slow" })).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    token.cancel();
    let r = next(&mut h).await;
    assert_eq!(r["result"]["content"][0]["text"], json!("slow done"), "in-flight work finishes during the drain");
    tokio::time::timeout(Duration::from_secs(3), h.done).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn dropping_the_server_future_stops_its_work_and_closes_the_output() {
    let mut h = harness(StdioOptions::default());
    h.input.write_all(request(1, "tools/call", json!({ "name": "slow" })).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    h.done.abort();
    let end = tokio::time::timeout(Duration::from_secs(2), h.output.next_line()).await.expect("the output closes");
    assert!(matches!(end, Ok(None)), "no more output after the server is dropped: {end:?}");
    assert!(h.cancelled.load(Ordering::SeqCst), "the request in flight was cancelled");
}

/// Set in the environment of the child process that [`a_client_that_does_not_read_stops_the_server_reading`]
/// starts from this very test binary: that child serves on its real stdin and stdout.
const STDIO_CHILD: &str = "MCPAXLE_TEST_STDIO_CHILD";

/// The server side of [`a_client_that_does_not_read_stops_the_server_reading`]; does nothing
/// unless started as its child.
#[test]
fn stdio_child_server() {
    if std::env::var_os(STDIO_CHILD).is_none() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let server = Server::builder("t", "1").build();
        server
            .add_tool(Tool::new("fast", "Answers at once", json!({ "type": "object" })), |_a, _c| async {
                Ok(CallToolResult::text("fast done"))
            })
            .unwrap();
        mcpaxle::transport::stdio::serve(server).await.unwrap();
    });
    std::process::exit(0);
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_client_that_does_not_read_stops_the_server_reading() {
    use std::io::{BufRead, Write};
    use std::sync::atomic::AtomicUsize;
    const N: usize = 20_000;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "stdio_child_server", "--test-threads=1", "-q"])
        .env(STDIO_CHILD, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    // The test harness of the child prints a few lines of its own before the server starts.
    let answer = |stdout: &mut std::io::BufReader<std::process::ChildStdout>| -> Value {
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the server closed its output");
            if line.starts_with('{') {
                return serde_json::from_str(&line).unwrap();
            }
        }
    };
    stdin.write_all(request(0, "tools/call", json!({ "name": "fast" })).as_bytes()).unwrap();
    assert_eq!(answer(&mut stdout)["id"], json!(0));
    let baseline = rss_kib(pid);

    let written = Arc::new(AtomicUsize::new(0));
    let count = written.clone();
    let writer = std::thread::spawn(move || {
        for i in 1..=N {
            stdin.write_all(request(i as i64, "tools/call", json!({ "name": "fast" })).as_bytes()).unwrap();
            count.store(i, Ordering::SeqCst);
        }
        stdin
    });
    // Wait until the writer is done or blocked (the server stopped reading): no progress for 500 ms.
    let mut last = usize::MAX;
    while written.load(Ordering::SeqCst) != last && last != N {
        last = written.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(500));
    }
    let stalled = rss_kib(pid);
    let stalled_at = written.load(Ordering::SeqCst);
    eprintln!(
        "RSS {baseline} KiB before, {stalled} KiB with the output unread ({stalled_at} of {N} requests accepted)"
    );
    assert!(stalled_at < N, "the server kept reading all {N} requests while nobody read its answers");
    assert!(stalled - baseline < 8 * 1024, "RSS grew by {} KiB", stalled - baseline);

    let mut ids = std::collections::HashSet::new();
    while ids.len() < N {
        let a = answer(&mut stdout);
        assert_eq!(a["result"]["content"][0]["text"], json!("fast done"), "{a}");
        ids.insert(a["id"].as_u64().unwrap());
    }
    drop(writer.join().unwrap());
    assert!(child.wait().unwrap().success());
}

#[tokio::test]
async fn progress_and_answers_never_deadlock_on_a_full_output() {
    // Room for one message: every request's progress and answer still get through, in order.
    let server = Server::builder("t", "1").build();
    server
        .add_tool(
            Tool::new("steps", "Reports 50 steps", json!({ "type": "object" })),
            |_a, ctx: RequestContext| async move {
                for i in 0..50 {
                    ctx.progress(i as f64, Some(50.0), None);
                    tokio::task::yield_now().await;
                }
                Ok(CallToolResult::text("done"))
            },
        )
        .unwrap();
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(64);
    let done = tokio::spawn(serve_with(
        server,
        server_in,
        server_out,
        StdioOptions { max_outbound_queue: 1, ..Default::default() },
    ));
    for id in 0..10 {
        let mut line = request(id, "tools/call", json!({ "name": "steps" }));
        line = line.replace("\"_meta\":{", &format!("\"_meta\":{{\"progressToken\":{id},"));
        input.write_all(line.as_bytes()).await.unwrap();
    }
    let mut output = BufReader::new(output).lines();
    // Progress not read yet is coalesced: values may be skipped, never reordered.
    let (mut answers, mut progress) = (0, [-1.0; 10]);
    while answers < 10 {
        let line = tokio::time::timeout(Duration::from_secs(10), output.next_line())
            .await
            .expect("the server is stuck")
            .unwrap()
            .unwrap();
        let m: Value = serde_json::from_str(&line).unwrap();
        if m["method"] == "notifications/progress" {
            let token = m["params"]["progressToken"].as_u64().unwrap() as usize;
            let p = m["params"]["progress"].as_f64().unwrap();
            assert!(p > progress[token], "progress of {token} in order");
            progress[token] = p;
        } else {
            assert_eq!(m["result"]["content"][0]["text"], json!("done"), "{m}");
            assert_eq!(progress[m["id"].as_u64().unwrap() as usize], 49.0, "the last progress comes before the answer");
            answers += 1;
        }
    }
    drop(input);
    tokio::time::timeout(Duration::from_secs(2), done).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn progress_sent_faster_than_it_is_read_is_coalesced_to_the_latest() {
    let server = Server::builder("t", "1").build();
    let emitted = Arc::new(tokio::sync::Notify::new());
    let done = emitted.clone();
    server
        .add_tool(
            Tool::new("burst", "Reports 100,000 steps at once", json!({ "type": "object" })),
            move |_a, ctx: RequestContext| {
                let done = done.clone();
                async move {
                    for i in 0..100_000 {
                        ctx.progress(i as f64, None, None);
                    }
                    done.notify_one();
                    Ok(CallToolResult::text("done"))
                }
            },
        )
        .unwrap();
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1024);
    let serving = tokio::spawn(serve_with(server, server_in, server_out, StdioOptions::default()));
    let line = request(1, "tools/call", json!({ "name": "burst" }))
        .replace("\"_meta\":{", "\"_meta\":{\"progressToken\":\"p\",");
    input.write_all(line.as_bytes()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), emitted.notified()).await.expect("the handler ran");
    let mut output = BufReader::new(output).lines();
    let mut progress = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(10), output.next_line()).await.unwrap().unwrap().unwrap();
        let m: Value = serde_json::from_str(&line).unwrap();
        if m["method"] == "notifications/progress" {
            progress.push(m["params"]["progress"].as_f64().unwrap());
        } else {
            assert_eq!(m["result"]["content"][0]["text"], json!("done"), "{m}");
            break;
        }
    }
    assert!(progress.len() < 1000, "{} progress notifications were queued", progress.len());
    assert_eq!(progress.last(), Some(&99_999.0), "the latest progress arrives");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "in order");
    drop(input);
    tokio::time::timeout(Duration::from_secs(2), serving).await.unwrap().unwrap().unwrap();
}
