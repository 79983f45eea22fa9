//! `mcpaxle_context_*`: what a server handler can do while its call is pending.
//!
//! # The MRTR replay model, for C
//!
//! An ask (`mcpaxle_context_elicit`, `_sample`, `_list_roots`) made under a key returns
//! `MCPAXLE_OK` with the client's answer when the request carries one for that key (the
//! client's retry). Otherwise it records the ask and returns `MCPAXLE_INPUT_REQUIRED`: keep
//! making the other asks you need, then finish with `mcpaxle_reply_input_required` (or
//! `mcpaxle_reply_propagate(c, code)`). The client retries with every answer and the
//! callback runs again **from the start**: do side effects after the asks. Under a legacy
//! (2025-11-25) session an ask is a real request to the client instead and blocks until the
//! client answers; the same handler code serves both eras.
//!
//! A NULL key is the next automatic key of the ask's kind, as an ask without a key in Python
//! and Node (the core's `RequestContext::ask_now`): `elicitation_1`, `elicitation_2`, ...,
//! `sampling_1`, ..., `roots_1`, ... in the order of this run's asks, so it names the same ask
//! on every run as long as the handler makes its asks in the same order.

use crate::calls::{Call, live, mcpaxle_context};
use crate::ffi::{
    FfiError, FfiResult, arg_json, arg_str, ffi_boundary, mcpaxle_result, opt_json, opt_str, out_ptr, set_opt_out,
    write_json,
};
use crate::runtime;
use mcpaxle_core::schema::LoggingLevel;
use mcpaxle_core::server::{Ask, AskKind};
use serde_json::{Value, json};
use std::ffi::{c_char, c_int};
use std::sync::Arc;

/// Log levels (RFC 5424 severities, least severe first) for `mcpaxle_context_log`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcpaxle_log_level {
    /// debug
    MCPAXLE_LOG_DEBUG = 0,
    /// info
    MCPAXLE_LOG_INFO = 1,
    /// notice
    MCPAXLE_LOG_NOTICE = 2,
    /// warning
    MCPAXLE_LOG_WARNING = 3,
    /// error
    MCPAXLE_LOG_ERROR = 4,
    /// critical
    MCPAXLE_LOG_CRITICAL = 5,
    /// alert
    MCPAXLE_LOG_ALERT = 6,
    /// emergency
    MCPAXLE_LOG_EMERGENCY = 7,
}

pub(crate) fn level_of(level: c_int) -> FfiResult<LoggingLevel> {
    Ok(match level {
        0 => LoggingLevel::Debug,
        1 => LoggingLevel::Info,
        2 => LoggingLevel::Notice,
        3 => LoggingLevel::Warning,
        4 => LoggingLevel::Error,
        5 => LoggingLevel::Critical,
        6 => LoggingLevel::Alert,
        7 => LoggingLevel::Emergency,
        _ => {
            return Err(FfiError::usage(format!("{level} is not an mcpaxle_log_level")));
        }
    })
}

fn server_ctx(ctx: *mut mcpaxle_context) -> FfiResult<(Arc<Call>, mcpaxle_core::RequestContext)> {
    let call = live(ctx)?;
    let rc = call.ctx.clone().ok_or_else(|| FfiError::usage("this handle has no request context"))?;
    Ok((call, rc))
}

/// Makes an ask under `key` (None: the core's next automatic key), blocking for a legacy
/// client's answer; remembers its failure for `mcpaxle_reply_propagate`.
fn ask(ctx: *mut mcpaxle_context, out: &mut *mut c_char, kind: AskKind, key: Option<&str>, params: Value) -> FfiResult {
    let (call, rc) = server_ctx(ctx)?;
    let outcome = match rc.ask_now(kind, key, params) {
        Ask::Answered(outcome) => outcome,
        Ask::Pending(answer) => runtime::block_on(answer)?,
    };
    match outcome {
        Ok(answer) => {
            write_json(out, &answer);
            Ok(())
        }
        Err(e) => {
            call.remember(&e);
            Err(e.into())
        }
    }
}

/// Asks the client for input through elicitation (`elicitation/create`; `params_json` is an
/// `ElicitRequestParams` object such as `{"mode": "form", "message": "...", "requestedSchema":
/// {...}}`) under `key`, unique within the request.
///
/// A NULL `key` is the next automatic key, as an ask without a key in Python and Node:
/// `elicitation_1`, `elicitation_2`, ... (`sampling_1`, ... for `mcpaxle_context_sample`,
/// `roots_1`, ... for `mcpaxle_context_list_roots`) in the order of this run's asks of that
/// kind, so it names the same ask on every run as long as the handler asks in the same order.
///
/// Returns `MCPAXLE_OK` with the client's `ElicitResult` in `*answer_json`, or
/// `MCPAXLE_INPUT_REQUIRED` when the round must end (see the MRTR model above), or an error:
/// `MCPAXLE_ERR_MISSING_CAPABILITY` when the client did not declare `elicitation`,
/// `MCPAXLE_ERR_INVALID_PARAMS` when its answer is malformed. In a legacy session this blocks
/// until the client answers.
///
/// Ownership: the strings are borrowed; `*answer_json` is the caller's (free it with
/// `mcpaxle_string_free`). Thread: any, while the call is pending; blocking is fine on the
/// callback's thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_elicit(
    ctx: *mut mcpaxle_context,
    key: *const c_char,
    params_json: *const c_char,
    answer_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: pointers per the documented contract.
        let (out, key, params) = unsafe {
            (out_ptr(answer_json, "answer_json")?, opt_str(key, "key")?, arg_json(params_json, "params_json")?)
        };
        ask(ctx, out, AskKind::Elicit, key, params)
    })
}

