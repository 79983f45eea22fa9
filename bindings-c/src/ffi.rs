//! The conventions every export follows: the result codes, the per-thread last error, the one
//! panic boundary, argument checks that return a code, and the strings handed to C.

use mcpaxle_core::{Error, ErrorKind};
use serde_json::Value;
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::LazyLock;

/// The result of every fallible function. `MCPAXLE_OK` (0) is success; `MCPAXLE_INPUT_REQUIRED`
/// is not a failure but the end of an MRTR round; every other value is an error, described by
/// `mcpaxle_last_error_message()`. Codes are stable: new ones are only ever added.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcpaxle_result {
    /// Success.
    MCPAXLE_OK = 0,
    /// An MRTR ask (`mcpaxle_context_elicit`, `_sample`, `_list_roots`) has no answer yet: the
    /// round must end. Finish the call with `mcpaxle_reply_input_required`.
    MCPAXLE_INPUT_REQUIRED = 1,
    /// A required pointer argument was NULL.
    MCPAXLE_ERR_NULL = 10,
    /// A string argument was not valid UTF-8.
    MCPAXLE_ERR_INVALID_UTF8 = 11,
    /// A JSON argument was not valid JSON.
    MCPAXLE_ERR_INVALID_JSON = 12,
    /// The reply handle was already used (or its call was abandoned: the request was
    /// cancelled or its server or client freed).
    MCPAXLE_ERR_ALREADY_REPLIED = 13,
    /// A bug inside mcpaxle panicked; the panic was caught and the operation failed.
    MCPAXLE_ERR_PANIC = 14,
    /// The library was started in a parent process before fork(): use it again only after exec().
    MCPAXLE_ERR_FORK = 15,
    /// The object is closed: the context's call is over, the client is closed, the server stopped.
    MCPAXLE_ERR_CLOSED = 16,
    /// The core's ParseError: invalid JSON-RPC (-32700).
    MCPAXLE_ERR_PARSE = 20,
    /// The core's InvalidRequest (-32600).
    MCPAXLE_ERR_INVALID_REQUEST = 21,
    /// The core's MethodNotFound (-32601).
    MCPAXLE_ERR_METHOD_NOT_FOUND = 22,
    /// The core's InvalidParams (-32602): a request's params the server refuses (a peer's
    /// answer, or a handler's error). A bad argument to a function of this library is
    /// `MCPAXLE_ERR_USAGE`.
    MCPAXLE_ERR_INVALID_PARAMS = 23,
    /// The core's Internal error (-32603).
    MCPAXLE_ERR_INTERNAL = 24,
    /// The core's HeaderMismatch (-32020).
    MCPAXLE_ERR_HEADER_MISMATCH = 25,
    /// The core's MissingRequiredClientCapability (-32021).
    MCPAXLE_ERR_MISSING_CAPABILITY = 26,
    /// The core's UnsupportedProtocolVersion (-32022).
    MCPAXLE_ERR_UNSUPPORTED_VERSION = 27,
    /// A tool error meant for the model (a `tools/call` result with `isError: true`).
    MCPAXLE_ERR_TOOL = 28,
    /// The request was cancelled.
    MCPAXLE_ERR_CANCELLED = 29,
    /// An I/O or transport failure (cannot bind, connection lost).
    MCPAXLE_ERR_TRANSPORT = 30,
    /// The peer answered with a JSON-RPC error (its code and data: `mcpaxle_last_error`).
    MCPAXLE_ERR_REMOTE = 31,
    /// A request timed out.
    MCPAXLE_ERR_TIMEOUT = 32,
    /// The library was used wrongly: an option, definition, argument or handler answer that
    /// does not fit (its message names the member at fault), a call from the wrong thread.
    MCPAXLE_ERR_USAGE = 33,
}

use mcpaxle_result::*;

