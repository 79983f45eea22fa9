//! The spans and metrics of requests: [`ServerSpan`] for a request served, [`ClientSpan`] for a
//! request sent (with everything the client does around it), [`Gauge`] for what stays open
//! (listen streams, legacy sessions). Each `start` is `None` while telemetry is off.

use super::propagation::{self, TraceContext};
use super::state::{self, Telemetry};
use crate::era::Era;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// A request as a span names it.
pub(crate) struct Described<'a> {
    /// The JSON-RPC method.
    pub method: &'a str,
    /// `params`, for the tool, prompt or resource named and the trace context of `_meta`.
    pub params: Option<&'a Map<String, Value>>,
    /// The JSON-RPC id, as text.
    pub id: Option<String>,
    /// The protocol version of the request (the session's in a legacy session).
    pub protocol_version: Option<&'a str>,
    /// The legacy session, if any.
    pub session_id: Option<&'a str>,
    /// Whether it travels over HTTP (else stdio or in memory).
    pub http: bool,
    /// Whether the tool or prompt it names is one the server has: a name a client made up
    /// is kept out of the span's name and of the metrics (as `_OTHER`), where each distinct
    /// value would be a new time series.
    pub known_target: bool,
}

/// The methods of MCP (both eras and the Tasks extension): another method is `_OTHER` in the
/// span's name and the metrics.
const METHODS: [&str; 21] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "tasks/list",
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "notifications/cancelled",
];

/// The bounded stand-in for a value a client made up.
const OTHER: &str = "_OTHER";

impl Described<'_> {
    fn name_param(&self, key: &str) -> Option<&str> {
        self.params.and_then(|p| p.get(key)).and_then(Value::as_str)
    }

    /// The span's name (`{method} {tool or prompt}`) and the attributes its metrics share:
    /// the method, the tool or prompt, the protocol version, the transport (all of low
    /// cardinality).
    fn name_and_attributes(&self) -> (String, Vec<KeyValue>) {
        let method = if METHODS.contains(&self.method) { self.method } else { OTHER };
        let mut attrs = vec![KeyValue::new("mcp.method.name", method.to_owned())];
        let target = match self.method {
            "tools/call" => self.name_param("name").map(|n| ("gen_ai.tool.name", n)),
            "prompts/get" => self.name_param("name").map(|n| ("gen_ai.prompt.name", n)),
            _ => None,
        };
        let name = match target {
            Some((key, value)) if self.known_target => {
                attrs.push(KeyValue::new(key, value.to_owned()));
                format!("{method} {value}")
            }
            Some((key, _)) => {
                attrs.push(KeyValue::new(key, OTHER));
                method.to_owned()
            }
            None => method.to_owned(),
        };
        if self.method == "tools/call" {
            attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        if let Some(v) = self.protocol_version {
            attrs.push(KeyValue::new("mcp.protocol.version", v.to_owned()));
        }
        attrs.push(KeyValue::new("network.transport", if self.http { "tcp" } else { "pipe" }));
        (name, attrs)
    }

    /// The attributes only the span has (of high cardinality).
    fn span_attributes(&self, era: Era) -> Vec<KeyValue> {
        let mut attrs = Vec::new();
        // What the request named, as sent, on the span alone (the metrics have `_OTHER`).
        if !METHODS.contains(&self.method) {
            attrs.push(KeyValue::new("mcpaxle.request.method", self.method.to_owned()));
        }
        if let (false, Some(n)) = (self.known_target, self.name_param("name")) {
            attrs.push(KeyValue::new("mcpaxle.request.name", n.to_owned()));
        }
        if let Some(id) = &self.id {
            attrs.push(KeyValue::new("jsonrpc.request.id", id.clone()));
        }
        if let Some(uri) = self.name_param("uri").filter(|_| self.method == "resources/read") {
            attrs.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
        }
        if let Some(s) = self.session_id {
            attrs.push(KeyValue::new("mcp.session.id", s.to_owned()));
        }
        if self.http {
            attrs.push(KeyValue::new("network.protocol.name", "http"));
        }
        attrs.push(KeyValue::new("mcpaxle.era", if era == Era::Legacy { "2025-11-25" } else { "2026-07-28" }));
        attrs
    }
}

