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
    /// Releases fail (as if the process died before it could release).
    no_release: std::sync::atomic::AtomicBool,
}

impl Faulty {
    fn new(dir: &std::path::Path) -> std::sync::Arc<Faulty> {
        std::sync::Arc::new(Faulty {
            inner: snowmint_lease::FileStore::new(dir),
            fail: Default::default(),
            hang_ms: Default::default(),
            no_release: Default::default(),
        })
    }
    fn hang(&self) {
        let ms = self.hang_ms.load(std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

use snowmint_lease::{
    Claim, ClaimRequest, Holder, RenewRequest, Renewal, SlotSpace, Store, StoreError,
};

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
    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Unreachable("writes refused".into()));
        }
        self.inner.renew_within(space, r)
    }
    fn release(&self, space: &SlotSpace, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        if self.no_release.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Unreachable("release refused".into()));
        }
        self.inner.release(space, h, last_ms)
    }
}

/// A leased `twitter` generator on datacenter 1 over `store`, with `url`'s
/// settings (the store in the URL is not used).
fn twitter_dc1(
    store: std::sync::Arc<Faulty>,
    url: &LeaseUrl,
) -> Result<LeasedGenerator, snowmint_lease::LeaseError> {
    LeasedGenerator::with_store(
        store,
        url.settings.clone(),
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 1)],
        Options::default(),
        None,
        SystemClock,
    )
}

#[test]
fn failed_renewals_expire_then_recover() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir("recover");
    let store = Faulty::new(&dir);
    let url = LeaseUrl::parse("file:/unused?renew_ms=20&window_ms=300").unwrap();
    let g = twitter_dc1(store.clone(), &url).unwrap();
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
    let e = twitter_dc1(store, &url).unwrap_err();
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
                 // SAFETY: _exit(2) in the forked child: ends it without running the parent's destructors or atexit handlers twice.
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

/// A holder of `url` (twitter, datacenter 1), trying `prefer` first.
fn open_at(
    url: &LeaseUrl,
    prefer: Option<u64>,
) -> Result<LeasedGenerator, snowmint_lease::LeaseError> {
    LeasedGenerator::open_with(
        url,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 1)],
        Options::default(),
        prefer,
        SystemClock,
    )
}

