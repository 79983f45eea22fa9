//! [`RequestContext`]: what every handler is handed: the request's metadata, progress and
//! log emitters, the cancellation token, and the Multi Round-Trip Request asks.
//!
//! # The MRTR replay model
//!
//! A handler asks the client for input with [`RequestContext::elicit`],
//! [`RequestContext::sample`] or [`RequestContext::list_roots`], each under a key unique
//! within the request. When the request carries an answer under that key (in
//! `inputResponses`, or sealed in `requestState` from an earlier round) the ask returns it at
//! once. Otherwise the ask is recorded and returns an error of kind
//! [`ErrorKind::InputRequired`](crate::ErrorKind::InputRequired); the handler propagates it
//! with `?`, and the dispatcher answers with one `InputRequiredResult` carrying every ask
//! recorded in that run (asks made concurrently, e.g. with `tokio::join!`, all land in the
//! same round). The client retries the original request with the answers and the handler
//! **runs again from the start**: code before an ask runs once per round, so keep side
//! effects after the asks, or make them idempotent. Answers of earlier rounds travel sealed
//! in `requestState`, so a handler with several rounds sees all of them on the last run.
//! What a state carries is bounded by [`MAX_REQUEST_STATE`](crate::server::seal::MAX_REQUEST_STATE)
//! (2 MiB), so that its retry always fits the HTTP body limit: a round whose answers would
//! exceed it ends the call with an Invalid params error naming the largest answer.
//! A handler may also keep its own small state across rounds with
//! [`RequestContext::set_request_state`].

use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{Notification, RequestId};
use crate::legacy::Session;
use crate::schema::LoggingLevel;
use crate::server::exchange::{Outgoing, OutgoingTx};
use crate::server::middleware::Token;
use crate::server::request_meta::RequestMeta;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// The context of one request, handed to every handler. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: RequestId,
    method: String,
    /// Shared with the other runs of a replayed legacy request.
    meta: Arc<RequestMeta>,
    principal: Option<String>,
    /// Every HTTP header of the request (HTTP only).
    http_headers: Option<Arc<http::HeaderMap>>,
    /// What the bearer token granted (HTTP with bearer auth).
    token: Option<Arc<Token>>,
    notify: Option<OutgoingTx>,
    cancel: CancellationToken,
    round: Mutex<Round>,
    peer: Option<Peer>,
    /// The asks made without a key in this run, per kind: the next automatic key's number.
    auto_keys: Mutex<[u32; 3]>,
    /// The task this call runs as, or may become (the Tasks extension).
    task: Option<Arc<dyn TaskLink>>,
}

/// The task a `tools/call` runs as (or may become, with deferred creation), as its context
/// sees it: asks become the task's input requests, progress messages its status message.
pub(crate) trait TaskLink: Send + Sync {
    /// The task's id, once the call runs as a task.
    fn task_id(&self) -> Option<String>;
    /// Turns the call into a task now; false when it cannot be one (the client did not
    /// declare the extension) and goes on as an ordinary call.
    fn start(&self) -> futures_util::future::BoxFuture<'static, Result<bool>>;
    /// Makes an input request of the task and waits for the client's `tasks/update` answer.
    fn ask(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> futures_util::future::BoxFuture<'static, Result<Value>>;
    /// Sets the task's `statusMessage`.
    fn status_message(&self, message: &str);
}

/// The client of a legacy session, reachable with real requests on the response stream of
/// the request being handled.
#[derive(Clone)]
pub(crate) struct Peer {
    pub session: Arc<Session>,
    pub out: OutgoingTx,
}

/// The MRTR bookkeeping of one run of a handler.
#[derive(Default)]
pub(crate) struct Round {
    /// Answers available to this run: earlier rounds' (from the sealed state) overlaid with
    /// this request's `inputResponses`.
    pub answers: Map<String, Value>,
    /// Answers the handler used in this run: carried into the next round's state.
    pub used: Map<String, Value>,
    /// Asks not answered yet, in the order they were made: key, method, params.
    pub pending: Vec<(String, &'static str, Value)>,
    /// The handler's own state: what the last round left, then what this run sets.
    pub state: Option<Value>,
    pub state_changed: bool,
    /// The `traceparent` of the span of the request's first round (telemetry on): sealed into
    /// the next round's state, for its span to link to.
    pub first_trace: Option<String>,
}

/// One of the three kinds of input a server may ask a client for, named as the client
/// capability it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskKind {
    /// `elicitation/create`.
    Elicit,
    /// `sampling/createMessage`.
    Sample,
    /// `roots/list`.
    ListRoots,
}

/// An ask made with [`RequestContext::ask_now`]: answered at once, or a request to a legacy
/// client whose answer is still to come.
pub enum Ask {
    /// The answer, known now: the request carried it, or the ask is recorded for the next
    /// round (an [`ErrorKind::InputRequired`] error), or it failed.
    Answered(Result<Value>),
    /// A legacy (2025-11-25) session: a real request to the client, answered when this
    /// future completes.
    Pending(futures_util::future::BoxFuture<'static, Result<Value>>),
}

impl std::str::FromStr for AskKind {
    type Err = Error;

