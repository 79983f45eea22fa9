//! Validation against the legacy revision's `schema.json` (2025-11-25), for the dual-era
//! tests: every message a legacy session emits must be valid there.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path: PathBuf =
            super::spec_dir().parent().expect("spec dir has a parent").join("2025-11-25").join("schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
    })
}

fn validator(def: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap().get(def) {
        return v.clone();
    }
    assert!(schema()["$defs"].get(def).is_some(), "2025-11-25 schema.json has no {def}");
    let root = json!({ "$schema": schema()["$schema"], "$defs": schema()["$defs"], "$ref": format!("#/$defs/{def}") });
    let v =
        Arc::new(jsonschema::options().offline().build(&root).unwrap_or_else(|e| panic!("cannot compile {def}: {e}")));
    cache.lock().unwrap().insert(def.to_owned(), v.clone());
    v
}

/// Validates a value against a 2025-11-25 definition.
pub fn validate_def(def: &str, value: &Value) -> Result<(), String> {
    let errors: Vec<String> =
        validator(def).iter_errors(value).take(5).map(|e| format!("at {}: {e}", e.instance_path())).collect();
    if errors.is_empty() { Ok(()) } else { Err(format!("not a valid 2025-11-25 {def}: {}", errors.join("; "))) }
}

fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        _ => return None,
    })
}

/// Validates any message a legacy session sends: responses (by the method of the request they
/// answer), notifications and server-to-client requests (by their method).
pub fn validate_message(request_method: &str, m: &Value) -> Result<(), String> {
    if let Some(method) = m.get("method").and_then(Value::as_str) {
        let def = match method {
            "notifications/progress" => "ProgressNotification",
            "notifications/message" => "LoggingMessageNotification",
            "notifications/tools/list_changed" => "ToolListChangedNotification",
            "notifications/prompts/list_changed" => "PromptListChangedNotification",
            "notifications/resources/list_changed" => "ResourceListChangedNotification",
            "notifications/resources/updated" => "ResourceUpdatedNotification",
            "notifications/cancelled" => "CancelledNotification",
            "elicitation/create" => "ElicitRequest",
            "sampling/createMessage" => "CreateMessageRequest",
            "roots/list" => "ListRootsRequest",
            other => return Err(format!("unexpected legacy message method {other}")),
        };
        let envelope = if m.get("id").is_some() { "JSONRPCRequest" } else { "JSONRPCNotification" };
        validate_def(envelope, m)?;
        return validate_def(def, m);
    }
    if m.get("error").is_some() {
        return validate_def("JSONRPCErrorResponse", m);
    }
    validate_def("JSONRPCResultResponse", m)?;
    let def = result_def(request_method).ok_or_else(|| format!("no result definition for {request_method}"))?;
    validate_def(def, &m["result"])
}
