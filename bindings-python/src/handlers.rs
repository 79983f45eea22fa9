//! The core's four handler traits, implemented once for a Python callable. The Python layer
//! (`mcpaxle._handlers`) normalises every user function into `async def invoke(payload, ctx)`
//! returning the user's value in JSON types (bytes kept); here it is only called through the
//! bridge of the loop that serves the server, and its value handed to the core, which shapes
//! it into the result (`mcpaxle::server::shaping`).

use crate::bridge::{self, BridgeInner, Payload};
use crate::pool::{self, PoolHandler};
use mcpaxle::server::{
    BoxFuture, CompletionHandler, CompletionRequest, PromptHandler, RequestContext, ResourceHandler, ResourceRequest,
    Returned, ToolHandler,
};
use mcpaxle::{Error, ErrorKind, Result};
use pyo3::prelude::*;
use serde_json::{Map, Value};
use std::sync::{Arc, RwLock};

/// The bridge of the event loop a server is served on (None while it is not served).
#[derive(Clone, Default)]
pub struct Home(Arc<RwLock<Option<Arc<BridgeInner>>>>);

impl Home {
    pub fn get(&self) -> Option<Arc<BridgeInner>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set(&self, bridge: Option<Arc<BridgeInner>>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = bridge;
    }
}

/// A Python handler of one tool, resource, template, prompt or completion.
pub struct PyHandler {
    home: Home,
    target: Arc<Target>,
    /// What it serves, for error messages: `tool "forecast"`.
    what: Arc<str>,
}

/// Where a handler runs.
enum Target {
    /// On the serving loop: `invoke(payload, ctx)` returns a coroutine.
    Loop(Arc<Py<PyAny>>),
    /// On a thread of the server's pool (a plain `def`).
    Pool(Py<PoolHandler>),
}

impl PyHandler {
    /// `handler` is the Python layer's `async def invoke(payload, ctx)`, or a `PoolHandler`.
    pub fn new(home: Home, handler: &Bound<'_, PyAny>, what: String) -> Self {
        let target = match handler.cast::<PoolHandler>() {
            Ok(pool) => Target::Pool(pool.clone().unbind()),
            Err(_) => Target::Loop(Arc::new(handler.clone().unbind())),
        };
        PyHandler { home, target: Arc::new(target), what: what.into() }
    }

    fn invoke(&self, payload: Payload, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let (home, target, what) = (self.home.clone(), self.target.clone(), self.what.clone());
        Box::pin(async move {
            let Some(bridge) = home.get().filter(|b| !b.is_closed()) else {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("Internal error: the {what} has no running event loop (the server is not being served)"),
                ));
            };
            match &*target {
                Target::Loop(callable) => bridge::call(bridge, callable.clone(), payload, ctx).await,
                Target::Pool(h) => {
                    let h = h.get();
                    pool::call(&h.shared, h.what.clone(), h.invoke.clone(), bridge, payload, ctx).await
                }
            }
        })
    }
}

impl ToolHandler for PyHandler {
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.invoke(Payload::Tool(Arc::new(arguments)), ctx)
    }

    fn call_shared(&self, arguments: Arc<Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.invoke(Payload::Tool(arguments), ctx)
    }
}

impl ResourceHandler for PyHandler {
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.invoke(Payload::Resource { uri: request.uri, variables: request.variables }, ctx)
    }
}

impl PromptHandler for PyHandler {
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.invoke(Payload::Prompt(arguments), ctx)
    }
}

impl CompletionHandler for PyHandler {
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.invoke(
            Payload::Completion { argument: request.argument, value: request.value, context: request.context },
            ctx,
        )
    }
}
