//! [`Exchange`]: the outgoing side of one request: the request-scoped notifications it
//! produces, then its final response. Every transport drives one the same way; dropping it
//! cancels the request (its handler future is dropped and its cancellation token fires).

use crate::jsonrpc::{Notification, Request, RequestId, Response};
use crate::schema::LoggingLevel;
use crate::telemetry::{Ended, ServerSpan};
use futures_util::Stream;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::task::{Context, Poll};
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFutureOwned};

/// One outgoing message of an [`Exchange`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A notification related to the request (progress, log, subscription event).
    Notification(Notification),
    /// A request to the client (legacy 2025-11-25 sessions only: elicitation, sampling,
    /// roots asked by a handler); its response comes back through the session.
    Request(Request),
    /// The final response; nothing follows it.
    Response(Response),
    /// The handler asked to end the response stream now and have the client reconnect after
    /// `retry` ([`RequestContext::close_stream`](super::RequestContext::close_stream)). Only
    /// legacy Streamable HTTP sessions act on it; other transports skip it.
    CloseStream {
        /// How long the client should wait before reconnecting.
        retry: std::time::Duration,
    },
}

/// Resolves to the final response, or to `None` for a stream that ends without one (a
/// legacy session's GET stream, a request the client cancelled).
type ResponseFuture = Pin<Box<dyn Future<Output = Option<Final>> + Send>>;

/// The final response of a running exchange: a response, or a result that is JSON text
/// already (a kept page of a list that went through the middleware chain untouched).
pub(crate) enum Final {
    Response(Response),
    Json(RequestId, Arc<str>),
}

impl From<Response> for Final {
    fn from(r: Response) -> Self {
        Final::Response(r)
    }
}

impl Final {
    /// How the request ended, for its span (a result kept as text is a plain result: only
    /// list pages are).
    fn ended(&self) -> Ended<'_> {
        match self {
            Final::Response(r) => Ended::of_response(r),
            Final::Json(..) => Ended::Result { input_required: false, tool_error: false },
        }
    }

    /// The response as a value: JSON text is parsed (for a reader of the stream).
    fn into_response(self) -> Response {
        match self {
            Final::Response(r) => r,
            Final::Json(id, result) => Response::result(id, parse_result(&result)),
        }
    }
}

/// A result kept as JSON text, as a value. The text was written from values, so it parses.
pub(crate) fn parse_result(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

/// The JSON-RPC response of `id` with `result`, a result already serialized: the bytes to
/// write, with no value built.
fn response_json(id: &RequestId, result: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(result.len() + 48);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id).ok()?;
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    Some(out)
}

/// What [`Exchange::next_wire`] yields: a message, or the final response as JSON bytes when
/// its result was JSON text already.
#[derive(Debug)]
pub enum Wire {
    /// A message as the stream yields it.
    Message(Outgoing),
    /// The final response, serialized; nothing follows it.
    Json(Vec<u8>),
}

/// The stream of outgoing messages for one request.
pub struct Exchange {
    state: State,
    long_lived: bool,
    /// The request's span while telemetry is on: ended with the response, or when the
    /// exchange drops without one.
    span: Option<ServerSpan>,
}

enum State {
    /// Answered at once (with a response, or a result that is JSON text already: a page of
    /// a list); `None` once taken.
    Ready(Option<Final>),
    Running {
        fut: Option<ResponseFuture>,
        rx: OutgoingRx,
        done: Option<Final>,
        abort: Pin<Box<WaitForCancellationFutureOwned>>,
        _cancel_on_drop: DropGuard,
    },
}

impl Exchange {
    /// An exchange that is answered at once.
    pub(crate) fn ready(response: Response) -> Self {
        Exchange { state: State::Ready(Some(Final::Response(response))), long_lived: false, span: None }
    }

    /// An exchange answered at once with `result`, a result already serialized: transports
    /// write it as it is ([`immediate_json`](Self::immediate_json)).
    pub(crate) fn ready_json(id: RequestId, result: Arc<str>) -> Self {
        Exchange { state: State::Ready(Some(Final::Json(id, result))), long_lived: false, span: None }
    }

