//! The application's callbacks (Kotlin or Swift objects implementing these traits) as the
//! core's callback types.
//!
//! The answering callbacks ([`InputHandler`], [`Authorizer`], [`TokenStore`],
//! [`BearerVerifier`]) are async (Kotlin `suspend`, Swift
//! `async`): the core awaits them without holding a thread. [`NotificationListener`] is called
//! on a thread of the runtime for each progress or log notification, in order: it should return
//! quickly (hand the value to a channel or a coroutine).

use crate::errors::McpError;
use mcpaxle::Error;
use mcpaxle::client::{AuthorizationHandler, LogCallback, ProgressCallback};
use serde_json::Value;
use std::sync::Arc;

/// Answers the server's input requests: `kind` is `elicitation` (params of
/// `elicitation/create`), `sampling` (`sampling/createMessage`) or `roots` (`roots/list`), and
/// the answer is the result as JSON (an `ElicitResult`, `CreateMessageResult`,
/// `ListRootsResult`). Throwing an `McpError` fails the request with it.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait InputHandler: Send + Sync {
    /// The answer to one input request, as JSON.
    async fn answer(&self, kind: String, params_json: String) -> Result<String, McpError>;
}

/// Receives notifications as JSON: the params of `notifications/progress` or
/// `notifications/message`.
#[uniffi::export(with_foreign)]
pub trait NotificationListener: Send + Sync {
    /// One notification's params.
    fn receive(&self, json: String);
}

/// OAuth's user-agent step: show `authorization_url` to the user (open a browser) and return
/// the URL the authorization server redirected back to. Throwing fails the request that needed
/// the authorization.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait Authorizer: Send + Sync {
    /// The redirect URL, with the authorization response in its query.
    async fn authorize(&self, authorization_url: String) -> Result<String, McpError>;
}

/// A token store of the application's own (the Android Keystore, the Apple keychain, a
/// database): each of the core's store operations as JSON, `{"op": "load", "key": KEY}`
/// answered with the stored token or `null`, `{"op": "save", "key": KEY, "token": TOKEN}` and
/// `{"op": "clear", "key": KEY}` (answers ignored); `KEY` is `{issuer, resource, client}`,
/// `TOKEN` `{accessToken, expiresAt, refreshToken, scopes, registration}`, as the file store
/// writes them. Throwing fails the request that needed the token.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait TokenStore: Send + Sync {
    /// One store operation; the answer as JSON.
    async fn call(&self, request_json: String) -> Result<String, McpError>;
}

/// Checks a bearer token for a server's `auth` HTTP option: the answer is JSON, `{"subject",
/// "scopes", "claims"?, "expiresAt"?}` for a valid token (the core reads it:
/// `TokenInfo::from_answer`), `null` for an invalid one (the request gets `401`). Throwing, or
/// an answer the core cannot read, gets the request `503`.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait BearerVerifier: Send + Sync {
    /// What `token` grants, as JSON, or `null`.
    async fn verify(&self, token: String) -> Result<String, McpError>;
}

/// The core's token verifier, answered by the application's.
pub(crate) fn bearer_verifier(f: Arc<dyn BearerVerifier>) -> mcpaxle::transport::auth::TokenVerifier {
    use mcpaxle::transport::auth::TokenInfo;
    Arc::new(move |token: String| -> mcpaxle::server::BoxFuture<'static, mcpaxle::Result<Option<TokenInfo>>> {
        let f = f.clone();
        Box::pin(async move {
            let text = f.verify(token).await.map_err(McpError::into_core)?;
            TokenInfo::from_answer_text(&text)
        })
    })
}

/// The core's token store, kept by the application's.
pub(crate) fn token_store(f: Arc<dyn TokenStore>) -> Arc<dyn mcpaxle::client::TokenStore> {
    Arc::new(mcpaxle::client::CallbackTokenStore::new(Arc::new(move |request: Value| {
        let f = f.clone();
        Box::pin(async move {
            let text = f.call(request.to_string()).await.map_err(McpError::into_core)?;
            serde_json::from_str(&text)
                .map_err(|e| Error::unexpected(format!("the token store answered with text that is not JSON: {e}")))
        })
    })))
}

/// The core's input handler of one kind, answered by the application's handler.
pub(crate) fn input_handler(f: Arc<dyn InputHandler>, kind: &'static str) -> mcpaxle::client::InputHandler {
    Arc::new(move |params: Value| {
        let f = f.clone();
        Box::pin(async move {
            let text = f.answer(kind.to_owned(), params.to_string()).await.map_err(McpError::into_core)?;
            serde_json::from_str(&text)
                .map_err(|e| Error::unexpected(format!("the {kind} handler answered with text that is not JSON: {e}")))
        })
    })
}

/// Progress notifications to the application's listener.
pub(crate) fn progress(f: Arc<dyn NotificationListener>) -> ProgressCallback {
    Arc::new(move |p| {
        if let Ok(text) = serde_json::to_string(&p) {
            f.receive(text)
        }
    })
}

/// Log notifications to the application's listener.
pub(crate) fn log(f: Arc<dyn NotificationListener>) -> LogCallback {
    Arc::new(move |p| {
        if let Ok(text) = serde_json::to_string(&p) {
            f.receive(text)
        }
    })
}

/// OAuth's user-agent step answered by the application.
pub(crate) fn authorization_handler(f: Arc<dyn Authorizer>) -> AuthorizationHandler {
    Arc::new(move |url: String| {
        let f = f.clone();
        Box::pin(async move { f.authorize(url).await.map_err(McpError::into_core) })
    })
}
