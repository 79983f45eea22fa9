//! Serving a server: stdio (or any pair of file descriptors) and Streamable HTTP, blocking or
//! in the background.

use crate::ffi::{FfiError, FfiResult, arg_str, ffi_boundary, from_json, mcpaxle_result, opt_json, out_ptr};
use crate::runtime;
use crate::server::{mcpaxle_server, server_ref};
use mcpaxle_core::transport::http::{HttpOptions, HttpServer};
use mcpaxle_core::transport::stdio::{StdioOptions, serve_with};
use std::ffi::{c_char, c_int};
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use tokio::io::ReadBuf;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

/// The stdio options of `options_json` (the core's `StdioOptions`), stopped by `stop`.
pub(crate) fn stdio_options(json: Option<serde_json::Value>, stop: &CancellationToken) -> FfiResult<StdioOptions> {
    let o: StdioOptions = json.map(|v| from_json(v, "options_json")).transpose()?.unwrap_or_default();
    Ok(StdioOptions { shutdown: stop.child_token(), ..o })
}

/// The HTTP options of `options_json` (the core's `HttpOptions`), with the server's bearer
/// protection.
pub(crate) fn http_options(json: Option<serde_json::Value>, server: &mcpaxle_server) -> FfiResult<HttpOptions> {
    let o: HttpOptions = json.map(|v| from_json(v, "options_json")).transpose()?.unwrap_or_default();
    if o.auth.is_some() {
        return Err(FfiError::usage(
            "options_json: bearer protection (\"auth\") is set with mcpaxle_server_set_bearer_auth, which takes its verifier",
        ));
    }
    Ok(HttpOptions { auth: server.bearer_auth(), ..o })
}

fn socket_addr(addr: &str) -> FfiResult<SocketAddr> {
    if let Ok(a) = addr.parse() {
        return Ok(a);
    }
    addr.to_socket_addrs()
        .ok()
        .and_then(|mut it| it.next())
        .ok_or_else(|| FfiError::usage(format!("addr {addr:?} is not HOST:PORT")))
}

/// Stops every transport currently serving this server: blocking `mcpaxle_server_serve_*`
/// calls return, background HTTP servers stop accepting and drain. The server stays usable and
/// can be served again.
///
/// Thread: any (not from a signal handler).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_stop(server: *mut mcpaxle_server) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let s = unsafe { server_ref(server)? };
        let old = std::mem::replace(&mut *s.stop.lock().unwrap_or_else(|e| e.into_inner()), CancellationToken::new());
        old.cancel();
        Ok(())
    })
}

fn serve_streams<R, W>(
    server: *mut mcpaxle_server,
    options_json: *const c_char,
    input: impl FnOnce() -> FfiResult<(R, W)>,
) -> FfiResult
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Everything needed is cloned out of the handle here: mcpaxle_server_free may free it
    // while this call blocks.
    let (srv, options) = {
        // SAFETY: per the documented contract of the callers.
        let s = unsafe { server_ref(server)? };
        // SAFETY: as above.
        let options = unsafe { opt_json(options_json, "options_json")? };
        (s.server.clone(), stdio_options(options, &s.stop_token())?)
    };
    let (r, w) = runtime::block_on(async { input() })??;
    runtime::block_on(serve_with(srv, r, w, options))??;
    Ok(())
}

/// Serves the server on this process's stdin and stdout (newline-delimited JSON-RPC) until
/// stdin closes or `mcpaxle_server_stop`/`mcpaxle_server_free` is called. Blocking.
///
/// `options_json` may be NULL or `{"maxMessageSize": bytes, "drainTimeoutMs": ms,
/// "maxOutboundQueue": messages}` (defaults 4194304, 5000, 1024; the core's `StdioOptions`,
/// unknown members are `MCPAXLE_ERR_USAGE`). `maxOutboundQueue` bounds the messages owed
/// to the client (written but not read yet, plus requests read whose first message is not
/// written yet): at the limit, stdin is not read until the client reads stdout. Nothing but
/// MCP messages is written to stdout: log to stderr.
///
/// Ownership: borrows the server for the duration of the call. Thread: any thread that is not
/// an async runtime worker; handler callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_serve_stdio(
    server: *mut mcpaxle_server,
    options_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({ serve_streams(server, options_json, || { Ok((tokio::io::stdin(), tokio::io::stdout())) }) })
}

/// Serves the server over file descriptors with stdio framing: `input_fd` is read and
/// `output_fd` written, each a pipe (or FIFO) or a Unix socket (the same socket may be given
/// twice). Blocking, until `input_fd` reaches end of file or the server is stopped or freed.
/// The descriptors are duplicated, so the caller keeps (and closes) its own; note that the
/// duplicates share the open file, which is switched to non-blocking mode.
///
/// Ownership: as `mcpaxle_server_serve_stdio`. Thread: as `mcpaxle_server_serve_stdio`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_serve_fds(
    server: *mut mcpaxle_server,
    input_fd: c_int,
    output_fd: c_int,
    options_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        if input_fd < 0 || output_fd < 0 {
            return Err(FfiError::usage("a file descriptor is negative"));
        }
        let (i, o) = (dup(input_fd)?, dup(output_fd)?);
        serve_streams(server, options_json, move || Ok((FdStream::reader(i)?, FdStream::writer(o)?)))
    })
}

