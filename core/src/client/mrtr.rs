//! Answering the server's asks with the registered input handlers: every entry of an
//! `InputRequiredResult`'s `inputRequests` (modern), or a legacy server's own request.

use super::options::{ClientOptions, InputHandler};
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{self, ErrorObject, Request, Response};
use futures_util::future::join_all;
use serde_json::{Map, Value, json};

fn handler_for<'a>(options: &'a ClientOptions, method: &str) -> Option<(&'a InputHandler, &'static str)> {
    match method {
        "elicitation/create" => options.elicitation.as_ref().map(|h| (h, "on_elicitation")),
        "sampling/createMessage" => options.sampling.as_ref().map(|h| (h, "on_sampling")),
        "roots/list" => options.roots.as_ref().map(|h| (h, "on_roots")),
        _ => None,
    }
}

fn registration_hint(method: &str) -> &'static str {
    match method {
        "elicitation/create" => "ClientOptions::on_elicitation",
        "sampling/createMessage" => "ClientOptions::on_sampling",
        "roots/list" => "ClientOptions::on_roots",
        _ => "a handler",
    }
}

/// Answers every input request concurrently; the answers go under the same keys.
///
/// Fails when a request is malformed, asks for a method no handler is registered for, or a
/// handler fails.
pub(crate) async fn answer_input_requests(
    options: &ClientOptions,
    requests: &Map<String, Value>,
) -> Result<Map<String, Value>> {
    let mut calls = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).ok_or_else(|| {
            Error::new(ErrorKind::InvalidParams, format!("the server's input request {key:?} has no \"method\""))
        })?;
        let Some((handler, _)) = handler_for(options, method) else {
            return Err(Error::usage(format!(
                "the server asked for {method} (input request {key:?}), but this client has no handler for it: register one with {}",
                registration_hint(method)
            )));
        };
        let params = request.get("params").cloned().filter(|p| !p.is_null()).unwrap_or_else(|| json!({}));
        let key = key.clone();
        let fut = handler(params);
        calls.push(async move { fut.await.map(|v| (key, v)) });
    }
    let mut answers = Map::new();
    for outcome in join_all(calls).await {
        let (key, value) = outcome?;
        answers.insert(key, value);
    }
    Ok(answers)
}

/// Answers a legacy server's request (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`, `ping`).
pub(crate) async fn answer_server_request(options: &ClientOptions, request: Request) -> Response {
    let id = request.id.clone();
    if request.method == "ping" {
        return Response::result(id, json!({}));
    }
    let Some((handler, _)) = handler_for(options, &request.method) else {
        let e = ErrorObject::new(
            jsonrpc::METHOD_NOT_FOUND,
            format!("Method not found: {} (this client does not offer it)", request.method),
        );
        return Response::error(Some(id), e);
    };
    let params = request.params.filter(|p| !p.is_null()).unwrap_or_else(|| json!({}));
    match handler(params).await {
        Ok(v) => Response::result(id, v),
        Err(e) => {
            let code = if e.kind() == ErrorKind::Remote { jsonrpc::INTERNAL_ERROR } else { e.code() };
            Response::error(Some(id), ErrorObject { code, message: e.message().to_owned(), data: e.data().cloned() })
        }
    }
}

/// Fills `content` with the `default` of every property of an elicitation's
/// `requestedSchema` that the user left out (SEP-1034: clients pre-fill defaults).
///
/// ```
/// use mcpaxle::client::apply_schema_defaults;
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "John Doe"},
///     "age": {"type": "integer", "default": 30}
/// }});
/// let mut content = serde_json::Map::new();
/// content.insert("name".into(), json!("Ada"));
/// apply_schema_defaults(&schema, &mut content);
/// assert_eq!(serde_json::Value::Object(content), json!({"name": "Ada", "age": 30}));
/// ```
pub fn apply_schema_defaults(requested_schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = requested_schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in properties {
        if content.contains_key(name) {
            continue;
        }
        if let Some(default) = property.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
}
