//! The lease driver: claim, build the generator above the old `hwm`, renew on
//! a background thread, raise the reservation only after the store confirmed
//! it, stop at once when the slot is lost, release on close or drop.
//!
//! Every store call of a lease runs on its [`worker`]; every decision on a
//! store's answer is a pure function of [`decide`]; each store step (the
//! claim, one renewal, the release) is a function of [`step`], on any way
//! of making store calls.

pub mod decide;
pub(crate) mod leased;
pub mod step;
mod worker;

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use snowmint::{
    Clock, Config, Error, FenceCause, Generator, Id, Layout, LeaseEnd, LeaseProblem, Next, Options,
    SystemClock,
};

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{Holder, Store, StoreError};
use crate::url::{LeaseUrl, Settings};
use step::{Calls, Status};
pub(crate) use worker::timed;
use worker::Worker;

/// A `snowmint::Generator` whose leased node value comes from a store.
///
/// Its IDs are those of the inner generator; it issues only inside the
/// reservation the store confirmed (`lease_expired` past it) and stops at once
/// if another holder takes its slot. [`close`](Self::close) (or drop) releases
/// the slot.
pub struct LeasedGenerator<C: Clock + Send + Sync + 'static = SystemClock> {
    gen: Arc<Generator<C>>,
    lease: Arc<Lease>,
    /// The renewal thread, taken by the first `close`: the lock also makes
    /// a second, concurrent `close` wait for the first.
    renewer: Mutex<Option<JoinHandle<()>>>,
    /// The process that claimed: a child forked from it inherits the handle
    /// but not the renewal thread, and must not release the parent's slot.
    pid: u32,
    /// This lease's entry in the process's list of leased node values, until
    /// `close`.
    leased: Mutex<Option<snowmint::StateKey>>,
}

/// A refusal of a generator minting under a claim fenced at `fence` (see
/// [`LeasedGenerator::fence`]): `clock_moved_backwards` behind the state the
/// claim set (no ID above it yet) is the clock behind the fence, not behind
/// an ID it issued, so it is `lease_fenced`, with when IDs resume. Every
/// other error is returned as it is.
pub fn fenced_refusal(e: Error, fence: Option<(FenceCause, u64)>, layout: &Layout) -> Error {
    match (e, fence) {
        (Error::ClockMovedBackwards { now_ms, last_ms }, Some((cause, prev_hwm_ms)))
            if last_ms <= prev_hwm_ms =>
        {
            Error::LeaseFenced {
                now_ms,
                resume_ms: last_ms + layout.time_unit_ms(),
                cause,
            }
        }
        (e, _) => e,
    }
}

/// What the background thread and the handle share.
struct Lease {
    store: Arc<dyn Store>,
    /// Runs every store call of this lease (see [`worker`]).
    worker: Worker,
    space: Arc<SlotSpace>,
    settings: Settings,
    holder: Holder,
    prev_hwm_ms: u64,
    /// Why the generator starts above `prev_hwm_ms` (`None`: it does not, a
    /// slot never used): what a refusal before the first ID above it says.
    fence: Option<FenceCause>,
    status: Mutex<Status>,
    wake: Condvar,
}

/// A lease's state, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseInfo {
    /// The store, as messages name it.
    pub store: String,
    /// The slot space's key.
    pub space_key: String,
    /// The leased node field.
    pub field: String,
    /// The slot: the leased field's value.
    pub slot: u64,
    /// The slot's claim counter of this claim.
    pub counter: u64,
    /// The confirmed `hwm`, Unix ms.
    pub hwm_ms: u64,
    /// The first Unix ms the generator may not issue (`None`: unbounded,
    /// never for a leased generator).
    pub reserved_end_ms: Option<u64>,
    /// When the claim expires without a renewal, store time (`None`: never
    /// while the process lives, the file store).
    pub expires_ms: Option<u64>,
    /// Confirmed renewals so far.
    pub renewals: u64,
    /// When the reservation in force was confirmed (the claim, or renewal
    /// number `renewals`), local Unix ms: this process's clock, the one its
    /// IDs' times come from, read before the generator could use it.
    pub confirmed_at_ms: u64,
    /// Local minus store clock, ms, as last measured (at claim, then by
    /// every renewal that moved `hwm`); `None` before a measurement.
    pub skew_ms: Option<i64>,
    /// Store calls that missed their deadline (their worker thread was
    /// abandoned and replaced).
    pub timeouts: u64,
    /// Why the slot was lost (the generator has stopped), if it was.
    pub lost: Option<String>,
    /// The last failed renewal's cause, cleared by a confirmed one.
    pub last_error: Option<String>,
}

