//! The "everything" client: what the official MCP conformance suite's client scenarios ask of a
//! client, in one program.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 \
//!     cargo run --release -p mcpaxle --example everything_client -- http://localhost:3000/mcp
//! ```
//!
//! The server URL is the last argument. `MCP_CONFORMANCE_PROTOCOL_VERSION` picks the wire
//! (2026-07-28: per-request `_meta`; 2025-11-25 and earlier: the `initialize` session);
//! `MCP_CONFORMANCE_CONTEXT` carries a scenario's test data (`toolCalls`, pre-registered
//! `client_id`/`client_secret`/`issuer`); with `MCPAXLE_AUTO_ERA=1` the client detects the era
//! itself instead. The program exits at once on SIGTERM or Ctrl-C, and starts no process of
//! its own.
//!
//! OAuth is on for every scenario (it only acts on a `401`): the suite's authorization servers
//! approve without a user, so the user-agent step follows their redirect
//! ([`OAuthOptions::without_user`]); the client offers a Client ID Metadata Document URL and
//! falls back to dynamic registration.

use mcpaxle::client::{CallOptions, Client, ClientOptions, OAuthOptions, PrivateKey, apply_schema_defaults};
use mcpaxle::schema::Tool;
use mcpaxle::{Error, Result};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// A plausible value for a property of a JSON Schema, by its declared type.
fn sample_value(name: &str, schema: &Value) -> Value {
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    let ty = schema
        .get("type")
        .and_then(|t| t.as_str().or_else(|| t.as_array().and_then(|a| a.first()).and_then(Value::as_str)));
    match ty {
        Some("integer") => json!(1),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        Some("object") => json!({}),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ if name.contains("region") => json!("us-east1"),
        _ => json!("test"),
    }
}

/// Arguments for a tool: every required property, with a plausible value.
fn sample_arguments(tool: &Tool) -> Value {
    let schema = &tool.input_schema;
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    for name in required {
        let prop = props.get(name).cloned().unwrap_or(Value::Null);
        args.insert(name.to_owned(), sample_value(name, &prop));
    }
    Value::Object(args)
}

/// Accepts an elicitation, filling every field the schema gives a default for (SEP-1034), and
/// the other required ones with a plausible value.
async fn elicit(params: Value) -> Result<Value> {
    let schema = params.get("requestedSchema").cloned().unwrap_or_else(|| json!({}));
    let mut content = Map::new();
    apply_schema_defaults(&schema, &mut content);
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for name in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if !content.contains_key(name) {
            content.insert(name.to_owned(), sample_value(name, props.get(name).unwrap_or(&Value::Null)));
        }
    }
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return Ok(json!({ "action": "accept" }));
    }
    Ok(json!({ "action": "accept", "content": content }))
}

async fn sample(_params: Value) -> Result<Value> {
    Ok(json!({
        "role": "assistant",
        "content": { "type": "text", "text": "This is a sampled answer from the everything client." },
        "model": "mcpaxle-everything-client",
        "stopReason": "endTurn"
    }))
}

async fn roots(_params: Value) -> Result<Value> {
    Ok(json!({ "roots": [{ "uri": "file:///tmp/mcpaxle-conformance", "name": "conformance" }] }))
}

