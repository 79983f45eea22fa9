//! The stdio transport, server side: newline-delimited JSON-RPC on stdin/stdout (or any pair
//! of byte streams). Requests run concurrently (a slow tool never delays another); one writer
//! owns the output, so nothing but whole MCP messages ever reaches it. At the end of input
//! (the spec's stdio shutdown starts by closing it) requests in flight still answer within the
//! drain deadline, then whatever is left is cancelled and serving returns; when the output
//! fails, everything is cancelled at once.
//!
//! Backpressure: what waits to be written is bounded ([`StdioOptions::max_outbound_queue`]).
//! When a client stops reading stdout, the transport stops reading stdin (the client's writes
//! then block on the full pipe) and goes on where it stopped once the client reads again.

use super::lines::{Line, lines};
use crate::error::Result;
use crate::jsonrpc::{self, ErrorObject, Message, RequestId, Response};
use crate::legacy::is_legacy_initialize;
use crate::server::dispatch::ServedIn;
use crate::server::{Outgoing, Server, TransportContext, Wire};
use crate::transport::outgoing_bytes;
use futures_util::StreamExt;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// Options of the stdio transport.
///
/// As data (every binding's stdio serve options): `maxMessageSize`, `drainTimeoutMs`,
/// `maxOutboundQueue`; absent fields keep their defaults. `shutdown` is the binding's to set.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct StdioOptions {
    /// The largest message accepted, in bytes (default 4194304: 4 MiB); a longer line is
    /// answered with a -32700 error and skipped.
    #[serde(alias = "max_message_size")]
    pub max_message_size: usize,
    /// Cancelled to stop serving: open `subscriptions/listen` streams end gracefully, then the
    /// transport waits up to `drain_timeout` for requests in flight.
    #[serde(skip)]
    pub shutdown: CancellationToken,
    /// How long requests in flight may still run and answer after `shutdown` or the end of
    /// input before they are cancelled (JSON `drainTimeoutMs`, default 5000: 5 s).
    #[serde(rename = "drainTimeoutMs", with = "crate::options::ms")]
    #[serde(alias = "drain_timeout_ms")]
    pub drain_timeout: Duration,
    /// The most messages owed to the client at once (default 1024, at least 1): messages
    /// queued but not yet written to the output, plus requests read whose first message (a
    /// notification or the answer) is not queued yet. At the limit, no request is read until
    /// the client reads its output, so memory stays bounded when a client stops reading;
    /// notifications and responses from the client are still acted on as they are read.
    #[serde(deserialize_with = "at_least_one")]
    #[serde(alias = "max_outbound_queue")]
    pub max_outbound_queue: usize,
}

fn at_least_one<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<usize, D::Error> {
    match usize::deserialize(d)? {
        0 => Err(serde::de::Error::custom("must be at least 1, not 0")),
        n => Ok(n),
    }
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_message_size: 4 << 20,
            shutdown: CancellationToken::new(),
            drain_timeout: Duration::from_secs(5),
            max_outbound_queue: DEFAULT_MAX_OUTBOUND_QUEUE,
        }
    }
}

/// Serves `server` on this process's stdin and stdout until stdin closes.
pub async fn serve(server: Server) -> Result<()> {
    serve_with(server, tokio::io::stdin(), tokio::io::stdout(), StdioOptions::default()).await
}

/// The default of [`StdioOptions::max_outbound_queue`].
pub const DEFAULT_MAX_OUTBOUND_QUEUE: usize = 1024;

type Inflight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// The output queue: every message in it holds one permit of `budget` until it is written.
#[derive(Clone)]
struct Out {
    tx: mpsc::UnboundedSender<(Vec<u8>, OwnedSemaphorePermit)>,
    budget: Arc<Semaphore>,
}

impl Out {
    /// Queues a message with a permit already taken; false once the output is gone.
    fn send_with(&self, bytes: Vec<u8>, permit: OwnedSemaphorePermit) -> bool {
        self.tx.send((bytes, permit)).is_ok()
    }

    /// Queues a message, waiting for room; false once the output is gone.
    async fn send(&self, bytes: Vec<u8>) -> bool {
        match self.budget.clone().acquire_owned().await {
            Ok(permit) => self.send_with(bytes, permit),
            Err(_) => false,
        }
    }
}

