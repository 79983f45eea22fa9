//! Validation against the specification's `schema.json`, for integration tests.
//!
//! Include it with `mod support;` and check what the project emits:
//!
//! ```ignore
//! mod support;
//! support::validate_def("CallToolResult", &value).unwrap();
//! support::validate_server_message(Some("tools/call"), &response).unwrap();
//! ```
//!
//! `schema.json` is read once; each definition's validator is compiled on first use and
//! cached. References never leave the document (the validator is offline), and `format`
//! (`uri`, `uri-template`, ...) is asserted, not just annotated.
//!
//! The spec directory is the copy vendored in the repository, `spec/2026-07-28` at the
//! workspace root (`$CARGO_MANIFEST_DIR/../spec`), or the directory named by `MCPAXLE_SPEC_DIR`.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

/// The protocol revision whose schema the helpers validate against.
pub const REVISION: &str = "2026-07-28";

/// Environment variable naming the spec directory (the one holding `schema.json`).
pub const SPEC_DIR_ENV: &str = "MCPAXLE_SPEC_DIR";

/// How many validation errors a report lists at most.
const MAX_ERRORS_REPORTED: usize = 5;

/// The directory of the spec revision: holds `schema.json` and `examples/`.
///
/// Panics with a message saying where it looked if the spec cannot be found.
pub fn spec_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(find_spec_dir)
}

fn find_spec_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(SPEC_DIR_ENV) {
        let dir = PathBuf::from(dir);
        assert!(dir.join("schema.json").is_file(), "{SPEC_DIR_ENV}={} does not hold a schema.json", dir.display());
        return dir;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("spec").join(REVISION);
    assert!(
        dir.join("schema.json").is_file(),
        "the MCP spec {REVISION} was not found: no schema.json in {}, the copy vendored in the repository; \
         set {SPEC_DIR_ENV} to the directory holding schema.json to use another copy",
        dir.display()
    );
    dir
}

/// The directory of the spec's examples, one subdirectory per type name.
pub fn examples_dir() -> PathBuf {
    spec_dir().join("examples")
}

/// The parsed `schema.json`.
pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = spec_dir().join("schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
    })
}

/// Whether `schema.json` defines `def_name` under `$defs`.
pub fn has_def(def_name: &str) -> bool {
    schema()["$defs"].get(def_name).is_some()
}

fn validator(def_name: &str) -> Result<Arc<jsonschema::Validator>, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(def_name) {
        return Ok(Arc::clone(v));
    }
    if !has_def(def_name) {
        return Err(format!("schema.json ({REVISION}) has no definition named {def_name:?}"));
    }
    // A document holding every definition, whose root is a reference to the one wanted.
    let root = json!({
        "$schema": schema()["$schema"],
        "$defs": schema()["$defs"],
        "$ref": format!("#/$defs/{def_name}"),
    });
    let compiled = jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .build(&root)
        .map_err(|e| format!("cannot compile the schema of {def_name}: {e}"))?;
    let compiled = Arc::new(compiled);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(def_name.to_owned(), Arc::clone(&compiled));
    Ok(compiled)
}

/// Validates `value` against `#/$defs/<def_name>` of `schema.json`.
///
/// The error lists the first few violations with their locations in `value`.
pub fn validate_def(def_name: &str, value: &Value) -> Result<(), String> {
    let validator = validator(def_name)?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("at {:?}: {}", if at.is_empty() { "/" } else { at.as_str() }, shorten(&e.to_string()))
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    let shown = errors.len().min(MAX_ERRORS_REPORTED);
    let more = if errors.len() > shown { format!(" (and {} more)", errors.len() - shown) } else { String::new() };
    Err(format!("not a valid {def_name}: {}{more}", errors[..shown].join("; ")))
}

/// How many characters of one violation a report shows (messages can quote the whole
/// offending value).
const MAX_ERROR_CHARS: usize = 400;

fn shorten(message: &str) -> String {
    match message.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => format!("{}...", &message[..cut]),
        None => message.to_owned(),
    }
}

/// The result definition of a response to a client request of `method`; `input_required`
/// selects `InputRequiredResult` for the methods whose responses may carry one.
pub fn result_def_for(method: &str, input_required: bool) -> Option<&'static str> {
    Some(match method {
        "tools/call" | "prompts/get" | "resources/read" if input_required => "InputRequiredResult",
        "tools/call" => "CallToolResult",
        "tools/list" => "ListToolsResult",
        "server/discover" => "DiscoverResult",
        "resources/read" => "ReadResourceResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "prompts/get" => "GetPromptResult",
        "prompts/list" => "ListPromptsResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => return None,
    })
}

