//! The one dispatcher of a [`Server`]: validates a request (method, `_meta`, protocol version,
//! HTTP header mirrors) and turns it into an [`Exchange`]. Every transport calls
//! [`Server::handle_request`]; none holds protocol logic of its own.

use crate::era::Era;
use crate::error::{Error, ErrorKind, Result};
use crate::headers;
use crate::jsonrpc::{Notification, Request, RequestId, Response};
use crate::legacy::Session;
use crate::schema::CacheScope;
use crate::schema::PROTOCOL_VERSION_META_KEY;
use crate::schema::{SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY};
use crate::server::context::{Peer, RequestContext, Round};
use crate::server::exchange::{Exchange, Final, Outgoing, Step};
use crate::server::handlers::{CompletionRequest, ResourceRequest};
use crate::server::list_pages::{Listed, PageCache, PageKey, write_page};
use crate::server::memory::TrimWhenDone;
use crate::server::middleware::{
    self, Hidden, Item, ItemInfo, ItemKind, Next, Reply, RequestInfo, Sight, Token, Visibility, VisibilityFilter,
    VisibilityHook,
};
use crate::server::pagination::{page_where, read_cursor};
use crate::server::registry::{CompletionRef, read};
use crate::server::request_meta::{self, RequestMeta};
use crate::server::seal::{self, ParamsDigest, SealedState};
use crate::server::shaping;
use crate::server::subscriptions::{Filter, ListenerLeft, Supported, event_queue, tag};
use crate::server::tasks::TaskRecord;
use crate::server::tasks::{TASKS_EXTENSION, TaskMethod, TaskSupport, check_listen, negotiated, required_capability};
use crate::server::template_paths;
use crate::server::{CacheHint, Server, ServerEvent};
use crate::telemetry::{self, Counted, Described, ServerSpan, TraceContext, in_trace};
use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The HTTP request-metadata headers of a Streamable HTTP request, as the transport read them
/// (raw values; the dispatcher decodes and compares them with the body).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestHeaders {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
    /// `Mcp-Method`.
    pub method: Option<String>,
    /// `Mcp-Name`.
    pub name: Option<String>,
    /// `Mcp-Param-{Name}` headers: the lowercased `{Name}` and the raw value.
    pub params: Vec<(String, String)>,
    /// The names (lowercase) of the headers above that the request sent in more than one
    /// field line. Any makes the request a header mismatch (-32020): which of two values
    /// counts is ambiguous, so neither does.
    pub repeated: Vec<String>,
}

/// What a transport knows about a request besides its body.
#[derive(Debug, Clone, Default)]
pub struct TransportContext {
    /// The authenticated principal (e.g. from a bearer token), bound into MRTR state.
    pub principal: Option<String>,
    /// The HTTP header mirrors; `None` on stdio, where there are no headers to check.
    pub headers: Option<RequestHeaders>,
    /// Cancelled when the transport shuts down: open `subscriptions/listen` streams then end
    /// gracefully with their final response.
    pub shutdown: CancellationToken,
    /// Every HTTP header of the request, as received (for handlers and middleware); `None`
    /// on stdio.
    pub http_headers: Option<Arc<http::HeaderMap>>,
    /// What the bearer token granted, with bearer auth (its subject is `principal`).
    pub token: Option<Arc<Token>>,
}

/// What a request is served in: the modern era (2026-07-28, stateless) or a legacy session,
/// whose [`Era`] is [`ServedIn::era`].
#[derive(Clone)]
pub(crate) enum ServedIn {
    Modern,
    Legacy(Arc<Session>),
}

impl ServedIn {
    /// The era of the request.
    pub(crate) fn era(&self) -> Era {
        match self {
            ServedIn::Modern => Era::Modern,
            ServedIn::Legacy(_) => Era::Legacy,
        }
    }

    fn is_legacy(&self) -> bool {
        self.era() == Era::Legacy
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    ResourcesList,
    TemplatesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
    Complete,
    Listen,
    /// `tasks/get`, `tasks/update`, `tasks/cancel` (the Tasks extension).
    Task(TaskMethod),
}

impl Method {
    pub(crate) fn parse(m: &str) -> Option<Method> {
        Some(match m {
            "server/discover" => Method::Discover,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::TemplatesList,
            "resources/read" => Method::ResourcesRead,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::Complete,
            "subscriptions/listen" => Method::Listen,
            other => Method::Task(TaskMethod::parse(other)?),
        })
    }
}

fn unknown_method(method: &str) -> Error {
    let why = match method {
        "initialize" | "notifications/initialized" => {
            " (MCP 2026-07-28 has no initialize handshake: send _meta with every request, or call server/discover)"
        }
        "ping" => " (removed in MCP 2026-07-28)",
        "logging/setLevel" => {
            " (removed in MCP 2026-07-28: set _meta[\"io.modelcontextprotocol/logLevel\"] per request)"
        }
        "resources/subscribe" | "resources/unsubscribe" => " (removed in MCP 2026-07-28: use subscriptions/listen)",
        _ => "",
    };
    Error::new(ErrorKind::MethodNotFound, format!("Method not found: {method}{why}"))
}

impl Server {
    /// The span of a request of `era` (in a legacy session: `session`'s), while telemetry is on.
    pub(crate) fn request_span(
        &self,
        req: &Request,
        tc: &TransportContext,
        era: Era,
        session: Option<&Session>,
    ) -> Option<ServerSpan> {
        if !telemetry::is_enabled() {
            return None;
        }
        let params = req.params.as_ref().and_then(Value::as_object);
        // A name the client chose is a metric attribute only when it names a tool or prompt
        // of the server's: else any client could make time series without end.
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let regs = &self.inner.registries;
        let known_target = match (req.method.as_str(), name) {
            ("tools/call", Some(n)) => read(&regs.tools).contains_key(n),
            ("prompts/get", Some(n)) => read(&regs.prompts).contains_key(n),
            _ => true,
        };
        request_span_of(req, params, (tc, era, session), known_target)
    }
}

fn request_span_of(
    req: &Request,
    params: Option<&Map<String, Value>>,
    (tc, era, session): (&TransportContext, Era, Option<&Session>),
    known_target: bool,
) -> Option<ServerSpan> {
    let version = match session {
        Some(s) => Some(s.protocol_version()),
        None => {
            params.and_then(|p| p.get("_meta")).and_then(|m| m.get(PROTOCOL_VERSION_META_KEY)).and_then(Value::as_str)
        }
    };
    let described = Described {
        method: &req.method,
        params,
        id: Some(req.id.to_string()),
        protocol_version: version,
        session_id: session.map(Session::id),
        http: tc.http_headers.is_some(),
        known_target,
    };
    ServerSpan::start(&described, era, tc.http_headers.as_deref(), tc.principal.as_deref())
}

fn mismatch(message: String) -> Error {
    Error::new(ErrorKind::HeaderMismatch, message)
}

fn str_param<'a>(params: Option<&'a Value>, key: &str) -> Result<&'a str> {
    match params.and_then(|p| p.get(key)) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(Error::invalid_params(format!("Invalid params: \"{key}\" must be a string"))),
        None => Err(Error::invalid_params(format!("Invalid params: \"{key}\" is required"))),
    }
}

