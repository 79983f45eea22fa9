//! One implementation of each of the core's handler traits, for JavaScript functions.
//!
//! A handler is `(inputJson, ctx) => Promise<envelopeJson>` (the JavaScript layer wraps the
//! user's function): the core's request runs the function on the JavaScript thread through a
//! weak threadsafe function and awaits its promise. The input is the tool's arguments, the
//! prompt's arguments, `{"uri", "variables"}` for a resource, or `{"argument", "value",
//! "context"}` for a completion. The envelope's value is the handler's value in the core's
//! tagged form ([`Returned::from_tagged`]), which the core shapes into the result.

use crate::callbacks;
use crate::context::RequestCtx;
use mcpaxle::RequestContext;
use mcpaxle::server::{
    BoxFuture, CompletionHandler, CompletionRequest, PromptHandler, ResourceHandler, ResourceRequest, Returned,
    ToolHandler,
};
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;

/// `(inputJson, ctx) => Promise<envelopeJson>`.
pub type HandlerFn = ThreadsafeFunction<
    FnArgs<(String, RequestCtx)>,
    Promise<String>,
    FnArgs<(String, RequestCtx)>,
    Status,
    false,
    true,
>;

/// A JavaScript handler, usable as any of the core's handler traits.
#[derive(Clone)]
pub struct JsHandler {
    f: Arc<HandlerFn>,
}

impl JsHandler {
    /// Wraps a JavaScript handler.
    pub fn new(f: HandlerFn) -> Self {
        JsHandler { f: Arc::new(f) }
    }

    fn run(&self, input: Value, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        let f = self.f.clone();
        Box::pin(async move {
            // `over` fires when this run ends, answered or dropped (a dropped run is a cancelled
            // request: the exchange drops the handler's future before firing its token).
            let over = CancellationToken::new();
            let answered = Arc::new(AtomicBool::new(false));
            let _over = over.clone().drop_guard();
            let js_ctx = RequestCtx::new(ctx, over, answered.clone());
            let v = callbacks::answer(&f, FnArgs::from((input.to_string(), js_ctx))).await;
            answered.store(true, Ordering::Release);
            Returned::from_tagged(v?)
        })
    }
}

impl ToolHandler for JsHandler {
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        self.run(arguments, ctx)
    }
}

impl ResourceHandler for JsHandler {
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        self.run(json!({ "uri": request.uri, "variables": request.variables }), ctx)
    }
}

impl PromptHandler for JsHandler {
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        self.run(Value::Object(arguments), ctx)
    }
}

impl CompletionHandler for JsHandler {
    fn complete(
        &self,
        request: CompletionRequest,
        ctx: RequestContext,
    ) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        self.run(json!({ "argument": request.argument, "value": request.value, "context": request.context }), ctx)
    }
}
