//! The core's four handler traits, implemented once for a Python callable. The Python layer
//! (`mcpaxle._handlers`) normalises every user function into `async def invoke(payload, ctx)`
//! returning the result as a dict in the protocol's shape; here it is only called through
//! the bridge of the loop that serves the server, and its dict decoded into the typed result.

use crate::bridge::{self, BridgeInner, Payload};
use mcpaxle::schema::{CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult};
use mcpaxle::server::{
    BoxFuture, CompletionHandler, CompletionRequest, PromptHandler, RequestContext, ResourceHandler, ResourceRequest,
    ToolHandler,
};
use mcpaxle::{Error, ErrorKind, Result};
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
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
    callable: Arc<Py<PyAny>>,
    /// What it serves, for error messages: `tool "forecast"`.
    what: Arc<str>,
}

impl PyHandler {
    pub fn new(home: Home, callable: Py<PyAny>, what: String) -> Self {
        PyHandler { home, callable: Arc::new(callable), what: what.into() }
    }

    fn invoke<T: DeserializeOwned>(&self, payload: Payload, ctx: RequestContext) -> BoxFuture<'static, Result<T>> {
        let (home, callable, what) = (self.home.clone(), self.callable.clone(), self.what.clone());
        Box::pin(async move {
            let Some(bridge) = home.get().filter(|b| !b.is_closed()) else {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("Internal error: the {what} has no running event loop (the server is not being served)"),
                ));
            };
            let value = bridge::call(bridge, callable, payload, ctx).await?;
            decode(value, &what)
        })
    }
}

fn decode<T: DeserializeOwned>(value: Value, what: &str) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::internal(format!("Internal error: the {what} returned a result of the wrong shape: {e}")))
}

impl ToolHandler for PyHandler {
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<CallToolResult>> {
        self.invoke(Payload::Tool(arguments), ctx)
    }
}

impl ResourceHandler for PyHandler {
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<ReadResourceResult>> {
        self.invoke(Payload::Resource { uri: request.uri, variables: request.variables }, ctx)
    }
}

impl PromptHandler for PyHandler {
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<GetPromptResult>> {
        self.invoke(Payload::Prompt(arguments), ctx)
    }
}

impl CompletionHandler for PyHandler {
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<CompleteResult>> {
        self.invoke(
            Payload::Completion { argument: request.argument, value: request.value, context: request.context },
            ctx,
        )
    }
}
