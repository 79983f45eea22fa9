//! What the client core asks of a transport: send a request and receive the messages that
//! belong to it (its notifications, a legacy server's requests, then its response); send a
//! notification or a response; hand over everything not tied to a request.

use crate::error::{Error, ErrorKind, Result};
use crate::jsonrpc::{Notification, Request, Response};
use serde_json::Value;
use tokio::sync::mpsc;

/// A message from the server.
#[derive(Debug, Clone)]
pub(crate) enum Inbound {
    /// A notification.
    Notification(Notification),
    /// A request of a legacy server (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`, `ping`).
    Request(Request),
    /// The response to a request.
    Response(Response),
}

/// A request to send, with what the transport needs besides the body.
#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    pub request: Request,
    /// `MCP-Protocol-Version` (HTTP), when the era has one for this request.
    pub protocol_version: Option<String>,
    /// More HTTP headers: `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (ignored on stdio).
    pub headers: Vec<(String, String)>,
    /// The request's `progressToken`, so that a shared channel can route its progress.
    pub progress_token: Option<Value>,
    /// Legacy session: a response stream may be resumed with GET and `Last-Event-ID`.
    pub resumable: bool,
    /// Whether dropping the request before its response tells the server (stdio:
    /// `notifications/cancelled`). Off for the era probe, which a legacy server may not know.
    pub cancel_on_drop: bool,
}

/// One request in flight. Dropping it before its response cancels the request: the HTTP
/// response stream is closed, or `notifications/cancelled` is sent on stdio.
pub(crate) struct Pending {
    pub rx: mpsc::UnboundedReceiver<Result<Inbound>>,
    /// The HTTP status of the response (`None` on stdio).
    pub http_status: Option<u16>,
    pub _guard: Box<dyn Send + Sync>,
}

impl Pending {
    /// The next message, or `None` when the transport will send no more for this request.
    pub async fn recv(&mut self) -> Option<Result<Inbound>> {
        self.rx.recv().await
    }
}

/// The error every pending request gets when the connection goes away.
pub(crate) fn connection_lost(why: &str) -> Error {
    Error::new(ErrorKind::Transport, format!("the connection to the MCP server was lost: {why}"))
}
