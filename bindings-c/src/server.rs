//! `mcpaxle_server_*`: a server, its options, and the registration of C handlers.

use crate::calls::{self, Kind, Payload, Target, Thread, mcpaxle_context, mcpaxle_reply};
use crate::ffi::{
    FfiError, FfiResult, SendPtr, arg_json, arg_str, ffi_boundary, from_json, mcpaxle_result, opt_json, out_ptr,
    set_opt_out,
};
use crate::owner::Owner;
use mcpaxle_core::schema::{Prompt, Resource, ResourceTemplate, Tool};
use mcpaxle_core::server::{
    BoxFuture, CacheHint, CompletionRef, JsonHandler, JsonInput, Returned, Server, ServerEvent, ServerOptions,
    TemplateOptions, ToolOptions,
};
use mcpaxle_core::transport::auth::BearerAuth;
use mcpaxle_core::{Error, RequestContext, Result};
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A server handler: called once per request (and once per MRTR round) for the tool, resource,
/// resource template, prompt or completion it was registered for.
///
/// - `user_data`: the pointer given at registration, shared by every call (calls run
///   concurrently on several threads).
/// - `request_json`: a tool's `arguments` object (already validated against its
///   `inputSchema`); `{"uri": "...", "variables": {...}}` for a resource or template (the
///   template's variables); a prompt's `arguments` object (string values); for a completion
///   `{"argument": "<name>", "value": "<typed so far>", "context": {...}}` (`context`: the
///   arguments already resolved), as in every binding. Borrowed for the duration of the
///   callback.
/// - `ctx`: the request's context (MRTR asks, progress, logs, cancellation), valid until the
///   call is completed.
/// - `reply`: the call's reply handle; finish the call through it exactly once
///   (`mcpaxle_reply_ok`, `_error`, ...), now or later, from any thread.
///
/// Thread: a thread of the library's handler pool, never an async worker, so blocking (I/O,
/// sleeping, waiting for another thread) is allowed; the request waits for the reply. A server
/// set with `mcpaxle_server_set_inline_handlers` calls it on the runtime's worker instead.
pub type mcpaxle_handler = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request_json: *const c_char,
        ctx: *mut mcpaxle_context,
        reply: *mut mcpaxle_reply,
    ),
>;

type HandlerFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcpaxle_context, *mut mcpaxle_reply);

/// An MCP server: registries of tools, resources, templates, prompts and completions that can
/// change at any time, served over stdio or Streamable HTTP. Created by `mcpaxle_server_new`,
/// freed by `mcpaxle_server_free`.
pub struct mcpaxle_server {
    pub(crate) server: Server,
    pub(crate) owner: Arc<Owner>,
    /// Cancelled by `mcpaxle_server_stop` (then replaced) and by `mcpaxle_server_free`: every
    /// transport serving this server watches the generation current when it started.
    pub(crate) stop: Mutex<CancellationToken>,
    /// The bearer protection of the HTTP transports started from now on
    /// (`mcpaxle_server_set_bearer_auth`).
    pub(crate) auth: Mutex<Option<BearerAuth>>,
    /// Whether the handlers are called on the runtime's workers
    /// (`mcpaxle_server_set_inline_handlers`), shared with every handler registered.
    pub(crate) inline: Arc<AtomicBool>,
}

impl mcpaxle_server {
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The bearer protection of an HTTP transport starting now.
    pub(crate) fn bearer_auth(&self) -> Option<BearerAuth> {
        self.auth.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Borrows a server handle.
///
/// # Safety
/// `p` is NULL or a live handle from `mcpaxle_server_new`.
pub(crate) unsafe fn server_ref<'a>(p: *const mcpaxle_server) -> FfiResult<&'a mcpaxle_server> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| FfiError::null("server"))
}

#[derive(Clone)]
struct CHandler {
    owner: Arc<Owner>,
    kind: Kind,
    target: Target<HandlerFn>,
    inline: Arc<AtomicBool>,
}

