//! `mcpaxle_client_*`: an MCP client over stdio or Streamable HTTP. Every method has a blocking
//! form (`*out_json`) and an `_async` form that returns at once and calls a callback exactly
//! once; input handlers (elicitation, sampling, roots) are C callbacks finishing through
//! reply handles; subscriptions deliver notifications to a callback.

use crate::calls::{self, Kind, Payload, Target, mcpaxle_reply};
use crate::client_oauth::OAuthSetting;
use crate::ffi::{
    FfiError, FfiResult, SendPtr, arg_json, arg_str, ffi_boundary, from_json, mcpaxle_result, opt_json, opt_str,
    out_ptr, write_json,
};
use crate::owner::Owner;
use crate::runtime;
use mcpaxle_core::client::{CallOptions, CallbackTokenStore, Client, ClientOptions, InputHandler, Subscription};
use mcpaxle_core::schema::SubscriptionFilter;
use mcpaxle_core::{Error, ErrorKind};
use serde_json::{Value, json};
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Answers one request of the server: `elicitation/create`, `sampling/createMessage` or
/// `roots/list`. `params_json` is the request's params (borrowed for the callback); complete
/// `reply` exactly once, now or later from any thread, with the result object
/// (`mcpaxle_reply_ok`: an ElicitResult, CreateMessageResult or ListRootsResult) or an
/// error (`mcpaxle_reply_error`).
///
/// Thread: a thread of the library's handler pool (blocking is allowed).
pub type mcpaxle_input_handler =
    Option<unsafe extern "C" fn(user_data: *mut c_void, params_json: *const c_char, reply: *mut mcpaxle_reply)>;

/// Receives one notification as JSON, borrowed for the duration of the callback: the params of
/// `notifications/message` (log callbacks), of `notifications/progress` (progress callbacks),
/// or a whole notification `{"method": ..., "params": ...}` (subscriptions; NULL marks the end
/// of the subscription).
///
/// Thread: a thread of the library's handler pool; callbacks of one source run one at a time,
/// in order.
pub type mcpaxle_notification_handler =
    Option<unsafe extern "C" fn(user_data: *mut c_void, notification_json: *const c_char)>;

/// Receives the outcome of an `_async` call, exactly once: `code` is `MCPAXLE_OK` and `json`
/// the result object, or an error code and `json` the error as `{"code": <JSON-RPC code>,
/// "message": "...", "data": ...}`. `json` is borrowed for the duration of the callback.
///
/// Thread: a thread of the library's handler pool (blocking is allowed, including blocking
/// mcpaxle calls).
pub type mcpaxle_result_handler =
    Option<unsafe extern "C" fn(user_data: *mut c_void, code: mcpaxle_result, json: *const c_char)>;

type InputFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcpaxle_reply);
type NotifyFn = unsafe extern "C" fn(*mut c_void, *const c_char);
type ResultFn = unsafe extern "C" fn(*mut c_void, mcpaxle_result, *const c_char);

/// One item for a [`notifier`]: a notification (`None`: the end-of-stream NULL), or a flush
/// marker answered once everything before it was delivered.
enum Note {
    Json(Option<String>),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Delivers notifications to a C callback in order, on the handler pool, while `owner` is
/// active. Dropping every sender ends it once the queue is delivered.
fn notifier(
    owner: &Arc<Owner>,
    target: Target<NotifyFn>,
) -> FfiResult<(mpsc::UnboundedSender<Note>, tokio::task::JoinHandle<()>)> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Note>();
    let owner = owner.clone();
    let task = runtime::spawn(async move {
        while let Some(item) = rx.recv().await {
            let item = match item {
                Note::Json(item) => item,
                Note::Flush(done) => {
                    let _ = done.send(());
                    continue;
                }
            };
            let owner = owner.clone();
            let json = item.and_then(|s| CString::new(s).ok());
            let _ = crate::pool::run(move || {
                owner.enter(|| {
                    let p = json.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
                    // SAFETY: the function pointer and user data were registered together.
                    unsafe { (target.func)(target.user_data.get(), p) }
                })
            })
            .await;
        }
    })?;
    Ok((tx, task))
}

/// A cancellation token for client calls (`mcpaxle_call_options_set_cancel`).
pub struct mcpaxle_cancel_token {
    pub(crate) token: CancellationToken,
}

