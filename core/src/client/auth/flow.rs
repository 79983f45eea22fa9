//! The authorization flow of one client: discovery, registration, the grants, refresh, and
//! the tokens in force.

use super::assertion;
use super::assertion::PrivateKey;
use super::metadata::{self, Challenge, ResourceMetadata, ServerMetadata, TokenAuth};
use super::options::{Grant, OAuthOptions};
use super::store::{MemoryTokenStore, StoredClient, StoredToken, TokenKey, TokenStore, now_secs};
use crate::error::{Error, Result};
use crate::transport::http::hyper_client::HttpClient;
use crate::transport::http::oauth_wire as wire;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use wire::auth_error;

/// A client id at one authorization server.
#[derive(Clone)]
struct Registration {
    client_id: String,
    client_secret: Option<String>,
    private_key: Option<PrivateKey>,
    auth: TokenAuth,
}

impl Registration {
    /// The registration as stored, for a client that registered itself.
    fn stored(&self, redirect_uri: &str) -> StoredClient {
        StoredClient {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            token_endpoint_auth_method: self.auth.name().to_owned(),
            redirect_uri: redirect_uri.to_owned(),
        }
    }
}

/// The tokens in force: what the store holds for `key`, and where to refresh them.
struct Current {
    key: TokenKey,
    token: StoredToken,
    token_endpoint: String,
}

#[derive(Default)]
struct State {
    registrations: HashMap<String, Registration>,
    current: Option<Current>,
}

impl State {
    /// The scopes of the token in force (granted, else requested).
    fn scopes(&self) -> Vec<String> {
        self.current.as_ref().map(|c| c.token.scopes.clone()).unwrap_or_default()
    }
}

/// What one request has done to get authorized: each request refreshes at most once and runs
/// at most one authorization flow for a rejected token, so a server that rejects every token
/// costs one token request per request, never a loop.
#[derive(Default)]
pub(crate) struct Attempt {
    /// The answers to challenges so far.
    pub challenges: u32,
    refreshed: bool,
    authorized: bool,
}

/// The OAuth state of one client and the flow that renews it.
pub(crate) struct Authorizer {
    options: OAuthOptions,
    client_name: String,
    server_url: String,
    http: HttpClient,
    header: RwLock<Option<HeaderValue>>,
    state: tokio::sync::Mutex<State>,
    store: Arc<dyn TokenStore>,
}

impl Authorizer {
    pub fn new(options: OAuthOptions, client_name: &str, server_url: &str, http: HttpClient) -> Authorizer {
        let client_name = options.client_name.clone().unwrap_or_else(|| client_name.to_owned());
        let store = options.token_store.clone().unwrap_or_else(|| Arc::new(MemoryTokenStore::default()));
        Authorizer {
            store,
            options,
            client_name,
            server_url: server_url.to_owned(),
            http,
            header: RwLock::new(None),
            state: tokio::sync::Mutex::default(),
        }
    }

    pub fn max_authorizations(&self) -> u32 {
        self.options.max_authorizations
    }

    /// The `Authorization` header in force.
    pub fn header(&self) -> Option<HeaderValue> {
        self.header.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_token(&self, access_token: &str) -> Result<()> {
        *self.header.write().unwrap_or_else(|e| e.into_inner()) = Some(bearer(access_token)?);
        Ok(())
    }

    /// Whether an answer of the MCP server asks for (more) authorization.
    pub fn is_challenge(status: StatusCode, headers: &HeaderMap) -> bool {
        status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN && challenge_of(headers).insufficient_scope())
    }

