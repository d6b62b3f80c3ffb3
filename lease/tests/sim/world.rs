//! The world: holders (processes with their own clocks and settings), the
//! network between them and the model store (latency, lost requests and
//! replies, calls applied twice or past their deadline), and the seeded
//! scheduler. Every decision a holder takes is the driver's (`decide`).

use snowmint::{Layout, Next, Options, PureGenerator};
use snowmint_lease::decide::{self, Renewed};
use snowmint_lease::{
    hwm_bound, Claim, ClaimRequest, Holder, Renewal, Settings, SlotSpace, StoreError,
};

use crate::check::{Checker, Kind, Tenure};
use crate::model::{Caller, Flavor, Model, Protections, Rng};

pub const T0: u64 = 1_800_000_000_000;

/// What a run varies; the negative controls turn one protection off.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub store: Protections,
    /// The successor starts above `prev_hwm_ms` (the driver's `resume_after`).
    pub resume_after: bool,
    /// A holder's clock counts the time its machine was suspended
    /// (`CLOCK_BOOTTIME`); off: it stops (`CLOCK_MONOTONIC`), and lags after.
    pub suspend_safe: bool,
    /// Holders use different `max_skew_ms` (a misconfiguration).
    pub mixed_skews: bool,
    /// SQL stores may also lose writes without a new identity (an
    /// asynchronous replica promoted): a loss no store can detect.
    pub undetectable: bool,
    /// Only this store flavor (`None`: the seed picks).
    pub flavor: Option<Flavor>,
    /// A claim may act on a store clock no skew check saw: the clock may be
    /// stepped between the driver's skew check and its claim (two calls),
    /// and a claim may be applied past its deadline (its check long past).
    pub unchecked_claims: bool,
    /// How far each holder's clock may be from true time, ms: its offset
    /// and every step of its machine's wall clock stay within this.
    pub holder_error: u64,
    /// On a renewal without an answer, the holder raises its bound anyway
    /// (to what the renewal asked for): a driver that does not wait for the
    /// store's confirmation.
    pub unconfirmed_bound: bool,
    /// Losses never take the marker (no wipes; the marker was written long
    /// before the writes lost).
    pub marker_survives: bool,
    /// Every loss wipes the store (the marker with the records): Redis
    /// only, restarted without persistence or `FLUSHALL`ed.
    pub wipes_only: bool,
    /// Each holder's clock keeps an offset of its own from true time, within
    /// its `max_skew_ms`; the store's clock stays within `max_skew_ms` of every
    /// such holder's (its steps, a replica's clock); and one more holder's
    /// clock is further from every store clock than its `max_skew_ms`: its
    /// claims must all be refused.
    pub own_clocks: bool,
    /// The driver's skew check before a claim (off: a negative control).
    pub skew_check: bool,
}

pub const SAFE: Variant = Variant {
    store: Protections {
        fence: true,
        fence_skews: 2,
        epoch_check: true,
        settings_check: true,
        sql_identity: true,
        hwm_bound: true,
        keep_old_fence: false,
    },
    resume_after: true,
    suspend_safe: true,
    mixed_skews: false,
    undetectable: false,
    flavor: None,
    unchecked_claims: false,
    holder_error: 0,
    unconfirmed_bound: false,
    marker_survives: false,
    wipes_only: false,
    own_clocks: false,
    skew_check: true,
};

#[derive(Default, Debug)]
pub struct Counts {
    pub schedules: u64,
    pub steps: u64,
    pub ids: u64,
    pub batches: u64,
    pub claims: u64,
    pub renewals: u64,
    pub releases: u64,
    pub lost: u64,
    pub drop_reply: u64,
    pub lost_request: u64,
    pub twice: u64,
    pub delayed: u64,
    pub late_claims_released: u64,
    pub store_clock_steps: u64,
    pub store_clock_far_ahead: u64,
    pub holder_clock_steps: u64,
    pub suspends: u64,
    pub losses: u64,
    pub undetectable_losses: u64,
    pub fenced_claims: u64,
    pub crashes: u64,
    pub skew_refusals: u64,
    pub refused: u64,
    /// Claims of the holder whose clock is beyond its `max_skew_ms`
    /// (`Variant::own_clocks`) refused by the skew check or the store.
    pub far_clock_refusals: u64,
}