/// A value of [`LeaseInfo::entries`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoValue {
    /// An integer (a slot, a counter, Unix ms).
    Int(u64),
    /// A text.
    Text(String),
    /// Not known or not applicable.
    None,
}

impl LeaseInfo {
    /// The fields as `(snake_case name, camelCase name, value)`, in one
    /// order: what every binding reports (a Python dict, a JavaScript
    /// object, the CLI's JSON), so a field added here reaches them all.
    pub fn entries(&self) -> Vec<(&'static str, &'static str, InfoValue)> {
        use InfoValue::{Int, Text};
        let opt_int = |v: Option<u64>| v.map_or(InfoValue::None, Int);
        let opt_text = |v: &Option<String>| v.clone().map_or(InfoValue::None, Text);
        vec![
            ("store", "store", Text(self.store.clone())),
            ("field", "field", Text(self.field.clone())),
            ("slot", "slot", Int(self.slot)),
            ("claim", "claim", Int(self.counter)),
            ("hwm_ms", "hwmMs", Int(self.hwm_ms)),
            // Inclusive, as `reserve_until` takes it: the last Unix ms whose
            // time unit may be issued (before the epoch once closed or lost).
            (
                "reserved_until_ms",
                "reservedUntilMs",
                opt_int(self.reserved_end_ms.map(|end| end.saturating_sub(1))),
            ),
            ("expires_ms", "expiresMs", opt_int(self.expires_ms)),
            ("renewals", "renewals", Int(self.renewals)),
            (
                "confirmed_at_ms",
                "confirmedAtMs",
                Int(self.confirmed_at_ms),
            ),
            // The size of the difference: which clock is ahead is in
            // `last_error` when it matters (past `max_skew_ms`).
            (
                "skew_ms",
                "skewMs",
                opt_int(self.skew_ms.map(i64::unsigned_abs)),
            ),
            ("timeouts", "timeouts", Int(self.timeouts)),
            ("lost", "lost", opt_text(&self.lost)),
            ("last_error", "lastError", opt_text(&self.last_error)),
            ("space", "space", Text(self.space_key.clone())),
        ]
    }
}

impl LeaseInfo {
    /// [`entries`](Self::entries) as one JSON object with the snake_case
    /// names (for the C interface and the CLI):
    /// `{"store":"file:/var/lib/app/ids","field":"worker","slot":3,...}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (i, (name, _, value)) in self.entries().into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_string(&mut out, name);
            out.push(':');
            match value {
                InfoValue::Int(n) => out.push_str(&n.to_string()),
                InfoValue::Text(t) => json_string(&mut out, &t),
                InfoValue::None => out.push_str("null"),
            }
        }
        out.push('}');
        out
    }
}

/// Appends `s` as a JSON string.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

impl LeasedGenerator<SystemClock> {
    /// Leases the one node field of `layout` not in `fixed` from the store
    /// `url`, on the system clock.
    pub fn open(
        url: &str,
        layout: Layout,
        fixed: &[(&str, u64)],
        options: Options,
    ) -> Result<Self, LeaseError> {
        Self::open_with(
            &LeaseUrl::parse(url)?,
            layout,
            fixed,
            options,
            None,
            SystemClock,
        )
    }
}

