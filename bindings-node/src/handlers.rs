//! One implementation of each of the core's handler traits, for JavaScript functions.
//!
//! A handler is `(callId, inputJson, traceJson) => void` (the JavaScript layer wraps the user's
//! function): the core's request runs it on the JavaScript thread through a weak threadsafe
//! function, and the JavaScript layer ends the run with `completeCall(callId, envelopeJson)` once
//! the user's function returned (or its promise settled). The input is the tool's arguments, the
//! prompt's arguments, `{"uri", "variables"}` for a resource, or `{"argument", "value",
//! "context"}` for a completion. `traceJson` is the request's trace context while telemetry is on
//! (`{"traceparent", "tracestate"?, "baggage"?}`, what the user's function runs in:
//! `lib/otel.js`), `null` otherwise. The envelope's value is the handler's value in the core's
//! tagged form ([`Returned::from_tagged`]), which the core shapes into the result.
//!
//! Nothing is made on the JavaScript heap per call but the strings: the run waits in a table
//! ([`runs`]) under its id, and the handler's `ctx` asks for the native [`RequestCtx`] of its
//! run only when it is used (`requestContext(callId)`). A promise or a wrapped object per call
//! (what `call_async` and a context object per call cost) is a finalizer for the garbage
//! collector: under load they piled up, held memory and made the collector's pauses the tail
//! latency.

use crate::context::RequestCtx;
use crate::errors;
use mcpaxle::RequestContext;
use mcpaxle::server::{BoxFuture, JsonHandler, Returned};
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;

/// The arguments of a [`HandlerFn`]: the call id, the input and the trace context, as JSON.
type HandlerArgs = FnArgs<(i64, String, Option<String>)>;

/// `(callId, inputJson, traceJson) => void`, completed by `completeCall(callId, envelopeJson)`.
pub type HandlerFn = ThreadsafeFunction<HandlerArgs, Unknown<'static>, HandlerArgs, Status, false, true>;

/// The runs of JavaScript handlers in flight, by call id.
mod runs {
    use mcpaxle::RequestContext;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
    use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
    use tokio::sync::oneshot;
    use tokio_util::sync::CancellationToken;

    /// One run: where its envelope goes, and what its `ctx` is made of.
    pub struct Run {
        pub tx: oneshot::Sender<String>,
        pub ctx: RequestContext,
        pub over: CancellationToken,
        pub answered: Arc<AtomicBool>,
    }

    static RUNS: LazyLock<Mutex<HashMap<i64, Run>>> = LazyLock::new(Mutex::default);
    /// Ids are never reused (a late `completeCall` of a run that was dropped finds nothing).
    static NEXT: AtomicI64 = AtomicI64::new(1);

    pub fn table() -> MutexGuard<'static, HashMap<i64, Run>> {
        RUNS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Removes the run when its future ends, answered or dropped.
    pub struct Open(pub i64);

    impl Drop for Open {
        fn drop(&mut self) {
            let gone = table().remove(&self.0);
            drop(gone);
        }
    }

    /// Registers a run: its id, the receiver of its envelope, and the guard that forgets it.
    pub fn open(
        ctx: RequestContext,
        over: CancellationToken,
        answered: Arc<AtomicBool>,
    ) -> (Open, oneshot::Receiver<String>) {
        let (tx, rx) = oneshot::channel();
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        table().insert(id, Run { tx, ctx, over, answered });
        (Open(id), rx)
    }
}

/// Ends a handler's run with its envelope (`{"ok": tagged}` or `{"error": ...}`); false when
/// the run is over already (its request was cancelled, or it was completed before).
#[napi]
pub fn complete_call(call_id: i64, envelope_json: String) -> bool {
    let Some(run) = runs::table().remove(&call_id) else { return false };
    run.tx.send(envelope_json).is_ok()
}

/// The context of a handler's run in flight (`null` once it is over).
#[napi]
pub fn request_context(call_id: i64) -> Option<RequestCtx> {
    let table = runs::table();
    let run = table.get(&call_id)?;
    Some(RequestCtx::new(run.ctx.clone(), run.over.clone(), run.answered.clone()))
}

/// A JavaScript handler, usable as any of the core's handler traits through [`mcpaxle::server::JsonInput`].
#[derive(Clone)]
pub struct JsHandler {
    f: Arc<HandlerFn>,
}

impl JsHandler {
    /// Wraps a JavaScript handler.
    pub fn new(f: HandlerFn) -> Self {
        JsHandler { f: Arc::new(f) }
    }

    fn start(&self, input: &Value, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        let f = self.f.clone();
        let input = input.to_string();
        Box::pin(async move {
            // `over` fires when this run ends, answered or dropped (a dropped run is a cancelled
            // request: the exchange drops the handler's future before firing its token).
            let over = CancellationToken::new();
            let answered = Arc::new(AtomicBool::new(false));
            let _over = over.clone().drop_guard();
            let trace = ctx.trace_context().map(|t| Value::Object(t.to_map()).to_string());
            let (open, answer) = runs::open(ctx, over, answered.clone());
            let args = FnArgs::from((open.0, input, trace));
            let status = f.call(args, ThreadsafeFunctionCallMode::NonBlocking);
            if status != Status::Ok {
                return Err(errors::from_napi(napi::Error::from_status(status)));
            }
            let text = answer
                .await
                .map_err(|_| mcpaxle::Error::internal("the JavaScript handler's run ended without an answer"))?;
            answered.store(true, Ordering::Release);
            drop(open);
            Returned::from_tagged(errors::open_envelope(&text)?)
        })
    }
}

impl JsonHandler for JsHandler {
    fn run(&self, input: &Value, ctx: RequestContext) -> BoxFuture<'static, mcpaxle::Result<Returned>> {
        self.start(input, ctx)
    }
}
