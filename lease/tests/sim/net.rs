//! What the production driver steps (`snowmint_lease::step`) run on in the
//! simulation: a virtual clock per holder (`snowmint::Clock`), the model
//! store behind the `Store` trait, and a virtual network in place of the
//! lease's worker thread (`step::Calls`): a call's request and reply take
//! time, requests and replies are lost, calls are applied twice or past
//! their deadline, and an answer after `timeout_ms` goes to the call's own
//! `late` handler (the driver's), as the worker hands it.

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use snowmint::{Clock, PureGenerator};
use snowmint_lease::step::{Bounded, Calls};
use snowmint_lease::{
    Claim, ClaimRequest, Holder, RenewRequest, Renewal, SlotSpace, Store, StoreError,
};

use crate::model::{Caller, Model, Rng};
use crate::variant::Counts;

/// A holder's clock: true time plus an offset of its own (steps, a lag
/// after a suspend), both virtual.
#[derive(Clone)]
pub struct VClock {
    real: Arc<AtomicU64>,
    offset: Arc<AtomicI64>,
}

impl VClock {
    pub fn new(real: &Arc<AtomicU64>, offset: i64) -> VClock {
        VClock {
            real: Arc::clone(real),
            offset: Arc::new(AtomicI64::new(offset)),
        }
    }
    /// This clock minus true time, ms.
    pub fn offset(&self) -> i64 {
        self.offset.load(Ordering::Relaxed)
    }
    pub fn set_offset(&self, offset: i64) {
        self.offset.store(offset, Ordering::Relaxed);
    }
}

impl Clock for VClock {
    fn now_ms(&self) -> u64 {
        (self.real.load(Ordering::Relaxed) as i64 + self.offset()) as u64
    }
}

/// A holder's generator for the driver's steps: `snowmint::PureGenerator`
/// (one state per simulated process) on its process's clock.
pub struct SimGen {
    pub gen: std::cell::RefCell<PureGenerator>,
    pub clock: VClock,
}

impl Bounded for SimGen {
    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }
    fn reserve_until(&self, until_ms: Option<u64>) {
        self.gen.borrow_mut().reserve_until(until_ms);
    }
}

pub fn lock(m: &Mutex<Model>) -> MutexGuard<'_, Model> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The model store as one holder opened it: with that holder's settings
/// (the space's `redis_max_window_ms`, its `max_skew_ms`), as a real store
/// takes them from the lease URL.
pub struct SimStore {
    pub model: Arc<Mutex<Model>>,
    pub max_window: u64,
    pub max_skew: u64,
}

impl SimStore {
    /// Runs one store step; a request the network delivered twice is
    /// applied twice (the first answer is lost).
    fn op<T>(&self, f: impl Fn(&mut Model) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut m = lock(&self.model);
        if std::mem::take(&mut m.twice) {
            let _ = f(&mut m);
        }
        let r = f(&mut m);
        if let Err(StoreError::Refused(_)) = r {
            m.refused += 1;
        }
        r
    }
}

impl Store for SimStore {
    fn describe(&self) -> String {
        "model".into()
    }

    fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(lock(&self.model).now)
    }

    fn claim(&self, _: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let c = Caller {
            max_window: self.max_window,
            max_skew: self.max_skew,
            max_hwm: req.max_hwm_ms,
        };
        self.op(|m| m.claim(req, c))
    }

    fn renew_within(&self, _: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (h, ttl, window, max_hwm) = r.parts();
        self.op(|m| m.renew(h, ttl, window, max_hwm))
    }

    fn release(&self, _: &SlotSpace, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        self.op(|m| m.release(h, last_ms))
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// True time, the model store, the faults, and the calls applied past their
/// deadline still to come.
pub struct Net<'a> {
    pub rng: Rng,
    pub real: Arc<AtomicU64>,
    pub model: Arc<Mutex<Model>>,
    delayed: Vec<(u64, Job)>,
    pub counts: &'a mut Counts,
    /// `Variant::unchecked_claims`.
    pub unchecked_claims: bool,
    /// The store clock steps' range: twice the (largest) skew bound.
    pub base_skew: u64,
    /// With `Variant::own_clocks`: the store clock's offsets from true time
    /// within `max_skew_ms` of every holder's (but the far one's), ms.
    pub band: Option<(i64, i64)>,
    /// The `hwm` of the last renewal answered within its deadline (what
    /// the store confirmed to a holder, whatever the driver makes of it).
    pub confirmed: Option<u64>,
}