    /// Answers a challenge: afterwards the request may be sent again. `sent` is the header
    /// the refused request carried: when another request renewed the token meanwhile, there
    /// is nothing to do. `attempt` is what this request did so far.
    ///
    /// A `401` on a token is that token's end: it is dropped (from the store too), then a
    /// refresh is tried (once per request), then an authorization flow (once per request: a
    /// token just obtained and rejected again is this request's error, never a loop). A first
    /// `401` without a token looks in the store first: a token that has not expired is used as
    /// it is, an expired one refreshed.
    pub async fn authorize(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
        attempt: &mut Attempt,
    ) -> Result<()> {
        attempt.challenges += 1;
        let mut state = self.state.lock().await;
        if self.header().as_ref() != sent {
            return Ok(());
        }
        let challenge = challenge_of(headers);
        let step_up = status == StatusCode::FORBIDDEN;
        if !step_up && sent.is_some() {
            self.drop_access_token(&mut state).await?;
            if attempt.authorized {
                let issuer = state.current.as_ref().map_or("the authorization server", |c| c.key.issuer.as_str());
                return Err(auth_error(format!(
                    "the MCP server {} rejected the access token just issued by {issuer} (HTTP 401); not authorizing again for this request: check that the server accepts this authorization server's tokens for its resource",
                    self.server_url
                )));
            }
            if !attempt.refreshed && self.try_refresh(&mut state, attempt).await? {
                return Ok(());
            }
        }
        let prm = self.resource_metadata(&challenge).await?;
        let issuer = prm.authorization_servers[0].clone();
        let server = self.server_metadata(&issuer).await?;
        let key = TokenKey {
            issuer: server.issuer.clone(),
            resource: prm.resource.clone(),
            client: self.client_key(&server),
        };
        if !step_up {
            if state.current.as_ref().is_none_or(|c| c.key != key) {
                self.load(&mut state, key, &server).await?;
                let current = state.current.as_ref().map(|c| &c.token);
                if let Some(access) = current.and_then(StoredToken::usable_access_token) {
                    if Some(&bearer(access)?) != sent {
                        self.set_token(access)?;
                        return Ok(());
                    }
                }
            }
            if !attempt.refreshed && self.try_refresh(&mut state, attempt).await? {
                return Ok(());
            }
        }
        let scopes = self.scopes(&state, &challenge, &prm, &server, step_up);
        let registration = match state.registrations.get(&server.issuer) {
            Some(r) => r.clone(),
            None => {
                let r = self.register(&server, &scopes).await?;
                state.registrations.insert(server.issuer.clone(), r.clone());
                r
            }
        };
        attempt.authorized = true;
        match self.options.grant {
            Grant::AuthorizationCode => {
                self.authorization_code(&mut state, &server, &registration, &prm.resource, scopes).await
            }
            // The client credentials grant: the client asks for a token as itself.
            Grant::ClientCredentials => {
                let form = vec![("grant_type", "client_credentials")];
                self.grant(&mut state, &server, &registration, &prm.resource, scopes, form).await
            }
        }
    }

    /// The client in a [`TokenKey`]: its pre-registered id for `server`, else its metadata
    /// document URL where `server` takes one, else its name (it registers itself).
    fn client_key(&self, server: &ServerMetadata) -> String {
        match self.preset_registration(server) {
            Some(r) => r.client_id,
            None => self.client_name.clone(),
        }
    }

    /// What the store holds for `key`, made the tokens in force (with the registration it
    /// holds, when it is for this redirect URI).
    async fn load(&self, state: &mut State, key: TokenKey, server: &ServerMetadata) -> Result<()> {
        let token = self.store.load(&key).await?.unwrap_or_default();
        if let Some(r) = &token.registration {
            if self.preset_registration(server).is_none() && r.redirect_uri == self.options.redirect_uri {
                let auth = TokenAuth::from_name(&r.token_endpoint_auth_method).unwrap_or(TokenAuth::None);
                let reg = Registration {
                    client_id: r.client_id.clone(),
                    client_secret: r.client_secret.clone(),
                    private_key: None,
                    auth,
                };
                state.registrations.insert(server.issuer.clone(), reg);
            }
        }
        state.current = Some(Current { key, token, token_endpoint: server.token_endpoint.clone() });
        Ok(())
    }

    /// Forgets the access token in force, which the server rejected: in the store, the entry
    /// keeps its refresh token and registration, if any.
    async fn drop_access_token(&self, state: &mut State) -> Result<()> {
        *self.header.write().unwrap_or_else(|e| e.into_inner()) = None;
        let Some(current) = state.current.as_mut() else { return Ok(()) };
        current.token.access_token = None;
        current.token.expires_at = None;
        self.persist(current).await
    }

    async fn persist(&self, current: &Current) -> Result<()> {
        if current.token.is_empty() {
            self.store.clear(&current.key).await
        } else {
            self.store.save(&current.key, &current.token).await
        }
    }

