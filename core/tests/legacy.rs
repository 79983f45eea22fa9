//! The legacy 2025-11-25 era on the same server: initialize and sessions over HTTP and
//! stdio, asks as real server-to-client requests, the GET stream, DELETE, expiry, and 10,000
//! abandoned sessions leaving nothing behind. Every legacy message is validated against the
//! 2025-11-25 schema.json. Sessions bound to their principal and the limits of the session
//! table: legacy_sessions.rs.

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcpaxle::legacy::LegacyOptions;
use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::{RequestContext, Server};
use mcpaxle::transport::http::{HttpOptions, McpBody, McpService};
use mcpaxle::transport::stdio::{StdioOptions, serve_with};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn server(legacy: LegacyOptions) -> Server {
    let s = Server::builder("legacy-test", "1.0.0").legacy(legacy).enable_logging().build();
    let schema = json!({ "type": "object", "properties": { "message": { "type": "string" } } });
    s.add_tool(Tool::new("ask", "Asks the user", schema.clone()), |a: Value, ctx: RequestContext| async move {
        let params = json!({ "message": a["message"].as_str().unwrap_or("Name?"), "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } } });
        let answer = ctx.elicit("name", params).await?;
        Ok(CallToolResult::text(format!("got {}", answer["content"]["name"].as_str().unwrap_or("?"))))
    })
    .unwrap();
    s.add_tool(Tool::new("logs", "Logs and reports progress", schema), |_a, ctx: RequestContext| async move {
        ctx.log(mcpaxle::schema::LoggingLevel::Info, None, json!("working"));
        ctx.progress(1.0, Some(1.0), None);
        Ok(CallToolResult::text("done"))
    })
    .unwrap();
    s.add_resource(
        mcpaxle::schema::Resource::new("test://watched", "watched"),
        None,
        |r: mcpaxle::server::ResourceRequest, _c| async move {
            Ok(mcpaxle::schema::ReadResourceResult::new(vec![
                mcpaxle::schema::TextResourceContents::new(r.uri, "text/plain", "x").into(),
            ]))
        },
    )
    .unwrap();
    s
}

fn service(legacy: LegacyOptions) -> (Server, McpService) {
    let s = server(legacy);
    (s.clone(), McpService::new(s, HttpOptions::default()))
}

fn http_req(method: &str, session: Option<&str>, body: Option<Value>) -> http::Request<Full<Bytes>> {
    let mut b = http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
    }
    let bytes = body.map(|v| serde_json::to_vec(&v).unwrap()).unwrap_or_default();
    b.body(Full::new(Bytes::from(bytes))).unwrap()
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

async fn json_of(r: http::Response<McpBody>) -> Value {
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
}

/// Reads the next SSE event's JSON from a streaming body.
async fn next_event(body: &mut McpBody, buf: &mut String) -> Option<Value> {
    loop {
        if let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            // The priming event (an id, no data) opens resumable streams: not a message.
            if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")).filter(|d| !d.is_empty()) {
                return Some(serde_json::from_str(data).unwrap());
            }
            continue;
        }
        let frame =
            tokio::time::timeout(Duration::from_secs(5), body.frame()).await.expect("an SSE event in time")?.unwrap();
        if let Ok(data) = frame.into_data() {
            buf.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

async fn initialize(svc: &McpService, caps: Value) -> String {
    let init = rpc(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": { "name": "legacy", "version": "1" } }),
    );
    let r = svc.handle(http_req("POST", None, Some(init))).await;
    assert_eq!(r.status(), 200);
    let id = r.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
    assert!(id.len() >= 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "visible ASCII, unguessable: {id}");
    let v = json_of(r).await;
    support::legacy::validate_message("initialize", &v).unwrap();
    assert_eq!(v["result"]["protocolVersion"], json!("2025-11-25"));
    let r = svc
        .handle(http_req("POST", Some(&id), Some(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))))
        .await;
    assert_eq!(r.status(), 202);
    id
}

#[tokio::test]
async fn initialize_opens_a_session_served_by_the_same_handlers() {
    let (_s, svc) = service(LegacyOptions::default());
    let sid = initialize(&svc, json!({})).await;
    for (method, params) in [
        ("ping", json!({})),
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/read", json!({ "uri": "test://watched" })),
        ("logging/setLevel", json!({ "level": "info" })),
        ("resources/subscribe", json!({ "uri": "test://watched" })),
        ("resources/unsubscribe", json!({ "uri": "test://watched" })),
    ] {
        let v = json_of(svc.handle(http_req("POST", Some(&sid), Some(rpc(2, method, params)))).await).await;
        assert!(v.get("result").is_some(), "{method}: {v}");
        assert!(
            v["result"].get("resultType").is_none() && v["result"].get("ttlMs").is_none(),
            "no modern fields on the legacy wire: {v}"
        );
        support::legacy::validate_message(method, &v).unwrap_or_else(|e| panic!("{method}: {e}"));
    }
    // Unknown resources get the legacy code; asking without the client capability is a tool error.
    let v = json_of(
        svc.handle(http_req("POST", Some(&sid), Some(rpc(3, "resources/read", json!({ "uri": "test://none" }))))).await,
    )
    .await;
    assert_eq!(v["error"]["code"], json!(-32002));
    let v =
        json_of(svc.handle(http_req("POST", Some(&sid), Some(rpc(4, "tools/call", json!({ "name": "ask" }))))).await)
            .await;
    assert_eq!(v["result"]["isError"], json!(true), "{v}");
    // Logs (level set above) and progress ride the POST's SSE stream.
    let r = svc
        .handle(http_req(
            "POST",
            Some(&sid),
            Some(rpc(5, "tools/call", json!({ "name": "logs", "_meta": { "progressToken": 7 } }))),
        ))
        .await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let (mut body, mut buf) = (r.into_body(), String::new());
    let mut methods = Vec::new();
    while let Some(e) = next_event(&mut body, &mut buf).await {
        support::legacy::validate_message("tools/call", &e).unwrap();
        methods.push(e.get("method").and_then(Value::as_str).unwrap_or("response").to_owned());
    }
    assert_eq!(methods, ["notifications/message", "notifications/progress", "response"]);
    // A modern client's initialize (it carries the modern _meta) is still -32601.
    let modern = rpc(
        9,
        "initialize",
        json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    let r = svc.handle(http_req("POST", None, Some(modern))).await;
    assert_eq!(r.status(), 404);
}

/// A handler mounted by the host application answers whatever path the host routes to it;
/// `handle` itself keeps its path.
#[tokio::test]
async fn a_routed_request_is_served_at_any_path() {
    let (_s, svc) = service(LegacyOptions::default());
    let init = rpc(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "legacy", "version": "1" } }),
    );
    let at_root = || {
        let mut req = http_req("POST", None, Some(init.clone()));
        *req.uri_mut() = "/".parse().unwrap();
        req
    };
    assert_eq!(svc.handle(at_root()).await.status(), 404);
    let r = svc.handle_routed(at_root()).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("mcp-session-id"));
    assert_eq!(json_of(r).await["result"]["protocolVersion"], json!("2025-11-25"));
}

