//! The driver against the real file store, with faults put in front of it:
//! a renewal that hangs, a store clock stepped back or forward (the wrapper
//! shifts the `window_ms` a renewal passes, which moves the `hwm` the store
//! writes exactly as a shifted store clock would), and a plain generator
//! and a lease of this process on the same node values, in either order.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, Options, SystemClock, Value};
use snowmint_lease::{
    AnyGenerator, Claim, ClaimRequest, FileStore, Holder, LeaseInfo, LeaseUrl, LeasedGenerator,
    RenewRequest, Renewal, SlotSpace, SlotState, Store, StoreError,
};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-driver-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The file store, with renewals that hang or see a shifted clock.
struct Shifty {
    inner: FileStore,
    /// Renewals still to hang (forever: the call never returns).
    hang: AtomicU64,
    /// How far the store's clock is moved, ms (negative: behind).
    shift_ms: AtomicI64,
    /// How long a claim waits before it is made, ms.
    claim_delay_ms: AtomicU64,
    /// The last hwm the store confirmed (claim or renewal).
    last_hwm_ms: AtomicU64,
}

impl Shifty {
    fn new(dir: &std::path::Path) -> Arc<Shifty> {
        Arc::new(Shifty {
            inner: FileStore::new(dir),
            hang: AtomicU64::new(0),
            shift_ms: AtomicI64::new(0),
            claim_delay_ms: AtomicU64::new(0),
            last_hwm_ms: AtomicU64::new(0),
        })
    }
}

impl Store for Shifty {
    fn describe(&self) -> String {
        format!("shifty {}", self.inner.describe())
    }
    fn now_ms(&self) -> Result<u64, StoreError> {
        self.inner.now_ms()
    }
    // The claimer's bound is not passed on: the shifted clock below is this
    // store's own, which the bound (from the holder's clock) knows nothing of.
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let req = &ClaimRequest::new(req.prefer, req.ttl_ms, req.window_ms);
        let delay = self.claim_delay_ms.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(delay));
        let c = self.inner.claim(space, req)?;
        self.last_hwm_ms.store(c.hwm_ms, Ordering::SeqCst);
        Ok(c)
    }
    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (h, ttl, window, _) = r.parts();
        if self
            .hang
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            loop {
                std::thread::park();
            }
        }
        // hwm = max(hwm, store time + window): a clock moved by `shift`
        // writes what `window + shift` writes on the real one.
        let shifted = window as i64 + self.shift_ms.load(Ordering::SeqCst);
        let last = self.last_hwm_ms.load(Ordering::SeqCst);
        if shifted < 0 || now_ms() + shifted as u64 <= last {
            // A network store whose clock is that far behind confirms the
            // renewal and moves nothing; the file store, whose clock is this
            // host's, would refuse it instead (its own step-back check).
            return Ok(Renewal {
                hwm_ms: last,
                expires_ms: None,
            });
        }
        let r = self.inner.renew(space, h, ttl, shifted as u64)?;
        self.last_hwm_ms.store(r.hwm_ms, Ordering::SeqCst);
        Ok(r)
    }
    fn release(&self, space: &SlotSpace, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        self.inner.release(space, h, last_ms)
    }
}

