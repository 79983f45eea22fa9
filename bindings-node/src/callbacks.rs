//! JavaScript callbacks as the core's callback types. Every callback runs on the JavaScript
//! thread through a threadsafe function; the ones that answer (input handlers, server handlers)
//! return a `Promise` of an envelope (see [`crate::errors`]) and are awaited with `call_async`.
//!
//! Callbacks are weak (unreferenced) threadsafe functions: they never keep the Node process
//! alive by themselves. What keeps it alive is what a person would expect to: a call in flight
//! (its pending promise), an open subscription, a running server.

use crate::errors;
use mcpaxle::client::{InputHandler, LogCallback, ProgressCallback};
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Promise, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::Value;
use std::sync::Arc;

/// `(kind, paramsJson) => Promise<envelopeJson>`: the client's one input handler, for every
/// kind of request a server makes (`elicitation`, `sampling`, `roots`).
pub type InputFn = ThreadsafeFunction<
    FnArgs<(String, String)>,
    Promise<String>,
    FnArgs<(String, String)>,
    Status,
    false,
    true,
>;

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
        Box::pin(
            async move { answer(&f, FnArgs::from((kind.to_owned(), params.to_string()))).await },
        )
    })
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
