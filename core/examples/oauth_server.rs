//! An MCP server protected by OAuth 2.1 bearer tokens, with a small authorization server of
//! its own on the same port: how to put an mcpaxle server behind the MCP authorization spec,
//! and the fixture the client tests (Rust, Python, Node, C) run their OAuth flows against.
//!
//! ```text
//! cargo run -p mcpaxle --example oauth_server -- --http 127.0.0.1:3002 [--token-ttl 3600]
//! curl -i -X POST http://127.0.0.1:3002/mcp        # 401, and where to find the authorization server
//! ```
//!
//! | endpoint                                       | what it is                                         |
//! |------------------------------------------------|----------------------------------------------------|
//! | `POST/GET/DELETE /mcp`                         | the MCP endpoint; needs `Authorization: Bearer`    |
//! | `GET /.well-known/oauth-protected-resource/mcp`| protected resource metadata (RFC 9728)             |
//! | `GET /.well-known/oauth-authorization-server`  | authorization server metadata (RFC 8414)           |
//! | `POST /register`                               | dynamic client registration (RFC 7591)             |
//! | `GET /authorize`                               | authorization endpoint: approves without a user    |
//! | `POST /token`                                  | token endpoint: codes (with PKCE) and refreshes    |
//! | `GET /stats`                                   | counters, for tests                                |
//!
//! The issuer is `http://HOST:PORT` and the resource `http://HOST:PORT/mcp`. Every MCP request
//! needs the scope `notes:read`; calling the tool `write_note` needs `notes:write` as well
//! (a token without it gets `403 insufficient_scope`, and a client steps up). The tools:
//! `whoami` answers `client <client_id>, scopes <scopes>`, `write_note {text}` answers
//! `saved: <text>`.
//!
//! Clients: registered ones (`/register`), the pre-registered confidential client
//! `preregistered-client` / `preregistered-secret` (any redirect URI), and any `https://` URL
//! as a Client ID Metadata Document id. Every token response carries a refresh token, asked
//! for with `offline_access` or not (simpler for tests); each refresh token is good for one
//! refresh and is replaced by a new one (rotation).
//!
//! What a production server adds and this one leaves out, to stay readable: a user who logs
//! in and consents at `/authorize`, fetching and checking Client ID Metadata Documents,
//! tokens stored hashed and persisted, limits on how many clients, codes and tokens are kept,
//! and HTTPS. Authorization servers are usually a separate service (Keycloak, Auth0, Entra
//! ID, ...); the resource server's part, the `/mcp` checks below, stays the same.

use bytes::Bytes;
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpaxle::schema::{CallToolResult, Tool};
use mcpaxle::server::{RequestContext, Server};
use mcpaxle::transport::auth::{BearerAuth, TokenInfo};
use mcpaxle::transport::http::{HttpOptions, McpService};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

// ─── Configuration ──────────────────────────────────────────────────────────────────────

/// Every MCP request needs this scope.
const SCOPE_READ: &str = "notes:read";
/// Calling `write_note` needs this one too.
const SCOPE_WRITE: &str = "notes:write";
/// The scopes this authorization server grants (`offline_access`: a refresh token, by
/// convention; this server issues one anyway).
const SCOPES_SUPPORTED: [&str; 3] = [SCOPE_READ, SCOPE_WRITE, "offline_access"];

const PRE_REGISTERED_ID: &str = "preregistered-client";
const PRE_REGISTERED_SECRET: &str = "preregistered-secret";

/// How long an authorization code may wait for its token request.
const CODE_TTL: Duration = Duration::from_secs(60);
/// The largest request body read (the MCP endpoint's own default limit).
const MAX_BODY: usize = 4 << 20;
/// How long shutdown waits for requests in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

const PROTECTED_RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource/mcp";

// ─── Running it ─────────────────────────────────────────────────────────────────────────

