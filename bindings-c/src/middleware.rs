//! `mcpaxle_server_use_middleware` and `mcpaxle_next_run`: C middleware around every request;
//! `mcpaxle_server_set_visibility`: a C visibility predicate. Both are calls that finish
//! through a reply handle ([`crate::calls`]), like handlers.

use crate::calls::{self, Kind, Payload, Target, mcpaxle_reply};
use crate::ffi::{FfiError, SendPtr, ffi_boundary, mcpaxle_result};
use crate::owner::Owner;
use crate::server::{mcpaxle_server, server_ref};
use mcpaxle_core::server::{BoxFuture, ItemInfo, Middleware, Next, Reply, RequestInfo, VisibilityFilter};
use mcpaxle_core::{Error, Result};
use serde_json::json;
use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// The rest of a middleware's chain: run it with `mcpaxle_next_run`. The same id as the
/// call's reply handle; valid until the call is completed (or abandoned).
pub struct mcpaxle_next {
    _opaque: [u8; 0],
}

/// A middleware: called once per request (see `mcpaxle_server_use_middleware`).
///
/// - `user_data`: the pointer given at registration, shared by every call.
/// - `request_json`: the request, `{"id", "method", "name", "params", "headers",
///   "principal", "scopes", "claims", "era", "sessionId"}` (`name`: the tool's or prompt's
///   name, the resource's URI, or null; `headers`: lowercase names, `{}` on stdio; `scopes`
///   and `claims` null without a bearer token; `era` `"modern"` or `"legacy"`). Borrowed for
///   the duration of the callback.
/// - `next`: the rest of the chain, for `mcpaxle_next_run` (any number of times, from any
///   thread, until the call is completed).
/// - `reply`: complete exactly once: `mcpaxle_reply_ok` with the result object (what
///   `mcpaxle_next_run` gave, or a changed one), `mcpaxle_reply_rpc_error` to reject the
///   request with a JSON-RPC code of your choice (or pass on the error `next` gave), or
///   `mcpaxle_reply_error` with an `mcpaxle_result` kind.
///
/// Thread: a thread of the library's handler pool; blocking is allowed.
pub type mcpaxle_middleware = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request_json: *const c_char,
        next: *mut mcpaxle_next,
        reply: *mut mcpaxle_reply,
    ),
>;

type MiddlewareFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcpaxle_next, *mut mcpaxle_reply);

/// Receives the outcome of `mcpaxle_next_run`: `outcome_json` is `{"ok": result}` or
/// `{"error": {"code", "message", "data"?}}` (the request's JSON-RPC error), borrowed for the
/// duration of the callback. Thread: a thread of the library's handler pool.
pub type mcpaxle_next_done = Option<unsafe extern "C" fn(user_data: *mut c_void, outcome_json: *const c_char)>;

type DoneFn = unsafe extern "C" fn(*mut c_void, *const c_char);

/// A visibility predicate: called once per request that lists or names tools, resources,
/// templates or prompts (see `mcpaxle_server_set_visibility`). `asked_json` is `{"request":
/// ..., "items": [{"kind", "name", "definition"}, ...]}` (`request` as a middleware's
/// `request_json`; `kind` one of `"tool"`, `"resource"`, `"resourceTemplate"`, `"prompt"`),
/// borrowed for the duration of the callback. Complete `reply` exactly once with
/// `mcpaxle_reply_ok` and a JSON array of one boolean per item, in order (or an error, which
/// fails the request). Thread: a thread of the library's handler pool.
pub type mcpaxle_visibility =
    Option<unsafe extern "C" fn(user_data: *mut c_void, asked_json: *const c_char, reply: *mut mcpaxle_reply)>;

type VisibilityFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcpaxle_reply);

type Ask = Target<DoneFn>;

static NEXTS: LazyLock<Mutex<HashMap<usize, mpsc::UnboundedSender<Ask>>>> = LazyLock::new(Mutex::default);

fn nexts() -> MutexGuard<'static, HashMap<usize, mpsc::UnboundedSender<Ask>>> {
    NEXTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes a call's `next` handle when its middleware's future ends.
struct Forget(Arc<AtomicUsize>);

impl Drop for Forget {
    fn drop(&mut self) {
        let id = self.0.load(Ordering::Acquire);
        if id != 0 {
            nexts().remove(&id);
        }
    }
}