/// One C function for every kind of handler, through the core's [`JsonInput`]: the same input
/// shapes as every binding's.
impl JsonHandler for CHandler {
    /// One run of the C function with `request` as JSON text (serialized here, so a tool's
    /// arguments are read where the server keeps them, never copied).
    fn run(&self, request: &Value, ctx: RequestContext) -> BoxFuture<'static, Result<Returned>> {
        let me = self.clone();
        let request = request.to_string();
        Box::pin(async move {
            let Target { func, user_data } = me.target;
            let thread = if me.inline.load(Ordering::Relaxed) { Thread::Inline } else { Thread::BlockingPool };
            let completed = calls::invoke_on(thread, &me.owner, me.kind, Some(ctx), request, move |id, json| {
                // SAFETY: the C function pointer and user_data were given together at
                // registration; the handle ids are opaque to C.
                unsafe { func(user_data.get(), json, id as *mut mcpaxle_context, id as *mut mcpaxle_reply) }
            });
            match completed.await? {
                Payload::Returned(r) => Ok(r),
                _ => Err(Error::internal("Internal error: the handler completed with a result of another kind")),
            }
        })
    }
}

fn handler(
    server: &mcpaxle_server,
    kind: Kind,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> FfiResult<JsonInput<CHandler>> {
    let func = callback.ok_or_else(|| FfiError::null("callback"))?;
    Ok(JsonInput(CHandler {
        owner: server.owner.clone(),
        kind,
        target: Target { func, user_data: SendPtr(user_data) },
        inline: server.inline.clone(),
    }))
}

fn build(name: &str, version: &str, options: ServerOptions) -> Server {
    Server::builder(name, version).options(options).build()
}

/// Creates a server named `name` at `version` (its `serverInfo`).
///
/// `options_json` may be NULL, or an object with any of: `"title"`, `"instructions"`,
/// `"pageSize"` (items per list page, default 100), `"serverInfoInResults"` (default true),
/// `"enable"` (capabilities advertised before anything is registered: any of `"tools"`,
/// `"resources"`, `"prompts"`, `"logging"`), `"stateSecret"` (a secret from which the key
/// sealing MRTR `requestState` is derived, to share it across instances; default: a random key
/// per process), `"stateTtlMs"` (default 600000), `"cache"` (per kind of result - `discover`,
/// `tools`, `prompts`, `resources`, `templates`, `read` - a `{"ttlMs": N, "cacheScope":
/// "public"|"private"}` hint, `cacheScope` default "private"; kinds left out keep ttlMs 0,
/// public for the lists, private for `read`) and `"legacy"` (how 2025-11-25 clients are served:
/// `false` for modern only, or `{"enabled": bool, "maxSessions": N, "maxSessionsPerPrincipal":
/// N, "maxSessionsPerPeer": N, "idleTimeoutMs": N, "uninitializedTimeoutMs": N,
/// "requestTimeoutMs": N}`; defaults: true,
/// 10000 sessions, 100 per principal, 1000 per peer address without a principal, 30 min idle,
/// 30 s for a session that never went past `initialize`, 5 min for the client to answer a
/// request; a full table or quota ends its least recently used idle session to make room) and
/// `"handlerTimeoutMs"` (the longest one call of any handler may run, default: no limit; the
/// call then fails with an error naming the handler and the limit, an `isError` result for a
/// tool, and a reply arriving later returns `MCPAXLE_ERR_ALREADY_REPLIED`) and
/// `"maskErrorDetails"` (default false: whether a handler's `MCPAXLE_ERR_INTERNAL` reply, its
/// unexpected failure, shows the client `Internal error in tool "name"` (and the like) instead
/// of its message; `MCPAXLE_ERR_TOOL` and the protocol kinds are sent as given) and `"bus"`
/// (the Redis notification bus of a fleet: `"redis://host:6379/0"` or `{"url": ...,
/// "channel": ...}`, default channel `mcpaxle:events`; changes made on any instance reach the
/// listen streams of all; default: this process only). Durations are
/// whole milliseconds (a timeout at least 1). The core reads the object (its `ServerOptions`:
/// the same names as Node's options, snake_case in Python); unknown members are an error naming
/// the valid ones (`MCPAXLE_ERR_USAGE`).
///
/// Ownership: the strings are borrowed. `*out` is the caller's: free it with
/// `mcpaxle_server_free`. Thread: any; the server is thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_new(
    name: *const c_char,
    version: *const c_char,
    options_json: *const c_char,
    out: *mut *mut mcpaxle_server,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: pointers per the documented contract.
        let (out, name, version, options) = unsafe {
            (
                out_ptr(out, "out")?,
                arg_str(name, "name")?,
                arg_str(version, "version")?,
                opt_json(options_json, "options_json")?,
            )
        };
        let options: ServerOptions = match options {
            Some(v) => from_json(v, "options_json")?,
            None => ServerOptions::default(),
        }
        .with_environment()?;
        crate::runtime::handle()?;
        let server = build(name, version, options);
        let s = mcpaxle_server {
            server,
            owner: Arc::new(Owner::new()),
            stop: Mutex::new(CancellationToken::new()),
            auth: Mutex::new(None),
            inline: Arc::new(AtomicBool::new(false)),
        };
        *out = Box::into_raw(Box::new(s));
        Ok(())
    })
}

