//! The "everything" server: every fixture the official MCP conformance suite exercises.
//!
//! ```text
//! cargo run --release -p mcpaxle --example everything_server -- --http 127.0.0.1:3000   # endpoint /mcp
//! cargo run --release -p mcpaxle --example everything_server -- --stdio
//! ```

use mcpaxle::schema::{
    BlobResourceContents, CallToolResult, CompleteResult, ContentBlock, GetPromptResult, LoggingLevel, Prompt,
    PromptMessage, ReadResourceResult, Resource, ResourceTemplate, Role, TextResourceContents, Tool,
};
use mcpaxle::server::tasks::TaskSupport;
use mcpaxle::server::{
    CompletionRef, CompletionRequest, RequestContext, ResourceRequest, Server, ServerOptions, ToolOptions,
};
use mcpaxle::transport::http::{self, HttpOptions};
use mcpaxle::{Error, Result};
use serde_json::{Value, json};
use std::time::Duration;

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file (44-byte header, 8 silent samples).
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

fn text(s: impl Into<String>) -> Result<CallToolResult> {
    Ok(CallToolResult::text(s))
}

fn elicit_name(message: &str) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
    })
}

fn sampling(prompt: &str) -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }], "maxTokens": 100 })
}

fn answered_name(v: &Value) -> String {
    v.pointer("/content/name").and_then(Value::as_str).unwrap_or("stranger").to_owned()
}

fn add_content_tools(server: &Server) -> Result<()> {
    server.add_tool(Tool::new("test_simple_text", "Returns a simple text response", no_args()), |_a, _c| async {
        text("This is a simple text response for testing.")
    })?;
    server.add_tool(Tool::new("test_image_content", "Returns an image", no_args()), |_a, _c| async {
        Ok(CallToolResult::new(vec![ContentBlock::image(PNG, "image/png")]))
    })?;
    server.add_tool(Tool::new("test_audio_content", "Returns audio", no_args()), |_a, _c| async {
        Ok(CallToolResult::new(vec![ContentBlock::audio(WAV, "audio/wav")]))
    })?;
    server.add_tool(
        Tool::new("test_embedded_resource", "Returns an embedded resource", no_args()),
        |_a, _c| async {
            Ok(CallToolResult::new(vec![ContentBlock::embedded_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )]))
        },
    )?;
    server.add_tool(
        Tool::new("test_multiple_content_types", "Returns text, image and a resource", no_args()),
        |_a, _c| async {
            Ok(CallToolResult::new(vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ]))
        },
    )?;
    server.add_tool(Tool::new("test_error_handling", "Always fails with a tool error", no_args()), |_a, _c| async {
        Err::<CallToolResult, _>(Error::tool("This tool intentionally returns an error for testing"))
    })?;
    server.add_tool(
        Tool::new("test_tool_with_progress", "Reports progress 0, 50, 100", no_args()),
        |_a, ctx: RequestContext| async move {
            for p in [0.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), Some(&format!("Completed step {}", p / 50.0)));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            text("Progress tool completed")
        },
    )?;
    // SEP-1699 polling: the response stream ends at once; the result reaches a legacy client
    // after it reconnects with Last-Event-ID.
    server.add_tool(
        Tool::new(
            "test_reconnection",
            "Closes the response stream mid-call; the result comes after the client reconnects",
            no_args(),
        ),
        |_a, ctx: RequestContext| async move {
            ctx.close_stream(Duration::from_millis(500));
            tokio::time::sleep(Duration::from_millis(100)).await;
            text("Reconnection test completed")
        },
    )?;
    for name in ["test_logging_tool", "test_tool_with_logging"] {
        server.add_tool(
            Tool::new(name, "Logs three messages at info level (only when the request sets a log level)", no_args()),
            |_a, ctx: RequestContext| async move {
                for step in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                    ctx.log(LoggingLevel::Info, Some("everything_server"), json!(step));
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                text("Logging tool completed")
            },
        )?;
    }
    server.add_tool(
        Tool::new("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": { "address": { "$anchor": "addressDef", "type": "object", "properties": { "street": { "type": "string" }, "city": { "type": "string" } } } },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" }
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false
        })),
        |args: Value, _c| async move { text(format!("ok: {args}")) },
    )?;
    server.add_tool(
        Tool::new(
            "test_custom_header",
            "Mirrors its region argument into the Mcp-Param-Region header",
            json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "description": "Where to run", "x-mcp-header": "Region" },
                    "query": { "type": "string" }
                },
                "required": ["region"]
            }),
        ),
        |args: Value, _c| async move { text(format!("region={}", args["region"].as_str().unwrap_or_default())) },
    )?;
    Ok(())
}

