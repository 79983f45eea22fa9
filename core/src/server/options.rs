//! Options of a [`Server`](super::Server): as data ([`ServerOptions`], the form every binding
//! hands over: C's `options_json`, Node's `new Server({...})`, Python's keywords), the caching
//! hints of its results and their defaults, and the options of one tool.

use super::redis_bus::BusOptions;
use crate::legacy::LegacyOptions;
use crate::schema::CacheScope;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::time::Duration;

/// A caching hint: `ttlMs` and `cacheScope` of a cacheable result.
///
/// As data (JSON `{"ttlMs": 60000, "cacheScope": "public"}`): `ttlMs` is required,
/// `cacheScope` defaults to `"private"` in every binding. Private is the safe side: a result
/// marked public may be served by a shared cache to another user (another access token), so a
/// hint only says public when its author chose it; a private one at worst costs a cache miss.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CacheHint {
    /// How long, in milliseconds, the result may be considered fresh.
    #[serde(alias = "ttl_ms")]
    pub ttl_ms: u64,
    /// Whether shared caches may reuse the result across callers (JSON `cacheScope`, default
    /// private).
    #[serde(rename = "cacheScope", default = "private")]
    #[serde(alias = "cache_scope")]
    pub scope: CacheScope,
}

fn private() -> CacheScope {
    CacheScope::Private
}

impl CacheHint {
    /// A hint with a TTL and scope.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }
}

/// Default caching hints per kind of cacheable result. Every hint defaults to `ttlMs: 0`
/// (immediately stale); lists default to `public` scope, `resources/read` to `private`.
///
/// As data: an object with any of the six kinds, each a [`CacheHint`]; a kind left out keeps
/// its default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheDefaults {
    /// `server/discover`.
    pub discover: CacheHint,
    /// `tools/list`.
    pub tools: CacheHint,
    /// `prompts/list`.
    pub prompts: CacheHint,
    /// `resources/list`.
    pub resources: CacheHint,
    /// `resources/templates/list`.
    pub templates: CacheHint,
    /// `resources/read`, unless the resource or its handler says otherwise.
    pub read: CacheHint,
}

impl Default for CacheDefaults {
    fn default() -> Self {
        let public = CacheHint::new(0, CacheScope::Public);
        CacheDefaults {
            discover: public.clone(),
            tools: public.clone(),
            prompts: public.clone(),
            resources: public.clone(),
            templates: public,
            read: CacheHint::new(0, CacheScope::Private),
        }
    }
}

/// Options of one tool, beside its protocol definition: [`Server::add_tool_with`](super::Server::add_tool_with). As data:
/// `{"timeoutMs": N}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolOptions {
    /// The longest one call of this tool may run, overriding the server's
    /// [`ServerBuilder::handler_timeout`](super::ServerBuilder::handler_timeout) (longer or shorter); None (the default) keeps the
    /// server's. When reached, the call ends with an `isError` result naming the tool and the
    /// limit, and the handler's future is dropped. JSON `timeoutMs`, at least 1.
    #[serde(rename = "timeoutMs", with = "crate::options::opt_positive_ms")]
    #[serde(alias = "timeout_ms")]
    pub timeout: Option<Duration>,
}

/// A capability advertised before anything is registered ([`ServerOptions::enable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Capability {
    /// `tools`.
    Tools,
    /// `resources`.
    Resources,
    /// `prompts`.
    Prompts,
    /// `logging` (deprecated in the protocol; handlers log with `RequestContext::log`).
    Logging,
}

/// How a server is configured, beside its name and version (`serverInfo`).
///
/// From JSON ([`crate::options::from_json`]): camelCase names, durations in milliseconds, absent
/// options keep their defaults, unknown ones are an error. Every binding takes these names.
///
/// ```
/// use mcpaxle::server::{Server, ServerOptions};
/// let options: ServerOptions = mcpaxle::options::from_json("server options", serde_json::json!({
///     "instructions": "Forecasts by city.",
///     "handlerTimeoutMs": 30000,
///     "legacy": { "maxSessions": 500 },
///     "cache": { "tools": { "ttlMs": 60000, "cacheScope": "public" } }
/// })).unwrap();
/// let server = Server::builder("weather", "1.0.0").options(options).build();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ServerOptions {
    /// `serverInfo.title`, the human-readable name (default none).
    pub title: Option<String>,
    /// The instructions `server/discover` and `initialize` return (default none).
    pub instructions: Option<String>,
    /// Items per page of every list (default 100, at least 1).
    #[serde(alias = "page_size")]
    pub page_size: usize,
    /// Whether results carry `_meta["io.modelcontextprotocol/serverInfo"]` (default true).
    #[serde(alias = "server_info_in_results")]
    pub server_info_in_results: bool,
    /// Capabilities advertised even before anything of theirs is registered (default none):
    /// any of `"tools"`, `"resources"`, `"prompts"`, `"logging"`.
    pub enable: Vec<Capability>,
    /// A secret the key sealing MRTR `requestState` is derived from; share it so that several
    /// instances accept each other's state (default: a random key per process).
    #[serde(alias = "state_secret")]
    pub state_secret: Option<String>,
    /// How long a sealed `requestState` stays valid (JSON `stateTtlMs`, default 600000: 10 min).
    #[serde(rename = "stateTtlMs", with = "crate::options::positive_ms")]
    #[serde(alias = "state_ttl_ms")]
    pub state_ttl: Duration,
    /// The caching hints of each kind of cacheable result (see [`CacheDefaults`]).
    pub cache: CacheDefaults,
    /// How legacy (2025-11-25) clients are served (see [`LegacyOptions`]); `false` is
    /// `{"enabled": false}` (modern-only), `true` every default.
    #[serde(deserialize_with = "legacy_or_bool")]
    pub legacy: LegacyOptions,
    /// The longest one call of any handler may run (JSON `handlerTimeoutMs`, default none: no
    /// limit); see [`ServerBuilder::handler_timeout`].
    #[serde(rename = "handlerTimeoutMs", with = "crate::options::opt_positive_ms")]
    #[serde(alias = "handler_timeout_ms")]
    pub handler_timeout: Option<Duration>,
    /// Whether unexpected handler exceptions reach the client as a generic text naming the
    /// handler instead of their message (JSON `maskErrorDetails`, default false); see
    /// [`ServerBuilder::mask_error_details`](super::ServerBuilder::mask_error_details).
    #[serde(alias = "mask_error_details")]
    pub mask_error_details: bool,
    /// The notification bus instances of a fleet share (see [`BusOptions`]): a Redis URL such
    /// as `"redis://host:6379/0"`, or `{"url": ..., "channel": ...}`; default none: changes
    /// reach the listen streams of this process only.
    pub bus: Option<BusOptions>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            title: None,
            instructions: None,
            page_size: 100,
            server_info_in_results: true,
            enable: Vec::new(),
            state_secret: None,
            state_ttl: Duration::from_secs(600),
            cache: CacheDefaults::default(),
            legacy: LegacyOptions::default(),
            handler_timeout: None,
            mask_error_details: false,
            bus: None,
        }
    }
}

