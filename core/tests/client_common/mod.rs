//! Fixtures shared by the client tests: an in-process server with a tool for every client
//! feature, client options with input handlers, and helpers to connect over HTTP, an
//! in-process pipe, or a child process.

#![allow(dead_code)]

use mcpaxle::client::{Client, ClientOptions};
use mcpaxle::schema::{
    CallToolResult, CompleteResult, GetPromptResult, LoggingLevel, Prompt, PromptMessage, ReadResourceResult, Resource,
    ResourceTemplate, TextResourceContents, Tool,
};
use mcpaxle::server::{
    CacheDefaults, CacheHint, CompletionRef, CompletionRequest, RequestContext, ResourceRequest, Server,
};
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use mcpaxle::transport::stdio::{StdioOptions, serve_with};
use mcpaxle::{Error, Result};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;

/// What the fixtures' handlers record, for the tests to inspect.
#[derive(Default)]
pub struct Probe {
    /// How many times `test://counted` was read.
    pub reads: AtomicUsize,
    /// How many `slow` calls saw their cancellation.
    pub cancelled: AtomicUsize,
    /// How many `slow` calls started.
    pub started: AtomicUsize,
}

fn obj() -> Value {
    json!({ "type": "object", "properties": {} })
}

fn name_of(v: &Value) -> String {
    v.pointer("/content/name").and_then(Value::as_str).unwrap_or("stranger").to_owned()
}

fn elicit_name(message: &str) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
    })
}

fn sampling() -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "Say hi" } }], "maxTokens": 10 })
}

fn text(s: impl Into<String>) -> Result<CallToolResult> {
    Ok(CallToolResult::text(s))
}

/// A server with a fixture for every client feature. `cache` sets its caching hints.
pub fn test_server(cache: CacheDefaults, probe: Arc<Probe>) -> Server {
    let server = Server::builder("client-test-server", "1.0.0")
        .instructions("Fixtures for the client tests")
        .page_size(3)
        .cache_defaults(cache)
        .enable_logging()
        .build();
    add_tools(&server, probe.clone());
    add_mrtr_tools(&server);
    add_resources_and_prompts(&server, probe);
    server
}

fn add_tools(server: &Server, probe: Arc<Probe>) {
    server
        .add_tool(Tool::new("echo", "Echoes its arguments", json!({ "type": "object" })), |a: Value, _c| async move {
            Ok(CallToolResult::structured(a))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "slow",
                "Waits `ms` milliseconds, or until cancelled",
                json!({ "type": "object", "properties": { "ms": { "type": "integer" } } }),
            ),
            move |a: Value, ctx: RequestContext| {
                let probe = probe.clone();
                async move {
                    /// Counts a call that ends without finishing: cancelled, or dropped.
                    struct Unfinished(Option<Arc<Probe>>);
                    impl Drop for Unfinished {
                        fn drop(&mut self) {
                            if let Some(p) = self.0.take() {
                                p.cancelled.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                    probe.started.fetch_add(1, Ordering::SeqCst);
                    let mut guard = Unfinished(Some(probe));
                    let ms = a["ms"].as_u64().unwrap_or(30_000);
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                            guard.0 = None;
                            text("slept")
                        }
                        _ = ctx.cancelled() => Err(Error::internal("cancelled")),
                    }
                }
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "progress",
                "Reports `steps` progress notifications `interval` ms apart",
                json!({ "type": "object", "properties": { "steps": { "type": "integer" }, "interval": { "type": "integer" } } }),
            ),
            |a: Value, ctx: RequestContext| async move {
                let steps = a["steps"].as_u64().unwrap_or(3);
                let interval = a["interval"].as_u64().unwrap_or(10);
                for i in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(interval)).await;
                    ctx.progress(i as f64, Some(steps as f64), Some(&format!("step {i}")));
                }
                text("progressed")
            },
        )
        .unwrap();
    server
        .add_tool(Tool::new("log", "Logs three messages", obj()), |_a, ctx: RequestContext| async move {
            for m in ["one", "two", "three"] {
                ctx.log(LoggingLevel::Info, Some("test"), json!(m));
            }
            text("logged")
        })
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "regional",
                "Mirrors region, priority and flag into headers",
                json!({
                    "type": "object",
                    "properties": {
                        "region": { "type": "string", "x-mcp-header": "Region" },
                        "priority": { "type": "integer", "x-mcp-header": "Priority" },
                        "flag": { "type": "boolean", "x-mcp-header": "Flag" },
                        "query": { "type": "string" }
                    },
                    "required": ["region"]
                }),
            ),
            |a: Value, _c| async move { text(format!("region={}", a["region"].as_str().unwrap_or_default())) },
        )
        .unwrap();
    let s = server.clone();
    server
        .add_tool(
            Tool::new(
                "add_tool",
                "Adds the tool named `name`",
                json!({ "type": "object", "properties": { "name": { "type": "string" } } }),
            ),
            move |a: Value, _c| {
                let s = s.clone();
                async move {
                    let name = a["name"].as_str().unwrap_or("dynamic").to_owned();
                    s.add_tool(Tool::new(name.clone(), "Added at run time", obj()), |_a, _c| async {
                        text("dynamic")
                    })?;
                    text(format!("added {name}"))
                }
            },
        )
        .unwrap();
    let s = server.clone();
    server
        .add_tool(
            Tool::new(
                "touch",
                "Announces an update of `uri`",
                json!({ "type": "object", "properties": { "uri": { "type": "string" } } }),
            ),
            move |a: Value, _c| {
                let s = s.clone();
                async move {
                    s.notify_resource_updated(a["uri"].as_str().unwrap_or("test://counted"));
                    text("touched")
                }
            },
        )
        .unwrap();
}