enum Call {
    Claim(ClaimRequest, Caller),
    Renew(Holder, u64, u64, u64),
    Release(Holder, u64),
}

enum Answer {
    Claim(Result<Claim, StoreError>),
    Renew(Result<Renewal, StoreError>),
    Release,
}

struct Held {
    holder: Holder,
    gen: PureGenerator,
    prev_hwm: u64,
    hwm: u64,
    max_confirmed: u64,
    tenure: usize,
}

struct Proc {
    s: Settings,
    /// The machine's wall clock minus true time, ms (what a new process reads).
    wall: i64,
    /// This process's clock minus true time, ms: the wall clock read at its
    /// start, advanced by elapsed time (a wall step while it runs is unseen).
    clock: i64,
    held: Option<Held>,
    last_slot: Option<u64>,
    suspended_until: u64,
    /// Its clock is further from the store's than its `max_skew_ms`
    /// (`Variant::own_clocks`).
    far: bool,
}

pub struct World<'a> {
    rng: Rng,
    v: Variant,
    layout: Layout,
    space: SlotSpace,
    store: Model,
    /// The space's `redis_max_window_ms`: every holder's.
    max_window: u64,
    /// The store clock steps' range: twice the (largest) skew bound.
    base_skew: u64,
    /// With `Variant::own_clocks`: the store clock's offsets from true time
    /// within `max_skew_ms` of every holder's (but the far one's), ms.
    band: Option<(i64, i64)>,
    real: u64,
    procs: Vec<Proc>,
    delayed: Vec<(u64, Call)>,
    pub check: Checker,
    counts: &'a mut Counts,
    trace: bool,
}

fn layout() -> Layout {
    // 4 slots, so holders collide on them; 1 ms units.
    Layout::new(
        T0 - 1_000_000,
        1,
        &[("timestamp", 41), ("worker", 2), ("sequence", 8)],
    )
    .unwrap()
}

