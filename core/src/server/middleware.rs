//! Middleware and visibility: what a server runs around every request it serves, and which
//! tools, resources, templates and prompts each caller sees.
//!
//! A [`Middleware`] sees each request as a [`RequestInfo`] (method, the tool/resource/prompt
//! it names, params, HTTP headers, principal and token claims, era, legacy session id) and
//! calls [`Next::run`] to have the rest of the chain, then the method itself, serve it. It may
//! reject the request instead (return an [`Error`]: the client gets a JSON-RPC error with that
//! error's code, and over HTTP in the 2026-07-28 era the HTTP status of that code), change the
//! result `next` returns, or time it. Middleware runs in the order registered
//! ([`Server::use_middleware`](crate::server::Server::use_middleware)): the first registered
//! is the outermost.
//!
//! **Which requests.** Every request of a method both eras share, over every transport:
//! `server/discover`, the lists, `tools/call`, `resources/read`, `prompts/get`,
//! `completion/complete` and `subscriptions/listen` (whose `next` resolves when the stream
//! ends; its change events go to the client meanwhile). A request goes through the chain
//! after its envelope and `_meta` were validated (a malformed request, an unknown method, an
//! unsupported version or a header mismatch is answered before), so middleware only sees
//! well-formed requests. The legacy handshake and session plumbing (`initialize`, `ping`,
//! `logging/setLevel`, `resources/subscribe`/`unsubscribe`) and notifications do not go
//! through it. Notifications a handler sends (progress, logs) reach the client as it sends
//! them, whatever the middleware does with its result. `next`'s result is the whole result
//! object as the client would get it (`resultType`, `_meta` and all; for an MRTR round the
//! `InputRequiredResult`), and its error the JSON-RPC error the client would get (a failing
//! tool is an `isError` result, not an error). A middleware that returns an unexpected
//! error ([`Error::unexpected`], a binding's exception) is treated like a handler's: masked
//! when the server masks error details; one that panics fails the request with an internal
//! error.
//!
//! When no middleware and no visibility predicate is registered, a request costs nothing
//! more than without this module (no allocation, one read of an empty list).
//!
//! **Visibility.** A [`Visibility`] predicate
//! ([`Server::set_visibility`](crate::server::Server::set_visibility)) decides per request
//! whether an [`Item`] exists for the caller: hidden items are left out of `tools/list`,
//! `resources/list`, `resources/templates/list` and `prompts/list` (pages are cut after
//! filtering, so every page is full but the last and cursors stay valid), and `tools/call`,
//! `resources/read`, `prompts/get` and `completion/complete` of a hidden item get exactly
//! the error of an unknown one. The predicate runs while the registry is read: it must not
//! add or remove tools, resources or prompts.

use crate::era::Era;
use crate::error::{Error, Result};
use crate::jsonrpc::{Request, RequestId};
pub use crate::server::handlers::BoxFuture;
use http::HeaderMap;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::{Arc, RwLock};

/// What a verified bearer token granted (HTTP with bearer auth): the token verifier's answer
/// as handlers and middleware read it. Its subject is the request's principal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Token {
    /// Who the token stands for: the request's principal.
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The verifier's other claims (`{"claims": {...}}` in its answer; empty when it gave none).
    pub claims: Map<String, Value>,
}

/// One request as middleware and visibility predicates see it.
#[derive(Debug, Clone)]
pub struct RequestInfo {
    request: Request,
    name: Option<String>,
    http_headers: Option<Arc<HeaderMap>>,
    principal: Option<String>,
    token: Option<Arc<Token>>,
    era: Era,
    session_id: Option<String>,
}

