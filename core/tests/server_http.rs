//! The Streamable HTTP server end to end over real sockets: the spec's status codes and
//! JSON-RPC errors for bad input at every layer, SSE for requests that notify, listen
//! streams, cancellation on disconnect, graceful shutdown. Every message the server emits is
//! validated against schema.json.

mod support;

use support::raw_http::{Reply, send_raw};

use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::{RequestContext, Server};
use mcpaxle::transport::auth::{BearerAuth, TokenInfo};
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use mcpaxle::{Error, Result};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const V: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} }
    })
}

fn body(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn headers_for(b: &Value) -> Vec<(String, String)> {
    let mut h = vec![("MCP-Protocol-Version".to_owned(), V.to_owned())];
    if let Some(m) = b["method"].as_str() {
        h.push(("Mcp-Method".into(), m.into()));
    }
    if let Some(n) = b["params"]["name"].as_str().or(b["params"]["uri"].as_str()) {
        h.push(("Mcp-Name".into(), n.into()));
    }
    h
}

fn test_server() -> Server {
    let server = Server::builder("test-server", "1.0.0").page_size(2).build();
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } } });
    server
        .add_tool(Tool::new("echo", "Echoes n", schema.clone()), |a: Value, _c| async move {
            Ok(CallToolResult::text(a.to_string()))
        })
        .unwrap();
    server
        .add_tool(Tool::new("progress", "Reports progress", schema.clone()), |_a, ctx: RequestContext| async move {
            for i in 0..3 {
                ctx.progress(i as f64, Some(2.0), None);
            }
            Ok(CallToolResult::text("done"))
        })
        .unwrap();
    server
        .add_tool(Tool::new("panics", "Panics", schema.clone()), |_a, _c| async move {
            panic!("boom");
            #[allow(unreachable_code)]
            Ok(CallToolResult::text("never"))
        })
        .unwrap();
    server
        .add_tool(Tool::new("ask", "Asks for a name", schema.clone()), |_a, ctx: RequestContext| async move {
            let r = ctx.elicit("name", json!({ "mode": "form", "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } })).await?;
            Ok(CallToolResult::text(r.to_string()))
        })
        .unwrap();
    server
        .add_tool(Tool::new("fails", "Fails for the model", schema), |_a, _c| async move {
            Err::<CallToolResult, _>(Error::tool("no such city"))
        })
        .unwrap();
    server
}

async fn start(server: Server) -> HttpServer {
    HttpServer::bind(
        server,
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions { keep_alive: Duration::from_millis(200), ..Default::default() },
    )
    .await
    .unwrap()
}

async fn raw(addr: SocketAddr, method: &str, extra: &[(String, String)], payload: &[u8]) -> Reply {
    raw_at(addr, method, "/mcp", extra, payload).await
}

async fn raw_at(addr: SocketAddr, method: &str, path: &str, extra: &[(String, String)], payload: &[u8]) -> Reply {
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: {}\r\n",
        addr.port(),
        payload.len()
    );
    if !extra.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type")) {
        req.push_str("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n");
    }
    for (n, v) in extra {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    send_raw(addr, &req, payload).await
}

async fn post(addr: SocketAddr, b: &Value) -> Reply {
    raw(addr, "POST", &headers_for(b), &serde_json::to_vec(b).unwrap()).await
}

fn check_valid(method: &str, message: &Value) {
    support::validate_server_message(Some(method), message)
        .unwrap_or_else(|e| panic!("{method}: invalid message {message}: {e}"));
}

fn error_code(r: &Reply) -> i64 {
    r.json()["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error in {}", String::from_utf8_lossy(&r.body)))
}

#[tokio::test]
async fn serves_and_validates_every_result() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    for (method, params) in [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("tools/call", json!({ "name": "echo", "arguments": { "n": 1 } })),
        ("tools/call", json!({ "name": "echo" })),
        ("tools/call", json!({ "name": "fails" })),
        ("tools/call", json!({ "name": "ask" })),
    ] {
        let r = post(a, &body(1, method, params)).await;
        assert_eq!(r.status, 200, "{method}");
        assert_eq!(r.header("content-type"), Some("application/json"));
        check_valid(method, &r.json());
    }
    let r = post(a, &body(2, "tools/call", json!({ "name": "fails" }))).await.json();
    assert_eq!(r["result"]["isError"], json!(true));
    assert_eq!(r["result"]["content"][0]["text"], json!("no such city"));
    http.shutdown().await;
}

