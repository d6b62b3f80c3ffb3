//! Leases inside one process: two holders get two slots; the release writes
//! the last issued unit and the next holder starts right away.

use snowmint::{Layout, Options, SystemClock};
use snowmint_lease::{LeaseUrl, LeasedGenerator};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-lease-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn two_holders_in_one_process_get_two_slots() {
    let dir = temp_dir("two");
    let url = LeaseUrl::parse(&format!("file:{}", dir.display())).unwrap();
    let layout = Layout::preset("twitter").unwrap();
    let open = || {
        LeasedGenerator::open_with(
            &url,
            layout,
            &[("datacenter", 3)],
            Options::default(),
            None,
            SystemClock,
        )
        .unwrap()
    };
    // flock locks belong to the open file: two claims of one process exclude
    // each other like two processes do.
    let (a, b) = (open(), open());
    assert_ne!(a.slot(), b.slot());
    assert_ne!(a.next_id().unwrap(), b.next_id().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn release_writes_the_last_issued_unit() {
    let dir = temp_dir("release");
    let url = LeaseUrl::parse(&format!("file:{}?namespace=rel", dir.display())).unwrap();
    let layout = Layout::preset("twitter").unwrap();
    let g = LeasedGenerator::open_with(
        &url,
        layout,
        &[("datacenter", 0)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap();
    let info = g.info();
    assert_eq!(info.field, "worker");
    assert_eq!(info.reserved_end_ms, Some(info.hwm_ms + 1));
    assert!(
        info.hwm_ms >= SystemClock.precise_ms() + 19_000,
        "default window 20 s"
    );
    let id = g.next_id().unwrap();
    let slot = g.slot();
    g.close().unwrap();
    let space = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let state = std::fs::read_to_string(space.join(format!("{slot}.state"))).unwrap();
    let hwm: u64 = state
        .lines()
        .find_map(|l| l.strip_prefix("hwm_ms="))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(hwm, layout.decompose(id.get()).unwrap().timestamp_ms());
    assert!(state.contains("token=\n"), "{state}");
    // The next holder of the slot starts right away (hwm is behind the clock).
    let g = LeasedGenerator::open_with(
        &url,
        layout,
        &[("datacenter", 0)],
        Options::default(),
        Some(slot),
        SystemClock,
    )
    .unwrap();
    assert!(g.next_id().unwrap() > id);
    drop(g);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn namespaces_are_separate_spaces() {
    let dir = temp_dir("ns");
    // A 1-bit leased field: two slots per space.
    let layout = Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 5),
            ("worker", 1),
            ("sequence", 16),
        ],
    )
    .unwrap();
    let open = |ns: &str| {
        let url = LeaseUrl::parse(&format!("file:{}?namespace={ns}", dir.display())).unwrap();
        LeasedGenerator::open_with(
            &url,
            layout,
            &[("datacenter", 1)],
            Options::default(),
            None,
            SystemClock,
        )
    };
    let a0 = open("a").unwrap();
    let a1 = open("a").unwrap();
    let e = open("a").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    assert!(e.to_string().contains("all 2 slots are held"), "{e}");
    // Another namespace on the same directory is independent.
    let b0 = open("b").unwrap();
    assert_eq!(b0.slot(), 0);
    drop((a0, a1, b0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unusable_directory_is_lease_unavailable() {
    let url = LeaseUrl::parse("file:/proc/snowmint-lease-nowhere").unwrap();
    let layout = Layout::preset("twitter").unwrap();
    let e = LeasedGenerator::open_with(
        &url,
        layout,
        &[("datacenter", 1)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    let m = e.to_string();
    assert!(
        m.starts_with(
            "file:/proc/snowmint-lease-nowhere: cannot create /proc/snowmint-lease-nowhere:"
        ),
        "{m}"
    );
    assert!(m.ends_with("[lease_unavailable]"), "{m}");
}

/// A file store whose renewals can be made to fail (as if the disk or the
/// network refused) or to hang, around a real directory.
struct Faulty {
    inner: snowmint_lease::FileStore,
    fail: std::sync::atomic::AtomicBool,
    hang_ms: std::sync::atomic::AtomicU64,
}

impl Faulty {
    fn new(dir: &std::path::Path) -> std::sync::Arc<Faulty> {
        std::sync::Arc::new(Faulty {
            inner: snowmint_lease::FileStore::new(dir),
            fail: Default::default(),
            hang_ms: Default::default(),
        })
    }
    fn hang(&self) {
        let ms = self.hang_ms.load(std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

use snowmint_lease::{Claim, ClaimRequest, Holder, Renewal, SlotSpace, Store, StoreError};

impl Store for Faulty {
    fn describe(&self) -> String {
        format!("faulty {}", self.inner.describe())
    }
    fn now_ms(&self) -> Result<u64, StoreError> {
        self.hang();
        self.inner.now_ms()
    }
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        self.inner.claim(space, req)
    }
    fn renew(
        &self,
        space: &SlotSpace,
        h: &Holder,
        ttl: u64,
        window: u64,
    ) -> Result<Renewal, StoreError> {
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Unreachable("writes refused".into()));
        }
        self.inner.renew(space, h, ttl, window)
    }
    fn release(&self, space: &SlotSpace, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        self.inner.release(space, h, last_ms)
    }
}

#[test]
fn failed_renewals_expire_then_recover() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir("recover");
    let store = Faulty::new(&dir);
    let url = LeaseUrl::parse("file:/unused?renew_ms=20&window_ms=300").unwrap();
    let g = LeasedGenerator::with_store(
        store.clone(),
        url.settings,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 1)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap();
    g.next_id().unwrap();
    store.fail.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let err = loop {
        match g.next_id() {
            Ok(_) => assert!(std::time::Instant::now() < deadline, "never expired"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code(), "lease_expired");
    assert_eq!(g.info().last_error.as_deref(), Some("writes refused"));
    // The store answers again: the next renewal extends the reservation.
    store.fail.store(false, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while g.next_id().is_err() {
        assert!(std::time::Instant::now() < deadline, "never recovered");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(g.info().last_error, None);
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_store_that_hangs_times_out() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir("hang");
    let store = Faulty::new(&dir);
    store.hang_ms.store(2000, Ordering::SeqCst);
    let url = LeaseUrl::parse("file:/unused?timeout_ms=100").unwrap();
    let t = std::time::Instant::now();
    let e = LeasedGenerator::with_store(
        store,
        url.settings,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 1)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap_err();
    assert!(t.elapsed() < std::time::Duration::from_millis(1500));
    assert_eq!(e.code(), "lease_unavailable");
    assert!(e.to_string().contains("no answer within 100 ms"), "{e}");
}

/// A child forked from the holder inherits the handle but not the renewal
/// thread: closing or dropping it there does nothing (the lease stays the
/// parent's), and its copy refuses to issue (`process_forked`).
#[test]
fn a_forked_child_leaves_the_parents_lease_alone() {
    let dir = temp_dir("fork");
    let url = format!("file:{}?namespace=fork", dir.display());
    let g = LeasedGenerator::open(
        &url,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 1)],
        Options::default(),
    )
    .unwrap();
    g.next_id().unwrap();
    // SAFETY: the child only calls the generator (no locks the parent's
    // other threads could hold: the pid check comes first) and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let forked = matches!(g.next_id(), Err(snowmint::Error::ProcessForked));
        let closed = g.close().is_ok();
        drop(g); // and the drop: nothing either
        unsafe { libc::_exit(if forked && closed { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status}"
    );
    // The parent still holds its slot and issues.
    g.next_id().unwrap();
    assert_eq!(g.info().lost, None);
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