/// Tools that change the server at run time capture a `WeakServer`: a `Server` clone inside
/// a handler would keep the server alive forever (a reference cycle).
fn add_change_triggers(server: &Server) -> Result<()> {
    let s = server.downgrade();
    server.add_tool(
        Tool::new("test_trigger_tool_change", "Adds or removes a tool, firing tools/list_changed", no_args()),
        move |_a, _c| {
            let s = s.upgrade();
            async move {
                let s = s.ok_or_else(|| Error::tool("the server is shutting down"))?;
                if !s.remove_tool("test_dynamic_tool") {
                    s.add_tool(Tool::new("test_dynamic_tool", "Added at run time", no_args()), |_a, _c| async {
                        text("dynamic")
                    })?;
                }
                text("Tool list changed")
            }
        },
    )?;
    let s = server.downgrade();
    server.add_tool(
        Tool::new("test_trigger_prompt_change", "Adds or removes a prompt, firing prompts/list_changed", no_args()),
        move |_a, _c| {
            let s = s.upgrade();
            async move {
                let s = s.ok_or_else(|| Error::tool("the server is shutting down"))?;
                if !s.remove_prompt("test_dynamic_prompt") {
                    s.add_prompt(
                        Prompt::new("test_dynamic_prompt").with_description("Added at run time"),
                        |_a, _c| async { Ok(GetPromptResult::new(vec![PromptMessage::user_text("dynamic")])) },
                    )?;
                }
                text("Prompt list changed")
            }
        },
    )?;
    let s = server.downgrade();
    server.add_tool(
        Tool::new("test_trigger_resource_update", "Announces an update of test://watched-resource", no_args()),
        move |_a, _c| {
            let s = s.upgrade();
            async move {
                let s = s.ok_or_else(|| Error::tool("the server is shutting down"))?;
                s.notify_resource_updated("test://watched-resource");
                text("Resource updated")
            }
        },
    )?;
    Ok(())
}

