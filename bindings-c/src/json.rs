//! Small JSON helpers for C programs that have no JSON library: read a value by JSON Pointer,
//! and quote a string as a JSON string literal.
//!
//! They earn their place: every payload of the C API is JSON text (a tool's arguments, a
//! result, an error's data), and C has no JSON parser; without them the first thing each C user
//! must do is pick, build and link one. They are thin (serde_json's RFC 6901 `pointer` and its
//! string escaping, no parser of our own) and touch no runtime state.

use crate::ffi::{
    FfiError, FfiResult, arg_json, arg_str, ffi_boundary, into_c_string, mcpaxle_result, out_ptr, write_json,
};
use serde_json::Value;
use std::ffi::c_char;

fn pointer<'a>(doc: &'a Value, ptr: &str) -> FfiResult<Option<&'a Value>> {
    if !(ptr.is_empty() || ptr.starts_with('/')) {
        return Err(FfiError::usage("pointer must be \"\" or start with '/' (RFC 6901)"));
    }
    Ok(doc.pointer(ptr))
}

/// The value at `pointer` (an RFC 6901 JSON Pointer such as "/content/0/text"; "" is the
/// whole document) of the JSON document `json`, as JSON text in `*out_json`; NULL (and
/// `MCPAXLE_OK`) when there is no such value.
///
/// Ownership: the inputs are borrowed, only for the duration of the call (a string an accessor
/// of `mcpaxle_error` returned is fine, and stays valid afterwards); `*out_json` is the
/// caller's (`mcpaxle_string_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_json_get(
    json: *const c_char,
    pointer: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, doc, ptr) =
            unsafe { (out_ptr(out_json, "out_json")?, arg_json(json, "json")?, arg_str(pointer, "pointer")?) };
        if let Some(v) = self::pointer(&doc, ptr)? {
            write_json(out, v);
        }
        Ok(())
    })
}

/// Like `mcpaxle_json_get`, but a string value comes out as its text (unquoted, unescaped);
/// numbers, booleans, arrays and objects come out as JSON text (`42`, `true`); NULL (and
/// `MCPAXLE_OK`) when there is no such value or it is JSON `null`, so that a null is never
/// mistaken for the string "null". (`mcpaxle_json_get` tells the two apart: "null" for a null,
/// NULL for no value.)
///
/// Ownership: the inputs are borrowed (only for the duration of the call); `*out` is the
/// caller's (`mcpaxle_string_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_json_get_string(
    json: *const c_char,
    pointer: *const c_char,
    out: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, doc, ptr) = unsafe { (out_ptr(out, "out")?, arg_json(json, "json")?, arg_str(pointer, "pointer")?) };
        match self::pointer(&doc, ptr)? {
            Some(Value::String(s)) => *out = into_c_string(s),
            Some(Value::Null) | None => {}
            Some(v) => write_json(out, v),
        }
        Ok(())
    })
}

/// The number of elements (array), members (object) or characters (string) of the value at
/// `pointer`; 0 for other values and when there is no such value.
///
/// Ownership: the inputs are borrowed, only for the duration of the call. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_json_length(
    json: *const c_char,
    pointer: *const c_char,
    length: *mut usize,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let length = unsafe { length.as_mut() }.ok_or_else(|| FfiError::null("length"))?;
        *length = 0;
        // SAFETY: per the documented contract.
        let (doc, ptr) = unsafe { (arg_json(json, "json")?, arg_str(pointer, "pointer")?) };
        *length = match self::pointer(&doc, ptr)? {
            Some(Value::Array(a)) => a.len(),
            Some(Value::Object(o)) => o.len(),
            Some(Value::String(s)) => s.chars().count(),
            _ => 0,
        };
        Ok(())
    })
}

/// `text` as a JSON string literal, quotes included (`He said "hi"` becomes
/// `"He said \"hi\""`), to splice into JSON built with printf.
///
/// Ownership: `text` is borrowed, only for the duration of the call; `*out_json` is the
/// caller's (`mcpaxle_string_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_json_quote(text: *const c_char, out_json: *mut *mut c_char) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, text) = unsafe { (out_ptr(out_json, "out_json")?, arg_str(text, "text")?) };
        write_json(out, &Value::String(text.to_owned()));
        Ok(())
    })
}

/// The member names of the object at `pointer`, as a JSON array of strings in `*keys_json`
/// (`[]` for a value that is not an object); NULL when there is no such value. With
/// `mcpaxle_json_length` and `mcpaxle_json_get`, it lets C code walk any JSON document.
///
/// Ownership and thread: as `mcpaxle_json_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_json_keys(
    json: *const c_char,
    pointer: *const c_char,
    keys_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, doc, ptr) =
            unsafe { (out_ptr(keys_json, "keys_json")?, arg_json(json, "json")?, arg_str(pointer, "pointer")?) };
        if let Some(v) = self::pointer(&doc, ptr)? {
            let keys: Vec<&String> = v.as_object().map(|o| o.keys().collect()).unwrap_or_default();
            write_json(out, &serde_json::json!(keys));
        }
        Ok(())
    })
}

/// An elicitation answer's `content` with the defaults of `requested_schema_json` (an
/// `ElicitRequestParams.requestedSchema`) applied to the fields `content_json` (an object, or
/// NULL for `{}`) leaves out (SEP-1034), as JSON in `*out_json`.
///
/// Ownership and thread: as `mcpaxle_json_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_elicitation_apply_defaults(
    requested_schema_json: *const c_char,
    content_json: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, schema, content) = unsafe {
            (
                out_ptr(out_json, "out_json")?,
                arg_json(requested_schema_json, "requested_schema_json")?,
                crate::ffi::opt_json(content_json, "content_json")?,
            )
        };
        let mut content = match content {
            None => serde_json::Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(FfiError::usage("content_json must be an object"));
            }
        };
        mcpaxle_core::client::apply_schema_defaults(&schema, &mut content);
        write_json(out, &Value::Object(content));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{CStr, CString};

    fn get_string(json: &str, pointer: &str) -> (mcpaxle_result, Option<String>) {
        let (json, pointer) = (CString::new(json).unwrap(), CString::new(pointer).unwrap());
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid strings and out-parameter.
        let r = unsafe { mcpaxle_json_get_string(json.as_ptr(), pointer.as_ptr(), &mut out) };
        let text = (!out.is_null()).then(|| {
            // SAFETY: the library returned a valid string, freed right after.
            let t = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
            unsafe { crate::ffi::mcpaxle_string_free(out) };
            t
        });
        (r, text)
    }

    #[test]
    fn get_string_gives_null_no_text() {
        let doc = r#"{"s": "null", "n": null, "x": 42}"#;
        assert_eq!(get_string(doc, "/s"), (mcpaxle_result::MCPAXLE_OK, Some("null".into())));
        assert_eq!(get_string(doc, "/n"), (mcpaxle_result::MCPAXLE_OK, None));
        assert_eq!(get_string(doc, "/missing"), (mcpaxle_result::MCPAXLE_OK, None));
        assert_eq!(get_string(doc, "/x"), (mcpaxle_result::MCPAXLE_OK, Some("42".into())));
    }
}
