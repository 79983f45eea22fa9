//! The [`Server`] handle every transport holds, its [`ServerBuilder`] and options, and the
//! registration of tools, resources, templates and prompts at run time.

use super::middleware::{Hooks, Item, Middleware, RequestInfo, VisibilityFilter, VisibilityHook};
use super::options::{CacheDefaults, CacheHint, Capability, ServerOptions, ToolOptions};
use super::redis_bus::{BusOptions, RedisBus};
use super::registry::Registries;
use super::tasks::{
    MemoryTaskStore, RedisTaskStore, RedisTaskStoreOptions, TaskOptions, TaskStore, TaskStoreOptions, Tasks,
};
use super::{
    CompletionHandler, CompletionRef, LocalBus, NotificationBus, PromptHandler, ResourceHandler, ServerEvent, StateKey,
    TemplateOptions, ToolHandler, request_meta, seal,
};
use crate::error::Result;
use crate::legacy::LegacyOptions;
use crate::schema::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use std::sync::Arc;
use std::time::Duration;

/// Builds a [`Server`].
pub struct ServerBuilder {
    config: Config,
    bus: Option<Arc<dyn NotificationBus>>,
    /// The Redis of the bus the options named: where tasks are kept unless told otherwise.
    redis_bus: Option<BusOptions>,
    task_store: Option<Arc<dyn TaskStore>>,
}

pub(crate) struct Config {
    pub info: Implementation,
    pub instructions: Option<String>,
    pub cache: CacheDefaults,
    pub state_key: StateKey,
    /// The key before `state_key` while a fleet rotates it: opens states, never seals.
    pub previous_state_key: Option<StateKey>,
    pub state_ttl: Duration,
    pub page_size: usize,
    pub server_info_in_results: bool,
    pub capabilities: Capabilities,
    pub legacy: LegacyOptions,
    /// The longest any handler may run (None: no limit); see [`ServerBuilder::handler_timeout`].
    pub handler_timeout: Option<Duration>,
    /// See [`ServerBuilder::mask_error_details`].
    pub mask_error_details: bool,
    /// See [`ServerBuilder::tasks`].
    pub tasks: TaskOptions,
}

/// Which server capabilities are advertised even when their registry is empty.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Capabilities {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
    pub completions: bool,
    pub logging: bool,
}