impl World<'_> {
    fn t(&self, ms: u64) -> i64 {
        ms as i64 - T0 as i64
    }

    fn local(&self, p: usize) -> u64 {
        (self.real as i64 + self.procs[p].clock) as u64
    }

    /// True time passes; the store's clock runs with it.
    fn advance(&mut self, dt: u64) {
        self.real += dt;
        self.store.now += dt;
        let real = self.real;
        let mut i = 0;
        while i < self.delayed.len() {
            if self.delayed[i].0 <= real {
                let (_, call) = self.delayed.swap_remove(i);
                self.late(call);
            } else {
                i += 1;
            }
        }
    }

    fn apply(&mut self, call: &Call) -> Answer {
        let writes = self.store.clock_writes.len();
        let a = match call {
            Call::Claim(req, c) => Answer::Claim(self.store.claim(req, *c)),
            Call::Renew(h, ttl, w, b) => Answer::Renew(self.store.renew(h, *ttl, *w, *b)),
            Call::Release(h, last) => {
                let _ = self.store.release(h, *last);
                Answer::Release
            }
        };
        if let Answer::Claim(Err(StoreError::Refused(_)))
        | Answer::Renew(Err(StoreError::Refused(_))) = a
        {
            self.counts.refused += 1;
        }
        // The store wrote `hwm` from its clock: was that clock further ahead
        // than any holder's clock could justify?
        if self.store.clock_writes.len() > writes {
            let (now, _) = self.store.clock_writes[writes];
            // (The far holder's clock, which no store clock is near, aside.)
            let ahead = self
                .procs
                .iter()
                .filter(|p| !p.far)
                .map(|p| p.clock)
                .max()
                .unwrap_or(0)
                .max(0) as u64;
            let most = self
                .procs
                .iter()
                .map(|p| p.s.timeout_ms + p.s.max_skew_ms)
                .max()
                .unwrap();
            if now > self.real + ahead + most {
                let d = format!(
                    "the store wrote hwm from its clock at {} ms, {} ms ahead of true time",
                    self.t(now),
                    now - self.real
                );
                self.check.report(Kind::PoisonedHwm, d);
            }
        }
        a
    }

    /// One store call through the network: sent now, applied after the
    /// request's latency, answered after the reply's. `None`: no answer
    /// within the caller's `timeout_ms` (the worker reports `Unreachable`).
    fn call(&mut self, p: usize, call: Call) -> Option<Answer> {
        let timeout = self.procs[p].s.timeout_ms;
        let half = timeout / 2 + 1;
        let roll = self.rng.below(100);
        match roll {
            0..=3 => {
                self.counts.drop_reply += 1;
                let d = self.rng.below(half);
                self.advance(d);
                self.late(call);
                self.advance(timeout - d);
                None
            }
            4..=6 => {
                self.counts.lost_request += 1;
                self.advance(timeout);
                None
            }
            7..=9 => {
                self.counts.twice += 1;
                let d = self.rng.below(half);
                self.advance(d);
                let first = self.apply(&call);
                self.handle_late(first);
                let a = self.apply(&call);
                let d = self.rng.below(half);
                self.advance(d);
                Some(a)
            }
            10..=13 if self.v.unchecked_claims || !matches!(call, Call::Claim(..)) => {
                self.counts.delayed += 1;
                let ttl = self.procs[p].s.ttl_ms;
                let due = self.real + timeout + 1 + self.rng.below(2 * ttl);
                self.delayed.push((due, call));
                self.advance(timeout);
                None
            }
            _ => {
                let d = self.rng.below(half);
                self.advance(d);
                let a = self.apply(&call);
                let d = self.rng.below(half);
                self.advance(d);
                Some(a)
            }
        }
    }

    /// Applies a call whose caller gave up waiting; handles its answer as
    /// the driver's worker does.
    fn late(&mut self, call: Call) {
        let a = self.apply(&call);
        self.handle_late(a);
    }

    fn handle_late(&mut self, a: Answer) {
        if let Answer::Claim(Ok(claim)) = a {
            self.counts.late_claims_released += 1;
            let hwm = decide::late_claim_hwm(&claim);
            let _ = self.store.release(&claim.holder, hwm);
        }
    }

    fn stop(&mut self, p: usize) -> Option<Held> {
        let h = self.procs[p].held.take()?;
        self.check.tenures[h.tenure].live = false;
        Some(h)
    }

    /// A store clock offset from true time within `band`: half the time at
    /// one of its ends, where a holder's clock is `max_skew_ms` away.
    fn in_band(&mut self, (lo, hi): (i64, i64)) -> u64 {
        let offset = match self.rng.below(4) {
            0 => lo,
            1 => hi,
            _ => lo + self.rng.below((hi - lo) as u64 + 1) as i64,
        };
        (self.real as i64 + offset) as u64
    }

    fn step_store_clock(&mut self) {
        self.counts.store_clock_steps += 1;
        if let Some(band) = self.band {
            self.store.now = self.in_band(band);
            return;
        }
        let d = self.rng.below(2 * self.base_skew);
        let m = &mut self.store;
        m.now = match self.rng.below(10) {
            // NTP puts it right again.
            0..=3 => self.real,
            4..=6 => m.now + d,
            _ => m.now - d,
        };
    }

    fn claim(&mut self, p: usize) {
        self.counts.claims += 1;
        let s = self.procs[p].s.clone();
        let half = s.timeout_ms / 2 + 1;
        // The driver's skew check: the store's clock between two local
        // readings (no faults: a failed read is just a failed claim).
        let before = self.local(p);
        let d = self.rng.below(half);
        self.advance(d);
        let store_ms = self.store.now;
        let d = self.rng.below(half);
        self.advance(d);
        let after = self.local(p);
        if self.v.skew_check && decide::claim_skew("model", before, store_ms, after, &s).is_err() {
            self.counts.skew_refusals += 1;
            if self.procs[p].far {
                self.counts.far_clock_refusals += 1;
            }
            return;
        }
        // The gap between the skew check and the claim: time passes, and
        // the store's clock may be stepped in it.
        if self.rng.chance(20) {
            let d = self.rng.below(s.timeout_ms);
            self.advance(d);
            if self.v.unchecked_claims && self.rng.chance(30) {
                self.step_store_clock();
            }
        }
        let prefer = if self.rng.chance(50) {
            self.procs[p].last_slot
        } else {
            None
        };
        let req = ClaimRequest::new(prefer, s.ttl_ms, s.window_ms);
        let caller = Caller {
            max_window: self.max_window,
            max_skew: s.max_skew_ms,
            max_hwm: hwm_bound(self.local(p), s.timeout_ms, s.max_skew_ms, s.window_ms),
        };
        // The driver's limit counts from the time the claim was sent.
        let sent = self.local(p);
        let answer = self.call(p, Call::Claim(req, caller));
        if self.procs[p].far {
            if let Some(Answer::Claim(Err(StoreError::Refused(_)))) = answer {
                self.counts.far_clock_refusals += 1;
            }
        }
        let Some(Answer::Claim(Ok(claim))) = answer else {
            return;
        };
        if self.procs[p].far {
            let d = format!(
                "p{p}, whose clock is {:+} ms from true time (store clock {:+} ms), claimed slot {}",
                self.procs[p].clock,
                self.store.now as i64 - self.real as i64,
                claim.holder.slot
            );
            self.check.report(Kind::FarClockClaimed, d);
        }
        let now = self.local(p);
        let start = match decide::start("model", &self.space, &claim, Options::default(), sent, &s)
        {
            Ok(x) => x,
            Err(_) => {
                let _ = self.store.release(&claim.holder, claim.prev_hwm_ms);
                return;
            }
        };
        let mut options = start.options;
        if !self.v.resume_after {
            options.resume_after = None;
        }
        let floor = match options.resume_after {
            Some(id) => self.layout.decompose(id).unwrap().timestamp_ms() + 1,
            None => now,
        };
        let mut gen = PureGenerator::new(self.layout, start.nodes, options).unwrap();
        gen.reserve_until(Some(start.limit_ms));
        if self.trace {
            println!(
                "  {} p{p} claims slot {} prev_hwm {} hwm {} limit {} (store clock {}, identity {})",
                self.t(self.real),
                claim.holder.slot,
                self.t(claim.prev_hwm_ms),
                self.t(claim.hwm_ms),
                self.t(start.limit_ms),
                self.t(self.store.now),
                self.store.identity
            );
        }
        if floor <= claim.prev_hwm_ms {
            let d = format!(
                "p{p} claimed slot {} and may issue from {} ms, at or below prev_hwm {} ms (what a predecessor may have issued)",
                claim.holder.slot,
                self.t(floor),
                self.t(claim.prev_hwm_ms)
            );
            self.check.report(Kind::SuccessorBelowPredecessor, d);
        }
        let tenure = self.check.start(
            Tenure {
                slot: claim.holder.slot,
                proc: p,
                floor,
                limit: start.limit_ms,
                max_issued: None,
                live: true,
            },
            T0,
        );
        self.procs[p].last_slot = Some(claim.holder.slot);
        self.procs[p].held = Some(Held {
            holder: claim.holder,
            gen,
            prev_hwm: claim.prev_hwm_ms,
            hwm: claim.hwm_ms,
            max_confirmed: claim.hwm_ms,
            tenure,
        });
    }

    fn renew(&mut self, p: usize) {
        self.counts.renewals += 1;
        let s = self.procs[p].s.clone();
        let Some(h) = &self.procs[p].held else { return };
        let (holder, prev_hwm) = (h.holder.clone(), h.hwm);
        let sent = self.local(p);
        let bound = hwm_bound(sent, s.timeout_ms, s.max_skew_ms, s.window_ms);
        let result = match self.call(p, Call::Renew(holder, s.ttl_ms, s.window_ms, bound)) {
            Some(Answer::Renew(r)) => r,
            _ => Err(StoreError::Unreachable("no answer".into())),
        };
        let got = self.local(p);
        let decision = decide::after_renewal(result, prev_hwm, sent, got, &s);
        if self.trace {
            println!("  {} p{p} renewal: {decision:?}", self.t(self.real));
        }
        match decision {
            Renewed::Confirmed {
                hwm_ms, limit_ms, ..
            } => {
                let held = self.procs[p].held.as_mut().unwrap();
                held.gen.reserve_until(Some(limit_ms));
                held.hwm = hwm_ms;
                held.max_confirmed = held.max_confirmed.max(hwm_ms);
                let t = &mut self.check.tenures[held.tenure];
                t.limit = t.limit.max(limit_ms);
            }
            Renewed::Lost(_) => {
                self.counts.lost += 1;
                self.stop(p);
            }
            Renewed::Failed(_) if self.v.unconfirmed_bound => {
                let limit = decide::limit(sent + s.window_ms, sent, &s);
                let held = self.procs[p].held.as_mut().unwrap();
                held.gen.reserve_until(Some(limit));
                let t = &mut self.check.tenures[held.tenure];
                t.limit = t.limit.max(limit);
            }
            Renewed::Failed(_) => {}
        }
    }

    fn close(&mut self, p: usize) {
        self.counts.releases += 1;
        let Some(h) = self.stop(p) else { return };
        let last = decide::release_hwm(h.gen.last_ms(), h.prev_hwm);
        let _ = self.call(p, Call::Release(h.holder, last));
    }

    fn issue(&mut self, p: usize) {
        let now = self.local(p);
        let n = 1 + self.rng.below(4) as usize;
        // A third of the time a batch (`next_ids`' path), else one at a time.
        let batch = self.rng.chance(33);
        let Some(h) = self.procs[p].held.as_mut() else {
            return;
        };
        let mut ids = Vec::with_capacity(n);
        if batch {
            let mut out = vec![0u64; n];
            let (done, _) = h.gen.fill(now, &mut out);
            ids.extend_from_slice(&out[..done]);
            self.counts.batches += 1;
        } else {
            for _ in 0..n {
                match h.gen.next(now) {
                    Ok(Next::Id(id)) => ids.push(id.get()),
                    _ => break,
                }
            }
        }
        let (slot, prev, max, tenure) = (h.holder.slot, h.prev_hwm, h.max_confirmed, h.tenure);
        for id in ids {
            self.counts.ids += 1;
            let ms = self.layout.decompose(id).unwrap().timestamp_ms();
            if self.trace {
                println!(
                    "  {} p{p} issued slot {slot} at {}",
                    self.t(self.real),
                    self.t(ms)
                );
            }
            if ms > max || ms <= prev {
                let d = format!(
                    "p{p} issued {id} at {} ms outside its reservation ({}, {}]",
                    self.t(ms),
                    self.t(prev),
                    self.t(max)
                );
                self.check.report(Kind::ReservationOverrun, d);
            }
            if !self.check.issued(tenure, id, ms) {
                let d = format!(
                    "p{p} issued {id} (slot {slot}, {} ms) which was issued before",
                    self.t(ms)
                );
                self.check.report(Kind::DuplicateId, d);
            }
        }
    }

    fn lose(&mut self) {
        self.counts.losses += 1;
        let n = 1 + self.rng.below(4) as usize;
        let other_clock = |w: &mut Self| {
            // The store is another machine now: its own clock.
            w.store.now = match w.band {
                Some(band) => w.in_band(band),
                None => w.real + w.rng.below(2 * w.base_skew + 1) - w.base_skew,
            };
        };
        let keep = self.v.marker_survives;
        let kinds = if self.v.wipes_only { 2 } else { 4 };
        let what = match self.store.flavor {
            Flavor::Redis => match self.rng.below(kinds) {
                0 if !keep => {
                    self.store.lose(None, true, false);
                    "restart without persistence"
                }
                1 if !keep => {
                    self.store.lose(None, false, false);
                    "FLUSHALL"
                }
                0..=2 => {
                    self.store.lose(Some(n), true, keep);
                    "restart from an RDB snapshot"
                }
                _ => {
                    self.store.lose(Some(n), true, keep);
                    other_clock(self);
                    "failover to a replica behind"
                }
            },
            Flavor::Sql => {
                if self.v.undetectable && self.rng.chance(50) {
                    self.counts.undetectable_losses += 1;
                    self.store.lose(Some(n), false, keep);
                    other_clock(self);
                    "asynchronous replica promoted (same identity)"
                } else {
                    self.store.lose(Some(n), true, keep);
                    other_clock(self);
                    "a restore or a standby from a backup (new identity)"
                }
            }
        };
        if self.trace {
            println!("  {} store: {what}", self.t(self.real));
        }
    }

    fn step(&mut self) {
        self.counts.steps += 1;
        match self.rng.below(100) {
            0..=27 => {
                let dt = self.rng.below(40);
                self.advance(dt);
            }
            28..=87 => {
                let p = self.rng.below(self.procs.len() as u64) as usize;
                if self.real < self.procs[p].suspended_until {
                    return;
                }
                if self.procs[p].held.is_none() {
                    self.claim(p);
                    return;
                }
                match self.rng.below(100) {
                    0..=59 => self.issue(p),
                    60..=89 => self.renew(p),
                    90..=95 => self.close(p),
                    _ => {
                        // A crash: no release; a new process reads the wall clock.
                        self.counts.crashes += 1;
                        self.stop(p);
                        self.procs[p].clock = self.procs[p].wall;
                    }
                }
            }
            88..=91 => self.step_store_clock(),
            92 => {
                // The store's clock stepped far ahead (an NTP step, a VM
                // restored from a snapshot), now and then; the next small
                // step's reset puts it right.
                if !self.rng.chance(30) {
                    return;
                }
                self.counts.store_clock_far_ahead += 1;
                self.store.now += 2_000 + self.rng.below(8_000);
            }
            93..=94 => {
                // The machine's wall clock stepped; the running process's
                // clock does not follow (read once, advanced by elapsed time);
                // the next process reads it.
                if self.v.own_clocks {
                    // Each keeps its own offset.
                    return;
                }
                self.counts.holder_clock_steps += 1;
                let p = self.rng.below(self.procs.len() as u64) as usize;
                let e = self.v.holder_error;
                self.procs[p].wall = self.rng.below(2 * e + 1) as i64 - e as i64;
            }
            95 => {
                self.counts.suspends += 1;
                let p = self.rng.below(self.procs.len() as u64) as usize;
                // Half short (the clock of a suspend-unsafe holder then lags
                // by less than the store's clock may), half past the TTL.
                // (Short only without the suspend-safe clock: a lag longer
                // than the store's clock may stray makes the holder's skew
                // check refuse every claim.)
                let most = if !self.v.suspend_safe || self.rng.chance(50) {
                    3 * self.base_skew
                } else {
                    3 * self.procs[p].s.ttl_ms
                };
                let d = 1 + self.rng.below(most);
                self.procs[p].suspended_until = self.real + d;
                if !self.v.suspend_safe {
                    self.procs[p].clock -= d as i64;
                }
            }
            _ => self.lose(),
        }
    }
}

