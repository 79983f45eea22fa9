//! Which era the server speaks, found as the specification says, and the legacy handshake.
//!
//! * stdio: probe with `server/discover` (short timeout). A `DiscoverResult` or a recognized
//!   modern error means modern; any other error, or silence, means legacy.
//! * HTTP: the modern request first. A `DiscoverResult` means modern; an HTTP 400/404/405
//!   whose body is a recognized modern JSON-RPC error means modern too (-32022 is answered by
//!   retrying with a version of its `data.supported`); anything else falls back to `initialize`.
//!
//! The legacy era (2025-11-25, 2025-06-18, 2025-03-26): `initialize`, then
//! `notifications/initialized`; on HTTP the `Mcp-Session-Id` is kept and the session's GET
//! stream opened.

use super::conn::{Inner, into_result};
use super::options::{CallOptions, is_legacy_version};
use crate::era::Era;
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{self, ErrorObject, Notification, Outcome};
use crate::schema::{DiscoverResult, Implementation, SERVER_INFO_META_KEY, ServerCapabilities};
use crate::transport::http::client::GetStream;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// What the discovery probe found out.
enum Probe {
    Modern,
    Legacy,
    Retry,
}

/// Finds the era at connect time and sets it up.
pub(crate) async fn establish(inner: &Arc<Inner>) -> Result<()> {
    let _lock = inner.era_lock.lock().await;
    if let Some(version) = inner.options.modern_version().map(str::to_owned) {
        inner.update_state(|s| {
            s.era = Era::Modern;
            s.version = version;
        });
        for _ in 0..3 {
            match probe(inner).await? {
                Probe::Modern => return Ok(()),
                Probe::Legacy => break,
                Probe::Retry => continue,
            }
        }
    }
    initialize(inner).await
}

/// Whether a JSON-RPC error can only come from a modern server.
fn is_modern_error(e: &ErrorObject, http_status: Option<u16>) -> bool {
    match e.code {
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION
        | jsonrpc::HEADER_MISMATCH
        | jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY => true,
        jsonrpc::INVALID_PARAMS => {
            let text = format!("{} {}", e.message, e.data.as_ref().map(Value::to_string).unwrap_or_default())
                .to_ascii_lowercase();
            text.contains("_meta") || text.contains("io.modelcontextprotocol/")
        }
        // On HTTP a modern server answers an unknown method with 404 and this body; a legacy
        // one answers before initialize with its own error (on stdio, commonly this code).
        jsonrpc::METHOD_NOT_FOUND => http_status == Some(404),
        _ => false,
    }
}

fn legacy_allowed(inner: &Inner) -> bool {
    inner.options.legacy_versions().next().is_some()
}

async fn probe(inner: &Arc<Inner>) -> Result<Probe> {
    let http = inner.wire.is_http();
    let timeout =
        if http || !legacy_allowed(inner) { inner.options.request_timeout } else { inner.options.probe_timeout };
    let opts = CallOptions::default();
    let mut out = inner.outbound("server/discover", Map::new(), &opts);
    out.cancel_on_drop = false;
    match inner.exchange(out, &opts, timeout).await {
        Ok((resp, status)) => match resp.outcome {
            Outcome::Result(v) => on_discover(inner, v),
            Outcome::Error(e) if e.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => {
                if switch_version(inner, e.data.as_ref()) {
                    Ok(Probe::Retry)
                } else if lists_legacy_version(inner, e.data.as_ref()) {
                    Ok(Probe::Legacy)
                } else {
                    Err(Error::remote(e))
                }
            }
            Outcome::Error(e) if is_modern_error(&e, status) => {
                if e.code == jsonrpc::METHOD_NOT_FOUND {
                    // Modern, without server/discover: go on without knowing its capabilities.
                    return Ok(Probe::Modern);
                }
                Err(Error::remote(e))
            }
            Outcome::Error(e) => {
                tracing::debug!(code = e.code, message = %e.message, "server/discover failed: taking the server for a legacy one");
                legacy_or(inner, Error::remote(e))
            }
        },
        Err(e) if e.kind() == ErrorKind::Timeout && !http => legacy_or(inner, e),
        Err(e) if http && matches!(http_status(&e), Some(400 | 404 | 405)) => legacy_or(inner, e),
        Err(e) => Err(e),
    }
}