impl ServerBuilder {
    /// Sets the human-readable title of the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.config.info.title = Some(title.into());
        self
    }

    /// Sets the instructions returned by `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.config.instructions = Some(text.into());
        self
    }

    /// Replaces the whole server identity (`serverInfo`).
    pub fn info(mut self, info: Implementation) -> Self {
        self.config.info = info;
        self
    }

    /// Sets the caching hints of every kind of cacheable result.
    pub fn cache_defaults(mut self, cache: CacheDefaults) -> Self {
        self.config.cache = cache;
        self
    }

    /// The key sealing MRTR `requestState`. Default: a random key per process; set one to let
    /// several instances accept each other's state.
    pub fn state_key(mut self, key: StateKey) -> Self {
        self.config.state_key = key;
        self
    }

    /// The key before [`ServerBuilder::state_key`] while a fleet rotates it: states it sealed
    /// are still accepted until they expire, new ones are sealed with the current key only.
    /// Rotate in two steps: every instance gets the new key with the old one as previous; once
    /// all run so (and one state TTL has passed), the previous key can go.
    pub fn previous_state_key(mut self, key: StateKey) -> Self {
        self.config.previous_state_key = Some(key);
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.config.state_ttl = ttl;
        self
    }

    /// Items per page of every list (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// Whether results carry `_meta["io.modelcontextprotocol/serverInfo"]` (default true).
    pub fn server_info_in_results(mut self, on: bool) -> Self {
        self.config.server_info_in_results = on;
        self
    }

    /// Advertises the tools capability even with no tool registered yet.
    pub fn enable_tools(mut self) -> Self {
        self.config.capabilities.tools = true;
        self
    }

    /// Advertises the resources capability even with no resource registered yet.
    pub fn enable_resources(mut self) -> Self {
        self.config.capabilities.resources = true;
        self
    }

    /// Advertises the prompts capability even with no prompt registered yet.
    pub fn enable_prompts(mut self) -> Self {
        self.config.capabilities.prompts = true;
        self
    }

    /// Advertises the (deprecated) logging capability: handlers log with
    /// [`RequestContext::log`](super::RequestContext::log).
    pub fn enable_logging(mut self) -> Self {
        self.config.capabilities.logging = true;
        self
    }

    /// How legacy (2025-11-25) clients are served; [`LegacyOptions::disabled`] makes the
    /// server modern-only.
    pub fn legacy(mut self, options: LegacyOptions) -> Self {
        self.config.legacy = options;
        self
    }

    /// The longest a handler (tool, resource, prompt or completion) may run per call; default:
    /// no limit (a call then ends when it returns, the client cancels or goes away, or the
    /// server shuts down). When it is reached the handler's future is dropped (a host
    /// binding's task is cancelled, its thread abandoned), the request's cancellation token is
    /// cancelled, and the call fails with an error naming the handler and the limit: an
    /// `isError` result for `tools/call`, an internal error (-32603) otherwise. A tool's own
    /// [`ToolOptions::timeout`] overrides it. In a legacy session the limit applies to each run
    /// of the handler, asks to the client included.
    pub fn handler_timeout(mut self, limit: Duration) -> Self {
        self.config.handler_timeout = Some(limit);
        self
    }

    /// Whether the message of a handler's unexpected exception ([`Error::unexpected`]) is
    /// replaced by a generic text naming the handler (`Internal error in tool "name"`) before
    /// it reaches the client; default false: the message is sent, for a tool as an `isError`
    /// result the model reads (as the spec asks, so that it can correct itself). Errors a
    /// handler raises on purpose (a tool error, a protocol error such as invalid params) are
    /// never masked. Turn it on when exception messages may hold what clients must not see.
    ///
    /// [`Error::unexpected`]: crate::Error::unexpected
    pub fn mask_error_details(mut self, on: bool) -> Self {
        self.config.mask_error_details = on;
        self
    }

    /// How tasks of the Tasks extension are kept (TTL, polling interval, limits of the
    /// default store).
    pub fn tasks(mut self, options: TaskOptions) -> Self {
        self.config.tasks = options;
        self
    }

    /// Keeps task state in another store (default: a [`MemoryTaskStore`] bounded by
    /// [`ServerBuilder::tasks`]'s limits).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Uses another notification bus (default: in-process).
    pub fn bus(mut self, bus: Arc<dyn NotificationBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Builds the server.
    ///
    /// On Linux with glibc, the first server a process builds raises the allocator's trim and
    /// mmap thresholds (to 16 MiB and 4 MiB), so that calls with large bodies do not give back
    /// and fault in the same pages every time (a 100 KB call costs a third of the CPU). An
    /// application that sets `glibc.malloc.trim_threshold` or `glibc.malloc.mmap_threshold` in
    /// `GLIBC_TUNABLES` (or `MALLOC_TRIM_THRESHOLD_`/`MALLOC_MMAP_THRESHOLD_`) keeps its own.
    pub fn build(self) -> Server {
        crate::server::memory::tune_allocator();
        let bus = self.bus.unwrap_or_else(|| Arc::new(LocalBus::new()));
        let sealer =
            seal::Sealer::new(&self.config.state_key, self.config.previous_state_key.as_ref(), self.config.state_ttl);
        let info_json = serde_json::to_value(&self.config.info).unwrap_or_default();
        // A fleet shares its tasks as it shares its changes, unless told otherwise.
        let on_bus = self.redis_bus.as_ref().map(|bus| TaskStoreOptions::Redis(RedisTaskStoreOptions::on_bus(bus)));
        let store = self.task_store.unwrap_or_else(|| match self.config.tasks.store.as_ref().or(on_bus.as_ref()) {
            Some(TaskStoreOptions::Redis(o)) => RedisTaskStore::new(o.clone(), &self.config.tasks),
            Some(TaskStoreOptions::Memory) | None => Arc::new(MemoryTaskStore::new(&self.config.tasks)),
        });
        let tasks = Tasks::new(self.config.tasks.clone(), store, bus.clone());
        Server {
            inner: Arc::new(Inner {
                config: self.config,
                info_json,
                sealer,
                bus,
                registries: Registries::default(),
                hooks: Hooks::default(),
                tasks,
            }),
        }
    }
}