impl RequestInfo {
    /// A request's information: `request` as received; the name it targets is read from its
    /// params.
    pub(crate) fn new(
        request: Request,
        http_headers: Option<Arc<HeaderMap>>,
        principal: Option<String>,
        token: Option<Arc<Token>>,
        era: Era,
        session_id: Option<String>,
    ) -> Self {
        let params = request.params.as_ref();
        let name = match request.method.as_str() {
            "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
            "resources/read" => params.and_then(|p| p.get("uri")),
            "completion/complete" => {
                params.and_then(|p| p.get("ref")).and_then(|r| r.get("name").or_else(|| r.get("uri")))
            }
            _ => None,
        };
        let name = name.and_then(Value::as_str).map(str::to_owned);
        RequestInfo { request, name, http_headers, principal, token, era, session_id }
    }

    /// The request itself (the endpoint serves a copy of it).
    pub(crate) fn request(&self) -> &Request {
        &self.request
    }

    /// The request itself, for the endpoint to serve once nothing asks about it any more.
    pub(crate) fn into_request(self) -> Request {
        self.request
    }

    /// The JSON-RPC id of the request.
    pub fn id(&self) -> &RequestId {
        &self.request.id
    }

    /// The method, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// What the request targets: the tool's name (`tools/call`), the resource's URI
    /// (`resources/read`), the prompt's name (`prompts/get`), the prompt's name or the
    /// template's URI (`completion/complete`); `None` for other methods.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The request's params (with `_meta`), as received.
    pub fn params(&self) -> Option<&Value> {
        self.request.params.as_ref()
    }

    /// The request's HTTP headers; `None` on stdio.
    pub fn headers(&self) -> Option<&HeaderMap> {
        self.http_headers.as_deref()
    }

    /// One HTTP header's value (the first, if it was sent more than once), when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers()?.get(name)?.to_str().ok()
    }

    /// The authenticated principal, when the transport established one.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// What the bearer token granted, with bearer auth.
    pub fn token(&self) -> Option<&Token> {
        self.token.as_deref()
    }

    /// The token verifier's claims; `None` without a verified token.
    pub fn claims(&self) -> Option<&Map<String, Value>> {
        self.token().map(|t| &t.claims)
    }

    /// The era the request is served in.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The legacy session's id (`Mcp-Session-Id` on HTTP); `None` in the 2026-07-28 era.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The request as one JSON object, what every binding hands its host's middleware:
    /// `id`, `method`, `name`, `params`, `headers` (see [`headers_to_json`]; `{}` on stdio),
    /// `principal`, `scopes` and `claims` (`null` without a bearer token), `era` (`"modern"` or
    /// `"legacy"`) and `sessionId`.
    pub fn to_json(&self) -> Value {
        let token = self.token();
        serde_json::json!({
            "id": self.id().to_value(),
            "method": self.method(),
            "name": self.name(),
            "params": self.params(),
            "headers": self.headers().map(headers_to_json).unwrap_or_default(),
            "principal": self.principal(),
            "scopes": token.map(|t| t.scopes.clone()),
            "claims": token.map(|t| t.claims.clone()),
            "era": match self.era { Era::Modern => "modern", Era::Legacy => "legacy" },
            "sessionId": self.session_id(),
        })
    }
}

/// HTTP headers as a JSON object for a host: lowercase names; a header sent in several field
/// lines is one value, joined with `", "` (RFC 9110 section 5.3); bytes that are not UTF-8
/// are replaced (U+FFFD).
pub fn headers_to_json(h: &HeaderMap) -> Map<String, Value> {
    let mut out = Map::new();
    for name in h.keys() {
        let values: Vec<String> =
            h.get_all(name).iter().map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()).collect();
        out.insert(name.as_str().to_owned(), Value::String(values.join(", ")));
    }
    out
}

