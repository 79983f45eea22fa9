//! The official Rust SDK (rmcp, pinned in bench/rmcp/Cargo.toml) serving the benchmark's `echo` tool
//! (and, with `--tools N`, N-1 more of the same shape for `tools/list`), beside mcpaxle's
//! `bench_server`: stateless Streamable HTTP (no sessions, as MCP 2026-07-28 has none), JSON
//! answers, on the same hyper stack as the ceiling (hyper-util's auto builder, TCP_NODELAY,
//! tokio's default multi-thread runtime).
//!
//! ```text
//! rmcp_server --http 127.0.0.1:8080 [--tools 1000]   # endpoint /mcp
//! ```

// The ceiling's serving loop (bench/src/lib.rs), the same file: this package leaves out the
// bench crate, which links mcpaxle.
#[path = "../../src/lib.rs"]
mod stack;

use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Clone)]
struct Echo {
    tools: Arc<Vec<Tool>>,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request.arguments.as_ref().and_then(|a| a.get("text")).and_then(Value::as_str).unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// The tools of `bench_server --tools N`: `echo`, then `tool-0001`... of the same shape.
fn tools(n: usize) -> Vec<Tool> {
    let schema = |v: Value| Arc::new(v.as_object().cloned().unwrap_or_default());
    let echo = schema(json!({ "type": "object", "properties": { "text": { "type": "string" } } }));
    let mut out = vec![Tool::new("echo", "Returns its text argument", echo.clone())];
    out.extend((1..n).map(|i| Tool::new(format!("tool-{i:04}"), "Returns its text argument", echo.clone())));
    out
}

fn usage() -> ! {
    eprintln!("usage: rmcp_server --http HOST:PORT [--tools N]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, n): (SocketAddr, usize) = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--http", addr] => (addr.parse().unwrap_or_else(|_| usage()), 1),
        ["--http", addr, "--tools", n] => {
            (addr.parse().unwrap_or_else(|_| usage()), n.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| usage()))
        }
        _ => usage(),
    };
    let handler = Echo { tools: Arc::new(tools(n)) };
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    config.json_response = true;
    config.sse_keep_alive = None;
    let service =
        StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(NeverSessionManager::default()), config);
    stack::serve("rmcp_server", addr, "/mcp", || TowerToHyperService::new(service.clone())).await;
}
