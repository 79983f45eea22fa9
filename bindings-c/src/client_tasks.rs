//! `mcpaxle_tool_task`: a `tools/call` held as a task of the Tasks extension (the core's
//! `ToolTask`) instead of followed transparently by `mcpaxle_client_call_tool`. Each operation
//! has a blocking form and an `_async` form that calls a callback exactly once, as the client's
//! methods do.

use crate::client::{
    CallSpec, MethodOf, client_ref, error_json, mcpaxle_call_options, mcpaxle_client, mcpaxle_result_handler, run,
    to_value,
};
use crate::ffi::{
    FfiError, FfiResult, SendPtr, arg_str, ffi_boundary, into_c_string, mcpaxle_result, opt_json, out_ptr, write_json,
};
use crate::owner::Owner;
use crate::runtime;
use mcpaxle_core::client::{CallOptions, Client, ToolTask};
use mcpaxle_core::{Error, ErrorKind};
use serde_json::{Value, json};
use std::ffi::{CString, c_char, c_void};
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A `tools/call` held as a task, from `mcpaxle_client_call_tool_as_task` or
/// `mcpaxle_client_task`. The task outlives the handle: **`mcpaxle_tool_task_free` does not
/// cancel the task** (`mcpaxle_tool_task_cancel` does); keep its id to pick it up again, even
/// from another process, with `mcpaxle_client_task`.
pub struct mcpaxle_tool_task {
    task: ToolTask,
    /// The client's: its `_async` callbacks are the client's too (see `mcpaxle_client_free`).
    client_owner: Arc<Owner>,
    client_freed: CancellationToken,
    /// The handle's own: `mcpaxle_tool_task_free` ends its pending `_async` calls.
    owner: Arc<Owner>,
    freed: CancellationToken,
}

/// Receives the outcome of `mcpaxle_client_call_tool_as_task_async`, exactly once: `code` is
/// `MCPAXLE_OK` and `task` the new handle (the caller's: `mcpaxle_tool_task_free`), or an error
/// code, `task` NULL and `error_json` the error as `{"code": <JSON-RPC code>, "message": "...",
/// "data": ...}` (borrowed for the duration of the callback; NULL on success).
///
/// Thread: a thread of the library's handler pool (blocking is allowed, including blocking
/// mcpaxle calls).
pub type mcpaxle_tool_task_handler = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        code: mcpaxle_result,
        task: *mut mcpaxle_tool_task,
        error_json: *const c_char,
    ),
>;

fn new_handle(task: ToolTask, client_owner: Arc<Owner>, client_freed: CancellationToken) -> *mut mcpaxle_tool_task {
    Box::into_raw(Box::new(mcpaxle_tool_task {
        task,
        client_owner,
        client_freed,
        owner: Arc::new(Owner::new()),
        freed: CancellationToken::new(),
    }))
}

fn task_ref<'a>(p: *const mcpaxle_tool_task) -> FfiResult<&'a mcpaxle_tool_task> {
    // SAFETY: callers pass NULL or a live handle, per their contract.
    unsafe { p.as_ref() }.ok_or_else(|| FfiError::null("task"))
}

/// # Safety
/// The pointers are those of `mcpaxle_client_call_tool_as_task`'s contract.
unsafe fn start(name: *const c_char, arguments_json: *const c_char) -> FfiResult<MethodOf<ToolTask>> {
    // SAFETY: per the contract.
    let (n, a) = unsafe {
        (arg_str(name, "name")?.to_owned(), opt_json(arguments_json, "arguments_json")?.unwrap_or(Value::Null))
    };
    Ok(Box::new(move |c: Client, o: CallOptions| Box::pin(async move { c.call_tool_as_task(&n, a, o).await })))
}

/// `tools/call` of tool `name` with `arguments_json` (an object, or NULL for none), holding the
/// task the server may run it as instead of following it. When the server answers with the
/// result itself (the tool does not run as a task), the handle is already complete:
/// `mcpaxle_tool_task_id` gives NULL and `mcpaxle_tool_task_result` that result. The call's
/// progress and log callbacks and cancel token serve this `tools/call` only; its `timeoutMs`,
/// `meta` and `logLevel` the handle's requests too.
///
/// Blocking. Ownership: the arguments are borrowed; `*out` is the caller's
/// (`mcpaxle_tool_task_free`, before the client's). Thread: any thread that is not an async
/// runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_call_tool_as_task(
    client: *mut mcpaxle_client,
    name: *const c_char,
    arguments_json: *const c_char,
    options: *const mcpaxle_call_options,
    out: *mut *mut mcpaxle_tool_task,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, method, spec) =
            unsafe { (out_ptr(out, "out")?, start(name, arguments_json)?, CallSpec::of(options)) };
        let c = client_ref(client)?;
        let task = runtime::block_on(run(c.client.clone(), c.owner.clone(), spec, method))??;
        *out = new_handle(task, c.owner.clone(), c.freed.clone());
        Ok(())
    })
}