/// Creates a cancellation token.
///
/// Ownership: `*out` is the caller's (`mcpaxle_cancel_token_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_cancel_token_new(out: *mut *mut mcpaxle_cancel_token) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let out = unsafe { out_ptr(out, "out")? };
        *out = Box::into_raw(Box::new(mcpaxle_cancel_token { token: CancellationToken::new() }));
        Ok(())
    })
}

/// Cancels every call made with options holding this token (they fail with
/// `MCPAXLE_ERR_CANCELLED`, and the server is told). Idempotent. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_cancel_token_cancel(token: *mut mcpaxle_cancel_token) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let t = unsafe { token.as_ref() }.ok_or_else(|| FfiError::null("token"))?;
        t.token.cancel();
        Ok(())
    })
}

/// Whether the token was cancelled (false for NULL). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_cancel_token_is_cancelled(token: *const mcpaxle_cancel_token) -> bool {
    // SAFETY: per the contract.
    ffi_boundary!(false, { unsafe { token.as_ref() }.is_some_and(|t| t.token.is_cancelled()) })
}

/// Frees a token (calls made with it keep their own reference). NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_cancel_token_free(token: *mut mcpaxle_cancel_token) {
    ffi_boundary!((), {
        if !token.is_null() {
            // SAFETY: a handle from mcpaxle_cancel_token_new, given back once.
            drop(unsafe { Box::from_raw(token) });
        }
    })
}

/// Options of one client call: a timeout, extra `_meta`, a log level, cache bypass, a
/// cancellation token, progress and log callbacks.
pub struct mcpaxle_call_options {
    /// The data options (the core's, its callbacks and token unset).
    json: CallOptions,
    cancel: Option<CancellationToken>,
    on_progress: Option<Target<NotifyFn>>,
    on_log: Option<Target<NotifyFn>>,
}

/// Creates call options. `options_json` may be NULL or an object with any of `"timeoutMs"`
/// (per round trip), `"meta"` (extra `_meta` members), `"logLevel"` ("debug" ... "emergency")
/// and `"bypassCache"` (bool).
///
/// Ownership: `*out` is the caller's (`mcpaxle_call_options_free`); calls copy what they need,
/// so options may be freed (or reused) as soon as the call function returns. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_call_options_new(
    options_json: *const c_char,
    out: *mut *mut mcpaxle_call_options,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, json) = unsafe { (out_ptr(out, "out")?, opt_json(options_json, "options_json")?) };
        let json: CallOptions = json.map(|v| from_json(v, "options_json")).transpose()?.unwrap_or_default();
        *out = Box::into_raw(Box::new(mcpaxle_call_options { json, cancel: None, on_progress: None, on_log: None }));
        Ok(())
    })
}

/// Attaches a cancellation token (NULL detaches). The options keep their own reference.
/// Thread: any, not concurrently with a call using these options.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_call_options_set_cancel(
    options: *mut mcpaxle_call_options,
    token: *const mcpaxle_cancel_token,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let o = unsafe { options.as_mut() }.ok_or_else(|| FfiError::null("options"))?;
        // SAFETY: per the contract.
        o.cancel = unsafe { token.as_ref() }.map(|t| t.token.clone());
        Ok(())
    })
}

/// Sets the progress callback of the calls made with these options (NULL removes it); it gets
/// the params of each `notifications/progress` (`progress`, `total`, `message`), in order, and
/// all of them before the call returns or its `_async` callback runs. `user_data` must stay
/// valid until then. Thread: as `mcpaxle_call_options_set_cancel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_call_options_on_progress(
    options: *mut mcpaxle_call_options,
    callback: mcpaxle_notification_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let o = unsafe { options.as_mut() }.ok_or_else(|| FfiError::null("options"))?;
        o.on_progress = callback.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

/// Sets the log callback of the calls made with these options (params of each
/// `notifications/message`); otherwise the client's log callback gets them. Delivery and
/// lifetime as `mcpaxle_call_options_on_progress`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_call_options_on_log(
    options: *mut mcpaxle_call_options,
    callback: mcpaxle_notification_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let o = unsafe { options.as_mut() }.ok_or_else(|| FfiError::null("options"))?;
        o.on_log = callback.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

/// Frees call options. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_call_options_free(options: *mut mcpaxle_call_options) {
    ffi_boundary!((), {
        if !options.is_null() {
            // SAFETY: a handle from mcpaxle_call_options_new, given back once.
            drop(unsafe { Box::from_raw(options) });
        }
    })
}

