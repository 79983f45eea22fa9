//! The MCP server: registries of tools, resources, resource templates, prompts and
//! completions, changeable at run time, and one dispatcher used by every transport.
//!
//! ```no_run
//! use mcpaxle::server::Server;
//! use mcpaxle::schema::{CallToolResult, Tool};
//! use serde_json::json;
//!
//! # async fn run() -> mcpaxle::Result<()> {
//! let server = Server::builder("weather", "1.0.0").instructions("Forecasts by city.").build();
//! server.add_tool(
//!     Tool::new("forecast", "Forecast for a city", json!({
//!         "type": "object",
//!         "properties": { "city": { "type": "string" } },
//!         "required": ["city"]
//!     })),
//!     |args: serde_json::Value, _ctx| async move {
//!         Ok(CallToolResult::text(format!("Sunny in {}", args["city"].as_str().unwrap_or("?"))))
//!     },
//! )?;
//! mcpaxle::transport::stdio::serve(server).await
//! # }
//! ```

pub mod context;
pub(crate) mod dispatch;
pub mod exchange;
mod handle;
pub mod handlers;
pub mod input_schema;
mod list_pages;
mod memory;
pub mod middleware;
mod options;
mod pagination;
pub mod redis_bus;
mod registry;
pub mod request_meta;
pub mod seal;
pub mod shaping;
pub mod subscriptions;
pub mod tasks;
mod template_paths;
pub mod uri_template;

pub use context::{Ask, AskKind, RequestContext};
pub use dispatch::{RequestHeaders, TransportContext};
pub use exchange::{Exchange, Outgoing, Wire};
pub use handle::{Server, ServerBuilder, WeakServer};
pub use handlers::{
    BoxFuture, CompletionHandler, CompletionRequest, JsonHandler, JsonInput, PromptHandler, ResourceHandler,
    ResourceRequest, SharedArguments, ToolHandler,
};
pub use middleware::{
    Item, ItemInfo, ItemKind, Middleware, Next, Reply, RequestInfo, Token, Visibility, VisibilityFilter,
};
pub use options::{
    BUS_ENV, CacheDefaults, CacheHint, Capability, PREVIOUS_STATE_SECRET_ENV, STATE_SECRET_ENV, ServerOptions,
    StateSecret, ToolOptions,
};
pub use redis_bus::{BusOptions, RedisBus};
pub use registry::CompletionRef;
pub use seal::StateKey;
pub use shaping::Returned;
pub use subscriptions::{EventFilter, EventQueue, EventSink, LocalBus, NotificationBus, ServerEvent, event_queue};
pub use template_paths::TemplateOptions;
