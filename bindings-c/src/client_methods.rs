//! What each method of `mcpaxle_client` does: `method_X` reads the C arguments of
//! `mcpaxle_client_X` (and of `mcpaxle_client_X_async`) into a [`Method`], which the client
//! runs with the call's options. The exported pairs are generated from these, one table entry
//! each, into `client_methods_ffi.rs` by `bindings-c/scripts/gen_client_methods.py`.
//!
//! Every `method_X` is `unsafe`: its pointer arguments are those of its export, NUL-terminated
//! strings or NULL where the export allows it, valid for the duration of the call.

use crate::client::{Method, to_value};
use crate::ffi::{FfiError, FfiResult, arg_json, arg_str, from_json, opt_json, opt_str};
use mcpaxle_core::client::{CallOptions, Client};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::c_char;

pub(crate) unsafe fn method_request(method: *const c_char, params_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let (m, p) = unsafe {
        (arg_str(method, "method")?.to_owned(), opt_json(params_json, "params_json")?.unwrap_or(Value::Null))
    };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { c.request(&m, p, o).await })))
}

pub(crate) unsafe fn method_discover() -> FfiResult<Method> {
    Ok(Box::new(move |c: Client, _o: CallOptions| Box::pin(async move { to_value(c.discover().await) })))
}

pub(crate) unsafe fn method_list_tools(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_tools(cursor.as_deref()).await) })
    }))
}

pub(crate) unsafe fn method_list_resources(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_resources(cursor.as_deref()).await) })
    }))
}

pub(crate) unsafe fn method_list_resource_templates(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_resource_templates(cursor.as_deref()).await) })
    }))
}

pub(crate) unsafe fn method_list_prompts(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_prompts(cursor.as_deref()).await) })
    }))
}

pub(crate) unsafe fn method_call_tool(name: *const c_char, arguments_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let (n, a) = unsafe {
        (arg_str(name, "name")?.to_owned(), opt_json(arguments_json, "arguments_json")?.unwrap_or(Value::Null))
    };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { to_value(c.call_tool(&n, a, o).await) })))
}

pub(crate) unsafe fn method_read_resource(uri: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let u = unsafe { arg_str(uri, "uri")?.to_owned() };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { to_value(c.read_resource(&u, o).await) })))
}

pub(crate) unsafe fn method_get_prompt(name: *const c_char, arguments_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let (n, a) = unsafe { (arg_str(name, "name")?.to_owned(), opt_json(arguments_json, "arguments_json")?) };
    let a: BTreeMap<String, String> = a.map(|v| from_json(v, "arguments_json")).transpose()?.unwrap_or_default();
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { to_value(c.get_prompt(&n, a, o).await) })))
}

pub(crate) unsafe fn method_complete(params_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let p = unsafe { arg_json(params_json, "params_json")? };
    if !p.is_object() {
        return Err(FfiError::usage("params_json must be an object"));
    }
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { c.request("completion/complete", p, o).await })))
}
