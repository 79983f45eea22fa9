//! Streamable HTTP, server side, on hyper 1.
//!
//! One endpoint path takes POST. A request that produced no notifications is answered with
//! one JSON object; one that did (progress, logs, `subscriptions/listen`) with an SSE stream.
//! Notifications get `202`. Origin and Host are checked against DNS rebinding (loopback is
//! allowed by default), bodies are capped, long-lived streams get keep-alive comments, a
//! disconnect cancels the request, and shutdown is graceful: stop accepting, end listen
//! streams with their final response, drain with a deadline.
//!
//! [`HttpServer`] also bounds its connections ([`ConnectionLimits`]): header, body and idle
//! timeouts, HTTP/2 keep-alive pings, and a connection limit that closes idle connections first.
//!
//! [`McpService`] is the same endpoint as a plain request → response function, to mount in
//! your own hyper or axum application (its connections are then your server's business).

use super::cors::CorsOptions;
use super::json_body::Chunks;
use super::resume::{self, ResumableStreams};
use super::rules;
use super::sse;
use crate::era::Era;
use crate::error::{Error, Result, http_status_for_code};
use crate::headers;
use crate::jsonrpc::{self, ErrorObject, Message, Response};
use crate::legacy::{LEGACY_VERSIONS, SessionRefused, SessionStore, is_legacy_initialize};
use crate::server::{Exchange, Outgoing, RequestHeaders, Server, Token, TransportContext, Wire};
use crate::transport::auth::{BearerAuth, Refusal, TokenInfo};
pub use crate::transport::connections::ConnectionLimits;
use crate::transport::connections::{Admitted, BodiesInFlight, BodyTimeout, Connections, out_of_descriptors};
use crate::transport::outgoing_bytes;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

/// The authenticated principal of a request: put it in the request's extensions (from your
/// authentication middleware) and it is bound into MRTR state and handed to handlers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub String);

/// The address of the peer a request came from: [`HttpServer`] puts it in every request's
/// extensions. If you mount [`McpService::handle`] yourself, insert it too (the client's
/// address, behind a proxy the one it forwarded): unauthenticated legacy sessions are limited
/// per peer address ([`LegacyOptions::max_sessions_per_peer`]), and without it only the
/// table's size applies.
///
/// [`LegacyOptions::max_sessions_per_peer`]: crate::legacy::LegacyOptions::max_sessions_per_peer
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// Options of the Streamable HTTP server.
///
/// As data (every binding's HTTP serve options): camelCase names, durations in milliseconds
/// (`keepAliveMs`, `drainTimeoutMs`), absent fields keep their defaults; `auth` and
/// `connections` are the objects of [`BearerAuth`] (its verifier set by the binding) and
/// [`ConnectionLimits`].
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpOptions {
    /// The MCP endpoint path (default `/mcp`).
    pub path: String,
    /// The largest request body accepted, in bytes (default 4194304: 4 MiB); larger bodies
    /// get `413`.
    #[serde(alias = "max_body")]
    pub max_body: usize,
    /// Host header values accepted (names, without port). `None` (the default): loopback
    /// names (`localhost`, `127.0.0.1`, `[::1]`) plus the address the server is bound to.
    #[serde(alias = "allowed_hosts")]
    pub allowed_hosts: Option<Vec<String>>,
    /// Origins accepted besides loopback ones, exactly as browsers send them
    /// (`https://app.example.com`); `"*"` accepts any. Requests without `Origin` are accepted,
    /// and so are the origins listed by name in [`HttpOptions::cors`].
    #[serde(alias = "allowed_origins")]
    pub allowed_origins: Vec<String>,
    /// Interval of keep-alive comments on long-lived streams (JSON `keepAliveMs`, default
    /// 15000: 15 s).
    #[serde(rename = "keepAliveMs", with = "crate::options::positive_ms")]
    #[serde(alias = "keep_alive_ms")]
    pub keep_alive: Duration,
    /// How long shutdown waits for requests in flight (JSON `drainTimeoutMs`, default 10000:
    /// 10 s; 0 does not wait).
    #[serde(rename = "drainTimeoutMs", with = "crate::options::ms")]
    #[serde(alias = "drain_timeout_ms")]
    pub drain_timeout: Duration,
    /// Bearer-token protection (see [`BearerAuth`]); `None` (the default): none.
    pub auth: Option<BearerAuth>,
    /// The limits of [`HttpServer`]'s connections: timeouts, HTTP/2 keep-alive, how many
    /// (defaults sized from the fd limit; see [`ConnectionLimits`]). Not used by
    /// [`McpService::handle`] alone.
    pub connections: ConnectionLimits,
    /// Whether the listening socket is opened with `SO_REUSEPORT` (Unix; JSON `reusePort`,
    /// default false), so that several processes serve the same port, the kernel spreading
    /// connections among them (Python's `run("http", workers=N)` uses it). Every process
    /// binding the port must set it.
    #[serde(alias = "reuse_port")]
    pub reuse_port: bool,
    /// CORS, for browser pages of other origins (see [`CorsOptions`]); `None` (the default):
    /// off, so browsers let no page of another origin read a response.
    pub cors: Option<CorsOptions>,
    /// A health-check route (e.g. `"/healthz"`; `None`, the default: none) answered `200`
    /// `{"status":"ok"}` to `GET` and `HEAD` by [`McpService::handle`] (the built-in server),
    /// without bearer auth and without the Host and Origin checks, since load balancers probe
    /// by IP address (it reads and changes nothing, so DNS rebinding gains nothing from it).
    /// Must start with `/` and differ from `path`. A host application that mounts the
    /// endpoint has its own routes: [`McpService::handle_routed`] does not answer it.
    #[serde(alias = "health_path", deserialize_with = "health_path")]
    pub health_path: Option<String>,
    /// A route answering the process's metrics in Prometheus's text format to `GET` (e.g.
    /// `"/metrics"`; `None`, the default: none), when telemetry is on with `prometheus`
    /// ([`crate::telemetry`]); `503` saying so otherwise. Like the health route, it has no
    /// bearer auth and no Host or Origin check (scrapers come by IP address): expose it only
    /// where metrics may be read, or keep it off. Must start with `/` and differ from `path`.
    #[serde(alias = "metrics_path", deserialize_with = "health_path")]
    pub metrics_path: Option<String>,
}