/// Runs schedule `seed`; the violations found (empty: none).
pub fn schedule(seed: u64, v: Variant, counts: &mut Counts, trace: bool) -> Checker {
    let mut rng = Rng(seed);
    let flavor = v.flavor.unwrap_or(if v.wipes_only || rng.chance(50) {
        Flavor::Redis
    } else {
        Flavor::Sql
    });
    let max_window = 600;
    let skews: &[u64] = if v.mixed_skews { &[20, 50, 150] } else { &[50] };
    let layout = layout();
    let space = SlotSpace::new(layout, &[], None).unwrap();
    let nprocs = 2 + rng.below(3) as usize;
    let procs: Vec<Proc> = (0..nprocs)
        .map(|_| {
            let ttl = [300, 450][rng.below(2) as usize];
            // Half reserve past the TTL: a paused holder then still issues
            // inside its reservation while its successor runs.
            let window = [150, max_window][rng.below(2) as usize];
            let e = v.holder_error;
            let wall = rng.below(2 * e + 1) as i64 - e as i64;
            Proc {
                s: Settings {
                    ttl_ms: ttl,
                    renew_ms: ttl / 3,
                    window_ms: window,
                    max_skew_ms: skews[rng.below(skews.len() as u64) as usize],
                    timeout_ms: [20, 40][rng.below(2) as usize],
                    redis_max_window_ms: max_window,
                    ..Settings::default()
                },
                wall,
                clock: wall,
                held: None,
                last_slot: None,
                suspended_until: 0,
                far: false,
            }
        })
        .collect();
    let mut procs = procs;
    let band = v.own_clocks.then(|| own_clocks(&mut rng, &mut procs));
    let base_skew = 50;
    let init = Caller {
        max_window,
        max_skew: skews[rng.below(skews.len() as u64) as usize],
        max_hwm: u64::MAX,
    };
    let store = Model::new(flavor, v.store, T0, space.slots() as usize, init);
    let steps = 60 + rng.below(80);
    if trace {
        println!("store {flavor:?}, {nprocs} holders");
        for (i, p) in procs.iter().enumerate() {
            let s = &p.s;
            println!(
                "  p{i}: ttl {} window {} max_skew {} timeout {} clock {:+}{}",
                s.ttl_ms,
                s.window_ms,
                s.max_skew_ms,
                s.timeout_ms,
                p.clock,
                if p.far { " (beyond max_skew)" } else { "" }
            );
        }
    }
    let mut w = World {
        rng,
        v,
        layout,
        space,
        store,
        max_window,
        base_skew,
        band,
        real: T0,
        procs,
        delayed: Vec::new(),
        check: Checker::default(),
        counts,
        trace,
    };
    for _ in 0..steps {
        w.step();
        // Stop at the first violation other than a successor below its
        // predecessor (kept going, to see whether IDs repeat after it).
        if w.check
            .found
            .iter()
            .any(|v| v.kind != Kind::SuccessorBelowPredecessor)
        {
            break;
        }
    }
    w.counts.fenced_claims += w.store.fences;
    w.counts.schedules += 1;
    w.check
}