/// Serves `server` over any byte streams (a pipe, a Unix socket, a TCP connection).
pub async fn serve_with<R, W>(server: Server, input: R, output: W, options: StdioOptions) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    server.start_bus();
    let (tx, out_rx) = mpsc::unbounded_channel();
    // The writer closes the budget when the output fails, which wakes whoever waits for room.
    let out_tx =
        Out { tx, budget: Arc::new(Semaphore::new(options.max_outbound_queue.clamp(1, Semaphore::MAX_PERMITS))) };
    // Dropping this future (instead of awaiting it to the end) stops everything it started:
    // the writer and every request task watch `stop`.
    let stop = CancellationToken::new();
    let _stop_on_drop = stop.clone().drop_guard();
    let writer = tokio::spawn(write_loop(output, out_rx, out_tx.budget.clone(), stop.clone()));
    let inflight: Inflight = Arc::default();
    let tasks = tokio_util::task::TaskTracker::new();
    let tc = TransportContext {
        principal: None,
        headers: None,
        shutdown: options.shutdown.child_token(),
        http_headers: None,
        token: None,
    };
    // Decided by the first request: a legacy `initialize` makes the whole process a legacy
    // session; `None` until then.
    let mut era: Option<ServedIn> = None;
    let mut input = lines(input, options.max_message_size);
    // Whether the output failed (the client is gone); else input ended or shutdown was asked.
    let output_gone = loop {
        let read = tokio::select! {
            biased;
            _ = options.shutdown.cancelled() => break false,
            r = input.next() => r,
        };
        match read {
            None => break false,
            Some(Ok(Line::TooLong)) => {
                let e = ErrorObject::new(
                    jsonrpc::PARSE_ERROR,
                    format!("Parse error: message larger than {} bytes", options.max_message_size),
                );
                match room(&out_tx, &options.shutdown).await {
                    Ok(p) => out_tx.send_with(response_line(&Response::error(None, e)), p),
                    Err(Stop::Shutdown) => break false,
                    Err(Stop::OutputGone) => break true,
                };
            }
            Some(Ok(Line::Data(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match on_frame(&server, &tc, &line, &out_tx, &options.shutdown, &inflight, &tasks, &mut era, &stop)
                    .await
                {
                    Ok(()) => {}
                    Err(Stop::Shutdown) => break false,
                    Err(Stop::OutputGone) => break true,
                }
            }
            Some(Err(e)) => {
                tracing::warn!("stdio input failed: {e}");
                break false;
            }
        }
    };
    tasks.close();
    if let Some(ServedIn::Legacy(session)) = &era {
        session.closed().cancel();
    }
    // At the end of input (`echo REQUEST | server`, or a client closing stdin to stop the
    // server, as the spec's shutdown does) and at shutdown, requests in flight may finish and
    // answer within the drain deadline; a failed output means nobody can read an answer.
    tc.shutdown.cancel();
    let drained = !output_gone && tokio::time::timeout(options.drain_timeout, tasks.wait()).await.is_ok();
    if !drained {
        for (_, t) in inflight.lock().unwrap_or_else(|e| e.into_inner()).drain() {
            t.cancel();
        }
        tasks.wait().await;
    }
    drop(out_tx);
    let _ = writer.await;
    Ok(())
}

/// Why reading stops before the end of input.
enum Stop {
    /// `shutdown` was cancelled while waiting for room in the output.
    Shutdown,
    /// The output failed: the client is gone.
    OutputGone,
}

/// Waits for room in the output for the answer to a line just read: while the client does
/// not read its output, no more input is read.
async fn room(out: &Out, shutdown: &CancellationToken) -> std::result::Result<OwnedSemaphorePermit, Stop> {
    tokio::select! {
        biased;
        _ = shutdown.cancelled() => Err(Stop::Shutdown),
        p = out.budget.clone().acquire_owned() => p.map_err(|_| Stop::OutputGone),
    }
}

/// Acts on one line of input. Requests and malformed lines wait for room in the output
/// first; notifications and responses (cancellations, answers to a legacy server's requests)
/// never wait, so work in flight can always finish.
#[allow(clippy::too_many_arguments)] // the transport's whole state, passed explicitly
async fn on_frame(
    server: &Server,
    tc: &TransportContext,
    frame: &[u8],
    out: &Out,
    shutdown: &CancellationToken,
    inflight: &Inflight,
    tasks: &tokio_util::task::TaskTracker,
    era: &mut Option<ServedIn>,
    stop: &CancellationToken,
) -> std::result::Result<(), Stop> {
    match jsonrpc::parse_message(frame) {
        Err(rejected) => {
            out.send_with(response_line(&rejected.response), room(out, shutdown).await?);
        }
        Ok(Message::Request(req)) => {
            let permit = room(out, shutdown).await?;
            if era.is_none() {
                *era = Some(ServedIn::Modern);
                if server.legacy_options().enabled && is_legacy_initialize(&req) {
                    match server.initialize(&req, tc) {
                        Ok((session, response)) => {
                            out.send_with(response_line(&response), permit);
                            forward(server.legacy_stream(&session, tc), out.clone(), tasks, stop.clone());
                            *era = Some(ServedIn::Legacy(session));
                        }
                        Err(response) => {
                            out.send_with(response_line(&response), permit);
                        }
                    }
                    return Ok(());
                }
            }
            let id = req.id.clone();
            let mut exchange = match era {
                Some(ServedIn::Legacy(session)) => server.handle_legacy_request(session, req, tc),
                _ => server.handle_request(req, tc),
            };
            if let Some(mut line) = exchange.immediate_json() {
                line.push(b'\n');
                out.send_with(line, permit);
                return Ok(());
            }
            if let Some(resp) = exchange.immediate() {
                out.send_with(response_line(resp), permit);
                return Ok(());
            }
            // The request keeps the room taken for it until its first message.
            let mut first = Some(permit);
            let token = stop.child_token();
            inflight.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), token.clone());
            let out = out.clone();
            let inflight = inflight.clone();
            tasks.spawn(async move {
                loop {
                    let next = tokio::select! {
                        biased;
                        _ = token.cancelled() => break,
                        n = exchange.next_wire() => n,
                    };
                    match next {
                        Some(w) => {
                            let (last, bytes) = match w {
                                Wire::Json(bytes) => (true, Some(bytes)),
                                Wire::Message(o) => (matches!(o, Outgoing::Response(_)), outgoing_bytes(&o)),
                            };
                            // stdio has no stream to close: CloseStream is skipped.
                            let Some(mut bytes) = bytes else { continue };
                            bytes.push(b'\n');
                            let sent = match first.take() {
                                Some(p) => out.send_with(bytes, p),
                                None => tokio::select! {
                                    biased;
                                    _ = token.cancelled() => break,
                                    sent = out.send(bytes) => sent,
                                },
                            };
                            if !sent || last {
                                break;
                            }
                        }
                        None => break,
                    }
                }
                inflight.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
            });
        }
        Ok(Message::Notification(n)) => {
            if let Some(ServedIn::Legacy(session)) = era {
                session.touch();
            }
            if n.method == "notifications/cancelled" {
                let target = n.params.as_ref().and_then(|p| p.get("requestId")).and_then(RequestId::from_value);
                if let Some(id) = target {
                    if let Some(t) = inflight.lock().unwrap_or_else(|e| e.into_inner()).remove(&id) {
                        t.cancel();
                    }
                }
            } else {
                server.handle_notification(n, tc);
            }
        }
        Ok(Message::Response(r)) => {
            // Only legacy sessions send requests to the client; the modern era awaits nothing.
            if let Some(ServedIn::Legacy(session)) = era {
                session.deliver(r);
            }
        }
    }
    Ok(())
}

