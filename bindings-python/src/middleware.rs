//! The core's [`Middleware`] implemented once for a Python callable. The Python layer
//! (`Server.middleware`) wraps the user's `async def mw(request, call_next)` into
//! `async def invoke((request_dict, call_next))`; here it is called through the bridge of the
//! loop serving the server, and `call_next` (a [`CallNext`]) runs the rest of the core's chain
//! when the Python code awaits it: the Rust future of the request waits for either.

use crate::bridge::{self, BridgeInner};
use crate::handlers::Home;
use crate::runtime::check_fork;
use mcpaxle::server::{BoxFuture, ItemInfo, Middleware, Next, Reply, RequestInfo, VisibilityFilter};
use mcpaxle::{Error, ErrorKind, Result};
use pyo3::prelude::*;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A Python middleware.
pub struct PyMiddleware {
    home: Home,
    callable: Arc<Py<PyAny>>,
}

impl PyMiddleware {
    pub fn new(home: Home, callable: Py<PyAny>) -> Self {
        PyMiddleware { home, callable: Arc::new(callable) }
    }
}

impl Middleware for PyMiddleware {
    fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, Result<Reply>> {
        Box::pin(async move {
            let Some(bridge) = self.home.get().filter(|b| !b.is_closed()) else {
                return Err(Error::internal(
                    "Internal error: the middleware has no running event loop (the server is not being served)",
                ));
            };
            let (tx, mut asks) = mpsc::unbounded_channel();
            let call_next = CallNext { asks: tx, bridge: bridge.clone() };
            let python = bridge::call_middleware(bridge, self.callable.clone(), req.to_json(), call_next);
            tokio::pin!(python);
            loop {
                tokio::select! {
                    outcome = &mut python => return outcome.map(Reply::from),
                    Some(reply) = asks.recv() => {
                        // The result becomes a dict for Python: read as a value.
                        let _ = reply.send(next.run().await.map(Reply::into_value));
                    }
                }
            }
        })
    }
}

/// `call_next` of a Python middleware: awaiting it runs the rest of the chain, then the
/// method, and gives the result dict (or raises the request's error as its `McpError`).
#[pyclass(frozen, name = "CallNext", module = "mcpaxle._native")]
pub struct CallNext {
    asks: mpsc::UnboundedSender<oneshot::Sender<Result<Value>>>,
    bridge: Arc<BridgeInner>,
}

#[pymethods]
impl CallNext {
    /// An awaitable of the rest of the chain's result. `request` is accepted for the
    /// Starlette-style `call_next(request)` and not used: the request cannot be changed.
    #[pyo3(signature = (request=None))]
    fn __call__<'py>(&self, py: Python<'py>, request: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let _ = request;
        check_fork()?;
        let (reply, answer) = oneshot::channel();
        let sent = self.asks.send(reply).is_ok();
        bridge::awaitable(
            py,
            &self.bridge,
            async move {
                if !sent {
                    return Err(Error::usage("call_next was called after its middleware returned"));
                }
                answer.await.unwrap_or_else(|_| {
                    Err(Error::new(ErrorKind::Cancelled, "Cancelled: the request ended before call_next answered"))
                })
            },
            bridge::make_value,
        )
    }
}

/// A Python visibility predicate: the Python layer wraps the user's `visible(item, request)`
/// as `async def invoke({"request", "items"}) -> [bool]`, called once per request through the
/// bridge (the core's [`VisibilityFilter`]).
pub struct PyVisibility {
    home: Home,
    callable: Arc<Py<PyAny>>,
}

impl PyVisibility {
    pub fn new(home: Home, callable: Py<PyAny>) -> Self {
        PyVisibility { home, callable: Arc::new(callable) }
    }
}

impl VisibilityFilter for PyVisibility {
    fn visible<'a>(&'a self, who: &'a RequestInfo, items: &'a [ItemInfo]) -> BoxFuture<'a, Result<Vec<bool>>> {
        Box::pin(async move {
            let Some(bridge) = self.home.get().filter(|b| !b.is_closed()) else {
                return Err(Error::internal(
                    "Internal error: the visibility predicate has no running event loop (the server is not being served)",
                ));
            };
            let asked = serde_json::json!({
                "request": who.to_json(),
                "items": items.iter().map(ItemInfo::to_json).collect::<Vec<_>>(),
            });
            let answer = bridge::call_client(bridge, self.callable.clone(), asked).await?;
            serde_json::from_value(answer)
                .map_err(|_| Error::internal("Internal error: the visibility predicate must answer True or False"))
        })
    }
}
