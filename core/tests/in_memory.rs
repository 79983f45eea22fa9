//! `Client::connect_in_memory`: a client and a server in one process, no port and no child
//! process, both eras, with what a test of a server needs (MRTR asks, progress, a listen
//! stream, cancellation) and a server that ends with the client.

mod client_common;

use client_common::*;
use mcpaxle::client::{CallOptions, Client, Era};
use mcpaxle::schema::{CallToolResult, SubscriptionFilter, Tool};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn text_of(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

#[tokio::test]
async fn both_eras_with_asks_progress_and_a_listen_stream() {
    let server = test_server(cache_hints(0), Arc::default());
    for (versions, era) in [(["2026-07-28"], Era::Modern), (["2025-11-25"], Era::Legacy)] {
        let options = options().protocol_versions(versions);
        let client = Client::connect_in_memory(&server, options).await.unwrap();
        assert_eq!(client.era(), era);
        assert_eq!(client.server_info().unwrap().name, "client-test-server");
        assert!(client.list_all_tools().await.unwrap().iter().any(|t| t.name == "ask_name"));
        assert_eq!(text_of(&client.call_tool("ask_name", json!({}), CallOptions::new()).await.unwrap()), "Hello, Ada!");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let progress = CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
        let r = client.call_tool("progress", json!({ "steps": 3, "interval": 1 }), progress).await.unwrap();
        assert_eq!(text_of(&r), "progressed");
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
        let mut sub = client
            .subscribe(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() })
            .await
            .unwrap();
        let name = format!("added_{era:?}");
        server
            .add_tool(Tool::new(name.as_str(), "New", json!({ "type": "object" })), |_a, _c| async {
                Ok(CallToolResult::text("new"))
            })
            .unwrap();
        let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap().unwrap().unwrap();
        assert_eq!(n.method, "notifications/tools/list_changed");
        sub.close();
        server.remove_tool(&name);
        client.close().await;
    }
}

#[tokio::test]
async fn a_cancelled_call_is_cancelled_in_the_server() {
    let probe = Arc::new(Probe::default());
    let server = test_server(cache_hints(0), probe.clone());
    let client = Client::connect_in_memory(&server, options()).await.unwrap();
    let token = CancellationToken::new();
    let call = {
        let client = client.clone();
        let token = token.clone();
        tokio::spawn(async move { client.call_tool("slow", json!({}), CallOptions::new().cancel(token)).await })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe.started.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the call never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    token.cancel();
    assert_eq!(call.await.unwrap().unwrap_err().kind(), mcpaxle::ErrorKind::Cancelled);
    while probe.cancelled.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the server never saw the cancellation");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    client.close().await;
}

/// Each client has a pipe of its own to the same server; closing one leaves the others.
#[tokio::test]
async fn clients_share_a_server_and_close_alone() {
    let server = test_server(cache_hints(0), Arc::default());
    let a = Client::connect_in_memory(&server, options()).await.unwrap();
    let b = Client::connect_in_memory(&server, options()).await.unwrap();
    a.close().await;
    assert!(a.call_tool("echo", json!({}), CallOptions::new()).await.is_err());
    let r = b.call_tool("echo", json!({ "x": 1 }), CallOptions::new()).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({ "x": 1 })));
    b.close().await;
}

/// A `SharedArguments` tool reads the call's arguments where the server keeps them (for a
/// `requestState` the handler might bind): the same allocation, not a copy of it.
#[tokio::test]
async fn a_tool_reads_shared_arguments_without_a_copy() {
    use mcpaxle::server::SharedArguments;
    let server = test_server(cache_hints(0), Arc::default());
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let reader = SharedArguments(move |args: Arc<serde_json::Value>, _ctx| {
        *s.lock().unwrap() = Some(Arc::strong_count(&args));
        let text = args["text"].as_str().unwrap_or_default().len().to_string();
        async move { Ok(CallToolResult::text(text)) }
    });
    server.add_tool(Tool::new("length", "Length of text", json!({ "type": "object" })), reader).unwrap();
    let client = Client::connect_in_memory(&server, options()).await.unwrap();
    let big = "x".repeat(100_000);
    let r = client.call_tool("length", json!({ "text": big }), CallOptions::new()).await.unwrap();
    assert_eq!(text_of(&r), "100000");
    let shared = seen.lock().unwrap().expect("the handler ran");
    assert!(shared >= 2, "the handler's arguments were a copy (strong count {shared})");
    client.close().await;
}
