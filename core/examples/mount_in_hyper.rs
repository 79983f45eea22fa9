//! Mounting the MCP endpoint in your own hyper application: `/mcp` goes to mcpaxle, the rest
//! of the routes are yours. The same `McpService::handle` call works from an axum handler
//! (`async fn mcp(State(svc): State<McpService>, req: Request) -> impl IntoResponse`).
//!
//! ```text
//! cargo run -p mcpaxle --example mount_in_hyper -- 127.0.0.1:3001
//! curl http://127.0.0.1:3001/health
//! ```

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::Server;
use mcpaxle::transport::http::{HttpOptions, McpService, Principal};
use serde_json::json;
use std::convert::Infallible;

type Body = UnsyncBoxBody<Bytes, Infallible>;

async fn route(mcp: McpService, mut req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    match req.uri().path() {
        "/health" => Ok(Response::new(Full::new(Bytes::from_static(b"ok\n")).boxed_unsync())),
        "/mcp" => {
            // Your authentication middleware would put the caller here; it is bound into
            // MRTR state and handed to handlers as ctx.principal().
            if let Some(user) = req.headers().get("x-user").and_then(|v| v.to_str().ok()) {
                let user = user.to_owned();
                req.extensions_mut().insert(Principal(user));
            }
            Ok(mcp.handle(req).await.map(|b| b.boxed_unsync()))
        }
        _ => Ok(Response::builder()
            .status(404)
            .body(Full::new(Bytes::from_static(b"not found\n")).boxed_unsync())
            .unwrap_or_default()),
    }
}

#[tokio::main]
async fn main() -> mcpaxle::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3001".into());
    let server = Server::builder("mounted", "1.0.0").build();
    server.add_tool(
        Tool::new("whoami", "Tells who is calling", json!({ "type": "object" })),
        |_a, ctx: mcpaxle::RequestContext| async move {
            Ok(CallToolResult::text(ctx.principal().unwrap_or("anonymous").to_owned()))
        },
    )?;
    let mcp = McpService::new(server, HttpOptions::default());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{addr} (MCP at /mcp, health at /health)");
    loop {
        let (stream, _) = listener.accept().await?;
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| route(mcp.clone(), req));
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}
