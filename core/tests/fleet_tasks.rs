//! The tasks of a fleet in a real Redis (`redis-server`, installed pinned by
//! scripts/debian-tool.sh, started and stopped here on 127.0.0.1): any instance answers
//! `tasks/get` for a task another one runs, `tasks/update` and `tasks/cancel` reach the
//! instance that runs it, a listen stream on one instance follows a task running on another,
//! the limits hold across the fleet, and a task whose instance stopped reads `failed`.

mod redis_server;

use futures_util::StreamExt;
use mcpaxle::jsonrpc::{JsonRpcVersion, Outcome, Request, RequestId};
use mcpaxle::schema::{CallToolResult, TASKS_EXTENSION, Tool};
use mcpaxle::server::tasks::{
    RedisTaskStore, RedisTaskStoreOptions, TaskOptions, TaskRecord, TaskStatus, TaskStore, TaskStoreOptions,
    TaskSupport,
};
use mcpaxle::server::{
    BusOptions, Exchange, Outgoing, RedisBus, RequestContext, Server, ServerBuilder, ToolOptions, TransportContext,
};
use redis_server::{Redis, free_port};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

fn request(method: &str, mut params: Value) -> Request {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {}, "extensions": { TASKS_EXTENSION: {} } },
    });
    static ID: AtomicI64 = AtomicI64::new(1);
    Request {
        jsonrpc: JsonRpcVersion,
        id: RequestId::Number(ID.fetch_add(1, Ordering::Relaxed)),
        method: method.into(),
        params: Some(params),
    }
}

fn tc(principal: &str) -> TransportContext {
    TransportContext { principal: Some(principal.to_owned()), ..TransportContext::default() }
}

/// The request's result, or its error object.
async fn send(server: &Server, principal: &str, method: &str, params: Value) -> Result<Value, Value> {
    let mut ex = server.handle_request(request(method, params), &tc(principal));
    let mut last = None;
    while let Some(o) = ex.next().await {
        if let Outgoing::Response(r) = o {
            last = Some(r);
        }
    }
    match last.expect("every request is answered").outcome {
        Outcome::Result(v) => Ok(v),
        Outcome::Error(e) => Err(serde_json::to_value(e).unwrap()),
    }
}

async fn get(server: &Server, principal: &str, id: &str) -> Result<Value, Value> {
    send(server, principal, "tasks/get", json!({ "taskId": id })).await
}

