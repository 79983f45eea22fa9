//! `subscriptions/listen`: change events published on a [`NotificationBus`] reach every open
//! listen stream whose filter asked for them, tagged with the stream's subscription id. A
//! stream that reads slowly loses nothing: what it has not read yet is coalesced
//! ([`EventQueue`]).

use crate::error::{Error, Result};
use crate::jsonrpc::{Notification, RequestId};
use crate::schema::SUBSCRIPTION_ID_META_KEY;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::Arc;

/// A change a server announces to its subscribers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// A task of the Tasks extension changed (`notifications/tasks`). The event names the task
    /// only: a listen stream sends the task's state as the store holds it when the notification
    /// is written (the `DetailedTask` that `tasks/get` would answer then), so a slow reader
    /// gets the newest state, once.
    TaskStatus {
        /// The task's id.
        task_id: String,
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
            ServerEvent::ResourceUpdated { uri } => {
                Notification::new("notifications/resources/updated", Some(json!({ "uri": uri })))
            }
            // What a fleet's bus carries; a listen stream sends the whole task instead.
            ServerEvent::TaskStatus { task_id } => {
                Notification::new("notifications/tasks", Some(json!({ "taskId": task_id })))
            }
        }
    }
}

/// Fans server events out to listeners. The default is in-process; a backend over a shared
/// broker lets several server instances announce changes to each other's subscribers (it
/// publishes to the broker, and hands what the broker delivers to its local listeners, for
/// instance through a [`LocalBus`] of its own).
///
/// Nothing is lost for a slow listener: each one owns an [`EventQueue`] that coalesces what it
/// has not read yet (one pending `list_changed` per list, one pending `resources/updated` per
/// URI), so its memory is bounded by how many distinct things changed, not by how often.
pub trait NotificationBus: Send + Sync + 'static {
    /// Publishes an event to every current listener.
    fn publish(&self, event: ServerEvent);
    /// Adds a listener, which receives every event published from now on (that its filter
    /// accepts) until its [`EventQueue`] is dropped ([`EventSink::push`] then returns false
    /// and the bus forgets it).
    fn subscribe(&self, sink: EventSink);
    /// Starts what the bus runs in the background (connections to a broker), if anything; the
    /// server transports call it when they start serving, on the tokio runtime. Default: nothing.
    fn start(&self) {}
    /// A listener's stream ended and its [`EventQueue`] was dropped: a bus that keeps sinks
    /// until a publish finds them closed forgets them now, or a server that publishes nothing
    /// would keep one sink for every stream ever opened. Default: nothing.
    fn listener_left(&self) {}
}

/// Held by a listener's stream: when the stream ends or is dropped (after its queue), tells the
/// bus ([`NotificationBus::listener_left`]).
pub(crate) struct ListenerLeft(pub(crate) Arc<dyn NotificationBus>);

impl Drop for ListenerLeft {
    fn drop(&mut self) {
        self.0.listener_left();
    }
}

/// The in-process [`NotificationBus`]. Publishing costs one push per listener and never waits.
#[derive(Default)]
pub struct LocalBus {
    sinks: std::sync::Mutex<Sinks>,
}

#[derive(Default)]
struct Sinks {
    all: Vec<EventSink>,
    /// Listeners that left since closed sinks were last dropped.
    left: usize,
}

impl Sinks {
    /// Drops the closed sinks once as many listeners left as are still listed by half (each
    /// sink is looked at O(1) times per leave), and the list's spare room with them.
    fn forget_closed(&mut self) {
        if self.left * 2 < self.all.len() {
            return;
        }
        self.left = 0;
        self.all.retain(|s| !s.is_closed());
        if self.all.capacity() > 2 * self.all.len().max(4) {
            self.all.shrink_to(self.all.len() * 2);
        }
    }
}

impl LocalBus {
    /// An empty bus.
    pub fn new() -> Self {
        LocalBus::default()
    }