/// The result code of each kind of the core's errors, in [`ErrorKind::ALL`]'s order: the one
/// place the two vocabularies meet (a unit test checks it covers every kind, each with its own
/// code).
const KIND_RESULTS: [(ErrorKind, mcpaxle_result); ErrorKind::ALL.len()] = [
    (ErrorKind::ParseError, MCPAXLE_ERR_PARSE),
    (ErrorKind::InvalidRequest, MCPAXLE_ERR_INVALID_REQUEST),
    (ErrorKind::MethodNotFound, MCPAXLE_ERR_METHOD_NOT_FOUND),
    (ErrorKind::InvalidParams, MCPAXLE_ERR_INVALID_PARAMS),
    (ErrorKind::Internal, MCPAXLE_ERR_INTERNAL),
    (ErrorKind::HeaderMismatch, MCPAXLE_ERR_HEADER_MISMATCH),
    (ErrorKind::MissingRequiredClientCapability, MCPAXLE_ERR_MISSING_CAPABILITY),
    (ErrorKind::UnsupportedProtocolVersion, MCPAXLE_ERR_UNSUPPORTED_VERSION),
    (ErrorKind::Tool, MCPAXLE_ERR_TOOL),
    (ErrorKind::InputRequired, MCPAXLE_INPUT_REQUIRED),
    (ErrorKind::Cancelled, MCPAXLE_ERR_CANCELLED),
    (ErrorKind::Panic, MCPAXLE_ERR_PANIC),
    (ErrorKind::Transport, MCPAXLE_ERR_TRANSPORT),
    (ErrorKind::Remote, MCPAXLE_ERR_REMOTE),
    (ErrorKind::Timeout, MCPAXLE_ERR_TIMEOUT),
    (ErrorKind::Usage, MCPAXLE_ERR_USAGE),
];

/// Every result code, with its name as in the header.
const RESULT_NAMES: [(mcpaxle_result, &CStr); 23] = [
    (MCPAXLE_OK, c"MCPAXLE_OK"),
    (MCPAXLE_INPUT_REQUIRED, c"MCPAXLE_INPUT_REQUIRED"),
    (MCPAXLE_ERR_NULL, c"MCPAXLE_ERR_NULL"),
    (MCPAXLE_ERR_INVALID_UTF8, c"MCPAXLE_ERR_INVALID_UTF8"),
    (MCPAXLE_ERR_INVALID_JSON, c"MCPAXLE_ERR_INVALID_JSON"),
    (MCPAXLE_ERR_ALREADY_REPLIED, c"MCPAXLE_ERR_ALREADY_REPLIED"),
    (MCPAXLE_ERR_PANIC, c"MCPAXLE_ERR_PANIC"),
    (MCPAXLE_ERR_FORK, c"MCPAXLE_ERR_FORK"),
    (MCPAXLE_ERR_CLOSED, c"MCPAXLE_ERR_CLOSED"),
    (MCPAXLE_ERR_PARSE, c"MCPAXLE_ERR_PARSE"),
    (MCPAXLE_ERR_INVALID_REQUEST, c"MCPAXLE_ERR_INVALID_REQUEST"),
    (MCPAXLE_ERR_METHOD_NOT_FOUND, c"MCPAXLE_ERR_METHOD_NOT_FOUND"),
    (MCPAXLE_ERR_INVALID_PARAMS, c"MCPAXLE_ERR_INVALID_PARAMS"),
    (MCPAXLE_ERR_INTERNAL, c"MCPAXLE_ERR_INTERNAL"),
    (MCPAXLE_ERR_HEADER_MISMATCH, c"MCPAXLE_ERR_HEADER_MISMATCH"),
    (MCPAXLE_ERR_MISSING_CAPABILITY, c"MCPAXLE_ERR_MISSING_CAPABILITY"),
    (MCPAXLE_ERR_UNSUPPORTED_VERSION, c"MCPAXLE_ERR_UNSUPPORTED_VERSION"),
    (MCPAXLE_ERR_TOOL, c"MCPAXLE_ERR_TOOL"),
    (MCPAXLE_ERR_CANCELLED, c"MCPAXLE_ERR_CANCELLED"),
    (MCPAXLE_ERR_TRANSPORT, c"MCPAXLE_ERR_TRANSPORT"),
    (MCPAXLE_ERR_REMOTE, c"MCPAXLE_ERR_REMOTE"),
    (MCPAXLE_ERR_TIMEOUT, c"MCPAXLE_ERR_TIMEOUT"),
    (MCPAXLE_ERR_USAGE, c"MCPAXLE_ERR_USAGE"),
];

