//! The client's OAuth 2.1 against the `oauth_server` fixture (an MCP server with its own
//! authorization server): the whole flow with a host's authorize handler and without a user,
//! pre-registered credentials, refresh on expiry, step-up on `insufficient_scope`, one flow
//! for concurrent challenges, refused authorization responses, and a server that needs OAuth
//! from a client without it. The server's own checks (PKCE, code reuse, rotation,
//! challenges) have a test of their own, since the binding suites use it as their fixture.

// The fixture crate's binary, compiled in as a module (a dev-dependency on mcpaxle-fixtures
// would be a cycle that builds the core twice).
#[allow(dead_code)]
#[path = "../../fixtures/src/oauth_server.rs"]
mod oauth_server;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcpaxle::client::{CallOptions, Client, ClientOptions, FileTokenStore, OAuthOptions};
use mcpaxle::{Error, ErrorKind};
use oauth_server::OAuthServer;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where the authorization server sends the user back. Never contacted: the authorize
/// handlers take the redirect's `Location` themselves.
const REDIRECT: &str = "http://127.0.0.1:9/callback";
/// A short access token lifetime, and a wait that outlasts it. Long enough that a loaded
/// machine finishes the steps meant to happen before expiry.
const SHORT_TTL: Duration = Duration::from_secs(2);
const PAST_TTL: Duration = Duration::from_millis(2300);

async fn start(token_ttl: Duration) -> OAuthServer {
    oauth_server::start("127.0.0.1:0".parse().unwrap(), token_ttl).await.unwrap()
}

async fn start_default() -> OAuthServer {
    start(Duration::from_secs(3600)).await
}

fn options(oauth: OAuthOptions) -> ClientOptions {
    ClientOptions::new("oauth-test", "1.0.0").oauth(oauth)
}

/// A plain HTTP exchange that follows no redirect.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or_else(|| panic!("no {name} header"))
    }
}

async fn send(method: Method, url: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let http: HyperClient<HttpConnector, Full<Bytes>> = HyperClient::builder(TokioExecutor::new()).build_http();
    let mut req = Request::builder().method(method).uri(url);
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    let resp = http.request(req.body(Full::new(Bytes::from(body.to_owned()))).unwrap()).await.unwrap();
    let (parts, body) = resp.into_parts();
    Reply { status: parts.status, headers: parts.headers, body: body.collect().await.unwrap().to_bytes() }
}

async fn get(url: &str) -> Reply {
    send(Method::GET, url, &[], "").await
}

async fn post_form(url: &str, form: &str, headers: &[(&str, &str)]) -> Reply {
    let mut h = vec![("content-type", "application/x-www-form-urlencoded")];
    h.extend_from_slice(headers);
    send(Method::POST, url, &h, form).await
}

/// The server's counters: `[authorizations, token_requests, refreshes, registrations]`.
async fn stats(server: &OAuthServer) -> [u64; 4] {
    let s = get(&format!("{}/stats", server.issuer())).await.json();
    ["authorizations", "token_requests", "refreshes", "registrations"].map(|k| s[k].as_u64().unwrap())
}

/// A query parameter of a URL (test values need no decoding beyond `%3A`, `%2F` and `+`).
fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k == name).then(|| v.replace('+', " ").replace("%3A", ":").replace("%2F", "/"))
    })
}

/// The user-agent step done by hand: GET the authorization URL, expect a redirect, return it.
async fn follow(url: &str) -> mcpaxle::Result<String> {
    let reply = get(url).await;
    if reply.status != StatusCode::FOUND {
        return Err(Error::new(
            ErrorKind::Transport,
            format!("authorize answered {}: {}", reply.status, String::from_utf8_lossy(&reply.body)),
        ));
    }
    Ok(reply.header("location").to_owned())
}

/// OAuth whose authorize handler records every authorization URL, then follows it.
fn recording(seen: &Arc<Mutex<Vec<String>>>) -> OAuthOptions {
    let seen = seen.clone();
    OAuthOptions::new(REDIRECT, move |url: String| {
        seen.lock().unwrap().push(url.clone());
        async move { follow(&url).await }
    })
}

