//! The catalog of every option the core defines, by area: the names ([`schema`]) and a valid
//! value for each ([`examples`]). Each binding's tests iterate it, so that an option added in
//! the core and not reaching a binding fails a test. It sits above every layer (it names the
//! options structs of the server, the client and the transports); the parsing helpers they use
//! are in [`crate::options`].

use crate::options::names;
use serde_json::Value;
use std::collections::BTreeMap;

/// Every options struct of the core by the name the bindings know it under, with its option
/// names: `server` ([`ServerOptions`](crate::server::ServerOptions)), `legacy`, `cache`,
/// `cacheHint`, `tool`, `template`, `http`, `connections`, `cors`, `stdio`, `bearerAuth`, `jwt`,
/// `introspection`, `client`, `oauth`, `call` and `telemetry`. A binding's test iterates it to check that every option reaches it.
pub fn schema() -> BTreeMap<&'static str, Vec<&'static str>> {
    macro_rules! names_of {
        ($($area:literal => $t:ty),*) => { BTreeMap::from([$(($area, names::<$t>())),*]) };
    }
    areas!(names_of)
}

/// Checks `value` as the options of `area` (a name of [`schema`]), by the rules the core reads
/// them with; `what` names them in the error, as [`crate::options::from_json`] does. For a
/// binding whose typed façade checks its values when it is built (Python's dataclasses), before
/// it hands them over.
///
/// ```
/// let e = mcpaxle::catalog::check("oauth", "OAuth", serde_json::json!({ "redirectUri": "" })).unwrap_err();
/// assert!(e.message().starts_with("OAuth: redirectUri: must be an absolute URI"), "{e}");
/// ```
pub fn check(area: &str, what: &str, value: Value) -> crate::Result<()> {
    macro_rules! check_as {
        ($($area:literal => $t:ty),*) => {
            match area {
                $($area => crate::options::from_json::<$t>(what, value).map(drop),)*
                _ => Err(crate::Error::usage(format!("no options are named {area:?}"))),
            }
        };
    }
    areas!(check_as)
}