fn dup(fd: c_int) -> FfiResult<OwnedFd> {
    // SAFETY: the caller keeps `fd` open for the duration of the call; it is only duplicated.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    b.try_clone_to_owned().map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, format!("fd {fd}: {e}")))
}

/// A pipe end or a Unix socket, registered with the runtime.
enum FdStream {
    PipeIn(pipe::Receiver),
    PipeOut(pipe::Sender),
    Socket(UnixStream),
}

impl FdStream {
    fn kind(fd: &OwnedFd) -> FfiResult<bool> {
        let meta = std::fs::File::from(
            fd.try_clone().map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, e.to_string()))?,
        )
        .metadata()
        .map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, e.to_string()))?;
        let t = meta.file_type();
        if t.is_fifo() {
            Ok(true)
        } else if t.is_socket() {
            Ok(false)
        } else {
            Err(FfiError::usage("a file descriptor is neither a pipe nor a Unix socket"))
        }
    }

    fn socket(fd: OwnedFd) -> FfiResult<FdStream> {
        let std = std::os::unix::net::UnixStream::from(fd);
        std.set_nonblocking(true).map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, e.to_string()))?;
        UnixStream::from_std(std)
            .map(FdStream::Socket)
            .map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, e.to_string()))
    }

    fn reader(fd: OwnedFd) -> FfiResult<FdStream> {
        if Self::kind(&fd)? {
            pipe::Receiver::from_owned_fd(fd)
                .map(FdStream::PipeIn)
                .map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, e.to_string()))
        } else {
            Self::socket(fd)
        }
    }

    fn writer(fd: OwnedFd) -> FfiResult<FdStream> {
        if Self::kind(&fd)? {
            pipe::Sender::from_owned_fd(fd)
                .map(FdStream::PipeOut)
                .map_err(|e| FfiError::new(mcpaxle_result::MCPAXLE_ERR_TRANSPORT, e.to_string()))
        } else {
            Self::socket(fd)
        }
    }
}

fn wrong_end() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, "wrong end of a pipe")
}

impl AsyncRead for FdStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            FdStream::PipeIn(r) => Pin::new(r).poll_read(cx, buf),
            FdStream::Socket(s) => Pin::new(s).poll_read(cx, buf),
            FdStream::PipeOut(_) => Poll::Ready(Err(wrong_end())),
        }
    }
}

impl AsyncWrite for FdStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            FdStream::PipeOut(w) => Pin::new(w).poll_write(cx, buf),
            FdStream::Socket(s) => Pin::new(s).poll_write(cx, buf),
            FdStream::PipeIn(_) => Poll::Ready(Err(wrong_end())),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            FdStream::PipeOut(w) => Pin::new(w).poll_flush(cx),
            FdStream::Socket(s) => Pin::new(s).poll_flush(cx),
            FdStream::PipeIn(_) => Poll::Ready(Ok(())),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            FdStream::PipeOut(w) => Pin::new(w).poll_shutdown(cx),
            FdStream::Socket(s) => Pin::new(s).poll_shutdown(cx),
            FdStream::PipeIn(_) => Poll::Ready(Ok(())),
        }
    }
}

