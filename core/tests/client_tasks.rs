//! The client follows a task to its result (the Tasks extension) against mcpaxle's own server
//! over Streamable HTTP: `call_tool` polls `tasks/get`, answers the task's input requests with
//! the elicitation handler through `tasks/update`, surfaces a failed task's error, and sends
//! `tasks/cancel` when the call is cancelled; and the explicit handle of
//! `call_tool_as_task`/`task`: its id, `status` (`tasks/get`), `result`, `cancel`.

mod client_common;

use client_common::*;
use mcpaxle::ErrorKind;
use mcpaxle::client::{CallOptions, Client};
use mcpaxle::schema::{CallToolResult, TaskStatus, Tool};
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

/// Releases a permit when a handler's future is dropped (a cancelled task's handler is).
struct Released(Arc<tokio::sync::Semaphore>);

impl Drop for Released {
    fn drop(&mut self) {
        self.0.add_permits(1);
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

/// The race a user hits when cancelling right after calling: the server has created the task
/// and its `CreateTaskResult` is on its way when the caller cancels (or drops the call). The
/// task must be cancelled too, not left running unseen. The handler itself cancels the
/// caller's token as it starts, the moment the answer leaves the server.
#[tokio::test]
async fn a_call_cancelled_as_its_task_starts_cancels_the_task() {
    let server = Server::builder("tasks", "1").build();
    let caller: Arc<std::sync::Mutex<Option<CancellationToken>>> = Arc::default();
    let cancelled = Arc::new(tokio::sync::Semaphore::new(0));
    let (token_slot, seen) = (caller.clone(), cancelled.clone());
    server
        .add_tool_with(tool("forever"), task(TaskSupport::Required), move |_a: Value, ctx: RequestContext| {
            let token = token_slot.lock().unwrap().take();
            let on_drop = Released(seen.clone());
            async move {
                let _on_drop = on_drop;
                if let Some(t) = token {
                    t.cancel();
                }
                ctx.cancelled().await;
                Ok("never")
            }
        })
        .unwrap();
    let (_http, url) = serve_http(server).await;
    let client = Client::connect_http(&url, options()).await.unwrap();
    for round in 0..10 {
        let token = CancellationToken::new();
        *caller.lock().unwrap() = Some(token.clone());
        let e = client.call_tool("forever", json!({}), CallOptions::new().cancel(token)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Cancelled, "round {round}: {e}");
        let reached = tokio::time::timeout(Duration::from_secs(5), cancelled.acquire()).await;
        reached.unwrap_or_else(|_| panic!("round {round}: the task was left running")).unwrap().forget();
    }
    // A caller that drops the call's future instead (Python cancels an asyncio task so): the
    // same. The token here only tells the test when the handler has started.
    for round in 0..10 {
        let started = CancellationToken::new();
        *caller.lock().unwrap() = Some(started.clone());
        tokio::select! {
            _ = client.call_tool("forever", json!({}), CallOptions::new()) => panic!("round {round}: the call ended"),
            _ = started.cancelled() => {}
        }
        let reached = tokio::time::timeout(Duration::from_secs(5), cancelled.acquire()).await;
        reached.unwrap_or_else(|_| panic!("round {round}: a dropped call left its task running")).unwrap().forget();
    }
}

/// A server with a task that asks a question, a task that fails, a task that runs until it
/// is cancelled (setting the flag when its handler is dropped) and an ordinary tool.
fn handle_server(dropped: Arc<AtomicBool>) -> Server {
    let poll = TaskOptions { poll_interval: Duration::from_millis(20), ..TaskOptions::default() };
    let server = Server::builder("tasks", "1").tasks(poll).build();
    server
        .add_tool_with(tool("ask_in_task"), task(TaskSupport::Required), |_a: Value, ctx: RequestContext| async move {
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
    server
        .add_tool_with(tool("forever"), task(TaskSupport::Optional), move |_a: Value, ctx: RequestContext| {
            let flag = Flag(dropped.clone());
            async move {
                let _flag = flag;
                ctx.cancelled().await;
                Ok("never")
            }
        })
        .unwrap();
    server.add_tool(tool("plain"), |_a: Value, _c| async { Ok("at once") }).unwrap();
    server
}

async fn status_until(task: &mcpaxle::client::ToolTask, wanted: TaskStatus) -> mcpaxle::schema::DetailedTask {
    for _ in 0..300 {
        let s = task.status().await.unwrap();
        if s.status == wanted {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task never became {wanted:?}");
}

#[tokio::test]
async fn call_tool_as_task_returns_a_handle_to_poll_follow_and_cancel() {
    let dropped = Arc::new(AtomicBool::new(false));
    let (_http, url) = serve_http(handle_server(dropped.clone())).await;
    let client = Client::connect_http(&url, options()).await.unwrap();

    // A task that asks a question: its status shows the input request, its result answers it.
    let asking = client.call_tool_as_task("ask_in_task", json!({}), CallOptions::new()).await.unwrap();
    let id = asking.task_id().expect("the server ran the call as a task").to_owned();
    let waiting = status_until(&asking, TaskStatus::InputRequired).await;
    assert_eq!(waiting.task_id, id);
    assert!(waiting.input_requests.unwrap().contains_key("name"));
    assert_eq!(text_of(&asking.result().await.unwrap()), "Hello, Ada!");
    let done = asking.status().await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.unwrap()["content"][0]["text"], "Hello, Ada!");

    // Picked up from its id alone, by another client (as after a restart).
    let other = Client::connect_http(&url, options()).await.unwrap();
    assert_eq!(text_of(&other.task(&id).result().await.unwrap()), "Hello, Ada!");

    // A failed task: its status carries the error, its result is that error.
    let broken = client.call_tool_as_task("broken", json!({}), CallOptions::new()).await.unwrap();
    let e = broken.result().await.unwrap_err();
    assert_eq!((e.code(), e.message()), (-32602, "bad input for the job"));
    assert_eq!(broken.status().await.unwrap().error.unwrap().code, -32602);

    // An ordinary tool: the handle is already complete.
    let plain = client.call_tool_as_task("plain", json!({}), CallOptions::new()).await.unwrap();
    assert_eq!(plain.task_id(), None);
    assert_eq!(text_of(&plain.result().await.unwrap()), "at once");
    assert_eq!(plain.status().await.unwrap_err().kind(), ErrorKind::Usage);
    plain.cancel().await.unwrap();

    // Dropping a handle, or a result future, does not cancel the task; cancel does.
    let forever = client.call_tool_as_task("forever", json!({}), CallOptions::new()).await.unwrap();
    let id = forever.task_id().unwrap().to_owned();
    let _ = tokio::time::timeout(Duration::from_millis(100), forever.result()).await.unwrap_err();
    drop(forever);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!dropped.load(Ordering::SeqCst), "dropping the handle cancelled the task");
    let again = client.task(&id);
    assert_eq!(again.status().await.unwrap().status, TaskStatus::Working);
    again.cancel().await.unwrap();
    status_until(&again, TaskStatus::Cancelled).await;
    assert_eq!(again.result().await.unwrap_err().kind(), ErrorKind::Cancelled);
    for _ in 0..200 {
        if dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(dropped.load(Ordering::SeqCst), "tasks/cancel did not reach the handler");

    // An unknown task id fails at its first request.
    assert!(client.task("no-such-task").status().await.is_err());
}