fn http_status(e: &Error) -> Option<u64> {
    e.data().and_then(|d| d.get("httpStatus")).and_then(Value::as_u64)
}

fn legacy_or(inner: &Inner, e: Error) -> Result<Probe> {
    if legacy_allowed(inner) {
        Ok(Probe::Legacy)
    } else {
        Err(Error::new(
            e.kind(),
            format!(
                "the MCP server does not speak a modern protocol version ({e}), and this client is set up for modern versions only"
            ),
        ))
    }
}

fn on_discover(inner: &Arc<Inner>, v: Value) -> Result<Probe> {
    let Ok(d) = serde_json::from_value::<DiscoverResult>(v.clone()) else {
        tracing::debug!("the answer to server/discover is not a DiscoverResult: taking the server for a legacy one");
        return legacy_or(
            inner,
            Error::new(ErrorKind::ParseError, "the answer to server/discover is not a DiscoverResult"),
        );
    };
    let ours: Vec<&str> =
        inner.options.protocol_versions.iter().map(String::as_str).filter(|v| !is_legacy_version(v)).collect();
    let chosen = ours.iter().find(|v| d.supported_versions.iter().any(|s| s == *v));
    let Some(chosen) = chosen else {
        let legacy = d.supported_versions.iter().any(|s| inner.options.legacy_versions().any(|l| l == s));
        if legacy {
            return Ok(Probe::Legacy);
        }
        return Err(Error::new(
            ErrorKind::UnsupportedProtocolVersion,
            format!(
                "the MCP server supports {:?}; this client supports {:?}",
                d.supported_versions, inner.options.protocol_versions
            ),
        ));
    };
    let server_info = d
        .meta
        .as_ref()
        .and_then(|m| m.get(SERVER_INFO_META_KEY))
        .or_else(|| d.extra.get("serverInfo"))
        .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok());
    inner.update_state(|s| {
        s.era = Era::Modern;
        s.version = chosen.to_string();
        s.server_info = server_info;
        s.capabilities = d.capabilities.clone();
        s.instructions = d.instructions.clone();
    });
    if inner.options.cache {
        if let Some(k) = inner.cache.key("server/discover", &Map::new(), inner.authorization().as_deref()) {
            inner.cache.put(&k, &v);
        }
    }
    Ok(Probe::Modern)
}

/// Picks a version of an `UnsupportedProtocolVersionError`'s `data.supported`: a modern one
/// the client speaks (true: retry), else false.
fn switch_version(inner: &Inner, data: Option<&Value>) -> bool {
    let supported: Vec<String> = data
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let chosen = inner.options.protocol_versions.iter().find(|v| !is_legacy_version(v) && supported.contains(v));
    match chosen {
        Some(v) => {
            let v = v.clone();
            inner.update_state(|s| s.version = v);
            true
        }
        None => false,
    }
}

/// Whether an `UnsupportedProtocolVersionError`'s `data.supported` lists a legacy version the
/// client speaks.
fn lists_legacy_version(inner: &Inner, data: Option<&Value>) -> bool {
    let supported = data.and_then(|d| d.get("supported")).and_then(Value::as_array);
    supported
        .is_some_and(|s| s.iter().filter_map(Value::as_str).any(|v| inner.options.legacy_versions().any(|l| l == v)))
}

