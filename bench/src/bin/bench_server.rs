//! The benchmark's MCP server: one trivial tool, `echo`, that returns its `text` argument.
//!
//! ```text
//! bench_server --http 127.0.0.1:8080   # endpoint /mcp
//! bench_server --stdio                 # nothing but MCP messages on stdout
//! ```

use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::Server;
use mcpaxle::transport::http::{self, HttpOptions};
use serde_json::{Value, json};

fn build() -> mcpaxle::Result<Server> {
    let server = Server::builder("mcpaxle-bench", env!("CARGO_PKG_VERSION")).build();
    server.add_tool(
        Tool::new(
            "echo",
            "Returns its text argument",
            json!({ "type": "object", "properties": { "text": { "type": "string" } } }),
        ),
        |args: Value, _ctx| async move {
            Ok(CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default()))
        },
    )?;
    Ok(server)
}

fn usage() -> ! {
    eprintln!("usage: bench_server --http HOST:PORT | --stdio");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> mcpaxle::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = build()?;
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => mcpaxle::transport::stdio::serve(server).await,
        ["--http", addr] => {
            let addr = addr.parse().unwrap_or_else(|_| usage());
            eprintln!("bench_server: listening on http://{addr}/mcp");
            http::serve(server, addr, HttpOptions::default()).await
        }
        _ => usage(),
    }
}