/// Calls `$then` with every options struct of the core by the name the bindings know it under.
macro_rules! areas {
    ($then:ident) => {{
        use crate::client::{CallOptions, ClientOptions, OAuthOptions};
        use crate::legacy::LegacyOptions;
        use crate::server::{CacheDefaults, CacheHint, ServerOptions, TemplateOptions, ToolOptions};
        use crate::transport::auth::BearerAuth;
        use crate::transport::connections::ConnectionLimits;
        use crate::transport::http::token_verifiers::{IntrospectionOptions, JwtOptions};
        use crate::transport::http::{CorsOptions, HttpOptions};
        use crate::telemetry::TelemetryOptions;
        use crate::transport::stdio::StdioOptions;
        $then!(
            "server" => ServerOptions,
            "legacy" => LegacyOptions,
            "cache" => CacheDefaults,
            "cacheHint" => CacheHint,
            "tool" => ToolOptions,
            "template" => TemplateOptions,
            "http" => HttpOptions,
            "connections" => ConnectionLimits,
            "cors" => CorsOptions,
            "stdio" => StdioOptions,
            "bearerAuth" => BearerAuth,
            "jwt" => JwtOptions,
            "introspection" => IntrospectionOptions,
            "client" => ClientOptions,
            "oauth" => OAuthOptions,
            "call" => CallOptions,
            "telemetry" => TelemetryOptions
        )
    }};
}
use areas;

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
            "enable": ["tools"], "stateSecret": "s3cret-s3cret-s3cret", "previousStateSecret": "old-s3cret-old-s3cret",
            "stateTtlMs": 60000,
            "cache": { "tools": { "ttlMs": 1000, "cacheScope": "public" } },
            "legacy": { "maxSessions": 10 }, "handlerTimeoutMs": 30000, "maskErrorDetails": true,
            "bus": { "url": "redis://127.0.0.1:6379/0", "channel": "mcpaxle:example" },
            "tasks": {
                "ttlMs": 600000, "pollIntervalMs": 500, "maxTasks": 1000, "maxTasksPerPrincipal": 100,
                "store": "memory"
            }
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
        "tool": { "timeoutMs": 1000, "taskSupport": "optional", "deferTask": false },
        "template": { "allowPathTraversal": false },
        "http": {
            "path": "/mcp", "maxBody": 1048576, "allowedHosts": ["localhost"], "allowedOrigins": [],
            "keepAliveMs": 15000, "drainTimeoutMs": 1000, "auth": null, "connections": { "maxConnections": 64 },
            "cors": { "allowedOrigins": ["https://app.example.com"] }, "healthPath": "/healthz", "reusePort": false,
            "metricsPath": "/metrics"
        },
        "connections": {
            "maxConnections": 64, "headerReadTimeoutMs": 10000, "bodyReadTimeoutMs": 30000, "idleTimeoutMs": 60000,
            "http2KeepAliveIntervalMs": 30000, "http2KeepAliveTimeoutMs": 20000, "maxHeaderBytes": 65536,
            "http2MaxConcurrentStreams": 100, "maxBodyBytesInFlight": 134217728
        },
        "cors": {
            "allowedOrigins": ["http://localhost:6274"], "allowedHeaders": ["X-Trace-Id"], "exposedHeaders": ["X-Trace-Id"],
            "maxAgeMs": 600000
        },
        "stdio": { "maxMessageSize": 1048576, "drainTimeoutMs": 1000, "maxOutboundQueue": 64 },
        "bearerAuth": {
            "resource": "https://mcp.example.com/mcp", "authorizationServers": ["https://auth.example.com"],
            "scopesSupported": ["notes:read"], "requiredScopes": ["notes:read"], "toolScopes": { "write": ["notes:write"] },
            "jwt": { "audience": ["https://mcp.example.com/mcp"] },
            "introspection": { "clientId": "mcp-server", "clientSecret": "s3cret" }
        },
        "jwt": {
            "issuer": "https://auth.example.com", "jwksUri": "https://auth.example.com/jwks",
            "audience": ["https://mcp.example.com/mcp"], "algorithms": ["RS256", "ES256"], "leewayMs": 30000,
            "jwksCacheMs": 600000
        },
        "introspection": {
            "endpoint": "https://auth.example.com/introspect", "clientId": "mcp-server", "clientSecret": "s3cret",
            "cacheMs": 30000
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
            "grantType": "authorization_code", "redirectUri": "http://127.0.0.1:8765/callback",
            "clientId": "example", "clientSecret": null, "privateKeyPem": null, "signingAlgorithm": null,
            "issuer": null, "clientMetadataUrl": null, "clientName": "Example", "maxAuthorizations": 3,
            "tokenStore": { "file": "/home/me/.config/example/tokens.json" }
        },
        "call": { "timeoutMs": 5000, "meta": { "example": true }, "logLevel": "info", "bypassCache": false },
        "telemetry": {
            "endpoint": "http://127.0.0.1:4318", "headers": { "x-api-key": "k" }, "serviceName": "notes",
            "sampleRatio": 0.5, "traces": true, "metrics": true, "metricsIntervalMs": 10000, "prometheus": true,
            "recordPrincipal": false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::*;
    use crate::server::ServerOptions;
    use serde::de::DeserializeOwned;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn unknown_names_are_refused_with_the_valid_ones() {
        let e = from_json::<ServerOptions>("server options", json!({ "pageSise": 3 })).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Usage);
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
        use crate::transport::http::{CorsOptions, HttpOptions};
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
        ok::<CorsOptions>(&examples["cors"]);
        ok::<StdioOptions>(&examples["stdio"]);
        ok::<BearerAuth>(&examples["bearerAuth"]);
        ok::<crate::transport::http::token_verifiers::JwtOptions>(&examples["jwt"]);
        ok::<crate::transport::http::token_verifiers::IntrospectionOptions>(&examples["introspection"]);
        ok::<ClientOptions>(&examples["client"]);
        ok::<OAuthOptions>(&examples["oauth"]);
        ok::<CallOptions>(&examples["call"]);
    }

    #[test]
    fn check_reads_every_area_by_its_name() {
        let examples = examples();
        for area in schema().keys() {
            check(area, area, examples[area].clone()).unwrap();
        }
        let e = check("bearerAuth", "BearerAuth", json!({ "resource": "r", "authorizationServers": ["https://as"] }))
            .unwrap_err();
        assert!(e.message().starts_with("BearerAuth: resource: must be this server's canonical URI"), "{e}");
        assert!(check("auth", "x", json!({})).unwrap_err().message().contains("no options are named \"auth\""));
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
        assert!(auth.verify("t".into()).await.is_err());
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