impl<C: Clock + Send + Sync + 'static> LeasedGenerator<C> {
    /// [`open`](LeasedGenerator::open) with a parsed URL, the slot this
    /// holder had before (`prefer`) and a clock (tests move it).
    pub fn open_with(
        url: &LeaseUrl,
        layout: Layout,
        fixed: &[(&str, u64)],
        options: Options,
        prefer: Option<u64>,
        clock: C,
    ) -> Result<Self, LeaseError> {
        let store = crate::stores::open(&url.store, &url.settings)?;
        Self::with_store(
            store,
            url.settings.clone(),
            layout,
            fixed,
            options,
            prefer,
            clock,
        )
    }

    /// Leases from any [`Store`].
    pub fn with_store(
        store: Arc<dyn Store>,
        settings: Settings,
        layout: Layout,
        fixed: &[(&str, u64)],
        options: Options,
        prefer: Option<u64>,
        clock: C,
    ) -> Result<Self, LeaseError> {
        settings.check()?;
        let space = Arc::new(SlotSpace::new(
            layout,
            fixed,
            settings.namespace.as_deref(),
        )?);
        let name = store.describe();
        let worker = Worker::new();
        let timeout = settings.timeout_ms;

        // The skew check, before taking a slot we would refuse.
        let skew_ms = step::check_skew(&store, &space, &settings, &clock, &worker)?;
        let (claim, sent_ms) = step::claim(&store, &space, &settings, prefer, &clock, &worker)?;
        let release_now = |e: LeaseError| {
            let hwm = claim.prev_hwm_ms;
            let _ = step::release(&store, &space, &claim.holder, hwm, timeout, &worker);
            e
        };
        // The limit counts from the send time, not the reply's arrival.
        let start = decide::start(&name, &space, &claim, options, sent_ms, &settings)
            .map_err(release_now)?;
        let gen = Generator::with_clock(layout, start.nodes, start.options, clock)
            .map_err(|e| release_now(e.into()))?;
        // Before the first ID: refused if a plain generator of this process
        // holds these node values (see `leased`).
        let entry = leased::register(gen.config(), space.leased_field(), claim.holder.slot)
            .map_err(release_now)?;
        // Before the first ID: only what the store confirmed.
        let status = step::first_bound(&gen, &claim, skew_ms, start.limit_ms);
        let gen = Arc::new(gen);
        let lease = Arc::new(Lease {
            store,
            worker,
            space,
            settings,
            holder: claim.holder,
            prev_hwm_ms: claim.prev_hwm_ms,
            fence: (claim.prev_hwm_ms >= layout.epoch_ms())
                .then(|| claim.fence.unwrap_or(FenceCause::Predecessor)),
            status: Mutex::new(status),
            wake: Condvar::new(),
        });
        let renewer = {
            let (l, g) = (Arc::clone(&lease), Arc::clone(&gen));
            std::thread::Builder::new()
                .name("snowmint-lease-renew".into())
                .spawn(move || renew_loop(&l, &*g))
                .map_err(|e| {
                    leased::unregister(entry);
                    let l = &lease;
                    let hwm = l.prev_hwm_ms;
                    let _ = step::release(&l.store, &l.space, &l.holder, hwm, timeout, &l.worker);
                    LeaseError::unavailable(
                        LeaseProblem::Unreachable,
                        format!("cannot start the renewal thread: {e}"),
                    )
                })?
        };
        Ok(LeasedGenerator {
            gen,
            lease,
            renewer: Mutex::new(Some(renewer)),
            pid: std::process::id(),
            leased: Mutex::new(Some(entry)),
        })
    }

    /// The next ID: `lease_expired` past the confirmed reservation (saying
    /// whether the store is unreachable, the slot lost or the lease closed),
    /// `lease_fenced` while the slot's fence is ahead of the clock.
    #[inline]
    pub fn next_id(&self) -> snowmint::Result<Id> {
        self.gen.next_id().map_err(|e| self.explain(e))
    }

    /// The next ID if one can be issued now, or when to ask again.
    #[inline]
    pub fn try_next_id(&self) -> snowmint::Result<Next> {
        self.gen.try_next_id().map_err(|e| self.explain(e))
    }

    /// Fills `out` with increasing IDs.
    pub fn next_ids(&self, out: &mut [u64]) -> snowmint::Result<()> {
        self.gen.next_ids(out).map_err(|e| self.explain(e))
    }

    /// A refusal of the inner generator, with what only the lease knows:
    /// why the reservation ended, and a fence taken for a clock fault.
    #[cold]
    fn explain(&self, e: Error) -> Error {
        match e {
            Error::LeaseExpired {
                time_ms,
                reserved_end_ms,
                end: LeaseEnd::Reservation,
            } => {
                let s = self.lease.status();
                let end = if s.lost.is_some() {
                    LeaseEnd::Lost
                } else if s.stop {
                    LeaseEnd::Closed
                } else if let Some(since_ms) = s.failing_since_ms {
                    LeaseEnd::RenewalsFailing { since_ms }
                } else {
                    LeaseEnd::Reservation
                };
                Error::LeaseExpired {
                    time_ms,
                    reserved_end_ms,
                    end,
                }
            }
            e => fenced_refusal(e, self.fence(), self.gen.config().layout()),
        }
    }

    /// The claim's fence: why the generator starts above the slot's
    /// previous `hwm`, and that `hwm` (Unix ms); `None` for a slot never
    /// used. What [`fenced_refusal`] takes, for a process that mints on
    /// this lease's node values with the core itself (the PostgreSQL
    /// extension's backends).
    pub fn fence(&self) -> Option<(FenceCause, u64)> {
        self.lease
            .fence
            .map(|cause| (cause, self.lease.prev_hwm_ms))
    }

    /// The configuration: layout, node values in use (the leased one
    /// included), options. (The inner generator itself is not handed out:
    /// its `reserve_until` would lift the lease's bound.)
    pub fn config(&self) -> &Config {
        self.gen.config()
    }

    /// True when this generator draws from one shared state with `other`
    /// (the same ID bits in this process).
    pub fn shares_state_with<D: Clock>(&self, other: &Generator<D>) -> bool {
        self.gen.shares_state_with(other)
    }

    /// True when both leased generators draw from one shared state.
    pub fn shares_state_with_leased<D: Clock + Send + Sync + 'static>(
        &self,
        other: &LeasedGenerator<D>,
    ) -> bool {
        self.gen.shares_state_with(&other.gen)
    }

    /// The start of the time unit of the last ID issued, Unix ms (`None`
    /// before the first).
    pub fn last_ms(&self) -> Option<u64> {
        self.gen.last_ms()
    }

    /// The leased field's value.
    pub fn slot(&self) -> u64 {
        self.lease.holder.slot
    }

    /// The lease's state.
    pub fn info(&self) -> LeaseInfo {
        let s = self.lease.status();
        LeaseInfo {
            store: self.lease.store.describe(),
            space_key: self.lease.space.key().to_string(),
            field: self.lease.space.leased_field().to_string(),
            slot: self.lease.holder.slot,
            counter: self.lease.holder.counter,
            hwm_ms: s.hwm_ms,
            reserved_end_ms: self
                .gen
                .reserved_end_ms()
                .map(|end| decide::reported_end(end, self.gen.config().layout().epoch_ms())),
            expires_ms: s.expires_ms,
            renewals: s.renewals,
            confirmed_at_ms: s.confirmed_at_ms,
            skew_ms: s.skew_ms,
            timeouts: self.lease.worker.abandoned(),
            lost: s.lost.clone(),
            last_error: s.last_error.clone(),
        }
    }

    /// Stops issuing, writes the last issued unit into `hwm` and frees the
    /// slot; later calls fail with `lease_expired`, a second `close` does
    /// nothing. Safe while other threads are inside `next_id`: the last unit
    /// comes from [`Generator::stop_issuing`], final against them. Fails with
    /// `lease_unavailable` if the store could not be written (the slot then
    /// keeps its last confirmed `hwm`, which is above every ID issued, and
    /// frees when this process ends or its TTL passes).
    ///
    /// In a child forked from the process that claimed, it does nothing: the
    /// lease is the parent's (the child's copy of the generator already fails
    /// with `process_forked`).
    pub fn close(&self) -> Result<(), LeaseError> {
        if std::process::id() != self.pid {
            return Ok(());
        }
        let mut renewer = self.renewer.lock().unwrap_or_else(|e| e.into_inner());
        let Some(thread) = renewer.take() else {
            return Ok(());
        };
        {
            let mut s = self.lease.status();
            s.stop = true;
            self.lease.wake.notify_all();
        }
        let _ = thread.join();
        // The renewer has stopped: nothing raises the limit again.
        let last = self.gen.stop_issuing();
        if let Some(entry) = self.leased.lock().unwrap_or_else(|e| e.into_inner()).take() {
            leased::unregister(entry);
        }
        let l = &self.lease;
        step::release_on_close(
            &l.store,
            &l.space,
            &l.holder,
            l.prev_hwm_ms,
            last,
            &l.status,
            l.settings.timeout_ms,
            &l.worker,
        )
        .map_err(|e| store_error(&l.store.describe(), l.space.slots(), e))
    }

    /// True once [`close`](Self::close) ran.
    pub fn is_closed(&self) -> bool {
        self.renewer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }
}

