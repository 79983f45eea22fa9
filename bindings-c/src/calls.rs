//! Calls into C that finish through a reply handle, and the `mcpaxle_reply_*`
//! exports.
//!
//! A reply handle is not a pointer to memory: it is the id of a pending call in a
//! process-wide registry, handed to C as an opaque pointer and never dereferenced. Completing
//! removes the entry (under the registry's lock, so exactly one reply wins); any later
//! reply finds nothing and returns `MCPAXLE_ERR_ALREADY_REPLIED`. A stale or repeated
//! handle is therefore never undefined behaviour, and ids are never reused. The `mcpaxle_context`
//! of a server call is the same id: it is valid exactly while the call is pending.
//!
//! An entry also goes away when the call is abandoned: the request was cancelled (the client
//! went away, the server shut down) or the server or client that owns it was freed. Completing
//! an abandoned call returns `MCPAXLE_ERR_ALREADY_REPLIED` too, and
//! `mcpaxle_context_is_cancelled` returns true for it.

use crate::ffi::{FfiError, FfiResult, SendPtr, ffi_boundary, mcpaxle_result, parse_json};
use crate::owner::Owner;
use mcpaxle_core::server::{RequestContext, Returned, shaping};
use mcpaxle_core::transport::auth::TokenInfo;
use mcpaxle_core::{Error, ErrorKind};
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::{CString, c_char, c_int};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// A pending call's reply handle. Complete it exactly once, from any thread, with
/// `mcpaxle_reply_ok`, `_error`, `_error_data`, `_input_required` or `_propagate` (an
/// OAuth authorization handler's with `mcpaxle_reply_redirect` or an error; a token
/// verifier's with `mcpaxle_reply_ok` or an error).
pub struct mcpaxle_reply {
    _opaque: [u8; 0],
}

/// The context of one server handler call: MRTR asks, progress, logging, cancellation, request
/// state. Valid from the start of the callback until the call is completed (or abandoned);
/// afterwards every function returns `MCPAXLE_ERR_CLOSED` (and `mcpaxle_context_is_cancelled`
/// returns true). Usable from any thread.
pub struct mcpaxle_context {
    _opaque: [u8; 0],
}

/// What a call must complete with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Resource,
    Prompt,
    Completion,
    /// A client's input handler: any JSON object (an ElicitResult, CreateMessageResult or
    /// ListRootsResult). Completes with `Payload::Input`, as `TokenStore` does.
    Input,
    /// A client's OAuth user-agent step: the URL the authorization server redirected to
    /// (`mcpaxle_reply_redirect`).
    Authorization,
    /// A server's bearer token verifier: `{"subject": ..., "scopes": [...]}` or `null`.
    Token,
    /// A server's middleware: the result object (`mcpaxle_reply_ok`) or any JSON-RPC error
    /// (`mcpaxle_reply_rpc_error`).
    Middleware,
    /// A server's visibility predicate: an array of booleans.
    Visibility,
    /// A client's token store: a JSON object (a stored token) or `null`.
    TokenStore,
}

impl Kind {
    /// Whether the call is a server handler's, whose round may end with an
    /// `InputRequiredResult` (a client's callbacks and a token verifier answer once, or fail).
    fn has_rounds(self) -> bool {
        !matches!(
            self,
            Kind::Input | Kind::Authorization | Kind::Token | Kind::Middleware | Kind::Visibility | Kind::TokenStore
        )
    }
}

/// A completed call's value, already checked against its kind's result type (a server
/// handler's: that the core's shaping rule accepts it).
#[derive(Debug)]
pub(crate) enum Payload {
    /// A server handler's value, which the core shapes into its kind's result.
    Returned(Returned),
    Input(Value),
    Authorization(String),
    /// A token verifier's answer: what a valid token grants, `None` for an invalid one.
    Token(Option<TokenInfo>),
    /// A middleware's result object, or a visibility predicate's booleans.
    Json(Value),
}

type Outcome = Result<Payload, Error>;

pub(crate) struct Call {
    owner: u64,
    kind: Kind,
    pub ctx: Option<RequestContext>,
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
    /// The errors of the context calls that failed, newest last (a few at most).
    errors: Mutex<Vec<Error>>,
}