/// `healthPath`, `metricsPath`: absent, `null`, or a path starting with `/`.
fn health_path<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    crate::options::checked(d, |p: &Option<String>| match p {
        Some(p) if !p.starts_with('/') || p.contains(['?', '#']) => {
            Err(format!("{p:?} is not a path: it starts with / and has no query (e.g. \"/healthz\")"))
        }
        _ => Ok(()),
    })
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            max_body: 4 << 20,
            allowed_hosts: None,
            allowed_origins: Vec::new(),
            keep_alive: Duration::from_secs(15),
            drain_timeout: Duration::from_secs(10),
            auth: None,
            connections: ConnectionLimits::default(),
            reuse_port: false,
            cors: None,
            health_path: None,
            metrics_path: None,
        }
    }
}

/// The MCP endpoint as a service: call [`McpService::handle`] with any HTTP request.
#[derive(Clone)]
pub struct McpService {
    server: Server,
    options: Arc<HttpOptions>,
    bound: Option<SocketAddr>,
    shutdown: CancellationToken,
    sessions: Arc<SessionStore>,
    streams: Arc<ResumableStreams>,
}

impl McpService {
    /// A service for `server` with `options`. Options read from data are checked as they are
    /// read; check a [`BearerAuth`] built in Rust with [`BearerAuth::validate`] first
    /// ([`HttpServer::bind`] does).
    pub fn new(server: Server, options: HttpOptions) -> Self {
        let sessions = SessionStore::new(server.legacy_options().clone());
        McpService {
            server,
            options: Arc::new(options),
            bound: None,
            shutdown: CancellationToken::new(),
            sessions,
            streams: Arc::default(),
        }
    }

    /// The legacy sessions open on this endpoint.
    pub fn sessions(&self) -> &Arc<SessionStore> {
        &self.sessions
    }

