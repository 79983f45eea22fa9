//! The core's log events reach a host's sink (its own process: the sink is process-wide):
//! level, target, message and fields; nothing while no sink is set; other crates' events and
//! `TRACE` never; a sink slower than the events loses the excess and is told how many.

use mcpaxle::host_log::{LogRecord, set_sink};
use mcpaxle::schema::LoggingLevel;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn next(records: &Receiver<LogRecord>) -> LogRecord {
    records.recv_timeout(Duration::from_secs(5)).expect("a log record")
}

#[test]
fn the_cores_events_reach_the_sink_and_the_excess_is_counted() {
    tracing::warn!(target: "mcpaxle::before", "no sink yet: nobody gets this");
    let (tx, records) = channel();
    let tx = std::sync::Mutex::new(tx);
    set_sink(Some(Box::new(move |r| {
        let _ = tx.lock().unwrap().send(r);
    })))
    .unwrap();

    tracing::warn!(target: "mcpaxle::transport::http::server", peer = "127.0.0.1:9", busy = true, "closing connection {}", 7);
    tracing::trace!(target: "mcpaxle::transport", "too fine: never forwarded");
    tracing::error!(target: "hyper::proto", "another crate's: never forwarded");
    tracing::debug!(target: "mcpaxle::client", attempts = 3u64, "last");
    let r = next(&records);
    assert_eq!(
        (r.level, r.target.as_str(), r.message.as_str()),
        (LoggingLevel::Warning, "mcpaxle::transport::http::server", "closing connection 7")
    );
    assert_eq!(r.fields.get("peer").and_then(|v| v.as_str()), Some("127.0.0.1:9"));
    assert_eq!(r.fields.get("busy"), Some(&serde_json::json!(true)));
    let r = next(&records);
    assert_eq!((r.level, r.message.as_str()), (LoggingLevel::Debug, "last"));
    assert_eq!(r.fields.get("attempts"), Some(&serde_json::json!(3)));
    assert!(records.recv_timeout(Duration::from_millis(100)).is_err(), "nothing else");

    // A sink that blocks: the queue fills, the rest is dropped, and the sink hears of it.
    let gate = Arc::new(Barrier::new(2));
    let (tx, records) = channel();
    let (tx, held) = (std::sync::Mutex::new(tx), gate.clone());
    let first = std::sync::atomic::AtomicBool::new(true);
    set_sink(Some(Box::new(move |r: LogRecord| {
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            held.wait();
        }
        let _ = tx.lock().unwrap().send(r);
    })))
    .unwrap();
    for i in 0..3000 {
        tracing::info!(target: "mcpaxle::flood", "record {i}");
    }
    gate.wait();
    let mut got = Vec::new();
    while let Ok(r) = records.recv_timeout(Duration::from_millis(300)) {
        got.push(r);
    }
    // Drops before the sink's first call and while it is blocked are told in separate words
    // when the log thread woke up only after the queue had filled: count them all.
    let warnings: Vec<&LogRecord> = got.iter().filter(|r| r.target == "mcpaxle::host_log").collect();
    assert!(!warnings.is_empty(), "a word on the dropped records");
    let lost: u64 = warnings.iter().map(|w| w.message.split(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    let delivered = got.iter().filter(|r| r.target == "mcpaxle::flood").count() as u64;
    assert_eq!(lost + delivered, 3000, "each record delivered or counted: {warnings:?}");
    assert!(lost > 0 && delivered <= 1025, "{delivered} delivered");

    // No sink: nothing.
    set_sink(None).unwrap();
    tracing::error!(target: "mcpaxle::after", "nobody gets this either");
    assert!(records.recv_timeout(Duration::from_millis(100)).is_err());
}
