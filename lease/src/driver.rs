//! The lease driver: claim, build the generator above the old `hwm`, renew on
//! a background thread, raise the reservation only after the store confirmed
//! it, stop at once when the slot is lost, release on close or drop.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use snowmint::{Clock, Generator, Id, Layout, LeaseProblem, Next, Options, SystemClock};

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{Claim, ClaimRequest, Holder, Store, StoreError};
use crate::url::{LeaseUrl, Settings};

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
}

/// What the background thread and the handle share.
struct Lease {
    store: Arc<dyn Store>,
    space: Arc<SlotSpace>,
    settings: Settings,
    holder: Holder,
    prev_hwm_ms: u64,
    status: Mutex<Status>,
    wake: Condvar,
}

struct Status {
    stop: bool,
    hwm_ms: u64,
    expires_ms: Option<u64>,
    renewals: u64,
    lost: Option<String>,
    last_error: Option<String>,
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
        mut options: Options,
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
        let fail = |e: StoreError| store_error(&name, space.slots(), e);

        // The skew check, before taking a slot we would refuse.
        let local_before = clock.now_ms();
        let s = Arc::clone(&store);
        let store_ms = timed(settings.timeout_ms, move || s.now_ms()).map_err(fail)?;
        let local = local_before / 2 + clock.now_ms() / 2;
        let skew = local.abs_diff(store_ms);
        if skew > settings.max_skew_ms {
            return Err(LeaseError::unavailable(
                LeaseProblem::ClockSkew {
                    skew_ms: skew,
                    max_ms: settings.max_skew_ms,
                },
                format!("{name}: local clock {local} ms, store clock {store_ms} ms"),
            ));
        }

        let claim = claim_timed(&store, &space, &settings, prefer).map_err(fail)?;
        let release_now = |e: LeaseError| {
            let (st, sp, h) = (Arc::clone(&store), Arc::clone(&space), claim.holder.clone());
            let hwm = claim.prev_hwm_ms;
            let _ = timed(settings.timeout_ms, move || st.release(&sp, &h, hwm));
            e
        };
        let nodes = space
            .nodes(claim.holder.slot)
            .map_err(|e| release_now(e.into()))?;
        // Start strictly above every unit any earlier holder may have issued.
        if claim.prev_hwm_ms >= layout.epoch_ms() {
            let seq_max = layout.sequence().max();
            let above = layout
                .compose(claim.prev_hwm_ms, seq_max, &nodes)
                .map_err(|_| {
                    release_now(LeaseError::unavailable(
                        LeaseProblem::BadRecord,
                        format!(
                            "{name}: hwm {} ms is outside the layout's time range",
                            claim.prev_hwm_ms
                        ),
                    ))
                })?;
            let key = |id: Id| layout.decompose(id).map(|p| (p.tick(), p.sequence()));
            options.resume_after = Some(match options.resume_after {
                Some(user) if key(user).map_err(|e| release_now(e.into()))? > key(above)? => user,
                _ => above,
            });
        }
        let gen = Generator::with_clock(layout, nodes, options, clock)
            .map_err(|e| release_now(e.into()))?;
        // Before the first ID: only what the store confirmed.
        gen.reserve_until(Some(claim.hwm_ms));
        let gen = Arc::new(gen);
        let lease = Arc::new(Lease {
            store,
            space,
            settings,
            holder: claim.holder,
            prev_hwm_ms: claim.prev_hwm_ms,
            status: Mutex::new(Status {
                stop: false,
                hwm_ms: claim.hwm_ms,
                expires_ms: claim.expires_ms,
                renewals: 0,
                lost: None,
                last_error: None,
            }),
            wake: Condvar::new(),
        });
        let renewer = {
            let (l, g) = (Arc::clone(&lease), Arc::clone(&gen));
            std::thread::Builder::new()
                .name("snowmint-lease".into())
                .spawn(move || renew_loop(&l, &g))
                .map_err(|e| {
                    let _ = lease
                        .store
                        .release(&lease.space, &lease.holder, lease.prev_hwm_ms);
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
        })
    }

    /// The next ID (`lease_expired` past the confirmed reservation).
    #[inline]
    pub fn next_id(&self) -> snowmint::Result<Id> {
        self.gen.next_id()
    }

    /// The next ID if one can be issued now, or when to ask again.
    #[inline]
    pub fn try_next_id(&self) -> snowmint::Result<Next> {
        self.gen.try_next_id()
    }

    /// Fills `out` with increasing IDs.
    pub fn next_ids(&self, out: &mut [u64]) -> snowmint::Result<()> {
        self.gen.next_ids(out)
    }

