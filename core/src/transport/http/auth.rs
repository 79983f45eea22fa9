//! Bearer-token protection of the Streamable HTTP endpoint: the MCP server as an OAuth 2.1
//! resource server.
//!
//! With [`BearerAuth`] in [`HttpOptions::auth`](super::HttpOptions::auth), the endpoint
//! publishes its protected resource metadata (RFC 9728) at
//! `/.well-known/oauth-protected-resource<endpoint path>`, and every request must carry
//! `Authorization: Bearer <token>` that your [`TokenVerifier`] accepts, or the built-in
//! verifiers of [`BearerAuth::jwt`] and [`BearerAuth::introspection`] (JWT access tokens checked
//! against the issuer's keys, RFC 9068; token introspection, RFC 7662: see
//! [`token_verifiers`](super::token_verifiers)):
//!
//! - no token, or one the verifier rejects: `401` with
//!   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (and `error="invalid_token"`
//!   for a rejected one), which starts a client's authorization flow;
//! - a token without the scopes every request needs, or without those of the tool called:
//!   `403` with `error="insufficient_scope"` and the scopes needed, which makes a client
//!   re-authorize with more (step-up).
//!
//! The token's subject becomes the request's principal: handlers see it
//! (`RequestContext::principal`) and MRTR `requestState` is bound to it. Issuing tokens is the
//! authorization server's business, not this module's.

use super::token_verifiers::{BuiltInVerifier, IntrospectionOptions, JwtOptions, check_introspection, check_jwt};
use crate::error::Result;
use futures_util::future::BoxFuture;
use http::{HeaderMap, StatusCode, header};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};

/// What a verified access token grants.
///
/// As data (what a binding's verifier answers): `{"subject": "alice", "scopes": ["notes:read"],
/// "claims": {"tenant": "acme"}}` (`scopes` and `claims` may be left out), read by [`TokenInfo::from_answer`]; the same rules as
/// [`TokenInfo::validate`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenInfo {
    /// Who the token stands for (a user or client id): the request's principal. Not empty.
    #[serde(deserialize_with = "de_subject")]
    pub subject: String,
    /// The scopes granted, each a scope token (RFC 6749 §3.3).
    #[serde(default, deserialize_with = "de_opt_scopes_or_none")]
    pub scopes: Vec<String>,
    /// The token's other claims, for handlers and middleware to read (`ctx.claims()`): an
    /// object of anything (say `{"tenant": "acme", "roles": ["admin"]}`); empty by default.
    #[serde(default)]
    pub claims: serde_json::Map<String, Value>,
}

impl TokenInfo {
    /// A token of `subject` with `scopes`.
    pub fn new<I, S>(subject: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        TokenInfo {
            subject: subject.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
            claims: serde_json::Map::new(),
        }
    }