impl<C: Clock + Send + Sync + 'static> Drop for LeasedGenerator<C> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

impl<C: Clock + Send + Sync + 'static> std::fmt::Debug for LeasedGenerator<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeasedGenerator")
            .field("lease", &self.info())
            .finish_non_exhaustive()
    }
}

impl Lease {
    fn status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Renews every `renew_ms` (a quarter of that after a failure) until stopped
/// or lost ([`step::renew_once`]).
fn renew_loop<C: Clock>(lease: &Arc<Lease>, gen: &Generator<C>) {
    let mut wait = Duration::from_millis(lease.settings.renew_ms);
    loop {
        {
            let s = lease.status();
            let (s, _) = lease
                .wake
                .wait_timeout_while(s, wait, |s| !s.stop)
                .unwrap_or_else(|e| e.into_inner());
            if s.stop {
                return;
            }
        }
        let l = lease;
        let next = step::renew_once(
            &l.store,
            &l.space,
            &l.holder,
            &l.settings,
            &l.status,
            gen,
            &l.worker,
        );
        match next {
            Some(ms) => wait = Duration::from_millis(ms),
            None => return,
        }
    }
}

impl Calls for Worker {
    fn call<T: Send + 'static>(
        &self,
        timeout_ms: u64,
        f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
        late: impl FnOnce(T) + Send + 'static,
    ) -> Result<T, StoreError> {
        Worker::call(self, timeout_ms, f, late)
    }
}