    /// An exchange driven by a future, with notifications arriving on `rx`. Cancelling
    /// `token` ends the exchange at once without a response (the future is dropped);
    /// dropping the exchange cancels `token`.
    pub(crate) fn running<R: Into<Final>>(
        fut: impl Future<Output = Option<R>> + Send + 'static,
        rx: OutgoingRx,
        token: CancellationToken,
        long_lived: bool,
    ) -> Self {
        let fut: ResponseFuture = Box::pin(async move { fut.await.map(Into::into) });
        let abort = Box::pin(token.clone().cancelled_owned());
        Exchange {
            state: State::Running { fut: Some(fut), rx, done: None, abort, _cancel_on_drop: token.drop_guard() },
            long_lived,
            span: None,
        }
    }

    /// This exchange, ending `span` (the request's, when telemetry is on) as it ends.
    pub(crate) fn observed(mut self, span: Option<ServerSpan>) -> Self {
        self.span = span;
        self
    }

    /// Whether this is a long-lived stream (`subscriptions/listen`): transports send
    /// keep-alives on it.
    pub fn is_long_lived(&self) -> bool {
        self.long_lived
    }

    /// The response, if the exchange was answered without running anything (validation
    /// errors and the like).
    /// An exchange whose result is already JSON text has none: see
    /// [`immediate_json`](Self::immediate_json).
    pub fn immediate(&self) -> Option<&Response> {
        match &self.state {
            State::Ready(Some(Final::Response(r))) => Some(r),
            State::Ready(_) | State::Running { .. } => None,
        }
    }

    /// The response as JSON bytes, if the exchange was answered at once with a result that was
    /// already JSON text (a page of a list, kept serialized until the list changes): the bytes
    /// to write, with no value built or serialized. Read as a stream instead, the exchange
    /// yields the same response parsed.
    pub fn immediate_json(&self) -> Option<Vec<u8>> {
        let State::Ready(Some(Final::Json(id, result))) = &self.state else { return None };
        response_json(id, result)
    }

    /// The next message, like the stream's, except that a final response whose result is JSON
    /// text already (a kept page of a list that passed the middleware chain) comes as the
    /// bytes to write instead of parsed: what a transport that writes messages one by one
    /// reads.
    pub async fn next_wire(&mut self) -> Option<Wire> {
        std::future::poll_fn(|cx| self.poll_wire(cx)).await
    }

    /// The next message, or the final response as it is kept (for the middleware chain's
    /// end, which passes a result kept as text on as text).
    pub(crate) async fn next_step(&mut self) -> Option<Step> {
        std::future::poll_fn(|cx| self.poll_step(cx)).await
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        let Some(span) = self.span.take() else { return };
        span.finish(match &self.state {
            // Answered at once, and written by the transport without reading the stream.
            State::Ready(Some(f)) => f.ended(),
            State::Ready(None) | State::Running { .. } => Ended::Cancelled,
        });
    }
}

impl Stream for Exchange {
    type Item = Outgoing;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Outgoing>> {
        self.get_mut().poll_step(cx).map(|step| {
            step.map(|s| match s {
                Step::Message(o) => o,
                Step::Final(f) => Outgoing::Response(f.into_response()),
            })
        })
    }
}

/// One step of an exchange: a message before the response, or the response.
pub(crate) enum Step {
    Message(Outgoing),
    Final(Final),
}

impl Exchange {
    fn poll_wire(&mut self, cx: &mut Context<'_>) -> Poll<Option<Wire>> {
        self.poll_step(cx).map(|step| match step? {
            Step::Message(o) => Some(Wire::Message(o)),
            Step::Final(Final::Response(r)) => Some(Wire::Message(Outgoing::Response(r))),
            Step::Final(Final::Json(id, result)) => response_json(&id, &result).map(Wire::Json),
        })
    }

    /// The next step; the request's span ends with the response.
    fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<Option<Step>> {
        let next = self.advance(cx);
        if let Poll::Ready(Some(Step::Final(f))) = &next {
            if let Some(span) = self.span.take() {
                span.finish(f.ended());
            }
        }
        next
    }