impl Server {
    /// Handles one request and returns its exchange: the notifications it produces and its
    /// final response. Validation failures answer at once with the spec's error.
    pub fn handle_request(&self, req: Request, tc: &TransportContext) -> Exchange {
        let id = req.id.clone();
        let span = self.request_span(&req, tc, Era::Modern, None);
        let trace = span.as_ref().and_then(|s| s.trace().cloned());
        match self.prepare(req, tc, trace) {
            Ok(ex) => ex,
            Err(e) => Exchange::ready(Response::error(Some(id), e.to_error_object())),
        }
        .observed(span)
    }

    /// Handles a notification from the client. `notifications/cancelled` is acted on by the
    /// transport that owns the request; other notifications are accepted and ignored.
    pub fn handle_notification(&self, _notification: Notification, _tc: &TransportContext) {}

    fn prepare(&self, req: Request, tc: &TransportContext, trace: Option<TraceContext>) -> Result<Exchange> {
        let method = Method::parse(&req.method).ok_or_else(|| unknown_method(&req.method))?;
        let params = req.params.as_ref();
        if params.is_some_and(|p| !p.is_object()) {
            return Err(Error::invalid_params("Invalid params: \"params\" must be an object"));
        }
        let mut meta = RequestMeta::from_params(params)?;
        meta.trace = trace;
        if let Some(h) = &tc.headers {
            check_standard_headers(h, &req.method, method, &meta, params)?;
        }
        if !self.supported_versions().contains(&meta.protocol_version.as_str()) {
            return Err(request_meta::unsupported_version(&meta.protocol_version, self.supported_versions()));
        }
        self.serve_method(method, req, meta, tc, &ServedIn::Modern)
    }

    /// Serves a validated request of a known method, in either era: through the middleware
    /// chain when there is one, with the visibility predicate when there is one.
    pub(crate) fn serve_method(
        &self,
        method: Method,
        req: Request,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
    ) -> Result<Exchange> {
        let hooks = &self.inner.hooks;
        let (chain, visibility) = (hooks.chain(), hooks.visibility());
        if chain.is_none() && visibility.is_none() {
            return self.serve_endpoint(method, req, meta, tc, era, None);
        }
        let session_id = match era {
            ServedIn::Legacy(s) => Some(s.id().to_owned()),
            ServedIn::Modern => None,
        };
        let info = RequestInfo::new(
            req,
            tc.http_headers.clone(),
            tc.principal.clone(),
            tc.token.clone(),
            era.era(),
            session_id,
        );
        match (chain, visibility) {
            // A tool's arguments can be large (a 1 MB call): the predicate is asked about the
            // tool now, and the request moves into the call instead of being copied so that
            // the predicate's `who` can keep it while the call runs.
            (None, Some(VisibilityHook::Predicate(predicate))) if method == Method::ToolsCall => {
                let hidden = self.hidden_tool(&*predicate, &info);
                let sight = Sight::Hidden(&hidden);
                self.serve_endpoint(method, info.into_request(), meta, tc, era, Some(sight))
            }
            (None, Some(VisibilityHook::Predicate(predicate))) => {
                let sight = Sight::Predicate { predicate: &*predicate, who: &info };
                self.serve_endpoint(method, info.request().clone(), meta, tc, era, Some(sight))
            }
            (chain, visibility) => Ok(self.through(chain, visibility, info, method, meta, tc, era)),
        }
    }

    /// The tool a `tools/call` names, hidden if `predicate` hides it from `who`; nothing
    /// hidden when no such tool is registered (the call then fails as for any unknown tool).
    fn hidden_tool(&self, predicate: &Visibility, who: &RequestInfo) -> Hidden {
        let Some((name, tool)) = who.name().and_then(|n| Some((n, self.inner.registries.tool(n)?))) else {
            return Hidden::new();
        };
        let item = Item { kind: ItemKind::Tool, name, definition: &tool.json };
        if predicate(&item, who) { Hidden::new() } else { Hidden::from([(ItemKind::Tool, name.to_owned())]) }
    }