    /// Refreshes the tokens in force if there is a refresh token; whether that worked. A
    /// refresh token the authorization server refuses (`invalid_grant`: expired, revoked,
    /// already used) is dropped; any other failure leaves it for a later request.
    async fn try_refresh(&self, state: &mut State, attempt: &mut Attempt) -> Result<bool> {
        let Some(current) = state.current.as_ref().filter(|c| c.token.refresh_token.is_some()) else {
            return Ok(false);
        };
        attempt.refreshed = true;
        let (key, endpoint) = (current.key.clone(), current.token_endpoint.clone());
        match self.refresh(state, &key, &endpoint).await {
            Ok(()) => Ok(true),
            Err(e) => {
                tracing::debug!("refreshing the access token failed ({e}); authorizing again");
                let refused =
                    e.data().and_then(|d| d.get("oauthError")).and_then(Value::as_str) == Some("invalid_grant");
                if let Some(current) = state.current.as_mut().filter(|_| refused) {
                    current.token.refresh_token = None;
                    self.persist(current).await?;
                }
                Ok(false)
            }
        }
    }

    async fn resource_metadata(&self, challenge: &Challenge) -> Result<ResourceMetadata> {
        let urls = match &challenge.resource_metadata {
            Some(url) => vec![url.clone()],
            None => metadata::resource_metadata_urls(&self.server_url)?,
        };
        for url in &urls {
            if let Some(doc) = wire::get_json(&self.http, url).await? {
                return ResourceMetadata::from_json(&doc, &self.server_url, url);
            }
        }
        Err(auth_error(format!(
            "the MCP server requires authorization but publishes no protected resource metadata (tried {})",
            urls.join(", ")
        )))
    }

    async fn server_metadata(&self, issuer: &str) -> Result<ServerMetadata> {
        let urls = wire::authorization_server_metadata_urls(issuer)?;
        for url in &urls {
            if let Some(doc) = wire::get_json(&self.http, url).await? {
                return ServerMetadata::from_json(&doc, issuer, url);
            }
        }
        Err(auth_error(format!("no metadata for the authorization server {issuer} (tried {})", urls.join(", "))))
    }

    /// The scopes to ask for: a step-up adds the challenged ones to those held; otherwise the
    /// challenge's, else every one the resource lists, else none. `offline_access` is added
    /// when the authorization server lists it.
    fn scopes(
        &self,
        state: &State,
        challenge: &Challenge,
        prm: &ResourceMetadata,
        server: &ServerMetadata,
        step_up: bool,
    ) -> Vec<String> {
        let challenged: Vec<String> =
            challenge.scope.as_deref().unwrap_or("").split_whitespace().map(str::to_owned).collect();
        let mut scopes = if step_up {
            let mut s = state.scopes();
            s.extend(challenged);
            s
        } else if !challenged.is_empty() {
            challenged
        } else {
            prm.scopes_supported.clone().unwrap_or_default()
        };
        // A refresh token is for a client that cannot get a new access token by itself.
        let offline = self.options.grant == Grant::AuthorizationCode
            && server.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        if offline && !scopes.is_empty() {
            scopes.push("offline_access".into());
        }
        let mut seen = std::collections::HashSet::new();
        scopes.retain(|s| seen.insert(s.clone()));
        scopes
    }

