//! Middleware and visibility per principal, end to end through the HTTP endpoint, in both
//! eras: rate limiting per principal, the order of two audit middlewares, tool-level
//! authorization rejecting with a chosen code (and the HTTP status of that code), a result
//! rewrite, timing, request headers and token claims in handlers and middleware, and lists
//! filtered per principal with hidden items answering exactly as unknown ones.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcpaxle::schema::{
    CallToolResult, GetPromptResult, Prompt, PromptMessage, ReadResourceResult, Resource, TextResourceContents, Tool,
};
use mcpaxle::server::middleware::from_fn;
use mcpaxle::server::{Item, ItemKind, RequestContext, RequestInfo, Server};
use mcpaxle::transport::auth::{BearerAuth, TokenInfo};
use mcpaxle::transport::http::{HttpOptions, McpService};
use mcpaxle::{Era, Error, ErrorKind};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

fn verifier() -> BearerAuth {
    BearerAuth::new("http://127.0.0.1/mcp", "http://127.0.0.1:9/as", |token: String| async move {
        Ok(match token.as_str() {
            "alice" => {
                Some(TokenInfo::new("alice", ["mcp"]).with_claims(json!({ "tenant": "acme", "roles": ["admin"] })))
            }
            "bob" => Some(TokenInfo::new("bob", ["mcp"]).with_claims(json!({ "tenant": "globex", "roles": [] }))),
            _ => None,
        })
    })
}

/// A server whose `whoami` tool answers with what its context knows of the caller.
fn server() -> Server {
    let s = Server::builder("middleware-test", "1.0.0").page_size(2).build();
    let schema = json!({ "type": "object" });
    s.add_tool(Tool::new("whoami", "Who is asking", schema.clone()), |_a: Value, ctx: RequestContext| async move {
        let text = json!({
            "principal": ctx.principal(),
            "tenantHeader": ctx.header("x-tenant"),
            "claims": ctx.claims(),
            "scopes": ctx.token().map(|t| t.scopes.clone()),
        });
        Ok(CallToolResult::text(text.to_string()))
    })
    .unwrap();
    s.add_tool(Tool::new("slow", "Takes 30 ms", schema.clone()), |_a: Value, _ctx| async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        Ok(CallToolResult::text("done"))
    })
    .unwrap();
    for name in ["admin_reset", "admin_stats", "t1", "t2", "t3"] {
        s.add_tool(Tool::new(name, "A tool", schema.clone()), move |_a: Value, _ctx| async move {
            Ok(CallToolResult::text(format!("{name} ran")))
        })
        .unwrap();
    }
    for uri in ["test://public", "test://admin/secrets"] {
        s.add_resource(Resource::new(uri, uri), None, |r: mcpaxle::server::ResourceRequest, _c| async move {
            Ok(ReadResourceResult::new(vec![TextResourceContents::new(r.uri, "text/plain", "x").into()]))
        })
        .unwrap();
    }
    for name in ["greet", "admin_brief"] {
        s.add_prompt(Prompt::new(name), |_a, _c| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
        })
        .unwrap();
    }
    s
}

fn service(server: &Server) -> McpService {
    McpService::new(server.clone(), HttpOptions { auth: Some(verifier()), ..Default::default() })
}

/// A client of one era with one token, over the in-process endpoint.
struct Conn<'a> {
    svc: &'a McpService,
    era: Era,
    token: &'static str,
    session: Option<String>,
    next_id: i64,
}

