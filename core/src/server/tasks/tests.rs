//! The Tasks extension end to end through [`Server::handle_request`]: every result the server
//! sends is validated against the extension's vendored schema (`spec/ext-tasks/schema.json`),
//! every error against the 2026-07-28 one.

use super::*;
use crate::error::Error;
use crate::jsonrpc::{Outcome, Request, RequestId};
use crate::schema::{CallToolResult, Tool};
use crate::server::dispatch::RequestHeaders;
use crate::server::exchange::Outgoing;
use crate::server::{RequestContext, Server, ServerOptions, ToolOptions, TransportContext};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

fn validator(schema: &'static str, def: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema).expect("a vendored schema is JSON");
    let root = json!({ "$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": format!("#/$defs/{def}") });
    jsonschema::options().offline().build(&root).unwrap_or_else(|e| panic!("cannot compile {def}: {e}"))
}

fn ext_schema() -> &'static str {
    include_str!("../../../../spec/ext-tasks/schema.json")
}

/// Checks `value` against a definition of the extension's schema (or, for `Core:` ones, of
/// the 2026-07-28 schema).
fn check(def: &str, value: &Value) {
    let v = match def.strip_prefix("Core:") {
        Some(core) => validator(include_str!("../../../../spec/2026-07-28/schema.json"), core),
        None => validator(ext_schema(), def),
    };
    let errors: Vec<String> = v.iter_errors(value).map(|e| format!("at {}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "not a valid {def}: {errors:?}\n{value:#}");
}

const PRINCIPAL: &str = "alice";

/// Set when a handler's future is dropped.
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn caps(tasks: bool) -> Value {
    let mut c = json!({ "elicitation": {}, "sampling": {} });
    if tasks {
        c["extensions"] = json!({ TASKS_EXTENSION: {} });
    }
    c
}

fn request(method: &str, mut params: Value, tasks: bool) -> Request {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": crate::server::request_meta::PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps(tasks),
    });
    static ID: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1);
    let id = RequestId::Number(ID.fetch_add(1, Ordering::Relaxed));
    Request { jsonrpc: crate::jsonrpc::JsonRpcVersion, id, method: method.into(), params: Some(params) }
}

fn tc(principal: &str) -> TransportContext {
    TransportContext { principal: Some(principal.to_owned()), ..TransportContext::default() }
}

/// Sends a request as `principal` and returns its result or error, validated: `result_def`
/// names the schema definition its result must match.
async fn send_as(server: &Server, principal: &str, req: Request, result_def: &str) -> Result<Value, Value> {
    let mut ex = server.handle_request(req, &tc(principal));
    let mut last = None;
    while let Some(o) = ex.next().await {
        if let Outgoing::Response(r) = o {
            last = Some(r);
        }
    }
    let r = last.expect("every request is answered");
    let wire = serde_json::to_value(&r).unwrap();
    match r.outcome {
        Outcome::Result(v) => {
            check(result_def, &v);
            Ok(v)
        }
        Outcome::Error(e) => {
            check("Core:JSONRPCErrorResponse", &wire);
            Err(serde_json::to_value(e).unwrap())
        }
    }
}

async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let req = request("tools/call", json!({ "name": name, "arguments": arguments }), true);
    send_as(server, PRINCIPAL, req, "Result").await.expect("the call is answered")
}

async fn task_get(server: &Server, id: &str) -> Result<Value, Value> {
    send_as(server, PRINCIPAL, request("tasks/get", json!({ "taskId": id }), true), "GetTaskResult").await
}

