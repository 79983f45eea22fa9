//! Sealing of MRTR `requestState`: the server's state travels through the client, so it is
//! encrypted and authenticated (ChaCha20-Poly1305) and binds an expiry, the method, a digest
//! of the request's salient params and the principal. Anything that fails to open or does not
//! match the request it comes back on is rejected before a handler runs.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const AAD: &[u8] = b"mcpaxle/requestState/v1";
const NONCE_LEN: usize = 12;

/// A 256-bit key for sealing `requestState`. Share one key between server instances behind
/// a load balancer so that a retry may land on any of them.
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl StateKey {
    /// A fresh random key (the default: one per process).
    pub fn random() -> Self {
        let mut k = [0u8; 32];
        fill_random(&mut k);
        StateKey(k)
    }

    /// A key from 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        StateKey(bytes)
    }

    /// A key derived from a secret of any length (SHA-256 of it). Use a high-entropy secret.
    pub fn derive(secret: &[u8]) -> Self {
        StateKey(Sha256::digest(secret).into())
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateKey(..)")
    }
}

/// Fills `buf` with bytes from the operating system's random source.
pub(crate) fn fill_random(buf: &mut [u8]) {
    // The OS source failing is unrecoverable for a server that must not hand out guessable
    // keys or ids; getrandom only fails on exotic platforms.
    getrandom::getrandom(buf).expect("the operating system's random source failed");
}

/// The most bytes a `requestState` carries to the next round: the JSON text of the answers of
/// earlier rounds plus the handler's own state (2 MiB). Sealed and Base64-encoded, such a state
/// is about 2.7 MiB, so the retry that carries it back fits the HTTP transport's default 4 MiB
/// body limit with room for that round's answers. A round that would carry more ends the call
/// with an Invalid params error naming the largest answer, rather than handing out a state
/// that no retry could bring back.
pub const MAX_REQUEST_STATE: usize = 2 << 20;

/// What a sealed `requestState` carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SealedState {
    /// Expiry, milliseconds since the Unix epoch.
    pub exp: u64,
    /// The method the state was issued on.
    pub m: String,
    /// Digest of the salient params of the request the state was issued on.
    pub d: String,
    /// The authenticated principal, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// Input responses answered in earlier rounds, replayed to the handler.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub a: Map<String, Value>,
    /// The handler's own state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<Value>,
    /// The `traceparent` of the first round's span (telemetry on): later rounds link to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<String>,
}

/// Why a `requestState` was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StateRejection {
    Malformed,
    Expired,
    WrongRequest,
    WrongPrincipal,
}

impl StateRejection {
    pub fn message(&self) -> &'static str {
        match self {
            StateRejection::Malformed => "Invalid requestState: it was not issued by this server or has been modified",
            StateRejection::Expired => {
                "Invalid requestState: it has expired; retry the original request without inputResponses and requestState"
            }
            StateRejection::WrongRequest => "Invalid requestState: it was issued for a different request",
            StateRejection::WrongPrincipal => "Invalid requestState: it was issued to a different principal",
        }
    }
}

/// Seals request state with one key, and opens it with that key or the previous one (while a
/// fleet rotates its key).
#[derive(Clone)]
pub(crate) struct Sealer {
    cipher: ChaCha20Poly1305,
    previous: Option<ChaCha20Poly1305>,
    ttl: Duration,
}

impl Sealer {
    pub fn new(key: &StateKey, previous: Option<&StateKey>, ttl: Duration) -> Self {
        let cipher = |k: &StateKey| ChaCha20Poly1305::new(Key::from_slice(&k.0));
        Sealer { cipher: cipher(key), previous: previous.map(cipher), ttl }
    }

    /// Seals a state, stamping its expiry.
    pub fn seal(&self, mut state: SealedState) -> String {
        state.exp = now_ms().saturating_add(self.ttl.as_millis() as u64);
        let plain = serde_json::to_vec(&state).unwrap_or_default();
        let mut nonce = [0u8; NONCE_LEN];
        fill_random(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), Payload { msg: &plain, aad: AAD })
            .expect("ChaCha20-Poly1305 encryption of an in-memory buffer cannot fail");
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// Opens a state and checks it against the request it came back on.
    pub fn open(
        &self,
        token: &str,
        method: &str,
        digest: &str,
        principal: Option<&str>,
    ) -> Result<SealedState, StateRejection> {
        let raw = URL_SAFE_NO_PAD.decode(token.as_bytes()).map_err(|_| StateRejection::Malformed)?;
        if raw.len() <= NONCE_LEN {
            return Err(StateRejection::Malformed);
        }
        let (nonce, sealed) = raw.split_at(NONCE_LEN);
        let decrypt = |c: &ChaCha20Poly1305| c.decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad: AAD });
        let plain = decrypt(&self.cipher)
            .or_else(|e| self.previous.as_ref().map_or(Err(e), decrypt))
            .map_err(|_| StateRejection::Malformed)?;
        let state: SealedState = serde_json::from_slice(&plain).map_err(|_| StateRejection::Malformed)?;
        if state.exp < now_ms() {
            return Err(StateRejection::Expired);
        }
        if state.m != method || state.d != digest {
            return Err(StateRejection::WrongRequest);
        }
        if state.p.as_deref() != principal {
            return Err(StateRejection::WrongPrincipal);
        }
        Ok(state)
    }
}

/// How many bytes of [`MAX_REQUEST_STATE`] a state uses: the JSON text of its answers and of
/// the handler's state.
pub(crate) fn carried_size(answers: &Map<String, Value>, state: Option<&Value>) -> usize {
    let answers = if answers.is_empty() { 0 } else { json_size(answers) };
    answers.saturating_add(state.map_or(0, json_size))
}