    /// A client id at `server`: pre-registered, a metadata document URL, or registered now.
    async fn register(&self, server: &ServerMetadata, scopes: &[String]) -> Result<Registration> {
        if let Some(r) = self.preset_registration(server) {
            return Ok(r);
        }
        if self.options.grant == Grant::ClientCredentials {
            return Err(auth_error(format!(
                "the client_credentials grant needs credentials registered with {}, and those configured are for {}",
                server.issuer,
                self.options.pre_registered.as_ref().and_then(|p| p.issuer.as_deref()).unwrap_or("no issuer")
            )));
        }
        let Some(endpoint) = &server.registration_endpoint else {
            return Err(auth_error(format!(
                "the authorization server {} offers no dynamic client registration{}; configure pre-registered client credentials",
                server.issuer,
                if server.client_id_metadata_document_supported {
                    " (it takes a client metadata document URL: set one)"
                } else {
                    ""
                }
            )));
        };
        let wanted = server.registration_auth();
        let native = redirect_is_local(&self.options.redirect_uri);
        let mut request = json!({
            "client_name": self.client_name,
            "redirect_uris": [self.options.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted.name(),
            "application_type": if native { "native" } else { "web" },
        });
        if !scopes.is_empty() {
            request["scope"] = json!(scopes.join(" "));
        }
        let answer =
            wire::send(&self.http, Method::POST, endpoint, Some(("application/json", request.to_string())), None)
                .await?;
        if !answer.status.is_success() {
            return Err(auth_error(format!(
                "dynamic client registration at {endpoint} failed: {}",
                answer.oauth_error()
            )));
        }
        let doc = answer.json().unwrap_or(Value::Null);
        let client_id = doc
            .get("client_id")
            .and_then(Value::as_str)
            .ok_or_else(|| auth_error(format!("the registration at {endpoint} returned no client_id")))?;
        let client_secret = doc.get("client_secret").and_then(Value::as_str).map(str::to_owned);
        let auth = doc
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .and_then(TokenAuth::from_name)
            .unwrap_or_else(|| if client_secret.is_some() { server.token_auth(true) } else { TokenAuth::None });
        Ok(Registration { client_id: client_id.to_owned(), client_secret, private_key: None, auth })
    }

    /// A client id at `server` that needs no registration: pre-registered credentials for it,
    /// else the metadata document URL where it takes one.
    fn preset_registration(&self, server: &ServerMetadata) -> Option<Registration> {
        if let Some(pre) =
            self.options.pre_registered.as_ref().filter(|p| p.issuer.as_ref().is_none_or(|i| *i == server.issuer))
        {
            let auth = match pre.private_key {
                Some(_) => TokenAuth::PrivateKeyJwt,
                None => server.token_auth(pre.client_secret.is_some()),
            };
            return Some(Registration {
                client_id: pre.client_id.clone(),
                client_secret: pre.client_secret.clone(),
                private_key: pre.private_key.clone(),
                auth,
            });
        }
        match (server.client_id_metadata_document_supported, &self.options.client_metadata_url) {
            (true, Some(url)) if self.options.grant == Grant::AuthorizationCode => Some(Registration {
                client_id: url.clone(),
                client_secret: None,
                private_key: None,
                auth: TokenAuth::None,
            }),
            _ => None,
        }
    }

    async fn authorization_code(
        &self,
        state: &mut State,
        server: &ServerMetadata,
        reg: &Registration,
        resource: &str,
        scopes: Vec<String>,
    ) -> Result<()> {
        let (Some(authorization_endpoint), true) = (&server.authorization_endpoint, server.pkce_s256) else {
            return Err(auth_error(format!(
                "the authorization server {} {}; refusing to authorize",
                server.issuer,
                if server.pkce_s256 { "has no authorization_endpoint" } else { "does not support PKCE with S256" }
            )));
        };
        let verifier = wire::random_token(32)?;
        let csrf = wire::random_token(16)?;
        let scope = scopes.join(" ");
        let challenge = wire::pkce_challenge(&verifier);
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", reg.client_id.as_str()),
            ("redirect_uri", self.options.redirect_uri.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", csrf.as_str()),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            query.push(("scope", &scope));
        }
        let sep = if authorization_endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{authorization_endpoint}{sep}{}", wire::form_encode(&query));
        let callback = (self.options.authorize)(url).await?;
        let code = check_authorization_response(&callback, server, &csrf)?;

        let form = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", self.options.redirect_uri.as_str()),
            ("code_verifier", verifier.as_str()),
        ];
        self.grant(state, server, reg, resource, scopes, form).await
    }

    /// The token request of a grant (`form`: its own parameters), for `resource` and `scopes`,
    /// and the token it returns put in force.
    async fn grant(
        &self,
        state: &mut State,
        server: &ServerMetadata,
        reg: &Registration,
        resource: &str,
        scopes: Vec<String>,
        mut form: Vec<(&str, &str)>,
    ) -> Result<()> {
        let scope = scopes.join(" ");
        form.push(("resource", resource));
        if !scope.is_empty() {
            form.push(("scope", &scope));
        }
        let doc = self.token_request(&server.token_endpoint, &server.issuer, reg, form).await?;
        let key =
            TokenKey { issuer: server.issuer.clone(), resource: resource.to_owned(), client: self.client_key(server) };
        // A client that registered itself keeps its registration with its tokens.
        let registration = self.preset_registration(server).is_none().then(|| reg.stored(&self.options.redirect_uri));
        let token = StoredToken { registration, ..StoredToken::default() };
        let current = Current { key, token, token_endpoint: server.token_endpoint.clone() };
        self.accept_token(state, current, &doc, scopes).await
    }

