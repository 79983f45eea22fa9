//! The stdio transport over in-memory pipes: concurrency, cancellation, bad frames, prompt
//! exit at end of input, and nothing but valid MCP messages on the output.

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
    server.add_tool(Tool::new("fast", "Answers at once", schema), |_a, _c| async { Ok(CallToolResult::text("fast done")) }).unwrap();
    let (input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    let done = tokio::spawn(serve_with(server, server_in, server_out, options));
    Harness { input, output: BufReader::new(output).lines(), done, cancelled }
}

async fn next(h: &mut Harness) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(5), h.output.next_line()).await.unwrap().unwrap().unwrap();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
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
    h.input.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n").await.unwrap();
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
        let frame = request(1, "tools/call", json!({ "name": "fast" })).replacen("\"id\":1", &format!("\"id\":{id}"), 1);
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
async fn end_of_input_cancels_work_in_flight_and_returns_promptly() {
    let h = harness(StdioOptions::default());
    let mut input = h.input;
    input.write_all(request(1, "tools/call", json!({ "name": "slow" })).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(input);
    tokio::time::timeout(Duration::from_millis(500), h.done).await.expect("serve returns promptly at EOF").unwrap().unwrap();
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
