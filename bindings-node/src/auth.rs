//! Bearer-token protection of a JavaScript server's HTTP endpoint: the core's [`BearerAuth`]
//! from the `auth` option of `serveHttp` (its types checked by `lib/auth.js`), its verifier a
//! JavaScript function called on the JavaScript thread through a weak threadsafe function,
//! like a handler.

use crate::callbacks::{self, VerifyFn};
use futures_util::future::BoxFuture;
use mcpaxle::transport::auth::{BearerAuth, TokenInfo, TokenVerifier};
use mcpaxle::{Error, Result};
use napi_derive::napi;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// How the HTTP endpoint is protected (the core's [`BearerAuth`]).
#[napi(object, object_to_js = false)]
pub struct AuthConfig {
    /// The canonical URL of this MCP server: the metadata's `resource`, the tokens' audience.
    pub resource: String,
    /// The issuers of the authorization servers that issue tokens for it.
    pub authorization_servers: Vec<String>,
    /// The metadata's `scopes_supported` (default: `requiredScopes`, when any).
    pub scopes_supported: Option<Vec<String>>,
    /// Scopes every request needs.
    pub required_scopes: Option<Vec<String>>,
    /// Scopes a `tools/call` of a given tool needs besides the required ones.
    pub tool_scopes: Option<HashMap<String, Vec<String>>>,
    /// `(token) => Promise<envelope>` whose `ok` is `{subject, scopes}`, or `null` for an
    /// invalid token; an `error` envelope (the user's function failed) answers `503`.
    #[napi(ts_type = "(token: string) => Promise<string>")]
    pub verify: VerifyFn,
}

/// The core's [`BearerAuth`] of an `auth` option.
pub fn bearer_auth(c: AuthConfig) -> BearerAuth {
    BearerAuth {
        resource: c.resource,
        authorization_servers: c.authorization_servers,
        scopes_supported: c.scopes_supported,
        required_scopes: c.required_scopes.unwrap_or_default(),
        tool_scopes: c.tool_scopes.unwrap_or_default(),
        verifier: verifier(c.verify),
    }
}

/// A verifier calling the JavaScript `verify` and reading its answer.
fn verifier(f: VerifyFn) -> TokenVerifier {
    let f = Arc::new(f);
    Arc::new(move |token: String| -> BoxFuture<'static, Result<Option<TokenInfo>>> {
        let f = f.clone();
        Box::pin(async move { token_info(callbacks::answer(&f, token).await?) })
    })
}

/// A verifier's answer: `null` (an invalid token) or `{subject, scopes}`; anything else is an
/// `Err` (the core answers `503`).
fn token_info(v: Value) -> Result<Option<TokenInfo>> {
    let wrong = || Error::internal(format!("the token verifier returned a result of the wrong shape: {v}"));
    let Value::Object(m) = &v else {
        return if v.is_null() { Ok(None) } else { Err(wrong()) };
    };
    let subject = m.get("subject").and_then(Value::as_str).ok_or_else(wrong)?;
    let scopes = match m.get("scopes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => {
            a.iter().map(|s| s.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>().ok_or_else(wrong)?
        }
        Some(_) => return Err(wrong()),
    };
    Ok(Some(TokenInfo::new(subject, scopes)))
}
