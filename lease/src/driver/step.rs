//! The driver's store steps, each on any way of making store calls: the
//! skew check and the claim, the first bound, one renewal, the release on
//! close. The real lease runs them on its worker thread and its
//! renewal thread (which calls [`renew_once`] in a loop); the deterministic
//! simulation (`lease/tests/sim.rs`) runs the same functions on a model
//! store, a virtual clock and a virtual network.
//!
//! Not a stable API: public only for that simulation.

use std::sync::{Arc, Mutex, MutexGuard};

use snowmint::{Clock, Generator};

use super::decide::{self, Renewed};
use super::{hwm_bound, store_error};
use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{Claim, ClaimRequest, Holder, RenewRequest, Store, StoreError};
use crate::url::Settings;

/// How a lease makes its store calls: runs `f`, waits at most `timeout_ms`
/// for its answer (past it the call fails as `Unreachable`), and hands a
/// value that came after the deadline to `late`. The real one is the
/// lease's worker thread; the simulation's is a virtual network.
pub trait Calls {
    /// Runs `f` with the deadline rule above.
    fn call<T: Send + 'static>(
        &self,
        timeout_ms: u64,
        f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
        late: impl FnOnce(T) + Send + 'static,
    ) -> Result<T, StoreError>;
}

/// What the steps need of the generator: its clock, and its bound.
pub trait Bounded {
    /// The generator's clock, Unix ms.
    fn now_ms(&self) -> u64;
    /// Sets the generator's bound (`snowmint::Generator::reserve_until`).
    fn reserve_until(&self, until_ms: Option<u64>);
}

impl<C: Clock> Bounded for Generator<C> {
    fn now_ms(&self) -> u64 {
        self.clock().now_ms()
    }
    fn reserve_until(&self, until_ms: Option<u64>) {
        Generator::reserve_until(self, until_ms)
    }
}

/// A lease's state, shared by its handle and its renewal thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// `close` asked the renewal thread to stop.
    pub stop: bool,
    /// The last confirmed `hwm`, Unix ms.
    pub hwm_ms: u64,
    /// When the claim expires without a renewal, store time.
    pub expires_ms: Option<u64>,
    /// Confirmed renewals so far.
    pub renewals: u64,
    /// Local minus store clock, ms, as the last renewal that moved `hwm`
    /// (or the claim) measured it.
    pub skew_ms: Option<i64>,
    /// Why the slot was lost (the generator has stopped), if it was.
    pub lost: Option<String>,
    /// The last failed renewal's cause, cleared by a confirmed one.
    pub last_error: Option<String>,
    /// When the first of the renewals failing since the last confirmed one
    /// was sent, local Unix ms.
    pub failing_since_ms: Option<u64>,
    /// The local clock (the generator's) read after the last confirmation
    /// (the claim, or renewal number `renewals`) arrived and before the
    /// generator's limit was raised to it: every ID under that reservation
    /// was issued at or after it.
    pub confirmed_at_ms: u64,
}

fn lock(status: &Mutex<Status>) -> MutexGuard<'_, Status> {
    status.lock().unwrap_or_else(|e| e.into_inner())
}

/// The skew check before a claim: the store's clock between two readings
/// of `clock`. Returns the skew (local minus store, ms), or `clock_skew`
/// past `max_skew_ms` ([`decide::claim_skew`]): a holder refuses a store
/// whose clock it cannot trust before it takes a slot.
pub fn check_skew(
    store: &Arc<dyn Store>,
    space: &SlotSpace,
    settings: &Settings,
    clock: &impl Clock,
    calls: &impl Calls,
) -> Result<i64, LeaseError> {
    let name = store.describe();
    let local_before = clock.now_ms();
    let s = Arc::clone(store);
    let store_ms = calls
        .call(settings.timeout_ms, move || s.now_ms(), |_| {})
        .map_err(|e| store_error(&name, space.slots(), e))?;
    decide::claim_skew(&name, local_before, store_ms, clock.now_ms(), settings)
}

/// The claim, after the skew check: returns it with `clock`'s reading when
/// it was sent (the first limit counts from it). A claim that answers after
/// its deadline is released again, keeping its `hwm`, so a slow store does
/// not leak slots.
pub fn claim(
    store: &Arc<dyn Store>,
    space: &Arc<SlotSpace>,
    settings: &Settings,
    prefer: Option<u64>,
    clock: &impl Clock,
    calls: &impl Calls,
) -> Result<(Claim, u64), LeaseError> {
    let name = store.describe();
    let req = ClaimRequest::new(prefer, settings.ttl_ms, settings.window_ms);
    let (st, sp) = (Arc::clone(store), Arc::clone(space));
    let (late_st, late_sp) = (Arc::clone(store), Arc::clone(space));
    // The store refuses to write store time + window above what this
    // clock justifies (a store clock stepped far ahead would poison the
    // slot's hwm), and (Redis) to claim on a clock more than max_skew_ms
    // behind this one: the server that runs the claim may not be the one
    // the skew check read (a name or address that moved in between), and
    // the fence after a loss is counted from its clock.
    let sent_ms = clock.now_ms();
    let req = ClaimRequest {
        max_hwm_ms: hwm_bound(sent_ms, settings),
        min_store_ms: sent_ms.saturating_sub(settings.max_skew_ms).max(1),
        ..req
    };
    let claim = calls
        .call(
            settings.timeout_ms,
            move || st.claim(&sp, &req),
            move |late| {
                let hwm = decide::late_claim_hwm(&late);
                let _ = late_st.release(&late_sp, &late.holder, hwm);
            },
        )
        .map_err(|e| store_error(&name, space.slots(), e))?;
    Ok((claim, sent_ms))
}

