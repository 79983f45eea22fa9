//! OAuth 2.1 for Streamable HTTP, as the MCP authorization spec has clients do it.
//!
//! With [`OAuthOptions`] in [`ClientOptions::oauth`](super::ClientOptions::oauth), a `401`
//! from the MCP server starts the flow: protected resource metadata (from the challenge's
//! `resource_metadata`, else the well-known URLs), checked to name this server; the
//! authorization server's metadata (OAuth, then OpenID Connect, path-inserted forms first),
//! checked to name the issuer it was fetched for and to support PKCE S256; a client id
//! (pre-registered, else a Client ID Metadata Document URL when the server takes one, else
//! Dynamic Client Registration); the authorization request with PKCE, `state` and `resource`;
//! the user-agent step, which is the host's ([`OAuthOptions::new`]); the authorization
//! response checked (`state`, and `iss` per RFC 9207 before anything else is read); the token
//! request. Then the request that was refused is sent again with `Authorization: Bearer`.
//!
//! Later: a request's first `401` uses the refresh token when there is one, else starts over
//! (re-discovering, so a resource that moved to another authorization server is followed, with
//! a registration of its own), as does a `401` on the token a refresh just gave that request;
//! a `403` with `error="insufficient_scope"` re-authorizes with the challenged scopes added to
//! those held (step-up). One request triggers at most
//! [`OAuthOptions::max_authorizations`] flows. Credentials and tokens live in memory, per
//! client, keyed by issuer.
//!
//! A machine client (an agent, a CI job: no user, no browser) uses the client credentials
//! grant instead ([`OAuthOptions::client_credentials`], the MCP extension
//! `io.modelcontextprotocol/oauth-client-credentials`): the same discovery, then a token
//! request with its pre-registered credentials, authenticated with its secret
//! (`client_secret_basic` or `client_secret_post`, as the server lists) or with a JWT signed by
//! its private key (`private_key_jwt`, RFC 7523, [`PrivateKey`]).

mod assertion;
mod metadata;

pub use assertion::PrivateKey;

use crate::error::{Error, Result};
use crate::transport::http::hyper_client::{HttpClient, new_http_client};
use crate::transport::http::oauth_wire as wire;
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use metadata::{Challenge, ResourceMetadata, ServerMetadata, TokenAuth};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, RwLock};
use wire::auth_error;

/// The user-agent step of the authorization code flow: takes the authorization URL (open it
/// in the user's browser) and returns the URL the authorization server redirected back to
/// (the `redirect_uri` with `code`, `state` and maybe `iss` in its query).
pub type AuthorizationHandler = Arc<dyn Fn(String) -> BoxFuture<'static, Result<String>> + Send + Sync>;

/// Client credentials registered with an authorization server beforehand.
#[derive(Clone, PartialEq, Eq)]
pub struct PreRegisteredClient {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret` of a confidential client.
    pub client_secret: Option<String>,
    /// The private key of a client that authenticates with `private_key_jwt` (instead of a
    /// secret).
    pub private_key: Option<PrivateKey>,
    /// The issuer they were registered with; `None`: whichever the server names. Credentials
    /// of one authorization server are never sent to another one.
    pub issuer: Option<String>,
}

impl fmt::Debug for PreRegisteredClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegisteredClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("private_key", &self.private_key)
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// How a client obtains access tokens for an MCP server that requires authorization.
///
/// ```no_run
/// use mcpaxle::client::{Client, ClientOptions, OAuthOptions};
/// # async fn run() -> mcpaxle::Result<()> {
/// let oauth = OAuthOptions::new("http://127.0.0.1:8765/callback", |authorization_url| async move {
///     // Open authorization_url in a browser, wait for the redirect to 127.0.0.1:8765,
///     // and return the URL it came to.
///     # let _ = authorization_url;
///     Ok("http://127.0.0.1:8765/callback?code=...&state=...".to_owned())
/// })
/// .client_metadata_url("https://app.example.com/oauth/client.json");
/// let client = Client::connect_http("https://mcp.example.com/mcp", ClientOptions::new("app", "1.0").oauth(oauth)).await?;
/// # Ok(()) }
/// ```
///
/// As data (every binding's `oauth` option): `grantType` (`"authorization_code"`, the
/// default, or `"client_credentials"`), `redirectUri` (required for the authorization code
/// grant), `clientId`, `clientSecret`, `privateKeyPem` with `signingAlgorithm` (default
/// `RS256`) and `issuer` (pre-registered credentials), `clientMetadataUrl`, `clientName`,
/// `maxAuthorizations`, checked as they are read (see [`OAuthOptions::validate`]). The user-agent
/// step is the binding's callback; until one is set, the options authorize without a user
/// ([`OAuthOptions::without_user`]).
#[derive(Clone, Deserialize)]
#[serde(try_from = "OAuthData")]
pub struct OAuthOptions {
    /// How tokens are obtained.
    pub grant: Grant,
    /// Where the authorization server sends the user back (registered with the client; unused
    /// by the client credentials grant).
    pub redirect_uri: String,
    /// The user-agent step (see [`AuthorizationHandler`]).
    pub authorize: AuthorizationHandler,
    /// `client_name` in Dynamic Client Registration (default: the client's name).
    pub client_name: Option<String>,
    /// Pre-registered credentials, used before any other way of getting a client id.
    pub pre_registered: Option<PreRegisteredClient>,
    /// The HTTPS URL of this client's Client ID Metadata Document, used as the `client_id`
    /// where the authorization server supports such documents.
    pub client_metadata_url: Option<String>,
    /// How many authorization flows one request may trigger before its error is returned
    /// (default 3).
    pub max_authorizations: u32,
}

impl fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("grant", &self.grant)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("pre_registered", &self.pre_registered)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("max_authorizations", &self.max_authorizations)
            .finish_non_exhaustive()
    }
}