    /// The same grant with `claims` (an object; anything else leaves no claims).
    pub fn with_claims(mut self, claims: Value) -> Self {
        self.claims = match claims {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        self
    }

    /// What the verified claims of a token grant (the built-in verifiers'): the subject `sub`,
    /// else `client_id` (an introspected client credentials token), none without either; the
    /// scopes of `scope` (space-separated) or `scp` (a string or a list, as some providers send),
    /// those that are scope tokens; every claim, for handlers to read.
    pub fn from_claims(claims: serde_json::Map<String, Value>) -> Option<TokenInfo> {
        let subject = ["sub", "client_id"]
            .iter()
            .find_map(|k| claims.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))?
            .to_owned();
        let scopes: Vec<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(s)) => s.split_whitespace().filter(|s| is_scope_token(s)).map(str::to_owned).collect(),
            Some(Value::Array(list)) => {
                list.iter().filter_map(Value::as_str).filter(|s| is_scope_token(s)).map(str::to_owned).collect()
            }
            _ => Vec::new(),
        };
        Some(TokenInfo { subject, scopes, claims })
    }

    /// Checks what a verifier may grant: a non-empty subject, and scopes that are scope tokens
    /// (RFC 6749 §3.3: they are echoed in quoted challenge parameters). [`BearerAuth`] checks
    /// every answer of its verifier so: one that breaks these rules answers `503`, as a
    /// verifier that fails does, and is logged at error level. The error is
    /// [`ErrorKind::Usage`](crate::ErrorKind): the rule was broken by the application.
    pub fn validate(&self) -> Result<()> {
        let bad = |at: String, m: String| Err(crate::Error::usage(format!("{TOKEN_ANSWER}: {at}: {m}")));
        if let Err(m) = subject_rule(&self.subject) {
            return bad("subject".into(), m);
        }
        for (i, s) in self.scopes.iter().enumerate() {
            if let Err(m) = scope_rule(s) {
                return bad(format!("scopes[{i}]"), m);
            }
        }
        Ok(())
    }

    /// A verifier's answer as data (a binding's verifier answers JSON, or a dict): `null` for
    /// an invalid token, else a [`TokenInfo`] object checked as [`TokenInfo::validate`]
    /// checks. Anything else is an [`ErrorKind::Usage`](crate::ErrorKind) error saying what is
    /// wrong (`… scopes[0]: a scope must be …`): the application's verifier broke the rule, so
    /// a request it was asked about gets `503`, and a binding checking a value the application
    /// builds (Python's `TokenInfo`, C's `result_json`) passes the error on as it is.
    ///
    /// ```
    /// use mcpaxle::transport::auth::TokenInfo;
    /// use serde_json::json;
    /// let info = TokenInfo::from_answer(json!({ "subject": "alice", "scopes": ["notes:read"] })).unwrap();
    /// assert_eq!(info, Some(TokenInfo::new("alice", ["notes:read"])));
    /// assert_eq!(TokenInfo::from_answer(json!(null)).unwrap(), None);
    /// let e = TokenInfo::from_answer(json!({ "sub": "alice" })).unwrap_err();
    /// assert!(e.message().contains("unknown field `sub`"), "{e}");
    /// ```
    pub fn from_answer(value: Value) -> Result<Option<TokenInfo>> {
        let kind = match &value {
            Value::Null => return Ok(None),
            Value::Object(_) => None,
            Value::Array(_) => Some("an array"),
            Value::String(_) => Some("a string"),
            Value::Number(_) => Some("a number"),
            Value::Bool(_) => Some("a boolean"),
        };
        if let Some(kind) = kind {
            return Err(crate::Error::usage(format!("{TOKEN_ANSWER}: expected an object or null, not {kind}")));
        }
        crate::options::from_json(TOKEN_ANSWER, value).map(Some)
    }

    /// A verifier's answer as JSON text (a binding whose verifier answers a string): as
    /// [`TokenInfo::from_answer`], and text that is not JSON is the same
    /// [`ErrorKind::Usage`](crate::ErrorKind) error.
    ///
    /// ```
    /// use mcpaxle::transport::auth::TokenInfo;
    /// assert_eq!(TokenInfo::from_answer_text("null").unwrap(), None);
    /// let e = TokenInfo::from_answer_text("alice").unwrap_err();
    /// assert!(e.message().contains("its answer is wrong: not JSON"), "{e}");
    /// ```
    pub fn from_answer_text(text: &str) -> Result<Option<TokenInfo>> {
        let value =
            serde_json::from_str(text).map_err(|e| crate::Error::usage(format!("{TOKEN_ANSWER}: not JSON ({e})")))?;
        TokenInfo::from_answer(value)
    }
}

/// How errors about a verifier's answer begin.
const TOKEN_ANSWER: &str = "the token verifier must answer {\"subject\": non-empty string, \"scopes\": [scope, ...], \"claims\": {...}} or null; its answer is wrong";

/// Checks an access token: `Ok(Some(info))` for a valid one (signature, expiry, and that it
/// was issued for this resource, its audience), `Ok(None)` for an invalid one. An `Err` (the
/// verifier could not decide, e.g. the introspection endpoint is down) answers `503`.
pub type TokenVerifier = Arc<dyn Fn(String) -> BoxFuture<'static, Result<Option<TokenInfo>>> + Send + Sync>;

