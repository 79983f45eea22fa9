//! The server mounted in the host's own HTTP server (libmicrohttpd, a C++ framework, ...):
//! `mcpaxle_mount_handle` takes one request the host routed to the endpoint (method, target,
//! headers, body) and answers with an `mcpaxle_http_response`: its status and headers, then its
//! body read chunk by chunk as the core yields it (`mcpaxle_http_response_read`, or
//! `mcpaxle_http_response_stream` with a callback). Cancelling the response (its client went
//! away) or freeing it cancels the request, as a disconnect does on the built-in server.

use crate::client::mcpaxle_cancel_token;
use crate::ffi::{FfiError, FfiResult, arg_str, ffi_boundary, mcpaxle_result, opt_json, opt_str, out_ptr};
use crate::runtime;
use crate::serve::http_options;
use crate::server::{mcpaxle_server, server_ref};
use bytes::Bytes;
use mcpaxle_core::transport::http::mounted::{next_chunk, routed_request};
use mcpaxle_core::transport::http::{McpBody, McpService};
use std::ffi::{CString, c_char, c_int, c_void};
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// One header field of a request handed to `mcpaxle_mount_handle`: NUL-terminated name and
/// value (as received; a repeated name is given once per field line).
#[repr(C)]
pub struct mcpaxle_http_header {
    /// The field name (`Content-Type`; any case).
    pub name: *const c_char,
    /// The field value.
    pub value: *const c_char,
}

/// The MCP endpoint to mount in the host's HTTP server (`mcpaxle_mount_new`).
pub struct mcpaxle_mount {
    service: McpService,
}

/// The response to one mounted request (`mcpaxle_mount_handle`): status, headers, body.
pub struct mcpaxle_http_response {
    status: u16,
    headers: Vec<(CString, CString)>,
    body: Mutex<Option<McpBody>>,
    /// The chunk last read: what `mcpaxle_http_response_read`'s `*data` points into.
    chunk: Mutex<Bytes>,
    cancel: CancellationToken,
}

/// The write callback of `mcpaxle_http_response_stream`: writes `len` bytes at `data` (valid
/// during the call) to the client; returns 0 to go on, anything else when the client is gone
/// (the request is then cancelled).
pub type mcpaxle_chunk_writer =
    Option<unsafe extern "C" fn(user_data: *mut c_void, data: *const u8, len: usize) -> c_int>;

/// Creates the endpoint of `server` to mount in the host's own HTTP server, with the options
/// of `mcpaxle_server_start_http` (`options_json` NULL or the core's `HttpOptions`; `connections`
/// is the host's business and unused; the bearer protection is the server's,
/// `mcpaxle_server_set_bearer_auth`). The Host header is checked as there: by default only the
/// loopback names pass, `allowedHosts` replaces them with the names the host is reached by.
/// `path` is the endpoint's public path (for the bearer metadata); any routed path is served.
///
/// `mcpaxle_server_stop` ends the mount's open `subscriptions/listen` streams, as it stops the
/// server's other transports.
///
/// Ownership: `*out` is the caller's (`mcpaxle_mount_free`); it borrows `server`, which must
/// outlive it. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_mount_new(
    server: *mut mcpaxle_server,
    options_json: *const c_char,
    out: *mut *mut mcpaxle_mount,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, s, options) =
            unsafe { (out_ptr(out, "out")?, server_ref(server)?, opt_json(options_json, "options_json")?) };
        let service = McpService::new(s.server.clone(), http_options(options, s)?);
        let (stop, shutdown) = (s.stop_token(), service.shutdown_token().clone());
        runtime::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => shutdown.cancel(),
                _ = shutdown.cancelled() => {}
            }
        })?;
        *out = Box::into_raw(Box::new(mcpaxle_mount { service }));
        Ok(())
    })
}

/// Ends the mount's open `subscriptions/listen` streams (with their final response) and frees
/// it. Responses still held stay valid until freed. NULL is a no-op.
///
/// Ownership: takes the handle. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_mount_free(mount: *mut mcpaxle_mount) {
    ffi_boundary!((), {
        if mount.is_null() {
            return;
        }
        // SAFETY: a handle from mcpaxle_mount_new, given back once.
        let m = unsafe { Box::from_raw(mount) };
        m.service.shutdown_token().cancel();
    })
}

/// The client address `remote` as the host gives it: `IP:PORT`, `[IPv6]:PORT` or a bare IP.
fn peer(remote: Option<&str>) -> FfiResult<Option<SocketAddr>> {
    let Some(r) = remote else { return Ok(None) };
    if let Ok(a) = r.parse::<SocketAddr>() {
        return Ok(Some(a));
    }
    r.parse::<IpAddr>()
        .map(|ip| Some(SocketAddr::new(ip, 0)))
        .map_err(|_| FfiError::usage(format!("remote_addr {r:?} is not IP or IP:PORT")))
}