fn add_mrtr_tools(server: &Server) -> Result<()> {
    server.add_tool(
        Tool::new("test_missing_capability", "Needs the client's sampling capability", no_args()),
        |_a, ctx: RequestContext| async move {
            let answer = ctx.sample("summary", sampling("Summarize: MCP")).await?;
            text(format!("Sampled: {}", answer.pointer("/content/text").and_then(Value::as_str).unwrap_or_default()))
        },
    )?;
    for name in [
        "test_streaming_elicitation",
        "test_input_required_result_elicitation",
        "test_input_required_result_tampered_state",
    ] {
        server.add_tool(
            Tool::new(name, "Asks for the user's name (MRTR elicitation)", no_args()),
            |_a, ctx: RequestContext| async move {
                let answer = ctx.elicit("user_name", elicit_name("What is your name?")).await?;
                text(format!("Hello, {}!", answered_name(&answer)))
            },
        )?;
    }
    server.add_tool(
        Tool::new("test_input_required_result_sampling", "Asks the client to sample an LLM (MRTR)", no_args()),
        |_a, ctx: RequestContext| async move {
            let answer = ctx.sample("capital_of_france", sampling("What is the capital of France?")).await?;
            text(format!(
                "The model said: {}",
                answer.pointer("/content/text").and_then(Value::as_str).unwrap_or_default()
            ))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_list_roots", "Asks the client for its roots (MRTR)", no_args()),
        |_a, ctx: RequestContext| async move {
            let answer = ctx.list_roots("roots").await?;
            text(format!("The client has {} root(s)", answer["roots"].as_array().map_or(0, Vec::len)))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_request_state", "MRTR with request state", no_args()),
        |_a, ctx: RequestContext| async move {
            if ctx.request_state().is_none() {
                ctx.set_request_state(json!({ "started": true }));
            }
            let answer = ctx.elicit("user_name", elicit_name("What is your name?")).await?;
            text(format!("Hello, {} (state {})", answered_name(&answer), ctx.request_state().unwrap_or_default()))
        },
    )?;
    server.add_tool(
        Tool::new(
            "test_input_required_result_multiple_inputs",
            "Asks for elicitation, sampling and roots in one round",
            no_args(),
        ),
        |_a, ctx: RequestContext| async move {
            let (name, sample, roots) = tokio::join!(
                ctx.elicit("user_name", elicit_name("What is your name?")),
                ctx.sample("greeting", sampling("Write a greeting")),
                ctx.list_roots("roots"),
            );
            let (name, _sample, roots) = (name?, sample?, roots?);
            text(format!("Hello, {}; {} root(s)", answered_name(&name), roots["roots"].as_array().map_or(0, Vec::len)))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_multi_round", "Three rounds: two asks, then the result", no_args()),
        |_a, ctx: RequestContext| async move {
            let first = ctx.elicit("step_1", elicit_name("Round 1: what is your name?")).await?;
            let second = ctx.elicit("step_2", elicit_name("Round 2: what is your name again?")).await?;
            text(format!("Rounds done: {} and {}", answered_name(&first), answered_name(&second)))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_capabilities", "Asks only for what the client supports", no_args()),
        |_a, ctx: RequestContext| async move {
            if ctx.client_supports("elicitation") {
                let a = ctx.elicit("user_name", elicit_name("What is your name?")).await?;
                text(format!("Hello, {}!", answered_name(&a)))
            } else if ctx.client_supports("sampling") {
                ctx.sample("fallback", sampling("Say hello")).await?;
                text("Sampled a greeting")
            } else if ctx.client_supports("roots") {
                ctx.list_roots("roots").await?;
                text("Listed roots")
            } else {
                Err(Error::missing_capability(json!({ "elicitation": {} })))
            }
        },
    )?;
    Ok(())
}

/// Fixtures of the 2025-11-25 suite: under a legacy session these asks are real requests to
/// the client; under 2026-07-28 the same code is an MRTR round.
fn task_tool(task_support: TaskSupport) -> ToolOptions {
    ToolOptions { task_support, ..ToolOptions::default() }
}

/// The fixtures of the `tasks-*` scenarios (the Tasks extension, SEP-2663): plain handlers
/// that run as tasks for a client declaring the extension.
fn add_task_tools(server: &Server) -> Result<()> {
    let name_arg = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
    server.add_tool(Tool::new("greet", "Greets by name (never a task)", name_arg), |a: Value, _c| async move {
        text(format!("Hello, {}!", a["name"].as_str().unwrap_or("World")))
    })?;
    let seconds = json!({
        "type": "object",
        "properties": { "seconds": { "type": "number", "minimum": 0 }, "label": { "type": "string" } }
    });
    server.add_tool_with(
        Tool::new("slow_compute", "Sleeps `seconds` seconds, then answers (a task when the client can)", seconds),
        task_tool(TaskSupport::Optional),
        |a: Value, _c| async move {
            let seconds = a["seconds"].as_f64().unwrap_or(1.0).clamp(0.0, 3600.0);
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            text(format!("Computed {} after {seconds} s", a["label"].as_str().unwrap_or("result")))
        },
    )?;
    server.add_tool_with(
        Tool::new("failing_job", "Fails with a tool error after a second (only as a task)", no_args()),
        task_tool(TaskSupport::Required),
        |_a, _c| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err::<CallToolResult, _>(Error::tool("The job failed: the input could not be processed"))
        },
    )?;
    server.add_tool_with(
        Tool::new("protocol_error_job", "Panics: the task fails with a JSON-RPC error", no_args()),
        task_tool(TaskSupport::Optional),
        |_a, _c| async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            panic!("protocol_error_job: a deliberate panic, reported as a failed task");
            #[allow(unreachable_code)]
            text("unreachable")
        },
    )?;
    let filename = json!({ "type": "object", "properties": { "filename": { "type": "string" } } });
    server.add_tool_with(
        Tool::new("confirm_delete", "Asks the user to confirm, then deletes (pretends to)", filename),
        task_tool(TaskSupport::Optional),
        |a: Value, ctx: RequestContext| async move {
            let file = a["filename"].as_str().unwrap_or("the file").to_owned();
            let confirm = json!({
                "mode": "form",
                "message": format!("Delete {file}?"),
                "requestedSchema": { "type": "object", "properties": { "confirm": { "type": "boolean" } } }
            });
            let answer = ctx.elicit("confirm", confirm).await?;
            let yes = answer["action"] == "accept" && answer.pointer("/content/confirm") != Some(&json!(false));
            text(if yes { format!("Deleted {file}") } else { format!("Kept {file}") })
        },
    )?;
    server.add_tool_with(
        Tool::new("multi_input", "Asks two questions at once", no_args()),
        task_tool(TaskSupport::Optional),
        |_a, ctx: RequestContext| async move {
            let (first, second) = tokio::join!(
                ctx.elicit("first", elicit_name("First name?")),
                ctx.elicit("second", elicit_name("Second?"))
            );
            text(format!("Got {} and {}", answered_name(&first?), answered_name(&second?)))
        },
    )?;
    server.add_tool_with(
        Tool::new("test_tool_with_task", "Asks for a name (MRTR), then greets as a task", no_args()),
        ToolOptions { task_support: TaskSupport::Required, defer_task: true, ..ToolOptions::default() },
        |_a, ctx: RequestContext| async move {
            let answer = ctx.elicit("user_name", elicit_name("What is your name?")).await?;
            ctx.start_task().await?;
            tokio::time::sleep(Duration::from_millis(200)).await;
            text(format!("Hello, {}!", answered_name(&answer)))
        },
    )?;
    Ok(())
}

fn add_legacy_fixtures(server: &Server) -> Result<()> {
    let prompt_schema =
        json!({ "type": "object", "properties": { "prompt": { "type": "string" } }, "required": ["prompt"] });
    server.add_tool(
        Tool::new("test_sampling", "Asks the client's LLM to answer a prompt", prompt_schema),
        |args: Value, ctx: RequestContext| async move {
            let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
            let answer = ctx.sample("sampling", sampling(&prompt)).await?;
            text(format!(
                "LLM response: {}",
                answer.pointer("/content/text").and_then(Value::as_str).unwrap_or_default()
            ))
        },
    )?;
    let message_schema =
        json!({ "type": "object", "properties": { "message": { "type": "string" } }, "required": ["message"] });
    server.add_tool(
        Tool::new("test_elicitation", "Asks the user for a username and email", message_schema),
        |args: Value, ctx: RequestContext| async move {
            let params = json!({
                "message": args["message"].as_str().unwrap_or_default(),
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "username": { "type": "string", "description": "User's response" },
                        "email": { "type": "string", "description": "User's email address" }
                    },
                    "required": ["username", "email"]
                }
            });
            let answer = ctx.elicit("elicitation", params).await?;
            text(format!(
                "User response: action={}, content={}",
                answer["action"].as_str().unwrap_or_default(),
                answer["content"]
            ))
        },
    )?;
    server.add_tool(Tool::new("test_elicitation_sep1034_defaults", "Elicitation with defaults for every primitive type", no_args()), |_a, ctx: RequestContext| async move {
        let params = json!({
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "User name", "default": "John Doe" },
                    "age": { "type": "integer", "description": "User age", "default": 30 },
                    "score": { "type": "number", "description": "User score", "default": 95.5 },
                    "status": { "type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active" },
                    "verified": { "type": "boolean", "description": "Verification status", "default": true }
                }
            }
        });
        let answer = ctx.elicit("defaults", params).await?;
        text(format!("Elicitation completed: action={}, content={}", answer["action"].as_str().unwrap_or_default(), answer["content"]))
    })?;
    server.add_tool(Tool::new("test_elicitation_sep1330_enums", "Elicitation with the five enum schema variants", no_args()), |_a, ctx: RequestContext| async move {
        let params = json!({
            "message": "Please select options from the enum fields",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "untitledSingle": { "type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"] },
                    "titledSingle": { "type": "string", "description": "Titled single-select", "oneOf": [
                        { "const": "value1", "title": "First Option" }, { "const": "value2", "title": "Second Option" }, { "const": "value3", "title": "Third Option" }
                    ] },
                    "legacyEnum": { "type": "string", "description": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"] },
                    "untitledMulti": { "type": "array", "description": "Untitled multi-select", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                    "titledMulti": { "type": "array", "description": "Titled multi-select", "items": { "anyOf": [
                        { "const": "value1", "title": "First Choice" }, { "const": "value2", "title": "Second Choice" }, { "const": "value3", "title": "Third Choice" }
                    ] } }
                }
            }
        });
        let answer = ctx.elicit("enums", params).await?;
        text(format!("Elicitation completed: action={}, content={}", answer["action"].as_str().unwrap_or_default(), answer["content"]))
    })?;
    Ok(())
}