/// A running server. Dropping it stops it too (without the drain).
pub struct OAuthServer {
    addr: SocketAddr,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl OAuthServer {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The authorization server's issuer identifier, `http://HOST:PORT`.
    pub fn issuer(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The MCP endpoint, which is also the protected resource's identifier.
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting connections, ends open streams, and waits for requests in flight
    /// (at most a few seconds).
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Binds `addr` and serves everything on it in the background. Access tokens live
/// `token_ttl`. The issuer and resource identifiers are made of the bound address, so bind
/// the address clients will use (`127.0.0.1:0` picks a free port).
pub async fn start(addr: SocketAddr, token_ttl: Duration) -> std::io::Result<OAuthServer> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let mut store = Store::default();
    store.clients.insert(
        PRE_REGISTERED_ID.to_owned(),
        Client {
            secret: Some(PRE_REGISTERED_SECRET.to_owned()),
            methods: vec![AuthMethod::Basic, AuthMethod::Post],
            redirect_uris: None,
        },
    );
    let (issuer, resource) = (format!("http://{addr}"), format!("http://{addr}/mcp"));
    let store = Arc::new(Mutex::new(store));
    let options = HttpOptions { auth: Some(bearer_auth(store.clone(), &resource, &issuer)), ..Default::default() };
    let mcp = McpService::new(mcp_server().map_err(std::io::Error::other)?, options);
    let app = App { issuer, resource, token_ttl, store, mcp };
    let stop = CancellationToken::new();
    let task = tokio::spawn(accept_loop(listener, app, stop.clone()));
    Ok(OAuthServer { addr, stop, task: Some(task) })
}

async fn accept_loop(listener: TcpListener, app: App, stop: CancellationToken) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors, say: wait a little rather than spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.route(req).await) }
        });
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service).into_owned());
        tokio::spawn(conn);
    }
    // Two-phase shutdown: stop accepting, then drain with a deadline. Cancelling the MCP
    // service's token ends open `subscriptions/listen` streams with their final response.
    drop(listener);
    app.mcp.shutdown_token().cancel();
    app.mcp.sessions().close_all();
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown()).await;
}

fn usage() -> ! {
    eprintln!("usage: oauth_server --http 127.0.0.1:PORT [--token-ttl SECONDS]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut addr: Option<SocketAddr> = None;
    let mut ttl = Duration::from_secs(3600);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--http", Some(a)) => addr = Some(a.parse().unwrap_or_else(|_| usage())),
            ("--token-ttl", Some(s)) => ttl = Duration::from_secs(s.parse().unwrap_or_else(|_| usage())),
            _ => usage(),
        }
    }
    let server = start(addr.unwrap_or_else(|| usage()), ttl).await?;
    eprintln!("oauth_server: listening on {}", server.mcp_url());
    mcpaxle::transport::shutdown_signal().await;
    server.shutdown().await;
    Ok(())
}

// ─── State ──────────────────────────────────────────────────────────────────────────────

/// How a client authenticates at the token endpoint (RFC 7591 `token_endpoint_auth_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthMethod {
    /// A public client: it proves nothing but its PKCE verifier.
    None,
    /// The secret in `Authorization: Basic`.
    Basic,
    /// The secret in the form, as `client_secret`.
    Post,
}

impl AuthMethod {
    fn name(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
        }
    }

    fn from_name(name: &str) -> Option<AuthMethod> {
        [AuthMethod::None, AuthMethod::Basic, AuthMethod::Post].into_iter().find(|m| m.name() == name)
    }
}

#[derive(Clone)]
struct Client {
    secret: Option<String>,
    /// How it may authenticate (one method when registered; either secret method for the
    /// pre-registered client).
    methods: Vec<AuthMethod>,
    /// The redirect URIs it registered; `None`: any.
    redirect_uris: Option<Vec<String>>,
}

/// An authorization code, and what it was issued for.
struct Code {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    resource: String,
    scopes: Vec<String>,
    expires: Instant,
}

/// What an access or refresh token grants.
#[derive(Clone)]
struct Grant {
    client_id: String,
    scopes: Vec<String>,
    /// The resource (audience) it is for.
    resource: String,
}