impl mcpaxle_result {
    /// The code of a core error kind.
    pub(crate) fn of_kind(kind: ErrorKind) -> Self {
        KIND_RESULTS.iter().find(|(k, _)| *k == kind).map_or(MCPAXLE_ERR_INTERNAL, |(_, r)| *r)
    }

    /// The core kind of a failure this library reports with `self`: the kind whose code it is,
    /// and for the codes of the C API alone (a NULL or invalid argument, a spent handle, use
    /// after fork(), a closed object) a usage error. This is what `mcpaxle_error_kind` names.
    pub(crate) fn kind(self) -> ErrorKind {
        KIND_RESULTS.iter().find(|(_, r)| *r == self).map_or(ErrorKind::Usage, |(k, _)| *k)
    }

    /// The core error kind a C caller means by a code (`mcpaxle_reply_error`); `None` for
    /// codes that name no error a handler can report. A handler reporting one of the codes of
    /// the C API alone fails with a usage error, or an internal one for `MCPAXLE_ERR_PANIC` and
    /// `MCPAXLE_ERR_CLOSED` (what broke was not the handler's use of the library).
    pub(crate) fn kind_of_code(code: c_int) -> Option<ErrorKind> {
        let c_only = |r: mcpaxle_result| r as c_int == code;
        if c_only(MCPAXLE_OK) {
            return None;
        }
        if c_only(MCPAXLE_ERR_PANIC) || c_only(MCPAXLE_ERR_CLOSED) {
            return Some(ErrorKind::Internal);
        }
        if [
            MCPAXLE_ERR_NULL,
            MCPAXLE_ERR_INVALID_UTF8,
            MCPAXLE_ERR_INVALID_JSON,
            MCPAXLE_ERR_ALREADY_REPLIED,
            MCPAXLE_ERR_FORK,
        ]
        .into_iter()
        .any(c_only)
        {
            return Some(ErrorKind::Usage);
        }
        KIND_RESULTS.iter().find(|(_, r)| *r as c_int == code).map(|(k, _)| *k)
    }

    /// The code's name, as in the header.
    pub(crate) fn name(code: c_int) -> &'static CStr {
        RESULT_NAMES.iter().find(|(r, _)| *r as c_int == code).map_or(c"MCPAXLE_UNKNOWN_RESULT", |(_, n)| n)
    }
}

/// A failed export: its code, the core error kind and JSON-RPC code, a message, and the
/// JSON-RPC error's data when there is any.
#[derive(Debug, Clone)]
pub(crate) struct FfiError {
    pub code: mcpaxle_result,
    pub kind: ErrorKind,
    pub rpc_code: i32,
    pub message: String,
    pub data: Option<Value>,
}

impl FfiError {
    pub fn new(code: mcpaxle_result, message: impl Into<String>) -> Self {
        let kind = code.kind();
        FfiError { code, kind, rpc_code: kind.code(), message: message.into(), data: None }
    }
    pub fn null(what: &str) -> Self {
        Self::new(MCPAXLE_ERR_NULL, format!("{what} is NULL"))
    }
    pub fn closed(message: impl Into<String>) -> Self {
        Self::new(MCPAXLE_ERR_CLOSED, message)
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(MCPAXLE_ERR_USAGE, message)
    }
}

impl From<Error> for FfiError {
    fn from(e: Error) -> Self {
        FfiError {
            code: mcpaxle_result::of_kind(e.kind()),
            kind: e.kind(),
            rpc_code: e.code(),
            message: e.message().to_owned(),
            data: e.data().cloned(),
        }
    }
}

pub(crate) type FfiResult<T = ()> = Result<T, FfiError>;

/// The details of a failed call, as C reads them: the thread's last error, and the copies of it
/// that `mcpaxle_last_error` hands out.
#[derive(Clone)]
struct Details {
    result: mcpaxle_result,
    kind: ErrorKind,
    code: i32,
    message: CString,
    data: Option<CString>,
}

