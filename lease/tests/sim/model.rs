//! The model store: slot records, the space's marker, an undo log of writes
//! (what a rollback, a replica behind or an RDB snapshot loses), a server
//! identity and a clock of its own. It detects a loss only the way the real
//! stores do: at the next claim, by a marker that is missing or names
//! another server (Redis: `run_id`/`master_replid`; SQL: the system
//! identifier), and a renewal or release answers *lost* only when the
//! marker does not name this server with the record's epoch. A loss that
//! keeps the identity and the marker (an asynchronous SQL replica promoted,
//! same system identifier) is not detected at all.

use snowmint_lease::{Claim, ClaimRequest, Holder, Renewal, StoreError};

/// SplitMix64: small, seedable, good enough to pick events.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Which store's detection the model follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Redis: loses records on a restart without persistence, `FLUSHALL`, a
    /// restart from an RDB snapshot, a failover to a replica behind; a restart
    /// or failover changes the identity, `FLUSHALL` does not (the marker goes
    /// with the records).
    Redis,
    /// A SQL store: loses confirmed writes only when it becomes another
    /// cluster (a restore, a standby rebuilt from a backup: a new system
    /// identifier), or, undetectably, when an asynchronous replica is
    /// promoted (same identifier).
    Sql,
}

#[derive(Clone, Copy, Debug)]
pub struct Rec {
    /// The holder's token (0: none); `Holder::token` is its hex form.
    pub token: u64,
    pub counter: u64,
    pub expires: u64,
    pub hwm: u64,
    pub epoch: u64,
}

/// The space's marker (Redis's `:marker` hash; the SQL store's identity row).
#[derive(Clone, Debug)]
pub struct Marker {
    pub server: u64,
    pub epoch: u64,
    pub fence: u64,
    /// The settings of the claimer that wrote it (the settings check).
    pub max_window: u64,
    pub max_skew: u64,
}

/// What the store does, with switches for the negative controls.
#[derive(Clone, Copy, Debug)]
pub struct Protections {
    /// A claim that finds the marker missing or naming another server fences.
    pub fence: bool,
    /// The fence's margin: `max_window + fence_skews * max_skew`.
    pub fence_skews: u64,
    /// Renewals and releases of a claim made under another epoch are lost.
    pub epoch_check: bool,
    /// The marker records `max_window`/`max_skew`; a claim with others is
    /// refused, and a fence over a marker of another server takes the larger.
    pub settings_check: bool,
    /// The SQL store compares the marker's server with its system identifier
    /// (off: the marker is current whenever it exists).
    pub sql_identity: bool,
    /// Claims and renewals are refused above the caller's `max_hwm`.
    pub hwm_bound: bool,
    /// Redis refuses a claim while its clock reads below the claim's
    /// `min_store_ms` (the claimer's clock when it sent it − `max_skew_ms`);
    /// the SQL stores do not check it.
    pub min_store: bool,
    /// A fence over a marker of another server keeps that marker's fence if
    /// it is higher (the Redis script and the SQL store write `now + span`
    /// alone): holders of older epochs stay covered when the settings of the
    /// claimers that fenced differ.
    pub keep_old_fence: bool,
}

enum Undo {
    Slot(usize, Option<Rec>),
    Marker(Option<Marker>),
}

pub struct Model {
    pub flavor: Flavor,
    pub p: Protections,
    /// The store's clock, Unix ms (virtual).
    pub now: u64,
    /// True time, Unix ms (virtual): what `clock_writes` are checked against.
    pub real: u64,
    /// The network delivers the next request twice.
    pub twice: bool,
    /// Calls refused (settings, `max_hwm`), for the counts.
    pub refused: u64,
    pub slots: Vec<Option<Rec>>,
    pub marker: Option<Marker>,
    log: Vec<Undo>,
    /// The server's identity (run_id/replid, or the system identifier).
    pub identity: u64,
    tokens: u64,
    /// Claims that fenced (a detected loss), for the counts.
    pub fences: u64,
    /// Every `hwm` written from the store's clock: (store now, true time),
    /// checked by the world.
    pub clock_writes: Vec<(u64, u64)>,
}

/// The claimer's settings a claim carries to the store.
#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub max_window: u64,
    pub max_skew: u64,
    pub max_hwm: u64,
}

impl Model {
    /// A store on which `lease init` (Redis), or the SQL store's setup,
    /// wrote the marker long ago with `init`'s settings: the first claims
    /// need no fence.
    pub fn new(flavor: Flavor, p: Protections, now: u64, slots: usize, init: Caller) -> Model {
        Model {
            flavor,
            p,
            now,
            real: now,
            twice: false,
            refused: 0,
            slots: vec![None; slots],
            marker: Some(Marker {
                server: 1,
                epoch: 0,
                fence: 0,
                max_window: init.max_window,
                max_skew: init.max_skew,
            }),
            log: Vec::new(),
            identity: 1,
            tokens: 0,
            fences: 0,
            clock_writes: Vec::new(),
        }
    }

    fn write(&mut self, slot: usize, rec: Rec) {
        let old = self.slots[slot].replace(rec);
        self.log.push(Undo::Slot(slot, old));
    }

    fn write_marker(&mut self, m: Marker) {
        let old = self.marker.replace(m);
        self.log.push(Undo::Marker(old));
    }

