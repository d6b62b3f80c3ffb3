//! What the SQL store checks about the server before it trusts its rows:
//! the settings that lose acknowledged writes (refused unless the URL names
//! them in `sql_allow_unsafe`), the schema its tables are found in
//! (PostgreSQL: refused when a table of the same name is in another schema
//! on the search path), and the server's identity per space, in
//! `snowmint_lease_marker`:
//!
//! ```text
//! snowmint_lease_marker(space_key PK, server, fence_ms, max_window_ms, cause)
//!     one row per space, and the store's own row (space_key '')
//! ```
//!
//! `server` is the identity of the server that wrote the space's rows
//! (PostgreSQL: system identifier, timeline, database OID and the slot
//! table's file node; MySQL/MariaDB: `@@server_id`, `@@server_uuid` where it
//! exists, and the slot table's creation time). A claim that finds it naming
//! another server (a promoted replica, a restored backup, another server
//! under the same name) fences the space as Redis does: every slot's `hwm`
//! becomes at least store time + the largest window any holder of the space
//! used + 2 × `max_skew_ms`, every slot's holder is cleared (its renewal
//! finds another token: lost), and the marker names the new server. A
//! renewal or release is lost unless the marker names the server that runs
//! it. docs/STORES.md ("SQL") says what this detects and what it cannot.

use snowmint::FenceCause;

use super::transport::{as_i64, as_u64, int, Conn, DbError, DbResult, Dialect, Failure, Val};
use crate::store::{Holder, MarkerState, SpaceRecord, StoreError};

/// The store's own marker row: the identity it last saw, for spaces that
/// have no marker of their own (a space a restore lost entirely).
const STORE_ROW: &str = "";

/// MySQL/MariaDB: the named lock marker writes take turns on, one per
/// database (a name of at most 64 characters, as MySQL requires).
#[cfg(feature = "mysql")]
const MARKER_LOCK: &str = "CONCAT('snowmint_lease.', SHA1(DATABASE()))";

/// The claimers' settings the checks need.
#[derive(Clone, Debug)]
pub(super) struct Guard {
    /// `max_skew_ms`: twice added to the fence.
    pub(super) skew_ms: u64,
    /// `sql_allow_unsafe`: the unsafe settings served anyway.
    pub(super) allow_unsafe: Vec<String>,
}

/// The floor of a claim's `hwm`, under the server it was decided on.
#[derive(Clone, Debug)]
pub(super) struct Floor {
    /// The server's identity when the guard ran.
    pub(super) server: String,
    /// Every slot's `hwm` counts as at least this (0: no fence).
    pub(super) fence_ms: i64,
    /// Why the fence is there.
    pub(super) cause: Option<FenceCause>,
}

/// A marker row.
struct Marker {
    server: String,
    fence_ms: i64,
    max_window_ms: i64,
    cause: String,
}

impl Marker {
    fn floor(&self, server: String) -> Floor {
        Floor {
            server,
            fence_ms: self.fence_ms,
            cause: cause_of(&self.cause, self.fence_ms),
        }
    }
}

fn cause_of(cause: &str, fence_ms: i64) -> Option<FenceCause> {
    match cause {
        "changed" if fence_ms > 0 => Some(FenceCause::StoreChanged),
        _ => None,
    }
}

fn refused(message: String) -> DbError {
    DbError {
        failure: Failure::Refused,
        message,
    }
}

fn text(v: &Val) -> String {
    match v {
        Val::S(s) => s.clone(),
        Val::I(i) => i.to_string(),
    }
}

