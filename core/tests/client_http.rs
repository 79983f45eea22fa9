//! The client over Streamable HTTP against mcpaxle's own server (both eras): every method,
//! MRTR, cache expiry and invalidation, subscriptions, progress, logging, timeouts,
//! cancellation, header mirroring, and a server that dies mid-call.

mod client_common;

use client_common::*;
use mcpaxle::ErrorKind;
use mcpaxle::client::{CallOptions, Client, Era};
use mcpaxle::schema::{
    CompleteRequestArgument, CompletionReference, LoggingLevel, PromptReference, ResourceContents, SubscriptionFilter,
};
use mcpaxle::server::Server;
use mcpaxle::transport::http::{HttpOptions, McpService};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn text_of(r: &mcpaxle::schema::CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

async fn connect(url: &str) -> Client {
    Client::connect_http(url, options()).await.unwrap()
}

#[tokio::test]
async fn every_method_over_http() {
    let (http, url) = serve_http(test_server(cache_hints(0), Arc::default())).await;
    let client = connect(&url).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().unwrap().name, "client-test-server");
    assert!(client.server_capabilities().tools.is_some());
    assert_eq!(client.instructions().as_deref(), Some("Fixtures for the client tests"));
    assert!(client.session_id().is_none());

    let d = client.discover().await.unwrap();
    assert!(d.supported_versions.iter().any(|v| v == "2026-07-28"));

    let page = client.list_tools(None).await.unwrap();
    assert_eq!(page.tools.len(), 3);
    let next = page.next_cursor.clone().unwrap();
    assert_eq!(client.list_tools(Some(&next)).await.unwrap().tools.len(), 3);
    let tools = client.list_all_tools().await.unwrap();
    for name in ["echo", "slow", "regional", "ask_all", "with_state"] {
        assert!(
            tools.iter().any(|t| t.name == name),
            "{name} missing from {:?}",
            tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
    }

    let r = client.call_tool("echo", json!({ "x": 1, "s": "é" }), CallOptions::new()).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({ "x": 1, "s": "é" })));

    assert_eq!(client.list_resources(None).await.unwrap().resources.len(), 3);
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 6);
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://items/{id}");
    let read = client.read_resource("test://items/42", CallOptions::new()).await.unwrap();
    match &read.contents[0] {
        ResourceContents::Text(t) => assert_eq!(t.text, r#"{"id":"42"}"#),
        other => panic!("unexpected contents {other:?}"),
    }

    assert_eq!(client.list_all_prompts().await.unwrap().len(), 2);
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let p = client.get_prompt("greet", args, CallOptions::new()).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("Hello, Ada!"));
    let c = client
        .complete(
            CompletionReference::Prompt(PromptReference { name: "greet".into(), title: None }),
            CompleteRequestArgument { name: "name".into(), value: "al".into() },
            None,
        )
        .await
        .unwrap();
    assert_eq!(c.completion.values, ["alice", "albert"]);

    let raw = client
        .request("tools/call", json!({ "name": "echo", "arguments": { "y": 2 } }), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(raw["structuredContent"], json!({ "y": 2 }));

    let e = client.call_tool("nope", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams, "{e}");
    assert_eq!(e.code(), -32602);

    client.close().await;
    let e = client.call_tool("echo", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
    http.shutdown().await;
}

#[tokio::test]
async fn mrtr_rounds_are_answered_by_the_input_handlers() {
    let (http, url) = serve_http(test_server(cache_hints(0), Arc::default())).await;
    let client = connect(&url).await;
    let call = |name: &'static str| {
        let client = client.clone();
        async move { text_of(&client.call_tool(name, json!({}), CallOptions::new()).await.unwrap()) }
    };
    assert_eq!(call("ask_name").await, "Hello, Ada!");
    assert_eq!(call("ask_sample").await, "The model said: hi!");
    assert_eq!(call("ask_roots").await, "2 root(s)");
    assert_eq!(call("ask_all").await, "Ada; 2 root(s)");
    assert_eq!(call("multi_round").await, "Ada then Bob");
    assert_eq!(call("with_state").await, r#"Ada with state {"started":true}"#);
    let p = client.get_prompt("ask_prompt", BTreeMap::new(), CallOptions::new()).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("A poem for Ada"));

    // Concurrent rounds never mix: the server seals each requestState to its request.
    let names = ["ask_name", "ask_all", "multi_round", "with_state", "ask_sample", "ask_roots"];
    let results = futures_util::future::join_all((0..4).flat_map(|_| names.iter().map(|n| call(n)))).await;
    assert_eq!(results.len(), 24);
    assert!(results.iter().all(|r| !r.is_empty()));

    // Bounded rounds.
    let mut opts = options();
    opts.max_input_rounds = 1;
    let limited = Client::connect_http(&url, opts).await.unwrap();
    let e = limited.call_tool("multi_round", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InputRequired, "{e}");

    // Without a handler the capability is not declared, and the server refuses.
    let bare = Client::connect_http(&url, mcpaxle::client::ClientOptions::new("bare", "1")).await.unwrap();
    let e = bare.call_tool("ask_name", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingRequiredClientCapability, "{e}");
    http.shutdown().await;
}

