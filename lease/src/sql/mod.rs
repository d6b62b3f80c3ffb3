//! The SQL store: PostgreSQL, or MySQL/MariaDB (InnoDB), one schema for both.
//!
//! ```text
//! snowmint_lease_space(space_key PK, space_text)           the space's canonical text
//! snowmint_lease_slot(space_key, slot, token, counter, expires_ms, hwm_ms,
//!                     PRIMARY KEY (space_key, slot))      one row per slot ever used
//! ```
//!
//! Both tables are created on first use (`CREATE TABLE IF NOT EXISTS`, skipped
//! when they exist, so a user without CREATE works on tables made for it).
//! A free slot has `token = ''`; rows are never deleted.
//!
//! Every decision is made on a row this connection has locked (`SELECT ...
//! FOR UPDATE [SKIP LOCKED]` by primary key), in a transaction that changes
//! only that row, with the database's clock (`clock_timestamp()`, `NOW(6)`).
//! Plain reads only suggest candidates. So the store is correct under the
//! default isolation levels (READ COMMITTED on PostgreSQL, REPEATABLE READ on
//! InnoDB): a locking read returns the newest committed version of the row on
//! both (PostgreSQL re-checks the condition on it; InnoDB's locking reads
//! bypass the snapshot), and nobody else can change the row until the
//! transaction commits. A new slot's row is inserted in a transaction of its
//! own: the primary key lets one of two racing inserts through, and the
//! other's duplicate-key error sends it to the next candidate. Every write is
//! committed explicitly, whatever the session's autocommit. Requires `SKIP
//! LOCKED`: PostgreSQL 9.5, MySQL 8.0, MariaDB 10.6 or later.
//!
//! Connections are made on the first call (the constructor does no I/O), kept
//! in a small pool, and dropped after an error. A call runs on the caller's
//! thread, without a thread of its own: every wait inside it is bounded by
//! `timeout_ms` at the socket or the server (MySQL: connect, socket read and
//! write timeouts, `innodb_lock_wait_timeout`, and the TCP user timeout on
//! Linux; PostgreSQL: a client-side timeout on the handshake and on every
//! statement, plus server-side `statement_timeout` and `lock_timeout`), so
//! each call returns in bounded time on its own: at most `timeout_ms` per
//! statement, and a claim stops trying candidates after `timeout_ms`. The
//! driver bounds how long its caller waits for the whole call, and releases
//! a claim that comes back after it gave up.
//!
//! `transport.rs` is the client layer (options, timeouts, the pool,
//! statements, transactions, errors); `slots.rs` the lease logic on one
//! connection; this file the `Store` on top.

mod guard;
mod slots;
mod transport;

use std::time::Duration;

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{
    Claim, ClaimRequest, Holder, Renewal, SlotRelease, SpaceRecord, Store, StoreError,
};
use crate::store::{RenewRequest, SlotReleaseRequest};
use crate::url::{redact, Settings};
use guard::Guard;
use transport::{as_u64, Pool, Target};

/// The lease store in a PostgreSQL or MySQL/MariaDB database.
pub struct SqlStore {
    pool: Pool,
    name: String,
    guard: Guard,
}

crate::store::debug_by_name!(SqlStore, name);

impl SqlStore {
    /// A PostgreSQL store (`postgres://user:password@host:5432/db`). No I/O.
    #[cfg(feature = "postgres")]
    /// The other settings are the defaults ([`Settings`]).
    pub fn postgres(url: &str, timeout_ms: u64) -> Result<SqlStore, LeaseError> {
        Self::postgres_with(url, &Settings::with_timeout(timeout_ms))
    }

    /// A PostgreSQL store with the lease URL's settings: `timeout_ms`,
    /// `max_skew_ms` (the fence after an identity change) and
    /// `sql_allow_unsafe`. No I/O.
    #[cfg(feature = "postgres")]
    pub fn postgres_with(url: &str, settings: &Settings) -> Result<SqlStore, LeaseError> {
        let timeout = Duration::from_millis(settings.timeout_ms.max(1));
        Ok(SqlStore::new(
            Target::postgres(url, timeout)?,
            url,
            timeout,
            settings,
        ))
    }

    /// A MySQL or MariaDB store (`mysql://user:password@host:3306/db`). No I/O.
    #[cfg(feature = "mysql")]
    /// The other settings are the defaults ([`Settings`]).
    pub fn mysql(url: &str, timeout_ms: u64) -> Result<SqlStore, LeaseError> {
        Self::mysql_with(url, &Settings::with_timeout(timeout_ms))
    }

    /// A MySQL or MariaDB store with the lease URL's settings (as
    /// [`SqlStore::postgres_with`]). No I/O.
    #[cfg(feature = "mysql")]
    pub fn mysql_with(url: &str, settings: &Settings) -> Result<SqlStore, LeaseError> {
        let timeout = Duration::from_millis(settings.timeout_ms.max(1));
        Ok(SqlStore::new(
            Target::mysql(url, timeout)?,
            url,
            timeout,
            settings,
        ))
    }

    fn new(target: Target, url: &str, timeout: Duration, settings: &Settings) -> SqlStore {
        SqlStore {
            pool: Pool::new(target, timeout),
            name: redact(url),
            guard: Guard {
                skew_ms: settings.max_skew_ms,
                allow_unsafe: settings.sql_allow_unsafe.clone(),
            },
        }
    }

    /// How many connections this store has opened so far (the tests check
    /// that calls one after another reuse one).
    #[doc(hidden)]
    pub fn connections_opened(&self) -> u64 {
        self.pool.opened()
    }
}

impl Store for SqlStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn now_ms(&self) -> Result<u64, StoreError> {
        self.pool.call(|c, _| Ok(as_u64(c.now()?)))
    }

    /// The bound is checked against the database's clock inside the
    /// transaction that reads it and writes the row.
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let max_hwm_ms = req.max_hwm_ms;
        self.pool
            .call(|c, deadline| c.claim(&self.guard, space, req, max_hwm_ms, deadline))
    }

    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (holder, ttl_ms, window_ms, max_hwm_ms) = r.parts();
        self.pool
            .call(|c, _| c.renew(space.key(), holder, ttl_ms, window_ms, max_hwm_ms))
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        self.pool
            .call(|c, _| c.release(space.key(), holder, last_ms))
    }

    /// Creates the tables if they are missing (also when another connection
    /// of this store saw them).
    fn init(&self) -> Result<(), StoreError> {
        self.pool.call(|c, _| {
            c.ready = false;
            c.ensure_schema()?;
            c.now().map(drop).map_err(StoreError::from)
        })
    }

    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        self.pool.call(|c, _| c.list())
    }

    fn release_slot(&self, req: &SlotReleaseRequest<'_>) -> Result<SlotRelease, StoreError> {
        let (space_key, slot, force, reset_hwm_ms) = req.parts();
        self.pool
            .call(|c, _| c.release_slot(space_key, slot, force, reset_hwm_ms))
    }
}
