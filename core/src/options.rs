//! Options as data: every option a binding exposes is a field of a serde struct beside the code
//! it configures, parsed here from JSON (C and Node hand over their options object as JSON
//! text, Python hands over a dict).
//!
//! One schema for every binding:
//!
//! - names are camelCase in JSON (C, Node) and snake_case in Python: each struct takes both
//!   (the snake_case ones as serde aliases, so that Python's dicts deserialize as they are);
//! - durations are milliseconds, and their names end in `Ms` (`_ms` in Python);
//! - an absent option keeps its documented default; an unknown one is an error naming it and
//!   the valid names.
//!
//! [`names`] lists one struct's option names and [`crate::catalog::schema`] all of them, so that
//! each binding's tests can check that it passes every option of the core by its name.
//!
//! ```
//! use mcpaxle::server::ServerOptions;
//! let o: ServerOptions = mcpaxle::options::from_json("server options", serde_json::json!({ "pageSize": 10 })).unwrap();
//! assert_eq!(o.page_size, 10);
//! let e = mcpaxle::options::from_json::<ServerOptions>("server options", serde_json::json!({ "pageSise": 10 })).unwrap_err();
//! assert!(e.message().contains("unknown field `pageSise`, expected one of"));
//! ```

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::time::Duration;

/// Reads options of type `T` from a JSON value; `what` names them in the error (e.g.
/// `"server options"`). The error is [`ErrorKind::Usage`](crate::ErrorKind) with the
/// path of the option at fault and serde's message (for an unknown name, the valid ones):
/// `server options: legacy.idleTimeoutMs: invalid value: integer `-1`, expected u64`.
pub fn from_json<T: DeserializeOwned>(what: &str, value: Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            Error::usage(format!("{what}: {inner}"))
        } else {
            Error::usage(format!("{what}: {path}: {inner}"))
        }
    })
}

/// Reads options of type `T` from JSON text, as [`from_json`]; a JSON `null` is every default.
pub fn from_str<T: DeserializeOwned + Default>(what: &str, text: &str) -> Result<T> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| Error::usage(format!("{what} are not valid JSON: {e}")))?;
    if value.is_null() { Ok(T::default()) } else { from_json(what, value) }
}

/// The option names of `T` as JSON spells them (camelCase), in declaration order; the
/// snake_case aliases Python uses are left out (`page_size` for `pageSize`).
pub fn names<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    serde_aux::serde_introspection::serde_introspect::<T>().iter().copied().filter(|n| !n.contains('_')).collect()
}

/// The Python (snake_case) name of a JSON option name: `pageSize` -> `page_size`,
/// `http2KeepAliveIntervalMs` -> `http2_keep_alive_interval_ms`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A duration in whole milliseconds (`with = "crate::options::ms"`).
pub(crate) mod ms {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// A duration in whole milliseconds, at least 1 (a zero timeout would fail every call).
pub(crate) mod positive_ms {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
        match u64::deserialize(d)? {
            0 => Err(serde::de::Error::custom("a duration must be at least 1 millisecond, not 0")),
            ms => Ok(Duration::from_millis(ms)),
        }
    }
}

/// An optional duration in whole milliseconds, at least 1; `null` for none.
pub(crate) mod opt_positive_ms {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Duration>, D::Error> {
        match Option::<u64>::deserialize(d)? {
            Some(0) => Err(serde::de::Error::custom("a duration must be at least 1 millisecond, not 0")),
            ms => Ok(ms.map(Duration::from_millis)),
        }
    }
}

/// Reads a `T` and applies `rule` to it: its `Err` is the error of the option being read, so
/// [`from_json`] reports it at the option's path (`auth.requiredScopes[0]: …`).
pub(crate) fn checked<'de, D, T>(
    d: D,
    rule: impl FnOnce(&T) -> std::result::Result<(), String>,
) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let value = T::deserialize(d)?;
    rule(&value).map_err(serde::de::Error::custom)?;
    Ok(value)
}

/// Whether `value` is an absolute URI without a fragment (RFC 3986 §4.3), as OAuth wants of a
/// redirect URI (RFC 6749 §3.1.2), a resource indicator (RFC 8707 §2) and an issuer (RFC 8414
/// §2), with one of `schemes` (any scheme when empty) and, for `http` and `https`, a host.
pub(crate) fn is_absolute_uri(value: &str, schemes: &[&str]) -> bool {
    let Ok(uri) = iri_string::types::UriAbsoluteStr::new(value) else { return false };
    let scheme = uri.scheme_str().to_ascii_lowercase();
    let web = scheme == "http" || scheme == "https";
    let host = uri.authority_str().map(|a| a.rsplit('@').next().unwrap_or("")).unwrap_or("");
    (schemes.is_empty() || schemes.contains(&scheme.as_str())) && (!web || !(host.is_empty() || host.starts_with(':')))
}

/// Whether `value` is an issuer identifier as RFC 8414 §2 has them (an absolute `http(s)` URL
/// without query or fragment; `http` for local servers and tests).
pub(crate) fn is_issuer_url(value: &str) -> bool {
    is_absolute_uri(value, &["https", "http"]) && !value.contains('?')
}