#[derive(Default)]
struct Stats {
    authorizations: u64,
    token_requests: u64,
    refreshes: u64,
    registrations: u64,
}

/// Everything the server remembers, in memory. Tokens are stored as issued to keep this
/// short; a real server stores a hash of each.
#[derive(Default)]
struct Store {
    clients: HashMap<String, Client>,
    codes: HashMap<String, Code>,
    access_tokens: HashMap<String, (Grant, Instant)>,
    refresh_tokens: HashMap<String, Grant>,
    stats: Stats,
}

#[derive(Clone)]
struct App {
    issuer: String,
    resource: String,
    token_ttl: Duration,
    store: Arc<Mutex<Store>>,
    mcp: McpService,
}

type Body = UnsyncBoxBody<Bytes, Infallible>;
/// The answer that refuses a request, from a check that otherwise returns what it found
/// (boxed: responses are large, and the path that passes should not pay for them).
type Refusal = Box<Response<Body>>;

impl App {
    /// No handler holds the lock across an `.await`, so a std `Mutex` is enough.
    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A known client: registered, pre-registered, or a Client ID Metadata Document URL.
    fn client(&self, client_id: &str) -> Option<Client> {
        if let Some(c) = self.store().clients.get(client_id) {
            return Some(c.clone());
        }
        // A metadata document id is an https URL with a path. A real server fetches the
        // document and takes the redirect URIs listed there; this one accepts the id
        // without fetching (tests run offline), and with it any redirect URI.
        let is_document_url = client_id
            .strip_prefix("https://")
            .is_some_and(|rest| rest.contains('/') && !rest.contains(char::is_whitespace));
        is_document_url.then(|| Client { secret: None, methods: vec![AuthMethod::None], redirect_uris: None })
    }

    async fn route(self, req: Request<Incoming>) -> Response<Body> {
        match (req.method(), req.uri().path()) {
            // The MCP endpoint and its protected resource metadata.
            (_, "/mcp") | (&Method::GET, PROTECTED_RESOURCE_METADATA) => {
                self.mcp.handle(req).await.map(|b| b.boxed_unsync())
            }
            (&Method::GET, "/.well-known/oauth-authorization-server") => self.server_metadata(),
            (&Method::POST, "/register") => self.register(req).await,
            (&Method::GET, "/authorize") => self.authorize(req.uri().query().unwrap_or("")),
            (&Method::POST, "/token") => self.token(req).await,
            (&Method::GET, "/stats") => self.stats(),
            _ => json_response(StatusCode::NOT_FOUND, json!({ "error": "not_found" })),
        }
    }
}

// ─── The protected resource: /mcp ───────────────────────────────────────────────────────
//
// The MCP endpoint checks tokens itself: `HttpOptions::auth` with a `BearerAuth` publishes the
// protected resource metadata (RFC 9728), answers `401` with the challenge that names it,
// `403 insufficient_scope` when a request or a tool needs more scopes (the client steps up),
// and hands the token's subject to handlers as `ctx.principal()`. All it needs from us is
// the verifier below. With an external authorization server this part is all there is: the
// verifier checks a JWT's signature and claims, or asks the introspection endpoint.

/// What the verifier says about a token: unknown, expired, or issued for another resource
/// (its audience: RFC 8707; the MCP spec forbids accepting tokens meant for someone else)
/// are all invalid.
fn verify(store: &Mutex<Store>, token: &str, resource: &str) -> Option<TokenInfo> {
    let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
    let (grant, expires) = store.access_tokens.get(token).cloned()?;
    if Instant::now() >= expires {
        store.access_tokens.remove(token);
        return None;
    }
    if grant.resource != resource {
        return None;
    }
    // The principal is one string: here the client id and the token's scopes, for `whoami`.
    let subject = json!({ "client_id": grant.client_id, "scope": grant.scopes.join(" ") }).to_string();
    Some(TokenInfo::new(subject, grant.scopes))
}

