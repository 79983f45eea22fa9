//! Bearer-token protection of a JavaScript server's HTTP endpoint: the core reads the `auth`
//! option of `serveHttp` (its `BearerAuth`, every value checked there); its verifier is a
//! JavaScript function called on the JavaScript thread through a weak threadsafe function, like
//! a handler, whose answer the core reads too ([`TokenInfo::from_answer`]).

use crate::callbacks::{self, VerifyFn};
use futures_util::future::BoxFuture;
use mcpaxle::Result;
use mcpaxle::transport::auth::{TokenInfo, TokenVerifier};
use napi_derive::napi;
use std::sync::Arc;

/// A verifier calling the JavaScript `verify` and reading its answer.
pub fn verifier(f: VerifyFn) -> TokenVerifier {
    let f = Arc::new(f);
    Arc::new(move |token: String| -> BoxFuture<'static, Result<Option<TokenInfo>>> {
        let f = f.clone();
        Box::pin(async move { TokenInfo::from_answer(callbacks::answer(&f, token).await?) })
    })
}

/// What is wrong with a token verifier's answer (JSON text), by the core's rule for it
/// ([`TokenInfo::from_answer`]); `null` when it is a valid one. `lib/auth.js` reports a wrong
/// answer on `console.error` before the request gets `503`.
#[napi]
pub fn token_answer_problem(answer_json: String) -> Option<String> {
    TokenInfo::from_answer_text(&answer_json).err().map(|e| e.message().to_owned())
}
