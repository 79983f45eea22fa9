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
//! [`names`] lists one struct's option names and [`schema`] all of them, so that each binding's
//! tests can check that it passes every option of the core by its name.
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
use std::collections::BTreeMap;
use std::time::Duration;

/// Reads options of type `T` from a JSON value; `what` names them in the error (e.g.
/// `"server options"`). The error is [`ErrorKind::InvalidParams`](crate::ErrorKind) with the
/// path of the option at fault and serde's message (for an unknown name, the valid ones):
/// `server options: legacy.idleTimeoutMs: invalid value: integer `-1`, expected u64`.
pub fn from_json<T: DeserializeOwned>(what: &str, value: Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            Error::invalid_params(format!("{what}: {inner}"))
        } else {
            Error::invalid_params(format!("{what}: {path}: {inner}"))
        }
    })
}

/// Reads options of type `T` from JSON text, as [`from_json`]; a JSON `null` is every default.
pub fn from_str<T: DeserializeOwned + Default>(what: &str, text: &str) -> Result<T> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| Error::invalid_params(format!("{what} are not valid JSON: {e}")))?;
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

/// Every options struct of the core by the name the bindings know it under, with its option
/// names: `server` ([`ServerOptions`](crate::server::ServerOptions)), `legacy`, `cache`,
/// `cacheHint`, `tool`, `template`, `http`, `connections`, `stdio`, `bearerAuth`, `client`,
/// `oauth` and `call`. A binding's test iterates it to check that every option reaches it.
pub fn schema() -> BTreeMap<&'static str, Vec<&'static str>> {
    use crate::client::{CallOptions, ClientOptions, OAuthOptions};
    use crate::legacy::LegacyOptions;
    use crate::server::{CacheDefaults, CacheHint, ServerOptions, TemplateOptions, ToolOptions};
    use crate::transport::auth::BearerAuth;
    use crate::transport::connections::ConnectionLimits;
    use crate::transport::http::HttpOptions;
    use crate::transport::stdio::StdioOptions;
    BTreeMap::from([
        ("server", names::<ServerOptions>()),
        ("legacy", names::<LegacyOptions>()),
        ("cache", names::<CacheDefaults>()),
        ("cacheHint", names::<CacheHint>()),
        ("tool", names::<ToolOptions>()),
        ("template", names::<TemplateOptions>()),
        ("http", names::<HttpOptions>()),
        ("connections", names::<ConnectionLimits>()),
        ("stdio", names::<StdioOptions>()),
        ("bearerAuth", names::<BearerAuth>()),
        ("client", names::<ClientOptions>()),
        ("oauth", names::<OAuthOptions>()),
        ("call", names::<CallOptions>()),
    ])
}

/// [`schema`] as JSON: `{"server": ["title", ...], ...}`.
pub fn schema_json() -> Value {
    serde_json::to_value(schema()).unwrap_or_default()
}

