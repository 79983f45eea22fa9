//! The notification bus of a fleet: every instance publishes the changes it announces to a
//! Redis pub/sub channel and hands what the channel delivers from the other instances to its
//! own listen streams. Delivery to local listeners never waits for Redis: when Redis is down
//! the server keeps serving and announcing locally, the bus reconnects with backoff and says
//! so in the log, and once back it tells every local listener that it may have missed changes
//! (a `list_changed` for each list it watches) rather than leaving it silent.

use super::seal::fill_random;
use super::subscriptions::{EventQueue, EventSink, LocalBus, NotificationBus, ServerEvent, event_queue};
use crate::error::{Error, Result};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The channel instances share when none is named.
pub const DEFAULT_CHANNEL: &str = "mcpaxle:events";

/// How long one attempt to reach Redis may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The first and the longest wait between attempts to reach Redis.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Which notification bus a server uses (server option `bus`): a Redis URL
/// (`"redis://host:6379/0"`, `"redis://:password@host/0"`, `"redis+unix:///run/redis.sock"`),
/// or an object `{"url": ..., "channel": ...}` naming the pub/sub channel too (default
/// `mcpaxle:events`; instances share changes when they share the Redis and the channel). Absent:
/// the in-process bus. The URL is checked when the options are read or made (a `BusOptions` is
/// always valid); Redis itself need not be up then.
#[derive(Clone, PartialEq, Eq)]
pub struct BusOptions {
    url: String,
    channel: String,
}

impl std::fmt::Debug for BusOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusOptions").field("url", &redacted(&self.url)).field("channel", &self.channel).finish()
    }
}

impl BusOptions {
    /// A bus on `url` with the default channel.
    ///
    /// # Errors
    /// A usage error if `url` is not a `redis://`, `redis+unix://` or `unix://` URL that
    /// Redis' client accepts.
    pub fn redis(url: impl Into<String>) -> Result<BusOptions> {
        BusOptions::checked(url.into(), DEFAULT_CHANNEL.into())
    }

    /// The same bus on another pub/sub channel.
    ///
    /// # Errors
    /// A usage error if `channel` is empty.
    pub fn with_channel(self, channel: impl Into<String>) -> Result<BusOptions> {
        BusOptions::checked(self.url, channel.into())
    }

    /// The Redis URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The pub/sub channel.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    fn checked(url: String, channel: String) -> Result<BusOptions> {
        let options = BusOptions { url, channel };
        options.validate()?;
        Ok(options)
    }

    fn validate(&self) -> Result<()> {
        let scheme = self.url.split_once("://").map(|(s, _)| s);
        match scheme {
            Some("redis" | "redis+unix" | "unix") => {}
            Some("rediss") => {
                return Err(Error::usage(format!(
                    "{}: TLS to Redis (rediss://) is not built in; reach Redis over a TLS tunnel or a private network with redis://",
                    redacted(&self.url)
                )));
            }
            _ => {
                return Err(Error::usage(format!(
                    "{:?} is not a Redis URL: expected redis://host:port/db (or redis+unix:///path)",
                    redacted(&self.url)
                )));
            }
        }
        redis::Client::open(self.url.as_str())
            .map_err(|e| Error::usage(format!("{} is not a valid Redis URL: {e}", redacted(&self.url))))?;
        if self.channel.is_empty() {
            return Err(Error::usage("the channel must not be empty"));
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for BusOptions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Object {
            url: String,
            #[serde(default)]
            channel: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a Redis URL or an object {\"url\": ..., \"channel\": ...}")]
        enum Either {
            Url(String),
            Object(Object),
        }
        let (url, channel) = match Either::deserialize(d)? {
            Either::Url(url) => (url, None),
            Either::Object(o) => (o.url, o.channel),
        };
        BusOptions::checked(url, channel.unwrap_or_else(|| DEFAULT_CHANNEL.into())).map_err(serde::de::Error::custom)
    }
}

/// A URL with its password (or user and password) replaced by `***`, for logs and errors.
pub(crate) fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***{}", &url[..s + 3], &url[at..]),
        _ => url.to_owned(),
    }
}