/// Where the suite's authorization servers send the user-agent back (never listened on: the
/// redirect is read, not followed).
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The Client ID Metadata Document URL the suite expects (never fetched).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth as the scenario's context says: a machine client's credentials (`client_secret`, or
/// `private_key_pem` with `signing_algorithm` for `private_key_jwt`) for the client credentials
/// grant of the `auth/client-credentials-*` scenarios; otherwise the authorization code grant,
/// with the pre-registered credentials the context may hold.
fn oauth(scenario: &str, context: &Value) -> Result<OAuthOptions> {
    let text = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    if scenario.starts_with("auth/client-credentials") {
        let id = text("client_id").ok_or_else(|| Error::invalid_params("the scenario's context has no client_id"))?;
        let mut oauth = OAuthOptions::client_credentials(id, text("client_secret"), text("issuer"))?;
        if let Some(pem) = text("private_key_pem") {
            let algorithm = text("signing_algorithm").unwrap_or_else(|| "RS256".to_owned());
            oauth = oauth.private_key(PrivateKey { pem, algorithm });
        }
        return Ok(oauth);
    }
    let mut oauth = OAuthOptions::without_user(REDIRECT_URI)?.client_metadata_url(CLIENT_METADATA_URL);
    if let Some(id) = text("client_id") {
        oauth = oauth.pre_registered(id, text("client_secret"), text("issuer"));
    }
    Ok(oauth)
}

fn options(scenario: &str, version: &str, context: &Value) -> Result<ClientOptions> {
    // MCPAXLE_AUTO_ERA=1: every supported revision, the era found by detection (a check of the
    // detection against the suite's mocks); otherwise exactly the revision asked for.
    let versions: Vec<String> = if std::env::var_os("MCPAXLE_AUTO_ERA").is_some() {
        mcpaxle::client::SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect()
    } else {
        vec![version.to_owned()]
    };
    Ok(ClientOptions::new("mcpaxle-everything-client", env!("CARGO_PKG_VERSION"))
        .protocol_versions(versions)
        .request_timeout(Duration::from_secs(25))
        .on_elicitation(elicit)
        .on_sampling(sample)
        .on_roots(roots)
        .oauth(oauth(scenario, context)?))
}

async fn call_each(client: &Client, tools: &[Tool]) -> Result<()> {
    for tool in tools {
        let r = client.call_tool(&tool.name, sample_arguments(tool), CallOptions::new()).await?;
        eprintln!("called {}: isError={:?}", tool.name, r.is_error);
    }
    Ok(())
}

fn find<'a>(tools: &'a [Tool], name: &str) -> Result<&'a Tool> {
    tools.iter().find(|t| t.name == name).ok_or_else(|| Error::usage(format!("the server lists no tool {name}")))
}

async fn run(url: &str, scenario: &str, version: &str, context: Value) -> Result<()> {
    let client = Client::connect_http(url, options(scenario, version, &context)?).await?;
    eprintln!("connected: era {:?}, protocol version {}", client.era(), client.protocol_version());
    let tools = client.list_all_tools().await?;
    eprintln!("tools: {:?}", tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
    let outcome = match scenario {
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => Ok(()),
        "tools_call" => {
            let r = client.call_tool("add_numbers", json!({ "a": 5, "b": 3 }), CallOptions::new()).await?;
            eprintln!("add_numbers: {:?}", r.content);
            Ok(())
        }
        "sep-2322-client-request-state" => {
            let names =
                ["test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"];
            let calls = names.iter().map(|n| client.call_tool(n, json!({}), CallOptions::new()));
            for (name, r) in names.iter().zip(futures_util::future::join_all(calls).await) {
                eprintln!("{name}: {:?}", r?.content);
            }
            Ok(())
        }
        "http-standard-headers" => {
            call_each(&client, &tools).await?;
            for r in client.list_all_resources().await? {
                client.read_resource(&r.uri, CallOptions::new()).await?;
            }
            for p in client.list_all_prompts().await? {
                client.get_prompt(&p.name, BTreeMap::new(), CallOptions::new()).await?;
            }
            Ok(())
        }
        "http-custom-headers" => {
            let calls = context.get("toolCalls").and_then(Value::as_array).cloned().unwrap_or_default();
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let args = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                client.call_tool(name, args, CallOptions::new()).await?;
            }
            Ok(())
        }
        "json-schema-2020-12-preservation" => {
            let focal = find(&tools, "json_schema_2020_12_tool")?;
            let r = client
                .call_tool("json_schema_echo", json!({ "schema": focal.input_schema }), CallOptions::new())
                .await?;
            eprintln!("json_schema_echo: {:?}", r.content);
            Ok(())
        }
        "elicitation-sep1034-client-defaults" => {
            find(&tools, "test_client_elicitation_defaults")?;
            let r = client.call_tool("test_client_elicitation_defaults", json!({}), CallOptions::new()).await?;
            eprintln!("test_client_elicitation_defaults: {:?}", r.content);
            Ok(())
        }
        "sse-retry" => {
            let r = client.call_tool("test_reconnection", json!({}), CallOptions::new()).await?;
            eprintln!("test_reconnection: {:?}", r.content);
            Ok(())
        }
        // http-invalid-tool-headers, and anything else: every listed tool (the invalid ones were
        // dropped by list_all_tools).
        _ => call_each(&client, &tools).await,
    };
    client.close().await;
    outcome
}

#[tokio::main]
async fn main() {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: everything_client SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2026-07-28".to_owned());
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    eprintln!("everything_client: scenario {scenario:?}, protocol {version}, server {url}");
    let code = tokio::select! {
        r = run(&url, &scenario, &version, context) => match r {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("everything_client: {:?}: {e}", e.kind());
                1
            }
        },
        _ = mcpaxle::transport::shutdown_signal() => 143,
    };
    std::process::exit(code);
}