    /// Runs the middleware chain (if any) around the method, and the visibility filter (if
    /// any) before it: an exchange whose response is what the chain returns, carrying the
    /// notifications (and legacy requests) the method sends as they come. A method that ends
    /// without a response (cancelled) ends the exchange so too.
    #[allow(clippy::too_many_arguments)] // internal: every part of a request, named
    fn through(
        &self,
        chain: Option<middleware::Chain>,
        visibility: Option<VisibilityHook>,
        info: RequestInfo,
        method: Method,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
    ) -> Exchange {
        let (tx, rx) = crate::server::exchange::outgoing_channel();
        let (server, tc, era) = (self.clone(), tc.clone(), era.clone());
        let fut = async move {
            let ended = AtomicBool::new(false);
            let (tx, ended_ref, server_ref) = (&tx, &ended, &server);
            let (meta, tc, era, visibility) = (&meta, &tc, &era, visibility.as_ref());
            let endpoint: &middleware::Endpoint<'_> = &move |who| {
                Box::pin(async move {
                    let hidden = match visibility {
                        Some(VisibilityHook::Filter(filter)) => Some(server_ref.hidden(&**filter, method, who).await?),
                        _ => None,
                    };
                    let sight = match (visibility, &hidden) {
                        (Some(VisibilityHook::Predicate(predicate)), _) => {
                            Some(Sight::Predicate { predicate: &**predicate, who })
                        }
                        (_, Some(hidden)) => Some(Sight::Hidden(hidden)),
                        _ => None,
                    };
                    let (req, meta) = (who.request().clone(), meta.clone());
                    let mut exchange = server_ref.serve_endpoint(method, req, meta, tc, era, sight)?;
                    while let Some(step) = exchange.next_step().await {
                        match step {
                            Step::Final(Final::Json(_, text)) => return Ok(Reply::json(text)),
                            Step::Final(Final::Response(r)) => return middleware::from_response(r.outcome),
                            Step::Message(other) => {
                                let _ = tx.send(other);
                            }
                        }
                    }
                    ended_ref.store(true, Ordering::Relaxed);
                    Err(Error::new(ErrorKind::Cancelled, "Cancelled: the request ended without a response"))
                })
            };
            // In the future: a middleware that panics before it returns its future is caught too.
            let chain_run = async { Next::new(chain.as_deref().unwrap_or_default(), &info, endpoint).run().await };
            let outcome = AssertUnwindSafe(chain_run).catch_unwind().await;
            if ended.load(Ordering::Relaxed) {
                return None;
            }
            let id = info.id().clone();
            let outcome = match outcome {
                Ok(r) => Limit::of_server(&server).mask(r, || "middleware".to_owned()),
                Err(_) => {
                    tracing::error!(method = info.method(), "a middleware panicked");
                    Err(Error::new(ErrorKind::Panic, "Internal error: a middleware panicked"))
                }
            };
            Some(match outcome {
                Ok(reply) => reply.into_final(id),
                Err(e) => Response::error(Some(id), e.to_error_object()).into(),
            })
        };
        Exchange::running(fut, rx, CancellationToken::new(), method == Method::Listen)
    }

    /// What a visibility filter hides from `who`: it is asked about every item `method` lists,
    /// or could name (nothing asked when there is none).
    async fn hidden(&self, filter: &dyn VisibilityFilter, method: Method, who: &RequestInfo) -> Result<Hidden> {
        let items = self.candidates(method, who);
        if items.is_empty() {
            return Ok(Hidden::new());
        }
        let answers = filter.visible(who, &items).await?;
        if answers.len() != items.len() {
            return Err(Error::internal(format!(
                "Internal error: the visibility filter answered {} values for {} items; answer one boolean per item, in order",
                answers.len(),
                items.len()
            )));
        }
        Ok(items.into_iter().zip(answers).filter(|(_, seen)| !seen).map(|(i, _)| (i.kind, i.name)).collect())
    }

    /// The items `method` lists, or those the request could name: for `resources/read`, the
    /// resource of its URI and every template (any may match).
    fn candidates(&self, method: Method, who: &RequestInfo) -> Vec<ItemInfo> {
        fn of<E>(
            map: &std::sync::RwLock<std::collections::BTreeMap<String, Arc<E>>>,
            kind: ItemKind,
            only: Option<&str>,
            json: impl Fn(&E) -> &Value,
        ) -> Vec<ItemInfo> {
            let map = read(map);
            let item = |(k, e): (&String, &Arc<E>)| ItemInfo { kind, name: k.clone(), definition: json(e).clone() };
            match only {
                Some(key) => map.get_key_value(key).map(item).into_iter().collect(),
                None => map.iter().map(item).collect(),
            }
        }
        let regs = &self.inner.registries;
        let name = who.name();
        match method {
            Method::ToolsList => of(&regs.tools, ItemKind::Tool, None, |e| &e.json),
            Method::PromptsList => of(&regs.prompts, ItemKind::Prompt, None, |e| &e.json),
            Method::ResourcesList => of(&regs.resources, ItemKind::Resource, None, |e| &e.json),
            Method::TemplatesList => of(&regs.templates, ItemKind::ResourceTemplate, None, |e| &e.json),
            Method::ToolsCall => name.map_or_else(Vec::new, |n| of(&regs.tools, ItemKind::Tool, Some(n), |e| &e.json)),
            Method::PromptsGet => {
                name.map_or_else(Vec::new, |n| of(&regs.prompts, ItemKind::Prompt, Some(n), |e| &e.json))
            }
            Method::ResourcesRead | Method::Complete => {
                let Some(n) = name else { return Vec::new() };
                let prompt_ref =
                    who.params().and_then(|p| p.pointer("/ref/type")).and_then(Value::as_str) == Some("ref/prompt");
                if method == Method::Complete && prompt_ref {
                    return of(&regs.prompts, ItemKind::Prompt, Some(n), |e| &e.json);
                }
                let mut items = of(&regs.resources, ItemKind::Resource, Some(n), |e| &e.json);
                let templates = if method == Method::Complete { Some(n) } else { None };
                items.extend(of(&regs.templates, ItemKind::ResourceTemplate, templates, |e| &e.json));
                items
            }
            Method::Discover | Method::Listen | Method::Task(_) => Vec::new(),
        }
    }

    /// Serves a request of a known method: the method itself, after any middleware. `sight`:
    /// the visibility predicate applied to this request, if there is one; `answer`: whether
    /// the result goes to the wire (a list's page may then be served as JSON text) or to a
    /// middleware chain (a value).
    #[allow(clippy::too_many_arguments)] // internal: every part of a request, named
    fn serve_endpoint(
        &self,
        method: Method,
        req: Request,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
        sight: Option<Sight<'_>>,
    ) -> Result<Exchange> {
        self.serve_available(method, &req.method)?;
        let params = req.params.as_ref();
        let hints = &self.inner.config.cache;
        let regs = &self.inner.registries;
        Ok(match method {
            Method::Discover => self.ready(req.id, self.discover(), Some(&hints.discover), era),
            Method::ToolsList => {
                let what = ("tools", ItemKind::Tool, sight);
                self.list(req.id, params, what, (&regs.tools, &regs.pages.tools), &hints.tools, era)?
            }
            Method::PromptsList => {
                let what = ("prompts", ItemKind::Prompt, sight);
                self.list(req.id, params, what, (&regs.prompts, &regs.pages.prompts), &hints.prompts, era)?
            }
            Method::ResourcesList => {
                let what = ("resources", ItemKind::Resource, sight);
                self.list(req.id, params, what, (&regs.resources, &regs.pages.resources), &hints.resources, era)?
            }
            Method::TemplatesList => {
                let what = ("resourceTemplates", ItemKind::ResourceTemplate, sight);
                self.list(req.id, params, what, (&regs.templates, &regs.pages.templates), &hints.templates, era)?
            }
            Method::ToolsCall => self.call_tool(req, meta, tc, era, sight)?,
            Method::ResourcesRead => self.read_resource(req, meta, tc, era, sight)?,
            Method::PromptsGet => self.get_prompt(req, meta, tc, era, sight)?,
            Method::Complete => self.complete(req, meta, tc, era, sight)?,
            Method::Listen => {
                check_listen(req.params.as_ref(), &meta)?;
                self.listen(req, tc)?
            }
            Method::Task(_) if era.is_legacy() => return Err(Error::method_not_found(&req.method)),
            Method::Task(m) => self.serve_task_method(m, req, &meta, tc)?,
        })
    }

    pub(crate) fn serve_available(&self, method: Method, name: &str) -> Result<()> {
        let (tools, resources, prompts, completions) = self.available();
        let ok = match method {
            Method::Discover | Method::Listen | Method::Task(_) => true,
            Method::ToolsList | Method::ToolsCall => tools,
            Method::ResourcesList | Method::TemplatesList | Method::ResourcesRead => resources,
            Method::PromptsList | Method::PromptsGet => prompts,
            Method::Complete => completions,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::MethodNotFound,
                format!("Method not found: {name} (this server does not offer that capability)"),
            ))
        }
    }

    fn available(&self) -> (bool, bool, bool, bool) {
        let ever = self.inner.registries.ever();
        let caps = &self.inner.config.capabilities;
        let tools = ever.tools || caps.tools;
        let resources = ever.resources || caps.resources;
        let prompts = ever.prompts || caps.prompts;
        let completions = ever.completions || caps.completions || ever.prompts || ever.resources;
        (tools, resources, prompts, completions)
    }

    /// The `capabilities` object of `server/discover`.
    pub fn capabilities(&self) -> Value {
        let (tools, resources, prompts, completions) = self.available();
        let mut c = Map::new();
        if tools {
            c.insert("tools".into(), json!({ "listChanged": true }));
        }
        if resources {
            c.insert("resources".into(), json!({ "subscribe": true, "listChanged": true }));
        }
        if prompts {
            c.insert("prompts".into(), json!({ "listChanged": true }));
        }
        if completions {
            c.insert("completions".into(), json!({}));
        }
        if self.inner.config.capabilities.logging {
            c.insert("logging".into(), json!({}));
        }
        if self.inner.registries.ever().tasks {
            c.insert("extensions".into(), json!({ TASKS_EXTENSION: {} }));
        }
        Value::Object(c)
    }

    fn discover(&self) -> Map<String, Value> {
        let mut r = Map::new();
        r.insert("supportedVersions".into(), json!(self.supported_versions()));
        r.insert("capabilities".into(), self.capabilities());
        if let Some(i) = &self.inner.config.instructions {
            r.insert("instructions".into(), json!(i));
        }
        r
    }

    /// Stamps a complete result: `resultType`, the caching hint, the server identity.
    /// Legacy results carry none of it: the 2025-11-25 wire has no such fields.
    pub(crate) fn finish(&self, result: Map<String, Value>, hint: Option<&CacheHint>, era: &ServedIn) -> Value {
        Value::Object(self.finish_map(result, hint, era))
    }

    fn finish_map(
        &self,
        mut result: Map<String, Value>,
        hint: Option<&CacheHint>,
        era: &ServedIn,
    ) -> Map<String, Value> {
        if era.is_legacy() {
            for k in ["resultType", "ttlMs", "cacheScope"] {
                result.remove(k);
            }
            return result;
        }
        result.insert("resultType".into(), json!("complete"));
        if let Some(h) = hint {
            result.entry("ttlMs").or_insert_with(|| json!(h.ttl_ms));
            result.entry("cacheScope").or_insert_with(|| json!(scope_str(&h.scope)));
        }
        self.stamp_server_info(&mut result);
        result
    }

    pub(crate) fn ready(
        &self,
        id: RequestId,
        result: Map<String, Value>,
        hint: Option<&CacheHint>,
        era: &ServedIn,
    ) -> Exchange {
        Exchange::ready(Response::result(id, self.finish(result, hint, era)))
    }

    /// A page of a list: `what` is the result's field, the kind of its items and the
    /// visibility predicate applied to this request (hidden items are skipped before pages
    /// are cut); `list` the entries and their kept pages. A page is JSON text joined from its
    /// entries' text, kept until the list changes when no visibility applies (a page seen
    /// through one depends on who asks); a middleware chain passes it on as that text (a
    /// [`Reply`]) unless a middleware reads it.
    fn list<E: Listed>(
        &self,
        id: RequestId,
        params: Option<&Value>,
        what: (&str, ItemKind, Option<Sight<'_>>),
        list: (&std::sync::RwLock<std::collections::BTreeMap<String, Arc<E>>>, &PageCache),
        hint: &CacheHint,
        era: &ServedIn,
    ) -> Result<Exchange> {
        let (field, kind, sight) = what;
        let (map, pages) = list;
        let after = read_cursor(params)?;
        let keep = |key: &str, e: &E| middleware::visible(sight, kind, key, e.definition());
        let size = self.inner.config.page_size;
        // Under the list's read lock: the page cannot be written from one state of the list
        // and kept for another.
        let map = read(map);
        let write = || {
            let (items, next) = page_where(&map, after.as_deref(), size, keep, |e| e.serialized());
            write_page(field, &items, next.as_deref(), &self.finish_map(Map::new(), Some(hint), era))
        };
        let page: Arc<str> = match sight {
            None => pages.get_or_write(PageKey { legacy: era.is_legacy(), after: after.clone() }, write),
            Some(_) => write().into(),
        };
        Ok(Exchange::ready_json(id, page))
    }

    /// Reads `inputResponses` and `requestState` into the answers a handler's asks see.
    /// Legacy sessions have neither: their asks are real requests to the client.
    /// A later round's span (`trace`) links to the first round's.
    fn open_round(
        &self,
        params: Option<&Value>,
        method: &str,
        digest: &ParamsDigest,
        (principal, trace): (Option<&str>, Option<&TraceContext>),
        era: &ServedIn,
    ) -> Result<Round> {
        let mut round = Round { first_trace: trace.map(|t| t.traceparent.clone()), ..Round::default() };
        if era.is_legacy() {
            return Ok(round);
        }
        if let Some(state) = params.and_then(|p| p.get("requestState")).filter(|v| !v.is_null()) {
            let token = state
                .as_str()
                .ok_or_else(|| Error::invalid_params("Invalid params: \"requestState\" must be a string"))?;
            let sealed = self
                .inner
                .sealer
                .open(token, method, digest.get(), principal)
                .map_err(|r| Error::invalid_params(r.message()))?;
            round.answers = sealed.a;
            round.state = sealed.s;
            if let (Some(t), Some(first)) = (trace, sealed.t) {
                t.link(&first, "first_round");
                round.first_trace = Some(first);
            }
        }
        match params.and_then(|p| p.get("inputResponses")) {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => {
                round.answers.extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())))
            }
            Some(_) => {
                return Err(Error::invalid_params(
                    "Invalid params: \"inputResponses\" must be an object mapping input request keys to results",
                ));
            }
        }
        Ok(round)
    }

    /// Runs a handler in an exchange, mapping its outcome to the final response. `body` is
    /// called once per run: in a legacy session a run that ends with request state only is
    /// replayed at once with that state (at most [`MAX_LEGACY_REPLAYS`] times).
    #[allow(clippy::too_many_arguments)] // internal: every part of a request, named
    fn run<F>(
        &self,
        id: RequestId,
        method: &'static str,
        meta: RequestMeta,
        tc: &TransportContext,
        mrtr: Option<(ParamsDigest, Round)>,
        era: &ServedIn,
        body: F,
    ) -> Exchange
    where
        F: Fn(RequestContext) -> crate::server::BoxFuture<'static, Result<Value>> + Send + Sync + 'static,
    {
        let (tx, rx) = crate::server::exchange::outgoing_channel();
        let cancel = CancellationToken::new();
        let (digest, round) = match mrtr {
            Some((d, r)) => (Some(d), r),
            None => (None, Round::default()),
        };
        let (peer, inflight) = match era {
            ServedIn::Legacy(session) => (
                Some(Peer { session: session.clone(), out: tx.clone() }),
                Some(session.track(id.clone(), cancel.clone())),
            ),
            ServedIn::Modern => (None, None),
        };
        let server = self.clone();
        let principal = tc.principal.clone();
        let caller = (tc.http_headers.clone(), tc.token.clone());
        let abort = cancel.clone();
        let trace = meta.trace.clone();
        let meta = Arc::new(meta);
        let fut = async move {
            let mut round = round;
            let mut replays = 0;
            let outcome = loop {
                // A child token: a handler timeout cancels it without aborting the exchange,
                // which still has to answer.
                let ctx = RequestContext::new(
                    id.clone(),
                    method.to_owned(),
                    meta.clone(),
                    principal.clone(),
                    caller.clone(),
                    Some(tx.clone()),
                    cancel.child_token(),
                    round,
                    peer.clone(),
                );
                let outcome = match AssertUnwindSafe(body(ctx.clone())).catch_unwind().await {
                    Ok(r) => r,
                    Err(_) => {
                        tracing::error!(method, "a handler panicked");
                        Err(Error::new(ErrorKind::Panic, format!("Internal error: the {method} handler panicked")))
                    }
                };
                match (&outcome, &peer) {
                    (Err(e), Some(_)) if e.kind() == ErrorKind::InputRequired && replays < MAX_LEGACY_REPLAYS => {
                        let last = ctx.take_round();
                        round = Round { state: last.state, ..Round::default() };
                        replays += 1;
                    }
                    _ => break (outcome, ctx),
                }
            };
            drop(inflight);
            let (outcome, ctx) = outcome;
            Some(match outcome {
                Ok(result) => Response::result(id, result),
                Err(e) if e.kind() == ErrorKind::InputRequired => match (digest, &peer) {
                    (Some(d), None) => match server.input_required(method, d, principal, ctx.take_round()) {
                        Ok(result) => Response::result(id, result),
                        Err(e) => Response::error(Some(id), e.to_error_object()),
                    },
                    _ => Response::error(
                        Some(id),
                        Error::internal(format!(
                            "Internal error: the {method} handler kept asking for input it cannot get"
                        ))
                        .to_error_object(),
                    ),
                },
                Err(e) => Response::error(Some(id), e.to_error_object()),
            })
        };
        Exchange::running(in_trace(trace.as_ref(), fut), rx, abort, false)
    }

    /// The `InputRequiredResult` of a run that asked for input, with the answers used so far
    /// sealed in its `requestState`; an error when they exceed [`seal::MAX_REQUEST_STATE`].
    pub(crate) fn input_required(
        &self,
        method: &str,
        digest: ParamsDigest,
        principal: Option<String>,
        round: Round,
    ) -> Result<Value> {
        let carried = seal::carried_size(&round.used, round.state.as_ref());
        if carried > seal::MAX_REQUEST_STATE {
            return Err(state_too_large(method, carried, &round));
        }
        let mut requests = Map::new();
        for (key, m, params) in round.pending {
            requests.insert(key, json!({ "method": m, "params": params }));
        }
        let state = self.inner.sealer.seal(SealedState {
            exp: 0,
            m: method.to_owned(),
            d: digest.get().to_owned(),
            p: principal,
            a: round.used,
            s: round.state,
            t: round.first_trace,
        });
        let mut r = Map::new();
        r.insert("resultType".into(), json!("input_required"));
        if !requests.is_empty() {
            r.insert("inputRequests".into(), Value::Object(requests));
        }
        r.insert("requestState".into(), json!(state));
        self.stamp_server_info(&mut r);
        Ok(Value::Object(r))
    }

    /// Adds `_meta["io.modelcontextprotocol/serverInfo"]` unless configured off.
    pub(crate) fn stamp_server_info(&self, result: &mut Map<String, Value>) {
        if self.inner.config.server_info_in_results {
            if let Value::Object(m) = result.entry("_meta").or_insert_with(|| Value::Object(Map::new())) {
                m.entry(SERVER_INFO_META_KEY).or_insert_with(|| self.inner.info_json.clone());
            }
        }
    }

    pub(crate) fn call_tool(
        &self,
        req: Request,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
        sight: Option<Sight<'_>>,
    ) -> Result<Exchange> {
        let Request { id, mut params, .. } = req;
        // The arguments move out of the request (a large call is not copied for the digest).
        let arguments = match params.as_mut().and_then(|p| p.as_object_mut()).and_then(|p| p.remove("arguments")) {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v,
            Some(_) => return Err(Error::invalid_params("Invalid params: \"arguments\" must be an object")),
        };
        let params = params.as_ref();
        let name = str_param(params, "name")?;
        let tool = self
            .inner
            .registries
            .tool(name)
            .filter(|t| middleware::visible(sight, ItemKind::Tool, name, &t.json))
            .ok_or_else(|| Error::invalid_params(format!("Unknown tool: {name}")))?;
        if let Some(h) = &tc.headers {
            check_param_headers(h, &tool.header_params, &arguments)?;
        }
        let arguments = Arc::new(arguments);
        let digest = ParamsDigest::new(name, Some(arguments.clone()));
        let round =
            self.open_round(params, "tools/call", &digest, (tc.principal.as_deref(), meta.trace.as_ref()), era)?;
        if let Err(errors) = tool.schema.validate(&arguments) {
            let text = format!("Invalid arguments for tool {name}: {}", errors.join("; "));
            return Ok(self.ready(id, tool_error(text), None, era));
        }
        match (tool.task, era.is_legacy()) {
            (TaskSupport::Forbidden, _) => {}
            (TaskSupport::Required, true) => {
                let text = format!(
                    "Tool {name} runs only as a task (the {} extension of MCP 2026-07-28), which a 2025-11-25 session cannot",
                    TASKS_EXTENSION
                );
                return Ok(self.ready(id, tool_error(text), None, era));
            }
            (_, false) if negotiated(&meta) => {
                return Ok(self.call_tool_as_task(id, meta, tc, tool, arguments, (digest, round), era.clone()));
            }
            (TaskSupport::Required, false) => return Err(required_capability()),
            (TaskSupport::Optional, _) => {}
        }
        let server = self.clone();
        let era2 = era.clone();
        Ok(self.run(id, "tools/call", meta, tc, Some((digest, round)), era, move |ctx| {
            server.tool_future(tool.clone(), arguments.clone(), era2.clone(), ctx)
        }))
    }

    /// One run of a tool's handler: within its time limit, its return shaped into the
    /// `CallToolResult` (a tool failure into an `isError` one) as the client gets it.
    pub(crate) fn tool_future(
        &self,
        tool: Arc<crate::server::registry::ToolEntry>,
        arguments: Arc<Value>,
        era: ServedIn,
        ctx: RequestContext,
    ) -> crate::server::BoxFuture<'static, Result<Value>> {
        let server = self.clone();
        Box::pin(async move {
            let limit = Limit::of_tool(&server, &tool);
            match limit
                .run(
                    "tool",
                    tool.json["name"].as_str().unwrap_or_default(),
                    &ctx,
                    tool.handler.call_shared(arguments, ctx.clone()),
                )
                .await
                .and_then(|returned| shaping::tool_result(returned, tool.output.as_ref()))
            {
                Ok(result) => {
                    check_structured(&tool, &result)?;
                    Ok(server.finish(to_map(&result), None, &era))
                }
                Err(e) if is_tool_failure(e.kind(), &era) => {
                    Ok(server.finish(tool_error(e.message().to_owned()), None, &era))
                }
                Err(e) => Err(e),
            }
        })
    }

    pub(crate) fn read_resource(
        &self,
        req: Request,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
        sight: Option<Sight<'_>>,
    ) -> Result<Exchange> {
        let params = req.params.as_ref();
        let uri = str_param(params, "uri")?.to_owned();
        let regs = &self.inner.registries;
        let direct = read(&regs.resources)
            .get(&uri)
            .filter(|r| middleware::visible(sight, ItemKind::Resource, &uri, &r.json))
            .cloned();
        let (handler, cache, variables, mime) = match direct {
            Some(r) => (r.handler.clone(), r.cache.clone(), Map::new(), mime_type(&r.json)),
            None => {
                let templates = read(&regs.templates);
                let found = templates
                    .iter()
                    .filter(|(key, t)| middleware::visible(sight, ItemKind::ResourceTemplate, key, &t.json))
                    .find_map(|(_, t)| t.template.match_uri(&uri).map(|vars| (t, vars)));
                let (t, vars) = found.ok_or_else(|| resource_not_found(&uri, era))?;
                if !t.options.allow_path_traversal {
                    template_paths::check(&t.template, &vars)
                        .map_err(|why| unsafe_variable(&uri, t.template.as_str(), &why, era))?;
                }
                (t.handler.clone(), t.cache.clone(), vars, mime_type(&t.json))
            }
        };
        let digest = ParamsDigest::new(uri.as_str(), None);
        let round =
            self.open_round(params, "resources/read", &digest, (tc.principal.as_deref(), meta.trace.as_ref()), era)?;
        let hint = cache.unwrap_or_else(|| self.inner.config.cache.read.clone());
        let server = self.clone();
        let era2 = era.clone();
        Ok(self.run(req.id, "resources/read", meta, tc, Some((digest, round)), era, move |ctx| {
            let (server, handler, era, hint, uri, mime) =
                (server.clone(), handler.clone(), era2.clone(), hint.clone(), uri.clone(), mime.clone());
            let request = ResourceRequest { uri: uri.clone(), variables: variables.clone() };
            Box::pin(async move {
                let limit = Limit::of_server(&server);
                let returned = limit.run("resource", &uri, &ctx, handler.read(request, ctx.clone())).await?;
                let result = shaping::resource_result(returned, &uri, mime.as_deref())?;
                Ok(server.finish(to_map(&result), Some(&hint), &era))
            })
        }))
    }

    pub(crate) fn get_prompt(
        &self,
        req: Request,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
        sight: Option<Sight<'_>>,
    ) -> Result<Exchange> {
        let params = req.params.as_ref();
        let name = str_param(params, "name")?;
        let prompt = read(&self.inner.registries.prompts)
            .get(name)
            .filter(|p| middleware::visible(sight, ItemKind::Prompt, name, &p.json))
            .cloned()
            .ok_or_else(|| Error::invalid_params(format!("Unknown prompt: {name}")))?;
        let arguments = match params.and_then(|p| p.get("arguments")) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) if a.values().all(Value::is_string) => a.clone(),
            Some(_) => {
                return Err(Error::invalid_params(
                    "Invalid params: prompt \"arguments\" must be an object of string values",
                ));
            }
        };
        if let Some(missing) = prompt.required.iter().find(|r| !arguments.contains_key(*r)) {
            return Err(Error::invalid_params(format!(
                "Invalid params: prompt {name} requires the argument {missing:?}"
            )));
        }
        let arguments = Arc::new(Value::Object(arguments));
        let digest = ParamsDigest::new(name, Some(arguments.clone()));
        let round =
            self.open_round(params, "prompts/get", &digest, (tc.principal.as_deref(), meta.trace.as_ref()), era)?;
        let server = self.clone();
        let era2 = era.clone();
        Ok(self.run(req.id, "prompts/get", meta, tc, Some((digest, round)), era, move |ctx| {
            let arguments = arguments.as_object().cloned().unwrap_or_default();
            let (server, prompt, era) = (server.clone(), prompt.clone(), era2.clone());
            Box::pin(async move {
                let limit = Limit::of_server(&server);
                let returned = limit
                    .run(
                        "prompt",
                        prompt.json["name"].as_str().unwrap_or_default(),
                        &ctx,
                        prompt.handler.get(arguments, ctx.clone()),
                    )
                    .await?;
                Ok(server.finish(to_map(&shaping::prompt_result(returned)?), None, &era))
            })
        }))
    }

    pub(crate) fn complete(
        &self,
        req: Request,
        meta: RequestMeta,
        tc: &TransportContext,
        era: &ServedIn,
        sight: Option<Sight<'_>>,
    ) -> Result<Exchange> {
        let params = req.params.as_ref();
        let r = params
            .and_then(|p| p.get("ref"))
            .ok_or_else(|| Error::invalid_params("Invalid params: \"ref\" is required"))?;
        let regs = &self.inner.registries;
        let reference = match r.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = str_param(Some(r), "name")?;
                let known = read(&regs.prompts)
                    .get(name)
                    .is_some_and(|p| middleware::visible(sight, ItemKind::Prompt, name, &p.json));
                if !known {
                    return Err(Error::invalid_params(format!("Unknown prompt: {name}")));
                }
                CompletionRef::Prompt(name.to_owned())
            }
            Some("ref/resource") => {
                let uri = str_param(Some(r), "uri")?;
                let template = read(&regs.templates)
                    .get(uri)
                    .is_some_and(|t| middleware::visible(sight, ItemKind::ResourceTemplate, uri, &t.json));
                let resource = read(&regs.resources)
                    .get(uri)
                    .is_some_and(|r| middleware::visible(sight, ItemKind::Resource, uri, &r.json));
                if !template && !resource {
                    return Err(Error::invalid_params(format!("Unknown resource template: {uri}")));
                }
                CompletionRef::ResourceTemplate(uri.to_owned())
            }
            _ => {
                return Err(Error::invalid_params(
                    "Invalid params: ref.type must be \"ref/prompt\" or \"ref/resource\"",
                ));
            }
        };
        let arg = params
            .and_then(|p| p.get("argument"))
            .ok_or_else(|| Error::invalid_params("Invalid params: \"argument\" is required"))?;
        let request = CompletionRequest {
            argument: str_param(Some(arg), "name")?.to_owned(),
            value: str_param(Some(arg), "value")?.to_owned(),
            context: params
                .and_then(|p| p.pointer("/context/arguments"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        };
        let what = match &reference {
            CompletionRef::Prompt(n) => format!("completion of prompt {n:?}"),
            CompletionRef::ResourceTemplate(t) => format!("completion of resource template {t:?}"),
        };
        let handler = read(&regs.completions).get(&reference).cloned();
        let Some(handler) = handler else {
            return Ok(self.ready(
                req.id,
                to_map(&json!({ "completion": { "values": [], "hasMore": false } })),
                None,
                era,
            ));
        };
        let server = self.clone();
        let era2 = era.clone();
        Ok(self.run(req.id, "completion/complete", meta, tc, None, era, move |ctx| {
            let (server, handler, request, era, what) =
                (server.clone(), handler.clone(), request.clone(), era2.clone(), what.clone());
            Box::pin(async move {
                let limit = Limit::of_server(&server);
                let returned = limit.run_named(&what, &ctx, handler.complete(request, ctx.clone())).await?;
                Ok(server.finish(to_map(&shaping::completion_result(returned)?), None, &era))
            })
        }))
    }

    fn listen(&self, req: Request, tc: &TransportContext) -> Result<Exchange> {
        let (tools, resources, prompts, _) = self.available();
        let supported = Supported { tools, prompts, resources, subscribe: resources };
        let mut filter = Filter::from_params(req.params.as_ref(), supported).map_err(Error::invalid_params)?;
        let filter_for_sink = filter.clone();
        let (sink, events) = event_queue(move |e| filter_for_sink.accepts(e));
        self.inner.bus.subscribe(sink);
        let (tx, rx) = crate::server::exchange::outgoing_channel();
        let id = req.id;
        let shutdown = tc.shutdown.clone();
        let mut closed = Map::new();
        closed.insert("resultType".into(), json!("complete"));
        closed.insert("_meta".into(), json!({ SUBSCRIPTION_ID_META_KEY: id.to_value() }));
        self.stamp_server_info(&mut closed);
        let cancel = CancellationToken::new();
        let ack_id = id.clone();
        let ack = move |filter: &Filter| {
            let ack = Notification::new(
                "notifications/subscriptions/acknowledged",
                Some(json!({ "notifications": filter.to_value() })),
            );
            Outgoing::Notification(tag(ack, &ack_id))
        };
        // Following tasks, the stream agrees to those its caller may read, once it has looked.
        let follows_tasks = !filter.task_ids.is_empty();
        if !follows_tasks {
            let _ = tx.send(ack(&filter));
        }
        let (tasks, principal) = (self.inner.tasks.clone(), tc.principal.clone());
        let status_id = id.clone();
        let task_status = move |record: TaskRecord| {
            let n = Notification::new("notifications/tasks", Some(Value::Object(record.detailed())));
            Outgoing::Notification(tag(n, &status_id))
        };
        let (trim, open, left) =
            (TrimWhenDone, telemetry::gauge(Counted::ListenStream), ListenerLeft(self.inner.bus.clone()));
        let fut = async move {
            // Ended or dropped (its client left), the stream gives its memory back: its queue
            // goes first (declared last), then the bus forgets its sink, then the trim.
            let (_trim, _open, _left) = (trim, open, left);
            let mut events = events;
            if follows_tasks {
                let mut readable = Vec::new();
                for task_id in std::mem::take(&mut filter.task_ids) {
                    if let Ok(Some(record)) = tasks.get(&task_id, &principal).await {
                        filter.task_ids.insert(task_id);
                        readable.push(record);
                    }
                }
                let _ = tx.send(ack(&filter));
                // Each task as it is now: a change made before the stream opened is not missed.
                for record in readable {
                    let _ = tx.send(task_status(record));
                }
            }
            loop {
                tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => break,
                    event = events.recv() => match event {
                        Some(ServerEvent::TaskStatus { task_id }) => {
                            if !filter.task_ids.contains(&task_id) {
                                continue;
                            }
                            let Ok(Some(record)) = tasks.get(&task_id, &principal).await else { continue };
                            if tx.send(task_status(record)).is_err() {
                                break;
                            }
                        }
                        Some(e) => {
                            if tx.send(Outgoing::Notification(tag(e.to_notification(), &id))).is_err() {
                                break;
                            }
                        }
                        None => break,
                    },
                }
            }
            Some(Response::result(id.clone(), Value::Object(closed)))
        };
        Ok(Exchange::running(fut, rx, cancel, true))
    }
}

