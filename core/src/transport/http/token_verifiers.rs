//! The server's built-in token verifiers, for the `jwt` and `introspection` options of
//! [`BearerAuth`](super::auth::BearerAuth): what most deployments behind an identity provider
//! need, so that no one writes a JWT verifier by hand.
//!
//! - **JWT access tokens** (RFC 9068): the signature is checked with a key of the issuer's JWKS
//!   (its `jwks_uri`, from the issuer's metadata unless given), fetched once, reused for
//!   `jwksCacheMs`, and fetched again at once when a token names a key id (`kid`) it does not
//!   hold (a key rotation), but no more than once every [`MIN_REFETCH`] for that reason, so that
//!   tokens naming made-up keys cannot make the server hammer the issuer. The header's `alg` must be on the allow-list
//!   (asymmetric algorithms only: never `none`, never an HMAC, which a public key set cannot
//!   check), and the key's own `alg`, when it names one; `typ`, when present, must be an access
//!   token's (`at+jwt`) or a plain `JWT`; `iss` must be the issuer, `aud` must name this
//!   resource (RFC 8707), `exp` and `sub` must be there, and `exp`/`nbf` hold within the leeway.
//! - **Introspection** (RFC 7662): the token is sent to the issuer's introspection endpoint with
//!   this server's client credentials; an `active` answer whose `aud` (when given) names this
//!   resource, whose `iss` (when given) is the issuer and whose `exp` has not passed is
//!   accepted, and reused for `cacheMs` but never past its `exp`.
//!
//! With both, a token shaped like a JWT (three dot-separated parts) is checked as one, any other
//! token is introspected. A token refused either way is `401 invalid_token`; an issuer that
//! cannot be reached (no metadata, no keys, the introspection endpoint down) makes the request
//! `503`, as a verifier that cannot decide does.
//!
//! What one client can do to the others: a token naming an unknown key waits for the one fetch
//! of the key set in flight, while tokens naming held keys never wait for it (a stale set is
//! fetched again by one request while the others use the keys held); an issuer endpoint that
//! failed is asked again only after a back-off ([`FIRST_BACKOFF`] doubling to [`MAX_BACKOFF`]),
//! so that requests fail at once meanwhile instead of queueing behind timeouts; a refused
//! introspection answer is remembered like an active one (in a table of its own, so that
//! refused tokens cannot push accepted ones out), so that replaying a revoked token does not
//! make the server ask the issuer every time.
//!
//! What the claims grant is [`TokenInfo::from_claims`](super::auth::TokenInfo::from_claims)'s
//! business.

use super::hyper_client::{HttpClient, new_http_client};
use super::oauth_wire as wire;
use crate::error::{Error, Result};
use http::Method;
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::OnceCell;

/// The shortest time between two fetches of the key set caused by an unknown key id.
pub const MIN_REFETCH: Duration = Duration::from_secs(30);
/// The claims of a verified token (a JWT's payload, an introspection answer).
pub type Claims = Map<String, Value>;