/// What a call copies out of its `mcpaxle_call_options`.
#[derive(Clone, Default)]
pub(crate) struct CallSpec {
    json: CallOptions,
    pub(crate) cancel: Option<CancellationToken>,
    on_progress: Option<Target<NotifyFn>>,
    on_log: Option<Target<NotifyFn>>,
}

impl CallSpec {
    /// # Safety
    /// `p` is NULL or a live options handle.
    pub(crate) unsafe fn of(p: *const mcpaxle_call_options) -> Self {
        // SAFETY: per the contract.
        match unsafe { p.as_ref() } {
            None => CallSpec::default(),
            Some(o) => CallSpec {
                json: o.json.clone(),
                cancel: o.cancel.clone(),
                on_progress: o.on_progress,
                on_log: o.on_log,
            },
        }
    }
}

/// How a client connects and behaves, its input handlers and its OAuth authorization; from
/// `mcpaxle_client_options_new`.
pub struct mcpaxle_client_options {
    core: ClientOptions,
    elicitation: Option<Target<InputFn>>,
    sampling: Option<Target<InputFn>>,
    roots: Option<Target<InputFn>>,
    on_log: Option<Target<NotifyFn>>,
    pub(crate) oauth: Option<OAuthSetting>,
    pub(crate) token_store: Option<Target<InputFn>>,
}

/// Creates client options for a client named `name` at `version` (its `clientInfo`).
/// `options_json` may be NULL or an object with any of: `"protocolVersions"` (most preferred
/// first; default modern then legacy), `"capabilities"` (declared as given; default: from the
/// input handlers set), `"requestTimeoutMs"`, `"resetTimeoutOnProgress"`,
/// `"maxRequestTimeoutMs"`, `"probeTimeoutMs"`, `"cache"` (bool), `"headers"` (HTTP, an object),
/// `"maxInputRounds"`, `"logLevel"`, `"legacyGetStream"`, `"maxMessageSize"`, and for stdio
/// `"env"` (an object of variables given to the child), `"inheritEnv"` (bool, default false:
/// the child inherits only HOME, LOGNAME, PATH, SHELL, TERM and USER from this process, plus
/// `"env"`, so the host's secrets do not leak into every server it starts; true passes the
/// whole environment), `"cwd"`, `"stderr"` ("inherit" | "null" | "tracing"),
/// `"shutdownTimeoutMs"`, and `"clientInfo"` (an `Implementation` for its `title`, `icons`,
/// ...; `name` and `version` are the arguments) and `"oauth"` (as `oauth_json` of
/// `mcpaxle_client_options_set_oauth` with no `authorize` callback). Durations are whole
/// milliseconds, at least 1; defaults: requestTimeoutMs 60000, maxRequestTimeoutMs 600000,
/// probeTimeoutMs 5000, shutdownTimeoutMs 2000, maxInputRounds 8, maxMessageSize 16777216,
/// cache, resetTimeoutOnProgress and legacyGetStream true. The core reads the object (its
/// `ClientOptions`: the same names in every binding); unknown members are an error naming the
/// valid ones (`MCPAXLE_ERR_USAGE`).
///
/// Ownership: `*out` is the caller's (`mcpaxle_client_options_free`); a connect call copies
/// it, so it may be freed or reused after. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_new(
    name: *const c_char,
    version: *const c_char,
    options_json: *const c_char,
    out: *mut *mut mcpaxle_client_options,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, name, version, json) = unsafe {
            (
                out_ptr(out, "out")?,
                arg_str(name, "name")?,
                arg_str(version, "version")?,
                opt_json(options_json, "options_json")?,
            )
        };
        let mut o: ClientOptions = json.map(|v| from_json(v, "options_json")).transpose()?.unwrap_or_default();
        o.client_info.name = name.to_owned();
        o.client_info.version = version.to_owned();
        let oauth = o.oauth.take().map(OAuthSetting::from_options);
        *out = Box::into_raw(Box::new(mcpaxle_client_options {
            core: o,
            elicitation: None,
            sampling: None,
            roots: None,
            on_log: None,
            oauth,
            token_store: None,
        }));
        Ok(())
    })
}

pub(crate) fn options_mut<'a>(p: *mut mcpaxle_client_options) -> FfiResult<&'a mut mcpaxle_client_options> {
    // SAFETY: callers pass NULL or a live handle, per their contract.
    unsafe { p.as_mut() }.ok_or_else(|| FfiError::null("options"))
}