thread_local! {
    static LAST_ERROR: RefCell<Option<Details>> = const { RefCell::new(None) };
}

fn cstring_lossy(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

pub(crate) fn set_last_error(e: &FfiError) {
    let last = Details {
        result: e.code,
        kind: e.kind,
        code: e.rpc_code,
        message: cstring_lossy(&e.message),
        data: e.data.as_ref().map(|v| cstring_lossy(&v.to_string())),
    };
    let _ = LAST_ERROR.try_with(|l| *l.borrow_mut() = Some(last));
}

/// This thread's last error message (read before a boundary resets it).
pub(crate) fn last_message_owned() -> String {
    LAST_ERROR
        .try_with(|l| l.borrow().as_ref().map(|e| e.message.to_string_lossy().into_owned()))
        .ok()
        .flatten()
        .unwrap_or_default()
}

pub(crate) fn clear_last_error() {
    let _ = LAST_ERROR.try_with(|l| l.borrow_mut().take());
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    format!("internal error: mcpaxle panicked ({what}); please report it")
}

/// Runs the body of an export that returns an `mcpaxle_result`: the fork check, then the body
/// inside `catch_unwind`, its error (or panic) recorded as the thread's last error. The last
/// error is replaced (or cleared) only once the body is done, so an argument that points into
/// it (`mcpaxle_json_quote(mcpaxle_last_error_message(), ...)`) stays valid while it is read.
pub(crate) fn boundary(f: impl FnOnce() -> FfiResult) -> mcpaxle_result {
    if let Err(e) = crate::runtime::check_pid() {
        set_last_error(&e);
        return e.code;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {
            clear_last_error();
            MCPAXLE_OK
        }
        Ok(Err(e)) => {
            set_last_error(&e);
            e.code
        }
        Err(p) => {
            let e = FfiError::new(MCPAXLE_ERR_PANIC, panic_message(&*p));
            set_last_error(&e);
            MCPAXLE_ERR_PANIC
        }
    }
}

/// Runs the body of an export that returns a plain value (a `bool`, nothing): `fallback` after
/// fork() or a panic.
pub(crate) fn boundary_or<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    if crate::runtime::check_pid().is_err() {
        return fallback;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => {
            set_last_error(&FfiError::new(MCPAXLE_ERR_PANIC, panic_message(&*p)));
            fallback
        }
    }
}

/// Runs the body of an export that touches no runtime state (the error accessors, string
/// helpers): no fork check, so it also works in a forked child; `fallback` after a panic.
pub(crate) fn boundary_pure<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// The one panic boundary around every export. `ffi_boundary!({ body })` for functions
/// returning `mcpaxle_result` (the body evaluates to `FfiResult<()>`, `?` works inside);
/// `ffi_boundary!(fallback, { body })` for functions returning a plain value;
/// `ffi_boundary!(pure fallback, { body })` for those that touch no runtime state.
macro_rules! ffi_boundary {
    (pure $fallback:expr, $body:block) => {
        $crate::ffi::boundary_pure($fallback, move || $body)
    };
    ($body:block) => {
        $crate::ffi::boundary(move || -> $crate::ffi::FfiResult { $body })
    };
    ($fallback:expr, $body:block) => {
        $crate::ffi::boundary_or($fallback, move || $body)
    };
}
pub(crate) use ffi_boundary;

/// A borrowed string argument: `MCPAXLE_ERR_NULL` or `MCPAXLE_ERR_INVALID_UTF8` when it is not one.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string alive for `'a`.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, what: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(FfiError::null(what));
    }
    // SAFETY: non-null and, per the function's contract, NUL-terminated and alive.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|_| FfiError::new(MCPAXLE_ERR_INVALID_UTF8, format!("{what} is not valid UTF-8")))
}

/// An optional string argument (NULL is `None`).
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn opt_str<'a>(p: *const c_char, what: &str) -> FfiResult<Option<&'a str>> {
    if p.is_null() { Ok(None) } else { unsafe { arg_str(p, what) }.map(Some) }
}

