//! The methods of `mcpaxle_client`, each as a blocking call and as an async call with a
//! completion callback.

use crate::client::{
    CallSpec, Method, call_async, call_blocking, mcpaxle_call_options, mcpaxle_client, mcpaxle_result_handler, to_value,
};
use crate::ffi::{FfiError, FfiResult, arg_json, arg_str, ffi_boundary, from_json, mcpaxle_result, opt_json, opt_str};
use mcpaxle_core::client::{CallOptions, Client};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};

// Every client method below comes in two forms, written out (cbindgen does not expand
// macros): the blocking `mcpaxle_client_X(client, args..., options, &result_json)` and
// `mcpaxle_client_X_async(client, args..., options, user_data, callback)`. Both build the same
// `Method` with `method_X`.

unsafe fn method_request(method: *const c_char, params_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let (m, p) = unsafe {
        (arg_str(method, "method")?.to_owned(), opt_json(params_json, "params_json")?.unwrap_or(Value::Null))
    };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { c.request(&m, p, o).await })))
}

/// Sends any request (`method`, `params_json` an object or NULL) through the whole client
/// pipeline (`_meta`, headers, cache, MRTR rounds, retries) and returns its result object.
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_request(
    client: *mut mcpaxle_client,
    method: *const c_char,
    params_json: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_request(method, params_json)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// Sends any request (`method`, `params_json` an object or NULL) through the whole client
/// pipeline (`_meta`, headers, cache, MRTR rounds, retries) and returns its result object.
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_request_async(
    client: *mut mcpaxle_client,
    method: *const c_char,
    params_json: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_request(method, params_json)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_discover() -> FfiResult<Method> {
    Ok(Box::new(move |c: Client, _o: CallOptions| Box::pin(async move { to_value(c.discover().await) })))
}

/// `server/discover` (in a legacy session, built from the `initialize` result): versions,
/// capabilities, instructions. Of `options`, only cancellation applies.
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_discover(
    client: *mut mcpaxle_client,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_discover()?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// `server/discover` (in a legacy session, built from the `initialize` result): versions,
/// capabilities, instructions. Of `options`, only cancellation applies.
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_discover_async(
    client: *mut mcpaxle_client,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_discover()?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_list_tools(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_tools(cursor.as_deref()).await) })
    }))
}

/// One page of `tools/list` (`cursor` NULL for the first page, the result's `nextCursor` for
/// the next). On HTTP, tools whose `x-mcp-header` annotations are invalid are left out.
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_tools(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_tools(cursor)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// One page of `tools/list` (`cursor` NULL for the first page, the result's `nextCursor` for
/// the next). On HTTP, tools whose `x-mcp-header` annotations are invalid are left out.
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_tools_async(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_tools(cursor)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_list_resources(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_resources(cursor.as_deref()).await) })
    }))
}

/// One page of `resources/list` (`cursor` as in `mcpaxle_client_list_tools`).
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_resources(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_resources(cursor)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// One page of `resources/list` (`cursor` as in `mcpaxle_client_list_tools`).
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_resources_async(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_resources(cursor)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_list_resource_templates(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_resource_templates(cursor.as_deref()).await) })
    }))
}

