//! The MCP endpoint mounted in a host's ASGI application (`mcpaxle.Server.asgi_app()`): the
//! core's [`McpService::handle_routed`] fed with the request the ASGI callable collected, its
//! response handed back as a status, headers and a body read frame by frame. Dropping the
//! body (the client disconnected) cancels the request, as it does in the built-in server.

use crate::bridge::{self, Bridge, Make};
use crate::runtime::check_fork;
use bytes::Bytes;
use mcpaxle::transport::http::mounted::{next_chunk, routed_request};
use mcpaxle::transport::http::{McpBody, McpService};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::sync::Mutex;

/// One MCP endpoint for a host application (one per `asgi_app()`): its legacy sessions,
/// resumable streams and shutdown token are its own.
#[pyclass(frozen, name = "AsgiService", module = "mcpaxle._native")]
pub struct PyAsgiService {
    pub(crate) service: McpService,
    pub(crate) max_body: usize,
    pub(crate) drain_timeout_ms: u64,
}

/// What a response's head resolves to: status, headers, and the body (all of it when the core
/// knew its length, else a stream).
struct Head {
    status: u16,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    full: Option<Bytes>,
    stream: Option<McpBody>,
}

fn make_head(h: Head) -> Make {
    Box::new(move |py| {
        let headers = PyList::empty(py);
        for (n, v) in &h.headers {
            headers.append((PyBytes::new(py, n), PyBytes::new(py, v)))?;
        }
        let full = match &h.full {
            Some(b) => PyBytes::new(py, b).into_any(),
            None => py.None().into_bound(py),
        };
        let stream = match h.stream {
            Some(body) => Py::new(py, PyAsgiBody { body: Arc::new(Mutex::new(Some(body))) })?.into_bound(py).into_any(),
            None => py.None().into_bound(py),
        };
        Ok(PyTuple::new(py, [h.status.into_pyobject(py)?.into_any(), headers.into_any(), full, stream])?.into_any())
    })
}

fn make_chunk(chunk: Option<Bytes>) -> Make {
    Box::new(move |py| {
        Ok(match chunk {
            Some(b) => PyBytes::new(py, &b).into_any(),
            None => py.None().into_bound(py),
        })
    })
}

#[pymethods]
impl PyAsgiService {
    /// Handles one request the host routed to the endpoint: an awaitable (on `bridge`'s loop)
    /// resolving to `(status, headers, body, stream)`: `headers` a list of `(name, value)`
    /// bytes pairs, `body` the whole body when it is one JSON object (or empty), else `None`
    /// and `stream` an [`PyAsgiBody`] to read the SSE frames from. `target` is the path and
    /// query as sent; `client` the peer's `(host, port)` (legacy sessions are limited per
    /// peer). Cancelling the awaitable cancels the request.
    #[pyo3(signature = (bridge, method, target, headers, body, client=None))]
    #[allow(clippy::too_many_arguments)]
    fn handle<'py>(
        &self,
        py: Python<'py>,
        bridge: &Bound<'py, Bridge>,
        method: &str,
        target: &str,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        body: Vec<u8>,
        client: Option<(String, u16)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        check_fork()?;
        // A target that is not a valid URI (raw bytes a server let through): routed anyway,
        // since the host routed it here; only the metadata path is compared.
        let target = if target.parse::<http::Uri>().is_ok() { target } else { "/" };
        let headers = headers.iter().map(|(n, v)| (String::from_utf8_lossy(n), v.as_slice()));
        let peer = client.and_then(|(host, port)| host.parse::<IpAddr>().ok().map(|ip| SocketAddr::new(ip, port)));
        let req = routed_request(method, target, headers, Bytes::from(body), peer).map_err(|e| {
            crate::errors::new_py_err(
                "UsageError",
                format!("the ASGI request is not a valid HTTP request: {}", e.message()),
            )
        })?;
        let service = self.service.clone();
        let fut = async move {
            let r = service.handle_routed(req).await;
            let (parts, mut body) = r.into_parts();
            let headers =
                parts.headers.iter().map(|(n, v)| (n.as_str().as_bytes().to_vec(), v.as_bytes().to_vec())).collect();
            let (full, stream) = if http_body::Body::size_hint(&body).exact().is_some() {
                (Some(next_chunk(&mut body).await.unwrap_or_default()), None)
            } else {
                (None, Some(body))
            };
            Ok(Head { status: parts.status.as_u16(), headers, full, stream })
        };
        bridge::awaitable(py, &bridge.get().inner, fut, make_head)
    }

    /// Ends open `subscriptions/listen` streams (with their final response) and the legacy
    /// sessions: the endpoint's shutdown, before the host drains its requests.
    fn shutdown(&self) -> PyResult<()> {
        check_fork()?;
        self.service.shutdown_token().cancel();
        self.service.sessions().close_all();
        Ok(())
    }

    /// The largest request body the endpoint accepts, in bytes (the core's `max_body`): the
    /// ASGI callable stops reading past it and hands over what it has (the core answers 413).
    #[getter]
    fn max_body(&self) -> usize {
        self.max_body
    }

    /// How long shutdown waits for requests in flight, in milliseconds (`drain_timeout_ms`).
    #[getter]
    fn drain_timeout_ms(&self) -> u64 {
        self.drain_timeout_ms
    }
}

/// The body of a streamed (SSE) response: read its frames with `next`, drop it or `close` it
/// to cancel the request.
#[pyclass(frozen, name = "AsgiBody", module = "mcpaxle._native")]
pub struct PyAsgiBody {
    body: Arc<Mutex<Option<McpBody>>>,
}

#[pymethods]
impl PyAsgiBody {
    /// An awaitable (on `bridge`'s loop) resolving to the next frame's bytes, or `None` at the
    /// end. Cancelling it leaves the body where it was.
    fn next<'py>(&self, py: Python<'py>, bridge: &Bound<'py, Bridge>) -> PyResult<Bound<'py, PyAny>> {
        check_fork()?;
        let body = self.body.clone();
        let fut = async move {
            let mut guard = body.lock().await;
            let Some(b) = guard.as_mut() else { return Ok(None) };
            let chunk = next_chunk(b).await;
            if chunk.is_none() {
                *guard = None;
            }
            Ok(chunk)
        };
        bridge::awaitable(py, &bridge.get().inner, fut, make_chunk)
    }

    /// Drops the body now (the client went away): the request is cancelled. A `next` in
    /// flight (its awaitable being cancelled) still holds it: then it goes once that ends.
    fn close(&self) -> PyResult<()> {
        check_fork()?;
        if let Ok(mut b) = self.body.try_lock() {
            b.take();
            return Ok(());
        }
        let body = self.body.clone();
        crate::runtime::spawn(async move {
            body.lock().await.take();
        })?;
        Ok(())
    }
}
