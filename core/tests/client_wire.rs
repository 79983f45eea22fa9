//! What the client puts on the wire, checked against a scripted HTTP server that records
//! every request: the standard and `x-mcp-header` headers, era detection and the legacy
//! session, retries after -32022 and an expired session, the MRTR retry rules, the cache, and
//! `$ref` never being fetched.

mod client_common;

use client_common::options;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use mcpaxle::ErrorKind;
use mcpaxle::client::{CallOptions, Client, ClientOptions, Era};
use mcpaxle::schema::{ClientCapabilities, SamplingCapability};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One request the scripted server received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: http::HeaderMap,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    fn rpc(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }
}

struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

fn json_reply(body: Value) -> Reply {
    Reply { status: 200, headers: vec![("content-type", "application/json".into())], body: body.to_string() }
}

fn result(req: &Seen, result: Value) -> Reply {
    json_reply(json!({ "jsonrpc": "2.0", "id": req.body["id"], "result": result }))
}

fn error(status: u16, req: &Seen, code: i64, message: &str, data: Option<Value>) -> Reply {
    let mut e = json!({ "code": code, "message": message });
    if let Some(d) = data {
        e["data"] = d;
    }
    Reply {
        status,
        headers: vec![("content-type", "application/json".into())],
        body: json!({ "jsonrpc": "2.0", "id": req.body["id"], "error": e }).to_string(),
    }
}

fn empty(status: u16) -> Reply {
    Reply { status, headers: vec![], body: String::new() }
}

/// A legacy server's answer to `initialize`: `version`, `capabilities`, and the session id.
fn initialized(req: &Seen, version: &str, capabilities: Value, session: String) -> Reply {
    let mut r = result(
        req,
        json!({ "protocolVersion": version, "capabilities": capabilities, "serverInfo": { "name": "scripted", "version": "1" } }),
    );
    r.headers.push(("mcp-session-id", session));
    r
}

fn discover_ok(req: &Seen) -> Reply {
    result(
        req,
        json!({
            "resultType": "complete", "ttlMs": 0, "cacheScope": "public",
            "supportedVersions": ["2026-07-28"], "capabilities": { "tools": {} },
            "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "scripted", "version": "1" } }
        }),
    )
}

type Script = Arc<dyn Fn(&Seen, usize) -> Reply + Send + Sync>;

/// Serves `script` (called with each request and its index) on a free port.
/// A reply header the scripted server does not send: it waits that many ms before answering.
const HOLD: &str = "x-test-hold-ms";