/// The OAuth grant a client obtains its access tokens with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// Authorization code with PKCE: a user approves the client in a browser.
    #[default]
    AuthorizationCode,
    /// Client credentials: a machine client authenticates as itself, with its pre-registered
    /// `client_id` and secret or private key.
    ClientCredentials,
}

/// The data form of [`OAuthOptions`]: each value checked as it is read (the rules of
/// [`OAuthOptions::validate`]), so that the error names it by its path as given.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OAuthData {
    #[serde(default, alias = "grant_type")]
    grant_type: Grant,
    #[serde(default, alias = "redirect_uri", deserialize_with = "de_redirect_uri")]
    redirect_uri: Option<String>,
    #[serde(default, alias = "client_id", deserialize_with = "de_client_id")]
    client_id: Option<String>,
    #[serde(alias = "client_secret")]
    client_secret: Option<String>,
    #[serde(alias = "private_key_pem")]
    private_key_pem: Option<String>,
    #[serde(alias = "signing_algorithm")]
    signing_algorithm: Option<String>,
    #[serde(default, deserialize_with = "de_issuer")]
    issuer: Option<String>,
    #[serde(default, alias = "client_metadata_url", deserialize_with = "de_client_metadata_url")]
    client_metadata_url: Option<String>,
    #[serde(alias = "client_name")]
    client_name: Option<String>,
    #[serde(default, alias = "max_authorizations", deserialize_with = "de_max_authorizations")]
    max_authorizations: Option<u32>,
}

impl TryFrom<OAuthData> for OAuthOptions {
    type Error = String;

    fn try_from(d: OAuthData) -> std::result::Result<Self, String> {
        let mut o = match (d.grant_type, d.redirect_uri) {
            (Grant::AuthorizationCode, None) => return Err(REDIRECT_URI_MISSING.into()),
            (_, redirect_uri) => {
                OAuthOptions::without_user(redirect_uri.unwrap_or_default()).map_err(|e| e.message().to_owned())?
            }
        };
        o.grant = d.grant_type;
        let private_key = match (d.private_key_pem, d.signing_algorithm) {
            (Some(pem), algorithm) => {
                let key = PrivateKey { pem, algorithm: algorithm.unwrap_or_else(|| "RS256".into()) };
                key.encoding_key().map_err(|e| format!("privateKeyPem: {e}"))?;
                Some(key)
            }
            (None, Some(_)) => {
                return Err("signingAlgorithm is the algorithm of privateKeyPem: give privateKeyPem too".into());
            }
            (None, None) => None,
        };
        match d.client_id {
            Some(id) => {
                o = o.pre_registered(id, d.client_secret, d.issuer);
                if let Some(p) = o.pre_registered.as_mut() {
                    p.private_key = private_key;
                }
            }
            None if d.client_secret.is_some() || d.issuer.is_some() || private_key.is_some() => {
                return Err(CREDENTIALS_WITHOUT_ID.into());
            }
            None => {}
        }
        o.credentials_rule()?;
        o.client_metadata_url = d.client_metadata_url;
        o.client_name = d.client_name;
        if let Some(n) = d.max_authorizations {
            o.max_authorizations = n;
        }
        Ok(o)
    }
}

