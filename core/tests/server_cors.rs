//! CORS and the health route of the Streamable HTTP server over real sockets: the browser flow
//! of a page of another origin (the MCP Inspector's: a preflight, then requests with a bearer
//! token, reading `WWW-Authenticate` and `Mcp-Session-Id`), origins listed or not, and the
//! health route answered without auth and without the Host check.

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::Server;
use mcpaxle::transport::auth::{BearerAuth, TokenInfo};
use mcpaxle::transport::http::{CorsOptions, HttpOptions, HttpServer, McpService};
use serde_json::{Value, json};
use std::net::SocketAddr;
use support::raw_http::{Reply, send_raw};

const INSPECTOR: &str = "http://localhost:6274";
const APP: &str = "https://app.example.com";

fn server() -> Server {
    let server = Server::builder("cors", "1.0.0").build();
    server
        .add_tool(Tool::new("echo", "Echoes", json!({ "type": "object" })), |a: Value, _c| async move {
            Ok(CallToolResult::text(a.to_string()))
        })
        .unwrap();
    server
}

fn auth() -> BearerAuth {
    BearerAuth::new("http://127.0.0.1/mcp", "http://127.0.0.1:9/as", |token: String| async move {
        Ok((token == "good").then(|| TokenInfo::new("alice", Vec::<String>::new())))
    })
}

fn cors(origins: &[&str]) -> Option<CorsOptions> {
    Some(CorsOptions {
        allowed_origins: origins.iter().map(|o| o.to_string()).collect(),
        exposed_headers: vec!["X-Trace-Id".into()],
        ..Default::default()
    })
}

async fn start(options: HttpOptions) -> HttpServer {
    HttpServer::bind(server(), "127.0.0.1:0".parse().unwrap(), options).await.unwrap()
}

/// One HTTP/1.1 exchange: `host` is the Host header, `headers` the others.
async fn send(addr: SocketAddr, method: &str, path: &str, host: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    send_raw(addr, &head, body).await
}

fn local(addr: SocketAddr) -> String {
    format!("127.0.0.1:{}", addr.port())
}

async fn preflight(addr: SocketAddr, origin: &str, method: &str, asked: &str) -> Reply {
    let h = [("Origin", origin), ("Access-Control-Request-Method", method), ("Access-Control-Request-Headers", asked)];
    send(addr, "OPTIONS", "/mcp", &local(addr), &h, b"").await
}

fn call() -> Vec<u8> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "page", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "echo", "arguments": {}, "_meta": meta } }))
    .unwrap()
}

async fn post(addr: SocketAddr, origin: &str, token: Option<&str>, body: &[u8]) -> Reply {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut h = vec![
        ("Origin", origin),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    if let Some(b) = &bearer {
        h.push(("Authorization", b));
    }
    send(addr, "POST", "/mcp", &local(addr), &h, body).await
}

#[tokio::test]
async fn a_browser_page_of_a_listed_origin_goes_through_preflight_and_bearer_auth() {
    let http = start(HttpOptions { auth: Some(auth()), cors: cors(&[INSPECTOR]), ..Default::default() }).await;
    let addr = http.local_addr();

    // The preflight needs no token (browsers send none with it).
    let r =
        preflight(addr, INSPECTOR, "POST", "content-type,authorization,mcp-protocol-version,mcp-method,mcp-name").await;
    assert_eq!(r.status, 204, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("access-control-allow-origin"), Some(INSPECTOR));
    assert_eq!(r.header("access-control-allow-methods"), Some("POST, GET, DELETE"));
    assert_eq!(
        r.header("access-control-allow-headers"),
        Some("content-type, authorization, mcp-protocol-version, mcp-method, mcp-name")
    );
    assert_eq!(r.header("access-control-max-age"), Some("600"));
    assert!(r.header("vary").unwrap().contains("Origin"));

    // Without a token: 401, and the page may read the challenge that starts its OAuth flow.
    let r = post(addr, INSPECTOR, None, &call()).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.header("access-control-allow-origin"), Some(INSPECTOR));
    let exposed = r.header("access-control-expose-headers").unwrap();
    for h in ["WWW-Authenticate", "Mcp-Session-Id", "MCP-Protocol-Version", "X-Trace-Id"] {
        assert!(exposed.contains(h), "{h} in {exposed}");
    }
    assert!(r.header("www-authenticate").is_some());
    assert_eq!(r.header("vary"), Some("Origin"));

    // With one: served, readable.
    let r = post(addr, INSPECTOR, Some("good"), &call()).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("access-control-allow-origin"), Some(INSPECTOR));
    assert_eq!(r.json()["result"]["content"][0]["text"], "{}");

    // A legacy session's id is readable too.
    let init = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }))
    .unwrap();
    let h = [("Origin", INSPECTOR), ("Content-Type", "application/json"), ("Authorization", "Bearer good")];
    let r = send(addr, "POST", "/mcp", &local(addr), &h, &init).await;
    assert_eq!(r.status, 200);
    assert!(r.header("mcp-session-id").is_some());
    assert_eq!(r.header("access-control-allow-origin"), Some(INSPECTOR));
}