    /// Refreshes the tokens in force (of `key`, at `token_endpoint`).
    async fn refresh(&self, state: &mut State, key: &TokenKey, token_endpoint: &str) -> Result<()> {
        let reg = state
            .registrations
            .get(&key.issuer)
            .cloned()
            .ok_or_else(|| auth_error("no registration for the refresh token's issuer"))?;
        let current = state.current.as_ref().ok_or_else(|| auth_error("no refresh token"))?;
        let refresh_token = current.token.refresh_token.clone().unwrap_or_default();
        let form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
            ("resource", key.resource.as_str()),
        ];
        let doc = self.token_request(token_endpoint, &key.issuer, &reg, form).await?;
        let current =
            Current { key: key.clone(), token: current.token.clone(), token_endpoint: token_endpoint.to_owned() };
        let scopes = current.token.scopes.clone();
        self.accept_token(state, current, &doc, scopes).await
    }

    /// A request to the token `endpoint` of the authorization server `issuer`, the client
    /// authenticated as registered. An error answer is an error whose data holds its
    /// `httpStatus` and `oauthError` code.
    async fn token_request(
        &self,
        endpoint: &str,
        issuer: &str,
        reg: &Registration,
        mut form: Vec<(&str, &str)>,
    ) -> Result<Value> {
        let mut basic = None;
        let assertion;
        match (reg.auth, reg.client_secret.as_deref(), &reg.private_key) {
            (TokenAuth::PrivateKeyJwt, _, Some(key)) => {
                // RFC 7523 §3: the audience is the authorization server, named by its issuer.
                assertion = key.assertion(&reg.client_id, issuer)?;
                form.push(("client_assertion_type", assertion::JWT_BEARER));
                form.push(("client_assertion", &assertion));
            }
            (TokenAuth::Basic, Some(secret), _) => basic = Some(wire::basic_credentials(&reg.client_id, secret)),
            (TokenAuth::Post, Some(secret), _) => {
                form.push(("client_id", &reg.client_id));
                form.push(("client_secret", secret));
            }
            _ => form.push(("client_id", &reg.client_id)),
        }
        let body = wire::form_encode(&form);
        let answer = wire::send(
            &self.http,
            Method::POST,
            endpoint,
            Some(("application/x-www-form-urlencoded", body)),
            basic.as_deref(),
        )
        .await?;
        if !answer.status.is_success() {
            let code = answer.json().and_then(|d| d.get("error").and_then(Value::as_str).map(str::to_owned));
            return Err(auth_error(format!("the token request at {endpoint} failed: {}", answer.oauth_error()))
                .with_data(json!({ "httpStatus": answer.status.as_u16(), "oauthError": code })));
        }
        let doc =
            answer.json().ok_or_else(|| auth_error(format!("the token endpoint {endpoint} answered with no JSON")))?;
        let kind = doc.get("token_type").and_then(Value::as_str).unwrap_or("");
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(auth_error(format!(
                "the token endpoint {endpoint} issued a {kind:?} token; only Bearer tokens are supported"
            )));
        }
        Ok(doc)
    }

    /// Puts the token response `doc` in force over `current` (a refresh token it does not
    /// replace is kept: no rotation) and saves it in the store.
    async fn accept_token(
        &self,
        state: &mut State,
        mut current: Current,
        doc: &Value,
        requested: Vec<String>,
    ) -> Result<()> {
        let access = doc
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| auth_error("the token response holds no access_token"))?;
        self.set_token(access)?;
        let token = &mut current.token;
        token.access_token = Some(access.to_owned());
        token.expires_at = doc.get("expires_in").and_then(Value::as_u64).map(|s| now_secs().saturating_add(s));
        token.scopes = match doc.get("scope").and_then(Value::as_str) {
            Some(granted) => granted.split_whitespace().map(str::to_owned).collect(),
            None => requested,
        };
        if let Some(rotated) = doc.get("refresh_token").and_then(Value::as_str) {
            token.refresh_token = Some(rotated.to_owned());
        }
        let saved = self.persist(&current).await;
        state.current = Some(current);
        saved
    }
}

