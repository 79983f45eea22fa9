//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a `tools/call` answered
//! with a task handle (`resultType: "task"`) whose state the client reads with `tasks/get`,
//! answers the input requests of with `tasks/update` and stops with `tasks/cancel`.
//!
//! A tool opts in with [`ToolOptions::task_support`](crate::server::ToolOptions::task_support);
//! its handler is the same as for an ordinary call. When the request's client capabilities
//! declare the extension, the server creates the task before the handler runs (or, with
//! [`ToolOptions::defer_task`](crate::server::ToolOptions::defer_task), when the handler calls
//! [`RequestContext::start_task`](crate::server::RequestContext::start_task)) and answers with
//! the `CreateTaskResult` at once; the handler then runs in the background. Its
//! `ctx.elicit`/`ctx.sample`/`ctx.list_roots` become the task's `inputRequests`
//! (`status: "input_required"` in `tasks/get`) and wait for the client's `tasks/update`; its
//! `ctx.progress` messages become the task's `statusMessage`; `tasks/cancel` cancels its
//! cancellation token and drops its future. Its result (or JSON-RPC error) is inlined in
//! `tasks/get` once it ends. Task state lives in a [`TaskStore`] (in memory by default,
//! bounded, with the TTL of [`TaskOptions`]); task ids are 128 random bits, bound to the
//! principal that created them. A fleet keeps them in Redis ([`RedisTaskStore`], by default
//! when the server has a Redis notification bus): any instance answers `tasks/get`, forwards
//! `tasks/update` and `tasks/cancel` to the instance running the task, and reports a task whose
//! instance stopped as `failed`. Each change is announced as `notifications/tasks` to the
//! `subscriptions/listen` streams that follow the task (`notifications.taskIds`).
//!
//! A tool that runs for a minute, reports progress, asks one question half-way and can be
//! cancelled:
//!
//! ```
//! use mcpaxle::schema::{CallToolResult, Tool};
//! use mcpaxle::server::{RequestContext, Server, ToolOptions, tasks::TaskSupport};
//! use serde_json::json;
//! use std::time::Duration;
//!
//! fn add_rebuild_index(server: &Server) -> mcpaxle::Result<()> {
//!     let tool = Tool::new("rebuild_index", "Rebuilds the search index (about a minute)", json!({ "type": "object" }));
//!     let options = ToolOptions { task_support: TaskSupport::Optional, ..ToolOptions::default() };
//!     server.add_tool_with(tool, options, |_args, ctx: RequestContext| async move {
//!         for step in 1..=6 {
//!             if step == 3 {
//!                 let form = json!({ "mode": "form", "message": "Also rebuild the archive?",
//!                     "requestedSchema": { "type": "object", "properties": { "archive": { "type": "boolean" } } } });
//!                 let answer = ctx.elicit("archive", form).await?; // the task's input request
//!                 ctx.progress(3.0, Some(6.0), Some(&format!("archive: {}", answer["content"]["archive"])));
//!             }
//!             tokio::time::sleep(Duration::from_secs(10)).await; // dropped on tasks/cancel
//!             ctx.progress(f64::from(step), Some(6.0), Some(&format!("step {step} of 6")));
//!         }
//!         Ok(CallToolResult::text("index rebuilt"))
//!     })
//! }
//! # add_rebuild_index(&Server::builder("s", "1").build()).unwrap();
//! ```

mod call;
mod link;
mod methods;
mod options;
mod protocol;
mod record;
mod redis_store;
mod store;

pub use options::{
    DEFAULT_LEASE, DEFAULT_NAMESPACE, RedisTaskStoreOptions, TaskOptions, TaskStoreOptions, TaskSupport,
};
pub use protocol::TASKS_EXTENSION;
pub use record::{TaskRecord, TaskStatus};
pub use redis_store::RedisTaskStore;
pub use store::{ControlSink, MemoryTaskStore, TaskControl, TaskStore};

pub(crate) use link::Tasks;
pub(crate) use protocol::{TaskMethod, check_listen, negotiated, required_capability};

#[cfg(test)]
mod tests;