const CREDENTIALS_WITHOUT_ID: &str =
    "clientSecret, privateKeyPem and issuer describe pre-registered credentials: give clientId too";
const REDIRECT_URI_MISSING: &str = "redirectUri is required for the authorization code grant (a machine client without a user uses grantType \"client_credentials\")";

fn redirect_uri_rule(s: &str) -> std::result::Result<(), String> {
    if crate::options::is_absolute_uri(s, &[]) {
        return Ok(());
    }
    Err(format!(
        "must be an absolute URI without a fragment (RFC 6749 §3.1.2), where the authorization server sends the user back (http://127.0.0.1:8765/callback), not {s:?}"
    ))
}

fn client_id_rule(s: &str) -> std::result::Result<(), String> {
    if s.is_empty() { Err("must not be empty".into()) } else { Ok(()) }
}

fn issuer_rule(s: &str) -> std::result::Result<(), String> {
    if crate::options::is_issuer_url(s) {
        return Ok(());
    }
    Err(format!(
        "must be the issuer URL of an authorization server, an absolute http(s) URL without query or fragment (https://auth.example.com), not {s:?}"
    ))
}

fn client_metadata_url_rule(s: &str) -> std::result::Result<(), String> {
    if crate::options::is_absolute_uri(s, &["https"]) {
        return Ok(());
    }
    Err(format!(
        "must be the https URL of this client's metadata document, without a fragment (https://app.example.com/oauth/client.json), not {s:?}"
    ))
}

fn max_authorizations_rule(n: &u32) -> std::result::Result<(), String> {
    if *n == 0 { Err("must be at least 1, not 0 (leave oauth out to authorize never)".into()) } else { Ok(()) }
}

fn de_redirect_uri<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    optional(d, |s: &String| redirect_uri_rule(s))
}

/// An optional value checked by `rule` when present.
fn optional<'de, D, T>(
    d: D,
    rule: fn(&T) -> std::result::Result<(), String>,
) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    crate::options::checked(d, |v: &Option<T>| v.as_ref().map_or(Ok(()), rule))
}

fn de_client_id<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    optional(d, |s: &String| client_id_rule(s))
}

fn de_issuer<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    optional(d, |s: &String| issuer_rule(s))
}

fn de_client_metadata_url<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    optional(d, |s: &String| client_metadata_url_rule(s))
}

fn de_max_authorizations<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<u32>, D::Error> {
    optional(d, max_authorizations_rule)
}

impl OAuthOptions {
    /// OAuth with `redirect_uri` and the host's user-agent step.
    pub fn new<F, Fut>(redirect_uri: impl Into<String>, authorize: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String>> + Send + 'static,
    {
        OAuthOptions {
            grant: Grant::AuthorizationCode,
            redirect_uri: redirect_uri.into(),
            authorize: Arc::new(move |url| Box::pin(authorize(url))),
            client_name: None,
            pre_registered: None,
            client_metadata_url: None,
            max_authorizations: 3,
        }
    }

    /// OAuth whose user-agent step needs no user: the authorization URL is fetched and the
    /// authorization server's redirect (its `Location`) taken as the answer. For servers that
    /// authorize without interaction (tests, pre-approved machine clients).
    pub fn without_user(redirect_uri: impl Into<String>) -> Result<Self> {
        let http = new_http_client()?;
        Ok(OAuthOptions::new(redirect_uri, move |url| {
            let http = http.clone();
            async move { follow_redirect(&http, &url).await }
        }))
    }

    /// OAuth for a machine client: the client credentials grant with credentials registered
    /// beforehand, `client_secret` (`client_secret_basic` or `client_secret_post`, as the
    /// authorization server lists) or, with [`OAuthOptions::private_key`], `private_key_jwt`.
    /// `issuer`: the authorization server they belong to (None: whichever the resource names).
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: Option<String>,
        issuer: Option<String>,
    ) -> Result<Self> {
        let mut o = OAuthOptions::without_user("")?.pre_registered(client_id, client_secret, issuer);
        o.grant = Grant::ClientCredentials;
        Ok(o)
    }

