//! The Streamable HTTP transport, client side, on hyper 1 (hyper-util's pooled client, rustls
//! with the ring provider and the webpki roots, so `https://` works).
//!
//! Every message is its own POST. A request's answer is one JSON object or an SSE stream of
//! its notifications (and, from a legacy server, its requests) ending with its response; a
//! task reads it and hands each message over. Dropping the request closes the stream, which
//! is the cancellation signal of the modern revision.
//!
//! Legacy (2025-11-25) sessions add: the `Mcp-Session-Id` of the `initialize` response on
//! every later request, resumption of a response stream with GET and `Last-Event-ID` after the
//! server's `retry:` delay, the session's GET stream for the server's own requests and
//! notifications, and DELETE on close.

use super::hyper_client::{HttpClient, RequestBody, new_http_client};
use super::sse::SseParser;
use crate::client::ClientOptions;
use crate::client::auth::{Attempt, Authorizer};
use crate::client::transport::{Inbound, Outbound, Pending};
use crate::error::{Error, ErrorKind, Result};
use crate::headers;
use crate::jsonrpc::{self, Message, RequestId, Response};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use http::{HeaderMap, Method, Request, StatusCode, Uri};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How much of an error body is kept for the error message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// The reconnection delay when the server set none.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many times in a row a stream is resumed before giving up.
const MAX_RESUMES: u32 = 5;

struct Shared {
    client: HttpClient,
    url: Uri,
    /// OAuth, when the client was configured for it.
    auth: Option<Authorizer>,
    headers: RwLock<HeaderMap>,
    session: RwLock<Option<HeaderValue>>,
    /// The protocol version last sent within the legacy session (for its DELETE).
    session_version: RwLock<Option<HeaderValue>>,
    /// Requests awaiting their response: a legacy server may answer one on the GET stream.
    routes: Mutex<HashMap<RequestId, mpsc::UnboundedSender<Result<Inbound>>>>,
    unsolicited: mpsc::UnboundedSender<Inbound>,
    closed: CancellationToken,
    max_message: usize,
}

/// Streamable HTTP to one MCP endpoint.
pub(crate) struct HttpTransport {
    shared: Arc<Shared>,
    /// The legacy session's GET stream task, and how far it has come.
    get_task: Mutex<Option<(JoinHandle<()>, watch::Receiver<GetStream>)>>,
}

/// How far the legacy session's GET stream has come. A server drops what it has for a stream
/// it has not seen yet, and may send no headers on it until its first event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GetStream {
    /// Waiting for a connection.
    Opening,
    /// The GET is written to a connection: requests sent from now on reach the server after it.
    Sent,
    /// The server has answered it (or it failed).
    Answered,
}