/// Serves the server over Streamable HTTP on `addr` ("127.0.0.1:8080"; port 0 picks one) until
/// `mcpaxle_server_stop`/`mcpaxle_server_free`. Blocking; returns `MCPAXLE_OK` once stopped
/// and drained, `MCPAXLE_ERR_TRANSPORT` when it cannot listen.
///
/// `options_json` may be NULL or an object (the core's `HttpOptions`) with any of `"path"` (the
/// endpoint, default "/mcp"), `"maxBody"` (bytes, default 4194304), `"allowedHosts"` and
/// `"allowedOrigins"` (beyond loopback; "*" allows any origin), `"keepAliveMs"` (default
/// 15000), `"drainTimeoutMs"` (default 10000), `"cors"` (CORS for browser pages of other
/// origins, off by default: an object with `"allowedOrigins"`, origins exactly as browsers send
/// them or "*", which the Origin check then accepts too; `"allowedHeaders"` and
/// `"exposedHeaders"` besides MCP's own; `"maxAgeMs"`, default 600000), `"healthPath"` (a
/// route answered 200 `{"status":"ok"}` to GET without auth or Host check, e.g. "/healthz";
/// none by default), and `"connections"`: the limits
/// of the server's connections, an object with any of `"maxConnections"` (default: three
/// quarters of the fd limit, at most 10000; when full, the least recently busy idle connection
/// is closed for each new one), `"headerReadTimeoutMs"` (10000), `"bodyReadTimeoutMs"` (30000;
/// a slower body gets 408), `"idleTimeoutMs"` (60000, between requests),
/// `"http2KeepAliveIntervalMs"` (30000; 0 for none), `"http2KeepAliveTimeoutMs"` (20000),
/// `"maxHeaderBytes"` (65536), `"http2MaxConcurrentStreams"` (100), `"maxBodyBytesInFlight"`
/// (134217728; past it a body gets 503). Serving raises the process's soft fd limit to the
/// hard one (once). It installs no signal handler: stop it from another thread. The bearer protection set with
/// `mcpaxle_server_set_bearer_auth` (if any) guards the endpoint; `"auth"` is refused here,
/// since its verifier is a callback.
///
/// Ownership: borrows the server for the duration of the call. Thread: as
/// `mcpaxle_server_serve_stdio`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_serve_http(
    server: *mut mcpaxle_server,
    addr: *const c_char,
    options_json: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        let (srv, stop, addr, options) = {
            // SAFETY: per the documented contract.
            let (s, addr, options) =
                unsafe { (server_ref(server)?, arg_str(addr, "addr")?, opt_json(options_json, "options_json")?) };
            (s.server.clone(), s.stop_token(), socket_addr(addr)?, http_options(options, s)?)
        };
        runtime::block_on(async move {
            let running = HttpServer::bind(srv, addr, options).await?;
            let token = running.shutdown_token();
            let watch = tokio::spawn(async move {
                tokio::select! {
                    _ = stop.cancelled() => token.cancel(),
                    _ = token.cancelled() => {}
                }
            });
            running.wait().await;
            watch.abort();
            Ok::<_, mcpaxle_core::Error>(())
        })??;
        Ok(())
    })
}

/// A Streamable HTTP server running in the background, from `mcpaxle_http_server_start`.
pub struct mcpaxle_http_server {
    running: Mutex<Option<HttpServer>>,
    addr: SocketAddr,
}

/// Starts serving the server over Streamable HTTP on `addr` in the background and returns at
/// once with a handle; `options_json` as in `mcpaxle_server_serve_http`. Handler callbacks run
/// on the runtime's threads.
///
/// Ownership: `*out` is the caller's: stop it with `mcpaxle_http_server_stop` and free it with
/// `mcpaxle_http_server_free` (which stops it too). The handle does not keep the
/// `mcpaxle_server` handle alive, but freeing the server stops this HTTP server. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_server_start(
    server: *mut mcpaxle_server,
    addr: *const c_char,
    options_json: *const c_char,
    out: *mut *mut mcpaxle_http_server,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (out, s, addr, options) = unsafe {
            (out_ptr(out, "out")?, server_ref(server)?, arg_str(addr, "addr")?, opt_json(options_json, "options_json")?)
        };
        let (addr, options) = (socket_addr(addr)?, http_options(options, s)?);
        let (srv, stop) = (s.server.clone(), s.stop_token());
        let running = runtime::block_on(HttpServer::bind(srv, addr, options))??;
        let token = running.shutdown_token();
        runtime::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => token.cancel(),
                _ = token.cancelled() => {}
            }
        })?;
        let addr = running.local_addr();
        *out = Box::into_raw(Box::new(mcpaxle_http_server { running: Mutex::new(Some(running)), addr }));
        Ok(())
    })
}

/// The port the background server listens on (useful after binding port 0).
///
/// Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_server_port(http: *mut mcpaxle_http_server, port: *mut u16) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (h, port) = unsafe {
            (http.as_ref().ok_or_else(|| FfiError::null("http"))?, port.as_mut().ok_or_else(|| FfiError::null("port"))?)
        };
        *port = h.addr.port();
        Ok(())
    })
}

/// Stops a background server gracefully: stops accepting, ends listen streams, waits for the
/// requests in flight (up to the drain timeout), then returns. Stopping twice is fine.
///
/// Ownership: the handle stays the caller's (free it). Thread: any thread that is not an
/// async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_server_stop(http: *mut mcpaxle_http_server) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let h = unsafe { http.as_ref() }.ok_or_else(|| FfiError::null("http"))?;
        let running = h.running.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(r) = running {
            runtime::block_on(r.shutdown())?;
        }
        Ok(())
    })
}

/// Stops (as `mcpaxle_http_server_stop`) and frees a background server. NULL is a no-op.
///
/// Ownership: takes the handle. Thread: as `mcpaxle_http_server_stop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_http_server_free(http: *mut mcpaxle_http_server) {
    ffi_boundary!((), {
        if http.is_null() {
            return;
        }
        // SAFETY: a handle from mcpaxle_http_server_start, given back once.
        let h = unsafe { Box::from_raw(http) };
        let running = h.running.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(r) = running {
            let _ = runtime::block_on(r.shutdown());
        }
    })
}