/// The handler timeout of one call and where it comes from (for the error message), and
/// whether the message of an unexpected exception is masked.
struct Limit {
    after: Option<Duration>,
    own: bool,
    mask: bool,
}

impl Limit {
    /// The server's [`ServerBuilder::handler_timeout`](crate::server::ServerBuilder::handler_timeout).
    fn of_server(server: &Server) -> Limit {
        let config = &server.inner.config;
        Limit { after: config.handler_timeout, own: false, mask: config.mask_error_details }
    }

    /// A tool's own timeout, else the server's.
    fn of_tool(server: &Server, tool: &crate::server::registry::ToolEntry) -> Limit {
        match tool.timeout {
            Some(d) => Limit { after: Some(d), own: true, ..Limit::of_server(server) },
            None => Limit::of_server(server),
        }
    }

    /// The policy for what an unexpected exception shows the client
    /// ([`ServerBuilder::mask_error_details`](crate::server::ServerBuilder::mask_error_details)):
    /// its message, or when masked a generic text naming the handler (`what`). The exception's
    /// message is logged either way, here unless the binding logged it ([`Error::reported`]).
    fn mask<T>(&self, r: Result<T>, what: impl FnOnce() -> String) -> Result<T> {
        match r {
            Err(e) if e.is_unexpected() => {
                let what = what();
                if !e.is_reported() {
                    tracing::error!(handler = %what, "a handler raised an unexpected exception: {}", e.message());
                }
                if self.mask { Err(Error::unexpected(format!("Internal error in {what}"))) } else { Err(e) }
            }
            r => r,
        }
    }