/// The one space directory (`v1-...`) of a store directory.
fn space_dir(store: &std::path::Path) -> std::path::PathBuf {
    let mut dirs: Vec<_> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("v1-"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Another local user links a state file of their own (hwm 0) in place of a
/// slot's: the next claim of the slot refuses it instead of starting from
/// hwm 0 below IDs already issued.
#[test]
fn a_linked_state_file_is_refused() {
    let dir = temp_dir("link");
    let url = LeaseUrl::parse(&format!("file:{}?namespace=link", dir.display())).unwrap();
    let g = open_at(&url, Some(0)).unwrap();
    assert_eq!(g.slot(), 0);
    g.next_id().unwrap();
    g.close().unwrap();
    let state = space_dir(&dir).join("0.state");
    let planted = dir.join("planted");
    std::fs::write(
        &planted,
        "snowmint lease slot v1\nhwm_ms=0\ncounter=0\ntoken=\n",
    )
    .unwrap();
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(&planted, &state).unwrap();
    let e = open_at(&url, Some(0)).expect_err("claimed through a link");
    assert_eq!(e.code(), "lease_unavailable");
    assert!(
        e.to_string()
            .contains("0.state is a symbolic link: refused (the file store never follows links"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A link planted where the store once wrote its temporary state file (a
/// fixed `<slot>.state.tmp`) is never written through: temporary files have
/// fresh names and are created exclusively.
#[test]
fn a_planted_temporary_link_is_not_written_through() {
    let dir = temp_dir("tmplink");
    let url = LeaseUrl::parse(&format!(
        "file:{}?namespace=tmplink&renew_ms=20&window_ms=500",
        dir.display()
    ))
    .unwrap();
    let g = open_at(&url, Some(0)).unwrap();
    let sdir = space_dir(&dir);
    let victim = dir.join("victim");
    std::fs::write(&victim, "another user's file\n").unwrap();
    std::os::unix::fs::symlink(&victim, sdir.join("0.state.tmp")).unwrap();
    std::os::unix::fs::symlink(&victim, sdir.join("space.txt.tmp")).unwrap();
    // Renewals and the release write the state file again.
    let renewals = g.info().renewals;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let untouched = || std::fs::read_to_string(&victim).unwrap() == "another user's file\n";
    while g.info().renewals < renewals + 3 && untouched() {
        assert!(std::time::Instant::now() < deadline, "no renewals");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "another user's file\n",
        "written through a planted link"
    );
    g.next_id().unwrap();
    g.close().unwrap();
    assert!(untouched());
    assert!(std::fs::symlink_metadata(sdir.join("0.state"))
        .unwrap()
        .file_type()
        .is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store directory every user may write (0777, no sticky bit) is refused;
/// with the sticky bit it is accepted, but a space directory another user
/// made in it first is refused.
#[test]
fn a_world_writable_store_directory_is_refused() {
    let dir = temp_dir("0777");
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    set_mode(&store, 0o777);
    let url = LeaseUrl::parse(&format!("file:{}?namespace=ww", store.display())).unwrap();
    let e = open_at(&url, None).expect_err("a 0777 directory accepted");
    assert_eq!(e.code(), "lease_unavailable");
    assert!(
        e.to_string()
            .contains("may be written by every user (mode 777, no sticky bit): refused"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("cannot keep leases safe as configured"),
        "{e}"
    );
    set_mode(&store, 0o1777);
    open_at(&url, None).unwrap().close().unwrap();
    if is_root() {
        // As if user nobody had made the space directory before us.
        let sdir = space_dir(&store);
        let c = std::ffi::CString::new(sdir.display().to_string()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let e = open_at(&url, None).expect_err("another user's space directory accepted");
        assert_eq!(e.code(), "lease_unavailable");
        assert!(
            e.to_string().contains(
                "belongs to uid 65534, not to this user (0), in a directory every user may write"
            ),
            "{e}"
        );
    } else {
        eprintln!("not root: the space directory of another user is not tried");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The host clock steps back (here: the slot's hwm is moved a minute ahead of
/// it, which is what a renewal sees after a one-minute step back). Renewals
/// cannot extend the reservation: each fails naming the clock, `last_error`
/// says so, and hwm is neither lowered nor raised. Once the clock has caught
/// up (the hwm moved back), renewals are healthy again.
#[test]
fn a_renewal_behind_the_hwm_reports_the_clock() {
    let dir = temp_dir("behind");
    let url = LeaseUrl::parse(&format!(
        "file:{}?namespace=behind&renew_ms=20&window_ms=2000",
        dir.display()
    ))
    .unwrap();
    let g = open_at(&url, None).unwrap();
    g.next_id().unwrap();
    let sdir = space_dir(&dir);
    let path = sdir.join(format!("{}.state", g.slot()));
    let rewrite = |hwm: u64| {
        // Under space.lock, as the store's own writes: a renewal between our
        // read and our rename would otherwise overwrite the planted hwm.
        let lock = std::fs::File::open(sdir.join("space.lock")).unwrap();
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a descriptor we own; closing it unlocks.
        assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
        let text = std::fs::read_to_string(&path).unwrap();
        let text: String = text
            .lines()
            .map(|l| match l.strip_prefix("hwm_ms=") {
                Some(_) => format!("hwm_ms={hwm}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        let tmp = path.with_extension("test");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    };
    let stored = || -> u64 {
        let text = std::fs::read_to_string(&path).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("hwm_ms="))
            .unwrap()
            .parse()
            .unwrap()
    };
    let ahead = SystemClock.precise_ms() + 60_000;
    rewrite(ahead);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let why = loop {
        if let Some(e) = g.info().last_error {
            break e;
        }
        assert!(std::time::Instant::now() < deadline, "no renewal failed");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(why.starts_with("the host clock ("), "{why}");
    assert!(why.contains(" ms behind slot "), "{why}");
    assert!(why.contains("(stepped back?)"), "{why}");
    // Several renewals later: still reported, hwm untouched.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(g.info().last_error.is_some());
    assert_eq!(stored(), ahead, "a renewal changed the hwm");
    assert!(
        g.info().hwm_ms < ahead,
        "the holder took an hwm nobody confirmed"
    );
    // The clock catches up: renewals extend the reservation again.
    rewrite(SystemClock.precise_ms());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while g.info().last_error.is_some() {
        assert!(std::time::Instant::now() < deadline, "never recovered");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    g.next_id().unwrap();
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Temporary files a writer left behind (it died between creating and
/// renaming one) are removed by a later claim once ten minutes old; a fresh
/// one (a write under way) is left alone.
#[test]
fn stale_temporary_files_are_swept_at_claim() {
    let dir = temp_dir("sweep");
    let url = LeaseUrl::parse(&format!("file:{}?namespace=sweep", dir.display())).unwrap();
    open_at(&url, None).unwrap().close().unwrap();
    let sdir = space_dir(&dir);
    let (stale, fresh) = (sdir.join(".0.state.ab.tmp"), sdir.join(".0.state.cd.tmp"));
    std::fs::write(&fresh, "x").unwrap();
    let f = std::fs::File::create(&stale).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    drop(f);
    open_at(&url, None).unwrap().close().unwrap();
    assert!(!stale.exists());
    assert!(fresh.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Past its reservation while the store does not answer, the refusal says
/// since when (local ms), not a reservation ending at the layout's epoch.
#[test]
fn an_unreachable_store_is_said_with_since_when() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir("since");
    let store = Faulty::new(&dir);
    let url = LeaseUrl::parse("file:/unused?renew_ms=20&window_ms=300").unwrap();
    let g = twitter_dc1(store.clone(), &url).unwrap();
    g.next_id().unwrap();
    let cut = SystemClock.precise_ms();
    store.fail.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let err = loop {
        match g.next_id() {
            Ok(_) => assert!(std::time::Instant::now() < deadline, "never expired"),
            Err(e) => break e,
        }
    };
    let m = err.to_string();
    assert_eq!(err.code(), "lease_expired", "{m}");
    let since = match err {
        snowmint::Error::LeaseExpired {
            end: snowmint::LeaseEnd::RenewalsFailing { since_ms },
            ..
        } => since_ms,
        e => panic!("not an unreachable store's refusal: {e}"),
    };
    assert!(since >= cut - 1 && since <= SystemClock.precise_ms(), "{m}");
    assert!(
        m.starts_with("lease expired: ")
            && m.contains(&format!(
                "no renewal confirmed since {since} ms (the store unreachable or refusing: \
                 the lease's last_error says why); IDs resume once one is confirmed"
            ))
            && m.ends_with("[lease_expired]"),
        "{m}"
    );
    // Answering again clears it: a later refusal would not name that time.
    store.fail.store(false, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while g.next_id().is_err() {
        assert!(std::time::Instant::now() < deadline, "never recovered");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    g.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// After `close`, the refusal says the lease was closed.
#[test]
fn a_closed_lease_says_closed() {
    let dir = temp_dir("closed");
    let url = LeaseUrl::parse(&format!("file:{}", dir.display())).unwrap();
    let g = LeasedGenerator::open_with(
        &url,
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 2)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap();
    g.next_id().unwrap();
    g.close().unwrap();
    let err = g.next_id().unwrap_err();
    let m = err.to_string();
    assert_eq!(err.code(), "lease_expired");
    assert_eq!(
        m,
        "lease closed: this generator was closed and issues no more IDs: open a new lease \
         [lease_expired]"
    );
    let mut out = [0u64; 3];
    assert_eq!(g.next_ids(&mut out).unwrap_err().to_string(), m);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A slot an operator released (another holder may take it): the holder
/// stops, and its refusal says the lease was lost, not a reservation that
/// ends at the layout's epoch.
#[test]
fn a_lost_lease_says_lost() {
    let dir = temp_dir("lost");
    let url = format!("file:{}?namespace=lost&renew_ms=20", dir.display());
    let g = LeasedGenerator::open_with(
        &LeaseUrl::parse(&url).unwrap(),
        Layout::preset("twitter").unwrap(),
        &[("datacenter", 6)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap();
    g.next_id().unwrap();
    let info = g.info();
    snowmint_lease::ops::release(&url, Some(&info.space_key), info.slot, true).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while g.info().lost.is_none() {
        assert!(std::time::Instant::now() < deadline, "never saw it lost");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let err = g.next_id().unwrap_err();
    let m = err.to_string();
    assert_eq!(err.code(), "lease_expired");
    assert!(
        m.starts_with("lease lost: another holder has the slot") && !m.contains("ends before"),
        "{m}"
    );
    g.close().unwrap();
    assert!(g
        .next_id()
        .unwrap_err()
        .to_string()
        .starts_with("lease lost: "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A holder that died without releasing leaves its reservation ahead of the
/// clock: its successor's generator refuses with `lease_fenced` (the cause,
/// when IDs resume), never `clock_moved_backwards`, and a `wait:N` policy
/// that covers it waits it out.
#[test]
fn a_predecessors_reservation_is_a_fence_not_a_clock_fault() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir("pred");
    // A worker no other test of this process uses: generators with the same
    // ID bits share one state in a process, and this one is fenced ahead.
    const SLOT: u64 = 1000;
    let url = LeaseUrl::parse("file:/unused?window_ms=1500&renew_ms=500").unwrap();
    let layout = Layout::preset("leaf").unwrap();
    let open = |store: std::sync::Arc<Faulty>, options: Options| {
        LeasedGenerator::with_store(
            store,
            url.settings.clone(),
            layout,
            &[],
            options,
            Some(SLOT),
            SystemClock,
        )
        .unwrap()
    };
    let fail = Options {
        clock_backwards: snowmint::ClockBackwards::Fail,
        ..Options::default()
    };
    let store = Faulty::new(&dir);
    let a = open(store.clone(), fail);
    a.next_id().unwrap();
    let reserved = a.info().hwm_ms;
    store.no_release.store(true, Ordering::SeqCst);
    assert_eq!(a.close().unwrap_err().code(), "lease_unavailable");
    drop((a, store)); // its lock goes; its reservation stays

    let b = open(Faulty::new(&dir), fail);
    assert_eq!(b.slot(), SLOT);
    let err = b.next_id().unwrap_err();
    let m = err.to_string();
    assert_eq!(err.code(), "lease_fenced", "{m}");
    let snowmint::Error::LeaseFenced {
        now_ms,
        resume_ms,
        cause,
    } = err
    else {
        panic!("{m}")
    };
    assert_eq!(cause, snowmint::FenceCause::Predecessor);
    assert_eq!(resume_ms, reserved + 1, "{m}");
    assert!(now_ms < resume_ms, "{m}");
    assert!(
        m.starts_with("lease fenced: the slot's previous holder issued or reserved IDs up to then")
            && m.contains(&format!("no ID before {resume_ms} ms (now {now_ms} ms, "))
            && !m.contains("clock moved backwards"),
        "{m}"
    );
    drop(b);

    // A policy that waits long enough waits the fence out.
    let c = open(
        Faulty::new(&dir),
        Options {
            clock_backwards: snowmint::ClockBackwards::Wait { max_units: 10_000 },
            ..Options::default()
        },
    );
    let id = c.next_id().unwrap();
    assert!(layout.decompose(id).unwrap().timestamp_ms() > reserved);
    c.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