/// Frees a server. NULL is a no-op.
///
/// Every transport serving it stops (blocking `mcpaxle_server_serve_*` calls return, background
/// HTTP servers stop accepting; their handles must still be freed), pending calls are
/// abandoned (their requests fail; completing them returns MCPAXLE_ERR_ALREADY_REPLIED), and
/// **no handler callback runs after this returns**: it waits for the callbacks running on other
/// threads to return (a callback may call it for its own server without deadlock). After this
/// returns, every `user_data` given to this server may be freed.
///
/// Ownership: takes the handle; do not use it again. Thread: any; do not call it while
/// another thread is inside a function taking this handle, except a blocking serve call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_free(server: *mut mcpaxle_server) {
    ffi_boundary!((), {
        if server.is_null() {
            return;
        }
        // SAFETY: a handle from mcpaxle_server_new, given back once.
        let s = unsafe { Box::from_raw(server) };
        s.owner.deactivate();
        s.stop_token().cancel();
        calls::abandon_owner(s.owner.id());
        s.owner.close();
        drop(s);
    })
}

/// Calls this server's handlers (tools, resources, templates, prompts, completions) on the
/// runtime's worker thread serving their request (`inline` true), or on a thread of the
/// library's handler pool (false, the default). Applies to the calls that start from now on.
///
/// Inline, a call costs no thread switch: for a trivial tool about half the server's CPU time
/// per call (bench/README.md, rows `c-http` and `c-http-inline`). But a callback then holds a
/// worker thread of the runtime until it returns, and the runtime has one per core: it must
/// not block (no I/O, no sleeping, no waiting for another thread or for a lock held long). A
/// callback with slow work hands it to a thread of its own and completes its reply handle from
/// there later. The functions that wait for the runtime cannot be called from an inline
/// callback and return `MCPAXLE_ERR_USAGE`: the blocking client calls, and an MRTR ask of a
/// legacy session (`mcpaxle_context_elicit`, `_sample`, `_list_roots`) that waits for the
/// client's answer. Middleware, visibility predicates and token verifiers always run on the
/// handler pool.
///
/// Thread: any, at any time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_set_inline_handlers(
    server: *mut mcpaxle_server,
    inline: bool,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let s = unsafe { server_ref(server)? };
        s.inline.store(inline, Ordering::Relaxed);
        Ok(())
    })
}