/// Serves one request the host routed to the endpoint: `method` (`"POST"`), `target` (the path
/// and query), `header_count` header fields at `headers` (NULL if none), the whole body
/// (`body_len` bytes at `body`, NULL if none), and the client's address `remote_addr`
/// (`"IP:PORT"` or `"IP"`, NULL if unknown: unauthenticated legacy sessions are then limited
/// only by the table's size). Blocks until the response's head is ready (a long answer
/// streams its body afterwards), then sets `*out`. Read no more than the endpoint's `maxBody`
/// plus one byte of a body before calling: a longer one is answered `413` anyway.
///
/// `cancel` (NULL for none): cancelling it before the head is ready drops the request (it is
/// cancelled in the server) and this returns `MCPAXLE_ERR_CANCELLED`. A method, target or
/// header `http` refuses is `MCPAXLE_ERR_USAGE`. Bad requests otherwise get their HTTP answer
/// (`400`, `404`, `405`, `413`, `415`, ...), as on `mcpaxle_server_start_http`.
///
/// Ownership: every argument is borrowed for the call; `*out` is the caller's
/// (`mcpaxle_http_response_free`). Thread: any thread that is not an async runtime worker
/// (one per request at once: a host with a thread per connection).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcpaxle_mount_handle(
    mount: *mut mcpaxle_mount,
    method: *const c_char,
    target: *const c_char,
    headers: *const mcpaxle_http_header,
    header_count: usize,
    body: *const u8,
    body_len: usize,
    remote_addr: *const c_char,
    cancel: *const mcpaxle_cancel_token,
    out: *mut *mut mcpaxle_http_response,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, m, method, target, remote) = unsafe {
            (
                out_ptr(out, "out")?,
                mount.as_ref().ok_or_else(|| FfiError::null("mount"))?,
                arg_str(method, "method")?,
                arg_str(target, "target")?,
                opt_str(remote_addr, "remote_addr")?,
            )
        };
        let fields: &[mcpaxle_http_header] = match (headers.is_null(), header_count) {
            (_, 0) => &[],
            (true, _) => return Err(FfiError::null("headers")),
            // SAFETY: `header_count` fields at `headers`, per the contract.
            (false, n) => unsafe { std::slice::from_raw_parts(headers, n) },
        };
        let mut pairs = Vec::with_capacity(fields.len());
        for (i, f) in fields.iter().enumerate() {
            // SAFETY: each field's strings are NUL-terminated and alive, per the contract.
            let (n, v) = unsafe {
                (arg_str(f.name, &format!("headers[{i}].name"))?, arg_str(f.value, &format!("headers[{i}].value"))?)
            };
            pairs.push((n, v));
        }
        let bytes = match (body.is_null(), body_len) {
            (_, 0) => Bytes::new(),
            (true, _) => return Err(FfiError::null("body")),
            // SAFETY: `body_len` bytes at `body`, per the contract.
            (false, n) => Bytes::copy_from_slice(unsafe { std::slice::from_raw_parts(body, n) }),
        };
        let req = routed_request(method, target, pairs, bytes, peer(remote)?)?;
        // SAFETY: NULL or a live token, per the contract.
        let cancel = unsafe { cancel.as_ref() }.map_or_else(CancellationToken::new, |t| t.token.clone());
        let service = m.service.clone();
        let token = cancel.clone();
        let resp = runtime::block_on(async move {
            tokio::select! {
                biased;
                _ = token.cancelled() => None,
                r = service.handle_routed(req) => Some(r),
            }
        })?
        .ok_or_else(|| {
            FfiError::new(
                mcpaxle_result::MCPAXLE_ERR_CANCELLED,
                "the request was cancelled before its response started",
            )
        })?;
        let (parts, body) = resp.into_parts();
        let headers = parts
            .headers
            .iter()
            .map(|(n, v)| {
                let value = CString::new(v.as_bytes()).unwrap_or_default();
                (CString::new(n.as_str()).unwrap_or_default(), value)
            })
            .collect();
        *out = Box::into_raw(Box::new(mcpaxle_http_response {
            status: parts.status.as_u16(),
            headers,
            body: Mutex::new(Some(body)),
            chunk: Mutex::new(Bytes::new()),
            cancel: CancellationToken::new(),
        }));
        Ok(())
    })
}

/// Borrows a response handle.
///
/// # Safety
/// `p` is NULL or a live handle from `mcpaxle_mount_handle`.
unsafe fn response_ref<'a>(p: *const mcpaxle_http_response) -> FfiResult<&'a mcpaxle_http_response> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| FfiError::null("response"))
}

/// The response's HTTP status (0 for NULL). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_status(response: *const mcpaxle_http_response) -> u16 {
    // SAFETY: per the contract.
    ffi_boundary!(0, { unsafe { response.as_ref() }.map_or(0, |r| r.status) })
}

/// The number of the response's header fields (0 for NULL). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_header_count(response: *const mcpaxle_http_response) -> usize {
    // SAFETY: per the contract.
    ffi_boundary!(0, { unsafe { response.as_ref() }.map_or(0, |r| r.headers.len()) })
}

