//! Traces and metrics end to end (telemetry is process-wide, so this binary has one test): an
//! OTLP/HTTP collector on 127.0.0.1 decoding with OpenTelemetry's own protobuf definitions
//! receives the spans of one call crossing client -> server -> a span the handler starts, in
//! both eras, with MCP's semantic-convention attributes, an error's code, and the metrics of a
//! known load; the rounds of a multi round-trip request and the polls of a task link to their
//! first request; the Prometheus route answers the same metrics.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcpaxle::client::{CallOptions, Client, ClientOptions};
use mcpaxle::schema::Tool;
use mcpaxle::server::tasks::{TaskOptions, TaskSupport};
use mcpaxle::server::{RequestContext, Server, ToolOptions};
use mcpaxle::telemetry::{self, TelemetryOptions};
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use opentelemetry::trace::{FutureExt as _, TraceContextExt, Tracer};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use prost::Message;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A span as the collector received it.
#[derive(Debug, Clone)]
struct Got {
    trace: String,
    id: String,
    parent: String,
    name: String,
    kind: i32,
    service: String,
    attrs: BTreeMap<String, String>,
    status: i32,
    /// The spans linked to, and the link's `mcpaxle.link`.
    links: Vec<(String, String)>,
}

/// A histogram point: its metric, attributes and count.
#[derive(Debug, Clone)]
struct Point {
    metric: String,
    attrs: BTreeMap<String, String>,
    count: u64,
}

#[derive(Default)]
struct Received {
    spans: Vec<Got>,
    points: Vec<Point>,
}

fn text(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn attrs(kvs: &[KeyValue]) -> BTreeMap<String, String> {
    kvs.iter().map(|kv| (kv.key.clone(), text(&kv.value))).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The collector: OTLP/HTTP protobuf on a free loopback port; returns its base URL.
async fn collector(received: Arc<Mutex<Received>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let received = received.clone();
            let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let received = received.clone();
                async move {
                    let path = req.uri().path().to_owned();
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let mut r = received.lock().unwrap();
                    match path.as_str() {
                        "/v1/traces" => {
                            for rs in ExportTraceServiceRequest::decode(body).expect("OTLP traces").resource_spans {
                                let res = attrs(&rs.resource.map(|r| r.attributes).unwrap_or_default());
                                for s in rs.scope_spans.into_iter().flat_map(|ss| ss.spans) {
                                    r.spans.push(Got {
                                        trace: hex(&s.trace_id),
                                        id: hex(&s.span_id),
                                        parent: hex(&s.parent_span_id),
                                        name: s.name,
                                        kind: s.kind,
                                        service: res.get("service.name").cloned().unwrap_or_default(),
                                        attrs: attrs(&s.attributes),
                                        status: s.status.map_or(0, |s| s.code),
                                        links: s
                                            .links
                                            .iter()
                                            .map(|l| {
                                                let why =
                                                    attrs(&l.attributes).remove("mcpaxle.link").unwrap_or_default();
                                                (hex(&l.span_id), why)
                                            })
                                            .collect(),
                                    });
                                }
                            }
                        }
                        "/v1/metrics" => {
                            let req = ExportMetricsServiceRequest::decode(body).expect("OTLP metrics");
                            for m in req
                                .resource_metrics
                                .into_iter()
                                .flat_map(|rm| rm.scope_metrics)
                                .flat_map(|sm| sm.metrics)
                            {
                                if let Some(Data::Histogram(h)) = m.data {
                                    for p in h.data_points {
                                        r.points.push(Point {
                                            metric: m.name.clone(),
                                            attrs: attrs(&p.attributes),
                                            count: p.count,
                                        });
                                    }
                                }
                            }
                        }
                        other => panic!("the exporter posted to {other}"),
                    }
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::new())))
                }
            });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    url
}