/// What runs around every request (see the module docs). A closure becomes one with
/// [`from_fn`].
///
/// ```
/// use mcpaxle::server::middleware::{BoxFuture, Middleware, Next, Reply, RequestInfo};
/// use mcpaxle::server::Server;
///
/// /// Logs every request and how long it took.
/// struct Audit;
///
/// impl Middleware for Audit {
///     fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, mcpaxle::Result<Reply>> {
///         Box::pin(async move {
///             let started = std::time::Instant::now();
///             let outcome = next.run().await;
///             eprintln!("{} {:?} by {:?}: {:?}", req.method(), req.name(), req.principal(), started.elapsed());
///             outcome
///         })
///     }
/// }
///
/// Server::builder("demo", "1.0.0").build().use_middleware(Audit);
/// ```
pub trait Middleware: Send + Sync {
    /// Serves `req`: by calling `next.run()` (at most once is usual; more is allowed) and
    /// returning its outcome, possibly changed, or by returning an error without calling it.
    fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, Result<Reply>>;
}

/// A [`Middleware`] made of a closure (see [`from_fn`]).
pub struct FromFn<F>(F);

/// A [`Middleware`] made of a closure `|req, next| Box::pin(async move { ... })`.
///
/// ```
/// use mcpaxle::server::middleware::from_fn;
/// use mcpaxle::server::Server;
/// use mcpaxle::{Error, ErrorKind};
///
/// let server = Server::builder("demo", "1.0.0").build();
/// server.use_middleware(from_fn(|req, next| {
///     Box::pin(async move {
///         if req.name() == Some("delete_everything") && req.principal() != Some("admin") {
///             return Err(Error::new(ErrorKind::InvalidRequest, "Forbidden: only admin may delete everything")
///                 .with_code(-32003));
///         }
///         next.run().await
///     })
/// }));
/// ```
pub fn from_fn<F>(f: F) -> FromFn<F>
where
    F: for<'a> Fn(&'a RequestInfo, Next<'a>) -> BoxFuture<'a, Result<Reply>> + Send + Sync,
{
    FromFn(f)
}

impl<F> Middleware for FromFn<F>
where
    F: for<'a> Fn(&'a RequestInfo, Next<'a>) -> BoxFuture<'a, Result<Reply>> + Send + Sync,
{
    fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, Result<Reply>> {
        (self.0)(req, next)
    }
}

/// What serves a request once the chain has run: the method itself.
pub(crate) type Endpoint<'a> = dyn Fn(&'a RequestInfo) -> BoxFuture<'a, Result<Reply>> + Send + Sync + 'a;

/// The rest of the chain after a middleware, then the method. `Copy`: a middleware may run
/// it more than once (a retry), or hand a copy to a host callback that runs it later.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    req: &'a RequestInfo,
    endpoint: &'a Endpoint<'a>,
}

impl<'a> Next<'a> {
    /// The chain `chain` for `req`, ending in `endpoint`.
    pub(crate) fn new(chain: &'a [Arc<dyn Middleware>], req: &'a RequestInfo, endpoint: &'a Endpoint<'a>) -> Self {
        Next { rest: chain, req, endpoint }
    }

    /// Runs the rest of the chain, then the method: the result the client would get, or its
    /// JSON-RPC error.
    pub fn run(self) -> BoxFuture<'a, Result<Reply>> {
        match self.rest.split_first() {
            Some((first, rest)) => first.handle(self.req, Next { rest, ..self }),
            None => (self.endpoint)(self.req),
        }
    }
}

/// What kind of item a [`Visibility`] predicate is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A resource.
    Resource,
    /// A resource template.
    ResourceTemplate,
    /// A prompt.
    Prompt,
}

impl ItemKind {
    /// `"tool"`, `"resource"`, `"resourceTemplate"` or `"prompt"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Resource => "resource",
            ItemKind::ResourceTemplate => "resourceTemplate",
            ItemKind::Prompt => "prompt",
        }
    }
}

/// An item a [`Visibility`] predicate is asked about.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    /// Tool, resource, template or prompt.
    pub kind: ItemKind,
    /// Its key: a tool's or prompt's name, a resource's URI, a template's URI template.
    pub name: &'a str,
    /// Its definition as listed (the `Tool`, `Resource`, `ResourceTemplate` or `Prompt` JSON).
    pub definition: &'a Value,
}

