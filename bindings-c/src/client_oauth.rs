//! `mcpaxle_client_options_set_oauth`: OAuth 2.1 authorization of an HTTP client, with the
//! user-agent step as a C callback that finishes through a reply handle.

use crate::calls::{self, Kind, Payload, Target, mcpaxle_reply};
use crate::client::{mcpaxle_client_options, mcpaxle_input_handler, options_mut};
use crate::ffi::{SendPtr, arg_json, ffi_boundary, from_json, mcpaxle_result};
use crate::owner::Owner;
use mcpaxle_core::Error;
use mcpaxle_core::client::{AuthorizationHandler, OAuthOptions};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// The user-agent step of OAuth's authorization code flow: show `authorization_url` to the
/// user (open it in a browser), and once the authorization server redirected back, complete
/// `reply` with the URL it redirected to (`mcpaxle_reply_redirect`), or with an error
/// (`mcpaxle_reply_error`: the request that needed the authorization fails with it).
/// Exactly once, now or later, from any thread. `authorization_url` is borrowed for the
/// duration of the callback.
///
/// Thread: a thread of the library's handler pool (blocking is allowed, e.g. waiting for the
/// redirect on a loopback listener).
pub type mcpaxle_authorization_handler =
    Option<unsafe extern "C" fn(user_data: *mut c_void, authorization_url: *const c_char, reply: *mut mcpaxle_reply)>;

type AuthorizeFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcpaxle_reply);

#[derive(Clone)]
pub(crate) struct OAuthSetting {
    options: OAuthOptions,
    authorize: Option<Target<AuthorizeFn>>,
}

impl OAuthSetting {
    /// OAuth from the `"oauth"` member of the client's `options_json`: no user-agent callback.
    pub(crate) fn from_options(options: OAuthOptions) -> Self {
        OAuthSetting { options, authorize: None }
    }

    /// The core options for a client whose callbacks belong to `owner`.
    pub(crate) fn for_client(&self, owner: &Arc<Owner>) -> OAuthOptions {
        let mut options = self.options.clone();
        if let Some(t) = self.authorize {
            options.authorize = authorization_handler(owner, t);
        }
        options
    }
}

/// Turns on OAuth 2.1 authorization for HTTP clients connected with these options (a stdio
/// client ignores it): when the MCP server answers `401`, the client discovers its
/// authorization server, gets a client id (pre-registered, else the Client ID Metadata
/// Document URL where the server takes one, else Dynamic Client Registration), runs the
/// authorization code flow with PKCE, and sends the request again with the access token; a
/// `403 insufficient_scope` re-authorizes with the added scopes, and tokens are refreshed.
///
/// `oauth_json` is an object: `"grantType"` (`"authorization_code"`, the default, or
/// `"client_credentials"` for a machine client with no user: it authenticates as itself with
/// its pre-registered `clientId` and `clientSecret` or `privateKeyPem`, and needs no
/// `redirectUri`), `"redirectUri"` (required for the authorization code grant: where the
/// authorization server sends the user back), and optionally `"clientId"`, `"clientSecret"`
/// and `"issuer"` (pre-registered credentials, used only with that issuer when it is given),
/// `"privateKeyPem"` and `"signingAlgorithm"` (instead of a secret: the client's PEM private
/// key, signing a short-lived JWT at the token endpoint, `private_key_jwt`; default algorithm
/// `RS256`), `"clientMetadataUrl"` (the HTTPS URL of this client's metadata document),
/// `"clientName"` (for registration; default the client's name) and `"maxAuthorizations"`
/// (flows one request may trigger, default 3). Invalid JSON is `MCPAXLE_ERR_INVALID_JSON`; a
/// missing `redirectUri`, an unknown member, credentials without `clientId`, or a value the
/// core refuses is `MCPAXLE_ERR_USAGE`, its message naming the member (`oauth_json:
/// redirectUri: …`). The core's rules: `redirectUri` an absolute URI without a fragment (any
/// scheme), `clientId` not empty, `issuer` an issuer URL (absolute http(s), no query or
/// fragment), a secret or a key (an asymmetric JWS algorithm and a PEM key for it), not both,
/// `clientMetadataUrl` an https URL, `maxAuthorizations` at least 1.
///
/// `authorize` is the user-agent step (see `mcpaxle_authorization_handler`). NULL: the client
/// fetches the authorization URL itself and takes the authorization server's redirect as the
/// answer, for servers that approve without a user (tests, pre-approved machine clients).
///
/// Setting it again replaces the earlier setting. `user_data` must stay valid until every
/// client made from these options is freed (no callback runs after `mcpaxle_client_free`
/// returns). Ownership: `oauth_json` is borrowed. Thread: any, before connecting.
///
/// ```c
/// mcpaxle_client_options_set_oauth(options,
///     "{\"redirectUri\":\"http://127.0.0.1:8765/callback\"}", open_browser, app);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_set_oauth(
    options: *mut mcpaxle_client_options,
    oauth_json: *const c_char,
    authorize: mcpaxle_authorization_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        let o = options_mut(options)?;
        // SAFETY: per the contract.
        let json = unsafe { arg_json(oauth_json, "oauth_json")? };
        // The core reads the data (and checks it); without `authorize` it authorizes without a
        // user, as OAuthOptions::without_user.
        let core: OAuthOptions = from_json(json, "oauth_json")?;
        o.oauth = Some(OAuthSetting {
            options: core,
            authorize: authorize.map(|func| Target { func, user_data: SendPtr(user_data) }),
        });
        Ok(())
    })
}