#[tokio::test]
async fn bad_requests_get_the_spec_errors_and_the_server_keeps_serving() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    let ok = body(1, "server/discover", json!({}));
    // Missing _meta pieces → 400 -32602.
    for m in [
        json!(null),
        json!({ "io.modelcontextprotocol/clientCapabilities": {} }),
        json!({ "io.modelcontextprotocol/protocolVersion": V }),
    ] {
        let mut b = ok.clone();
        if m.is_null() {
            b["params"].as_object_mut().unwrap().remove("_meta");
        } else {
            b["params"]["_meta"] = m;
        }
        let r = post(a, &b).await;
        assert_eq!((r.status, error_code(&r)), (400, -32602));
        assert_eq!(r.json()["id"], json!(1), "error responses echo the id");
        check_valid("server/discover", &r.json());
    }
    // Unsupported version in header and body → 400 -32022 with data.
    let mut b = ok.clone();
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let mut h = headers_for(&b);
    h[0].1 = "v999.0.0".into();
    let r = raw(a, "POST", &h, &serde_json::to_vec(&b).unwrap()).await;
    assert_eq!((r.status, error_code(&r)), (400, -32022));
    assert_eq!(r.json()["error"]["data"], json!({ "supported": [V], "requested": "v999.0.0" }));
    // Header says one version, body another → -32020.
    let r = post(a, &b).await;
    assert_eq!((r.status, error_code(&r)), (400, -32020));
    // Mcp-Method / Mcp-Name mismatches and omissions → -32020.
    let call = body(3, "tools/call", json!({ "name": "echo", "arguments": {} }));
    let bytes = serde_json::to_vec(&call).unwrap();
    let mut h = headers_for(&call);
    h[1].1 = "tools/list".into();
    assert_eq!(error_code(&raw(a, "POST", &h, &bytes).await), -32020);
    let mut h = headers_for(&call);
    h[2].1 = "other".into();
    assert_eq!(error_code(&raw(a, "POST", &h, &bytes).await), -32020);
    let h = headers_for(&call)[..2].to_vec();
    assert_eq!(error_code(&raw(a, "POST", &h, &bytes).await), -32020);
    // Header names are case-insensitive; the base64 form of Mcp-Name is decoded; whitespace is tolerated.
    let mut h = headers_for(&call);
    h[2] = ("mcp-name".into(), "=?base64?ZWNobw==?=".into());
    h[1].1 = format!("  {}  ", h[1].1);
    assert_eq!(raw(a, "POST", &h, &bytes).await.status, 200);
    // Unknown and removed methods → 404 -32601.
    for m in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "unknown/method", "prompts/list"] {
        let r = post(a, &body(4, m, json!({}))).await;
        assert_eq!((r.status, error_code(&r)), (404, -32601), "{m}");
    }
    // Malformed JSON → -32700; not a request → -32600.
    let r = raw(a, "POST", &headers_for(&ok), b"{oops").await;
    assert_eq!((r.status, error_code(&r)), (400, -32700));
    let r = raw(a, "POST", &headers_for(&ok), b"[1,2]").await;
    assert_eq!((r.status, error_code(&r)), (400, -32600));
    let r = raw(a, "POST", &headers_for(&ok), br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#)
        .await;
    assert_eq!(r.status, 400);
    // Wrong types in params → -32602.
    let r = post(a, &body(6, "tools/call", json!({ "name": "echo", "arguments": [1] }))).await;
    assert_eq!((r.status, error_code(&r)), (400, -32602));
    let r = post(a, &body(6, "tools/call", json!({ "name": "nope" }))).await;
    assert_eq!((r.status, error_code(&r)), (400, -32602));
    assert_eq!(r.json()["error"]["message"], json!("Unknown tool: nope"));
    // Invalid arguments → a tool error result the model can read.
    let r = post(a, &body(7, "tools/call", json!({ "name": "echo", "arguments": { "n": "x" } }))).await.json();
    assert_eq!(r["result"]["isError"], json!(true));
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("/n"), "{r}");
    // Tampered request state → a JSON-RPC error before the handler runs.
    let first = post(a, &body(8, "tools/call", json!({ "name": "ask" }))).await.json();
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    assert_eq!(first["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], json!("test-server"));
    let r = post(
        a,
        &body(9, "tools/call", json!({ "name": "ask", "requestState": format!("{state}x"), "inputResponses": {} })),
    )
    .await;
    assert_eq!((r.status, error_code(&r)), (400, -32602));
    let r = post(a, &body(10, "tools/call", json!({ "name": "echo", "arguments": { "n": 2 }, "requestState": state })))
        .await;
    assert_eq!((r.status, error_code(&r)), (400, -32602), "state bound to another request");
    let done = post(a, &body(11, "tools/call", json!({ "name": "ask", "requestState": state, "inputResponses": { "name": { "action": "accept", "content": {} } } }))).await.json();
    assert_eq!(done["result"]["resultType"], json!("complete"));
    // A panicking handler fails its own request only.
    let r = post(a, &body(12, "tools/call", json!({ "name": "panics" }))).await;
    assert_eq!((r.status, error_code(&r)), (500, -32603));
    // Bad cursor → -32602; good cursors page through.
    let r = post(a, &body(13, "tools/list", json!({ "cursor": "not-ours" }))).await;
    assert_eq!((r.status, error_code(&r)), (400, -32602));
    let mut names = Vec::new();
    let mut cursor = None;
    loop {
        let params = cursor.map(|c: String| json!({ "cursor": c })).unwrap_or(json!({}));
        let page = post(a, &body(14, "tools/list", params)).await.json();
        check_valid("tools/list", &page);
        names
            .extend(page["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match page["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(names, ["ask", "echo", "fails", "panics", "progress"]);
    // After all that, the server still serves.
    assert_eq!(post(a, &ok).await.status, 200);
    http.shutdown().await;
}

#[tokio::test]
async fn http_layer_rejections() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    let ok = body(1, "server/discover", json!({}));
    let bytes = serde_json::to_vec(&ok).unwrap();
    for m in ["GET", "DELETE"] {
        let r = raw(a, m, &headers_for(&ok), b"").await;
        assert_eq!(r.status, 405);
        assert_eq!(r.header("allow"), Some("POST"));
    }
    let mut h = headers_for(&ok);
    h.push(("Origin".into(), "http://evil.example.com".into()));
    assert_eq!(raw(a, "POST", &h, &bytes).await.status, 403);
    let mut h = headers_for(&ok);
    h.push(("Origin".into(), format!("http://localhost:{}", a.port())));
    assert_eq!(raw(a, "POST", &h, &bytes).await.status, 200);
    // A foreign Host (DNS rebinding): replace the Host line by sending a second request by hand.
    let mut s = TcpStream::connect(a).await.unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        bytes.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    s.write_all(&bytes).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    // Oversize body → 413 with a JSON-RPC error.
    let big = vec![b' '; (4 << 20) + 1];
    let r = raw(a, "POST", &headers_for(&ok), &big).await;
    assert_eq!(r.status, 413);
    assert_eq!(error_code(&r), -32600);
    // Wrong content type → 415; notifications → 202.
    let mut h = headers_for(&ok);
    h.push(("Content-Type".into(), "text/plain".into()));
    assert_eq!(raw(a, "POST", &h, &bytes).await.status, 415);
    let r = raw(
        a,
        "POST",
        &headers_for(&ok),
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    http.shutdown().await;
}

/// A server whose tool `region` mirrors its argument into `Mcp-Param-Region`.
fn header_server() -> Server {
    let server = test_server();
    let schema =
        json!({ "type": "object", "properties": { "region": { "type": "string", "x-mcp-header": "Region" } } });
    server
        .add_tool(Tool::new("region", "Mirrors region", schema), |a: Value, _c| async move {
            Ok(CallToolResult::text(a.to_string()))
        })
        .unwrap();
    server
}

#[tokio::test]
async fn a_metadata_header_sent_twice_is_a_mismatch() {
    let http = start(header_server()).await;
    let a = http.local_addr();
    let call = body(21, "tools/call", json!({ "name": "region", "arguments": { "region": "eu" } }));
    let bytes = serde_json::to_vec(&call).unwrap();
    let mut good = headers_for(&call);
    good.push(("Mcp-Param-Region".into(), "eu".into()));
    assert_eq!(raw(a, "POST", &good, &bytes).await.status, 200);
    for (name, second) in [
        ("MCP-Protocol-Version", "1999-01-01"),
        ("Mcp-Method", "tools/list"),
        ("Mcp-Name", "echo"),
        ("Mcp-Param-Region", "us"),
    ] {
        let value = good.iter().find(|(n, _)| n == name).unwrap().1.clone();
        // Another value, the same value again, and the second line in another case: all refused.
        for extra in
            [(name.to_owned(), second.to_owned()), (name.to_owned(), value.clone()), (name.to_ascii_lowercase(), value)]
        {
            let mut h = good.clone();
            h.push(extra.clone());
            let r = raw(a, "POST", &h, &bytes).await;
            assert_eq!((r.status, error_code(&r)), (400, -32020), "{extra:?}");
            assert_eq!(r.json()["id"], json!(21));
            let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
            assert!(
                message.to_ascii_lowercase().contains(&name.to_ascii_lowercase()) && message.contains("more than once"),
                "{message}"
            );
            check_valid("tools/call", &r.json());
        }
    }
    // The order of the lines does not matter either: the bad one first is refused as well.
    let mut h = vec![("Mcp-Method".to_owned(), "tools/list".to_owned())];
    h.extend(good.iter().cloned());
    assert_eq!(error_code(&raw(a, "POST", &h, &bytes).await), -32020);
    assert_eq!(raw(a, "POST", &good, &bytes).await.status, 200, "the server keeps serving");
    http.shutdown().await;
}

#[tokio::test]
async fn host_rules_are_strict() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    let ok = body(1, "server/discover", json!({}));
    let bytes = serde_json::to_vec(&ok).unwrap();
    let with_host = |target: &str, hosts: &[&str]| {
        let mut head = format!("POST {target} HTTP/1.1\r\n");
        for h in hosts {
            head.push_str(&format!("Host: {h}\r\n"));
        }
        head.push_str(&format!(
            "Connection: close\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n",
            bytes.len()
        ));
        for (n, v) in headers_for(&ok) {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head + "\r\n"
    };
    let mine = format!("127.0.0.1:{}", a.port());
    let cases: Vec<(String, Vec<&str>, u16)> = vec![
        ("/mcp".into(), vec![&mine], 200),
        ("/mcp".into(), vec!["[::1]:8080"], 200),
        ("/mcp".into(), vec!["[::1]"], 200),
        ("/mcp".into(), vec!["LOCALHOST:1"], 200),
        // Two Host field lines: 400, whatever their values (RFC 9112 section 3.2).
        ("/mcp".into(), vec![&mine, "evil.example.com"], 400),
        ("/mcp".into(), vec!["evil.example.com", &mine], 400),
        ("/mcp".into(), vec![&mine, &mine], 400),
        // Bracketed IPv6 parsed strictly; no empty or oversized port.
        ("/mcp".into(), vec!["[::1"], 400),
        ("/mcp".into(), vec!["[::1]x"], 400),
        ("/mcp".into(), vec!["[::1]:"], 400),
        ("/mcp".into(), vec!["[::1]:99999"], 400),
        ("/mcp".into(), vec!["[::1]evil.example.com"], 400),
        ("/mcp".into(), vec!["localhost:"], 400),
        ("/mcp".into(), vec!["evil.example.com"], 403),
        ("/mcp".into(), vec!["[2001:db8::1]:80"], 403),
        // An absolute-form target names the host too: checked like Host, and the two must agree.
        (format!("http://{mine}/mcp"), vec![&mine], 200),
        ("http://evil.example.com/mcp".into(), vec!["evil.example.com"], 403),
        ("http://evil.example.com/mcp".into(), vec![&mine], 400),
    ];
    for (target, hosts, status) in cases {
        let r = send_raw(a, &with_host(&target, &hosts), &bytes).await;
        assert_eq!(r.status, status, "{target} Host: {hosts:?}: {}", String::from_utf8_lossy(&r.body));
        if status != 200 {
            assert_eq!(error_code(&r), -32600);
        }
    }
    http.shutdown().await;
}

/// One HTTP/2 (prior knowledge, h2c) POST to `/mcp` of `addr`, naming `authority` in
/// `:authority`, with `extra` headers.
async fn h2_post(addr: SocketAddr, authority: &str, extra: &[(String, String)], payload: Vec<u8>) -> (u16, Value) {
    use http_body_util::{BodyExt, Full};
    let io = hyper_util::rt::TokioIo::new(TcpStream::connect(addr).await.unwrap());
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io).await.unwrap();
    tokio::spawn(conn);
    let mut req = hyper::Request::post(format!("http://{authority}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json");
    for (n, v) in extra {
        req = req.header(n.as_str(), v.as_str());
    }
    let resp = sender.send_request(req.body(Full::new(bytes::Bytes::from(payload))).unwrap()).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn http2_authority_is_checked_like_host() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    let ok = body(1, "server/discover", json!({}));
    let bytes = serde_json::to_vec(&ok).unwrap();
    let h = headers_for(&ok);
    let (status, reply) = h2_post(a, &format!("127.0.0.1:{}", a.port()), &h, bytes.clone()).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(h2_post(a, "localhost", &h, bytes.clone()).await.0, 200);
    let (status, reply) = h2_post(a, "evil.example.com", &h, bytes.clone()).await;
    assert_eq!((status, reply["error"]["code"].clone()), (403, json!(-32600)), "DNS rebinding over HTTP/2: {reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("evil.example.com"));
    // A Host header beside :authority must name the same host.
    let mut with_host = h.clone();
    with_host.push(("host".into(), "evil.example.com".into()));
    assert_eq!(h2_post(a, "localhost", &with_host, bytes.clone()).await.0, 400);
    http.shutdown().await;
}

#[tokio::test]
async fn content_type_is_matched_as_a_media_type() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    let ok = body(1, "server/discover", json!({}));
    let bytes = serde_json::to_vec(&ok).unwrap();
    let post_as = |types: &[&str]| {
        let mut h = headers_for(&ok);
        h.push(("Accept".into(), "application/json".into()));
        h.extend(types.iter().map(|t| ("Content-Type".to_owned(), (*t).to_owned())));
        h
    };
    for (types, status) in [
        (&["application/json"][..], 200),
        (&["application/json; charset=utf-8"], 200),
        (&["Application/JSON;charset=\"UTF-8\""], 200),
        (&["application/json;"], 200),
        (&["application/jsonp"], 415),
        (&["application/json-seq"], 415),
        (&["application/json5"], 415),
        (&["text/plain"], 415),
        (&["application/json; charset=latin1"], 415),
        (&["application/json; charset"], 415),
        (&["application/json", "application/json"], 400),
    ] {
        let r = raw(a, "POST", &post_as(types), &bytes).await;
        assert_eq!(r.status, status, "{types:?}: {}", String::from_utf8_lossy(&r.body));
        if status != 200 {
            assert_eq!(error_code(&r), -32600);
        }
    }
    http.shutdown().await;
}

#[tokio::test]
async fn integer_ids_outside_i64_are_echoed_exactly() {
    let http = start(test_server()).await;
    let a = http.local_addr();
    for id in ["18446744073709551616", "-9223372036854775809", "18446744073709551615", "9223372036854775807"] {
        // Both a result and an error response echo the id's exact text.
        for (method, params) in [
            ("tools/call", json!({ "name": "echo", "arguments": { "n": 1 } })),
            ("tools/call", json!({ "name": "nope" })),
        ] {
            let b = body(1, method, params);
            let text = serde_json::to_string(&b).unwrap().replacen("\"id\":1", &format!("\"id\":{id}"), 1);
            let r = raw(a, "POST", &headers_for(&b), text.as_bytes()).await;
            let reply = String::from_utf8_lossy(&r.body).into_owned();
            assert!(reply.contains(&format!("\"id\":{id},")), "{id}: {reply}");
        }
    }
    http.shutdown().await;
}

#[tokio::test]
async fn template_variables_are_checked_against_path_traversal() {
    use mcpaxle::schema::{ReadResourceResult, ResourceContents, ResourceTemplate, TextResourceContents};
    use mcpaxle::server::{ResourceRequest, TemplateOptions};
    use std::sync::atomic::AtomicUsize;
    let server = test_server();
    let calls = Arc::new(AtomicUsize::new(0));
    let reader = |calls: Arc<AtomicUsize>| {
        move |r: ResourceRequest, _c: RequestContext| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                let text = Value::Object(r.variables).to_string();
                Ok(ReadResourceResult {
                    contents: vec![ResourceContents::Text(TextResourceContents {
                        uri: r.uri,
                        mime_type: None,
                        text,
                        meta: None,
                    })],
                    ..Default::default()
                })
            }
        }
    };
    let template =
        |t: &str| -> ResourceTemplate { serde_json::from_value(json!({ "uriTemplate": t, "name": t })).unwrap() };
    server.add_resource_template(template("file:///{+path}"), None, reader(calls.clone())).unwrap();
    server.add_resource_template(template("note://{id}"), None, reader(calls.clone())).unwrap();
    let opted_out = TemplateOptions { allow_path_traversal: true };
    server.add_resource_template_with(template("calc://{expr}"), None, opted_out, reader(calls.clone())).unwrap();
    let http = start(server).await;
    let a = http.local_addr();
    let read = |uri: &str| body(30, "resources/read", json!({ "uri": uri }));
    for uri in ["file:///docs/guide.md", "note://42", "calc://1%2F2"] {
        let r = post(a, &read(uri)).await;
        assert_eq!(r.status, 200, "{uri}: {}", String::from_utf8_lossy(&r.body));
        check_valid("resources/read", &r.json());
    }
    assert_eq!(calls.swap(0, Ordering::SeqCst), 3);
    let r = post(a, &read("calc://1%2F2")).await.json();
    assert_eq!(
        r["result"]["contents"][0]["text"],
        json!(r#"{"expr":"1/2"}"#),
        "the opt-out hands the value over as matched"
    );
    calls.store(0, Ordering::SeqCst);
    for uri in [
        "file:///../etc/passwd",
        "file:///docs/../../etc/passwd",
        "file:////etc/passwd",
        "file:///docs/%2E%2E/%2E%2E/etc/passwd",
        "file:///a%5C..%5Cwin.ini",
        "file:///C:/Windows/win.ini",
        "note://..",
        "note://..%2F..%2Fetc%2Fpasswd",
        "note://a%2Fb",
        "note://a%00b",
        "note://%252F",
    ] {
        let r = post(a, &read(uri)).await;
        assert_eq!((r.status, error_code(&r)), (400, -32602), "{uri}");
        let e = &r.json()["error"];
        assert_eq!(e["data"]["uri"], json!(uri));
        let message = e["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("Resource not found: {uri} (the value of {{"))
                && message.contains("path traversal"),
            "{message}"
        );
        check_valid("resources/read", &r.json());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no handler saw an unsafe value");
    http.shutdown().await;
}

#[tokio::test]
async fn mrtr_answers_carried_to_the_next_round_are_bounded() {
    use mcpaxle::server::seal::MAX_REQUEST_STATE;
    let server = test_server();
    let form = json!({ "mode": "form", "message": "Name?", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } } });
    server
        .add_tool(Tool::new("two_rounds", "Asks twice", json!({ "type": "object" })), move |_a, ctx: RequestContext| {
            let form = form.clone();
            async move {
                let first = ctx.elicit("first", form.clone()).await?;
                let second = ctx.elicit("second", form).await?;
                let len = first["content"]["name"].as_str().map_or(0, str::len);
                Ok(CallToolResult::text(format!("{len} {}", second["content"]["name"])))
            }
        })
        .unwrap();
    let http = start(server).await;
    let a = http.local_addr();
    let call = |extra: Value| {
        let mut params = json!({ "name": "two_rounds" });
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body(40, "tools/call", params)
    };
    // An answer whose carried JSON ({"first": answer}) is exactly the limit, then one byte more.
    let answer_of = |carried: usize| {
        let overhead = serde_json::to_string(&json!({ "first": { "action": "accept", "content": { "name": "" } } }))
            .unwrap()
            .len();
        json!({ "action": "accept", "content": { "name": "x".repeat(carried - overhead) } })
    };
    for (carried, completes) in [(MAX_REQUEST_STATE, true), (MAX_REQUEST_STATE + 1, false)] {
        let answer = answer_of(carried);
        assert_eq!(serde_json::to_string(&json!({ "first": answer })).unwrap().len(), carried);
        let r1 = post(a, &call(json!({}))).await.json();
        let state = r1["result"]["requestState"].as_str().unwrap().to_owned();
        let r2 = post(a, &call(json!({ "requestState": state, "inputResponses": { "first": answer } }))).await;
        if !completes {
            assert_eq!((r2.status, error_code(&r2)), (400, -32602));
            let e = &r2.json()["error"];
            let message = e["message"].as_str().unwrap();
            assert!(
                message.contains("inputResponses[\"first\"]") && message.contains(&MAX_REQUEST_STATE.to_string()),
                "{message}"
            );
            assert_eq!(e["data"]["limit"], json!(MAX_REQUEST_STATE));
            assert_eq!(e["data"]["carried"], json!(carried));
            assert_eq!(e["data"]["inputResponse"], json!("first"));
            check_valid("tools/call", &r2.json());
            continue;
        }
        assert_eq!(r2.status, 200);
        let r2 = r2.json();
        assert_eq!(r2["result"]["resultType"], json!("input_required"));
        let state = r2["result"]["requestState"].as_str().unwrap().to_owned();
        // The state at the limit comes back within the default 4 MiB body limit, and the call finishes.
        let last = call(
            json!({ "requestState": state, "inputResponses": { "second": { "action": "accept", "content": { "name": "y".repeat(1 << 20) } } } }),
        );
        assert!(serde_json::to_vec(&last).unwrap().len() < 4 << 20);
        let r3 = post(a, &last).await;
        assert_eq!(r3.status, 200, "{}", String::from_utf8_lossy(&r3.body[..r3.body.len().min(300)]));
        let r3 = r3.json();
        assert_eq!(r3["result"]["resultType"], json!("complete"));
        let name_len = answer["content"]["name"].as_str().unwrap().len();
        assert!(
            r3["result"]["content"][0]["text"].as_str().unwrap().starts_with(&format!("{name_len} ")),
            "the last run saw the first answer whole"
        );
    }
    http.shutdown().await;
}

#[tokio::test]
async fn notifications_switch_the_response_to_sse() {
    let http = start(test_server()).await;
    let mut b = body(1, "tools/call", json!({ "name": "progress" }));
    b["params"]["_meta"]["progressToken"] = json!("p1");
    let r = post(http.local_addr(), &b).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    let events = r.events();
    assert_eq!(events.len(), 4);
    for e in &events[..3] {
        assert_eq!(e["method"], json!("notifications/progress"));
        assert_eq!(e["params"]["progressToken"], json!("p1"));
        check_valid("tools/call", e);
    }
    assert_eq!(events[3]["result"]["content"][0]["text"], json!("done"));
    check_valid("tools/call", &events[3]);
    http.shutdown().await;
}

#[tokio::test]
async fn listen_streams_acknowledge_filter_and_close_gracefully() {
    let server = test_server();
    let http = start(server.clone()).await;
    let a = http.local_addr();
    let b = body(
        77,
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true, "promptsListChanged": true } }),
    );
    let listen = tokio::spawn(async move { post(a, &b).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    server
        .add_tool(Tool::new("late", "Added later", json!({ "type": "object" })), |_a, _c| async {
            Ok(CallToolResult::text(""))
        })
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    http.shutdown().await;
    let r = tokio::time::timeout(Duration::from_secs(5), listen).await.unwrap().unwrap();
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert!(String::from_utf8_lossy(&r.body).contains(": keep-alive"), "keep-alive comments on idle listen streams");
    let events = r.events();
    assert_eq!(events[0]["method"], json!("notifications/subscriptions/acknowledged"));
    // prompts are not offered by this server, so the acknowledgment drops them.
    assert_eq!(events[0]["params"]["notifications"], json!({ "toolsListChanged": true }));
    assert_eq!(events[1]["method"], json!("notifications/tools/list_changed"));
    let last = events.last().unwrap();
    assert_eq!(last["id"], json!(77));
    assert_eq!(last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], json!(77));
    for e in &events {
        check_valid("subscriptions/listen", e);
        if e.get("method").is_some() {
            assert_eq!(e["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], json!(77));
        }
    }
}

#[tokio::test]
async fn disconnect_cancels_the_handler() -> Result<()> {
    let server = Server::builder("t", "1").build();
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    server.add_tool(
        Tool::new("slow", "Waits to be cancelled", json!({ "type": "object" })),
        move |_a, ctx: RequestContext| {
            let flag = flag.clone();
            async move {
                struct OnDrop(Arc<AtomicBool>);
                impl Drop for OnDrop {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let _guard = OnDrop(flag);
                ctx.cancelled().await;
                Ok(CallToolResult::text("cancelled"))
            }
        },
    )?;
    let http = start(server).await;
    let b = body(1, "tools/call", json!({ "name": "slow" }));
    let bytes = serde_json::to_vec(&b).unwrap();
    let mut s = TcpStream::connect(http.local_addr()).await?;
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        bytes.len()
    );
    for (n, v) in headers_for(&b) {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await?;
    s.write_all(&bytes).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!cancelled.load(Ordering::SeqCst));
    drop(s);
    for _ in 0..50 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(cancelled.load(Ordering::SeqCst), "closing the connection drops the handler");
    http.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn structured_content_must_match_the_output_schema() {
    let server = Server::builder("t", "1").build();
    let out = json!({ "type": "object", "properties": { "temp": { "type": "number" } }, "required": ["temp"] });
    let tool = |name: &str| Tool::new(name, "Weather", json!({ "type": "object" })).with_output_schema(out.clone());
    server.add_tool(tool("good"), |_a, _c| async { Ok(CallToolResult::structured(json!({ "temp": 21.5 }))) }).unwrap();
    server.add_tool(tool("bad"), |_a, _c| async { Ok(CallToolResult::structured(json!({ "temp": "warm" }))) }).unwrap();
    server.add_tool(tool("none"), |_a, _c| async { Ok(CallToolResult::text("21.5")) }).unwrap();
    let bad_schema = Tool::new("x", "x", json!({ "type": "object" }))
        .with_output_schema(json!({ "$ref": "https://example.com/s.json" }));
    assert!(
        server.add_tool(bad_schema, |_a, _c| async { Ok(CallToolResult::text("")) }).is_err(),
        "external $ref refused at registration"
    );
    let http = start(server).await;
    let r = post(http.local_addr(), &body(1, "tools/call", json!({ "name": "good" }))).await;
    assert_eq!(r.status, 200);
    check_valid("tools/call", &r.json());
    assert_eq!(r.json()["result"]["structuredContent"], json!({ "temp": 21.5 }));
    for name in ["bad", "none"] {
        let r = post(http.local_addr(), &body(2, "tools/call", json!({ "name": name }))).await;
        assert_eq!((r.status, error_code(&r)), (500, -32603), "{name}");
    }
    http.shutdown().await;
}

#[tokio::test]
async fn completions_are_capped_at_100_with_has_more() {
    use mcpaxle::schema::{CompleteResult, GetPromptResult, Prompt};
    use mcpaxle::server::CompletionRef;
    let server = Server::builder("t", "1").build();
    server
        .add_prompt(Prompt::new("p").with_argument("a", "an argument", false), |_a, _c| async {
            Ok(GetPromptResult::new(vec![]))
        })
        .unwrap();
    server.set_completion(CompletionRef::Prompt("p".into()), |_r, _c| async {
        Ok(CompleteResult::new((0..150).map(|i| i.to_string()).collect()))
    });
    let http = start(server).await;
    let params = json!({ "ref": { "type": "ref/prompt", "name": "p" }, "argument": { "name": "a", "value": "" } });
    let r = post(http.local_addr(), &body(1, "completion/complete", params)).await.json();
    check_valid("completion/complete", &r);
    let c = &r["result"]["completion"];
    assert_eq!(
        (c["values"].as_array().unwrap().len(), c["hasMore"].clone(), c["total"].clone()),
        (100, json!(true), json!(150))
    );
    let r = post(
        http.local_addr(),
        &body(
            2,
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "nope" }, "argument": { "name": "a", "value": "" } }),
        ),
    )
    .await;
    assert_eq!((r.status, error_code(&r)), (400, -32602));
    http.shutdown().await;
}

#[tokio::test]
async fn bearer_auth_protects_the_endpoint() {
    let server = test_server();
    server
        .add_tool(
            Tool::new("whoami", "Who is calling", json!({ "type": "object" })),
            |_a, ctx: RequestContext| async move {
                Ok(CallToolResult::text(ctx.principal().unwrap_or("nobody").to_owned()))
            },
        )
        .unwrap();
    let auth = BearerAuth::new("http://127.0.0.1/mcp", "http://127.0.0.1:9/as", |token: String| async move {
        Ok(match token.as_str() {
            "reader" => Some(TokenInfo::new("alice", ["notes:read"])),
            "writer" => Some(TokenInfo::new("bob", ["notes:read", "notes:write"])),
            _ => None,
        })
    })
    .required_scopes(["notes:read"])
    .tool_scopes("echo", ["notes:write"]);
    let options = HttpOptions { auth: Some(auth), ..Default::default() };
    let http = HttpServer::bind(server, "127.0.0.1:0".parse().unwrap(), options).await.unwrap();
    let addr = http.local_addr();

    // The metadata is public.
    let prm = raw_at(addr, "GET", "/.well-known/oauth-protected-resource/mcp", &[], b"").await;
    assert_eq!(prm.status, 200);
    assert_eq!(prm.json()["authorization_servers"], json!(["http://127.0.0.1:9/as"]));
    assert_eq!(prm.json()["scopes_supported"], json!(["notes:read"]));

    let call = |name: &str| body(1, "tools/call", json!({ "name": name, "arguments": {} }));
    let with = |b: &Value, token: &str| {
        let mut h = headers_for(b);
        h.push(("Authorization".into(), format!("Bearer {token}")));
        h
    };
    // No token, a bad one: 401 with the challenge that starts a client's flow.
    let r = post(addr, &call("whoami")).await;
    assert_eq!(r.status, 401);
    let challenge = r.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\""),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"notes:read\""), "{challenge}");
    let b = call("whoami");
    let r = raw(addr, "POST", &with(&b, "forged"), &serde_json::to_vec(&b).unwrap()).await;
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").unwrap().contains("error=\"invalid_token\""));
    assert_eq!(r.json()["error"], "invalid_token");

    // A valid token: the subject is the principal.
    let r = raw(addr, "POST", &with(&b, "reader"), &serde_json::to_vec(&b).unwrap()).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["result"]["content"][0]["text"], "alice");

    // A tool that needs more: 403 insufficient_scope naming every scope needed (step-up).
    let b = call("echo");
    let r = raw(addr, "POST", &with(&b, "reader"), &serde_json::to_vec(&b).unwrap()).await;
    assert_eq!(r.status, 403);
    let challenge = r.header("www-authenticate").unwrap();
    assert!(challenge.contains("error=\"insufficient_scope\", scope=\"notes:read notes:write\""), "{challenge}");
    let r = raw(addr, "POST", &with(&b, "writer"), &serde_json::to_vec(&b).unwrap()).await;
    assert_eq!(r.status, 200);
    check_valid("tools/call", &r.json());

    // Legacy sessions too: initialize needs the token.
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let h = vec![("Authorization".to_owned(), "Bearer forged".to_owned())];
    assert_eq!(raw(addr, "POST", &h, &serde_json::to_vec(&init).unwrap()).await.status, 401);
    let h = vec![("Authorization".to_owned(), "Bearer reader".to_owned())];
    assert_eq!(raw(addr, "POST", &h, &serde_json::to_vec(&init).unwrap()).await.status, 200);
}