async fn scripted(script: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let script: Script = Arc::new(script);
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let (script, log) = (script.clone(), log.clone());
            let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let (script, log) = (script.clone(), log.clone());
                async move {
                    let (parts, body) = req.into_parts();
                    let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
                    let seen = Seen {
                        method: parts.method.to_string(),
                        path: parts.uri.path().to_owned(),
                        headers: parts.headers,
                        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                    };
                    let index = {
                        let mut l = log.lock().unwrap();
                        l.push(seen.clone());
                        l.len() - 1
                    };
                    let mut reply = script(&seen, index);
                    // A reply may hold its headers back (a server whose GET stream sends
                    // nothing until its first event): the test-only `x-test-hold-ms`.
                    if let Some(at) = reply.headers.iter().position(|(k, _)| *k == HOLD) {
                        let ms = reply.headers.remove(at).1.parse().unwrap();
                        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                    }
                    let mut resp = hyper::Response::new(Full::new(Bytes::from(reply.body)));
                    *resp.status_mut() = hyper::StatusCode::from_u16(reply.status).unwrap();
                    for (k, v) in reply.headers {
                        resp.headers_mut().insert(k, v.parse().unwrap());
                    }
                    Ok::<_, std::convert::Infallible>(resp)
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (base, seen)
}

fn posts(seen: &Arc<Mutex<Vec<Seen>>>) -> Vec<Seen> {
    seen.lock().unwrap().iter().filter(|s| s.method == "POST").cloned().collect()
}

#[tokio::test]
async fn standard_and_custom_headers_are_mirrored() {
    let (base, seen) = scripted(|req, _| match req.rpc() {
        "server/discover" => discover_ok(req),
        "tools/list" => result(
            req,
            json!({ "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
                { "name": "café", "inputSchema": { "type": "object", "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "priority": { "type": "integer", "x-mcp-header": "Priority" },
                    "verbose": { "type": "boolean", "x-mcp-header": "Verbose" },
                    "nested": { "type": "object", "properties": { "zone": { "type": "string", "x-mcp-header": "Zone" } } },
                    "query": { "type": "string" }
                }}},
                { "name": "bad_type", "inputSchema": { "type": "object", "properties": { "x": { "type": "number", "x-mcp-header": "X" } } } },
                { "name": "bad_dup", "inputSchema": { "type": "object", "properties": {
                    "a": { "type": "string", "x-mcp-header": "Same" }, "b": { "type": "string", "x-mcp-header": "same" } } } },
                { "name": "bad_name", "inputSchema": { "type": "object", "properties": { "a": { "type": "string", "x-mcp-header": "Has Space" } } } }
            ]}),
        ),
        "tools/call" | "resources/read" | "prompts/get" => {
            result(req, json!({ "resultType": "complete", "content": [], "contents": [], "messages": [] }))
        }
        _ => error(404, req, -32601, "Method not found", None),
    })
    .await;
    let client =
        Client::connect_http(&format!("{base}/mcp"), options().header("Authorization", "Bearer t")).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["café"]);
    let args = json!({ "region": "Hello, 世界", "priority": 42, "verbose": null, "nested": { "zone": " z " }, "query": "SELECT 1" });
    client.call_tool("café", args, CallOptions::new()).await.unwrap();
    client.read_resource("file:///a%20b.txt", CallOptions::new()).await.unwrap();
    client.get_prompt("p", Default::default(), CallOptions::new()).await.unwrap();

    let posts = posts(&seen);
    for p in &posts {
        assert_eq!(p.header("content-type"), Some("application/json"));
        assert_eq!(p.header("accept"), Some("application/json, text/event-stream"));
        assert_eq!(p.header("authorization"), Some("Bearer t"));
        assert_eq!(p.header("mcp-method"), Some(p.rpc()));
        let meta = &p.body["params"]["_meta"];
        assert_eq!(p.header("mcp-protocol-version"), meta["io.modelcontextprotocol/protocolVersion"].as_str());
        assert!(meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object());
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "client-tests");
        assert!(p.header("mcp-session-id").is_none());
    }
    let call = posts.iter().find(|p| p.rpc() == "tools/call").unwrap();
    assert_eq!(call.header("mcp-name"), Some("=?base64?Y2Fmw6k=?="));
    assert_eq!(call.header("mcp-param-region"), Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
    assert_eq!(call.header("mcp-param-priority"), Some("42"));
    assert_eq!(mcpaxle::headers::decode_value(call.header("mcp-param-zone").unwrap()).unwrap(), " z ");
    assert!(call.header("mcp-param-verbose").is_none(), "null is not mirrored");
    assert!(call.header("mcp-param-query").is_none(), "unannotated is not mirrored");
    let read = posts.iter().find(|p| p.rpc() == "resources/read").unwrap();
    assert_eq!(read.header("mcp-name"), Some("file:///a%20b.txt"));
    let get = posts.iter().find(|p| p.rpc() == "prompts/get").unwrap();
    assert_eq!(get.header("mcp-name"), Some("p"));
}

