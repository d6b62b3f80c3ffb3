//! The SQL store's lease logic: the schema, and claim, renew, release and
//! the operations as statements on one connection (`transport.rs` runs them).

use std::time::Instant;

use super::guard::{Floor, Guard};
use super::transport::{as_i64, as_u64, int, whole, Conn, DbResult, Dialect, Failure, Val};
use crate::slot::{new_token, slot_order, SlotSeen};
use crate::space::SlotSpace;
use crate::store::{
    check_hwm_bound, Claim, ClaimRequest, Holder, ReleaseStep, Renewal, SlotRecord, SlotRelease,
    SpaceRecord, StoreError,
};

const CONTENDED_ROUNDS: usize = 50;

impl Conn {
    /// Creates the tables unless they exist, and checks the schema they are
    /// in (once per connection).
    pub(super) fn ensure_schema(&mut self) -> DbResult<()> {
        if self.ready {
            return Ok(());
        }
        if self.table_count()? < 3 {
            for sql in self.schema().1 {
                if let Err(e) = self.batch(sql) {
                    self.rollback();
                    return Err(e);
                }
            }
        }
        self.check_tables_schema()?;
        self.ready = true;
        Ok(())
    }

    /// How many of the three tables exist.
    pub(super) fn table_count(&mut self) -> DbResult<i64> {
        let rows = self.query(self.schema().0, &[])?;
        Ok(int(&rows[0][0]))
    }

    /// The query counting the tables that exist, and the statements creating them.
    fn schema(&self) -> (&'static str, &'static [&'static str]) {
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => (
                "SELECT count(*)::bigint FROM (VALUES (to_regclass('snowmint_lease_space')), \
                 (to_regclass('snowmint_lease_slot')), (to_regclass('snowmint_lease_marker'))) \
                 AS t(r) WHERE r IS NOT NULL",
                // Concurrent CREATE TABLE IF NOT EXISTS can fail on PostgreSQL
                // (a duplicate in pg_type): one creator at a time.
                &["BEGIN; SELECT pg_advisory_xact_lock(7237599117005660531); \
                   CREATE TABLE IF NOT EXISTS snowmint_lease_space (\
                     space_key VARCHAR(64) PRIMARY KEY, \
                     space_text TEXT NOT NULL); \
                   CREATE TABLE IF NOT EXISTS snowmint_lease_slot (\
                     space_key VARCHAR(64) NOT NULL, \
                     slot BIGINT NOT NULL, \
                     token VARCHAR(32) NOT NULL, \
                     counter BIGINT NOT NULL, \
                     expires_ms BIGINT NOT NULL, \
                     hwm_ms BIGINT NOT NULL, \
                     PRIMARY KEY (space_key, slot)); \
                   CREATE TABLE IF NOT EXISTS snowmint_lease_marker (\
                     space_key VARCHAR(64) PRIMARY KEY, \
                     server VARCHAR(255) NOT NULL, \
                     fence_ms BIGINT NOT NULL, \
                     max_window_ms BIGINT NOT NULL, \
                     cause VARCHAR(16) NOT NULL); \
                   COMMIT"],
            ),
            #[cfg(feature = "mysql")]
            Dialect::Mysql => (
                "SELECT CAST(COUNT(*) AS SIGNED) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() \
                 AND table_name IN ('snowmint_lease_space', 'snowmint_lease_slot', \
                 'snowmint_lease_marker')",
                &[
                    "CREATE TABLE IF NOT EXISTS snowmint_lease_space (\
                       space_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, \
                       space_text TEXT NOT NULL) ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS snowmint_lease_slot (\
                       space_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, \
                       slot BIGINT NOT NULL, \
                       token VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, \
                       counter BIGINT NOT NULL, \
                       expires_ms BIGINT NOT NULL, \
                       hwm_ms BIGINT NOT NULL, \
                       PRIMARY KEY (space_key, slot)) ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS snowmint_lease_marker (\
                       space_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, \
                       server VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, \
                       fence_ms BIGINT NOT NULL, \
                       max_window_ms BIGINT NOT NULL, \
                       cause VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL) ENGINE=InnoDB",
                ],
            ),
        }
    }