/// Whether an item exists for a request's caller (see the module docs).
pub type Visibility = dyn Fn(&Item<'_>, &RequestInfo) -> bool + Send + Sync;

/// An item a [`VisibilityFilter`] is asked about (owned: the answer may come later).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemInfo {
    /// Tool, resource, template or prompt.
    pub kind: ItemKind,
    /// Its key, as [`Item::name`].
    pub name: String,
    /// Its definition as listed.
    pub definition: Value,
}

impl ItemInfo {
    /// `{"kind": "tool" | "resource" | "resourceTemplate" | "prompt", "name", "definition"}`:
    /// what a binding hands its host's predicate.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "kind": self.kind.as_str(), "name": self.name, "definition": self.definition })
    }
}

/// A visibility predicate that answers later: a host's callback (what a binding registers,
/// since a host's function runs on the host's thread). Asked once per request that lists or
/// names items (not for `server/discover` or `subscriptions/listen`), with every item of the
/// list, or the items a call, read, get or completion could name (for `resources/read`, the
/// resource of that URI and every template), it answers for each, in order, whether it is
/// visible to `who`. An error fails the request with that error; a list of the wrong length
/// is an internal error. With middleware, it is asked after the chain, once per `next.run()`.
pub trait VisibilityFilter: Send + Sync {
    /// Which of `items` `who` sees, in order.
    fn visible<'a>(&'a self, who: &'a RequestInfo, items: &'a [ItemInfo]) -> BoxFuture<'a, Result<Vec<bool>>>;
}

/// The visibility rule of a server: a predicate, or a filter that answers later.
#[derive(Clone)]
pub(crate) enum VisibilityHook {
    Predicate(Arc<Visibility>),
    Filter(Arc<dyn VisibilityFilter>),
}

/// The keys of the items a [`VisibilityFilter`] hid from one request.
pub(crate) type Hidden = HashSet<(ItemKind, String)>;

/// A server's middleware, in order: shared by the requests in flight.
pub(crate) type Chain = Arc<[Arc<dyn Middleware>]>;

/// The middleware chain and the visibility predicate of a server, changeable at run time.
#[derive(Default)]
pub(crate) struct Hooks {
    chain: RwLock<Option<Chain>>,
    visibility: RwLock<Option<VisibilityHook>>,
}

impl Hooks {
    /// Appends a middleware to the chain (innermost).
    pub(crate) fn push(&self, m: Arc<dyn Middleware>) {
        let mut chain = self.chain.write().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<Arc<dyn Middleware>> = chain.as_deref().unwrap_or_default().to_vec();
        all.push(m);
        *chain = Some(all.into());
    }

    /// Sets (or with `None` removes) the visibility rule.
    pub(crate) fn set_visibility(&self, v: Option<VisibilityHook>) {
        *self.visibility.write().unwrap_or_else(|e| e.into_inner()) = v;
    }

