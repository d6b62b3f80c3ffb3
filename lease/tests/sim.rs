//! A deterministic simulation of the lease protocol: an in-memory model store
//! with a virtual clock, several holders on manual clocks, and a seeded
//! scheduler that interleaves their calls with faults. Every decision a
//! holder takes on a store's answer is the real driver's
//! (`snowmint_lease::decide`); no threads, no sleeps.
//!
//! The checker: every ID issued is unique across holders and schedules of one
//! run, and each holder's IDs lie inside the reservations the store confirmed
//! to it (strictly above the claim's `prev_hwm_ms`, at most the largest `hwm`
//! confirmed).
//!
//! Faults, each chosen by the seed: a call applied and its reply dropped; a
//! request lost; a call applied twice; a call delayed past its deadline
//! (applied later, its answer handled as the driver handles a late one); the
//! store's clock stepped forward or back; the store losing its last N writes
//! (an RDB snapshot, a failover to a lagging replica) or everything (a
//! restart without persistence, `FLUSHALL`); holders crashing (no release) or
//! paused (not scheduled) past their TTL.
//!
//! A forgetful store is safe only with a fence: after a loss the store's
//! claims treat every slot's `hwm` as at least
//! `fence = store now + window + max skew` (what the Redis store's space
//! marker does). The negative controls below show the checker failing
//! without the fence, and without the successor's `resume_after`.
//!
//! Holders issue with `snowmint::PureGenerator`, not `snowmint::Generator`:
//! the latter shares one state word per node value across the process, which
//! would merge two simulated processes holding one slot and hide exactly the
//! repeated IDs this looks for.
//!
//! `SNOWMINT_SIM_SCHEDULES=N` runs N schedules (default 100,000);
//! `SNOWMINT_SIM_SEED=S` replays one schedule with a trace (with
//! `SNOWMINT_SIM_NO_FENCE=1`, `SNOWMINT_SIM_NO_RESUME=1` or
//! `SNOWMINT_SIM_FENCE_SKEWS=1`: as a negative control runs it).

use std::collections::HashSet;
use std::sync::Mutex;

use snowmint::{Clock, Layout, ManualClock, Next, Options, PureGenerator};
use snowmint_lease::decide::{self, Renewed};
use snowmint_lease::{
    Claim, ClaimRequest, Holder, Renewal, Settings, SlotSpace, Store, StoreError,
};

const T0: u64 = 1_800_000_000_000;

/// SplitMix64: small, seedable, good enough to pick events.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

// ---- the model store ------------------------------------------------------

#[derive(Clone, Debug)]
struct Rec {
    token: String,
    counter: u64,
    expires: u64,
    hwm: u64,
    /// How many losses the store had seen when this claim was made.
    epoch: u64,
}

struct Model {
    /// The store's clock, Unix ms (virtual).
    now: u64,
    slots: Vec<Option<Rec>>,
    /// Undo log: the slot and its record before each write.
    log: Vec<(usize, Option<Rec>)>,
    /// After a loss, with fencing: every claim treats `hwm` as at least this.
    fence: u64,
    fencing: bool,
    /// The fence's margin: the longest window plus the skew bound.
    fence_margin: u64,
    /// Losses so far.
    losses: u64,
    tokens: u64,
}

impl Model {
    fn write(&mut self, slot: usize, rec: Rec) {
        let old = self.slots[slot].replace(rec);
        self.log.push((slot, old));
    }

    /// The store loses its last `n` writes (or all of them).
    fn lose(&mut self, n: Option<usize>) {
        match n {
            None => {
                self.slots.iter_mut().for_each(|s| *s = None);
                self.log.clear();
            }
            Some(n) => {
                for _ in 0..n {
                    let Some((slot, old)) = self.log.pop() else {
                        break;
                    };
                    self.slots[slot] = old;
                }
            }
        }
        self.losses += 1;
        if self.fencing {
            self.fence = self.fence.max(self.now + self.fence_margin);
        }
    }
}

