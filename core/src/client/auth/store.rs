//! Where a client keeps its tokens between requests and between runs: the [`TokenStore`]
//! trait, the in-memory default and a JSON file.
//!
//! An entry is keyed by [`TokenKey`] (issuer, resource, client) and holds a [`StoredToken`]:
//! the access token, its expiry, the refresh token, the granted scopes and, for a client that
//! registered itself, that registration, so a restarted client neither registers again nor
//! asks the user again while its tokens are good.

use crate::error::{Error, ErrorKind, Result};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// What a stored token is for: an authorization server, the protected resource, and the client.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TokenKey {
    /// The authorization server's issuer URL, exactly as its metadata names it.
    pub issuer: String,
    /// The protected resource (the MCP server's canonical URL, as its resource metadata names
    /// it): the `resource` the token was requested for.
    pub resource: String,
    /// The client as configured: its pre-registered `client_id`, else its Client ID Metadata
    /// Document URL, else (a client that registers itself) its `client_name`.
    pub client: String,
}

/// A client id the client obtained by Dynamic Client Registration, kept so that it is used
/// again rather than registered again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredClient {
    /// The `client_id` the authorization server issued.
    pub client_id: String,
    /// Its `client_secret`, when the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint (`none`, `client_secret_basic`, ...).
    pub token_endpoint_auth_method: String,
    /// The redirect URI it was registered with: a client configured with another one
    /// registers again.
    pub redirect_uri: String,
}

/// What a [`TokenStore`] keeps for one [`TokenKey`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredToken {
    /// The access token; `None` once the server rejected it (the entry may still hold a
    /// refresh token or a registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch (from `expires_in`);
    /// `None`: not said, used until the server rejects it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The refresh token, when the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The scopes of the access token (granted, else requested).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The client's own registration, when it registered itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<StoredClient>,
}

/// How long before its expiry an access token counts as expired: it has to survive the trip
/// to the server.
pub(crate) const EXPIRY_MARGIN_SECS: u64 = 30;

pub(crate) fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl StoredToken {
    /// The access token, if there is one that has not expired (or whose expiry is unknown).
    pub fn usable_access_token(&self) -> Option<&str> {
        let fresh = self.expires_at.is_none_or(|at| now_secs() + EXPIRY_MARGIN_SECS < at);
        self.access_token.as_deref().filter(|_| fresh)
    }

    /// Whether nothing worth keeping is left.
    pub fn is_empty(&self) -> bool {
        self.access_token.is_none() && self.refresh_token.is_none() && self.registration.is_none()
    }
}

/// Where a client keeps its tokens: [`MemoryTokenStore`] (the default, one per client),
/// [`FileTokenStore`] (a JSON file that outlives the process), or the host's own (a keychain,
/// a secrets manager). The client calls `load` when it first needs a token for a key, `save`
/// after every token response (a refresh token that rotated replaces the old one), and
/// `clear` when nothing is left to keep.
///
/// ```
/// use mcpaxle::client::{MemoryTokenStore, StoredToken, TokenKey, TokenStore};
/// # async fn run() -> mcpaxle::Result<()> {
/// let store = MemoryTokenStore::default();
/// let key = TokenKey { issuer: "https://auth.example.com".into(), resource: "https://mcp.example.com/mcp".into(), client: "app".into() };
/// store.save(&key, &StoredToken { access_token: Some("t".into()), ..StoredToken::default() }).await?;
/// assert_eq!(store.load(&key).await?.unwrap().access_token.as_deref(), Some("t"));
/// # Ok(()) }
/// ```
pub trait TokenStore: Send + Sync {
    /// The entry of `key`, if any.
    fn load<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<Option<StoredToken>>>;
    /// Replaces the entry of `key`.
    fn save<'a>(&'a self, key: &'a TokenKey, token: &'a StoredToken) -> BoxFuture<'a, Result<()>>;
    /// Removes the entry of `key` (nothing if there is none).
    fn clear<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<()>>;
}

/// Tokens in memory, for as long as the client (the default).
#[derive(Default)]
pub struct MemoryTokenStore {
    entries: Mutex<HashMap<TokenKey, StoredToken>>,
}