/// An MCP server. Cheap to clone: clones share registries and configuration.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub config: Config,
    /// `serverInfo` serialized once, for every result's `_meta`.
    pub info_json: serde_json::Value,
    pub sealer: seal::Sealer,
    pub bus: Arc<dyn NotificationBus>,
    pub registries: Registries,
    /// The middleware chain and the visibility predicate.
    pub hooks: Hooks,
    /// The tasks of the Tasks extension.
    pub tasks: Arc<Tasks>,
}

impl Server {
    /// Starts building a server with its name and version (`serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            config: Config {
                info: Implementation::new(name, version),
                instructions: None,
                cache: CacheDefaults::default(),
                state_key: StateKey::random(),
                previous_state_key: None,
                state_ttl: Duration::from_secs(600),
                page_size: 100,
                server_info_in_results: true,
                capabilities: Capabilities::default(),
                legacy: LegacyOptions::default(),
                handler_timeout: None,
                mask_error_details: false,
                tasks: TaskOptions::default(),
            },
            bus: None,
            redis_bus: None,
            task_store: None,
        }
    }

    /// A handle that does not keep the server alive, for handlers to capture.
    pub fn downgrade(&self) -> WeakServer {
        WeakServer { inner: Arc::downgrade(&self.inner) }
    }

    /// Appends a middleware to the chain every request of both eras goes through (see
    /// [`middleware`](super::middleware)): the first one registered runs outermost. Takes
    /// effect for requests that arrive from then on.
    pub fn use_middleware(&self, middleware: impl Middleware + 'static) {
        self.inner.hooks.push(Arc::new(middleware));
    }

    /// Sets the visibility predicate: whether a tool, resource, template or prompt exists
    /// for a request's caller (see [`middleware`](super::middleware)). Hidden items are left
    /// out of the lists, and a call, read or get of one fails exactly as for an unknown one.
    /// Replaces the predicate set before.
    ///
    /// ```
    /// use mcpaxle::server::{Item, ItemKind, RequestInfo, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0").build();
    /// // Tools named admin_* exist for the principal "admin" only.
    /// server.set_visibility(|item: &Item<'_>, who: &RequestInfo| {
    ///     item.kind != ItemKind::Tool || !item.name.starts_with("admin_") || who.principal() == Some("admin")
    /// });
    /// ```
    pub fn set_visibility(&self, predicate: impl Fn(&Item<'_>, &RequestInfo) -> bool + Send + Sync + 'static) {
        self.inner.hooks.set_visibility(Some(VisibilityHook::Predicate(Arc::new(predicate))));
    }

    /// Sets a visibility filter that answers later (a binding's host callback; see
    /// [`VisibilityFilter`]): the same effect as [`Server::set_visibility`], asked once per
    /// request for every item it lists or names. Replaces the predicate or filter set before.
    pub fn set_visibility_filter(&self, filter: impl VisibilityFilter + 'static) {
        self.inner.hooks.set_visibility(Some(VisibilityHook::Filter(Arc::new(filter))));
    }

    /// Removes the visibility predicate or filter: every item is visible to everyone again.
    pub fn clear_visibility(&self) {
        self.inner.hooks.set_visibility(None);
    }

    /// Adds or replaces a tool; subscribers get `notifications/tools/list_changed`.
    ///
    /// Fails when the tool's `inputSchema` cannot be used (an unsupported `$schema` dialect,
    /// an external `$ref`, a schema over the size bounds) or its `x-mcp-header` annotations
    /// are invalid.
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<()> {
        self.add_tool_with(tool, ToolOptions::default(), handler)
    }

    /// Adds or replaces a tool with options of its own (see [`ToolOptions`]); otherwise as
    /// [`Server::add_tool`].
    ///
    /// ```
    /// use mcpaxle::server::{Server, ToolOptions};
    /// use mcpaxle::schema::{CallToolResult, Tool};
    /// use std::time::Duration;
    ///
    /// let server = Server::builder("s", "1").build();
    /// let tool = Tool::new("slow", "Takes its time", serde_json::json!({ "type": "object" }));
    /// let options = ToolOptions { timeout: Some(Duration::from_secs(30)), ..ToolOptions::default() };
    /// server.add_tool_with(tool, options, |_args, _ctx| async { Ok(CallToolResult::text("done")) }).unwrap();
    /// ```
    pub fn add_tool_with(&self, tool: Tool, options: ToolOptions, handler: impl ToolHandler) -> Result<()> {
        self.inner.registries.add_tool(tool, options, Arc::new(handler))?;
        self.inner.bus.publish(ServerEvent::ToolsListChanged);
        Ok(())
    }

    /// Removes a tool; returns whether it existed (subscribers are notified when it did).
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.registries.remove_tool(name);
        if removed {
            self.inner.bus.publish(ServerEvent::ToolsListChanged);
        }
        removed
    }

    /// Adds or replaces a direct resource; subscribers get `notifications/resources/list_changed`.
    /// `cache` overrides the default caching hint of `resources/read` for it.
    pub fn add_resource(
        &self,
        resource: Resource,
        cache: Option<CacheHint>,
        handler: impl ResourceHandler,
    ) -> Result<()> {
        self.inner.registries.add_resource(resource, cache, Arc::new(handler))?;
        self.inner.bus.publish(ServerEvent::ResourcesListChanged);
        Ok(())
    }

    /// Removes a direct resource by URI; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.inner.registries.remove_resource(uri);
        if removed {
            self.inner.bus.publish(ServerEvent::ResourcesListChanged);
        }
        removed
    }

    /// Adds or replaces a resource template (RFC 6570); reads of matching URIs go to its
    /// handler with the extracted variables. Variables that could climb out of a directory
    /// (`..` segments, encoded slashes, backslashes, absolute paths, NUL) are refused with
    /// "Resource not found" before the handler runs; see [`TemplateOptions`] to opt out.
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        cache: Option<CacheHint>,
        handler: impl ResourceHandler,
    ) -> Result<()> {
        self.add_resource_template_with(template, cache, TemplateOptions::default(), handler)
    }

    /// [`Server::add_resource_template`] with [`TemplateOptions`], e.g. to hand the handler
    /// values that the path traversal check would refuse:
    ///
    /// ```
    /// # use mcpaxle::{Server, schema::{ResourceTemplate, ReadResourceResult}, server::{RequestContext, ResourceRequest, TemplateOptions}};
    /// # let server = Server::builder("s", "1").build();
    /// let template: ResourceTemplate = serde_json::from_value(serde_json::json!({ "uriTemplate": "calc://{expr}", "name": "calc" })).unwrap();
    /// let options = TemplateOptions { allow_path_traversal: true };
    /// server.add_resource_template_with(template, None, options, |r: ResourceRequest, _c: RequestContext| async move {
    ///     Ok(ReadResourceResult::default()) // `expr` may be "1/2": this handler never opens a file
    /// }).unwrap();
    /// ```
    pub fn add_resource_template_with(
        &self,
        template: ResourceTemplate,
        cache: Option<CacheHint>,
        options: TemplateOptions,
        handler: impl ResourceHandler,
    ) -> Result<()> {
        self.inner.registries.add_template(template, cache, options, Arc::new(handler))?;
        self.inner.bus.publish(ServerEvent::ResourcesListChanged);
        Ok(())
    }

    /// Removes a resource template by its URI template; returns whether it existed.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        let removed = self.inner.registries.remove_template(uri_template);
        if removed {
            self.inner.bus.publish(ServerEvent::ResourcesListChanged);
        }
        removed
    }

    /// Adds or replaces a prompt; subscribers get `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt, handler: impl PromptHandler) -> Result<()> {
        self.inner.registries.add_prompt(prompt, Arc::new(handler))?;
        self.inner.bus.publish(ServerEvent::PromptsListChanged);
        Ok(())
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.registries.remove_prompt(name);
        if removed {
            self.inner.bus.publish(ServerEvent::PromptsListChanged);
        }
        removed
    }

    /// Sets the completion handler for a prompt's or a resource template's arguments.
    pub fn set_completion(&self, reference: CompletionRef, handler: impl CompletionHandler) {
        self.inner.registries.set_completion(reference, Arc::new(handler));
    }

    /// Removes a completion handler; returns whether it existed.
    pub fn remove_completion(&self, reference: &CompletionRef) -> bool {
        self.inner.registries.remove_completion(reference)
    }

    /// Announces that a resource's content changed: `notifications/resources/updated` to every
    /// listen stream subscribed to that URI.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner.bus.publish(ServerEvent::ResourceUpdated { uri: uri.to_owned() });
    }

    /// Publishes any server event to subscribers.
    pub fn publish(&self, event: ServerEvent) {
        self.inner.bus.publish(event);
    }

    /// Starts the notification bus's background work (a fleet bus's connections), on the
    /// current tokio runtime; the transports call it as they serve. Idempotent.
    pub fn start_bus(&self) {
        self.inner.bus.start();
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.config.info
    }

    /// The instructions `server/discover` and `initialize` return.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.config.instructions.as_deref()
    }

    /// How legacy clients are served.
    pub fn legacy_options(&self) -> &LegacyOptions {
        &self.inner.config.legacy
    }

    /// The protocol versions this server accepts.
    pub fn supported_versions(&self) -> &'static [&'static str] {
        &[request_meta::PROTOCOL_VERSION]
    }
}