    /// Cancelled to end open `subscriptions/listen` streams gracefully.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Handles one HTTP request to the server: the MCP endpoint at [`HttpOptions::path`] (and,
    /// with bearer auth, its protected resource metadata; with [`HttpOptions::health_path`],
    /// the health route); any other path gets `404`.
    pub async fn handle<B>(&self, req: Request<B>) -> http::Response<McpBody>
    where
        B: Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let path = req.uri().path();
        if self.options.health_path.as_deref() == Some(path) {
            return health(req.method());
        }
        if self.options.metrics_path.as_deref() == Some(path) {
            return metrics(req.method());
        }
        let metadata = self.options.auth.is_some()
            && req.method() == Method::GET
            && path == BearerAuth::metadata_path(&self.options.path);
        if path != self.options.path && !metadata {
            return plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is elsewhere");
        }
        self.handle_routed(req).await
    }

    /// Handles one HTTP request that the host application has routed to the MCP endpoint,
    /// whatever its path: what a binding's mounted handler (an ASGI app, a `node:http`
    /// listener, a fetch handler, the C request function) calls. With bearer auth, a `GET` of
    /// the protected resource metadata path of [`HttpOptions::path`] (the endpoint's public
    /// path) is answered with the metadata, should the host route that here too. With
    /// [`HttpOptions::cors`], preflights are answered and responses carry the CORS headers.
    pub async fn handle_routed<B>(&self, req: Request<B>) -> http::Response<McpBody>
    where
        B: Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // CORS for an origin the Origin check accepts, on anything but a preflight (answered
        // in `endpoint` by its own rules).
        let cors = self.options.cors.as_ref().filter(|_| !CorsOptions::is_preflight(req.method(), req.headers()));
        let origin = cors.and(req.headers().get(header::ORIGIN)).filter(|o| self.origin_allowed(o)).cloned();
        let mut r = match self.metadata(&req) {
            Some(r) => r,
            None => self.endpoint(req).await,
        };
        if let Some(cors) = cors {
            cors.respond(origin.as_ref(), r.headers_mut());
        }
        r
    }

    /// The protected resource metadata, if bearer auth is on and `req` asks for it.
    fn metadata<B>(&self, req: &Request<B>) -> Option<http::Response<McpBody>> {
        let auth = self.options.auth.as_ref()?;
        if req.method() != Method::GET || req.uri().path() != BearerAuth::metadata_path(&self.options.path) {
            return None;
        }
        let mut r = with_json(StatusCode::OK, serde_json::to_vec(&auth.metadata()).unwrap_or_default());
        // Public metadata: browser-based clients may read it from any origin.
        r.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        Some(r)
    }

    /// The MCP endpoint itself: Host and Origin, the bearer token, routing by method and
    /// session, the body, then the server.
    async fn endpoint<B>(&self, req: Request<B>) -> http::Response<McpBody>
    where
        B: Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.server.start_bus();
        if let Err((status, why)) = self.check_host_and_origin(req.uri(), req.headers()) {
            return rpc_error(status, ErrorObject::new(jsonrpc::INVALID_REQUEST, why));
        }
        // A preflight carries no credentials: answered before the bearer token is asked for.
        if let Some(cors) = &self.options.cors {
            if CorsOptions::is_preflight(req.method(), req.headers()) {
                let mut r = empty(StatusCode::NO_CONTENT);
                *r.headers_mut() = cors.preflight(req.headers());
                return r;
            }
        }
        let token = match &self.options.auth {
            // Boxed: verifying a token may ask the issuer over HTTP, a future of kilobytes
            // that every request's future would otherwise carry and hyper copy, auth or not.
            Some(auth) => match Box::pin(auth.check(req.headers(), &self.options.path)).await {
                Ok(info) => Some(info),
                Err(refusal) => return refused(refusal),
            },
            None => None,
        };
        let principal = match &token {
            Some(info) => Some(info.subject.clone()),
            None => req.extensions().get::<Principal>().map(|p| p.0.clone()),
        };
        let legacy = self.server.legacy_options().enabled;
        let session_id =
            req.headers().get(headers::MCP_SESSION_ID).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let accept = Accept::of(req.headers());
        match (req.method(), &session_id) {
            (&Method::POST, _) => {}
            (&Method::GET, Some(id)) if legacy => return self.legacy_get(id, &accept, req.headers(), principal),
            (&Method::DELETE, Some(id)) if legacy => {
                // A session of another principal is left alone, as if unknown.
                return if self.sessions.remove(id, principal.as_deref()) {
                    empty(StatusCode::OK)
                } else {
                    session_not_found()
                };
            }
            (m, _) => {
                let mut r = rpc_error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    ErrorObject::new(
                        jsonrpc::INVALID_REQUEST,
                        format!("Method Not Allowed: the MCP endpoint takes POST, not {m}"),
                    ),
                );
                r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
                return r;
            }
        }
        if !accept.json && !accept.sse {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorObject::new(
                    jsonrpc::INVALID_REQUEST,
                    "Not Acceptable: the Accept header must list application/json and text/event-stream",
                ),
            );
        }
        if let Err((status, why)) = check_content_type(req.headers()) {
            return rpc_error(status, ErrorObject::new(jsonrpc::INVALID_REQUEST, why));
        }
        let peer = req.extensions().get::<PeerAddr>().map(|p| p.0.ip());
        let (parts, body) = req.into_parts();
        let bytes = match read_body(body, self.options.max_body, &parts.headers).await {
            Ok(b) => b,
            Err(resp) => return *resp,
        };
        let message = match jsonrpc::parse_message(&bytes) {
            Ok(m) => m,
            Err(rejected) => return json_response(&rejected.response, Era::Modern),
        };
        if let (Some(auth), Some(info), Message::Request(r)) = (&self.options.auth, &token, &message) {
            let tool = r.params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
            if let ("tools/call", Some(name)) = (r.method.as_str(), tool) {
                if let Err(refusal) = auth.check_tool(info, name, &self.options.path) {
                    return refused(refusal);
                }
            }
        }
        if legacy {
            if let Some(id) = &session_id {
                return self.legacy_post(id, message, &accept, parts.headers, principal, token.as_ref()).await;
            }
            if let Message::Request(r) = &message {
                if is_legacy_initialize(r) {
                    let tc = self.transport_context(parts.headers, principal, token.as_ref());
                    return self.legacy_initialize(r, &tc, peer);
                }
            }
        }
        let req = match message {
            Message::Request(r) => r,
            Message::Notification(n) => {
                let tc = self.transport_context(parts.headers, principal, token.as_ref());
                self.server.handle_notification(n, &tc);
                return empty(StatusCode::ACCEPTED);
            }
            Message::Response(_) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    ErrorObject::new(
                        jsonrpc::INVALID_REQUEST,
                        "Invalid Request: this server sends no requests outside legacy sessions, so it accepts no responses",
                    ),
                );
            }
        };
        let tc = self.transport_context(parts.headers, principal, token.as_ref());
        let exchange = self.server.handle_request(req, &tc);
        self.respond(exchange, &accept, None).await
    }

    /// Sends an exchange: the final response alone as JSON, or an SSE stream once anything
    /// comes before it. `session`: a legacy session's id; its SSE streams are resumable.
    async fn respond(&self, mut exchange: Exchange, accept: &Accept, session: Option<&str>) -> http::Response<McpBody> {
        let era = if session.is_some() { Era::Legacy } else { Era::Modern };
        if let Some(body) = exchange.immediate_json() {
            return with_json(StatusCode::OK, body);
        }
        if let Some(resp) = exchange.immediate() {
            return json_response(resp, era);
        }
        if exchange.is_long_lived() && !accept.sse {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorObject::new(
                    jsonrpc::INVALID_REQUEST,
                    "Not Acceptable: this request answers with text/event-stream; list it in Accept",
                ),
            );
        }
        loop {
            let o = match exchange.next_wire().await {
                Some(Wire::Json(body)) => return with_json(StatusCode::OK, body),
                Some(Wire::Message(o)) => Some(o),
                None => None,
            };
            match o {
                Some(Outgoing::Response(r)) => return json_response(&r, era),
                Some(o) if accept.sse && (session.is_some() || !matches!(o, Outgoing::CloseStream { .. })) => {
                    let keep_alive = exchange.is_long_lived().then_some(self.options.keep_alive);
                    let resumable = session.map(|id| Resumable {
                        streams: self.streams.clone(),
                        session: id.to_owned(),
                        stream: self.streams.open(),
                        seq: 0,
                    });
                    let mut body = SseBody::new(exchange, resumable, keep_alive);
                    body.push(o);
                    return sse_response(body);
                }
                Some(_) => continue,
                // Cancelled (legacy notifications/cancelled): no response is due.
                None => return empty(StatusCode::ACCEPTED),
            }
        }
    }

    fn legacy_initialize(
        &self,
        req: &jsonrpc::Request,
        tc: &TransportContext,
        peer: Option<std::net::IpAddr>,
    ) -> http::Response<McpBody> {
        let principal = tc.principal.clone();
        let (session, response) = match self.server.initialize(req, tc) {
            Ok(ok) => ok,
            Err(resp) => return json_response(&resp, Era::Legacy),
        };
        if let Err(refused) = self.sessions.insert(session.clone(), principal, peer) {
            // No Retry-After: a slot frees up when a request or stream ends, which no one can
            // predict (idle sessions would have been ended to make room).
            let status = match refused {
                SessionRefused::Full { .. } => StatusCode::SERVICE_UNAVAILABLE,
                SessionRefused::Quota { .. } => StatusCode::TOO_MANY_REQUESTS,
            };
            return with_json(
                status,
                serde_json::to_vec(&Response::error(Some(req.id.clone()), refused.to_error_object()))
                    .unwrap_or_default(),
            );
        }
        let mut r = json_response(&response, Era::Legacy);
        if let Ok(v) = HeaderValue::from_str(session.id()) {
            r.headers_mut().insert(headers::MCP_SESSION_ID, v);
        }
        r
    }

    async fn legacy_post(
        &self,
        id: &str,
        message: Message,
        accept: &Accept,
        h: HeaderMap,
        principal: Option<String>,
        token: Option<&TokenInfo>,
    ) -> http::Response<McpBody> {
        // Another principal's session is not found: its message changes nothing.
        let Some((session, _in_use)) = self.sessions.checkout(id, principal.as_deref()) else {
            return session_not_found();
        };
        if h.get_all(headers::MCP_PROTOCOL_VERSION).iter().nth(1).is_some() {
            let why = "Bad Request: the MCP-Protocol-Version header was sent more than once; send it exactly once";
            return rpc_error(StatusCode::BAD_REQUEST, ErrorObject::new(jsonrpc::INVALID_REQUEST, why));
        }
        if let Some(v) = h.get(headers::MCP_PROTOCOL_VERSION).and_then(|v| v.to_str().ok()) {
            if !LEGACY_VERSIONS.contains(&v.trim()) {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    ErrorObject::new(
                        jsonrpc::INVALID_REQUEST,
                        format!(
                            "Bad Request: MCP-Protocol-Version {v:?} is not served in legacy sessions ({})",
                            LEGACY_VERSIONS.join(", ")
                        ),
                    ),
                );
            }
        }
        match message {
            Message::Request(req) => {
                let tc = TransportContext { headers: None, ..self.transport_context(h, principal, token) };
                let exchange = self.server.handle_legacy_request(&session, req, &tc);
                self.respond(exchange, accept, Some(id)).await
            }
            Message::Notification(n) => {
                self.server.handle_legacy_notification(&session, n);
                empty(StatusCode::ACCEPTED)
            }
            Message::Response(r) => {
                if !session.deliver(r) {
                    tracing::debug!("a response arrived for no pending request of session {id}");
                }
                empty(StatusCode::ACCEPTED)
            }
        }
    }

    fn legacy_get(
        &self,
        id: &str,
        accept: &Accept,
        h: &HeaderMap,
        principal: Option<String>,
    ) -> http::Response<McpBody> {
        let Some((session, _in_use)) = self.sessions.checkout(id, principal.as_deref()) else {
            return session_not_found();
        };
        if !accept.sse {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                ErrorObject::new(
                    jsonrpc::INVALID_REQUEST,
                    "Not Acceptable: the session stream is text/event-stream; list it in Accept",
                ),
            );
        }
        // A response stream the handler closed early: resumed from the event after this one.
        if let Some(last) = h.get("last-event-id").and_then(|v| v.to_str().ok()) {
            if let Some(events) = self.streams.resume(id, last) {
                return stream_response(Box::pin(events));
            }
            // One of our response streams, but not one that can be resumed: say so at once
            // rather than hand out the session stream, where its response would never come.
            if resume::is_stream_event_id(last) {
                let message = format!(
                    "Bad Request: the response stream of Last-Event-ID {last:?} cannot be resumed: it was delivered, expired, or \
                     broke before the server ended it (a disconnect cancels a request; send it again)"
                );
                return rpc_error(StatusCode::BAD_REQUEST, ErrorObject::new(jsonrpc::INVALID_REQUEST, message));
            }
        }
        let tc = TransportContext {
            principal,
            headers: None,
            shutdown: self.shutdown.clone(),
            http_headers: None,
            token: None,
        };
        let exchange = self.server.legacy_stream(&session, &tc);
        sse_response(SseBody::new(exchange, None, Some(self.options.keep_alive)))
    }

    /// What the server is told of a request besides its body: the principal, the token's
    /// grant, every HTTP header (for handlers and middleware), and the request-metadata
    /// headers. A header sent in more than one field line is recorded in
    /// [`RequestHeaders::repeated`] (the dispatcher answers -32020): never "first one wins",
    /// which would let a client and an intermediary read different values.
    /// What the server gets of a request's transport; the request's headers are moved into it
    /// (handlers and middleware read them), not copied.
    fn transport_context(
        &self,
        h: HeaderMap,
        principal: Option<String>,
        token: Option<&TokenInfo>,
    ) -> TransportContext {
        let mut repeated = Vec::new();
        let mut single = |name: &str| {
            let mut values = h.get_all(name).iter();
            let first = values.next().map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            if values.next().is_some() {
                repeated.push(name.to_owned());
            }
            first
        };
        let protocol_version = single(headers::MCP_PROTOCOL_VERSION);
        let method = single(headers::MCP_METHOD);
        let name = single(headers::MCP_NAME);
        let params = h
            .keys()
            .filter(|k| k.as_str().starts_with(headers::MCP_PARAM_PREFIX))
            .filter_map(|k| {
                let value = single(k.as_str())?;
                Some((k.as_str()[headers::MCP_PARAM_PREFIX.len()..].to_owned(), value))
            })
            .collect();
        let headers = RequestHeaders { protocol_version, method, name, params, repeated };
        let token = token.map(|t| {
            Arc::new(Token { subject: t.subject.clone(), scopes: t.scopes.clone(), claims: t.claims.clone() })
        });
        TransportContext {
            principal,
            headers: Some(headers),
            shutdown: self.shutdown.clone(),
            http_headers: Some(Arc::new(h)),
            token,
        }
    }

    /// DNS rebinding protection. The host a request names (its `Host` header, and the request
    /// URI's authority: HTTP/2's `:authority` or an HTTP/1.1 absolute-form target) must be an
    /// allowed one; each is parsed strictly, a second `Host` field line or a Host that differs
    /// from the authority is a `400`, a host not allowed a `403`. Then the `Origin`, if any:
    /// a loopback one, one of `allowed_origins`, or one listed by name for CORS.
    fn check_host_and_origin(&self, uri: &http::Uri, h: &HeaderMap) -> std::result::Result<(), (StatusCode, String)> {
        let bad = |why: String| (StatusCode::BAD_REQUEST, why);
        let mut hosts = h.get_all(header::HOST).iter();
        let host = hosts.next();
        if hosts.next().is_some() {
            return Err(bad(
                "Bad Request: the request has more than one Host header (RFC 9112 section 3.2); send exactly one"
                    .into(),
            ));
        }
        let host = match host {
            Some(v) => {
                let text = v.to_str().map_err(|_| bad("Bad Request: the Host header is not valid".into()))?;
                let parsed = rules::parse_authority(text)
                    .ok_or_else(|| bad(format!("Bad Request: the Host header {text:?} is not a valid host[:port] (an IPv6 address goes in brackets: [::1]:8080)")))?;
                Some((text, parsed))
            }
            None => None,
        };
        let authority = match uri.authority() {
            Some(a) => {
                let parsed = rules::parse_authority(a.as_str()).ok_or_else(|| {
                    bad(format!("Bad Request: the request's authority {:?} is not a valid host[:port]", a.as_str()))
                })?;
                Some((a.as_str(), parsed))
            }
            None => None,
        };
        if let (Some((ht, hp)), Some((at, ap))) = (&host, &authority) {
            if !hp.host.eq_ignore_ascii_case(ap.host) || hp.port != ap.port {
                return Err(bad(format!(
                    "Bad Request: the Host header {ht:?} differs from the request's authority {at:?}"
                )));
            }
        }
        for (text, parsed) in host.iter().chain(authority.iter()) {
            if !self.host_allowed(parsed.host) {
                return Err((
                    StatusCode::FORBIDDEN,
                    format!(
                        "Forbidden: Host {text:?} is not allowed (DNS rebinding protection); add it to the server's allowed hosts"
                    ),
                ));
            }
        }
        if let Some(origin) = h.get(header::ORIGIN) {
            let forbidden = |why: String| (StatusCode::FORBIDDEN, why);
            let text =
                origin.to_str().map_err(|_| forbidden("Forbidden: the Origin header is not valid".to_owned()))?;
            if !self.origin_allowed(origin) {
                return Err(forbidden(format!(
                    "Forbidden: Origin {text:?} is not allowed; add it to the server's allowed origins"
                )));
            }
        }
        Ok(())
    }

    /// Whether the Origin check accepts `origin`: a loopback one, one of `allowed_origins`, or
    /// one listed by name for CORS.
    fn origin_allowed(&self, origin: &HeaderValue) -> bool {
        let Ok(origin) = origin.to_str() else { return false };
        let host = origin
            .split_once("://")
            .and_then(|(_, rest)| rules::parse_authority(rest.strip_suffix('/').unwrap_or(rest)));
        host.is_some_and(|a| is_loopback_name(a.host))
            || self.options.allowed_origins.iter().any(|o| o == "*" || o == origin)
            || self.options.cors.as_ref().is_some_and(|c| c.lists(origin))
    }

    /// Whether `host` (as [`rules::parse_authority`] returns it: no port, no brackets) is one
    /// the server answers to.
    fn host_allowed(&self, host: &str) -> bool {
        match &self.options.allowed_hosts {
            Some(list) => list.iter().any(|a| a == "*" || strip_brackets(a).eq_ignore_ascii_case(host)),
            None => {
                is_loopback_name(host)
                    || self.bound.is_some_and(|b| host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip == b.ip()))
            }
        }
    }
}