#[tokio::test]
async fn only_listed_origins_get_cors_and_unlisted_ones_stay_refused() {
    let http = start(HttpOptions { cors: cors(&[APP]), ..Default::default() }).await;
    let addr = http.local_addr();

    // A listed origin that is not loopback is accepted by the Origin check: listing it is
    // accepting it.
    let r = post(addr, APP, None, &call()).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("access-control-allow-origin"), Some(APP));
    assert_eq!(preflight(addr, APP, "POST", "content-type").await.header("access-control-allow-origin"), Some(APP));

    // A loopback origin passes the Origin check as ever, but gets no CORS headers: its page
    // cannot read the answer.
    let r = post(addr, INSPECTOR, None, &call()).await;
    assert_eq!(r.status, 200);
    assert!(!r.has_cors(), "{:?}", r.headers);
    assert_eq!(r.header("vary"), Some("Origin"));
    let r = preflight(addr, INSPECTOR, "POST", "content-type").await;
    assert_eq!(r.status, 204);
    assert!(!r.has_cors(), "{:?}", r.headers);

    // Any other origin: 403, preflight included, with no CORS headers.
    for r in [
        post(addr, "https://evil.example", None, &call()).await,
        preflight(addr, "https://evil.example", "POST", "").await,
    ] {
        assert_eq!(r.status, 403);
        assert!(!r.has_cors(), "{:?}", r.headers);
        assert!(
            r.json()["error"]["message"].as_str().unwrap().contains("Origin \"https://evil.example\" is not allowed")
        );
    }
    // A listed origin asking for a method or a header the endpoint does not take gets no CORS.
    assert!(!preflight(addr, APP, "PUT", "content-type").await.has_cors());
    assert!(!preflight(addr, APP, "POST", "content-type, x-unlisted").await.has_cors());
    // The DNS-rebinding Host check still applies to a listed origin.
    let h = [("Origin", APP), ("Access-Control-Request-Method", "POST")];
    assert_eq!(send(addr, "OPTIONS", "/mcp", "evil.example", &h, b"").await.status, 403);
}

#[tokio::test]
async fn a_star_gives_cors_to_the_accepted_origins_only() {
    let http = start(HttpOptions { cors: cors(&["*"]), ..Default::default() }).await;
    let addr = http.local_addr();
    let r = post(addr, INSPECTOR, None, &call()).await;
    assert_eq!((r.status, r.header("access-control-allow-origin")), (200, Some(INSPECTOR)));
    let r = post(addr, APP, None, &call()).await;
    assert_eq!(r.status, 403, "* does not widen the Origin check");
    assert!(!r.has_cors());
}

#[tokio::test]
async fn without_cors_nothing_changes() {
    let http = start(HttpOptions::default()).await;
    let addr = http.local_addr();
    let r = preflight(addr, INSPECTOR, "POST", "content-type").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    let r = post(addr, INSPECTOR, None, &call()).await;
    assert_eq!(r.status, 200);
    assert!(!r.has_cors() && r.header("vary").is_none(), "{:?}", r.headers);
    assert_eq!(post(addr, APP, None, &call()).await.status, 403);
}

#[tokio::test]
async fn the_health_route_answers_without_auth_and_any_host() {
    let options = HttpOptions { auth: Some(auth()), health_path: Some("/healthz".into()), ..Default::default() };
    let http = start(options).await;
    let addr = http.local_addr();
    // A load balancer probes by IP address, with no token.
    for host in [local(addr), "10.0.0.5:8080".to_owned()] {
        let r = send(addr, "GET", "/healthz", &host, &[], b"").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json(), json!({ "status": "ok" }));
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    let r = send(addr, "HEAD", "/healthz", "10.0.0.5", &[], b"").await;
    assert_eq!((r.status, r.body.len()), (200, 0));
    let r = send(addr, "POST", "/healthz", "10.0.0.5", &[], b"{}").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    // The metadata is still GET only, beside it.
    let prm = "/.well-known/oauth-protected-resource/mcp";
    assert_eq!(send(addr, "GET", prm, &local(addr), &[], b"").await.status, 200);
    assert_eq!(send(addr, "POST", prm, &local(addr), &[("Content-Type", "application/json")], b"{}").await.status, 404);
    // The endpoint itself is still guarded.
    assert_eq!(send(addr, "GET", "/mcp", "10.0.0.5", &[], b"").await.status, 403);
    assert_eq!(post(addr, INSPECTOR, None, &call()).await.status, 401);

    // Off by default.
    let plain = start(HttpOptions::default()).await;
    assert_eq!(send(plain.local_addr(), "GET", "/healthz", &local(plain.local_addr()), &[], b"").await.status, 404);
    // It cannot be the endpoint.
    let same = HttpOptions { health_path: Some("/mcp".into()), ..Default::default() };
    let e = HttpServer::bind(server(), "127.0.0.1:0".parse().unwrap(), same).await.err().unwrap();
    assert!(e.message().contains("healthPath \"/mcp\" is the MCP endpoint's path"), "{e}");
}

#[tokio::test]
async fn a_mounted_endpoint_answers_preflights_and_leaves_health_to_its_host() {
    let options = HttpOptions { cors: cors(&[INSPECTOR]), health_path: Some("/healthz".into()), ..Default::default() };
    let service = McpService::new(server(), options);
    let request = |method: &str, path: &str, headers: &[(&str, &str)]| {
        let mut b = http::Request::builder().method(method).uri(path).header("host", "localhost");
        for (n, v) in headers {
            b = b.header(*n, *v);
        }
        b.body(Full::new(Bytes::new())).unwrap()
    };
    let h = [("Origin", INSPECTOR), ("Access-Control-Request-Method", "POST")];
    let r = service.handle_routed(request("OPTIONS", "/mounted/anywhere", &h)).await;
    assert_eq!(r.status(), 204);
    assert_eq!(r.headers()["access-control-allow-origin"], INSPECTOR);
    let r = service.handle_routed(request("GET", "/healthz", &[])).await;
    assert_eq!(r.status(), 405, "a mounted endpoint is MCP's only: the host has its own health route");
    let r = service.handle(request("GET", "/healthz", &[])).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.into_body().collect().await.unwrap().to_bytes(), &br#"{"status":"ok"}"#[..]);
}