fn add_mrtr_tools(server: &Server) {
    server
        .add_tool(Tool::new("ask_name", "Asks for the user's name", obj()), |_a, ctx: RequestContext| async move {
            let a = ctx.elicit("name", elicit_name("Your name?")).await?;
            text(format!("Hello, {}!", name_of(&a)))
        })
        .unwrap();
    server
        .add_tool(Tool::new("ask_sample", "Samples the client's LLM", obj()), |_a, ctx: RequestContext| async move {
            let a = ctx.sample("hi", sampling()).await?;
            text(format!("The model said: {}", a.pointer("/content/text").and_then(Value::as_str).unwrap_or_default()))
        })
        .unwrap();
    server
        .add_tool(Tool::new("ask_roots", "Lists the client's roots", obj()), |_a, ctx: RequestContext| async move {
            let a = ctx.list_roots("roots").await?;
            text(format!("{} root(s)", a["roots"].as_array().map_or(0, Vec::len)))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("ask_all", "Elicitation, sampling and roots in one round", obj()),
            |_a, ctx: RequestContext| async move {
                let (n, s, r) = tokio::join!(
                    ctx.elicit("name", elicit_name("Your name?")),
                    ctx.sample("hi", sampling()),
                    ctx.list_roots("roots")
                );
                let (n, _s, r) = (n?, s?, r?);
                text(format!("{}; {} root(s)", name_of(&n), r["roots"].as_array().map_or(0, Vec::len)))
            },
        )
        .unwrap();
    server
        .add_tool(Tool::new("multi_round", "Two rounds of elicitation", obj()), |_a, ctx: RequestContext| async move {
            let first = ctx.elicit("first", elicit_name("Round 1?")).await?;
            let second = ctx.elicit("second", elicit_name("Round 2?")).await?;
            text(format!("{} then {}", name_of(&first), name_of(&second)))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("with_state", "Keeps request state across rounds", obj()),
            |_a, ctx: RequestContext| async move {
                if ctx.request_state().is_none() {
                    ctx.set_request_state(json!({ "started": true }));
                }
                let a = ctx.elicit("name", elicit_name("Your name?")).await?;
                text(format!("{} with state {}", name_of(&a), ctx.request_state().unwrap_or_default()))
            },
        )
        .unwrap();
}

fn add_resources_and_prompts(server: &Server, probe: Arc<Probe>) {
    server
        .add_resource(
            Resource::new("test://static", "Static").with_mime_type("text/plain"),
            None,
            |r: ResourceRequest, _c| async move {
                Ok(ReadResourceResult::new(vec![
                    TextResourceContents::new(r.uri, "text/plain", "static content").into(),
                ]))
            },
        )
        .unwrap();
    server
        .add_resource(
            Resource::new("test://counted", "Counted").with_mime_type("text/plain"),
            Some(CacheHint::new(60_000, mcpaxle::schema::CacheScope::Private)),
            move |r: ResourceRequest, _c| {
                let probe = probe.clone();
                async move {
                    let n = probe.reads.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok(ReadResourceResult::new(vec![
                        TextResourceContents::new(r.uri, "text/plain", format!("read {n}")).into(),
                    ]))
                }
            },
        )
        .unwrap();
    for i in 0..4 {
        server
            .add_resource(
                Resource::new(format!("test://page/{i}"), format!("Page {i}")),
                None,
                |r: ResourceRequest, _c| async move {
                    Ok(ReadResourceResult::new(vec![TextResourceContents::new(r.uri, "text/plain", "page").into()]))
                },
            )
            .unwrap();
    }
    server
        .add_resource_template(
            ResourceTemplate::new("test://items/{id}", "Item").with_mime_type("application/json"),
            None,
            |r: ResourceRequest, _c| async move {
                let id = r.variables.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok(ReadResourceResult::new(vec![
                    TextResourceContents::new(r.uri, "application/json", json!({ "id": id }).to_string()).into(),
                ]))
            },
        )
        .unwrap();
    server
        .add_prompt(
            Prompt::new("greet").with_description("Greets someone").with_argument("name", "Who", true),
            |a: Map<String, Value>, _c| async move {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                    "Hello, {}!",
                    a.get("name").and_then(Value::as_str).unwrap_or("?")
                ))]))
            },
        )
        .unwrap();
    server
        .add_prompt(
            Prompt::new("ask_prompt").with_description("Asks for a name first"),
            |_a, ctx: RequestContext| async move {
                let a = ctx.elicit("name", elicit_name("For whom?")).await?;
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("A poem for {}", name_of(&a)))]))
            },
        )
        .unwrap();
    server.set_completion(CompletionRef::Prompt("greet".into()), |req: CompletionRequest, _c| async move {
        Ok(CompleteResult::new(
            ["alice", "albert", "bob"].iter().filter(|o| o.starts_with(&req.value)).map(|o| o.to_string()).collect(),
        ))
    });
}