#[tokio::test]
async fn a_legacy_http_server_gets_an_initialize_session() {
    let (base, seen) = scripted(|req, _| {
        let sid = req.header("mcp-session-id");
        match (req.method.as_str(), req.rpc()) {
            ("POST", "initialize") => initialized(req, "2025-06-18", json!({ "tools": {} }), "sess-1".into()),
            (_, _) if sid != Some("sess-1") => Reply {
                status: 400,
                headers: vec![("content-type", "application/json".into())],
                body: r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#.into(),
            },
            ("GET", _) => empty(405),
            ("DELETE", _) => empty(200),
            ("POST", "notifications/initialized") => empty(202),
            ("POST", "tools/list") => result(req, json!({ "tools": [{ "name": "t", "inputSchema": { "type": "object" } }] })),
            _ => error(200, req, -32601, "Method not found", None),
        }
    })
    .await;
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-06-18");
    assert_eq!(client.session_id().as_deref(), Some("sess-1"));
    assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
    // The GET is written before connect returns; the server may read it a moment later.
    for _ in 0..100 {
        if seen.lock().unwrap().iter().any(|s| s.method == "GET") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    client.close().await;
    let seen = seen.lock().unwrap().clone();
    let shape: Vec<(String, String)> = seen.iter().map(|s| (s.method.clone(), s.rpc().to_owned())).collect();
    assert_eq!(shape[0], ("POST".into(), "server/discover".into()));
    assert_eq!(shape[1], ("POST".into(), "initialize".into()));
    assert_eq!(shape[2], ("POST".into(), "notifications/initialized".into()));
    assert!(shape.contains(&("GET".into(), String::new())), "the session's GET stream was tried: {shape:?}");
    assert_eq!(shape.last().unwrap(), &("DELETE".into(), String::new()));
    let init = &seen[1];
    assert_eq!(init.body["params"]["protocolVersion"], "2025-11-25");
    assert!(init.header("mcp-protocol-version").is_none());
    let list = seen.iter().find(|s| s.rpc() == "tools/list").unwrap();
    assert_eq!(list.header("mcp-protocol-version"), Some("2025-06-18"));
    assert_eq!(list.header("mcp-session-id"), Some("sess-1"));
    assert!(list.header("mcp-method").is_none());
    assert!(list.body.get("params").is_none_or(|p| p.get("_meta").is_none()));
    let delete = seen.last().unwrap();
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(delete.header("mcp-protocol-version"), Some("2025-06-18"));
}

#[tokio::test]
async fn connect_does_not_wait_for_a_get_stream_that_sends_nothing_yet() {
    // The official TypeScript server sends no headers on the session's GET stream until its
    // first event; connecting used to wait for them (up to 5 s). The stream still opens, in
    // the background: its first event, sent 3 s later with the headers, reaches the client.
    let log =
        json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": { "level": "info", "data": "late" } });
    let (base, _) = scripted(move |req, _| match (req.method.as_str(), req.rpc()) {
        ("POST", "initialize") => initialized(req, "2025-11-25", json!({ "logging": {} }), "s".into()),
        ("GET", _) => Reply {
            status: 200,
            headers: vec![("content-type", "text/event-stream".into()), (HOLD, "3000".into())],
            body: format!("id: 1\ndata: {log}\n\n"),
        },
        ("POST", "notifications/initialized") | ("DELETE", _) => empty(202),
        _ => error(200, req, -32601, "Method not found", None),
    })
    .await;
    let (logged, mut arrived) = tokio::sync::mpsc::unbounded_channel();
    let opts = options().on_log(move |p| {
        let _ = logged.send(p.data);
    });
    let started = std::time::Instant::now();
    let client = Client::connect_http(&format!("{base}/mcp"), opts).await.unwrap();
    let took = started.elapsed();
    assert_eq!(client.era(), Era::Legacy);
    assert!(took < std::time::Duration::from_millis(1500), "connect took {took:?}");
    let data = tokio::time::timeout(std::time::Duration::from_secs(10), arrived.recv()).await;
    assert_eq!(data.expect("the GET stream's notification never arrived"), Some(json!("late")));
    assert!(started.elapsed() >= std::time::Duration::from_millis(2900), "the event came before the stream's headers");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_reaches_the_server_before_the_first_request_after_connect() {
    // A legacy server drops a message for a GET stream it has not seen (the official
    // TypeScript SDK's does), and may send no headers on that stream until its first event:
    // connect returns once the GET is written, before any later request, without waiting for
    // its answer. (It once returned before the GET was even sent; a tools/call whose handler
    // asked the client something at once then waited forever.)
    for _ in 0..20 {
        let (base, seen) = scripted(|req, _| match (req.method.as_str(), req.rpc()) {
            ("POST", "initialize") => initialized(req, "2025-11-25", json!({ "tools": {} }), "s".into()),
            ("GET", _) => Reply {
                status: 200,
                headers: vec![("content-type", "text/event-stream".into()), (HOLD, "3000".into())],
                body: String::new(),
            },
            ("POST", "notifications/initialized") | ("DELETE", _) => empty(202),
            ("POST", "tools/list") => result(req, json!({ "tools": [] })),
            _ => error(200, req, -32601, "Method not found", None),
        })
        .await;
        let started = std::time::Instant::now();
        let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
        assert!(started.elapsed() < std::time::Duration::from_millis(1500), "connect took {:?}", started.elapsed());
        client.list_all_tools().await.unwrap();
        let order: Vec<String> =
            seen.lock().unwrap().iter().map(|s| format!("{} {}", s.method, s.rpc()).trim().to_owned()).collect();
        assert_eq!(order[2..], ["POST notifications/initialized", "GET", "POST tools/list"], "{order:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn subscribe_waits_for_the_get_stream_that_connect_started() {
    // Connect opens the GET stream in the background; a subscription made right after must
    // still wait until the server has taken it, or the notifications it wants are lost.
    let (base, _) = scripted(|req, _| match (req.method.as_str(), req.rpc()) {
        ("POST", "initialize") => {
            initialized(req, "2025-11-25", json!({ "tools": { "listChanged": true } }), "s".into())
        }
        ("GET", _) => Reply {
            status: 200,
            headers: vec![("content-type", "text/event-stream".into()), (HOLD, "600".into())],
            body: String::new(),
        },
        ("POST", "notifications/initialized") | ("DELETE", _) => empty(202),
        _ => error(200, req, -32601, "Method not found", None),
    })
    .await;
    let started = std::time::Instant::now();
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    let filter = mcpaxle::schema::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let sub = client.subscribe(filter).await.unwrap();
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(550),
        "subscribe returned after {took:?}, before the GET stream was open"
    );
    drop(sub);
    client.close().await;
}

#[tokio::test]
async fn era_detection_reads_the_error_body() {
    // -32022 with a supported modern version: retry with it, stay modern.
    let (base, seen) = scripted(|req, i| match (i, req.rpc()) {
        (0, _) => error(
            400,
            req,
            -32022,
            "Unsupported protocol version",
            Some(json!({ "supported": ["2026-07-28"], "requested": "x" })),
        ),
        (_, "server/discover") => discover_ok(req),
        _ => result(req, json!({ "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [] })),
    })
    .await;
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(posts(&seen).len(), 2);
    // Later -32022 on a request: retried once with a supported version.
    client.list_all_tools().await.unwrap();

    // 404 with a JSON-RPC -32601: a modern server without server/discover.
    let (base, _) = scripted(|req, _| match req.rpc() {
        "server/discover" => error(404, req, -32601, "Method not found", None),
        _ => result(req, json!({ "resultType": "complete", "tools": [] })),
    })
    .await;
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    assert_eq!(client.era(), Era::Modern);

    // 404/405/400 without a recognized body: legacy.
    for status in [400u16, 404, 405] {
        let (base, _) = scripted(move |req, _| match req.rpc() {
            "initialize" => {
                result(req, json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": { "name": "old", "version": "1" } }))
            }
            "notifications/initialized" => empty(202),
            _ if req.method == "GET" => empty(405),
            _ => Reply { status, headers: vec![("content-type", "text/plain".into())], body: "nope".into() },
        })
        .await;
        let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
        assert_eq!(client.era(), Era::Legacy, "HTTP {status}");
    }

    // A -32022 listing only legacy versions: initialize.
    let (base, _) = scripted(|req, _| match req.rpc() {
        "server/discover" => error(400, req, -32022, "Unsupported protocol version", Some(json!({ "supported": ["2025-11-25"] }))),
        "initialize" => result(req, json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": { "name": "old", "version": "1" } })),
        _ => empty(202),
    })
    .await;
    assert_eq!(Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap().era(), Era::Legacy);

    // A header mismatch is a modern error: reported, no fallback.
    let (base, _) = scripted(|req, _| error(400, req, -32020, "Header mismatch", None)).await;
    let e = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::HeaderMismatch);

    // 401 is not a fallback either.
    let (base, _) = scripted(|_, _| Reply {
        status: 401,
        headers: vec![("www-authenticate", "Bearer".into())],
        body: String::new(),
    })
    .await;
    let e = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport);
    assert_eq!(e.data().unwrap()["httpStatus"], 401);
}

#[tokio::test]
async fn mrtr_retries_follow_the_rules() {
    const STATE: &str = "opaque \"state\" with \\ escapes, ünïcode and / slashes \u{1F600}";
    let (base, seen) = scripted(|req, _| {
        let p = &req.body["params"];
        match (req.rpc(), p["name"].as_str().unwrap_or_default()) {
            ("server/discover", _) => discover_ok(req),
            ("tools/call", "with_state") if p.get("inputResponses").is_none() => result(req, json!({
                "resultType": "input_required",
                "inputRequests": {
                    "confirm": { "method": "elicitation/create", "params": { "message": "ok?", "requestedSchema": { "type": "object", "properties": {} } } },
                    "roots": { "method": "roots/list" }
                },
                "requestState": STATE
            })),
            ("tools/call", "no_state") if p.get("inputResponses").is_none() => result(req, json!({
                "resultType": "input_required",
                "inputRequests": { "s": { "method": "sampling/createMessage", "params": { "messages": [], "maxTokens": 5 } } }
            })),
            ("tools/call", "state_only") if p.get("requestState").is_none() => result(req, json!({ "resultType": "input_required", "requestState": "again" })),
            ("tools/call", "forever") => result(req, json!({ "resultType": "input_required", "requestState": "x" })),
            ("tools/call", _) => result(req, json!({ "content": [{ "type": "text", "text": "done" }] })),
            _ => error(404, req, -32601, "nope", None),
        }
    })
    .await;
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    for tool in ["with_state", "no_state", "state_only", "plain"] {
        let r = client.call_tool(tool, json!({ "k": 1 }), CallOptions::new()).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("done"), "{tool}");
    }
    let calls: Vec<Seen> = posts(&seen).into_iter().filter(|p| p.rpc() == "tools/call").collect();
    let of = |name: &str| calls.iter().filter(|c| c.body["params"]["name"] == name).cloned().collect::<Vec<_>>();
    let w = of("with_state");
    assert_eq!(w.len(), 2);
    assert_ne!(w[0].body["id"], w[1].body["id"], "a retry has a new id");
    assert_eq!(w[1].body["params"]["requestState"], STATE);
    assert_eq!(w[1].body["params"]["arguments"], json!({ "k": 1 }));
    assert_eq!(w[1].body["params"]["inputResponses"]["confirm"]["action"], "accept");
    assert_eq!(w[1].body["params"]["inputResponses"]["roots"]["roots"].as_array().unwrap().len(), 2);
    let n = of("no_state");
    assert!(n[1].body["params"].get("requestState").is_none());
    assert_eq!(n[1].body["params"]["inputResponses"]["s"]["model"], "test-model");
    let s = of("state_only");
    assert_eq!(s[1].body["params"]["requestState"], "again");
    assert!(s[1].body["params"].get("inputResponses").is_none());
    assert_eq!(of("plain").len(), 1);
    for c in &calls {
        assert!(c.body["params"]["_meta"].is_object());
    }

    let e = client.call_tool("forever", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InputRequired);
    assert_eq!(
        posts(&seen).iter().filter(|p| p.body["params"]["name"] == "forever").count(),
        9,
        "1 + max_input_rounds (8)"
    );

    // A declared capability without a handler: a clear usage error.
    let opts = ClientOptions::new("no-handlers", "1");
    let mut opts = opts;
    opts.capabilities =
        Some(ClientCapabilities { sampling: Some(SamplingCapability::default()), ..Default::default() });
    let bare = Client::connect_http(&format!("{base}/mcp"), opts).await.unwrap();
    let e = bare.call_tool("no_state", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(e.message().contains("sampling/createMessage") && e.message().contains("on_sampling"), "{e}");
}

#[tokio::test]
async fn cacheable_results_are_served_from_the_cache() {
    let lists = Arc::new(AtomicUsize::new(0));
    let l = lists.clone();
    let (base, seen) = scripted(move |req, _| match req.rpc() {
        "server/discover" => discover_ok(req),
        "tools/list" => {
            l.fetch_add(1, Ordering::SeqCst);
            result(
                req,
                json!({ "resultType": "complete", "ttlMs": 60000, "cacheScope": "public", "tools": [
                    { "name": "t", "inputSchema": { "type": "object", "properties": { "r": { "type": "string", "x-mcp-header": "R" } } } }
                ]}),
            )
        }
        "prompts/list" => result(req, json!({ "resultType": "complete", "ttlMs": 0, "cacheScope": "public", "prompts": [] })),
        _ => result(req, json!({ "resultType": "complete", "content": [] })),
    })
    .await;
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    for _ in 0..3 {
        assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
        client.list_all_prompts().await.unwrap();
    }
    assert_eq!(lists.load(Ordering::SeqCst), 1);
    assert_eq!(posts(&seen).iter().filter(|p| p.rpc() == "prompts/list").count(), 3, "ttlMs 0 is not cached");
    // The header parameters come from the (cached) definition.
    client.call_tool("t", json!({ "r": "x" }), CallOptions::new()).await.unwrap();
    assert_eq!(posts(&seen).last().unwrap().header("mcp-param-r"), Some("x"));
    client.clear_cache();
    client.list_all_tools().await.unwrap();
    assert_eq!(lists.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn schema_refs_are_never_fetched() {
    let canary = Arc::new(AtomicUsize::new(0));
    let c = canary.clone();
    let (base, _seen) = scripted(move |req, _| {
        if req.path == "/canary.json" {
            c.fetch_add(1, Ordering::SeqCst);
            return json_reply(json!({ "type": "object" }));
        }
        match req.rpc() {
            "server/discover" => discover_ok(req),
            "tools/list" => {
                let host = req.header("host").unwrap_or_default().to_owned();
                result(
                    req,
                    json!({ "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [{
                        "name": "lookup", "inputSchema": {
                            "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                            "$defs": { "id": { "type": "string" } },
                            "properties": { "id": { "$ref": "#/$defs/id" }, "profile": { "$ref": format!("http://{host}/canary.json") } }
                        }
                    }]}),
                )
            }
            _ => result(req, json!({ "resultType": "complete", "content": [] })),
        }
    })
    .await;
    let client = Client::connect_http(&format!("{base}/mcp"), options()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools[0].input_schema["properties"]["profile"]["$ref"].as_str().map(|r| r.ends_with("/canary.json")),
        Some(true)
    );
    client.call_tool("lookup", json!({ "id": "a", "profile": {} }), CallOptions::new()).await.unwrap();
    assert_eq!(canary.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_expired_legacy_session_is_renewed() {
    let sessions = Arc::new(AtomicUsize::new(0));
    let s = sessions.clone();
    let (base, seen) = scripted(move |req, _| match (req.method.as_str(), req.rpc()) {
        ("POST", "initialize") => {
            let n = s.fetch_add(1, Ordering::SeqCst) + 1;
            initialized(req, "2025-11-25", json!({ "tools": {} }), format!("s{n}"))
        }
        ("POST", "tools/list") if req.header("mcp-session-id") == Some("s1") => empty(404),
        ("POST", "tools/list") => result(req, json!({ "tools": [] })),
        ("GET", _) => empty(405),
        _ => empty(202),
    })
    .await;
    let client =
        Client::connect_http(&format!("{base}/mcp"), options().protocol_versions(["2025-11-25"])).await.unwrap();
    assert_eq!(client.session_id().as_deref(), Some("s1"));
    client.list_all_tools().await.unwrap();
    assert_eq!(client.session_id().as_deref(), Some("s2"));
    assert_eq!(sessions.load(Ordering::SeqCst), 2);
    let inits = seen.lock().unwrap().iter().filter(|s| s.rpc() == "initialize").count();
    assert_eq!(inits, 2);
}