/// How a request ended, as its span and metrics record it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ended<'a> {
    /// A result: `input_required` when it asked the client for input (an MRTR round),
    /// `tool_error` when it is a tool's `isError` result.
    Result { input_required: bool, tool_error: bool },
    /// A JSON-RPC error.
    Error { code: i32, message: &'a str },
    /// No answer: cancelled, or the connection went away.
    Cancelled,
}

impl<'a> Ended<'a> {
    /// How a result object ended.
    pub(crate) fn of_result(result: &Value) -> Ended<'a> {
        Ended::Result {
            input_required: result.get("resultType").and_then(Value::as_str) == Some("input_required"),
            tool_error: result.get("isError").and_then(Value::as_bool) == Some(true),
        }
    }

    /// How a response ended.
    pub(crate) fn of_response(response: &'a crate::jsonrpc::Response) -> Ended<'a> {
        match &response.outcome {
            crate::jsonrpc::Outcome::Result(v) => Ended::of_result(v),
            crate::jsonrpc::Outcome::Error(e) => Ended::Error { code: e.code, message: &e.message },
        }
    }

    /// Records the end on `span` and in `attrs` (the metrics' attributes).
    fn record(&self, span: &opentelemetry::trace::SpanRef<'_>, attrs: &mut Vec<KeyValue>) {
        match *self {
            Ended::Result { tool_error: true, .. } => {
                attrs.push(KeyValue::new("error.type", "tool_error"));
                span.set_attribute(KeyValue::new("error.type", "tool_error"));
                span.set_status(Status::error("the tool's result is an error (isError)"));
            }
            Ended::Result { .. } => {}
            Ended::Error { code, message } => {
                let code = code.to_string();
                attrs.push(KeyValue::new("error.type", code.clone()));
                attrs.push(KeyValue::new("rpc.response.status_code", code.clone()));
                span.set_attribute(KeyValue::new("error.type", code.clone()));
                span.set_attribute(KeyValue::new("rpc.response.status_code", code));
                span.set_status(Status::error(message.to_owned()));
            }
            Ended::Cancelled => {
                attrs.push(KeyValue::new("error.type", "cancelled"));
                span.set_attribute(KeyValue::new("error.type", "cancelled"));
                span.set_status(Status::error("cancelled before it answered"));
            }
        }
    }
}

/// The span of one request a server serves, and its metrics.
pub(crate) struct ServerSpan {
    telemetry: Arc<Telemetry>,
    cx: Context,
    trace: Option<TraceContext>,
    started: Instant,
    attrs: Vec<KeyValue>,
}

impl ServerSpan {
    /// Starts the span of `request` (a child of the trace context of its `_meta`, else of its
    /// HTTP headers); `None` while telemetry is off.
    pub(crate) fn start(
        request: &Described<'_>,
        era: Era,
        http_headers: Option<&http::HeaderMap>,
        principal: Option<&str>,
    ) -> Option<ServerSpan> {
        let telemetry = state::current()?;
        let meta = request.params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
        let parent = propagation::extract_request(meta, http_headers);
        let (name, attrs) = request.name_and_attributes();
        let mut span_attrs = request.span_attributes(era);
        span_attrs.extend(attrs.iter().cloned());
        if let (true, Some(p)) = (telemetry.record_principal, principal) {
            span_attrs.push(KeyValue::new("enduser.id", p.to_owned()));
        }
        let builder = telemetry.tracer.span_builder(name).with_kind(SpanKind::Server).with_attributes(span_attrs);
        let span = telemetry.tracer.build_with_context(builder, &parent);
        let cx = parent.with_span(span);
        telemetry.instruments.active_requests.add(1, &attrs[..1]);
        Some(ServerSpan { trace: TraceContext::of(&cx), telemetry, cx, started: Instant::now(), attrs })
    }

    /// The trace context the request's handler runs in.
    pub(crate) fn trace(&self) -> Option<&TraceContext> {
        self.trace.as_ref()
    }