impl TokenStore for MemoryTokenStore {
    fn load<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<Option<StoredToken>>> {
        let entry = self.entries.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned();
        Box::pin(async move { Ok(entry) })
    }

    fn save<'a>(&'a self, key: &'a TokenKey, token: &'a StoredToken) -> BoxFuture<'a, Result<()>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), token.clone());
        Box::pin(async { Ok(()) })
    }

    fn clear<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<()>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
        Box::pin(async { Ok(()) })
    }
}

/// Tokens in a JSON file that outlives the process (any number of keys in one file).
///
/// Every save writes the whole file anew: a temporary file in the same directory, created
/// with mode 0600 (readable by its owner only: it holds credentials), written, flushed to
/// disk, then renamed over the old one, so a crash leaves the old file or the new one, never
/// half of either. A missing file is an empty store. A file that is not a token store (not
/// JSON, another shape) is an error that names it, never silently replaced: it may hold
/// another program's data. Processes sharing a file take turns: each read, and each
/// read-modify-write of a save, holds an advisory lock (`flock`) on a companion file
/// `.NAME.lock` beside it, so two processes saving at once both keep their entries (on
/// Unix; elsewhere only this process's own saves take turns).
///
/// As data: `"tokenStore": {"file": "/path/tokens.json"}` in the `oauth` options.
pub struct FileTokenStore {
    path: PathBuf,
    /// Serializes this process's read-modify-write cycles.
    lock: tokio::sync::Mutex<()>,
}

impl fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileTokenStore").field("path", &self.path).finish()
    }
}

/// The file's shape: a version, and one entry per key.
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileContents {
    version: u32,
    entries: Vec<FileEntry>,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    #[serde(flatten)]
    key: TokenKey,
    token: StoredToken,
}

const FILE_VERSION: u32 = 1;

fn store_error(message: String) -> Error {
    Error::new(ErrorKind::Transport, message)
}

impl FileTokenStore {
    /// The store kept at `path` (created at the first save; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore { path: path.into(), lock: tokio::sync::Mutex::new(()) }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn update(&self, key: &TokenKey, token: Option<&StoredToken>) -> Result<()> {
        let _held = self.lock.lock().await;
        let path = self.path.clone();
        let (key, token) = (key.clone(), token.cloned());
        blocking(move || {
            let _across_processes = ProcessLock::hold(&path, true)?;
            let mut contents = read_file(&path)?;
            contents.entries.retain(|e| e.key != key);
            if let Some(token) = token {
                contents.entries.push(FileEntry { key, token });
            }
            write_file(&path, &contents)
        })
        .await
    }
}

impl TokenStore for FileTokenStore {
    fn load<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<Option<StoredToken>>> {
        Box::pin(async move {
            let _held = self.lock.lock().await;
            let path = self.path.clone();
            let contents = blocking(move || {
                let _across_processes = ProcessLock::hold(&path, false)?;
                read_file(&path)
            })
            .await?;
            Ok(contents.entries.into_iter().find(|e| e.key == *key).map(|e| e.token))
        })
    }

    fn save<'a>(&'a self, key: &'a TokenKey, token: &'a StoredToken) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.update(key, Some(token)))
    }

    fn clear<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.update(key, None))
    }
}

/// File work off the async workers.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| store_error(format!("the token store's file access did not finish: {e}")))?
}

/// The advisory lock that makes processes sharing a token file take turns: `flock` on the
/// companion file `.NAME.lock` in the same directory (not on the token file itself, which
/// each save replaces by a rename), shared for a read, exclusive for a read-modify-write.
/// Released when dropped (the descriptor closes).
struct ProcessLock {
    #[cfg(unix)]
    _file: Option<std::fs::File>,
}