impl Call {
    fn send(&self, outcome: Outcome) {
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(outcome);
        }
    }

    /// Remembers the error of a failed context call, for `mcpaxle_reply_propagate`.
    pub fn remember(&self, e: &Error) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if errors.len() == 8 {
            errors.remove(0);
        }
        errors.push(e.clone());
    }

    /// The newest remembered error with the result code `code`.
    fn recorded(&self, code: c_int) -> Option<Error> {
        let errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        errors.iter().rev().find(|e| mcpaxle_result::of_kind(e.kind()) as c_int == code).cloned()
    }
}

static CALLS: LazyLock<Mutex<HashMap<usize, Arc<Call>>>> = LazyLock::new(Mutex::default);
static NEXT_CALL: AtomicUsize = AtomicUsize::new(1);

fn calls() -> MutexGuard<'static, HashMap<usize, Arc<Call>>> {
    CALLS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pending call behind a context handle.
pub(crate) fn live(ctx: *mut mcpaxle_context) -> FfiResult<Arc<Call>> {
    if ctx.is_null() {
        return Err(FfiError::null("ctx"));
    }
    calls()
        .get(&(ctx as usize))
        .cloned()
        .ok_or_else(|| FfiError::closed("this context's call is over (completed, cancelled, or its server freed)"))
}

/// Removes a pending call: the caller now owns its reply.
fn take(c: *mut mcpaxle_reply) -> FfiResult<Arc<Call>> {
    if c.is_null() {
        return Err(FfiError::null("reply"));
    }
    let taken = calls().remove(&(c as usize));
    taken.ok_or_else(|| {
        FfiError::new(
            mcpaxle_result::MCPAXLE_ERR_ALREADY_REPLIED,
            "this reply handle was already used, or its call was abandoned (cancelled request, freed server or client)",
        )
    })
}

/// Abandons every pending call of an owner (its server or client is being freed): their
/// requests fail, and completing them returns `MCPAXLE_ERR_ALREADY_REPLIED`.
pub(crate) fn abandon_owner(owner: u64) {
    let gone: Vec<Arc<Call>> = {
        let mut map = calls();
        let ids: Vec<usize> = map.iter().filter(|(_, c)| c.owner == owner).map(|(id, _)| *id).collect();
        ids.into_iter().filter_map(|id| map.remove(&id)).collect()
    };
    drop(gone);
}

/// Removes the entry when the call's future ends without a reply (the request was
/// cancelled, or the callback could not run).
struct Abandon(usize);

impl Drop for Abandon {
    fn drop(&mut self) {
        let gone = calls().remove(&self.0);
        drop(gone);
    }
}

/// Where a callback runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thread {
    /// A thread of the handler pool ([`crate::pool`]), so that a blocking callback never
    /// stalls the runtime (up to two thread switches per call).
    BlockingPool,
    /// The runtime's worker thread running the request, directly: no thread switch, for
    /// callbacks that promise not to block (`mcpaxle_server_set_inline_handlers`).
    Inline,
}

/// Calls into C on a handler-pool thread (so a blocking callback never stalls the runtime)
/// and waits for the call's reply. `call` receives the call's id (its reply and
/// context handle) and `request`, the text the callback is given (JSON, or the authorization
/// URL).
pub(crate) async fn invoke(
    owner: &Arc<Owner>,
    kind: Kind,
    ctx: Option<RequestContext>,
    request: String,
    call: impl FnOnce(usize, *const c_char) + Send + 'static,
) -> Result<Payload, Error> {
    invoke_on(Thread::BlockingPool, owner, kind, ctx, request, call).await
}

/// [`invoke`], on `thread`.
pub(crate) async fn invoke_on(
    thread: Thread,
    owner: &Arc<Owner>,
    kind: Kind,
    ctx: Option<RequestContext>,
    request: String,
    call: impl FnOnce(usize, *const c_char) + Send + 'static,
) -> Result<Payload, Error> {
    let (tx, rx) = oneshot::channel();
    let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
    let entry =
        Arc::new(Call { owner: owner.id(), kind, ctx, tx: Mutex::new(Some(tx)), errors: Mutex::new(Vec::new()) });
    calls().insert(id, entry);
    let _abandon = Abandon(id);
    let json = CString::new(request).map_err(|_| Error::internal("the request holds a NUL byte"))?;
    let ran = match thread {
        Thread::Inline => Ok(crate::runtime::inline(|| owner.enter(|| call(id, json.as_ptr())))),
        Thread::BlockingPool => {
            let owner = owner.clone();
            crate::pool::run(move || owner.enter(|| call(id, json.as_ptr()))).await
        }
    };
    match ran {
        Ok(Some(())) => {}
        Ok(None) => {
            return Err(Error::new(ErrorKind::Cancelled, "the handler's server or client was freed"));
        }
        Err(_) => return Err(Error::internal("the handler's thread failed")),
    }
    match rx.await {
        Ok(outcome) => outcome,
        Err(_) => Err(Error::new(ErrorKind::Cancelled, "the call was abandoned: its server or client was freed")),
    }
}

