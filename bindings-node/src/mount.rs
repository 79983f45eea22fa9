//! A server mounted in the host's own HTTP server (Express, Fastify, Hono, any fetch
//! runtime): [`NativeMount`] holds one [`McpService`] per mounted handler and serves each
//! request the JavaScript layer routed to it (`lib/mount.js`) with
//! [`McpService::handle_routed`]; its response body is pulled chunk by chunk
//! ([`NativeResponse::next`]) as the core yields it. Closing a response, or cancelling its
//! token before the response starts, drops the core's body or request: the request is
//! cancelled, as when an HTTP client of the built-in server disconnects.

use crate::cancel::CancelToken;
use crate::runtime;
use bytes::Bytes;
use mcpaxle::transport::http::mounted::{next_chunk, routed_request};
use mcpaxle::transport::http::{McpBody, McpService};
use mcpaxle::{Error, ErrorKind};
use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::{Env, Result};
use napi_derive::napi;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// One request the host routed to the endpoint.
#[napi(object, object_to_js = false)]
pub struct MountRequest {
    /// The method (`"POST"`).
    pub method: String,
    /// The path and query the host received (`/mcp?x=1`).
    pub url: String,
    /// The header fields as a flat list, `[name, value, name, value, ...]` (Node's
    /// `rawHeaders`), repeated names kept.
    pub headers: Vec<String>,
    /// The whole body.
    #[napi(ts_type = "Uint8Array")]
    pub body: Buffer,
    /// The client's IP address, if the host knows it.
    pub remote_address: Option<String>,
    /// The client's port (0 if unknown).
    pub remote_port: Option<u32>,
}

/// An MCP endpoint mounted in a host HTTP server (the JavaScript `nodeHandler` and
/// `fetchHandler` wrap it).
#[napi]
pub struct NativeMount {
    service: McpService,
    max_body: usize,
}

impl NativeMount {
    /// A mount serving `service`, whose `maxBody` option is `max_body`.
    pub fn new(service: McpService, max_body: usize) -> Self {
        NativeMount { service, max_body }
    }
}

#[napi]
impl NativeMount {
    /// The largest request body accepted (the `maxBody` option): the JavaScript layer reads no
    /// more than one byte past it before the core answers `413`.
    #[napi(getter)]
    pub fn max_body(&self) -> u32 {
        u32::try_from(self.max_body).unwrap_or(u32::MAX)
    }

    /// Serves one request; resolves with the response once its head is ready. Cancelling
    /// `cancel` before then drops the request (it is cancelled in the server).
    #[napi]
    pub fn handle<'env>(
        &self,
        env: &'env Env,
        request: MountRequest,
        cancel: &CancelToken,
    ) -> Result<PromiseRaw<'env, NativeResponse>> {
        let peer = match (request.remote_address.as_deref(), request.remote_port) {
            (Some(ip), port) => ip
                .trim_start_matches("::ffff:")
                .parse::<IpAddr>()
                .ok()
                .map(|ip| SocketAddr::new(ip, u16::try_from(port.unwrap_or(0)).unwrap_or(0))),
            (None, _) => None,
        };
        let headers = request.headers.chunks_exact(2).map(|p| (p[0].as_str(), p[1].as_bytes()));
        let req = routed_request(&request.method, &request.url, headers, Bytes::copy_from_slice(&request.body), peer)
            .map_err(crate::errors::to_napi)?;
        let (service, cancel) = (self.service.clone(), cancel.token());
        runtime::promise(env, async move {
            let resp = tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    return Err(Error::new(ErrorKind::Cancelled, "the client went away before the response started"));
                }
                r = service.handle_routed(req) => r,
            };
            let (parts, body) = resp.into_parts();
            let mut headers = Vec::with_capacity(parts.headers.len() * 2);
            for (name, value) in &parts.headers {
                headers.push(name.as_str().to_owned());
                headers.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
            }
            Ok(NativeResponse {
                status: u32::from(parts.status.as_u16()),
                headers,
                body: Arc::new(Mutex::new(Some(body))),
                closed: cancel,
            })
        })
    }

    /// Ends the open `subscriptions/listen` streams of this endpoint with their final
    /// response (what the built-in server does on `close()`).
    #[napi]
    pub fn close(&self) {
        self.service.shutdown_token().cancel();
    }
}

/// The response to a mounted request: its head, then its body chunk by chunk.
#[napi]
pub struct NativeResponse {
    status: u32,
    headers: Vec<String>,
    body: Arc<Mutex<Option<McpBody>>>,
    closed: CancellationToken,
}

#[napi]
impl NativeResponse {
    /// The HTTP status.
    #[napi(getter)]
    pub fn status(&self) -> u32 {
        self.status
    }

    /// The header fields as a flat list, `[name, value, name, value, ...]`.
    #[napi(getter)]
    pub fn headers(&self) -> Vec<String> {
        self.headers.clone()
    }

    /// The body's next chunk as the core yields it, `null` at its end (or once closed). One
    /// call at a time.
    #[napi(ts_return_type = "Promise<Uint8Array | null>")]
    pub fn next<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Option<Buffer>>> {
        let (body, closed) = (self.body.clone(), self.closed.clone());
        runtime::promise(env, async move {
            let mut guard = body.lock().await;
            let Some(b) = guard.as_mut() else { return Ok(None) };
            let chunk = tokio::select! {
                biased;
                _ = closed.cancelled() => None,
                c = next_chunk(b) => c,
            };
            if chunk.is_none() {
                // The end, or closed: dropping the body ends (or cancels) its request.
                *guard = None;
            }
            Ok(chunk.map(|c| Buffer::from(c.to_vec())))
        })
    }

    /// Drops the body: a request still running is cancelled (call it when the client goes
    /// away). Idempotent.
    #[napi]
    pub fn close(&self) {
        self.closed.cancel();
        if let Ok(mut guard) = self.body.try_lock() {
            *guard = None;
        }
    }
}

impl Drop for NativeResponse {
    fn drop(&mut self) {
        self.close();
    }
}
