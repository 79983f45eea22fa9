//! The conventions every export follows: the result codes, the per-thread last error, the one
//! panic boundary, argument checks that return a code, and the strings handed to C.

use mcpaxle_core::{Error, ErrorKind};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

/// The result of every fallible function. `MCPAXLE_OK` (0) is success; `MCPAXLE_INPUT_REQUIRED`
/// is not a failure but the end of an MRTR round; every other value is an error, described by
/// `mcpaxle_last_error_message()`. Codes are stable: new ones are only ever added.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcpaxle_result {
    /// Success.
    MCPAXLE_OK = 0,
    /// An MRTR ask (`mcpaxle_context_elicit`, `_sample`, `_list_roots`) has no answer yet: the
    /// round must end. Finish the call with `mcpaxle_completion_input_required`.
    MCPAXLE_INPUT_REQUIRED = 1,
    /// A required pointer argument was NULL.
    MCPAXLE_ERR_NULL = 10,
    /// A string argument was not valid UTF-8.
    MCPAXLE_ERR_INVALID_UTF8 = 11,
    /// A JSON argument was not valid JSON.
    MCPAXLE_ERR_INVALID_JSON = 12,
    /// The completion handle was already completed (or its call was abandoned: the request was
    /// cancelled or its server or client freed).
    MCPAXLE_ERR_ALREADY_COMPLETED = 13,
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
    /// The core's InvalidParams (-32602): a bad definition, argument or answer.
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
    /// The peer answered with a JSON-RPC error (see `mcpaxle_last_error_json`).
    MCPAXLE_ERR_REMOTE = 31,
    /// A request timed out.
    MCPAXLE_ERR_TIMEOUT = 32,
    /// The library was used wrongly (bad option, bad address, call from the wrong thread).
    MCPAXLE_ERR_USAGE = 33,
}

use mcpaxle_result::*;

impl mcpaxle_result {
    /// The code of a core error kind.
    pub(crate) fn of_kind(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::ParseError => MCPAXLE_ERR_PARSE,
            ErrorKind::InvalidRequest => MCPAXLE_ERR_INVALID_REQUEST,
            ErrorKind::MethodNotFound => MCPAXLE_ERR_METHOD_NOT_FOUND,
            ErrorKind::InvalidParams => MCPAXLE_ERR_INVALID_PARAMS,
            ErrorKind::Internal => MCPAXLE_ERR_INTERNAL,
            ErrorKind::HeaderMismatch => MCPAXLE_ERR_HEADER_MISMATCH,
            ErrorKind::MissingRequiredClientCapability => MCPAXLE_ERR_MISSING_CAPABILITY,
            ErrorKind::UnsupportedProtocolVersion => MCPAXLE_ERR_UNSUPPORTED_VERSION,
            ErrorKind::Tool => MCPAXLE_ERR_TOOL,
            ErrorKind::InputRequired => MCPAXLE_INPUT_REQUIRED,
            ErrorKind::Cancelled => MCPAXLE_ERR_CANCELLED,
            ErrorKind::Panic => MCPAXLE_ERR_PANIC,
            ErrorKind::Transport => MCPAXLE_ERR_TRANSPORT,
            ErrorKind::Remote => MCPAXLE_ERR_REMOTE,
            ErrorKind::Timeout => MCPAXLE_ERR_TIMEOUT,
            ErrorKind::Usage => MCPAXLE_ERR_USAGE,
            _ => MCPAXLE_ERR_INTERNAL,
        }
    }

    /// The core error kind a C caller means by a code (`mcpaxle_completion_error`); `None` for
    /// codes that name no error a handler can report.
    pub(crate) fn kind_of_code(code: c_int) -> Option<ErrorKind> {
        Some(match code {
            20 => ErrorKind::ParseError,
            21 => ErrorKind::InvalidRequest,
            22 => ErrorKind::MethodNotFound,
            23 => ErrorKind::InvalidParams,
            24 | 14 | 16 => ErrorKind::Internal,
            25 => ErrorKind::HeaderMismatch,
            26 => ErrorKind::MissingRequiredClientCapability,
            27 => ErrorKind::UnsupportedProtocolVersion,
            28 => ErrorKind::Tool,
            1 => ErrorKind::InputRequired,
            29 => ErrorKind::Cancelled,
            30 => ErrorKind::Transport,
            31 => ErrorKind::Remote,
            32 => ErrorKind::Timeout,
            33 | 10 | 11 | 12 | 13 | 15 => ErrorKind::Usage,
            _ => return None,
        })
    }

    /// The code's name, as in the header.
    pub(crate) fn name(code: c_int) -> &'static CStr {
        match code {
            0 => c"MCPAXLE_OK",
            1 => c"MCPAXLE_INPUT_REQUIRED",
            10 => c"MCPAXLE_ERR_NULL",
            11 => c"MCPAXLE_ERR_INVALID_UTF8",
            12 => c"MCPAXLE_ERR_INVALID_JSON",
            13 => c"MCPAXLE_ERR_ALREADY_COMPLETED",
            14 => c"MCPAXLE_ERR_PANIC",
            15 => c"MCPAXLE_ERR_FORK",
            16 => c"MCPAXLE_ERR_CLOSED",
            20 => c"MCPAXLE_ERR_PARSE",
            21 => c"MCPAXLE_ERR_INVALID_REQUEST",
            22 => c"MCPAXLE_ERR_METHOD_NOT_FOUND",
            23 => c"MCPAXLE_ERR_INVALID_PARAMS",
            24 => c"MCPAXLE_ERR_INTERNAL",
            25 => c"MCPAXLE_ERR_HEADER_MISMATCH",
            26 => c"MCPAXLE_ERR_MISSING_CAPABILITY",
            27 => c"MCPAXLE_ERR_UNSUPPORTED_VERSION",
            28 => c"MCPAXLE_ERR_TOOL",
            29 => c"MCPAXLE_ERR_CANCELLED",
            30 => c"MCPAXLE_ERR_TRANSPORT",
            31 => c"MCPAXLE_ERR_REMOTE",
            32 => c"MCPAXLE_ERR_TIMEOUT",
            33 => c"MCPAXLE_ERR_USAGE",
            _ => c"MCPAXLE_UNKNOWN_RESULT",
        }
    }
}

