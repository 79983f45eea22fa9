//! [`CancelToken`]: what an `AbortSignal` becomes on the Rust side. The JavaScript layer makes
//! one per call that has a signal and cancels it on `abort`; the core then drops the call's
//! exchange (the HTTP stream is closed, or `notifications/cancelled` is sent on stdio) and the
//! call rejects with code `CANCELLED`.

use napi_derive::napi;
use tokio_util::sync::CancellationToken;

/// A cancellation token shared between JavaScript and a call in flight.
#[napi]
#[derive(Default)]
pub struct CancelToken {
    token: CancellationToken,
}

#[napi]
impl CancelToken {
    /// A token not cancelled yet.
    #[napi(constructor)]
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Cancels every call holding this token.
    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether `cancel()` was called.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

impl CancelToken {
    /// The core's token.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }
}
