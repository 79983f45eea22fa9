//! The client follows a task to its result (the Tasks extension) against mcpaxle's own server
//! over Streamable HTTP: `call_tool` polls `tasks/get`, answers the task's input requests with
//! the elicitation handler through `tasks/update`, surfaces a failed task's error, and sends
//! `tasks/cancel` when the call is cancelled.

mod client_common;

use client_common::*;
use mcpaxle::ErrorKind;
use mcpaxle::client::{CallOptions, Client};
use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::tasks::{TaskOptions, TaskSupport};
use mcpaxle::server::{RequestContext, Server, ToolOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn task(task_support: TaskSupport) -> ToolOptions {
    ToolOptions { task_support, ..ToolOptions::default() }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "a task", json!({ "type": "object" }))
}

struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn text_of(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

#[tokio::test]
async fn call_tool_follows_a_task_answers_its_questions_and_cancels_it() {
    let poll = TaskOptions { poll_interval: Duration::from_millis(20), ..TaskOptions::default() };
    let server = Server::builder("tasks", "1").tasks(poll).build();
    server
        .add_tool_with(tool("ask_in_task"), task(TaskSupport::Required), |_a: Value, ctx: RequestContext| async move {
            assert!(ctx.task_id().is_some(), "the client declared the extension: the call is a task");
            tokio::time::sleep(Duration::from_millis(50)).await;
            let form = json!({ "mode": "form", "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } });
            let answer = ctx.elicit("name", form).await?;
            Ok(CallToolResult::text(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("?"))))
        })
        .unwrap();
    server
        .add_tool_with(tool("broken"), task(TaskSupport::Optional), |_a: Value, _c| async {
            Err::<CallToolResult, _>(mcpaxle::Error::invalid_params("bad input for the job"))
        })
        .unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let seen = dropped.clone();
    server
        .add_tool_with(tool("forever"), task(TaskSupport::Optional), move |_a: Value, ctx: RequestContext| {
            let flag = Flag(seen.clone());
            async move {
                let _flag = flag;
                ctx.cancelled().await;
                Ok("never")
            }
        })
        .unwrap();
    let (_http, url) = serve_http(server).await;
    let client = Client::connect_http(&url, options()).await.unwrap();

    let r = client.call_tool("ask_in_task", json!({}), CallOptions::new()).await.unwrap();
    assert_eq!(text_of(&r), "Hello, Ada!");

    let e = client.call_tool("broken", json!({}), CallOptions::new()).await.unwrap_err();
    assert_eq!((e.code(), e.message()), (-32602, "bad input for the job"), "a failed task is its JSON-RPC error");

    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stop.cancel();
    });
    let e = client.call_tool("forever", json!({}), CallOptions::new().cancel(cancel)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    for _ in 0..200 {
        if dropped.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("tasks/cancel did not reach the handler");
}