/// An outcome as `mcpaxle_next_done` gets it.
fn envelope(r: &Result<Reply>) -> String {
    match r {
        // A result kept as JSON text (a page of a list) is not read into a value here.
        Ok(reply) => format!(r#"{{"ok":{}}}"#, reply.to_json()),
        Err(e) => json!({ "error": e.to_error_object() }).to_string(),
    }
}

struct CMiddleware {
    owner: Arc<Owner>,
    target: Target<MiddlewareFn>,
}

impl Middleware for CMiddleware {
    fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, Result<Reply>> {
        Box::pin(async move {
            let (tx, mut asks) = mpsc::unbounded_channel::<Ask>();
            let slot = Arc::new(AtomicUsize::new(0));
            let _forget = Forget(slot.clone());
            let Target { func, user_data } = self.target;
            let call =
                calls::invoke(&self.owner, Kind::Middleware, None, req.to_json().to_string(), move |id, json| {
                    nexts().insert(id, tx);
                    slot.store(id, Ordering::Release);
                    // SAFETY: the C function pointer and user_data were given together at
                    // registration; the handle ids are opaque to C.
                    unsafe { func(user_data.get(), json, id as *mut mcpaxle_next, id as *mut mcpaxle_reply) }
                });
            tokio::pin!(call);
            loop {
                tokio::select! {
                    outcome = &mut call => return match outcome? {
                        Payload::Json(v) => Ok(Reply::from(v)),
                        _ => Err(Error::internal("Internal error: the middleware completed with a result of another kind")),
                    },
                    Some(done) = asks.recv() => {
                        let outcome = next.run().await;
                        let text = CString::new(envelope(&outcome)).unwrap_or_default();
                        let owner = self.owner.clone();
                        let Target { func, user_data } = done;
                        let _ = crate::pool::run(move || {
                            // SAFETY: the callback and its user_data were given together to
                            // mcpaxle_next_run; the text lives for the call.
                            owner.enter(|| unsafe { func(user_data.get(), text.as_ptr()) })
                        })
                        .await;
                    }
                }
            }
        })
    }
}

struct CVisibility {
    owner: Arc<Owner>,
    target: Target<VisibilityFn>,
}

impl VisibilityFilter for CVisibility {
    fn visible<'a>(&'a self, who: &'a RequestInfo, items: &'a [ItemInfo]) -> BoxFuture<'a, Result<Vec<bool>>> {
        Box::pin(async move {
            let asked =
                json!({ "request": who.to_json(), "items": items.iter().map(ItemInfo::to_json).collect::<Vec<_>>() });
            let Target { func, user_data } = self.target;
            let answer = calls::invoke(&self.owner, Kind::Visibility, None, asked.to_string(), move |id, json| {
                // SAFETY: as for a middleware.
                unsafe { func(user_data.get(), json, id as *mut mcpaxle_reply) }
            })
            .await?;
            match answer {
                Payload::Json(v) => serde_json::from_value(v)
                    .map_err(|_| Error::internal("Internal error: the visibility predicate must answer booleans")),
                _ => Err(Error::internal(
                    "Internal error: the visibility predicate completed with a result of another kind",
                )),
            }
        })
    }
}

/// Appends a middleware to the server's chain: every request of a method both eras share
/// (`server/discover`, the lists, `tools/call`, `resources/read`, `prompts/get`,
/// `completion/complete`, `subscriptions/listen`), on every transport, passes it once it is
/// well-formed; the first registered runs outermost. The legacy handshake and session methods
/// (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`) do not. The callback
/// rejects a request, changes its result or times it (see `mcpaxle_middleware`).
///
/// Errors: `MCPAXLE_ERR_NULL` for a NULL `server` or `callback`. Ownership: `user_data` is
/// the caller's and must outlive the server. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_use_middleware(
    server: *mut mcpaxle_server,
    callback: mcpaxle_middleware,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let s = unsafe { server_ref(server)? };
        let func = callback.ok_or_else(|| FfiError::null("callback"))?;
        s.server.use_middleware(CMiddleware {
            owner: s.owner.clone(),
            target: Target { func, user_data: SendPtr(user_data) },
        });
        Ok(())
    })
}

/// Runs the rest of a middleware's chain, then the method; `done(user_data, outcome_json)` is
/// called with its outcome (see `mcpaxle_next_done`), on another thread, before the
/// middleware's call can complete. Run it any number of times until the call is completed.
///
/// Errors: `MCPAXLE_ERR_NULL` for a NULL `next` or `done`; `MCPAXLE_ERR_CLOSED` once the call
/// is completed or abandoned (`done` is then never called). Ownership: `user_data` is the
/// caller's until `done` is called. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_next_run(
    next: *mut mcpaxle_next,
    done: mcpaxle_next_done,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        if next.is_null() {
            return Err(FfiError::null("next"));
        }
        let func = done.ok_or_else(|| FfiError::null("done"))?;
        let tx = nexts().get(&(next as usize)).cloned();
        let sent = tx.is_some_and(|tx| tx.send(Target { func, user_data: SendPtr(user_data) }).is_ok());
        if !sent {
            return Err(FfiError::closed("this middleware's call is over (completed, cancelled, or its server freed)"));
        }
        Ok(())
    })
}

/// Sets the server's visibility predicate (NULL `callback` removes it): a tool, resource,
/// template or prompt it answers false for is hidden from that request, left out of
/// `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` (pages are
/// cut after filtering), and a call, read or get of it fails exactly as for an unknown one.
/// It is asked once per request about every item the request lists or names (see
/// `mcpaxle_visibility`).
///
/// Errors: `MCPAXLE_ERR_NULL` for a NULL `server`. Ownership: `user_data` is the caller's and
/// must outlive the server (or the next call of this function). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_set_visibility(
    server: *mut mcpaxle_server,
    callback: mcpaxle_visibility,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let s = unsafe { server_ref(server)? };
        match callback {
            Some(func) => s.server.set_visibility_filter(CVisibility {
                owner: s.owner.clone(),
                target: Target { func, user_data: SendPtr(user_data) },
            }),
            None => s.server.clear_visibility(),
        }
        Ok(())
    })
}

/// Completes a middleware's call with a JSON-RPC error of `code` (any code: -32602, or an
/// application's such as -32003), `message` and optional `data_json` (NULL for none): the
/// client gets exactly that error (over HTTP in the 2026-07-28 era, with the HTTP status of
/// the code). To pass on the error `mcpaxle_next_run` gave, use its `code`, `message` and
/// `data`.
///
/// Exactly once, as `mcpaxle_reply_ok`. On the reply handle of anything but a middleware, or
/// with a NULL `message` or invalid `data_json`, the call still completes (it fails) and this
/// returns `MCPAXLE_ERR_USAGE`, `MCPAXLE_ERR_NULL` or `MCPAXLE_ERR_INVALID_JSON`. Ownership:
/// the strings are borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_rpc_error(
    reply: *mut mcpaxle_reply,
    code: i32,
    message: *const c_char,
    data_json: *const c_char,
) -> mcpaxle_result {
    // SAFETY: forwarded contract.
    unsafe { calls::reply_rpc_error(reply, code, message, data_json) }
}
