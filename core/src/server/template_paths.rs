//! Path traversal protection for resource template variables.
//!
//! A handler of `file:///{+path}` or `note://{id}` often turns a variable into a file path. So
//! before a handler sees the variables of a `resources/read`, each value (each item of a list,
//! each key and value of an exploded object) is checked, and the read is refused with
//! "Resource not found" when a value holds:
//!
//! - a `..` segment (between `/` or `\`, or the whole value), which climbs out of a directory;
//! - a backslash (`\`, `%5C`), a path separator on Windows;
//! - a slash (`/`, `%2F`) in a variable that is one segment: any but `{+var}` and `{#var}`;
//! - an absolute path: a value of `{+var}` or `{#var}` that starts with `/`, or a Windows
//!   drive (`C:`, `C:/…`) in any variable;
//! - a NUL character (`%00`), which ends a path early in C APIs;
//! - a percent-encoding that survived decoding (`%2F`, `%5C`, `%2E`, `%00` in the decoded
//!   value: the URI encoded it twice), which a handler decoding again would turn into one of
//!   the above.
//!
//! A template whose handler needs such values (it does not touch files, or checks paths itself)
//! opts out with [`TemplateOptions::allow_path_traversal`].

use crate::server::uri_template::UriTemplate;
use serde::Deserialize;
use serde_json::{Map, Value};

/// How a resource template is served, besides its caching hint (see
/// [`Server::add_resource_template_with`](crate::Server::add_resource_template_with)). The
/// bindings take the same options: `allow_path_traversal=True` in Python,
/// `{ allowPathTraversal: true }` in Node and in C's `options_json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct TemplateOptions {
    /// Hand the handler the variables of a read exactly as matched, without the path
    /// traversal check of this module (default `false`: values holding `..` segments, encoded
    /// slashes, backslashes, absolute paths or NUL are refused with "Resource not found").
    /// Turn it on only for a handler that never uses a variable as a path, or checks it itself.
    #[serde(alias = "allow_path_traversal")]
    pub allow_path_traversal: bool,
}

/// Checks the variables `template` matched; `Err` says which variable holds what, for the
/// error message.
pub(crate) fn check(template: &UriTemplate, vars: &Map<String, Value>) -> Result<(), String> {
    let multi_segment = template.multi_segment_variables();
    for (name, value) in vars {
        let one_segment = !multi_segment.contains(&name.as_str());
        let refuse =
            |text: &str| refusal(text, one_segment).map(|what| format!("the value of {{{name}}} holds {what}"));
        let found = match value {
            Value::String(s) => refuse(s),
            Value::Array(items) => items.iter().filter_map(Value::as_str).find_map(refuse),
            Value::Object(members) => {
                members.iter().find_map(|(k, v)| refuse(k).or_else(|| v.as_str().and_then(refuse)))
            }
            _ => None,
        };
        if let Some(why) = found {
            return Err(why);
        }
    }
    Ok(())
}

/// What is wrong with one decoded value, in words, if anything.
fn refusal(value: &str, one_segment: bool) -> Option<&'static str> {
    if value.contains('\0') {
        return Some("a NUL character");
    }
    if value.contains('\\') {
        return Some("a backslash");
    }
    if one_segment && value.contains('/') {
        return Some("a slash (an encoded %2F in a single path segment)");
    }
    if value.split('/').any(|segment| segment == "..") {
        return Some("a \"..\" segment (path traversal)");
    }
    let bytes = value.as_bytes();
    if value.starts_with('/')
        || (bytes.len() >= 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes.get(2), None | Some(b'/')))
    {
        return Some("an absolute path");
    }
    let lower = value.to_ascii_lowercase();
    if ["%2f", "%5c", "%2e", "%00"].iter().any(|e| lower.contains(e)) {
        return Some("a percent-encoding that survived decoding (the URI encoded it twice)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_uri(template: &str, uri: &str) -> Result<(), String> {
        let t = UriTemplate::parse(template).unwrap();
        let vars = t.match_uri(uri).unwrap_or_else(|| panic!("{uri} does not match {template}"));
        check(&t, &vars)
    }

    #[test]
    fn safe_values_pass() {
        for (template, uri) in [
            ("note://{id}", "note://42"),
            ("note://{id}", "note://my%20note.txt"),
            ("note://{id}", "note://a..b"),
            ("note://{id}", "note://.hidden"),
            ("file:///{+path}", "file:///docs/guide/intro.md"),
            ("file:///{+path}", "file:///docs/a..b/c"),
            ("repo://{owner}/{name}{/path*}", "repo://me/x/src/lib.rs"),
            ("search://q{?tags*}", "search://q?tags=a&tags=b"),
            ("u://{x}", "u://100%25"),
        ] {
            assert_eq!(check_uri(template, uri), Ok(()), "{uri}");
        }
    }

    #[test]
    fn traversal_is_refused() {
        for (template, uri, what) in [
            ("note://{id}", "note://..", "\"..\""),
            ("note://{id}", "note://%2E%2E", "\"..\""),
            ("note://{id}", "note://..%2F..%2Fetc%2Fpasswd", "slash"),
            ("note://{id}", "note://a%2Fb", "slash"),
            ("note://{id}", "note://a%5Cb", "backslash"),
            ("note://{id}", "note://..%5C..%5Cwin.ini", "backslash"),
            ("note://{id}", "note://a%00.txt", "NUL"),
            ("note://{id}", "note://C:", "absolute"),
            ("note://{id}", "note://%252F", "twice"),
            ("note://{id}", "note://%252e%252e", "twice"),
            ("file:///{+path}", "file:///../etc/passwd", "\"..\""),
            ("file:///{+path}", "file:///docs/../../etc/passwd", "\"..\""),
            ("file:///{+path}", "file:///docs/..", "\"..\""),
            ("file:///{+path}", "file:////etc/passwd", "absolute"),
            ("file:///{+path}", "file:///C:/Windows/win.ini", "absolute"),
            ("file:///{+path}", "file:///a%5C..%5Cb", "backslash"),
            ("repo://{owner}{/path*}", "repo://me/src/../../secret", "\"..\""),
            ("search://q{?tags*}", "search://q?tags=ok&tags=..", "\"..\""),
            ("search://q{?opts*}", "search://q?..=1", "\"..\""),
        ] {
            let why = check_uri(template, uri).expect_err(uri);
            assert!(why.contains(what), "{uri}: {why}");
            assert!(why.starts_with("the value of {"), "{why}");
        }
    }

    #[test]
    fn options_deserialize_with_the_binding_names() {
        let o: TemplateOptions = serde_json::from_str(r#"{"allowPathTraversal": true}"#).unwrap();
        assert!(o.allow_path_traversal);
        assert_eq!(serde_json::from_str::<TemplateOptions>("{}").unwrap(), TemplateOptions::default());
        let python: TemplateOptions = serde_json::from_str(r#"{"allow_path_traversal": true}"#).unwrap();
        assert!(python.allow_path_traversal, "the Python name is the same option");
        assert!(
            serde_json::from_str::<TemplateOptions>(r#"{"allowTraversal": true}"#).is_err(),
            "unknown names are refused"
        );
    }
}