/// After an `UnsupportedProtocolVersionError` on a request: switch to a supported modern
/// version, or fall back to a legacy session when the server only lists legacy ones. True
/// when the request should be retried.
pub(crate) async fn renegotiate(inner: &Arc<Inner>, data: Option<&Value>) -> Result<bool> {
    if switch_version(inner, data) {
        return Ok(true);
    }
    if lists_legacy_version(inner, data) {
        let _lock = inner.era_lock.lock().await;
        if inner.state().era == Era::Modern {
            initialize(inner).await?;
        }
        return Ok(true);
    }
    Ok(false)
}

/// Starts a new legacy session after the server ended the previous one.
pub(crate) async fn reinitialize(inner: &Arc<Inner>) -> Result<()> {
    let _lock = inner.era_lock.lock().await;
    if let super::wire::Wire::Http(t) = &inner.wire {
        t.reset_session();
    }
    initialize(inner).await
}

/// The legacy handshake: `initialize`, `notifications/initialized`, then (HTTP) the session's
/// GET stream and (when asked) `logging/setLevel`.
async fn initialize(inner: &Arc<Inner>) -> Result<()> {
    let Some(version) = inner.options.legacy_versions().next().map(str::to_owned) else {
        return Err(Error::new(
            ErrorKind::UnsupportedProtocolVersion,
            "the MCP server needs the legacy initialize handshake, and this client is set up for modern versions only",
        ));
    };
    inner.update_state(|s| {
        s.era = Era::Legacy;
        s.version = version.clone();
    });
    let mut params = Map::new();
    params.insert("protocolVersion".into(), json!(version));
    params.insert(
        "capabilities".into(),
        serde_json::to_value(inner.options.capabilities()).unwrap_or_else(|_| json!({})),
    );
    params.insert("clientInfo".into(), serde_json::to_value(&inner.options.client_info).unwrap_or(Value::Null));
    let opts = CallOptions::default();
    let out = inner.outbound("initialize", params, &opts);
    let (resp, _) = inner.exchange(out, &opts, inner.options.request_timeout).await?;
    let result = into_result(resp)?;
    let negotiated = result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
    if !inner.options.legacy_versions().any(|v| v == negotiated) {
        return Err(Error::new(
            ErrorKind::UnsupportedProtocolVersion,
            format!(
                "the MCP server chose protocol version {negotiated:?}, which this client does not speak ({:?})",
                inner.options.protocol_versions
            ),
        ));
    }
    let capabilities: ServerCapabilities =
        result.get("capabilities").cloned().and_then(|c| serde_json::from_value(c).ok()).unwrap_or_default();
    let server_info = result.get("serverInfo").cloned().and_then(|i| serde_json::from_value::<Implementation>(i).ok());
    let instructions = result.get("instructions").and_then(Value::as_str).map(str::to_owned);
    let logging = capabilities.logging.is_some();
    inner.update_state(|s| {
        s.version = negotiated.clone();
        s.capabilities = capabilities;
        s.server_info = server_info;
        s.instructions = instructions;
    });
    inner.wire.notify(Notification::new("notifications/initialized", None), Some(negotiated.clone())).await?;
    if inner.options.legacy_get_stream {
        // Until the GET is written, not answered: a server may send no headers on it until its
        // first event (the TypeScript SDK's does), which held every connect for the whole wait;
        // and a server drops what it has for a stream it has not seen, so the GET must reach it
        // before the requests whose handlers use it. `subscribe` waits for the answer.
        inner
            .wire
            .start_listening(
                negotiated.clone(),
                GetStream::Sent,
                inner.options.request_timeout.min(std::time::Duration::from_secs(5)),
            )
            .await;
    }
    if let (Some(level), true) = (inner.options.log_level, logging) {
        let mut p = Map::new();
        p.insert("level".into(), json!(level));
        let out = inner.outbound("logging/setLevel", p, &opts);
        if let Err(e) =
            inner.exchange(out, &opts, inner.options.request_timeout).await.and_then(|(r, _)| into_result(r))
        {
            tracing::debug!("logging/setLevel failed: {e}");
        }
    }
    Ok(())
}
