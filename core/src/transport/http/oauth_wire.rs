//! The small pieces of OAuth's wire format, for both sides: form encoding, query strings,
//! PKCE, where an issuer publishes its metadata, and JSON over the core's hyper client (the
//! client's OAuth flows, and the server's token verifiers fetching keys and introspecting).

use crate::error::{Error, ErrorKind, Result};
use crate::transport::http::hyper_client::{HttpClient, RequestBody};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use http::{HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Limited};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// The most an authorization server's answer may hold.
const BODY_LIMIT: usize = 1024 * 1024;
/// How long one request to an authorization server may take.
const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn auth_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Transport, message)
}

/// `application/x-www-form-urlencoded` (RFC 6749 appendix B), by `form_urlencoded`: `*-._`
/// and alphanumerics as they are, space as `+`, everything else `%XX`.
pub(crate) fn form_encode(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// One form-encoded component (a client id or secret of HTTP Basic credentials).
fn encode_component(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Whether a raw `name=value` pair decodes cleanly: every `%` starts a `%XX` triplet and the
/// decoded bytes are UTF-8 (`form_urlencoded` would keep a bad escape as text and replace bad
/// UTF-8, which for a redirect's `code` or `state` only hides the fault).
fn decodes_cleanly(pair: &str) -> bool {
    let bytes = pair.as_bytes();
    let triplets = bytes
        .iter()
        .enumerate()
        .all(|(i, &b)| b != b'%' || bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
    triplets && percent_encoding::percent_decode(bytes).decode_utf8().is_ok()
}

/// The parameters of a URL's query (for a redirect's `code`, `state`, `iss`, `error`); a
/// parameter that does not decode cleanly is left out.
pub(crate) fn query_params(url: &str) -> Vec<(String, String)> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    let query = query.split_once('#').map(|(q, _)| q).unwrap_or(query);
    query
        .split('&')
        .filter(|p| decodes_cleanly(p))
        .flat_map(|p| form_urlencoded::parse(p.as_bytes()))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// A random URL-safe string of `bytes` random bytes (PKCE verifiers, `state`).
pub(crate) fn random_token(bytes: usize) -> Result<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::getrandom(&mut buf).map_err(|e| Error::internal(format!("no randomness for OAuth: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
pub(crate) fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// HTTP Basic credentials for a token request (RFC 6749 §2.3.1: each part form-encoded).
pub(crate) fn basic_credentials(client_id: &str, secret: &str) -> String {
    let pair = format!("{}:{}", encode_component(client_id), encode_component(secret));
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

/// `scheme://authority` and the path (without a trailing `/`) of a URL.
pub(crate) fn split(url: &str) -> Result<(String, String)> {
    let uri: Uri = url.parse().map_err(|e| auth_error(format!("invalid URL {url:?}: {e}")))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(auth_error(format!("invalid URL {url:?}: not absolute")));
    };
    Ok((format!("{scheme}://{authority}"), uri.path().trim_end_matches('/').to_owned()))
}

/// Where an issuer's metadata is looked for, in the spec's order: OAuth with path insertion,
/// OpenID Connect with path insertion, OpenID Connect with the path appended; without a path,
/// OAuth then OpenID Connect.
pub(crate) fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<String>> {
    let (origin, path) = split(issuer)?;
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// An answer of an authorization server.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub location: Option<String>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// `error` and `error_description` of an OAuth error body, for messages.
    pub fn oauth_error(&self) -> String {
        match self.json() {
            Some(v) => {
                let code = v.get("error").and_then(Value::as_str).unwrap_or("");
                let description = v.get("error_description").and_then(Value::as_str).unwrap_or("");
                match (code, description) {
                    ("", "") => format!("HTTP {}", self.status),
                    (c, "") => format!("HTTP {}, {c}", self.status),
                    (c, d) => format!("HTTP {}, {c}: {d}", self.status),
                }
            }
            None => format!("HTTP {}", self.status),
        }
    }
}

/// Sends one request (no redirects followed) and reads the answer.
pub(crate) async fn send(
    client: &HttpClient,
    method: Method,
    url: &str,
    body: Option<(&'static str, String)>,
    authorization: Option<&str>,
) -> Result<Answer> {
    let uri: Uri = url.parse().map_err(|e| auth_error(format!("invalid OAuth URL {url:?}: {e}")))?;
    let mut req = Request::builder().method(method).uri(uri).header(ACCEPT, "application/json");
    if let Some(a) = authorization {
        req = req.header(
            AUTHORIZATION,
            HeaderValue::from_str(a).map_err(|_| Error::usage("invalid client credentials for HTTP Basic"))?,
        );
    }
    let payload = match body {
        Some((content_type, text)) => {
            req = req.header(CONTENT_TYPE, content_type);
            Bytes::from(text)
        }
        None => Bytes::new(),
    };
    let req = req
        .body(RequestBody::new(payload))
        .map_err(|e| Error::internal(format!("cannot build an OAuth request: {e}")))?;
    let resp = tokio::time::timeout(TIMEOUT, client.request(req))
        .await
        .map_err(|_| auth_error(format!("{url} did not answer within {} s", TIMEOUT.as_secs())))?
        .map_err(|e| auth_error(format!("cannot reach {url}: {e}")))?;
    let status = resp.status();
    let location = resp.headers().get(LOCATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = Limited::new(resp.into_body(), BODY_LIMIT)
        .collect()
        .await
        .map_err(|e| auth_error(format!("reading the answer of {url} failed: {e}")))?
        .to_bytes()
        .to_vec();
    Ok(Answer { status, location, body })
}

/// GETs a JSON document; `None` when the server has none there (any non-2xx answer).
pub(crate) async fn get_json(client: &HttpClient, url: &str) -> Result<Option<Value>> {
    let answer = send(client, Method::GET, url, None, None).await?;
    if !answer.status.is_success() {
        return Ok(None);
    }
    answer.json().map(Some).ok_or_else(|| auth_error(format!("{url} did not answer with a JSON document")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_round_trips() {
        let body =
            form_encode(&[("scope", "mcp:read mcp:write"), ("redirect_uri", "http://localhost:3000/cb?x=1&y=é")]);
        assert_eq!(
            body,
            "scope=mcp%3Aread+mcp%3Awrite&redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcb%3Fx%3D1%26y%3D%C3%A9"
        );
        let parsed = query_params(&format!("http://cb/?{body}"));
        assert_eq!(parsed[0], ("scope".into(), "mcp:read mcp:write".into()));
        assert_eq!(parsed[1].1, "http://localhost:3000/cb?x=1&y=é");
        assert_eq!(form_encode(&[("k", "a~b*c")]), "k=a%7Eb*c");
    }

    #[test]
    fn query_params_of_a_redirect() {
        let p = query_params("http://localhost:3000/callback?code=abc&state=s%2B1&iss=http%3A%2F%2Flocalhost%3A9#frag");
        assert_eq!(
            p,
            vec![
                ("code".into(), "abc".into()),
                ("state".into(), "s+1".into()),
                ("iss".into(), "http://localhost:9".into())
            ]
        );
        assert!(query_params("http://x/cb").is_empty());
        // A truncated escape is not a parameter, nor is one that is not UTF-8 once decoded.
        assert!(query_params("http://x/cb?code=%4").is_empty());
        assert_eq!(query_params("http://x/cb?code=%FF&state=a+b%2Bc&"), vec![("state".into(), "a b+c".into())]);
    }

    #[test]
    fn pkce_s256_matches_rfc7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let v = random_token(32).unwrap();
        assert_eq!(v.len(), 43);
        assert_ne!(v, random_token(32).unwrap());
    }

    #[test]
    fn issuer_metadata_urls_in_the_spec_order() {
        assert_eq!(
            authorization_server_metadata_urls("https://a.example/tenant1").unwrap(),
            [
                "https://a.example/.well-known/oauth-authorization-server/tenant1",
                "https://a.example/.well-known/openid-configuration/tenant1",
                "https://a.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://a.example").unwrap(),
            [
                "https://a.example/.well-known/oauth-authorization-server",
                "https://a.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn basic_credentials_encode_each_part() {
        assert_eq!(
            basic_credentials("a b", "c:d"),
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("a+b:c%3Ad"))
        );
    }
}
