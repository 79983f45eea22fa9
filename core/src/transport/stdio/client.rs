//! The stdio transport, client side: newline-delimited JSON-RPC over any pair of byte
//! streams, usually the pipes of a server spawned as a child process.
//!
//! One reader task routes what the server writes: a response to the request with its id;
//! a notification to the request it belongs to (by `subscriptionId` in `_meta`, by
//! `progressToken`, or the `requestId` of a `notifications/cancelled` ending a subscription),
//! anything else (list changes, log messages, a legacy server's requests) to the client. One
//! writer task owns the input stream. When the server goes away every pending request fails at
//! once with a transport error.
//!
//! Shutdown of a child: close its stdin, wait, SIGTERM (its whole process group), wait,
//! SIGKILL. Dropping the transport without closing it kills the group outright.

use super::lines::{Line, lines};
use crate::client::transport::{Inbound, Outbound, Pending, connection_lost};
use crate::client::{ClientOptions, StderrMode};
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{self, Message, Notification, RequestId};
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The variables of this process's environment a stdio server inherits unless
/// [`ClientOptions::inherit_env`] is set (the official MCP SDKs' list).
#[cfg(not(windows))]
pub const DEFAULT_INHERITED_ENV_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The variables of this process's environment a stdio server inherits unless
/// [`ClientOptions::inherit_env`] is set (the official MCP SDKs' list).
#[cfg(windows)]
pub const DEFAULT_INHERITED_ENV_VARS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

/// What a stdio server inherits by default: [`DEFAULT_INHERITED_ENV_VARS`] that are set,
/// except values starting with `()` (shell functions, which a shell would run).
pub fn default_environment() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    DEFAULT_INHERITED_ENV_VARS
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (std::ffi::OsString::from(k), v)))
        .filter(|(_, v)| !v.as_encoded_bytes().starts_with(b"()"))
        .collect()
}

struct Route {
    tx: mpsc::UnboundedSender<Result<Inbound>>,
    progress_token: Option<String>,
}

struct Shared {
    out: mpsc::UnboundedSender<Vec<u8>>,
    routes: Mutex<Routes>,
    stop_writer: CancellationToken,
}

#[derive(Default)]
struct Routes {
    by_id: HashMap<RequestId, Route>,
    by_progress: HashMap<String, RequestId>,
    /// Why the connection is closed, once it is.
    closed: Option<String>,
}

impl Shared {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write_line<T: Serialize>(&self, message: &T) -> Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        if let Some(why) = &self.routes().closed {
            return Err(connection_lost(why));
        }
        self.out.send(line).map_err(|_| connection_lost("the server's input is closed"))
    }

    /// Fails every pending request and refuses new ones.
    fn fail_all(&self, why: &str) {
        let routes = {
            let mut r = self.routes();
            if r.closed.is_none() {
                r.closed = Some(why.to_owned());
            }
            r.by_progress.clear();
            std::mem::take(&mut r.by_id)
        };
        for (_, route) in routes {
            let _ = route.tx.send(Err(connection_lost(why)));
        }
    }

    fn take_route(&self, id: &RequestId) -> Option<Route> {
        let mut r = self.routes();
        let route = r.by_id.remove(id)?;
        if let Some(t) = &route.progress_token {
            r.by_progress.remove(t);
        }
        Some(route)
    }
}

/// Cancels a request still pending when dropped.
struct CancelGuard {
    shared: Arc<Shared>,
    id: RequestId,
    notify: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.shared.take_route(&self.id).is_some() && self.notify {
            let n = Notification::new(
                "notifications/cancelled",
                Some(json!({ "requestId": self.id.to_value(), "reason": "cancelled by the client" })),
            );
            let _ = self.shared.write_line(&n);
        }
    }
}

/// A spawned server process.
struct ChildProcess {
    child: Child,
    pid: Option<u32>,
}

/// Newline-delimited JSON-RPC over a pair of byte streams.
pub(crate) struct LineTransport {
    shared: Arc<Shared>,
    child: Mutex<Option<ChildProcess>>,
    pid: Option<u32>,
    tasks: Vec<JoinHandle<()>>,
    shutdown_timeout: Duration,
}