/// Polls `tasks/get` on `server` until the task's status is `status`.
async fn until(server: &Server, id: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = get(server, "alice", id).await.expect("the task is there");
        if t["status"] == status {
            return t;
        }
        assert!(Instant::now() < deadline, "task {id} never reached {status}: {t}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Set when a handler's future is dropped.
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn store(redis: &Redis, namespace: &str) -> RedisTaskStoreOptions {
    RedisTaskStoreOptions::new(redis.url()).unwrap().with_namespace(namespace).unwrap()
}

/// One instance of the fleet with the tools `ask` (asks a name, greets) and `forever` (runs
/// until cancelled; `dropped` is set then).
fn instance(store: &RedisTaskStoreOptions, limits: (usize, usize), dropped: Arc<AtomicBool>) -> Server {
    let tasks = TaskOptions {
        poll_interval: Duration::from_millis(20),
        max_tasks: limits.0,
        max_tasks_per_principal: limits.1,
        store: Some(TaskStoreOptions::Redis(store.clone())),
        ..TaskOptions::default()
    };
    with_tools(Server::builder("fleet", "1").tasks(tasks), dropped)
}

fn with_tools(builder: ServerBuilder, dropped: Arc<AtomicBool>) -> Server {
    let server = builder.build();
    let task = ToolOptions { task_support: TaskSupport::Required, ..ToolOptions::default() };
    let tool = |name: &str| Tool::new(name, "a task", json!({ "type": "object" }));
    server
        .add_tool_with(tool("ask"), task.clone(), |_a: Value, ctx: RequestContext| async move {
            let form = json!({ "mode": "form", "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } });
            let answer = ctx.elicit("name", form).await?;
            Ok(CallToolResult::text(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("?"))))
        })
        .unwrap();
    server
        .add_tool_with(tool("forever"), task, move |_a: Value, ctx: RequestContext| {
            let flag = Flag(dropped.clone());
            async move {
                let _flag = flag;
                ctx.cancelled().await;
                Ok("never")
            }
        })
        .unwrap();
    server
}

async fn start(server: &Server, principal: &str, tool: &str) -> Result<String, Value> {
    let created = send(server, principal, "tools/call", json!({ "name": tool, "arguments": {} })).await?;
    assert_eq!(created["resultType"], "task", "{created}");
    Ok(created["taskId"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn any_instance_answers_updates_and_cancels_a_task_another_runs() {
    let redis = Redis::start(free_port());
    let options = store(&redis, "t1");
    let dropped = Arc::new(AtomicBool::new(false));
    let a = instance(&options, (100, 100), dropped.clone());
    let b = instance(&options, (100, 100), Arc::new(AtomicBool::new(false)));

    let id = start(&a, "alice", "ask").await.unwrap();
    let asked = until(&b, &id, "input_required").await;
    assert_eq!(asked["inputRequests"]["name"]["method"], "elicitation/create");
    let e = get(&b, "mallory", &id).await.unwrap_err();
    assert_eq!(e["code"], -32602, "another principal finds nothing on any instance");
    let answer = json!({ "name": { "action": "accept", "content": { "name": "Ada" } } });
    send(&b, "alice", "tasks/update", json!({ "taskId": id, "inputResponses": answer })).await.unwrap();
    let done = until(&b, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "B's answer reached A's handler");

    let id = start(&a, "alice", "forever").await.unwrap();
    assert_eq!(get(&b, "alice", &id).await.unwrap()["status"], "working");
    let e = send(&b, "mallory", "tasks/cancel", json!({ "taskId": id })).await.unwrap_err();
    assert_eq!(e["code"], -32602);
    send(&b, "alice", "tasks/cancel", json!({ "taskId": id })).await.unwrap();
    until(&b, &id, "cancelled").await;
    assert!(dropped.load(Ordering::SeqCst), "B's cancel stopped A's handler");
}

#[tokio::test]
async fn the_limits_hold_across_the_fleet() {
    let redis = Redis::start(free_port());
    let options = store(&redis, "t2");
    let flag = || Arc::new(AtomicBool::new(false));
    let (a, b) = (instance(&options, (3, 2), flag()), instance(&options, (3, 2), flag()));
    let first = start(&a, "alice", "forever").await.unwrap();
    start(&b, "alice", "forever").await.unwrap();
    let e = start(&a, "alice", "forever").await.unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("maxTasksPerPrincipal"), "{e}");
    start(&b, "bob", "forever").await.unwrap();
    let e = start(&b, "carol", "forever").await.unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("(maxTasks)"), "{e}");
    // An ended task makes room: the oldest one is forgotten.
    send(&b, "alice", "tasks/cancel", json!({ "taskId": first })).await.unwrap();
    until(&a, &first, "cancelled").await;
    start(&a, "alice", "forever").await.unwrap();
    assert_eq!(get(&b, "alice", &first).await.unwrap_err()["code"], -32602, "the ended task was forgotten");
}

#[tokio::test]
async fn a_task_whose_instance_stopped_reads_failed() {
    let redis = Redis::start(free_port());
    let options = store(&redis, "t3").with_lease(Duration::from_millis(300));
    let limits = TaskOptions::default();
    let (a, b) = (RedisTaskStore::new(options.clone(), &limits), RedisTaskStore::new(options, &limits));
    let mut record = TaskRecord::new(Some("alice".into()), Duration::from_secs(60), Duration::from_millis(10));
    a.create(record.clone()).await.unwrap();
    record.status_message = Some("step 1".into());
    record.touch();
    a.update(record.clone()).await.unwrap();
    let seen = b.get(&record.task_id).await.unwrap().unwrap();
    assert_eq!((seen.status, seen.status_message.as_deref()), (TaskStatus::Working, Some("step 1")));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(b.get(&record.task_id).await.unwrap().unwrap().status, TaskStatus::Working, "A renews its lease");

    drop(a); // the instance stops: nobody renews its lease
    tokio::time::sleep(Duration::from_millis(700)).await;
    let failed = b.get(&record.task_id).await.unwrap().unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.error.as_ref().unwrap()["code"], -32603);
    assert!(failed.status_message.unwrap().contains("stopped before the task ended"));
    // Ended is final: a late write of the stopped instance does not bring the task back.
    record.touch();
    record.touch();
    b.update(record.clone()).await.unwrap();
    assert_eq!(b.get(&record.task_id).await.unwrap().unwrap().status, TaskStatus::Failed);
}

/// The next notification of a listen stream.
async fn notification(ex: &mut Exchange) -> Value {
    match tokio::time::timeout(Duration::from_secs(10), ex.next()).await.expect("a notification in time") {
        Some(Outgoing::Notification(n)) => serde_json::to_value(n).unwrap(),
        other => panic!("expected a notification, got {other:?}"),
    }
}

#[tokio::test]
async fn a_listen_stream_follows_a_task_running_on_another_instance() {
    let redis = Redis::start(free_port());
    let bus = BusOptions::redis(redis.url()).unwrap().with_channel("t4").unwrap();
    let tasks = TaskOptions {
        poll_interval: Duration::from_millis(20),
        store: Some(TaskStoreOptions::Redis(RedisTaskStoreOptions::on_bus(&bus))),
        ..TaskOptions::default()
    };
    let (bus_a, bus_b) = (RedisBus::new(bus.clone()), RedisBus::new(bus));
    let flag = || Arc::new(AtomicBool::new(false));
    let a = with_tools(Server::builder("a", "1").tasks(tasks.clone()).bus(bus_a.clone()), flag());
    let b = with_tools(Server::builder("b", "1").tasks(tasks).bus(bus_b.clone()), flag());
    a.start_bus();
    b.start_bus();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(bus_a.is_connected() && bus_b.is_connected()) {
        assert!(Instant::now() < deadline, "the buses did not connect to Redis within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let id = start(&a, "alice", "ask").await.unwrap();
    let listen = request("subscriptions/listen", json!({ "notifications": { "taskIds": [id] } }));
    let mut theirs = b.handle_request(listen.clone(), &tc("mallory"));
    assert_eq!(notification(&mut theirs).await["params"]["notifications"], json!({}));
    let mut ex = b.handle_request(listen, &tc("alice"));
    let ack = notification(&mut ex).await;
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "B agrees to follow A's task");
    loop {
        let n = notification(&mut ex).await;
        assert_eq!(
            (n["method"].as_str(), n["params"]["taskId"].as_str()),
            (Some("notifications/tasks"), Some(id.as_str()))
        );
        match n["params"]["status"].as_str().unwrap() {
            "input_required" => {
                let answer = json!({ "name": { "action": "accept", "content": { "name": "Grace" } } });
                send(&a, "alice", "tasks/update", json!({ "taskId": id, "inputResponses": answer })).await.unwrap();
            }
            "completed" => {
                assert_eq!(n["params"]["result"]["content"][0]["text"], "Hello, Grace!");
                break;
            }
            _ => {}
        }
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(200), theirs.next()).await.is_err(),
        "another caller's stream heard nothing of the task"
    );
}