    fn advance(&mut self, cx: &mut Context<'_>) -> Poll<Option<Step>> {
        let this = self;
        match &mut this.state {
            State::Ready(r) => Poll::Ready(r.take().map(Step::Final)),
            State::Running { fut, rx, done, abort, .. } => {
                if fut.is_some() && abort.as_mut().poll(cx).is_ready() {
                    this.state = State::Ready(None);
                    return Poll::Ready(None);
                }
                if let Some(f) = fut {
                    if let Poll::Ready(Some(o)) = rx.poll_recv(cx) {
                        return Poll::Ready(Some(Step::Message(o)));
                    }
                    match f.as_mut().poll(cx) {
                        Poll::Ready(resp) => {
                            *fut = None;
                            *done = resp;
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }
                // The handler finished: flush what it queued, then the response.
                if let Some(o) = rx.try_recv() {
                    return Poll::Ready(Some(Step::Message(o)));
                }
                Poll::Ready(done.take().map(Step::Final))
            }
        }
    }
}

/// The queue of what a request sends before its response (notifications, requests to a
/// legacy client), filled by its handler without waiting and emptied as the transport writes.
/// While the transport cannot write (a client that does not read), a handler's progress does
/// not pile up: once [`COALESCE_PROGRESS_AFTER`] messages wait, a `notifications/progress`
/// replaces the latest one of the same `progressToken` still queued (the client only needs
/// the latest value), so progress never grows the queue past that. Below it, every progress
/// notification is kept. Log messages (`notifications/message`) past [`MAX_UNREAD_LOGS`]
/// waiting messages are not queued but counted, and one warning in their place says how many
/// were dropped, so a handler logging in a loop cannot grow the queue either, and the loss is
/// not silent.
pub(crate) fn outgoing_channel() -> (OutgoingTx, OutgoingRx) {
    let chan = Arc::new(Mutex::new(Chan {
        queue: VecDeque::new(),
        waker: None,
        receiver_gone: false,
        dropped_logs: 0,
        dropped_level: LoggingLevel::Warning,
    }));
    (OutgoingTx { chan: chan.clone() }, OutgoingRx { chan })
}

/// How many messages may wait in an exchange's queue before unread progress is coalesced.
pub(crate) const COALESCE_PROGRESS_AFTER: usize = 64;

/// How many messages may wait in an exchange's queue before log messages are dropped (and
/// counted in one warning).
pub(crate) const MAX_UNREAD_LOGS: usize = 1024;

/// The logger name of the warning that stands for dropped log messages.
const DROPPED_LOGS_LOGGER: &str = "mcpaxle";

struct Chan {
    queue: VecDeque<Outgoing>,
    waker: Option<Waker>,
    receiver_gone: bool,
    /// Log messages dropped since the warning that counts them was last sent.
    dropped_logs: u64,
    /// The most severe level among them (the warning is sent at least at that level, so a
    /// client that asked for `error` and up still hears of dropped errors).
    dropped_level: LoggingLevel,
}

impl Chan {
    /// Notes that `o` left the queue: once the warning counting dropped logs is sent, the next
    /// drop starts a new count.
    fn sent(&mut self, o: Option<&Outgoing>) {
        if o.is_some_and(is_dropped_logs_warning) {
            self.dropped_logs = 0;
            self.dropped_level = LoggingLevel::Warning;
        }
    }

    /// Counts a dropped log message in the warning at the end of the queue (added if the last
    /// message is not that warning yet).
    fn drop_log(&mut self, dropped: &Outgoing) {
        self.dropped_logs += 1;
        self.dropped_level = self.dropped_level.max(log_level(dropped));
        let warning = dropped_logs_warning(self.dropped_logs, self.dropped_level);
        match self.queue.back_mut() {
            Some(last) if is_dropped_logs_warning(last) => *last = warning,
            _ => self.queue.push_back(warning),
        }
    }
}

/// The warning that stands for `count` dropped log messages, at `level` (warning, or the most
/// severe of them when that is higher: what passed the client's `logging/setLevel` filter).
fn dropped_logs_warning(count: u64, level: LoggingLevel) -> Outgoing {
    let data = format!("{count} log message(s) of this request were dropped: the client did not read them in time");
    Outgoing::Notification(Notification::new(
        "notifications/message",
        Some(serde_json::json!({ "level": level, "logger": DROPPED_LOGS_LOGGER, "data": data })),
    ))
}

/// The level of a log message (debug when it has none that parses).
fn log_level(o: &Outgoing) -> LoggingLevel {
    match o {
        Outgoing::Notification(n) => n
            .params
            .as_ref()
            .and_then(|p| p.get("level"))
            .and_then(|l| serde_json::from_value(l.clone()).ok())
            .unwrap_or(LoggingLevel::Debug),
        _ => LoggingLevel::Debug,
    }
}

fn is_log(o: &Outgoing) -> bool {
    matches!(o, Outgoing::Notification(n) if n.method == "notifications/message")
}

fn is_dropped_logs_warning(o: &Outgoing) -> bool {
    match o {
        Outgoing::Notification(n) if n.method == "notifications/message" => n.params.as_ref().is_some_and(|p| {
            p.get("logger").and_then(serde_json::Value::as_str) == Some(DROPPED_LOGS_LOGGER)
                && p.get("data")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|d| d.contains("were dropped: the client did not read"))
        }),
        _ => false,
    }
}

fn lock(chan: &Mutex<Chan>) -> std::sync::MutexGuard<'_, Chan> {
    chan.lock().unwrap_or_else(|e| e.into_inner())
}