/// The bound on store time + window for a call sent at `sent_ms` by the
/// holder's clock ([`crate::store::hwm_bound`]).
fn hwm_bound(sent_ms: u64, s: &Settings) -> u64 {
    crate::store::hwm_bound(sent_ms, s.timeout_ms, s.max_skew_ms, s.window_ms)
}

pub(crate) fn store_error(name: &str, slots: u64, e: StoreError) -> LeaseError {
    let (problem, detail) = match e {
        StoreError::Unreachable(d) | StoreError::Lost(d) => (LeaseProblem::Unreachable, d),
        StoreError::NoFreeSlot => (LeaseProblem::NoFreeSlot { slots }, String::new()),
        StoreError::BadRecord(d) => (LeaseProblem::BadRecord, d),
        StoreError::Refused(d) => (LeaseProblem::Refused, d),
    };
    let detail = if detail.is_empty() {
        name.to_string()
    } else {
        format!("{name}: {detail}")
    };
    LeaseError::unavailable(problem, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_info_json_escapes_and_orders_like_entries() {
        let info = LeaseInfo {
            store: "file:/tmp/a \"b\"\\c\n".into(),
            space_key: "v1-0".into(),
            field: "worker".into(),
            slot: 3,
            counter: 7,
            hwm_ms: 100,
            reserved_end_ms: Some(101),
            expires_ms: None,
            renewals: 2,
            confirmed_at_ms: 99,
            skew_ms: Some(-12),
            timeouts: 1,
            lost: None,
            last_error: Some("x".into()),
        };
        assert_eq!(
            info.to_json(),
            r#"{"store":"file:/tmp/a \"b\"\\c\u000a","field":"worker","slot":3,"claim":7,"hwm_ms":100,"reserved_until_ms":100,"expires_ms":null,"renewals":2,"confirmed_at_ms":99,"skew_ms":12,"timeouts":1,"lost":null,"last_error":"x","space":"v1-0"}"#
        );
    }
}