    /// How many listeners are attached (a listener whose queue was dropped is counted until
    /// the next publish).
    pub fn listeners(&self) -> usize {
        self.lock().all.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sinks> {
        self.sinks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBus").field("listeners", &self.listeners()).finish()
    }
}

impl NotificationBus for LocalBus {
    fn publish(&self, event: ServerEvent) {
        self.lock().all.retain(|s| s.push(&event));
    }
    fn subscribe(&self, sink: EventSink) {
        self.lock().all.push(sink);
    }
    fn listener_left(&self) {
        let mut sinks = self.lock();
        sinks.left += 1;
        sinks.forget_closed();
    }
}

/// Which events a listener wants; checked when an event is pushed, so that nothing else is
/// ever queued for it. It runs inside [`NotificationBus::publish`]: it must be quick and must
/// not publish.
pub type EventFilter = Box<dyn Fn(&ServerEvent) -> bool + Send + Sync>;

/// A listener's queue of events not read yet, coalesced: an event already pending is not
/// queued again, so the queue never holds more than one entry per list and per URI. Events
/// come out in the order they first became pending.
///
/// Made with [`event_queue`]: the [`EventSink`] goes to a [`NotificationBus`], the queue stays
/// with the stream that reads it.
pub struct EventQueue {
    shared: Arc<Shared>,
}

/// The bus's end of an [`EventQueue`].
pub struct EventSink {
    shared: Arc<Shared>,
    filter: EventFilter,
}

struct Shared {
    pending: std::sync::Mutex<Pending>,
    wake: tokio::sync::Notify,
}

#[derive(Default)]
struct Pending {
    order: VecDeque<ServerEvent>,
    queued: HashSet<ServerEvent>,
    /// The sink was dropped: nothing more will come.
    sink_gone: bool,
    /// The queue was dropped: nobody reads any more.
    reader_gone: bool,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A new coalescing queue with its sink; `filter` chooses the events it keeps.
pub fn event_queue(filter: impl Fn(&ServerEvent) -> bool + Send + Sync + 'static) -> (EventSink, EventQueue) {
    let shared = Arc::new(Shared { pending: Default::default(), wake: tokio::sync::Notify::new() });
    (EventSink { shared: shared.clone(), filter: Box::new(filter) }, EventQueue { shared })
}

impl EventSink {
    /// Queues `event` if the filter accepts it and it is not pending already. Returns false
    /// once the queue was dropped: the bus should then drop this sink.
    pub fn push(&self, event: &ServerEvent) -> bool {
        if !(self.filter)(event) {
            return !self.shared.lock().reader_gone;
        }
        let mut p = self.shared.lock();
        if p.reader_gone {
            return false;
        }
        if !p.queued.contains(event) {
            p.queued.insert(event.clone());
            p.order.push_back(event.clone());
            drop(p);
            self.shared.wake.notify_one();
        }
        true
    }

    /// Whether the queue was dropped.
    pub fn is_closed(&self) -> bool {
        self.shared.lock().reader_gone
    }
}

impl Drop for EventSink {
    fn drop(&mut self) {
        self.shared.lock().sink_gone = true;
        self.shared.wake.notify_one();
    }
}

impl EventQueue {
    /// The next pending event, waiting for one; `None` once the bus dropped the sink and
    /// everything pending was read.
    pub async fn recv(&mut self) -> Option<ServerEvent> {
        loop {
            {
                let mut p = self.shared.lock();
                if let Some(e) = p.order.pop_front() {
                    p.queued.remove(&e);
                    return Some(e);
                }
                if p.sink_gone {
                    return None;
                }
            }
            // A push between the check above and this wait leaves a permit: no lost wake-up.
            self.shared.wake.notified().await;
        }
    }

    /// The next pending event, if there is one now.
    pub fn try_recv(&mut self) -> Option<ServerEvent> {
        let mut p = self.shared.lock();
        let e = p.order.pop_front()?;
        p.queued.remove(&e);
        Some(e)
    }