    /// The chain now, `None` when empty.
    pub(crate) fn chain(&self) -> Option<Chain> {
        self.chain.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The visibility rule now.
    pub(crate) fn visibility(&self) -> Option<VisibilityHook> {
        self.visibility.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The visibility rule applied to one request: the predicate, or what the filter hid.
#[derive(Clone, Copy)]
pub(crate) enum Sight<'a> {
    Predicate { predicate: &'a Visibility, who: &'a RequestInfo },
    Hidden(&'a Hidden),
}

impl Sight<'_> {
    /// Whether the item of `kind` keyed `name`, defined as `definition`, is visible.
    pub(crate) fn sees(&self, kind: ItemKind, name: &str, definition: &Value) -> bool {
        match self {
            Sight::Predicate { predicate, who } => predicate(&Item { kind, name, definition }, who),
            // Nothing hidden (the common answer) is known without making a key to look up.
            Sight::Hidden(hidden) => hidden.is_empty() || !hidden.contains(&(kind, name.to_owned())),
        }
    }
}

/// Whether `sight` (if any) sees the item: everything is visible without a predicate.
pub(crate) fn visible(sight: Option<Sight<'_>>, kind: ItemKind, name: &str, definition: &Value) -> bool {
    sight.is_none_or(|s| s.sees(kind, name, definition))
}

/// A response's outcome as [`Next::run`] returns it: the result, or the client's error.
pub(crate) fn from_response(outcome: crate::jsonrpc::Outcome) -> Result<Reply> {
    match outcome {
        crate::jsonrpc::Outcome::Result(v) => Ok(Reply::from(v)),
        crate::jsonrpc::Outcome::Error(e) => Err(Error::remote(e)),
    }
}

/// A request's result as [`Next::run`] answers it and a [`Middleware`] returns it: the whole
/// result object the client gets.
///
/// A result the server keeps as JSON text (a page of a list, written once until the list
/// changes) stays text while middleware passes it on, and is written to the client as it
/// is: a middleware that only looks at the request, times it or rejects it costs a list
/// nothing. The result is read as a value only when a middleware asks for it
/// ([`value`](Self::value), [`into_value`](Self::into_value)). A middleware answers a result
/// of its own, or a changed one, with `Reply::from(value)` (or `value.into()`).
///
/// ```
/// use mcpaxle::server::middleware::{Reply, from_fn};
/// use mcpaxle::server::Server;
///
/// let server = Server::builder("demo", "1.0.0").build();
/// // Marks every tools/list result; other results pass untouched.
/// server.use_middleware(from_fn(|req, next| {
///     Box::pin(async move {
///         let reply = next.run().await?;
///         if req.method() != "tools/list" {
///             return Ok(reply);
///         }
///         let mut result = reply.into_value();
///         result["_meta"]["example.com/listedBy"] = "middleware".into();
///         Ok(Reply::from(result))
///     })
/// }));
/// ```
#[derive(Debug, Clone)]
pub struct Reply(Kept);

#[derive(Debug, Clone)]
enum Kept {
    Value(Value),
    Json(Arc<str>),
}

impl Reply {
    /// A result kept as JSON text (the server wrote it from values).
    pub(crate) fn json(text: Arc<str>) -> Self {
        Reply(Kept::Json(text))
    }

    /// The result as a value: borrowed, or read from the text it is kept as.
    pub fn value(&self) -> std::borrow::Cow<'_, Value> {
        match &self.0 {
            Kept::Value(v) => std::borrow::Cow::Borrowed(v),
            Kept::Json(text) => std::borrow::Cow::Owned(crate::server::exchange::parse_result(text)),
        }
    }

    /// The result as a value, to change or keep.
    pub fn into_value(self) -> Value {
        match self.0 {
            Kept::Value(v) => v,
            Kept::Json(text) => crate::server::exchange::parse_result(&text),
        }
    }

    /// The result as JSON text: the text it is kept as, or the value serialized.
    pub fn to_json(&self) -> std::borrow::Cow<'_, str> {
        match &self.0 {
            Kept::Value(v) => std::borrow::Cow::Owned(v.to_string()),
            Kept::Json(text) => std::borrow::Cow::Borrowed(text),
        }
    }

    /// The final response to request `id` with this result.
    pub(crate) fn into_final(self, id: RequestId) -> crate::server::exchange::Final {
        match self.0 {
            Kept::Value(v) => crate::jsonrpc::Response::result(id, v).into(),
            Kept::Json(text) => crate::server::exchange::Final::Json(id, text),
        }
    }
}

impl From<Value> for Reply {
    fn from(v: Value) -> Self {
        Reply(Kept::Value(v))
    }
}