    /// Authenticates the pre-registered client with `private_key_jwt`: a JWT signed with `key`
    /// instead of a secret. Without pre-registered credentials this does nothing.
    pub fn private_key(mut self, key: PrivateKey) -> Self {
        if let Some(p) = self.pre_registered.as_mut() {
            p.private_key = Some(key);
        }
        self
    }

    /// Checks the values (an [`ErrorKind::InvalidParams`](crate::ErrorKind) error naming the
    /// option at fault): `redirectUri` an absolute URI without a fragment (RFC 6749 §3.1.2,
    /// any scheme: native apps use their own) for the authorization code grant; a
    /// pre-registered `clientId` not empty, its `issuer` an issuer URL (RFC 8414 §2), a secret
    /// or a private key (an asymmetric JWS algorithm and a PEM key for it), not both; the client
    /// credentials grant needs those credentials; `clientMetadataUrl` an `https` URL;
    /// `maxAuthorizations` at least 1. Options read from data are checked as they are read;
    /// connecting checks those built in Rust.
    pub fn validate(&self) -> Result<()> {
        let bad = |at: &str, m: String| Err(Error::invalid_params(format!("oauth: {at}: {m}")));
        if self.grant == Grant::AuthorizationCode
            && let Err(m) = redirect_uri_rule(&self.redirect_uri)
        {
            return bad("redirectUri", m);
        }
        if let Some(p) = &self.pre_registered {
            if let Err(m) = client_id_rule(&p.client_id) {
                return bad("clientId", m);
            }
            if let Some(Err(m)) = p.issuer.as_deref().map(issuer_rule) {
                return bad("issuer", m);
            }
            if let Some(Err(m)) = p.private_key.as_ref().map(PrivateKey::encoding_key) {
                return bad("privateKeyPem", m);
            }
        }
        if let Err(m) = self.credentials_rule() {
            return Err(Error::invalid_params(format!("oauth: {m}")));
        }
        if let Some(Err(m)) = self.client_metadata_url.as_deref().map(client_metadata_url_rule) {
            return bad("clientMetadataUrl", m);
        }
        if let Err(m) = max_authorizations_rule(&self.max_authorizations) {
            return bad("maxAuthorizations", m);
        }
        Ok(())
    }

    /// The rule of the credentials as a whole: a secret or a private key, not both; the client
    /// credentials grant needs one of them.
    fn credentials_rule(&self) -> std::result::Result<(), String> {
        let p = self.pre_registered.as_ref();
        if p.is_some_and(|p| p.client_secret.is_some() && p.private_key.is_some()) {
            return Err("clientSecret and privateKeyPem are two ways for a client to authenticate: give one".into());
        }
        if self.grant == Grant::ClientCredentials
            && !p.is_some_and(|p| p.client_secret.is_some() || p.private_key.is_some())
        {
            return Err(
                "the client_credentials grant needs pre-registered credentials: clientId with clientSecret or privateKeyPem"
                    .into(),
            );
        }
        Ok(())
    }

    /// Sets pre-registered credentials.
    pub fn pre_registered(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
        issuer: Option<String>,
    ) -> Self {
        self.pre_registered =
            Some(PreRegisteredClient { client_id: client_id.into(), client_secret, private_key: None, issuer });
        self
    }

    /// Sets the URL of this client's Client ID Metadata Document.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Sets the `client_name` sent in Dynamic Client Registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = Some(name.into());
        self
    }
}

/// GETs an authorization URL and returns where the server redirects.
async fn follow_redirect(http: &HttpClient, url: &str) -> Result<String> {
    let answer = wire::send(http, Method::GET, url, None, None).await?;
    match answer.location {
        Some(location) if answer.status.is_redirection() => Ok(location),
        _ => Err(auth_error(format!(
            "the authorization server answered the authorization request with {} and no redirect: it needs a user ({})",
            answer.status,
            String::from_utf8_lossy(&answer.body[..answer.body.len().min(200)])
        ))),
    }
}

/// A client id at one authorization server.
#[derive(Clone)]
struct Registration {
    client_id: String,
    client_secret: Option<String>,
    private_key: Option<PrivateKey>,
    auth: TokenAuth,
}

/// What a refresh needs.
#[derive(Clone)]
struct RefreshGrant {
    refresh_token: String,
    issuer: String,
    token_endpoint: String,
    resource: String,
}