/// The C function pointer and user data of one registration.
#[derive(Clone, Copy)]
pub(crate) struct Target<F> {
    pub func: F,
    pub user_data: SendPtr,
}

fn parse_payload(kind: Kind, json: &str) -> FfiResult<Payload> {
    if kind == Kind::Authorization {
        return Err(FfiError::usage("an authorization completes with mcpaxle_reply_redirect (or an error)"));
    }
    let v = parse_json(json, "result_json")?;
    // A server handler's value is checked now, by the core's own rule, so that C learns at once
    // that it completed wrongly; the core shapes it again with what only it knows (the tool's
    // outputSchema, the resource's URI and MIME type), which gives a result just as valid. A
    // scalar (a string, a number, true, false, null) makes a valid result of every kind, so
    // only objects and arrays are shaped twice.
    let shaped = |kind: Kind, v: &Value| -> Result<(), (Error, &'static str)> {
        if !(v.is_object() || v.is_array()) {
            return Ok(());
        }
        let r = Returned::Json(v.clone());
        match kind {
            Kind::Tool => shaping::tool_result(r, None).map(drop).map_err(|e| (e, "CallToolResult")),
            Kind::Resource => shaping::resource_result(r, "", None).map(drop).map_err(|e| (e, "ReadResourceResult")),
            Kind::Prompt => shaping::prompt_result(r).map(drop).map_err(|e| (e, "GetPromptResult")),
            _ => shaping::completion_result(r).map(drop).map_err(|e| (e, "CompleteResult")),
        }
    };
    Ok(match kind {
        Kind::Tool | Kind::Resource | Kind::Prompt | Kind::Completion => {
            if let Err((e, what)) = shaped(kind, &v) {
                return Err(FfiError::usage(format!("result_json is not a valid {what}: {}", e.message())));
            }
            Payload::Returned(Returned::Json(v))
        }
        Kind::Input if v.is_object() => Payload::Input(v),
        Kind::TokenStore if v.is_object() || v.is_null() => Payload::Input(v),
        Kind::Middleware if v.is_object() => Payload::Json(v),
        Kind::Visibility if v.as_array().is_some_and(|a| a.iter().all(Value::is_boolean)) => Payload::Json(v),
        Kind::Middleware => {
            return Err(FfiError::usage("result_json must be the result object"));
        }
        Kind::Visibility => {
            return Err(FfiError::usage("result_json must be an array of one boolean per item"));
        }
        // The core's rule for what a verifier may answer.
        Kind::Token => Payload::Token(TokenInfo::from_answer(v).map_err(|e| {
            let message = format!("result_json: {}", e.message());
            FfiError { message, ..e.into() }
        })?),
        Kind::Input | Kind::Authorization => {
            return Err(FfiError::usage("result_json must be a JSON object"));
        }
        Kind::TokenStore => {
            return Err(FfiError::usage("result_json must be a stored token (a JSON object) or null"));
        }
    })
}

/// Completes `call` with an error, or with an internal error and the reason `e` when `e` says
/// the caller's arguments were wrong.
fn fail_with(call: &Call, e: FfiError) -> FfiResult {
    call.send(Err(Error::internal(format!("Internal error: the handler completed wrongly: {}", e.message))));
    Err(e)
}

