//! A `tools/call` that runs as a task: the task is created (before the handler runs, or when
//! it calls `start_task`), the call is answered with its `CreateTaskResult`, and the handler
//! goes on in the background until it ends, is cancelled or its TTL passes.

use super::link::{CallLink, Ending, Linked};
use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{RequestId, Response};
use crate::server::context::{RequestContext, Round};
use crate::server::dispatch::{ServedIn, TransportContext};
use crate::server::exchange::{Exchange, outgoing_channel};
use crate::server::registry::ToolEntry;
use crate::server::request_meta::RequestMeta;
use crate::server::seal::ParamsDigest;
use crate::server::{BoxFuture, Server};
use crate::telemetry::in_trace;
use futures_util::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Cancels the handler of a call that is not a task (yet) when its exchange goes away: the
/// client stopped waiting for it. A task outlives its `tools/call`.
struct UntilTask(Arc<CallLink>);

impl Drop for UntilTask {
    fn drop(&mut self) {
        if self.0.running().is_none() {
            self.0.cancel.cancel();
        }
    }
}

impl Server {
    /// Serves a `tools/call` of a tool that may run as a task, from a client that declared
    /// the extension. `tool_future` is the call's run of the handler.
    #[allow(clippy::too_many_arguments)] // internal: every part of a request, named
    pub(crate) fn call_tool_as_task(
        &self,
        id: RequestId,
        meta: RequestMeta,
        tc: &TransportContext,
        tool: Arc<ToolEntry>,
        arguments: Arc<Value>,
        mrtr: (ParamsDigest, Round),
        era: ServedIn,
    ) -> Exchange {
        let (tx, rx) = outgoing_channel();
        let abort = CancellationToken::new();
        let (created_tx, created_rx) = oneshot::channel();
        let caller = (tc.principal.clone(), meta.trace.as_ref().map(|t| t.traceparent.clone()));
        let link = Arc::new(CallLink::new(self.inner.tasks.clone(), caller, created_tx));
        let (digest, round) = mrtr;
        let deferred = tool.defer_task;
        let principal = tc.principal.clone();
        // Before the task exists the handler may still send on the response stream (progress
        // of the MRTR rounds of a deferred creation); a task has no stream.
        let notify = if deferred { Some(tx) } else { None };
        let ctx = RequestContext::new(
            id.clone(),
            "tools/call".to_owned(),
            Arc::new(meta),
            principal.clone(),
            (tc.http_headers.clone(), tc.token.clone()),
            notify,
            link.cancel.clone(),
            round,
            None,
        )
        .with_task(Arc::new(Linked(link.clone())));
        let server = self.clone();
        let fut = async move {
            let _until_task = UntilTask(link.clone());
            if !deferred {
                if let Err(e) = link.create().await {
                    return Some(Response::error(Some(id), e.to_error_object()));
                }
            }
            let (done_tx, done_rx) = oneshot::channel();
            let body = server.tool_future(tool, arguments, era, ctx.clone());
            tokio::spawn(in_trace(ctx.trace_context(), drive(link.clone(), body, done_tx)));
            let (mut created_rx, mut done_rx) = (created_rx, done_rx);
            let outcome = tokio::select! {
                biased;
                Ok(created) = &mut created_rx => {
                    return Some(Response::result(id, server.finish_task_result(created)));
                }
                done = &mut done_rx => done.ok(),
            };
            // The handler ended before it became a task: an ordinary call's answer.
            let outcome = outcome?;
            Some(match outcome {
                Ok(result) => Response::result(id, result),
                Err(e) if e.kind() == ErrorKind::InputRequired => {
                    match server.input_required("tools/call", digest, principal, ctx.take_round()) {
                        Ok(result) => Response::result(id, result),
                        Err(e) => Response::error(Some(id), e.to_error_object()),
                    }
                }
                Err(e) => Response::error(Some(id), e.to_error_object()),
            })
        };
        Exchange::running(fut, rx, abort, false)
    }
}

/// Runs the handler to its end, cancellation or panic: a task records how it ended; a call
/// that never became one hands its outcome to the exchange (nothing, once cancelled).
async fn drive(link: Arc<CallLink>, body: BoxFuture<'static, Result<Value>>, done: oneshot::Sender<Result<Value>>) {
    let cancel = link.cancel.clone();
    // Biased: a task cancelled while its handler returns ends cancelled, as the client asked.
    let outcome = tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = AssertUnwindSafe(body).catch_unwind() => Some(r.unwrap_or_else(|_| {
            tracing::error!("a tool handler running as a task panicked");
            Err(Error::new(ErrorKind::Panic, "Internal error: the tools/call handler panicked"))
        })),
    };
    if link.running().is_none() {
        if let Some(outcome) = outcome {
            let _ = done.send(outcome);
        }
        return;
    }
    let ending = match outcome {
        None => Ending::Cancelled,
        Some(Ok(result)) => Ending::Completed(result),
        Some(Err(e)) if e.kind() == ErrorKind::InputRequired => Ending::Failed(Error::internal(
            "Internal error: the tools/call handler asked for input as an MRTR round inside a task",
        )),
        Some(Err(e)) if e.kind() == ErrorKind::Cancelled && cancel.is_cancelled() => Ending::Cancelled,
        Some(Err(e)) => Ending::Failed(e),
    };
    link.end(ending).await;
}
