//! Bearer tokens: the token file (checked as ssh checks a private key), the
//! one `Authorization: Bearer` parser of every protocol (HTTP, the HTTP/1.1
//! fast path, gRPC metadata), the constant-time lookup, each token's scopes
//! and its rate-limit buckets (`limit.rs`).
//!
//! A token file holds one token a line (blank lines and `#` comments
//! skipped), optionally followed by whitespace and its scopes,
//! comma-separated: `ids` (issue IDs), `decode` (decode IDs, list the
//! generators, reflection), `metrics` (`/metrics`). A token without scopes
//! has them all. A token is 1 to 256 visible ASCII characters (no space):
//! anything else could never match a header, and is refused at load.

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::config::ConfigError;
use crate::limit::Bucket;

/// The longest token accepted.
pub const MAX_TOKEN_LEN: usize = 256;

/// What a route needs of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Issue IDs.
    Ids,
    /// Decode IDs, list the generators, reflection.
    Decode,
    /// `/metrics`.
    Metrics,
}

impl Scope {
    /// The scope's name in a token file.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Ids => "ids",
            Scope::Decode => "decode",
            Scope::Metrics => "metrics",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Scope::Ids => 1,
            Scope::Decode => 2,
            Scope::Metrics => 4,
        }
    }

    fn parse(name: &str) -> Option<Scope> {
        [Scope::Ids, Scope::Decode, Scope::Metrics]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// Every scope.
const ALL_SCOPES: u8 = 7;

/// One token as the file gives it (its text is kept only until it is
/// hashed into a [`TokenSet`]).
#[derive(Clone)]
pub struct TokenSpec {
    /// The token.
    pub token: Vec<u8>,
    scopes: u8,
}

impl std::fmt::Debug for TokenSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSpec")
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl TokenSpec {
    /// A token with every scope.
    pub fn all(token: impl Into<Vec<u8>>) -> TokenSpec {
        TokenSpec {
            token: token.into(),
            scopes: ALL_SCOPES,
        }
    }
}

/// One accepted token: its SHA-256 digest, scopes and rate buckets.
#[derive(Debug)]
struct Entry {
    digest: [u8; 32],
    scopes: u8,
    requests: Mutex<Bucket>,
    ids: Mutex<Bucket>,
}

/// The tokens in use.
#[derive(Debug, Default)]
pub struct TokenSet {
    entries: Vec<Entry>,
}

/// The caller a request was authenticated as: its token in the set in use
/// when it was checked (None: no token is configured).
#[derive(Clone, Debug)]
pub struct Caller(pub(crate) Option<(Arc<TokenSet>, usize)>);

impl Caller {
    /// The buckets of the caller's token (None: no token configured).
    pub(crate) fn buckets(&self) -> Option<(&Mutex<Bucket>, &Mutex<Bucket>)> {
        let (set, i) = self.0.as_ref()?;
        let e = &set.entries[*i];
        Some((&e.requests, &e.ids))
    }
}

/// Why a request is not let through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    /// No valid token: 401 (`unauthorized`).
    Unauthorized,
    /// A valid token without the route's scope: 403 (`forbidden`).
    Forbidden(Scope),
}

/// The accepted bearer tokens (empty: none needed), which SIGHUP replaces
/// with the token file's new content.
#[derive(Debug, Default)]
pub struct Tokens(RwLock<Arc<TokenSet>>);

impl Tokens {
    /// These tokens.
    pub fn new(tokens: &[TokenSpec]) -> Tokens {
        Tokens(RwLock::new(Arc::new(TokenSet::new(tokens, None))))
    }