#[tokio::test]
async fn asks_become_requests_answered_on_the_session() {
    let (_s, svc) = service(LegacyOptions::default());
    let sid = initialize(&svc, json!({ "elicitation": {} })).await;
    let r = svc
        .handle(http_req(
            "POST",
            Some(&sid),
            Some(rpc(2, "tools/call", json!({ "name": "ask", "arguments": { "message": "Who?" } }))),
        ))
        .await;
    let (mut body, mut buf) = (r.into_body(), String::new());
    let ask = next_event(&mut body, &mut buf).await.unwrap();
    support::legacy::validate_message("tools/call", &ask).unwrap();
    assert_eq!(ask["method"], json!("elicitation/create"));
    assert_eq!(ask["params"]["message"], json!("Who?"));
    let answer =
        json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "name": "Ada" } } });
    assert_eq!(svc.handle(http_req("POST", Some(&sid), Some(answer))).await.status(), 202);
    let done = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(done["result"]["content"][0]["text"], json!("got Ada"));
    support::legacy::validate_message("tools/call", &done).unwrap();
}

#[tokio::test]
async fn a_dropped_request_leaves_nothing_behind_in_its_session() {
    let (_s, svc) = service(LegacyOptions::default());
    let sid = initialize(&svc, json!({ "elicitation": {} })).await;
    let session = svc.sessions().get(&sid, None).unwrap();
    let r = svc.handle(http_req("POST", Some(&sid), Some(rpc(2, "tools/call", json!({ "name": "ask" }))))).await;
    let (mut body, mut buf) = (r.into_body(), String::new());
    assert_eq!(next_event(&mut body, &mut buf).await.unwrap()["method"], json!("elicitation/create"));
    assert_eq!((session.requests_in_flight(), session.requests_to_client_pending()), (1, 1));
    drop(body); // the client went away mid-ask
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!((session.requests_in_flight(), session.requests_to_client_pending()), (0, 0));
}

