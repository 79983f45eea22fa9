//! Legacy (2025-11-25) sessions under hostile use: a session is bound to the principal that
//! opened it (another one holding the id gets 404 and changes nothing), and no client can fill
//! the session table: handshakes that stop at `initialize` expire quickly, a full table ends
//! its least recently used idle session to make room, and quotas hold per principal and per
//! peer address.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcpaxle::legacy::LegacyOptions;
use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::{RequestContext, Server};
use mcpaxle::transport::auth::{BearerAuth, TokenInfo};
use mcpaxle::transport::http::{HttpOptions, McpBody, McpService, PeerAddr, Principal};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

fn server(legacy: LegacyOptions) -> Server {
    let s = Server::builder("legacy-sessions", "1.0.0").legacy(legacy).build();
    let schema = json!({ "type": "object" });
    s.add_tool(Tool::new("ask", "Asks the user", schema), |_a: Value, ctx: RequestContext| async move {
        let params = json!({ "message": "Name?", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } } });
        let answer = ctx.elicit("name", params).await?;
        Ok(CallToolResult::text(format!("got {}", answer["content"]["name"].as_str().unwrap_or("?"))))
    })
    .unwrap();
    s
}

fn service(legacy: LegacyOptions) -> McpService {
    McpService::new(server(legacy), HttpOptions::default())
}

/// Who sends a request: a principal (as authentication middleware would insert it), a bearer
/// token, a peer address.
#[derive(Clone, Copy, Default)]
struct From<'a> {
    principal: Option<&'a str>,
    token: Option<&'a str>,
    peer: Option<&'a str>,
}

impl From<'_> {
    /// The principal the server sees (a token's subject: the tokens of the tests below).
    fn subject(&self) -> Option<&str> {
        self.principal.or(self.token.map(|t| t.split('-').next().unwrap()))
    }
}

const NOBODY: From<'static> = From { principal: None, token: None, peer: None };

fn as_principal(p: &str) -> From<'_> {
    From { principal: Some(p), ..Default::default() }
}

fn from_peer(addr: &str) -> From<'_> {
    From { peer: Some(addr), ..Default::default() }
}

fn http_req(method: &str, session: Option<&str>, body: Option<Value>, from: From) -> http::Request<Full<Bytes>> {
    let mut b = http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(t) = from.token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    let bytes = body.map(|v| serde_json::to_vec(&v).unwrap()).unwrap_or_default();
    let mut r = b.body(Full::new(Bytes::from(bytes))).unwrap();
    if let Some(p) = from.principal {
        r.extensions_mut().insert(Principal(p.to_owned()));
    }
    if let Some(a) = from.peer {
        r.extensions_mut().insert(PeerAddr(a.parse::<SocketAddr>().unwrap()));
    }
    r
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn init_body() -> Value {
    rpc(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} }, "clientInfo": { "name": "t", "version": "1" } }),
    )
}

fn initialized() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
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

/// `initialize` only (the handshake not finished): the session id.
async fn open(svc: &McpService, from: From<'_>) -> String {
    let r = svc.handle(http_req("POST", None, Some(init_body()), from)).await;
    assert_eq!(r.status(), 200, "initialize");
    r.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned()
}

/// `initialize` and `notifications/initialized`: the session id.
async fn initialize(svc: &McpService, from: From<'_>) -> String {
    let sid = open(svc, from).await;
    assert_eq!(svc.handle(http_req("POST", Some(&sid), Some(initialized()), from)).await.status(), 202);
    sid
}

async fn ping(svc: &McpService, sid: &str, from: From<'_>) -> u16 {
    svc.handle(http_req("POST", Some(sid), Some(rpc(7, "ping", json!({}))), from)).await.status().as_u16()
}

/// The session's GET stream, held open.
async fn get_stream(svc: &McpService, sid: &str, from: From<'_>) -> McpBody {
    let r = svc.handle(http_req("GET", Some(sid), None, from)).await;
    assert_eq!(r.status(), 200, "GET stream");
    r.into_body()
}

