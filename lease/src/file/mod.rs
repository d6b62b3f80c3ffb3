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