/// The sending end of [`outgoing_channel`]; cheap to clone.
#[derive(Clone)]
pub(crate) struct OutgoingTx {
    chan: Arc<Mutex<Chan>>,
}

/// The exchange is gone: nobody will read what is sent.
#[derive(Debug)]
pub(crate) struct Closed;

impl OutgoingTx {
    /// Queues `o` (coalescing progress, see [`outgoing_channel`]); fails once the exchange is
    /// dropped.
    pub fn send(&self, o: Outgoing) -> Result<(), Closed> {
        let mut c = lock(&self.chan);
        if c.receiver_gone {
            return Err(Closed);
        }
        if c.queue.len() >= COALESCE_PROGRESS_AFTER {
            if let Some(token) = progress_token(&o) {
                if let Some(i) = c.queue.iter().rposition(|q| progress_token(q) == Some(token)) {
                    // The newer value takes the place of the latest older one: order is kept.
                    c.queue[i] = o;
                    return Ok(());
                }
            }
        }
        if c.queue.len() >= MAX_UNREAD_LOGS && is_log(&o) {
            c.drop_log(&o);
            return Ok(());
        }
        c.queue.push_back(o);
        let waker = c.waker.take();
        drop(c);
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }
}

fn progress_token(o: &Outgoing) -> Option<&serde_json::Value> {
    match o {
        Outgoing::Notification(n) if n.method == "notifications/progress" => n.params.as_ref()?.get("progressToken"),
        _ => None,
    }
}

/// The receiving end of [`outgoing_channel`], owned by the [`Exchange`].
pub(crate) struct OutgoingRx {
    chan: Arc<Mutex<Chan>>,
}