/// Every way a holder of the id can use a session, from `intruder`, is refused with 404 like
/// an unknown session and changes nothing: not its last use, not its handshake, not the
/// answer to its pending elicitation, not its life.
async fn intruder_changes_nothing(svc: &McpService, owner: From<'_>, intruder: From<'_>) {
    let sid = open(svc, owner).await;
    let session = svc.sessions().get(&sid, owner.subject()).expect("the owner finds its session");
    tokio::time::sleep(Duration::from_millis(40)).await;
    let unknown = |v: &Value| v["error"]["code"] == json!(-32001);
    for body in
        [Some(initialized()), Some(rpc(2, "ping", json!({}))), Some(rpc(3, "tools/call", json!({ "name": "ask" })))]
    {
        let r = svc.handle(http_req("POST", Some(&sid), body, intruder)).await;
        assert_eq!(r.status(), 404);
        assert!(unknown(&json_of(r).await));
    }
    let r = svc.handle(http_req("GET", Some(&sid), None, intruder)).await;
    assert_eq!(r.status(), 404);
    assert!(unknown(&json_of(r).await));
    let r = svc.handle(http_req("DELETE", Some(&sid), None, intruder)).await;
    assert_eq!(r.status(), 404);
    assert!(unknown(&json_of(r).await));
    assert!(!session.is_initialized(), "the intruder's notifications/initialized counted");
    let idle = session.idle_for().expect("idle");
    assert!(idle >= Duration::from_millis(40), "the intruder's messages counted as use: idle for {idle:?}");
    assert!(!session.closed().is_cancelled(), "the intruder ended the session");

    // The owner asks; the intruder's answer to the elicitation is refused and not delivered.
    assert_eq!(svc.handle(http_req("POST", Some(&sid), Some(initialized()), owner)).await.status(), 202);
    let r = svc.handle(http_req("POST", Some(&sid), Some(rpc(4, "tools/call", json!({ "name": "ask" }))), owner)).await;
    let (mut body, mut buf) = (r.into_body(), String::new());
    let ask = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(ask["method"], json!("elicitation/create"));
    let answer = |name: &str| json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "name": name } } });
    let r = svc.handle(http_req("POST", Some(&sid), Some(answer("Mallory")), intruder)).await;
    assert_eq!(r.status(), 404);
    assert_eq!(session.requests_to_client_pending(), 1, "the intruder's answer was delivered");
    assert_eq!(svc.handle(http_req("POST", Some(&sid), Some(answer("Ada")), owner)).await.status(), 202);
    let done = next_event(&mut body, &mut buf).await.unwrap();
    assert_eq!(done["result"]["content"][0]["text"], json!("got Ada"));

    // The session is the owner's still, and the owner can end it.
    assert_eq!(ping(svc, &sid, owner).await, 200);
    assert_eq!(svc.handle(http_req("DELETE", Some(&sid), None, owner)).await.status(), 200);
    assert!(session.closed().is_cancelled());
}

#[tokio::test]
async fn a_session_is_bound_to_the_principal_that_opened_it() {
    let svc = service(LegacyOptions::default());
    // Another principal; a principal where there was none; none where there was one.
    intruder_changes_nothing(&svc, as_principal("alice"), as_principal("bob")).await;
    intruder_changes_nothing(&svc, NOBODY, as_principal("bob")).await;
    intruder_changes_nothing(&svc, as_principal("alice"), NOBODY).await;
}

#[tokio::test]
async fn a_session_is_bound_to_the_bearer_tokens_subject() {
    let auth = BearerAuth::new("http://127.0.0.1/mcp", "http://127.0.0.1:9/as", |token: String| async move {
        Ok(match token.as_str() {
            "alice-1" | "alice-2" => Some(TokenInfo::new("alice", ["mcp"])),
            "bob" => Some(TokenInfo::new("bob", ["mcp"])),
            _ => None,
        })
    });
    let svc = McpService::new(server(LegacyOptions::default()), HttpOptions { auth: Some(auth), ..Default::default() });
    let alice = From { token: Some("alice-1"), ..Default::default() };
    let bob = From { token: Some("bob"), ..Default::default() };
    intruder_changes_nothing(&svc, alice, bob).await;
    // A token's principal is its subject: another token of the same subject is the same user.
    let sid = initialize(&svc, alice).await;
    assert_eq!(ping(&svc, &sid, From { token: Some("alice-2"), ..Default::default() }).await, 200);
}

