//! The world: holders (processes with their own clocks and settings) and
//! the seeded scheduler. A holder's claim, renewals and release are the
//! production driver's steps (`snowmint_lease::step`), run on the model
//! store through the `Store` trait, a virtual clock and the virtual network
//! of `net`; every decision in them is the driver's (`decide`).

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use snowmint::{Error, Layout, LeaseProblem, Next, PureGenerator};
use snowmint_lease::step::{self, Bounded, Status};
use snowmint_lease::{decide, Holder, Settings, SlotSpace, Store};

use crate::check::{Checker, Kind, Tenure};
use crate::model::{Caller, Flavor, Model, Rng};
use crate::net::{Net, SimGen, SimStore, VClock, Wire};
use crate::variant::{Counts, Variant};

pub const T0: u64 = 1_800_000_000_000;

struct Held {
    holder: Holder,
    gen: SimGen,
    status: Mutex<Status>,
    prev_hwm: u64,
    max_confirmed: u64,
    tenure: usize,
    /// When its renewal thread wakes next (true time): the wait the
    /// driver's renewal step returned, counted from its end.
    renew_at: u64,
}

struct Proc {
    s: Settings,
    /// The store as this process opened it (with its settings).
    store: Arc<dyn Store>,
    /// The machine's wall clock minus true time, ms (what a new process reads).
    wall: i64,
    /// This process's clock: the wall clock read at its start, advanced by
    /// elapsed time (a wall step while it runs is unseen).
    clock: VClock,
    held: Option<Held>,
    last_slot: Option<u64>,
    suspended_until: u64,
    /// Its clock is further from the store's than its `max_skew_ms`
    /// (`Variant::own_clocks`).
    far: bool,
}

pub struct World<'a> {
    v: Variant,
    layout: Layout,
    space: Arc<SlotSpace>,
    /// True time, the model store, the network.
    net: Net<'a>,
    /// The store's clock writes checked so far.
    writes_checked: usize,
    procs: Vec<Proc>,
    pub check: Checker,
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

/// The last unit a generator's bound lets it issue.
fn bound_of(gen: &SimGen) -> u64 {
    gen.gen
        .borrow()
        .reserved_end_ms()
        .unwrap_or(0)
        .saturating_sub(1)
}

