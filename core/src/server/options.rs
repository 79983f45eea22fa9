//! The options of a [`Server`](super::Server) as data ([`ServerOptions`]), the form every
//! binding hands over: C's `options_json`, Node's `new Server({...})`, Python's keywords.

use super::{CacheDefaults, ServerBuilder, StateKey};
use crate::legacy::LegacyOptions;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::time::Duration;

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
        }
    }
}

impl ServerBuilder {
    /// Applies every option of `options` (those left at their defaults included).
    pub fn options(mut self, options: ServerOptions) -> Self {
        if let Some(t) = options.title {
            self = self.title(t);
        }
        if let Some(i) = options.instructions {
            self = self.instructions(i);
        }
        for cap in options.enable {
            self = match cap {
                Capability::Tools => self.enable_tools(),
                Capability::Resources => self.enable_resources(),
                Capability::Prompts => self.enable_prompts(),
                Capability::Logging => self.enable_logging(),
            };
        }
        if let Some(s) = options.state_secret {
            self = self.state_key(StateKey::derive(s.as_bytes()));
        }
        self.config.handler_timeout = options.handler_timeout;
        self.page_size(options.page_size)
            .server_info_in_results(options.server_info_in_results)
            .state_ttl(options.state_ttl)
            .cache_defaults(options.cache)
            .legacy(options.legacy)
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

    #[test]
    fn the_builder_takes_the_options() {
        let o = parse(json!({ "title": "T", "pageSize": 0, "handlerTimeoutMs": 9, "legacy": false })).unwrap();
        let server = super::super::Server::builder("n", "1").options(o).build();
        let c = &server.inner.config;
        assert_eq!((c.info.title.as_deref(), c.page_size), (Some("T"), 1), "page size is at least 1");
        assert_eq!(c.handler_timeout, Some(Duration::from_millis(9)));
        assert!(!c.legacy.enabled);
    }
}