/// The length of `value`'s compact JSON text, counted without building it.
pub(crate) fn json_size<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// The digest a `requestState` binds a request's salient params with, computed on first use:
/// only a request that carries a `requestState` or answers with a new one pays for hashing
/// (and serializing) its arguments.
pub(crate) struct ParamsDigest {
    target: String,
    arguments: Option<Arc<Value>>,
    value: OnceLock<String>,
}

impl ParamsDigest {
    /// The digest of `target` (a tool or prompt name, a resource URI) and its arguments.
    pub(crate) fn new(target: impl Into<String>, arguments: Option<Arc<Value>>) -> Self {
        ParamsDigest { target: target.into(), arguments, value: OnceLock::new() }
    }

    /// The digest, computed now if it was not yet.
    pub(crate) fn get(&self) -> &str {
        self.value.get_or_init(|| params_digest(&self.target, self.arguments.as_deref()))
    }
}

/// A digest of the salient params of a request: the method's target and its arguments
/// (serde_json maps are sorted, so equal params give equal digests).
pub(crate) fn params_digest(target: &str, arguments: Option<&Value>) -> String {
    let mut h = Sha256::new();
    h.update(target.as_bytes());
    h.update([0u8]);
    if let Some(args) = arguments {
        h.update(serde_json::to_vec(args).unwrap_or_default());
    }
    URL_SAFE_NO_PAD.encode(&h.finalize()[..18])
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> SealedState {
        SealedState {
            exp: 0,
            m: "tools/call".into(),
            d: params_digest("t", Some(&json!({"a": 1}))),
            p: None,
            a: Map::new(),
            s: Some(json!({"step": 2})),
            t: None,
        }
    }

    #[test]
    fn round_trips_and_binds_the_request() {
        let s = Sealer::new(&StateKey::random(), None, Duration::from_secs(60));
        let d = params_digest("t", Some(&json!({"a": 1})));
        let token = s.seal(state());
        let back = s.open(&token, "tools/call", &d, None).unwrap();
        assert_eq!(back.s, Some(json!({"step": 2})));
        assert_eq!(s.open(&token, "prompts/get", &d, None), Err(StateRejection::WrongRequest));
        assert_eq!(
            s.open(&token, "tools/call", &params_digest("t", Some(&json!({"a": 2}))), None),
            Err(StateRejection::WrongRequest)
        );
        assert_eq!(s.open(&token, "tools/call", &d, Some("alice")), Err(StateRejection::WrongPrincipal));
    }

    #[test]
    fn carried_size_counts_the_json_text() {
        let mut answers = Map::new();
        assert_eq!(carried_size(&answers, None), 0);
        answers.insert("k".into(), json!({"action": "accept", "content": {"name": "é"}}));
        let text = serde_json::to_string(&answers).unwrap();
        assert_eq!(carried_size(&answers, None), text.len());
        assert_eq!(carried_size(&answers, Some(&json!([1, 2]))), text.len() + 5);
        assert_eq!(json_size(&json!("x".repeat(1000))), 1002);
    }

    #[test]
    fn rejects_tampering_foreign_keys_and_expiry() {
        let s = Sealer::new(&StateKey::random(), None, Duration::from_secs(60));
        let d = params_digest("t", Some(&json!({"a": 1})));
        let token = s.seal(state());
        assert_eq!(s.open(&format!("{token}-TAMPERED"), "tools/call", &d, None), Err(StateRejection::Malformed));
        let mut bytes = token.clone().into_bytes();
        let i = bytes.len() / 2;
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            s.open(std::str::from_utf8(&bytes).unwrap(), "tools/call", &d, None),
            Err(StateRejection::Malformed)
        );
        let other = Sealer::new(&StateKey::random(), None, Duration::from_secs(60));
        assert_eq!(other.open(&token, "tools/call", &d, None), Err(StateRejection::Malformed));
        let shared = Sealer::new(&StateKey::derive(b"shared secret"), None, Duration::from_secs(60));
        let shared2 = Sealer::new(&StateKey::derive(b"shared secret"), None, Duration::from_secs(60));
        assert!(shared2.open(&shared.seal(state()), "tools/call", &d, None).is_ok());
        let expired = Sealer::new(&StateKey::from_bytes([7; 32]), None, Duration::ZERO);
        let t = expired.seal(state());
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(expired.open(&t, "tools/call", &d, None), Err(StateRejection::Expired));
    }

    #[test]
    fn a_rotation_accepts_the_previous_key_and_seals_with_the_new_one() {
        let d = params_digest("t", Some(&json!({"a": 1})));
        let (old, new) = (StateKey::derive(b"old secret 0123456789"), StateKey::derive(b"new secret 0123456789"));
        let before = Sealer::new(&old, None, Duration::from_secs(60));
        let rotating = Sealer::new(&new, Some(&old), Duration::from_secs(60));
        let after = Sealer::new(&new, None, Duration::from_secs(60));
        // An instance still on the old key and one rotating accept each other's states.
        assert!(rotating.open(&before.seal(state()), "tools/call", &d, None).is_ok());
        let sealed = rotating.seal(state());
        assert!(after.open(&sealed, "tools/call", &d, None).is_ok(), "sealed with the new key");
        assert_eq!(before.open(&sealed, "tools/call", &d, None), Err(StateRejection::Malformed));
        // Once the previous key is dropped, its states are refused.
        assert_eq!(after.open(&before.seal(state()), "tools/call", &d, None), Err(StateRejection::Malformed));
    }
}