#[tokio::test]
async fn progress_logging_and_header_mirroring() {
    let (http, url) = serve_http(test_server(cache_hints(0), Arc::default())).await;
    let client = connect(&url).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let opts = CallOptions::new().on_progress(move |p| s.lock().unwrap().push((p.progress, p.total, p.message)));
    let r = client.call_tool("progress", json!({ "steps": 3 }), opts).await.unwrap();
    assert_eq!(text_of(&r), "progressed");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.iter().map(|p| p.0).collect::<Vec<_>>(), [1.0, 2.0, 3.0]);
    assert_eq!(seen[0].1, Some(3.0));

    let logs = Arc::new(Mutex::new(Vec::new()));
    let l = logs.clone();
    let mut opts = CallOptions::new().on_log(move |m| l.lock().unwrap().push(m.data));
    opts.log_level = Some(LoggingLevel::Debug);
    client.call_tool("log", json!({}), opts).await.unwrap();
    assert_eq!(*logs.lock().unwrap(), [json!("one"), json!("two"), json!("three")]);

    // The server checks every Mcp-Param-* header against the body (-32020 otherwise).
    client.list_all_tools().await.unwrap();
    for args in [
        json!({ "region": "us-west1", "priority": 42, "flag": true, "query": "x" }),
        json!({ "region": "Hello, 世界", "priority": -7, "flag": false }),
        json!({ "region": " padded " }),
        json!({ "region": "line1\nline2" }),
        json!({ "region": "=?base64?literal?=" }),
    ] {
        let r = client.call_tool("regional", args.clone(), CallOptions::new()).await.unwrap();
        assert_eq!(text_of(&r), format!("region={}", args["region"].as_str().unwrap()));
    }
    // A client that never listed the tool learns its headers from the -32020 and retries.
    let fresh = connect(&url).await;
    let r = fresh.call_tool("regional", json!({ "region": "eu" }), CallOptions::new()).await.unwrap();
    assert_eq!(text_of(&r), "region=eu");
    http.shutdown().await;
}