    /// Checks (or records) the space's text.
    pub(super) fn check_space(&mut self, key: &str, text: &str) -> Result<(), StoreError> {
        self.ensure_schema()?;
        let select = "SELECT space_text FROM snowmint_lease_space WHERE space_key = ?";
        let mut rows = self.query(select, &[Val::S(key.into())])?;
        if rows.is_empty() {
            let insert = match self.dialect {
                #[cfg(feature = "postgres")]
                Dialect::Postgres => {
                    "INSERT INTO snowmint_lease_space (space_key, space_text) VALUES (?, ?) \
                     ON CONFLICT (space_key) DO NOTHING"
                }
                #[cfg(feature = "mysql")]
                Dialect::Mysql => {
                    "INSERT INTO snowmint_lease_space (space_key, space_text) VALUES (?, ?)"
                }
            };
            let params = [Val::S(key.into()), Val::S(text.into())];
            match self.transaction(|c| c.query(insert, &params), |_| true) {
                // Another claimer recorded it first: compare with theirs.
                Ok(_) => {}
                Err(e) if e.failure == Failure::Duplicate => {}
                Err(e) => return Err(e.into()),
            }
            rows = self.query(select, &[Val::S(key.into())])?;
        }
        match rows.first().and_then(|r| r.first()) {
            Some(Val::S(stored)) if stored == text => Ok(()),
            Some(_) => Err(StoreError::BadRecord(format!(
                "snowmint_lease_space row {key} describes another slot space than its key says"
            ))),
            None => Err(StoreError::Unreachable(format!(
                "snowmint_lease_space row {key} vanished after it was written"
            ))),
        }
    }

    /// One attempt at an existing slot row: locks it if it is still free or
    /// expired, and claims it. `None`: taken, or locked by another claimer.
    fn claim_row(&mut self, key: &str, slot: u64, req: &Bounded) -> DbResult<Option<Claim>> {
        self.transaction(
            |c| c.claim_row_in_transaction(key, slot, req),
            Option::is_some,
        )
    }

    fn claim_row_in_transaction(
        &mut self,
        key: &str,
        slot: u64,
        req: &Bounded,
    ) -> DbResult<Option<Claim>> {
        let now = self.now_sql();
        let sql = format!(
            "SELECT counter, hwm_ms, {now} FROM snowmint_lease_slot \
             WHERE space_key = ? AND slot = ? AND (token = '' OR expires_ms <= {now}) \
             FOR UPDATE SKIP LOCKED"
        );
        let rows = self.query(&sql, &[Val::S(key.into()), Val::I(as_i64(slot))])?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        self.same_server(&req.floor)?;
        let at = Val::I(as_i64(slot));
        let counter = whole(&row[0], "counter", &at, key)?;
        let old_hwm = whole(&row[1], "hwm_ms", &at, key)?;
        let now = int(&row[2]);
        let claim = new_claim(slot, counter, old_hwm, now, req)?;
        self.query(
            "UPDATE snowmint_lease_slot SET token = ?, counter = ?, expires_ms = ?, hwm_ms = ? \
             WHERE space_key = ? AND slot = ?",
            &[
                Val::S(claim.holder.token.clone()),
                Val::I(as_i64(claim.holder.counter)),
                Val::I(as_i64(claim.expires_ms.unwrap_or(0))),
                Val::I(as_i64(claim.hwm_ms)),
                Val::S(key.into()),
                Val::I(as_i64(slot)),
            ],
        )?;
        Ok(Some(claim))
    }

    /// One attempt at a slot never used: inserts its row. `None`: a racing
    /// claimer inserted it first.
    fn claim_new(&mut self, key: &str, slot: u64, req: &Bounded) -> DbResult<Option<Claim>> {
        self.transaction(
            |c| c.claim_new_in_transaction(key, slot, req),
            Option::is_some,
        )
    }