/// A valid value for every option of every struct of [`schema`], by the same area names:
/// `{"server": {"title": "Example", ...}, ...}`. A binding's test hands each area to the
/// binding's API by the binding's own names, so an option added in the core and not reaching
/// a binding fails that test (the core's own test checks these cover [`schema`] exactly).
pub fn examples() -> Value {
    serde_json::json!({
        "server": {
            "title": "Example", "instructions": "Say hello.", "pageSize": 50, "serverInfoInResults": true,
            "enable": ["tools"], "stateSecret": "s3cret", "stateTtlMs": 60000,
            "cache": { "tools": { "ttlMs": 1000, "cacheScope": "public" } },
            "legacy": { "maxSessions": 10 }, "handlerTimeoutMs": 30000
        },
        "legacy": {
            "enabled": true, "maxSessions": 10, "maxSessionsPerPrincipal": 5, "maxSessionsPerPeer": 5,
            "idleTimeoutMs": 60000, "uninitializedTimeoutMs": 5000, "requestTimeoutMs": 10000
        },
        "cache": {
            "discover": { "ttlMs": 1 }, "tools": { "ttlMs": 1 }, "prompts": { "ttlMs": 1 },
            "resources": { "ttlMs": 1 }, "templates": { "ttlMs": 1 }, "read": { "ttlMs": 1 }
        },
        "cacheHint": { "ttlMs": 1000, "cacheScope": "private" },
        "tool": { "timeoutMs": 1000 },
        "template": { "allowPathTraversal": false },
        "http": {
            "path": "/mcp", "maxBody": 1048576, "allowedHosts": ["localhost"], "allowedOrigins": [],
            "keepAliveMs": 15000, "drainTimeoutMs": 1000, "auth": null, "connections": { "maxConnections": 64 }
        },
        "connections": {
            "maxConnections": 64, "headerReadTimeoutMs": 10000, "bodyReadTimeoutMs": 30000, "idleTimeoutMs": 60000,
            "http2KeepAliveIntervalMs": 30000, "http2KeepAliveTimeoutMs": 20000, "maxHeaderBytes": 65536,
            "http2MaxConcurrentStreams": 100, "maxBodyBytesInFlight": 134217728
        },
        "stdio": { "maxMessageSize": 1048576, "drainTimeoutMs": 1000, "maxOutboundQueue": 64 },
        "bearerAuth": {
            "resource": "https://mcp.example.com/mcp", "authorizationServers": ["https://auth.example.com"],
            "scopesSupported": ["notes:read"], "requiredScopes": ["notes:read"], "toolScopes": { "write": ["notes:write"] }
        },
        "client": {
            "clientInfo": { "name": "example", "version": "1.0.0" }, "capabilities": null,
            "protocolVersions": ["2026-07-28", "2025-11-25"], "requestTimeoutMs": 60000,
            "resetTimeoutOnProgress": true, "maxRequestTimeoutMs": 600000, "probeTimeoutMs": 5000, "cache": true,
            "headers": { "X-Example": "1" }, "oauth": null, "maxInputRounds": 8, "logLevel": null,
            "legacyGetStream": true, "maxMessageSize": 16777216, "env": {}, "inheritEnv": false, "cwd": null,
            "stderr": "inherit", "shutdownTimeoutMs": 2000
        },
        "oauth": {
            "redirectUri": "http://127.0.0.1:8765/callback", "clientId": "example", "clientSecret": null,
            "issuer": null, "clientMetadataUrl": null, "clientName": "Example", "maxAuthorizations": 3
        },
        "call": { "timeoutMs": 5000, "meta": { "example": true }, "logLevel": "info", "bypassCache": false }
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ServerOptions;
    use serde_json::json;

    #[test]
    fn unknown_names_are_refused_with_the_valid_ones() {
        let e = from_json::<ServerOptions>("server options", json!({ "pageSise": 3 })).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidParams);
        assert!(
            e.message().starts_with("server options: pageSise: unknown field `pageSise`, expected one of `title`"),
            "{e}"
        );
        assert!(e.message().contains("`handlerTimeoutMs`"), "{e}");
    }

    #[test]
    fn the_option_at_fault_is_named_by_its_path() {
        let e = from_json::<ServerOptions>("server options", json!({ "legacy": { "idleTimeoutMs": -1 } })).unwrap_err();
        assert_eq!(e.message(), "server options: legacy.idleTimeoutMs: invalid value: integer `-1`, expected u64");
        let e =
            from_json::<ServerOptions>("server options", json!({ "cache": { "tools": { "ttlMs": 1, "scope": "x" } } }))
                .unwrap_err();
        assert!(e.message().starts_with("server options: cache.tools.scope: unknown field `scope`"), "{e}");
    }

    #[test]
    fn null_text_is_every_default_and_bad_text_is_named() {
        let o: ServerOptions = from_str("server options", "null").unwrap();
        assert_eq!(o, ServerOptions::default());
        let e = from_str::<ServerOptions>("server options", "{").unwrap_err();
        assert!(e.message().starts_with("server options are not valid JSON"), "{e}");
    }

    #[test]
    fn the_examples_cover_the_schema_and_are_valid() {
        use crate::client::{CallOptions, ClientOptions, OAuthOptions};
        use crate::legacy::LegacyOptions;
        use crate::server::{CacheDefaults, CacheHint, TemplateOptions, ToolOptions};
        use crate::transport::auth::BearerAuth;
        use crate::transport::connections::ConnectionLimits;
        use crate::transport::http::HttpOptions;
        use crate::transport::stdio::StdioOptions;
        let examples = examples();
        let schema = schema();
        assert_eq!(
            examples.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>(),
            schema.keys().copied().collect::<Vec<_>>()
        );
        for (area, names) in &schema {
            let mut given: Vec<&str> = examples[area].as_object().unwrap().keys().map(String::as_str).collect();
            let mut want = names.clone();
            given.sort_unstable();
            want.sort_unstable();
            assert_eq!(given, want, "the example of {area} names every option");
        }
        fn ok<T: DeserializeOwned>(v: &Value) {
            from_json::<T>("example", v.clone()).unwrap();
        }
        ok::<ServerOptions>(&examples["server"]);
        ok::<LegacyOptions>(&examples["legacy"]);
        ok::<CacheDefaults>(&examples["cache"]);
        ok::<CacheHint>(&examples["cacheHint"]);
        ok::<ToolOptions>(&examples["tool"]);
        ok::<TemplateOptions>(&examples["template"]);
        ok::<HttpOptions>(&examples["http"]);
        ok::<ConnectionLimits>(&examples["connections"]);
        ok::<StdioOptions>(&examples["stdio"]);
        ok::<BearerAuth>(&examples["bearerAuth"]);
        ok::<ClientOptions>(&examples["client"]);
        ok::<OAuthOptions>(&examples["oauth"]);
        ok::<CallOptions>(&examples["call"]);
    }

    #[test]
    fn every_option_takes_its_python_name_too() {
        use crate::client::ClientOptions;
        let o: ServerOptions = from_json("server options", json!({ "page_size": 3, "handler_timeout_ms": 5 })).unwrap();
        assert_eq!((o.page_size, o.handler_timeout), (3, Some(Duration::from_millis(5))));
        let c: ClientOptions = from_json("client options", json!({ "request_timeout_ms": 7 })).unwrap();
        assert_eq!(c.request_timeout, Duration::from_millis(7));
        assert_eq!(snake_case("http2KeepAliveIntervalMs"), "http2_keep_alive_interval_ms");
        let aliases = serde_aux::serde_introspection::serde_introspect::<ServerOptions>();
        for name in names::<ServerOptions>() {
            let snake = snake_case(name);
            assert!(snake == name || aliases.contains(&snake.as_str()), "{name} has no alias {snake}");
        }
    }

    #[test]
    fn every_duration_option_ends_in_ms() {
        let schema = schema();
        for (area, names) in &schema {
            assert!(!names.is_empty(), "{area} lists no option");
            for name in names {
                let lower = name.to_ascii_lowercase();
                let duration = ["timeout", "ttl", "interval", "keepalive"].iter().any(|w| lower.contains(w))
                    && !lower.starts_with("resettimeout");
                assert!(!duration || name.ends_with("Ms"), "{area}.{name} is a duration without Ms");
            }
        }
        assert!(schema["client"].contains(&"requestTimeoutMs"));
        assert!(schema["http"].contains(&"keepAliveMs"));
    }

    #[test]
    fn http_stdio_and_auth_options_from_data() {
        use crate::transport::http::HttpOptions;
        use crate::transport::stdio::StdioOptions;
        let o: HttpOptions = from_json(
            "HTTP options",
            json!({
                "path": "/x", "maxBody": 10, "allowedHosts": ["h"], "allowedOrigins": ["*"],
                "keepAliveMs": 250, "drainTimeoutMs": 0,
                "auth": { "resource": "https://r/mcp", "authorizationServers": ["https://as"], "requiredScopes": ["a"] },
                "connections": { "maxConnections": 5, "idleTimeoutMs": 70 }
            }),
        )
        .unwrap();
        assert_eq!((o.path.as_str(), o.max_body), ("/x", 10));
        assert_eq!((o.allowed_hosts, o.allowed_origins), (Some(vec!["h".to_owned()]), vec!["*".to_owned()]));
        assert_eq!((o.keep_alive, o.drain_timeout), (Duration::from_millis(250), Duration::ZERO));
        let auth = o.auth.unwrap();
        assert_eq!((auth.resource.as_str(), auth.required_scopes), ("https://r/mcp", vec!["a".to_owned()]));
        assert!(auth.tool_scopes.is_empty() && auth.scopes_supported.is_none());
        assert_eq!((o.connections.max_connections, o.connections.idle_timeout), (Some(5), Duration::from_millis(70)));
        let d: HttpOptions = from_json("HTTP options", json!({})).unwrap();
        assert_eq!(
            (d.path.as_str(), d.keep_alive, d.drain_timeout),
            ("/mcp", Duration::from_secs(15), Duration::from_secs(10))
        );
        assert!(from_json::<HttpOptions>("HTTP options", json!({ "keepAlive": 1 })).is_err());
        assert!(from_json::<HttpOptions>("HTTP options", json!({ "auth": { "resource": "r" } })).is_err());

        let s: StdioOptions =
            from_json("stdio options", json!({ "maxOutboundQueue": 2, "drainTimeoutMs": 7, "maxMessageSize": 9 }))
                .unwrap();
        assert_eq!((s.max_outbound_queue, s.drain_timeout, s.max_message_size), (2, Duration::from_millis(7), 9));
        let e = from_json::<StdioOptions>("stdio options", json!({ "maxOutboundQueue": 0 })).unwrap_err();
        assert_eq!(e.message(), "stdio options: maxOutboundQueue: must be at least 1, not 0");
    }

    #[tokio::test]
    async fn a_bearer_auth_from_data_refuses_until_its_verifier_is_set() {
        use crate::transport::auth::BearerAuth;
        let auth: BearerAuth =
            from_json("auth", json!({ "resource": "https://r/mcp", "authorizationServers": ["https://as"] })).unwrap();
        assert!((auth.verifier)("t".into()).await.is_err());
    }

    #[test]
    fn cache_hints_default_to_private_and_keep_the_kinds_left_out() {
        use crate::schema::CacheScope;
        use crate::server::{CacheDefaults, CacheHint};
        let c: CacheDefaults =
            from_json("cache", json!({ "tools": { "ttlMs": 60000 }, "read": { "ttlMs": 1, "cacheScope": "public" } }))
                .unwrap();
        assert_eq!(c.tools, CacheHint::new(60000, CacheScope::Private));
        assert_eq!(c.read, CacheHint::new(1, CacheScope::Public));
        assert_eq!(c.prompts, CacheDefaults::default().prompts);
        assert!(
            from_json::<CacheHint>("cache hint", json!({ "cacheScope": "public" }))
                .unwrap_err()
                .message()
                .contains("missing field `ttlMs`")
        );
        assert!(from_json::<CacheDefaults>("cache", json!({ "lists": { "ttlMs": 1 } })).is_err());
    }

    #[test]
    fn tool_options_from_data() {
        use crate::server::ToolOptions;
        let t: ToolOptions = from_json("tool options", json!({ "timeoutMs": 30 })).unwrap();
        assert_eq!(t.timeout, Some(Duration::from_millis(30)));
        assert_eq!(from_json::<ToolOptions>("tool options", json!({})).unwrap(), ToolOptions::default());
        assert!(from_json::<ToolOptions>("tool options", json!({ "timeoutMs": 0 })).is_err());
    }
}