/// A handle to a [`Server`] that does not keep it alive: capture this in handlers that
/// change the server (add or remove tools, announce updates), since a handler holding a
/// [`Server`] clone would keep the server and its registries alive forever (a cycle).
#[derive(Clone)]
pub struct WeakServer {
    inner: std::sync::Weak<Inner>,
}

impl WeakServer {
    /// The server, if it still exists.
    pub fn upgrade(&self) -> Option<Server> {
        self.inner.upgrade().map(|inner| Server { inner })
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.inner.config.info.name).finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Applies every option of `options` (those left at their defaults included).
    pub fn options(mut self, options: ServerOptions) -> Self {
        if let Some(t) = options.title {
            self = self.title(t);
        }
        if let Some(i) = options.instructions {
            self = self.instructions(i);
        }
        for cap in options.enable {
            self = match cap {
                Capability::Tools => self.enable_tools(),
                Capability::Resources => self.enable_resources(),
                Capability::Prompts => self.enable_prompts(),
                Capability::Logging => self.enable_logging(),
            };
        }
        if let Some(s) = options.state_secret {
            self = self.state_key(StateKey::derive(s.as_bytes()));
        }
        if let Some(s) = options.previous_state_secret {
            self = self.previous_state_key(StateKey::derive(s.as_bytes()));
        }
        if let Some(bus) = options.bus {
            self.redis_bus = Some(bus.clone());
            self = self.bus(RedisBus::new(bus));
        }
        self.config.handler_timeout = options.handler_timeout;
        self.config.mask_error_details = options.mask_error_details;
        self.config.tasks = options.tasks;
        self.page_size(options.page_size)
            .server_info_in_results(options.server_info_in_results)
            .state_ttl(options.state_ttl)
            .cache_defaults(options.cache)
            .legacy(options.legacy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_fleet_keeps_its_tasks_in_the_redis_of_its_bus_unless_told_otherwise() {
        use crate::server::tasks::TaskRecord;
        // Port 1 on loopback: nothing listens, so a task kept in that Redis cannot be created.
        let created = |o: serde_json::Value| async move {
            let o: ServerOptions = crate::options::from_json("server options", o).unwrap();
            // Tasks set after the options keep the fleet's store.
            let server = Server::builder("n", "1").options(o).tasks(TaskOptions::default()).build();
            let record = TaskRecord::new(None, Duration::from_secs(60), Duration::from_secs(1));
            server.inner.tasks.store.create(record).await
        };
        let bus = serde_json::json!("redis://127.0.0.1:1/0");
        let e = created(serde_json::json!({ "bus": bus })).await.unwrap_err();
        assert!(e.message().contains("the task store (Redis at redis://127.0.0.1:1/0) failed"), "{e}");
        created(serde_json::json!({})).await.unwrap();
        let memory = serde_json::json!({ "bus": bus, "tasks": { "store": "memory" } });
        let o: ServerOptions = crate::options::from_json("server options", memory).unwrap();
        let server = Server::builder("n", "1").options(o).build();
        let record = TaskRecord::new(None, Duration::from_secs(60), Duration::from_secs(1));
        server.inner.tasks.store.create(record).await.unwrap();
    }

    #[test]
    fn the_builder_takes_the_options() {
        let o: ServerOptions = crate::options::from_json(
            "server options",
            serde_json::json!({ "title": "T", "pageSize": 0, "handlerTimeoutMs": 9, "legacy": false }),
        )
        .unwrap();
        let server = Server::builder("n", "1").options(o).build();
        let c = &server.inner.config;
        assert_eq!((c.info.title.as_deref(), c.page_size), (Some("T"), 1), "page size is at least 1");
        assert_eq!(c.handler_timeout, Some(Duration::from_millis(9)));
        assert!(!c.legacy.enabled);
    }
}
