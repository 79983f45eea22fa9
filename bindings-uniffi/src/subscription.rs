//! Subscriptions (`subscriptions/listen`, or `resources/subscribe` in a legacy session) as a
//! pull: `next()` suspends until the next notification. The Kotlin layer wraps it in a `Flow`.

use crate::errors::{McpError, to_text};
use crate::runtime;
use mcpaxle::client::Subscription;
use std::sync::Arc;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// An open subscription.
#[derive(uniffi::Object)]
pub struct McpSubscription {
    acknowledged: String,
    sub: Arc<Mutex<Subscription>>,
    /// Cancelled by `unsubscribe()`: a `next()` waiting holds the lock, and gives it up at once.
    stop: CancellationToken,
}

impl McpSubscription {
    pub(crate) fn new(sub: Subscription) -> mcpaxle::Result<McpSubscription> {
        Ok(McpSubscription {
            acknowledged: to_text(sub.acknowledged())?,
            sub: Arc::new(Mutex::new(sub)),
            stop: CancellationToken::new(),
        })
    }
}

#[uniffi::export]
impl McpSubscription {
    /// The notification types the server agreed to send (a `SubscriptionFilter` as JSON).
    pub fn acknowledged(&self) -> String {
        self.acknowledged.clone()
    }

    /// The next notification as JSON (`{"method", "params"}`), or none once the server ended
    /// the subscription or it was closed; a lost connection fails with its error.
    pub async fn next(&self) -> Result<Option<String>, McpError> {
        let sub = self.sub.clone();
        let stop = self.stop.clone();
        runtime::run(async move {
            let mut sub = tokio::select! {
                _ = stop.cancelled() => return Ok(None),
                s = sub.lock() => s,
            };
            let next = tokio::select! {
                _ = stop.cancelled() => return Ok(None),
                n = sub.next() => n,
            };
            match next {
                None => Ok(None),
                Some(Err(e)) => Err(e),
                Some(Ok(n)) => to_text(&n).map(Some),
            }
        })
        .await
    }

    /// Ends the subscription; `next()` returns none afterwards. (Not `close`: the generated
    /// class is an `AutoCloseable`, whose `close()` frees the native handle.)
    pub async fn unsubscribe(&self) -> Result<(), McpError> {
        let sub = self.sub.clone();
        self.stop.cancel();
        runtime::run(async move {
            sub.lock().await.close();
            Ok(())
        })
        .await
    }
}
