//! The benchmark's MCP server: one trivial tool, `echo`, that returns its `text` argument.
//!
//! ```text
//! bench_server --http 127.0.0.1:8080 [--tools N] [--visibility] [--middleware] [--blocking]   # endpoint /mcp
//! bench_server --stdio                                                                      # nothing but MCP messages on stdout
//! ```
//!
//! `--tools N` registers N-1 more tools of the same shape (`tool-0001`...) beside `echo`, for
//! `tools/list` of N tools in one page (the page size is raised to N); `rmcp_server --tools N`
//! lists the same. `--visibility` sets a visibility predicate (per-principal visibility, here one
//! that shows everything to everyone): what a server pays for asking it. `--middleware` puts one
//! middleware around every request (an audit that counts requests and their time, as a server
//! that logs or authorizes in middleware has): what the chain costs. `--blocking` runs the
//! tool's work on tokio's blocking pool (`spawn_blocking`), as a Rust handler that may block
//! must: the same two thread switches per call as a C handler on the C library's handler pool.

use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::middleware::from_fn;
use mcpaxle::server::{Server, SharedArguments};
use mcpaxle::transport::http::{self, HttpOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn build(tools: usize, blocking: bool) -> mcpaxle::Result<Server> {
    let server = Server::builder("mcpaxle-bench", env!("CARGO_PKG_VERSION")).page_size(tools.max(1)).build();
    let schema = json!({ "type": "object", "properties": { "text": { "type": "string" } } });
    let names = std::iter::once("echo".to_owned()).chain((1..tools).map(|i| format!("tool-{i:04}")));
    for name in names {
        server.add_tool(
            Tool::new(name, "Returns its text argument", schema.clone()),
            // Reads its arguments where the server keeps them, as rmcp's handler reads its request.
            SharedArguments(move |args: Arc<Value>, _ctx| async move {
                let echo = move || CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default());
                if blocking {
                    tokio::task::spawn_blocking(echo).await.map_err(|e| mcpaxle::Error::internal(e.to_string()))
                } else {
                    Ok(echo())
                }
            }),
        )?;
    }
    Ok(server)
}

fn usage() -> ! {
    eprintln!("usage: bench_server --http HOST:PORT [--tools N] [--visibility] [--middleware] [--blocking] | --stdio");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> mcpaxle::Result<()> {
    let (mut transport, mut tools, mut visibility, mut middleware, mut blocking) = (Vec::new(), 1, false, false, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tools" => tools = args.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0).unwrap_or_else(|| usage()),
            "--visibility" => visibility = true,
            "--middleware" => middleware = true,
            "--blocking" => blocking = true,
            _ => transport.push(arg),
        }
    }
    let transport: Vec<&str> = transport.iter().map(String::as_str).collect();
    let server = build(tools, blocking)?;
    if visibility {
        server.set_visibility(|item, who| who.principal().is_none() || !item.name.starts_with("admin-"));
    }
    if middleware {
        // What an audit middleware does: time the request and add it up (read by no one here).
        static SERVED: AtomicU64 = AtomicU64::new(0);
        static NANOS: AtomicU64 = AtomicU64::new(0);
        server.use_middleware(from_fn(|_req, next| {
            Box::pin(async move {
                let started = std::time::Instant::now();
                let outcome = next.run().await;
                SERVED.fetch_add(1, Ordering::Relaxed);
                NANOS.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                outcome
            })
        }));
    }
    // OTEL_EXPORTER_OTLP_ENDPOINT set (the telemetry rows of run.py): traces and metrics on.
    mcpaxle::telemetry::install_from_env()?;
    match transport.as_slice() {
        ["--stdio"] => mcpaxle::transport::stdio::serve(server).await,
        ["--http", addr] => {
            let addr = addr.parse().unwrap_or_else(|_| usage());
            eprintln!("bench_server: listening on http://{addr}/mcp");
            http::serve(server, addr, HttpOptions::default()).await
        }
        _ => usage(),
    }
}