/// The `Authorization` header of an access token.
fn bearer(access_token: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(&format!("Bearer {access_token}"))
        .map_err(|_| auth_error("the access token is not a valid header value"))
}

fn challenge_of(headers: &HeaderMap) -> Challenge {
    Challenge::parse(headers.get_all(http::header::WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok()))
}

/// Whether a redirect URI points at this machine (a native app's loopback redirect).
fn redirect_is_local(uri: &str) -> bool {
    uri.parse::<http::Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_owned))
        .is_some_and(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]" || h == "::1")
        || !uri.starts_with("http")
}

/// Checks an authorization response (the redirect's query) and returns its code: `iss` first
/// (RFC 9207: compared as a plain string; required when the server says it sends one), and
/// nothing else of a response from the wrong issuer is read; then `state`; then `error`.
fn check_authorization_response(callback: &str, server: &ServerMetadata, state: &str) -> Result<String> {
    let params = wire::query_params(callback);
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    match get("iss") {
        Some(iss) if iss != server.issuer => {
            return Err(auth_error(format!(
                "the authorization response names issuer {iss:?}, not {:?}: it is not used (RFC 9207 mix-up protection)",
                server.issuer
            )));
        }
        None if server.iss_parameter_supported => {
            return Err(auth_error(format!(
                "the authorization response has no iss although {} says it sends one: it is not used (RFC 9207)",
                server.issuer
            )));
        }
        _ => {}
    }
    if get("state") != Some(state) {
        return Err(auth_error("the authorization response's state does not match the request's: it is not used"));
    }
    if let Some(error) = get("error") {
        let description = get("error_description").map(|d| format!(": {d}")).unwrap_or_default();
        return Err(Error::new(
            crate::ErrorKind::Transport,
            format!("the authorization was refused ({error}{description})"),
        ));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| auth_error("the authorization response holds no code"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(iss_supported: bool) -> ServerMetadata {
        let doc = json!({
            "issuer": "http://localhost:9", "authorization_endpoint": "http://localhost:9/authorize",
            "token_endpoint": "http://localhost:9/token", "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": iss_supported
        });
        ServerMetadata::from_json(&doc, "http://localhost:9", "test").unwrap()
    }

    #[test]
    fn authorization_responses_are_checked_in_order() {
        let ok = "http://127.0.0.1:1/cb?code=c1&state=s&iss=http%3A%2F%2Flocalhost%3A9";
        assert_eq!(check_authorization_response(ok, &server(true), "s").unwrap(), "c1");
        // Exact comparison: a trailing slash is another issuer.
        let e = check_authorization_response(
            "http://x/cb?code=c&state=s&iss=http%3A%2F%2Flocalhost%3A9%2F",
            &server(true),
            "s",
        )
        .unwrap_err();
        assert!(e.message().contains("RFC 9207"), "{e}");
        // Advertised but missing; not advertised and missing is fine; wrong even unadvertised.
        assert!(check_authorization_response("http://x/cb?code=c&state=s", &server(true), "s").is_err());
        assert_eq!(check_authorization_response("http://x/cb?code=c&state=s", &server(false), "s").unwrap(), "c");
        assert!(
            check_authorization_response("http://x/cb?code=c&state=s&iss=https%3A%2F%2Fevil", &server(false), "s")
                .is_err()
        );
        // A wrong issuer's error is not read; the right issuer's is.
        let e = check_authorization_response(
            "http://x/cb?error=access_denied&state=s&iss=https%3A%2F%2Fevil",
            &server(true),
            "s",
        )
        .unwrap_err();
        assert!(!e.message().contains("access_denied"));
        let e = check_authorization_response(
            "http://x/cb?error=access_denied&state=s&iss=http%3A%2F%2Flocalhost%3A9",
            &server(true),
            "s",
        )
        .unwrap_err();
        assert!(e.message().contains("access_denied"));
        assert!(check_authorization_response("http://x/cb?code=c&state=other", &server(false), "s").is_err());
    }

    #[test]
    fn loopback_redirects_are_native() {
        assert!(redirect_is_local("http://localhost:3000/callback"));
        assert!(redirect_is_local("http://127.0.0.1:3000/callback"));
        assert!(redirect_is_local("com.example.app:/callback"));
        assert!(!redirect_is_local("https://app.example.com/callback"));
    }
}