impl Conn {
    /// The server's identity (see the module documentation), read now.
    pub(super) fn identity(&mut self) -> DbResult<String> {
        // The fault harness's control build (docs/HARNESS.md): a server
        // that never changes, so that its asynchronous-replication control
        // shows the duplicates the fence prevents. Never in a shipped build.
        if crate::removed(crate::Control::NoSqlFence) {
            return Ok("harness-control".into());
        }
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => {
                let rows = self.query(
                    "SELECT (SELECT system_identifier::text FROM pg_control_system()) || '/' || \
                     substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/' || \
                     (SELECT oid::text FROM pg_database WHERE datname = current_database()) || \
                     '/' || coalesce(pg_relation_filenode(to_regclass('snowmint_lease_slot'))\
                     ::text, '')",
                    &[],
                )?;
                Ok(text(&rows[0][0]))
            }
            #[cfg(feature = "mysql")]
            Dialect::Mysql => {
                let rows = self.query(
                    "SELECT CAST(@@GLOBAL.server_id AS CHAR), VERSION(), COALESCE((SELECT \
                     CAST(UNIX_TIMESTAMP(CREATE_TIME) AS CHAR) FROM information_schema.TABLES \
                     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'snowmint_lease_slot'), '')",
                    &[],
                )?;
                let (id, version, created) =
                    (text(&rows[0][0]), text(&rows[0][1]), text(&rows[0][2]));
                // MariaDB has no server_uuid.
                let uuid = if version.contains("MariaDB") {
                    String::new()
                } else {
                    text(&self.query("SELECT @@GLOBAL.server_uuid", &[])?[0][0])
                };
                Ok(format!("{id}/{uuid}/{created}"))
            }
        }
    }

    /// Refuses a server whose settings lose acknowledged writes, unless the
    /// URL names the setting in `sql_allow_unsafe`.
    pub(super) fn check_durability(&mut self, g: &Guard) -> DbResult<()> {
        let allowed = |name: &str| g.allow_unsafe.iter().any(|a| a == name);
        let refuse = |name: &str, value: &str, why: &str| {
            refused(format!(
                "the server's {name} is {value}: {why}, and a successor would reissue IDs \
                 (set it as documented, or add sql_allow_unsafe={name} to the URL)"
            ))
        };
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => {
                let rows = self.query(
                    "SELECT current_setting('fsync'), current_setting('synchronous_commit')",
                    &[],
                )?;
                let (fsync, commit) = (text(&rows[0][0]), text(&rows[0][1]));
                if fsync == "off" && !allowed("fsync") {
                    return Err(refuse(
                        "fsync",
                        "off",
                        "a crash of the machine can lose committed claims",
                    ));
                }
                if commit == "off" && !allowed("synchronous_commit") {
                    return Err(refuse(
                        "synchronous_commit",
                        "off",
                        "a crash of the server can lose committed claims",
                    ));
                }
            }
            #[cfg(feature = "mysql")]
            Dialect::Mysql => {
                let rows = self.query(
                    "SELECT CAST(@@innodb_flush_log_at_trx_commit AS SIGNED), \
                     CAST(@@read_only AS SIGNED)",
                    &[],
                )?;
                let flush = int(&rows[0][0]);
                if flush != 1 && !allowed("innodb_flush_log_at_trx_commit") {
                    return Err(refuse(
                        "innodb_flush_log_at_trx_commit",
                        &flush.to_string(),
                        "a crash can lose up to a second of committed claims (only 1 writes \
                         the log at every commit)",
                    ));
                }
                if !allowed("replica") && self.is_replica()? {
                    let read_only = if int(&rows[0][1]) == 1 { "ON" } else { "OFF" };
                    return Err(refused(format!(
                        "the server is a replica (SHOW REPLICA STATUS has a row; read_only = \
                         {read_only}): claims written to it are overwritten by replication or \
                         missing on its primary, and a successor would reissue IDs (use the \
                         primary, or add sql_allow_unsafe=replica to the URL)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Whether the MySQL/MariaDB server replicates from a primary. A user
    /// without the privilege to ask (`REPLICATION CLIENT`, MariaDB's
    /// `REPLICA MONITOR`) cannot tell: not refused (docs/STORES.md).
    #[cfg(feature = "mysql")]
    fn is_replica(&mut self) -> DbResult<bool> {
        match self.has_rows_text("SHOW REPLICA STATUS") {
            // MySQL before 8.0.22 has only the old name.
            Err(e) if e.message.contains("ERROR 1064 ") => self
                .has_rows_text("SHOW SLAVE STATUS")
                .or_else(|e| if denied(&e) { Ok(false) } else { Err(e) }),
            Err(e) if denied(&e) => Ok(false),
            r => r,
        }
    }

    /// PostgreSQL: the schema holding the lease tables, refused when a
    /// table of the same name is in another schema on the search path
    /// (holders with different search paths would use different tables).
    /// MySQL/MariaDB: the current database (there is no search path).
    pub(super) fn check_tables_schema(&mut self) -> DbResult<()> {
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => {
                let rows = self.query(
                    "SELECT c.relname::text, n.nspname::text, array_to_string(current_schemas(true), ', ') \
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE c.relname IN ('snowmint_lease_space', 'snowmint_lease_slot', \
                     'snowmint_lease_marker') AND n.nspname = ANY (current_schemas(true)) \
                     ORDER BY array_position(current_schemas(true), n.nspname), c.relname",
                    &[],
                )?;
                for (i, r) in rows.iter().enumerate() {
                    let (table, schema) = (text(&r[0]), text(&r[1]));
                    if let Some(other) = rows[i + 1..].iter().find(|o| text(&o[0]) == table) {
                        return Err(refused(format!(
                            "the lease table {table} is in schema {schema} and in schema {} \
                             (search_path: {}): this connection uses {schema}'s, a holder \
                             whose search_path differs could use the other and reissue IDs \
                             (drop or rename one, or give the URL a search_path without it)",
                            text(&other[1]),
                            text(&r[2])
                        )));
                    }
                }
                self.schema = match rows.iter().find(|r| text(&r[0]) == "snowmint_lease_slot") {
                    Some(r) => text(&r[1]),
                    None => text(&self.query("SELECT current_schema()::text", &[])?[0][0]),
                };
            }
            #[cfg(feature = "mysql")]
            Dialect::Mysql => {
                self.schema = text(&self.query("SELECT DATABASE()", &[])?[0][0]);
            }
        }
        Ok(())
    }

    /// Before a claim: the settings, then the space's marker, which must
    /// name this server. The common case is one unlocked read; a missing
    /// marker, another server or a larger window is settled in a
    /// transaction on the locked marker rows (the store's row first).
    pub(super) fn guard_claim(
        &mut self,
        g: &Guard,
        key: &str,
        window_ms: u64,
    ) -> Result<Floor, StoreError> {
        self.check_durability(g)?;
        let server = self.identity()?;
        let markers = self.markers(key, "")?;
        if let (_, Some(m)) = &markers {
            if m.server == server && m.max_window_ms >= as_i64(window_ms) {
                return Ok(m.floor(server));
            }
        }
        let mut last = None;
        // Two claimers inserting the same marker: the loser reads it again.
        for _ in 0..10 {
            let locked =
                self.in_turn(|c| c.transaction(|c| c.guard_locked(g, key, window_ms), |_| true));
            match locked {
                Err(e) if matches!(e.failure, Failure::Duplicate | Failure::Contention) => {
                    last = Some(e)
                }
                r => return r.map_err(StoreError::from),
            }
        }
        Err(last.map_or_else(
            || StoreError::Unreachable("the marker could not be written".into()),
            StoreError::from,
        ))
    }

    /// Runs `f` in the database's turn for marker writes. MySQL/MariaDB: on
    /// a named lock per database, because two claimers' locking reads of
    /// markers that do not exist yet (the first claims of a new database or
    /// space) take gap locks on InnoDB that their inserts then wait for on
    /// each other, a deadlock the server breaks by failing one of them, over
    /// and over with many claimers at once
    /// (`store_mysql.rs::first_claims_of_a_new_database_all_succeed`). The
    /// lock is released before the connection goes back to the pool, or the
    /// connection is dropped (the server releases it). PostgreSQL: `f` as it
    /// is (a locking read of a missing row locks nothing there; the losing
    /// insert finds the key taken).
    fn in_turn<T>(&mut self, f: impl FnOnce(&mut Conn) -> DbResult<T>) -> DbResult<T> {
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => f(self),
            #[cfg(feature = "mysql")]
            Dialect::Mysql => {
                // Within the session's lock wait, less a second: below the
                // client's read timeout, which is the same.
                let got = self.query(
                    &format!(
                        "SELECT CAST(COALESCE(GET_LOCK({MARKER_LOCK}, \
                         GREATEST(1, @@SESSION.innodb_lock_wait_timeout - 1)), -1) AS SIGNED)"
                    ),
                    &[],
                )?;
                match got.first().map(|r| int(&r[0])) {
                    Some(1) => {}
                    Some(0) => {
                        return Err(DbError {
                            failure: Failure::Contention,
                            message: "other claimers held the lease markers' lock past the \
                                      lock wait"
                                .into(),
                        })
                    }
                    _ => {
                        return Err(DbError {
                            failure: Failure::Other,
                            message: "GET_LOCK on the lease markers' lock failed".into(),
                        })
                    }
                }
                let r = f(self);
                let released = self.query(&format!("DO RELEASE_LOCK({MARKER_LOCK})"), &[]);
                match (r, released) {
                    (Ok(_), Err(e)) => Err(e),
                    (r, _) => r,
                }
            }
        }
    }

    /// The store's and the space's marker rows.
    fn markers(&mut self, key: &str, lock: &str) -> DbResult<(Option<Marker>, Option<Marker>)> {
        let rows = self.query(
            &format!(
                "SELECT space_key, server, fence_ms, max_window_ms, cause \
                 FROM snowmint_lease_marker WHERE space_key IN (?, ?) ORDER BY space_key {lock}"
            ),
            &[Val::S(STORE_ROW.into()), Val::S(key.into())],
        )?;
        let (mut store, mut space) = (None, None);
        for r in rows {
            let m = Marker {
                server: text(&r[1]),
                fence_ms: int(&r[2]),
                max_window_ms: int(&r[3]),
                cause: text(&r[4]),
            };
            if text(&r[0]) == STORE_ROW {
                store = Some(m);
            } else {
                space = Some(m);
            }
        }
        Ok((store, space))
    }

    fn guard_locked(&mut self, g: &Guard, key: &str, window_ms: u64) -> DbResult<Floor> {
        let lock = "FOR UPDATE";
        let server = self.identity()?;
        let now = self.now()?;
        let (store, space) = self.markers(key, lock)?;
        let window = as_i64(window_ms);
        let widest = window
            .max(store.as_ref().map_or(0, |m| m.max_window_ms))
            .max(space.as_ref().map_or(0, |m| m.max_window_ms));
        let fence_at = now
            .saturating_add(widest)
            .saturating_add(as_i64(g.skew_ms.saturating_mul(2)));
        let floor = match (&store, &space) {
            // The same server: only the window grows.
            (_, Some(m)) if m.server == server => m.floor(server.clone()),
            // A new space on the server the store saw last (or the first
            // claim of this version: nothing to compare with).
            (Some(s), None) if s.server == server => s.floor(server.clone()),
            (None, None) => Floor {
                server: server.clone(),
                fence_ms: 0,
                cause: None,
            },
            // Another server: the space's rows, or the store's, may be
            // older than what holders were confirmed.
            _ => Floor {
                server: server.clone(),
                fence_ms: fence_at,
                cause: Some(FenceCause::StoreChanged),
            },
        };
        let cause = match floor.cause {
            Some(FenceCause::StoreChanged) => "changed",
            _ => "",
        };
        // The store's row follows each change of server, with a fence of
        // its own for spaces that have no marker; the space's row names
        // this server with the floor.
        let store_write = match &store {
            None => Some((floor.fence_ms, cause)),
            Some(s) if s.server != server => Some((fence_at, "changed")),
            _ => None,
        };
        let space_write = match &space {
            Some(m) if m.server == server => None,
            _ => Some((floor.fence_ms, cause)),
        };
        for (row, old, write) in [(STORE_ROW, &store, store_write), (key, &space, space_write)] {
            match (old, write) {
                (None, Some((fence, cause))) => {
                    self.query(
                        "INSERT INTO snowmint_lease_marker \
                         (server, fence_ms, max_window_ms, cause, space_key) VALUES (?, ?, ?, ?, ?)",
                        &[
                            Val::S(server.clone()),
                            Val::I(fence),
                            Val::I(widest),
                            Val::S(cause.into()),
                            Val::S(row.into()),
                        ],
                    )?;
                }
                (Some(_), Some((fence, cause))) => {
                    self.query(
                        "UPDATE snowmint_lease_marker SET server = ?, fence_ms = ?, \
                         max_window_ms = ?, cause = ? WHERE space_key = ?",
                        &[
                            Val::S(server.clone()),
                            Val::I(fence),
                            Val::I(widest),
                            Val::S(cause.into()),
                            Val::S(row.into()),
                        ],
                    )?;
                }
                (Some(m), None) if m.max_window_ms < widest => {
                    self.query(
                        "UPDATE snowmint_lease_marker SET max_window_ms = ? WHERE space_key = ?",
                        &[Val::I(widest), Val::S(row.into())],
                    )?;
                }
                _ => {}
            }
        }
        if floor.cause.is_some() && space_write.is_some() {
            // Rows written before the change: their holders are lost (the
            // token is gone), and no slot starts below the fence.
            self.query(
                "UPDATE snowmint_lease_slot SET token = '', expires_ms = 0, \
                 hwm_ms = GREATEST(hwm_ms, ?) WHERE space_key = ?",
                &[Val::I(floor.fence_ms), Val::S(key.into())],
            )?;
        }
        Ok(floor)
    }

    /// Inside a claim's transaction: the server is still the one the guard
    /// decided on (else the claim is given up, nothing written).
    pub(super) fn same_server(&mut self, floor: &Floor) -> DbResult<()> {
        let now = self.identity()?;
        if now == floor.server {
            return Ok(());
        }
        Err(DbError {
            failure: Failure::Other,
            message: format!(
                "the server's identity changed during the claim ({} before, {now} now)",
                floor.server
            ),
        })
    }

    /// Inside a renewal's or release's transaction, before the holder's row
    /// is locked: the space's marker (share-locked) names this server, or
    /// the holder is lost; a wider window than the marker's is recorded.
    pub(super) fn check_marker(
        &mut self,
        key: &str,
        holder: &Holder,
        window_ms: u64,
    ) -> Result<(), StoreError> {
        let share = match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => "FOR SHARE",
            #[cfg(feature = "mysql")]
            Dialect::Mysql => "LOCK IN SHARE MODE",
        };
        let server = self.identity()?;
        let rows = self.query(
            &format!(
                "SELECT server, max_window_ms FROM snowmint_lease_marker \
                 WHERE space_key = ? {share}"
            ),
            &[Val::S(key.into())],
        )?;
        let Some(r) = rows.first() else {
            return Err(StoreError::Lost(format!(
                "slot {}: the space has no marker in {}.snowmint_lease_marker: the store's \
                 records may be older than this claim (a restored backup)",
                holder.slot, self.schema
            )));
        };
        let (named, widest) = (text(&r[0]), int(&r[1]));
        if named != server {
            return Err(StoreError::Lost(format!(
                "slot {}: {} (the space's marker in {} names server {named}, this is {server}): \
                 its records may be older than this claim",
                holder.slot,
                FenceCause::StoreChanged.describe(),
                self.schema
            )));
        }
        if as_i64(window_ms) > widest {
            self.query(
                "UPDATE snowmint_lease_marker SET max_window_ms = ? \
                 WHERE space_key IN (?, ?) AND max_window_ms < ?",
                &[
                    Val::I(as_i64(window_ms)),
                    Val::S(STORE_ROW.into()),
                    Val::S(key.into()),
                    Val::I(as_i64(window_ms)),
                ],
            )?;
        }
        Ok(())
    }
}

impl Conn {
    /// Operations: each listed space's marker, as this server sees it (a
    /// store of an earlier version, without the marker table: none).
    pub(super) fn list_markers(&mut self, spaces: &mut [SpaceRecord]) -> DbResult<()> {
        if self.table_count()? < 3 {
            return Ok(());
        }
        let server = self.identity()?;
        let rows = self.query(
            "SELECT space_key, server, fence_ms FROM snowmint_lease_marker",
            &[],
        )?;
        for r in rows {
            let key = text(&r[0]);
            if let Some(space) = spaces.iter_mut().find(|s| s.key == key) {
                let named = text(&r[1]);
                space.marker = Some(crate::store::Marker {
                    state: if named == server {
                        MarkerState::Present
                    } else {
                        MarkerState::OtherServer
                    },
                    server: Some(named),
                    fence_ms: as_u64(int(&r[2])),
                });
            }
        }
        Ok(())
    }
}

/// MySQL's "access denied; you need the ... privilege".
#[cfg(feature = "mysql")]
fn denied(e: &DbError) -> bool {
    e.message.contains("ERROR 1227 ")
}
