//! The handler traits a server's tools, resources, prompts and completions implement. Each is
//! implemented for plain async closures, and by each binding once for its host's callbacks.

use crate::error::Result;
use crate::schema::{CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult};
use crate::server::context::RequestContext;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs a tool. `arguments` is the call's `arguments` object (`{}` when the call had none),
/// already validated against the tool's `inputSchema`.
///
/// Return `Err(Error::tool(..))` for failures the model should read (they become an
/// `isError` result); other errors become JSON-RPC errors; `?` on an MRTR ask ends the round.
pub trait ToolHandler: Send + Sync + 'static {
    /// Calls the tool.
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<CallToolResult>>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallToolResult>> + Send + 'static,
{
    fn call(&self, arguments: Value, ctx: RequestContext) -> BoxFuture<'static, Result<CallToolResult>> {
        Box::pin(self(arguments, ctx))
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
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<ReadResourceResult>>;
}

impl<F, Fut> ResourceHandler for F
where
    F: Fn(ResourceRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ReadResourceResult>> + Send + 'static,
{
    fn read(&self, request: ResourceRequest, ctx: RequestContext) -> BoxFuture<'static, Result<ReadResourceResult>> {
        Box::pin(self(request, ctx))
    }
}

/// Renders a prompt. `arguments` holds the prompt's arguments (string values); required ones
/// are checked before the handler runs.
pub trait PromptHandler: Send + Sync + 'static {
    /// Gets the prompt.
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<GetPromptResult>>;
}

impl<F, Fut> PromptHandler for F
where
    F: Fn(Map<String, Value>, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<GetPromptResult>> + Send + 'static,
{
    fn get(&self, arguments: Map<String, Value>, ctx: RequestContext) -> BoxFuture<'static, Result<GetPromptResult>> {
        Box::pin(self(arguments, ctx))
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
    /// Returns candidate values (the server caps them at 100).
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<CompleteResult>>;
}

impl<F, Fut> CompletionHandler for F
where
    F: Fn(CompletionRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CompleteResult>> + Send + 'static,
{
    fn complete(&self, request: CompletionRequest, ctx: RequestContext) -> BoxFuture<'static, Result<CompleteResult>> {
        Box::pin(self(request, ctx))
    }
}