/// The notification definition (a whole JSON-RPC notification) of a server notification
/// method.
pub fn server_notification_def_for(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        _ => return None,
    })
}

/// The request definition (a whole JSON-RPC request) of a client request method.
pub fn client_request_def_for(method: &str) -> Option<&'static str> {
    Some(match method {
        "server/discover" => "DiscoverRequest",
        "tools/call" => "CallToolRequest",
        "tools/list" => "ListToolsRequest",
        "resources/read" => "ReadResourceRequest",
        "resources/list" => "ListResourcesRequest",
        "resources/templates/list" => "ListResourceTemplatesRequest",
        "prompts/get" => "GetPromptRequest",
        "prompts/list" => "ListPromptsRequest",
        "completion/complete" => "CompleteRequest",
        "subscriptions/listen" => "SubscriptionsListenRequest",
        _ => return None,
    })
}

/// The error definition of a JSON-RPC error code: the whole response for the MCP codes,
/// the error object for the standard ones.
fn error_def_for(code: i64) -> Option<(&'static str, bool)> {
    Some(match code {
        -32020 => ("HeaderMismatchError", true),
        -32021 => ("MissingRequiredClientCapabilityError", true),
        -32022 => ("UnsupportedProtocolVersionError", true),
        -32700 => ("ParseError", false),
        -32600 => ("InvalidRequestError", false),
        -32601 => ("MethodNotFoundError", false),
        -32602 => ("InvalidParamsError", false),
        -32603 => ("InternalError", false),
        _ => return None,
    })
}

/// Validates a message a server sent.
///
/// * A response (`result` or `error`) is checked as a `JSONRPCResultResponse` or
///   `JSONRPCErrorResponse`; a result also as the result type of `method_of_request` (the
///   method of the request it answers; `InputRequiredResult` when `resultType` is
///   `"input_required"` and the method allows it); an error with a code the spec defines
///   also as that error.
/// * A notification is checked as the notification type of its method.
///
/// Unknown methods, requests (servers of this revision send none) and responses without
/// `method_of_request` are errors.
pub fn validate_server_message(method_of_request: Option<&str>, message: &Value) -> Result<(), String> {
    let Some(obj) = message.as_object() else {
        return Err(format!("a JSON-RPC message must be an object, not {message}"));
    };
    if obj.contains_key("error") && obj.contains_key("result") {
        return Err("a response must not have both \"result\" and \"error\"".to_owned());
    }
    if obj.contains_key("error") {
        validate_def("JSONRPCErrorResponse", message)?;
        return match message["error"]["code"].as_i64().and_then(error_def_for) {
            Some((def, true)) => validate_def(def, message),
            Some((def, false)) => validate_def(def, &message["error"]),
            None => Ok(()),
        };
    }
    if let Some(result) = obj.get("result") {
        validate_def("JSONRPCResultResponse", message)?;
        let Some(method) = method_of_request else {
            return Err("a result response can only be checked knowing the method of its request".to_owned());
        };
        let input_required = result.get("resultType").and_then(Value::as_str) == Some("input_required");
        let Some(def) = result_def_for(method, input_required) else {
            return Err(format!("unknown method {method:?}: no result type of {REVISION} answers it"));
        };
        return validate_def(def, result).map_err(|e| format!("result of {method}: {e}"));
    }
    match obj.get("method").and_then(Value::as_str) {
        Some(method) if obj.contains_key("id") => Err(format!(
            "the server sent a request ({method}); servers of {REVISION} send none (they ask for input with an \
             InputRequiredResult)"
        )),
        Some(method) => match server_notification_def_for(method) {
            Some(def) => validate_def(def, message),
            None => Err(format!("unknown method {method:?}: not a server notification of {REVISION}")),
        },
        None => Err(format!("neither a response nor a notification: {message}")),
    }
}

/// Validates a message a client sent: a request as the request type of its method, a
/// notification as `CancelledNotification`.
pub fn validate_client_message(message: &Value) -> Result<(), String> {
    let method = message.get("method").and_then(Value::as_str);
    match (method, message.get("id").is_some()) {
        (Some(method), true) => match client_request_def_for(method) {
            Some(def) => validate_def(def, message),
            None => Err(format!("unknown method {method:?}: not a client request of {REVISION}")),
        },
        (Some("notifications/cancelled"), false) => validate_def("CancelledNotification", message),
        (Some(method), false) => Err(format!("unknown method {method:?}: not a client notification of {REVISION}")),
        (None, _) => Err(format!("neither a request nor a notification: {message}")),
    }
}

/// Validation against the legacy 2025-11-25 schema.
pub mod legacy;
pub mod raw_http;
