//! Serving legacy requests: `initialize`, the methods 2026-07-28 removed, and every shared
//! method through the same code as the modern era.

use crate::era::Era;
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{Notification, Request, RequestId, Response};
use crate::legacy::{Session, negotiate};
use crate::schema::LoggingLevel;
use crate::server::dispatch::{Method, ServedIn};
use crate::server::exchange::{Exchange, Outgoing};
use crate::server::request_meta::RequestMeta;
use crate::server::subscriptions::{ServerEvent, event_queue};
use crate::server::{Server, TransportContext};
use crate::telemetry::{Ended, TraceContext};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Server {
    /// Answers a legacy `initialize`: negotiates the version and opens a session. The
    /// transport keeps the session (on HTTP under its `Mcp-Session-Id`).
    pub fn initialize(
        &self,
        req: &Request,
        tc: &TransportContext,
    ) -> std::result::Result<(Arc<Session>, Response), Response> {
        let span = self.request_span(req, tc, Era::Legacy, None);
        let answer = self.open_session(req);
        if let Some(span) = span {
            span.finish(Ended::of_response(match &answer {
                Ok((_, r)) | Err(r) => r,
            }));
        }
        answer
    }

    fn open_session(&self, req: &Request) -> std::result::Result<(Arc<Session>, Response), Response> {
        let fail = |e: Error| Response::error(Some(req.id.clone()), e.to_error_object());
        if !self.legacy_options().enabled {
            return Err(fail(Error::method_not_found("initialize")));
        }
        let params = req
            .params
            .as_ref()
            .and_then(Value::as_object)
            .ok_or_else(|| fail(Error::invalid_params("Invalid params: initialize needs params")))?;
        let requested = params.get("protocolVersion").and_then(Value::as_str).ok_or_else(|| {
            fail(Error::invalid_params("Invalid params: initialize needs a string \"protocolVersion\""))
        })?;
        let capabilities = match params.get("capabilities") {
            Some(Value::Object(c)) => c.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(_) => return Err(fail(Error::invalid_params("Invalid params: \"capabilities\" must be an object"))),
        };
        let version = negotiate(requested);
        let session = Arc::new(Session::new(
            version.to_owned(),
            capabilities,
            params.get("clientInfo").cloned(),
            self.legacy_options().request_timeout,
        ));
        let mut result = Map::new();
        result.insert("protocolVersion".into(), json!(version));
        result.insert("capabilities".into(), self.capabilities());
        result.insert("serverInfo".into(), serde_json::to_value(self.info()).unwrap_or(Value::Null));
        if let Some(i) = self.instructions() {
            result.insert("instructions".into(), json!(i));
        }
        Ok((session, Response::result(req.id.clone(), Value::Object(result))))
    }

    /// Handles a request in a legacy session.
    pub fn handle_legacy_request(&self, session: &Arc<Session>, req: Request, tc: &TransportContext) -> Exchange {
        let id = req.id.clone();
        session.touch();
        let span = self.request_span(&req, tc, Era::Legacy, Some(session));
        let trace = span.as_ref().and_then(|s| s.trace().cloned());
        match self.prepare_legacy(session, req, tc, trace) {
            Ok(ex) => ex,
            Err(e) => Exchange::ready(Response::error(Some(id), e.to_error_object())),
        }
        .observed(span)
    }

    fn prepare_legacy(
        &self,
        session: &Arc<Session>,
        req: Request,
        tc: &TransportContext,
        trace: Option<TraceContext>,
    ) -> Result<Exchange> {
        let era = ServedIn::Legacy(session.clone());
        let params = req.params.as_ref();
        if params.is_some_and(|p| !p.is_object()) {
            return Err(Error::invalid_params("Invalid params: \"params\" must be an object"));
        }
        let empty = || Map::new();
        match req.method.as_str() {
            "initialize" => {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    "Invalid Request: this session is already initialized",
                ));
            }
            "ping" => return Ok(self.ready(req.id, empty(), None, &era)),
            "logging/setLevel" => {
                let level = params
                    .and_then(|p| p.get("level"))
                    .cloned()
                    .ok_or_else(|| Error::invalid_params("Invalid params: \"level\" is required"))?;
                let level: LoggingLevel = serde_json::from_value(level)
                    .map_err(|_| Error::invalid_params("Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency"))?;
                session.set_log_level(level);
                return Ok(self.ready(req.id, empty(), None, &era));
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                self.serve_available(Method::ResourcesRead, &req.method)?;
                let uri = params
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::invalid_params("Invalid params: \"uri\" must be a string"))?;
                if req.method == "resources/subscribe" {
                    session.subscribe(uri);
                } else {
                    session.unsubscribe(uri);
                }
                return Ok(self.ready(req.id, empty(), None, &era));
            }
            _ => {}
        }
        let method = match Method::parse(&req.method) {
            Some(Method::Discover | Method::Listen | Method::Task(_)) | None => {
                return Err(Error::method_not_found(&req.method));
            }
            Some(m) => m,
        };
        let meta = RequestMeta { trace, ..legacy_meta(session, params) };
        self.serve_method(method, req, meta, tc, &era)
    }

    /// Handles a notification in a legacy session (`notifications/cancelled` cancels the
    /// request; `notifications/initialized` and others are accepted).
    pub fn handle_legacy_notification(&self, session: &Arc<Session>, n: Notification) {
        session.touch();
        if n.method == "notifications/cancelled" {
            if let Some(id) = n.params.as_ref().and_then(|p| p.get("requestId")).and_then(RequestId::from_value) {
                session.cancel(&id);
            }
        }
    }

    /// The session's stream of server-initiated notifications (the HTTP GET stream, or
    /// stdout on stdio): list changes, and updates of subscribed resources. It ends when the
    /// session ends or the transport shuts down.
    pub fn legacy_stream(&self, session: &Arc<Session>, tc: &TransportContext) -> Exchange {
        // Updates are queued only for resources the session subscribed to (`resources/subscribe`).
        let weak = Arc::downgrade(session);
        let (sink, mut events) = event_queue(move |e| match e {
            ServerEvent::ResourceUpdated { uri } => weak.upgrade().is_some_and(|s| s.is_subscribed(uri)),
            // Tasks are a 2026-07-28 extension: no legacy session follows one.
            ServerEvent::TaskStatus { .. } => false,
            _ => true,
        });
        self.inner.bus.subscribe(sink);
        let (tx, rx) = crate::server::exchange::outgoing_channel();
        let guard = session.stream_opened();
        let session = session.clone();
        let shutdown = tc.shutdown.clone();
        let fut = async move {
            let _open = guard;
            loop {
                let event = tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => break,
                    _ = session.closed().cancelled() => break,
                    e = events.recv() => e,
                };
                match event {
                    // Unsubscribed since the update was queued.
                    Some(ServerEvent::ResourceUpdated { uri }) if !session.is_subscribed(&uri) => {}
                    Some(e) => {
                        if tx.send(Outgoing::Notification(e.to_notification())).is_err() {
                            break;
                        }
                    }
                    None => break,
                }
            }
            None::<Response>
        };
        Exchange::running(fut, rx, CancellationToken::new(), true)
    }
}

/// The `_meta` of a legacy request, made from its session: the negotiated version, the
/// capabilities and identity from `initialize`, the level from `logging/setLevel`.
fn legacy_meta(session: &Session, params: Option<&Value>) -> RequestMeta {
    let raw = params.and_then(|p| p.get("_meta")).and_then(Value::as_object).cloned().unwrap_or_default();
    let progress_token = raw.get("progressToken").filter(|t| t.is_string() || t.is_number()).cloned();
    RequestMeta {
        protocol_version: session.protocol_version().to_owned(),
        client_capabilities: session.client_capabilities().clone(),
        client_info: session.client_info().cloned(),
        log_level: session.log_level(),
        progress_token,
        raw,
        trace: None,
    }
}
