//! The extension on the wire: its identifier, its methods, and its negotiation through the
//! request's client capabilities.

use crate::error::Error;
use crate::server::request_meta::RequestMeta;
use serde_json::{Value, json};

pub use crate::schema::TASKS_EXTENSION;

/// The three methods of the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskMethod {
    Get,
    Update,
    Cancel,
}

impl TaskMethod {
    pub(crate) fn parse(method: &str) -> Option<TaskMethod> {
        Some(match method {
            "tasks/get" => TaskMethod::Get,
            "tasks/update" => TaskMethod::Update,
            "tasks/cancel" => TaskMethod::Cancel,
            _ => return None,
        })
    }
}

/// Whether the request's client capabilities declare the extension (it is negotiated per
/// request: a client that declared it before but not on this request has not).
pub(crate) fn negotiated(meta: &RequestMeta) -> bool {
    meta.client_capabilities.get("extensions").and_then(|e| e.get(TASKS_EXTENSION)).is_some_and(|v| v.is_object())
}

/// -32021 naming the extension as the missing client capability.
pub(crate) fn required_capability() -> Error {
    let e = Error::missing_capability(json!({ "extensions": { TASKS_EXTENSION: {} } }));
    let message = format!(
        "Missing required client capability: this request needs the {TASKS_EXTENSION} extension, which the request's \
         clientCapabilities.extensions do not declare"
    );
    Error::new(e.kind(), message).with_data(e.data().cloned().unwrap_or(Value::Null))
}

/// `subscriptions/listen` asking for `notifications/tasks` (`notifications.taskIds`) needs
/// the extension declared on the request (-32021 otherwise). This server sends no task status
/// notifications (the extension makes them optional: clients poll `tasks/get`), so its
/// acknowledgement agrees to none of the ids.
pub(crate) fn check_listen(params: Option<&Value>, meta: &RequestMeta) -> Result<(), Error> {
    let asked = params.and_then(|p| p.pointer("/notifications/taskIds")).is_some_and(|v| !v.is_null());
    if asked && !negotiated(meta) { Err(required_capability()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_capability_names_the_extension() {
        let e = required_capability();
        assert_eq!(e.code(), -32021);
        assert_eq!(e.data().unwrap(), &json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }));
    }
}
