//! The pages of the lists (`tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list`) as JSON text. Every entry is serialized once, when it is registered; a page
//! is written by joining its entries' text, so listing copies bytes instead of deep-copying
//! and re-serializing every definition; and a page that depends on nothing but the registry
//! (no visibility filter) is kept, whole, until its list changes ([`PageCache`]).

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// An entry of a list: its definition, as a value (what visibility filters and lookups read)
/// and as the JSON text a page carries.
pub(crate) trait Listed {
    /// The definition (a `Tool`, `Resource`, ... as JSON).
    fn definition(&self) -> &Value;
    /// The same definition serialized, once ([`serialize`]).
    fn serialized(&self) -> &str;
}

/// The JSON text of a definition, kept beside it in its entry.
pub(crate) fn serialize(definition: &Value) -> Box<str> {
    serde_json::to_string(definition).unwrap_or_else(|_| "null".to_owned()).into_boxed_str()
}

/// A page's result as JSON text: `{"<field>":[items],"nextCursor":...}` followed by the members
/// of `rest` (`resultType`, the caching hint, `_meta`: what every result of the list carries).
pub(crate) fn write_page(field: &str, items: &[&str], next_cursor: Option<&str>, rest: &Map<String, Value>) -> String {
    let len = items.iter().map(|i| i.len() + 1).sum::<usize>() + 256;
    let mut out = String::with_capacity(len);
    out.push('{');
    push_key(&mut out, field);
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out.push(']');
    if let Some(c) = next_cursor {
        out.push(',');
        push_key(&mut out, "nextCursor");
        out.push_str(&Value::from(c).to_string());
    }
    for (k, v) in rest {
        if k == field || k == "nextCursor" {
            continue;
        }
        out.push(',');
        push_key(&mut out, k);
        out.push_str(&v.to_string());
    }
    out.push('}');
    out
}

fn push_key(out: &mut String, key: &str) {
    out.push_str(&Value::from(key).to_string());
    out.push(':');
}

/// Which page of a list: the era's shape (legacy results carry no `resultType`, hints or
/// `_meta`) and the key the page starts after (`None`: the first page).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PageKey {
    pub legacy: bool,
    pub after: Option<String>,
}

/// The most pages kept per list: any key of the list can be named by a cursor, so what is kept
/// is bounded; past it, pages are written for each request (from the entries' text still).
pub(crate) const MAX_CACHED_PAGES: usize = 64;

/// The pages of one list written so far, valid until the list changes. Its
/// [`invalidate`](Self::invalidate) is called under the list's write lock, and
/// [`get_or_write`](Self::get_or_write) under its read lock, so a page is never written from
/// one state of the list and kept for another.
#[derive(Default)]
pub(crate) struct PageCache {
    generation: AtomicU64,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    generation: u64,
    pages: HashMap<PageKey, Arc<str>>,
}

impl PageCache {
    /// The list changed: no page written before is served again.
    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The page `key`, written by `write` unless a page written since the last change is kept.
    pub(crate) fn get_or_write(&self, key: PageKey, write: impl FnOnce() -> String) -> Arc<str> {
        let generation = self.generation.load(Ordering::Acquire);
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if kept.generation != generation {
                kept.pages.clear();
                kept.generation = generation;
            }
            if let Some(page) = kept.pages.get(&key) {
                return page.clone();
            }
        }
        let page: Arc<str> = write().into();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.generation == generation && kept.pages.len() < MAX_CACHED_PAGES {
            kept.pages.insert(key, page.clone());
        }
        page
    }

    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.kept.lock().unwrap().pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_written_page_is_the_json_of_the_same_result() {
        let items = [json!({"name": "a", "n": 1}), json!({"name": "b \"q\""})];
        let text: Vec<Box<str>> = items.iter().map(serialize).collect();
        let refs: Vec<&str> = text.iter().map(|t| &**t).collect();
        let rest = json!({"resultType": "complete", "ttlMs": 5, "_meta": {"k": "v"}});
        let page = write_page("tools", &refs, Some("Y3Vy"), rest.as_object().unwrap());
        let parsed: Value = serde_json::from_str(&page).unwrap();
        assert_eq!(
            parsed,
            json!({"tools": items, "nextCursor": "Y3Vy", "resultType": "complete", "ttlMs": 5, "_meta": {"k": "v"}})
        );
        let empty: Value = serde_json::from_str(&write_page("prompts", &[], None, &Map::new())).unwrap();
        assert_eq!(empty, json!({"prompts": []}));
    }

    #[test]
    fn pages_are_kept_per_key_until_the_list_changes() {
        let cache = PageCache::default();
        let first = PageKey { legacy: false, after: None };
        let writes = std::cell::Cell::new(0);
        let write = |text: &'static str| {
            writes.set(writes.get() + 1);
            text.to_owned()
        };
        assert_eq!(&*cache.get_or_write(first.clone(), || write("one")), "one");
        assert_eq!(&*cache.get_or_write(first.clone(), || write("other")), "one", "kept");
        let legacy = PageKey { legacy: true, after: None };
        assert_eq!(&*cache.get_or_write(legacy.clone(), || write("legacy")), "legacy", "one page per era");
        let second = PageKey { legacy: false, after: Some("k1".into()) };
        assert_eq!(&*cache.get_or_write(second, || write("two")), "two", "one page per cursor");
        assert_eq!(writes.get(), 3);
        cache.invalidate();
        assert_eq!(&*cache.get_or_write(first, || write("new")), "new", "a change drops every page");
        assert_eq!(&*cache.get_or_write(legacy, || write("new legacy")), "new legacy");
        assert_eq!(cache.kept(), 2);
    }

    #[test]
    fn what_is_kept_is_bounded() {
        let cache = PageCache::default();
        for i in 0..MAX_CACHED_PAGES + 10 {
            let key = PageKey { legacy: false, after: Some(format!("k{i}")) };
            assert_eq!(&*cache.get_or_write(key, || format!("page {i}")), format!("page {i}"));
        }
        assert_eq!(cache.kept(), MAX_CACHED_PAGES);
        // A page past the bound is still right, written again each time.
        let key = PageKey { legacy: false, after: Some(format!("k{}", MAX_CACHED_PAGES + 5)) };
        assert_eq!(&*cache.get_or_write(key, || "again".to_owned()), "again");
    }
}