    /// Runs `kind name`'s handler future (`tool "forecast"`) within the limit.
    async fn run<T>(
        &self,
        kind: &str,
        name: &str,
        ctx: &RequestContext,
        fut: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        match self.after {
            None => {
                let r = fut.await;
                self.mask(r, || format!("{kind} {name:?}"))
            }
            Some(_) => self.run_named(&format!("{kind} {name:?}"), ctx, fut).await,
        }
    }

    /// [`Limit::limit`], then [`Limit::mask`].
    async fn run_named<T>(&self, what: &str, ctx: &RequestContext, fut: impl Future<Output = Result<T>>) -> Result<T> {
        let r = self.limit(what, ctx, fut).await;
        self.mask(r, || what.to_owned())
    }

    /// Runs a handler future within the limit: when it is reached the future is dropped, the
    /// request's cancellation token cancelled (a handler polling it, say on a host thread that
    /// cannot be stopped, sees it), and the call fails with [`ErrorKind::Timeout`].
    async fn limit<T>(&self, what: &str, ctx: &RequestContext, fut: impl Future<Output = Result<T>>) -> Result<T> {
        let Some(after) = self.after else { return fut.await };
        // Pinned here, so that the token is cancelled before the future is dropped.
        let mut fut = std::pin::pin!(fut);
        match tokio::time::timeout(after, fut.as_mut()).await {
            Ok(r) => r,
            Err(_) => {
                ctx.cancellation_token().cancel();
                let whose = if self.own { "its own timeout" } else { "the server's handler timeout" };
                tracing::warn!(handler = what, "a handler timed out after {}", human(after));
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "Timeout: the {what} handler did not finish within {} ({whose}); the call was abandoned",
                        human(after)
                    ),
                ))
            }
        }
    }
}

