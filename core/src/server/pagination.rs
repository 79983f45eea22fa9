//! Opaque cursors over the key-ordered registries. A cursor names the last key of the page
//! it follows, so pages stay correct while entries are added or removed in between.

use crate::error::{Error, Result};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

const PREFIX: &str = "mcpaxle:v1:";

/// Reads `params.cursor`: absent means the first page; anything this server did not issue is
/// a -32602 error.
pub(crate) fn read_cursor(params: Option<&Value>) -> Result<Option<String>> {
    let raw = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s,
        Some(_) => return Err(Error::invalid_params("Invalid cursor: \"cursor\" must be a string")),
    };
    let invalid = || Error::invalid_params("Invalid cursor: use the nextCursor of a previous page of this list");
    let bytes = URL_SAFE_NO_PAD.decode(raw.as_bytes()).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    text.strip_prefix(PREFIX).map(|k| Some(k.to_owned())).ok_or_else(invalid)
}

fn make_cursor(last_key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{PREFIX}{last_key}"))
}

/// One page of `map` after `after`, mapped with `f`, and the cursor of the next page.
#[cfg(test)]
pub(crate) fn page<'a, E, T>(
    map: &'a BTreeMap<String, Arc<E>>,
    after: Option<&str>,
    size: usize,
    f: impl Fn(&'a E) -> T,
) -> (Vec<T>, Option<String>) {
    page_where(map, after, size, |_, _| true, f)
}

/// One page of the entries of `map` after `after` that `keep` keeps, mapped with `f`, and
/// the cursor of the next page: pages are cut after filtering, so each holds `size` kept
/// entries (the last fewer), and a cursor names the last kept key of its page.
pub(crate) fn page_where<'a, E, T>(
    map: &'a BTreeMap<String, Arc<E>>,
    after: Option<&str>,
    size: usize,
    keep: impl Fn(&str, &E) -> bool,
    f: impl Fn(&'a E) -> T,
) -> (Vec<T>, Option<String>) {
    let start = match after {
        Some(k) => Bound::Excluded(k),
        None => Bound::Unbounded,
    };
    let mut items = Vec::with_capacity(size.min(map.len()));
    let mut last = None;
    let mut more = false;
    for (k, e) in map.range::<str, _>((start, Bound::Unbounded)) {
        if !keep(k, e) {
            continue;
        }
        if items.len() == size {
            more = true;
            break;
        }
        items.push(f(e));
        last = Some(k.as_str());
    }
    (items, if more { last.map(make_cursor) } else { None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_through_and_rejects_foreign_cursors() {
        let map: BTreeMap<String, Arc<u32>> = (0..5).map(|i| (format!("k{i}"), Arc::new(i))).collect();
        let (a, c) = page(&map, None, 2, |v| json!(v));
        assert_eq!(a, vec![json!(0), json!(1)]);
        let after = read_cursor(Some(&json!({ "cursor": c.unwrap() }))).unwrap();
        let (b, c) = page(&map, after.as_deref(), 2, |v| json!(v));
        assert_eq!(b, vec![json!(2), json!(3)]);
        let after = read_cursor(Some(&json!({ "cursor": c.unwrap() }))).unwrap();
        let (d, c) = page(&map, after.as_deref(), 2, |v| json!(v));
        assert_eq!((d, c), (vec![json!(4)], None));
        assert!(read_cursor(Some(&json!({ "cursor": "garbage!" }))).is_err());
        assert!(read_cursor(Some(&json!({ "cursor": URL_SAFE_NO_PAD.encode("other") }))).is_err());
        assert!(read_cursor(Some(&json!({ "cursor": 3 }))).is_err());
        assert_eq!(read_cursor(Some(&json!({}))).unwrap(), None);
    }

    #[test]
    fn filtered_pages_are_full_and_their_cursors_skip_hidden_keys() {
        let map: BTreeMap<String, Arc<u32>> = (0..7).map(|i| (format!("k{i}"), Arc::new(i))).collect();
        let even = |_: &str, v: &u32| v % 2 == 0;
        let (a, c) = page_where(&map, None, 2, even, |v| json!(v));
        assert_eq!(a, vec![json!(0), json!(2)]);
        let after = read_cursor(Some(&json!({ "cursor": c.unwrap() }))).unwrap();
        let (b, c) = page_where(&map, after.as_deref(), 2, even, |v| json!(v));
        assert_eq!((b, c), (vec![json!(4), json!(6)], None), "no page after the last kept entry");
        // A cursor whose key is hidden since still goes on after it.
        let (d, _) = page_where(&map, Some("k1"), 1, even, |v| json!(v));
        assert_eq!(d, vec![json!(2)]);
    }
}