/// Sets the `elicitation/create` handler (NULL removes it); the client then declares the
/// `elicitation` capability. `user_data` must stay valid until the client made from these
/// options is freed. Thread: any, before connecting.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_on_elicitation(
    options: *mut mcpaxle_client_options,
    callback: mcpaxle_input_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        options_mut(options)?.elicitation = callback.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

/// Sets the `sampling/createMessage` handler, as `mcpaxle_client_options_on_elicitation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_on_sampling(
    options: *mut mcpaxle_client_options,
    callback: mcpaxle_input_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        options_mut(options)?.sampling = callback.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

/// Sets the `roots/list` handler, as `mcpaxle_client_options_on_elicitation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_on_roots(
    options: *mut mcpaxle_client_options,
    callback: mcpaxle_input_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        options_mut(options)?.roots = callback.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

/// Sets the callback of log messages (`notifications/message` params) not taken by a call's
/// own log callback. Lifetime of `user_data` as `mcpaxle_client_options_on_elicitation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_on_log(
    options: *mut mcpaxle_client_options,
    callback: mcpaxle_notification_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        options_mut(options)?.on_log = callback.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

/// Frees client options. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_free(options: *mut mcpaxle_client_options) {
    ffi_boundary!((), {
        if !options.is_null() {
            // SAFETY: a handle from mcpaxle_client_options_new, given back once.
            drop(unsafe { Box::from_raw(options) });
        }
    })
}

/// A C callback that takes JSON and answers JSON through its reply handle, as the core's
/// callback: an input handler (`Kind::Input`) or a token store (`Kind::TokenStore`).
fn input_handler(owner: &Arc<Owner>, kind: Kind, target: Target<InputFn>) -> InputHandler {
    let owner = owner.clone();
    Arc::new(move |params: Value| {
        let owner = owner.clone();
        Box::pin(async move {
            let payload = calls::invoke(&owner, kind, None, params.to_string(), move |id, json| {
                // SAFETY: the function pointer and user data were registered together.
                unsafe { (target.func)(target.user_data.get(), json, id as *mut mcpaxle_reply) }
            })
            .await?;
            match payload {
                Payload::Input(v) => Ok(v),
                _ => Err(Error::internal("the callback completed with a result of another kind")),
            }
        })
    })
}

/// A connected MCP client, from `mcpaxle_client_connect_http` or `_stdio`.
pub struct mcpaxle_client {
    pub(crate) client: Client,
    pub(crate) owner: Arc<Owner>,
    /// Cancelled by `mcpaxle_client_free`: pending `_async` calls end with MCPAXLE_ERR_CANCELLED.
    pub(crate) freed: CancellationToken,
    /// Keeps the log notifier alive as long as the client.
    _log: Option<mpsc::UnboundedSender<Note>>,
}

pub(crate) fn client_ref<'a>(p: *const mcpaxle_client) -> FfiResult<&'a mcpaxle_client> {
    // SAFETY: callers pass NULL or a live handle, per their contract.
    unsafe { p.as_ref() }.ok_or_else(|| FfiError::null("client"))
}

fn connect(
    options: *const mcpaxle_client_options,
    out: &mut *mut mcpaxle_client,
    go: impl FnOnce(ClientOptions) -> FfiResult<Client>,
) -> FfiResult {
    // SAFETY: callers pass NULL or a live handle, per their contract.
    let given = unsafe { options.as_ref() };
    let owner = Arc::new(Owner::new());
    let mut core = given.map(|o| o.core.clone()).unwrap_or_default();
    let mut log = None;
    if let Some(o) = given {
        core.elicitation = o.elicitation.map(|t| input_handler(&owner, Kind::Input, t));
        core.sampling = o.sampling.map(|t| input_handler(&owner, Kind::Input, t));
        core.roots = o.roots.map(|t| input_handler(&owner, Kind::Input, t));
        core.oauth = o.oauth.as_ref().map(|s| s.for_client(&owner));
        if let (Some(oauth), Some(t)) = (core.oauth.as_mut(), o.token_store) {
            oauth.token_store = Some(Arc::new(CallbackTokenStore::new(input_handler(&owner, Kind::TokenStore, t))));
        }
        if let Some(t) = o.on_log {
            let (tx, _task) = notifier(&owner, t)?;
            let sender = tx.clone();
            core.on_log = Some(Arc::new(move |p| {
                let _ = sender.send(Note::Json(serde_json::to_string(&p).ok()));
            }));
            log = Some(tx);
        }
    }
    match go(core) {
        Ok(client) => {
            *out =
                Box::into_raw(Box::new(mcpaxle_client { client, owner, freed: CancellationToken::new(), _log: log }));
            Ok(())
        }
        Err(e) => {
            owner.close();
            calls::abandon_owner(owner.id());
            Err(e)
        }
    }
}