fn server() -> Server {
    let polls = TaskOptions { poll_interval: Duration::from_millis(20), ..TaskOptions::default() };
    let server = Server::builder("telemetry-test", "1.0.0").tasks(polls).build();
    let form = json!({ "mode": "form", "message": "Sure?", "requestedSchema": { "type": "object", "properties": {} } });
    server
        .add_tool(
            Tool::new("confirm", "Asks first", json!({ "type": "object" })),
            move |_a: Value, ctx: RequestContext| {
                let form = form.clone();
                async move {
                    ctx.elicit("sure", form).await?;
                    Ok("confirmed")
                }
            },
        )
        .unwrap();
    let task = ToolOptions { task_support: TaskSupport::Required, ..ToolOptions::default() };
    server
        .add_tool_with(Tool::new("job", "A task", json!({ "type": "object" })), task, |_a: Value, _c| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok("done")
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("lookup", "Looks up", json!({ "type": "object" })),
            |_a: Value, ctx: RequestContext| async move {
                // Not ready at the first poll, as a handler that does any I/O.
                tokio::time::sleep(Duration::from_millis(5)).await;
                // The handler runs in the request's span: a span it starts is the span's child.
                let span = opentelemetry::global::tracer("app").start("db.query");
                drop(span);
                Ok(json!({ "traceparent": ctx.trace_context().map(|t| t.traceparent.clone()), "meta": ctx.meta() }))
            },
        )
        .unwrap();
    server
}