/// A [`NotificationBus`] shared by every instance of a fleet through Redis pub/sub.
///
/// Local listeners get every event at once, whatever Redis does; what is published also goes
/// to Redis (coalesced while Redis is unreachable: one pending event per list and per URI),
/// and what other instances publish comes back from it. Its two connections live in tasks on
/// the tokio runtime, started by the first use inside one (`publish`, `subscribe`, or the
/// server transports' start), and end when the bus is dropped.
pub struct RedisBus {
    local: Arc<LocalBus>,
    options: BusOptions,
    /// What the connection tasks get (this process's id on the channel included).
    link: Link,
    outbound: EventSink,
    /// The outbound queue, until the publishing task takes it.
    pending: Mutex<Option<EventQueue>>,
    started: AtomicBool,
    connected: Arc<AtomicBool>,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus")
            .field("options", &self.options)
            .field("connected", &self.is_connected())
            .field("listeners", &self.local.listeners())
            .finish()
    }
}

impl RedisBus {
    /// A bus with `options`. Nothing connects until the bus is first used on a tokio runtime.
    pub fn new(options: BusOptions) -> Arc<RedisBus> {
        let mut id = [0u8; 8];
        fill_random(&mut id);
        let link = Link {
            // Opening a client only reads the URL, which `BusOptions` has checked.
            client: redis::Client::open(options.url.as_str()).expect("a BusOptions URL is valid"),
            channel: options.channel.clone(),
            instance: id.iter().map(|b| format!("{b:02x}")).collect(),
            shown: redacted(&options.url),
            stop: CancellationToken::new(),
        };
        let (outbound, pending) = event_queue(|_| true);
        Arc::new(RedisBus {
            local: Arc::new(LocalBus::new()),
            options,
            link,
            outbound,
            pending: Mutex::new(Some(pending)),
            started: AtomicBool::new(false),
            connected: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Whether the bus is subscribed to its channel right now.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }
}

impl Drop for RedisBus {
    fn drop(&mut self) {
        self.link.stop.cancel();
    }
}

impl NotificationBus for RedisBus {
    fn publish(&self, event: ServerEvent) {
        self.local.publish(event.clone());
        self.outbound.push(&event);
        self.start();
    }

    fn subscribe(&self, sink: EventSink) {
        self.local.subscribe(sink);
        self.start();
    }

    fn listener_left(&self) {
        self.local.listener_left();
    }

    /// Starts the connections if not yet started and a tokio runtime is current: a read of
    /// one flag once started (every request of the transports calls it).
    fn start(&self) {
        if self.started.load(Ordering::Acquire) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(pending) = self.pending.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
        runtime.spawn(self.link.clone().publish(pending));
        runtime.spawn(self.link.clone().listen(Arc::downgrade(&self.local), self.connected.clone()));
    }
}

/// What both connection tasks know.
#[derive(Clone)]
struct Link {
    client: redis::Client,
    channel: String,
    instance: String,
    /// The URL as logs show it.
    shown: String,
    stop: CancellationToken,
}

impl Link {
    /// Sends what this instance publishes, one message per event, reconnecting as needed;
    /// events wait (coalesced) while Redis is unreachable.
    async fn publish(self, mut pending: EventQueue) {
        let mut connection = None;
        let mut backoff = Backoff::default();
        loop {
            let event = tokio::select! {
                _ = self.stop.cancelled() => return,
                e = pending.recv() => match e { Some(e) => e, None => return },
            };
            let payload = json!({ "from": self.instance, "event": event.to_notification() }).to_string();
            loop {
                if connection.is_none() {
                    match tokio::time::timeout(CONNECT_TIMEOUT, self.client.get_multiplexed_async_connection()).await {
                        Ok(Ok(c)) => connection = Some(c),
                        Ok(Err(e)) => tracing::debug!("bus: publishing to {}: {e}", self.shown),
                        Err(_) => {
                            tracing::debug!("bus: publishing to {}: no answer in {CONNECT_TIMEOUT:?}", self.shown)
                        }
                    }
                }
                if let Some(c) = connection.as_mut() {
                    let sent: redis::RedisResult<i64> =
                        redis::cmd("PUBLISH").arg(&self.channel).arg(&payload).query_async(c).await;
                    match sent {
                        Ok(_) => {
                            backoff = Backoff::default();
                            break;
                        }
                        Err(e) => {
                            tracing::debug!("bus: publishing to {}: {e}", self.shown);
                            connection = None;
                        }
                    }
                }
                if !backoff.wait(&self.stop).await {
                    return;
                }
            }
        }
    }

    /// Subscribes to the channel and hands other instances' events to the local listeners;
    /// on a lost connection, logs, retries with backoff, and once subscribed again tells
    /// every local listener that its lists may have changed.
    async fn listen(self, local: Weak<LocalBus>, connected: Arc<AtomicBool>) {
        let mut backoff = Backoff::default();
        let mut lost = false;
        loop {
            let subscribed = tokio::select! {
                _ = self.stop.cancelled() => return,
                s = tokio::time::timeout(CONNECT_TIMEOUT, self.subscribe()) => s,
            };
            match subscribed {
                Ok(Ok(pubsub)) => {
                    connected.store(true, Ordering::Relaxed);
                    backoff = Backoff::default();
                    if lost {
                        tracing::info!(
                            "bus: reconnected to Redis at {}; telling listen streams that their lists may have changed",
                            self.shown
                        );
                        let Some(bus) = local.upgrade() else { return };
                        for event in MAY_HAVE_CHANGED {
                            bus.publish(event);
                        }
                    }
                    lost = true;
                    let mut messages = pubsub.into_on_message();
                    loop {
                        let message = tokio::select! {
                            _ = self.stop.cancelled() => return,
                            m = messages.next() => m,
                        };
                        let Some(message) = message else { break };
                        let Some(bus) = local.upgrade() else { return };
                        match self.decode(message.get_payload_bytes()) {
                            Ok(Some(event)) => bus.publish(event),
                            Ok(None) => {}
                            Err(why) => tracing::warn!("bus: skipped a message on {}: {why}", self.channel),
                        }
                    }
                    connected.store(false, Ordering::Relaxed);
                    tracing::warn!(
                        "bus: lost the connection to Redis at {}; local delivery goes on, reconnecting",
                        self.shown
                    );
                }
                Ok(Err(e)) => {
                    if backoff.first() {
                        tracing::warn!(
                            "bus: cannot reach Redis at {} ({e}); local delivery goes on, retrying",
                            self.shown
                        );
                    }
                    lost = true;
                }
                Err(_) => {
                    if backoff.first() {
                        tracing::warn!(
                            "bus: Redis at {} did not answer in {CONNECT_TIMEOUT:?}; local delivery goes on, retrying",
                            self.shown
                        );
                    }
                    lost = true;
                }
            }
            if !backoff.wait(&self.stop).await {
                return;
            }
        }
    }

    async fn subscribe(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut pubsub = self.client.get_async_pubsub().await?;
        pubsub.subscribe(&self.channel).await?;
        Ok(pubsub)
    }

    /// The event in a message of another instance; `None` for this instance's own.
    fn decode(&self, payload: &[u8]) -> std::result::Result<Option<ServerEvent>, String> {
        let message: Value = serde_json::from_slice(payload).map_err(|e| format!("not JSON ({e})"))?;
        if message["from"].as_str() == Some(self.instance.as_str()) {
            return Ok(None);
        }
        let event = &message["event"];
        match event["method"].as_str() {
            Some("notifications/tools/list_changed") => Ok(Some(ServerEvent::ToolsListChanged)),
            Some("notifications/prompts/list_changed") => Ok(Some(ServerEvent::PromptsListChanged)),
            Some("notifications/resources/list_changed") => Ok(Some(ServerEvent::ResourcesListChanged)),
            Some("notifications/resources/updated") => match event["params"]["uri"].as_str() {
                Some(uri) => Ok(Some(ServerEvent::ResourceUpdated { uri: uri.to_owned() })),
                None => Err("a resources/updated without a uri".into()),
            },
            Some("notifications/tasks") => match event["params"]["taskId"].as_str() {
                Some(id) => Ok(Some(ServerEvent::TaskStatus { task_id: id.to_owned() })),
                None => Err("a notifications/tasks without a taskId".into()),
            },
            _ => Err(format!("an unknown event {event}")),
        }
    }
}

/// What a listener is told after the bus was cut off: each list may have changed.
const MAY_HAVE_CHANGED: [ServerEvent; 3] =
    [ServerEvent::ToolsListChanged, ServerEvent::PromptsListChanged, ServerEvent::ResourcesListChanged];

/// Exponential backoff with jitter between attempts to reach Redis.
struct Backoff {
    next: Duration,
    attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: BACKOFF_FIRST, attempts: 0 }
    }
}

