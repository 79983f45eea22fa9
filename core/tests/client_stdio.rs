//! The client over stdio framing: against mcpaxle's server on an in-process pipe (both eras),
//! against the `everything_server` example as a child process, and against hand-written
//! legacy servers for era detection.

mod client_common;

use client_common::*;
use mcpaxle::ErrorKind;
use mcpaxle::client::{CallOptions, Client, ClientOptions, Era};
use mcpaxle::schema::SubscriptionFilter;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

fn text_of(r: &mcpaxle::schema::CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

async fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !f() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

#[tokio::test]
async fn every_method_and_mrtr_over_a_pipe() {
    let (client, _task) = pipe_client(test_server(cache_hints(0), Arc::default()), options()).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().unwrap().name, "client-test-server");
    assert!(client.process_id().is_none());
    assert!(client.set_header("Authorization", Some("x")).is_err());

    let tools = client.list_all_tools().await.unwrap();
    // stdio keeps x-mcp-header tools (there are no headers to mirror).
    assert!(tools.iter().any(|t| t.name == "regional"));
    let r = client.call_tool("regional", json!({ "region": "Hello, 世界" }), CallOptions::new()).await.unwrap();
    assert_eq!(text_of(&r), "region=Hello, 世界");
    assert_eq!(client.list_all_resources().await.unwrap().len(), 6);
    assert_eq!(client.list_all_resource_templates().await.unwrap().len(), 1);
    client.read_resource("test://static", CallOptions::new()).await.unwrap();
    let p =
        client.get_prompt("greet", BTreeMap::from([("name".into(), "Ada".into())]), CallOptions::new()).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("Hello, Ada!"));
    assert!(client.discover().await.unwrap().supported_versions.contains(&"2026-07-28".to_owned()));

    for (tool, want) in [("ask_name", "Hello, Ada!"), ("ask_all", "Ada; 2 root(s)"), ("multi_round", "Ada then Bob")] {
        assert_eq!(text_of(&client.call_tool(tool, json!({}), CallOptions::new()).await.unwrap()), want);
    }
    let calls = (0..8).map(|i| {
        let client = client.clone();
        async move {
            client.call_tool(if i % 2 == 0 { "with_state" } else { "ask_all" }, json!({}), CallOptions::new()).await
        }
    });
    assert!(futures_util::future::join_all(calls).await.iter().all(Result::is_ok));

    // Progress is routed by token on the shared channel, to the right call.
    let counts: Vec<Arc<Mutex<Vec<f64>>>> = (0..3).map(|_| Arc::default()).collect();
    let calls = counts.iter().enumerate().map(|(i, c)| {
        let c = c.clone();
        let client = client.clone();
        async move {
            let opts = CallOptions::new().on_progress(move |p| c.lock().unwrap().push(p.progress));
            client.call_tool("progress", json!({ "steps": i + 1 }), opts).await
        }
    });
    assert!(futures_util::future::join_all(calls).await.iter().all(Result::is_ok));
    for (i, c) in counts.iter().enumerate() {
        assert_eq!(c.lock().unwrap().len(), i + 1);
    }
    client.close().await;
    assert_eq!(client.list_all_tools().await.unwrap_err().kind(), ErrorKind::Transport);
}

#[tokio::test]
async fn subscriptions_are_told_apart_by_subscription_id() {
    let (client, _task) = pipe_client(test_server(cache_hints(0), Arc::default()), options()).await;
    let mut tools =
        client.subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    let mut updates = client
        .subscribe(SubscriptionFilter {
            resource_subscriptions: Some(vec!["test://counted".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(updates.acknowledged().resource_subscriptions, Some(vec!["test://counted".to_owned()]));
    client.call_tool("add_tool", json!({ "name": "x1" }), CallOptions::new()).await.unwrap();
    client.call_tool("touch", json!({ "uri": "test://counted" }), CallOptions::new()).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), tools.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    let n = tokio::time::timeout(Duration::from_secs(5), updates.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(n.method, "notifications/resources/updated");
    assert_eq!(n.params.unwrap()["uri"], "test://counted");
    // Nothing else arrived on either.
    assert!(tokio::time::timeout(Duration::from_millis(100), tools.next()).await.is_err());
    assert!(tokio::time::timeout(Duration::from_millis(100), updates.next()).await.is_err());
    tools.close();
    client.call_tool("add_tool", json!({ "name": "x2" }), CallOptions::new()).await.unwrap();
    assert!(tools.next().await.is_none());
    updates.close();
}

#[tokio::test]
async fn cancellation_and_timeouts_send_notifications_cancelled() {
    let probe = Arc::new(Probe::default());
    let (client, _task) = pipe_client(test_server(cache_hints(0), probe.clone()), options()).await;
    let e =
        client.call_tool("slow", json!({}), CallOptions::new().timeout(Duration::from_millis(150))).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(wait_for(|| probe.cancelled.load(Ordering::SeqCst) == 1).await, "the server was not told");
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        t.cancel();
    });
    let e = client.call_tool("slow", json!({}), CallOptions::new().cancel(token)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    assert!(wait_for(|| probe.cancelled.load(Ordering::SeqCst) == 2).await);
    let _ =
        tokio::time::timeout(Duration::from_millis(100), client.call_tool("slow", json!({}), CallOptions::new())).await;
    assert!(wait_for(|| probe.cancelled.load(Ordering::SeqCst) == 3).await);
    // The connection is still good.
    assert_eq!(text_of(&client.call_tool("slow", json!({ "ms": 1 }), CallOptions::new()).await.unwrap()), "slept");
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_every_pending_call() {
    let probe = Arc::new(Probe::default());
    let (client, task) = pipe_client(test_server(cache_hints(0), probe.clone()), options()).await;
    let mut sub =
        client.subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                client.call_tool("slow", json!({}), CallOptions::new().timeout(Duration::from_secs(30))).await
            })
        })
        .collect();
    assert!(wait_for(|| probe.started.load(Ordering::SeqCst) == 3).await);
    let t0 = Instant::now();
    task.abort();
    for c in calls {
        let e = tokio::time::timeout(Duration::from_secs(5), c).await.unwrap().unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
    }
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap();
    assert!(matches!(end, Some(Err(ref e)) if e.kind() == ErrorKind::Transport), "{end:?}");
    assert!(t0.elapsed() < Duration::from_secs(2));
    let e = client.call_tool("echo", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport);
}