async fn call_text(client: &Client, tool: &str, args: Value) -> mcpaxle::Result<String> {
    let r = client.call_tool(tool, args, CallOptions::new()).await?;
    assert_ne!(r.is_error, Some(true), "{tool} failed: {r:?}");
    Ok(r.content.iter().filter_map(|c| c.as_text()).collect())
}

async fn whoami(client: &Client) -> String {
    call_text(client, "whoami", json!({})).await.unwrap()
}

#[tokio::test]
async fn full_flow_with_a_custom_authorize_handler() {
    let server = start_default().await;
    let seen = Arc::default();
    let client = Client::connect_http(&server.mcp_url(), options(recording(&seen))).await.unwrap();

    let urls = seen.lock().unwrap().clone();
    assert_eq!(urls.len(), 1, "one authorization: {urls:?}");
    let url = &urls[0];
    assert!(url.starts_with(&format!("{}/authorize?", server.issuer())), "{url}");
    assert_eq!(param(url, "response_type").as_deref(), Some("code"));
    assert_eq!(param(url, "redirect_uri").as_deref(), Some(REDIRECT));
    assert_eq!(param(url, "code_challenge").map(|c| c.len()), Some(43), "an S256 challenge is 43 characters: {url}");
    assert_eq!(param(url, "code_challenge_method").as_deref(), Some("S256"));
    assert!(param(url, "state").is_some_and(|s| s.len() >= 16), "{url}");
    assert_eq!(param(url, "resource"), Some(server.mcp_url()));
    let scope = param(url, "scope").unwrap();
    assert!(
        scope.split(' ').any(|s| s == "notes:read") && !scope.contains("notes:write"),
        "the challenged scope: {scope}"
    );

    let me = whoami(&client).await;
    let client_id = param(url, "client_id").unwrap();
    assert!(me.starts_with(&format!("client {client_id}, scopes ")), "{me}");
    assert!(me.contains("notes:read"), "{me}");
    assert_ne!(client_id, "preregistered-client");
    // One authorization, one registration, one token request; no refresh.
    assert_eq!(stats(&server).await, [1, 1, 0, 1]);
    client.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn without_user_authorizes_once_and_reuses_the_token() {
    let server = start_default().await;
    let client =
        Client::connect_http(&server.mcp_url(), options(OAuthOptions::without_user(REDIRECT).unwrap())).await.unwrap();
    assert!(whoami(&client).await.contains("notes:read"));
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    assert!(whoami(&client).await.contains("notes:read"));
    assert_eq!(stats(&server).await, [1, 1, 0, 1], "later calls carry the same token");
    server.shutdown().await;
}

#[tokio::test]
async fn pre_registered_credentials_skip_registration() {
    let server = start_default().await;
    let oauth = OAuthOptions::without_user(REDIRECT).unwrap().pre_registered(
        "preregistered-client",
        Some("preregistered-secret".into()),
        None,
    );
    let client = Client::connect_http(&server.mcp_url(), options(oauth)).await.unwrap();
    assert_eq!(whoami(&client).await, "client preregistered-client, scopes notes:read offline_access");
    assert_eq!(stats(&server).await, [1, 1, 0, 0], "no registration");

    // The secret is checked: a wrong one fails at the token endpoint, and the error says why.
    let oauth = OAuthOptions::without_user(REDIRECT).unwrap().pre_registered(
        "preregistered-client",
        Some("wrong".into()),
        None,
    );
    let e = Client::connect_http(&server.mcp_url(), options(oauth)).await.unwrap_err();
    assert!(e.message().contains("invalid_client"), "{e}");
    assert_eq!(stats(&server).await, [2, 2, 0, 0]);
    server.shutdown().await;
}

#[tokio::test]
async fn expired_tokens_are_refreshed() {
    let server = start(SHORT_TTL).await;
    let seen = Arc::default();
    let client = Client::connect_http(&server.mcp_url(), options(recording(&seen))).await.unwrap();
    let before = whoami(&client).await;
    assert_eq!(stats(&server).await, [1, 1, 0, 1]);

    // The next call gets 401 invalid_token; the client refreshes and sends it again.
    tokio::time::sleep(PAST_TTL).await;
    assert_eq!(whoami(&client).await, before, "same client, same scopes");
    assert_eq!(stats(&server).await, [1, 2, 1, 1], "a refresh, no new authorization");

    // And again: a token that came from a refresh and served calls is refreshed in turn.
    tokio::time::sleep(PAST_TTL).await;
    assert_eq!(whoami(&client).await, before);
    assert_eq!(stats(&server).await, [1, 3, 2, 1], "the rotated refresh token works");
    assert_eq!(seen.lock().unwrap().len(), 1, "the user was asked once");
    server.shutdown().await;
}

#[tokio::test]
async fn insufficient_scope_steps_up() {
    let server = start_default().await;
    let seen = Arc::default();
    let client = Client::connect_http(&server.mcp_url(), options(recording(&seen))).await.unwrap();
    assert!(!whoami(&client).await.contains("notes:write"));

    // 403 insufficient_scope → a new authorization with both scopes → the call goes through.
    assert_eq!(call_text(&client, "write_note", json!({ "text": "hello" })).await.unwrap(), "saved: hello");
    let urls = seen.lock().unwrap().clone();
    assert_eq!(urls.len(), 2, "{urls:?}");
    let scope = param(&urls[1], "scope").unwrap();
    let scopes: Vec<&str> = scope.split(' ').collect();
    assert!(
        scopes.contains(&"notes:read") && scopes.contains(&"notes:write"),
        "step-up keeps the held scopes: {scope}"
    );
    assert!(whoami(&client).await.contains("notes:write"));
    assert_eq!(stats(&server).await, [2, 2, 0, 1], "the registration is reused");

    // The new token carries the new scope: no further authorization.
    assert_eq!(call_text(&client, "write_note", json!({ "text": "again" })).await.unwrap(), "saved: again");
    assert_eq!(stats(&server).await, [2, 2, 0, 1]);
    server.shutdown().await;
}

#[tokio::test]
async fn concurrent_challenges_trigger_one_flow() {
    let server = start(SHORT_TTL).await;
    // The handler lingers, so that every call meets the challenge before the flow ends.
    let flows = Arc::new(AtomicUsize::new(0));
    let counter = flows.clone();
    let oauth = OAuthOptions::new(REDIRECT, move |url: String| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            follow(&url).await
        }
    });
    let client = Client::connect_http(&server.mcp_url(), options(oauth)).await.unwrap();
    assert_eq!(flows.load(Ordering::SeqCst), 1);

    // Eight calls that each get 403 insufficient_scope: one step-up between them.
    let calls = (0..8).map(|i| {
        let client = client.clone();
        async move { call_text(&client, "write_note", json!({ "text": format!("note {i}") })).await }
    });
    let results = futures_util::future::join_all(calls).await;
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(r.unwrap(), format!("saved: note {i}"));
    }
    assert_eq!(flows.load(Ordering::SeqCst), 2, "exactly one authorization for the eight calls");
    assert_eq!(stats(&server).await, [2, 2, 0, 1]);

    // Eight calls with an expired token: one refresh between them.
    tokio::time::sleep(PAST_TTL).await;
    let calls = (0..8).map(|_| {
        let client = client.clone();
        async move { whoami(&client).await }
    });
    for me in futures_util::future::join_all(calls).await {
        assert!(me.contains("notes:write"), "{me}");
    }
    assert_eq!(stats(&server).await, [2, 3, 1, 1], "exactly one refresh for the eight calls");
    assert_eq!(flows.load(Ordering::SeqCst), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_failing_authorize_handler_fails_the_call() {
    let server = start_default().await;
    let oauth = OAuthOptions::new(REDIRECT, |_url: String| async {
        Err(Error::new(ErrorKind::Cancelled, "the user closed the browser window"))
    });
    let e = Client::connect_http(&server.mcp_url(), options(oauth)).await.unwrap_err();
    assert!(e.message().contains("the user closed the browser window"), "{e}");
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    // Registered, but never authorized nor at the token endpoint.
    assert_eq!(stats(&server).await, [0, 0, 0, 1]);
    server.shutdown().await;
}

#[tokio::test]
async fn an_authorization_response_with_a_wrong_state_is_refused() {
    let server = start_default().await;
    let oauth = OAuthOptions::new(REDIRECT, |url: String| async move {
        let location = follow(&url).await?;
        let (base, query) = location.split_once('?').unwrap();
        let forged: Vec<&str> =
            query.split('&').map(|p| if p.starts_with("state=") { "state=forged" } else { p }).collect();
        assert_ne!(forged.join("&"), query, "the redirect carried a state");
        Ok(format!("{base}?{}", forged.join("&")))
    });
    let e = Client::connect_http(&server.mcp_url(), options(oauth)).await.unwrap_err();
    assert!(e.message().contains("state"), "{e}");
    // The server issued a code, and the client did not redeem it.
    assert_eq!(stats(&server).await, [1, 0, 0, 1]);
    server.shutdown().await;
}

#[tokio::test]
async fn without_oauth_the_401_is_a_clear_error() {
    let server = start_default().await;
    let e = Client::connect_http(&server.mcp_url(), ClientOptions::new("no-oauth", "1.0.0")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport);
    assert!(e.message().contains("HTTP 401"), "{e}");
    assert_eq!(e.data().and_then(|d| d["httpStatus"].as_u64()), Some(401));
    assert_eq!(stats(&server).await, [0, 0, 0, 0]);
    server.shutdown().await;
}

/// The checks the example server makes, seen on the wire: what the binding suites rely on.
#[tokio::test]
async fn the_server_enforces_the_oauth_rules() {
    let server = start_default().await;
    let (issuer, mcp) = (server.issuer(), server.mcp_url());
    let prm = format!("{issuer}/.well-known/oauth-protected-resource/mcp");

    // Discovery documents.
    let r = get(&prm).await.json();
    assert_eq!(
        r,
        json!({ "resource": mcp, "authorization_servers": [issuer], "scopes_supported": ["notes:read"], "bearer_methods_supported": ["header"] })
    );
    let m = get(&format!("{issuer}/.well-known/oauth-authorization-server")).await.json();
    assert_eq!(m["issuer"], json!(issuer));
    assert_eq!(m["token_endpoint"], json!(format!("{issuer}/token")));
    assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(m["authorization_response_iss_parameter_supported"], json!(true));

    // The MCP endpoint's challenges.
    let r = send(Method::POST, &mcp, &[("content-type", "application/json")], "{}").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.header("www-authenticate"), format!(r#"Bearer scope="notes:read", resource_metadata="{prm}""#));
    let r = send(Method::POST, &mcp, &[("authorization", "Bearer nope")], "{}").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.header("www-authenticate").contains(r#"error="invalid_token""#));

    // Registration: a public client gets no secret.
    let reg = send(
        Method::POST,
        &format!("{issuer}/register"),
        &[],
        &json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" }).to_string(),
    )
    .await;
    assert_eq!(reg.status, StatusCode::CREATED);
    let reg = reg.json();
    let client_id = reg["client_id"].as_str().unwrap().to_owned();
    assert!(reg.get("client_secret").is_none());
    let bad =
        send(Method::POST, &format!("{issuer}/register"), &[], &json!({ "redirect_uris": ["no-scheme"] }).to_string())
            .await;
    assert_eq!((bad.status, bad.json()["error"].clone()), (StatusCode::BAD_REQUEST, json!("invalid_redirect_uri")));

    // Authorization requests.
    let verifier = "v".repeat(43);
    let challenge = {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
    };
    let enc = |s: &str| s.replace(':', "%3A").replace('/', "%2F");
    let authorize = |redirect: &str, method: &str, scope: &str| {
        format!(
            "{issuer}/authorize?response_type=code&client_id={client_id}&redirect_uri={}&code_challenge={challenge}&code_challenge_method={method}&state=s1&resource={}&scope={scope}",
            enc(redirect),
            enc(&mcp)
        )
    };
    for (url, why) in [
        (authorize("http://127.0.0.1:9/elsewhere", "S256", "notes:read"), "an unregistered redirect URI"),
        (authorize(REDIRECT, "plain", "notes:read"), "PKCE plain"),
        (authorize(REDIRECT, "S256", "notes:admin"), "an unknown scope"),
    ] {
        let r = get(&url).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{why}");
        assert!(r.headers.get("location").is_none(), "{why}: no redirect");
    }
    let code_of = |r: Reply| {
        assert_eq!(r.status, StatusCode::FOUND);
        let location = r.header("location").to_owned();
        assert!(location.starts_with(&format!("{REDIRECT}?code=")), "{location}");
        assert_eq!(param(&location, "state").as_deref(), Some("s1"));
        assert_eq!(param(&location, "iss"), Some(issuer.clone()));
        param(&location, "code").unwrap()
    };
    let code = code_of(get(&authorize(REDIRECT, "S256", "notes:read")).await);

    // Token requests: the wrong verifier burns the code; a code works once.
    let token = format!("{issuer}/token");
    let redeem = |code: &str, verifier: &str| {
        format!(
            "grant_type=authorization_code&code={code}&redirect_uri={}&code_verifier={verifier}&client_id={client_id}",
            enc(REDIRECT)
        )
    };
    let r = post_form(&token, &redeem(&code, &"w".repeat(43)), &[]).await;
    assert_eq!((r.status, r.json()["error"].clone()), (StatusCode::BAD_REQUEST, json!("invalid_grant")));
    let r = post_form(&token, &redeem(&code, &verifier), &[]).await;
    assert_eq!(r.json()["error"], json!("invalid_grant"), "a code is good for one request");
    let code = code_of(get(&authorize(REDIRECT, "S256", "notes:read")).await);
    let r = post_form(&token, &redeem(&code, &verifier), &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
    let tokens = r.json();
    assert_eq!(
        (tokens["token_type"].clone(), tokens["scope"].clone(), tokens["expires_in"].clone()),
        (json!("Bearer"), json!("notes:read"), json!(3600))
    );
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(post_form(&token, &redeem(&code, &verifier), &[]).await.json()["error"], json!("invalid_grant"));

    // A notes:read token may not call write_note: 403 with the scopes it needs.
    let bearer = format!("Bearer {access}");
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "write_note", "arguments": { "text": "x" } } });
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let r = send(Method::POST, &mcp, &headers, &call.to_string()).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let want = format!(
        r#"Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="{prm}", error_description="calling tool 'write_note' needs the scopes notes:write""#
    );
    assert_eq!(r.header("www-authenticate"), want);

    // Refresh tokens rotate: the old one is refused after use.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let r = post_form(&token, &format!("grant_type=refresh_token&refresh_token={refresh}&client_id={client_id}"), &[])
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_ne!(r.json()["refresh_token"].as_str().unwrap(), refresh);
    let r = post_form(&token, &format!("grant_type=refresh_token&refresh_token={refresh}&client_id={client_id}"), &[])
        .await;
    assert_eq!(r.json()["error"], json!("invalid_grant"));

    // Confidential clients: the method registered, and the right secret.
    let reg = send(
        Method::POST,
        &format!("{issuer}/register"),
        &[],
        &json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post" }).to_string(),
    )
    .await
    .json();
    let (id, secret) = (reg["client_id"].as_str().unwrap(), reg["client_secret"].as_str().unwrap());
    let basic = {
        use base64::Engine;
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")))
    };
    let r = post_form(&token, "grant_type=refresh_token&refresh_token=x", &[("authorization", &basic)]).await;
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (StatusCode::UNAUTHORIZED, json!("invalid_client")),
        "registered for client_secret_post, not basic"
    );
    let r =
        post_form(&token, &format!("grant_type=refresh_token&refresh_token=x&client_id={id}&client_secret=wrong"), &[])
            .await;
    assert_eq!((r.status, r.json()["error"].clone()), (StatusCode::UNAUTHORIZED, json!("invalid_client")));
    let r = post_form(
        &token,
        &format!("grant_type=refresh_token&refresh_token=x&client_id={id}&client_secret={secret}"),
        &[],
    )
    .await;
    assert_eq!(r.json()["error"], json!("invalid_grant"), "authenticated; the refresh token is what is wrong");
    server.shutdown().await;
}