#[tokio::test]
async fn sessions_that_stop_at_initialize_expire_quickly() {
    let svc = service(LegacyOptions { uninitialized_timeout: Duration::from_millis(200), ..Default::default() });
    let abandoned = open(&svc, NOBODY).await;
    let started = initialize(&svc, NOBODY).await;
    // A request counts as going past initialize too.
    let pinged = open(&svc, NOBODY).await;
    assert_eq!(ping(&svc, &pinged, NOBODY).await, 200);
    let sessions = svc.sessions().clone();
    assert_eq!(sessions.len(), 3);
    // The reaper ends the abandoned handshake (well before the 30-minute idle timeout).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while sessions.get(&abandoned, None).is_some() {
        assert!(tokio::time::Instant::now() < deadline, "the abandoned handshake never expired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(ping(&svc, &abandoned, NOBODY).await, 404);
    assert_eq!(ping(&svc, &started, NOBODY).await, 200);
    assert_eq!(ping(&svc, &pinged, NOBODY).await, 200);
}

#[tokio::test]
async fn a_full_table_ends_the_least_recently_used_idle_session() {
    let n = 50;
    let svc = service(LegacyOptions { max_sessions: n, ..Default::default() });
    let mut sids = Vec::new();
    for _ in 0..n {
        sids.push(initialize(&svc, NOBODY).await);
    }
    // Session 0 is used again (now the most recent); session 1 holds its GET stream open (in
    // use: never evicted, however old); so session 2 is the least recently used idle one.
    assert_eq!(ping(&svc, &sids[0], NOBODY).await, 200);
    let stream = get_stream(&svc, &sids[1], NOBODY).await;
    let newcomer = initialize(&svc, NOBODY).await;
    assert_eq!(svc.sessions().len(), n);
    assert_eq!(ping(&svc, &sids[2], NOBODY).await, 404, "the least recently used idle session was not the one ended");
    for (i, sid) in sids.iter().enumerate().filter(|(i, _)| *i != 2) {
        assert_eq!(ping(&svc, sid, NOBODY).await, 200, "session {i}");
    }
    assert_eq!(ping(&svc, &newcomer, NOBODY).await, 200);
    // The pings above made session 0 the least recently used idle one again. A handshake that
    // stopped at initialize goes before any initialized session, however recent it is.
    let half_open = open(&svc, NOBODY).await;
    assert_eq!(ping(&svc, &sids[0], NOBODY).await, 404, "session 0 was the least recently used idle one");
    let _another = initialize(&svc, NOBODY).await;
    assert!(svc.sessions().get(&half_open, None).is_none(), "the half-open session goes first");
    assert_eq!(ping(&svc, &sids[3], NOBODY).await, 200);
    drop(stream);
}

#[tokio::test]
async fn a_table_where_every_session_is_busy_refuses_without_a_false_retry_after() {
    let n = 5;
    let svc = service(LegacyOptions { max_sessions: n, ..Default::default() });
    let mut streams = Vec::new();
    let mut sids = Vec::new();
    for _ in 0..n {
        let sid = initialize(&svc, NOBODY).await;
        streams.push(get_stream(&svc, &sid, NOBODY).await);
        sids.push(sid);
    }
    let r = svc.handle(http_req("POST", None, Some(init_body()), NOBODY)).await;
    assert_eq!(r.status(), 503);
    assert!(
        r.headers().get("retry-after").is_none(),
        "no one knows when a stream ends: {:?}",
        r.headers().get("retry-after")
    );
    let v = json_of(r).await;
    assert_eq!(v["id"], json!(1));
    assert_eq!(v["error"]["code"], json!(-32000));
    assert!(v["error"]["message"].as_str().unwrap().contains("all 5 sessions are in use"), "{v}");
    // The refusal ended nothing.
    assert_eq!(svc.sessions().len(), n);
    // A stream ends: its session is idle, and makes room.
    drop(streams.remove(2));
    let _newcomer = initialize(&svc, NOBODY).await;
    assert_eq!(ping(&svc, &sids[2], NOBODY).await, 404);
    // A request in flight keeps its session too (here: an elicitation the client has not
    // answered yet, on a session without a stream).
    let asking = sids.remove(0);
    drop(streams.remove(0));
    let r =
        svc.handle(http_req("POST", Some(&asking), Some(rpc(2, "tools/call", json!({ "name": "ask" }))), NOBODY)).await;
    let (mut body, mut buf) = (r.into_body(), String::new());
    assert_eq!(next_event(&mut body, &mut buf).await.unwrap()["method"], json!("elicitation/create"));
    // Each initialize ends the only idle session (the newcomer, then each half-open one).
    let r = svc.handle(http_req("POST", None, Some(init_body()), NOBODY)).await;
    assert_eq!(r.status(), 200);
    let r = svc.handle(http_req("POST", None, Some(init_body()), NOBODY)).await;
    assert_eq!(r.status(), 200);
    let r = svc.handle(http_req("POST", None, Some(init_body()), NOBODY)).await;
    assert_eq!(r.status(), 200);
    assert_eq!(ping(&svc, &asking, NOBODY).await, 200, "the session with a request in flight stayed");
    drop(body);
}

#[tokio::test]
async fn a_principal_holds_at_most_its_quota_of_sessions() {
    let svc = service(LegacyOptions { max_sessions_per_principal: 3, ..Default::default() });
    let alice = as_principal("alice");
    let bob = as_principal("bob");
    let mut a = Vec::new();
    for _ in 0..3 {
        a.push(initialize(&svc, alice).await);
    }
    let b = initialize(&svc, bob).await;
    // A fourth: alice's own least recently used idle session makes room; bob keeps his.
    assert_eq!(ping(&svc, &a[0], alice).await, 200);
    let a4 = initialize(&svc, alice).await;
    assert_eq!(ping(&svc, &a[1], alice).await, 404);
    assert_eq!(svc.sessions().len(), 4);
    assert_eq!(ping(&svc, &b, bob).await, 200);
    // All of alice's sessions in use: 429, no Retry-After, nothing ended.
    let mut streams = Vec::new();
    for sid in [&a[0], &a[2], &a4] {
        streams.push(get_stream(&svc, sid, alice).await);
    }
    let r = svc.handle(http_req("POST", None, Some(init_body()), alice)).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_none());
    let v = json_of(r).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("this principal already has 3 sessions"), "{v}");
    assert_eq!(svc.sessions().len(), 4);
    // Bob is not held to alice's quota.
    let _b2 = initialize(&svc, bob).await;
}