#[tokio::test]
async fn cache_expiry_invalidation_scope_and_switch() {
    let probe = Arc::new(Probe::default());
    let server = test_server(cache_hints(400), probe.clone());
    let (http, url) = serve_http(server.clone()).await;
    let client = connect(&url).await;
    let count = |tools: &[mcpaxle::schema::Tool]| tools.len();

    let before = count(&client.list_all_tools().await.unwrap());
    // A change the client is not told about: the cached pages stay in use until they expire.
    server
        .add_tool(mcpaxle::schema::Tool::new("quiet_1", "q", json!({ "type": "object" })), |_a, _c| async {
            Ok(mcpaxle::schema::CallToolResult::text("q"))
        })
        .unwrap();
    assert_eq!(count(&client.list_all_tools().await.unwrap()), before);
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(count(&client.list_all_tools().await.unwrap()), before + 1);

    // A list_changed seen on a subscription invalidates at once.
    let mut sub =
        client.subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    assert_eq!(count(&client.list_all_tools().await.unwrap()), before + 1);
    client.call_tool("add_tool", json!({ "name": "quiet_2" }), CallOptions::new()).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    assert_eq!(count(&client.list_all_tools().await.unwrap()), before + 2);
    sub.close();

    // Without a cache every call goes to the server.
    let uncached = Client::connect_http(&url, options().cache(false)).await.unwrap();
    let base = count(&uncached.list_all_tools().await.unwrap());
    server
        .add_tool(mcpaxle::schema::Tool::new("quiet_3", "q", json!({ "type": "object" })), |_a, _c| async {
            Ok(mcpaxle::schema::CallToolResult::text("q"))
        })
        .unwrap();
    assert_eq!(count(&uncached.list_all_tools().await.unwrap()), base + 1);

    // Private entries (test://counted: 60 s, private) belong to one authorization context.
    let reads = || probe.reads.load(Ordering::SeqCst);
    let authed = Client::connect_http(&url, options().header("Authorization", "Bearer alice")).await.unwrap();
    authed.read_resource("test://counted", CallOptions::new()).await.unwrap();
    authed.read_resource("test://counted", CallOptions::new()).await.unwrap();
    assert_eq!(reads(), 1);
    authed.set_header("Authorization", Some("Bearer bob")).unwrap();
    authed.read_resource("test://counted", CallOptions::new()).await.unwrap();
    assert_eq!(reads(), 2);
    authed.set_header("Authorization", Some("Bearer alice")).unwrap();
    authed.read_resource("test://counted", CallOptions::new()).await.unwrap();
    assert_eq!(reads(), 2);
    authed.read_resource("test://counted", CallOptions::new().bypass_cache()).await.unwrap();
    assert_eq!(reads(), 3);
    // resources/updated seen on a subscription invalidates the read.
    let mut sub = authed
        .subscribe(SubscriptionFilter {
            resource_subscriptions: Some(vec!["test://counted".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    authed.call_tool("touch", json!({ "uri": "test://counted" }), CallOptions::new()).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(n.method, "notifications/resources/updated");
    authed.read_resource("test://counted", CallOptions::new()).await.unwrap();
    assert_eq!(reads(), 4);
    http.shutdown().await;
}

#[tokio::test]
async fn subscriptions_stream_until_closed() {
    let (http, url) = serve_http(test_server(cache_hints(0), Arc::default())).await;
    let client = connect(&url).await;
    let filter =
        SubscriptionFilter { tools_list_changed: Some(true), prompts_list_changed: Some(true), ..Default::default() };
    let mut sub = client.subscribe(filter).await.unwrap();
    for i in 0..3 {
        client.call_tool("add_tool", json!({ "name": format!("dyn_{i}") }), CallOptions::new()).await.unwrap();
    }
    for _ in 0..3 {
        let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap().unwrap().unwrap();
        assert_eq!(n.method, "notifications/tools/list_changed");
        assert!(n.params.unwrap()["_meta"]["io.modelcontextprotocol/subscriptionId"].as_i64().is_some());
    }
    sub.close();
    assert!(sub.next().await.is_none());

    // The server's graceful shutdown ends the stream (its final response) and it yields None.
    let mut sub =
        client.subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    let stream_end = tokio::spawn(async move { sub.next().await.map(|r| r.map(|n| n.method)) });
    tokio::time::sleep(Duration::from_millis(50)).await;
    http.shutdown().await;
    let end = tokio::time::timeout(Duration::from_secs(5), stream_end).await.unwrap().unwrap();
    assert!(end.is_none(), "{end:?}");
}

#[tokio::test]
async fn timeouts_and_cancellation_close_the_stream() {
    let probe = Arc::new(Probe::default());
    let (http, url) = serve_http(test_server(cache_hints(0), probe.clone())).await;
    let client = connect(&url).await;

    let t0 = Instant::now();
    let e = client
        .call_tool("slow", json!({ "ms": 10_000 }), CallOptions::new().timeout(Duration::from_millis(200)))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(t0.elapsed() < Duration::from_secs(2));

    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        t.cancel();
    });
    let e = client.call_tool("slow", json!({}), CallOptions::new().cancel(token)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");

    // Dropping the future cancels too.
    let _ =
        tokio::time::timeout(Duration::from_millis(200), client.call_tool("slow", json!({}), CallOptions::new())).await;
    // The server saw three disconnects: every slow call was cancelled.
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe.cancelled.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(probe.cancelled.load(Ordering::SeqCst), 3);

    // Progress resets the timeout, up to the maximum.
    let args = json!({ "steps": 6, "interval": 100 });
    let r = client
        .call_tool("progress", args.clone(), CallOptions::new().timeout(Duration::from_millis(300)).on_progress(|_| {}))
        .await;
    assert!(r.is_ok(), "{r:?}");
    let mut opts = options();
    opts.reset_timeout_on_progress = false;
    let strict = Client::connect_http(&url, opts).await.unwrap();
    let e = strict
        .call_tool("progress", args.clone(), CallOptions::new().timeout(Duration::from_millis(300)).on_progress(|_| {}))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let mut opts = options();
    opts.max_request_timeout = Duration::from_millis(350);
    let capped = Client::connect_http(&url, opts).await.unwrap();
    let e = capped
        .call_tool("progress", args, CallOptions::new().timeout(Duration::from_millis(300)).on_progress(|_| {}))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    http.shutdown().await;
}

/// An HTTP server whose connections can all be killed at once.
async fn killable(
    server: Server,
) -> (String, Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service = McpService::new(server, HttpOptions::default());
    let conns: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
    let c = conns.clone();
    let accept = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let svc = service.clone();
            let h = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let svc = svc.clone();
                async move { Ok::<_, std::convert::Infallible>(svc.handle(req).await) }
            });
            let conn =
                hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(stream), h);
            c.lock().unwrap().push(tokio::spawn(async move {
                let _ = conn.await;
            }));
        }
    });
    (url, conns, accept)
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_the_call_promptly() {
    let probe = Arc::new(Probe::default());
    let (url, conns, accept) = killable(test_server(cache_hints(0), probe.clone())).await;
    let client = connect(&url).await;
    let call = {
        let client = client.clone();
        tokio::spawn(async move {
            client.call_tool("slow", json!({}), CallOptions::new().timeout(Duration::from_secs(30))).await
        })
    };
    let sub =
        client.subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    while probe.started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let t0 = Instant::now();
    accept.abort();
    for c in conns.lock().unwrap().drain(..) {
        c.abort();
    }
    let e = tokio::time::timeout(Duration::from_secs(5), call).await.unwrap().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
    let mut sub = sub;
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap();
    assert!(matches!(end, Some(Err(ref e)) if e.kind() == ErrorKind::Transport), "{end:?}");
    assert!(t0.elapsed() < Duration::from_secs(3));
    let e = client.list_all_tools().await;
    assert!(e.is_err());
}