/// A duration for a message: "2 s", "1.5 s", "250 ms".
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

fn scope_str(s: &CacheScope) -> &'static str {
    match s {
        CacheScope::Public => "public",
        CacheScope::Private => "private",
    }
}

fn to_map<T: serde::Serialize>(v: &T) -> Map<String, Value> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn tool_error(text: String) -> Map<String, Value> {
    to_map(&json!({ "content": [{ "type": "text", "text": text }], "isError": true }))
}

/// The `mimeType` a resource or template was registered with.
fn mime_type(definition: &Value) -> Option<String> {
    definition.get("mimeType").and_then(Value::as_str).map(str::to_owned)
}

/// A tool with an `outputSchema` must return `structuredContent` that matches it (error
/// results excepted): a mismatch is the server's bug, reported as an internal error.
fn check_structured(tool: &crate::server::registry::ToolEntry, result: &crate::schema::CallToolResult) -> Result<()> {
    let Some(schema) = &tool.output else { return Ok(()) };
    if result.is_error == Some(true) {
        return Ok(());
    }
    let name = tool.json["name"].as_str().unwrap_or_default();
    let Some(structured) = &result.structured_content else {
        return Err(Error::internal(format!(
            "Internal error: tool {name} declares an outputSchema but returned no structuredContent"
        )));
    };
    schema.validate(structured).map_err(|errors| {
        Error::internal(format!(
            "Internal error: tool {name} returned structuredContent that does not match its outputSchema: {}",
            errors.join("; ")
        ))
    })
}