/// Caching hints: lists fresh for `ttl_ms`, public.
pub fn cache_hints(ttl_ms: u64) -> CacheDefaults {
    let h = CacheHint::new(ttl_ms, mcpaxle::schema::CacheScope::Public);
    CacheDefaults {
        discover: h.clone(),
        tools: h.clone(),
        prompts: h.clone(),
        resources: h.clone(),
        templates: h,
        read: CacheHint::new(0, mcpaxle::schema::CacheScope::Private),
    }
}

/// Client options with an answer for every input request.
pub fn options() -> ClientOptions {
    ClientOptions::new("client-tests", "1.0.0")
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(|params: Value| async move {
            let message = params["message"].as_str().unwrap_or_default().to_owned();
            let name = if message.contains("Round 2") { "Bob" } else { "Ada" };
            Ok(json!({ "action": "accept", "content": { "name": name } }))
        })
        .on_sampling(|_p| async {
            Ok(json!({ "role": "assistant", "content": { "type": "text", "text": "hi!" }, "model": "test-model" }))
        })
        .on_roots(|_p| async { Ok(json!({ "roots": [{ "uri": "file:///tmp/a" }, { "uri": "file:///tmp/b" }] })) })
}

/// Serves `server` over HTTP on a free loopback port; returns the server and its MCP URL.
pub async fn serve_http(server: Server) -> (HttpServer, String) {
    let http = HttpServer::bind(server, "127.0.0.1:0".parse().unwrap(), HttpOptions::default()).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    (http, url)
}

/// Serves `server` over an in-process pipe; returns the client's end and a task relaying
/// between the two ends: aborting it cuts the connection, as if the server had died.
pub fn serve_pipe(server: Server) -> (tokio::io::DuplexStream, JoinHandle<()>) {
    let (client_end, mut relay_a) = tokio::io::duplex(1 << 20);
    let (mut relay_b, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = serve_with(server, read, write, StdioOptions::default()).await;
    });
    let relay = tokio::spawn(async move {
        let _ = tokio::io::copy_bidirectional(&mut relay_a, &mut relay_b).await;
    });
    (client_end, relay)
}

/// Connects a client to `server` over an in-process pipe; aborting the returned task cuts
/// the connection.
pub async fn pipe_client(server: Server, options: ClientOptions) -> (Client, JoinHandle<()>) {
    let (end, task) = serve_pipe(server);
    let (read, write) = tokio::io::split(end);
    let client = Client::connect_with(read, write, options).await.unwrap();
    (client, task)
}

/// The path of the `everything_server` example: `MCPAXLE_EVERYTHING_SERVER` when set (`make
/// test` points it at the one `make test-servers` builds: `cargo test --workspace` resolves the
/// core's dependencies with other features than `cargo build -p mcpaxle`, so building the
/// example here compiled the core and a score of crates a second time), else this profile's
/// example, built first when missing.
pub fn everything_server() -> PathBuf {
    if let Some(path) = std::env::var_os("MCPAXLE_EVERYTHING_SERVER") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "MCPAXLE_EVERYTHING_SERVER names {}, which does not exist", path.display());
        return path;
    }
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap().to_path_buf();
    let path = profile_dir.join("examples").join("everything_server");
    if !path.exists() {
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "mcpaxle", "--example", "everything_server"]);
        if profile_dir.file_name().and_then(|n| n.to_str()) == Some("release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cannot run cargo to build the everything_server example");
        assert!(status.success(), "building the everything_server example failed");
    }
    path
}

/// Whether a process is still alive (not yet reaped counts as gone once it is a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
