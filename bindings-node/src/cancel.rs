//! [`CancelToken`]: what an `AbortSignal` becomes on the Rust side. The JavaScript layer makes
//! one per call that has a signal and cancels it on `abort`; the core then drops the call's
//! exchange (the HTTP stream is closed, or `notifications/cancelled` is sent on stdio) and the
//! call rejects with the kind `cancelled`. Calls of the core that take no token are raced against
//! it by [`until_cancelled`], which drops them to the same effect.

use mcpaxle::ErrorKind;
use napi_derive::napi;
use std::future::Future;
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

/// Runs `fut` until it completes or `cancel` fires. Cancelling drops `fut`, and dropping a
/// call of the core cancels it on the wire the way its own token does (the HTTP stream is
/// closed, `notifications/cancelled` is sent on stdio and in a legacy HTTP session), so the
/// core's methods that take no [`CallOptions`](mcpaxle::client::CallOptions) (`discover`, the
/// lists, `complete`, `subscribe`) are cancellable too. `method` names the call in the
/// `cancelled` error.
pub async fn until_cancelled<T>(
    cancel: Option<CancellationToken>,
    method: &str,
    fut: impl Future<Output = mcpaxle::Result<T>>,
) -> mcpaxle::Result<T> {
    let Some(cancel) = cancel else { return fut.await };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(mcpaxle::Error::new(ErrorKind::Cancelled, format!("{method} was cancelled"))),
        r = fut => r,
    }
}
