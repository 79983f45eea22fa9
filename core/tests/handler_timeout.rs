//! Handler timeouts: the server-wide `ServerBuilder::handler_timeout` and a tool's own
//! `ToolOptions::timeout`. A handler that never finishes ends its call with an error naming it
//! and the limit, its future is dropped and its request's token cancelled, and every other
//! call is served meanwhile.

mod support;

use mcpaxle::schema::{CallToolResult, ReadResourceResult, Resource, Tool};
use mcpaxle::server::{RequestContext, Server, ToolOptions};
use mcpaxle::transport::stdio::{StdioOptions, serve_with};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
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
    /// Handlers of `stuck` whose future was dropped with their token cancelled.
    abandoned: Arc<AtomicUsize>,
    /// The method of each request sent, by id (to validate its response).
    methods: HashMap<i64, &'static str>,
}

/// Records, when the handler's future is dropped, whether its token was cancelled by then.
struct OnDrop(Arc<AtomicUsize>, RequestContext);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if self.1.is_cancelled() {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn harness(server_limit: Option<Duration>) -> Harness {
    let mut b = Server::builder("t", "1");
    if let Some(d) = server_limit {
        b = b.handler_timeout(d);
    }
    let server = b.build();
    let schema = json!({ "type": "object" });
    let abandoned = Arc::new(AtomicUsize::new(0));
    let seen = abandoned.clone();
    let stuck = move |_a, ctx: RequestContext| {
        let guard = OnDrop(seen.clone(), ctx);
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        }
    };
    server
        .add_tool_with(
            Tool::new("stuck", "Never returns", schema.clone()),
            ToolOptions { timeout: Some(Duration::from_millis(150)), ..ToolOptions::default() },
            stuck,
        )
        .unwrap();
    server
        .add_tool(Tool::new("forever", "Never returns; no limit of its own", schema.clone()), |_a, _c| async {
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        })
        .unwrap();
    // Takes 300 ms: more than a 100 ms server limit, well within its own 5 s.
    server
        .add_tool_with(
            Tool::new("patient", "Takes 300 ms", schema.clone()),
            ToolOptions { timeout: Some(Duration::from_secs(5)), ..ToolOptions::default() },
            |_a, _c| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(CallToolResult::text("patient done"))
            },
        )
        .unwrap();
    server
        .add_tool(Tool::new("fast", "Answers at once", schema), |_a, _c| async {
            Ok(CallToolResult::text("fast done"))
        })
        .unwrap();
    let resource: Resource = serde_json::from_value(json!({ "uri": "test://stuck", "name": "stuck" })).unwrap();
    server
        .add_resource(resource, None, |_r, _c| async {
            std::future::pending::<()>().await;
            Ok(serde_json::from_value::<ReadResourceResult>(json!({ "contents": [] })).unwrap())
        })
        .unwrap();
    let (input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve_with(server, server_in, server_out, StdioOptions::default()));
    Harness { input, output: BufReader::new(output).lines(), abandoned, methods: HashMap::new() }
}

impl Harness {
    async fn send(&mut self, id: i64, method: &'static str, params: Value) {
        self.methods.insert(id, method);
        self.input.write_all(request(id, method, params).as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line =
            tokio::time::timeout(Duration::from_secs(5), self.output.next_line()).await.unwrap().unwrap().unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        let method = v["id"].as_i64().and_then(|id| self.methods.get(&id).copied());
        support::validate_server_message(method, &v).unwrap_or_else(|e| panic!("invalid message {v}: {e}"));
        v
    }
}

#[tokio::test]
async fn a_tool_past_its_own_timeout_fails_alone_and_is_dropped() {
    let mut h = harness(None);
    let started = Instant::now();
    h.send(1, "tools/call", json!({ "name": "stuck" })).await;
    h.send(2, "tools/call", json!({ "name": "fast" })).await;
    let fast = h.next().await;
    assert_eq!(fast["id"], json!(2), "other calls are served while one is stuck");
    assert_eq!(fast["result"]["content"][0]["text"], json!("fast done"));
    let stuck = h.next().await;
    let elapsed = started.elapsed();
    assert_eq!(stuck["id"], json!(1));
    assert_eq!(stuck["result"]["isError"], json!(true), "{stuck}");
    let text = stuck["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("tool \"stuck\"") && text.contains("150 ms") && text.contains("its own timeout"), "{text}");
    assert!(elapsed >= Duration::from_millis(150) && elapsed < Duration::from_secs(2), "{elapsed:?}");
    assert_eq!(h.abandoned.load(Ordering::SeqCst), 1, "the handler's future is dropped with its token cancelled");
}

#[tokio::test]
async fn the_server_wide_timeout_covers_tools_and_resources() {
    let mut h = harness(Some(Duration::from_millis(100)));
    h.send(1, "tools/call", json!({ "name": "forever" })).await;
    h.send(2, "resources/read", json!({ "uri": "test://stuck" })).await;
    let mut answers = [h.next().await, h.next().await];
    answers.sort_by_key(|a| a["id"].as_i64());
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(answers[0]["result"]["isError"], json!(true));
    assert!(
        text.contains("tool \"forever\"") && text.contains("100 ms") && text.contains("the server's handler timeout"),
        "{text}"
    );
    let err = &answers[1]["error"];
    assert_eq!(err["code"], json!(-32603), "{err}");
    assert!(err["message"].as_str().unwrap().contains("resource \"test://stuck\""), "{err}");
}

#[tokio::test]
async fn a_tool_timeout_overrides_the_server_one() {
    let mut h = harness(Some(Duration::from_millis(100)));
    h.send(1, "tools/call", json!({ "name": "patient" })).await;
    let r = h.next().await;
    assert_eq!(r["result"]["content"][0]["text"], json!("patient done"), "{r}");
}

#[tokio::test]
async fn without_a_timeout_nothing_changes() {
    let mut h = harness(None);
    h.send(1, "tools/call", json!({ "name": "patient" })).await;
    h.send(2, "tools/call", json!({ "name": "forever" })).await;
    assert_eq!(h.next().await["id"], json!(1));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), h.output.next_line()).await.is_err(),
        "no limit: the call waits"
    );
}
