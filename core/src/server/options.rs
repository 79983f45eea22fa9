//! Options of a [`Server`](super::Server)'s results and tools: caching hints and their
//! defaults, and the options of one tool.

use crate::schema::CacheScope;
use std::time::Duration;

/// A caching hint: `ttlMs` and `cacheScope` of a cacheable result.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheHint {
    /// How long, in milliseconds, the result may be considered fresh.
    pub ttl_ms: u64,
    /// Whether shared caches may reuse the result across callers.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint with a TTL and scope.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }
}

/// Default caching hints per kind of cacheable result. Every hint defaults to `ttlMs: 0`
/// (immediately stale); lists default to `public` scope, `resources/read` to `private`.
#[derive(Debug, Clone, PartialEq)]
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

/// Options of one tool, beside its protocol definition: [`Server::add_tool_with`](super::Server::add_tool_with).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOptions {
    /// The longest one call of this tool may run, overriding the server's
    /// [`ServerBuilder::handler_timeout`](super::ServerBuilder::handler_timeout) (longer or shorter); None (the default) keeps the
    /// server's. When reached, the call ends with an `isError` result naming the tool and the
    /// limit, and the handler's future is dropped.
    pub timeout: Option<Duration>,
}