/// A JSON argument.
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn arg_json(p: *const c_char, what: &str) -> FfiResult<Value> {
    let s = unsafe { arg_str(p, what) }?;
    parse_json(s, what)
}

/// An optional JSON argument (NULL is `None`).
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn opt_json(p: *const c_char, what: &str) -> FfiResult<Option<Value>> {
    if p.is_null() { Ok(None) } else { unsafe { arg_json(p, what) }.map(Some) }
}

pub(crate) fn parse_json(s: &str, what: &str) -> FfiResult<Value> {
    serde_json::from_str(s)
        .map_err(|e| FfiError::new(MCPAXLE_ERR_INVALID_JSON, format!("{what} is not valid JSON: {e}")))
}

/// Reads a JSON value as `T` (options and definitions through the core's reader):
/// `MCPAXLE_ERR_USAGE` naming `what` and the member at fault when it does not fit.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> FfiResult<T> {
    Ok(mcpaxle_core::options::from_json(&format!("{what} is not valid"), v)?)
}

/// Writes `value` through an optional out-parameter (`removed`, ...): nothing when it is NULL.
///
/// # Safety
/// `out` is NULL or valid for writes.
pub(crate) unsafe fn set_opt_out<T>(out: *mut T, value: T) {
    // SAFETY: per this function's contract.
    if let Some(slot) = unsafe { out.as_mut() } {
        *slot = value;
    }
}

/// Checks an out-parameter and sets it to NULL, so that a failure leaves NULL behind.
///
/// # Safety
/// `out` is NULL or valid for writes.
pub(crate) unsafe fn out_ptr<'a, T>(out: *mut *mut T, what: &str) -> FfiResult<&'a mut *mut T> {
    if out.is_null() {
        return Err(FfiError::null(what));
    }
    // SAFETY: non-null and writable per the contract.
    let out = unsafe { &mut *out };
    *out = ptr::null_mut();
    Ok(out)
}

/// A string for C: freed by `mcpaxle_string_free`.
pub(crate) fn into_c_string(s: &str) -> *mut c_char {
    cstring_lossy(s).into_raw()
}

/// Writes a JSON value to a string out-parameter.
pub(crate) fn write_json(out: &mut *mut c_char, v: &Value) {
    *out = into_c_string(&v.to_string());
}

/// A C pointer that may cross threads: the C side promised it may (`user_data` is documented
/// as shared between threads).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendPtr(pub *mut std::ffi::c_void);
impl SendPtr {
    /// The pointer (a method, so that closures capture the whole `SendPtr`).
    pub fn get(self) -> *mut std::ffi::c_void {
        self.0
    }
}

// SAFETY: the pointer is only handed back to C; the header documents that callbacks run on
// other threads with the same user_data.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

/// Frees a string the library returned. NULL is a no-op.
///
/// Ownership: takes back a `char *` that an mcpaxle function returned (an out-parameter such
/// as `answer_json`, `result_json`, `out_json`); never pass any other pointer. Thread: any;
/// also works in a forked child.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_string_free(s: *mut c_char) {
    ffi_boundary!(pure(), {
        if !s.is_null() {
            // SAFETY: per the contract, `s` came from CString::into_raw in this library.
            drop(unsafe { CString::from_raw(s) });
        }
    })
}

/// The message of the last failed mcpaxle call on this thread, or "" when the last call
/// succeeded. Every function that returns an `mcpaxle_result` resets it when it returns (the
/// JSON helpers too).
///
/// Ownership: the string belongs to the library and stays valid only until the next mcpaxle
/// call on this thread that returns an `mcpaxle_result` returns (any such call: a
/// `mcpaxle_json_*` helper frees it too; passing it as that call's argument is fine). Use it at
/// once (`fprintf(stderr, "%s\n", mcpaxle_last_error_message())`); to keep it, or to read the
/// error while calling other functions, take the details with `mcpaxle_last_error()`. Thread:
/// per thread (thread-local). Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_last_error_message() -> *const c_char {
    ffi_boundary!(pure c"".as_ptr(), {
        LAST_ERROR
            .try_with(|l| l.borrow().as_ref().map(|e| e.message.as_ptr()))
            .ok()
            .flatten()
            .unwrap_or(c"".as_ptr())
    })
}

