//! Subscriptions as streams of notifications.
//!
//! Modern: one long-lived `subscriptions/listen` request. Its acknowledgment comes first; then
//! the notifications the filter asked for (on HTTP its SSE response, on stdio the
//! notifications carrying its id as `subscriptionId`). Closing the stream cancels the request
//! (the HTTP stream is closed, or `notifications/cancelled` is sent on stdio); the server ends
//! it gracefully with the request's response (or, on stdio, `notifications/cancelled`).
//!
//! Legacy: `resources/subscribe` for each resource URI, and the session's change
//! notifications (HTTP GET stream, or stdio) filtered by the same filter; closing sends
//! `resources/unsubscribe`.

use super::conn::Inner;
use super::options::CallOptions;
use super::transport::{Inbound, connection_lost};
use crate::era::Era;
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{Notification, Outcome};
use crate::schema::{ServerCapabilities, SubscriptionFilter};
use crate::transport::http::client::GetStream;
use futures_util::Stream;
use serde_json::{Map, Value, json};
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

/// An open subscription: a stream of the server's change notifications
/// (`notifications/tools/list_changed`, `notifications/prompts/list_changed`,
/// `notifications/resources/list_changed`, `notifications/resources/updated`).
///
/// The stream ends (`None`) when the server closes the subscription gracefully, and yields an
/// error first when the connection drops. [`Subscription::close`] (or dropping it) ends it from
/// this side.
///
/// ```no_run
/// # async fn run(client: mcpaxle::client::Client) -> mcpaxle::Result<()> {
/// use mcpaxle::schema::SubscriptionFilter;
/// let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
/// let mut sub = client.subscribe(filter).await?;
/// while let Some(n) = sub.next().await {
///     println!("{}", n?.method);
/// }
/// # Ok(()) }
/// ```
pub struct Subscription {
    rx: mpsc::UnboundedReceiver<Result<Notification>>,
    acknowledged: SubscriptionFilter,
    task: Option<JoinHandle<()>>,
    on_close: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("acknowledged", &self.acknowledged).finish_non_exhaustive()
    }
}

impl Subscription {
    /// The notification types the server agreed to send (its acknowledgment).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification; `None` once the subscription ended.
    pub async fn next(&mut self) -> Option<Result<Notification>> {
        self.rx.recv().await
    }

    /// Ends the subscription. Notifications already received can still be read.
    pub fn close(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
        if let Some(f) = self.on_close.take() {
            f();
        }
        self.rx.close();
    }
}