impl Backoff {
    /// Whether no attempt failed since the last success (the failure to log).
    fn first(&self) -> bool {
        self.attempts == 0
    }

    /// Waits before the next attempt; false if the bus was dropped meanwhile.
    async fn wait(&mut self, stop: &CancellationToken) -> bool {
        self.attempts += 1;
        let mut jitter = [0u8; 1];
        fill_random(&mut jitter);
        // 75%..100% of the step, so that instances cut off together do not retry together.
        let delay = self.next.mul_f64(0.75 + f64::from(jitter[0]) / 1020.0);
        self.next = (self.next * 2).min(BACKOFF_MAX);
        tokio::select! {
            _ = stop.cancelled() => false,
            _ = tokio::time::sleep(delay) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_from_a_url_or_an_object() {
        let o: BusOptions = serde_json::from_value(json!("redis://127.0.0.1:6379/0")).unwrap();
        assert_eq!(o, BusOptions { url: "redis://127.0.0.1:6379/0".into(), channel: DEFAULT_CHANNEL.into() });
        let o: BusOptions = serde_json::from_value(json!({ "url": "redis://h/1", "channel": "app:a" })).unwrap();
        assert_eq!(o.channel, "app:a");
        for (bad, says) in [
            (json!("http://h:6379"), "is not a Redis URL"),
            (json!("h:6379"), "is not a Redis URL"),
            (json!("rediss://h:6379"), "TLS"),
            (json!("redis://h:notaport"), "not a valid Redis URL"),
            (json!({ "url": "redis://h", "channel": "" }), "must not be empty"),
            (json!({ "url": "redis://h", "topic": "x" }), "a Redis URL or an object"),
            (json!(6379), "a Redis URL or an object"),
        ] {
            let e = serde_json::from_value::<BusOptions>(bad.clone()).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn passwords_stay_out_of_logs() {
        assert_eq!(redacted("redis://:s3cret@h:6379/0"), "redis://***@h:6379/0");
        assert_eq!(redacted("redis://user:s3cret@h/0"), "redis://***@h/0");
        assert_eq!(redacted("redis://h:6379"), "redis://h:6379");
        let o = BusOptions::redis("redis://:s3cret@h/0").unwrap();
        assert!(!format!("{o:?}").contains("s3cret"));
        let e = BusOptions::redis("rediss://:s3cret@h/0").unwrap_err().to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn messages_of_other_instances_become_events_and_own_ones_are_skipped() {
        let link = Link {
            client: redis::Client::open("redis://127.0.0.1/").unwrap(),
            channel: "c".into(),
            instance: "me".into(),
            shown: String::new(),
            stop: CancellationToken::new(),
        };
        let of = |from: &str, e: ServerEvent| json!({ "from": from, "event": e.to_notification() }).to_string();
        let updated = ServerEvent::ResourceUpdated { uri: "file:///a".into() };
        assert_eq!(link.decode(of("other", updated.clone()).as_bytes()), Ok(Some(updated)));
        assert_eq!(
            link.decode(of("other", ServerEvent::ToolsListChanged).as_bytes()),
            Ok(Some(ServerEvent::ToolsListChanged))
        );
        let task = ServerEvent::TaskStatus { task_id: "t1".into() };
        assert_eq!(link.decode(of("other", task.clone()).as_bytes()), Ok(Some(task)));
        assert_eq!(link.decode(of("me", ServerEvent::ToolsListChanged).as_bytes()), Ok(None));
        assert!(link.decode(b"nope").is_err());
        assert!(link.decode(br#"{"from":"x","event":{"method":"notifications/other"}}"#).is_err());
    }

    #[tokio::test]
    async fn local_listeners_hear_at_once_while_redis_is_unreachable() {
        // Port 1 on loopback: nothing listens there, connecting fails at once.
        let bus = RedisBus::new(BusOptions::redis("redis://127.0.0.1:1/0").unwrap());
        let (sink, mut queue) = event_queue(|_| true);
        bus.subscribe(sink);
        bus.publish(ServerEvent::ToolsListChanged);
        let got = tokio::time::timeout(Duration::from_secs(1), queue.recv()).await.unwrap();
        assert_eq!(got, Some(ServerEvent::ToolsListChanged));
        assert!(!bus.is_connected());
    }
}