#[derive(Default)]
struct State {
    registrations: HashMap<String, Registration>,
    refresh: Option<RefreshGrant>,
    /// The scopes of the token in force (granted, else requested).
    scopes: Vec<String>,
}

/// The OAuth state of one client and the flow that renews it.
pub(crate) struct Authorizer {
    options: OAuthOptions,
    client_name: String,
    server_url: String,
    http: HttpClient,
    header: RwLock<Option<HeaderValue>>,
    state: tokio::sync::Mutex<State>,
}

impl Authorizer {
    pub fn new(options: OAuthOptions, client_name: &str, server_url: &str, http: HttpClient) -> Authorizer {
        let client_name = options.client_name.clone().unwrap_or_else(|| client_name.to_owned());
        Authorizer {
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
        let v = HeaderValue::from_str(&format!("Bearer {access_token}"))
            .map_err(|_| auth_error("the access token is not a valid header value"))?;
        *self.header.write().unwrap_or_else(|e| e.into_inner()) = Some(v);
        Ok(())
    }

    /// Whether an answer of the MCP server asks for (more) authorization.
    pub fn is_challenge(status: StatusCode, headers: &HeaderMap) -> bool {
        status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN && challenge_of(headers).insufficient_scope())
    }

    /// Answers a challenge: afterwards the request may be sent again. `sent` is the header
    /// the refused request carried: when another request renewed the token meanwhile, there
    /// is nothing to do. `first` says whether this is the request's first challenge: only
    /// then may a `401` be answered with a refresh, since a later one means the token just
    /// obtained was refused too (say, the resource moved to another authorization server).
    pub async fn authorize(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
        first: bool,
    ) -> Result<()> {
        let mut state = self.state.lock().await;
        if self.header().as_ref() != sent {
            return Ok(());
        }
        let challenge = challenge_of(headers);
        let step_up = status == StatusCode::FORBIDDEN;
        if !step_up && first {
            if let Some(grant) = state.refresh.take() {
                match self.refresh(&mut state, &grant).await {
                    Ok(()) => return Ok(()),
                    Err(e) => tracing::debug!("refreshing the access token failed ({e}); authorizing again"),
                }
            }
        }
        let prm = self.resource_metadata(&challenge).await?;
        let issuer = prm.authorization_servers[0].clone();
        let server = self.server_metadata(&issuer).await?;
        let scopes = self.scopes(&state, &challenge, &prm, &server, step_up);
        let registration = match state.registrations.get(&server.issuer) {
            Some(r) => r.clone(),
            None => {
                let r = self.register(&server, &scopes).await?;
                state.registrations.insert(server.issuer.clone(), r.clone());
                r
            }
        };
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
            let mut s = state.scopes.clone();
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
        if let Some(pre) =
            self.options.pre_registered.as_ref().filter(|p| p.issuer.as_ref().is_none_or(|i| *i == server.issuer))
        {
            let auth = match pre.private_key {
                Some(_) => TokenAuth::PrivateKeyJwt,
                None => server.token_auth(pre.client_secret.is_some()),
            };
            return Ok(Registration {
                client_id: pre.client_id.clone(),
                client_secret: pre.client_secret.clone(),
                private_key: pre.private_key.clone(),
                auth,
            });
        }
        if self.options.grant == Grant::ClientCredentials {
            return Err(auth_error(format!(
                "the client_credentials grant needs credentials registered with {}, and those configured are for {}",
                server.issuer,
                self.options.pre_registered.as_ref().and_then(|p| p.issuer.as_deref()).unwrap_or("no issuer")
            )));
        }
        if let (true, Some(url)) = (server.client_id_metadata_document_supported, &self.options.client_metadata_url) {
            return Ok(Registration {
                client_id: url.clone(),
                client_secret: None,
                private_key: None,
                auth: TokenAuth::None,
            });
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
        let token = self.token_request(&server.token_endpoint, &server.issuer, reg, form).await?;
        self.accept_token(state, &token, &server.issuer, &server.token_endpoint, resource, scopes)
    }

    async fn refresh(&self, state: &mut State, grant: &RefreshGrant) -> Result<()> {
        let reg = state
            .registrations
            .get(&grant.issuer)
            .cloned()
            .ok_or_else(|| auth_error("no registration for the refresh token's issuer"))?;
        let form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", grant.refresh_token.as_str()),
            ("resource", grant.resource.as_str()),
        ];
        let token = self.token_request(&grant.token_endpoint, &grant.issuer, &reg, form).await?;
        let scopes = state.scopes.clone();
        self.accept_token(state, &token, &grant.issuer, &grant.token_endpoint, &grant.resource, scopes)?;
        if state.refresh.is_none() {
            // The server kept the refresh token (no rotation).
            state.refresh = Some(grant.clone());
        }
        Ok(())
    }

