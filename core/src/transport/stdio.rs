//! The stdio transport, server side: newline-delimited JSON-RPC on stdin/stdout (or any pair
//! of byte streams). Requests run concurrently (a slow tool never delays another); one writer
//! owns the output, so nothing but whole MCP messages ever reaches it; end of input cancels
//! everything in flight and returns promptly.

use crate::error::Result;
use crate::jsonrpc::{self, ErrorObject, Message, RequestId, Response};
use crate::legacy::{Session, is_legacy_initialize};
use crate::server::{Outgoing, Server, TransportContext};
use crate::transport::outgoing_bytes;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Options of the stdio transport.
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// The largest message accepted, in bytes (default 4 MiB); a longer line is answered with
    /// a -32700 error and skipped.
    pub max_message_size: usize,
    /// Cancelled to stop serving: open `subscriptions/listen` streams end gracefully, then the
    /// transport waits up to `drain_timeout` for requests in flight.
    pub shutdown: CancellationToken,
    /// How long to wait for requests in flight after `shutdown` (default 5 s).
    pub drain_timeout: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions { max_message_size: 4 << 20, shutdown: CancellationToken::new(), drain_timeout: Duration::from_secs(5) }
    }
}

/// Serves `server` on this process's stdin and stdout until stdin closes.
pub async fn serve(server: Server) -> Result<()> {
    serve_with(server, tokio::io::stdin(), tokio::io::stdout(), StdioOptions::default()).await
}

type Inflight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// Serves `server` over any byte streams (a pipe, a Unix socket, a TCP connection).
pub async fn serve_with<R, W>(server: Server, input: R, output: W, options: StdioOptions) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    // Dropping this future (instead of awaiting it to the end) stops everything it started:
    // the writer and every request task watch `stop`.
    let stop = CancellationToken::new();
    let _stop_on_drop = stop.clone().drop_guard();
    let writer = tokio::spawn(write_loop(output, out_rx, stop.clone()));
    let inflight: Inflight = Arc::default();
    let tasks = tokio_util::task::TaskTracker::new();
    let tc = TransportContext { principal: None, headers: None, shutdown: options.shutdown.child_token() };
    let mut era = StdioEra::Undecided;
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    let eof = loop {
        line.clear();
        let read = tokio::select! {
            biased;
            _ = options.shutdown.cancelled() => break false,
            r = read_line(&mut reader, &mut line, options.max_message_size) => r,
        };
        match read {
            Ok(Line::Eof) => break true,
            Ok(Line::TooLong) => {
                let e = ErrorObject::new(jsonrpc::PARSE_ERROR, format!("Parse error: message larger than {} bytes", options.max_message_size));
                let _ = out_tx.send(response_line(&Response::error(None, e)));
            }
            Ok(Line::Data) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                on_frame(&server, &tc, &line, &out_tx, &inflight, &tasks, &mut era, &stop);
            }
            Err(e) => {
                tracing::warn!("stdio input failed: {e}");
                break true;
            }
        }
    };
    tasks.close();
    if let StdioEra::Legacy(session) = &era {
        session.closed().cancel();
    }
    if eof {
        // The client is gone: cancel everything still running.
        tc.shutdown.cancel();
        for (_, t) in inflight.lock().unwrap_or_else(|e| e.into_inner()).drain() {
            t.cancel();
        }
        tasks.wait().await;
    } else {
        tc.shutdown.cancel();
        if tokio::time::timeout(options.drain_timeout, tasks.wait()).await.is_err() {
            for (_, t) in inflight.lock().unwrap_or_else(|e| e.into_inner()).drain() {
                t.cancel();
            }
            tasks.wait().await;
        }
    }
    drop(out_tx);
    let _ = writer.await;
    Ok(())
}

/// The era of a stdio connection, decided by its first request: a legacy `initialize` makes
/// the whole process a legacy session.
enum StdioEra {
    Undecided,
    Modern,
    Legacy(Arc<Session>),
}

