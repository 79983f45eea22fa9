//! What a handler's failure shows the client: an unexpected exception's message reaches the
//! model (a tool's as an `isError` result, other requests' as -32603) unless the server masks
//! error details; errors a handler raises on purpose are never masked.

mod support;

use mcpaxle::schema::{CallToolResult, Prompt, Tool};
use mcpaxle::server::Server;
use mcpaxle::transport::stdio::{StdioOptions, serve_with};
use mcpaxle::{Error, Result};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn call(mask: bool, method: &str, params: Value) -> Value {
    let server = Server::builder("t", "1").mask_error_details(mask).build();
    let schema = json!({ "type": "object" });
    server
        .add_tool(Tool::new("broken", "Raises", schema.clone()), |_a, _c| async {
            Err::<CallToolResult, _>(Error::unexpected("secret detail"))
        })
        .unwrap();
    server
        .add_tool(Tool::new("refuses", "Fails on purpose", schema.clone()), |_a, _c| async {
            Err::<CallToolResult, _>(Error::tool("the city is unknown"))
        })
        .unwrap();
    server
        .add_tool(Tool::new("bad_params", "Protocol error", schema), |_a, _c| async {
            Err::<CallToolResult, _>(Error::invalid_params("Invalid params: nope"))
        })
        .unwrap();
    let prompt: Prompt = serde_json::from_value(json!({ "name": "p" })).unwrap();
    server.add_prompt(prompt, |_a, _c| async { Result::<Value>::Err(Error::unexpected("secret detail")) }).unwrap();
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve_with(server, server_in, server_out, StdioOptions::default()));
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let line = format!("{}\n", json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
    input.write_all(line.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(output).lines();
    let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await.unwrap().unwrap().unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    support::validate_server_message(Some(method), &v).unwrap_or_else(|e| panic!("invalid message {v}: {e}"));
    v
}

fn tool_text(v: &Value) -> (&str, bool) {
    (v["result"]["content"][0]["text"].as_str().unwrap(), v["result"]["isError"] == json!(true))
}

#[tokio::test]
async fn an_unexpected_exception_in_a_tool_shows_its_message_unless_masked() {
    let shown = call(false, "tools/call", json!({ "name": "broken" })).await;
    assert_eq!(tool_text(&shown), ("secret detail", true));
    let masked = call(true, "tools/call", json!({ "name": "broken" })).await;
    assert_eq!(tool_text(&masked), ("Internal error in tool \"broken\"", true));
}

#[tokio::test]
async fn errors_raised_on_purpose_are_never_masked() {
    let tool = call(true, "tools/call", json!({ "name": "refuses" })).await;
    assert_eq!(tool_text(&tool), ("the city is unknown", true));
    let params = call(true, "tools/call", json!({ "name": "bad_params" })).await;
    assert_eq!(params["error"]["code"], json!(-32602));
    assert_eq!(params["error"]["message"], json!("Invalid params: nope"));
}

#[tokio::test]
async fn other_requests_answer_an_unexpected_exception_with_an_internal_error() {
    let shown = call(false, "prompts/get", json!({ "name": "p" })).await;
    assert_eq!(shown["error"]["code"], json!(-32603));
    assert_eq!(shown["error"]["message"], json!("secret detail"));
    let masked = call(true, "prompts/get", json!({ "name": "p" })).await;
    assert_eq!(masked["error"]["code"], json!(-32603));
    assert_eq!(masked["error"]["message"], json!("Internal error in prompt \"p\""));
}