/// `mcpaxle_client_call_tool_as_task`, async: returns at once (or with an error code, and no
/// callback, when the arguments are bad); `callback` then runs exactly once with the handle or
/// the error, also when the client is freed first (`MCPAXLE_ERR_CANCELLED`). `user_data` must
/// stay valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_call_tool_as_task_async(
    client: *mut mcpaxle_client,
    name: *const c_char,
    arguments_json: *const c_char,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_tool_task_handler,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (method, spec) = unsafe { (start(name, arguments_json)?, CallSpec::of(options)) };
        let c = client_ref(client)?;
        let func = callback.ok_or_else(|| FfiError::null("callback"))?;
        let user_data = SendPtr(user_data);
        let (core, owner, freed) = (c.client.clone(), c.owner.clone(), c.freed.clone());
        let ticket = owner.ticket();
        runtime::spawn(async move {
            let outcome = tokio::select! {
                biased;
                _ = freed.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the client was freed")),
                r = run(core, owner.clone(), spec, method) => r,
            };
            let (code, task, json) = match outcome {
                Ok(t) => (mcpaxle_result::MCPAXLE_OK, SendPtr(new_handle(t, owner, freed).cast()), None),
                Err(e) => (mcpaxle_result::of_kind(e.kind()), SendPtr(std::ptr::null_mut()), Some(error_json(&e))),
            };
            let json = json.map(|j| CString::new(j).unwrap_or_default());
            let _ = crate::pool::run(move || {
                ticket.deliver(|| {
                    let j = json.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
                    // SAFETY: the function pointer and user data were given together; the
                    // handle is handed over to the caller.
                    unsafe { func(user_data.get(), code, task.get().cast(), j) }
                })
            })
            .await;
        })?;
        Ok(())
    })
}

/// The handle of the task `task_id`, created earlier by a `tools/call` (by this client, or by
/// another with the same credentials, e.g. before the program restarted). Sends nothing: an
/// unknown id fails at the handle's first request.
///
/// Ownership: `task_id` is borrowed; `*out` is the caller's (`mcpaxle_tool_task_free`, before
/// the client's). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_task(
    client: *mut mcpaxle_client,
    task_id: *const c_char,
    out: *mut *mut mcpaxle_tool_task,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, task_id) = unsafe { (out_ptr(out, "out")?, arg_str(task_id, "task_id")?) };
        let c = client_ref(client)?;
        *out = new_handle(c.client.task(task_id), c.owner.clone(), c.freed.clone());
        Ok(())
    })
}

/// The task's id: `*task_id` is a new string (the caller's: `mcpaxle_string_free`), or NULL
/// when the server answered with the result at once (there is no task). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_id(
    task: *mut mcpaxle_tool_task,
    task_id: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let out = unsafe { out_ptr(task_id, "task_id")? };
        *out = task_ref(task)?.task.task_id().map_or(std::ptr::null_mut(), into_c_string);
        Ok(())
    })
}

/// What a task operation does.
#[derive(Clone, Copy)]
enum Op {
    Status,
    Result,
    Cancel,
}

impl Op {
    fn method(self) -> &'static str {
        match self {
            Op::Status | Op::Result => "tasks/get",
            Op::Cancel => "tasks/cancel",
        }
    }

    async fn run(self, task: ToolTask) -> Result<Value, Error> {
        match self {
            Op::Status => to_value(task.status().await),
            Op::Result => to_value(task.result().await),
            Op::Cancel => task.cancel().await.map(|()| json!({})),
        }
    }
}

/// The operation, ended early (as cancelled) by the call's token, the handle's or the client's
/// freeing.
fn operation(
    t: &mcpaxle_tool_task,
    op: Op,
    cancel: Option<CancellationToken>,
) -> impl Future<Output = Result<Value, Error>> + use<> {
    let (task, freed, client_freed) = (t.task.clone(), t.freed.clone(), t.client_freed.clone());
    let cancel = cancel.unwrap_or_default();
    async move {
        tokio::select! {
            biased;
            _ = client_freed.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the client was freed")),
            _ = freed.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the task handle was freed")),
            _ = cancel.cancelled() => Err(Error::new(ErrorKind::Cancelled, format!("{} was cancelled", op.method()))),
            r = op.run(task) => r,
        }
    }
}

fn blocking(
    task: *mut mcpaxle_tool_task,
    op: Op,
    options: *const mcpaxle_call_options,
    out: *mut *mut c_char,
) -> FfiResult {
    // SAFETY: per the callers' contract.
    let (out, spec) = unsafe { (out_ptr(out, "result_json")?, CallSpec::of(options)) };
    let v = runtime::block_on(operation(task_ref(task)?, op, spec.cancel))??;
    write_json(out, &v);
    Ok(())
}