impl<'a> Conn<'a> {
    async fn open(svc: &'a McpService, era: Era, token: &'static str) -> Conn<'a> {
        let mut c = Conn { svc, era, token, session: None, next_id: 1 };
        if era == Era::Legacy {
            let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
            let r = svc.handle(c.request(&init)).await;
            assert_eq!(r.status(), 200);
            c.session = Some(r.headers()["mcp-session-id"].to_str().unwrap().to_owned());
            let r = svc.handle(c.request(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))).await;
            assert_eq!(r.status(), 202);
        }
        c
    }

    fn request(&self, body: &Value) -> http::Request<Full<Bytes>> {
        let mut b = http::Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {}", self.token))
            .header("x-tenant", format!("{}-corp", self.token));
        match &self.session {
            Some(s) => b = b.header("mcp-session-id", s).header("mcp-protocol-version", LEGACY),
            None if self.era == Era::Modern => {
                b = b.header("mcp-protocol-version", MODERN);
                if let Some(m) = body["method"].as_str() {
                    b = b.header("mcp-method", m);
                }
                if let Some(n) = body["params"]["name"].as_str().or(body["params"]["uri"].as_str()) {
                    b = b.header("mcp-name", n);
                }
            }
            None => {}
        }
        b.body(Full::new(Bytes::from(serde_json::to_vec(body).unwrap()))).unwrap()
    }

    /// Sends a request: the HTTP status and the JSON-RPC response.
    async fn send(&mut self, method: &str, mut params: Value) -> (u16, Value) {
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {}
            });
        }
        self.next_id += 1;
        let body = json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params });
        let r = self.svc.handle(self.request(&body)).await;
        let status = r.status().as_u16();
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        let v = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
        (status, v)
    }

    async fn call(&mut self, tool: &str) -> (u16, Value) {
        self.send("tools/call", json!({ "name": tool, "arguments": {} })).await
    }

    /// Every page of a list: the names (or URIs) in order, and how many items each page held.
    async fn list_all(&mut self, method: &str, field: &str, key: &str) -> (Vec<String>, Vec<usize>) {
        let (mut names, mut sizes, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let (status, v) = self.send(method, params).await;
            assert_eq!(status, 200, "{v}");
            let items = v["result"][field].as_array().unwrap_or_else(|| panic!("no {field}: {v}"));
            sizes.push(items.len());
            names.extend(items.iter().map(|i| i[key].as_str().unwrap().to_owned()));
            match v["result"]["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return (names, sizes),
            }
        }
    }
}

fn text_of(v: &Value) -> String {
    v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {v}")).to_owned()
}

const ERAS: [Era; 2] = [Era::Modern, Era::Legacy];