/// Connects to the Streamable HTTP endpoint at `url` (`http://` or `https://`), finding out
/// the server's era (2026-07-28, or a legacy `initialize` session). Blocking.
///
/// Ownership: the arguments are borrowed (`options` may be NULL for defaults, and may be freed
/// after this returns); `*out` is the caller's (`mcpaxle_client_free`). Thread: any thread
/// that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_connect_http(
    url: *const c_char,
    options: *const mcpaxle_client_options,
    out: *mut *mut mcpaxle_client,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, url) = unsafe { (out_ptr(out, "out")?, arg_str(url, "url")?) };
        connect(options, out, |o| Ok(runtime::block_on(Client::connect_http(url, o))??))
    })
}

/// Starts `command` (found on PATH) with `args_json` (a JSON array of strings, or NULL) as a
/// stdio server and connects to it. Blocking. `mcpaxle_client_free` shuts the server down
/// (stdin closed, then SIGTERM, then SIGKILL).
///
/// Ownership and thread: as `mcpaxle_client_connect_http`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_connect_stdio(
    command: *const c_char,
    args_json: *const c_char,
    options: *const mcpaxle_client_options,
    out: *mut *mut mcpaxle_client,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, command, args) =
            unsafe { (out_ptr(out, "out")?, arg_str(command, "command")?, opt_json(args_json, "args_json")?) };
        let args: Vec<String> = args.map(|v| from_json(v, "args_json")).transpose()?.unwrap_or_default();
        connect(options, out, |o| Ok(runtime::block_on(Client::connect_stdio(command, args, o))??))
    })
}

/// Closes the connection (a legacy HTTP session is ended, a stdio server shut down): pending
/// and later calls fail. Blocking. The handle stays valid until `mcpaxle_client_free`.
/// Thread: any thread that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_close(client: *mut mcpaxle_client) -> mcpaxle_result {
    ffi_boundary!({
        let c = client_ref(client)?.client.clone();
        runtime::block_on(async move { c.close().await })?;
        Ok(())
    })
}

/// Closes (as `mcpaxle_client_close`) and frees a client. NULL is a no-op. Pending `_async`
/// calls end with `MCPAXLE_ERR_CANCELLED`; their callbacks, like every other callback of this
/// client, have run before this returns, and **no callback of this client runs after it
/// returns** (a callback may free its own client). Afterwards every `user_data` given to it may
/// be freed.
///
/// Ownership: takes the handle. Thread: any thread that is not an async runtime worker; not
/// while another thread is inside a function taking this handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_free(client: *mut mcpaxle_client) {
    ffi_boundary!((), {
        if client.is_null() {
            return;
        }
        // SAFETY: a handle from a connect call, given back once.
        let c = unsafe { Box::from_raw(client) };
        c.owner.deactivate();
        c.freed.cancel();
        calls::abandon_owner(c.owner.id());
        let core = c.client.clone();
        let _ = runtime::block_on(async move { core.close().await });
        c.owner.close();
        drop(c);
    })
}

/// What is known of the server, as JSON: `era` ("modern" | "legacy"), `protocolVersion`,
/// `serverInfo`, `capabilities`, `instructions`, `sessionId` (legacy HTTP) and `processId`
/// (stdio), each null when unknown.
///
/// Ownership: `*info_json` is the caller's (`mcpaxle_string_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_info(
    client: *mut mcpaxle_client,
    info_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let out = unsafe { out_ptr(info_json, "info_json")? };
        let c = &client_ref(client)?.client;
        let era = match c.era() {
            mcpaxle_core::client::Era::Modern => "modern",
            mcpaxle_core::client::Era::Legacy => "legacy",
        };
        let info = json!({
            "era": era,
            "protocolVersion": c.protocol_version(),
            "serverInfo": c.server_info(),
            "capabilities": c.server_capabilities(),
            "instructions": c.instructions(),
            "sessionId": c.session_id(),
            "processId": c.process_id(),
        });
        write_json(out, &info);
        Ok(())
    })
}