#[tokio::test]
async fn without_a_principal_the_quota_is_per_peer_address() {
    let svc = service(LegacyOptions { max_sessions_per_peer: 2, ..Default::default() });
    let p1 = from_peer("192.0.2.1:1000");
    let first = initialize(&svc, p1).await;
    let _second = initialize(&svc, From { peer: Some("192.0.2.1:2000"), ..Default::default() }).await;
    // Another port of the same address: the same peer; its oldest idle session goes.
    let _third = initialize(&svc, From { peer: Some("192.0.2.1:3000"), ..Default::default() }).await;
    assert_eq!(ping(&svc, &first, p1).await, 404);
    // Another address has its own quota; an IPv4-mapped IPv6 address is the IPv4 one.
    let other = initialize(&svc, from_peer("192.0.2.2:1000")).await;
    let _mapped = initialize(&svc, from_peer("[::ffff:192.0.2.1]:4000")).await;
    assert_eq!(svc.sessions().len(), 3);
    // One IPv6 /64 is one peer; another /64 is another.
    let v6 = initialize(&svc, from_peer("[2001:db8:0:1::1]:1")).await;
    let _v6b = initialize(&svc, from_peer("[2001:db8:0:1::2]:1")).await;
    let _v6c = initialize(&svc, from_peer("[2001:db8:0:1:ffff::3]:1")).await;
    assert!(svc.sessions().get(&v6, None).is_none(), "the /64 holds 2 sessions at most");
    let _v6d = initialize(&svc, from_peer("[2001:db8:0:2::1]:1")).await;
    assert_eq!(svc.sessions().len(), 6);
    // The peer's session is bound to "no principal", not to the address: a client that moved
    // (another address, same no-principal) keeps its session.
    assert_eq!(ping(&svc, &other, from_peer("198.51.100.7:1")).await, 200);
    // With a principal, the principal's quota applies, not the address's.
    for _ in 0..3 {
        initialize(&svc, From { principal: Some("carol"), peer: Some("192.0.2.9:1"), ..Default::default() }).await;
    }
    assert_eq!(svc.sessions().len(), 9);
}