/// Forgets a request and stops reading its response when it is dropped.
struct RequestGuard {
    shared: Arc<Shared>,
    id: RequestId,
    task: Option<JoinHandle<()>>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.shared.routes.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

fn transport_error(message: String) -> Error {
    Error::new(ErrorKind::Transport, message)
}

/// An HTTP error status whose body is not a JSON-RPC error.
fn http_error(status: StatusCode, body: &[u8]) -> Error {
    let text = String::from_utf8_lossy(&body[..body.len().min(2048)]).into_owned();
    let shown = if text.trim().is_empty() { String::new() } else { format!(": {}", text.trim()) };
    transport_error(format!("the MCP server answered HTTP {status}{shown}"))
        .with_data(json!({ "httpStatus": status.as_u16(), "body": text }))
}

fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

impl HttpTransport {
    pub fn new(url: &str, options: &ClientOptions, unsolicited: mpsc::UnboundedSender<Inbound>) -> Result<Self> {
        let uri: Uri = url.parse().map_err(|e| Error::usage(format!("invalid MCP server URL {url:?}: {e}")))?;
        match uri.scheme_str() {
            Some("http" | "https") if uri.host().is_some() => {}
            _ => {
                return Err(Error::usage(format!(
                    "invalid MCP server URL {url:?}: it must be an http:// or https:// URL"
                )));
            }
        }
        let mut header_map = HeaderMap::new();
        for (name, value) in &options.headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| Error::usage(format!("invalid HTTP header name {name:?}: {e}")))?;
            let v = HeaderValue::from_str(value)
                .map_err(|e| Error::usage(format!("invalid value for HTTP header {name}: {e}")))?;
            header_map.append(n, v);
        }
        if let Some(oauth) = &options.oauth {
            oauth.validate()?;
        }
        let client = new_http_client()?;
        let auth = options.oauth.clone().map(|o| Authorizer::new(o, &options.client_info.name, url, client.clone()));
        Ok(HttpTransport {
            shared: Arc::new(Shared {
                client,
                url: uri,
                auth,
                headers: RwLock::new(header_map),
                session: RwLock::new(None),
                session_version: RwLock::new(None),
                routes: Mutex::default(),
                unsolicited,
                closed: CancellationToken::new(),
                max_message: options.max_message_size,
            }),
            get_task: Mutex::new(None),
        })
    }

    /// Sets (or with `None` removes) a header sent with every request.
    pub fn set_header(&self, name: &str, value: Option<&str>) -> Result<()> {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| Error::usage(format!("invalid HTTP header name {name:?}: {e}")))?;
        let mut h = self.shared.headers.write().unwrap_or_else(|e| e.into_inner());
        match value {
            Some(v) => {
                let v = HeaderValue::from_str(v)
                    .map_err(|e| Error::usage(format!("invalid value for HTTP header {name}: {e}")))?;
                h.insert(n, v);
            }
            None => {
                h.remove(n);
            }
        }
        Ok(())
    }

    /// The `Authorization` header in force, if any (the cache's authorization context).
    pub fn authorization(&self) -> Option<String> {
        let h = self.shared.headers.read().unwrap_or_else(|e| e.into_inner());
        let oauth = self.shared.auth.as_ref().and_then(Authorizer::header);
        oauth
            .as_ref()
            .or_else(|| h.get(http::header::AUTHORIZATION))
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// The legacy session id, once the server assigned one.
    pub fn session_id(&self) -> Option<String> {
        self.shared
            .session
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// Forgets the legacy session (it expired, or a new one starts).
    pub fn reset_session(&self) {
        *self.shared.session.write().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(t) = self.get_task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.0.abort();
        }
    }

    pub async fn send(&self, out: Outbound) -> Result<Pending> {
        let shared = &self.shared;
        let body = Bytes::from(serde_json::to_vec(&out.request)?);
        let mut extra: Vec<(HeaderName, HeaderValue)> = Vec::with_capacity(out.headers.len());
        for (name, value) in &out.headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| Error::usage(format!("invalid header name {name:?}: {e}")))?;
            let v = HeaderValue::from_str(value)
                .map_err(|e| Error::usage(format!("invalid value for header {name}: {e}")))?;
            extra.push((n, v));
        }
        let is_initialize = out.request.method == "initialize";
        let had_session = shared.session.read().unwrap_or_else(|e| e.into_inner()).is_some();
        let (tx, rx) = mpsc::unbounded_channel();
        let id = out.request.id.clone();
        shared.routes.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), tx.clone());
        let mut guard = RequestGuard { shared: shared.clone(), id: id.clone(), task: None };
        let mut attempt = Attempt::default();
        let resp = loop {
            let sent = shared.auth.as_ref().and_then(Authorizer::header);
            let req = shared.post(body.clone(), out.protocol_version.as_deref(), extra.clone())?;
            let resp = shared.execute(req).await?;
            // A challenge: authorize (or re-authorize), then send the request again.
            match &shared.auth {
                Some(auth)
                    if attempt.challenges < auth.max_authorizations()
                        && Authorizer::is_challenge(resp.status(), resp.headers()) =>
                {
                    auth.authorize(resp.status(), resp.headers(), sent.as_ref(), &mut attempt).await?;
                }
                _ => break resp,
            }
        };
        let status = resp.status();
        if is_initialize && status.is_success() {
            if let Some(sid) = resp.headers().get(headers::MCP_SESSION_ID) {
                *shared.session.write().unwrap_or_else(|e| e.into_inner()) = Some(sid.clone());
            }
        }
        let content_type =
            resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        if !status.is_success() {
            let body = collect(resp.into_body(), ERROR_BODY_LIMIT).await.unwrap_or_default();
            if status == StatusCode::NOT_FOUND && had_session && !is_initialize {
                return Err(transport_error("the MCP server ended the session (HTTP 404 Not Found)".into())
                    .with_data(json!({ "httpStatus": 404, "sessionExpired": true })));
            }
            return match error_response(&body) {
                Some(mut r) => {
                    r.id = Some(id);
                    let _ = tx.send(Ok(Inbound::Response(r)));
                    Ok(Pending { rx, http_status: Some(status.as_u16()), _guard: Box::new(guard) })
                }
                None => Err(http_error(status, &body)),
            };
        }
        let task = if content_type.starts_with("text/event-stream") {
            let resume = out.resumable.then(|| out.protocol_version.clone()).flatten();
            tokio::spawn(pump_sse(shared.clone(), resp.into_body(), tx, id, resume))
        } else if content_type.starts_with("application/json") {
            tokio::spawn(pump_json(shared.clone(), resp.into_body(), tx, id))
        } else if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(transport_error(format!(
                "the MCP server accepted the request without answering it (HTTP {status})"
            )));
        } else {
            return Err(transport_error(format!(
                "the MCP server answered with Content-Type {content_type:?}; expected application/json or text/event-stream"
            ))
            .with_data(json!({ "httpStatus": status.as_u16() })));
        };
        guard.task = Some(task);
        Ok(Pending { rx, http_status: Some(status.as_u16()), _guard: Box::new(guard) })
    }

    /// POSTs a notification or a response; the server answers 202.
    pub async fn post_message(&self, body: Vec<u8>, protocol_version: Option<String>) -> Result<()> {
        let req = self.shared.post(Bytes::from(body), protocol_version.as_deref(), Vec::new())?;
        let resp = self.shared.execute(req).await?;
        let status = resp.status();
        let body = collect(resp.into_body(), ERROR_BODY_LIMIT).await.unwrap_or_default();
        if status.is_success() { Ok(()) } else { Err(http_error(status, &body)) }
    }

    /// Opens the legacy session's GET stream, once, and waits (at most `wait`, also when it
    /// was already opening) until it has come as far as `until`.
    pub async fn start_get_stream(&self, protocol_version: String, until: GetStream, wait: Duration) {
        let mut progress = {
            let mut slot = self.get_task.lock().unwrap_or_else(|e| e.into_inner());
            if self.shared.closed.is_cancelled() {
                return;
            }
            match slot.as_ref() {
                Some((task, progress)) if !task.is_finished() => progress.clone(),
                _ => {
                    let (tx, progress) = watch::channel(GetStream::Opening);
                    let task = tokio::spawn(get_stream(self.shared.clone(), protocol_version, tx));
                    *slot = Some((task, progress.clone()));
                    progress
                }
            }
        };
        // Ends early (an error) when the task ended before that.
        let _ = tokio::time::timeout(wait, progress.wait_for(|p| *p >= until)).await;
    }

    /// Stops every stream and, in a legacy session, ends the session with DELETE.
    pub async fn close(&self) {
        self.shared.closed.cancel();
        if let Some(t) = self.get_task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.0.abort();
        }
        if let Some(delete) = self.shared.end_session() {
            delete.await;
        }
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.shared.closed.cancel();
        if let Some(t) = self.get_task.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            t.0.abort();
        }
        // Not closed: end the legacy session in the background, if a runtime is there.
        if let (Some(delete), Ok(rt)) = (self.shared.end_session(), tokio::runtime::Handle::try_current()) {
            rt.spawn(delete);
        }
    }
}

