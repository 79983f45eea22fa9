//! [`Exchange`]: the outgoing side of one request: the request-scoped notifications it
//! produces, then its final response. Every transport drives one the same way; dropping it
//! cancels the request (its handler future is dropped and its cancellation token fires).

use crate::jsonrpc::{Notification, Request, Response};
use futures_util::Stream;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFutureOwned};

/// One outgoing message of an [`Exchange`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A notification related to the request (progress, log, subscription event).
    Notification(Notification),
    /// A request to the client (legacy 2025-11-25 sessions only: elicitation, sampling,
    /// roots asked by a handler); its response comes back through the session.
    Request(Request),
    /// The final response; nothing follows it.
    Response(Response),
    /// The handler asked to end the response stream now and have the client reconnect after
    /// `retry` ([`RequestContext::close_stream`](super::RequestContext::close_stream)). Only
    /// legacy Streamable HTTP sessions act on it; other transports skip it.
    CloseStream {
        /// How long the client should wait before reconnecting.
        retry: std::time::Duration,
    },
}

/// Resolves to the final response, or to `None` for a stream that ends without one (a
/// legacy session's GET stream, a request the client cancelled).
type ResponseFuture = Pin<Box<dyn Future<Output = Option<Response>> + Send>>;

/// The stream of outgoing messages for one request.
pub struct Exchange {
    state: State,
    long_lived: bool,
}

enum State {
    Ready(Option<Response>),
    Running {
        fut: Option<ResponseFuture>,
        rx: UnboundedReceiver<Outgoing>,
        done: Option<Response>,
        abort: Pin<Box<WaitForCancellationFutureOwned>>,
        _cancel_on_drop: DropGuard,
    },
}

impl Exchange {
    /// An exchange that is answered at once.
    pub(crate) fn ready(response: Response) -> Self {
        Exchange { state: State::Ready(Some(response)), long_lived: false }
    }

    /// An exchange driven by a future, with notifications arriving on `rx`. Cancelling
    /// `token` ends the exchange at once without a response (the future is dropped);
    /// dropping the exchange cancels `token`.
    pub(crate) fn running(fut: ResponseFuture, rx: UnboundedReceiver<Outgoing>, token: CancellationToken, long_lived: bool) -> Self {
        let abort = Box::pin(token.clone().cancelled_owned());
        Exchange { state: State::Running { fut: Some(fut), rx, done: None, abort, _cancel_on_drop: token.drop_guard() }, long_lived }
    }

    /// Whether this is a long-lived stream (`subscriptions/listen`): transports send
    /// keep-alives on it.
    pub fn is_long_lived(&self) -> bool {
        self.long_lived
    }

    /// The response, if the exchange was answered without running anything (validation
    /// errors and the like).
    pub fn immediate(&self) -> Option<&Response> {
        match &self.state {
            State::Ready(r) => r.as_ref(),
            State::Running { .. } => None,
        }
    }
}

impl Stream for Exchange {
    type Item = Outgoing;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Outgoing>> {
        let this = self.get_mut();
        match &mut this.state {
            State::Ready(r) => Poll::Ready(r.take().map(Outgoing::Response)),
            State::Running { fut, rx, done, abort, .. } => {
                if fut.is_some() && abort.as_mut().poll(cx).is_ready() {
                    this.state = State::Ready(None);
                    return Poll::Ready(None);
                }
                if let Some(f) = fut {
                    if let Poll::Ready(Some(o)) = rx.poll_recv(cx) {
                        return Poll::Ready(Some(o));
                    }
                    match f.as_mut().poll(cx) {
                        Poll::Ready(resp) => {
                            *fut = None;
                            *done = resp;
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }
                // The handler finished: flush what it queued, then the response.
                if let Ok(o) = rx.try_recv() {
                    return Poll::Ready(Some(o));
                }
                Poll::Ready(done.take().map(Outgoing::Response))
            }
        }
    }
}