    /// The inner generator (its config holds the node values in use).
    pub fn generator(&self) -> &Generator<C> {
        &self.gen
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
            reserved_end_ms: self.gen.reserved_end_ms(),
            expires_ms: s.expires_ms,
            renewals: s.renewals,
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
        if self.lease.status().lost.is_some() {
            return Ok(());
        }
        let last = last.unwrap_or(self.lease.prev_hwm_ms);
        let lease = Arc::clone(&self.lease);
        let name = lease.store.describe();
        let slots = lease.space.slots();
        timed(lease.settings.timeout_ms, move || {
            lease.store.release(&lease.space, &lease.holder, last)
        })
        .map_err(|e| store_error(&name, slots, e))
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
/// or lost.
fn renew_loop<C: Clock + Send + Sync + 'static>(lease: &Arc<Lease>, gen: &Generator<C>) {
    let every = Duration::from_millis(lease.settings.renew_ms);
    let retry = Duration::from_millis((lease.settings.renew_ms / 4).max(1));
    let mut wait = every;
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
        let l = Arc::clone(lease);
        let result = timed(lease.settings.timeout_ms, move || {
            l.store
                .renew(&l.space, &l.holder, l.settings.ttl_ms, l.settings.window_ms)
        });
        let mut s = lease.status();
        match result {
            Ok(r) => {
                // The write is confirmed: only now may IDs use it.
                gen.reserve_until(Some(r.hwm_ms));
                s.hwm_ms = r.hwm_ms;
                s.expires_ms = r.expires_ms;
                s.renewals += 1;
                s.last_error = None;
                wait = every;
            }
            Err(StoreError::Lost(why)) => {
                // Another holder: stop at once, even inside the reservation.
                gen.reserve_until(Some(0));
                s.lost = Some(why);
                return;
            }
            Err(e) => {
                // Keep issuing up to the confirmed reservation; try again soon.
                s.last_error = Some(describe(&e));
                wait = retry;
            }
        }
    }
}

fn describe(e: &StoreError) -> String {
    match e {
        StoreError::Unreachable(d) | StoreError::Lost(d) | StoreError::BadRecord(d) => d.clone(),
        StoreError::NoFreeSlot => "no free slot".into(),
    }
}

pub(crate) fn store_error(name: &str, slots: u64, e: StoreError) -> LeaseError {
    let (problem, detail) = match e {
        StoreError::Unreachable(d) | StoreError::Lost(d) => (LeaseProblem::Unreachable, d),
        StoreError::NoFreeSlot => (LeaseProblem::NoFreeSlot { slots }, String::new()),
        StoreError::BadRecord(d) => (LeaseProblem::BadRecord, d),
    };
    let detail = if detail.is_empty() {
        name.to_string()
    } else {
        format!("{name}: {detail}")
    };
    LeaseError::unavailable(problem, detail)
}

/// Runs one store call on its own thread and gives up after `timeout_ms`
/// (the call then finishes, or hangs, unobserved).
pub(crate) fn timed<T: Send + 'static>(
    timeout_ms: u64,
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("snowmint-lease-call".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| StoreError::Unreachable(format!("cannot start a thread: {e}")))?;
    rx.recv_timeout(Duration::from_millis(timeout_ms))
        .unwrap_or_else(|_| {
            Err(StoreError::Unreachable(format!(
                "no answer within {timeout_ms} ms"
            )))
        })
}

/// A timed claim; a claim that completes after the timeout is released again
/// (keeping its `hwm`), so a slow store does not leak slots.
fn claim_timed(
    store: &Arc<dyn Store>,
    space: &Arc<SlotSpace>,
    settings: &Settings,
    prefer: Option<u64>,
) -> Result<Claim, StoreError> {
    let (tx, rx) = mpsc::channel::<Result<Claim, StoreError>>();
    let (store, space) = (Arc::clone(store), Arc::clone(space));
    let req = ClaimRequest {
        prefer,
        ttl_ms: settings.ttl_ms,
        window_ms: settings.window_ms,
    };
    std::thread::Builder::new()
        .name("snowmint-lease-claim".into())
        .spawn(move || {
            let r = store.claim(&space, &req);
            if let Err(mpsc::SendError(Ok(late))) = tx.send(r) {
                let _ = store.release(&space, &late.holder, late.hwm_ms);
            }
        })
        .map_err(|e| StoreError::Unreachable(format!("cannot start a thread: {e}")))?;
    let timeout = settings.timeout_ms;
    rx.recv_timeout(Duration::from_millis(timeout))
        .unwrap_or_else(|_| {
            Err(StoreError::Unreachable(format!(
                "no answer within {timeout} ms"
            )))
        })
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
            lost: None,
            last_error: Some("x".into()),
        };
        assert_eq!(
            info.to_json(),
            r#"{"store":"file:/tmp/a \"b\"\\c\u000a","field":"worker","slot":3,"claim":7,"hwm_ms":100,"reserved_until_ms":100,"expires_ms":null,"renewals":2,"lost":null,"last_error":"x","space":"v1-0"}"#
        );
    }
}