impl Shared {
    /// Forgets the legacy session; the returned future DELETEs it (bounded to 2 s).
    fn end_session(&self) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
        let sid = self.session.write().unwrap_or_else(|e| e.into_inner()).take()?;
        let mut req = Request::builder().method(Method::DELETE).uri(self.url.clone());
        if let Some(h) = req.headers_mut() {
            h.extend(self.headers.read().unwrap_or_else(|e| e.into_inner()).clone());
            if let Some(token) = self.auth.as_ref().and_then(Authorizer::header) {
                h.insert(http::header::AUTHORIZATION, token);
            }
            h.insert(headers::MCP_SESSION_ID, sid);
            if let Some(v) = self.session_version.read().unwrap_or_else(|e| e.into_inner()).clone() {
                h.insert(headers::MCP_PROTOCOL_VERSION, v);
            }
        }
        let req = req.body(RequestBody::new(Bytes::new())).ok()?;
        let client = self.client.clone();
        Some(async move {
            let _ = tokio::time::timeout(Duration::from_secs(2), client.request(req)).await;
        })
    }

    fn base_request(&self, method: Method, protocol_version: Option<&str>) -> Result<http::request::Builder> {
        let mut req = Request::builder().method(method).uri(self.url.clone());
        let h = req.headers_mut().ok_or_else(|| Error::internal("cannot build the HTTP request"))?;
        h.extend(self.headers.read().unwrap_or_else(|e| e.into_inner()).clone());
        if let Some(token) = self.auth.as_ref().and_then(Authorizer::header) {
            h.insert(http::header::AUTHORIZATION, token);
        }
        let version = match protocol_version {
            Some(v) => {
                Some(HeaderValue::from_str(v).map_err(|_| Error::usage(format!("invalid protocol version {v:?}")))?)
            }
            None => None,
        };
        if let Some(v) = &version {
            h.insert(headers::MCP_PROTOCOL_VERSION, v.clone());
        }
        if let Some(sid) = self.session.read().unwrap_or_else(|e| e.into_inner()).clone() {
            h.insert(headers::MCP_SESSION_ID, sid);
            if let Some(v) = version {
                *self.session_version.write().unwrap_or_else(|e| e.into_inner()) = Some(v);
            }
        }
        Ok(req)
    }

    fn post(
        &self,
        body: Bytes,
        protocol_version: Option<&str>,
        extra: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<Request<RequestBody>> {
        let mut req = self.base_request(Method::POST, protocol_version)?;
        if let Some(h) = req.headers_mut() {
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
            for (n, v) in extra {
                h.insert(n, v);
            }
        }
        req.body(RequestBody::new(body)).map_err(|e| Error::internal(format!("cannot build the HTTP request: {e}")))
    }

    fn get(&self, protocol_version: &str, last_event_id: Option<&str>) -> Result<Request<RequestBody>> {
        let mut req = self.base_request(Method::GET, Some(protocol_version))?;
        if let Some(h) = req.headers_mut() {
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            if let Some(id) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
                h.insert("last-event-id", id);
            }
        }
        req.body(RequestBody::new(Bytes::new()))
            .map_err(|e| Error::internal(format!("cannot build the HTTP request: {e}")))
    }

    async fn execute(&self, req: Request<RequestBody>) -> Result<http::Response<Incoming>> {
        tokio::select! {
            _ = self.closed.cancelled() => Err(transport_error("the client is closed".into())),
            r = self.client.request(req) => r.map_err(|e| transport_error(format!("cannot reach the MCP server at {}: {}", self.url, describe(&e)))),
        }
    }

    fn deliver_unsolicited(&self, m: Message) {
        let inbound = match m {
            Message::Notification(n) => Inbound::Notification(n),
            Message::Request(r) => Inbound::Request(r),
            Message::Response(r) => {
                // Only a resumed stream should carry one, but a response is a response.
                let route =
                    r.id.as_ref().and_then(|id| self.routes.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned());
                match route {
                    Some(tx) => {
                        let _ = tx.send(Ok(Inbound::Response(r)));
                    }
                    None => {
                        tracing::debug!(id = ?r.id, "a response on the session's GET stream, for no pending request")
                    }
                }
                return;
            }
        };
        let _ = self.unsolicited.send(inbound);
    }
}