impl From<Reply> for Value {
    fn from(r: Reply) -> Self {
        r.into_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;
    use std::sync::Mutex;

    fn info() -> RequestInfo {
        let req: Request = serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "echo", "arguments": {} }
        }))
        .unwrap();
        RequestInfo::new(req, None, Some("alice".into()), None, Era::Modern, None)
    }

    struct Tag(&'static str, Arc<Mutex<Vec<String>>>);

    impl Middleware for Tag {
        fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, Result<Reply>> {
            Box::pin(async move {
                self.1.lock().unwrap().push(format!("{} in {}", self.0, req.method()));
                let r = next.run().await;
                self.1.lock().unwrap().push(format!("{} out", self.0));
                r.map(|reply| {
                    let mut v = reply.into_value();
                    v["seen"].as_array_mut().unwrap().push(json!(self.0));
                    v.into()
                })
            })
        }
    }

    #[tokio::test]
    async fn the_chain_runs_in_order_around_the_endpoint() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let chain: Vec<Arc<dyn Middleware>> = vec![Arc::new(Tag("a", log.clone())), Arc::new(Tag("b", log.clone()))];
        let req = info();
        let log2 = log.clone();
        let endpoint = move |r: &RequestInfo| -> BoxFuture<'_, Result<Reply>> {
            log2.lock().unwrap().push(format!("endpoint {}", r.name().unwrap()));
            Box::pin(async { Ok(Reply::json(r#"{"seen":[]}"#.into())) })
        };
        let out = Next::new(&chain, &req, &endpoint).run().await.unwrap().into_value();
        assert_eq!(out, json!({ "seen": ["b", "a"] }));
        assert_eq!(*log.lock().unwrap(), ["a in tools/call", "b in tools/call", "endpoint echo", "b out", "a out"]);
    }

    #[tokio::test]
    async fn a_closure_rejects_without_reaching_the_endpoint() {
        let reject = from_fn(|r, _next| {
            let who = r.principal().unwrap_or("nobody").to_owned();
            Box::pin(async move { Err(Error::new(ErrorKind::InvalidRequest, format!("no, {who}")).with_code(-32042)) })
        });
        let chain: Vec<Arc<dyn Middleware>> = vec![Arc::new(reject)];
        let req = info();
        let endpoint = |_: &RequestInfo| -> BoxFuture<'_, Result<Reply>> { panic!("the endpoint must not run") };
        let e = Next::new(&chain, &req, &endpoint).run().await.unwrap_err();
        assert_eq!((e.code(), e.message()), (-32042, "no, alice"));
    }

    #[tokio::test]
    async fn no_middleware_is_the_endpoint_alone() {
        let req = info();
        let endpoint = |_: &RequestInfo| -> BoxFuture<'_, Result<Reply>> { Box::pin(async { Ok(json!(1).into()) }) };
        assert_eq!(Next::new(&[], &req, &endpoint).run().await.unwrap().into_value(), json!(1));
    }

    #[test]
    fn a_reply_kept_as_text_is_read_as_a_value_only_when_asked() {
        let kept = Reply::json(r#"{"tools":[{"name":"a"}]}"#.into());
        assert_eq!(kept.to_json(), r#"{"tools":[{"name":"a"}]}"#);
        assert!(matches!(kept.to_json(), std::borrow::Cow::Borrowed(_)), "kept text is not written again");
        assert_eq!(*kept.value(), json!({ "tools": [{ "name": "a" }] }));
        let made = Reply::from(json!({ "tools": [] }));
        assert!(matches!(made.value(), std::borrow::Cow::Borrowed(_)), "a value is not copied to be read");
        assert_eq!(made.to_json(), r#"{"tools":[]}"#);
        assert_eq!(Value::from(made), json!({ "tools": [] }));
    }

    #[test]
    fn request_info_names_what_the_request_targets() {
        let mk = |method: &str, params: Value| {
            let req: Request =
                serde_json::from_value(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
                    .unwrap();
            RequestInfo::new(req, None, None, None, Era::Legacy, Some("s1".into()))
        };
        assert_eq!(mk("tools/call", json!({ "name": "t" })).name(), Some("t"));
        assert_eq!(mk("prompts/get", json!({ "name": "p" })).name(), Some("p"));
        assert_eq!(mk("resources/read", json!({ "uri": "file:///a" })).name(), Some("file:///a"));
        let c = mk("completion/complete", json!({ "ref": { "type": "ref/resource", "uri": "x://{a}" } }));
        assert_eq!(c.name(), Some("x://{a}"));
        let l = mk("tools/list", json!({}));
        assert_eq!((l.name(), l.session_id(), l.era(), l.headers()), (None, Some("s1"), Era::Legacy, None));
    }

    #[test]
    fn the_json_of_a_request_is_what_bindings_hand_their_host() {
        let req: Request = serde_json::from_value(
            json!({ "jsonrpc": "2.0", "id": "a", "method": "prompts/get", "params": { "name": "p" } }),
        )
        .unwrap();
        let mut h = HeaderMap::new();
        h.append("X-Tenant", "acme".parse().unwrap());
        h.append("accept", "text/html".parse().unwrap());
        h.append("accept", "application/json".parse().unwrap());
        let token = Token { subject: "alice".into(), scopes: vec!["mcp".into()], claims: Map::new() };
        let info =
            RequestInfo::new(req, Some(Arc::new(h)), Some("alice".into()), Some(Arc::new(token)), Era::Modern, None);
        assert_eq!(
            info.to_json(),
            json!({
                "id": "a", "method": "prompts/get", "name": "p", "params": { "name": "p" },
                "headers": { "x-tenant": "acme", "accept": "text/html, application/json" },
                "principal": "alice", "scopes": ["mcp"], "claims": {}, "era": "modern", "sessionId": null
            })
        );
        assert_eq!(info.header("accept"), Some("text/html"));
        assert_eq!(info.clone().to_json()["headers"]["x-tenant"], json!("acme"));
        let stdio = RequestInfo::new(info.request().clone(), None, None, None, Era::Legacy, Some("s".into()));
        let j = stdio.to_json();
        assert_eq!(
            (&j["headers"], &j["claims"], &j["era"], &j["sessionId"]),
            (&json!({}), &json!(null), &json!("legacy"), &json!("s"))
        );
    }

    #[test]
    fn hooks_start_empty_and_keep_the_order_of_registration() {
        let hooks = Hooks::default();
        assert!(hooks.chain().is_none() && hooks.visibility().is_none());
        let log = Arc::new(Mutex::new(Vec::new()));
        hooks.push(Arc::new(Tag("a", log.clone())));
        hooks.push(Arc::new(Tag("b", log)));
        assert_eq!(hooks.chain().unwrap().len(), 2);
        let predicate: Arc<Visibility> = Arc::new(|i: &Item<'_>, _: &RequestInfo| i.kind != ItemKind::Prompt);
        hooks.set_visibility(Some(VisibilityHook::Predicate(predicate)));
        let Some(VisibilityHook::Predicate(v)) = hooks.visibility() else { panic!("a predicate") };
        let req = info();
        let sight = Sight::Predicate { predicate: &*v, who: &req };
        assert!(sight.sees(ItemKind::Tool, "t", &json!({})));
        assert!(!visible(Some(sight), ItemKind::Prompt, "p", &json!({})));
        assert!(visible(None, ItemKind::Prompt, "p", &json!({})));
        let hidden: Hidden = [(ItemKind::Tool, "t".to_owned())].into();
        assert!(!Sight::Hidden(&hidden).sees(ItemKind::Tool, "t", &json!({})));
        assert!(Sight::Hidden(&hidden).sees(ItemKind::Prompt, "t", &json!({})));
        let item = ItemInfo { kind: ItemKind::ResourceTemplate, name: "x://{a}".into(), definition: json!({}) };
        assert_eq!(item.to_json(), json!({ "kind": "resourceTemplate", "name": "x://{a}", "definition": {} }));
    }
}