/// Polls `tasks/get` until the task's status is one of `statuses`.
async fn until(server: &Server, id: &str, statuses: &[&str]) -> Value {
    for _ in 0..500 {
        let t = task_get(server, id).await.expect("the task exists");
        if statuses.contains(&t["status"].as_str().unwrap_or_default()) {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("task {id} never reached {statuses:?}");
}

fn options(task: TaskSupport) -> ToolOptions {
    ToolOptions { task_support: task, ..ToolOptions::default() }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "test", json!({ "type": "object" }))
}

fn server() -> Server {
    let s = Server::builder("tasks", "1").build();
    s.add_tool(tool("plain"), |_a: Value, _c| async { Ok(CallToolResult::text("plain")) }).unwrap();
    s.add_tool_with(tool("quick"), options(TaskSupport::Optional), |_a: Value, c: RequestContext| async move {
        c.progress(1.0, None, Some("halfway"));
        Ok(CallToolResult::text(format!("done in task {}", c.task_id().is_some())))
    })
    .unwrap();
    s.add_tool_with(tool("only_task"), options(TaskSupport::Required), |_a: Value, _c| async {
        Err::<CallToolResult, _>(Error::tool("it broke"))
    })
    .unwrap();
    s.add_tool_with(tool("from_a_thread"), options(TaskSupport::Optional), |_a: Value, c: RequestContext| async move {
        // A binding's synchronous handler reports from a host thread, outside the runtime.
        std::thread::spawn(move || c.progress(1.0, None, Some("from a thread"))).join().unwrap();
        Ok(CallToolResult::text("reported"))
    })
    .unwrap();
    s.add_tool_with(tool("protocol_error"), options(TaskSupport::Optional), |_a: Value, _c| async {
        Err::<CallToolResult, _>(Error::invalid_params("no such thing"))
    })
    .unwrap();
    s.add_tool_with(tool("ask_two"), options(TaskSupport::Optional), |_a: Value, c: RequestContext| async move {
        let form = json!({ "mode": "form", "message": "Name?", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } } });
        let (a, b) = tokio::join!(c.elicit("first", form.clone()), c.elicit("second", form));
        let (a, b) = (a?, b?);
        Ok(CallToolResult::text(format!("{} and {}", a["content"]["name"], b["content"]["name"])))
    })
    .unwrap();
    s
}

#[tokio::test]
async fn the_extension_is_advertised_once_a_tool_may_run_as_a_task() {
    let plain = Server::builder("plain", "1").build();
    plain.add_tool(tool("t"), |_a: Value, _c| async { Ok("x") }).unwrap();
    assert!(plain.capabilities().get("extensions").is_none());
    assert_eq!(server().capabilities()["extensions"], json!({ TASKS_EXTENSION: {} }));
    check("TasksExtensionCapability", &server().capabilities()["extensions"][TASKS_EXTENSION]);
}

#[tokio::test]
async fn a_negotiating_client_gets_a_task_and_its_result_inlined() {
    let s = server();
    let created = call(&s, "quick", json!({})).await;
    check("CreateTaskResult", &created);
    assert!(created.get("requestState").is_none() && created.get("result").is_none());
    let id = created["taskId"].as_str().unwrap();
    let done = until(&s, id, &["completed"]).await;
    assert_eq!(done["result"]["content"][0]["text"], "done in task true");
    assert_eq!(done["statusMessage"], "halfway", "a progress message is the task's statusMessage");
    assert_eq!(done["resultType"], "complete");
    let id = call(&s, "from_a_thread", json!({})).await["taskId"].as_str().unwrap().to_owned();
    assert_eq!(until(&s, &id, &["completed"]).await["statusMessage"], "from a thread");
    // A sync tool stays sync, and a task tool without the extension is an ordinary call.
    let plain = call(&s, "plain", json!({})).await;
    check("Core:CallToolResult", &plain);
    let req = request("tools/call", json!({ "name": "quick" }), false);
    let sync = send_as(&s, PRINCIPAL, req, "Core:CallToolResult").await.unwrap();
    assert_eq!(sync["content"][0]["text"], "done in task false");
}