fn spawned(
    task: *mut mcpaxle_tool_task,
    op: Op,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> FfiResult {
    // SAFETY: per the callers' contract.
    let spec = unsafe { CallSpec::of(options) };
    let t = task_ref(task)?;
    let func = callback.ok_or_else(|| FfiError::null("callback"))?;
    let user_data = SendPtr(user_data);
    let fut = operation(t, op, spec.cancel);
    // Both the client's and the handle's freeing wait for this callback.
    let (client_ticket, ticket) = (t.client_owner.ticket(), t.owner.ticket());
    runtime::spawn(async move {
        let (code, json) = match fut.await {
            Ok(v) => (mcpaxle_result::MCPAXLE_OK, v.to_string()),
            Err(e) => (mcpaxle_result::of_kind(e.kind()), error_json(&e)),
        };
        let json = CString::new(json).unwrap_or_default();
        let _ = crate::pool::run(move || {
            client_ticket.deliver(|| {
                ticket.deliver(|| {
                    // SAFETY: the function pointer and user data were given together.
                    unsafe { func(user_data.get(), code, json.as_ptr()) }
                })
            })
        })
        .await;
    })?;
    Ok(())
}

/// `tasks/get`: the task's `DetailedTask` (`taskId`, `status` — "working", "input_required",
/// "completed", "failed" or "cancelled" —, `statusMessage`, and `inputRequests`, `result` or
/// `error` as the status has them). `MCPAXLE_ERR_USAGE` when there is no task (the server
/// answered with the result: see `mcpaxle_tool_task_result`). Of `options` (may be NULL), only
/// the cancel token applies.
///
/// Blocking: `*result_json` receives the object (the caller's: `mcpaxle_string_free`).
/// Thread: any thread that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_status(
    task: *mut mcpaxle_tool_task,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({ blocking(task, Op::Status, options, result_json) })
}

/// `mcpaxle_tool_task_status`, async: returns at once (or with an error code, and no callback,
/// when the arguments are bad); `callback` then runs exactly once with the outcome, also when
/// the handle or its client is freed first (`MCPAXLE_ERR_CANCELLED`). `user_data` must stay
/// valid until it ran. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_status_async(
    task: *mut mcpaxle_tool_task,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({ spawned(task, Op::Status, options, user_data, callback) })
}

/// The call's result (a `CallToolResult`): follows the task to its end as
/// `mcpaxle_client_call_tool` does (polling at the server's `pollIntervalMs`, answering its
/// input requests with the client's input handlers). A failed task is its error code, a
/// cancelled one `MCPAXLE_ERR_CANCELLED`. The cancel token of `options` (may be NULL; nothing
/// else of it applies) stops the wait, not the task. Without a task, the result the server
/// answered with.
///
/// Blocking: `*result_json` receives the object (the caller's: `mcpaxle_string_free`).
/// Thread: any thread that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_result(
    task: *mut mcpaxle_tool_task,
    options: *const mcpaxle_call_options,
    result_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({ blocking(task, Op::Result, options, result_json) })
}

/// `mcpaxle_tool_task_result`, async; the callback as `mcpaxle_tool_task_status_async`'s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_result_async(
    task: *mut mcpaxle_tool_task,
    options: *const mcpaxle_call_options,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({ spawned(task, Op::Result, options, user_data, callback) })
}

/// `tasks/cancel`: asks the server to cancel the task. The server only acknowledges it: the
/// task may still end otherwise if its work finished first (`mcpaxle_tool_task_status` tells).
/// Without a task there is nothing to cancel: `MCPAXLE_OK` at once. Blocking. Thread: any
/// thread that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_cancel(task: *mut mcpaxle_tool_task) -> mcpaxle_result {
    ffi_boundary!({
        let t = task_ref(task)?;
        runtime::block_on(operation(t, Op::Cancel, None))??;
        Ok(())
    })
}

/// `mcpaxle_tool_task_cancel`, async: `callback` runs exactly once, with `{}` on success; as
/// `mcpaxle_tool_task_status_async`'s otherwise.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_cancel_async(
    task: *mut mcpaxle_tool_task,
    user_data: *mut c_void,
    callback: mcpaxle_result_handler,
) -> mcpaxle_result {
    ffi_boundary!({ spawned(task, Op::Cancel, std::ptr::null(), user_data, callback) })
}

/// Frees a task handle; **the task itself goes on** (cancel it first with
/// `mcpaxle_tool_task_cancel` if that is what you want). NULL is a no-op. Pending `_async`
/// calls of the handle end with `MCPAXLE_ERR_CANCELLED`; their callbacks have run before this
/// returns, and no callback of the handle runs after it returns.
///
/// Ownership: takes the handle. Thread: any thread that is not an async runtime worker; not
/// while another thread is inside a function taking this handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_tool_task_free(task: *mut mcpaxle_tool_task) {
    ffi_boundary!((), {
        if task.is_null() {
            return;
        }
        // SAFETY: a handle from mcpaxle_client_call_tool_as_task(_async) or mcpaxle_client_task,
        // given back once.
        let t = unsafe { Box::from_raw(task) };
        t.freed.cancel();
        t.owner.close();
        drop(t);
    })
}