/// The request's `Content-Type`, when it has one, must be the media type `application/json`:
/// `415` otherwise; two field lines are a `400`.
fn check_content_type(h: &HeaderMap) -> std::result::Result<(), (StatusCode, String)> {
    let mut values = h.get_all(header::CONTENT_TYPE).iter();
    let Some(ct) = values.next() else { return Ok(()) };
    if values.next().is_some() {
        return Err((
            StatusCode::BAD_REQUEST,
            "Bad Request: the request has more than one Content-Type header; send one: application/json".into(),
        ));
    }
    let unsupported = |why: String| (StatusCode::UNSUPPORTED_MEDIA_TYPE, why);
    let text = ct
        .to_str()
        .map_err(|_| unsupported("Unsupported Media Type: send the JSON-RPC message as application/json".into()))?;
    rules::check_json_content_type(text).map_err(|e| match e {
        rules::ContentTypeError::NotJson => unsupported(format!(
            "Unsupported Media Type: {text:?} is not application/json; send the JSON-RPC message as application/json"
        )),
        rules::ContentTypeError::Malformed => unsupported(format!(
            "Unsupported Media Type: the parameters of Content-Type {text:?} are malformed (name=value, separated by ;)"
        )),
        rules::ContentTypeError::Charset(c) => unsupported(format!(
            "Unsupported Media Type: charset {c:?} is not supported; JSON is sent as UTF-8 (charset=utf-8)"
        )),
    })
}