impl LineTransport {
    /// Runs the transport over `reader` and `writer`; messages not tied to a request go to
    /// `unsolicited`.
    pub fn new<R, W>(reader: R, writer: W, unsolicited: mpsc::UnboundedSender<Inbound>, options: &ClientOptions) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, out_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared { out, routes: Mutex::default(), stop_writer: CancellationToken::new() });
        let writer_task = tokio::spawn(write_loop(writer, out_rx, shared.clone()));
        let reader_task = tokio::spawn(read_loop(reader, shared.clone(), unsolicited, options.max_message_size));
        LineTransport {
            shared,
            child: Mutex::new(None),
            pid: None,
            tasks: vec![writer_task, reader_task],
            shutdown_timeout: options.shutdown_timeout,
        }
    }

    /// Spawns `command` with `args` and runs the transport over its stdin and stdout.
    pub fn spawn<I, S>(
        command: &OsStr,
        args: I,
        unsolicited: mpsc::UnboundedSender<Inbound>,
        options: &ClientOptions,
    ) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(command);
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        cmd.stderr(match options.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Tracing => Stdio::piped(),
            StderrMode::Null => Stdio::null(),
        });
        if !options.inherit_env {
            cmd.env_clear();
            cmd.envs(default_environment());
        }
        for (k, v) in &options.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &options.cwd {
            cmd.current_dir(dir);
        }
        // Its own process group, so that shutdown reaches whatever the server starts in turn
        // (e.g. the real server behind `npx` or `uvx`).
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            Error::new(
                ErrorKind::Transport,
                format!("cannot start the MCP server {:?}: {e}", command.to_string_lossy()),
            )
        })?;
        let stdin = child.stdin.take().ok_or_else(|| Error::internal("the child's stdin is not piped"))?;
        let stdout = child.stdout.take().ok_or_else(|| Error::internal("the child's stdout is not piped"))?;
        let mut transport = LineTransport::new(stdout, stdin, unsolicited, options);
        if let Some(stderr) = child.stderr.take() {
            transport.tasks.push(tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(target: "mcpaxle::client::stderr", "{line}");
                }
            }));
        }
        let pid = child.id();
        transport.pid = pid;
        *transport.child.lock().unwrap_or_else(|e| e.into_inner()) = Some(ChildProcess { child, pid });
        Ok(transport)
    }

    pub fn process_id(&self) -> Option<u32> {
        self.pid
    }

    pub fn send(&self, out: Outbound) -> Result<Pending> {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = out.request.id.clone();
        let token = out.progress_token.as_ref().map(Value::to_string);
        {
            let mut r = self.shared.routes();
            if let Some(why) = &r.closed {
                return Err(connection_lost(why));
            }
            if let Some(t) = &token {
                r.by_progress.insert(t.clone(), id.clone());
            }
            r.by_id.insert(id.clone(), Route { tx, progress_token: token });
        }
        if let Err(e) = self.shared.write_line(&out.request) {
            self.shared.take_route(&id);
            return Err(e);
        }
        Ok(Pending {
            rx,
            http_status: None,
            _guard: Box::new(CancelGuard { shared: self.shared.clone(), id, notify: out.cancel_on_drop }),
        })
    }

    pub fn write<T: Serialize>(&self, message: &T) -> Result<()> {
        self.shared.write_line(message)
    }

    /// Closes the server's input, fails what is pending, and shuts a child down.
    pub async fn close(&self) {
        self.shared.stop_writer.cancel();
        self.shared.fail_all("the client closed the connection");
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut c) = child {
            shut_down(&mut c, self.shutdown_timeout).await;
        }
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        self.shared.stop_writer.cancel();
        if let Some(c) = self.child.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            // Not closed: no time to wait, kill the whole group (kill_on_drop kills the child
            // itself too, should the group be gone).
            signal_group(c.pid, Signal::Kill, true);
            drop(c);
        }
        for t in &self.tasks {
            t.abort();
        }
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(pid: Option<u32>, signal: Signal, child_alive: bool) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0) else { return };
    let sig = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) takes plain integers and has no memory effects. -pid names the child's
    // process group, which it leads (it was spawned with process_group(0)); the pid itself is
    // signalled only while the child is known not to be reaped, so it cannot name another
    // process.
    unsafe {
        if libc::kill(-pid, sig) != 0 && child_alive {
            libc::kill(pid, sig);
        }
    }
}

#[cfg(not(unix))]
fn signal_group(_pid: Option<u32>, _signal: Signal, _child_alive: bool) {}