#[tokio::test]
async fn legacy_session_over_a_pipe() {
    let opts = options().protocol_versions(["2025-11-25", "2025-06-18"]);
    let (client, _task) = pipe_client(test_server(cache_hints(0), Arc::default()), opts).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert!(client.list_all_tools().await.unwrap().iter().any(|t| t.name == "ask_all"));
    for (tool, want) in [
        ("ask_name", "Hello, Ada!"),
        ("ask_all", "Ada; 2 root(s)"),
        ("with_state", r#"Ada with state {"started":true}"#),
    ] {
        assert_eq!(text_of(&client.call_tool(tool, json!({}), CallOptions::new()).await.unwrap()), want);
    }
    let mut sub = client
        .subscribe(SubscriptionFilter {
            resource_subscriptions: Some(vec!["test://counted".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    client.call_tool("touch", json!({ "uri": "test://counted" }), CallOptions::new()).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(n.method, "notifications/resources/updated");
}

/// A hand-written legacy server on a pipe: `discover` says how it treats `server/discover`
/// (`Some(code)`: answers that error; `None`: never answers).
fn fake_legacy_server(discover: Option<i64>) -> (tokio::io::DuplexStream, Arc<Mutex<Vec<Value>>>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let s = seen.clone();
    tokio::spawn(async move {
        let (r, mut w) = tokio::io::split(server_end);
        let mut lines = BufReader::new(r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let m: Value = serde_json::from_str(&line).unwrap();
            s.lock().unwrap().push(m.clone());
            let id = m["id"].clone();
            let reply = match m["method"].as_str().unwrap_or_default() {
                "server/discover" => match discover {
                    Some(code) => {
                        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": "Server not initialized" } })
                    }
                    None => continue,
                },
                "initialize" => json!({ "jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": { "tools": { "listChanged": true } },
                    "serverInfo": { "name": "fake-legacy", "version": "0.1" }
                }}),
                "tools/list" => json!({ "jsonrpc": "2.0", "id": id, "result": { "tools": [
                    { "name": "t", "inputSchema": { "type": "object" } }
                ]}}),
                _ if id.is_null() => continue,
                _ => json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "Method not found" } }),
            };
            let mut out = serde_json::to_vec(&reply).unwrap();
            out.push(b'\n');
            if w.write_all(&out).await.is_err() {
                return;
            }
        }
    });
    (client_end, seen)
}

#[tokio::test]
async fn the_discover_probe_falls_back_to_initialize() {
    for discover in [Some(-32601), Some(-32602), Some(-32002), None] {
        let (end, seen) = fake_legacy_server(discover);
        let (r, w) = tokio::io::split(end);
        let mut opts = options();
        opts.probe_timeout = Duration::from_millis(200);
        let client = Client::connect_with(r, w, opts).await.unwrap();
        assert_eq!(client.era(), Era::Legacy, "{discover:?}");
        assert_eq!(client.protocol_version(), "2025-06-18");
        assert_eq!(client.server_info().unwrap().name, "fake-legacy");
        assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
        let methods: Vec<String> =
            seen.lock().unwrap().iter().filter_map(|m| m["method"].as_str().map(str::to_owned)).collect();
        assert_eq!(methods, ["server/discover", "initialize", "notifications/initialized", "tools/list"]);
        // The legacy requests carry no modern _meta.
        let init = seen.lock().unwrap()[1].clone();
        assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
        assert!(init["params"]["capabilities"]["elicitation"].is_object());
        assert!(seen.lock().unwrap()[3]["params"].get("_meta").is_none());
    }
    // A modern-only client refuses the legacy server.
    let (end, _) = fake_legacy_server(Some(-32601));
    let (r, w) = tokio::io::split(end);
    let e = Client::connect_with(r, w, options().protocol_versions(["2026-07-28"])).await.unwrap_err();
    assert!(e.message().contains("modern"), "{e}");
}

#[tokio::test]
async fn a_child_process_server_is_shut_down_and_never_orphaned() {
    let path = everything_server();
    let client = Client::connect_stdio(&path, ["--stdio"], ClientOptions::new("child-test", "1")).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    let pid = client.process_id().unwrap();
    assert!(alive(pid));
    let r = client.call_tool("test_simple_text", json!({}), CallOptions::new()).await.unwrap();
    assert_eq!(text_of(&r), "This is a simple text response for testing.");
    let t0 = Instant::now();
    client.close().await;
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(!alive(pid), "the server outlived close()");

    // Dropping an open client kills its server.
    let client = Client::connect_stdio(&path, ["--stdio"], ClientOptions::new("child-test", "1")).await.unwrap();
    let pid = client.process_id().unwrap();
    drop(client);
    assert!(wait_for(|| !alive(pid)).await, "the server outlived its client");

    // A server killed mid-call fails what is pending at once.
    let client = Client::connect_stdio(&path, ["--stdio"], ClientOptions::new("child-test", "1")).await.unwrap();
    let pid = client.process_id().unwrap();
    let mut sub =
        client.subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap();
    assert!(matches!(end, Some(Err(ref e)) if e.kind() == ErrorKind::Transport), "{end:?}");
    let e = client.call_tool("test_simple_text", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport);
    client.close().await;

    // A command that does not exist.
    let e = Client::connect_stdio("/nonexistent/mcp-server", Vec::<String>::new(), ClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport);
}

#[tokio::test]
async fn a_server_ignoring_end_of_input_gets_sigterm() {
    // A "server" that never answers and ignores end of input: connect times out, and the
    // shutdown escalates to SIGTERM, which ends it.
    let pid_file = std::env::temp_dir().join(format!("mcpaxle-client-test-{}", std::process::id()));
    let script = format!("echo $$ > {}; exec sleep 30", pid_file.display());
    let mut opts = ClientOptions::new("t", "1").protocol_versions(["2026-07-28"]);
    opts.request_timeout = Duration::from_millis(300);
    opts.shutdown_timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let e = Client::connect_stdio("sh", ["-c", script.as_str()], opts).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let _ = std::fs::remove_file(&pid_file);
    assert!(wait_for(|| !alive(pid)).await, "the server survived");
}

#[tokio::test]
async fn a_child_server_gets_a_small_environment_unless_told_to_inherit() {
    // cargo sets CARGO_PKG_NAME for the tests it runs: it stands for a secret of the host.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let path = everything_server();
    let dump = |inherit: bool| {
        let path = path.clone();
        async move {
            let file = std::env::temp_dir().join(format!("mcpaxle-env-{}-{inherit}", std::process::id()));
            let script = format!("env > '{}'; exec '{}' --stdio", file.display(), path.display());
            let mut opts = ClientOptions::new("env-test", "1");
            opts.env = vec![("MCPAXLE_GIVEN".into(), "yes".into()), ("HOME".into(), "/given/home".into())];
            opts.inherit_env = inherit;
            let client = Client::connect_stdio("sh", ["-c", script.as_str()], opts).await.unwrap();
            client.close().await;
            let text = std::fs::read_to_string(&file).unwrap();
            let _ = std::fs::remove_file(&file);
            text.lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect::<BTreeMap<String, String>>()
        }
    };
    let small = dump(false).await;
    assert_eq!(small.get("MCPAXLE_GIVEN").map(String::as_str), Some("yes"), "what the caller passes");
    assert_eq!(small.get("HOME").map(String::as_str), Some("/given/home"), "the caller's value wins");
    assert_eq!(small.get("PATH"), std::env::var("PATH").ok().as_ref(), "PATH is inherited");
    assert!(!small.contains_key("CARGO_PKG_NAME"), "the host's other variables stay out: {small:?}");
    let allowed = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "MCPAXLE_GIVEN", "PWD", "SHLVL", "_", "OLDPWD"];
    assert!(small.keys().all(|k| allowed.contains(&k.as_str())), "{small:?}");

    let all = dump(true).await;
    eprintln!("child environment: {} variables by default, {} inherited with inherit_env", small.len(), all.len());
    assert_eq!(all.get("CARGO_PKG_NAME").map(String::as_str), Some("mcpaxle"));
    assert_eq!(all.get("MCPAXLE_GIVEN").map(String::as_str), Some("yes"));
}