/// The header field `index` of the response (below `mcpaxle_http_response_header_count`):
/// `*name` (lowercase) and `*value`, borrowed from the response until it is freed.
/// `MCPAXLE_ERR_USAGE` past the last one. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_header(
    response: *const mcpaxle_http_response,
    index: usize,
    name: *mut *const c_char,
    value: *mut *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (r, name, value) = unsafe {
            (
                response_ref(response)?,
                name.as_mut().ok_or_else(|| FfiError::null("name"))?,
                value.as_mut().ok_or_else(|| FfiError::null("value"))?,
            )
        };
        let (n, v) = r.headers.get(index).ok_or_else(|| {
            FfiError::usage(format!("header {index} of a response with {} header fields", r.headers.len()))
        })?;
        *name = n.as_ptr();
        *value = v.as_ptr();
        Ok(())
    })
}

/// Reads the body's next chunk as the core yields it (one JSON object, or SSE events or a
/// keep-alive comment): sets `*data` and `*len` (`*len` 0 and `*data` NULL at the end, or
/// once the response is cancelled). Blocks while a stream has nothing to send. The chunk is
/// borrowed until the next read or the free.
///
/// Ownership: borrows the response. Thread: any thread that is not an async runtime worker,
/// one at a time; `mcpaxle_http_response_cancel` may be called meanwhile from another.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_read(
    response: *mut mcpaxle_http_response,
    data: *mut *const u8,
    len: *mut usize,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (r, data, len) = unsafe {
            (
                response_ref(response)?,
                data.as_mut().ok_or_else(|| FfiError::null("data"))?,
                len.as_mut().ok_or_else(|| FfiError::null("len"))?,
            )
        };
        (*data, *len) = (std::ptr::null(), 0);
        let next = read_chunk(r)?;
        let mut chunk = r.chunk.lock().unwrap_or_else(|e| e.into_inner());
        *chunk = next.unwrap_or_default();
        if !chunk.is_empty() {
            (*data, *len) = (chunk.as_ptr(), chunk.len());
        }
        Ok(())
    })
}

/// The next non-empty chunk, `None` at the end or once cancelled (the body is then dropped,
/// which ends or cancels its request).
fn read_chunk(r: &mcpaxle_http_response) -> FfiResult<Option<Bytes>> {
    let mut guard = r.body.lock().unwrap_or_else(|e| e.into_inner());
    let Some(body) = guard.as_mut() else { return Ok(None) };
    let cancel = r.cancel.clone();
    let next = runtime::block_on(async {
        loop {
            let c = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                c = next_chunk(body) => c,
            };
            match c {
                Some(c) if c.is_empty() => continue,
                other => return other,
            }
        }
    })?;
    if next.is_none() {
        *guard = None;
    }
    Ok(next)
}

/// Writes the whole body to `write` as the core yields it, then returns `MCPAXLE_OK`; if
/// `write` returns nonzero (its client went away), the request is cancelled and this returns
/// `MCPAXLE_ERR_CANCELLED`, as it does when the response is cancelled. `write` runs on the
/// calling thread.
///
/// Ownership: borrows the response. Thread: as `mcpaxle_http_response_read`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_stream(
    response: *mut mcpaxle_http_response,
    write: mcpaxle_chunk_writer,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let r = unsafe { response_ref(response)? };
        let write = write.ok_or_else(|| FfiError::null("write"))?;
        while let Some(chunk) = read_chunk(r)? {
            // SAFETY: the caller's callback, with its own user_data and a chunk alive for the call.
            if unsafe { write(user_data, chunk.as_ptr(), chunk.len()) } != 0 {
                r.cancel.cancel();
                read_chunk(r)?;
                return Err(FfiError::new(mcpaxle_result::MCPAXLE_ERR_CANCELLED, "the client went away"));
            }
        }
        if r.cancel.is_cancelled() {
            return Err(FfiError::new(mcpaxle_result::MCPAXLE_ERR_CANCELLED, "the response was cancelled"));
        }
        Ok(())
    })
}

/// Cancels the response (call it when its client went away): a read blocked on it returns the
/// end, and the request, if still running, is cancelled. Idempotent.
///
/// Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_cancel(response: *mut mcpaxle_http_response) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let r = unsafe { response_ref(response)? };
        r.cancel.cancel();
        if let Ok(mut body) = r.body.try_lock() {
            *body = None;
        }
        Ok(())
    })
}

/// Frees a response; a request still running is cancelled. NULL is a no-op.
///
/// Ownership: takes the handle (no read or stream may be running on it). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_response_free(response: *mut mcpaxle_http_response) {
    ffi_boundary!((), {
        if !response.is_null() {
            // SAFETY: a handle from mcpaxle_mount_handle, given back once.
            drop(unsafe { Box::from_raw(response) });
        }
    })
}
