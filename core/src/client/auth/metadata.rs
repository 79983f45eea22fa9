//! Finding the authorization server: the `WWW-Authenticate` challenge (RFC 6750 §3), protected
//! resource metadata (RFC 9728) and authorization server metadata (RFC 8414 / OpenID Connect
//! Discovery), with the checks the MCP authorization spec requires of each.

use crate::error::Result;
use crate::transport::http::oauth_wire::{auth_error, split};
use serde_json::Value;

/// What a `401` or `403` said in its `WWW-Authenticate: Bearer ...` header.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// Parses the `Bearer` challenge among the header values (other schemes are skipped).
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Challenge {
        let mut c = Challenge::default();
        for value in values {
            let Some(params) = bearer_params(value) else { continue };
            for (k, v) in params {
                match k.to_ascii_lowercase().as_str() {
                    "resource_metadata" => c.resource_metadata = Some(v),
                    "scope" => c.scope = Some(v),
                    "error" => c.error = Some(v),
                    _ => {}
                }
            }
        }
        c
    }

    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The `auth-param`s of a `Bearer` challenge: `Bearer k="v", k2=v2`.
fn bearer_params(value: &str) -> Option<Vec<(String, String)>> {
    let v = value.trim_start();
    let rest = v.get(..6).filter(|s| s.eq_ignore_ascii_case("bearer")).map(|_| &v[6..])?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let mut out = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == ',') {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ' ' || c == ',' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() {
            break;
        }
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        if chars.peek() != Some(&'=') {
            continue; // a token68 or a bare word: not a parameter
        }
        chars.next();
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let mut val = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => val.extend(chars.next()),
                    '"' => break,
                    c => val.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c == ' ' {
                    break;
                }
                val.push(c);
                chars.next();
            }
        }
        out.push((key, val));
    }
    Some(out)
}

/// Where protected resource metadata is looked for when the challenge names no
/// `resource_metadata`: at the MCP endpoint's path, then at the root (RFC 9728 §3.1).
pub(crate) fn resource_metadata_urls(server_url: &str) -> Result<Vec<String>> {
    let (origin, path) = split(server_url)?;
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    Ok(urls)
}

/// Protected resource metadata: which resource, and who authorizes for it.
#[derive(Debug, Clone)]
pub(crate) struct ResourceMetadata {
    /// The resource identifier exactly as published: sent as `resource` unchanged.
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

fn strings(v: &Value, key: &str) -> Option<Vec<String>> {
    v.get(key).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

impl ResourceMetadata {
    /// Reads the document and checks that it describes the server at `server_url`.
    pub fn from_json(doc: &Value, server_url: &str, from: &str) -> Result<ResourceMetadata> {
        let resource = doc.get("resource").and_then(Value::as_str).unwrap_or_default().to_owned();
        if resource.is_empty() {
            return Err(auth_error(format!("the protected resource metadata at {from} names no resource")));
        }
        if !resource_matches(&resource, server_url) {
            return Err(auth_error(format!(
                "the protected resource metadata at {from} is for {resource:?}, not for this server ({server_url}); \
                 refusing to authorize (a token for another resource must not be obtained or sent)"
            )));
        }
        let authorization_servers = strings(doc, "authorization_servers").unwrap_or_default();
        if authorization_servers.is_empty() {
            return Err(auth_error(format!("the protected resource metadata at {from} lists no authorization server")));
        }
        Ok(ResourceMetadata { resource, authorization_servers, scopes_supported: strings(doc, "scopes_supported") })
    }
}

/// Whether a published resource identifier covers the MCP endpoint: the same origin (scheme
/// and host compared without case), and the endpoint's path equal to or under the resource's.
pub(crate) fn resource_matches(resource: &str, server_url: &str) -> bool {
    let (Ok((r_origin, r_path)), Ok((s_origin, s_path))) = (split(resource), split(server_url)) else {
        return false;
    };
    if !r_origin.eq_ignore_ascii_case(&s_origin) || resource.contains('#') {
        return false;
    }
    r_path.is_empty() || s_path == r_path || s_path.starts_with(&format!("{r_path}/"))
}

/// Client authentication at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenAuth {
    None,
    Basic,
    Post,
    PrivateKeyJwt,
}

impl TokenAuth {
    pub fn name(self) -> &'static str {
        match self {
            TokenAuth::None => "none",
            TokenAuth::Basic => "client_secret_basic",
            TokenAuth::Post => "client_secret_post",
            TokenAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub fn from_name(name: &str) -> Option<TokenAuth> {
        [TokenAuth::None, TokenAuth::Basic, TokenAuth::Post].into_iter().find(|m| m.name() == name)
    }
}

/// Authorization server metadata, validated.
#[derive(Debug, Clone)]
pub(crate) struct ServerMetadata {
    pub issuer: String,
    /// Where the authorization code grant starts (a server for machine clients may have none).
    pub authorization_endpoint: Option<String>,
    /// Whether PKCE with S256 is supported (the authorization code grant needs it).
    pub pkce_s256: bool,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub token_auth_methods: Option<Vec<String>>,
    pub iss_parameter_supported: bool,
    pub client_id_metadata_document_supported: bool,
}

impl ServerMetadata {
    /// Reads and validates a metadata document fetched for `issuer` (RFC 8414 §3.3: the
    /// `issuer` in it must be identical); whether PKCE S256 is supported is for the
    /// authorization code grant to check.
    pub fn from_json(doc: &Value, issuer: &str, from: &str) -> Result<ServerMetadata> {
        let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
        let published = text("issuer").unwrap_or_default();
        if published != issuer {
            return Err(auth_error(format!(
                "the authorization server metadata at {from} is for issuer {published:?}, not {issuer:?}; refusing to use it"
            )));
        }
        let methods = strings(doc, "code_challenge_methods_supported");
        let pkce_s256 = methods.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256"));
        let endpoint = |k: &str| {
            text(k).ok_or_else(|| auth_error(format!("the authorization server metadata at {from} has no {k}")))
        };
        Ok(ServerMetadata {
            issuer: published,
            authorization_endpoint: text("authorization_endpoint"),
            pkce_s256,
            token_endpoint: endpoint("token_endpoint")?,
            registration_endpoint: text("registration_endpoint"),
            scopes_supported: strings(doc, "scopes_supported"),
            token_auth_methods: strings(doc, "token_endpoint_auth_methods_supported"),
            iss_parameter_supported: doc.get("authorization_response_iss_parameter_supported").and_then(Value::as_bool)
                == Some(true),
            client_id_metadata_document_supported: doc
                .get("client_id_metadata_document_supported")
                .and_then(Value::as_bool)
                == Some(true),
        })
    }