impl ProcessLock {
    #[cfg(unix)]
    fn hold(path: &Path, exclusive: bool) -> Result<ProcessLock> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let lock_path = path.with_file_name(format!(".{name}.lock"));
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path);
        let file = match opened {
            Ok(f) => f,
            // No directory: no token file to guard either (a read finds none, a write says why).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ProcessLock { _file: None }),
            Err(e) => {
                return Err(store_error(format!(
                    "the token store's lock file {} cannot be opened: {e}",
                    lock_path.display()
                )));
            }
        };
        let operation = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH };
        loop {
            // SAFETY: flock on a descriptor this function owns for as long as the call.
            if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
                return Ok(ProcessLock { _file: Some(file) });
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(store_error(format!(
                    "the token store's lock file {} cannot be locked: {e}",
                    lock_path.display()
                )));
            }
        }
    }

    #[cfg(not(unix))]
    fn hold(_path: &Path, _exclusive: bool) -> Result<ProcessLock> {
        Ok(ProcessLock {})
    }
}

fn read_file(path: &Path) -> Result<FileContents> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(FileContents { version: FILE_VERSION, entries: Vec::new() });
        }
        Err(e) => return Err(store_error(format!("the token store file {} is not readable: {e}", path.display()))),
    };
    let corrupt = |why: String| {
        store_error(format!(
            "the token store file {} is not a token store ({why}); it is left as it is: delete it (the client then authorizes again) or configure another file",
            path.display()
        ))
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not JSON: {e}")))?;
    let contents: FileContents = serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
    if contents.version != FILE_VERSION {
        return Err(corrupt(format!("version {}, this client reads version {FILE_VERSION}", contents.version)));
    }
    Ok(contents)
}

