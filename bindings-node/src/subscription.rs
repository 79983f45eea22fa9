//! Subscriptions: a task on the runtime reads the core's [`Subscription`] and delivers the
//! notifications to JavaScript in batches (whatever arrived together goes in one call) through a
//! threadsafe function that holds a reference on the event loop while the subscription is open.
//! [`NativeSubscription::close`] (or the end of the stream) ends the task, which drops the
//! threadsafe function: a closed subscription never keeps the process alive.
//!
//! Each delivery is JSON: `{"notifications": [...]}`, and last `{"notifications": [...],
//! "end": true}` when the server ended the subscription, or with `"error": {...}` when the
//! connection failed.

use crate::callbacks::StrongEventFn;
use crate::errors;
use crate::runtime;
use futures_util::FutureExt;
use mcpaxle::client::Subscription;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// An open subscription (the JavaScript `Subscription` wraps it).
#[napi]
pub struct NativeSubscription {
    acknowledged: String,
    stop: CancellationToken,
}

#[napi]
impl NativeSubscription {
    /// The notification types the server agreed to send (a `SubscriptionFilter` as JSON).
    #[napi(getter)]
    pub fn acknowledged(&self) -> String {
        self.acknowledged.clone()
    }

    /// Ends the subscription; nothing is delivered after this returns.
    #[napi]
    pub fn close(&self) {
        self.stop.cancel();
    }
}

impl Drop for NativeSubscription {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl NativeSubscription {
    /// Starts delivering `sub` to `deliver`.
    pub fn start(sub: Subscription, deliver: StrongEventFn) -> mcpaxle::Result<NativeSubscription> {
        let acknowledged = errors::to_text(sub.acknowledged())?;
        let stop = CancellationToken::new();
        runtime::spawn(pump(sub, deliver, stop.clone())).map_err(|e| mcpaxle::Error::internal(e.reason))?;
        Ok(NativeSubscription { acknowledged, stop })
    }
}

async fn pump(mut sub: Subscription, deliver: StrongEventFn, stop: CancellationToken) {
    loop {
        let first = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            n = sub.next() => n,
        };
        let mut batch = Vec::new();
        let mut end: Option<Value> = None;
        let mut next = Some(first);
        while let Some(item) = next {
            match item {
                None => end = Some(json!(true)),
                Some(Err(e)) => end = Some(errors::to_json(&e)),
                Some(Ok(n)) => batch.push(n),
            }
            if end.is_some() {
                break;
            }
            // Whatever has already arrived goes in the same delivery.
            next = sub.next().now_or_never();
        }
        if stop.is_cancelled() {
            break;
        }
        let mut message = json!({ "notifications": batch });
        match end {
            Some(Value::Bool(true)) => message["end"] = json!(true),
            Some(e) => message["error"] = e,
            None => {}
        }
        deliver.call(message.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
        if message.get("end").is_some() || message.get("error").is_some() {
            break;
        }
    }
    sub.close();
    drop(deliver);
}
