//! The OAuth options of a client: what the host configures, as Rust or as data, and the rules
//! its values are checked by.

use super::assertion::PrivateKey;
use super::store::{TokenStore, TokenStoreData};
use crate::error::{Error, Result};
use crate::transport::http::hyper_client::{HttpClient, new_http_client};
use crate::transport::http::oauth_wire as wire;
use futures_util::future::BoxFuture;
use http::Method;
use serde::Deserialize;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
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
/// `maxAuthorizations`, `tokenStore` (`"memory"`, the default, or `{"file": "/path/tokens.json"}`:
/// a [`FileTokenStore`](super::FileTokenStore)), checked as they are read (see [`OAuthOptions::validate`]). The user-agent
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
    /// Where tokens and the client's own registration are kept (see [`TokenStore`]); `None`:
    /// in memory, for as long as the client.
    pub token_store: Option<Arc<dyn TokenStore>>,
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
            .field("token_store", &self.token_store.as_ref().map(|_| "…"))
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
    #[serde(default, alias = "token_store")]
    token_store: Option<TokenStoreData>,
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
        o.token_store = d.token_store.and_then(TokenStoreData::into_store);
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
            token_store: None,
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

    /// Checks the values (an [`ErrorKind::Usage`](crate::ErrorKind) error naming the
    /// option at fault): `redirectUri` an absolute URI without a fragment (RFC 6749 §3.1.2,
    /// any scheme: native apps use their own) for the authorization code grant; a
    /// pre-registered `clientId` not empty, its `issuer` an issuer URL (RFC 8414 §2), a secret
    /// or a private key (an asymmetric JWS algorithm and a PEM key for it), not both; the client
    /// credentials grant needs those credentials; `clientMetadataUrl` an `https` URL;
    /// `maxAuthorizations` at least 1. Options read from data are checked as they are read;
    /// connecting checks those built in Rust.
    pub fn validate(&self) -> Result<()> {
        let bad = |at: &str, m: String| Err(Error::usage(format!("oauth: {at}: {m}")));
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
            return Err(Error::usage(format!("oauth: {m}")));
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

    /// Keeps tokens (and a registration the client made itself) in `store` rather than in
    /// memory: [`FileTokenStore`](super::FileTokenStore) to survive a restart, or the host's own.
    pub fn token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.token_store = Some(store);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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
            assert_eq!(e.kind(), crate::ErrorKind::Usage, "{name}");
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
        assert_eq!(e.kind(), crate::ErrorKind::Usage);
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