/// The endpoint's protection: `notes:read` for everything, `notes:write` for `write_note`.
fn bearer_auth(store: Arc<Mutex<Store>>, resource: &str, issuer: &str) -> BearerAuth {
    let audience = resource.to_owned();
    BearerAuth::new(resource, issuer, move |token: String| {
        let info = verify(&store, &token, &audience);
        async move { Ok(info) }
    })
    .required_scopes([SCOPE_READ])
    .tool_scopes("write_note", [SCOPE_WRITE])
}

/// The MCP server: two tools that show who calls and what a write scope guards.
fn mcp_server() -> mcpaxle::Result<Server> {
    let server = Server::builder("oauth-notes", "1.0.0")
        .instructions("Notes behind OAuth: notes:read to use, notes:write to write.")
        .build();
    let whoami = Tool::new("whoami", "Tells which OAuth client calls, with which scopes", json!({ "type": "object" }));
    server.add_tool(whoami, |_args: Value, ctx: RequestContext| async move {
        let caller: Value = ctx.principal().and_then(|p| serde_json::from_str(p).ok()).unwrap_or_default();
        let field = |k: &str| caller.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
        Ok(CallToolResult::text(format!("client {}, scopes {}", field("client_id"), field("scope"))))
    })?;
    let write_note = Tool::new(
        "write_note",
        "Saves a note (needs the notes:write scope)",
        json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] }),
    );
    server.add_tool(write_note, |args: Value, _ctx: RequestContext| async move {
        Ok(CallToolResult::text(format!("saved: {}", args["text"].as_str().unwrap_or_default())))
    })?;
    Ok(server)
}

// ─── Metadata documents ─────────────────────────────────────────────────────────────────

impl App {
    /// RFC 8414. Clients check that `issuer` is exactly the URL they derived the document's
    /// location from, and that PKCE S256 is listed.
    fn server_metadata(&self) -> Response<Body> {
        let i = &self.issuer;
        json_response(
            StatusCode::OK,
            json!({
                "issuer": i,
                "authorization_endpoint": format!("{i}/authorize"),
                "token_endpoint": format!("{i}/token"),
                "registration_endpoint": format!("{i}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
                // RFC 9207: redirects carry `iss`, so a client talking to several
                // authorization servers can tell whose response it got.
                "authorization_response_iss_parameter_supported": true,
                "client_id_metadata_document_supported": true,
                "scopes_supported": SCOPES_SUPPORTED,
            }),
        )
    }

    fn stats(&self) -> Response<Body> {
        let s = &self.store().stats;
        json_response(
            StatusCode::OK,
            json!({
                "authorizations": s.authorizations,
                "token_requests": s.token_requests,
                "refreshes": s.refreshes,
                "registrations": s.registrations,
            }),
        )
    }
}

// ─── Dynamic client registration: /register ─────────────────────────────────────────────

impl App {
    /// RFC 7591: takes the client's metadata, answers it back with a `client_id` (and a
    /// `client_secret` unless the client is public).
    async fn register(&self, req: Request<Incoming>) -> Response<Body> {
        let body = match read_body(req.into_body()).await {
            Ok(b) => b,
            Err(refusal) => return *refusal,
        };
        let Ok(Value::Object(mut metadata)) = serde_json::from_slice::<Value>(&body) else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_client_metadata", "the body must be a JSON object");
        };
        // The authorization code grant needs redirect URIs; each must be absolute and
        // without a fragment (RFC 6749 §3.1.2), since codes are sent there.
        let uris: Vec<String> = match metadata.get("redirect_uris").and_then(Value::as_array) {
            Some(list) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            None => Vec::new(),
        };
        let listed = metadata.get("redirect_uris").and_then(Value::as_array).map_or(0, Vec::len);
        if uris.is_empty() || uris.len() != listed || !uris.iter().all(|u| is_absolute_uri(u)) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_redirect_uri",
                "redirect_uris must list absolute URIs without a fragment",
            );
        }
        // RFC 7591 §2: the default method is client_secret_basic.
        let method_name =
            metadata.get("token_endpoint_auth_method").and_then(Value::as_str).unwrap_or("client_secret_basic");
        let Some(method) = AuthMethod::from_name(method_name) else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                &format!("unsupported token_endpoint_auth_method {method_name:?}"),
            );
        };
        let supported = |key: &str, allowed: &[&str]| {
            metadata
                .get(key)
                .and_then(Value::as_array)
                .is_none_or(|list| list.iter().all(|v| v.as_str().is_some_and(|s| allowed.contains(&s))))
        };
        if !supported("grant_types", &["authorization_code", "refresh_token"])
            || !supported("response_types", &["code"])
        {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "only the authorization_code and refresh_token grants (response type code) are supported",
            );
        }

        let client_id = random_token(16);
        let secret = (method != AuthMethod::None).then(|| random_token(32));
        {
            let mut store = self.store();
            let client = Client { secret: secret.clone(), methods: vec![method], redirect_uris: Some(uris.clone()) };
            store.clients.insert(client_id.clone(), client);
            store.stats.registrations += 1;
        }
        // The answer is the registered metadata, defaults filled in (RFC 7591 §3.2.1).
        let issued_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        metadata.insert("client_id".into(), json!(client_id));
        metadata.insert("client_id_issued_at".into(), json!(issued_at));
        if let Some(secret) = secret {
            metadata.insert("client_secret".into(), json!(secret));
            metadata.insert("client_secret_expires_at".into(), json!(0));
        }
        metadata.insert("redirect_uris".into(), json!(uris));
        metadata.insert("token_endpoint_auth_method".into(), json!(method.name()));
        // Every token response here carries a refresh token, so both grants are the default.
        metadata.entry("grant_types").or_insert(json!(["authorization_code", "refresh_token"]));
        metadata.entry("response_types").or_insert(json!(["code"]));
        json_response(StatusCode::CREATED, Value::Object(metadata))
    }
}