/// Keeps the OAuth client's tokens where the application says (a keychain, a secrets
/// manager, its own database) instead of in memory, so that a restarted client neither
/// authorizes nor registers again while its tokens are good. The data form
/// `"tokenStore": {"file": "/path/tokens.json"}` of `oauth_json` keeps them in a file instead,
/// with no callback.
///
/// `store` gets each operation as JSON (`params_json`) and completes `reply` exactly once, now
/// or later, from any thread, as an input handler does:
/// - `{"op": "load", "key": KEY}`: `mcpaxle_reply_ok(reply, TOKEN)` with the entry saved for
///   that key, or `mcpaxle_reply_ok(reply, "null")` when there is none;
/// - `{"op": "save", "key": KEY, "token": TOKEN}`: keep `TOKEN` for `KEY` (replacing what was
///   there), then `mcpaxle_reply_ok(reply, "null")`;
/// - `{"op": "clear", "key": KEY}`: forget `KEY`, then `mcpaxle_reply_ok(reply, "null")`.
///
/// `KEY` is `{"issuer", "resource", "client"}` (compare all three); `TOKEN` an object to keep
/// as it is (`accessToken`, `expiresAt` in seconds since the epoch, `refreshToken`, `scopes`,
/// `registration`: it holds credentials, keep it private). `mcpaxle_reply_error` fails the
/// request that needed the token with that error. A load that answers something other than an
/// object or null is an error naming the store.
///
/// Used by clients connected with these options that have OAuth on
/// (`mcpaxle_client_options_set_oauth`, or `"oauth"` in `options_json`); NULL removes it.
/// `user_data` must stay valid until every client made from these options is freed.
/// Thread: any, before connecting; `store` runs on a thread of the library's handler pool.
///
/// ```c
/// mcpaxle_client_options_set_token_store(options, keychain_store, app);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_client_options_set_token_store(
    options: *mut mcpaxle_client_options,
    store: mcpaxle_input_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        options_mut(options)?.token_store = store.map(|func| Target { func, user_data: SendPtr(user_data) });
        Ok(())
    })
}

fn authorization_handler(owner: &Arc<Owner>, target: Target<AuthorizeFn>) -> AuthorizationHandler {
    let owner = owner.clone();
    Arc::new(move |url: String| {
        let owner = owner.clone();
        Box::pin(async move {
            let payload = calls::invoke(&owner, Kind::Authorization, None, url, move |id, url| {
                // SAFETY: the function pointer and user data were registered together.
                unsafe { (target.func)(target.user_data.get(), url, id as *mut mcpaxle_reply) }
            })
            .await?;
            match payload {
                Payload::Authorization(redirect) => Ok(redirect),
                _ => Err(Error::internal("the authorization handler completed with a result of another kind")),
            }
        })
    })
}