#[tokio::test]
async fn without_the_extension_required_tools_and_task_methods_get_32021() {
    let s = server();
    let req = request("tools/call", json!({ "name": "only_task" }), false);
    let e = send_as(&s, PRINCIPAL, req, "Result").await.unwrap_err();
    assert_eq!(e["code"], -32021);
    assert_eq!(e["data"]["requiredCapabilities"], json!({ "extensions": { TASKS_EXTENSION: {} } }));
    for (method, params) in [
        ("tasks/get", json!({ "taskId": "x" })),
        ("tasks/update", json!({ "taskId": "x", "inputResponses": {} })),
        ("tasks/cancel", json!({ "taskId": "x" })),
    ] {
        let e = send_as(&s, PRINCIPAL, request(method, params, false), "Result").await.unwrap_err();
        assert_eq!(e["code"], -32021, "{method}");
    }
}

#[tokio::test]
async fn tool_errors_complete_and_protocol_errors_fail() {
    let s = server();
    let id = call(&s, "only_task", json!({})).await["taskId"].as_str().unwrap().to_owned();
    let t = until(&s, &id, &["completed", "failed"]).await;
    assert_eq!((t["status"].clone(), t["result"]["isError"].clone()), (json!("completed"), json!(true)));
    let id = call(&s, "protocol_error", json!({})).await["taskId"].as_str().unwrap().to_owned();
    let t = until(&s, &id, &["completed", "failed"]).await;
    assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32602)));
    assert!(t.get("result").is_none());
    assert_eq!(t["statusMessage"], "no such thing");
}

