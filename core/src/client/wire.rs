//! The transport a client runs on ([`Wire`]): Streamable HTTP or a pair of byte streams
//! (a child's stdio), behind one interface.

use super::transport::{Outbound, Pending};
use crate::error::Result;
use crate::jsonrpc::{Notification, Response};
use crate::transport::http::client::{GetStream, HttpTransport};
use crate::transport::stdio::client::LineTransport;

/// The transports a client can run on.
pub(crate) enum Wire {
    Http(HttpTransport),
    Lines(Box<LineTransport>),
}

impl Wire {
    pub fn is_http(&self) -> bool {
        matches!(self, Wire::Http(_))
    }

    pub async fn send(&self, out: Outbound) -> Result<Pending> {
        match self {
            Wire::Http(t) => t.send(out).await,
            Wire::Lines(t) => t.send(out),
        }
    }

    /// Sends a notification (legacy `notifications/initialized`, `notifications/cancelled`).
    pub async fn notify(&self, n: Notification, protocol_version: Option<String>) -> Result<()> {
        match self {
            Wire::Http(t) => t.post_message(serde_json::to_vec(&n)?, protocol_version).await,
            Wire::Lines(t) => t.write(&n),
        }
    }

    /// Answers a request of a legacy server.
    pub async fn respond(&self, r: Response, protocol_version: Option<String>) -> Result<()> {
        match self {
            Wire::Http(t) => t.post_message(serde_json::to_vec(&r)?, protocol_version).await,
            Wire::Lines(t) => t.write(&r),
        }
    }

    /// Legacy HTTP: starts the GET stream of the session (unless running) and waits (at most
    /// `wait`) until it has come as far as `until` (no-op elsewhere).
    pub async fn start_listening(&self, protocol_version: String, until: GetStream, wait: std::time::Duration) {
        if let Wire::Http(t) = self {
            t.start_get_stream(protocol_version, until, wait).await;
        }
    }

    pub async fn close(&self) {
        match self {
            Wire::Http(t) => t.close().await,
            Wire::Lines(t) => t.close().await,
        }
    }

    pub fn process_id(&self) -> Option<u32> {
        match self {
            Wire::Http(_) => None,
            Wire::Lines(t) => t.process_id(),
        }
    }
}