async fn shut_down(c: &mut ChildProcess, grace: Duration) {
    if tokio::time::timeout(grace, c.child.wait()).await.is_ok() {
        // The server exited on end of input; make sure nothing it started lingers.
        signal_group(c.pid, Signal::Kill, false);
        return;
    }
    tracing::debug!(pid = ?c.pid, "the MCP server did not exit after its input closed: SIGTERM");
    signal_group(c.pid, Signal::Term, true);
    if tokio::time::timeout(grace, c.child.wait()).await.is_ok() {
        signal_group(c.pid, Signal::Kill, false);
        return;
    }
    tracing::warn!(pid = ?c.pid, "the MCP server ignored SIGTERM: SIGKILL");
    signal_group(c.pid, Signal::Kill, true);
    let _ = c.child.start_kill();
    let _ = c.child.wait().await;
}

async fn write_loop<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>, shared: Arc<Shared>) {
    loop {
        let line = tokio::select! {
            biased;
            l = rx.recv() => l,
            _ = shared.stop_writer.cancelled() => None,
        };
        let Some(line) = line else { break };
        if let Err(e) = async {
            w.write_all(&line).await?;
            w.flush().await
        }
        .await
        {
            shared.fail_all(&format!("cannot write to the server ({e})"));
            break;
        }
    }
    let _ = w.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(
    r: R,
    shared: Arc<Shared>,
    unsolicited: mpsc::UnboundedSender<Inbound>,
    max: usize,
) {
    let mut input = lines(r, max);
    let why = loop {
        match input.next().await {
            None => break "the server closed its output (it exited?)".to_owned(),
            Some(Ok(Line::TooLong)) => {
                tracing::warn!("the MCP server sent a message larger than {max} bytes; skipped");
            }
            Some(Ok(Line::Data(line))) => {
                if !line.iter().all(u8::is_ascii_whitespace) {
                    on_frame(&line, &shared, &unsolicited);
                }
            }
            Some(Err(e)) => break format!("cannot read from the server ({e})"),
        }
    };
    shared.fail_all(&why);
}

fn on_frame(frame: &[u8], shared: &Shared, unsolicited: &mpsc::UnboundedSender<Inbound>) {
    let message = match jsonrpc::parse_message(frame) {
        Ok(m) => m,
        Err(_) => {
            tracing::warn!(
                "the MCP server wrote a line that is not a JSON-RPC message: {}",
                String::from_utf8_lossy(&frame[..frame.len().min(200)])
            );
            return;
        }
    };
    match message {
        Message::Response(r) => match &r.id {
            Some(id) => match shared.take_route(id) {
                Some(route) => {
                    let _ = route.tx.send(Ok(Inbound::Response(r)));
                }
                None => tracing::debug!("response to {id}, which is no longer pending"),
            },
            None => tracing::warn!("the MCP server reported an error about an unreadable message: {:?}", r.as_error()),
        },
        Message::Notification(n) => {
            let params = n.params.as_ref();
            let by_subscription = params
                .and_then(|p| p.pointer("/_meta/io.modelcontextprotocol~1subscriptionId"))
                .and_then(RequestId::from_value);
            if n.method == "notifications/cancelled" {
                // The server ends a subscription (or a legacy server cancels its own request,
                // which this client answers at once anyway).
                if let Some(id) = params.and_then(|p| p.get("requestId")).and_then(RequestId::from_value) {
                    if let Some(route) = shared.take_route(&id) {
                        let _ = route.tx.send(Ok(Inbound::Notification(n)));
                        return;
                    }
                }
            }
            let routed = {
                let routes = shared.routes();
                let target = by_subscription.filter(|id| routes.by_id.contains_key(id)).or_else(|| {
                    (n.method == "notifications/progress")
                        .then(|| params.and_then(|p| p.get("progressToken")).map(Value::to_string))
                        .flatten()
                        .and_then(|t| routes.by_progress.get(&t).cloned())
                });
                target.and_then(|id| routes.by_id.get(&id).map(|r| r.tx.clone()))
            };
            match routed {
                Some(tx) => {
                    let _ = tx.send(Ok(Inbound::Notification(n)));
                }
                None => {
                    let _ = unsolicited.send(Inbound::Notification(n));
                }
            }
        }
        Message::Request(r) => {
            let _ = unsolicited.send(Inbound::Request(r));
        }
    }
}