/// How many times a legacy run that ends with request state only is replayed.
const MAX_LEGACY_REPLAYS: usize = 8;

/// Errors a tool reports to the model as an `isError` result rather than a JSON-RPC error.
/// The legacy era has no -32021, so a missing client capability is a tool error there.
fn is_tool_failure(kind: ErrorKind, era: &ServedIn) -> bool {
    matches!(
        kind,
        ErrorKind::Tool
            | ErrorKind::Internal
            | ErrorKind::Usage
            | ErrorKind::Transport
            | ErrorKind::Timeout
            | ErrorKind::Remote
            | ErrorKind::Cancelled
    ) || (era.is_legacy() && kind == ErrorKind::MissingRequiredClientCapability)
}

/// Unknown resource: -32602 with `data.uri` (2026-07-28); legacy sessions get -32002.
fn resource_not_found(uri: &str, era: &ServedIn) -> Error {
    let e = Error::invalid_params(format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }));
    if era.is_legacy() { e.with_code(-32002) } else { e }
}

/// The error of a round whose answers (and handler state) are too large to carry in
/// `requestState`: it names the largest answer, the sizes and the limit.
fn state_too_large(method: &str, carried: usize, round: &Round) -> Error {
    let limit = seal::MAX_REQUEST_STATE;
    let largest = round.used.iter().map(|(k, v)| (k, seal::json_size(v))).max_by_key(|(_, n)| *n);
    let state = round.state.as_ref().map_or(0, seal::json_size);
    match largest {
        Some((key, size)) if size >= state => Error::invalid_params(format!(
            "Invalid params: the answers to this {method} request's input requests total {carried} bytes, over the {limit} bytes that \
             requestState carries to the next round; inputResponses[\"{key}\"] alone is {size} bytes: answer with less (a shorter \
             text, a smaller file), or ask the server to request less at a time"
        ))
        .with_data(json!({ "inputResponse": key, "size": size, "carried": carried, "limit": limit })),
        _ => Error::internal(format!(
            "Internal error: the {method} handler's request state is {state} bytes, over the {limit} bytes that requestState carries \
             to the next round; keep large data on the server and put a reference in the state"
        )),
    }
}