/// Completes a call with its result.
///
/// `result_json` is the result: for a tool a `CallToolResult` (`{"content": [...]}`), for a
/// resource or template a `ReadResourceResult`, for a prompt a `GetPromptResult`, for a
/// completion a `CompleteResult`, or for any of those a shorthand the server shapes into that
/// result by the rule every binding shares (`core/src/server/shaping.rs`): a JSON string is a
/// text block, a resource's text contents with the resource's URI and `mimeType`, a user
/// message, one completion value; an object without `content` is a tool's
/// `structuredContent`; a list gives several blocks, contents, messages or values. For a client
/// input handler it is the answer object, and for a token verifier `{"subject": "...",
/// "scopes": [...]}` (a valid token) or `null` (an invalid one). `resultType` and the caching
/// hints may be left out: the server fills them in. (An
/// OAuth authorization handler's call completes with `mcpaxle_reply_redirect`; here it
/// fails with `MCPAXLE_ERR_USAGE`.)
///
/// Exactly once: the first reply of a handle wins; any later one returns
/// `MCPAXLE_ERR_ALREADY_REPLIED`. A `result_json` that is NULL, not JSON, or not of the
/// right shape still completes the call (the request fails with an internal error) and returns
/// `MCPAXLE_ERR_NULL`, `MCPAXLE_ERR_INVALID_JSON` or `MCPAXLE_ERR_USAGE`.
///
/// Ownership: `result_json` is borrowed for the duration of the call. The handle is spent once
/// this returns (whatever it returns). Thread: any, at any time after the callback started,
/// including after the callback returned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_ok(reply: *mut mcpaxle_reply, result_json: *const c_char) -> mcpaxle_result {
    ffi_boundary!({
        let call = take(reply)?;
        // SAFETY: result_json is NULL or a NUL-terminated string, per the contract.
        let parsed =
            unsafe { crate::ffi::arg_str(result_json, "result_json") }.and_then(|s| parse_payload(call.kind, s));
        match parsed {
            Ok(p) => {
                call.send(Ok(p));
                Ok(())
            }
            Err(e) => fail_with(&call, e),
        }
    })
}

/// Completes a server handler's call with bytes: `len` bytes at `data`, the handler's return
/// value as Python's `bytes` (the same rule in every binding, `core/src/server/shaping.rs`,
/// cases in `tests/shaping_cases.json`). A tool's bytes are one `image` or `audio` block when
/// they start with a known signature (PNG, JPEG, GIF, WebP, MP3, Ogg, FLAC, WAV), else an
/// embedded `application/octet-stream` resource; a resource's are one `blob` with the URI read
/// and the `mimeType` the resource or template was registered with (else
/// `application/octet-stream`); a prompt's are one user message of that content block. To send
/// bytes of another type (say an SVG image), complete with `mcpaxle_reply_ok` and the whole
/// result, its bytes in base64.
///
/// Exactly once, as `mcpaxle_reply_ok`. On the reply handle of a client callback or a token
/// verifier, or with a NULL `data` and a `len` other than 0, the call still completes (it
/// fails) and this returns `MCPAXLE_ERR_USAGE` or `MCPAXLE_ERR_NULL`.
///
/// Ownership: `data` is borrowed for the duration of the call (copied). Thread: any, at any
/// time after the callback started.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_bytes(reply: *mut mcpaxle_reply, data: *const u8, len: usize) -> mcpaxle_result {
    ffi_boundary!({
        let call = take(reply)?;
        if !matches!(call.kind, Kind::Tool | Kind::Resource | Kind::Prompt | Kind::Completion) {
            return fail_with(&call, FfiError::usage("mcpaxle_reply_bytes completes a server handler's call only"));
        }
        let bytes = match (data.is_null(), len) {
            (true, 0) => Vec::new(),
            (true, _) => return fail_with(&call, FfiError::null("data")),
            // SAFETY: data points at len readable bytes, per the contract.
            (false, _) => unsafe { std::slice::from_raw_parts(data, len) }.to_vec(),
        };
        call.send(Ok(Payload::Returned(Returned::Bytes(bytes))));
        Ok(())
    })
}

