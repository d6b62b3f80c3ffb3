//! The embedded store: a local directory.
//!
//! ```text
//! DIR/<space key>/space.txt     the space's canonical text (checked on every claim)
//! DIR/<space key>/space.lock    locked around every read-modify-write of a state file
//! DIR/<space key>/<slot>.lock   locked with flock(2) for the life of the holder
//! DIR/<space key>/<slot>.state  hwm_ms, counter, token (replaced atomically)
//! ```
//!
//! The lock is the claim: the OS frees it when the holder's process dies, so
//! the file store needs no TTL and its claims never expire while the holder
//! lives. `flock` locks belong to the open file, so two holders in one process
//! exclude each other too. The state file is written to a temporary file of a
//! fresh name (created exclusively, never through a link), fsynced, renamed
//! over the old one, and the directory fsynced, before a call returns: a
//! reservation counts only once it is on disk.
//!
//! Unix only ([`guard`] says which directories it refuses and why). On other
//! systems [`FileStore`] exists, so that `file:` URLs parse everywhere, but
//! every call fails as `lease_unavailable`: a network store is the way there.
//!
//! [`State`], [`new_token`] and [`system_ms`] are shared with the network
//! stores and exist on every system.

use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(unix)]
mod guard;
// Also compiled in Unix test builds, so that its refusal is tested here.
#[cfg(any(not(unix), test))]
mod other;
#[cfg(unix)]
mod unix;

#[cfg(not(unix))]
pub use other::FileStore;
#[cfg(unix)]
pub use unix::FileStore;

/// A slot's state: the file store's state file, and the etcd store's state
/// key (the same text).
// Without the file store and the network stores (Windows, no features),
// nothing uses these.
#[cfg_attr(not(unix), allow(dead_code))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) hwm_ms: u64,
    pub(crate) counter: u64,
    pub(crate) token: String,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl State {
    const HEADER: &'static str = "snowmint lease slot v1";

    pub(crate) fn to_text(&self) -> String {
        format!(
            "{}\nhwm_ms={}\ncounter={}\ntoken={}\n",
            Self::HEADER,
            self.hwm_ms,
            self.counter,
            self.token
        )
    }

    pub(crate) fn parse(text: &str) -> Option<State> {
        let mut lines = text.lines();
        if lines.next()? != Self::HEADER {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix('=');
        let hwm_ms = field("hwm_ms")?.parse().ok()?;
        let counter = field("counter")?.parse().ok()?;
        let token = field("token")?.to_string();
        Some(State {
            hwm_ms,
            counter,
            token,
        })
    }
}

/// A random token: std's OS-seeded hash keys over the time and a counter.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn new_token() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let word = || {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn system_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_text_round_trips() {
        let s = State {
            hwm_ms: 1_700_000_000_123,
            counter: 7,
            token: "ab".into(),
        };
        assert_eq!(State::parse(&s.to_text()), Some(s));
        assert_eq!(State::parse("junk"), None);
        assert_eq!(State::parse("snowmint lease slot v1\nhwm_ms=x\n"), None);
    }
}