    /// How many events are pending (at most one per list and per URI).
    pub fn len(&self) -> usize {
        self.shared.lock().order.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for EventQueue {
    fn drop(&mut self) {
        let mut p = self.shared.lock();
        p.reader_gone = true;
        // Their memory too, not only their entries: the sink may outlive the queue a while.
        p.order = VecDeque::new();
        p.queued = HashSet::new();
    }
}

impl std::fmt::Debug for EventQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventQueue").field("pending", &self.len()).finish()
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink").field("closed", &self.is_closed()).finish()
    }
}

/// The accepted filter of one listen stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub resource_uris: BTreeSet<String>,
    /// The tasks whose `notifications/tasks` were asked for (`taskIds`); the stream agrees to
    /// those its caller may read.
    pub task_ids: BTreeSet<String>,
}

/// The most task ids one listen stream may ask for (a request naming more is refused).
pub(crate) const MAX_LISTEN_TASK_IDS: usize = 1000;

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
            task_ids: BTreeSet::new(),
        };
        match n.get("taskIds") {
            None | Some(Value::Null) => {}
            Some(Value::Array(a)) if a.len() > MAX_LISTEN_TASK_IDS => {
                return Err(format!(
                    "Invalid params: notifications.taskIds names {} tasks; one listen stream may follow at most \
                     {MAX_LISTEN_TASK_IDS}",
                    a.len()
                ));
            }
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
                f.task_ids = a.iter().filter_map(Value::as_str).map(str::to_owned).collect();
            }
            Some(_) => return Err("Invalid params: notifications.taskIds must be an array of task id strings".into()),
        }
        match n.get("resourceSubscriptions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(a)) => {
                for u in a {
                    match u.as_str() {
                        Some(s) if supported.subscribe => {
                            f.resource_uris.insert(s.to_owned());
                        }
                        Some(_) => {}
                        None => {
                            return Err(
                                "Invalid params: notifications.resourceSubscriptions must be an array of URI strings"
                                    .into(),
                            );
                        }
                    }
                }
            }
            Some(_) => {
                return Err(
                    "Invalid params: notifications.resourceSubscriptions must be an array of URI strings".into()
                );
            }
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
        if !self.task_ids.is_empty() {
            m.insert("taskIds".into(), json!(self.task_ids));
        }
        Value::Object(m)
    }

    pub fn accepts(&self, e: &ServerEvent) -> bool {
        match e {
            ServerEvent::ToolsListChanged => self.tools,
            ServerEvent::PromptsListChanged => self.prompts,
            ServerEvent::ResourcesListChanged => self.resources,
            ServerEvent::ResourceUpdated { uri } => self.resource_uris.contains(uri),
            ServerEvent::TaskStatus { task_id } => self.task_ids.contains(task_id),
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

    /// The workload of the slow-reader tests: 20,000 events, most of them repeats (10 hot
    /// URIs and the three lists), with 1,400 URIs that change exactly once, spread through it.
    fn workload() -> Vec<ServerEvent> {
        (0..20_000u32)
            .map(|i| match i % 100 {
                0 => ServerEvent::ToolsListChanged,
                33 => ServerEvent::PromptsListChanged,
                66 => ServerEvent::ResourcesListChanged,
                n if n % 11 == 0 => ServerEvent::ResourceUpdated { uri: format!("once://{i}") },
                n => ServerEvent::ResourceUpdated { uri: format!("hot://{}", n % 10) },
            })
            .collect()
    }

    #[test]
    fn stalled_readers_learn_every_change_in_memory_bounded_by_distinct_changes() {
        let bus = LocalBus::new();
        let mut readers: Vec<EventQueue> = (0..50)
            .map(|_| {
                let (sink, queue) = event_queue(|_| true);
                bus.subscribe(sink);
                queue
            })
            .collect();
        let events = workload();
        let distinct: HashSet<ServerEvent> = events.iter().cloned().collect();
        assert_eq!(distinct.len(), 3 + 10 + 1400);
        for e in events {
            bus.publish(e);
        }
        for r in &mut readers {
            assert_eq!(r.len(), distinct.len(), "one entry per changed list and URI, however often it changed");
            let mut seen = HashSet::new();
            while let Some(e) = r.try_recv() {
                assert!(seen.insert(e), "nothing is delivered twice from one backlog");
            }
            assert_eq!(seen, distinct);
        }
        // Read, the same change is queued again.
        bus.publish(ServerEvent::ToolsListChanged);
        assert_eq!(readers[0].try_recv(), Some(ServerEvent::ToolsListChanged));
    }

    #[test]
    fn queues_keep_first_change_order_and_only_what_the_filter_accepts() {
        let bus = LocalBus::new();
        let (sink, mut q) = event_queue(|e| !matches!(e, ServerEvent::PromptsListChanged));
        bus.subscribe(sink);
        for e in [
            ServerEvent::ResourceUpdated { uri: "a".into() },
            ServerEvent::PromptsListChanged,
            ServerEvent::ToolsListChanged,
            ServerEvent::ResourceUpdated { uri: "a".into() },
        ] {
            bus.publish(e);
        }
        assert_eq!(q.try_recv(), Some(ServerEvent::ResourceUpdated { uri: "a".into() }));
        assert_eq!(q.try_recv(), Some(ServerEvent::ToolsListChanged));
        assert_eq!(q.try_recv(), None);
    }

    #[test]
    fn a_dropped_queue_leaves_the_bus_and_a_dropped_sink_ends_the_queue() {
        let bus = LocalBus::new();
        let (sink, q) = event_queue(|_| true);
        bus.subscribe(sink);
        assert_eq!(bus.listeners(), 1);
        drop(q);
        bus.publish(ServerEvent::ToolsListChanged);
        assert_eq!(bus.listeners(), 0);

        let (sink, mut q) = event_queue(|_| true);
        sink.push(&ServerEvent::ToolsListChanged);
        drop(sink);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(rt.block_on(q.recv()), Some(ServerEvent::ToolsListChanged), "what was pending is still read");
        assert_eq!(rt.block_on(q.recv()), None);
    }

    #[test]
    fn listeners_that_left_are_forgotten_without_a_publish() {
        let bus = LocalBus::new();
        // Streams come and go and nothing is ever published: the list stays about as long as
        // the streams open at once, not as all the streams ever opened.
        let mut open = Vec::new();
        for round in 0..100 {
            for _ in 0..50 {
                let (sink, queue) = event_queue(|_| true);
                bus.subscribe(sink);
                open.push(queue);
            }
            for queue in open.drain(..) {
                drop(queue);
                bus.listener_left();
            }
            assert!(bus.listeners() <= 50, "round {round}: {} sinks listed", bus.listeners());
        }
        assert!(bus.listeners() <= 1, "{} sinks listed after every stream left", bus.listeners());
        assert!(bus.lock().all.capacity() <= 8, "the list's spare room goes too");
        // A listener still there keeps hearing.
        let (sink, mut queue) = event_queue(|_| true);
        bus.subscribe(sink);
        bus.listener_left(); // someone else's stream
        bus.publish(ServerEvent::list_changed("tools").unwrap());
        assert!(queue.try_recv().is_some());
    }

    #[tokio::test]
    async fn recv_wakes_on_a_push_from_another_thread() {
        let (sink, mut q) = event_queue(|_| true);
        let t = std::thread::spawn(move || {
            sink.push(&ServerEvent::ResourceUpdated { uri: "x".into() });
            sink
        });
        let e = tokio::time::timeout(std::time::Duration::from_secs(5), q.recv()).await.unwrap();
        assert_eq!(e, Some(ServerEvent::ResourceUpdated { uri: "x".into() }));
        drop(t.join().unwrap());
    }

    #[test]
    fn tags_notifications() {
        let n = tag(ServerEvent::ResourceUpdated { uri: "x".into() }.to_notification(), &RequestId::Number(4));
        assert_eq!(n.params.unwrap(), json!({"uri": "x", "_meta": {SUBSCRIPTION_ID_META_KEY: 4}}));
    }
}