/// `Variant::own_clocks`: gives each holder its own clock offset within its
/// `max_skew_ms`, and adds one whose clock is further than its `max_skew_ms`
/// (plus a round trip, which the skew check's midpoint may absorb) from
/// every store clock the band returned allows: offsets from true time within
/// `max_skew_ms` of every other holder's clock.
fn own_clocks(rng: &mut Rng, procs: &mut Vec<Proc>) -> (i64, i64) {
    for p in procs.iter_mut() {
        let k = p.s.max_skew_ms;
        p.wall = rng.below(2 * k + 1) as i64 - k as i64;
        p.clock = p.wall;
    }
    let lo = procs
        .iter()
        .map(|p| p.wall - p.s.max_skew_ms as i64)
        .max()
        .unwrap();
    let hi = procs
        .iter()
        .map(|p| p.wall + p.s.max_skew_ms as i64)
        .min()
        .unwrap();
    assert!(lo <= hi, "holder clocks within max_skew_ms of true time");
    let s = procs[rng.below(procs.len() as u64) as usize].s.clone();
    let beyond = (s.max_skew_ms + s.timeout_ms + 1 + rng.below(50)) as i64;
    let wall = if rng.chance(50) {
        hi + beyond
    } else {
        lo - beyond
    };
    procs.push(Proc {
        s,
        wall,
        clock: wall,
        held: None,
        last_slot: None,
        suspended_until: 0,
        far: true,
    });
    (lo, hi)
}