async fn wait_for<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        telemetry::flush().unwrap_or_else(|e| panic!("flush: {e}"));
        if let Some(t) = found() {
            return t;
        }
        assert!(Instant::now() < deadline, "the collector never received {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_cross_client_server_and_handler_and_metrics_count_the_load() {
    let received = Arc::new(Mutex::new(Received::default()));
    let endpoint = collector(received.clone()).await;
    let options = HttpOptions { metrics_path: Some("/metrics".into()), ..HttpOptions::default() };
    let http = HttpServer::bind(server(), "127.0.0.1:0".parse().unwrap(), options).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    let accept = |_p: Value| async { Ok(json!({ "action": "accept", "content": {} })) };
    let client =
        Client::connect_http(&url, ClientOptions::new("telemetry-client", "1").on_elicitation(accept)).await.unwrap();

    // Off: nothing is injected, no handler has a trace context, the metrics route says why.
    let off = client.call_tool("lookup", json!({}), CallOptions::new()).await.unwrap();
    let off = off.structured_content.unwrap();
    assert_eq!(off["traceparent"], Value::Null);
    assert!(off["meta"].get("traceparent").is_none(), "{off}");
    let scrape = http_get(&format!("http://{}/metrics", http.local_addr())).await;
    assert_eq!(scrape.0, 503, "{}", scrape.1);
    assert!(scrape.1.contains("prometheus: true"), "{}", scrape.1);

    telemetry::install(TelemetryOptions {
        endpoint: Some(endpoint),
        service_name: Some("mcpaxle-rust".into()),
        metrics_interval: Some(Duration::from_millis(200)),
        prometheus: true,
        ..TelemetryOptions::default()
    })
    .unwrap();
    assert!(telemetry::is_enabled());

    // One agent turn: the application's span, the client's, the server's, the handler's.
    let tracer = opentelemetry::global::tracer("app");
    let turn = tracer.start("agent-turn");
    let cx = opentelemetry::Context::current_with_span(turn);
    let result = client.call_tool("lookup", json!({}), CallOptions::new()).with_context(cx.clone()).await.unwrap();
    cx.span().end();
    let seen = result.structured_content.unwrap();
    let handler_parent = seen["traceparent"].as_str().expect("the handler's trace context").to_owned();
    assert_eq!(seen["meta"]["traceparent"].as_str().map(|t| &t[..35]), Some(&handler_parent[..35]), "same trace");

    let spans = wait_for("the four spans of the turn", || {
        let r = received.lock().unwrap();
        let turn = r.spans.iter().find(|s| s.name == "agent-turn")?.clone();
        let in_turn: Vec<Got> = r.spans.iter().filter(|s| s.trace == turn.trace).cloned().collect();
        (in_turn.len() >= 4).then_some(in_turn)
    })
    .await;
    let named = |name: &str, kind: i32| {
        spans.iter().find(|s| s.name == name && s.kind == kind).unwrap_or_else(|| panic!("no {name} span: {spans:#?}"))
    };
    let (turn, client_span) = (named("agent-turn", 1), named("tools/call lookup", 3));
    let (server_span, query) = (named("tools/call lookup", 2), named("db.query", 1));
    assert_eq!(client_span.parent, turn.id);
    assert_eq!(server_span.parent, client_span.id);
    assert_eq!(query.parent, server_span.id);
    assert!(handler_parent.contains(&server_span.id), "the handler's context is the server span's");
    assert_eq!(server_span.service, "mcpaxle-rust");
    for (k, v) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "lookup"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2026-07-28"),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
    ] {
        assert_eq!(server_span.attrs.get(k).map(String::as_str), Some(v), "{k}: {server_span:#?}");
        if k != "network.protocol.name" {
            assert_eq!(client_span.attrs.get(k).map(String::as_str), Some(v), "client {k}: {client_span:#?}");
        }
    }
    assert!(server_span.attrs.contains_key("jsonrpc.request.id"));
    assert!(!server_span.attrs.contains_key("enduser.id"), "no principal unless asked");

    // An error: its JSON-RPC code on both sides, the spans' status error (2). A tool name the
    // server does not have stays out of the span's name and the metrics (any client could
    // make up names without end): `_OTHER` there, the name as sent on the span alone.
    let e = client.call_tool("missing", json!({}), CallOptions::new()).await.unwrap_err();
    let code = e.code().to_string();
    let failed = wait_for("the error's server span", || {
        let r = received.lock().unwrap();
        r.spans.iter().find(|s| s.name == "tools/call" && s.kind == 2).cloned()
    })
    .await;
    assert_eq!(failed.attrs.get("gen_ai.tool.name").map(String::as_str), Some("_OTHER"));
    assert_eq!(failed.attrs.get("mcpaxle.request.name").map(String::as_str), Some("missing"));
    assert_eq!(failed.attrs.get("error.type"), Some(&code), "{failed:#?}");
    assert_eq!(failed.attrs.get("rpc.response.status_code"), Some(&code));
    assert_eq!(failed.status, 2);

    // The legacy era: the session's id and version.
    let legacy =
        Client::connect_http(&url, ClientOptions::new("legacy", "1").protocol_versions(["2025-11-25"])).await.unwrap();
    legacy.call_tool("lookup", json!({}), CallOptions::new()).await.unwrap();
    let session = legacy.session_id().expect("a legacy session");
    let in_session = wait_for("the legacy call's server span", || {
        let r = received.lock().unwrap();
        r.spans
            .iter()
            .find(|s| s.kind == 2 && s.attrs.get("mcp.session.id").map(String::as_str) == Some(session.as_str()))
            .cloned()
    })
    .await;
    assert_eq!(in_session.attrs.get("mcp.protocol.version").map(String::as_str), Some("2025-11-25"));
    let initialize = wait_for("the legacy initialize's span", || {
        let r = received.lock().unwrap();
        r.spans.iter().find(|s| s.name == "initialize" && s.kind == 2).cloned()
    })
    .await;
    assert_eq!(initialize.attrs.get("mcpaxle.era").map(String::as_str), Some("2025-11-25"));

    // A multi round-trip request: the second round's span links to the first's.
    client.call_tool("confirm", json!({}), CallOptions::new()).await.unwrap();
    let rounds = wait_for("both rounds of confirm", || {
        let r = received.lock().unwrap();
        let rounds: Vec<Got> =
            r.spans.iter().filter(|s| s.name == "tools/call confirm" && s.kind == 2).cloned().collect();
        (rounds.len() == 2).then_some(rounds)
    })
    .await;
    let (first, second) = match rounds[0].links.is_empty() {
        true => (&rounds[0], &rounds[1]),
        false => (&rounds[1], &rounds[0]),
    };
    assert_eq!(second.links, [(first.id.clone(), "first_round".to_owned())], "{rounds:#?}");
    assert!(first.links.is_empty());
    assert_eq!(first.parent, second.parent, "both rounds are children of the client's one span");

    // A task: its polls link to the call that created it.
    client.call_tool("job", json!({}), CallOptions::new()).await.unwrap();
    let (created, poll) = wait_for("the task's call and a poll", || {
        let r = received.lock().unwrap();
        let created = r.spans.iter().find(|s| s.name == "tools/call job" && s.kind == 2)?.clone();
        let poll = r.spans.iter().find(|s| s.name == "tasks/get" && s.kind == 2)?.clone();
        Some((created, poll))
    })
    .await;
    assert_eq!(poll.links, [(created.id.clone(), "task".to_owned())], "{poll:#?}");
    assert_eq!(poll.parent, created.parent, "the polls are children of the client's call span");

    // A known load: 20 more calls; the duration histograms count every one.
    for _ in 0..20 {
        client.call_tool("lookup", json!({}), CallOptions::new()).await.unwrap();
    }
    let modern_lookups = |metric: &str, r: &Received| {
        r.points
            .iter()
            .filter(|p| {
                p.metric == metric
                    && p.attrs.get("gen_ai.tool.name").map(String::as_str) == Some("lookup")
                    && p.attrs.get("mcp.protocol.version").map(String::as_str) == Some("2026-07-28")
            })
            .map(|p| p.count)
            .max()
            .unwrap_or(0)
    };
    for metric in ["mcp.server.operation.duration", "mcp.client.operation.duration"] {
        // 21 since install: the agent turn's call and the 20 (cumulative temporality).
        let count = wait_for(metric, || {
            let n = modern_lookups(metric, &received.lock().unwrap());
            (n >= 21).then_some(n)
        })
        .await;
        assert_eq!(count, 21, "{metric}");
    }
    let failures = wait_for("the error's metric point", || {
        let r = received.lock().unwrap();
        r.points
            .iter()
            .find(|p| p.metric == "mcp.server.operation.duration" && p.attrs.get("error.type") == Some(&code))
            .cloned()
    })
    .await;
    assert_eq!(failures.attrs.get("gen_ai.tool.name").map(String::as_str), Some("_OTHER"));
    // Fifty made-up names: still the one series.
    for i in 0..50 {
        client.call_tool(&format!("made-up-{i}"), json!({}), CallOptions::new()).await.unwrap_err();
    }
    telemetry::flush().unwrap();
    let (_, body) = http_get(&format!("http://{}/metrics", http.local_addr())).await;
    assert!(!body.lines().any(|l| l.starts_with("mcp_server") && l.contains("made-up")), "{body}");
    let series = body.lines().filter(|l| l.starts_with("mcp_server_operation_duration_seconds_count{")).count();
    assert!(series <= 8, "one series per method, tool, version and outcome: {body}");

    // The Prometheus route: the same histogram, by the exposition's names.
    let (status, body) = http_get(&format!("http://{}/metrics", http.local_addr())).await;
    assert_eq!(status, 200);
    assert!(body.contains("mcp_server_operation_duration_seconds_count{"), "{body}");
    assert!(body.contains("gen_ai_tool_name=\"lookup\""), "{body}");
    assert!(body.contains("mcpaxle_server_active_requests"), "{body}");

    telemetry::shutdown();
    assert!(!telemetry::is_enabled());
    let after = client.call_tool("lookup", json!({}), CallOptions::new()).await.unwrap();
    assert_eq!(after.structured_content.unwrap()["traceparent"], Value::Null, "off again");
}

/// A GET with the status and body as text.
async fn http_get(url: &str) -> (u16, String) {
    let client =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http::<Full<Bytes>>();
    let r = client.get(url.parse().unwrap()).await.unwrap();
    let status = r.status().as_u16();
    let body = r.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}