/// `legacy`: a [`LegacyOptions`] object, or a bool for `enabled` alone.
fn legacy_or_bool<'de, D: Deserializer<'de>>(d: D) -> Result<LegacyOptions, D::Error> {
    struct Either;
    impl<'de> Visitor<'de> for Either {
        type Value = LegacyOptions;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("true, false or an object of legacy options")
        }
        fn visit_bool<E: de::Error>(self, enabled: bool) -> Result<LegacyOptions, E> {
            Ok(LegacyOptions { enabled, ..LegacyOptions::default() })
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LegacyOptions, A::Error> {
            LegacyOptions::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(Either)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::from_json;
    use crate::schema::CacheScope;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> crate::Result<ServerOptions> {
        from_json("server options", v)
    }

    #[test]
    fn an_empty_object_is_every_default() {
        let o = parse(json!({})).unwrap();
        assert_eq!(o, ServerOptions::default());
        assert_eq!(o.page_size, 100);
        assert!(o.server_info_in_results);
        assert_eq!(o.state_ttl, Duration::from_secs(600));
        assert_eq!(o.handler_timeout, None);
        assert!(o.legacy.enabled);
        assert_eq!(o.legacy.max_sessions, 10_000);
    }

    #[test]
    fn every_option_is_read_with_durations_in_milliseconds() {
        let o = parse(json!({
            "title": "T", "instructions": "I", "pageSize": 7, "serverInfoInResults": false,
            "enable": ["tools", "logging"], "stateSecret": "s", "stateTtlMs": 1500,
            "cache": { "read": { "ttlMs": 5 } },
            "legacy": { "maxSessions": 3, "idleTimeoutMs": 250 },
            "handlerTimeoutMs": 42
        }))
        .unwrap();
        assert_eq!((o.title.as_deref(), o.instructions.as_deref(), o.page_size), (Some("T"), Some("I"), 7));
        assert!(!o.server_info_in_results);
        assert_eq!(o.enable, [Capability::Tools, Capability::Logging]);
        assert_eq!(o.state_ttl, Duration::from_millis(1500));
        assert_eq!((o.cache.read.ttl_ms, o.cache.read.scope), (5, CacheScope::Private));
        assert_eq!((o.legacy.max_sessions, o.legacy.idle_timeout), (3, Duration::from_millis(250)));
        assert_eq!(o.legacy.max_sessions_per_principal, 100, "the legacy options not given keep their defaults");
        assert_eq!(o.handler_timeout, Some(Duration::from_millis(42)));
    }

    #[test]
    fn legacy_takes_a_bool_for_enabled() {
        assert!(!parse(json!({ "legacy": false })).unwrap().legacy.enabled);
        assert_eq!(parse(json!({ "legacy": true })).unwrap().legacy, LegacyOptions::default());
        let e = parse(json!({ "legacy": { "maxSesions": 1 } })).unwrap_err();
        assert!(e.message().contains("unknown field `maxSesions`, expected one of `enabled`"), "{e}");
        let e = parse(json!({ "legacy": 3 })).unwrap_err();
        assert!(e.message().contains("true, false or an object of legacy options"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let e = parse(json!({ "handlerTimeoutMs": 0 })).unwrap_err();
        assert!(e.message().contains("at least 1 millisecond"), "{e}");
        let e = parse(json!({ "stateTtlMs": 1.5 })).unwrap_err();
        assert!(e.message().contains("invalid type: floating point `1.5`, expected u64"), "{e}");
        let e = parse(json!({ "enable": ["completions"] })).unwrap_err();
        assert!(e.message().contains("unknown variant `completions`, expected one of `tools`"), "{e}");
    }
}