/// The details of a failed call (its result code, the core's error kind, the JSON-RPC code, the
/// message and the JSON-RPC error's data), owned by whoever took them with
/// `mcpaxle_last_error`. They read the same as an error in the Python and Node bindings.
pub struct mcpaxle_error {
    details: Details,
}

/// The details of the last failed mcpaxle call on this thread, or NULL when the last call
/// succeeded. Does not reset the last error.
///
/// ```c
/// if (mcpaxle_client_call_tool(client, "x", "{}", NULL, &result) != MCPAXLE_OK) {
///     mcpaxle_error *err = mcpaxle_last_error();
///     char *field = NULL;
///     mcpaxle_json_get(mcpaxle_error_data_json(err), "/field", &field); // err stays valid
///     fprintf(stderr, "%s (%d): %s\n", mcpaxle_error_kind(err), mcpaxle_error_code(err),
///             mcpaxle_error_message(err));
///     mcpaxle_string_free(field);
///     mcpaxle_error_free(err);
/// }
/// ```
///
/// Ownership: the caller owns the result and frees it with `mcpaxle_error_free`; it is a copy,
/// so it and the strings its accessors return stay valid across any other mcpaxle call, until
/// that `mcpaxle_error_free`. Thread: per thread (the calling thread's last error); the
/// result may then be read and freed on any thread.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_last_error() -> *mut mcpaxle_error {
    ffi_boundary!(pure ptr::null_mut(), {
        LAST_ERROR
            .try_with(|l| l.borrow().clone())
            .ok()
            .flatten()
            .map_or(ptr::null_mut(), |details| Box::into_raw(Box::new(mcpaxle_error { details })))
    })
}

/// The details behind an `mcpaxle_error` pointer.
///
/// # Safety
/// `e` is NULL or an `mcpaxle_error` from `mcpaxle_last_error` not yet freed.
unsafe fn details<'a>(e: *const mcpaxle_error) -> Option<&'a Details> {
    // SAFETY: per the function's contract.
    unsafe { e.as_ref() }.map(|e| &e.details)
}

/// Frees error details taken with `mcpaxle_last_error`. NULL is a no-op.
///
/// Ownership: takes back `err`; it and every string its accessors returned are invalid
/// afterwards. Thread: any; also works in a forked child.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_error_free(err: *mut mcpaxle_error) {
    ffi_boundary!(pure(), {
        if !err.is_null() {
            // SAFETY: per the contract, `err` came from Box::into_raw in mcpaxle_last_error.
            drop(unsafe { Box::from_raw(err) });
        }
    })
}

/// The result code the failed call returned (`MCPAXLE_ERR_INVALID_PARAMS`); `MCPAXLE_OK` when
/// `err` is NULL.
///
/// Ownership: `err` is borrowed (NULL or not yet freed). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_error_result(err: *const mcpaxle_error) -> mcpaxle_result {
    // SAFETY: per the contract.
    ffi_boundary!(pure MCPAXLE_OK, { unsafe { details(err) }.map_or(MCPAXLE_OK, |d| d.result) })
}

/// The name of the core's error kind (`"invalid_params"`, `"transport"`, ...; the same names
/// as the Python and Node bindings' `kind`). The errors of the C API alone (NULL or invalid
/// arguments, a spent reply handle, use after fork(), a closed object) are `"usage"`; a caught
/// panic is `"panic"`. "" when `err` is NULL.
///
/// Ownership: a static string, valid for the life of the process; do not free it. `err` is
/// borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_error_kind(err: *const mcpaxle_error) -> *const c_char {
    ffi_boundary!(pure c"".as_ptr(), {
        // SAFETY: per the contract.
        match unsafe { details(err) } {
            Some(d) => kind_name(d.kind).as_ptr(),
            None => c"".as_ptr(),
        }
    })
}