/// HTTP only: sets a header sent with every later request (`value` NULL removes it), e.g. a
/// refreshed `Authorization`. `MCPAXLE_ERR_USAGE` on a stdio client. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_set_header(
    client: *mut mcpaxle_client,
    name: *const c_char,
    value: *const c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (name, value) = unsafe { (arg_str(name, "name")?, opt_str(value, "value")?) };
        client_ref(client)?.client.set_header(name, value)?;
        Ok(())
    })
}

/// Forgets every cached result. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_clear_cache(client: *mut mcpaxle_client) -> mcpaxle_result {
    ffi_boundary!({
        client_ref(client)?.client.clear_cache();
        Ok(())
    })
}

/// A client method: the core call, made with the call's options.
pub(crate) type Method = MethodOf<Value>;

/// A client method whose outcome is a `T` (a [`Method`]'s is JSON).
pub(crate) type MethodOf<T> =
    Box<dyn FnOnce(Client, CallOptions) -> futures_util::future::BoxFuture<'static, Result<T, Error>> + Send>;

/// Runs a method with the call's options: progress and log callbacks are delivered (all of
/// them) before this completes.
pub(crate) async fn run<T>(client: Client, owner: Arc<Owner>, spec: CallSpec, method: MethodOf<T>) -> Result<T, Error> {
    let mut options = spec.json;
    options.cancel = spec.cancel;
    let mut queues = Vec::new();
    if let Some(t) = spec.on_progress {
        let (tx, _task) = notifier(&owner, t).map_err(|e| Error::internal(e.message))?;
        let sender = tx.clone();
        options.on_progress = Some(Arc::new(move |p| {
            let _ = sender.send(Note::Json(serde_json::to_string(&p).ok()));
        }));
        queues.push(tx);
    }
    if let Some(t) = spec.on_log {
        let (tx, _task) = notifier(&owner, t).map_err(|e| Error::internal(e.message))?;
        let sender = tx.clone();
        options.on_log = Some(Arc::new(move |p| {
            let _ = sender.send(Note::Json(serde_json::to_string(&p).ok()));
        }));
        queues.push(tx);
    }
    let result = method(client, options).await;
    // Every notification of the call reaches its callback before the call's outcome does.
    for q in queues {
        let (done, flushed) = tokio::sync::oneshot::channel();
        if q.send(Note::Flush(done)).is_ok() {
            let _ = flushed.await;
        }
    }
    result
}

/// An error as an `_async` callback gets it: `{"code": <JSON-RPC code>, "message": ..., "data": ...}`.
pub(crate) fn error_json(e: &Error) -> String {
    let o = e.to_error_object();
    json!({ "code": o.code, "message": o.message, "data": o.data }).to_string()
}

pub(crate) fn to_value<T: serde::Serialize>(r: Result<T, Error>) -> Result<Value, Error> {
    r.and_then(|v| serde_json::to_value(v).map_err(|e| Error::internal(e.to_string())))
}

/// The blocking form: waits for the method and writes its result.
pub(crate) fn call_blocking(
    client: *mut mcpaxle_client,
    out: *mut *mut c_char,
    spec: CallSpec,
    method: Method,
) -> FfiResult {
    // SAFETY: per the callers' contract.
    let out = unsafe { out_ptr(out, "result_json")? };
    let c = client_ref(client)?;
    let v = runtime::block_on(run(c.client.clone(), c.owner.clone(), spec, method))??;
    write_json(out, &v);
    Ok(())
}

/// The async form: returns at once; the callback runs exactly once with the outcome.
pub(crate) fn call_async(
    client: *mut mcpaxle_client,
    callback: mcpaxle_result_handler,
    user_data: *mut c_void,
    spec: CallSpec,
    method: Method,
) -> FfiResult {
    let c = client_ref(client)?;
    let func: ResultFn = callback.ok_or_else(|| FfiError::null("callback"))?;
    let target = Target { func, user_data: SendPtr(user_data) };
    let (core, owner, freed) = (c.client.clone(), c.owner.clone(), c.freed.clone());
    let ticket = owner.ticket();
    runtime::spawn(async move {
        // `biased`: once the client is being freed the call ends as cancelled, even if closing
        // the connection also made it fail.
        let outcome = tokio::select! {
            biased;
            _ = freed.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the client was freed")),
            r = run(core, owner, spec, method) => r,
        };
        let (code, json) = match outcome {
            Ok(v) => (mcpaxle_result::MCPAXLE_OK, v.to_string()),
            Err(e) => (mcpaxle_result::of_kind(e.kind()), error_json(&e)),
        };
        let json = CString::new(json).unwrap_or_default();
        let _ = crate::pool::run(move || {
            ticket.deliver(|| {
                // SAFETY: the function pointer and user data were given together.
                unsafe { (target.func)(target.user_data.get(), code, json.as_ptr()) }
            })
        })
        .await;
    })?;
    Ok(())
}

