//! The core's log events handed to the host's own logging: Python's `logging`, a Node
//! callback, a C callback. A Rust application keeps `tracing` and installs its own
//! subscriber; the bindings call [`set_sink`] instead.
//!
//! The first [`set_sink`] installs a global `tracing` subscriber whose one layer passes the
//! events of the core (targets `mcpaxle…`, levels `DEBUG` and above) to a bounded queue. One
//! thread, `mcpaxle-log`, takes them from it and calls the sink, one record at a time, so a
//! host whose logging is slow (or waits for Python's GIL) never holds up the runtime's
//! workers. When the queue is full, records are dropped and counted; the next record handed
//! over is preceded by a warning saying how many were lost. Without a sink, an event of the
//! core costs one atomic load; other crates' events and `TRACE` ones are never enabled.

use crate::error::{Error, ErrorKind, Result};
use crate::schema::LoggingLevel;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// One log event of the core, as the host's logging gets it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogRecord {
    /// `error`, `warning`, `info` or `debug` (the protocol's log levels, the same names in
    /// every binding).
    pub level: LoggingLevel,
    /// Where in the core it comes from: `mcpaxle::transport::http::server`, ...
    pub target: String,
    /// The message.
    pub message: String,
    /// The event's other fields, by name (values that are not numbers or booleans as text).
    pub fields: Map<String, Value>,
}

/// What receives the core's log records: called on the `mcpaxle-log` thread, one at a time.
pub type LogSink = Box<dyn Fn(LogRecord) + Send + Sync + 'static>;

/// How many records wait for the sink at most; more are dropped (and counted).
const QUEUE: usize = 1024;

struct Forwarder {
    queue: SyncSender<LogRecord>,
    dropped: Arc<AtomicU64>,
}

/// The installed forwarder and the sink its thread calls.
struct Installed {
    sink: Arc<Mutex<Option<LogSink>>>,
}

static INSTALLED: OnceLock<std::result::Result<Installed, String>> = OnceLock::new();
/// Whether a sink is set: the layer does nothing (not even format the message) otherwise.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Hands the core's log records to `sink` (`None`: to nobody again). The first call installs
/// the global `tracing` subscriber; it fails (every call does) when the process already has
/// one, e.g. a Rust application's own: its events then go there.
pub fn set_sink(sink: Option<LogSink>) -> Result<()> {
    let installed = INSTALLED.get_or_init(install).as_ref().map_err(|why| Error::new(ErrorKind::Usage, why.clone()))?;
    let active = sink.is_some();
    *installed.sink.lock().unwrap_or_else(|e| e.into_inner()) = sink;
    ACTIVE.store(active, Ordering::Release);
    Ok(())
}

fn install() -> std::result::Result<Installed, String> {
    let (queue, records) = sync_channel(QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    let subscriber = tracing_subscriber::registry().with(Forwarder { queue, dropped: dropped.clone() });
    tracing::subscriber::set_global_default(subscriber).map_err(|_| {
        "the process already has a global tracing subscriber: the core's log events go to it".to_owned()
    })?;
    let sink: Arc<Mutex<Option<LogSink>>> = Arc::default();
    let held = sink.clone();
    std::thread::Builder::new()
        .name("mcpaxle-log".into())
        .spawn(move || deliver(&records, &dropped, &held))
        .map_err(|e| format!("the log thread could not be started: {e}"))?;
    Ok(Installed { sink })
}

/// The `mcpaxle-log` thread: each record to the sink, after a word on those dropped.
fn deliver(records: &Receiver<LogRecord>, dropped: &AtomicU64, sink: &Mutex<Option<LogSink>>) {
    for record in records {
        let lost = dropped.swap(0, Ordering::AcqRel);
        let sink = sink.lock().unwrap_or_else(|e| e.into_inner());
        let Some(sink) = sink.as_ref() else { continue };
        if lost > 0 {
            call(
                sink,
                LogRecord {
                    level: LoggingLevel::Warning,
                    target: "mcpaxle::host_log".into(),
                    message: format!("{lost} log records were dropped: the application's logging did not keep up"),
                    fields: Map::new(),
                },
            );
        }
        call(sink, record);
    }
}

/// One record to the sink; a sink that panics loses that record, not the thread.
fn call(sink: &LogSink, record: LogRecord) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(record)));
}

fn level_of(level: &Level) -> Option<LoggingLevel> {
    match *level {
        Level::ERROR => Some(LoggingLevel::Error),
        Level::WARN => Some(LoggingLevel::Warning),
        Level::INFO => Some(LoggingLevel::Info),
        Level::DEBUG => Some(LoggingLevel::Debug),
        _ => None,
    }
}

fn is_core(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("mcpaxle") && *metadata.level() <= Level::DEBUG
}

impl<S: Subscriber> Layer<S> for Forwarder {
    /// Other crates' events and `TRACE` are never wanted; the core's are while a sink is set
    /// (asked at each event: a sink comes and goes).
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if is_core(metadata) { Interest::sometimes() } else { Interest::never() }
    }

    fn enabled(&self, metadata: &Metadata<'_>, _: Context<'_, S>) -> bool {
        ACTIVE.load(Ordering::Acquire) && is_core(metadata)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::DEBUG)
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        // `enabled` let only the core's events through, while a sink is set.
        let metadata = event.metadata();
        let Some(level) = level_of(metadata.level()) else { return };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let record =
            LogRecord { level, target: metadata.target().to_owned(), message: fields.message, fields: fields.rest };
        if let Err(TrySendError::Full(_)) = self.queue.try_send(record) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// An event's `message` and its other fields.
#[derive(Default)]
struct Fields {
    message: String,
    rest: Map<String, Value>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.rest.insert(field.name().to_owned(), Value::String(format!("{value:?}")));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            value.clone_into(&mut self.message);
        } else {
            self.rest.insert(field.name().to_owned(), Value::String(value.to_owned()));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.rest.insert(field.name().to_owned(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.rest.insert(field.name().to_owned(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.rest.insert(field.name().to_owned(), value.into());
    }
}