/// Asks the client to sample its LLM (`sampling/createMessage`; `params_json` is a
/// `CreateMessageRequestParams` object) under `key` (NULL: the next automatic key,
/// `sampling_1`, ...). Returns and blocks as `mcpaxle_context_elicit`; `*answer_json` is a
/// `CreateMessageResult`.
///
/// Ownership and thread: as `mcpaxle_context_elicit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_sample(
    ctx: *mut mcpaxle_context,
    key: *const c_char,
    params_json: *const c_char,
    answer_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: pointers per the documented contract.
        let (out, key, params) = unsafe {
            (out_ptr(answer_json, "answer_json")?, opt_str(key, "key")?, arg_json(params_json, "params_json")?)
        };
        ask(ctx, out, AskKind::Sample, key, params)
    })
}

/// Asks the client for its roots (`roots/list`) under `key` (NULL: the next automatic key,
/// `roots_1`, ...). Returns and blocks as `mcpaxle_context_elicit`; `*answer_json` is a
/// `ListRootsResult` (`{"roots": [...]}`).
///
/// Ownership and thread: as `mcpaxle_context_elicit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_list_roots(
    ctx: *mut mcpaxle_context,
    key: *const c_char,
    answer_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: pointers per the documented contract.
        let (out, key) = unsafe { (out_ptr(answer_json, "answer_json")?, opt_str(key, "key")?) };
        ask(ctx, out, AskKind::ListRoots, key, json!({}))
    })
}

/// Sends `notifications/progress` for this request (nothing when the client sent no progress
/// token). `progress` should grow from one call to the next; `total` is left out when it is
/// negative or NaN; `message` may be NULL.
///
/// Ownership: `message` is borrowed. Thread: any, while the call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_progress(
    ctx: *mut mcpaxle_context,
    progress: f64,
    total: f64,
    message: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let message = unsafe { opt_str(message, "message")? };
        let (_, rc) = server_ctx(ctx)?;
        let total = if total.is_nan() || total < 0.0 { None } else { Some(total) };
        rc.progress(progress, total, message);
        Ok(())
    })
}

/// Ends this request's SSE response stream now and asks the client to reconnect after
/// `retry_ms` milliseconds (SEP-1699 polling: a long operation need not hold a connection
/// open). The request goes on: what it sends afterwards, its reply included, reaches the
/// client when it resumes with `Last-Event-ID`. Only legacy (2025-11-25) Streamable HTTP
/// sessions have resumable streams; elsewhere this does nothing.
///
/// Thread: any, while the call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_close_stream(ctx: *mut mcpaxle_context, retry_ms: u32) -> mcpaxle_result {
    ffi_boundary!({
        let (_, rc) = server_ctx(ctx)?;
        rc.close_stream(std::time::Duration::from_millis(u64::from(retry_ms)));
        Ok(())
    })
}

/// Sends `notifications/message` (a log message, `data_json` any JSON value) for this request,
/// only when the request asked for logs at `level` (an `mcpaxle_log_level`) or below; `logger`
/// may be NULL.
///
/// Ownership: the strings are borrowed. Thread: any, while the call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_log(
    ctx: *mut mcpaxle_context,
    level: c_int,
    logger: *const c_char,
    data_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (logger, data) = unsafe { (opt_str(logger, "logger")?, arg_json(data_json, "data_json")?) };
        let level = level_of(level)?;
        let (_, rc) = server_ctx(ctx)?;
        rc.log(level, logger, data);
        Ok(())
    })
}

/// Whether a log message at `level` would be sent (false for a NULL or finished context, or
/// an invalid level). Thread: any.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_context_log_enabled(ctx: *mut mcpaxle_context, level: c_int) -> bool {
    ffi_boundary!(false, {
        match (server_ctx(ctx), level_of(level)) {
            (Ok((_, rc)), Ok(l)) => rc.log_enabled(l),
            _ => false,
        }
    })
}