struct ModelStore(Mutex<Model>);

impl ModelStore {
    fn model(&self) -> std::sync::MutexGuard<'_, Model> {
        self.0.lock().unwrap()
    }
}

impl Store for ModelStore {
    fn describe(&self) -> String {
        "model".into()
    }

    fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(self.model().now)
    }

    // The model has no bound check: its holders' clocks are the model's.
    fn claim_within(
        &self,
        _: &SlotSpace,
        req: &ClaimRequest,
        _max_hwm_ms: u64,
    ) -> Result<Claim, StoreError> {
        let mut m = self.model();
        let now = m.now;
        let free = |r: &Option<Rec>| match r {
            None => true,
            Some(r) => r.token.is_empty() || r.expires <= now,
        };
        // The lowest free slot first, as the Redis store picks.
        let pick = match req.prefer {
            Some(p) if (p as usize) < m.slots.len() && free(&m.slots[p as usize]) => p as usize,
            _ => (0..m.slots.len())
                .find(|&i| free(&m.slots[i]))
                .ok_or(StoreError::NoFreeSlot)?,
        };
        let old = m.slots[pick].clone();
        let prev = old.as_ref().map_or(0, |r| r.hwm).max(m.fence);
        let hwm = prev.max(now + req.window_ms);
        m.tokens += 1;
        let epoch = m.losses;
        let holder = Holder {
            slot: pick as u64,
            token: format!("{:032x}", m.tokens),
            counter: old.as_ref().map_or(0, |r| r.counter) + 1,
        };
        m.write(
            pick,
            Rec {
                token: holder.token.clone(),
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

    fn renew_within(
        &self,
        _: &SlotSpace,
        h: &Holder,
        ttl_ms: u64,
        window_ms: u64,
        _max_hwm_ms: u64,
    ) -> Result<Renewal, StoreError> {
        let mut m = self.model();
        let now = m.now;
        let Some(r) = m.slots[h.slot as usize].clone() else {
            return Err(StoreError::Lost("no record".into()));
        };
        if r.token != h.token || r.counter != h.counter {
            return Err(StoreError::Lost("another holder".into()));
        }
        // The fence's second half: a claim made before a loss may have been
        // superseded by a claim the store forgot (a rollback revives the old
        // holder's record, counter and all): its holder is lost.
        if m.fencing && r.epoch != m.losses {
            return Err(StoreError::Lost("claimed before a data loss".into()));
        }
        let hwm = r.hwm.max(now + window_ms);
        m.write(
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

    fn release(&self, _: &SlotSpace, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let mut m = self.model();
        let now = m.now;
        match m.slots[h.slot as usize].clone() {
            Some(r)
                if r.token == h.token
                    && r.counter == h.counter
                    && !(m.fencing && r.epoch != m.losses) =>
            {
                m.write(
                    h.slot as usize,
                    Rec {
                        token: String::new(),
                        expires: now,
                        hwm: last_ms,
                        ..r
                    },
                );
                Ok(())
            }
            _ => Err(StoreError::Lost("another holder".into())),
        }
    }
}

// ---- the simulation ---------------------------------------------------------

/// What a run varies; the negative controls turn a protection off.
#[derive(Clone, Copy)]
struct Variant {
    /// The store fences claims after a loss.
    fencing: bool,
    /// The successor starts above `prev_hwm_ms` (the driver's `resume_after`).
    resume_after: bool,
    /// The fence is `store now + window + fence_skews * max_skew`.
    fence_skews: u64,
}

/// Two skews: one for how far the store's clock may have stood ahead of a
/// holder's when it confirmed a reservation, one for how far behind it may
/// stand at the loss (see `one_skew_of_fence_is_not_enough`).
const SAFE: Variant = Variant {
    fencing: true,
    resume_after: true,
    fence_skews: 2,
};

#[derive(Default, Debug)]
struct Counts {
    schedules: u64,
    steps: u64,
    ids: u64,
    batches: u64,
    claims: u64,
    renewals: u64,
    releases: u64,
    lost: u64,
    drop_reply: u64,
    lost_request: u64,
    twice: u64,
    delayed: u64,
    late_claims_released: u64,
    clock_steps: u64,
    forget_all: u64,
    lose_last_writes: u64,
    crashes: u64,
    skew_refusals: u64,
}

enum Call {
    Claim(ClaimRequest),
    Renew(Holder),
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
}

struct Proc {
    clock: ManualClock,
    /// Local minus real time, ms.
    offset: i64,
    held: Option<Held>,
    last_slot: Option<u64>,
}

struct World<'a> {
    rng: Rng,
    variant: Variant,
    settings: Settings,
    layout: Layout,
    space: SlotSpace,
    store: ModelStore,
    real: u64,
    procs: Vec<Proc>,
    delayed: Vec<(u64, Call)>,
    issued: HashSet<u64>,
    counts: &'a mut Counts,
    trace: bool,
}

/// An ID issued twice, or outside its holder's reservation.
#[derive(Debug)]
struct Violation(String);

impl World<'_> {
    fn local(&self, p: usize) -> u64 {
        let t = (self.real as i64 + self.procs[p].offset) as u64;
        self.procs[p].clock.set(t);
        self.procs[p].clock.now_ms()
    }

    fn apply(&mut self, call: &Call) -> Answer {
        let (st, sp, s) = (&self.store, &self.space, &self.settings);
        match call {
            Call::Claim(req) => Answer::Claim(st.claim(sp, req)),
            Call::Renew(h) => Answer::Renew(st.renew(sp, h, s.ttl_ms, s.window_ms)),
            Call::Release(h, last) => {
                let _ = st.release(sp, h, *last);
                Answer::Release
            }
        }
    }

    /// One store call through the faulty network. `None`: no answer in time
    /// (the driver's worker reports `Unreachable`).
    fn deliver(&mut self, call: Call) -> Option<Answer> {
        let roll = self.rng.below(100);
        if self.trace && roll < 14 {
            println!(
                "  {} fault {roll} (0-3 drop reply, 4-6 lost request, 7-9 twice, 10-13 delay)",
                self.real - T0
            );
        }
        match roll {
            0..=3 => {
                self.counts.drop_reply += 1;
                self.late(call);
                None
            }
            4..=6 => {
                self.counts.lost_request += 1;
                None
            }
            7..=9 => {
                self.counts.twice += 1;
                let first = self.apply(&call);
                self.handle_late(first);
                Some(self.apply(&call))
            }
            10..=13 => {
                self.counts.delayed += 1;
                let due = self.real + 1 + self.rng.below(2 * self.settings.ttl_ms);
                self.delayed.push((due, call));
                None
            }
            _ => Some(self.apply(&call)),
        }
    }

    /// Applies a call whose caller gave up waiting, and handles its answer
    /// as the worker does.
    fn late(&mut self, call: Call) {
        let a = self.apply(&call);
        self.handle_late(a);
    }

    fn handle_late(&mut self, a: Answer) {
        if let Answer::Claim(Ok(claim)) = a {
            // The driver's late-claim rule: release, keeping the claim's hwm.
            self.counts.late_claims_released += 1;
            let hwm = decide::late_claim_hwm(&claim);
            let _ = self.store.release(&self.space, &claim.holder, hwm);
        }
        // A late renewal or release: dropped (see the driver's renew loop).
    }

    fn run_due(&mut self) {
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

    fn claim(&mut self, p: usize) {
        self.counts.claims += 1;
        let before = self.local(p);
        // The driver's skew check (no faults on this read: a failed read is
        // just a failed claim).
        let store_ms = self.store.model().now;
        let after = self.local(p);
        if decide::claim_skew("model", before, store_ms, after, &self.settings).is_err() {
            self.counts.skew_refusals += 1;
            return;
        }
        let prefer = if self.rng.chance(50) {
            self.procs[p].last_slot
        } else {
            None
        };
        let req = ClaimRequest {
            prefer,
            ttl_ms: self.settings.ttl_ms,
            window_ms: self.settings.window_ms,
        };
        let Some(Answer::Claim(Ok(claim))) = self.deliver(Call::Claim(req)) else {
            return;
        };
        let now = self.local(p);
        let start = match decide::start(
            "model",
            &self.space,
            &claim,
            Options::default(),
            now,
            &self.settings,
        ) {
            Ok(s) => s,
            Err(_) => {
                let _ = self
                    .store
                    .release(&self.space, &claim.holder, claim.prev_hwm_ms);
                return;
            }
        };
        let mut options = start.options;
        if !self.variant.resume_after {
            options.resume_after = None;
        }
        let mut gen = PureGenerator::new(self.layout, start.nodes, options).unwrap();
        gen.reserve_until(Some(start.limit_ms));
        if self.trace {
            println!(
                "  {} p{p} claims slot {} prev_hwm {} hwm {} limit {}",
                self.real - T0,
                claim.holder.slot,
                claim.prev_hwm_ms as i64 - T0 as i64,
                claim.hwm_ms - T0,
                start.limit_ms - T0
            );
        }
        self.procs[p].last_slot = Some(claim.holder.slot);
        self.procs[p].held = Some(Held {
            holder: claim.holder,
            gen,
            prev_hwm: claim.prev_hwm_ms,
            hwm: claim.hwm_ms,
            max_confirmed: claim.hwm_ms,
        });
    }

    fn renew(&mut self, p: usize) {
        self.counts.renewals += 1;
        let Some(h) = &self.procs[p].held else { return };
        let (holder, prev_hwm) = (h.holder.clone(), h.hwm);
        let sent = self.local(p);
        let result = match self.deliver(Call::Renew(holder)) {
            Some(Answer::Renew(r)) => r,
            _ => Err(StoreError::Unreachable("no answer".into())),
        };
        let got = self.local(p);
        let decision = decide::after_renewal(result, prev_hwm, sent, got, &self.settings);
        if self.trace {
            println!("  {} p{p} renewal: {decision:?}", self.real - T0);
        }
        let held = self.procs[p].held.as_mut().unwrap();
        match decision {
            Renewed::Confirmed {
                hwm_ms, limit_ms, ..
            } => {
                held.gen.reserve_until(Some(limit_ms));
                held.hwm = hwm_ms;
                held.max_confirmed = held.max_confirmed.max(hwm_ms);
            }
            Renewed::Lost(_) => {
                self.counts.lost += 1;
                if self.trace {
                    println!("  {} p{p} lost slot {}", self.real - T0, held.holder.slot);
                }
                self.procs[p].held = None;
            }
            Renewed::Failed(_) => {}
        }
    }

    fn close(&mut self, p: usize) {
        self.counts.releases += 1;
        let Some(h) = self.procs[p].held.take() else {
            return;
        };
        let last = decide::release_hwm(h.gen.last_ms(), h.prev_hwm);
        let _ = self.deliver(Call::Release(h.holder, last));
    }

    fn issue(&mut self, p: usize) -> Result<(), Violation> {
        let now = self.local(p);
        let n = 1 + self.rng.below(4) as usize;
        // A third of the time a batch (`next_ids`' path: one run per time
        // unit), else one ID at a time.
        let batch = self.rng.chance(33);
        let Some(h) = self.procs[p].held.as_mut() else {
            return Ok(());
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
        for id in ids {
            self.counts.ids += 1;
            let ms = self.layout.decompose(id).unwrap().timestamp_ms();
            if ms > h.max_confirmed || (self.variant.resume_after && ms <= h.prev_hwm) {
                return Err(Violation(format!(
                    "p{p} issued {id} at {} ms outside its reservation ({}, {}]",
                    ms - T0,
                    h.prev_hwm as i64 - T0 as i64,
                    h.max_confirmed - T0
                )));
            }
            if self.trace {
                println!(
                    "  {} p{p} issued slot {} at {}",
                    self.real - T0,
                    h.holder.slot,
                    ms - T0
                );
            }
            if !self.issued.insert(id) {
                return Err(Violation(format!(
                    "p{p} issued {id} (slot {}, {} ms) which was issued before",
                    h.holder.slot,
                    ms - T0
                )));
            }
        }
        Ok(())
    }

    fn step(&mut self) -> Result<(), Violation> {
        self.counts.steps += 1;
        let roll = self.rng.below(100);
        match roll {
            0..=29 => {
                // Real time passes; the store's clock runs with it, from
                // wherever it was stepped.
                let dt = self.rng.below(self.settings.renew_ms / 2 + 1);
                self.real += dt;
                self.store.model().now += dt;
                self.run_due();
            }
            30..=89 => {
                let p = self.rng.below(self.procs.len() as u64) as usize;
                if self.procs[p].held.is_none() {
                    self.claim(p);
                    return Ok(());
                }
                match self.rng.below(100) {
                    0..=59 => self.issue(p)?,
                    60..=89 => self.renew(p),
                    90..=95 => self.close(p),
                    _ => {
                        // A crash: no release; a new process takes its place.
                        self.counts.crashes += 1;
                        self.procs[p].held = None;
                    }
                }
            }
            90..=95 => {
                self.counts.clock_steps += 1;
                let d = self.rng.below(2 * self.settings.max_skew_ms);
                let mut m = self.store.model();
                m.now = match self.rng.below(10) {
                    // NTP puts it right again.
                    0..=3 => self.real,
                    4..=6 => m.now + d,
                    _ => m.now - d,
                };
            }
            _ => {
                let mut m = self.store.model();
                if self.trace {
                    println!(
                        "  {} store loses writes; records before: {:?}",
                        self.real - T0,
                        m.slots
                    );
                }
                if self.rng.chance(30) {
                    self.counts.forget_all += 1;
                    m.lose(None);
                } else {
                    self.counts.lose_last_writes += 1;
                    let n = 1 + self.rng.below(4) as usize;
                    m.lose(Some(n));
                }
            }
        }
        Ok(())
    }
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

/// Runs schedule `seed`; `Err` names the violation.
fn schedule(
    seed: u64,
    variant: Variant,
    counts: &mut Counts,
    trace: bool,
) -> Result<(), Violation> {
    let mut rng = Rng(seed);
    let ttl = 300;
    // Half the schedules reserve past the TTL: a paused holder then still
    // issues inside its reservation while its successor runs.
    let window = if rng.chance(50) { 150 } else { 600 };
    let settings = Settings {
        ttl_ms: ttl,
        renew_ms: 100,
        window_ms: window,
        max_skew_ms: 50,
        ..Settings::default()
    };
    let layout = layout();
    let space = SlotSpace::new(layout, &[], None).unwrap();
    let nprocs = 2 + rng.below(3) as usize;
    let procs = (0..nprocs)
        .map(|_| Proc {
            clock: ManualClock::new(T0),
            offset: rng.below(21) as i64 - 10,
            held: None,
            last_slot: None,
        })
        .collect();
    let store = ModelStore(Mutex::new(Model {
        now: T0,
        slots: vec![None; space.slots() as usize],
        log: Vec::new(),
        fence: 0,
        fencing: variant.fencing,
        fence_margin: settings.window_ms + variant.fence_skews * settings.max_skew_ms,
        losses: 0,
        tokens: 0,
    }));
    let steps = 60 + rng.below(80);
    let mut w = World {
        rng,
        variant,
        settings,
        layout,
        space,
        store,
        real: T0,
        procs,
        delayed: Vec::new(),
        issued: HashSet::new(),
        counts,
        trace,
    };
    for _ in 0..steps {
        w.step()?;
    }
    w.counts.schedules += 1;
    Ok(())
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Runs `n` schedules from `first`; the first violation as `(seed, why)`.
fn run(first: u64, n: u64, variant: Variant, counts: &mut Counts) -> Option<(u64, Violation)> {
    (first..first + n).find_map(|seed| {
        schedule(seed, variant, counts, false)
            .err()
            .map(|v| (seed, v))
    })
}

#[test]
fn seeded_schedules_never_issue_an_id_twice() {
    if let Some(seed) = env_u64("SNOWMINT_SIM_SEED") {
        // The negative controls' variants replay too (test-only switches).
        let variant = Variant {
            fencing: std::env::var_os("SNOWMINT_SIM_NO_FENCE").is_none(),
            resume_after: std::env::var_os("SNOWMINT_SIM_NO_RESUME").is_none(),
            fence_skews: env_u64("SNOWMINT_SIM_FENCE_SKEWS").unwrap_or(SAFE.fence_skews),
        };
        let mut counts = Counts::default();
        let r = schedule(seed, variant, &mut counts, true);
        println!("{counts:#?}");
        r.unwrap();
        return;
    }
    let n = env_u64("SNOWMINT_SIM_SCHEDULES").unwrap_or(100_000);
    let mut counts = Counts::default();
    let started = std::time::Instant::now();
    if let Some((seed, v)) = run(0, n, SAFE, &mut counts) {
        panic!(
            "schedule {seed}: {}\nreplay: SNOWMINT_SIM_SEED={seed} cargo test -p snowmint-lease --test sim seeded_schedules -- --nocapture",
            v.0
        );
    }
    println!(
        "{n} schedules in {:.1} s, no violation: {counts:#?}",
        started.elapsed().as_secs_f64()
    );
}

/// The negative control of the fence: the same model store forgetting, with
/// claims reading the surviving records only, gives two holders one ID.
#[test]
fn without_a_fence_a_forgetful_store_issues_an_id_twice() {
    let variant = Variant {
        fencing: false,
        ..SAFE
    };
    let mut counts = Counts::default();
    let (seed, v) = run(0, 100_000, variant, &mut counts)
        .expect("no ID issued twice without the fence: the checker or the faults are too weak");
    println!("without the fence, schedule {seed}: {} ({counts:?})", v.0);
}

/// The negative control of `resume_after`: a successor that starts at its own
/// clock rather than above the old `hwm` repeats a live predecessor's IDs.
#[test]
fn without_resume_after_a_successor_issues_an_id_twice() {
    let variant = Variant {
        resume_after: false,
        ..SAFE
    };
    let mut counts = Counts::default();
    let (seed, v) = run(0, 100_000, variant, &mut counts)
        .expect("no ID issued twice without resume_after: the checker or the faults are too weak");
    println!(
        "without resume_after, schedule {seed}: {} ({counts:?})",
        v.0
    );
}

/// A finding of this simulation: a fence of `store now + window + max_skew`
/// is one skew short. A holder's reservation was confirmed while the store's
/// clock stood up to `max_skew` ahead of it; the store's clock then stepped
/// back by up to `2 * max_skew` (each side still within `max_skew` of the
/// holders, so no claim is refused for skew) and lost its records: the fence,
/// read from the stepped-back clock, ends below the live holder's
/// reservation. (Traced on the first schedule that failed so, before batches
/// were added to the scheduler: the fence at 289 ms, the live holder's
/// confirmed `hwm` at 307 ms, the store's clock stepped back 68 ms between.)
#[test]
fn one_skew_of_fence_is_not_enough() {
    let variant = Variant {
        fence_skews: 1,
        ..SAFE
    };
    let mut counts = Counts::default();
    let (seed, v) = run(0, 100_000, variant, &mut counts)
        .expect("a one-skew fence held: update the comment of this test");
    println!("with a one-skew fence, schedule {seed}: {}", v.0);
}