#[tokio::test]
async fn legacy_session_over_http_with_the_same_handlers() {
    let probe = Arc::new(Probe::default());
    let (http, url) = serve_http(test_server(cache_hints(60_000), probe.clone())).await;
    let client = Client::connect_http(&url, options().protocol_versions(["2025-11-25"])).await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert!(client.session_id().is_some());
    assert_eq!(client.server_info().unwrap().name, "client-test-server");
    let d = client.discover().await.unwrap();
    assert_eq!(d.supported_versions, ["2025-11-25"]);

    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ask_all"));
    let r = client.call_tool("echo", json!({ "a": 1 }), CallOptions::new()).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({ "a": 1 })));
    // The server's asks arrive as requests, answered by the same input handlers.
    for (tool, want) in [("ask_name", "Hello, Ada!"), ("ask_all", "Ada; 2 root(s)"), ("multi_round", "Ada then Bob")] {
        let r = client.call_tool(tool, json!({}), CallOptions::new()).await.unwrap();
        assert_eq!(text_of(&r), want);
    }
    let seen = Arc::new(Mutex::new(0));
    let s = seen.clone();
    client
        .call_tool("progress", json!({ "steps": 2 }), CallOptions::new().on_progress(move |_| *s.lock().unwrap() += 1))
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), 2);
    let p = client.get_prompt("ask_prompt", BTreeMap::new(), CallOptions::new()).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("A poem for Ada"));

    // Legacy subscriptions: resources/subscribe plus the session's GET stream.
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec!["test://counted".into()]),
        ..Default::default()
    };
    let mut sub = client.subscribe(filter).await.unwrap();
    client.call_tool("touch", json!({ "uri": "test://counted" }), CallOptions::new()).await.unwrap();
    client.call_tool("add_tool", json!({ "name": "legacy_dyn" }), CallOptions::new()).await.unwrap();
    let mut methods = Vec::new();
    while methods.len() < 2 {
        let n =
            tokio::time::timeout(Duration::from_secs(5), sub.next()).await.expect("no notification").unwrap().unwrap();
        methods.push(n.method);
    }
    methods.sort();
    assert_eq!(methods, ["notifications/resources/updated", "notifications/tools/list_changed"]);
    sub.close();

    // Cancellation in a legacy session: the client sends notifications/cancelled.
    let e =
        client.call_tool("slow", json!({}), CallOptions::new().timeout(Duration::from_millis(200))).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe.cancelled.load(Ordering::SeqCst) < 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(probe.cancelled.load(Ordering::SeqCst), 1);
    client.close().await;
    http.shutdown().await;
}