fn write_file(path: &Path, contents: &FileContents) -> Result<()> {
    use std::io::Write;
    let not_writable =
        |e: std::io::Error| store_error(format!("the token store file {} is not writable: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let suffix = crate::transport::http::oauth_wire::random_token(6)?;
    let temp = dir.join(format!(".{name}.{suffix}.tmp"));
    let body = serde_json::to_vec_pretty(contents)
        .map_err(|e| store_error(format!("the token store could not be serialized: {e}")))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = (|| {
        let mut file = options.open(&temp)?;
        file.write_all(&body)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(not_writable(e));
    }
    // The rename itself is durable once the directory is (best effort: not every platform
    // opens directories).
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The host's operation behind a [`CallbackTokenStore`]: takes the request as JSON, answers JSON.
pub type TokenStoreCallback = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value>> + Send + Sync>;

/// A token store the host writes in its own language (a Python object with `load`, `save` and
/// `clear`, a Node object with async methods), reached through one callback that takes each
/// operation as JSON: `{"op": "load", "key": KEY}` answered with the token or `null`,
/// `{"op": "save", "key": KEY, "token": TOKEN}` and `{"op": "clear", "key": KEY}` (answers
/// ignored). `KEY` is a [`TokenKey`] (`issuer`, `resource`, `client`), `TOKEN` a [`StoredToken`]
/// (`accessToken`, `expiresAt`, `refreshToken`, `scopes`, `registration`), as the file store
/// writes them. What the callback fails with fails the request that needed the token.
pub struct CallbackTokenStore {
    call: TokenStoreCallback,
}

impl CallbackTokenStore {
    /// The store behind `call`.
    pub fn new(call: TokenStoreCallback) -> CallbackTokenStore {
        CallbackTokenStore { call }
    }

    fn request(&self, op: &str, key: &TokenKey, token: Option<&StoredToken>) -> BoxFuture<'static, Result<Value>> {
        let mut request = serde_json::json!({ "op": op, "key": key });
        if let Some(t) = token {
            request["token"] = serde_json::to_value(t).unwrap_or(Value::Null);
        }
        (self.call)(request)
    }
}

impl TokenStore for CallbackTokenStore {
    fn load<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<Option<StoredToken>>> {
        let answer = self.request("load", key, None);
        Box::pin(async move {
            match answer.await? {
                Value::Null => Ok(None),
                v => serde_json::from_value(v).map(Some).map_err(|e| {
                    Error::usage(format!(
                        "the token store's load answered what is not a stored token ({e}); answer what save was given, or None/null"
                    ))
                }),
            }
        })
    }

    fn save<'a>(&'a self, key: &'a TokenKey, token: &'a StoredToken) -> BoxFuture<'a, Result<()>> {
        let answer = self.request("save", key, Some(token));
        Box::pin(async move { answer.await.map(drop) })
    }

    fn clear<'a>(&'a self, key: &'a TokenKey) -> BoxFuture<'a, Result<()>> {
        let answer = self.request("clear", key, None);
        Box::pin(async move { answer.await.map(drop) })
    }
}

/// The data form of a token store (the `oauth` option `tokenStore`): `"memory"` (the default)
/// or `{"file": "/path/tokens.json"}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) enum TokenStoreData {
    Memory,
    File(#[serde(deserialize_with = "de_file")] PathBuf),
}

fn de_file<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<PathBuf, D::Error> {
    crate::options::checked(d, |p: &PathBuf| {
        if p.as_os_str().is_empty() {
            Err("must be the path of the token store's JSON file (/home/me/.config/app/tokens.json), not empty".into())
        } else if p.file_name().is_none() {
            Err(format!("must be the path of a file, not {:?}", p.display().to_string()))
        } else {
            Ok(())
        }
    })
}

impl TokenStoreData {
    pub(crate) fn into_store(self) -> Option<Arc<dyn TokenStore>> {
        match self {
            TokenStoreData::Memory => None,
            TokenStoreData::File(path) => Some(Arc::new(FileTokenStore::new(path))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(issuer: &str, resource: &str, client: &str) -> TokenKey {
        TokenKey { issuer: issuer.into(), resource: resource.into(), client: client.into() }
    }

    /// A fixed expiry far ahead (2100-01-01): two tokens made a second apart compare equal.
    const FAR_AHEAD: u64 = 4_102_444_800;

    fn token(access: &str) -> StoredToken {
        StoredToken {
            access_token: Some(access.into()),
            expires_at: Some(FAR_AHEAD),
            refresh_token: Some(format!("r-{access}")),
            scopes: vec!["a".into()],
            registration: None,
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcpaxle-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn keys_are_kept_apart_by_issuer_resource_and_client() {
        let dir = temp_dir("keys");
        let path = dir.join("tokens.json");
        let file = FileTokenStore::new(&path);
        let memory = MemoryTokenStore::default();
        let keys = [
            key("https://as1", "https://mcp/a", "app"),
            key("https://as2", "https://mcp/a", "app"),
            key("https://as1", "https://mcp/b", "app"),
            key("https://as1", "https://mcp/a", "other"),
        ];
        for store in [&file as &dyn TokenStore, &memory] {
            for (i, k) in keys.iter().enumerate() {
                store.save(k, &token(&format!("t{i}"))).await.unwrap();
            }
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(store.load(k).await.unwrap(), Some(token(&format!("t{i}"))));
            }
            store.clear(&keys[1]).await.unwrap();
            assert_eq!(store.load(&keys[1]).await.unwrap(), None);
            assert!(store.load(&keys[0]).await.unwrap().is_some());
            assert!(store.load(&keys[2]).await.unwrap().is_some());
            store.clear(&keys[1]).await.unwrap();
        }
        // A new store object (a restarted client) reads what the first one wrote.
        let again = FileTokenStore::new(&path);
        assert_eq!(again.load(&keys[3]).await.unwrap(), Some(token("t3")));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_file_is_private_and_replaced_whole() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = temp_dir("mode");
        let path = dir.join("tokens.json");
        // An existing file readable by others is replaced by a private one.
        std::fs::write(&path, r#"{"version": 1, "entries": []}"#).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let store = FileTokenStore::new(&path);
        let k = key("https://as", "https://mcp", "app");
        store.save(&k, &token("t1")).await.unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_ne!(meta.ino(), inode, "written to a new file and renamed over the old one");
        store.save(&k, &token("t2")).await.unwrap();
        // No temporary file is left behind; the lock file beside it is private too.
        let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, vec![std::ffi::OsString::from(".tokens.json.lock"), std::ffi::OsString::from("tokens.json")]);
        assert_eq!(std::fs::metadata(dir.join(".tokens.json.lock")).unwrap().mode() & 0o777, 0o600);
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc["entries"][0]["token"]["accessToken"], "t2");
        assert_eq!(doc["entries"][0]["issuer"], "https://as");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Two store objects on one file stand for two processes: only the file lock keeps their
    /// read-modify-write cycles apart (each object's own mutex does not see the other's).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn stores_sharing_a_file_keep_each_others_saves() {
        let dir = temp_dir("shared");
        let path = dir.join("tokens.json");
        let (a, b) = (Arc::new(FileTokenStore::new(&path)), Arc::new(FileTokenStore::new(&path)));
        let saves = (0..40).map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(
                async move { store.save(&key("https://as", "https://mcp", &format!("c{i}")), &token("t")).await },
            )
        });
        for done in futures_util::future::join_all(saves).await {
            done.unwrap().unwrap();
        }
        for i in 0..40 {
            let found = a.load(&key("https://as", "https://mcp", &format!("c{i}"))).await.unwrap();
            assert!(found.is_some(), "the save of c{i} was lost");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_corrupt_file_is_an_error_and_left_alone() {
        let dir = temp_dir("corrupt");
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        let k = key("https://as", "https://mcp", "app");
        for bad in ["{not json", r#"{"tokens": []}"#, r#"{"version": 9, "entries": []}"#] {
            std::fs::write(&path, bad).unwrap();
            let e = store.load(&k).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Transport);
            assert!(
                e.message().contains(&format!("the token store file {} is not a token store", path.display())),
                "{e}"
            );
            let e = store.save(&k, &token("t")).await.unwrap_err();
            assert!(e.message().contains("delete it"), "{e}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad, "never overwritten");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn an_unwritable_place_is_named() {
        let dir = temp_dir("unwritable");
        let path = dir.join("missing-dir").join("tokens.json");
        let store = FileTokenStore::new(&path);
        let k = key("https://as", "https://mcp", "app");
        assert_eq!(store.load(&k).await.unwrap(), None, "no file yet: empty");
        let e = store.save(&k, &token("t")).await.unwrap_err();
        assert!(e.message().starts_with(&format!("the token store file {} is not writable: ", path.display())), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_callback_store_gets_each_operation_as_json() {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let saved: Arc<Mutex<Value>> = Arc::new(Mutex::new(Value::Null));
        let (s, v) = (seen.clone(), saved.clone());
        let store = CallbackTokenStore::new(Arc::new(move |request: Value| {
            s.lock().unwrap().push(request.clone());
            let answer = match request["op"].as_str() {
                Some("save") => {
                    *v.lock().unwrap() = request["token"].clone();
                    Value::Null
                }
                Some("load") => v.lock().unwrap().clone(),
                _ => {
                    *v.lock().unwrap() = Value::Null;
                    Value::Null
                }
            };
            Box::pin(async move { Ok(answer) })
        }));
        let k = key("https://as", "https://mcp", "app");
        assert_eq!(store.load(&k).await.unwrap(), None);
        store.save(&k, &token("t")).await.unwrap();
        assert_eq!(store.load(&k).await.unwrap(), Some(token("t")));
        store.clear(&k).await.unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen[1]["key"],
            serde_json::json!({ "issuer": "https://as", "resource": "https://mcp", "client": "app" })
        );
        assert_eq!(seen[1]["token"]["accessToken"], "t");
        assert_eq!(
            seen.iter().map(|r| r["op"].as_str().unwrap()).collect::<Vec<_>>(),
            ["load", "save", "load", "clear"]
        );
        // A load answering something else says so.
        let odd = CallbackTokenStore::new(Arc::new(|_| Box::pin(async { Ok(serde_json::json!("a token")) })));
        let e = odd.load(&k).await.unwrap_err();
        assert!(e.message().contains("not a stored token"), "{e}");
    }

    #[test]
    fn expiry_has_a_margin() {
        let mut t = token("t");
        assert_eq!(t.usable_access_token(), Some("t"));
        t.expires_at = Some(now_secs() + EXPIRY_MARGIN_SECS - 1);
        assert_eq!(t.usable_access_token(), None);
        t.expires_at = None;
        assert_eq!(t.usable_access_token(), Some("t"), "no expiry said: used until rejected");
    }
}