/// The attack of the issue, bounded: one unauthenticated client opens sessions as fast as it
/// can (finishing each handshake, so the short timeout does not help); other clients still
/// get sessions and keep them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_lock_others_out_of_the_table() {
    let svc = service(LegacyOptions { max_sessions: 50, max_sessions_per_peer: 10, ..Default::default() });
    let attacker = from_peer("203.0.113.66:40000");
    for _ in 0..500 {
        initialize(&svc, attacker).await;
    }
    assert_eq!(svc.sessions().len(), 10, "the attacker holds its quota, no more");
    let mut honest = Vec::new();
    for i in 0..40 {
        let from = format!("198.51.100.{}:5000", i + 1);
        honest.push((initialize(&svc, from_peer(&from)).await, from));
    }
    for _ in 0..500 {
        initialize(&svc, attacker).await;
    }
    for (sid, from) in &honest {
        assert_eq!(ping(&svc, sid, from_peer(from)).await, 200, "an honest session was ended");
    }
    // Even without quotas (the service mounted without PeerAddr), a full table of idle sessions
    // makes room: a newcomer gets a session.
    let svc = service(LegacyOptions { max_sessions: 50, ..Default::default() });
    for _ in 0..200 {
        initialize(&svc, NOBODY).await;
    }
    let newcomer = initialize(&svc, NOBODY).await;
    assert_eq!(ping(&svc, &newcomer, NOBODY).await, 200);
}

/// One HTTP/1.1 exchange on a fresh connection: the status and the session id, if any.
async fn post_tcp(addr: SocketAddr, body: &Value, session: Option<&str>) -> (u16, Option<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.to_string();
    let extra =
        session.map(|s| format!("mcp-session-id: {s}\r\nmcp-protocol-version: 2025-11-25\r\n")).unwrap_or_default();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n{extra}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    conn.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut raw))
        .await
        .expect("a response in time")
        .unwrap();
    let text = String::from_utf8_lossy(&raw);
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let sid =
        text.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("mcp-session-id:").map(|v| v.trim().to_owned()));
    (status, sid)
}

#[tokio::test]
async fn the_http_server_tells_the_session_table_each_peer_address() {
    let options = LegacyOptions { max_sessions_per_peer: 2, ..Default::default() };
    let http = mcpaxle::transport::http::HttpServer::bind(
        server(options),
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::default(),
    )
    .await
    .unwrap();
    let addr = http.local_addr();
    let mut sids = Vec::new();
    for _ in 0..3 {
        let (status, sid) = post_tcp(addr, &init_body(), None).await;
        assert_eq!(status, 200);
        let sid = sid.expect("a session id");
        assert_eq!(post_tcp(addr, &initialized(), Some(&sid)).await.0, 202);
        sids.push(sid);
    }
    // Three connections, one address: the first session made room for the third.
    let ping = rpc(2, "ping", json!({}));
    assert_eq!(post_tcp(addr, &ping, Some(&sids[0])).await.0, 404);
    assert_eq!(post_tcp(addr, &ping, Some(&sids[1])).await.0, 200);
    assert_eq!(post_tcp(addr, &ping, Some(&sids[2])).await.0, 200);
    http.shutdown().await;
}