    fn claim_new_in_transaction(
        &mut self,
        key: &str,
        slot: u64,
        req: &Bounded,
    ) -> DbResult<Option<Claim>> {
        self.same_server(&req.floor)?;
        let now = self.now()?;
        let claim = new_claim(slot, 0, 0, now, req)?;
        let r = self.query(
            "INSERT INTO snowmint_lease_slot (space_key, slot, token, counter, expires_ms, hwm_ms) \
             VALUES (?, ?, ?, ?, ?, ?)",
            &[
                Val::S(key.into()),
                Val::I(as_i64(slot)),
                Val::S(claim.holder.token.clone()),
                Val::I(as_i64(claim.holder.counter)),
                Val::I(as_i64(claim.expires_ms.unwrap_or(0))),
                Val::I(as_i64(claim.hwm_ms)),
            ],
        );
        match r {
            Ok(_) => Ok(Some(claim)),
            Err(e) if e.failure == Failure::Duplicate => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(super) fn claim(
        &mut self,
        guard: &Guard,
        space: &SlotSpace,
        req: &ClaimRequest,
        max_hwm_ms: u64,
        deadline: Instant,
    ) -> Result<Claim, StoreError> {
        self.check_space(space.key(), space.text())?;
        let floor = self.guard_claim(guard, space.key(), req.window_ms)?;
        let bounded = Bounded {
            req: *req,
            max_hwm_ms,
            floor,
        };
        for _ in 0..CONTENDED_ROUNDS {
            let sql = format!(
                "SELECT slot, token, expires_ms, hwm_ms, {} FROM snowmint_lease_slot \
                 WHERE space_key = ?",
                self.now_sql()
            );
            let rows = self.query(&sql, &[Val::S(space.key().into())])?;
            let now = match rows.first() {
                Some(r) => int(&r[4]),
                None => self.now()?,
            };
            let mut existing = std::collections::BTreeMap::new();
            for r in &rows {
                let slot = u64::try_from(int(&r[0])).map_err(|_| bad_row(space.key()))?;
                let expires = whole(&r[2], "expires_ms", &r[0], space.key())?;
                let hwm = whole(&r[3], "hwm_ms", &r[0], space.key())?;
                let free = matches!(&r[1], Val::S(t) if t.is_empty()) || expires <= now;
                existing.insert(slot, (free, hwm));
            }
            let seen: Vec<SlotSeen> = existing
                .iter()
                .map(|(&slot, &(free, hwm))| SlotSeen {
                    slot,
                    free,
                    hwm_ms: u64::try_from(hwm).unwrap_or(0),
                })
                .collect();
            let order = slot_order(
                req.prefer,
                space.slots(),
                &seen,
                u64::try_from(now).unwrap_or(0),
            );
            let mut any = false;
            for slot in order {
                let is_new = !existing.contains_key(&slot);
                any = true;
                let got = if is_new {
                    self.claim_new(space.key(), slot, &bounded)
                } else {
                    self.claim_row(space.key(), slot, &bounded)
                };
                match got {
                    Ok(Some(claim)) => return Ok(claim),
                    Ok(None) => {}
                    Err(e) if e.failure == Failure::Contention => break,
                    Err(e) => return Err(e.into()),
                }
                if Instant::now() > deadline {
                    return Err(StoreError::Unreachable(
                        "the claim did not finish in time (many claimers at once)".into(),
                    ));
                }
            }
            if !any {
                return Err(StoreError::NoFreeSlot);
            }
        }
        Err(StoreError::Unreachable(format!(
            "no slot could be taken in {CONTENDED_ROUNDS} rounds (many claimers at once)"
        )))
    }

    /// Locks the holder's row if its token and counter are still the
    /// holder's, in a transaction left open on success; returns `hwm_ms`
    /// and the database's clock.
    fn lock_holder(
        &mut self,
        key: &str,
        holder: &Holder,
        window_ms: u64,
    ) -> Result<(i64, i64), StoreError> {
        self.batch("BEGIN")?;
        if let Err(e) = self.check_marker(key, holder, window_ms) {
            self.rollback();
            return Err(e);
        }
        let sql = format!(
            "SELECT hwm_ms, {} FROM snowmint_lease_slot \
             WHERE space_key = ? AND slot = ? AND token = ? AND counter = ? FOR UPDATE",
            self.now_sql()
        );
        let rows = self.query(
            &sql,
            &[
                Val::S(key.into()),
                Val::I(as_i64(holder.slot)),
                Val::S(holder.token.clone()),
                Val::I(as_i64(holder.counter)),
            ],
        );
        let rows = match rows {
            Ok(r) => r,
            Err(e) => {
                self.rollback();
                return Err(e.into());
            }
        };
        if let Some(r) = rows.first() {
            return match whole(&r[0], "hwm_ms", &Val::I(as_i64(holder.slot)), key) {
                Ok(hwm) => Ok((hwm, int(&r[1]))),
                Err(e) => {
                    self.rollback();
                    Err(e.into())
                }
            };
        }
        self.rollback();
        let rows = self.query(
            "SELECT counter FROM snowmint_lease_slot WHERE space_key = ? AND slot = ?",
            &[Val::S(key.into()), Val::I(as_i64(holder.slot))],
        )?;
        Err(StoreError::Lost(match rows.first() {
            Some(r) if int(&r[0]) != as_i64(holder.counter) => format!(
                "slot {} has another holder (claim counter {})",
                holder.slot,
                int(&r[0])
            ),
            Some(_) => format!("slot {} was released or taken over", holder.slot),
            None => format!("slot {} has no record", holder.slot),
        }))
    }

    /// Runs `sql` in the open transaction and commits.
    fn update_and_commit(&mut self, sql: &str, params: &[Val]) -> Result<(), StoreError> {
        let r = self.query(sql, params).and_then(|_| self.batch("COMMIT"));
        if let Err(e) = r {
            self.rollback();
            return Err(e.into());
        }
        Ok(())
    }

    pub(super) fn renew(
        &mut self,
        key: &str,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
        max_hwm_ms: u64,
    ) -> Result<Renewal, StoreError> {
        self.ensure_schema()?;
        let (hwm, now) = self.lock_holder(key, holder, window_ms)?;
        // Refused inside the transaction that read the clock: nothing written.
        if let Err(e) = check_hwm_bound(as_u64(now), window_ms, max_hwm_ms) {
            self.rollback();
            return Err(e);
        }
        let expires = now.saturating_add(as_i64(ttl_ms));
        let hwm = hwm.max(now.saturating_add(as_i64(window_ms)));
        self.update_and_commit(
            "UPDATE snowmint_lease_slot SET expires_ms = ?, hwm_ms = ? WHERE space_key = ? AND slot = ?",
            &[Val::I(expires), Val::I(hwm), Val::S(key.into()), Val::I(as_i64(holder.slot))],
        )?;
        Ok(Renewal {
            hwm_ms: as_u64(hwm),
            expires_ms: Some(as_u64(expires)),
        })
    }

    pub(super) fn release(
        &mut self,
        key: &str,
        holder: &Holder,
        last_ms: u64,
    ) -> Result<(), StoreError> {
        self.ensure_schema()?;
        self.lock_holder(key, holder, 0)?;
        self.update_and_commit(
            "UPDATE snowmint_lease_slot SET token = '', expires_ms = 0, hwm_ms = ? \
             WHERE space_key = ? AND slot = ?",
            &[
                Val::I(as_i64(last_ms)),
                Val::S(key.into()),
                Val::I(as_i64(holder.slot)),
            ],
        )
    }

    /// Operations: the store's clock, every space and its slot rows.
    pub(super) fn list(&mut self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = self.now()?;
        // The space and slot tables (a store of an earlier version has no
        // marker table).
        if self.table_count()? < 2 {
            return Ok((as_u64(now), Vec::new()));
        }
        let spaces = self.query(
            "SELECT space_key, space_text FROM snowmint_lease_space ORDER BY space_key",
            &[],
        )?;
        let rows = self.query(
            "SELECT space_key, slot, token, counter, expires_ms, hwm_ms FROM snowmint_lease_slot \
             ORDER BY space_key, slot",
            &[],
        )?;
        let text = |v: &Val| match v {
            Val::S(s) => s.clone(),
            Val::I(i) => i.to_string(),
        };
        let mut out: Vec<SpaceRecord> = spaces
            .iter()
            .map(|r| SpaceRecord {
                key: text(&r[0]),
                text: text(&r[1]),
                slots: Vec::new(),
                marker: None,
            })
            .collect();
        self.list_markers(&mut out)?;
        for r in &rows {
            let key = text(&r[0]);
            // Slot rows are written after their space's row: a row without
            // one is not shown.
            let Some(space) = out.iter_mut().find(|s| s.key == key) else {
                continue;
            };
            let slot = u64::try_from(int(&r[1])).map_err(|_| bad_row(&key))?;
            space.slots.push(slot_record(
                slot,
                &text(&r[2]),
                whole(&r[3], "counter", &r[1], &key)?,
                whole(&r[4], "expires_ms", &r[1], &key)?,
                whole(&r[5], "hwm_ms", &r[1], &key)?,
                now,
            ));
        }
        Ok((as_u64(now), out))
    }

    /// Operations: frees the slot's row if it is expired (or held, with
    /// `force`), keeping `hwm` or setting it to `reset_hwm_ms` (never on a
    /// live claim), in one transaction on the locked row.
    pub(super) fn release_slot(
        &mut self,
        key: &str,
        slot: u64,
        force: bool,
        reset_hwm_ms: Option<u64>,
    ) -> Result<SlotRelease, StoreError> {
        self.transaction(
            |c| c.release_slot_in_transaction(key, slot, force, reset_hwm_ms),
            |r| matches!(r, SlotRelease::Released(_)),
        )
    }

    fn release_slot_in_transaction(
        &mut self,
        key: &str,
        slot: u64,
        force: bool,
        reset_hwm_ms: Option<u64>,
    ) -> Result<SlotRelease, StoreError> {
        let sql = format!(
            "SELECT token, counter, expires_ms, hwm_ms, {} FROM snowmint_lease_slot \
             WHERE space_key = ? AND slot = ? FOR UPDATE",
            self.now_sql()
        );
        let rows = self.query(&sql, &[Val::S(key.into()), Val::I(as_i64(slot))])?;
        let Some(r) = rows.first() else {
            return Ok(SlotRelease::WasFree);
        };
        let token = match &r[0] {
            Val::S(s) => s.clone(),
            Val::I(_) => return Err(bad_row(key)),
        };
        let at = Val::I(as_i64(slot));
        let record = slot_record(
            slot,
            &token,
            whole(&r[1], "counter", &at, key)?,
            whole(&r[2], "expires_ms", &at, key)?,
            whole(&r[3], "hwm_ms", &at, key)?,
            int(&r[4]),
        );
        let hwm_ms = match ReleaseStep::check(&record, force, reset_hwm_ms) {
            Ok(hwm_ms) => hwm_ms,
            Err(done) => return Ok(done),
        };
        self.query(
            "UPDATE snowmint_lease_slot SET token = '', expires_ms = 0, hwm_ms = ? \
             WHERE space_key = ? AND slot = ?",
            &[
                Val::I(as_i64(hwm_ms)),
                Val::S(key.into()),
                Val::I(as_i64(slot)),
            ],
        )?;
        Ok(SlotRelease::Released(record))
    }
}

/// A slot row as an operator sees it, by the database's clock `now`.
fn slot_record(
    slot: u64,
    token: &str,
    counter: i64,
    expires: i64,
    hwm: i64,
    now: i64,
) -> SlotRecord {
    SlotRecord::expiring(
        slot,
        token.to_string(),
        as_u64(counter),
        as_u64(expires),
        as_u64(hwm),
        as_u64(now),
    )
}

fn bad_row(key: &str) -> StoreError {
    StoreError::BadRecord(format!("snowmint_lease_slot has a bad row for {key}"))
}

/// A claim request with the claimer's bound on store time + window.
struct Bounded {
    req: ClaimRequest,
    max_hwm_ms: u64,
    /// The space's fence under the server the claim was decided on.
    floor: Floor,
}

/// The claim written to a free slot whose row has `counter` and `old_hwm`;
/// refused (the transaction rolls back) above the claimer's bound.
fn new_claim(slot: u64, counter: i64, old_hwm: i64, now: i64, b: &Bounded) -> DbResult<Claim> {
    let req = &b.req;
    if let Err(StoreError::Refused(message)) =
        check_hwm_bound(as_u64(now), req.window_ms, b.max_hwm_ms)
    {
        return Err(super::transport::DbError {
            failure: Failure::Refused,
            message,
        });
    }
    // Every slot counts as at least the fence; the cause is given while
    // the fence is what sets the start and is still ahead.
    let floor = &b.floor;
    let fence = floor
        .cause
        .filter(|_| floor.fence_ms > now && old_hwm <= floor.fence_ms);
    let old_hwm = old_hwm.max(floor.fence_ms);
    let expires = now.saturating_add(as_i64(req.ttl_ms));
    let hwm = old_hwm.max(now.saturating_add(as_i64(req.window_ms)));
    Ok(Claim {
        holder: Holder {
            slot,
            token: new_token(),
            counter: as_u64(counter) + 1,
        },
        prev_hwm_ms: as_u64(old_hwm),
        hwm_ms: as_u64(hwm),
        expires_ms: Some(as_u64(expires)),
        fence,
    })
}
