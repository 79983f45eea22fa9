//! Bearer-token protection of a Python server's HTTP endpoint: the core's [`BearerAuth`] from
//! the dict `mcpaxle.BearerAuth` passes, its verifier a Python callable called on the loop that
//! serves the server, through the bridge ([`bridge::call_client`]): never on a runtime thread.

use crate::bridge::{self, BridgeInner};
use crate::errors;
use futures_util::future::BoxFuture;
use mcpaxle::transport::auth::{BearerAuth, TokenInfo, TokenVerifier};
use mcpaxle::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::sync::Arc;

fn usage(message: impl Into<String>) -> PyErr {
    errors::new_py_err("UsageError", message.into())
}

/// A verifier calling `verify(token)` (a coroutine function returning `{"subject", "scopes"}`
/// or `None`) on `bridge`'s loop. What it raises, or a result of another shape, is an `Err`:
/// the core answers `503`.
fn verifier(bridge: &Arc<BridgeInner>, verify: Py<PyAny>) -> TokenVerifier {
    let bridge = bridge.clone();
    let verify = Arc::new(verify);
    Arc::new(move |token: String| -> BoxFuture<'static, Result<Option<TokenInfo>>> {
        let call = bridge::call_client(bridge.clone(), verify.clone(), Value::String(token));
        Box::pin(async move { token_info(call.await?) })
    })
}

/// A verifier's answer: `null` (an invalid token) or a `TokenInfo` as a JSON object.
fn token_info(v: Value) -> Result<Option<TokenInfo>> {
    let wrong =
        || Error::internal(format!("Internal error: the token verifier returned a result of the wrong shape: {v}"));
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

/// The core's [`BearerAuth`] from the dict `mcpaxle.BearerAuth._native()` passes:
/// `resource`, `authorization_servers`, `scopes_supported`, `required_scopes`, `tool_scopes`
/// and `verify` (a coroutine function `(token: str) -> {"subject", "scopes"} | None`), whose
/// calls run on `bridge`'s loop.
pub fn bearer_auth(bridge: &Arc<BridgeInner>, d: &Bound<'_, PyAny>) -> PyResult<BearerAuth> {
    let d = d
        .cast::<PyDict>()
        .map_err(|_| usage("the auth option must be a dict (build it with mcpaxle.BearerAuth)"))?
        .copy()?;
    let verify =
        d.get_item("verify")?.filter(|v| v.is_callable()).ok_or_else(|| usage("BearerAuth needs a callable verify"))?;
    d.del_item("verify")?;
    let mut auth: BearerAuth = crate::server::from_dict(&d, "BearerAuth")?;
    auth.verifier = verifier(bridge, verify.unbind());
    Ok(auth)
}