    /// `"elicitation"`, `"sampling"` or `"roots"`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "elicitation" => Ok(AskKind::Elicit),
            "sampling" => Ok(AskKind::Sample),
            "roots" => Ok(AskKind::ListRoots),
            other => Err(Error::usage(format!("unknown ask kind {other:?} (expected elicitation, sampling or roots)"))),
        }
    }
}

impl AskKind {
    /// The name of the kind, the client capability it needs: `elicitation`, `sampling` or
    /// `roots`.
    pub fn name(self) -> &'static str {
        self.capability()
    }

    /// The request's method.
    pub fn method(self) -> &'static str {
        match self {
            AskKind::Elicit => "elicitation/create",
            AskKind::Sample => "sampling/createMessage",
            AskKind::ListRoots => "roots/list",
        }
    }
    fn capability(self) -> &'static str {
        match self {
            AskKind::Elicit => "elicitation",
            AskKind::Sample => "sampling",
            AskKind::ListRoots => "roots",
        }
    }
    fn result_name(self) -> &'static str {
        match self {
            AskKind::Elicit => "ElicitResult",
            AskKind::Sample => "CreateMessageResult",
            AskKind::ListRoots => "ListRootsResult",
        }
    }
    /// Checks the shape of a client's answer; unknown extra members are allowed.
    fn check(self, v: &Value) -> bool {
        let Some(o) = v.as_object() else { return false };
        match self {
            AskKind::Elicit => {
                matches!(o.get("action").and_then(Value::as_str), Some("accept" | "decline" | "cancel"))
                    && o.get("content").is_none_or(|c| c.is_object() || c.is_null())
            }
            AskKind::Sample => {
                matches!(o.get("role").and_then(Value::as_str), Some("user" | "assistant"))
                    && o.get("content").is_some_and(|c| c.is_object() || c.is_array())
                    && o.get("model").is_some_and(Value::is_string)
            }
            AskKind::ListRoots => o
                .get("roots")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().all(|x| x.get("uri").is_some_and(Value::is_string))),
        }
    }
}

impl RequestContext {
    #[allow(clippy::too_many_arguments)] // internal: every part of a request, named
    pub(crate) fn new(
        id: RequestId,
        method: String,
        meta: Arc<RequestMeta>,
        principal: Option<String>,
        caller: (Option<Arc<http::HeaderMap>>, Option<Arc<Token>>),
        notify: Option<OutgoingTx>,
        cancel: CancellationToken,
        round: Round,
        peer: Option<Peer>,
    ) -> Self {
        let (http_headers, token) = caller;
        RequestContext {
            inner: Arc::new(Inner {
                id,
                method,
                meta,
                principal,
                http_headers,
                token,
                notify,
                cancel,
                round: Mutex::new(round),
                peer,
                auto_keys: Mutex::new([0; 3]),
                task: None,
            }),
        }
    }