/// A failed export: its code, a message, and the JSON-RPC error object when there is one.
#[derive(Debug, Clone)]
pub(crate) struct FfiError {
    pub code: mcpaxle_result,
    pub message: String,
    pub rpc: Option<Value>,
}

impl FfiError {
    pub fn new(code: mcpaxle_result, message: impl Into<String>) -> Self {
        FfiError { code, message: message.into(), rpc: None }
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
        let o = e.to_error_object();
        let rpc = json!({ "code": o.code, "message": o.message, "data": o.data });
        FfiError { code: mcpaxle_result::of_kind(e.kind()), message: e.message().to_owned(), rpc: Some(rpc) }
    }
}

pub(crate) type FfiResult<T = ()> = Result<T, FfiError>;

struct LastError {
    message: CString,
    json: Option<CString>,
}

thread_local! {
    static LAST_ERROR: RefCell<Option<LastError>> = const { RefCell::new(None) };
}

fn cstring_lossy(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

pub(crate) fn set_last_error(e: &FfiError) {
    let json = e.rpc.as_ref().map(|v| cstring_lossy(&v.to_string()));
    let last = LastError { message: cstring_lossy(&e.message), json };
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
/// inside `catch_unwind`, its error (or panic) recorded as the thread's last error.
pub(crate) fn boundary(f: impl FnOnce() -> FfiResult) -> mcpaxle_result {
    clear_last_error();
    if let Err(e) = crate::runtime::check_pid() {
        set_last_error(&e);
        return e.code;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => MCPAXLE_OK,
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

/// Reads a JSON value as `T` (options through the core's reader): `MCPAXLE_ERR_INVALID_PARAMS`
/// naming `what` and the member at fault when it does not fit.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> FfiResult<T> {
    mcpaxle_core::options::from_json(&format!("{what} is not valid"), v)
        .map_err(|e| FfiError::new(MCPAXLE_ERR_INVALID_PARAMS, e.message().to_owned()))
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
/// succeeded. Every function that returns an `mcpaxle_result` resets it.
///
/// Ownership: the string belongs to the library and stays valid until the next mcpaxle call on
/// this thread; copy it to keep it. Thread: per thread (thread-local). Never NULL.
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

/// The JSON-RPC error object of the last failed call on this thread, as JSON
/// (`{"code": -32602, "message": "...", "data": ...}`), when the failure came from the protocol
/// (a core error or a peer's error); NULL otherwise.
///
/// Ownership and thread: as `mcpaxle_last_error_message`.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_last_error_json() -> *const c_char {
    ffi_boundary!(pure ptr::null(), {
        LAST_ERROR
            .try_with(|l| l.borrow().as_ref().and_then(|e| e.json.as_ref().map(|j| j.as_ptr())))
            .ok()
            .flatten()
            .unwrap_or(ptr::null())
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
        assert_eq!(mcpaxle_result::of_kind(ErrorKind::InputRequired), MCPAXLE_INPUT_REQUIRED);
    }
}