fn add_prompts(server: &Server) -> Result<()> {
    server.add_prompt(
        Prompt::new("test_simple_prompt").with_description("A simple prompt without arguments"),
        |_a, _c| async {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text("This is a simple prompt for testing.")]))
        },
    )?;
    server.add_prompt(
        Prompt::new("test_prompt_with_arguments")
            .with_description("A prompt with two arguments")
            .with_argument("arg1", "First test argument", true)
            .with_argument("arg2", "Second test argument", true),
        |args: serde_json::Map<String, Value>, _c| async move {
            let a = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                a("arg1"),
                a("arg2")
            ))]))
        },
    )?;
    server.set_completion(
        CompletionRef::Prompt("test_prompt_with_arguments".into()),
        |req: CompletionRequest, _c| async move {
            let options = ["test", "testing", "tested", "value", "paris", "park"];
            Ok(CompleteResult::new(
                options.iter().filter(|o| o.starts_with(&req.value)).map(|o| o.to_string()).collect(),
            ))
        },
    );
    server.add_prompt(
        Prompt::new("test_prompt_with_embedded_resource")
            .with_description("A prompt with an embedded resource")
            .with_argument("resourceUri", "URI of the resource", true),
        |args: serde_json::Map<String, Value>, _c| async move {
            let uri = args.get("resourceUri").and_then(Value::as_str).unwrap_or("test://example-resource").to_owned();
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(
                    Role::User,
                    ContentBlock::embedded_text(uri, "text/plain", "Embedded resource content for testing."),
                ),
                PromptMessage::user_text("Please process the embedded resource above."),
            ]))
        },
    )?;
    server.add_prompt(
        Prompt::new("test_prompt_with_image").with_description("A prompt with an image"),
        |_a, _c| async {
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
                PromptMessage::user_text("Please analyze the image above."),
            ]))
        },
    )?;
    server.add_prompt(
        Prompt::new("test_input_required_result_prompt").with_description("Asks for the user's name first (MRTR)"),
        |_a, ctx: RequestContext| async move {
            let answer = ctx.elicit("user_name", elicit_name("Who is this prompt for?")).await?;
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                "Write a short poem for {}.",
                answered_name(&answer)
            ))]))
        },
    )?;
    Ok(())
}

