//! The core's [`Middleware`] for a JavaScript function. The JavaScript layer wraps the user's
//! `async (req, next) => result` as `(requestJson, next) => Promise<envelopeJson>`, where
//! `next` is a [`MiddlewareNext`] whose `run()` runs the rest of the core's chain: the
//! request's Rust future waits for either the function's envelope or a `run()`.

use crate::callbacks;
use crate::runtime;
use mcpaxle::server::{BoxFuture, ItemInfo, Middleware, Next, Reply, RequestInfo, VisibilityFilter};
use mcpaxle::{Error, ErrorKind};
use napi::bindgen_prelude::{FnArgs, PromiseRaw};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{Env, Status};
use napi_derive::napi;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// `(requestJson, next) => Promise<envelopeJson>`.
pub type MiddlewareFn = ThreadsafeFunction<
    FnArgs<(String, MiddlewareNext)>,
    napi::bindgen_prelude::Promise<String>,
    FnArgs<(String, MiddlewareNext)>,
    Status,
    false,
    true,
>;

type Ask = oneshot::Sender<mcpaxle::Result<Reply>>;

/// A JavaScript middleware.
pub struct JsMiddleware {
    f: Arc<MiddlewareFn>,
}

impl JsMiddleware {
    pub fn new(f: MiddlewareFn) -> Self {
        JsMiddleware { f: Arc::new(f) }
    }
}

impl Middleware for JsMiddleware {
    fn handle<'a>(&'a self, req: &'a RequestInfo, next: Next<'a>) -> BoxFuture<'a, mcpaxle::Result<Reply>> {
        Box::pin(async move {
            let (tx, mut asks) = mpsc::unbounded_channel::<Ask>();
            let js_next = MiddlewareNext { asks: tx };
            let js = callbacks::answer(&self.f, FnArgs::from((req.to_json().to_string(), js_next)));
            tokio::pin!(js);
            loop {
                tokio::select! {
                    outcome = &mut js => return outcome.map(Reply::from),
                    Some(reply) = asks.recv() => {
                        let _ = reply.send(next.run().await);
                    }
                }
            }
        })
    }
}

/// A middleware's `next`: `run()` runs the rest of the chain, then the method.
#[napi]
pub struct MiddlewareNext {
    asks: mpsc::UnboundedSender<Ask>,
}

#[napi]
impl MiddlewareNext {
    /// A `Promise` of the rest of the chain's outcome as an envelope: `{"ok": result}` or
    /// `{"error": ...}` (the request's error, which the middleware may rethrow).
    #[napi]
    pub fn run<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.asks.send(reply).is_ok();
        runtime::promise(env, async move {
            let outcome = if sent {
                answer.await.unwrap_or_else(|_| {
                    Err(Error::new(ErrorKind::Cancelled, "Cancelled: the request ended before next() answered"))
                })
            } else {
                Err(Error::usage("next() was called after its middleware returned"))
            };
            Ok(match outcome {
                // A result kept as JSON text (a page of a list) is not read into a value here.
                Ok(reply) => format!(r#"{{"ok":{}}}"#, reply.to_json()),
                Err(e) => json!({ "error": crate::errors::to_json(&e) }).to_string(),
            })
        })
    }
}

/// `(askedJson) => Promise<envelopeJson>`: a visibility predicate, asked with `{"request",
/// "items"}` and answering one boolean per item.
pub type VisibilityFn = ThreadsafeFunction<String, napi::bindgen_prelude::Promise<String>, String, Status, false, true>;

/// A JavaScript visibility predicate (the core's [`VisibilityFilter`]).
pub struct JsVisibility {
    f: Arc<VisibilityFn>,
}

impl JsVisibility {
    pub fn new(f: VisibilityFn) -> Self {
        JsVisibility { f: Arc::new(f) }
    }
}

impl VisibilityFilter for JsVisibility {
    fn visible<'a>(&'a self, who: &'a RequestInfo, items: &'a [ItemInfo]) -> BoxFuture<'a, mcpaxle::Result<Vec<bool>>> {
        Box::pin(async move {
            let asked =
                json!({ "request": who.to_json(), "items": items.iter().map(ItemInfo::to_json).collect::<Vec<_>>() });
            let answer = callbacks::answer(&self.f, asked.to_string()).await?;
            serde_json::from_value(answer)
                .map_err(|_| Error::internal("Internal error: the visibility predicate must answer true or false"))
        })
    }
}