    fn get(&self) -> Arc<TokenSet> {
        Arc::clone(&self.0.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// True when no token is needed.
    pub fn is_empty(&self) -> bool {
        self.get().entries.is_empty()
    }

    /// Replaces the tokens; a token kept keeps its rate buckets (a reload
    /// does not refill them).
    pub(crate) fn set(&self, tokens: &[TokenSpec]) {
        let mut cur = self.0.write().unwrap_or_else(|e| e.into_inner());
        let new = TokenSet::new(tokens, Some(&cur));
        *cur = Arc::new(new);
    }

    /// Checks `authorization` (the first `Authorization` value, raw bytes)
    /// for a token with `scope` (None: any token will do).
    pub fn check(
        &self,
        authorization: Option<&[u8]>,
        scope: Option<Scope>,
    ) -> Result<Caller, Denied> {
        let set = self.get();
        if set.entries.is_empty() {
            return Ok(Caller(None));
        }
        let given = authorization.and_then(bearer).ok_or(Denied::Unauthorized)?;
        let i = set.find(given).ok_or(Denied::Unauthorized)?;
        if let Some(s) = scope {
            if set.entries[i].scopes & s.bit() == 0 {
                return Err(Denied::Forbidden(s));
            }
        }
        Ok(Caller(Some((set, i))))
    }
}

impl TokenSet {
    fn new(tokens: &[TokenSpec], old: Option<&TokenSet>) -> TokenSet {
        let entries = tokens
            .iter()
            .map(|t| {
                let digest: [u8; 32] = Sha256::digest(&t.token).into();
                let kept = old.and_then(|o| o.entries.iter().find(|e| e.digest == digest));
                let bucket = |b: Option<&Mutex<Bucket>>| {
                    Mutex::new(b.map_or_else(Bucket::full, |b| {
                        b.lock().unwrap_or_else(|e| e.into_inner()).clone()
                    }))
                };
                Entry {
                    digest,
                    scopes: t.scopes,
                    requests: bucket(kept.map(|e| &e.requests)),
                    ids: bucket(kept.map(|e| &e.ids)),
                }
            })
            .collect();
        TokenSet { entries }
    }

    /// The index of `given`: SHA-256 digests compared, every token in
    /// constant time, so that neither the time nor an early return depends
    /// on a token's length or on where it differs.
    fn find(&self, given: &[u8]) -> Option<usize> {
        let given: [u8; 32] = Sha256::digest(given).into();
        let mut found = subtle::Choice::from(0);
        let mut index = 0u64;
        for (i, e) in self.entries.iter().enumerate() {
            let same = e.digest.ct_eq(&given);
            index = u64::conditional_select(&index, &(i as u64), same);
            found |= same;
        }
        bool::from(found).then_some(index as usize)
    }
}

/// The token of an `Authorization` value `Bearer TOKEN` (the scheme in any
/// case, spaces or tabs around the token): the one parser of every protocol.
/// None for another scheme, or a token that is not visible ASCII.
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    if value.len() < 7 || !value[..7].eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let t = value[7..].trim_ascii();
    (!t.is_empty() && t.iter().all(|b| b.is_ascii_graphic())).then_some(t)
}

/// The tokens of a token file (see the module's description). The file must
/// belong to the user the server runs as and be readable by no one else
/// (as ssh requires of a private key); a root-owned file readable by the
/// server's group is accepted too, for Kubernetes' Secret volumes
/// (`root:fsGroup`, mode 0440), and any file in systemd's
/// `$CREDENTIALS_DIRECTORY`.
pub fn read_tokens(path: &Path) -> Result<Vec<TokenSpec>, ConfigError> {
    let shown = path.display();
    let err = |m: String| ConfigError::new("token_file", format!("{shown}: {m}"));
    check_owner(path).map_err(err)?;
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let n = n + 1;
        let (token, scopes) = match line.split_once([' ', '\t']) {
            Some((t, s)) => (t, Some(s.trim())),
            None => (line, None),
        };
        // Never quoted: the line is a secret.
        if token.len() > MAX_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(err(format!(
                "line {n}: a token is 1 to {MAX_TOKEN_LEN} visible ASCII characters (no space): this one could never match"
            )));
        }
        let scopes = match scopes {
            None => ALL_SCOPES,
            Some(list) => {
                let mut bits = 0;
                for name in list.split(',').map(str::trim) {
                    let s = Scope::parse(name).ok_or_else(|| {
                        err(format!(
                            "line {n}: '{}' is not a scope (ids, decode, metrics)",
                            crate::app::cut(name)
                        ))
                    })?;
                    bits |= s.bit();
                }
                bits
            }
        };
        tokens.push(TokenSpec {
            token: token.as_bytes().to_vec(),
            scopes,
        });
    }
    if tokens.is_empty() {
        return Err(err("holds no token".into()));
    }
    Ok(tokens)
}

#[cfg(unix)]
fn check_owner(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    // systemd's credentials (LoadCredential=): a directory private to the
    // service by construction, its files root's with an ACL for the
    // service's user.
    if std::env::var_os("CREDENTIALS_DIRECTORY")
        .is_some_and(|d| !d.is_empty() && path.starts_with(Path::new(&d)))
    {
        return Ok(());
    }
    let m = std::fs::metadata(path).map_err(|e| e.to_string())?;
    // SAFETY: geteuid and getegid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mode = m.mode() & 0o777;
    let kubernetes = uid != 0 && m.uid() == 0 && m.gid() == gid && mode & 0o037 == 0;
    if m.uid() != uid && !kubernetes {
        return Err(format!(
            "owned by user {}, not by the user the server runs as ({uid}): refused, as ssh refuses such a key",
            m.uid()
        ));
    }
    if mode & 0o077 != 0 && !kubernetes {
        return Err(format!(
            "mode {mode:04o} lets other users read or change it: refused, as ssh refuses such a key (chmod 600)"
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner(_: &Path) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parses_one_way() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bEaReR \t abc \t"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearer "), None);
        assert_eq!(bearer(b"Bearer a b"), None);
        assert_eq!(bearer("Bearer é".as_bytes()), None);
    }
}
