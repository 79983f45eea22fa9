//! JavaScript callbacks as the core's callback types. Every callback runs on the JavaScript
//! thread through a threadsafe function; the ones that answer (input handlers, server handlers)
//! return a `Promise` of an envelope (see [`crate::errors`]) and are awaited with `call_async`.
//!
//! Callbacks are weak (unreferenced) threadsafe functions: they never keep the Node process
//! alive by themselves. What keeps it alive is what a person would expect to: a call in flight
//! (its pending promise), an open subscription, a running server.

use crate::errors;
use mcpaxle::Error;
use mcpaxle::client::{AuthorizationHandler, InputHandler, LogCallback, ProgressCallback};
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Promise, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::Value;
use std::sync::Arc;

/// `(kind, paramsJson) => Promise<envelopeJson>`: the client's one input handler, for every
/// kind of request a server makes (`elicitation`, `sampling`, `roots`).
pub type InputFn =
    ThreadsafeFunction<FnArgs<(String, String)>, Promise<String>, FnArgs<(String, String)>, Status, false, true>;

/// `(authorizationUrl) => Promise<envelopeJson>`: the user-agent step of OAuth, whose envelope's
/// `ok` is the URL the authorization server redirected to.
pub type AuthorizeFn = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// `(token) => Promise<envelopeJson>`: a server's token verifier, whose envelope's `ok` is
/// `{subject, scopes}` or `null` (see [`crate::auth`]).
pub type VerifyFn = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// `(json) => void`: progress, log messages.
pub type EventFn = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

/// `(json) => void`, holding a reference on the event loop until dropped: subscription
/// delivery (an open subscription keeps the process alive, like an open socket).
pub type StrongEventFn = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, false>;

/// The kinds of input request a client answers, with their capability names.
pub const INPUT_KINDS: [&str; 3] = ["elicitation", "sampling", "roots"];

/// Calls a JavaScript answering function and opens the envelope it resolves with.
pub async fn answer<T>(
    f: &ThreadsafeFunction<T, Promise<String>, T, Status, false, true>,
    args: T,
) -> mcpaxle::Result<Value>
where
    T: 'static + napi::bindgen_prelude::JsValuesTupleIntoVec,
{
    let promise = f.call_async(args).await.map_err(errors::from_napi)?;
    let text = promise.await.map_err(errors::from_napi)?;
    errors::open_envelope(&text)
}

/// The core input handler of one kind, answered by the JavaScript dispatcher.
pub fn input_handler(f: Arc<InputFn>, kind: &'static str) -> InputHandler {
    Arc::new(move |params: Value| {
        let f = f.clone();
        Box::pin(async move { answer(&f, FnArgs::from((kind.to_owned(), params.to_string()))).await })
    })
}

/// The core's OAuth user-agent step, answered by a JavaScript function: it gets the
/// authorization URL and resolves with the redirect URL (an error it throws is the error of the
/// request that needed authorization).
pub fn authorization_handler(f: AuthorizeFn) -> AuthorizationHandler {
    let f = Arc::new(f);
    Arc::new(move |url: String| {
        let f = f.clone();
        Box::pin(async move {
            match answer(&f, url).await? {
                Value::String(redirect) => Ok(redirect),
                other => Err(Error::internal(format!("the authorize callback's answer is not a URL string: {other}"))),
            }
        })
    })
}

/// A token store of the application's own: each of the core's store operations, as JSON, answered
/// by a JavaScript function (`lib/client.js` calls the store object's async methods).
pub fn token_store(f: AuthorizeFn) -> Arc<dyn mcpaxle::client::TokenStore> {
    let f = Arc::new(f);
    Arc::new(mcpaxle::client::CallbackTokenStore::new(Arc::new(move |request: Value| {
        let f = f.clone();
        Box::pin(async move { answer(&f, request.to_string()).await })
    })))
}

/// A progress callback delivering each `notifications/progress` params object as JSON.
pub fn progress(f: EventFn) -> ProgressCallback {
    Arc::new(move |p| {
        if let Ok(text) = serde_json::to_string(&p) {
            f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
        }
    })
}

/// A log callback delivering each `notifications/message` params object as JSON.
pub fn log(f: EventFn) -> LogCallback {
    Arc::new(move |p| {
        if let Ok(text) = serde_json::to_string(&p) {
            f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
        }
    })
}

/// Hands the core's log records to `handler` (each as JSON `{level, target, message,
/// fields}`), or to nobody when `null`. The records come from the core's `mcpaxle-log`
/// thread; the handler runs on the JavaScript thread and never keeps the process alive.
#[napi_derive::napi]
pub fn set_log_handler(
    #[napi(ts_arg_type = "((recordJson: string) => void) | null")] handler: Option<EventFn>,
) -> napi::Result<()> {
    let sink = handler.map(|f| -> mcpaxle::host_log::LogSink {
        Box::new(move |record| {
            if let Ok(text) = serde_json::to_string(&record) {
                f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
            }
        })
    });
    mcpaxle::host_log::set_sink(sink).map_err(errors::to_napi)
}
