//! The client's response cache: results of `server/discover`, `tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list` and `resources/read`, kept while fresh per
//! their `ttlMs` (absent, zero or negative: not kept).
//!
//! An entry is keyed by the method and the request's params without `_meta`; a `private`
//! entry also by the authorization context (a digest of the `Authorization` header), so that
//! it is never served to another credential. Change notifications invalidate: a list's
//! `list_changed` drops that list's pages, `resources/updated` drops reads of that URI.
//! A result that arrived while an invalidation happened is not stored (it may predate it).

use crate::schema::CacheScope;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The methods whose results may be cached.
pub const CACHEABLE_METHODS: &[&str] =
    &["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"];

/// At most this many entries are kept.
const MAX_ENTRIES: usize = 1024;

struct Entry {
    value: Value,
    expires: Instant,
    method: String,
    uri: Option<String>,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Bumped by every invalidation of a method.
    generations: HashMap<String, u64>,
}

/// The response cache of one client.
#[derive(Default)]
pub(crate) struct Cache {
    state: Mutex<State>,
}

/// A lookup key: what the cache needs to find or store an entry.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    method: String,
    params: String,
    auth: String,
    uri: Option<String>,
    generation: u64,
}

/// The authorization context of a credential: a digest, never the credential itself.
pub(crate) fn auth_context(authorization: Option<&str>) -> String {
    match authorization {
        None => String::new(),
        Some(a) => {
            let d = Sha256::digest(a.as_bytes());
            d.iter().take(16).map(|b| format!("{b:02x}")).collect()
        }
    }
}

/// `value` with object keys sorted at every level, as compact JSON.
fn canonical(value: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    let sorted = sort(value);
    // Serialized from a map whose keys were inserted in order: with or without serde_json's
    // `preserve_order`, the text is the same for equal params.
    serde_json::to_string(&sorted).unwrap_or_default()
}

impl Cache {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key of a request (its params without `_meta`), or `None` when it is not
    /// cacheable: another method, or an MRTR retry.
    pub fn key(&self, method: &str, params: &Map<String, Value>, authorization: Option<&str>) -> Option<Key> {
        if !CACHEABLE_METHODS.contains(&method)
            || params.contains_key("inputResponses")
            || params.contains_key("requestState")
        {
            return None;
        }
        let mut p = params.clone();
        p.remove("_meta");
        let uri =
            (method == "resources/read").then(|| p.get("uri").and_then(Value::as_str).map(str::to_owned)).flatten();
        let generation = self.state().generations.get(method).copied().unwrap_or(0);
        Some(Key {
            method: method.to_owned(),
            params: canonical(&Value::Object(p)),
            auth: auth_context(authorization),
            uri,
            generation,
        })
    }

    fn slot(key: &Key, scope: CacheScope) -> String {
        match scope {
            CacheScope::Public => format!("{}\npublic\n{}", key.method, key.params),
            CacheScope::Private => format!("{}\nprivate:{}\n{}", key.method, key.auth, key.params),
        }
    }

    /// A fresh cached result for `key`.
    pub fn get(&self, key: &Key) -> Option<Value> {
        let now = Instant::now();
        let mut st = self.state();
        for scope in [CacheScope::Private, CacheScope::Public] {
            let slot = Self::slot(key, scope);
            match st.entries.get(&slot) {
                Some(e) if e.expires > now => return Some(e.value.clone()),
                Some(_) => {
                    st.entries.remove(&slot);
                }
                None => {}
            }
        }
        None
    }

    /// Stores a complete result per its `ttlMs` and `cacheScope` (a missing scope is taken as
    /// `private`, the safer reading).
    pub fn put(&self, key: &Key, result: &Value) {
        let ttl = match result.get("ttlMs") {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
            _ => 0.0,
        };
        if ttl.is_nan()
            || ttl < 1.0
            || result.get("resultType").and_then(Value::as_str).is_some_and(|t| t != "complete")
        {
            return;
        }
        let scope = match result.get("cacheScope").and_then(Value::as_str) {
            Some("public") => CacheScope::Public,
            _ => CacheScope::Private,
        };
        let now = Instant::now();
        let mut st = self.state();
        if st.generations.get(&key.method).copied().unwrap_or(0) != key.generation {
            return;
        }
        if st.entries.len() >= MAX_ENTRIES {
            st.entries.retain(|_, e| e.expires > now);
            if st.entries.len() >= MAX_ENTRIES {
                if let Some(k) = st.entries.keys().next().cloned() {
                    st.entries.remove(&k);
                }
            }
        }
        let expires = now + Duration::from_millis(ttl.min(u64::MAX as f64 / 2.0) as u64);
        let entry = Entry { value: result.clone(), expires, method: key.method.clone(), uri: key.uri.clone() };
        st.entries.insert(Self::slot(key, scope), entry);
    }

