//! The handler traits a server's tools, resources, prompts and completions implement. Each is
//! implemented for plain async closures, and by each binding once for its host's callbacks.
//!
//! A handler returns a [`Returned`]: a typed result (`CallToolResult`, ...), or a shorthand
//! (a string, bytes, JSON) that the server shapes into the result by the one rule of
//! [`shaping`](crate::server::shaping). A closure may return anything that converts into it.

use crate::error::Result;
use crate::server::context::RequestContext;
use crate::server::shaping::Returned;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

/// A boxed, sendable future (futures' own alias, which the core's context uses too).
pub use futures_util::future::BoxFuture;

/// Runs a tool. `arguments` is the call's `arguments` object (`{}` when the call had none),
/// already validated against the tool's `inputSchema`.
///
/// Return `Err(Error::tool(..))` for failures the model should read (they become an
/// `isError` result); other errors become JSON-RPC errors; `?` on an MRTR ask ends the round.
pub trait ToolHandler: Send + Sync + 'static {
    /// Calls the tool.
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>>;

    /// Calls the tool with arguments the server shares: it keeps them while the call runs, to
    /// bind a `requestState` to them should the handler ask for input. This is what the server
    /// calls. The default gives [`call`](Self::call) its own copy; a handler that only reads its
    /// arguments (every binding: it converts or serializes them) overrides it to read them in
    /// place, so a large call is not copied. [`SharedArguments`] makes a closure such a handler.
    fn call_shared(&self, arguments: Arc<Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.call(Arc::unwrap_or_clone(arguments), ctx)
    }
}

/// A tool handler that reads the call's arguments where the server keeps them instead of taking
/// its own copy: `SharedArguments(|args: Arc<Value>, ctx| async move { ... })`. Worth it for
/// large arguments (a 100 KB call is about a tenth cheaper); a plain closure is simpler otherwise.
pub struct SharedArguments<F>(pub F);

impl<F, Fut, R> ToolHandler for SharedArguments<F>
where
    F: Fn(Arc<Value>, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: Into<Returned>,
{
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.call_shared(Arc::new(arguments), ctx)
    }

    fn call_shared(&self, arguments: Arc<Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let fut = (self.0)(arguments, ctx);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

impl<F, Fut, R> ToolHandler for F
where
    F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: Into<Returned>,
{
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let fut = self(arguments, ctx);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// What a resource handler is asked to read.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// For a resource template, the template's variables extracted from the URI (RFC 6570);
    /// empty for a direct resource.
    pub variables: Map<String, Value>,
}

/// Reads a resource, or any resource matching a template.
pub trait ResourceHandler: Send + Sync + 'static {
    /// Reads the resource.
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>>;
}

impl<F, Fut, R> ResourceHandler for F
where
    F: Fn(ResourceRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: Into<Returned>,
{
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let fut = self(request, ctx);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// Renders a prompt. `arguments` holds the prompt's arguments (string values); required ones
/// are checked before the handler runs.
pub trait PromptHandler: Send + Sync + 'static {
    /// Gets the prompt.
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>>;
}

impl<F, Fut, R> PromptHandler for F
where
    F: Fn(Map<String, Value>, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: Into<Returned>,
{
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let fut = self(arguments, ctx);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// What a completion handler is asked to complete.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    /// The argument being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments already resolved (`context.arguments`).
    pub context: Map<String, Value>,
}

/// Completes an argument of a prompt or of a resource template.
pub trait CompletionHandler: Send + Sync + 'static {
    /// Returns candidate values (the server sends at most 100).
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>>;
}

impl<F, Fut, R> CompletionHandler for F
where
    F: Fn(CompletionRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: Into<Returned>,
{
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let fut = self(request, ctx);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// One function for every kind of handler, its input as JSON: what a binding whose host
/// callbacks take JSON implements once; [`JsonInput`] makes it each of the handler traits.
/// The input is the tool's arguments, the prompt's arguments, `{"uri", "variables"}` for a
/// resource or template, or `{"argument", "value", "context"}` for a completion.
pub trait JsonHandler: Send + Sync + 'static {
    /// One run of the handler. The input is borrowed: a binding converts or serializes it before
    /// the run is under way, and a tool's arguments are then never copied.
    fn run(&self, input: &Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>>;
}

/// A [`JsonHandler`] as a tool, resource, prompt or completion handler.
pub struct JsonInput<H>(pub H);

impl<H: JsonHandler> ToolHandler for JsonInput<H> {
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.0.run(&arguments, ctx)
    }

    fn call_shared(&self, arguments: Arc<Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.0.run(&arguments, ctx)
    }
}

impl<H: JsonHandler> ResourceHandler for JsonInput<H> {
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.0.run(&serde_json::json!({ "uri": request.uri, "variables": request.variables }), ctx)
    }
}

impl<H: JsonHandler> PromptHandler for JsonInput<H> {
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        self.0.run(&Value::Object(arguments), ctx)
    }
}

impl<H: JsonHandler> CompletionHandler for JsonInput<H> {
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let input =
            serde_json::json!({ "argument": request.argument, "value": request.value, "context": request.context });
        self.0.run(&input, ctx)
    }
}