#[tokio::test]
async fn handlers_read_the_request_headers_and_the_token_claims() {
    for era in ERAS {
        let s = server();
        let svc = service(&s);
        let mut alice = Conn::open(&svc, era, "alice").await;
        let (status, v) = alice.call("whoami").await;
        assert_eq!(status, 200, "{era:?}: {v}");
        let seen: Value = serde_json::from_str(&text_of(&v)).unwrap();
        assert_eq!(
            seen,
            json!({
                "principal": "alice", "tenantHeader": "alice-corp",
                "claims": { "tenant": "acme", "roles": ["admin"] }, "scopes": ["mcp"]
            }),
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn a_rate_limit_per_principal_rejects_with_the_http_status_of_its_code() {
    for era in ERAS {
        let s = server();
        let calls: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
        s.use_middleware(from_fn(move |req, next| {
            let over = req.method() == "tools/call" && {
                let mut calls = calls.lock().unwrap();
                let n = calls.entry(req.principal().unwrap_or("").to_owned()).or_default();
                *n += 1;
                *n > 2
            };
            let who = req.principal().unwrap_or("anonymous").to_owned();
            Box::pin(async move {
                if over {
                    return Err(Error::new(
                        ErrorKind::InvalidRequest,
                        format!("Rate limited: {who} may make 2 tool calls; try again later"),
                    )
                    .with_data(json!({ "retryAfterMs": 1000 })));
                }
                next.run().await
            })
        }));
        let svc = service(&s);
        let (mut alice, mut bob) = (Conn::open(&svc, era, "alice").await, Conn::open(&svc, era, "bob").await);
        for _ in 0..2 {
            assert_eq!(text_of(&alice.call("t1").await.1), "t1 ran");
        }
        let (status, v) = alice.call("t1").await;
        // Modern errors carry the HTTP status of their code (-32600: 400); legacy ones 200.
        assert_eq!(status, if era == Era::Modern { 400 } else { 200 }, "{era:?}");
        assert_eq!(
            v["error"],
            json!({ "code": -32600, "message": "Rate limited: alice may make 2 tool calls; try again later",
                    "data": { "retryAfterMs": 1000 } }),
            "{era:?}"
        );
        // Lists are not counted; another principal has a budget of its own.
        assert_eq!(alice.send("tools/list", json!({})).await.0, 200);
        assert_eq!(text_of(&bob.call("t2").await.1), "t2 ran");
    }
}

#[tokio::test]
async fn two_audit_middlewares_run_in_the_order_registered_around_the_handler() {
    for era in ERAS {
        let s = server();
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        for tag in ["outer", "inner"] {
            let log = log.clone();
            s.use_middleware(from_fn(move |req, next| {
                let log = log.clone();
                Box::pin(async move {
                    let line = format!(
                        "{tag} > {} {} {:?} {:?}",
                        req.method(),
                        req.name().unwrap_or("-"),
                        req.era(),
                        req.principal()
                    );
                    log.lock().unwrap().push(line);
                    let outcome = next.run().await;
                    let ok = if outcome.is_ok() { "ok" } else { "error" };
                    log.lock().unwrap().push(format!("{tag} < {ok}"));
                    outcome
                })
            }));
        }
        let svc = service(&s);
        let mut bob = Conn::open(&svc, era, "bob").await;
        log.lock().unwrap().clear();
        bob.call("t3").await;
        bob.call("no_such_tool").await;
        let p = Some("bob");
        assert_eq!(
            *log.lock().unwrap(),
            [
                format!("outer > tools/call t3 {era:?} {p:?}"),
                format!("inner > tools/call t3 {era:?} {p:?}"),
                "inner < ok".into(),
                "outer < ok".into(),
                format!("outer > tools/call no_such_tool {era:?} {p:?}"),
                format!("inner > tools/call no_such_tool {era:?} {p:?}"),
                "inner < error".into(),
                "outer < error".into(),
            ],
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn tool_level_authorization_rejects_with_the_code_it_chose() {
    for era in ERAS {
        let s = server();
        s.use_middleware(from_fn(|req, next| {
            let admin =
                req.claims().and_then(|c| c["roles"].as_array()).is_some_and(|roles| roles.contains(&json!("admin")));
            let forbidden =
                req.method() == "tools/call" && req.name().is_some_and(|n| n.starts_with("admin_")) && !admin;
            let name = req.name().unwrap_or_default().to_owned();
            Box::pin(async move {
                if forbidden {
                    return Err(Error::new(
                        ErrorKind::InvalidRequest,
                        format!("Forbidden: {name} needs the admin role"),
                    )
                    .with_code(-32003));
                }
                next.run().await
            })
        }));
        let svc = service(&s);
        let (mut alice, mut bob) = (Conn::open(&svc, era, "alice").await, Conn::open(&svc, era, "bob").await);
        assert_eq!(text_of(&alice.call("admin_reset").await.1), "admin_reset ran");
        let (status, v) = bob.call("admin_reset").await;
        // An application code (not a JSON-RPC one) is HTTP 200, as every such error is.
        assert_eq!(status, 200);
        assert_eq!(v["error"], json!({ "code": -32003, "message": "Forbidden: admin_reset needs the admin role" }));
        assert_eq!(v["id"], json!(bob.next_id), "the error answers the request's id");
        assert_eq!(text_of(&bob.call("t1").await.1), "t1 ran", "{era:?}");
    }
}

#[tokio::test]
async fn a_middleware_rewrites_results_and_times_requests() {
    for era in ERAS {
        let s = server();
        let timings: Arc<Mutex<Vec<(String, Duration)>>> = Arc::default();
        let t = timings.clone();
        s.use_middleware(from_fn(move |req, next| {
            let t = t.clone();
            Box::pin(async move {
                let started = tokio::time::Instant::now();
                let outcome = next.run().await;
                t.lock().unwrap().push((req.name().unwrap_or(req.method()).to_owned(), started.elapsed()));
                outcome
            })
        }));
        s.use_middleware(from_fn(|req, next| {
            Box::pin(async move {
                let reply = next.run().await?;
                if req.method() != "tools/call" {
                    return Ok(reply);
                }
                let mut result = reply.into_value();
                let text = result["content"][0]["text"].as_str().unwrap_or_default().to_uppercase();
                result["content"][0]["text"] = json!(text);
                result["_meta"]["example.com/rewritten"] = json!(true);
                Ok(result.into())
            })
        }));
        let svc = service(&s);
        let mut bob = Conn::open(&svc, era, "bob").await;
        timings.lock().unwrap().clear();
        let (_, v) = bob.call("slow").await;
        assert_eq!(text_of(&v), "DONE", "{era:?}");
        assert_eq!(v["result"]["_meta"]["example.com/rewritten"], json!(true));
        if era == Era::Modern {
            // The rest of the result is the method's, as the client would have had it.
            assert_eq!(v["result"]["resultType"], json!("complete"));
            assert!(v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(), "{v}");
        }
        let (_, v) = bob.send("tools/list", json!({})).await;
        assert!(v["result"]["tools"].is_array(), "a list passes unchanged: {v}");
        let timings = timings.lock().unwrap();
        assert_eq!(timings.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["slow", "tools/list"]);
        assert!(timings[0].1 >= Duration::from_millis(30), "the timing covers the handler: {:?}", timings[0].1);
    }
}

#[tokio::test]
async fn a_middleware_sees_headers_session_and_era_and_its_panic_is_an_internal_error() {
    for era in ERAS {
        let s = server();
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let log = seen.clone();
        s.use_middleware(from_fn(move |req: &RequestInfo, next| {
            log.lock().unwrap().push(json!({
                "tenant": req.header("x-tenant"),
                "session": req.session_id().is_some(),
                "claims": req.claims().map(|c| c["tenant"].clone()),
                "params": req.params().map(|p| p["name"].clone()),
                "id": req.id().to_value(),
            }));
            if req.name() == Some("t3") {
                panic!("a bug in the middleware");
            }
            next.run()
        }));
        let svc = service(&s);
        let mut alice = Conn::open(&svc, era, "alice").await;
        alice.call("t1").await;
        let id = alice.next_id;
        assert_eq!(
            seen.lock().unwrap().last().unwrap(),
            &json!({ "tenant": "alice-corp", "session": era == Era::Legacy, "claims": "acme", "params": "t1", "id": id })
        );
        let (status, v) = alice.call("t3").await;
        assert_eq!(status, if era == Era::Modern { 500 } else { 200 });
        assert_eq!(v["error"]["code"], json!(-32603), "{v}");
        // The server goes on.
        assert_eq!(text_of(&alice.call("t2").await.1), "t2 ran");
    }
}

/// Items named admin_* (and admin URIs) exist for principals with the admin role only.
fn admin_only(item: &Item<'_>, who: &RequestInfo) -> bool {
    let admin = who.claims().and_then(|c| c["roles"].as_array()).is_some_and(|r| r.contains(&json!("admin")));
    admin || !(item.name.starts_with("admin_") || item.name.starts_with("test://admin/"))
}

#[tokio::test]
async fn lists_are_filtered_per_principal_and_pages_cut_after_filtering() {
    for era in ERAS {
        let s = server();
        s.set_visibility(admin_only);
        let svc = service(&s);
        let (mut alice, mut bob) = (Conn::open(&svc, era, "alice").await, Conn::open(&svc, era, "bob").await);
        let (names, sizes) = alice.list_all("tools/list", "tools", "name").await;
        assert_eq!(names, ["admin_reset", "admin_stats", "slow", "t1", "t2", "t3", "whoami"], "{era:?}");
        assert_eq!(sizes, [2, 2, 2, 1]);
        let (names, sizes) = bob.list_all("tools/list", "tools", "name").await;
        assert_eq!(names, ["slow", "t1", "t2", "t3", "whoami"], "{era:?}");
        assert_eq!(sizes, [2, 2, 1], "every page but the last is full");
        let (uris, _) = bob.list_all("resources/list", "resources", "uri").await;
        assert_eq!(uris, ["test://public"]);
        let (names, _) = bob.list_all("prompts/list", "prompts", "name").await;
        assert_eq!(names, ["greet"]);
        let (names, _) = alice.list_all("prompts/list", "prompts", "name").await;
        assert_eq!(names, ["admin_brief", "greet"]);
    }
}

#[tokio::test]
async fn a_hidden_item_answers_exactly_as_an_unknown_one() {
    for era in ERAS {
        let s = server();
        s.set_visibility(admin_only);
        let svc = service(&s);
        let (mut alice, mut bob) = (Conn::open(&svc, era, "alice").await, Conn::open(&svc, era, "bob").await);
        assert_eq!(text_of(&alice.call("admin_stats").await.1), "admin_stats ran");
        let hidden = bob.call("admin_stats").await;
        let mut unknown = bob.call("admin_nothing").await;
        unknown.1["id"] = hidden.1["id"].clone();
        let unknown = serde_json::to_string(&unknown).unwrap().replace("admin_nothing", "admin_stats");
        assert_eq!(serde_json::to_string(&hidden).unwrap(), unknown, "{era:?}");
        assert!(hidden.1["error"]["message"].as_str().unwrap().contains("Unknown tool"), "{hidden:?}");

        let hidden = bob.send("resources/read", json!({ "uri": "test://admin/secrets" })).await;
        let mut unknown = bob.send("resources/read", json!({ "uri": "test://admin/nothing" })).await;
        unknown.1["id"] = hidden.1["id"].clone();
        let unknown = serde_json::to_string(&unknown).unwrap().replace("test://admin/nothing", "test://admin/secrets");
        assert_eq!(serde_json::to_string(&hidden).unwrap(), unknown, "{era:?}");
        let code = if era == Era::Modern { -32602 } else { -32002 };
        assert_eq!(hidden.1["error"]["code"], json!(code));
        assert!(alice.send("resources/read", json!({ "uri": "test://admin/secrets" })).await.1["result"].is_object());

        let hidden = bob.send("prompts/get", json!({ "name": "admin_brief" })).await;
        assert_eq!(hidden.1["error"]["message"], json!("Unknown prompt: admin_brief"), "{era:?}");
        assert!(alice.send("prompts/get", json!({ "name": "admin_brief" })).await.1["result"].is_object());

        // Cleared, everything is visible again.
        s.clear_visibility();
        assert_eq!(text_of(&bob.call("admin_stats").await.1), "admin_stats ran");
    }
}

/// The predicate is asked about the tool a call names with the request as received, its
/// arguments included (the server asks before the arguments move into the call).
#[tokio::test]
async fn the_predicate_sees_the_calls_arguments() {
    let s = server();
    s.set_visibility(|item: &Item<'_>, who: &RequestInfo| {
        let arguments = who.params().and_then(|p| p.get("arguments"));
        item.kind != ItemKind::Tool || who.method() != "tools/call" || arguments == Some(&json!({ "open": true }))
    });
    let svc = service(&s);
    for era in ERAS {
        let mut bob = Conn::open(&svc, era, "bob").await;
        let opened = bob.send("tools/call", json!({ "name": "t1", "arguments": { "open": true } })).await;
        assert_eq!(text_of(&opened.1), "t1 ran", "{era:?}");
        assert_eq!(bob.call("t1").await.1["error"]["message"], json!("Unknown tool: t1"), "{era:?}");
    }
}

#[tokio::test]
async fn visibility_applies_to_requests_through_middleware_too() {
    let s = server();
    s.set_visibility(|item: &Item<'_>, _who: &RequestInfo| item.kind != ItemKind::Tool || item.name != "t2");
    s.use_middleware(from_fn(|_req, next| next.run()));
    let svc = service(&s);
    for era in ERAS {
        let mut bob = Conn::open(&svc, era, "bob").await;
        let (names, _) = bob.list_all("tools/list", "tools", "name").await;
        assert!(!names.contains(&"t2".to_owned()) && names.contains(&"t1".to_owned()), "{names:?}");
        assert_eq!(bob.call("t2").await.1["error"]["message"], json!("Unknown tool: t2"));
    }
}

/// A server on stdio (duplex pipes), with a tool that reports progress and one that waits to
/// be cancelled, and a middleware recording what it sees: the lines it writes come back.
async fn stdio(
    log: Arc<Mutex<Vec<String>>>,
) -> (tokio::io::DuplexStream, tokio::io::Lines<tokio::io::BufReader<tokio::io::DuplexStream>>) {
    use mcpaxle::transport::stdio::{StdioOptions, serve_with};
    use tokio::io::AsyncBufReadExt;
    let s = server();
    s.add_tool(
        Tool::new("progress", "Reports progress", json!({ "type": "object" })),
        |_a, ctx: RequestContext| async move {
            ctx.progress(1.0, Some(2.0), None);
            Ok(CallToolResult::text("half"))
        },
    )
    .unwrap();
    s.add_tool(
        Tool::new("wait", "Waits to be cancelled", json!({ "type": "object" })),
        |_a, ctx: RequestContext| async move {
            ctx.cancellation_token().cancelled().await;
            Ok(CallToolResult::text("cancelled"))
        },
    )
    .unwrap();
    s.use_middleware(from_fn(move |req, next| {
        let log = log.clone();
        Box::pin(async move {
            log.lock().unwrap().push(format!(
                "> {} {:?} {}",
                req.name().unwrap_or("-"),
                req.era(),
                req.headers().is_none()
            ));
            let outcome = next.run().await;
            log.lock()
                .unwrap()
                .push(format!("< {}", outcome.as_ref().map_or_else(|e| e.kind().to_string(), |_| "ok".into())));
            outcome
        })
    }));
    let (input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve_with(s, server_in, server_out, StdioOptions::default()));
    (input, tokio::io::BufReader::new(output).lines())
}

async fn line(lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::io::DuplexStream>>) -> Value {
    let l = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await.expect("a line in time");
    serde_json::from_str(&l.unwrap().expect("a line")).unwrap()
}

#[tokio::test]
async fn over_stdio_notifications_pass_the_chain_as_they_come() {
    use tokio::io::AsyncWriteExt;
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let (mut input, mut lines) = stdio(log.clone()).await;
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
                       "progressToken": "p" });
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": "progress", "arguments": {}, "_meta": meta } });
    input.write_all(format!("{call}\n").as_bytes()).await.unwrap();
    let first = line(&mut lines).await;
    assert_eq!(first["method"], json!("notifications/progress"), "{first}");
    let answer = line(&mut lines).await;
    assert_eq!(text_of(&answer), "half");
    assert_eq!(*log.lock().unwrap(), ["> progress Modern true", "< ok"]);
}

#[tokio::test]
async fn a_request_cancelled_behind_middleware_gets_no_response() {
    use tokio::io::AsyncWriteExt;
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let (mut input, mut lines) = stdio(log.clone()).await;
    let send = |v: Value| format!("{v}\n");
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    input.write_all(send(init).as_bytes()).await.unwrap();
    assert_eq!(line(&mut lines).await["result"]["protocolVersion"], json!(LEGACY));
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let wait =
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": { "name": "wait", "arguments": {} } });
    input.write_all((send(initialized) + &send(wait)).as_bytes()).await.unwrap();
    // Once the middleware has seen the call, cancel it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while log.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the call never reached the middleware");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 5 } });
    let next =
        json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": { "name": "t1", "arguments": {} } });
    input.write_all((send(cancel) + &send(next)).as_bytes()).await.unwrap();
    let answer = line(&mut lines).await;
    assert_eq!(answer["id"], json!(6), "the cancelled call has no response: {answer}");
    let log = log.lock().unwrap();
    // The transport dropped the call (and so the middleware's future) or the chain saw it
    // cancelled: either way it never answered.
    assert_eq!(log[0], "> wait Legacy true", "{log:?}");
}

/// [`admin_only`] as a filter that answers later, as a binding's host callback does; it counts
/// what it was asked.
struct LaterAdminOnly(Arc<Mutex<Vec<(String, usize)>>>);

impl mcpaxle::server::VisibilityFilter for LaterAdminOnly {
    fn visible<'a>(
        &'a self,
        who: &'a RequestInfo,
        items: &'a [mcpaxle::server::ItemInfo],
    ) -> mcpaxle::server::BoxFuture<'a, mcpaxle::Result<Vec<bool>>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.0.lock().unwrap().push((who.method().to_owned(), items.len()));
            if who.name() == Some("t3") {
                return Ok(vec![]);
            }
            Ok(items
                .iter()
                .map(|i| admin_only(&Item { kind: i.kind, name: &i.name, definition: &i.definition }, who))
                .collect())
        })
    }
}