    /// Drops every entry of `method`.
    pub fn invalidate_method(&self, method: &str) {
        let mut st = self.state();
        *st.generations.entry(method.to_owned()).or_default() += 1;
        st.entries.retain(|_, e| e.method != method);
    }

    /// Drops the cached reads of `uri` and of the resources it is part of.
    pub fn invalidate_resource(&self, uri: &str) {
        let mut st = self.state();
        *st.generations.entry("resources/read".to_owned()).or_default() += 1;
        st.entries.retain(|_, e| match &e.uri {
            Some(u) => !(u == uri || uri.starts_with(u.as_str()) || u.starts_with(uri)),
            None => true,
        });
    }

    /// Applies a server notification: `list_changed` and `resources/updated` invalidate.
    pub fn observe(&self, method: &str, params: Option<&Value>) {
        match method {
            "notifications/tools/list_changed" => self.invalidate_method("tools/list"),
            "notifications/prompts/list_changed" => self.invalidate_method("prompts/list"),
            "notifications/resources/list_changed" => {
                self.invalidate_method("resources/list");
                self.invalidate_method("resources/templates/list");
            }
            "notifications/resources/updated" => {
                if let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                    self.invalidate_resource(uri);
                }
            }
            _ => {}
        }
    }

    /// Drops everything.
    pub fn clear(&self) {
        let mut st = self.state();
        let methods: Vec<String> = CACHEABLE_METHODS.iter().map(|m| m.to_string()).collect();
        for m in methods {
            *st.generations.entry(m).or_default() += 1;
        }
        st.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn honours_ttl_scope_and_invalidation() {
        let c = Cache::default();
        let k = c.key("tools/list", &params(json!({"_meta": {"x": 1}})), None).unwrap();
        assert!(c.get(&k).is_none());
        c.put(&k, &json!({"tools": [], "ttlMs": 60000, "cacheScope": "public"}));
        // _meta is not part of the key.
        let k2 = c.key("tools/list", &params(json!({"_meta": {"y": 2}})), Some("Bearer a")).unwrap();
        assert!(c.get(&k2).is_some());
        c.observe("notifications/tools/list_changed", None);
        assert!(c.get(&k2).is_none());
        // A result fetched across an invalidation is not stored.
        c.observe("notifications/tools/list_changed", None);
        c.put(&k2, &json!({"tools": [], "ttlMs": 60000, "cacheScope": "public"}));
        assert!(c.get(&k2).is_none());
    }

    #[test]
    fn private_entries_stay_in_their_authorization_context() {
        let c = Cache::default();
        let p = params(json!({"uri": "file:///a"}));
        let alice = c.key("resources/read", &p, Some("Bearer alice")).unwrap();
        c.put(&alice, &json!({"contents": [], "ttlMs": 60000, "cacheScope": "private"}));
        assert!(c.get(&alice).is_some());
        let bob = c.key("resources/read", &p, Some("Bearer bob")).unwrap();
        assert!(c.get(&bob).is_none());
        c.observe("notifications/resources/updated", Some(&json!({"uri": "file:///a"})));
        assert!(c.get(&alice).is_none());
    }

    #[test]
    fn refuses_uncacheable_requests_and_results() {
        let c = Cache::default();
        assert!(c.key("tools/call", &Map::new(), None).is_none());
        assert!(c.key("resources/read", &params(json!({"uri": "x", "requestState": "s"})), None).is_none());
        let k = c.key("prompts/list", &Map::new(), None).unwrap();
        c.put(&k, &json!({"prompts": [], "ttlMs": 0}));
        c.put(&k, &json!({"prompts": []}));
        c.put(&k, &json!({"prompts": [], "ttlMs": -5}));
        assert!(c.get(&k).is_none());
        // Different params, different entries.
        c.put(&k, &json!({"prompts": [], "ttlMs": 1000}));
        let other = c.key("prompts/list", &params(json!({"cursor": "2"})), None).unwrap();
        assert!(c.get(&other).is_none());
        assert!(c.get(&k).is_some());
    }
}