#[tokio::test]
async fn an_unanswered_ask_times_out_and_is_cancelled() {
    let (_s, svc) = service(LegacyOptions { request_timeout: Duration::from_millis(200), ..Default::default() });
    let sid = initialize(&svc, json!({ "elicitation": {} })).await;
    let r = svc.handle(http_req("POST", Some(&sid), Some(rpc(2, "tools/call", json!({ "name": "ask" }))))).await;
    let (mut body, mut buf) = (r.into_body(), String::new());
    let ask = next_event(&mut body, &mut buf).await.unwrap();
    let cancelled = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(cancelled["method"], json!("notifications/cancelled"));
    assert_eq!(cancelled["params"]["requestId"], ask["id"]);
    let done = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(done["result"]["isError"], json!(true), "{done}");
    // The late answer is accepted and ignored; the session still works.
    let late = json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "cancel" } });
    assert_eq!(svc.handle(http_req("POST", Some(&sid), Some(late))).await.status(), 202);
    let v = json_of(svc.handle(http_req("POST", Some(&sid), Some(rpc(3, "ping", json!({}))))).await).await;
    assert!(v.get("result").is_some());
}

#[tokio::test]
async fn the_get_stream_carries_list_changes_and_subscribed_updates() {
    let (server, svc) = service(LegacyOptions::default());
    let sid = initialize(&svc, json!({})).await;
    json_of(
        svc.handle(http_req(
            "POST",
            Some(&sid),
            Some(rpc(2, "resources/subscribe", json!({ "uri": "test://watched" }))),
        ))
        .await,
    )
    .await;
    let r = svc.handle(http_req("GET", Some(&sid), None)).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let (mut body, mut buf) = (r.into_body(), String::new());
    server.notify_resource_updated("test://other");
    server.notify_resource_updated("test://watched");
    server.remove_tool("logs");
    let e = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(
        e,
        json!({ "jsonrpc": "2.0", "method": "notifications/resources/updated", "params": { "uri": "test://watched" } })
    );
    let e = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(e["method"], json!("notifications/tools/list_changed"));
    support::legacy::validate_message("", &e).unwrap();
    // DELETE ends the session and its stream; the id is then unknown.
    assert_eq!(svc.handle(http_req("DELETE", Some(&sid), None)).await.status(), 200);
    assert!(next_event(&mut body, &mut buf).await.is_none(), "the GET stream ends with the session");
    let r = svc.handle(http_req("POST", Some(&sid), Some(rpc(3, "ping", json!({}))))).await;
    assert_eq!(r.status(), 404);
    assert_eq!(svc.handle(http_req("DELETE", Some(&sid), None)).await.status(), 404);
}

#[tokio::test]
async fn modern_only_mode_refuses_the_legacy_era() {
    let (_s, svc) = service(LegacyOptions::disabled());
    let init = rpc(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "x", "version": "1" } }),
    );
    let r = svc.handle(http_req("POST", None, Some(init))).await;
    assert_eq!(r.status(), 404);
    assert_eq!(json_of(r).await["error"]["code"], json!(-32601));
    assert_eq!(svc.handle(http_req("GET", Some("abc"), None)).await.status(), 405);
}