    /// A request to the token `endpoint` of the authorization server `issuer`, the client
    /// authenticated as registered.
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
            return Err(auth_error(format!("the token request at {endpoint} failed: {}", answer.oauth_error())));
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

    fn accept_token(
        &self,
        state: &mut State,
        doc: &Value,
        issuer: &str,
        token_endpoint: &str,
        resource: &str,
        requested: Vec<String>,
    ) -> Result<()> {
        let access = doc
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| auth_error("the token response holds no access_token"))?;
        self.set_token(access)?;
        state.scopes = match doc.get("scope").and_then(Value::as_str) {
            Some(granted) => granted.split_whitespace().map(str::to_owned).collect(),
            None => requested,
        };
        state.refresh = doc.get("refresh_token").and_then(Value::as_str).map(|t| RefreshGrant {
            refresh_token: t.to_owned(),
            issuer: issuer.to_owned(),
            token_endpoint: token_endpoint.to_owned(),
            resource: resource.to_owned(),
        });
        Ok(())
    }
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

    /// The shared table of invalid auth options (`tests/auth_option_cases.json`, also read by
    /// the Python, Node and C tests).
    const CASES: &str = include_str!("../../../../tests/auth_option_cases.json");

    /// The `oauth` member of the client options, as they nest it.
    #[derive(Deserialize)]
    struct InClientOptions {
        #[allow(dead_code)]
        oauth: OAuthOptions,
    }

    #[test]
    fn every_shared_oauth_case_is_refused_at_its_option() {
        let table: Value = serde_json::from_str(CASES).unwrap();
        let area = &table["oauth"];
        crate::options::from_json::<OAuthOptions>("oauth", area["valid"].clone()).unwrap();
        let cases = area["cases"].as_array().unwrap();
        assert!(cases.len() >= 10);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let mut options = area["valid"].clone();
            for (k, v) in case["set"].as_object().unwrap() {
                if v.is_null() {
                    options.as_object_mut().unwrap().remove(k);
                } else {
                    options[k] = v.clone();
                }
            }
            let e = crate::options::from_json::<InClientOptions>("the client options", json!({ "oauth": options }))
                .map(drop)
                .unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidParams, "{name}");
            let (path, message) = (case["path"].as_str().unwrap(), case["message"].as_str().unwrap());
            let want = if path.is_empty() { format!("oauth: {message}") } else { format!("oauth.{path}: {message}") };
            assert!(e.message().starts_with("the client options: "), "{name}: {e}");
            assert!(e.message().contains(&want), "{name}: {e:?} should contain {want:?}");
        }
    }

    #[test]
    fn oauth_options_built_in_rust_are_checked_by_the_same_rules() {
        let ok = OAuthOptions::new("http://127.0.0.1:8765/callback", |_| async { Ok(String::new()) });
        ok.validate().unwrap();
        ok.clone().client_metadata_url("https://app.example.com/client.json").validate().unwrap();
        ok.clone().pre_registered("id", None, Some("https://auth.example.com".into())).validate().unwrap();
        let e = OAuthOptions::new("callback", |_| async { Ok(String::new()) }).validate().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidParams);
        assert!(e.message().starts_with("oauth: redirectUri: must be an absolute URI"), "{e}");
        let e = ok.clone().client_metadata_url("http://app.example.com/client.json").validate().unwrap_err();
        assert!(e.message().starts_with("oauth: clientMetadataUrl: must be the https URL"), "{e}");
        let e = ok.clone().pre_registered("", None, None).validate().unwrap_err();
        assert!(e.message().starts_with("oauth: clientId: must not be empty"), "{e}");
        let mut never = ok.clone();
        never.max_authorizations = 0;
        assert!(never.validate().unwrap_err().message().starts_with("oauth: maxAuthorizations: must be at least 1"));
        // Native apps redirect to a scheme of their own.
        OAuthOptions::new("com.example.app:/callback", |_| async { Ok(String::new()) }).validate().unwrap();
    }
}