fn strip_brackets(h: &str) -> &str {
    h.trim_start_matches('[').trim_end_matches(']')
}

fn is_loopback_name(h: &str) -> bool {
    let h = strip_brackets(h);
    h.eq_ignore_ascii_case("localhost") || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

struct Accept {
    json: bool,
    sse: bool,
}

impl Accept {
    fn of(h: &HeaderMap) -> Accept {
        let mut a = Accept { json: false, sse: false };
        let mut any = false;
        for v in h.get_all(header::ACCEPT) {
            any = true;
            for part in v.to_str().unwrap_or("").split(',') {
                let media = part.split(';').next().unwrap_or("").trim();
                let is = |name: &str| media.eq_ignore_ascii_case(name);
                if is("application/json") {
                    a.json = true;
                } else if is("text/event-stream") {
                    a.sse = true;
                } else if is("*/*") || is("application/*") || is("text/*") {
                    a.json |= !is("text/*");
                    a.sse |= !is("application/*");
                }
            }
        }
        if !any {
            a = Accept { json: true, sse: true };
        }
        a
    }
}

async fn read_body<B>(body: B, max: usize, h: &HeaderMap) -> std::result::Result<Bytes, Box<http::Response<McpBody>>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let too_large = || {
        Box::new(rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorObject::new(
                jsonrpc::INVALID_REQUEST,
                format!("Payload Too Large: the request body exceeds the limit of {max} bytes"),
            ),
        ))
    };
    let declared = h.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|s| s.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    match http_body_util::Limited::new(body, max).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => Err(too_large()),
        Err(e) if e.downcast_ref::<BodiesInFlight>().is_some() => {
            let limit = e.downcast_ref::<BodiesInFlight>().map(|b| b.limit).unwrap_or_default();
            let message = format!(
                "Server busy: the server is receiving too many request bodies at once (they hold its limit of {limit} bytes, \
                 maxBodyBytesInFlight); retry shortly"
            );
            // -32000: "server busy", as when the legacy session table is full.
            let mut r = rpc_error(StatusCode::SERVICE_UNAVAILABLE, ErrorObject::new(-32000, message));
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(Box::new(r))
        }
        Err(e) if e.downcast_ref::<BodyTimeout>().is_some() => {
            let limit = e.downcast_ref::<BodyTimeout>().map(|t| t.limit).unwrap_or_default();
            let message = format!(
                "Request Timeout: the request body did not arrive within {} ms (the server's bodyReadTimeoutMs); send it at once, or ask \
                 the operator to raise the limit",
                limit.as_millis()
            );
            let mut r = rpc_error(StatusCode::REQUEST_TIMEOUT, ErrorObject::new(jsonrpc::INVALID_REQUEST, message));
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(Box::new(r))
        }
        Err(e) => Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            ErrorObject::new(jsonrpc::INVALID_REQUEST, format!("Bad Request: the body could not be read ({e})")),
        ))),
    }
}