/// An absolute URI (`scheme:rest`) without a fragment: `http://127.0.0.1:3000/cb`,
/// `com.example.app:/callback`.
fn is_absolute_uri(uri: &str) -> bool {
    let Some((scheme, rest)) = uri.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !uri.contains('#')
        && !uri.contains(char::is_whitespace)
}

// ─── The authorization endpoint: /authorize ─────────────────────────────────────────────

impl App {
    /// The authorization code grant's first leg (RFC 6749 §4.1.1 with PKCE, RFC 7636, and
    /// resource indicators, RFC 8707). There is no user: a valid request is approved at once
    /// and answered with the redirect a browser would follow.
    ///
    /// Every refusal is a 400 with an OAuth error body. Until the client and its
    /// redirect URI are verified it must not redirect (that would make this endpoint an open
    /// redirector); afterwards RFC 6749 §4.1.2.1 lets a server send errors back to the
    /// client's redirect URI instead, which a server with users would do.
    fn authorize(&self, query: &str) -> Response<Body> {
        let params = form_decode(query);
        let bad = |error: &str, description: &str| oauth_error(StatusCode::BAD_REQUEST, error, description);
        if let Some(name) = repeated(&params) {
            return bad("invalid_request", &format!("the parameter {name} is repeated"));
        }
        let get = |key: &str| params.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());

        // 1. The client, and where the answer goes.
        let Some(client_id) = get("client_id") else { return bad("invalid_request", "client_id is missing") };
        let Some(client) = self.client(client_id) else { return bad("invalid_request", "unknown client_id") };
        let Some(redirect_uri) = get("redirect_uri") else { return bad("invalid_request", "redirect_uri is missing") };
        // Exact string comparison (OAuth 2.1): no prefix matching, no "close enough".
        if !client.redirect_uris.as_ref().is_none_or(|uris| uris.iter().any(|u| u == redirect_uri)) {
            return bad("invalid_request", "redirect_uri is not registered for this client");
        }

