//! Bearer-token protection of the Streamable HTTP endpoint: the MCP server as an OAuth 2.1
//! resource server.
//!
//! With [`BearerAuth`] in [`HttpOptions::auth`](super::HttpOptions::auth), the endpoint
//! publishes its protected resource metadata (RFC 9728) at
//! `/.well-known/oauth-protected-resource<endpoint path>`, and every request must carry
//! `Authorization: Bearer <token>` that your [`TokenVerifier`] accepts:
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

use crate::error::Result;
use futures_util::future::BoxFuture;
use http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// What a verified access token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// Who the token stands for (a user or client id): the request's principal.
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

impl TokenInfo {
    /// A token of `subject` with `scopes`.
    pub fn new<I, S>(subject: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        TokenInfo { subject: subject.into(), scopes: scopes.into_iter().map(Into::into).collect() }
    }
}

/// Checks an access token: `Ok(Some(info))` for a valid one (signature, expiry, and that it
/// was issued for this resource, its audience), `Ok(None)` for an invalid one. An `Err` (the
/// verifier could not decide, e.g. the introspection endpoint is down) answers `503`.
pub type TokenVerifier = Arc<dyn Fn(String) -> BoxFuture<'static, Result<Option<TokenInfo>>> + Send + Sync>;

/// How the endpoint is protected (see the module docs).
///
/// As data (the `auth` HTTP option): `resource`, `authorizationServers`, `scopesSupported`,
/// `requiredScopes`, `toolScopes`; the verifier is a callback the binding sets (until it does,
/// every request is answered `503`).
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BearerAuth {
    /// The canonical URI of this MCP server (`https://mcp.example.com/mcp`): the
    /// metadata's `resource`, the audience tokens must be issued for.
    pub resource: String,
    /// The issuers of the authorization servers that issue tokens for it.
    #[serde(alias = "authorization_servers")]
    pub authorization_servers: Vec<String>,
    /// `scopes_supported` of the metadata: the scopes a client asks for by default (default:
    /// the required scopes, when any).
    #[serde(default)]
    #[serde(alias = "scopes_supported")]
    pub scopes_supported: Option<Vec<String>>,
    /// Scopes every request needs (default none).
    #[serde(default)]
    #[serde(alias = "required_scopes")]
    pub required_scopes: Vec<String>,
    /// Scopes a `tools/call` of a given tool needs besides the required ones (default none).
    #[serde(default)]
    #[serde(alias = "tool_scopes")]
    pub tool_scopes: HashMap<String, Vec<String>>,
    /// Checks tokens.
    #[serde(skip, default = "no_verifier")]
    pub verifier: TokenVerifier,
}

/// The verifier of a [`BearerAuth`] read from data before its binding sets one: it cannot
/// decide (`503`), so no request gets through unchecked.
fn no_verifier() -> TokenVerifier {
    Arc::new(|_| Box::pin(async { Err(crate::Error::internal("the bearer auth options have no token verifier")) }))
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("tool_scopes", &self.tool_scopes)
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
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: None,
            required_scopes: Vec::new(),
            tool_scopes: HashMap::new(),
            verifier: Arc::new(move |token| Box::pin(verifier(token))),
        }
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
        match (self.verifier)(token.to_owned()).await {
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
                tracing::warn!("the token verifier failed: {e}");
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
}