#[tokio::test]
async fn a_filter_that_answers_later_hides_as_a_predicate_does() {
    for era in ERAS {
        let s = server();
        let asked: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
        s.set_visibility_filter(LaterAdminOnly(asked.clone()));
        let svc = service(&s);
        let (mut alice, mut bob) = (Conn::open(&svc, era, "alice").await, Conn::open(&svc, era, "bob").await);
        let (names, sizes) = bob.list_all("tools/list", "tools", "name").await;
        assert_eq!(names, ["slow", "t1", "t2", "t3", "whoami"], "{era:?}");
        assert_eq!(sizes, [2, 2, 1]);
        assert_eq!(alice.list_all("tools/list", "tools", "name").await.0.len(), 7);
        let hidden = bob.call("admin_stats").await;
        assert_eq!(hidden.1["error"]["message"], json!("Unknown tool: admin_stats"), "{era:?}");
        assert_eq!(text_of(&alice.call("admin_stats").await.1), "admin_stats ran");
        let (_, v) = bob.send("resources/read", json!({ "uri": "test://admin/secrets" })).await;
        assert!(v["error"]["message"].as_str().unwrap().starts_with("Resource not found"), "{v}");
        // Asked once per request, about the request's items only: a call about its tool.
        asked.lock().unwrap().clear();
        bob.call("t1").await;
        assert_eq!(*asked.lock().unwrap(), [("tools/call".to_owned(), 1)]);
        // Nothing to ask about: not asked.
        bob.send("server/discover", json!({})).await;
        bob.call("no_such_tool").await;
        assert_eq!(asked.lock().unwrap().len(), 1);
        // An answer of the wrong length is the server's bug, said so.
        let (_, v) = bob.call("t3").await;
        assert_eq!(v["error"]["code"], json!(-32603), "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("answered 0 values for 1 items"), "{v}");
    }
}
