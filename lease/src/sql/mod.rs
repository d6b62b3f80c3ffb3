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
//! in a small pool, and dropped after an error. Every call runs on a helper
//! thread and gives up after `timeout_ms`; below that, the clients' own
//! timeouts (connect, socket reads and writes for MySQL; connect, TCP user
//! timeout and server-side statement and lock timeouts for PostgreSQL) end a
//! stuck call, so an abandoned helper does not live on.
//!
//! `transport.rs` is the client layer (options, timeouts, the pool,
//! statements, transactions, errors); `slots.rs` the lease logic on one
//! connection; this file the `Store` on top.

mod slots;
mod transport;

use std::time::Duration;

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{
    Claim, ClaimRequest, Holder, Renewal, SlotRelease, SpaceRecord, Store, StoreError,
};
use crate::url::redact;
use slots::Space;
use transport::{as_u64, Conn, Pool, Target};

/// The lease store in a PostgreSQL or MySQL/MariaDB database.
pub struct SqlStore {
    pool: Pool,
    name: String,
}

impl std::fmt::Debug for SqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore").field("url", &self.name).finish()
    }
}

impl SqlStore {
    /// A PostgreSQL store (`postgres://user:password@host:5432/db`). No I/O.
    #[cfg(feature = "postgres")]
    pub fn postgres(url: &str, timeout_ms: u64) -> Result<SqlStore, LeaseError> {
        let timeout = Duration::from_millis(timeout_ms.max(1));
        Ok(SqlStore::new(Target::postgres(url, timeout)?, url, timeout))
    }

    /// A MySQL or MariaDB store (`mysql://user:password@host:3306/db`). No I/O.
    #[cfg(feature = "mysql")]
    pub fn mysql(url: &str, timeout_ms: u64) -> Result<SqlStore, LeaseError> {
        let timeout = Duration::from_millis(timeout_ms.max(1));
        Ok(SqlStore::new(Target::mysql(url, timeout)?, url, timeout))
    }

    fn new(target: Target, url: &str, timeout: Duration) -> SqlStore {
        SqlStore {
            pool: Pool::new(target, timeout),
            name: redact(url),
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
        self.pool.call(|c, _| Ok(as_u64(c.now()?)), None)
    }

    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let space = Space {
            key: space.key().to_string(),
            text: space.text().to_string(),
            slots: space.slots(),
        };
        let req = *req;
        // The undo of a late claim cannot capture: the key travels with the claim.
        self.pool
            .call(
                move |c, deadline| {
                    let r = c.claim(&space, &req, deadline);
                    r.map(|claim| (claim, space.key))
                },
                Some(|c: &mut Conn, (late, key): (Claim, String)| {
                    let _ = c.release(&key, &late.holder, late.hwm_ms);
                }),
            )
            .map(|(claim, _)| claim)
    }

    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        let (key, holder) = (space.key().to_string(), holder.clone());
        self.pool
            .call(move |c, _| c.renew(&key, &holder, ttl_ms, window_ms), None)
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let (key, holder) = (space.key().to_string(), holder.clone());
        self.pool
            .call(move |c, _| c.release(&key, &holder, last_ms), None)
    }

    /// Creates the tables if they are missing (also when another connection
    /// of this store saw them).
    fn init(&self) -> Result<(), StoreError> {
        self.pool.call(
            |c, _| {
                c.ready = false;
                c.ensure_schema()?;
                c.now().map(drop).map_err(StoreError::from)
            },
            None,
        )
    }

    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        self.pool.call(|c, _| c.list(), None)
    }

    fn release_slot(
        &self,
        space_key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        let key = space_key.to_string();
        self.pool
            .call(move |c, _| c.release_slot(&key, slot, force), None)
    }
}
