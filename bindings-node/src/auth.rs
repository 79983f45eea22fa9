//! Bearer-token protection of a JavaScript server's HTTP endpoint: the core reads the `auth`
//! option of `serveHttp` (its `BearerAuth`; `lib/auth.js` checks its types first); its verifier
//! is a JavaScript function called on the JavaScript thread through a weak threadsafe function,
//! like a handler.

use crate::callbacks::{self, VerifyFn};
use futures_util::future::BoxFuture;
use mcpaxle::transport::auth::{TokenInfo, TokenVerifier};
use mcpaxle::{Error, Result};
use serde_json::Value;
use std::sync::Arc;

/// A verifier calling the JavaScript `verify` and reading its answer.
pub fn verifier(f: VerifyFn) -> TokenVerifier {
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