/// How the endpoint is protected (see the module docs).
///
/// As data (the `auth` HTTP option): `resource`, `authorizationServers`, `scopesSupported`,
/// `requiredScopes`, `toolScopes`, `jwt`, `introspection`; the verifier is a callback the
/// binding sets, or the built-in one of `jwt` / `introspection` (with neither, every request is
/// answered `503`). Their values are checked as they are read, by the rules of
/// [`BearerAuth::validate`], and the error names the option at fault by its path as given
/// (`the HTTP options: auth.requiredScopes[0]: a scope must be …`).
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BearerAuth {
    /// The canonical URI of this MCP server (`https://mcp.example.com/mcp`): the
    /// metadata's `resource`, the audience tokens must be issued for.
    #[serde(deserialize_with = "de_resource")]
    pub resource: String,
    /// The issuers of the authorization servers that issue tokens for it (at least one).
    #[serde(alias = "authorization_servers", deserialize_with = "de_authorization_servers")]
    pub authorization_servers: Vec<String>,
    /// `scopes_supported` of the metadata: the scopes a client asks for by default (default:
    /// the required scopes, when any).
    #[serde(default, deserialize_with = "de_opt_scopes")]
    #[serde(alias = "scopes_supported")]
    pub scopes_supported: Option<Vec<String>>,
    /// Scopes every request needs (default none).
    #[serde(default, deserialize_with = "de_scopes")]
    #[serde(alias = "required_scopes")]
    pub required_scopes: Vec<String>,
    /// Scopes a `tools/call` of a given tool needs besides the required ones (default none).
    #[serde(default, deserialize_with = "de_tool_scopes")]
    #[serde(alias = "tool_scopes")]
    pub tool_scopes: HashMap<String, Vec<String>>,
    /// Built-in checking of JWT access tokens against the issuer's keys (see
    /// [`token_verifiers`](super::token_verifiers)); default none.
    #[serde(default, deserialize_with = "super::token_verifiers::de_jwt")]
    pub jwt: Option<JwtOptions>,
    /// Built-in checking of tokens at the issuer's introspection endpoint (RFC 7662); default
    /// none.
    #[serde(default, deserialize_with = "super::token_verifiers::de_introspection")]
    pub introspection: Option<IntrospectionOptions>,
    /// Checks tokens: a callback of the application (set by [`BearerAuth::use_verifier`]), else
    /// the built-in verifier of `jwt` / `introspection`. With neither every request is answered
    /// `503`, so none gets through unchecked.
    #[serde(skip)]
    pub verifier: Option<TokenVerifier>,
    /// The built-in verifier, made on first use (shared by clones: its caches are the server's).
    #[serde(skip)]
    built_in: Arc<OnceLock<BuiltInVerifier>>,
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("tool_scopes", &self.tool_scopes)
            .field("jwt", &self.jwt)
            .field("introspection", &self.introspection)
            .finish_non_exhaustive()
    }
}