/// Sends any request-scoped notification (`method`, `params_json` an object) on this request's
/// response stream.
///
/// Ownership: the strings are borrowed. Thread: any, while the call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_notify(
    ctx: *mut mcpaxle_context,
    method: *const c_char,
    params_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, params) = unsafe { (arg_str(method, "method")?, opt_json(params_json, "params_json")?) };
        let (_, rc) = server_ctx(ctx)?;
        rc.notify(method, params.unwrap_or_else(|| json!({})));
        Ok(())
    })
}

/// Whether the request was cancelled (the client cancelled or went away, the server is
/// shutting down): stop working and complete. Also true once the call is over and for NULL.
/// Thread: any; cheap, so poll it in loops.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_context_is_cancelled(ctx: *mut mcpaxle_context) -> bool {
    ffi_boundary!(true, {
        match server_ctx(ctx) {
            Ok((_, rc)) => rc.is_cancelled(),
            Err(_) => true,
        }
    })
}

/// For a tool registered with `"deferTask": true` (`mcpaxle_server_add_tool_with_options`):
/// answers the `tools/call` now with its task's handle (a `CreateTaskResult`) and goes on as
/// that task; asks made before were answered as in an ordinary call (MRTR rounds). Inside a
/// task, asks (`mcpaxle_context_elicit`, ...) block until the client answers the task's input
/// requests with `tasks/update`, progress messages become the task's status message, and
/// `tasks/cancel` makes `mcpaxle_context_is_cancelled` true: reply then. `*started` (may be
/// NULL) tells whether the call now runs as a task: false when the client did not declare the
/// extension (the call goes on as an ordinary one) or the tool cannot run as a task. The
/// task's id is `taskId` in `mcpaxle_context_info` (a tool with `"taskSupport"` and no
/// `"deferTask"` runs as a task from the start).
///
/// Thread: the handler's (it blocks until the handle is sent); not from an inline handler.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_start_task(ctx: *mut mcpaxle_context, started: *mut bool) -> mcpaxle_result {
    ffi_boundary!({
        let (call, rc) = server_ctx(ctx)?;
        let outcome = runtime::block_on(rc.start_task())?;
        let is_task = outcome.inspect_err(|e| call.remember(e))?;
        // SAFETY: NULL or writable, per the contract.
        unsafe { set_opt_out(started, is_task) };
        Ok(())
    })
}

/// Whether the client declared a capability for this request (`"sampling"`, `"elicitation"`,
/// `"roots"`, ...); false for NULL arguments or a finished call. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_client_supports(ctx: *mut mcpaxle_context, capability: *const c_char) -> bool {
    ffi_boundary!(false, {
        // SAFETY: per the contract.
        let cap = unsafe { arg_str(capability, "capability") };
        match (server_ctx(ctx), cap) {
            (Ok((_, rc)), Ok(c)) => rc.client_supports(c),
            _ => false,
        }
    })
}

/// What the request is, as a JSON object: `method`, `requestId`, `protocolVersion`,
/// `clientCapabilities`, `clientInfo` (or null), `principal` (or null), `progressToken` (or
/// null), the whole `_meta` as `meta`, the request's HTTP `headers` (lowercase names, repeated
/// ones joined with ", "; `{}` on stdio), the bearer token's `claims` and `scopes` (null
/// without a token), `taskId`, the id of the task the call runs as (null for an ordinary
/// call), and `trace`, the request's trace context while telemetry is on (`traceparent`, and
/// `tracestate` and `baggage` when set; null otherwise): what spans of the handler's own
/// continue.
///
/// Ownership: `*info_json` is the caller's (`mcpaxle_string_free`). Thread: any, while the
/// call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_info(
    ctx: *mut mcpaxle_context,
    info_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let out = unsafe { out_ptr(info_json, "info_json")? };
        let (_, rc) = server_ctx(ctx)?;
        let info = rc.info_json();
        write_json(out, &info);
        Ok(())
    })
}

/// The state this handler saved in an earlier round with `mcpaxle_context_set_request_state`,
/// as JSON in `*state_json`, or NULL (and `MCPAXLE_OK`) when there is none.
///
/// Ownership: `*state_json` is the caller's (`mcpaxle_string_free`). Thread: any, while the
/// call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_request_state(
    ctx: *mut mcpaxle_context,
    state_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let out = unsafe { out_ptr(state_json, "state_json")? };
        let (_, rc) = server_ctx(ctx)?;
        if let Some(state) = rc.request_state() {
            write_json(out, &state);
        }
        Ok(())
    })
}

/// Saves state (any JSON value) for the next round: sealed into the `requestState` of the
/// `InputRequiredResult` this run ends with. To ask for a retry with no input requests at all,
/// set state and complete with `mcpaxle_reply_input_required`.
///
/// Ownership: `state_json` is borrowed. Thread: any, while the call is pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_context_set_request_state(
    ctx: *mut mcpaxle_context,
    state_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let state = unsafe { arg_json(state_json, "state_json")? };
        let (_, rc) = server_ctx(ctx)?;
        rc.set_request_state(state);
        Ok(())
    })
}