/// Releases `holder`'s slot, writing `hwm_ms` into it.
pub fn release(
    store: &Arc<dyn Store>,
    space: &Arc<SlotSpace>,
    holder: &Holder,
    hwm_ms: u64,
    timeout_ms: u64,
    calls: &impl Calls,
) -> Result<(), StoreError> {
    let (st, sp, h) = (Arc::clone(store), Arc::clone(space), holder.clone());
    calls.call(timeout_ms, move || st.release(&sp, &h, hwm_ms), |_| {})
}

/// The first bound, before the first ID: only what the claim confirmed
/// (`limit_ms`, from [`decide::start`]). Returns the lease's first state.
pub fn first_bound(gen: &impl Bounded, claim: &Claim, skew_ms: i64, limit_ms: u64) -> Status {
    let confirmed_at_ms = gen.now_ms();
    gen.reserve_until(Some(decide::issue_until(limit_ms)));
    Status {
        stop: false,
        hwm_ms: claim.hwm_ms,
        expires_ms: claim.expires_ms,
        renewals: 0,
        skew_ms: Some(skew_ms),
        lost: None,
        last_error: None,
        failing_since_ms: None,
        confirmed_at_ms,
    }
}

/// One renewal: sends it, decides on its answer ([`decide::after_renewal`]),
/// and raises the generator's bound only on a confirmation. Returns how long
/// to wait before the next one (`renew_ms`, a quarter of that after a
/// failure), or `None` once the slot is lost (the generator has stopped).
pub fn renew_once(
    store: &Arc<dyn Store>,
    space: &Arc<SlotSpace>,
    holder: &Holder,
    settings: &Settings,
    status: &Mutex<Status>,
    gen: &impl Bounded,
    calls: &impl Calls,
) -> Option<u64> {
    let prev_hwm_ms = lock(status).hwm_ms;
    let (st, sp, h) = (Arc::clone(store), Arc::clone(space), holder.clone());
    let (ttl_ms, window_ms) = (settings.ttl_ms, settings.window_ms);
    let sent_ms = gen.now_ms();
    let max_hwm_ms = hwm_bound(sent_ms, settings);
    // A renewal that answers after its deadline is dropped: the next one
    // confirms as much (hwm only grows), and a stale answer would date
    // its skew measurement wrongly.
    let result = calls.call(
        settings.timeout_ms,
        move || {
            let req = RenewRequest {
                holder: &h,
                ttl_ms,
                window_ms,
                max_hwm_ms,
            };
            st.renew_within(&sp, &req)
        },
        |_| {},
    );
    let got_ms = gen.now_ms();
    let decision = decide::after_renewal(result, prev_hwm_ms, sent_ms, got_ms, settings);
    let mut s = lock(status);
    match decision {
        Renewed::Confirmed {
            hwm_ms,
            expires_ms,
            limit_ms,
            skew_ms,
            warning,
        } => {
            // The write is confirmed: only now may IDs use it (the
            // clock read after the answer came, before the limit moves).
            gen.reserve_until(Some(decide::issue_until(limit_ms)));
            s.confirmed_at_ms = got_ms;
            s.failing_since_ms = None;
            s.hwm_ms = hwm_ms;
            s.expires_ms = expires_ms;
            s.renewals += 1;
            if skew_ms.is_some() {
                s.skew_ms = skew_ms;
            }
            s.last_error = warning;
            Some(settings.renew_ms)
        }
        Renewed::Lost(why) => {
            // Another holder: stop at once, even inside the reservation
            // (`lost` first: a refusal that follows reads it).
            s.lost = Some(why);
            gen.reserve_until(Some(0));
            None
        }
        Renewed::Failed(why) => {
            // Keep issuing up to the confirmed reservation; try again soon.
            s.last_error = Some(why);
            s.failing_since_ms.get_or_insert(sent_ms);
            Some((settings.renew_ms / 4).max(1))
        }
    }
}

/// The release on close, once the generator stopped issuing with
/// `last_issued_ms` its last unit: nothing if the slot was lost, else the
/// slot is freed with that unit (or the claim's `prev_hwm_ms`) as `hwm`.
#[allow(clippy::too_many_arguments)]
pub fn release_on_close(
    store: &Arc<dyn Store>,
    space: &Arc<SlotSpace>,
    holder: &Holder,
    prev_hwm_ms: u64,
    last_issued_ms: Option<u64>,
    status: &Mutex<Status>,
    timeout_ms: u64,
    calls: &impl Calls,
) -> Result<(), StoreError> {
    if lock(status).lost.is_some() {
        return Ok(());
    }
    let last = decide::release_hwm(last_issued_ms, prev_hwm_ms);
    release(store, space, holder, last, timeout_ms, calls)
}