/// Writes every message of a long-lived exchange (a legacy session's notifications) to the
/// output until it ends.
/// While the output is full the exchange is not polled: its events wait, coalesced, in its
/// listener's queue.
fn forward(
    mut exchange: crate::server::Exchange,
    out: Out,
    tasks: &tokio_util::task::TaskTracker,
    stop: CancellationToken,
) {
    tasks.spawn(async move {
        while let Some(o) = tokio::select! { _ = stop.cancelled() => None, o = exchange.next() => o } {
            let Some(mut bytes) = outgoing_bytes(&o) else { continue };
            bytes.push(b'\n');
            let sent = tokio::select! { _ = stop.cancelled() => false, sent = out.send(bytes) => sent };
            if !sent {
                break;
            }
        }
    });
}

fn response_line(r: &Response) -> Vec<u8> {
    let mut b = serde_json::to_vec(r).unwrap_or_default();
    b.push(b'\n');
    b
}

/// Writes queued messages in batches; each message's room in the queue is given back once it
/// is written. When the output fails, the budget is closed so nobody waits for room forever.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut w: W,
    mut rx: mpsc::UnboundedReceiver<(Vec<u8>, OwnedSemaphorePermit)>,
    budget: Arc<Semaphore>,
    stop: CancellationToken,
) {
    let mut batch = Vec::with_capacity(64 * 1024);
    let mut permits = Vec::new();
    while let Some((first, permit)) = tokio::select! { _ = stop.cancelled() => None, m = rx.recv() => m } {
        batch.clear();
        batch.extend_from_slice(&first);
        permits.push(permit);
        while batch.len() < 256 * 1024 {
            match rx.try_recv() {
                Ok((more, permit)) => {
                    batch.extend_from_slice(&more);
                    permits.push(permit);
                }
                Err(_) => break,
            }
        }
        let written = tokio::select! { _ = stop.cancelled() => false, ok = async { w.write_all(&batch).await.is_ok() && w.flush().await.is_ok() } => ok };
        permits.clear();
        if !written {
            budget.close();
            return;
        }
    }
    let _ = w.flush().await;
}
