//! `subscriptions/listen`: change events published on a [`NotificationBus`] reach every open
//! listen stream whose filter asked for them, tagged with the stream's subscription id.

use crate::error::{Error, Result};
use crate::jsonrpc::{Notification, RequestId};
use crate::schema::SUBSCRIPTION_ID_META_KEY;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use tokio::sync::broadcast;

/// A change a server announces to its subscribers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// A resource's content changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
}

impl ServerEvent {
    /// The `*ListChanged` event of a list named as the protocol names it: `"tools"`,
    /// `"prompts"` or `"resources"`. Bindings take the name from their host language.
    ///
    /// The registries announce their own changes; this is for lists that change behind them,
    /// such as the resources a template serves.
    pub fn list_changed(list: &str) -> Result<ServerEvent> {
        match list {
            "tools" => Ok(ServerEvent::ToolsListChanged),
            "prompts" => Ok(ServerEvent::PromptsListChanged),
            "resources" => Ok(ServerEvent::ResourcesListChanged),
            other => Err(Error::usage(format!(
                "unknown list {other:?}: the lists that announce changes are \"tools\", \"prompts\" and \"resources\""
            ))),
        }
    }

    /// The notification announcing this event (without a subscription id).
    pub fn to_notification(&self) -> Notification {
        match self {
            ServerEvent::ToolsListChanged => Notification::new("notifications/tools/list_changed", None),
            ServerEvent::PromptsListChanged => Notification::new("notifications/prompts/list_changed", None),
            ServerEvent::ResourcesListChanged => Notification::new("notifications/resources/list_changed", None),
            ServerEvent::ResourceUpdated { uri } => Notification::new("notifications/resources/updated", Some(json!({ "uri": uri }))),
        }
    }
}

/// Fans server events out to listeners. The default is in-process; a backend over a shared
/// broker lets several server instances announce changes to each other's subscribers.
pub trait NotificationBus: Send + Sync + 'static {
    /// Publishes an event to every current listener.
    fn publish(&self, event: ServerEvent);
    /// A new listener, receiving events published from now on.
    fn subscribe(&self) -> broadcast::Receiver<ServerEvent>;
}

/// The in-process [`NotificationBus`].
#[derive(Debug)]
pub struct LocalBus {
    tx: broadcast::Sender<ServerEvent>,
}

impl LocalBus {
    /// A bus buffering up to `capacity` events per slow listener (a listener that falls further
    /// behind skips the oldest events).
    pub fn new(capacity: usize) -> Self {
        LocalBus { tx: broadcast::channel(capacity.max(1)).0 }
    }
}

impl Default for LocalBus {
    fn default() -> Self {
        LocalBus::new(1024)
    }
}

impl NotificationBus for LocalBus {
    fn publish(&self, event: ServerEvent) {
        let _ = self.tx.send(event);
    }
    fn subscribe(&self) -> broadcast::Receiver<ServerEvent> {
        self.tx.subscribe()
    }
}

/// The accepted filter of one listen stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub resource_uris: BTreeSet<String>,
}

/// What this server can honour, used to trim the requested filter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Supported {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub subscribe: bool,
}

impl Filter {
    /// Reads `params.notifications`, keeping only what the server supports.
    pub fn from_params(params: Option<&Value>, supported: Supported) -> Result<Filter, String> {
        let n = match params.and_then(|p| p.get("notifications")) {
            None | Some(Value::Null) => return Ok(Filter::default()),
            Some(Value::Object(o)) => o,
            Some(_) => return Err("Invalid params: \"notifications\" must be an object".into()),
        };
        let flag = |k: &str| -> Result<bool, String> {
            match n.get(k) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(format!("Invalid params: notifications.{k} must be a boolean")),
            }
        };
        let mut f = Filter {
            tools: flag("toolsListChanged")? && supported.tools,
            prompts: flag("promptsListChanged")? && supported.prompts,
            resources: flag("resourcesListChanged")? && supported.resources,
            resource_uris: BTreeSet::new(),
        };
        match n.get("resourceSubscriptions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(a)) => {
                for u in a {
                    match u.as_str() {
                        Some(s) if supported.subscribe => {
                            f.resource_uris.insert(s.to_owned());
                        }
                        Some(_) => {}
                        None => return Err("Invalid params: notifications.resourceSubscriptions must be an array of URI strings".into()),
                    }
                }
            }
            Some(_) => return Err("Invalid params: notifications.resourceSubscriptions must be an array of URI strings".into()),
        }
        Ok(f)
    }

    /// The filter as the acknowledgment reports it.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if self.tools {
            m.insert("toolsListChanged".into(), Value::Bool(true));
        }
        if self.prompts {
            m.insert("promptsListChanged".into(), Value::Bool(true));
        }
        if self.resources {
            m.insert("resourcesListChanged".into(), Value::Bool(true));
        }
        if !self.resource_uris.is_empty() {
            m.insert("resourceSubscriptions".into(), json!(self.resource_uris));
        }
        Value::Object(m)
    }

    pub fn accepts(&self, e: &ServerEvent) -> bool {
        match e {
            ServerEvent::ToolsListChanged => self.tools,
            ServerEvent::PromptsListChanged => self.prompts,
            ServerEvent::ResourcesListChanged => self.resources,
            ServerEvent::ResourceUpdated { uri } => self.resource_uris.contains(uri),
        }
    }
}

/// Adds the subscription id to a notification's `params._meta`.
pub(crate) fn tag(mut n: Notification, id: &RequestId) -> Notification {
    let params = n.params.get_or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(p) = params {
        let meta = p.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = meta {
            m.insert(SUBSCRIPTION_ID_META_KEY.into(), id.to_value());
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Supported = Supported { tools: true, prompts: true, resources: true, subscribe: true };

    #[test]
    fn list_changed_by_name() {
        assert_eq!(ServerEvent::list_changed("tools").unwrap(), ServerEvent::ToolsListChanged);
        assert_eq!(ServerEvent::list_changed("prompts").unwrap(), ServerEvent::PromptsListChanged);
        assert_eq!(ServerEvent::list_changed("resources").unwrap(), ServerEvent::ResourcesListChanged);
        let err = ServerEvent::list_changed("templates").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Usage);
        assert!(err.message().contains("\"templates\""), "{err}");
    }

    #[test]
    fn filter_trims_to_what_is_supported() {
        let p = json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["a://b"]}});
        let f = Filter::from_params(Some(&p), Supported { prompts: false, subscribe: false, ..ALL }).unwrap();
        assert_eq!(f.to_value(), json!({"toolsListChanged": true}));
        assert!(f.accepts(&ServerEvent::ToolsListChanged));
        assert!(!f.accepts(&ServerEvent::PromptsListChanged));
        let f = Filter::from_params(Some(&p), ALL).unwrap();
        assert!(f.accepts(&ServerEvent::ResourceUpdated { uri: "a://b".into() }));
        assert!(!f.accepts(&ServerEvent::ResourceUpdated { uri: "a://c".into() }));
        assert!(Filter::from_params(Some(&json!({"notifications": {"toolsListChanged": 1}})), ALL).is_err());
    }

    #[test]
    fn tags_notifications() {
        let n = tag(ServerEvent::ResourceUpdated { uri: "x".into() }.to_notification(), &RequestId::Number(4));
        assert_eq!(n.params.unwrap(), json!({"uri": "x", "_meta": {SUBSCRIPTION_ID_META_KEY: 4}}));
    }
}