impl World<'_> {
    fn t(&self, ms: u64) -> i64 {
        ms as i64 - T0 as i64
    }

    fn real(&self) -> u64 {
        self.net.real()
    }

    fn local(&self, p: usize) -> u64 {
        use snowmint::Clock;
        self.procs[p].clock.now_ms()
    }

    /// Was any `hwm` the store wrote from its clock (since the last look)
    /// written from a clock further ahead than any holder's justifies?
    fn check_clock_writes(&mut self) {
        let writes: Vec<(u64, u64)> = {
            let m = self.net.model();
            if m.clock_writes.len() == self.writes_checked {
                return;
            }
            m.clock_writes[self.writes_checked..].to_vec()
        };
        self.writes_checked += writes.len();
        // (The far holder's clock, which no store clock is near, aside.)
        let ahead = self
            .procs
            .iter()
            .filter(|p| !p.far)
            .map(|p| p.clock.offset())
            .max()
            .unwrap_or(0)
            .max(0) as u64;
        let most = self
            .procs
            .iter()
            .map(|p| p.s.timeout_ms + p.s.max_skew_ms)
            .max()
            .unwrap();
        for (now, real) in writes {
            if now > real + ahead + most {
                let d = format!(
                    "the store wrote hwm from its clock at {} ms, {} ms ahead of true time",
                    self.t(now),
                    now - real
                );
                self.check.report(Kind::PoisonedHwm, d);
            }
        }
    }

    fn advance(&mut self, dt: u64) {
        self.net.advance(dt);
        self.check_clock_writes();
    }

    fn stop(&mut self, p: usize) -> Option<Held> {
        let h = self.procs[p].held.take()?;
        self.check.tenures[h.tenure].live = false;
        Some(h)
    }

    /// The driver's claim (`step::check_skew`, `step::claim`,
    /// `decide::start`, `step::first_bound`).
    fn claim(&mut self, p: usize) {
        self.net.counts.claims += 1;
        let s = self.procs[p].s.clone();
        let store = Arc::clone(&self.procs[p].store);
        let clock = self.procs[p].clock.clone();
        let far = self.procs[p].far;
        let skew = if self.v.skew_check {
            let checked =
                step::check_skew(&store, &self.space, &s, &clock, &Wire::new(&mut self.net));
            match checked {
                Ok(skew) => skew,
                Err(_) => {
                    self.net.counts.skew_refusals += 1;
                    if far {
                        self.net.counts.far_clock_refusals += 1;
                    }
                    return;
                }
            }
        } else {
            0
        };
        let prefer = if self.net.rng.chance(50) {
            self.procs[p].last_slot
        } else {
            None
        };
        let claimed = step::claim(
            &store,
            &self.space,
            &s,
            prefer,
            &clock,
            &Wire::new(&mut self.net),
        );
        self.check_clock_writes();
        let (claim, sent) = match claimed {
            Ok(c) => c,
            Err(e) => {
                if far && e.kind == Error::LeaseUnavailable(LeaseProblem::Refused) {
                    self.net.counts.far_clock_refusals += 1;
                }
                return;
            }
        };
        if far {
            let d = format!(
                "p{p}, whose clock is {:+} ms from true time (store clock {:+} ms), claimed slot {}",
                clock.offset(),
                self.net.model().now as i64 - self.real() as i64,
                claim.holder.slot
            );
            self.check.report(Kind::FarClockClaimed, d);
        }
        let now = self.local(p);
        let options = snowmint::Options::default();
        let start = match decide::start("model", &self.space, &claim, options, sent, &s) {
            Ok(x) => x,
            Err(_) => {
                let (h, hwm) = (&claim.holder, claim.prev_hwm_ms);
                let wire = Wire::new(&mut self.net);
                let _ = step::release(&store, &self.space, h, hwm, s.timeout_ms, &wire);
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
        let gen = SimGen {
            gen: PureGenerator::new(self.layout, start.nodes, options)
                .unwrap()
                .into(),
            clock,
        };
        let status = step::first_bound(&gen, &claim, skew, start.limit_ms);
        let limit = bound_of(&gen);
        if self.trace {
            let m = self.net.model();
            println!(
                "  {} p{p} claims slot {} prev_hwm {} hwm {} limit {} (store clock {}, identity {})",
                self.t(self.real()),
                claim.holder.slot,
                self.t(claim.prev_hwm_ms),
                self.t(claim.hwm_ms),
                self.t(limit),
                self.t(m.now),
                m.identity
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
                limit,
                max_issued: None,
                live: true,
            },
            T0,
        );
        self.procs[p].last_slot = Some(claim.holder.slot);
        self.procs[p].held = Some(Held {
            holder: claim.holder,
            gen,
            status: Mutex::new(status),
            prev_hwm: claim.prev_hwm_ms,
            max_confirmed: claim.hwm_ms,
            tenure,
            renew_at: self.real() + s.renew_ms,
        });
    }

    /// The driver's renewal (`step::renew_once`).
    fn renew(&mut self, p: usize) {
        self.net.counts.renewals += 1;
        let sent = self.local(p);
        let proc = &self.procs[p];
        let Some(h) = &proc.held else { return };
        let before = h.status.lock().unwrap().renewals;
        // What a driver that raises its bound without a confirmation would
        // raise it to (`Variant::unconfirmed_bound`).
        let unconfirmed = decide::limit(sent + proc.s.window_ms, sent, &proc.s);
        self.net.confirmed = None;
        let next = step::renew_once(
            &proc.store,
            &self.space,
            &h.holder,
            &proc.s,
            &h.status,
            &h.gen,
            &Wire::new(&mut self.net),
        );
        self.check_clock_writes();
        if self.trace {
            let s = self.procs[p]
                .held
                .as_ref()
                .unwrap()
                .status
                .lock()
                .unwrap()
                .clone();
            println!(
                "  {} p{p} renewal: next {next:?}, {s:?}",
                self.t(self.real())
            );
        }
        let Some(wait) = next else {
            self.net.counts.lost += 1;
            self.stop(p);
            return;
        };
        let real = self.real();
        let h = self.procs[p].held.as_mut().unwrap();
        h.renew_at = real + wait;
        // The checker's reservation is what the store answered in time,
        // not what the driver recorded.
        if let Some(hwm) = self.net.confirmed {
            h.max_confirmed = h.max_confirmed.max(hwm);
        }
        if self.v.unconfirmed_bound && h.status.lock().unwrap().renewals == before {
            h.gen.reserve_until(Some(unconfirmed));
        }
        let t = &mut self.check.tenures[h.tenure];
        t.limit = t.limit.max(bound_of(&h.gen));
    }

    /// The driver's close: the generator stops, then
    /// `step::release_on_close`.
    fn close(&mut self, p: usize) {
        self.net.counts.releases += 1;
        let Some(h) = self.stop(p) else { return };
        let (store, timeout) = (Arc::clone(&self.procs[p].store), self.procs[p].s.timeout_ms);
        let last = h.gen.gen.borrow().last_ms();
        let _ = step::release_on_close(
            &store,
            &self.space,
            &h.holder,
            h.prev_hwm,
            last,
            &h.status,
            timeout,
            &Wire::new(&mut self.net),
        );
        self.check_clock_writes();
    }

    fn issue(&mut self, p: usize) {
        let now = self.local(p);
        let n = 1 + self.net.rng.below(4) as usize;
        // A third of the time a batch (`next_ids`' path), else one at a time.
        let batch = self.net.rng.chance(33);
        let Some(h) = self.procs[p].held.as_mut() else {
            return;
        };
        let mut ids = Vec::with_capacity(n);
        let mut gen = h.gen.gen.borrow_mut();
        if batch {
            let mut out = vec![0u64; n];
            let (done, _) = gen.fill(now, &mut out);
            ids.extend_from_slice(&out[..done]);
            self.net.counts.batches += 1;
        } else {
            for _ in 0..n {
                match gen.next(now) {
                    Ok(Next::Id(id)) => ids.push(id.get()),
                    _ => break,
                }
            }
        }
        drop(gen);
        let (slot, prev, max, tenure) = (h.holder.slot, h.prev_hwm, h.max_confirmed, h.tenure);
        for id in ids {
            self.net.counts.ids += 1;
            let ms = self.layout.decompose(id).unwrap().timestamp_ms();
            if self.trace {
                println!(
                    "  {} p{p} issued slot {slot} at {}",
                    self.t(self.real()),
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
        self.net.counts.losses += 1;
        let n = 1 + self.net.rng.below(4) as usize;
        let other_clock = |w: &mut Self| {
            // The store is another machine now: its own clock.
            let net = &mut w.net;
            let now = match net.band {
                Some(band) => net.in_band(band),
                None => net.real() + net.rng.below(2 * net.base_skew + 1) - net.base_skew,
            };
            net.model().now = now;
        };
        let keep = self.v.marker_survives;
        let kinds = if self.v.wipes_only { 2 } else { 4 };
        let flavor = self.net.model().flavor;
        let what = match flavor {
            Flavor::Redis => match self.net.rng.below(kinds) {
                0 if !keep => {
                    self.net.model().lose(None, true, false);
                    "restart without persistence"
                }
                1 if !keep => {
                    self.net.model().lose(None, false, false);
                    "FLUSHALL"
                }
                0..=2 => {
                    self.net.model().lose(Some(n), true, keep);
                    "restart from an RDB snapshot"
                }
                _ => {
                    self.net.model().lose(Some(n), true, keep);
                    other_clock(self);
                    "failover to a replica behind"
                }
            },
            Flavor::Sql => {
                if self.v.undetectable && self.net.rng.chance(50) {
                    self.net.counts.undetectable_losses += 1;
                    self.net.model().lose(Some(n), false, keep);
                    other_clock(self);
                    "asynchronous replica promoted (same identity)"
                } else {
                    self.net.model().lose(Some(n), true, keep);
                    other_clock(self);
                    "a restore or a standby from a backup (new identity)"
                }
            }
        };
        if self.trace {
            println!("  {} store: {what}", self.t(self.real()));
        }
    }

    fn step(&mut self) {
        self.net.counts.steps += 1;
        match self.net.rng.below(100) {
            0..=27 => {
                let dt = self.net.rng.below(40);
                self.advance(dt);
            }
            28..=87 => {
                let p = self.net.rng.below(self.procs.len() as u64) as usize;
                if self.real() < self.procs[p].suspended_until {
                    return;
                }
                if self.procs[p].held.is_none() {
                    self.claim(p);
                    return;
                }
                let due = self.procs[p]
                    .held
                    .as_ref()
                    .is_some_and(|h| h.renew_at <= self.real());
                match self.net.rng.below(100) {
                    0..=59 => self.issue(p),
                    // The renewal thread, once its wait has passed (it may
                    // wake late: the scheduler picks when).
                    60..=89 if due => self.renew(p),
                    60..=89 => self.issue(p),
                    90..=95 => self.close(p),
                    _ => {
                        // A crash: no release; a new process reads the wall clock.
                        self.net.counts.crashes += 1;
                        self.stop(p);
                        self.procs[p].clock.set_offset(self.procs[p].wall);
                    }
                }
            }
            88..=91 => self.net.step_store_clock(),
            92 => {
                // The store's clock stepped far ahead (an NTP step, a VM
                // restored from a snapshot), now and then; the next small
                // step's reset puts it right.
                if !self.net.rng.chance(30) {
                    return;
                }
                self.net.counts.store_clock_far_ahead += 1;
                let d = 2_000 + self.net.rng.below(8_000);
                self.net.model().now += d;
            }
            93..=94 => {
                // The machine's wall clock stepped; the running process's
                // clock does not follow (read once, advanced by elapsed time);
                // the next process reads it.
                if self.v.own_clocks {
                    // Each keeps its own offset.
                    return;
                }
                self.net.counts.holder_clock_steps += 1;
                let p = self.net.rng.below(self.procs.len() as u64) as usize;
                let e = self.v.holder_error;
                self.procs[p].wall = self.net.rng.below(2 * e + 1) as i64 - e as i64;
            }
            95 => {
                self.net.counts.suspends += 1;
                let p = self.net.rng.below(self.procs.len() as u64) as usize;
                // Half short (the clock of a suspend-unsafe holder then lags
                // by less than the store's clock may), half past the TTL.
                // (Short only without the suspend-safe clock: a lag longer
                // than the store's clock may stray makes the holder's skew
                // check refuse every claim.)
                let most = if !self.v.suspend_safe || self.net.rng.chance(50) {
                    3 * self.net.base_skew
                } else {
                    3 * self.procs[p].s.ttl_ms
                };
                let d = 1 + self.net.rng.below(most);
                self.procs[p].suspended_until = self.real() + d;
                if !self.v.suspend_safe {
                    let c = &self.procs[p].clock;
                    c.set_offset(c.offset() - d as i64);
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
    let space = Arc::new(SlotSpace::new(layout, &[], None).unwrap());
    let real = Arc::new(AtomicU64::new(T0));
    // The model store, its settings set below (after the holders' draws).
    let placeholder = Caller {
        max_window,
        max_skew: 0,
        max_hwm: u64::MAX,
    };
    let slots = space.slots() as usize;
    let model = Arc::new(Mutex::new(Model::new(
        flavor,
        v.store,
        T0,
        slots,
        placeholder,
    )));
    let nprocs = 2 + rng.below(3) as usize;
    let procs: Vec<Proc> = (0..nprocs)
        .map(|_| {
            let ttl = [300, 450][rng.below(2) as usize];
            // Half reserve past the TTL: a paused holder then still issues
            // inside its reservation while its successor runs.
            let window = [150, max_window][rng.below(2) as usize];
            let e = v.holder_error;
            let wall = rng.below(2 * e + 1) as i64 - e as i64;
            let s = Settings {
                ttl_ms: ttl,
                renew_ms: ttl / 3,
                window_ms: window,
                max_skew_ms: skews[rng.below(skews.len() as u64) as usize],
                timeout_ms: [20, 40][rng.below(2) as usize],
                redis_max_window_ms: max_window,
                ..Settings::default()
            };
            Proc {
                store: opened(&model, &s),
                s,
                wall,
                clock: VClock::new(&real, wall),
                held: None,
                last_slot: None,
                suspended_until: 0,
                far: false,
            }
        })
        .collect();
    let mut procs = procs;
    let band = v
        .own_clocks
        .then(|| own_clocks(&mut rng, &mut procs, &model, &real));
    let init = Caller {
        max_window,
        max_skew: skews[rng.below(skews.len() as u64) as usize],
        max_hwm: u64::MAX,
    };
    *crate::net::lock(&model) = Model::new(flavor, v.store, T0, slots, init);
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
                p.clock.offset(),
                if p.far { " (beyond max_skew)" } else { "" }
            );
        }
    }
    let mut net = Net::new(rng, real, model, counts);
    net.unchecked_claims = v.unchecked_claims;
    net.base_skew = 50;
    net.band = band;
    let mut w = World {
        v,
        layout,
        space,
        net,
        writes_checked: 0,
        procs,
        check: Checker::default(),
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
    let (fences, refused) = {
        let m = w.net.model();
        (m.fences, m.refused)
    };
    w.net.counts.fenced_claims += fences;
    w.net.counts.refused += refused;
    w.net.counts.schedules += 1;
    w.check
}

/// `Variant::own_clocks`: gives each holder its own clock offset within its
/// `max_skew_ms`, and adds one whose clock is further than its `max_skew_ms`
/// (plus a round trip, which the skew check's midpoint may absorb) from
/// every store clock the band returned allows: offsets from true time within
/// `max_skew_ms` of every other holder's clock.
fn own_clocks(
    rng: &mut Rng,
    procs: &mut Vec<Proc>,
    model: &Arc<Mutex<Model>>,
    real: &Arc<AtomicU64>,
) -> (i64, i64) {
    for p in procs.iter_mut() {
        let k = p.s.max_skew_ms;
        p.wall = rng.below(2 * k + 1) as i64 - k as i64;
        p.clock.set_offset(p.wall);
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
        store: opened(model, &s),
        s,
        wall,
        clock: VClock::new(real, wall),
        held: None,
        last_slot: None,
        suspended_until: 0,
        far: true,
    });
    (lo, hi)
}

/// The model store as a holder with settings `s` opens it.
fn opened(model: &Arc<Mutex<Model>>, s: &Settings) -> Arc<dyn Store> {
    Arc::new(SimStore {
        model: Arc::clone(model),
        max_window: s.redis_max_window_ms,
        max_skew: s.max_skew_ms,
    })
}