/// The kinds' names as static C strings, in `ErrorKind::ALL`'s order.
static KIND_NAMES: LazyLock<Vec<CString>> =
    LazyLock::new(|| ErrorKind::ALL.iter().map(|k| cstring_lossy(k.as_str())).collect());

fn kind_name(kind: ErrorKind) -> &'static CStr {
    ErrorKind::ALL.iter().position(|k| *k == kind).map_or(c"internal", |i| KIND_NAMES[i].as_c_str())
}

/// The JSON-RPC code of the error (-32602 for invalid params, a peer's own code for
/// `MCPAXLE_ERR_REMOTE`, -32603 for the kinds JSON-RPC has no code for); 0 when `err` is NULL.
///
/// Ownership: `err` is borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_error_code(err: *const mcpaxle_error) -> i32 {
    // SAFETY: per the contract.
    ffi_boundary!(pure 0, { unsafe { details(err) }.map_or(0, |d| d.code) })
}

/// The error's message; "" when `err` is NULL. Never NULL.
///
/// Ownership: belongs to `err`; valid until `mcpaxle_error_free(err)`, whatever is called in
/// between. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_error_message(err: *const mcpaxle_error) -> *const c_char {
    ffi_boundary!(pure c"".as_ptr(), {
        // SAFETY: per the contract.
        unsafe { details(err) }.map_or(c"".as_ptr(), |d| d.message.as_ptr())
    })
}

/// The JSON-RPC error's `data` as JSON text (`{"requiredCapabilities": {...}}`), ready for
/// the `mcpaxle_json_*` helpers; NULL when the error has no data or `err` is NULL.
///
/// Ownership: belongs to `err`; valid until `mcpaxle_error_free(err)`, whatever is called in
/// between (passing it to `mcpaxle_json_get` is safe). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_error_data_json(err: *const mcpaxle_error) -> *const c_char {
    ffi_boundary!(pure ptr::null(), {
        // SAFETY: per the contract.
        unsafe { details(err) }.and_then(|d| d.data.as_ref()).map_or(ptr::null(), |j| j.as_ptr())
    })
}

/// The name of a result code ("MCPAXLE_ERR_NULL"), or "MCPAXLE_UNKNOWN_RESULT".
///
/// Ownership: a static string; do not free it. Thread: any.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_result_name(code: c_int) -> *const c_char {
    ffi_boundary!(pure c"MCPAXLE_UNKNOWN_RESULT".as_ptr(), { mcpaxle_result::name(code).as_ptr() })
}