        // 2. The request itself.
        if get("response_type") != Some("code") {
            return bad("unsupported_response_type", "response_type must be code");
        }
        // PKCE is required, and only with S256: `plain` would put the secret in the URL.
        let Some(code_challenge) = get("code_challenge").filter(|c| is_pkce_string(c)) else {
            return bad("invalid_request", "code_challenge is missing or malformed (PKCE is required)");
        };
        if get("code_challenge_method") != Some("S256") {
            return bad("invalid_request", "code_challenge_method must be S256");
        }
        // The token will be for this MCP server only; the client must say so (RFC 8707).
        if get("resource") != Some(self.resource.as_str()) {
            return bad("invalid_target", &format!("resource must be {}", self.resource));
        }
        let scopes: Vec<String> = match get("scope") {
            Some(s) if !s.trim().is_empty() => s.split_whitespace().map(str::to_owned).collect(),
            _ => vec![SCOPE_READ.to_owned()],
        };
        if let Some(unknown) = scopes.iter().find(|s| !SCOPES_SUPPORTED.contains(&s.as_str())) {
            return bad("invalid_scope", &format!("unknown scope {unknown:?}"));
        }

        // 3. Approve. A real server would now authenticate the user and ask for consent.
        let code = random_token(32);
        {
            let mut store = self.store();
            store.codes.insert(
                code.clone(),
                Code {
                    client_id: client_id.to_owned(),
                    redirect_uri: redirect_uri.to_owned(),
                    code_challenge: code_challenge.to_owned(),
                    resource: self.resource.clone(),
                    scopes,
                    expires: Instant::now() + CODE_TTL,
                },
            );
            store.stats.authorizations += 1;
        }
        // `state` comes back unchanged (the client's CSRF check); `iss` per RFC 9207.
        let mut answer = vec![("code", code.as_str())];
        if let Some(state) = get("state") {
            answer.push(("state", state));
        }
        answer.push(("iss", &self.issuer));
        let separator = if redirect_uri.contains('?') { '&' } else { '?' };
        let location = format!("{redirect_uri}{separator}{}", form_encode(&answer));
        let mut resp = Response::builder().status(StatusCode::FOUND).header(CACHE_CONTROL, "no-store");
        if let Ok(v) = HeaderValue::from_str(&location) {
            resp = resp.header(LOCATION, v);
        }
        resp.body(empty_body()).unwrap_or_default()
    }
}

// ─── The token endpoint: /token ─────────────────────────────────────────────────────────

