//! Resumable response streams of legacy (2025-11-25) Streamable HTTP sessions (SEP-1699).
//!
//! A legacy request answered with SSE gets a stream number; its events carry the ids
//! `<stream>-<seq>`, the first one a priming event with no data. When the handler ends the
//! stream early ([`RequestContext::close_stream`](crate::server::RequestContext::close_stream)),
//! the request is *parked*: a task goes on driving it and keeps its events. The client
//! reconnects with `GET` and `Last-Event-ID: <stream>-<seq>`, gets the events after `seq`,
//! then the live ones until the response. Parked streams belong to their session, are given
//! out until their response was delivered, and are forgotten after [`PARKED_TTL`].

use super::sse;
use crate::server::{Exchange, Outgoing};
use crate::transport::outgoing_bytes;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long a parked stream is kept for its client to come back.
pub(crate) const PARKED_TTL: Duration = Duration::from_secs(300);
/// How many parked streams are kept at most (the oldest go first).
const MAX_PARKED: usize = 4096;

/// One parked request: its events so far, and whether its response is among them.
struct Parked {
    session: String,
    /// Events by sequence number (`events[i]` has the number `first_seq + i`), each with
    /// whether it is the response.
    first_seq: u64,
    events: Mutex<Vec<(Bytes, bool)>>,
    finished: std::sync::atomic::AtomicBool,
    changed: Notify,
    since: Instant,
}

/// The parked streams of one endpoint.
#[derive(Default)]
pub(crate) struct ResumableStreams {
    next: AtomicU64,
    parked: Mutex<HashMap<u64, Arc<Parked>>>,
}

/// An SSE event with an id (`<stream>-<seq>`).
pub(crate) fn event(stream: u64, seq: u64, json: &[u8]) -> Bytes {
    sse::message_event(Some(&format!("{stream}-{seq}")), json)
}

/// The priming event that opens a resumable stream: an id, the reconnection delay, no data.
pub(crate) fn priming(stream: u64, retry: Duration) -> Bytes {
    sse::priming_event(&format!("{stream}-0"), retry)
}

/// Whether an event id has the form of this module's ids (`<stream>-<seq>`).
pub(crate) fn is_stream_event_id(id: &str) -> bool {
    id.trim().split_once('-').is_some_and(|(a, b)| a.parse::<u64>().is_ok() && b.parse::<u64>().is_ok())
}

impl ResumableStreams {
    /// A new stream number.
    pub fn open(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Parks the rest of `exchange`, whose next event is number `next_seq` of `stream`.
    pub fn park(self: &Arc<Self>, session: &str, stream: u64, next_seq: u64, mut exchange: Exchange) {
        let parked = Arc::new(Parked {
            session: session.to_owned(),
            first_seq: next_seq,
            events: Mutex::default(),
            finished: Default::default(),
            changed: Notify::new(),
            since: Instant::now(),
        });
        {
            let mut map = self.parked.lock().unwrap_or_else(|e| e.into_inner());
            map.retain(|_, p| p.since.elapsed() < PARKED_TTL);
            if map.len() >= MAX_PARKED {
                if let Some(oldest) = map.iter().min_by_key(|(_, p)| p.since).map(|(k, _)| *k) {
                    map.remove(&oldest);
                }
            }
            map.insert(stream, parked.clone());
        }
        let this = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut seq = next_seq;
            while let Some(o) = exchange.next().await {
                let last = matches!(o, Outgoing::Response(_));
                let Some(json) = outgoing_bytes(&o) else { continue };
                parked.events.lock().unwrap_or_else(|e| e.into_inner()).push((event(stream, seq, &json), last));
                seq += 1;
                parked.changed.notify_waiters();
                if last {
                    break;
                }
                // Nobody can resume it any more (expired, or the endpoint is gone): stop.
                let alive = this
                    .upgrade()
                    .is_some_and(|s| s.parked.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&stream));
                if !alive {
                    return;
                }
            }
            parked.finished.store(true, Ordering::Release);
            parked.changed.notify_waiters();
        });
    }

    /// The events of a parked stream after `last_event_id` (`<stream>-<seq>`), then its live
    /// ones until the response; `None` when `session` has no such stream.
    pub fn resume(
        self: &Arc<Self>,
        session: &str,
        last_event_id: &str,
    ) -> Option<impl Stream<Item = Bytes> + Send + 'static> {
        let (stream, seq) = last_event_id.trim().split_once('-')?;
        let (stream, seen): (u64, u64) = (stream.parse().ok()?, seq.parse().ok()?);
        let parked = self.parked.lock().unwrap_or_else(|e| e.into_inner()).get(&stream).cloned()?;
        if parked.session != session {
            return None;
        }
        let streams = self.clone();
        // The index of the first event not seen yet.
        let start = (seen + 1).saturating_sub(parked.first_seq) as usize;
        Some(futures_util::stream::unfold((parked, start, false), move |(parked, next, done)| {
            let streams = streams.clone();
            async move {
                if done {
                    return None;
                }
                loop {
                    let ready = {
                        let notified = parked.changed.notified();
                        let ready = parked.events.lock().unwrap_or_else(|e| e.into_inner()).get(next).cloned();
                        if ready.is_none() {
                            if parked.finished.load(Ordering::Acquire) {
                                return None;
                            }
                            notified.await;
                        }
                        ready
                    };
                    if let Some((ev, last)) = ready {
                        if last {
                            // Delivered in full: nothing left to resume.
                            streams.parked.lock().unwrap_or_else(|e| e.into_inner()).remove(&stream);
                        }
                        return Some((ev, (parked, next + 1, last)));
                    }
                }
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{RequestId, Response};
    use serde_json::json;

    #[tokio::test]
    async fn a_parked_stream_resumes_for_its_session_only_once() {
        let streams = Arc::new(ResumableStreams::default());
        let stream = streams.open();
        assert_ne!(stream, streams.open());
        let response = Response::result(RequestId::Number(7), json!({ "content": [] }));
        streams.park("session-a", stream, 3, Exchange::ready(response));
        let id = format!("{stream}-2");
        assert!(streams.resume("session-b", &id).is_none(), "another session's stream");
        assert!(streams.resume("session-a", "nonsense").is_none());
        assert!(streams.resume("session-a", &format!("{}-2", stream + 100)).is_none());
        let events: Vec<Bytes> = streams.resume("session-a", &id).unwrap().collect().await;
        assert_eq!(events.len(), 1);
        let text = String::from_utf8(events[0].to_vec()).unwrap();
        assert!(text.starts_with(&format!("id: {stream}-3\nevent: message\ndata: {{")), "{text}");
        // Delivered in full: it cannot be replayed again.
        assert!(streams.resume("session-a", &id).is_none());
    }

    #[test]
    fn stream_event_ids() {
        assert!(is_stream_event_id("3-0"));
        assert!(is_stream_event_id(" 12-7 "));
        assert!(!is_stream_event_id("abc"));
        assert!(!is_stream_event_id("3-x"));
    }

    #[test]
    fn priming_events_carry_an_id_and_the_delay() {
        assert_eq!(priming(4, Duration::from_millis(500)), Bytes::from_static(b"id: 4-0\nretry: 500\ndata: \n\n"));
    }
}
