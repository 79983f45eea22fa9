//! What both server transports share: the bytes of an outgoing message and the shutdown
//! signal.

use crate::json_text;
use crate::server::Outgoing;

/// Serializes an outgoing message to compact JSON; `None` for a signal that is not a message
/// ([`Outgoing::CloseStream`]).
pub(crate) fn outgoing_bytes(o: &Outgoing) -> Option<Vec<u8>> {
    match o {
        Outgoing::Notification(n) => serde_json::to_vec(n).ok(),
        Outgoing::Request(r) => serde_json::to_vec(r).ok(),
        Outgoing::Response(r) => {
            let mut out = Vec::new();
            json_text::write_response(&mut out, r).ok().map(|()| out)
        }
        Outgoing::CloseStream { .. } => None,
    }
}

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