impl BearerAuth {
    /// Protection of the resource `resource`, with tokens from `authorization_server` checked
    /// by `verifier`.
    pub fn new<F, Fut>(resource: impl Into<String>, authorization_server: impl Into<String>, verifier: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<TokenInfo>>> + Send + 'static,
    {
        BearerAuth {
            verifier: Some(Arc::new(move |token| Box::pin(verifier(token)))),
            ..BearerAuth::built_in(resource, authorization_server)
        }
    }

    /// Protection of the resource `resource` by `authorization_server`, whose tokens the
    /// built-in verifiers check: set [`BearerAuth::jwt`] and/or [`BearerAuth::introspection`].
    pub fn built_in(resource: impl Into<String>, authorization_server: impl Into<String>) -> Self {
        BearerAuth {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: None,
            required_scopes: Vec::new(),
            tool_scopes: HashMap::new(),
            jwt: None,
            introspection: None,
            verifier: None,
            built_in: Arc::default(),
        }
    }

    /// Sets the application's verifier callback, for a binding: `Some` unless `jwt` or
    /// `introspection` is set, `None` only when one is (a
    /// [`ErrorKind::Usage`](crate::ErrorKind) error saying so otherwise).
    pub fn use_verifier(&mut self, verifier: Option<TokenVerifier>) -> Result<()> {
        let built_in = self.jwt.is_some() || self.introspection.is_some();
        match (&verifier, built_in) {
            (Some(_), true) => Err(crate::Error::usage(
                "bearer auth: give either a verify callback or the jwt / introspection options, not both",
            )),
            (None, false) => Err(crate::Error::usage(
                "bearer auth needs a verify callback, or the jwt or introspection option for the built-in verifiers",
            )),
            _ => {
                self.verifier = verifier;
                Ok(())
            }
        }
    }

    /// What the verifier answers for `token`.
    pub async fn verify(&self, token: String) -> Result<Option<TokenInfo>> {
        if let Some(verifier) = &self.verifier {
            return verifier(token).await;
        }
        if self.jwt.is_none() && self.introspection.is_none() {
            return Err(crate::Error::internal("the bearer auth options have no token verifier"));
        }
        let built_in = self.built_in.get_or_init(|| {
            BuiltInVerifier::new(
                self.authorization_servers.first().cloned().unwrap_or_default(),
                self.resource.clone(),
                self.jwt.clone(),
                self.introspection.clone(),
            )
        });
        Ok(built_in.verify(&token).await?.and_then(TokenInfo::from_claims))
    }

    /// Sets the scopes every request needs (also published as `scopes_supported` unless set).
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the published `scopes_supported`.
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the scopes calls of tool `name` need besides the required ones.
    pub fn tool_scopes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: I,
    ) -> Self {
        self.tool_scopes.insert(name.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Checks the values (an [`ErrorKind::Usage`](crate::ErrorKind) error naming the
    /// option at fault): `resource` an absolute `http(s)` URL without a fragment (RFC 8707
    /// §2); at least one authorization server, each an issuer URL (absolute `http(s)`, no
    /// query or fragment: RFC 8414 §2); every scope a scope token (RFC 6749 §3.3), which also
    /// fits the quoted `scope` parameter of a challenge; tool names not empty. Options read
    /// from data are checked as they are read; `HttpServer::bind` checks those built in
    /// Rust.
    pub fn validate(&self) -> Result<()> {
        let bad = |at: String, m: String| Err(crate::Error::usage(format!("bearer auth: {at}: {m}")));
        if let Err(m) = resource_rule(&self.resource) {
            return bad("resource".into(), m);
        }
        if let Err(m) = servers_rule(&self.authorization_servers) {
            return bad("authorizationServers".into(), m);
        }
        for (i, s) in self.authorization_servers.iter().enumerate() {
            if let Err(m) = issuer_rule(s) {
                return bad(format!("authorizationServers[{i}]"), m);
            }
        }
        let mut lists: Vec<(String, &Vec<String>)> = vec![("requiredScopes".into(), &self.required_scopes)];
        if let Some(s) = &self.scopes_supported {
            lists.push(("scopesSupported".into(), s));
        }
        for (name, scopes) in &self.tool_scopes {
            if let Err(m) = tool_name_rule(name) {
                return bad("toolScopes".into(), m);
            }
            lists.push((format!("toolScopes.{name}"), scopes));
        }
        for (at, scopes) in lists {
            for (i, s) in scopes.iter().enumerate() {
                if let Err(m) = scope_rule(s) {
                    return bad(format!("{at}[{i}]"), m);
                }
            }
        }
        if let Some(Err(m)) = self.jwt.as_ref().map(check_jwt) {
            return bad("jwt".into(), m);
        }
        if let Some(Err(m)) = self.introspection.as_ref().map(check_introspection) {
            return bad("introspection".into(), m);
        }
        Ok(())
    }

    /// Where the metadata is served for an endpoint at `endpoint_path` (RFC 9728 §3.1).
    pub fn metadata_path(endpoint_path: &str) -> String {
        format!("/.well-known/oauth-protected-resource{}", endpoint_path.trim_end_matches('/'))
    }

    /// The protected resource metadata document.
    pub fn metadata(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        let supported = self
            .scopes_supported
            .clone()
            .or_else(|| (!self.required_scopes.is_empty()).then(|| self.required_scopes.clone()));
        if let Some(s) = supported {
            doc["scopes_supported"] = json!(s);
        }
        doc
    }

    /// The metadata URL named in challenges: the resource's origin with the well-known path.
    fn metadata_url(&self, endpoint_path: &str) -> String {
        let origin = match self.resource.find("://") {
            Some(i) => match self.resource[i + 3..].find('/') {
                Some(j) => &self.resource[..i + 3 + j],
                None => &self.resource,
            },
            None => &self.resource,
        };
        format!("{origin}{}", Self::metadata_path(endpoint_path))
    }

    /// Checks a request's token; the refusal to answer otherwise.
    pub(crate) async fn check(
        &self,
        headers: &HeaderMap,
        endpoint_path: &str,
    ) -> std::result::Result<TokenInfo, Refusal> {
        let Some(token) = bearer_token(headers) else {
            return Err(self.refuse(
                StatusCode::UNAUTHORIZED,
                None,
                &self.required_scopes,
                "this MCP server requires an access token (Authorization: Bearer …)",
                endpoint_path,
            ));
        };
        let answer = self.verify(token.to_owned()).await.and_then(|info| match info {
            Some(i) => i.validate().map(|()| Some(i)),
            None => Ok(None),
        });
        match answer {
            Ok(Some(info)) => {
                if self.required_scopes.iter().all(|s| info.scopes.contains(s)) {
                    Ok(info)
                } else {
                    let message = format!(
                        "the access token lacks the scopes this MCP server requires: {}",
                        self.required_scopes.join(" ")
                    );
                    Err(self.refuse(
                        StatusCode::FORBIDDEN,
                        Some("insufficient_scope"),
                        &self.required_scopes,
                        &message,
                        endpoint_path,
                    ))
                }
            }
            Ok(None) => Err(self.refuse(
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                &self.required_scopes,
                "the access token is invalid or expired",
                endpoint_path,
            )),
            Err(e) => {
                tracing::error!("the token verifier failed; the request gets 503: {e}");
                Err(Refusal {
                    status: StatusCode::SERVICE_UNAVAILABLE,
                    challenge: None,
                    body: oauth_body(
                        "temporarily_unavailable",
                        "the access token cannot be checked right now; retry later",
                    ),
                })
            }
        }
    }

    /// Checks that a token may call tool `name`.
    pub(crate) fn check_tool(
        &self,
        info: &TokenInfo,
        name: &str,
        endpoint_path: &str,
    ) -> std::result::Result<(), Refusal> {
        let Some(needed) = self.tool_scopes.get(name) else { return Ok(()) };
        if needed.iter().all(|s| info.scopes.contains(s)) {
            return Ok(());
        }
        let mut scopes = self.required_scopes.clone();
        scopes.extend(needed.iter().filter(|s| !self.required_scopes.contains(s)).cloned());
        let message = format!("calling tool {name:?} needs the scopes {}", needed.join(" "));
        Err(self.refuse(StatusCode::FORBIDDEN, Some("insufficient_scope"), &scopes, &message, endpoint_path))
    }

    fn refuse(
        &self,
        status: StatusCode,
        error: Option<&str>,
        scopes: &[String],
        message: &str,
        endpoint_path: &str,
    ) -> Refusal {
        let mut challenge = String::from("Bearer");
        let mut params = Vec::new();
        if let Some(e) = error {
            params.push(format!("error=\"{e}\""));
        }
        if !scopes.is_empty() {
            params.push(format!("scope=\"{}\"", scopes.join(" ")));
        }
        params.push(format!("resource_metadata=\"{}\"", self.metadata_url(endpoint_path)));
        // A request with no credentials gets no error details (RFC 6750 §3.1).
        if error.is_some() {
            params.push(format!("error_description=\"{}\"", message.replace(['"', '\\'], "'")));
        }
        challenge.push(' ');
        challenge.push_str(&params.join(", "));
        Refusal { status, challenge: Some(challenge), body: oauth_body(error.unwrap_or("invalid_request"), message) }
    }
}

/// Whether `s` is a scope token (RFC 6749 §3.3: one or more of `%x21 / %x23-5B / %x5D-7E`,
/// printable ASCII but space, `"` and `\`), which also fits a quoted challenge parameter.
pub fn is_scope_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

fn scope_rule(s: &str) -> std::result::Result<(), String> {
    if is_scope_token(s) {
        return Ok(());
    }
    Err(format!(
        "a scope must be a non-empty token of printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3), not {s:?}"
    ))
}

fn resource_rule(s: &str) -> std::result::Result<(), String> {
    if crate::options::is_absolute_uri(s, &["https", "http"]) {
        return Ok(());
    }
    Err(format!(
        "must be this server's canonical URI, an absolute http(s) URL without a fragment (https://mcp.example.com/mcp), not {s:?}"
    ))
}

fn issuer_rule(s: &str) -> std::result::Result<(), String> {
    if crate::options::is_issuer_url(s) {
        return Ok(());
    }
    Err(format!(
        "an authorization server is named by its issuer URL, an absolute http(s) URL without query or fragment (https://auth.example.com), not {s:?}"
    ))
}

fn servers_rule(servers: &[String]) -> std::result::Result<(), String> {
    if servers.is_empty() {
        return Err("must name at least one authorization server (its issuer URL), not none".into());
    }
    Ok(())
}

fn tool_name_rule(s: &str) -> std::result::Result<(), String> {
    if s.is_empty() { Err("a tool name must not be empty".into()) } else { Ok(()) }
}

fn subject_rule(s: &str) -> std::result::Result<(), String> {
    if s.is_empty() { Err("the subject must not be empty (it is the request's principal)".into()) } else { Ok(()) }
}

/// A string checked by a rule as it is read, so that its error carries its own path.
macro_rules! checked_string {
    ($name:ident, $rule:ident) => {
        #[derive(PartialEq, Eq, Hash)]
        struct $name(String);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                crate::options::checked(d, |s: &String| $rule(s)).map($name)
            }
        }
    };
}

checked_string!(Scope, scope_rule);
checked_string!(Issuer, issuer_rule);
checked_string!(ToolName, tool_name_rule);

fn strings<T>(items: Vec<T>, f: impl Fn(T) -> String) -> Vec<String> {
    items.into_iter().map(f).collect()
}

fn de_resource<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    crate::options::checked(d, |s: &String| resource_rule(s))
}