/// Adds (or replaces, by name) a tool: `tool_json` is a `Tool` definition (`name`,
/// `description`, `inputSchema`, ...). Open `subscriptions/listen` streams get
/// `notifications/tools/list_changed`. Fails with `MCPAXLE_ERR_USAGE` for a definition that is
/// not a valid Tool, an unusable `inputSchema` or `x-mcp-header` annotation.
///
/// Ownership: `tool_json` is borrowed. `user_data` is the caller's and must stay valid until
/// `mcpaxle_server_free` returns (a call started before a removal may still be running).
/// Thread: any, at any time, also from inside a handler.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_add_tool(
    server: *mut mcpaxle_server,
    tool_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, def) = unsafe { (server_ref(server)?, arg_json(tool_json, "tool_json")?) };
        let tool: Tool = from_json(def, "tool_json")?;
        let h = handler(s, Kind::Tool, callback, user_data)?;
        s.server.add_tool(tool, h)?;
        Ok(())
    })
}

/// Adds (or replaces, by name) a tool with options of its own: as `mcpaxle_server_add_tool`,
/// and `options_json` (may be NULL) is an object with `"timeoutMs"` (the longest one call may
/// run, overriding the server's `handlerTimeoutMs`; the call then ends with an `isError` result
/// naming the tool and the limit), `"taskSupport"` (`"forbidden"`, the default, `"optional"`
/// or `"required"`: whether a call may run as a task of the Tasks extension, see
/// `mcpaxle_context_start_task`) and `"deferTask"` (true: the call becomes a task only when
/// the handler calls `mcpaxle_context_start_task`). Unknown members are an error
/// (`MCPAXLE_ERR_USAGE`).
///
/// Ownership, lifetime of `user_data` and thread: as `mcpaxle_server_add_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_add_tool_with_options(
    server: *mut mcpaxle_server,
    tool_json: *const c_char,
    options_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, def, options) = unsafe {
            (server_ref(server)?, arg_json(tool_json, "tool_json")?, opt_json(options_json, "options_json")?)
        };
        let tool: Tool = from_json(def, "tool_json")?;
        let options: ToolOptions = options.map(|v| from_json(v, "options_json")).transpose()?.unwrap_or_default();
        let h = handler(s, Kind::Tool, callback, user_data)?;
        s.server.add_tool_with(tool, options, h)?;
        Ok(())
    })
}

/// Removes a tool by name; `*removed` (may be NULL) tells whether it existed. Calls already
/// running finish. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_remove_tool(
    server: *mut mcpaxle_server,
    name: *const c_char,
    removed: *mut bool,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, name) = unsafe { (server_ref(server)?, arg_str(name, "name")?) };
        let r = s.server.remove_tool(name);
        // SAFETY: NULL or writable, per the contract.
        unsafe { set_opt_out(removed, r) };
        Ok(())
    })
}

fn hint(cache_json: Option<Value>) -> FfiResult<Option<CacheHint>> {
    cache_json.map(|v| from_json::<CacheHint>(v, "cache_json")).transpose()
}

/// Adds (or replaces, by URI) a direct resource: `resource_json` is a `Resource` (`uri`,
/// `name`, `mimeType`, ...). `cache_json` (may be NULL) is `{"ttlMs": N, "cacheScope":
/// "public"|"private"}` (`cacheScope` default "private"), the caching hint of its
/// `resources/read` results.
///
/// Ownership, lifetime of `user_data` and thread: as `mcpaxle_server_add_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_add_resource(
    server: *mut mcpaxle_server,
    resource_json: *const c_char,
    cache_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, def, cache) = unsafe {
            (server_ref(server)?, arg_json(resource_json, "resource_json")?, opt_json(cache_json, "cache_json")?)
        };
        let resource: Resource = from_json(def, "resource_json")?;
        let h = handler(s, Kind::Resource, callback, user_data)?;
        s.server.add_resource(resource, hint(cache)?, h)?;
        Ok(())
    })
}

/// Removes a direct resource by URI; `*removed` (may be NULL) tells whether it existed.
/// Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_remove_resource(
    server: *mut mcpaxle_server,
    uri: *const c_char,
    removed: *mut bool,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, uri) = unsafe { (server_ref(server)?, arg_str(uri, "uri")?) };
        let r = s.server.remove_resource(uri);
        // SAFETY: NULL or writable, per the contract.
        unsafe { set_opt_out(removed, r) };
        Ok(())
    })
}

