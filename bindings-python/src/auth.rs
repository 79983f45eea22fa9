//! Bearer-token protection of a Python server's HTTP endpoint: the core's [`BearerAuth`] from
//! the dict `mcpaxle.BearerAuth` passes, its verifier a Python callable called on the loop that
//! serves the server, through the bridge ([`bridge::call_client`]): never on a runtime thread.

use crate::bridge::{self, BridgeInner};
use crate::convert;
use crate::errors::{core_err, usage};
use futures_util::future::BoxFuture;
use mcpaxle::Result;
use mcpaxle::transport::auth::{BearerAuth, TokenInfo, TokenVerifier};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::sync::Arc;

/// A verifier calling `verify(token)` (a coroutine function returning `{"subject", "scopes"}`
/// or `None`) on `bridge`'s loop, its answer read by the core ([`TokenInfo::from_answer`]). What
/// it raises, or an answer the core refuses, is an `Err`: the core answers `503`.
fn verifier(bridge: &Arc<BridgeInner>, verify: Py<PyAny>) -> TokenVerifier {
    let bridge = bridge.clone();
    let verify = Arc::new(verify);
    Arc::new(move |token: String| -> BoxFuture<'static, Result<Option<TokenInfo>>> {
        let call = bridge::call_client(bridge.clone(), verify.clone(), Value::String(token));
        Box::pin(async move { TokenInfo::from_answer(call.await?) })
    })
}

/// The JSON object of a dict of options, its `None` values left out (absent: the core's
/// default); a value that is not JSON is a `UsageError` naming its key and `what`.
fn options_value(d: &Bound<'_, PyDict>, what: &str) -> PyResult<Value> {
    let mut m = serde_json::Map::new();
    for (k, v) in d.iter() {
        if !v.is_none() {
            let key: String = k.extract()?;
            let value = convert::from_py(&v).map_err(|e| usage(format!("{what}: {key}: {}", e.value(v.py()))))?;
            m.insert(key, value);
        }
    }
    Ok(Value::Object(m))
}

/// Checks `options` (a dict by the Python names, `None` for absent) as the core's options of
/// `area` (a name of `options_schema()`: `"bearerAuth"`, `"oauth"`, ...) by the rules the core
/// reads them with; a `UsageError` naming `what` and the option at fault otherwise. For the
/// typed façades (`mcpaxle.BearerAuth`, `mcpaxle.OAuth`), which check when they are built.
#[pyfunction]
pub fn check_options(area: &str, what: &str, options: &Bound<'_, PyDict>) -> PyResult<()> {
    mcpaxle::catalog::check(area, what, options_value(options, what)?).map_err(core_err)
}

/// Checks a token verifier's answer (`{"subject": ..., "scopes": [...]}`) by the core's rule
/// for it ([`TokenInfo::from_answer`]); a `UsageError` saying what is wrong otherwise. For
/// `mcpaxle.TokenInfo`, which checks when it is built.
#[pyfunction]
pub fn check_token_info(answer: &Bound<'_, PyDict>) -> PyResult<()> {
    let what = "TokenInfo";
    TokenInfo::from_answer(options_value(answer, what)?).map(drop).map_err(core_err)
}

/// The core's [`BearerAuth`] from the dict `mcpaxle.BearerAuth._native()` passes:
/// `resource`, `authorization_servers`, `scopes_supported`, `required_scopes`, `tool_scopes`,
/// `jwt`, `introspection` and `verify` (a coroutine function `(token: str) -> {"subject",
/// "scopes"} | None`, whose calls run on `bridge`'s loop; `None` with `jwt` or `introspection`:
/// the core's built-in verifiers).
pub fn bearer_auth(bridge: &Arc<BridgeInner>, d: &Bound<'_, PyAny>) -> PyResult<BearerAuth> {
    let d = d
        .cast::<PyDict>()
        .map_err(|_| usage("the auth option must be a dict (build it with mcpaxle.BearerAuth)"))?
        .copy()?;
    let verify = d.get_item("verify")?.filter(|v| !v.is_none());
    if verify.as_ref().is_some_and(|v| !v.is_callable()) {
        return Err(usage("BearerAuth's verify must be a coroutine function"));
    }
    if d.contains("verify")? {
        d.del_item("verify")?;
    }
    let mut auth: BearerAuth = crate::server::from_dict(&d, "BearerAuth")?;
    auth.use_verifier(verify.map(|v| verifier(bridge, v.unbind()))).map_err(core_err)?;
    Ok(auth)
}