#[tokio::test]
async fn a_session_request_with_two_protocol_version_lines_is_refused() {
    let (_s, svc) = service(LegacyOptions::default());
    let sid = initialize(&svc, json!({})).await;
    let ok = svc.handle(http_req("POST", Some(&sid), Some(rpc(2, "tools/list", json!({}))))).await;
    assert_eq!(ok.status(), 200);
    for second in ["2025-11-25", "2026-07-28"] {
        let mut req = http_req("POST", Some(&sid), Some(rpc(3, "tools/list", json!({}))));
        req.headers_mut().append("mcp-protocol-version", http::HeaderValue::from_static(second));
        let r = svc.handle(req).await;
        assert_eq!(r.status(), 400, "a second line {second:?}");
        let v = json_of(r).await;
        assert!(v["error"]["message"].as_str().unwrap().contains("more than once"), "{v}");
    }
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_sessions_expire_and_a_full_table_makes_room() {
    let n = 10_000;
    let init = |i: i64| {
        rpc(
            i,
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": { "sampling": {} }, "clientInfo": { "name": "leaky", "version": "1" } }),
        )
    };
    // The idle timeout must outlast the creation of a whole wave, or the first sessions expire
    // before the table is full: time 1,000 initializes on this machine (shared and noisy) and
    // allow four times the projected wave, at least 3 s.
    let wave_of_1000 = {
        let (_w, warm) = service(LegacyOptions::default());
        let started = std::time::Instant::now();
        for i in 0..1_000 {
            assert_eq!(warm.handle(http_req("POST", None, Some(init(i)))).await.status(), 200);
        }
        started.elapsed()
    };
    let idle_timeout = Duration::from_secs(3).max(wave_of_1000 * (n as u32 / 1_000) * 4);
    let (_s, svc) = service(LegacyOptions { max_sessions: n, idle_timeout, ..Default::default() });
    let mut rss = Vec::new();
    for round in 0..3 {
        for i in 0..n {
            let r = svc.handle(http_req("POST", None, Some(init(i as i64)))).await;
            assert_eq!(r.status(), 200, "round {round}, session {i}");
        }
        assert_eq!(svc.sessions().len(), n);
        // Full of idle sessions: the next initialize ends the oldest to make room.
        let r = svc.handle(http_req("POST", None, Some(init(-1)))).await;
        assert_eq!(r.status(), 200);
        assert_eq!(svc.sessions().len(), n);
        // Abandoned: all of them expire.
        let deadline = tokio::time::Instant::now() + idle_timeout + Duration::from_secs(10);
        while !svc.sessions().is_empty() {
            assert!(tokio::time::Instant::now() < deadline, "{} sessions never expired", svc.sessions().len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        rss.push(rss_kib());
    }
    // Memory returns to the same level after each wave: nothing is retained per session (a
    // leak would add megabytes per wave of 10,000; the first wave also warms the allocator).
    let growth = rss[2].saturating_sub(rss[1]);
    assert!(growth < 4 * 1024, "RSS grew by {growth} KiB between waves of 10,000 sessions: {rss:?}");
    eprintln!("RSS after each wave of {n} expired sessions (KiB): {rss:?}");
}

#[tokio::test]
async fn stdio_decides_the_era_with_the_first_request() {
    let s = server(LegacyOptions::default());
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(serve_with(s, server_in, server_out, StdioOptions::default()));
    let mut lines = BufReader::new(output).lines();
    let mut send = async |v: Value| input.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    send(rpc(1, "initialize", json!({ "protocolVersion": "2025-03-26", "capabilities": { "elicitation": {} }, "clientInfo": { "name": "x", "version": "1" } }))).await;
    let mut next = async || -> Value { serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap() };
    let init = next().await;
    assert_eq!(init["result"]["protocolVersion"], json!("2025-03-26"));
    support::legacy::validate_message("initialize", &init).unwrap();
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
    send(rpc(2, "tools/call", json!({ "name": "ask" }))).await;
    let ask = next().await;
    assert_eq!(ask["method"], json!("elicitation/create"));
    send(
        json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "name": "Grace" } } }),
    )
    .await;
    let done = next().await;
    assert_eq!(done["result"]["content"][0]["text"], json!("got Grace"));
    support::legacy::validate_message("tools/call", &done).unwrap();
    send(rpc(3, "ping", json!({}))).await;
    assert_eq!(next().await, json!({ "jsonrpc": "2.0", "id": 3, "result": {} }));
    drop(input);
    tokio::time::timeout(Duration::from_secs(2), serving).await.unwrap().unwrap().unwrap();
}