#[tokio::test]
async fn a_listen_stream_that_is_not_read_still_learns_every_change() {
    use mcpaxle::server::ServerEvent;
    use std::collections::HashSet;
    let server = test_server();
    let padding = "p".repeat(200);
    // 10 URIs that change all the time, 1,400 that change once, and the tool list.
    let hot: Vec<String> = (0..10).map(|i| format!("hot://{i}/{padding}")).collect();
    let once: Vec<String> = (0..1400).map(|i| format!("once://{i}/{padding}")).collect();
    server
        .add_resource(
            mcpaxle::schema::Resource::new("test://r", "r"),
            None,
            |r: mcpaxle::server::ResourceRequest, _c| async move {
                Ok(mcpaxle::schema::ReadResourceResult::new(vec![
                    mcpaxle::schema::TextResourceContents::new(r.uri, "text/plain", "x").into(),
                ]))
            },
        )
        .unwrap();
    let http = start(server.clone()).await;
    let a = http.local_addr();
    let all: Vec<&String> = hot.iter().chain(&once).collect();
    let b = body(
        9,
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true, "resourceSubscriptions": all } }),
    );
    let payload = serde_json::to_vec(&b).unwrap();

    // A client with a tiny receive window that reads the acknowledgment, then nothing.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(a).await.unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        a.port(),
        payload.len()
    );
    for (n, v) in headers_for(&b) {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    s.write_all(&payload).await.unwrap();
    let mut received = Vec::new();
    let mut buf = vec![0; 4096];
    while !String::from_utf8_lossy(&received).contains("notifications/subscriptions/acknowledged") {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "the server closed the listen stream");
        received.extend_from_slice(&buf[..n]);
    }

    // 20,000 changes in ten rounds, the server's writes blocked by the unread socket in between.
    for round in 0..10 {
        for i in 0..2000 {
            match i % 100 {
                0 => server.publish(ServerEvent::ToolsListChanged),
                n if n % 11 == 0 => server.notify_resource_updated(&once[(round * 2000 + i) * 1400 / 20_000]),
                n => server.notify_resource_updated(&hot[n % 10]),
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Now the client reads: every URI that changed, and the tool list, arrive.
    let mut want: HashSet<String> = all.iter().map(|u| u.to_string()).collect();
    want.insert("notifications/tools/list_changed".into());
    let mut scanned = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !want.is_empty() {
        let read = tokio::time::timeout_at(deadline, s.read(&mut buf)).await;
        let n = read.unwrap_or_else(|_| panic!("{} of {} changes never arrived", want.len(), all.len() + 1)).unwrap();
        assert!(n > 0, "the server closed the listen stream with {} changes missing", want.len());
        received.extend_from_slice(&buf[..n]);
        let Some(end) = received.iter().rposition(|&c| c == b'\n') else { continue };
        for line in received[scanned..end].split(|&c| c == b'\n') {
            let Some(data) = line.strip_prefix(b"data: ") else { continue };
            let m: Value = serde_json::from_slice(data).unwrap();
            match m["params"]["uri"].as_str() {
                Some(uri) => want.remove(uri),
                None => want.remove(m["method"].as_str().unwrap_or_default()),
            };
        }
        scanned = end;
    }
    http.shutdown().await;
}

#[tokio::test]
async fn reuse_port_lets_several_servers_share_a_port() {
    let first = HttpServer::bind(test_server(), "127.0.0.1:0".parse().unwrap(), HttpOptions::default()).await.unwrap();
    let taken = first.local_addr();
    let e = HttpServer::bind(test_server(), taken, HttpOptions::default()).await.err().expect("the port is taken");
    assert!(e.to_string().contains(&format!("cannot listen on {taken}")), "{e}");
    first.shutdown().await;

    let shared = HttpOptions { reuse_port: true, ..HttpOptions::default() };
    let a = HttpServer::bind(test_server(), "127.0.0.1:0".parse().unwrap(), shared.clone()).await.unwrap();
    let b = HttpServer::bind(test_server(), a.local_addr(), shared).await.unwrap();
    assert_eq!(a.local_addr(), b.local_addr());
    // Both serve: each request is answered by one of them.
    for _ in 0..8 {
        let r = post(a.local_addr(), &body(1, "tools/list", json!({}))).await;
        assert_eq!(r.status, 200);
    }
    a.shutdown().await;
    b.shutdown().await;
}