fn add_resources(server: &Server) -> Result<()> {
    server.add_resource(
        Resource::new("test://static-text", "Static text resource")
            .with_mime_type("text/plain")
            .with_description("A static text resource"),
        None,
        |r: ResourceRequest, _c| async move {
            Ok(ReadResourceResult::new(vec![
                TextResourceContents::new(r.uri, "text/plain", "This is the content of the static text resource.")
                    .into(),
            ]))
        },
    )?;
    server.add_resource(
        Resource::new("test://static-binary", "Static binary resource")
            .with_mime_type("image/png")
            .with_description("A static binary resource"),
        None,
        |r: ResourceRequest, _c| async move {
            Ok(ReadResourceResult::new(vec![BlobResourceContents::new(r.uri, "image/png", PNG).into()]))
        },
    )?;
    server.add_resource(
        Resource::new("test://watched-resource", "Watched resource")
            .with_mime_type("text/plain")
            .with_description("Subscribe to it, then call test_trigger_resource_update"),
        None,
        |r: ResourceRequest, _c| async move {
            Ok(ReadResourceResult::new(vec![
                TextResourceContents::new(r.uri, "text/plain", "Watched resource content").into(),
            ]))
        },
    )?;
    server.add_resource_template(
        ResourceTemplate::new("test://template/{id}/data", "Template resource")
            .with_mime_type("application/json")
            .with_description("Data for an id"),
        None,
        |r: ResourceRequest, _c| async move {
            let id = r.variables.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            let body = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            Ok(ReadResourceResult::new(vec![
                TextResourceContents::new(r.uri, "application/json", body.to_string()).into(),
            ]))
        },
    )?;
    Ok(())
}

/// Builds the everything server; a fleet's settings come from the environment
/// (`MCPAXLE_STATE_SECRET`, `MCPAXLE_BUS`), as in every binding.
fn build() -> Result<Server> {
    let server = Server::builder("mcpaxle-everything-server", env!("CARGO_PKG_VERSION"))
        .options(ServerOptions::default().with_environment()?)
        .title("mcpaxle everything server")
        .instructions("A server with every fixture of the MCP conformance suite.")
        .enable_logging()
        .build();
    add_content_tools(&server)?;
    add_change_triggers(&server)?;
    add_mrtr_tools(&server)?;
    add_task_tools(&server)?;
    add_legacy_fixtures(&server)?;
    add_prompts(&server)?;
    add_resources(&server)?;
    Ok(server)
}

fn usage() -> ! {
    eprintln!("usage: everything_server --http HOST:PORT | --stdio");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = build()?;
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => mcpaxle::transport::stdio::serve(server).await,
        ["--http", addr] => {
            let addr = addr.parse().unwrap_or_else(|_| usage());
            eprintln!("everything_server: listening on http://{addr}/mcp");
            http::serve(server, addr, HttpOptions::default()).await
        }
        _ => usage(),
    }
}