    /// How a client authenticates here: `with_secret` picks among the secret-based methods
    /// the server lists (RFC 8414's default is `client_secret_basic`), otherwise `none`.
    pub fn token_auth(&self, with_secret: bool) -> TokenAuth {
        if !with_secret {
            return TokenAuth::None;
        }
        match &self.token_auth_methods {
            None => TokenAuth::Basic,
            Some(list) => list
                .iter()
                .filter_map(|m| TokenAuth::from_name(m))
                .find(|m| *m != TokenAuth::None)
                .unwrap_or(TokenAuth::Basic),
        }
    }

    /// The method to ask for in dynamic registration: `none` (a public client) when the
    /// server takes it, else the first secret-based method it lists.
    pub fn registration_auth(&self) -> TokenAuth {
        match &self.token_auth_methods {
            None => TokenAuth::None,
            Some(list) if list.iter().any(|m| m == "none") => TokenAuth::None,
            Some(list) => list.iter().filter_map(|m| TokenAuth::from_name(m)).next().unwrap_or(TokenAuth::None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn challenges() {
        let c = Challenge::parse([
            r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", scope="a b""#,
        ]);
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/.well-known/oauth-protected-resource/mcp"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        let c = Challenge::parse([
            "Basic realm=\"x\"",
            r#"bearer error="insufficient_scope",scope=mcp:write, error_description="say \"no\"""#,
        ]);
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("mcp:write"));
        assert_eq!(Challenge::parse(["Bearer"]), Challenge::default());
        assert_eq!(Challenge::parse(["Bearerx scope=a"]), Challenge::default());
    }

    #[test]
    fn discovery_urls_in_the_spec_order() {
        assert_eq!(
            resource_metadata_urls("http://h:1/mcp").unwrap(),
            ["http://h:1/.well-known/oauth-protected-resource/mcp", "http://h:1/.well-known/oauth-protected-resource"]
        );
        assert_eq!(resource_metadata_urls("http://h:1/").unwrap(), ["http://h:1/.well-known/oauth-protected-resource"]);
    }

    #[test]
    fn resources_must_cover_the_server() {
        assert!(resource_matches("http://localhost:9/mcp", "http://localhost:9/mcp"));
        assert!(resource_matches("http://localhost:9", "http://localhost:9/mcp"));
        assert!(resource_matches("HTTP://LOCALHOST:9/", "http://localhost:9/mcp"));
        assert!(!resource_matches("https://evil.example.com/mcp", "http://localhost:9/mcp"));
        assert!(!resource_matches("http://localhost:9/mc", "http://localhost:9/mcp"));
        assert!(!resource_matches("http://localhost:10/mcp", "http://localhost:9/mcp"));
        let doc = json!({ "resource": "https://evil.example.com/mcp", "authorization_servers": ["http://as"] });
        let e = ResourceMetadata::from_json(&doc, "http://localhost:9/mcp", "http://localhost:9/prm").unwrap_err();
        assert!(e.message().contains("refusing"), "{e}");
    }

    #[test]
    fn server_metadata_is_validated() {
        let doc = json!({
            "issuer": "http://as/t", "authorization_endpoint": "http://as/t/authorize", "token_endpoint": "http://as/t/token",
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["client_secret_post"]
        });
        let m = ServerMetadata::from_json(&doc, "http://as/t", "x").unwrap();
        assert_eq!(m.token_auth(true), TokenAuth::Post);
        assert_eq!(m.token_auth(false), TokenAuth::None);
        assert_eq!(m.registration_auth(), TokenAuth::Post);
        assert!(
            ServerMetadata::from_json(&doc, "http://as/t/", "x")
                .unwrap_err()
                .message()
                .contains("not \"http://as/t/\"")
        );
        let mut no_pkce = doc.clone();
        no_pkce.as_object_mut().unwrap().remove("code_challenge_methods_supported");
        // Read, for the client credentials grant; the authorization code grant refuses it.
        assert!(!ServerMetadata::from_json(&no_pkce, "http://as/t", "x").unwrap().pkce_s256);
    }
}