/// The response body of the MCP endpoint: one JSON object, or an SSE stream.
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    /// A whole body, as its chunks (none empty).
    Full(VecDeque<Bytes>),
    Sse(Box<SseBody>),
    /// A resumed stream's events.
    Events(Pin<Box<dyn Stream<Item = Bytes> + Send>>),
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(chunks) => Poll::Ready(chunks.pop_front().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(s) => s.poll_next_unpin(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            Kind::Events(s) => s.poll_next_unpin(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.kind, Kind::Full(chunks) if chunks.is_empty())
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(chunks) => SizeHint::with_exact(chunks.iter().map(|c| c.len() as u64).sum()),
            Kind::Sse(_) | Kind::Events(_) => SizeHint::default(),
        }
    }
}

/// The ids of a resumable (legacy) SSE stream, and where it is parked if the handler ends it.
struct Resumable {
    streams: Arc<ResumableStreams>,
    session: String,
    stream: u64,
    /// The number of the last event sent (0: the priming event).
    seq: u64,
}

/// An exchange as SSE: its messages as events, keep-alive comments on long-lived streams;
/// with ids (a priming event first) when resumable.
struct SseBody {
    exchange: Option<Exchange>,
    resumable: Option<Resumable>,
    pending: std::collections::VecDeque<Bytes>,
    keep_alive: Option<(Duration, Pin<Box<Sleep>>)>,
    done: bool,
}

/// How long a client waits before resuming a stream that broke (the priming event's `retry`).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

impl SseBody {
    fn new(exchange: Exchange, resumable: Option<Resumable>, keep_alive: Option<Duration>) -> Self {
        let keep_alive = keep_alive.map(|d| (d, Box::pin(tokio::time::sleep(d))));
        let mut pending = std::collections::VecDeque::new();
        if let Some(r) = &resumable {
            pending.push_back(resume::priming(r.stream, DEFAULT_RETRY));
        }
        SseBody { exchange: Some(exchange), resumable, pending, keep_alive, done: false }
    }

    /// Queues one outgoing message (or acts on a close).
    fn push(&mut self, o: Outgoing) {
        if let Outgoing::CloseStream { retry } = o {
            // Only a resumable stream can be ended early: elsewhere the request would be lost.
            let Some(r) = &self.resumable else { return };
            if let Some(exchange) = self.exchange.take() {
                self.pending.push_back(sse::retry_field(retry));
                r.streams.park(&r.session, r.stream, r.seq + 1, exchange);
                self.done = true;
            }
            return;
        }
        self.done = matches!(o, Outgoing::Response(_));
        let Some(json) = outgoing_bytes(&o) else { return };
        let bytes = match &mut self.resumable {
            Some(r) => {
                r.seq += 1;
                resume::event(r.stream, r.seq, &json)
            }
            None => sse::message_event(None, &json),
        };
        self.pending.push_back(bytes);
    }
}