#[tokio::test]
async fn connection_errors_have_stable_kinds() {
    let e = Client::connect_http("http://127.0.0.1:1/mcp", options()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
    let e = Client::connect_http("ftp://example.com/mcp", options()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage, "{e}");
    let e = Client::connect_http("http://127.0.0.1:1/mcp", options().header("Bad Header", "x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage, "{e}");
}

/// A handler that ends its response stream mid-call (SEP-1699 polling): a legacy client
/// resumes with GET and Last-Event-ID and gets what followed, progress and result alike; in
/// the modern era (no resumable streams) the close is ignored and the call just completes.
#[tokio::test]
async fn streams_closed_by_the_handler_are_resumed() {
    use mcpaxle::schema::{CallToolResult, Tool};
    use mcpaxle::server::RequestContext;
    let server = Server::builder("polling", "1").build();
    let tool = Tool::new("poll", "Closes its stream mid-call", json!({ "type": "object" }));
    server
        .add_tool(tool, |_a, ctx: RequestContext| async move {
            ctx.progress(1.0, Some(3.0), Some("before the close"));
            ctx.close_stream(Duration::from_millis(50));
            tokio::time::sleep(Duration::from_millis(150)).await;
            ctx.progress(2.0, Some(3.0), Some("while parked"));
            tokio::time::sleep(Duration::from_millis(100)).await;
            ctx.progress(3.0, Some(3.0), Some("after the resume"));
            Ok(CallToolResult::text("polled"))
        })
        .unwrap();
    let (http, url) = serve_http(server).await;
    for versions in [vec!["2025-11-25"], vec!["2026-07-28"]] {
        let client = Client::connect_http(&url, options().protocol_versions(versions.clone())).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let on_progress =
            move |p: mcpaxle::schema::ProgressNotificationParams| s.lock().unwrap().push(p.message.unwrap_or_default());
        let r = client.call_tool("poll", json!({}), CallOptions::new().on_progress(on_progress)).await.unwrap();
        assert_eq!(text_of(&r), "polled", "{versions:?}");
        assert_eq!(*seen.lock().unwrap(), ["before the close", "while parked", "after the resume"], "{versions:?}");
        client.close().await;
    }
    http.shutdown().await;
}

/// A legacy client resuming a response stream that cannot be resumed (the client went away,
/// the request was cancelled) gets a 400 at once, not the session stream to wait on.
#[tokio::test]
async fn resuming_a_stream_that_is_gone_fails_at_once() {
    use http_body_util::{BodyExt, Full};
    let (http, url) = serve_http(Server::builder("gone", "1").build()).await;
    let client = Client::connect_http(&url, options().protocol_versions(["2025-11-25"])).await.unwrap();
    let session = client.session_id().unwrap();
    let hyper = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<bytes::Bytes>>();
    let get = |last: &'static str| {
        http::Request::get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last)
            .body(Full::default())
            .unwrap()
    };
    let r = hyper.request(get("41-3")).await.unwrap();
    assert_eq!(r.status(), 400);
    let body = r.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("cannot be resumed"), "{body:?}");
    // An id of another shape is not ours: the session stream, as without one.
    let r = hyper.request(get("opaque")).await.unwrap();
    assert_eq!(r.status(), 200);
    client.close().await;
    http.shutdown().await;
}