/// A URI that matches a template with a variable the path traversal check refuses: not found,
/// as for a URI that matches nothing, with the reason.
fn unsafe_variable(uri: &str, template: &str, why: &str, era: &ServedIn) -> Error {
    let message =
        format!("Resource not found: {uri} ({why}, which the resource template {template} refuses as path traversal)");
    let e = Error::invalid_params(message).with_data(json!({ "uri": uri }));
    if era.is_legacy() { e.with_code(-32002) } else { e }
}

/// Checks `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the body.
fn check_standard_headers(
    h: &RequestHeaders,
    method_name: &str,
    method: Method,
    meta: &RequestMeta,
    params: Option<&Value>,
) -> Result<()> {
    if let Some(name) = h.repeated.first() {
        return Err(mismatch(format!(
            "Header mismatch: the {} header was sent more than once; send it exactly once",
            display_header(name)
        )));
    }
    match h.protocol_version.as_deref().map(str::trim) {
        None => return Err(mismatch("Header mismatch: the MCP-Protocol-Version header is required".into())),
        Some(v) if v != meta.protocol_version => {
            return Err(mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header {v:?} does not match _meta protocolVersion {:?}",
                meta.protocol_version
            )));
        }
        Some(_) => {}
    }
    match h.method.as_deref().map(str::trim) {
        None => return Err(mismatch("Header mismatch: the Mcp-Method header is required".into())),
        Some(v) if v != method_name => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method header {v:?} does not match body method {method_name:?}"
            )));
        }
        Some(_) => {}
    }
    let body_name = match method {
        Method::ToolsCall | Method::PromptsGet => params.and_then(|p| p.get("name")),
        Method::ResourcesRead => params.and_then(|p| p.get("uri")),
        // The Tasks extension: Mcp-Name carries the task id, for routing to its instance.
        Method::Task(_) => params.and_then(|p| p.get("taskId")),
        _ => return Ok(()),
    };
    let Some(body_name) = body_name.and_then(Value::as_str) else { return Ok(()) };
    let Some(raw) = h.name.as_deref() else {
        return Err(mismatch(format!("Header mismatch: the Mcp-Name header is required for {method_name}")));
    };
    let decoded =
        headers::decode_value(raw).map_err(|e| mismatch(format!("Header mismatch: invalid Mcp-Name header: {e}")))?;
    if decoded != body_name {
        return Err(mismatch(format!(
            "Header mismatch: Mcp-Name header {decoded:?} does not match body value {body_name:?}"
        )));
    }
    Ok(())
}

/// A request-metadata header's name as the specification spells it (`Mcp-Param-Region` for
/// `mcp-param-region`).
fn display_header(lowercase: &str) -> String {
    match lowercase {
        headers::MCP_PROTOCOL_VERSION => "MCP-Protocol-Version".into(),
        headers::MCP_METHOD => "Mcp-Method".into(),
        headers::MCP_NAME => "Mcp-Name".into(),
        other => match other.strip_prefix(headers::MCP_PARAM_PREFIX) {
            Some(param) => format!("Mcp-Param-{param}"),
            None => other.into(),
        },
    }
}

/// Checks the `Mcp-Param-*` headers of a tool call against the tool's `x-mcp-header`
/// parameters: every non-null annotated argument needs its header with an equal value.
fn check_param_headers(h: &RequestHeaders, params: &[headers::HeaderParam], arguments: &Value) -> Result<()> {
    for p in params {
        let wanted = p.header_name.to_ascii_lowercase();
        let header = h.params.iter().find(|(n, _)| *n == wanted).map(|(_, v)| v.as_str());
        let body = p.path.iter().try_fold(arguments, |v, k| v.get(k)).filter(|v| !v.is_null());
        match (body, header) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header mismatch: Mcp-Param-{} is present but the argument is absent or null",
                    p.header_name
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header mismatch: the Mcp-Param-{} header is required for this argument",
                    p.header_name
                )));
            }
            (Some(b), Some(raw)) => {
                let decoded = headers::decode_value(raw).map_err(|e| {
                    mismatch(format!("Header mismatch: invalid Mcp-Param-{} header: {e}", p.header_name))
                })?;
                if !headers::header_matches(p, &decoded, b) {
                    return Err(mismatch(format!(
                        "Header mismatch: Mcp-Param-{} header {decoded:?} does not match the argument value {b}",
                        p.header_name
                    )));
                }
            }
        }
    }
    Ok(())
}