/// Completes the OAuth user-agent step (an `mcpaxle_authorization_handler`'s call) with the
/// authorization response: `redirect_url` is the URL the authorization server redirected the
/// user-agent to, the `redirect_uri` with `code`, `state` (and maybe `iss`) in its query. The
/// client checks it (`iss`, then `state`) before it reads the code; a refusal fails the
/// request that needed the authorization. To give up instead (the user closed the window),
/// complete with `mcpaxle_reply_error`.
///
/// Exactly once, as `mcpaxle_reply_ok`. On a reply handle of another kind, or with a NULL or
/// non-UTF-8 `redirect_url`, the call still completes (it fails) and this returns
/// `MCPAXLE_ERR_USAGE`, `MCPAXLE_ERR_NULL` or `MCPAXLE_ERR_INVALID_UTF8`.
///
/// Ownership: `redirect_url` is borrowed for the duration of the call. Thread: any, at any time
/// after the callback started.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_redirect(
    reply: *mut mcpaxle_reply,
    redirect_url: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        let call = take(reply)?;
        if call.kind != Kind::Authorization {
            return fail_with(
                &call,
                FfiError::usage("mcpaxle_reply_redirect completes an authorization handler's call only"),
            );
        }
        // SAFETY: redirect_url is NULL or a NUL-terminated string, per the contract.
        match unsafe { crate::ffi::arg_str(redirect_url, "redirect_url") } {
            Ok(url) => {
                call.send(Ok(Payload::Authorization(url.to_owned())));
                Ok(())
            }
            Err(e) => fail_with(&call, e),
        }
    })
}

/// `mcpaxle_reply_rpc_error` (declared beside the middleware it serves).
///
/// # Safety
/// As `mcpaxle_reply_rpc_error`.
pub(crate) unsafe fn reply_rpc_error(
    reply: *mut mcpaxle_reply,
    code: i32,
    message: *const c_char,
    data_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        let call = take(reply)?;
        if call.kind != Kind::Middleware {
            return fail_with(&call, FfiError::usage("mcpaxle_reply_rpc_error completes a middleware's call only"));
        }
        // SAFETY: NULL or NUL-terminated strings, per the contract.
        let args = unsafe {
            crate::ffi::arg_str(message, "message")
                .and_then(|m| crate::ffi::opt_json(data_json, "data_json").map(|d| (m.to_owned(), d)))
        };
        match args {
            Ok((message, data)) => {
                call.send(Err(Error::remote(mcpaxle_core::jsonrpc::ErrorObject { code, message, data })));
                Ok(())
            }
            Err(e) => fail_with(&call, e),
        }
    })
}

/// The core error a C code means, with `message` (or the code's name) and optional data.
fn error_of(code: c_int, message: Option<&str>, data: Option<Value>) -> Result<Error, Error> {
    let text = message.map(str::to_owned).unwrap_or_else(|| mcpaxle_result::name(code).to_string_lossy().into_owned());
    let (kind, valid) = match mcpaxle_result::kind_of_code(code) {
        Some(k) => (k, true),
        None => (ErrorKind::Internal, false),
    };
    let mut e = if kind == ErrorKind::InputRequired { Error::input_required() } else { Error::new(kind, text) };
    if let Some(d) = data {
        e = e.with_data(d);
    }
    if valid { Ok(e) } else { Err(e) }
}

/// A server handler's `MCPAXLE_ERR_INTERNAL` is its unexpected failure: what a client sees of
/// it is the server's `maskErrorDetails` policy.
fn unexpected_if_internal(call: &Call, e: Error) -> Error {
    if e.kind() != ErrorKind::Internal || !call.kind.has_rounds() {
        return e;
    }
    let data = e.data().cloned();
    let u = Error::unexpected(e.message());
    match data {
        Some(d) => u.with_data(d),
        None => u,
    }
}

/// Completes a call with an error of `kind` (an `mcpaxle_result` error code) and `message`.
///
/// How the request fails depends on `kind`: `MCPAXLE_ERR_TOOL` (or any non-protocol kind such
/// as `MCPAXLE_ERR_INTERNAL`) in a tool becomes a `CallToolResult` with `isError: true` and
/// the message as text, which the model reads (`MCPAXLE_ERR_INTERNAL` is the handler's
/// unexpected failure: with the server option `maskErrorDetails` the client sees
/// `Internal error in tool "name"` instead); the protocol kinds (`MCPAXLE_ERR_INVALID_PARAMS`,
/// `MCPAXLE_ERR_MISSING_CAPABILITY`, ...) become that JSON-RPC error. `message` may be NULL
/// (the code's name is used). A `kind` that names no error (`MCPAXLE_OK`, unknown values)
/// completes with an internal error and returns `MCPAXLE_ERR_USAGE`.
///
/// Exactly once, as `mcpaxle_reply_ok`. Ownership: `message` is borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_error(
    reply: *mut mcpaxle_reply,
    kind: c_int,
    message: *const c_char,
) -> mcpaxle_result {
    // SAFETY: forwarded contract.
    unsafe { mcpaxle_reply_error_data(reply, kind, message, std::ptr::null()) }
}