/// The most introspection answers kept at once (as many again of refused tokens).
pub const MAX_CACHED_INTROSPECTIONS: usize = 10_000;
/// How long an issuer endpoint that failed is not asked again, after its first failure in a row.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest such wait (each failure in a row doubles it).
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The `jwt` option of bearer auth: access tokens are JWTs signed by the issuer (RFC 9068).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct JwtOptions {
    /// The `iss` tokens must carry (default: the first of `authorizationServers`).
    pub issuer: Option<String>,
    /// Where the issuer's keys are (default: the `jwks_uri` of its metadata, RFC 8414 or
    /// OpenID Connect discovery).
    #[serde(alias = "jwks_uri")]
    pub jwks_uri: Option<String>,
    /// The `aud` values accepted (default: the `resource`).
    pub audience: Option<Vec<String>>,
    /// The signature algorithms accepted (default `RS256`, `RS384`, `RS512`, `PS256`, `PS384`,
    /// `PS512`, `ES256`, `ES384`, `EdDSA`). `none` and the HMAC algorithms are refused.
    pub algorithms: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf` (JSON `leewayMs`, default 60000: 60 s).
    #[serde(rename = "leewayMs", alias = "leeway_ms", with = "crate::options::ms")]
    pub leeway: Duration,
    /// How long fetched keys are used before they are fetched again (JSON `jwksCacheMs`,
    /// default 3600000: 1 h).
    #[serde(rename = "jwksCacheMs", alias = "jwks_cache_ms", with = "crate::options::positive_ms")]
    pub jwks_cache: Duration,
}

impl Default for JwtOptions {
    fn default() -> Self {
        JwtOptions {
            issuer: None,
            jwks_uri: None,
            audience: None,
            algorithms: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]
                .map(str::to_owned)
                .to_vec(),
            leeway: Duration::from_secs(60),
            jwks_cache: Duration::from_secs(3600),
        }
    }
}

/// The `introspection` option of bearer auth: tokens are checked at the issuer's introspection
/// endpoint (RFC 7662) with this server's client credentials.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IntrospectionOptions {
    /// The endpoint (default: the `introspection_endpoint` of the issuer's metadata).
    #[serde(default)]
    pub endpoint: Option<String>,
    /// This server's client id at the authorization server.
    #[serde(alias = "client_id")]
    pub client_id: String,
    /// Its secret, sent as HTTP Basic credentials (`client_secret_basic`); without one the
    /// client id is sent in the form.
    #[serde(default, alias = "client_secret")]
    pub client_secret: Option<String>,
    /// How long an active answer is reused, never past the token's `exp` (JSON `cacheMs`,
    /// default 60000: 60 s; 0 asks every time).
    #[serde(default = "default_cache", rename = "cacheMs", alias = "cache_ms", with = "crate::options::ms")]
    pub cache: Duration,
}

fn default_cache() -> Duration {
    Duration::from_secs(60)
}

/// Checks the `jwt` option's values: what is wrong, after the name of the field at fault.
pub(crate) fn check_jwt(jwt: &JwtOptions) -> std::result::Result<(), String> {
    if jwt.algorithms.is_empty() {
        return Err("algorithms: name at least one algorithm".into());
    }
    for (i, name) in jwt.algorithms.iter().enumerate() {
        asymmetric_algorithm(name).map_err(|m| format!("algorithms[{i}]: {m}"))?;
    }
    if jwt.audience.as_ref().is_some_and(Vec::is_empty) {
        return Err("audience: name at least one audience, or leave it out (the resource)".into());
    }
    for (at, url) in [("issuer", &jwt.issuer), ("jwksUri", &jwt.jwks_uri)] {
        if let Some(url) = url {
            absolute_url(url).map_err(|m| format!("{at}: {m}"))?;
        }
    }
    Ok(())
}

/// Checks the `introspection` option's values, as [`check_jwt`] does.
pub(crate) fn check_introspection(i: &IntrospectionOptions) -> std::result::Result<(), String> {
    if i.client_id.is_empty() {
        return Err("clientId: must not be empty".into());
    }
    if let Some(url) = &i.endpoint {
        absolute_url(url).map_err(|m| format!("endpoint: {m}"))?;
    }
    Ok(())
}

/// The `jwt` option, checked as it is read.
pub(crate) fn de_jwt<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<JwtOptions>, D::Error> {
    let jwt = Option::<JwtOptions>::deserialize(d)?;
    if let Some(j) = &jwt {
        check_jwt(j).map_err(D::Error::custom)?;
    }
    Ok(jwt)
}

/// The `introspection` option, checked as it is read.
pub(crate) fn de_introspection<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<IntrospectionOptions>, D::Error> {
    let introspection = Option::<IntrospectionOptions>::deserialize(d)?;
    if let Some(i) = &introspection {
        check_introspection(i).map_err(D::Error::custom)?;
    }
    Ok(introspection)
}

fn absolute_url(url: &str) -> std::result::Result<(), String> {
    match url.parse::<http::Uri>() {
        Ok(u) if matches!(u.scheme_str(), Some("http" | "https")) && u.authority().is_some() => Ok(()),
        _ => Err(format!("{url:?} is not an absolute http(s) URL")),
    }
}

fn asymmetric_algorithm(name: &str) -> std::result::Result<Algorithm, String> {
    match Algorithm::from_str(name) {
        Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) => {
            Err(format!("{name} is an HMAC algorithm, which a public key set cannot check"))
        }
        Ok(alg) => Ok(alg),
        Err(_) => Err(format!(
            "{name:?} is not a JWS algorithm this verifier knows (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)"
        )),
    }
}

/// The built-in verifier of one [`BearerAuth`](super::auth::BearerAuth): its caches live as long
/// as the server.
pub(crate) struct BuiltInVerifier {
    issuer: String,
    resource: String,
    jwt: Option<JwtOptions>,
    introspection: Option<IntrospectionOptions>,
    http: OnceCell<HttpClient>,
    metadata: OnceCell<Value>,
    keys: RwLock<KeyCache>,
    /// Held by the one request fetching the key set.
    fetching_keys: tokio::sync::Mutex<()>,
    introspected: Answers<Claims>,
    refused: Answers<()>,
    /// The issuer endpoints that failed last time they were asked, by what they serve.
    unreachable: Mutex<HashMap<&'static str, Unreachable>>,
}

#[derive(Default)]
struct KeyCache {
    set: Option<JwkSet>,
    fetched: Option<Instant>,
    /// When a token naming a key the set lacked last made it fetch the set again.
    refetched_for_unknown: Option<Instant>,
}

/// What a key-set lookup found: the key, whether the set is fresh, whether a set is held.
struct Lookup {
    key: Option<Jwk>,
    fresh: bool,
    held: bool,
}

/// An issuer endpoint that failed: not asked again before `until`.
struct Unreachable {
    until: Instant,
    wait: Duration,
    message: String,
}

/// Introspection answers by the SHA-256 of their token, each until a deadline, at most
/// [`MAX_CACHED_INTROSPECTIONS`]: when full, the expired ones go, then the soonest to expire.
struct Answers<T>(Mutex<HashMap<[u8; 32], (T, Instant)>>);

impl<T: Clone> Answers<T> {
    fn new() -> Self {
        Answers(Mutex::new(HashMap::new()))
    }

    fn get(&self, digest: &[u8; 32]) -> Option<T> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(digest).filter(|(_, until)| Instant::now() < *until).map(|(v, _)| v.clone())
    }

    fn insert(&self, digest: [u8; 32], value: T, keep: Duration) {
        if keep.is_zero() {
            return;
        }
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if map.len() >= MAX_CACHED_INTROSPECTIONS {
            map.retain(|_, (_, until)| *until > now);
        }
        if map.len() >= MAX_CACHED_INTROSPECTIONS
            && let Some(soonest) = map.iter().min_by_key(|(_, (_, until))| *until).map(|(k, _)| *k)
        {
            map.remove(&soonest);
        }
        map.insert(digest, (value, now + keep));
    }
}

impl BuiltInVerifier {
    pub fn new(
        issuer: String,
        resource: String,
        jwt: Option<JwtOptions>,
        introspection: Option<IntrospectionOptions>,
    ) -> BuiltInVerifier {
        BuiltInVerifier {
            issuer,
            resource,
            jwt,
            introspection,
            http: OnceCell::new(),
            metadata: OnceCell::new(),
            keys: RwLock::new(KeyCache::default()),
            fetching_keys: tokio::sync::Mutex::new(()),
            introspected: Answers::new(),
            refused: Answers::new(),
            unreachable: Mutex::new(HashMap::new()),
        }
    }

    /// Asks the issuer's `what` endpoint through `ask`, unless it failed a moment ago: then
    /// fails at once with the same message until its back-off has passed.
    async fn ask_issuer<T>(&self, what: &'static str, ask: impl Future<Output = Result<T>>) -> Result<T> {
        let lock = || self.unreachable.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(u) = lock().get(what)
            && Instant::now() < u.until
        {
            return Err(issuer_error(format!("{} (not asked again for {} ms)", u.message, u.wait.as_millis())));
        }
        let answer = ask.await;
        match &answer {
            Ok(_) => drop(lock().remove(what)),
            Err(e) => {
                let mut all = lock();
                let wait = all.get(what).map_or(FIRST_BACKOFF, |u| (u.wait * 2).min(MAX_BACKOFF));
                let message = e.message().strip_prefix("bearer auth: ").unwrap_or(e.message()).to_owned();
                all.insert(what, Unreachable { until: Instant::now() + wait, wait, message });
            }
        }
        answer
    }

    /// The verified claims of `token`; `Ok(None)`: the token is refused; `Err`: the issuer could
    /// not be asked.
    pub async fn verify(&self, token: &str) -> Result<Option<Claims>> {
        let header = (token.split('.').count() == 3).then(|| jsonwebtoken::decode_header(token).ok()).flatten();
        match (&self.jwt, &self.introspection, header) {
            (Some(jwt), _, Some(header)) => self.verify_jwt(jwt, header, token).await,
            (_, Some(introspection), _) => self.introspect(introspection, token).await,
            _ => Ok(None),
        }
    }

    async fn http(&self) -> Result<&HttpClient> {
        self.http.get_or_try_init(|| async { new_http_client() }).await
    }

    /// The issuer's metadata (RFC 8414, or OpenID Connect discovery), fetched once.
    async fn metadata(&self) -> Result<&Value> {
        self.metadata
            .get_or_try_init(|| {
                self.ask_issuer("metadata", async {
                    let http = self.http().await?;
                    let urls = wire::authorization_server_metadata_urls(&self.issuer)?;
                    for url in &urls {
                        if let Some(doc) = wire::get_json(http, url).await? {
                            if doc.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) {
                                return Err(issuer_error(format!(
                                    "the metadata at {url} names the issuer {}, not {}",
                                    doc.get("issuer").unwrap_or(&Value::Null),
                                    self.issuer
                                )));
                            }
                            return Ok(doc);
                        }
                    }
                    Err(issuer_error(format!("no metadata for the issuer {} (tried {})", self.issuer, urls.join(", "))))
                })
            })
            .await
    }

    async fn endpoint(&self, given: &Option<String>, field: &str) -> Result<String> {
        if let Some(url) = given {
            return Ok(url.clone());
        }
        let doc = self.metadata().await?;
        doc.get(field).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
            issuer_error(format!("the metadata of the issuer {} has no {field}; set it in the options", self.issuer))
        })
    }

    async fn verify_jwt(&self, options: &JwtOptions, header: Header, token: &str) -> Result<Option<Claims>> {
        let allowed = options.algorithms.iter().filter_map(|a| asymmetric_algorithm(a).ok()).any(|a| a == header.alg);
        let typ_ok = header.typ.as_deref().is_none_or(|t| {
            let t = t.to_ascii_lowercase();
            t == "at+jwt" || t == "application/at+jwt" || t == "jwt"
        });
        if !allowed || !typ_ok {
            return Ok(None);
        }
        let Some(jwk) = self.key_for(options, header.kid.as_deref(), header.alg).await? else {
            return Ok(None);
        };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else { return Ok(None) };
        let mut validation = Validation::new(header.alg);
        validation.leeway = options.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[options.issuer.as_deref().unwrap_or(&self.issuer)]);
        match &options.audience {
            Some(audience) => validation.set_audience(audience),
            None => validation.set_audience(&[&self.resource]),
        }
        Ok(jsonwebtoken::decode::<Claims>(token, &key, &validation).ok().map(|data| data.claims))
    }

    /// The key a token names (or, when it names none, the only key of the set usable with its
    /// algorithm), fetching the set when it is stale or lacks the key.
    async fn key_for(&self, options: &JwtOptions, kid: Option<&str>, alg: Algorithm) -> Result<Option<Jwk>> {
        // Most tokens: a key of a fresh set, found without waiting for anyone.
        let found = self.look_up(options, kid, alg);
        if found.key.is_some() {
            if !found.fresh {
                // Stale: one request fetches the set again; the others use the keys held.
                if let Ok(_one) = self.fetching_keys.try_lock()
                    && !self.look_up(options, kid, alg).fresh
                {
                    self.fetch_keys(options).await?;
                    return Ok(self.look_up(options, kid, alg).key);
                }
            }
            return Ok(found.key);
        }
        // Not held: one fetch at a time; a key id the fresh set lacks (a rotation) fetches it
        // again at most once every MIN_REFETCH.
        let _one = self.fetching_keys.lock().await;
        let found = self.look_up(options, kid, alg);
        if found.key.is_some() {
            return Ok(found.key);
        }
        if !found.held || !found.fresh {
            self.fetch_keys(options).await?;
            return Ok(self.look_up(options, kid, alg).key);
        }
        let may_refetch = {
            let mut cache = self.keys.write().unwrap_or_else(|e| e.into_inner());
            let may = cache.refetched_for_unknown.is_none_or(|at| at.elapsed() >= MIN_REFETCH);
            if may && kid.is_some() {
                cache.refetched_for_unknown = Some(Instant::now());
            }
            may && kid.is_some()
        };
        if may_refetch {
            self.fetch_keys(options).await?;
            return Ok(self.look_up(options, kid, alg).key);
        }
        Ok(None)
    }

    fn look_up(&self, options: &JwtOptions, kid: Option<&str>, alg: Algorithm) -> Lookup {
        let cache = self.keys.read().unwrap_or_else(|e| e.into_inner());
        Lookup {
            key: cache.set.as_ref().and_then(|set| pick(set, kid, alg)),
            fresh: cache.fetched.is_some_and(|at| at.elapsed() < options.jwks_cache),
            held: cache.set.is_some(),
        }
    }

    /// Fetches the key set (the caller holds `fetching_keys`). While the issuer cannot be
    /// reached, the keys held go on serving, and are asked for again after `jwksCacheMs`.
    async fn fetch_keys(&self, options: &JwtOptions) -> Result<()> {
        let fetched = self
            .ask_issuer("jwks", async {
                let url = self.endpoint(&options.jwks_uri, "jwks_uri").await?;
                let doc = wire::get_json(self.http().await?, &url)
                    .await?
                    .ok_or_else(|| issuer_error(format!("the key set at {url} could not be fetched")))?;
                serde_json::from_value::<JwkSet>(doc)
                    .map_err(|e| issuer_error(format!("the key set at {url} is not a JWK set: {e}")))
            })
            .await;
        let mut cache = self.keys.write().unwrap_or_else(|e| e.into_inner());
        match (fetched, cache.set.is_some()) {
            (Ok(set), _) => {
                cache.set = Some(set);
                cache.fetched = Some(Instant::now());
                Ok(())
            }
            (Err(e), true) => {
                tracing::warn!(error = %e, "cannot refresh the issuer's keys; using those held");
                cache.fetched = Some(Instant::now());
                Ok(())
            }
            (Err(e), false) => Err(e),
        }
    }

    async fn introspect(&self, options: &IntrospectionOptions, token: &str) -> Result<Option<Claims>> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(claims) = self.introspected.get(&digest) {
            return Ok(Some(claims));
        }
        if self.refused.get(&digest).is_some() {
            return Ok(None);
        }
        let claims = self
            .ask_issuer("introspection", async {
                let endpoint = self.endpoint(&options.endpoint, "introspection_endpoint").await?;
                let mut form = vec![("token", token), ("token_type_hint", "access_token")];
                let basic = options.client_secret.as_deref().map(|s| wire::basic_credentials(&options.client_id, s));
                if basic.is_none() {
                    form.push(("client_id", &options.client_id));
                }
                let body = Some(("application/x-www-form-urlencoded", wire::form_encode(&form)));
                let answer = wire::send(self.http().await?, Method::POST, &endpoint, body, basic.as_deref()).await?;
                if !answer.status.is_success() {
                    return Err(issuer_error(format!(
                        "the introspection endpoint {endpoint} answered {}",
                        answer.oauth_error()
                    )));
                }
                match answer.json() {
                    Some(Value::Object(claims)) => Ok(claims),
                    _ => {
                        Err(issuer_error(format!("the introspection endpoint {endpoint} did not answer a JSON object")))
                    }
                }
            })
            .await?;
        let now = unix_now();
        let exp = claims.get("exp").and_then(Value::as_u64);
        let audience_ok = match claims.get("aud") {
            None => true,
            Some(aud) => audiences(aud).contains(&self.resource.as_str()),
        };
        let issuer_ok = claims.get("iss").is_none_or(|iss| iss.as_str() == Some(self.issuer.as_str()));
        let active = claims.get("active") == Some(&Value::Bool(true));
        if !active || !audience_ok || !issuer_ok || exp.is_some_and(|exp| exp <= now) {
            // Refused tokens stay refused: an inactive one does not come back to life.
            self.refused.insert(digest, (), options.cache);
            return Ok(None);
        }
        let left = exp.map_or(options.cache, |exp| options.cache.min(Duration::from_secs(exp - now)));
        self.introspected.insert(digest, claims.clone(), left);
        Ok(Some(claims))
    }
}

/// The key of `set` named `kid`, usable with `alg`; without a `kid`, the set's only such key.
fn pick(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    let usable = |jwk: &&Jwk| {
        let signs = jwk.common.public_key_use.as_ref().is_none_or(|u| *u == PublicKeyUse::Signature);
        let same_alg = jwk.common.key_algorithm.is_none_or(|a| a == KeyAlgorithm::from(alg));
        let family = DecodingKey::from_jwk(jwk).is_ok_and(|k| k.family() == alg.family());
        signs && same_alg && family
    };
    match kid {
        Some(kid) => set.keys.iter().filter(|k| k.common.key_id.as_deref() == Some(kid)).find(usable).cloned(),
        None => {
            let mut keys = set.keys.iter().filter(usable);
            match (keys.next(), keys.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        }
    }
}

fn audiences(aud: &Value) -> Vec<&str> {
    match aud {
        Value::String(a) => vec![a.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn issuer_error(message: String) -> Error {
    Error::internal(format!("bearer auth: {message}"))
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