fn lease(store: Arc<Shifty>, query: &str, datacenter: u64) -> LeasedGenerator {
    let url = LeaseUrl::parse(&format!("file:/unused?{query}")).unwrap();
    LeasedGenerator::with_store(
        store,
        url.settings,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", datacenter)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap()
}

/// Waits (at most 20 s) until `ok` holds for the lease's info.
fn wait_for(g: &LeasedGenerator, what: &str, ok: impl Fn(&LeaseInfo) -> bool) -> LeaseInfo {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info = g.info();
        if ok(&info) {
            return info;
        }
        assert!(Instant::now() < deadline, "never {what}: {info:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A renewal that never answers costs one deadline: its worker is abandoned
/// and the next renewal runs on a fresh one.
#[test]
fn a_hung_renewal_does_not_hold_up_the_next() {
    let dir = temp_dir("hung");
    let store = Shifty::new(&dir);
    store.hang.store(1, Ordering::SeqCst);
    let g = lease(
        store,
        "renew_ms=30&timeout_ms=1000&window_ms=10000&ttl_ms=20000",
        11,
    );
    let info = wait_for(&g, "renewed after the hung call", |i| i.renewals >= 2);
    // At least the hung one (a slow fsync under load may add more).
    assert!(info.timeouts >= 1, "{info:?}");
    g.next_id().unwrap();
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every ID is under a reservation the lease reported confirmed at or before
/// the ID's time (`confirmed_at_ms`, by the clock the ID's time comes from):
/// what the fault harness's checker (tools/harness/check.py) relies on.
/// Three times a renewal hangs past the window, so the generator runs to its
/// reservation's edge; the control build (`harness-controls`, `past-reservation`)
/// (one millisecond more) fails here.
#[test]
fn every_id_is_under_a_reservation_confirmed_before_it() {
    let dir = temp_dir("confirmed");
    let store = Shifty::new(&dir);
    store.hang.store(1, Ordering::SeqCst);
    let g = lease(
        store.clone(),
        "renew_ms=50&timeout_ms=400&window_ms=150&ttl_ms=5000&max_skew_ms=50",
        13,
    );
    // (confirmations so far, confirmed_at_ms, reserved_until_ms), as reported.
    let report = |g: &LeasedGenerator| {
        let i = g.info();
        (
            i.renewals,
            i.confirmed_at_ms,
            i.reserved_end_ms.unwrap() - 1,
        )
    };
    let mut reports = vec![report(&g)];
    let (mut ids, mut dry, mut edges) = (Vec::new(), false, 0);
    let end = Instant::now() + Duration::from_secs(8);
    while edges < 3 && Instant::now() < end {
        match g.next_id() {
            Ok(_) => {
                ids.push((g.last_ms().unwrap(), reports.len()));
                if dry {
                    // Renewed after running dry: hang the next renewal too.
                    (dry, edges) = (false, edges + 1);
                    store.hang.store(1, Ordering::SeqCst);
                }
            }
            Err(e) => {
                assert_eq!(e.code(), "lease_expired", "{e}");
                dry = true;
            }
        }
        let r = report(&g);
        if r != *reports.last().unwrap() {
            assert!(r.0 > reports.last().unwrap().0, "{r:?} after {reports:?}");
            reports.push(r);
        }
    }
    g.close().unwrap();
    assert_eq!(
        edges, 3,
        "ran to the reservation's edge {edges} times: {reports:?}"
    );
    // The reports an ID may be under: those made before the one after it.
    for &(t, seen) in &ids {
        let bound = reports[..(seen + 1).min(reports.len())]
            .iter()
            .filter(|r| r.1 <= t)
            .map(|r| r.2)
            .max();
        assert!(
            bound.is_some_and(|b| t <= b),
            "ID at {t} ms past the largest reservation confirmed by then ({bound:?}): {reports:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store clock stepped back: renewals are confirmed but move nothing; the
/// lease says so and the generator runs dry at the old reservation.
#[test]
fn a_store_clock_stepped_back_shows_in_last_error_and_runs_dry() {
    let dir = temp_dir("back");
    let store = Shifty::new(&dir);
    let g = lease(
        store.clone(),
        "renew_ms=30&window_ms=1000&ttl_ms=5000&max_skew_ms=100",
        12,
    );
    g.next_id().unwrap();
    store.shift_ms.store(-60_000, Ordering::SeqCst);
    let info = wait_for(&g, "reported no progress", |i| {
        i.last_error
            .as_deref()
            .is_some_and(|e| e.contains("no progress"))
    });
    let e = info.last_error.unwrap();
    assert!(e.contains("run dry"), "{e}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let err = loop {
        match g.next_id() {
            Ok(_) => assert!(Instant::now() < deadline, "never ran dry"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code(), "lease_expired");
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store clock ahead past `max_skew_ms`: the skew is reported (size in
/// `skew_ms`, direction in `last_error`), and the issuing limit stays within
/// local now + window + max skew although the store confirmed more.
#[test]
fn a_store_clock_ahead_is_reported_and_does_not_raise_the_limit() {
    let dir = temp_dir("ahead");
    let store = Shifty::new(&dir);
    let g = lease(
        store.clone(),
        "renew_ms=30&window_ms=1000&ttl_ms=5000&max_skew_ms=500",
        13,
    );
    store.shift_ms.store(60_000, Ordering::SeqCst);
    let before = now_ms();
    let info = wait_for(&g, "reported the skew", |i| {
        i.last_error.as_deref().is_some_and(|e| e.contains("skew"))
    });
    let after = now_ms();
    let e = info.last_error.as_deref().unwrap();
    assert!(
        e.contains("store ahead") && e.contains("max_skew_ms 500"),
        "{e}"
    );
    let skew = info.skew_ms.unwrap();
    // Measured to within half a round trip (generous: fsync under load).
    assert!((-65_000..=-55_000).contains(&skew), "{info:?}");
    assert!(info.hwm_ms >= before + 60_000, "{info:?}");
    let end = info.reserved_end_ms.unwrap();
    assert!(end <= after + 1000 + 500 + 1, "limit not capped: {info:?}");
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A plain generator (no lease) asking for the node values a leased one of
/// this process holds is refused; once the lease is closed it is not.
#[test]
fn a_plain_generator_on_leased_node_values_is_refused() {
    let dir = temp_dir("plain");
    let layout = Layout::preset("twitter").unwrap();
    let options = Value::Map(vec![(
        "lease".into(),
        format!("file:{}", dir.display()).into(),
    )]);
    let nodes = Value::Map(vec![("datacenter".into(), 14u64.into())]);
    let leased = AnyGenerator::from_values(layout, &nodes, &options).unwrap();
    let slot = leased.lease().unwrap().slot;
    let same = Value::Map(vec![
        ("datacenter".into(), 14u64.into()),
        ("worker".into(), slot.into()),
    ]);
    let e = AnyGenerator::from_values(layout, &same, &Value::Absent).unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    assert!(
        e.to_string()
            .contains("leased by a generator of this process"),
        "{e}"
    );
    // Other node values are fine while the lease lives.
    let other = Value::Map(vec![
        ("datacenter".into(), 15u64.into()),
        ("worker".into(), slot.into()),
    ]);
    AnyGenerator::from_values(layout, &other, &Value::Absent).unwrap();
    leased.close().unwrap();
    AnyGenerator::from_values(layout, &same, &Value::Absent).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A claim that answers after its deadline fails the open, and is released
/// again when it lands (keeping its `hwm`), instead of holding the slot.
/// The other order: a lease that claims the node values of a live plain
/// generator of this process is refused, naming them, and releases the slot;
/// once the plain generator is dropped, the lease takes that slot.
#[test]
fn a_lease_on_a_plain_generators_node_values_is_refused() {
    let dir = temp_dir("plain-first");
    let layout = Layout::preset("twitter").unwrap();
    let options = Value::Map(vec![(
        "lease".into(),
        format!("file:{}", dir.display()).into(),
    )]);
    // The store is empty: its first claim is worker 0.
    let plain_nodes = Value::Map(vec![
        ("datacenter".into(), 21u64.into()),
        ("worker".into(), 0u64.into()),
    ]);
    let plain = AnyGenerator::from_values(layout, &plain_nodes, &Value::Absent).unwrap();
    plain.next_id().unwrap();
    let nodes = Value::Map(vec![("datacenter".into(), 21u64.into())]);
    let e = AnyGenerator::from_values(layout, &nodes, &options).unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    let msg = e.to_string();
    assert!(msg.contains("datacenter=21, worker=0"), "{msg}");
    assert!(msg.contains("without a lease"), "{msg}");
    plain.next_id().unwrap();
    // Dropped, the plain generator no longer blocks, and the refused claim
    // was released: the lease gets worker 0.
    drop(plain);
    let g = AnyGenerator::from_values(layout, &nodes, &options).unwrap();
    assert_eq!(g.lease().unwrap().slot, 0);
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_claim_that_answers_late_is_released() {
    let dir = temp_dir("late");
    let store = Shifty::new(&dir);
    store.claim_delay_ms.store(400, Ordering::SeqCst);
    let url = LeaseUrl::parse("file:/unused?timeout_ms=100&window_ms=60000&ttl_ms=90000").unwrap();
    let before = now_ms();
    let e = LeasedGenerator::with_store(
        store.clone(),
        url.settings,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 16)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    assert!(e.to_string().contains("no answer within 100 ms"), "{e}");
    // The claim lands about 300 ms later; its release follows at once.
    let deadline = Instant::now() + Duration::from_secs(20);
    let slot = loop {
        let (_, spaces) = store.inner.list().unwrap();
        let slot = spaces.first().and_then(|s| s.slots.first()).cloned();
        match slot {
            Some(r) if r.state == SlotState::Free => break r,
            _ => assert!(Instant::now() < deadline, "never released: {spaces:?}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Released keeping the claim's reservation.
    assert!(slot.hwm_ms >= before + 60_000, "{slot:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
