//! Options of a [`Server`](super::Server): as data ([`ServerOptions`], the form every binding
//! hands over: C's `options_json`, Node's `new Server({...})`, Python's keywords), the caching
//! hints of its results and their defaults, and the options of one tool.

use super::redis_bus::BusOptions;
use super::tasks::{TaskOptions, TaskSupport};
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
/// `{"timeoutMs": N, "taskSupport": "optional", "deferTask": false}`.
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
    /// Whether a call may run as a task of the Tasks extension (JSON `taskSupport`:
    /// `"forbidden"`, the default, `"optional"` or `"required"`; see
    /// [`tasks`](super::tasks)). The handler is the same either way.
    #[serde(alias = "task_support")]
    pub task_support: TaskSupport,
    /// With task support: the task is created when the handler calls
    /// [`RequestContext::start_task`](super::RequestContext::start_task), its asks before
    /// then answered through MRTR rounds of the `tools/call` itself (JSON `deferTask`,
    /// default false: the task is created before the handler runs).
    #[serde(alias = "defer_task")]
    pub defer_task: bool,
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
    /// instances accept each other's state (default: the environment variable
    /// `MCPAXLE_STATE_SECRET` when [`ServerOptions::with_environment`] reads it, else a random
    /// key per process). At least 16 bytes.
    #[serde(alias = "state_secret")]
    pub state_secret: Option<StateSecret>,
    /// The secret before the current one, while a fleet rotates it: states sealed with it are
    /// still accepted (until they expire, one `stateTtlMs` at most), new ones are sealed with
    /// `stateSecret` only (default: `MCPAXLE_PREVIOUS_STATE_SECRET` when read, else none).
    #[serde(alias = "previous_state_secret")]
    pub previous_state_secret: Option<StateSecret>,
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
    /// as `"redis://host:6379/0"`, or `{"url": ..., "channel": ...}`; default: `MCPAXLE_BUS`
    /// when read, else none (changes reach the listen streams of this process only).
    pub bus: Option<BusOptions>,
    /// How tasks of the Tasks extension are kept (see [`TaskOptions`]: TTL, polling
    /// interval, limits).
    pub tasks: TaskOptions,
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
            previous_state_secret: None,
            state_ttl: Duration::from_secs(600),
            cache: CacheDefaults::default(),
            legacy: LegacyOptions::default(),
            handler_timeout: None,
            mask_error_details: false,
            bus: None,
            tasks: TaskOptions::default(),
        }
    }
}

/// The environment variable a server's state secret is read from ([`ServerOptions::with_environment`]).
pub const STATE_SECRET_ENV: &str = "MCPAXLE_STATE_SECRET";
/// The environment variable the previous state secret (during a rotation) is read from.
pub const PREVIOUS_STATE_SECRET_ENV: &str = "MCPAXLE_PREVIOUS_STATE_SECRET";
/// The environment variable the notification bus (a Redis URL) is read from.
pub const BUS_ENV: &str = "MCPAXLE_BUS";

impl ServerOptions {
    /// These options with the fleet settings they leave unset taken from the environment, as
    /// every binding's server does at construction: `MCPAXLE_STATE_SECRET` and
    /// `MCPAXLE_PREVIOUS_STATE_SECRET` (the state secrets), `MCPAXLE_BUS` (the Redis URL of
    /// the notification bus, default channel). The way to run the same program as a fleet
    /// with nothing but configuration.
    ///
    /// # Errors
    /// A usage error naming the variable if its value is not valid (see [`StateSecret`],
    /// [`BusOptions`]).
    pub fn with_environment(mut self) -> crate::Result<ServerOptions> {
        let var = |name: &str| match std::env::var(name) {
            Ok(v) => Ok(Some(v)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(crate::Error::usage(format!("{name}: not valid UTF-8"))),
        };
        let secret = |name: &str| -> crate::Result<Option<StateSecret>> {
            var(name)?.map(|v| StateSecret::new(v).map_err(|e| crate::Error::usage(format!("{name}: {e}")))).transpose()
        };
        if self.state_secret.is_none() {
            self.state_secret = secret(STATE_SECRET_ENV)?;
        }
        if self.previous_state_secret.is_none() {
            self.previous_state_secret = secret(PREVIOUS_STATE_SECRET_ENV)?;
        }
        if self.bus.is_none() {
            self.bus = var(BUS_ENV)?
                .map(|url| {
                    BusOptions::redis(url).map_err(|e| crate::Error::usage(format!("{BUS_ENV}: {}", e.message())))
                })
                .transpose()?;
        }
        if self.previous_state_secret.is_some() && self.state_secret.is_none() {
            return Err(crate::Error::usage(
                "previousStateSecret is set but stateSecret is not: a rotation needs the new secret too",
            ));
        }
        Ok(self)
    }
}

/// A secret the `requestState` key is derived from (SHA-256 of its UTF-8 bytes, the same in
/// every binding): at least 16 bytes, without surrounding whitespace (a copied newline would
/// silently give another key than the other instances'). Use a random one (`openssl rand
/// -base64 32`).
#[derive(Clone, PartialEq, Eq)]
pub struct StateSecret(String);

impl StateSecret {
    /// The least length of a secret, in bytes.
    pub const MIN_LEN: usize = 16;