/// Like `mcpaxle_reply_error`, with `data_json` as the JSON-RPC error's `data` (NULL for
/// none). For example `MCPAXLE_ERR_MISSING_CAPABILITY` with
/// `{"requiredCapabilities": {"sampling": {}}}`. Invalid `data_json` completes the call with an
/// internal error and returns `MCPAXLE_ERR_INVALID_JSON`.
///
/// Exactly once, as `mcpaxle_reply_ok`. Ownership: the strings are borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_error_data(
    reply: *mut mcpaxle_reply,
    kind: c_int,
    message: *const c_char,
    data_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        let call = take(reply)?;
        // SAFETY: NULL or NUL-terminated strings, per the contract.
        let args = unsafe {
            crate::ffi::opt_str(message, "message")
                .and_then(|m| crate::ffi::opt_json(data_json, "data_json").map(|d| (m, d)))
        };
        let (message, data) = match args {
            Ok(a) => a,
            Err(e) => return fail_with(&call, e),
        };
        if !call.kind.has_rounds() && kind == mcpaxle_result::MCPAXLE_INPUT_REQUIRED as c_int {
            return fail_with(&call, FfiError::usage("a client callback cannot end with MCPAXLE_INPUT_REQUIRED"));
        }
        match error_of(kind, message, data) {
            Ok(e) => {
                call.send(Err(unexpected_if_internal(&call, e)));
                Ok(())
            }
            Err(e) => {
                call.send(Err(e));
                Err(FfiError::usage(format!("{kind} is not an mcpaxle_result error code")))
            }
        }
    })
}

/// Ends this round of a server handler with an `InputRequiredResult`: every MRTR ask made with
/// the call's context that returned `MCPAXLE_INPUT_REQUIRED` (and the request state set with
/// `mcpaxle_context_set_request_state`) goes to the client, which retries the request with
/// the answers; the handler then runs again from the start.
///
/// Exactly once, as `mcpaxle_reply_ok`. A client's callbacks (input handlers, the OAuth
/// authorization handler) cannot use it (`MCPAXLE_ERR_USAGE`, the call fails). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_input_required(reply: *mut mcpaxle_reply) -> mcpaxle_result {
    ffi_boundary!({
        let call = take(reply)?;
        if !call.kind.has_rounds() {
            return fail_with(&call, FfiError::usage("a client callback cannot end with MCPAXLE_INPUT_REQUIRED"));
        }
        call.send(Err(Error::input_required()));
        Ok(())
    })
}

/// Completes a call with the failure of a context call, as Rust's `?` would: pass the code a
/// `mcpaxle_context_*` function returned. `MCPAXLE_INPUT_REQUIRED` ends the round (as
/// `mcpaxle_reply_input_required`); an error the context recorded (with its JSON-RPC code
/// and data, e.g. MCPAXLE_ERR_MISSING_CAPABILITY with `requiredCapabilities`) is sent as it
/// was; any other code fails the call with that kind and this thread's last error message.
/// `MCPAXLE_OK` completes with an internal error and returns `MCPAXLE_ERR_USAGE`.
///
/// Exactly once, as `mcpaxle_reply_ok`. Thread: any (the message is taken from the
/// calling thread's last error).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_reply_propagate(reply: *mut mcpaxle_reply, code: c_int) -> mcpaxle_result {
    let message = crate::ffi::last_message_owned();
    ffi_boundary!({
        let call = take(reply)?;
        if code == mcpaxle_result::MCPAXLE_INPUT_REQUIRED as c_int && call.kind.has_rounds() {
            call.send(Err(Error::input_required()));
            return Ok(());
        }
        if let Some(e) = call.recorded(code) {
            call.send(Err(e));
            return Ok(());
        }
        let text = if message.is_empty() { None } else { Some(message.as_str()) };
        match error_of(code, text, None) {
            Ok(e) if e.kind() != ErrorKind::InputRequired => {
                call.send(Err(e));
                Ok(())
            }
            _ => fail_with(&call, FfiError::usage(format!("{code} is not an error code to propagate"))),
        }
    })
}