/// The library's version ("0.1.0").
///
/// Ownership: a static string; do not free it. Thread: any.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_version() -> *const c_char {
    ffi_boundary!(pure c"".as_ptr(), { concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_code_and_message() {
        let r = ffi_boundary!({
            let v: Vec<u8> = Vec::new();
            if v.is_empty() {
                panic!("boom");
            }
            Ok(())
        });
        assert_eq!(r, MCPAXLE_ERR_PANIC);
        // SAFETY: the accessor returns a valid NUL-terminated string.
        let msg = unsafe { CStr::from_ptr(mcpaxle_last_error_message()) }.to_string_lossy().into_owned();
        assert!(msg.contains("boom"), "{msg}");
    }

    #[test]
    fn a_panic_in_a_plain_export_returns_the_fallback() {
        let v = ffi_boundary!(7, {
            let v: Vec<i32> = Vec::new();
            v[0]
        });
        assert_eq!(v, 7);
    }

    #[test]
    fn errors_set_and_clear_the_last_error() {
        assert_eq!(ffi_boundary!({ Err(FfiError::null("x")) }), MCPAXLE_ERR_NULL);
        // SAFETY: valid string.
        assert_eq!(unsafe { CStr::from_ptr(mcpaxle_last_error_message()) }.to_str().unwrap(), "x is NULL");
        assert_eq!(ffi_boundary!({ Ok(()) }), MCPAXLE_OK);
        // SAFETY: valid string.
        assert_eq!(unsafe { CStr::from_ptr(mcpaxle_last_error_message()) }.to_str().unwrap(), "");
    }

    #[test]
    fn every_code_has_a_name_and_maps_back() {
        for code in [0, 1, 10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33] {
            assert_ne!(mcpaxle_result::name(code), c"MCPAXLE_UNKNOWN_RESULT", "{code}");
        }
        assert_eq!(mcpaxle_result::kind_of_code(28), Some(ErrorKind::Tool));
        assert_eq!(mcpaxle_result::kind_of_code(0), None);
        assert_eq!(mcpaxle_result::kind_of_code(14), Some(ErrorKind::Internal));
        assert_eq!(mcpaxle_result::kind_of_code(10), Some(ErrorKind::Usage));
        assert_eq!(mcpaxle_result::kind_of_code(99), None);
        assert_eq!(mcpaxle_result::of_kind(ErrorKind::InputRequired), MCPAXLE_INPUT_REQUIRED);
    }

    #[test]
    fn every_core_kind_has_its_own_code_and_name_and_back() {
        let mut seen = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            let code = mcpaxle_result::of_kind(kind);
            assert!(seen.insert(code as c_int), "{kind} shares {code:?}");
            assert_eq!(code.kind(), kind);
            assert_ne!(mcpaxle_result::name(code as c_int), c"MCPAXLE_UNKNOWN_RESULT", "{kind}");
            assert_eq!(kind_name(kind).to_str().unwrap(), kind.as_str());
            if kind != ErrorKind::Panic {
                assert_eq!(mcpaxle_result::kind_of_code(code as c_int), Some(kind), "{kind}");
            }
        }
        assert_eq!(KIND_RESULTS.iter().map(|(k, _)| *k).collect::<Vec<_>>(), ErrorKind::ALL);
        assert_eq!(MCPAXLE_ERR_NULL.kind(), ErrorKind::Usage);
        assert_eq!(MCPAXLE_ERR_CLOSED.kind(), ErrorKind::Usage);
    }

    fn text(p: *const c_char) -> String {
        // SAFETY: the accessors return NULL or valid NUL-terminated strings.
        if p.is_null() { "<NULL>".into() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
    }

    #[test]
    fn error_details_are_owned_and_survive_later_calls() {
        assert_eq!(ffi_boundary!({ Ok(()) }), MCPAXLE_OK);
        assert!(mcpaxle_last_error().is_null());
        let failed = ffi_boundary!({
            Err(FfiError::from(Error::invalid_params("bad city").with_data(serde_json::json!({"city": "Atlantis"}))))
        });
        assert_eq!(failed, MCPAXLE_ERR_INVALID_PARAMS);
        let err = mcpaxle_last_error();
        // Later calls, failing and succeeding, replace the thread's last error, not `err`.
        assert_eq!(ffi_boundary!({ Err(FfiError::null("x")) }), MCPAXLE_ERR_NULL);
        assert_eq!(ffi_boundary!({ Ok(()) }), MCPAXLE_OK);
        // SAFETY: `err` is live until freed below.
        unsafe {
            assert_eq!(mcpaxle_error_result(err), MCPAXLE_ERR_INVALID_PARAMS);
            assert_eq!(text(mcpaxle_error_kind(err)), "invalid_params");
            assert_eq!(mcpaxle_error_code(err), -32602);
            assert_eq!(text(mcpaxle_error_message(err)), "bad city");
            assert_eq!(text(mcpaxle_error_data_json(err)), r#"{"city":"Atlantis"}"#);
            mcpaxle_error_free(err);
            assert_eq!(text(mcpaxle_error_kind(ptr::null())), "");
            assert_eq!(mcpaxle_error_code(ptr::null()), 0);
            mcpaxle_error_free(ptr::null_mut());
        }
        assert_eq!(ffi_boundary!({ Err(FfiError::null("x")) }), MCPAXLE_ERR_NULL);
        let err = mcpaxle_last_error();
        // SAFETY: live until freed.
        unsafe {
            assert_eq!((text(mcpaxle_error_kind(err)), mcpaxle_error_code(err)), ("usage".into(), -32603));
            assert_eq!(text(mcpaxle_error_data_json(err)), "<NULL>");
            mcpaxle_error_free(err);
        }
    }
}