#[tokio::test]
async fn asks_inside_a_task_are_its_input_requests_answered_by_tasks_update() {
    let s = server();
    let id = call(&s, "ask_two", json!({})).await["taskId"].as_str().unwrap().to_owned();
    let mut t = until(&s, &id, &["input_required"]).await;
    while t["inputRequests"].as_object().unwrap().len() < 2 {
        t = until(&s, &id, &["input_required"]).await;
    }
    assert_eq!(t["inputRequests"]["first"]["method"], "elicitation/create");
    let update = |responses: Value| request("tasks/update", json!({ "taskId": id, "inputResponses": responses }), true);
    let ack = send_as(
        &s,
        PRINCIPAL,
        update(json!({ "first": { "action": "accept", "content": { "name": "A" } }, "never": {} })),
        "UpdateTaskResult",
    )
    .await
    .unwrap();
    assert_eq!(ack.get("taskId"), None);
    let t = task_get(&s, &id).await.unwrap();
    assert_eq!(t["status"], "input_required", "one answer of two");
    assert_eq!(t["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["second"]);
    send_as(
        &s,
        PRINCIPAL,
        update(json!({ "second": { "action": "accept", "content": { "name": "B" } } })),
        "UpdateTaskResult",
    )
    .await
    .unwrap();
    let t = until(&s, &id, &["completed"]).await;
    assert_eq!(t["result"]["content"][0]["text"], "\"A\" and \"B\"");
}

#[tokio::test]
async fn cancel_reaches_the_handler_and_another_principal_finds_nothing() {
    let s = server();
    static STARTED: OnceLock<tokio::sync::Notify> = OnceLock::new();
    let dropped = Arc::new(AtomicBool::new(false));
    let seen = dropped.clone();
    s.add_tool_with(tool("forever"), options(TaskSupport::Required), move |_a: Value, c: RequestContext| {
        let flag = Flag(seen.clone());
        async move {
            let _flag = flag;
            STARTED.get_or_init(Default::default).notify_one();
            c.cancelled().await;
            Ok(CallToolResult::text("never"))
        }
    })
    .unwrap();
    let id = call(&s, "forever", json!({})).await["taskId"].as_str().unwrap().to_owned();
    STARTED.get_or_init(Default::default).notified().await;
    for method in ["tasks/get", "tasks/cancel"] {
        let e = send_as(&s, "mallory", request(method, json!({ "taskId": id }), true), "Result").await.unwrap_err();
        assert_eq!(e["code"], -32602, "another principal's {method} finds no task");
    }
    let e = task_get(&s, "no-such-task").await.unwrap_err();
    assert_eq!(e["code"], -32602);
    let ack = send_as(&s, PRINCIPAL, request("tasks/cancel", json!({ "taskId": id }), true), "CancelTaskResult")
        .await
        .unwrap();
    assert_eq!(ack.as_object().unwrap().keys().filter(|k| *k != "_meta").collect::<Vec<_>>(), ["resultType"]);
    let t = until(&s, &id, &["cancelled", "completed", "failed"]).await;
    assert_eq!(t["status"], "cancelled");
    assert!(dropped.load(Ordering::SeqCst), "the handler's future was dropped");
    // Cancelling a finished task is the same empty acknowledgement.
    send_as(&s, PRINCIPAL, request("tasks/cancel", json!({ "taskId": id }), true), "CancelTaskResult").await.unwrap();
}

#[tokio::test]
async fn a_deferred_task_gathers_mrtr_input_first() {
    let s = server();
    let defer = ToolOptions { task_support: TaskSupport::Required, defer_task: true, ..ToolOptions::default() };
    s.add_tool_with(tool("greet_later"), defer, |_a: Value, c: RequestContext| async move {
        let answer = c.elicit("user_name", json!({ "mode": "form", "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } })).await?;
        assert!(c.start_task().await?);
        Ok(CallToolResult::text(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("?"))))
    })
    .unwrap();
    let round1 = call(&s, "greet_later", json!({})).await;
    check("Core:InputRequiredResult", &round1);
    assert!(round1.get("taskId").is_none());
    let retry = json!({
        "name": "greet_later", "arguments": {}, "requestState": round1["requestState"],
        "inputResponses": { "user_name": { "action": "accept", "content": { "name": "Alice" } } },
    });
    let created = send_as(&s, PRINCIPAL, request("tools/call", retry, true), "CreateTaskResult").await.unwrap();
    assert!(created.get("requestState").is_none());
    let t = until(&s, created["taskId"].as_str().unwrap(), &["completed"]).await;
    assert_eq!(t["result"]["content"][0]["text"], "Hello, Alice!");
}

#[tokio::test]
async fn a_task_past_its_ttl_is_forgotten_and_cancelled() {
    let o: ServerOptions = crate::options::from_json("server options", json!({ "tasks": { "ttlMs": 400 } })).unwrap();
    let s = Server::builder("ttl", "1").options(o).build();
    let dropped = Arc::new(AtomicBool::new(false));
    let seen = dropped.clone();
    s.add_tool_with(tool("slow"), options(TaskSupport::Optional), move |_a: Value, c: RequestContext| {
        let flag = Flag(seen.clone());
        async move {
            let _flag = flag;
            c.cancelled().await;
            Ok("cancelled")
        }
    })
    .unwrap();
    let created = call(&s, "slow", json!({})).await;
    assert_eq!(created["ttlMs"], 400);
    let id = created["taskId"].as_str().unwrap();
    assert_eq!(task_get(&s, id).await.unwrap()["status"], "working");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(task_get(&s, id).await.unwrap_err()["code"], -32602);
    assert!(dropped.load(Ordering::SeqCst), "the handler was cancelled when the TTL passed");
    assert!(s.inner.tasks.running(id).is_none());
}

#[tokio::test]
async fn listening_for_task_status_needs_the_extension() {
    let s = server();
    let listen = |tasks| request("subscriptions/listen", json!({ "notifications": { "taskIds": ["t"] } }), tasks);
    let e = send_as(&s, PRINCIPAL, listen(false), "Result").await.unwrap_err();
    assert_eq!(e["code"], -32021);
    let mut ex = s.handle_request(listen(true), &tc(PRINCIPAL));
    match ex.next().await {
        Some(Outgoing::Notification(n)) => {
            assert_eq!(n.method, "notifications/subscriptions/acknowledged");
            assert!(n.params.unwrap()["notifications"].get("taskIds").is_none(), "no task status is promised");
        }
        other => panic!("expected the acknowledgement, got {other:?}"),
    }
}

#[tokio::test]
async fn mcp_name_carries_the_task_id() {
    let s = server();
    let headers = |name: &str| RequestHeaders {
        protocol_version: Some(crate::server::request_meta::PROTOCOL_VERSION.into()),
        method: Some("tasks/get".into()),
        name: Some(name.into()),
        ..RequestHeaders::default()
    };
    let id = call(&s, "quick", json!({})).await["taskId"].as_str().unwrap().to_owned();
    for (name, code) in [(id.as_str(), None), ("someone-else", Some(-32020))] {
        let t = TransportContext { headers: Some(headers(name)), ..tc(PRINCIPAL) };
        let mut ex = s.handle_request(request("tasks/get", json!({ "taskId": id }), true), &t);
        let mut got = None;
        while let Some(Outgoing::Response(r)) = ex.next().await {
            got = r.as_error().map(|e| e.code);
        }
        assert_eq!(got, code, "Mcp-Name {name}");
    }
}

/// The next notification of a listen stream, as sent.
async fn next_notification(ex: &mut crate::server::Exchange) -> Value {
    let next = tokio::time::timeout(Duration::from_secs(10), ex.next()).await.expect("a notification in time");
    match next {
        Some(Outgoing::Notification(n)) => serde_json::to_value(n).unwrap(),
        other => panic!("expected a notification, got {other:?}"),
    }
}

#[tokio::test]
async fn listen_streams_follow_their_callers_tasks_to_the_end() {
    let s = server();
    let id = call(&s, "ask_two", json!({})).await["taskId"].as_str().unwrap().to_owned();
    let listen = |ids: Value| request("subscriptions/listen", json!({ "notifications": { "taskIds": ids } }), true);

    // Another caller names the task: nothing is promised, nothing is sent.
    let mut theirs = s.handle_request(listen(json!([id])), &tc("mallory"));
    let ack = next_notification(&mut theirs).await;
    assert_eq!(ack["params"]["notifications"], json!({}), "another caller's task is not followed");

    let mut ex = s.handle_request(listen(json!([id, "unknown"])), &tc(PRINCIPAL));
    let ack = next_notification(&mut ex).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "only the caller's known tasks");
    // First the task as it is now, then every change: each a whole DetailedTask.
    let mut seen = Vec::new();
    loop {
        let n = next_notification(&mut ex).await;
        check("TaskStatusNotification", &n);
        assert_eq!(n["params"]["taskId"], id.as_str());
        let status = n["params"]["status"].as_str().unwrap().to_owned();
        if status == "input_required" && n["params"]["inputRequests"].as_object().unwrap().len() == 2 {
            let answer = |name: &str| json!({ "action": "accept", "content": { "name": name } });
            let update =
                json!({ "taskId": id, "inputResponses": { "first": answer("Ada"), "second": answer("Alan") } });
            send_as(&s, PRINCIPAL, request("tasks/update", update, true), "UpdateTaskResult").await.unwrap();
        }
        seen.push(status.clone());
        if status == "completed" {
            assert_eq!(n["params"]["result"]["content"][0]["text"], "\"Ada\" and \"Alan\"");
            break;
        }
    }
    assert!(seen.contains(&"input_required".to_owned()), "{seen:?}");
    assert!(
        tokio::time::timeout(Duration::from_millis(100), theirs.next()).await.is_err(),
        "the other caller's stream heard nothing"
    );

    let e = send_as(&s, PRINCIPAL, listen(json!([1])), "Result").await.unwrap_err();
    assert_eq!(e["code"], -32602);
    let many: Vec<String> = (0..1001).map(|i| i.to_string()).collect();
    let e = send_as(&s, PRINCIPAL, listen(json!(many)), "Result").await.unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("at most 1000"), "{e}");
}