/// Reads at most `limit` bytes of a body.
async fn collect(mut body: Incoming, limit: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| transport_error(format!("reading the response failed: {}", describe(&e))))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > limit {
                return Err(transport_error(format!("the server's response is larger than {limit} bytes")));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// A JSON-RPC error response in an HTTP error body.
fn error_response(body: &[u8]) -> Option<Response> {
    match jsonrpc::parse_message(body) {
        Ok(Message::Response(r)) if r.as_error().is_some() => Some(r),
        _ => None,
    }
}

/// Parses an HTTP body or SSE event into messages (a batch array is accepted).
fn messages(bytes: &[u8]) -> std::result::Result<Vec<Message>, String> {
    // One message (the common case) is parsed from its text, so that an integer id beyond the
    // range of i64 (a server's request to a legacy client) is kept exactly.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
        return match jsonrpc::parse_message(bytes) {
            Ok(m) => Ok(vec![m]),
            Err(r) => Err(r.response.as_error().map(|e| e.message.clone()).unwrap_or_default()),
        };
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON ({e})"))?;
    let items = match value {
        Value::Array(items) => items,
        v => vec![v],
    };
    items
        .into_iter()
        .map(|v| jsonrpc::classify(v).map_err(|r| r.response.as_error().map(|e| e.message.clone()).unwrap_or_default()))
        .collect()
}

/// Hands one message of a request's response over; true once the response is delivered.
fn deliver(m: Message, id: &RequestId, tx: &mpsc::UnboundedSender<Result<Inbound>>, single_body: bool) -> bool {
    match m {
        Message::Response(mut r) => {
            let ours = r.id.as_ref() == Some(id) || (r.id.is_none() && r.as_error().is_some()) || single_body;
            if ours {
                r.id = Some(id.clone());
                let _ = tx.send(Ok(Inbound::Response(r)));
                true
            } else {
                tracing::debug!(id = ?r.id, "a response for another request on this stream; ignored");
                false
            }
        }
        Message::Notification(n) => {
            let _ = tx.send(Ok(Inbound::Notification(n)));
            false
        }
        Message::Request(r) => {
            let _ = tx.send(Ok(Inbound::Request(r)));
            false
        }
    }
}

async fn pump_json(shared: Arc<Shared>, body: Incoming, tx: mpsc::UnboundedSender<Result<Inbound>>, id: RequestId) {
    let bytes = tokio::select! {
        _ = shared.closed.cancelled() => Err(transport_error("the client is closed".into())),
        b = collect(body, shared.max_message) => b,
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    match messages(&bytes) {
        Ok(list) => {
            for m in list {
                if deliver(m, &id, &tx, true) {
                    return;
                }
            }
            let _ = tx.send(Err(transport_error("the server's JSON response holds no response to the request".into())));
        }
        Err(why) => {
            let _ = tx.send(Err(Error::new(
                ErrorKind::ParseError,
                format!("the server's response is not a JSON-RPC message: {why}"),
            )));
        }
    }
}

enum StreamEnd {
    Answered,
    Ended,
    Failed(Error),
}

/// Reads SSE events from `body`, handing messages to `on_message` until it returns true.
async fn read_events(
    shared: &Shared,
    mut body: Incoming,
    parser: &mut SseParser,
    mut on_message: impl FnMut(Message) -> bool,
) -> StreamEnd {
    loop {
        let frame = tokio::select! {
            _ = shared.closed.cancelled() => return StreamEnd::Failed(transport_error("the client is closed".into())),
            f = body.frame() => f,
        };
        let data = match frame {
            None => return StreamEnd::Ended,
            Some(Err(e)) => {
                return StreamEnd::Failed(transport_error(format!("the response stream broke: {}", describe(&e))));
            }
            Some(Ok(f)) => match f.into_data() {
                Ok(d) => d,
                Err(_) => continue,
            },
        };
        let events = match parser.push(&data) {
            Ok(ev) => ev,
            Err(e) => {
                return StreamEnd::Failed(transport_error(format!("an SSE event is larger than {} bytes", e.limit)));
            }
        };
        for ev in events {
            if ev.event != "message" {
                continue;
            }
            match messages(ev.data.as_bytes()) {
                Ok(list) => {
                    for m in list {
                        if on_message(m) {
                            return StreamEnd::Answered;
                        }
                    }
                }
                Err(why) => tracing::warn!("an SSE event of the MCP server is not a JSON-RPC message ({why}); skipped"),
            }
        }
    }
}

/// Reads a request's SSE response. `resume` (legacy sessions: the protocol version) allows
/// resuming a stream that ends before the response, with GET and `Last-Event-ID`.
async fn pump_sse(
    shared: Arc<Shared>,
    body: Incoming,
    tx: mpsc::UnboundedSender<Result<Inbound>>,
    id: RequestId,
    resume: Option<String>,
) {
    let mut parser = SseParser::new(shared.max_message);
    let mut body = body;
    let mut resumes = 0;
    loop {
        let end = read_events(&shared, body, &mut parser, |m| deliver(m, &id, &tx, false)).await;
        let why = match end {
            StreamEnd::Answered => return,
            StreamEnd::Failed(e) if resume.is_none() => {
                let _ = tx.send(Err(e));
                return;
            }
            StreamEnd::Failed(e) => e.message().to_owned(),
            StreamEnd::Ended => "the server closed the response stream before answering".to_owned(),
        };
        let (Some(version), Some(last)) = (resume.as_deref(), parser.last_event_id().map(str::to_owned)) else {
            let _ = tx.send(Err(transport_error(why)));
            return;
        };
        if resumes >= MAX_RESUMES {
            let _ = tx.send(Err(transport_error(format!("{why} (gave up after {MAX_RESUMES} resumptions)"))));
            return;
        }
        resumes += 1;
        let delay = parser.retry_ms().map(Duration::from_millis).unwrap_or(DEFAULT_RETRY);
        tokio::select! {
            _ = shared.closed.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
        }
        tracing::debug!(last_event_id = %last, "resuming the response stream with GET");
        let resp = match shared.get(version, Some(&last)) {
            Ok(req) => shared.execute(req).await,
            Err(e) => Err(e),
        };
        match resp {
            Ok(r) if r.status().is_success() => {
                let retry = parser.retry_ms();
                parser = SseParser::resuming(shared.max_message, Some(last), retry);
                body = r.into_body();
            }
            Ok(r) => {
                let status = r.status();
                let b = collect(r.into_body(), ERROR_BODY_LIMIT).await.unwrap_or_default();
                let _ = tx.send(Err(http_error(status, &b)));
                return;
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// The legacy session's GET stream: the server's own requests and notifications, reconnected
/// after the server's `retry:` delay with `Last-Event-ID`, until the server refuses it.
async fn get_stream(shared: Arc<Shared>, protocol_version: String, progress: watch::Sender<GetStream>) {
    let mut last_event_id: Option<String> = None;
    let mut retry: Option<u64> = None;
    let mut failures = 0u32;
    loop {
        if shared.closed.is_cancelled() {
            return;
        }
        let Ok(req) = shared.get(&protocol_version, last_event_id.as_deref()) else { return };
        let (body, sent) = RequestBody::signalling(Bytes::new());
        let (resp, ()) = tokio::join!(shared.execute(req.map(|_| body)), async {
            let _ = sent.await;
            // (A reconnection's stream was answered before: it stays so.)
            progress.send_if_modified(|p| {
                let before = *p;
                *p = before.max(GetStream::Sent);
                *p != before
            });
        });
        progress.send_replace(GetStream::Answered);
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!("the session's GET stream failed: {e}");
                failures += 1;
                if failures > 3 {
                    return;
                }
                tokio::time::sleep(DEFAULT_RETRY * failures).await;
                continue;
            }
        };
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"));
        if !resp.status().is_success() || !is_sse {
            tracing::debug!(status = %resp.status(), "the MCP server offers no GET stream for this session");
            return;
        }
        failures = 0;
        let mut parser = SseParser::resuming(shared.max_message, last_event_id.clone(), retry);
        let end = read_events(&shared, resp.into_body(), &mut parser, |m| {
            shared.deliver_unsolicited(m);
            false
        })
        .await;
        if let StreamEnd::Failed(e) = end {
            tracing::debug!("the session's GET stream ended: {e}");
        }
        last_event_id = parser.last_event_id().map(str::to_owned);
        retry = parser.retry_ms();
        let delay = retry.map(Duration::from_millis).unwrap_or(DEFAULT_RETRY);
        tokio::select! {
            _ = shared.closed.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_keep_integer_ids_beyond_i64_and_accept_batches() {
        let one = messages(br#" {"jsonrpc":"2.0","id":18446744073709551616,"method":"roots/list"}"#).unwrap();
        assert!(
            matches!(&one[..], [Message::Request(r)] if r.id == RequestId::BigNumber("18446744073709551616".into()))
        );
        let batch = messages(br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"result":{}}]"#).unwrap();
        assert_eq!(batch.len(), 2);
        assert!(messages(b"{nope").unwrap_err().contains("not valid JSON"));
    }
}