impl App {
    /// RFC 6749 §4.1.3 (a code for tokens) and §6 (a refresh token for new tokens). Errors
    /// per §5.2: `invalid_client` (401) when the client fails to authenticate,
    /// `invalid_grant` when the code or refresh token is not good, `invalid_request` for a
    /// malformed request.
    async fn token(&self, req: Request<Incoming>) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let body = match read_body(body).await {
            Ok(b) => b,
            Err(refusal) => return *refusal,
        };
        let form = form_decode(&String::from_utf8_lossy(&body));
        let grant_type = form.iter().find(|(k, _)| k == "grant_type").map(|(_, v)| v.clone());
        {
            let mut store = self.store();
            store.stats.token_requests += 1;
            if grant_type.as_deref() == Some("refresh_token") {
                store.stats.refreshes += 1;
            }
        }
        if let Some(name) = repeated(&form) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("the parameter {name} is repeated"),
            );
        }
        let client_id = match self.authenticate_client(&parts.headers, &form) {
            Ok(id) => id,
            Err(refusal) => return *refusal,
        };
        let get = |key: &str| form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        match grant_type.as_deref() {
            Some("authorization_code") => self.code_grant(&client_id, get),
            Some("refresh_token") => self.refresh_grant(&client_id, get),
            Some(other) => oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("unsupported grant_type {other:?}"),
            ),
            None => oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "grant_type is missing"),
        }
    }

    /// Client authentication (RFC 6749 §2.3): a secret in `Authorization: Basic` or in the
    /// form, or, for a public client, just its `client_id`. One method per request, and the
    /// one the client registered. Returns the authenticated `client_id`.
    fn authenticate_client(&self, headers: &HeaderMap, form: &[(String, String)]) -> Result<String, Refusal> {
        let get = |key: &str| form.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let basic = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic ").or_else(|| v.strip_prefix("basic ")));
        let invalid = |description: &str| {
            let mut resp = oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description);
            // A client that tried HTTP Basic gets the challenge of that scheme (§5.2).
            if basic.is_some() {
                resp.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static(r#"Basic realm="token""#));
            }
            Box::new(resp)
        };
        let (client_id, secret, method) = match (basic, get("client_secret")) {
            (Some(_), Some(_)) => {
                return Err(Box::new(oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "use one client authentication method, not two",
                )));
            }
            (Some(credentials), None) => {
                // base64("id:secret"), each part form-encoded first (§2.3.1).
                let decoded = base64_decode(credentials.trim()).and_then(|b| String::from_utf8(b).ok());
                let Some((id, secret)) = decoded.as_deref().and_then(|s| s.split_once(':')) else {
                    return Err(invalid("malformed Basic credentials"));
                };
                let (Some(id), Some(secret)) = (decode_component(id), decode_component(secret)) else {
                    return Err(invalid("malformed Basic credentials"));
                };
                if get("client_id").is_some_and(|form_id| form_id != id) {
                    return Err(invalid("client_id differs from the Basic credentials"));
                }
                (id, Some(secret), AuthMethod::Basic)
            }
            (None, secret) => {
                let Some(id) = get("client_id") else {
                    return Err(invalid("no client authentication and no client_id"));
                };
                let method = if secret.is_some() { AuthMethod::Post } else { AuthMethod::None };
                (id, secret, method)
            }
        };
        let Some(client) = self.client(&client_id) else { return Err(invalid("unknown client")) };
        if !client.methods.contains(&method) {
            let registered: Vec<&str> = client.methods.iter().map(|m| m.name()).collect();
            return Err(invalid(&format!(
                "this client authenticates with {}, not {}",
                registered.join(" or "),
                method.name()
            )));
        }
        if let (Some(expected), Some(given)) = (&client.secret, &secret) {
            if !secrets_equal(expected, given) {
                return Err(invalid("wrong client secret"));
            }
        }
        Ok(client_id)
    }

    /// An authorization code for tokens.
    fn code_grant<'a>(&self, client_id: &str, get: impl Fn(&str) -> Option<&'a str>) -> Response<Body> {
        let invalid_grant = |description: &str| oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description);
        let Some(code) = get("code") else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "code is missing");
        };
        // A code is good for one token request, whatever its outcome (RFC 6749 §4.1.2).
        let Some(issued) = self.store().codes.remove(code) else {
            return invalid_grant("unknown, expired or already used code");
        };
        if Instant::now() >= issued.expires {
            return invalid_grant("the code expired");
        }
        if issued.client_id != client_id {
            return invalid_grant("the code was issued to another client");
        }
        // The same redirect URI as in the authorization request (§4.1.3).
        if get("redirect_uri") != Some(issued.redirect_uri.as_str()) {
            return invalid_grant("redirect_uri differs from the authorization request's");
        }
        // PKCE: only whoever made the authorization request knows the verifier whose hash
        // was sent then, so a code intercepted on its way back is useless (RFC 7636 §4.6).
        let verified = get("code_verifier").is_some_and(|v| is_pkce_string(v) && pkce_s256(v) == issued.code_challenge);
        if !verified {
            return invalid_grant("code_verifier does not match the code_challenge");
        }
        if get("resource").is_some_and(|r| r != issued.resource) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                "resource differs from the authorization request's",
            );
        }
        let grant = Grant { client_id: client_id.to_owned(), scopes: issued.scopes, resource: issued.resource };
        self.issue_tokens(grant.clone(), grant)
    }

    /// A refresh token for new tokens; the refresh token is replaced (rotation, OAuth 2.1
    /// §4.3.1 for public clients), so a stolen one works once at most, and its use by the
    /// thief then shows when the rightful client's refresh fails.
    fn refresh_grant<'a>(&self, client_id: &str, get: impl Fn(&str) -> Option<&'a str>) -> Response<Body> {
        let Some(token) = get("refresh_token") else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "refresh_token is missing");
        };
        let Some(grant) = self.store().refresh_tokens.remove(token) else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "unknown or already used refresh token");
        };
        if grant.client_id != client_id {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "the refresh token was issued to another client",
            );
        }
        if get("resource").is_some_and(|r| r != grant.resource) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                "resource differs from the original grant's",
            );
        }
        // A refresh may narrow the scopes, never widen them (§6); the new refresh token
        // keeps the original ones.
        let mut access = grant.clone();
        if let Some(scope) = get("scope") {
            let wanted: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
            if !wanted.iter().all(|s| grant.scopes.contains(s)) {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_scope", "a refresh cannot add scopes");
            }
            access.scopes = wanted;
        }
        self.issue_tokens(access, grant)
    }

    /// A new access token (living `token_ttl`) and refresh token.
    fn issue_tokens(&self, access: Grant, refresh: Grant) -> Response<Body> {
        let access_token = random_token(32);
        let refresh_token = random_token(32);
        let scope = access.scopes.join(" ");
        {
            let mut store = self.store();
            store.access_tokens.insert(access_token.clone(), (access, Instant::now() + self.token_ttl));
            store.refresh_tokens.insert(refresh_token.clone(), refresh);
        }
        json_response(
            StatusCode::OK,
            json!({
                "access_token": access_token,
                "token_type": "Bearer",
                "expires_in": self.token_ttl.as_secs(),
                "refresh_token": refresh_token,
                "scope": scope,
            }),
        )
    }
}