    /// Ends the span and records the request's metrics.
    pub(crate) fn finish(mut self, ended: Ended<'_>) {
        let span = self.cx.span();
        let i = &self.telemetry.instruments;
        i.active_requests.add(-1, &self.attrs[..1]);
        if let Ended::Result { input_required: true, .. } = ended {
            i.input_rounds.add(1, &self.attrs);
            span.add_event("input_required", Vec::new());
        }
        ended.record(&span, &mut self.attrs);
        i.server_duration.record(self.started.elapsed().as_secs_f64(), &self.attrs);
        span.end();
    }
}

/// The span of one request a client sends, around everything it does for it (its retries,
/// its MRTR rounds, following its task), and its duration metric. Dropped before
/// [`finish`](Self::finish) (the caller stopped waiting), it ends as cancelled.
pub(crate) struct ClientSpan {
    telemetry: Arc<Telemetry>,
    cx: Context,
    started: Instant,
    attrs: Vec<KeyValue>,
    ended: bool,
}

impl ClientSpan {
    /// Starts the span of `request`: a child of the trace context in `meta` (a binding puts the
    /// host's current context there), else of the current OpenTelemetry context. `None`
    /// while telemetry is off.
    pub(crate) fn start(request: &Described<'_>, era: Era, meta: Option<&Map<String, Value>>) -> Option<ClientSpan> {
        let telemetry = state::current()?;
        let parent = match meta {
            Some(m) if m.contains_key("traceparent") => propagation::extract(m),
            _ => Context::current(),
        };
        let (name, attrs) = request.name_and_attributes();
        let mut span_attrs = request.span_attributes(era);
        span_attrs.extend(attrs.iter().cloned());
        let builder = telemetry.tracer.span_builder(name).with_kind(SpanKind::Client).with_attributes(span_attrs);
        let span = telemetry.tracer.build_with_context(builder, &parent);
        Some(ClientSpan { cx: parent.with_span(span), telemetry, started: Instant::now(), attrs, ended: false })
    }

    /// Writes the span's trace context into the request's `_meta`.
    pub(crate) fn inject(&self, meta: &mut Map<String, Value>) {
        propagation::inject(&self.cx, meta);
    }

    /// Ends the span and records the request's duration.
    pub(crate) fn finish(&mut self, ended: Ended<'_>) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let span = self.cx.span();
        ended.record(&span, &mut self.attrs);
        self.telemetry.instruments.client_duration.record(self.started.elapsed().as_secs_f64(), &self.attrs);
        span.end();
    }
}

impl Drop for ClientSpan {
    fn drop(&mut self) {
        self.finish(Ended::Cancelled);
    }
}

/// What a [`Gauge`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// An open `subscriptions/listen` stream.
    ListenStream,
    /// An open legacy session (its duration is recorded when it ends).
    LegacySession,
}

/// One open thing, counted while it lives.
pub(crate) struct Gauge {
    telemetry: Arc<Telemetry>,
    what: Counted,
    opened: Instant,
}

/// Counts one more `what` until the returned guard drops; `None` while telemetry is off.
pub(crate) fn gauge(what: Counted) -> Option<Gauge> {
    let telemetry = state::current()?;
    telemetry.instruments.counter(what).add(1, &[]);
    Some(Gauge { telemetry, what, opened: Instant::now() })
}

impl Drop for Gauge {
    fn drop(&mut self) {
        let i = &self.telemetry.instruments;
        i.counter(self.what).add(-1, &[]);
        if self.what == Counted::LegacySession {
            i.session_duration.record(self.opened.elapsed().as_secs_f64(), &[]);
        }
    }
}

impl state::Instruments {
    fn counter(&self, what: Counted) -> &opentelemetry::metrics::UpDownCounter<i64> {
        match what {
            Counted::ListenStream => &self.listen_streams,
            Counted::LegacySession => &self.legacy_sessions,
        }
    }
}

/// `fut`, run in the trace context `trace` (as OpenTelemetry's current context, for Rust code
/// that starts spans), or as it is without one.
pub(crate) fn in_trace<F: std::future::Future>(
    trace: Option<&TraceContext>,
    fut: F,
) -> futures_util::future::Either<opentelemetry::trace::WithContext<F>, F> {
    use futures_util::future::Either;
    match trace {
        Some(t) => Either::Left(opentelemetry::trace::FutureExt::with_context(fut, t.to_context())),
        None => Either::Right(fut),
    }
}