    /// A checked secret.
    ///
    /// # Errors
    /// A message saying what is wrong, if `secret` is shorter than [`StateSecret::MIN_LEN`]
    /// bytes or starts or ends with whitespace.
    pub fn new(secret: impl Into<String>) -> std::result::Result<StateSecret, String> {
        let secret = secret.into();
        if secret.trim() != secret {
            return Err("the secret starts or ends with whitespace (a copied newline?); remove it".into());
        }
        if secret.len() < Self::MIN_LEN {
            return Err(format!(
                "the secret is {} bytes; use at least {} (a random one: openssl rand -base64 32)",
                secret.len(),
                Self::MIN_LEN
            ));
        }
        Ok(StateSecret(secret))
    }

    /// The secret's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl fmt::Debug for StateSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateSecret(..)")
    }
}

impl<'de> Deserialize<'de> for StateSecret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StateSecret::new(String::deserialize(d)?).map_err(de::Error::custom)
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
            "enable": ["tools", "logging"], "stateSecret": "sixteen-bytes-ok", "stateTtlMs": 1500,
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
    fn a_bad_bus_is_named_once_in_the_error() {
        let e = parse(json!({ "bus": "h:6379" })).unwrap_err();
        assert!(e.message().starts_with("server options: bus: \"h:6379\" is not a Redis URL"), "{e}");
    }

    #[test]
    fn state_secrets_are_checked_and_read_from_the_environment() {
        for (bad, says) in [
            (json!({ "stateSecret": "short" }), "stateSecret: the secret is 5 bytes; use at least 16"),
            (json!({ "stateSecret": "sixteen-bytes-ok\n" }), "stateSecret: the secret starts or ends with whitespace"),
            (json!({ "previousStateSecret": " sixteen-bytes-ok" }), "previousStateSecret: the secret starts or ends"),
        ] {
            let e = parse(bad.clone()).unwrap_err();
            assert!(e.message().contains(says), "{bad}: {e}");
        }
        // The only test of the core that touches these variables.
        // SAFETY: no other thread of this test binary reads or writes them.
        unsafe {
            std::env::set_var(STATE_SECRET_ENV, "from-the-environment");
            std::env::remove_var(PREVIOUS_STATE_SECRET_ENV);
        }
        let o = ServerOptions::default().with_environment().unwrap();
        assert_eq!(o.state_secret, Some(StateSecret::new("from-the-environment").unwrap()));
        assert_eq!(o.previous_state_secret, None);
        // Options given win over the environment.
        let given = parse(json!({ "stateSecret": "given-in-options" })).unwrap().with_environment().unwrap();
        assert_eq!(given.state_secret, Some(StateSecret::new("given-in-options").unwrap()));
        unsafe { std::env::set_var(STATE_SECRET_ENV, "short") };
        let e = ServerOptions::default().with_environment().unwrap_err();
        assert!(e.message().starts_with("MCPAXLE_STATE_SECRET: the secret is 5 bytes"), "{e}");
        unsafe {
            std::env::remove_var(STATE_SECRET_ENV);
            std::env::set_var(PREVIOUS_STATE_SECRET_ENV, "the-old-secret-value");
        }
        let e = ServerOptions::default().with_environment().unwrap_err();
        assert!(e.message().contains("a rotation needs the new secret too"), "{e}");
        unsafe {
            std::env::remove_var(PREVIOUS_STATE_SECRET_ENV);
            std::env::set_var(BUS_ENV, "redis://127.0.0.1:6379/2");
        }
        let o = ServerOptions::default().with_environment().unwrap();
        assert_eq!(o.bus, Some(BusOptions::redis("redis://127.0.0.1:6379/2").unwrap()));
        unsafe { std::env::set_var(BUS_ENV, "127.0.0.1:6379") };
        let e = ServerOptions::default().with_environment().unwrap_err();
        assert!(e.message().starts_with("MCPAXLE_BUS: \"127.0.0.1:6379\" is not a Redis URL"), "{e}");
        unsafe { std::env::remove_var(BUS_ENV) };
        assert_eq!(ServerOptions::default().with_environment().unwrap(), ServerOptions::default());
        assert!(!format!("{:?}", StateSecret::new("do-not-print-this").unwrap()).contains("print"));
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