/// One page of `resources/templates/list` (`cursor` as in `mcpaxle_client_list_tools`).
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_resource_templates(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_resource_templates(cursor)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// One page of `resources/templates/list` (`cursor` as in `mcpaxle_client_list_tools`).
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_resource_templates_async(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_resource_templates(cursor)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_list_prompts(cursor: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let cursor = unsafe { opt_str(cursor, "cursor")?.map(str::to_owned) };
    Ok(Box::new(move |c: Client, _o: CallOptions| {
        Box::pin(async move { to_value(c.list_prompts(cursor.as_deref()).await) })
    }))
}

/// One page of `prompts/list` (`cursor` as in `mcpaxle_client_list_tools`).
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_prompts(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_prompts(cursor)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// One page of `prompts/list` (`cursor` as in `mcpaxle_client_list_tools`).
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_list_prompts_async(
    client: *mut mcpaxle_client,
    cursor: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_list_prompts(cursor)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_call_tool(name: *const c_char, arguments_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let (n, a) = unsafe {
        (arg_str(name, "name")?.to_owned(), opt_json(arguments_json, "arguments_json")?.unwrap_or(Value::Null))
    };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { to_value(c.call_tool(&n, a, o).await) })))
}

/// `tools/call` of tool `name` with `arguments_json` (an object, or NULL for none). The
/// server's input requests are answered by the input handlers; a tool's own failure is a
/// result with `isError: true`, not an error code.
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_call_tool(
    client: *mut mcpaxle_client,
    name: *const c_char,
    arguments_json: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_call_tool(name, arguments_json)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// `tools/call` of tool `name` with `arguments_json` (an object, or NULL for none). The
/// server's input requests are answered by the input handlers; a tool's own failure is a
/// result with `isError: true`, not an error code.
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_call_tool_async(
    client: *mut mcpaxle_client,
    name: *const c_char,
    arguments_json: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_call_tool(name, arguments_json)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_read_resource(uri: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let u = unsafe { arg_str(uri, "uri")?.to_owned() };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { to_value(c.read_resource(&u, o).await) })))
}

/// `resources/read` of `uri`.
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_read_resource(
    client: *mut mcpaxle_client,
    uri: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_read_resource(uri)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// `resources/read` of `uri`.
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_read_resource_async(
    client: *mut mcpaxle_client,
    uri: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_read_resource(uri)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_get_prompt(name: *const c_char, arguments_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let (n, a) = unsafe { (arg_str(name, "name")?.to_owned(), opt_json(arguments_json, "arguments_json")?) };
    let a: BTreeMap<String, String> = a.map(|v| from_json(v, "arguments_json")).transpose()?.unwrap_or_default();
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { to_value(c.get_prompt(&n, a, o).await) })))
}

/// `prompts/get` of prompt `name` with `arguments_json` (an object of strings, or NULL).
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_get_prompt(
    client: *mut mcpaxle_client,
    name: *const c_char,
    arguments_json: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_get_prompt(name, arguments_json)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// `prompts/get` of prompt `name` with `arguments_json` (an object of strings, or NULL).
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_get_prompt_async(
    client: *mut mcpaxle_client,
    name: *const c_char,
    arguments_json: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_get_prompt(name, arguments_json)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}

unsafe fn method_complete(params_json: *const c_char) -> FfiResult<Method> {
    // SAFETY: per the contract.
    let p = unsafe { arg_json(params_json, "params_json")? };
    if !p.is_object() {
        return Err(FfiError::new(mcpaxle_result::MCPAXLE_ERR_INVALID_PARAMS, "params_json must be an object"));
    }
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { c.request("completion/complete", p, o).await })))
}

/// `completion/complete`: `params_json` is `{"ref": {...}, "argument": {"name": ...,
/// "value": ...}, "context": {"arguments": {...}}}` (`context` optional).
///
/// Blocking: `*result_json` receives the result object (the caller's; free it with
/// `mcpaxle_string_free`). `options` may be NULL. Thread: any thread that is not an async
/// runtime worker; progress and log callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_complete(
    client: *mut mcpaxle_client,
    params_json: *const c_char,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_complete(params_json)?, CallSpec::of(options)) };
        call_blocking(client, result_json, spec, method)
    })
}

/// `completion/complete`: `params_json` is `{"ref": {...}, "argument": {"name": ...,
/// "value": ...}, "context": {"arguments": {...}}}` (`context` optional).
///
/// Async: returns at once (or with an error code, and no callback, when the arguments are
/// bad); `callback` then runs exactly once with the outcome, also when the client is freed
/// first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_complete_async(
    client: *mut mcpaxle_client,
    params_json: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (method_complete(params_json)?, CallSpec::of(options)) };
        call_async(client, callback, user_data, spec, method)
    })
}