/// An open subscription, from `mcpaxle_client_subscribe`.
pub struct mcpaxle_subscription {
    owner: Arc<Owner>,
    acknowledged: Value,
    stop: CancellationToken,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Opens a subscription to change notifications (`subscriptions/listen`, or
/// `resources/subscribe` in a legacy session). `filter_json` is a `SubscriptionFilter`:
/// `{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
/// "resourceSubscriptions": ["uri", ...]}`. Blocks until the server acknowledged it.
///
/// `callback` gets each notification (`{"method": ..., "params": ...}`) in order, then NULL once
/// when the subscription ends (the server closed it or the connection dropped); never after
/// `mcpaxle_subscription_free` returns. `user_data` must stay valid until then.
///
/// Ownership: `*out` is the caller's: free it with `mcpaxle_subscription_free`, before its
/// client (freeing the client first ends the subscription, with the NULL callback). Thread: any
/// thread that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_subscribe(
    client: *mut mcpaxle_client,
    filter_json: *const c_char,
    callback: mcpaxle_notification_handler,
    user_data: *mut c_void,
    out: *mut *mut mcpaxle_subscription,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, filter) = unsafe { (out_ptr(out, "out")?, arg_json(filter_json, "filter_json")?) };
        let filter: SubscriptionFilter = from_json(filter, "filter_json")?;
        let func = callback.ok_or_else(|| FfiError::null("callback"))?;
        let c = client_ref(client)?;
        let core = c.client.clone();
        let mut sub: Subscription = runtime::block_on(async move { core.subscribe(filter).await })??;
        let acknowledged = serde_json::to_value(sub.acknowledged()).unwrap_or(Value::Null);
        let owner = Arc::new(Owner::new());
        let (tx, delivered) = notifier(&owner, Target { func, user_data: SendPtr(user_data) })?;
        let stop = CancellationToken::new();
        let (stop2, freed) = (stop.clone(), c.freed.clone());
        let task = runtime::spawn(async move {
            loop {
                let next = tokio::select! {
                    _ = stop2.cancelled() => break,
                    _ = freed.cancelled() => None,
                    n = sub.next() => n,
                };
                match next {
                    Some(Ok(n)) => {
                        let _ = tx.send(Note::Json(serde_json::to_string(&n).ok()));
                    }
                    Some(Err(_)) | None => {
                        let _ = tx.send(Note::Json(None));
                        break;
                    }
                }
            }
            sub.close();
            drop(tx);
            let _ = delivered.await;
        })?;
        *out =
            Box::into_raw(Box::new(mcpaxle_subscription { owner, acknowledged, stop, task: Mutex::new(Some(task)) }));
        Ok(())
    })
}

/// The notification types the server agreed to send (its acknowledgment), as a
/// `SubscriptionFilter` JSON object.
///
/// Ownership: `*filter_json` is the caller's (`mcpaxle_string_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_subscription_acknowledged(
    subscription: *mut mcpaxle_subscription,
    filter_json: *mut *mut c_char,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the contract.
        let (out, s) = unsafe {
            (out_ptr(filter_json, "filter_json")?, subscription.as_ref().ok_or_else(|| FfiError::null("subscription"))?)
        };
        write_json(out, &s.acknowledged);
        Ok(())
    })
}

/// Ends a subscription and frees it. NULL is a no-op. No callback of this subscription runs
/// after this returns (it waits for a running one; a callback may free its own subscription).
///
/// Ownership: takes the handle. Thread: any thread that is not an async runtime worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_subscription_free(subscription: *mut mcpaxle_subscription) {
    ffi_boundary!((), {
        if subscription.is_null() {
            return;
        }
        // SAFETY: a handle from mcpaxle_client_subscribe, given back once.
        let s = unsafe { Box::from_raw(subscription) };
        s.owner.deactivate();
        s.stop.cancel();
        s.owner.close();
        drop(s.task.lock().unwrap_or_else(|e| e.into_inner()).take());
    })
}