// ─── Token stores ───────────────────────────────────────────────────────────────────────

/// A fresh directory for a test's token store file.
fn store_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpaxle-client-oauth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn with_file(oauth: OAuthOptions, path: &std::path::Path) -> OAuthOptions {
    oauth.token_store(Arc::new(FileTokenStore::new(path)))
}

/// The one entry's token of a store file.
fn stored(path: &std::path::Path) -> Value {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(doc["entries"].as_array().map(Vec::len), Some(1), "{doc}");
    doc["entries"][0]["token"].clone()
}

/// Changes the one entry's token of a store file.
fn edit_stored(path: &std::path::Path, edit: impl FnOnce(&mut Value)) {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut doc["entries"][0]["token"]);
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[tokio::test]
async fn a_file_store_serves_a_new_client_without_any_flow() {
    let server = start_default().await;
    let dir = store_dir("restart");
    let path = dir.join("tokens.json");
    let seen = Arc::default();
    let first = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    let me = whoami(&first).await;
    first.close().await;
    assert_eq!(stats(&server).await, [1, 1, 0, 1]);
    let entry = stored(&path);
    assert!(entry["accessToken"].is_string() && entry["refreshToken"].is_string(), "{entry}");
    assert!(entry["expiresAt"].as_u64().is_some(), "{entry}");
    assert_eq!(entry["registration"]["redirectUri"], REDIRECT, "the registration is kept: {entry}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // A second client (a restart): the stored token, no registration, no token request, no user.
    let second = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    assert_eq!(whoami(&second).await, me);
    assert_eq!(stats(&server).await, [1, 1, 0, 1], "nothing asked of the authorization server");
    assert_eq!(seen.lock().unwrap().len(), 1, "the user was asked once");
    second.close().await;
    server.shutdown().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn an_expired_stored_token_is_refreshed_and_the_rotated_refresh_token_kept() {
    let server = start_default().await;
    let dir = store_dir("rotate");
    let path = dir.join("tokens.json");
    let seen = Arc::default();
    let first = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    let me = whoami(&first).await;
    first.close().await;
    let before = stored(&path);
    let expired = |t: &mut Value| t["expiresAt"] = json!(1);
    edit_stored(&path, expired);

    // Expired in the store: refreshed before it is ever sent; the server rotated the refresh token.
    let second = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    assert_eq!(whoami(&second).await, me);
    assert_eq!(stats(&server).await, [1, 2, 1, 1], "one refresh, no authorization, no registration");
    let after = stored(&path);
    assert_ne!(after["refreshToken"], before["refreshToken"], "the rotated refresh token replaced the old one");
    assert_ne!(after["accessToken"], before["accessToken"]);
    second.close().await;

    // The old refresh token (used up) is refused with invalid_grant: it is dropped and the
    // client authorizes again, with the registration it kept.
    std::fs::write(&path, serde_json::to_vec(&json!({ "version": 1, "entries": [] })).unwrap()).unwrap();
    let doc: Value = json!({ "version": 1, "entries": [{
        "issuer": server.issuer(), "resource": server.mcp_url(), "client": "oauth-test",
        "token": { "expiresAt": 1, "accessToken": before["accessToken"], "refreshToken": before["refreshToken"],
                   "scopes": before["scopes"], "registration": before["registration"] } }] });
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let third = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    assert_eq!(whoami(&third).await, me);
    assert_eq!(stats(&server).await, [2, 4, 2, 1], "a refused refresh, then one authorization, no registration");
    assert_eq!(seen.lock().unwrap().len(), 2);
    let now = stored(&path);
    assert!(now["refreshToken"].is_string() && now["refreshToken"] != before["refreshToken"], "{now}");
    third.close().await;
    server.shutdown().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_stored_token_the_server_rejects_is_dropped() {
    let server = start_default().await;
    let dir = store_dir("rejected");
    let path = dir.join("tokens.json");
    let seen = Arc::default();
    let first = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    whoami(&first).await;
    first.close().await;
    // A token the server does not know (revoked, say), not expired as far as the client knows.
    edit_stored(&path, |t| t["accessToken"] = json!("revoked"));

    let second = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    whoami(&second).await;
    // Sent once, rejected, dropped; the refresh token gets a new one.
    assert_eq!(stats(&server).await, [1, 2, 1, 1]);
    assert_ne!(stored(&path)["accessToken"], "revoked");
    second.close().await;

    // Without a refresh token: dropped, and the client authorizes again (once).
    edit_stored(&path, |t| {
        t["accessToken"] = json!("revoked");
        t.as_object_mut().unwrap().remove("refreshToken");
    });
    let third = Client::connect_http(&server.mcp_url(), options(with_file(recording(&seen), &path))).await.unwrap();
    whoami(&third).await;
    assert_eq!(stats(&server).await, [2, 3, 1, 1], "one authorization, no new registration");
    assert_ne!(stored(&path)["accessToken"], "revoked");
    third.close().await;
    server.shutdown().await;
    std::fs::remove_dir_all(dir).unwrap();
}

/// A resource server that rejects every token, with an authorization server of its own that
/// issues client credentials tokens and counts its token requests.
async fn rejecting_server() -> (String, Arc<AtomicUsize>) {
    use hyper::service::service_fn;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let tokens = Arc::new(AtomicUsize::new(0));
    let (b, t) = (base.clone(), tokens.clone());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (base, tokens) = (b.clone(), t.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    let (base, tokens) = (base.clone(), tokens.clone());
                    async move {
                        let json = |status: StatusCode, v: Value| {
                            http::Response::builder()
                                .status(status)
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(v.to_string())))
                                .unwrap()
                        };
                        let resp = match req.uri().path() {
                            "/.well-known/oauth-protected-resource/mcp" => json(
                                StatusCode::OK,
                                json!({ "resource": format!("{base}/mcp"), "authorization_servers": [base] }),
                            ),
                            "/.well-known/oauth-authorization-server" => json(
                                StatusCode::OK,
                                json!({ "issuer": base, "token_endpoint": format!("{base}/token"),
                                        "token_endpoint_auth_methods_supported": ["client_secret_post"] }),
                            ),
                            "/token" => {
                                let n = tokens.fetch_add(1, Ordering::SeqCst);
                                json(
                                    StatusCode::OK,
                                    json!({ "access_token": format!("t{n}"), "token_type": "Bearer", "expires_in": 300 }),
                                )
                            }
                            _ => http::Response::builder()
                                .status(StatusCode::UNAUTHORIZED)
                                .header("www-authenticate", r#"Bearer error="invalid_token""#)
                                .body(Full::new(Bytes::new()))
                                .unwrap(),
                        };
                        Ok::<_, std::convert::Infallible>(resp)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    (base, tokens)
}

#[tokio::test]
async fn a_server_that_rejects_every_token_costs_one_token_request_per_request() {
    let (base, tokens) = rejecting_server().await;
    let dir = store_dir("reject-all");
    let path = dir.join("tokens.json");
    let oauth = OAuthOptions::client_credentials("ci", Some("secret".into()), None).unwrap();
    for round in 1..=3 {
        let e =
            Client::connect_http(&format!("{base}/mcp"), options(with_file(oauth.clone(), &path))).await.unwrap_err();
        assert!(e.message().contains("rejected the access token just issued by"), "{e}");
        assert_eq!(tokens.load(Ordering::SeqCst), round, "one token request per request, never a loop");
        // The rejected token is not kept.
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc["entries"], json!([]), "{doc}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