    /// Loses the last `n` writes, or all of them (`None`, the marker too);
    /// `new_identity`: the server that answers from now on is another one.
    /// `keep_marker`: the marker, written long before, survives (a restart
    /// from an AOF or a failover that lost only the last writes).
    pub fn lose(&mut self, n: Option<usize>, new_identity: bool, keep_marker: bool) {
        let marker = self.marker.clone();
        match n {
            None => {
                self.slots.iter_mut().for_each(|s| *s = None);
                self.marker = None;
                self.log.clear();
            }
            Some(n) => {
                for _ in 0..n {
                    match self.log.pop() {
                        Some(Undo::Slot(slot, old)) => self.slots[slot] = old,
                        Some(Undo::Marker(old)) => self.marker = old,
                        None => break,
                    }
                }
            }
        }
        if keep_marker {
            self.marker = marker;
        }
        if new_identity {
            self.identity += 1;
        }
    }

    /// Whether the marker names this server (as the store can tell).
    fn marker_current(&self) -> bool {
        match &self.marker {
            None => false,
            Some(m) => {
                m.server == self.identity || (self.flavor == Flavor::Sql && !self.p.sql_identity)
            }
        }
    }

    fn too_far(&self, window: u64, max_hwm: u64) -> Result<(), StoreError> {
        if self.p.hwm_bound && self.now + window > max_hwm {
            return Err(StoreError::Refused("too far".into()));
        }
        Ok(())
    }

    pub fn claim(&mut self, req: &ClaimRequest, c: Caller) -> Result<Claim, StoreError> {
        let now = self.now;
        self.too_far(req.window_ms, c.max_hwm)?;
        if self.flavor == Flavor::Redis && self.p.min_store && now < req.min_store_ms {
            return Err(StoreError::Refused("below this claim's lower bound".into()));
        }
        self.tokens += 1;
        let (fence, epoch) = if self.marker_current() {
            let m = self.marker.as_ref().unwrap();
            if self.p.settings_check && (m.max_window != c.max_window || m.max_skew != c.max_skew) {
                return Err(StoreError::Refused(
                    "settings differ from the marker's".into(),
                ));
            }
            (m.fence, m.epoch)
        } else {
            let mut span = c.max_window + self.p.fence_skews * c.max_skew;
            if let (true, Some(m)) = (self.p.settings_check, &self.marker) {
                span = span.max(m.max_window + self.p.fence_skews * m.max_skew);
            }
            let mut fence = if self.p.fence { now + span } else { 0 };
            if let (true, Some(m)) = (self.p.keep_old_fence, &self.marker) {
                fence = fence.max(m.fence);
            }
            let epoch = self.tokens;
            self.fences += 1;
            self.write_marker(Marker {
                server: self.identity,
                epoch,
                fence,
                max_window: c.max_window,
                max_skew: c.max_skew,
            });
            (fence, epoch)
        };
        let free = |r: &Option<Rec>| r.as_ref().is_none_or(|r| r.token == 0 || r.expires <= now);
        let pick = match req.prefer {
            Some(p) if (p as usize) < self.slots.len() && free(&self.slots[p as usize]) => {
                p as usize
            }
            _ => (0..self.slots.len())
                .find(|&i| free(&self.slots[i]))
                .ok_or(StoreError::NoFreeSlot)?,
        };
        let old = self.slots[pick];
        let prev = old.as_ref().map_or(0, |r| r.hwm).max(fence);
        let hwm = prev.max(now + req.window_ms);
        self.clock_writes.push((now, self.real));
        let holder = Holder {
            slot: pick as u64,
            token: format!("{:x}", self.tokens),
            counter: old.as_ref().map_or(0, |r| r.counter) + 1,
        };
        self.write(
            pick,
            Rec {
                token: self.tokens,
                counter: holder.counter,
                expires: now + req.ttl_ms,
                hwm,
                epoch,
            },
        );
        Ok(Claim {
            holder,
            prev_hwm_ms: prev,
            hwm_ms: hwm,
            expires_ms: Some(now + req.ttl_ms),
            fence: None,
        })
    }

    /// The record of `h` if it may still act on it.
    fn current(&self, h: &Holder) -> Result<Rec, StoreError> {
        let Some(r) = self.slots[h.slot as usize] else {
            return Err(StoreError::Lost("no record".into()));
        };
        if u64::from_str_radix(&h.token, 16) != Ok(r.token) || r.counter != h.counter {
            return Err(StoreError::Lost("another holder".into()));
        }
        if self.p.epoch_check
            && !(self.marker_current() && self.marker.as_ref().unwrap().epoch == r.epoch)
        {
            return Err(StoreError::Lost("claimed before a data loss".into()));
        }
        Ok(r)
    }

    pub fn renew(
        &mut self,
        h: &Holder,
        ttl_ms: u64,
        window_ms: u64,
        max_hwm: u64,
    ) -> Result<Renewal, StoreError> {
        let now = self.now;
        let r = self.current(h)?;
        self.too_far(window_ms, max_hwm)?;
        let hwm = r.hwm.max(now + window_ms);
        self.clock_writes.push((now, self.real));
        self.write(
            h.slot as usize,
            Rec {
                expires: now + ttl_ms,
                hwm,
                ..r
            },
        );
        Ok(Renewal {
            hwm_ms: hwm,
            expires_ms: Some(now + ttl_ms),
        })
    }

    pub fn release(&mut self, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let now = self.now;
        let r = self.current(h)?;
        self.write(
            h.slot as usize,
            Rec {
                token: 0,
                expires: now,
                hwm: last_ms,
                ..r
            },
        );
        Ok(())
    }
}