impl Stream for Subscription {
    type Item = Result<Notification>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().rx.poll_recv(cx)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

pub(crate) async fn subscribe(inner: &Arc<Inner>, filter: SubscriptionFilter) -> Result<Subscription> {
    match inner.state().era {
        Era::Modern => listen(inner, filter).await,
        Era::Legacy => legacy(inner, filter).await,
    }
}

async fn listen(inner: &Arc<Inner>, filter: SubscriptionFilter) -> Result<Subscription> {
    let mut params = Map::new();
    params.insert("notifications".into(), serde_json::to_value(&filter)?);
    let opts = CallOptions::default();
    let out = inner.outbound("subscriptions/listen", params, &opts);
    let timeout = inner.options.request_timeout;
    let deadline = tokio::time::Instant::now() + timeout;
    let timed_out = || {
        Error::new(
            ErrorKind::Timeout,
            format!("subscriptions/listen was not acknowledged within {} ms", timeout.as_millis()),
        )
    };
    let mut pending = tokio::select! {
        _ = tokio::time::sleep_until(deadline) => return Err(timed_out()),
        p = inner.wire.send(out) => p?,
    };
    let acknowledged = loop {
        let m = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return Err(timed_out()),
            m = pending.recv() => m,
        };
        match m {
            Some(Ok(Inbound::Notification(n))) if n.method == "notifications/subscriptions/acknowledged" => {
                let ack = n.params.as_ref().and_then(|p| p.get("notifications")).cloned().unwrap_or_else(|| json!({}));
                break serde_json::from_value::<SubscriptionFilter>(ack).unwrap_or_default();
            }
            Some(Ok(Inbound::Notification(n))) => inner.on_notification(&n, None),
            Some(Ok(Inbound::Request(r))) => inner.spawn_answer(r),
            Some(Ok(Inbound::Response(r))) => {
                return match r.outcome {
                    Outcome::Error(e) => Err(Error::remote(e)),
                    Outcome::Result(_) => Err(Error::new(
                        ErrorKind::Transport,
                        "the server ended the subscription before acknowledging it",
                    )),
                };
            }
            Some(Err(e)) => return Err(e),
            None => return Err(connection_lost("the subscription stream ended before its acknowledgment")),
        }
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let weak = Arc::downgrade(inner);
    let task = tokio::spawn(async move {
        loop {
            match pending.recv().await {
                Some(Ok(Inbound::Notification(n))) => {
                    if n.method == "notifications/cancelled" {
                        return;
                    }
                    if let Some(inner) = weak.upgrade() {
                        inner.on_notification(&n, None);
                    }
                    if tx.send(Ok(n)).is_err() {
                        return;
                    }
                }
                Some(Ok(Inbound::Request(r))) => {
                    if let Some(inner) = weak.upgrade() {
                        inner.spawn_answer(r);
                    }
                }
                Some(Ok(Inbound::Response(r))) => {
                    if let Outcome::Error(e) = r.outcome {
                        let _ = tx.send(Err(Error::remote(e)));
                    }
                    return;
                }
                Some(Err(e)) => {
                    let _ = tx.send(Err(e));
                    return;
                }
                None => {
                    let _ = tx.send(Err(connection_lost("the subscription stream ended")));
                    return;
                }
            }
        }
    });
    Ok(Subscription { rx, acknowledged, task: Some(task), on_close: None })
}

/// What a legacy server agreed to send: what it declared in `initialize`.
fn legacy_ack(filter: &SubscriptionFilter, caps: &ServerCapabilities) -> SubscriptionFilter {
    let yes = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed).unwrap_or(false);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed).unwrap_or(false);
    let resources = caps.resources.as_ref().and_then(|r| r.list_changed).unwrap_or(false);
    let subscribe = caps.resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false);
    SubscriptionFilter {
        tools_list_changed: yes(filter.tools_list_changed, tools),
        prompts_list_changed: yes(filter.prompts_list_changed, prompts),
        resources_list_changed: yes(filter.resources_list_changed, resources),
        resource_subscriptions: filter.resource_subscriptions.clone().filter(|u| subscribe && !u.is_empty()),
        // Tasks are a 2026-07-28 extension: a legacy server follows none.
        task_ids: None,
    }
}

fn accepts(filter: &SubscriptionFilter, n: &Notification) -> bool {
    match n.method.as_str() {
        "notifications/tools/list_changed" => filter.tools_list_changed == Some(true),
        "notifications/prompts/list_changed" => filter.prompts_list_changed == Some(true),
        "notifications/resources/list_changed" => filter.resources_list_changed == Some(true),
        "notifications/resources/updated" => {
            let uri = n.params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str).unwrap_or_default();
            filter
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri || uri.starts_with(u.as_str())))
        }
        _ => false,
    }
}

async fn legacy(inner: &Arc<Inner>, filter: SubscriptionFilter) -> Result<Subscription> {
    let st = inner.state();
    inner
        .wire
        .start_listening(
            st.version.clone(),
            GetStream::Answered,
            inner.options.request_timeout.min(std::time::Duration::from_secs(5)),
        )
        .await;
    let mut events = inner.events.subscribe();
    let acknowledged = legacy_ack(&filter, &st.capabilities);
    let uris = acknowledged.resource_subscriptions.clone().unwrap_or_default();
    for uri in &uris {
        let mut p = Map::new();
        p.insert("uri".into(), json!(uri));
        inner.request("resources/subscribe", p, &CallOptions::default()).await?;
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let ack = acknowledged.clone();
    let task = tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(n) if accepts(&ack, &n) => {
                    if tx.send(Ok(n)).is_err() {
                        return;
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let weak: Weak<Inner> = Arc::downgrade(inner);
    let on_close: Box<dyn FnOnce() + Send + Sync> = Box::new(move || {
        let (Some(inner), Ok(rt)) = (weak.upgrade(), tokio::runtime::Handle::try_current()) else { return };
        if uris.is_empty() {
            return;
        }
        rt.spawn(async move {
            for uri in uris {
                let mut p = Map::new();
                p.insert("uri".into(), json!(uri));
                let _ = inner.request("resources/unsubscribe", p, &CallOptions::default()).await;
            }
        });
    });
    Ok(Subscription { rx, acknowledged, task: Some(task), on_close: Some(on_close) })
}