impl OutgoingRx {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Outgoing>> {
        let mut c = lock(&self.chan);
        match c.queue.pop_front() {
            Some(o) => {
                c.sent(Some(&o));
                Poll::Ready(Some(o))
            }
            None => {
                c.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    fn try_recv(&mut self) -> Option<Outgoing> {
        let mut c = lock(&self.chan);
        let o = c.queue.pop_front();
        c.sent(o.as_ref());
        o
    }

    /// How many messages are queued.
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.chan).queue.len()
    }
}

impl Drop for OutgoingRx {
    fn drop(&mut self) {
        let mut c = lock(&self.chan);
        c.receiver_gone = true;
        c.queue.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn progress(token: i64, n: i64) -> Outgoing {
        Outgoing::Notification(Notification::new(
            "notifications/progress",
            Some(json!({ "progressToken": token, "progress": n })),
        ))
    }

    #[test]
    fn unread_progress_is_coalesced_past_the_bound_and_keeps_its_order() {
        let (tx, mut rx) = outgoing_channel();
        let log = Outgoing::Notification(Notification::new(
            "notifications/message",
            Some(json!({ "level": "info", "data": "x" })),
        ));
        tx.send(progress(1, 0)).unwrap();
        tx.send(log.clone()).unwrap();
        for n in 1..100_000 {
            tx.send(progress(1, n)).unwrap();
            tx.send(progress(2, n)).unwrap();
        }
        assert_eq!(rx.len(), COALESCE_PROGRESS_AFTER, "bounded, whatever the rate");
        let mut got = Vec::new();
        while let Some(o) = rx.try_recv() {
            got.push(o);
        }
        // Everything up to the bound, in order; then only the latest value of each token.
        assert_eq!(got[0], progress(1, 0));
        assert_eq!(got[1], log);
        assert_eq!(got[2], progress(1, 1));
        assert_eq!(got[3], progress(2, 1));
        assert_eq!(got[got.len() - 2], progress(1, 99_999));
        assert_eq!(got[got.len() - 1], progress(2, 99_999));
        // Below the bound, nothing is coalesced.
        tx.send(progress(1, 100_000)).unwrap();
        tx.send(progress(1, 100_001)).unwrap();
        assert_eq!(rx.try_recv(), Some(progress(1, 100_000)));
        assert_eq!(rx.try_recv(), Some(progress(1, 100_001)));
        drop(rx);
        assert!(tx.send(progress(1, 0)).is_err());
    }

    fn log(n: u64) -> Outgoing {
        Outgoing::Notification(Notification::new("notifications/message", Some(json!({ "level": "info", "data": n }))))
    }

    #[test]
    fn unread_logs_past_the_bound_are_counted_in_one_warning() {
        let (tx, mut rx) = outgoing_channel();
        for n in 0..100_000 {
            tx.send(log(n)).unwrap();
        }
        assert_eq!(rx.len(), MAX_UNREAD_LOGS + 1, "the bound, and one warning in place of the rest");
        let mut got = Vec::new();
        while let Some(o) = rx.try_recv() {
            got.push(o);
        }
        assert_eq!(got[..MAX_UNREAD_LOGS], (0..MAX_UNREAD_LOGS as u64).map(log).collect::<Vec<_>>()[..]);
        assert_eq!(got[MAX_UNREAD_LOGS], dropped_logs_warning(100_000 - MAX_UNREAD_LOGS as u64, LoggingLevel::Warning));
        // Read: logs are queued again, and a later drop starts its own count.
        tx.send(log(7)).unwrap();
        assert_eq!(rx.try_recv(), Some(log(7)));
        for n in 0..MAX_UNREAD_LOGS as u64 + 3 {
            tx.send(log(n)).unwrap();
        }
        let last = std::iter::from_fn(|| rx.try_recv()).last();
        assert_eq!(last, Some(dropped_logs_warning(3, LoggingLevel::Warning)));
        // Other messages are not dropped: a response-bound request still gets through.
        for n in 0..MAX_UNREAD_LOGS as u64 {
            tx.send(log(n)).unwrap();
        }
        tx.send(progress(1, 1)).unwrap();
        assert_eq!(std::iter::from_fn(|| rx.try_recv()).last(), Some(progress(1, 1)));
    }

    #[test]
    fn the_warning_is_as_severe_as_the_most_severe_dropped_message() {
        // A client that asked for `error` and up gets only errors: the warning standing for
        // dropped ones must pass the same filter.
        let error = |n: u64| {
            Outgoing::Notification(Notification::new(
                "notifications/message",
                Some(json!({ "level": "error", "data": n })),
            ))
        };
        let (tx, mut rx) = outgoing_channel();
        for n in 0..MAX_UNREAD_LOGS as u64 + 2 {
            tx.send(if n == MAX_UNREAD_LOGS as u64 { log(n) } else { error(n) }).unwrap();
        }
        let last = std::iter::from_fn(|| rx.try_recv()).last();
        assert_eq!(last, Some(dropped_logs_warning(2, LoggingLevel::Error)));
        assert_eq!(log_level(&last.unwrap()), LoggingLevel::Error);
    }
}