// ─── Small pieces ───────────────────────────────────────────────────────────────────────

fn empty_body() -> Body {
    Full::new(Bytes::new()).boxed_unsync()
}

/// A JSON answer; `Cache-Control: no-store` because some carry tokens (RFC 6749 §5.1).
fn json_response(status: StatusCode, value: Value) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from(value.to_string())).boxed_unsync());
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// An OAuth error answer: `{"error", "error_description"}` (RFC 6749 §5.2).
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<Body> {
    json_response(status, json!({ "error": error, "error_description": description }))
}

/// Reads a request body, up to [`MAX_BODY`].
async fn read_body(body: Incoming) -> Result<Bytes, Refusal> {
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(_) => Err(Box::new(oauth_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request",
            "the body is too large or could not be read",
        ))),
    }
}

/// `application/x-www-form-urlencoded`: unreserved characters as they are, space as `+`,
/// every other byte `%XX`.
fn form_encode(pairs: &[(&str, &str)]) -> String {
    let encode = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
                b' ' => "+".to_owned(),
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&")
}

/// The pairs of a query string or form body; a pair that does not decode is left out.
fn form_decode(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((decode_component(k)?, decode_component(v)?))
        })
        .collect()
}

fn decode_component(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// A parameter that appears twice (RFC 6749 §3.1: parameters must not repeat).
fn repeated(params: &[(String, String)]) -> Option<&str> {
    params
        .iter()
        .enumerate()
        .find(|(i, (k, _))| params[..*i].iter().any(|(seen, _)| seen == k))
        .map(|(_, (k, _))| k.as_str())
}

/// An unguessable URL-safe string of `bytes` random bytes (codes, tokens, client ids).
fn random_token(bytes: usize) -> String {
    use base64::Engine;
    let mut buf = vec![0u8; bytes];
    getrandom::getrandom(&mut buf).expect("the operating system provides randomness");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

/// PKCE S256: `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
fn pkce_s256(verifier: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// 43 to 128 unreserved characters: the form of a PKCE verifier and of an S256 challenge.
fn is_pkce_string(s: &str) -> bool {
    (43..=128).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// Compares secrets in time independent of where they differ (no timing side channel).
fn secrets_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