    /// This context linked to the task its call runs as (or may become).
    pub(crate) fn with_task(mut self, link: Arc<dyn TaskLink>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.task = Some(link);
        }
        self
    }

    /// The link to the task this call runs as, once it is one.
    fn running_task(&self) -> Option<&Arc<dyn TaskLink>> {
        self.inner.task.as_ref().filter(|t| t.task_id().is_some())
    }

    /// The id of the task this call runs as (the Tasks extension), `None` for an ordinary
    /// call. Inside a task, asks become the task's `inputRequests` and wait for the client's
    /// `tasks/update`, and progress messages become its `statusMessage`.
    pub fn task_id(&self) -> Option<String> {
        self.inner.task.as_ref().and_then(|t| t.task_id())
    }

    /// For a tool registered with [`ToolOptions::defer_task`](crate::server::ToolOptions::defer_task):
    /// answers the `tools/call` now with a `CreateTaskResult` and goes on as that task (its
    /// asks before this point were answered as in an ordinary call, through MRTR rounds).
    /// Returns whether the call now runs as a task: false when the client did not declare the
    /// extension (the call then goes on as an ordinary one) or the tool cannot run as a task.
    /// Calling it again, or in a call that already is a task, changes nothing.
    pub async fn start_task(&self) -> Result<bool> {
        match &self.inner.task {
            Some(t) => t.start().await,
            None => Ok(false),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The method of the request, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The protocol version the request was made with.
    pub fn protocol_version(&self) -> &str {
        &self.inner.meta.protocol_version
    }

    /// The client's capabilities for this request.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.inner.meta.client_capabilities
    }

    /// Whether the client declared a capability (`"sampling"`, `"elicitation"`, `"roots"`, …).
    pub fn client_supports(&self, capability: &str) -> bool {
        self.inner.meta.client_supports(capability)
    }

    /// The client's self-reported identity (`clientInfo`), when sent.
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.meta.client_info.as_ref()
    }

    /// The whole `_meta` object of the request.
    pub fn meta(&self) -> &Map<String, Value> {
        &self.inner.meta.raw
    }

    /// The trace context of the request's span while telemetry is on
    /// ([`crate::telemetry`]): a Rust handler already runs in it as OpenTelemetry's current
    /// context; a binding hands it to the host's OpenTelemetry.
    pub fn trace_context(&self) -> Option<&crate::telemetry::TraceContext> {
        self.inner.meta.trace.as_ref()
    }

    /// The authenticated principal, when the transport established one.
    pub fn principal(&self) -> Option<&str> {
        self.inner.principal.as_deref()
    }

    /// The request's HTTP headers, every one as received; `None` on stdio.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.inner.http_headers.as_deref()
    }

    /// One HTTP header's value (the first, if it was sent more than once), when it is text;
    /// `None` on stdio.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers()?.get(name)?.to_str().ok()
    }

    /// What the bearer token granted (subject, scopes, claims), with bearer auth.
    pub fn token(&self) -> Option<&Token> {
        self.inner.token.as_deref()
    }

    /// The bearer token's claims (the verifier's `claims`); `None` without a verified token.
    pub fn claims(&self) -> Option<&Map<String, Value>> {
        self.token().map(|t| &t.claims)
    }

    /// The request's metadata as one JSON object, what every binding hands its handlers:
    /// `method`, `requestId`, `protocolVersion`, `clientCapabilities`, `clientInfo`,
    /// `principal`, `progressToken`, `meta`, `headers` (lowercase names; `{}` on stdio),
    /// `claims` and `scopes` (null without a bearer token), `taskId` (null outside a task) and
    /// `trace` (the trace context while telemetry is on, else null).
    pub fn info_json(&self) -> Value {
        json!({
            "method": self.method(),
            "requestId": self.request_id(),
            "protocolVersion": self.protocol_version(),
            "clientCapabilities": self.client_capabilities(),
            "clientInfo": self.client_info(),
            "principal": self.principal(),
            "progressToken": self.progress_token(),
            "meta": self.meta(),
            "headers": self.headers().map(crate::server::middleware::headers_to_json).unwrap_or_default(),
            "claims": self.claims(),
            "scopes": self.token().map(|t| &t.scopes),
            "taskId": self.task_id(),
            "trace": self.trace_context().map(|t| t.to_map()),
        })
    }

    /// The progress token of the request, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.meta.progress_token.as_ref()
    }

    /// The cancellation token: cancelled when the client cancels the request (stdio
    /// `notifications/cancelled`, HTTP disconnect) or the server shuts down.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled.
    ///
    /// A cancelled request's handler future is **dropped** by the server (and then this
    /// token fires), so code after an `.await` in the handler does not run: put cleanup in a
    /// `Drop` guard. Use this token in work the handler spawned (a thread, a task, a host
    /// language callback), which outlives the handler future.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// Sends `notifications/progress` for this request; does nothing when the client sent no
    /// progress token. `progress` should increase from one call to the next. Never waits:
    /// while the client is not reading, once 64 messages of this request wait, a newer value
    /// replaces the latest one still queued, so a handler may report as often as it likes.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let (Some(task), Some(m)) = (self.running_task(), message) {
            task.status_message(m);
        }
        let Some(token) = &self.inner.meta.progress_token else { return };
        let mut p = Map::new();
        p.insert("progressToken".into(), token.clone());
        p.insert("progress".into(), json!(progress));
        if let Some(t) = total {
            p.insert("total".into(), json!(t));
        }
        if let Some(m) = message {
            p.insert("message".into(), json!(m));
        }
        self.notify("notifications/progress", Value::Object(p));
    }

    /// Whether a log message at `level` would be sent: the request asked for logs with
    /// `_meta["io.modelcontextprotocol/logLevel"]` at or below that level.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        self.inner.meta.log_level.is_some_and(|min| level >= min)
    }

    /// Sends `notifications/message` for this request, only when the request asked for logs
    /// at this level or a lower one (nothing is sent to a request without a log level).
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        if !self.log_enabled(level) {
            return;
        }
        let mut p = Map::new();
        p.insert("level".into(), serde_json::to_value(level).unwrap_or(Value::Null));
        if let Some(l) = logger {
            p.insert("logger".into(), json!(l));
        }
        p.insert("data".into(), data);
        self.notify("notifications/message", Value::Object(p));
    }

    /// Ends this request's SSE response stream now and asks the client to reconnect after
    /// `retry` (SEP-1699 polling: long operations need not hold a connection open). The
    /// request goes on; what it sends afterwards, its response included, reaches the client
    /// when it reconnects with `Last-Event-ID`. Only legacy (2025-11-25) Streamable HTTP
    /// sessions have resumable streams; elsewhere this does nothing.
    pub fn close_stream(&self, retry: std::time::Duration) {
        if let Some(tx) = &self.inner.notify {
            let _ = tx.send(Outgoing::CloseStream { retry });
        }
    }

    /// Sends a request-scoped notification on this request's response stream.
    pub fn notify(&self, method: &str, params: Value) {
        if let Some(tx) = &self.inner.notify {
            let _ = tx.send(Outgoing::Notification(Notification::new(method, Some(params))));
        }
    }

    /// Asks the client for input through elicitation (`elicitation/create`, params an
    /// `ElicitRequestParams`), returning its `ElicitResult`. See the module docs for the
    /// replay model. Fails with -32021 when the client did not declare `elicitation`.
    pub async fn elicit(&self, key: &str, params: Value) -> Result<Value> {
        self.ask(AskKind::Elicit, key, params).await
    }

    /// Asks the client to sample an LLM (`sampling/createMessage`, params a
    /// `CreateMessageRequestParams`), returning its `CreateMessageResult`.
    pub async fn sample(&self, key: &str, params: Value) -> Result<Value> {
        self.ask(AskKind::Sample, key, params).await
    }

    /// Asks the client for its roots (`roots/list`), returning its `ListRootsResult`.
    pub async fn list_roots(&self, key: &str) -> Result<Value> {
        self.ask(AskKind::ListRoots, key, json!({})).await
    }

    /// The key of the next ask of `kind` made without one: `elicitation_1`, `sampling_1`,
    /// `roots_1`, then `_2`... in the order of the asks of this run. It names the same ask on
    /// every run as long as the handler asks in the same order.
    pub fn next_key(&self, kind: AskKind) -> String {
        let mut counts = self.inner.auto_keys.lock().unwrap_or_else(|e| e.into_inner());
        let n = &mut counts[kind as usize];
        *n += 1;
        format!("{}_{n}", kind.name())
    }

    /// An ask as a host binding makes it, without awaiting: the key is `key`, or
    /// [`next_key`](Self::next_key) when None; `params` as for [`elicit`](Self::elicit) and
    /// [`sample`](Self::sample) (ignored for roots). Outside a legacy session the answer is
    /// known at once ([`Ask::Answered`], see the module docs for the replay model); in a
    /// legacy session the ask is a real request to the client ([`Ask::Pending`]).
    pub fn ask_now(&self, kind: AskKind, key: Option<&str>, params: Value) -> Ask {
        let key = key.map_or_else(|| self.next_key(kind), str::to_owned);
        let params = if kind == AskKind::ListRoots { json!({}) } else { params };
        if !self.client_supports(kind.capability()) {
            return Ask::Answered(Err(Error::missing_capability(json!({ kind.capability(): {} }))));
        }
        if self.inner.peer.is_some() || self.running_task().is_some() {
            let me = self.clone();
            return Ask::Pending(Box::pin(async move { me.ask(kind, &key, params).await }));
        }
        Ask::Answered(self.answer_from_round(kind, &key, params))
    }

    async fn ask(&self, kind: AskKind, key: &str, params: Value) -> Result<Value> {
        if !self.client_supports(kind.capability()) {
            return Err(Error::missing_capability(json!({ kind.capability(): {} })));
        }
        if let Some(peer) = &self.inner.peer {
            let answer = peer.session.request(&peer.out, kind.method(), params, &self.inner.cancel).await?;
            if !kind.check(&answer) {
                return Err(Error::invalid_params(format!(
                    "Invalid params: the client's answer to {} is not a valid {}",
                    kind.method(),
                    kind.result_name()
                )));
            }
            return Ok(answer);
        }
        if let Some(task) = self.running_task() {
            if self.inner.round.lock().unwrap_or_else(|e| e.into_inner()).answers.contains_key(key) {
                return self.answer_from_round(kind, key, params);
            }
            let answer = task.ask(key.to_owned(), kind.method(), params).await?;
            if !kind.check(&answer) {
                return Err(Error::invalid_params(format!(
                    "Invalid params: inputResponses[\"{key}\"] is not a valid {} for the {} request the task made",
                    kind.result_name(),
                    kind.method()
                )));
            }
            return Ok(answer);
        }
        self.answer_from_round(kind, key, params)
    }

    /// The answer the request carries under `key`, or the ask recorded for the next round.
    fn answer_from_round(&self, kind: AskKind, key: &str, params: Value) -> Result<Value> {
        let mut round = self.inner.round.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(answer) = round.answers.get(key) {
            if !kind.check(answer) {
                return Err(Error::invalid_params(format!(
                    "Invalid params: inputResponses[\"{key}\"] is not a valid {} for the {} request the server made",
                    kind.result_name(),
                    kind.method()
                )));
            }
            let answer = answer.clone();
            round.used.insert(key.to_owned(), answer.clone());
            return Ok(answer);
        }
        if !round.pending.iter().any(|(k, _, _)| k == key) {
            round.pending.push((key.to_owned(), kind.method(), params));
        }
        Err(Error::new(ErrorKind::InputRequired, format!("input required: {key}")))
    }

    /// The state this handler saved in an earlier round with
    /// [`set_request_state`](Self::set_request_state), if any.
    pub fn request_state(&self) -> Option<Value> {
        self.inner.round.lock().unwrap_or_else(|e| e.into_inner()).state.clone()
    }

    /// Saves state for the next round: sealed into `requestState` when this run ends with
    /// an `InputRequiredResult`. To ask for a retry with no input requests at all (e.g. load
    /// shedding), set state and return [`Error::input_required`].
    pub fn set_request_state(&self, state: Value) {
        let mut round = self.inner.round.lock().unwrap_or_else(|e| e.into_inner());
        round.state = Some(state);
        round.state_changed = true;
    }

    pub(crate) fn take_round(&self) -> Round {
        std::mem::take(&mut *self.inner.round.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Error {
    /// Ends this run of a handler with an `InputRequiredResult` (every ask made so far, and
    /// the state set with [`RequestContext::set_request_state`]).
    pub fn input_required() -> Self {
        Error::new(ErrorKind::InputRequired, "input required")
    }
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.inner.id)
            .field("method", &self.inner.method)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(answers: Value) -> RequestContext {
        let caps = json!({ "elicitation": {}, "roots": {} });
        let meta = RequestMeta {
            protocol_version: crate::server::request_meta::PROTOCOL_VERSION.into(),
            client_capabilities: caps.as_object().cloned().unwrap_or_default(),
            client_info: None,
            log_level: None,
            progress_token: None,
            raw: Map::new(),
            trace: None,
        };
        let round = Round { answers: answers.as_object().cloned().unwrap_or_default(), ..Round::default() };
        RequestContext::new(
            RequestId::Number(1),
            "tools/call".into(),
            Arc::new(meta),
            None,
            (None, None),
            None,
            CancellationToken::new(),
            round,
            None,
        )
    }

    fn answered(a: Ask) -> Result<Value> {
        match a {
            Ask::Answered(r) => r,
            Ask::Pending(_) => panic!("outside a legacy session every ask is answered at once"),
        }
    }

    #[test]
    fn automatic_keys_count_per_kind_in_the_order_of_the_asks() {
        let c = ctx(json!({ "elicitation_2": { "action": "decline" } }));
        let first = answered(c.ask_now(AskKind::Elicit, None, json!({ "message": "a" })));
        assert_eq!(first.unwrap_err().kind(), ErrorKind::InputRequired);
        let second = answered(c.ask_now(AskKind::Elicit, None, json!({ "message": "b" })));
        assert_eq!(second.unwrap(), json!({ "action": "decline" }), "the second elicitation is elicitation_2");
        assert!(answered(c.ask_now(AskKind::ListRoots, None, Value::Null)).is_err());
        let pending: Vec<String> = c.take_round().pending.into_iter().map(|(k, _, _)| k).collect();
        assert_eq!(pending, ["elicitation_1", "roots_1"]);
        assert_eq!(c.next_key(AskKind::Sample), "sampling_1");
    }

    #[test]
    fn an_ask_names_its_key_or_fails_for_a_missing_capability() {
        let c = ctx(json!({ "mine": { "roots": [] } }));
        assert_eq!(answered(c.ask_now(AskKind::ListRoots, Some("mine"), Value::Null)).unwrap(), json!({ "roots": [] }));
        let e = answered(c.ask_now(AskKind::Sample, None, json!({}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MissingRequiredClientCapability);
        assert_eq!("sampling".parse::<AskKind>().unwrap(), AskKind::Sample);
        assert_eq!("roots".parse::<AskKind>().unwrap().name(), "roots");
        assert_eq!("sample".parse::<AskKind>().unwrap_err().kind(), ErrorKind::Usage);
    }

    #[test]
    fn info_json_names_every_part_of_the_request() {
        let info = ctx(json!({})).info_json();
        assert_eq!(info["method"], "tools/call");
        assert_eq!(info["requestId"], 1);
        assert_eq!(info["protocolVersion"], crate::server::request_meta::PROTOCOL_VERSION);
        assert_eq!(info["clientCapabilities"], json!({ "elicitation": {}, "roots": {} }));
        assert_eq!(info["headers"], json!({}), "no headers on stdio: an empty object");
        for absent in ["clientInfo", "principal", "progressToken", "claims", "scopes", "taskId", "trace"] {
            assert_eq!(info[absent], Value::Null, "{absent}");
        }
        assert_eq!(info.as_object().map(Map::len), Some(13));
    }
}