/// Adds (or replaces) a resource template: `template_json` is a `ResourceTemplate`
/// (`uriTemplate` per RFC 6570, `name`, ...). Reads of matching URIs call `callback` with the
/// extracted `variables`; variables that could climb out of a directory are refused first (see
/// `mcpaxle_server_add_resource_template_with`). `cache_json` as in
/// `mcpaxle_server_add_resource`.
///
/// Ownership, lifetime of `user_data` and thread: as `mcpaxle_server_add_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_add_resource_template(
    server: *mut mcpaxle_server,
    template_json: *const c_char,
    cache_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, def, cache) = unsafe {
            (server_ref(server)?, arg_json(template_json, "template_json")?, opt_json(cache_json, "cache_json")?)
        };
        let template: ResourceTemplate = from_json(def, "template_json")?;
        let h = handler(s, Kind::Resource, callback, user_data)?;
        s.server.add_resource_template(template, hint(cache)?, h)?;
        Ok(())
    })
}

/// `mcpaxle_server_add_resource_template` with options: `options_json` (may be NULL for the
/// defaults) is `{"allowPathTraversal": true}` to hand `callback` the variables exactly as
/// matched. By default a read whose variables hold a `..` segment, an encoded slash (`%2F`), a
/// backslash, an absolute path or NUL is refused with "Resource not found" before `callback`
/// runs; opt out only for a handler that never uses a variable as a file path.
///
/// Ownership, lifetime of `user_data` and thread: as `mcpaxle_server_add_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_add_resource_template_with(
    server: *mut mcpaxle_server,
    template_json: *const c_char,
    cache_json: *const c_char,
    options_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, def, cache, options) = unsafe {
            (
                server_ref(server)?,
                arg_json(template_json, "template_json")?,
                opt_json(cache_json, "cache_json")?,
                opt_json(options_json, "options_json")?,
            )
        };
        let template: ResourceTemplate = from_json(def, "template_json")?;
        let options: TemplateOptions = match options {
            Some(v) => from_json(v, "options_json")?,
            None => TemplateOptions::default(),
        };
        let h = handler(s, Kind::Resource, callback, user_data)?;
        s.server.add_resource_template_with(template, hint(cache)?, options, h)?;
        Ok(())
    })
}

/// Removes a resource template by its URI template; `*removed` (may be NULL) tells whether it
/// existed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_remove_resource_template(
    server: *mut mcpaxle_server,
    uri_template: *const c_char,
    removed: *mut bool,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, t) = unsafe { (server_ref(server)?, arg_str(uri_template, "uri_template")?) };
        let r = s.server.remove_resource_template(t);
        // SAFETY: NULL or writable, per the contract.
        unsafe { set_opt_out(removed, r) };
        Ok(())
    })
}

/// Adds (or replaces, by name) a prompt: `prompt_json` is a `Prompt` (`name`, `description`,
/// `arguments`). Required arguments are checked before the callback runs.
///
/// Ownership, lifetime of `user_data` and thread: as `mcpaxle_server_add_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_add_prompt(
    server: *mut mcpaxle_server,
    prompt_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, def) = unsafe { (server_ref(server)?, arg_json(prompt_json, "prompt_json")?) };
        let prompt: Prompt = from_json(def, "prompt_json")?;
        let h = handler(s, Kind::Prompt, callback, user_data)?;
        s.server.add_prompt(prompt, h)?;
        Ok(())
    })
}

/// Removes a prompt by name; `*removed` (may be NULL) tells whether it existed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_remove_prompt(
    server: *mut mcpaxle_server,
    name: *const c_char,
    removed: *mut bool,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, name) = unsafe { (server_ref(server)?, arg_str(name, "name")?) };
        let r = s.server.remove_prompt(name);
        // SAFETY: NULL or writable, per the contract.
        unsafe { set_opt_out(removed, r) };
        Ok(())
    })
}