fn de_subject<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    crate::options::checked(d, |s: &String| subject_rule(s))
}

fn de_authorization_servers<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    let servers = strings(Vec::<Issuer>::deserialize(d)?, |s| s.0);
    servers_rule(&servers).map_err(serde::de::Error::custom)?;
    Ok(servers)
}

fn de_scopes<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    Ok(strings(Vec::<Scope>::deserialize(d)?, |s| s.0))
}

fn de_opt_scopes<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<String>>, D::Error> {
    Ok(Option::<Vec<Scope>>::deserialize(d)?.map(|v| strings(v, |s| s.0)))
}

fn de_opt_scopes_or_none<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    Ok(de_opt_scopes(d)?.unwrap_or_default())
}

fn de_tool_scopes<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<HashMap<String, Vec<String>>, D::Error> {
    let m = HashMap::<ToolName, Vec<Scope>>::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k.0, strings(v, |s| s.0))).collect())
}

/// A request refused for its authorization.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    /// The `WWW-Authenticate` value.
    pub challenge: Option<String>,
    pub body: Vec<u8>,
}

fn oauth_body(error: &str, description: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({ "error": error, "error_description": description })).unwrap_or_default()
}

/// The token of an `Authorization: Bearer` header.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = v.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn auth() -> BearerAuth {
        BearerAuth::new("https://mcp.example.com/mcp", "https://auth.example.com", |token: String| async move {
            Ok(match token.as_str() {
                "reader" => Some(TokenInfo::new("alice", ["notes:read"])),
                "writer" => Some(TokenInfo::new("bob", ["notes:read", "notes:write"])),
                "nobody" => Some(TokenInfo::new("eve", Vec::<String>::new())),
                "broken" => return Err(crate::Error::internal("introspection is down")),
                _ => None,
            })
        })
        .required_scopes(["notes:read"])
        .tool_scopes("write_note", ["notes:write"])
    }

    fn with_token(t: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {t}")).unwrap());
        h
    }

    #[tokio::test]
    async fn tokens_are_checked() {
        let a = auth();
        let r = a.check(&HeaderMap::new(), "/mcp").await.unwrap_err();
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        let c = r.challenge.unwrap();
        assert!(c.starts_with("Bearer scope=\"notes:read\", resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""), "{c}");
        let r = a.check(&with_token("forged"), "/mcp").await.unwrap_err();
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        assert!(r.challenge.unwrap().starts_with("Bearer error=\"invalid_token\""));
        let r = a.check(&with_token("nobody"), "/mcp").await.unwrap_err();
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        assert_eq!(a.check(&with_token("broken"), "/mcp").await.unwrap_err().status, StatusCode::SERVICE_UNAVAILABLE);
        let info = a.check(&with_token("reader"), "/mcp").await.unwrap();
        assert_eq!(info.subject, "alice");
        let r = a.check_tool(&info, "write_note", "/mcp").unwrap_err();
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        assert!(r.challenge.unwrap().contains("error=\"insufficient_scope\", scope=\"notes:read notes:write\""));
        assert!(a.check_tool(&info, "read_note", "/mcp").is_ok());
        let writer = a.check(&with_token("writer"), "/mcp").await.unwrap();
        assert!(a.check_tool(&writer, "write_note", "/mcp").is_ok());
        let mut lower = HeaderMap::new();
        lower.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer reader"));
        assert!(a.check(&lower, "/mcp").await.is_ok());
    }

    #[test]
    fn metadata_document() {
        let a = auth();
        assert_eq!(BearerAuth::metadata_path("/mcp"), "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(BearerAuth::metadata_path("/"), "/.well-known/oauth-protected-resource");
        let doc = a.metadata();
        assert_eq!(doc["resource"], "https://mcp.example.com/mcp");
        assert_eq!(doc["authorization_servers"], json!(["https://auth.example.com"]));
        assert_eq!(doc["scopes_supported"], json!(["notes:read"]));
    }

    /// The shared table of invalid auth options and verifier answers
    /// (`tests/auth_option_cases.json`, also read by the Python, Node and C tests).
    const CASES: &str = include_str!("../../../../tests/auth_option_cases.json");

    /// `valid` with `set` applied: a null value removes the option.
    pub(crate) fn overlay(valid: &Value, set: &Value) -> Value {
        let mut v = valid.clone();
        for (k, x) in set.as_object().unwrap() {
            if x.is_null() {
                v.as_object_mut().unwrap().remove(k);
            } else {
                v[k] = x.clone();
            }
        }
        v
    }

    /// The `auth` member of the HTTP options, as they nest it.
    #[derive(Deserialize)]
    struct InHttpOptions {
        #[allow(dead_code)]
        auth: BearerAuth,
    }

    #[test]
    fn every_shared_bearer_auth_case_is_refused_at_its_option() {
        let table: Value = serde_json::from_str(CASES).unwrap();
        let area = &table["bearerAuth"];
        crate::options::from_json::<BearerAuth>("auth", area["valid"].clone()).unwrap();
        let cases = area["cases"].as_array().unwrap();
        assert!(cases.len() >= 15);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let options = overlay(&area["valid"], &case["set"]);
            let path = case["path"].as_str().unwrap();
            let message = case["message"].as_str().unwrap();
            let want = if path.is_empty() { format!("auth: {message}") } else { format!("auth.{path}: {message}") };
            // Nested as in the HTTP options, so the path has a prefix.
            let e = crate::options::from_json::<InHttpOptions>("the HTTP options", json!({ "auth": options }))
                .map(drop)
                .unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Usage, "{name}");
            let e = e.to_string();
            assert!(e.contains(&want), "{name}: {e:?} should contain {want:?}");
            assert!(e.contains("the HTTP options: "), "{name}: {e}");
        }
    }

    #[test]
    fn bearer_auth_built_in_rust_is_checked_by_the_same_rules() {
        let ok = BearerAuth::new("https://mcp.example.com/mcp", "https://auth.example.com", |_| async { Ok(None) });
        ok.validate().unwrap();
        let e = BearerAuth::new("mcp.example.com", "https://auth.example.com", |_| async { Ok(None) })
            .validate()
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Usage);
        assert!(e.message().starts_with("bearer auth: resource: must be this server's canonical URI"), "{e}");
        let e = ok.clone().tool_scopes("write", ["notes:read", "a b"]).validate().unwrap_err();
        assert!(e.message().starts_with("bearer auth: toolScopes.write[1]: a scope must be"), "{e}");
        let e = ok.clone().required_scopes(["x\\y"]).validate().unwrap_err();
        assert!(e.message().starts_with("bearer auth: requiredScopes[0]: "), "{e}");
        let mut none = ok.clone();
        none.authorization_servers.clear();
        assert!(none.validate().unwrap_err().message().contains("authorizationServers: must name at least one"));
        assert!(is_scope_token("notes:read") && is_scope_token("a!#[]~"));
        assert!(!is_scope_token("") && !is_scope_token("a b") && !is_scope_token("a\"b") && !is_scope_token("é"));
    }

    #[tokio::test]
    async fn every_shared_bad_verifier_answer_gets_503() {
        let table: Value = serde_json::from_str(CASES).unwrap();
        let cases = table["tokenInfo"]["cases"].as_array().unwrap();
        assert!(cases.len() >= 5);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let message = case["message"].as_str().unwrap();
            let e = TokenInfo::from_answer(case["answer"].clone()).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Usage, "{name}");
            assert!(e.message().contains(message), "{name}: {e} should contain {message:?}");
            assert!(e.message().starts_with(TOKEN_ANSWER), "{name}: {e}");
            let answer = case["answer"].clone();
            let a = BearerAuth::new("https://mcp.example.com/mcp", "https://auth.example.com", move |_| {
                let answer = answer.clone();
                async move { TokenInfo::from_answer(answer) }
            });
            let r = a.check(&with_token("t"), "/mcp").await.unwrap_err();
            assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{name}");
            assert!(r.challenge.is_none(), "{name}");
        }
        // A verifier written in Rust is held to the same rules.
        for bad in [TokenInfo::new("", ["a"]), TokenInfo::new("alice", ["a b"])] {
            let a = BearerAuth::new("https://mcp.example.com/mcp", "https://auth.example.com", move |_| {
                let bad = bad.clone();
                async move { Ok(Some(bad)) }
            });
            assert_eq!(a.check(&with_token("t"), "/mcp").await.unwrap_err().status, StatusCode::SERVICE_UNAVAILABLE);
        }
        assert_eq!(
            TokenInfo::from_answer(json!({ "subject": "alice", "scopes": null })).unwrap(),
            Some(TokenInfo::new("alice", Vec::<String>::new()))
        );
        // Claims are carried as given, for handlers and middleware.
        let claims = json!({ "tenant": "acme", "roles": ["admin"], "exp": 1 });
        assert_eq!(
            TokenInfo::from_answer(json!({ "subject": "alice", "claims": claims })).unwrap(),
            Some(TokenInfo::new("alice", Vec::<String>::new()).with_claims(claims))
        );
    }
}