impl<'a> Net<'a> {
    pub fn new(
        rng: Rng,
        real: Arc<AtomicU64>,
        model: Arc<Mutex<Model>>,
        counts: &'a mut Counts,
    ) -> Net<'a> {
        Net {
            rng,
            real,
            model,
            delayed: Vec::new(),
            counts,
            unchecked_claims: false,
            base_skew: 0,
            band: None,
            confirmed: None,
        }
    }

    pub fn real(&self) -> u64 {
        self.real.load(Ordering::Relaxed)
    }

    pub fn model(&self) -> MutexGuard<'_, Model> {
        lock(&self.model)
    }

    /// True time passes; the store's clock runs with it; calls whose time
    /// has come are applied (their answers to their `late` handlers).
    pub fn advance(&mut self, dt: u64) {
        if dt == 0 {
            return;
        }
        let real = self.real.fetch_add(dt, Ordering::Relaxed) + dt;
        {
            let mut m = self.model();
            m.now += dt;
            m.real = real;
        }
        let mut i = 0;
        while i < self.delayed.len() {
            if self.delayed[i].0 <= real {
                let (_, job) = self.delayed.swap_remove(i);
                job();
            } else {
                i += 1;
            }
        }
    }

    /// A store clock offset from true time within `band`: half the time at
    /// one of its ends, where a holder's clock is `max_skew_ms` away.
    pub fn in_band(&mut self, (lo, hi): (i64, i64)) -> u64 {
        let offset = match self.rng.below(4) {
            0 => lo,
            1 => hi,
            _ => lo + self.rng.below((hi - lo) as u64 + 1) as i64,
        };
        (self.real() as i64 + offset) as u64
    }

    pub fn step_store_clock(&mut self) {
        self.counts.store_clock_steps += 1;
        if let Some(band) = self.band {
            let now = self.in_band(band);
            self.model().now = now;
            return;
        }
        let d = self.rng.below(2 * self.base_skew);
        let real = self.real();
        let pick = self.rng.below(10);
        let mut m = self.model();
        m.now = match pick {
            // NTP puts it right again.
            0..=3 => real,
            4..=6 => m.now + d,
            _ => m.now - d,
        };
    }

    /// One store call through the network, with the worker's deadline rule.
    fn call<T: 'static>(
        &mut self,
        timeout: u64,
        f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
        late: impl FnOnce(T) + Send + 'static,
    ) -> Result<T, StoreError> {
        let half = timeout / 2 + 1;
        let none = || {
            Err(StoreError::Unreachable(format!(
                "no answer within {timeout} ms"
            )))
        };
        // The skew check's read of the store's clock: no faults (a failed
        // read is just a failed claim).
        if TypeId::of::<T>() == TypeId::of::<u64>() {
            let d = self.rng.below(half);
            self.advance(d);
            let a = f();
            let d = self.rng.below(half);
            self.advance(d);
            return a;
        }
        let claim = TypeId::of::<T>() == TypeId::of::<Claim>();
        let start = self.real();
        if claim && self.rng.chance(20) {
            // More time before the claim arrives (within its deadline, but
            // with unchecked claims; its answer may come after it), and the
            // store's clock may be stepped since the skew check read it.
            let d = self
                .rng
                .below(if self.unchecked_claims { timeout } else { half });
            self.advance(d);
            if self.unchecked_claims && self.rng.chance(30) {
                self.step_store_clock();
            }
        }
        let answer = match self.rng.below(100) {
            0..=3 => {
                // Applied; the reply comes after the deadline.
                self.counts.drop_reply += 1;
                let d = self.rng.below(half);
                self.advance(d);
                let a = f();
                let rest = (start + timeout).saturating_sub(self.real()) + 1;
                self.advance(rest);
                a
            }
            4..=6 => {
                self.counts.lost_request += 1;
                self.advance(timeout);
                return none();
            }
            10..=13 if self.unchecked_claims || !claim => {
                self.counts.delayed += 1;
                let ttl_ish = 2 * 450;
                let due = self.real() + timeout + 1 + self.rng.below(ttl_ish);
                self.delayed.push((
                    due,
                    Box::new(move || {
                        if let Ok(v) = f() {
                            late(v);
                        }
                    }),
                ));
                self.advance(timeout);
                return none();
            }
            roll => {
                if (7..=9).contains(&roll) {
                    self.counts.twice += 1;
                    self.model().twice = true;
                }
                let d = self.rng.below(half);
                self.advance(d);
                let a = f();
                let d = self.rng.below(half);
                self.advance(d);
                a
            }
        };
        if self.real() - start <= timeout {
            let any: &dyn Any = &answer;
            if let Some(Ok(r)) = any.downcast_ref::<Result<Renewal, StoreError>>() {
                self.confirmed = Some(r.hwm_ms);
            }
            return answer;
        }
        // Past the deadline: the worker has given up; the answer goes to
        // the driver's `late` handler.
        if let Ok(v) = answer {
            self.counts.late_answers += 1;
            late(v);
        }
        none()
    }
}

/// The network as the driver's steps see it (`step::Calls`).
pub struct Wire<'n, 'a>(std::cell::RefCell<&'n mut Net<'a>>);

impl<'n, 'a> Wire<'n, 'a> {
    pub fn new(net: &'n mut Net<'a>) -> Self {
        Wire(std::cell::RefCell::new(net))
    }
}

impl Calls for Wire<'_, '_> {
    fn call<T: Send + 'static>(
        &self,
        timeout_ms: u64,
        f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
        late: impl FnOnce(T) + Send + 'static,
    ) -> Result<T, StoreError> {
        self.0.borrow_mut().call(timeout_ms, f, late)
    }
}