fn completion_ref(v: Value) -> FfiResult<CompletionRef> {
    let bad = || {
        FfiError::usage(
            "ref_json must be {\"type\": \"ref/prompt\", \"name\": ...} or {\"type\": \"ref/resource\", \"uri\": ...}",
        )
    };
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    match v.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => field("name").map(CompletionRef::Prompt).ok_or_else(bad),
        Some("ref/resource") => field("uri").map(CompletionRef::ResourceTemplate).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Sets the reply handler (`completion/complete`) of a prompt's arguments or a resource
/// template's variables. `ref_json` is `{"type": "ref/prompt", "name": "..."}` or
/// `{"type": "ref/resource", "uri": "<uri template>"}`. The callback completes with a
/// `CompleteResult` (`{"completion": {"values": [...]}}`).
///
/// Ownership, lifetime of `user_data` and thread: as `mcpaxle_server_add_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_set_completion(
    server: *mut mcpaxle_server,
    ref_json: *const c_char,
    callback: mcpaxle_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, r) = unsafe { (server_ref(server)?, arg_json(ref_json, "ref_json")?) };
        let reference = completion_ref(r)?;
        let h = handler(s, Kind::Completion, callback, user_data)?;
        s.server.set_completion(reference, h);
        Ok(())
    })
}

/// Removes a reply handler (`ref_json` as in `mcpaxle_server_set_completion`);
/// `*removed` (may be NULL) tells whether it existed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_remove_completion(
    server: *mut mcpaxle_server,
    ref_json: *const c_char,
    removed: *mut bool,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, r) = unsafe { (server_ref(server)?, arg_json(ref_json, "ref_json")?) };
        let reference = completion_ref(r)?;
        let r = s.server.remove_completion(&reference);
        // SAFETY: NULL or writable, per the contract.
        unsafe { set_opt_out(removed, r) };
        Ok(())
    })
}

/// Announces that a resource's content changed: `notifications/resources/updated` to every
/// listen stream (and legacy session) subscribed to `uri`.
///
/// Ownership: `uri` is borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_notify_resource_updated(
    server: *mut mcpaxle_server,
    uri: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, uri) = unsafe { (server_ref(server)?, arg_str(uri, "uri")?) };
        s.server.notify_resource_updated(uri);
        Ok(())
    })
}

/// Announces that a list changed: `notifications/<list>/list_changed` to every listen stream
/// (and legacy session) that asked for it. `list` is `"tools"`, `"prompts"` or `"resources"`;
/// another name fails with `MCPAXLE_ERR_USAGE`. Adding and removing announce themselves; call
/// this when a list changes behind the server's back, e.g. the resources a template serves.
///
/// Ownership: `list` is borrowed. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_notify_list_changed(
    server: *mut mcpaxle_server,
    list: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, list) = unsafe { (server_ref(server)?, arg_str(list, "list")?) };
        s.server.publish(ServerEvent::list_changed(list)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpaxle_core::legacy::LegacyOptions;
    use std::time::Duration;

    #[test]
    fn legacy_options_reach_the_core_in_their_units() {
        let json = r#"{"legacy":{"maxSessions":50,"maxSessionsPerPrincipal":4,"maxSessionsPerPeer":5,"idleTimeoutMs":6000,"uninitializedTimeoutMs":700,"requestTimeoutMs":8000}}"#;
        let options: ServerOptions = serde_json::from_str(json).unwrap();
        let server = build("n", "1", options);
        let o = server.legacy_options();
        assert_eq!((o.max_sessions, o.max_sessions_per_principal, o.max_sessions_per_peer), (50, 4, 5));
        assert_eq!(
            (o.idle_timeout, o.uninitialized_timeout, o.request_timeout),
            (Duration::from_secs(6), Duration::from_millis(700), Duration::from_secs(8))
        );
        let defaults: ServerOptions = serde_json::from_str(r#"{"legacy":{}}"#).unwrap();
        let server = build("n", "1", defaults);
        assert_eq!(server.legacy_options().max_sessions_per_peer, LegacyOptions::default().max_sessions_per_peer);
    }
}