impl Stream for SseBody {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = self.get_mut();
        loop {
            if let Some(b) = this.pending.pop_front() {
                return Poll::Ready(Some(b));
            }
            if this.done {
                return Poll::Ready(None);
            }
            let Some(exchange) = this.exchange.as_mut() else { return Poll::Ready(None) };
            match exchange.poll_next_unpin(cx) {
                Poll::Ready(Some(o)) => {
                    if let Some((d, sleep)) = &mut this.keep_alive {
                        sleep.as_mut().reset(Instant::now() + *d);
                    }
                    this.push(o);
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {
                    if let Some((d, sleep)) = &mut this.keep_alive {
                        if sleep.as_mut().poll(cx).is_ready() {
                            sleep.as_mut().reset(Instant::now() + *d);
                            return Poll::Ready(Some(sse::KEEP_ALIVE));
                        }
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

use std::future::Future as _;

fn sse_response(body: SseBody) -> http::Response<McpBody> {
    with_sse_headers(http::Response::new(McpBody { kind: Kind::Sse(Box::new(body)) }))
}

fn stream_response(events: Pin<Box<dyn Stream<Item = Bytes> + Send>>) -> http::Response<McpBody> {
    with_sse_headers(http::Response::new(McpBody { kind: Kind::Events(events) }))
}

fn with_sse_headers(mut r: http::Response<McpBody>) -> http::Response<McpBody> {
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// A JSON response in an era: legacy clients read JSON-RPC errors from 200 responses.
fn json_response(resp: &Response, era: Era) -> http::Response<McpBody> {
    let status = match resp.as_error() {
        Some(e) if era == Era::Modern => {
            StatusCode::from_u16(http_status_for_code(e.code)).unwrap_or(StatusCode::BAD_REQUEST)
        }
        _ => StatusCode::OK,
    };
    json_chunks(status, Chunks::response(resp))
}

fn with_json(status: StatusCode, body: Vec<u8>) -> http::Response<McpBody> {
    json_chunks(status, full(Bytes::from(body)))
}

fn json_chunks(status: StatusCode, body: VecDeque<Bytes>) -> http::Response<McpBody> {
    let mut r = http::Response::new(McpBody { kind: Kind::Full(body) });
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn session_not_found() -> http::Response<McpBody> {
    rpc_error(
        StatusCode::NOT_FOUND,
        ErrorObject::new(-32001, "Session not found: it ended or expired; send initialize to start a new one"),
    )
}

/// A request refused for its authorization: the OAuth error body and the challenge.
fn refused(refusal: Refusal) -> http::Response<McpBody> {
    let mut r = with_json(refusal.status, refusal.body);
    if let Some(v) = refusal.challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

fn rpc_error(status: StatusCode, e: ErrorObject) -> http::Response<McpBody> {
    with_json(status, serde_json::to_vec(&Response::error(None, e)).unwrap_or_default())
}

fn plain(status: StatusCode, text: &'static str) -> http::Response<McpBody> {
    let mut r = http::Response::new(McpBody { kind: Kind::Full(full(Bytes::from_static(text.as_bytes()))) });
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// The health route's answer: `{"status":"ok"}` to `GET` and `HEAD`.
fn health(method: &Method) -> http::Response<McpBody> {
    if method == Method::GET || method == Method::HEAD {
        return with_json(StatusCode::OK, br#"{"status":"ok"}"#.to_vec());
    }
    let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: the health route takes GET or HEAD");
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}

/// The metrics route: the Prometheus text exposition of the process's metrics.
fn metrics(method: &Method) -> http::Response<McpBody> {
    if method != Method::GET && method != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: the metrics route takes GET or HEAD");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match crate::telemetry::prometheus_text() {
        Some(text) => {
            let mut r = http::Response::new(McpBody { kind: Kind::Full(full(Bytes::from(text))) });
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
            r
        }
        None => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: metrics are off; turn telemetry on with prometheus: true to serve them here",
        ),
    }
}

/// A body of one chunk (none if `bytes` is empty).
fn full(bytes: Bytes) -> VecDeque<Bytes> {
    if bytes.is_empty() { VecDeque::new() } else { VecDeque::from([bytes]) }
}

fn empty(status: StatusCode) -> http::Response<McpBody> {
    let mut r = http::Response::new(McpBody { kind: Kind::Full(VecDeque::new()) });
    *r.status_mut() = status;
    r
}

/// A running Streamable HTTP server.
///
/// Dropping it stops it too (without waiting for the drain): keep it for as long as it should
/// serve.
pub struct HttpServer {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// A listening socket on `addr`, with `SO_REUSEPORT` when asked (Unix only).
fn listen(addr: SocketAddr, reuse_port: bool) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // What TcpListener::bind does on Unix, so that a restarted server can bind at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    if reuse_port {
        #[cfg(unix)]
        socket.set_reuseport(true)?;
        #[cfg(not(unix))]
        return Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "reusePort needs SO_REUSEPORT (Unix)"));
    }
    socket.bind(addr)?;
    socket.listen(1024)
}

impl HttpServer {
    /// Binds `addr` and serves `server` on it in the background (HTTP/1.1 with keep-alive, and
    /// HTTP/2 with prior knowledge, h2c).
    ///
    /// Raises the process's soft fd limit to the hard one first (once per process; see
    /// [`raise_fd_limit`](crate::transport::connections::raise_fd_limit)), then sizes the
    /// default connection limit from it.
    pub async fn bind(server: Server, addr: SocketAddr, options: HttpOptions) -> Result<HttpServer> {
        options.connections.validate()?;
        for (name, route) in [("healthPath", &options.health_path), ("metricsPath", &options.metrics_path)] {
            if route.as_deref() == Some(options.path.as_str()) {
                return Err(Error::usage(format!(
                    "HTTP options: {name} {:?} is the MCP endpoint's path; give the route its own",
                    options.path
                )));
            }
        }
        if let Some(auth) = &options.auth {
            auth.validate()?;
        }
        crate::transport::connections::raise_fd_limit();
        server.start_bus();
        let listener = listen(addr, options.reuse_port)
            .map_err(|e| Error::new(crate::ErrorKind::Transport, format!("cannot listen on {addr}: {e}")))?;
        let addr = listener.local_addr()?;
        let drain = options.drain_timeout;
        let mut service = McpService::new(server, options);
        service.bound = Some(addr);
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(accept_loop(listener, service, shutdown.clone(), drain));
        Ok(HttpServer { addr, shutdown, task: Some(task) })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// A token that stops the server when cancelled.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Stops accepting, ends listen streams gracefully, drains requests in flight (up to the
    /// drain timeout) and returns when done.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }

    /// Waits until the server stops (after [`HttpServer::shutdown_token`] is cancelled).
    pub async fn wait(mut self) {
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

/// Serves `server` over Streamable HTTP on `addr` until Ctrl-C (SIGINT) or SIGTERM.
pub async fn serve(server: Server, addr: SocketAddr, options: HttpOptions) -> Result<()> {
    let running = HttpServer::bind(server, addr, options).await?;
    let token = running.shutdown_token();
    tokio::spawn(async move {
        crate::transport::shutdown_signal().await;
        token.cancel();
    });
    running.wait().await;
    Ok(())
}

async fn accept_loop(listener: TcpListener, service: McpService, shutdown: CancellationToken, drain: Duration) {
    let tasks = tokio_util::task::TaskTracker::new();
    let limits = &service.options.connections;
    let builder = limits.builder();
    let connections = Connections::new(limits);
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            r = listener.accept() => match r {
                Ok(s) => s,
                // Descriptors ran out (other files of the process): make room, try again.
                Err(e) if out_of_descriptors(&e) && connections.shed_idle() => {
                    tokio::task::yield_now().await;
                    continue;
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Full of busy connections, this client's host holding its share: closed at once.
        let Some(tracked) = connections.admit(Some(peer.ip())) else {
            tracing::debug!("connection limit reached with every connection busy: closing the one from {peer}");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let svc = service.clone();
        let track = tracked.clone();
        let hyper_svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            let svc = svc.clone();
            let (mut req, state) = track.request(req);
            req.extensions_mut().insert(PeerAddr(peer));
            let track = track.clone();
            async move { Ok::<_, Infallible>(track.respond(svc.handle(req).await, state)) }
        });
        let conn = builder.serve_connection(TokioIo::new(tracked.io(stream)), hyper_svc).into_owned();
        let admitted = Admitted(tracked);
        let shutdown = shutdown.clone();
        tasks.spawn(async move {
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                // Overstayed a timeout while idle, or closed to make room: an HTTP/2 client is
                // told so (GOAWAY) rather than finding its connection reset.
                _ = admitted.0.expired() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(CLOSE_GRACE, conn).await;
                    return;
                }
                // The server stops: no new requests on this connection, the ones in flight end
                // (the accept loop waits for them up to the drain timeout).
                _ = shutdown.cancelled() => conn.as_mut().graceful_shutdown(),
            }
            tokio::select! {
                _ = conn => {}
                _ = admitted.0.expired() => {}
            }
        });
    }
    drop(listener);
    service.shutdown.cancel();
    service.sessions.close_all();
    tasks.close();
    let _ = tokio::time::timeout(drain, tasks.wait()).await;
}

/// How long a connection closed to make room or for overstaying a timeout may take to say so
/// (an HTTP/2 GOAWAY) before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_millis(250);

#[cfg(test)]
mod tests {
    use super::*;

    /// hyper moves every request's future into place, so each of its bytes is copied per call.
    /// What only some requests need and that is large (the bearer token check, which may ask
    /// the issuer over HTTP) is boxed. With it inlined, the future was 8.8 KB in a release
    /// build and 7.8 KB in a test build; boxed, 3.4 KB in a test build.
    #[test]
    fn a_request_future_stays_small() {
        let service = McpService::new(Server::builder("size", "1.0.0").build(), HttpOptions::default());
        let future = service.handle(Request::new(http_body_util::Empty::<Bytes>::new()));
        let size = std::mem::size_of_val(&future);
        assert!(size <= 4 * 1024, "a request's future is {size} bytes: box what makes it large");
    }

    fn accept(values: &[&str]) -> (bool, bool) {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        let a = Accept::of(&h);
        (a.json, a.sse)
    }

    #[test]
    fn accept_lists_media_types_in_any_case_with_parameters_and_wildcards() {
        assert_eq!(accept(&[]), (true, true));
        assert_eq!(accept(&["application/json, text/event-stream"]), (true, true));
        assert_eq!(accept(&["Application/JSON;q=0.9"]), (true, false));
        assert_eq!(accept(&["text/html", " TEXT/EVENT-STREAM "]), (false, true));
        assert_eq!(accept(&["*/*"]), (true, true));
        assert_eq!(accept(&["application/*"]), (true, false));
        assert_eq!(accept(&["text/*"]), (false, true));
        assert_eq!(accept(&["text/html"]), (false, false));
    }
}