#[allow(clippy::too_many_arguments)] // the transport's whole state, passed explicitly
fn on_frame(
    server: &Server,
    tc: &TransportContext,
    frame: &[u8],
    out: &mpsc::UnboundedSender<Vec<u8>>,
    inflight: &Inflight,
    tasks: &tokio_util::task::TaskTracker,
    era: &mut StdioEra,
    stop: &CancellationToken,
) {
    match jsonrpc::parse_message(frame) {
        Err(rejected) => {
            let _ = out.send(response_line(&rejected.response));
        }
        Ok(Message::Request(req)) => {
            if matches!(era, StdioEra::Undecided) {
                *era = StdioEra::Modern;
                if server.legacy_options().enabled && is_legacy_initialize(&req) {
                    match server.initialize(&req) {
                        Ok((session, response)) => {
                            let _ = out.send(response_line(&response));
                            forward(server.legacy_stream(&session, tc), out.clone(), tasks, stop.clone());
                            *era = StdioEra::Legacy(session);
                        }
                        Err(response) => {
                            let _ = out.send(response_line(&response));
                        }
                    }
                    return;
                }
            }
            let id = req.id.clone();
            let mut exchange = match era {
                StdioEra::Legacy(session) => server.handle_legacy_request(session, req, tc),
                _ => server.handle_request(req, tc),
            };
            if let Some(resp) = exchange.immediate() {
                let _ = out.send(response_line(resp));
                return;
            }
            let token = stop.child_token();
            inflight.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), token.clone());
            let out = out.clone();
            let inflight = inflight.clone();
            tasks.spawn(async move {
                loop {
                    let next = tokio::select! {
                        biased;
                        _ = token.cancelled() => break,
                        n = exchange.next() => n,
                    };
                    match next {
                        Some(o) => {
                            let last = matches!(o, Outgoing::Response(_));
                            // stdio has no stream to close: CloseStream is skipped.
                            let Some(mut bytes) = outgoing_bytes(&o) else { continue };
                            bytes.push(b'\n');
                            if out.send(bytes).is_err() || last {
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
            if let StdioEra::Legacy(session) = era {
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
            if let StdioEra::Legacy(session) = era {
                session.deliver(r);
            }
        }
    }
}

/// Writes every message of a long-lived exchange (a legacy session's notifications) to the
/// output until it ends.
fn forward(mut exchange: crate::server::Exchange, out: mpsc::UnboundedSender<Vec<u8>>, tasks: &tokio_util::task::TaskTracker, stop: CancellationToken) {
    tasks.spawn(async move {
        while let Some(o) = tokio::select! { _ = stop.cancelled() => None, o = exchange.next() => o } {
            let Some(mut bytes) = outgoing_bytes(&o) else { continue };
            bytes.push(b'\n');
            if out.send(bytes).is_err() {
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

enum Line {
    Data,
    TooLong,
    Eof,
}

/// Reads one line (without its newline) into `buf`, never holding more than `max` bytes.
async fn read_line<R: AsyncRead + Unpin>(r: &mut BufReader<R>, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let available = r.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long { Line::TooLong } else if buf.is_empty() { Line::Eof } else { Line::Data });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(available.len());
        r.consume(consumed);
        if done.is_some() {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(if too_long { Line::TooLong } else { Line::Data });
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>, stop: CancellationToken) {
    let mut batch = Vec::with_capacity(64 * 1024);
    while let Some(first) = tokio::select! { _ = stop.cancelled() => None, m = rx.recv() => m } {
        batch.clear();
        batch.extend_from_slice(&first);
        while batch.len() < 256 * 1024 {
            match rx.try_recv() {
                Ok(more) => batch.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        if w.write_all(&batch).await.is_err() || w.flush().await.is_err() {
            return;
        }
    }
    let _ = w.flush().await;
}
